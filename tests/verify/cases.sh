#!/bin/sh
# Every public conformance case's expected.log (NCCL's own normalized lines for the case's
# rank, with its env and args) must verify as agreeing for that rank.
# With VERSION and LIST: the cases LIST names (one a line, # comments) of that NCCL version's
# suite, each log headed by NCCL's `NCCL version VERSION` line and verified without --nccl:
# verify takes the version from the log (a partial profile is compared, noted on stderr; an
# exact one without a note).
# usage: cases.sh TOPOPLAN CASES_DIR [VERSION LIST]
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cases=$2 version=$3 list=$4
pass=0 fail=0
partial=0
[ -n "$version" ] && "$1" versions | grep -q "^  $version  *partial" && partial=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for c in "$cases"/*/; do
    name=$(basename "$c")
    [ -f "$c/expected.log" ] || continue
    log=expected.log
    if [ -n "$version" ]; then
        grep -qx "$name" "$list" || continue
        { echo "INFO NCCL version $version+cuda12.9"; cat "$c/expected.log"; } >"$tmp/versioned.log"
        log=$tmp/versioned.log
    fi
    # --sizes is read from the log's own selection lines; the rest is the job
    args=$(sed 's/--sizes//' "$c/args" 2>/dev/null)
    # the case's env lines, each one word (values may hold blanks)
    set --
    while IFS= read -r line; do
        case $line in '' | '#'*) continue ;; esac
        set -- "$@" "$line"
    done <"$c/env"
    out=$(cd "$c" && env -i PATH="$PATH" "$@" "$bin" verify "$log" --topo topo.xml $args 2>&1)
    rc=$?
    # a partial profile must say so; an exact one must not
    noted=0
    echo "$out" | grep -q "not yet exact for NCCL $version" && noted=1
    if [ $rc -eq 0 ] && { [ -z "$version" ] || [ $noted = "$partial" ]; }; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $name${version:+ (NCCL $version)} (exit $rc)"
        echo "$out" | grep -E '^rank|expected:|log:|topoplan:' | head -4 | sed 's/^/    /'
    fi
done
echo "conformance logs${version:+ of NCCL $version}: $pass agree, $fail do not"
[ $fail -eq 0 ]
