#!/bin/sh
# Pictures: `plan --format svg` (drawn through libgvc) of every distinct public
# topology at 2 nodes (rings and trees reach the NICs) must render: exit 0, an
# SVG document, and no Graphviz error on standard error (lost edges, failed routes).
bin=$1
cases=${2:-../shared/conformance/cases}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
for topo in $(md5sum "$cases"/*/topo.xml | sort -u -k1,1 | awk '{print $2}' | sort); do
    if "$bin" --no-env --format svg plan "$topo" --nodes 2 >"$tmp/out.svg" 2>"$tmp/err" &&
        grep -q '<svg' "$tmp/out.svg" && ! grep -v '^topoplan: ' "$tmp/err" | grep -qi 'error\|warning'; then
        pass=$((pass+1))
    else
        fail=$((fail+1)); echo "FAIL picture of $topo"; grep -v '^topoplan: ' "$tmp/err" | head -3
    fi
done
echo "pictures: $pass rendered, $fail failed"
[ $fail = 0 ]
