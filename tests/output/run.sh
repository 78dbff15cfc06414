#!/bin/sh
# Output files are never destroyed (issue 25 item 3): every file topoplan writes
# (-o before or after the command, complete -o, tune --plot, NCCL_TOPO_DUMP_FILE,
# NCCL_GRAPH_DUMP_FILE) goes to a new file beside its target, renamed over it only
# when the command succeeded and every byte was written. A failed command, a write
# error (RLIMIT_FSIZE: the disk is "full" after 1 KiB) or /dev/full leave the target
# as it was and no temporary file behind.
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 failed=0
fail() { echo "FAIL output: $*"; failed=$((failed + 1)); }
ok() { pass=$((pass + 1)); }
T() { "$bin" --no-env "$@"; }
# full CMD...: run with writes past 1 KiB failing (EFBIG instead of SIGXFSZ)
full() { (trap '' XFSZ; ulimit -f 1; "$bin" --no-env "$@"); }
keep() { # FILE: unchanged since `save FILE`, and no temporary file left in its folder
    cmp -s "$1" "$1.saved" || { fail "$1 changed ($2)"; return; }
    [ -z "$(find "$(dirname "$1")" -name '*.tmp')" ] || { fail "temporary file left ($2)"; return; }
    ok
}
save() { cp "$1" "$1.saved"; }

T builtins dgx-h100 >"$tmp/x.xml" || fail "builtins"
save "$tmp/x.xml"
# mutate's own input as its -o: read whole before the output replaces it
T -o "$tmp/x.xml" mutate "$tmp/x.xml" --set 1a:00.0:link_width=8; code=$?
[ $code = 0 ] && grep -q 'link_width="8"' "$tmp/x.xml" || fail "mutate -o its own input (exit $code)"
ok
cp "$tmp/x.xml.saved" "$tmp/x.xml"
T mutate "$tmp/x.xml" --set 1a:00.0:link_width=8 -o "$tmp/x.xml" || fail "mutate ... -o after"
grep -q 'link_width="8"' "$tmp/x.xml" || fail "-o after mutate"
ok
cp "$tmp/x.xml.saved" "$tmp/x.xml"
T -o "$tmp/x.xml" mutate "$tmp/x.xml" --set bogus 2>/dev/null
[ $? = 3 ] || fail "failed mutate exit"
keep "$tmp/x.xml" "failed mutate"

# -o after the command name, as the help says (check, plan, nics, builtins)
T plan --builtin dgx-a100 -o "$tmp/plan.txt" >"$tmp/stdout" || fail "plan -o after"
[ -s "$tmp/plan.txt" ] && [ ! -s "$tmp/stdout" ] || fail "plan -o after: report not in the file"
ok
T --format json nics --builtin dgx-a100 --output "$tmp/nics.json" || fail "nics --output after"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/nics.json" || fail "nics json"
ok
T builtins -o "$tmp/list.txt" && grep -q dgx-h100 "$tmp/list.txt" || fail "builtins -o after"
ok
T -o "$tmp/a" plan --builtin dgx-a100 -o "$tmp/b" 2>/dev/null
[ $? = 2 ] || fail "-o given twice is a usage error"
ok

# a failed command or a full disk leaves an existing report as it was
save "$tmp/plan.txt"
T plan --builtin no-such-machine -o "$tmp/plan.txt" 2>/dev/null
[ $? = 2 ] || fail "unknown builtin exit"
keep "$tmp/plan.txt" "failed plan"
T -o "$tmp/plan.txt" plan "$tmp/missing.xml" 2>/dev/null
keep "$tmp/plan.txt" "missing input"
full -o "$tmp/plan.txt" plan --builtin dgx-h100 2>"$tmp/err"
[ $? = 4 ] && grep -q 'plan.txt: cannot write' "$tmp/err" || fail "full disk: exit/message"
keep "$tmp/plan.txt" "full disk"
T plan --builtin dgx-a100 -o /dev/full 2>"$tmp/err"
[ $? = 4 ] && grep -q '/dev/full: cannot write' "$tmp/err" || fail "/dev/full"
ok

