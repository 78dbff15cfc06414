#!/usr/bin/env python3
"""make check-report: `topoplan report` pages in a real browser (headless Chromium).

For every distinct public real_* topology (2 nodes), every heterogeneous job of the
conformance cases (a degraded node beside healthy ones) and a 64-node job of one of
them, it writes the page, opens it in one headless Chromium driven over the DevTools
pipe, runs the page's script and checks the DOM:
  - the script ran to its end (data-ready) and nothing reached the console as an
    error or an uncaught exception;
  - every GPU, NIC port and link of the plan's system (read through the Python
    binding, not from the page) is in the picture, by name;
  - picking channels changes what is highlighted: each channel highlights its own
    route (the links of its route data), each ring channel's GPUs in the plan's order
    (read through the Python binding), two ring
    channels with different routes highlight different links, "nothing" none;
  - hovering a GPU fills the details panel, a bounding-link button marks a link;
  - a page made with --nccl V names V (every profile but the default), and a partial
    profile's tally;
  - a page with findings (setting notes, lints; a node's page made with --baseline: its root
    causes and what it costs a job) grades each, and each finding's button marks a device;
  - with scripts off the picture is whole (the SVG, ring channel 0 highlighted);
  - in a 1280 px wide window nothing scrolls sideways (the page or a part of it) and each
    system picture is drawn at 75 % of its size or more (50 % for two side by side; 32 NICs in
    a row once made it 33 % and 21 %);
  - the page loads within a generous sanity limit (not a benchmark), a 64-node
    job's page is under 2 MB;
and keeps a screenshot of each page under build/report-shots/.
"""
import base64
import ctypes
import glob
import hashlib
import json
import os
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
LOAD_LIMIT_S = 60.0  # a sanity limit on a loaded shared machine, not a benchmark
MAX_BYTES = 2 * 1024 * 1024


