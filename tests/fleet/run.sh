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
# Each node's lints and setting notes, as `check` prints them for one node: on stderr once per
# kind of node (naming its nodes), and in each node's JSON line.
mkdir "$tmp/lints"
cp tests/fixtures/provider/defects.xml "$tmp/lints/a.xml"
cp tests/fixtures/provider/defects.xml "$tmp/lints/b.xml"
cp tests/fixtures/dgx_h100_nic3_missing.xml "$tmp/lints/c.xml"
"$bin" --no-env --env NCCL_IB_HCA=mlx5_9 check tests/fixtures/provider/defects.xml \
    --baseline tests/fixtures/provider/defects.xml >/dev/null 2>"$tmp/one.err"
"$bin" --no-env --env NCCL_IB_HCA=mlx5_9 check --baseline tests/fixtures/provider/defects.xml \
    "$tmp/lints" >/dev/null 2>"$tmp/fleet.err"
n_lints=$(grep -c ": lint: " "$tmp/one.err")
[ "$n_lints" -ge 1 ] || fail "the fixture has no lint"
[ "$(grep -c "^topoplan: $tmp/lints/a.xml, $tmp/lints/b.xml: lint: " "$tmp/fleet.err")" = "$n_lints" ] ||
    fail "lints of a.xml and b.xml not printed once naming both: $(cat "$tmp/fleet.err")"
grep -q "^topoplan: $tmp/lints/c.xml: setting: NCCL_IB_HCA=mlx5_9: selects none" "$tmp/fleet.err" ||
    fail "c.xml's own setting note missing: $(cat "$tmp/fleet.err")"
"$bin" --no-env --env NCCL_IB_HCA=mlx5_9 --format json check \
    --baseline tests/fixtures/provider/defects.xml "$tmp/lints" >"$tmp/lints.json" 2>/dev/null
python3 - "$tmp/lints.json" "$n_lints" <<'PY' || fail "lints in JSON"
import json, sys
nodes = {l["node"].rsplit("/", 1)[1]: l for l in map(json.loads, open(sys.argv[1])) if "node" in l}
for name in ("a.xml", "b.xml"):
    assert len(nodes[name]["lints"]) == int(sys.argv[2]), nodes[name]
    assert not nodes[name]["lints"][0]["partial"], nodes[name]
assert any("selects none" in s for s in nodes["c.xml"]["setting_notes"]), nodes["c.xml"]
PY
echo "fleet: planted deviations found exactly (3 of 40 nodes), healthy folder ok, unreadable folder exit 4, lints per kind of node"
