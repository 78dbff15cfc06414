#!/usr/bin/env python3
"""Every graph's explanation ("why") against its own decision trace and final graph.

For each public conformance case: `topoplan search --format json`, then for every
graph, independently of how topoplan words its explanation:
  - topoplan's own pruning is not among the decisions, nor in the why lines;
  - the result line names the pass that left the final graph (the last "improved"
    event), with its channel count and bandwidth, and the final graph equals that
    result, or its duplication when a "dup" event follows (then a "duplicated" line);
  - a relaxation (lower bandwidth, weaker path type, ...) is said to come before the
    result exactly when the trace has it before the result, and after it likewise;
  - a "second pass" line exactly when NCCL raised the speed;
  - the budget line counts the passes whose budget the trace shows spent;
  - the limit lines name the bound the trace shows: no link for the channel count when
    the first pass stopped at a rule (maxChannels, totalBw), else links one more channel
    does not fit on; for the speed, the links the result's channels overfill at the
    nearest faster setting NCCL tried (a line for each such setting, none for others),
    each line's arithmetic over the link's capacity;
  - `plan`'s post-search steps (duplication, sm90 doubling, MIN/MAX, NVLS) end at its
    collective channel count.
Usage: check_whys.py TOPOPLAN CASES_DIR
"""
import json
import os
import re
import subprocess
import sys

OURS = {"bound", "settle"}


def case_command(binary, case):
    args = open(os.path.join(case, "args")).read().split()
    keep = []
    i = 0
    while i < len(args):
        if args[i] in ("--nodes", "--rank"):
            keep += args[i:i + 2]
            i += 2
        elif args[i] == "--node-topo":
            i += 2
        else:
            i += 1
    cmd = [binary, "--no-env", "--format", "json"]
    env = os.path.join(case, "env")
    if os.path.exists(env):
        cmd += ["--env-file", env]
    return cmd + ["search"] + keep + [os.path.join(case, "topo.xml")]


def lines_of(graph, step):
    return [w["text"] for w in graph["why"] if w["step"] == step]


def check_graph(g, errors, where):
    ev = g["events"]
    kinds = [e["kind"] for e in ev]
    def fail(msg):
        errors.append("%s %s: %s" % (where, g.get("graph", g.get("slot")), msg))
    if OURS & set(kinds):
        fail("topoplan's pruning listed among NCCL's decisions")
    for w in g["why"]:
        if "topoplan" in w["text"] or w["step"] == "topoplan":
            fail("why line presents topoplan's own pruning: " + w["text"])
    if g["n_channels"] == 0 or "loaded" in kinds or "fallback" in kinds or "try" not in kinds:
        return
    improved = [i for i, k in enumerate(kinds) if k == "improved"]
    if not improved:
        return fail("a graph without an 'improved' event")
    r_i = improved[-1]
    r = ev[r_i]
    start = ev[kinds.index("try")]
    sol = kinds.index("solution") if "solution" in kinds else len(ev)
    dups = [i for i, k in enumerate(kinds) if k == "dup" and i > r_i]
    final = ev[dups[0]] if dups else r
    for f in ("n_channels", "bw_intra", "bw_inter"):
        if abs(final[f] - g[f]) > 1e-6:
            fail("final graph %s %s differs from the trace's %s" % (f, g[f], final[f]))
    res = lines_of(g, "result")
    want = "found %d channel" % r["n_channels"]
    if len(res) != 1 or want not in res[0] or ("%.1f" % r["bw_intra"]) not in res[0]:
        fail("result line %r does not name the result %s" % (res, want))
    dup_lines = lines_of(g, "duplicated")
    if bool(dups) != bool(dup_lines):
        fail("duplication in trace %s, in why %s" % (bool(dups), dup_lines))
    if dups and "%d channels to %d" % (r["n_channels"], final["n_channels"]) not in dup_lines[0]:
        fail("duplication line %r" % dup_lines[0])
    relaxed = " ".join(lines_of(g, "relaxed"))
    after = " ".join(lines_of(g, "after"))
    for why in sorted({e["why"] for e in ev if e["kind"] == "relax"}):
        before_r = any(e["kind"] == "relax" and e["why"] == why for e in ev[:r_i])
        after_r = any(e["kind"] == "relax" and e["why"] == why for e in ev[r_i:sol])
        if before_r != (why in relaxed):
            fail("relaxation %r before the result: trace %s, why %r" % (why, before_r, relaxed))
        if after_r != (why in after):
            fail("relaxation %r after the result: trace %s, why %r" % (why, after_r, after))
    lowered = any(e["kind"] == "relax" and "bandwidth" in e["why"] for e in ev[:r_i])
    if r_i < sol and not lowered and r["bw_intra"] != start["bw_intra"]:
        fail("result bw %.1f differs from the start %.1f without lowering" % (r["bw_intra"], start["bw_intra"]))
    spent = sum(1 for e in ev if e["kind"] == "budget" and "global" not in e["why"])
    said = [int(m.group(1)) for t in lines_of(g, "budget")
            for m in [re.match(r"(?:at least )?(\d+) pass", t)] if m]
    if said != ([spent] if spent else []):
        fail("budget line says %s passes spent their budget, the trace %d" % (said, spent))
    if ("raise" in kinds) != bool(lines_of(g, "second pass")):
        fail("second-pass line and trace disagree")
    check_limits(g, ev, kinds, r_i, fail)