# complete -o
T complete ../shared/provider/real_aws_p4d.xml -o "$tmp/full.xml" 2>/dev/null ||
    T complete tests/provider/*.xml -o "$tmp/full.xml" 2>/dev/null
if [ -s "$tmp/full.xml" ]; then
    src=$(ls ../shared/provider/real_aws_p4d.xml 2>/dev/null || ls tests/provider/*.xml | head -1)
    save "$tmp/full.xml"
    full complete "$src" -o "$tmp/full.xml" 2>/dev/null
    [ $? = 4 ] || fail "complete -o on a full disk: exit"
    keep "$tmp/full.xml" "complete -o, full disk"
    T complete "$tmp/missing.xml" -o "$tmp/full.xml" 2>/dev/null
    keep "$tmp/full.xml" "complete of a missing file"
fi

# complete of a file that starts with a UTF-8 byte order mark (issue 25 item 8): the
# output is XML NCCL reads (the mark is dropped, the comment comes first)
src=$(ls ../shared/provider/real_aws_p4d.xml 2>/dev/null || ls tests/provider/*.xml | head -1)
printf '\357\273\277' >"$tmp/bom.xml"
cat "$src" >>"$tmp/bom.xml"
T complete "$tmp/bom.xml" --sku aws-p4d.24xlarge -o "$tmp/bom-full.xml" 2>/dev/null || fail "complete of a BOM file"
[ "$(head -c 4 "$tmp/bom-full.xml")" = "<!--" ] || fail "completed BOM file: the comment is not first"
T validate "$tmp/bom-full.xml" >/dev/null 2>&1 || fail "completed BOM file: NCCL's reader refuses it"
python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$tmp/bom-full.xml" 2>/dev/null ||
    fail "completed BOM file is not XML"
ok

# tune --plot
T tune --builtin dgx-a100 --plot "$tmp/plot.svg" >/dev/null || fail "tune --plot"
save "$tmp/plot.svg"
full tune --builtin dgx-a100 --plot "$tmp/plot.svg" >/dev/null 2>&1
[ $? = 4 ] || fail "tune --plot on a full disk: exit"
keep "$tmp/plot.svg" "tune --plot, full disk"

# NCCL_TOPO_DUMP_FILE and NCCL_GRAPH_DUMP_FILE
T --env NCCL_TOPO_DUMP_FILE="$tmp/topo.dump" --env NCCL_GRAPH_DUMP_FILE="$tmp/graph.dump" \
    nccl-log --builtin dgx-h100 >/dev/null || fail "dumps"
[ -s "$tmp/topo.dump" ] && [ -s "$tmp/graph.dump" ] || fail "dumps written"
save "$tmp/topo.dump"
save "$tmp/graph.dump"
full --env NCCL_TOPO_DUMP_FILE="$tmp/topo.dump" nccl-log --builtin dgx-h100 >/dev/null 2>&1
[ $? = 4 ] || fail "topology dump on a full disk: exit"
keep "$tmp/topo.dump" "topology dump, full disk"
full --env NCCL_GRAPH_DUMP_FILE="$tmp/graph.dump" nccl-log --builtin dgx-h100 >/dev/null 2>&1
[ $? = 4 ] || fail "graph dump on a full disk: exit"
keep "$tmp/graph.dump" "graph dump, full disk"
# Untrusted text echoed (issue 25 item 8): control bytes of NCCL_* values and file names
# never reach the terminal raw; fleet JSON stays valid UTF-8 JSON with any file name
esc=$(printf '\033')
T --env "NCCL_CROSS_NIC=${esc}[31mred" env >"$tmp/env.txt" 2>"$tmp/err"
if grep -q "$esc" "$tmp/env.txt" "$tmp/err"; then fail "an env value's ESC echoed raw"; else ok; fi
grep -q '\\x1b\[31mred' "$tmp/err" || fail "the env value is not shown escaped"
T plan "$tmp/x${esc}]0;title.xml" 2>"$tmp/err"
if grep -q "$esc" "$tmp/err"; then fail "a file name's ESC echoed raw"; else ok; fi
mkdir "$tmp/fleet"
cp tests/fixtures/dgx_h100.xml "$tmp/fleet/$(printf 'n\377\303(ode\033[1m.xml')"
cp tests/fixtures/dgx_h100.xml "$tmp/fleet/ok.xml"
T --format json check --baseline tests/fixtures/dgx_h100.xml "$tmp/fleet" >"$tmp/fleet.json"
python3 -c '
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
names = [json.loads(l).get("node") for l in lines[:-1]]
assert any("\ufffd" in n and "\x1b" in n for n in names), names
' "$tmp/fleet.json" 2>/dev/null && ok || fail "fleet JSON of a non-UTF-8 file name"
T check --baseline tests/fixtures/dgx_h100.xml "$tmp/fleet" >"$tmp/fleet.txt"
if grep -q "$esc" "$tmp/fleet.txt"; then fail "fleet text: a file name's ESC raw"; else ok; fi

echo "output: $pass passed, $failed failed"
[ $failed = 0 ]
