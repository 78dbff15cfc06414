#!/bin/sh
# Fleet check test: a folder of generated DGX H100 node files (each with its own
# NIC GUIDs) where three nodes carry planted deviations; `check --baseline` must
# report exactly those three, with their kinds, every other node ok, exit 1;
# and exit 0 once the planted files are removed.
bin=$1
base=tests/fixtures/dgx_h100.xml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL fleet: $*"; exit 1; }
awk -v n=40 -v dir="$tmp" '
    { line[NR] = $0 }
    END {
        for (i = 1; i <= n; i++) {
            f = sprintf("%s/node%02d.xml", dir, i)
            for (k = 1; k <= NR; k++) {
                s = line[k]
                gsub(/946dae03008c/, sprintf("%012x", i), s)
                print s > f
            }
            close(f)
        }
    }' "$base"
plant() { # NODE EDIT...: apply the edits to the node file in place
    node=$1; shift
    "$bin" -o "$tmp/edit.tmp" mutate "$tmp/$node" "$@" && mv "$tmp/edit.tmp" "$tmp/$node" ||
        fail "mutate $node"
}
plant node07.xml --set 1b:00.0:link_width=8
plant node13.xml --remove-net mlx5_3
plant node29.xml --set-net mlx5_5:speed=200000
"$bin" --no-env --format json check --baseline "$base" "$tmp" >"$tmp/out.json"
code=$?
[ "$code" = 1 ] || fail "exit $code with planted deviations (expected 1)"
python3 - "$tmp/out.json" <<'PY' || fail "report"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
nodes, summary = lines[:-1], lines[-1]["summary"]
want = {"node07.xml": "PCIe link downgraded", "node13.xml": "missing NIC",
        "node29.xml": "NIC speed lower"}
assert len(nodes) == 40, len(nodes)
for n in nodes:
    name = n["node"].rsplit("/", 1)[1]
    if name in want:
        assert n["status"] == "deviates", n
        assert want[name] in n["deviations"], (name, n["deviations"])
        assert "job" in n, n
    else:
        assert n["status"] == "ok", n
assert summary["checked"] == 40 and summary["ok"] == 37 and summary["deviating"] == 3, summary
kinds = {k["kind"]: k["deviating_nodes"] for k in summary["kinds"]}
for kind in want.values():
    assert kinds.get(kind) == 1, kinds
PY
rm "$tmp/node07.xml" "$tmp/node13.xml" "$tmp/node29.xml"
"$bin" --no-env check --baseline "$base" "$tmp" >"$tmp/out.txt"
code=$?
[ "$code" = 0 ] || fail "exit $code on healthy nodes (expected 0)"
grep -q "^Summary: 37 nodes against $base: 37 ok, 0 deviate, 0 could not be checked" "$tmp/out.txt" ||
    fail "summary of healthy nodes"
# A folder that cannot be read: one line naming it and the system error, exit 4 (root reads
# every folder, so the check runs as nobody there).
mkdir "$tmp/unreadable" && chmod 000 "$tmp/unreadable"
as_user=
[ "$(id -u)" = 0 ] && as_user="setpriv --reuid=nobody --regid=nogroup --clear-groups"
chmod o+x "$tmp"
$as_user "$bin" --no-env check --baseline dgx-h100 "$tmp/unreadable" >/dev/null 2>"$tmp/err.txt"
code=$?
[ "$code" = 4 ] || fail "exit $code on an unreadable folder (expected 4)"
[ "$(cat "$tmp/err.txt")" = "topoplan: $tmp/unreadable: cannot read the folder: Permission denied" ] ||
    fail "unreadable folder message: $(cat "$tmp/err.txt")"
echo "fleet: planted deviations found exactly (3 of 40 nodes), healthy folder ok, unreadable folder exit 4"
