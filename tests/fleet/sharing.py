#!/usr/bin/env python3
"""Fleet check sharing is sound (issue 25 items 1-2): nodes share one check only when
they give the same plan. Mutated copies of a DGX H100 node (GUID edits: empty, short,
without 0x, upper-case prefix, duplicated, swapped, very long, missing; a guid=" inside
a comment; unparsable copies; real deviations with other GUIDs) go through one fleet
check, and every fleet line must equal that node's own single `check` (status, error and
warning counts, deviation kinds, the job effect), with and without NCCL_IB_MERGE_NICS=1.

usage: sharing.py TOPOPLAN"""
import json, os, re, subprocess, sys, tempfile

BIN = sys.argv[1]
BASE = "tests/fixtures/dgx_h100.xml"
text = open(BASE).read()
guids = re.findall(r'guid="(0x[0-9a-f]+)"', text)
assert len(guids) == 8, guids


def regex_guids(t, fn):
    """Replace the i-th guid value by fn(i, value) (None: drop the attribute)."""
    count = [0]

    def one(m):
        i = count[0]
        count[0] += 1
        v = fn(i, m.group(1))
        return "" if v is None else f' guid="{v}"'
    return re.sub(r' guid="([^"]*)"', one, t)


def other_machine(n):
    return lambda i, v: "0x%012x%04x" % (0xabc000 + n, i)


