#!/bin/sh
# Every public conformance case's expected.log (NCCL's own normalized lines for the case's
# rank, with its env and args) must verify as agreeing for that rank.
# usage: cases.sh TOPOPLAN CASES_DIR
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cases=$2
pass=0 fail=0
for c in "$cases"/*/; do
    name=$(basename "$c")
    [ -f "$c/expected.log" ] || continue
    # --sizes is read from the log's own selection lines; the rest is the job
    args=$(sed 's/--sizes//' "$c/args" 2>/dev/null)
    # the case's env lines, each one word (values may hold blanks)
    set --
    while IFS= read -r line; do
        case $line in '' | '#'*) continue ;; esac
        set -- "$@" "$line"
    done <"$c/env"
    out=$(cd "$c" && env -i PATH="$PATH" "$@" "$bin" verify expected.log --topo topo.xml $args 2>&1)
    rc=$?
    if [ $rc -eq 0 ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $name (exit $rc)"
        echo "$out" | grep -E '^rank|expected:|log:|topoplan:' | head -4 | sed 's/^/    /'
    fi
done
echo "conformance logs: $pass agree, $fail do not"
[ $fail -eq 0 ]