def faster_tries(ev, r):
    """The settings NCCL tried faster than the result: lowest intra above it, or inter at its intra."""
    tries = [e for e in ev if e["kind"] == "try"]
    intra = [e["bw_intra"] for e in tries if e["bw_intra"] > r["bw_intra"]]
    inter = [e["bw_inter"] for e in tries
             if e["bw_intra"] == r["bw_intra"] and e["bw_inter"] > r["bw_inter"]]
    return (min(intra) if intra else None), (min(inter) if inter else None)


def check_limits(g, ev, kinds, r_i, fail):
    """The bound named is the one the trace shows: the stop rule, or links at the faster tries."""
    r = ev[r_i]
    stops = [e for e in ev if e["kind"] == "done"]
    stopped = bool(stops) and r["n_channels"] >= stops[0]["n_channels"]
    intra, inter = faster_tries(ev, r)
    speeds_said = set()
    for text in lines_of(g, "limit"):
        m = re.search(r"([\d.]+) GB/s: (\d+) channels? takes? ([\d.]+); (\d+) would need ([\d.]+)", text)
        s = re.search(r"([\d.]+) GB/s(?: \(and \d+ more links? alike\))?: at ([\d.]+)(?:/([\d.]+))? GB/s"
                      r"(?: intra/inter)? the (\d+) channels? crossing it would need ([\d.]+)", text)
        fits = re.match(r"at ([\d.]+)(?:/([\d.]+))? GB/s.* the same (\d+) channels fit every link", text)
        if m:
            cap, k, took, k1, need = (float(x) for x in m.groups())
            if k1 != k + 1 or need <= cap + 1e-3 or took > cap + 1e-2:
                fail("limit line arithmetic %r" % text)
            if stopped:
                fail("the stop rule set the channel count, yet a link is named for it: %r" % text)
        elif s:
            cap, at, at_inter, k, need = (float(x) if x else None for x in s.groups())
            if need <= cap + 1e-3 or k > r["n_channels"]:
                fail("speed limit line arithmetic %r" % text)
            speeds_said.add(at)
            speeds_said.add(at_inter if at_inter is not None else at)
        elif fits:
            speeds_said.add(float(fits.group(2) or fits.group(1)))
            speeds_said.add(float(fits.group(1)))
        elif "no link" in text:
            if not stopped and "one more channel" not in text:
                fail("%r, but the first pass did not stop at a rule" % text)
            if "no link bound it" in text and (intra or inter):
                fail("%r, but NCCL tried faster settings and kept slower ones" % text)
        else:
            fail("unreadable limit line %r" % text)
    for want in (intra, inter):
        if want is not None and not any(abs(x - want) < 1e-3 for x in speeds_said):
            fail("NCCL tried %.1f GB/s and kept %.1f/%.1f: no limit line says what bound it (%s)"
                 % (want, r["bw_intra"], r["bw_inter"], sorted(speeds_said)))
    tried = {e[f] for e in ev if e["kind"] == "try" for f in ("bw_intra", "bw_inter")}
    for x in speeds_said:
        if not any(abs(x - w) < 1e-3 for w in tried):
            fail("limit line at %.1f GB/s, a speed the trace does not show tried above the result" % x)


def check_plan_channels(binary, case, errors, name):
    """The post-search steps of `plan` lead from the search channels to the final count."""
    cmd = case_command(binary, case)
    cmd[cmd.index("search")] = "plan"
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return
    ch = json.loads(p.stdout)["channels"]
    steps = {w["step"]: w["text"] for w in ch["why"]}
    count = None
    dup = re.search(r": (\d+)", steps.get("duplicated", ""))
    if not dup or int(dup.group(1)) != min(32, 2 * ch["search"]):
        errors.append("%s plan: duplication step %r for %d search channels" % (name, steps.get("duplicated"), ch["search"]))
        return
    count = int(dup.group(1))
    for step in ("sm90", "max", "min"):
        m = re.search(r"(?:to|at) (\d+)", steps.get(step, ""))
        if m:
            count = int(m.group(1))
    m = re.search(r"raised to the (\d+) NVLS", steps.get("nvls", ""))
    if m:
        count = int(m.group(1))
    if count != ch["collective"]:
        errors.append("%s plan: steps end at %s, the plan has %d channels" % (name, count, ch["collective"]))


def main():
    binary, cases = sys.argv[1], sys.argv[2]
    errors, n_cases, n_graphs = [], 0, 0
    for name in sorted(os.listdir(cases)):
        case = os.path.join(cases, name)
        if not os.path.exists(os.path.join(case, "topo.xml")):
            continue
        p = subprocess.run(case_command(binary, case), capture_output=True, text=True)
        if p.returncode != 0:
            continue  # NCCL itself fails on this input: no graphs to explain
        n_cases += 1
        for g in json.loads(p.stdout)["graphs"]:
            n_graphs += 1
            check_graph(g, errors, name)
        check_plan_channels(binary, case, errors, name)
    for e in errors:
        print("FAIL", e)
    print("explanations: %d graphs and %d plans' channel steps of %d cases checked, %d disagreements"
          % (n_graphs, n_cases, n_cases, len(errors)))
    return 1 if errors or n_cases == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
