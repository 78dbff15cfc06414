#!/bin/sh
# The library's man pages: one topoplan_<group>(3) per @defgroup of the header,
# every exported function documented in exactly one of them (an entry .SS
# naming it), topoplan(3) listing every group page, and groff reads each page
# without a warning.
#   check-man3.sh include/topoplan.h BUILD/man3
set -e
header=$1 dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
groups=$(sed -n 's/.*@defgroup \([a-z0-9_]*\).*/\1/p' "$header")
for g in $groups; do
    [ -s "$dir/topoplan_$g.3" ] || { echo "FAIL man3: no page topoplan_$g.3"; fail=1; }
    grep -q "^\.BR topoplan_$g (3)" "$dir/topoplan.3" || { echo "FAIL man3: topoplan(3) does not list topoplan_$g(3)"; fail=1; }
done
[ "$(ls "$dir" | wc -l)" -eq $(( $(echo "$groups" | wc -w) + 1 )) ] || { echo "FAIL man3: pages other than the groups' in $dir"; fail=1; }
grep -ho 'TP_API[^(]*[ *]tp_[a-z0-9_]*(' "$header" | sed 's/.*[ *]\(tp_[a-z0-9_]*\)(/\1/' | sort -u > "$tmp/funcs"
grep -h '^\.SS ' "$dir"/topoplan_*.3 | sed 's/^\.SS //' | tr ',' '\n' | sed 's/^ *//' | sort > "$tmp/entries"
missing=$(comm -23 "$tmp/funcs" "$tmp/entries")
[ -z "$missing" ] || { echo "FAIL man3: functions without an entry:" $missing; fail=1; }
twice=$(uniq -d "$tmp/entries" | comm -12 - "$tmp/funcs")
[ -z "$twice" ] || { echo "FAIL man3: functions in more than one entry:" $twice; fail=1; }
if command -v groff >/dev/null 2>&1; then
    for f in "$dir"/*.3; do
        if ! groff -man -Tutf8 -ww -z "$f" 2> "$tmp/groff" || [ -s "$tmp/groff" ]; then
            echo "FAIL man3: groff warnings in $f:"; head -n 5 "$tmp/groff"; fail=1
        fi
    done
fi
[ $fail = 0 ] && echo "man3: $(echo "$groups" | wc -w) group pages, $(wc -l < "$tmp/funcs") functions each in one entry"
exit $fail