class Browser:
    """Headless Chromium over --remote-debugging-pipe (fd 3: commands in, fd 4: replies out)."""

    def __init__(self, exe):
        to_chrome_r, self._w = os.pipe()
        self._r, from_chrome_w = os.pipe()
        os.set_inheritable(to_chrome_r, True)
        os.set_inheritable(from_chrome_w, True)

        def fds():
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--remote-debugging-pipe", "--no-first-run", "--disable-extensions",
             "--user-data-dir=" + os.path.join(ROOT, "build", "report-chromium"), "about:blank"],
            preexec_fn=fds, close_fds=False,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buf = b""
        self._id = 0
        self.events = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget",
                                 {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(domain + ".enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": False},
                  session=True)

    def _read(self):
        while b"\0" not in self._buf:
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=False):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        while True:
            m = self._read()
            if m.get("id") == self._id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, name, timeout):
        end = time.time() + timeout
        while time.time() < end:
            for i, e in enumerate(self.events):
                if e.get("method") == name:
                    del self.events[i]
                    return e
            self.events.append(self._read())
        raise RuntimeError(f"no {name} within {timeout} s")

    def open(self, url, scripts=True):
        self.call("Emulation.setScriptExecutionDisabled", {"value": not scripts}, session=True)
        self.events = []
        t0 = time.time()
        self.call("Page.navigate", {"url": url}, session=True)
        self.wait_event("Page.loadEventFired", LOAD_LIMIT_S)
        return time.time() - t0

    def eval(self, expr):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                           "awaitPromise": True}, session=True)
        if "exceptionDetails" in r:
            raise RuntimeError("check script failed: " + json.dumps(r["exceptionDetails"])[:400])
        return r["result"].get("value")

    def errors(self):
        out = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                out.append("exception: " + p["exceptionDetails"].get("text", "") + " " +
                           str(p["exceptionDetails"].get("exception", {}).get("description", "")))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console: " + json.dumps(p.get("args"))[:200])
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                out.append("log: " + p["entry"].get("text", ""))
        return out

    def width_problems(self):
        """WIDTH_CHECKS in a WIDTH_PX wide window (then back to the usual size)."""
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": WIDTH_PX, "height": 1000, "deviceScaleFactor": 1, "mobile": False},
                  session=True)
        got = self.eval(WIDTH_CHECKS.replace("SIDE_MIN_SCALE", str(SIDE_MIN_SCALE))
                        .replace("MIN_SCALE", str(MIN_SCALE)))
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": False},
                  session=True)
        return [f"at {WIDTH_PX} px: {p}" for p in got]

    def screenshot(self, path):
        h = self.eval("document.documentElement.scrollHeight")
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": 1400, "height": min(int(h), 16000), "deviceScaleFactor": 1,
                   "mobile": False}, session=True)
        data = self.call("Page.captureScreenshot", {"format": "png"}, session=True)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        # the parts alone, readable at a glance: the system, the job's nodes, the tuning
        for sel, part in (("#sys .pic-row", "system"), ("#job", "job"), ("#tune", "tune"),
                          ("main > .kinds", "sides")):
            r = self.eval("(function(){var e=document.querySelector('%s');if(!e)return null;"
                          "var b=e.getBoundingClientRect();return [b.left,b.top+window.scrollY,"
                          "b.width,b.height];})()" % sel)
            if not r:
                continue
            clip = {"x": r[0], "y": r[1], "width": r[2], "height": min(r[3], 4000), "scale": 1}
            data = self.call("Page.captureScreenshot", {"format": "png", "clip": clip},
                             session=True)["data"]
            with open(path.replace(".png", f"-{part}.png"), "wb") as f:
                f.write(base64.b64decode(data))
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": False},
                  session=True)

    def close(self):
        try:
            self.call("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


# Runs in the page: the DOM checks, as a JSON-able report of what it found.
PAGE_CHECKS = r"""
(function(){
 var out={problems:[]}; function bad(s){out.problems.push(s);}
 if(document.documentElement.getAttribute('data-ready')!=='1') bad('script did not run to its end');
 var v=document.getElementById('sys'), svg=v&&v.querySelector('svg.system');
 if(!svg){bad('no system picture');return out;}
 function names(k){return Array.prototype.map.call(svg.querySelectorAll('.node.k-'+k+' text:first-of-type'),
   function(t){return t.textContent;});}
 out.gpus=names('GPU'); out.nets=names('NET'); out.links=svg.querySelectorAll('.link').length;
 var pick=document.getElementById('sys-pick'), data=JSON.parse(document.getElementById('sys-routes').textContent);
 function on(){return Array.prototype.map.call(svg.querySelectorAll('.link.on'),function(e){return e.id;}).sort().join(' ');}
 function choose(val){pick.value=val;pick.dispatchEvent(new Event('change'));return on();}
 var seen={}, values=Array.prototype.map.call(pick.options,function(o){return o.value;});
 out.options=values.length;
 values.forEach(function(val){
   var got=choose(val); seen[val]=got;
   if(val===''){ if(got!=='') bad('"nothing" still highlights '+got); return; }
   var want=data[val].links.map(function(l){return 'sys-l'+l;}).sort().join(' ');
   if(got!==want) bad('picking '+val+' highlights ['+got+'], its route is ['+want+']');
   if(svg.getAttribute('data-shown')!==val) bad('picture does not say it shows '+val);
 });
 var rings=values.filter(function(x){return /^ring\/\d+$/.test(x);});
 out.ring_channels=rings.length;
 out.ring_orders=rings.map(function(k){return data[k].seq.map(function(n){
   return document.getElementById('sys-n'+n).querySelector('text').textContent;})
   .filter(function(t){return /^GPU /.test(t);});});
 for(var i=1;i<rings.length;i++){
   var a=data[rings[0]].links.slice().sort().join(), b=data[rings[i]].links.slice().sort().join();
   if(a!==b && seen[rings[0]]===seen[rings[i]]) bad('ring channels 0 and '+i+' differ but highlight the same links');
 }
 if(rings.length && values.indexOf('ring')<0) bad('no pattern option for ring');
 var gpu=svg.querySelector('.node.k-GPU'), info=document.getElementById('sys-info');
 if(gpu){gpu.dispatchEvent(new Event('mouseenter'));
   if(info.textContent.indexOf(gpu.querySelector('text').textContent)<0) bad('hovering a GPU does not show it');}
 var link=svg.querySelector('.link');
 if(link){link.dispatchEvent(new Event('mouseenter'));
   if(!/GB\/s/.test(info.textContent)) bad('hovering a link does not show its bandwidth');}
 var btn=Array.prototype.filter.call(document.querySelectorAll('#sys button.bound'),function(b){
   return b.getAttribute('data-links')!=='-1';})[0];
 out.bound_buttons=document.querySelectorAll('#sys button.bound').length;
 if(btn){btn.click(); if(!svg.querySelector('.link.bound')) bad('bounding-link button marks nothing');}
 if(pick.tabIndex<0) bad('channel picker not keyboard-focusable');
 if(!svg.querySelector('title')||!svg.querySelector('desc')) bad('picture without title/desc');
 var fs=document.getElementById('findings');
 out.findings=fs?fs.querySelectorAll('tr td[class^="sev-"]').length:0;
 out.costs=fs?fs.querySelectorAll('table.cost tbody tr').length:0;
 if(fs) Array.prototype.forEach.call(fs.querySelectorAll('button.finding'),function(x){x.click();
   if(!svg.querySelector('.bound')) bad('finding '+x.getAttribute('data-labels')+' marks nothing');});
 out.kinds=document.querySelectorAll('section.sysview').length;
 out.job_limits=document.querySelectorAll('#job table.limits td.bad').length;
 return out;
})()
"""

# Runs in a check --report page: both pictures, what differs marked, the findings' buttons.
COMPARE_CHECKS = r"""
(function(){
 var out={problems:[]}; function bad(s){out.problems.push(s);}
 if(document.documentElement.getAttribute('data-ready')!=='1') bad('script did not run to its end');
 var a=document.querySelector('#first svg.system'), b=document.querySelector('#second svg.system');
 if(!a||!b){bad('not both pictures');return out;}
 out.changed=b.querySelectorAll('.changed').length+a.querySelectorAll('.changed').length;
 if(!out.changed) bad('nothing marked as changed');
 var rows=document.querySelectorAll('table.findings tbody tr').length, btns=document.querySelectorAll('button.finding');
 out.findings=rows; if(!rows) bad('no findings listed');
 var marked=0;
 Array.prototype.forEach.call(btns,function(x){x.click();
   if(a.querySelector('.bound')||b.querySelector('.bound')) marked++;
   else bad('finding '+x.getAttribute('data-labels')+' marks nothing');});
 out.marked=marked;
 return out;
})()
"""

# Runs at a 1280 px wide window: no horizontal scrolling of the page or of any part of it, and
# each system picture at a readable scale (a 32-NIC row once shrank it to a third).
WIDTH_CHECKS = r"""
(function(){
 var out=[], d=document.documentElement;
 if(d.scrollWidth>d.clientWidth) out.push('page scrolls sideways: '+d.scrollWidth+' px in '+d.clientWidth);
 Array.prototype.forEach.call(document.querySelectorAll('body *'),function(e){
   var o=getComputedStyle(e).overflowX;
   if((o==='auto'||o==='scroll')&&e.scrollWidth>e.clientWidth+1)
     out.push((e.id||e.className||e.tagName)+' scrolls sideways: '+e.scrollWidth+' px in '+e.clientWidth);});
 Array.prototype.forEach.call(document.querySelectorAll('svg.system'),function(s){
   var scale=s.getBoundingClientRect().width/s.viewBox.baseVal.width;
   if(scale<(s.closest('.kinds')?SIDE_MIN_SCALE:MIN_SCALE)) out.push('system picture '+s.closest('section').id+' drawn at '+scale.toFixed(2)+' of its size');});
 return out;
})()
"""
WIDTH_PX = 1280
MIN_SCALE = 0.75  # of the picture's own size: 12 px labels stay at 9 px or more
SIDE_MIN_SCALE = 0.5  # two pictures side by side (nodes of a job, check pages): 6 px or more

STATIC_CHECKS = r"""
(function(){
 var svg=document.querySelector('#sys svg.system');
 return {svg: !!svg, ready: document.documentElement.getAttribute('data-ready'),
         on: svg ? svg.querySelectorAll('.link.on').length : 0,
         nodes: svg ? svg.querySelectorAll('.node').length : 0};
})()
"""


def expected(case):
    """GPU and NIC port names and the link pairs of the plan's system, via the Python binding."""
    import topoplan
    with topoplan.plan(case["topo"], nodes=case["nodes"], node_topos=case["node_topos"],
                       env={}, nccl=case.get("nccl")) as p:
        s = p.system
        gpus = sorted(f"GPU {n.gpu_rank}" for n in s.nodes("gpu"))
        pairs = set()  # by (type, index): NCCL's labels of NET ports can repeat
        for t, name in enumerate(topoplan.NODE_TYPES):
            for i in range(s.count(name)):
                for k in range(s.node(name, i).n_links):
                    li = topoplan._LinkInfo()
                    topoplan._lib.tp_system_link(s._sys, t, i, k, ctypes.byref(li),
                                                 ctypes.sizeof(li))
                    a, b = (t, i), (li.to_type, li.to_index)
                    if a != b:
                        pairs.add(tuple(sorted([a, b])))
        rings = [[f"GPU {r}" for r in ch.gpus] for ch in p.graph("ring").channels]
        return gpus, s.count("net"), len(pairs), rings


def cases(root):
    out, seen = [], set()
    for d in sorted(glob.glob(os.path.join(root, "real_*"))):
        topo = os.path.join(d, "topo.xml")
        if not os.path.exists(topo):
            continue
        digest = hashlib.md5(open(topo, "rb").read()).hexdigest()
        if digest in seen:
            continue
        seen.add(digest)
        out.append({"name": os.path.basename(d), "topo": topo, "nodes": 2, "node_topos": []})
    for d in sorted(glob.glob(os.path.join(root, "hetero_*"))):
        args = open(os.path.join(d, "args")).read().split() if os.path.exists(
            os.path.join(d, "args")) else []
        if "--rank" in args or "_rank" in os.path.basename(d) or "--node-topo" not in args:
            continue
        nodes = int(args[args.index("--nodes") + 1]) if "--nodes" in args else 2
        topos = [os.path.join(d, args[i + 1]) for i, a in enumerate(args) if a == "--node-topo"]
        out.append({"name": os.path.basename(d), "topo": os.path.join(d, "topo.xml"),
                    "nodes": nodes, "node_topos": topos})
    # the first real machine under every other profile (report --nccl V): modelled and said so,
    # with the profile's public tally while it is partial
    import topoplan
    for v in [v for v in topoplan.versions() if not v["default"]] if out else []:
        tally = f"{v['public_passed']} of {v['public_total']}" if v["status"] == "partial" else None
        out.append(dict(out[0], name=out[0]["name"] + "_nccl_" + v["nccl"], nccl=v["nccl"],
                        tally=tally))
    for c in [c for c in out if c["node_topos"] and len(c["node_topos"]) == 1]:
        out.append(dict(c, name=c["name"] + "_check", compare=True))
        # the odd node's own page, checked against the baseline: its findings with their cost
        out.append(dict(c, name=c["name"] + "_baseline", topo=c["node_topos"][0],
                        node_topos=[], baseline=c["topo"]))
    big = next((c for c in out if c["node_topos"]), None)
    if big:
        out.append(dict(big, name=big["name"] + "_64nodes", nodes=64, big=True))
    return out


def main():
    exe, root = sys.argv[1], sys.argv[2]
    chromium = os.environ.get("CHROMIUM", "chromium")
    shots = os.path.join(ROOT, "build", "report-shots")
    os.makedirs(shots, exist_ok=True)
    todo = cases(root)
    if len(sys.argv) > 3:
        todo = [c for c in todo if any(k in c["name"] for k in sys.argv[3:])]
    browser = Browser(chromium)
    fails, t_start = 0, time.time()
    try:
        for i, c in enumerate(todo):
            page = os.path.join(shots, c["name"] + ".html")
            cmd = [exe, "--no-env", "report", c["topo"], "--nodes", str(c["nodes"]), "-o", page]
            for t in c["node_topos"]:
                cmd += ["--node-topo", t]
            if c.get("baseline"):
                cmd += ["--baseline", c["baseline"]]
            if c.get("nccl"):
                cmd += ["--nccl", c["nccl"]]
            if c.get("compare"):
                cmd = [exe, "--no-env", "check", c["node_topos"][0], "--baseline", c["topo"],
                       "--nodes", str(c["nodes"]), "--report", page]
            r = subprocess.run(cmd, capture_output=True, text=True)
            problems = []
            if c.get("compare"):
                if r.returncode not in (0, 1) or not os.path.exists(page):
                    problems.append(f"exit {r.returncode}: {r.stderr.strip()[:300]}")
                else:
                    browser.open("file://" + page)
                    got = browser.eval(COMPARE_CHECKS)
                    problems += got["problems"] + browser.errors() + browser.width_problems()
                    browser.screenshot(os.path.join(shots, c["name"] + ".png"))
                print(("FAIL " if problems else "ok ") + c["name"] + (
                    "" if problems else f": {got['findings']} findings, {got['changed']} marked, "
                    f"{got['marked']} buttons mark devices"))
                for p in problems:
                    print("   ", p)
                fails += bool(problems)
                continue
            if r.returncode != 0:
                problems.append(f"exit {r.returncode}: {r.stderr.strip()[:300]}")
            else:
                size = os.path.getsize(page)
                if c.get("big") and size > MAX_BYTES:
                    problems.append(f"{size} bytes, over {MAX_BYTES}")
                took = browser.open("file://" + page)
                if took > LOAD_LIMIT_S:
                    problems.append(f"loaded in {took:.1f} s, over the {LOAD_LIMIT_S} s limit")
                got = browser.eval(PAGE_CHECKS)
                problems += got["problems"] + browser.errors() + browser.width_problems()
                gpus, n_nets, n_links, rings = expected(c)
                if got.get("ring_orders") != rings:
                    problems.append(f"ring channels drawn in the orders {got.get('ring_orders')}, "
                                    f"the plan's are {rings}")
                if sorted(got.get("gpus", [])) != gpus:
                    problems.append(f"GPUs {got.get('gpus')} in the picture, the plan has {gpus}")
                if len(got.get("nets", [])) != n_nets:
                    problems.append(f"{len(got.get('nets', []))} NIC ports drawn, plan {n_nets}")
                if c["node_topos"] and (got.get("kinds", 0) < 3 or not got.get("job_limits")):
                    problems.append(f"nodes differ but no limiting node beside a good one: "
                                    f"{got.get('kinds')} pictures, {got.get('job_limits')} marks")
                if c.get("baseline") and not (got.get("findings") and got.get("costs")):
                    problems.append(f"checked against a baseline, but {got.get('findings')} "
                                    f"findings and {got.get('costs')} job costs on the page")
                if c.get("nccl"):
                    head = browser.eval("document.querySelector('header').textContent")
                    wants = ["NCCL " + c["nccl"]]
                    if c["tally"]:
                        wants.append(c["tally"] + " public conformance cases")
                    for want in wants:
                        if want not in head:
                            problems.append(f"the header does not say '{want}': {head[:200]}")
                if got.get("links") != n_links:
                    problems.append(f"{got.get('links')} links drawn, the plan has {n_links}")
                browser.screenshot(os.path.join(shots, c["name"] + ".png"))
                if i == 0:  # without scripts the picture is whole
                    browser.open("file://" + page, scripts=False)
                    st = browser.eval(STATIC_CHECKS)
                    if not st["svg"] or st["ready"] or st["nodes"] == 0 or st["on"] == 0:
                        problems.append(f"with scripts off: {st}")
            status = "FAIL" if problems else "ok"
            print(f"{status} {c['name']}: {len(got.get('gpus', [])) if not r.returncode else 0} "
                  f"GPUs, {got.get('links') if not r.returncode else 0} links, "
                  f"{got.get('options', 0) if not r.returncode else 0} picks"
                  + (f", {got['findings']} findings, {got['costs']} job costs"
                     if not r.returncode and got.get("findings") else "")
                  if not problems else f"FAIL {c['name']}")
            for p in problems:
                print("   ", p)
            fails += bool(problems)
    finally:
        browser.close()
    print(f"report pages: {len(todo) - fails} passed, {fails} failed "
          f"({time.time() - t_start:.0f} s; screenshots in build/report-shots/)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