variants = {
    "same.xml": text,
    "other1.xml": regex_guids(text, other_machine(1)),
    "other2.xml": regex_guids(text, other_machine(2)),
    "empty_guid.xml": regex_guids(text, lambda i, v: "" if i == 3 else v),
    "empty_guid_b.xml": regex_guids(text, lambda i, v: "" if i == 5 else v),
    "short_guid.xml": regex_guids(text, lambda i, v: "0x1" if i == 0 else v),
    "short_guid_b.xml": regex_guids(text, lambda i, v: "0x2" if i == 0 else v),
    "one_char.xml": regex_guids(text, lambda i, v: "7" if i == 2 else v),
    "no_0x_all.xml": regex_guids(text, lambda i, v: v[2:]),
    "no_0x_all_b.xml": regex_guids(text, lambda i, v: "%x" % (0x1234500 + i)),
    "no_0x_one.xml": regex_guids(text, lambda i, v: v[2:] if i == 4 else v),
    "upper_0X.xml": regex_guids(text, lambda i, v: "0X" + v[2:]),
    "zero_padded.xml": regex_guids(text, lambda i, v: "0x0000" + v[2:]),
    "double_0x.xml": regex_guids(text, lambda i, v: "0x" + v),
    "dup_pair.xml": regex_guids(text, lambda i, v: guids[0] if i == 1 else v),
    "dup_pair_b.xml": regex_guids(text, lambda i, v: "0x77" if i in (1, 2) else v),
    "dup_all.xml": regex_guids(text, lambda i, v: "0x5"),
    "swapped.xml": regex_guids(text, lambda i, v: guids[7 - i]),
    "long_guid.xml": regex_guids(text, lambda i, v: "0x" + "f" * 600 if i == 6 else v),
    "missing_guid.xml": regex_guids(text, lambda i, v: None if i == 0 else v),
    "comment_guid.xml": '<!-- guid="x -->\n' + text,
    "comment_guid_cut.xml": '<!-- guid="x -->\n' + text[: len(text) // 2],
    "cut.xml": text[: len(text) // 2],
    "cut_b.xml": regex_guids(text, other_machine(3))[: len(text) // 2],
    "empty.xml": "",
    # unparsable copies that read the same GUID: named to be checked after the good nodes
    "zz_junk_value.xml": text.replace(f'guid="{guids[0]}"', f'guid="{guids[0]} <!-- x"'),
    "zz_junk_amp.xml": text.replace(f'guid="{guids[0]}"', f'guid="{guids[0]}&"'),
    # many empty guid values in a comment (a heap overflow of the old textual form)
    "zz_comment_empty.xml": text.replace("\n", "\n<!-- " + 'guid="" ' * 3000 + "-->\n", 1),
    "not_xml.xml": 'guid="0x1"\n',
}
tmp = tempfile.mkdtemp()


def mutate(name, src, *edits):
    path = os.path.join(tmp, "src_" + name)
    open(path, "w").write(src)
    out = subprocess.run([BIN, "--no-env", "mutate", path, *edits], capture_output=True,
                         text=True, check=True).stdout
    variants[name] = out


mutate("x8.xml", text, "--set", "0000:1b:00.0:link_width=8")
mutate("x8_other.xml", regex_guids(text, other_machine(4)), "--set", "0000:1b:00.0:link_width=8")
mutate("x8_no0x.xml", regex_guids(text, lambda i, v: v[2:]), "--set", "0000:1b:00.0:link_width=8")
mutate("nonic.xml", text, "--remove-net", "mlx5_3")
mutate("nonic_other.xml", regex_guids(text, other_machine(5)), "--remove-net", "mlx5_3")
for name, body in variants.items():
    open(os.path.join(tmp, name), "w").write(body)
names = sorted(variants)


def single(path, env):
    """The node's own check: (status, errors, warnings, kinds, search channels)."""
    r = subprocess.run([BIN, "--no-env", *env, "--format", "json", "check", "--baseline", BASE,
                        path], capture_output=True, text=True)
    if r.returncode not in (0, 1):
        return ("error",)
    doc = json.loads(r.stdout)
    kinds = {}
    for f in doc["findings"]:
        if f["severity"] != "info" and f.get("role") != "consequence":  # root causes, as fleet
            kinds[f["title"]] = kinds.get(f["title"], 0) + 1
    effect = None
    if not doc["healthy"]:
        t = subprocess.run([BIN, "--no-env", *env, "check", "--baseline", BASE, path],
                           capture_output=True, text=True).stdout
        m = re.search(r"search channels (\d+) -> (\d+)", t)
        effect = [int(m.group(1)), int(m.group(2))] if m else "same"
    status = "deviates" if doc["errors"] + doc["warnings"] else "ok"
    return (status, doc["errors"], doc["warnings"], kinds, effect)


def fleet(env):
    r = subprocess.run([BIN, "--no-env", *env, "--format", "json", "check", "--baseline", BASE,
                        *[os.path.join(tmp, n) for n in names]], capture_output=True, text=True)
    lines = [json.loads(l) for l in r.stdout.splitlines()]
    if len(lines) != len(names) + 1:
        sys.exit(f"FAIL sharing: the fleet check failed (exit {r.returncode}): {r.stderr[-300:]}")
    got = {}
    for n in lines[:-1]:
        name = os.path.basename(n["node"])
        if n["status"] == "error":
            got[name] = ("error",)
            continue
        effect = None
        if n["status"] == "deviates":
            effect = n["job"]["search_channels"] if "job" in n else "?"
            if effect != "?" and effect[0] == effect[1]:
                effect = "same"
        got[name] = (n["status"], n["errors"], n["warnings"], n["deviations"], effect)
    return got, lines[-1]["summary"]


failures = 0
for env in ([], ["--env", "NCCL_IB_MERGE_NICS=1"]):
    got, summary = fleet(env)
    shared = summary["checked"] - summary["planned"]
    for name in names:
        want = single(os.path.join(tmp, name), env)
        if got[name] != want:
            failures += 1
            print(f"FAIL sharing {' '.join(env)} {name}: fleet {got[name]} != check {want}")
    if shared == 0:
        failures += 1
        print(f"FAIL sharing {' '.join(env)}: no node shared a result (the test tests nothing)")
    print(f"sharing {' '.join(env) or '(default env)'}: {len(names)} nodes, {shared} shared")
sys.exit(1 if failures else 0)
