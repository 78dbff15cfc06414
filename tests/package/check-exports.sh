#!/bin/sh
# The shared library exports exactly the functions the header declares TP_API:
# nothing else (no internal tp_*__ helper, no non-tp_ symbol), nothing missing
# (a declared function that is not defined fails here, not at a user's link).
#   check-exports.sh LIB.so SONAME include/topoplan.h
set -e
lib=$1 soname=$2 header=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
got=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
if [ "$got" != "$soname" ]; then
    echo "FAIL exports: SONAME is \"$got\", expected \"$soname\""; fail=1
fi
nm -D --defined-only "$lib" | awk '{print $NF}' | sort -u > "$tmp/exported"
# Declarations may span lines: join the header, then take the name before "(".
grep -v '^#define TP_API' "$header" | tr '\n' ' ' | grep -o 'TP_API [^;(]*(' | sed 's/.*[ *]\([a-z_0-9]*\)($/\1/' |
    sort -u > "$tmp/declared"
if grep -v '^tp_' "$tmp/exported" > "$tmp/foreign"; then
    echo "FAIL exports: symbols without the tp_ prefix:"; sed 's/^/  /' "$tmp/foreign"; fail=1
fi
comm -23 "$tmp/declared" "$tmp/exported" > "$tmp/missing"
comm -13 "$tmp/declared" "$tmp/exported" > "$tmp/extra"
if [ -s "$tmp/missing" ]; then
    echo "FAIL exports: declared TP_API but not defined:"; sed 's/^/  /' "$tmp/missing"; fail=1
fi
if [ -s "$tmp/extra" ]; then
    echo "FAIL exports: exported but not declared in the header:"; sed 's/^/  /' "$tmp/extra"; fail=1
fi
[ $fail = 0 ] && echo "exports: $(wc -l < "$tmp/exported") tp_ symbols = the header's TP_API functions; SONAME $soname"
exit $fail
