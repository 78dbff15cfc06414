#!/bin/sh
# Every function include/topoplan.h declares TP_API is called by a test
# (a C unit test, a fuzz target, a test tool or a Python test).
#   check-api-tested.sh include/topoplan.h
set -e
header=$1
missing=""
n=0
for f in $(grep -v '^#define TP_API' "$header" | tr '\n' ' ' | grep -o 'TP_API [^;(]*(' |
           sed 's/.*[ *]\([a-z_0-9]*\)($/\1/' | sort -u); do
    n=$((n + 1))
    grep -qw "$f" tests/unit/*.c tests/fuzz/*.c tests/tools/*.c python/tests/*.py 2>/dev/null ||
        missing="$missing $f"
done
if [ -n "$missing" ]; then
    echo "FAIL api: declared but called by no test:"
    for f in $missing; do echo "  $f"; done
    exit 1
fi
echo "api: all $n TP_API functions are called by a test"
