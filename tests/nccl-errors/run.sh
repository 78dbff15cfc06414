#!/bin/sh
# NCCL error catalogue: every tests/nccl-errors/*.test is one way NCCL 2.22.3
# fails (or, for a few, does not) while loading a topology or graph file. Each
# runs topoplan and checks the exit status, the first line of standard error
# and NCCL's WARN and back-trace lines on standard output, in order:
#   # NCCL 2.22.3: the functions of NCCL's source the expected lines come from
#   args:   command line after the global options (paths relative to the repo root)
#   env:    KEY=VALUE given as --env (repeatable)
#   exit:   the expected exit status
#   stderr: the expected first line of standard error
#   log:    one expected line ("WARN <text>" or "INFO <file>:<line> -> <code>"); none: no such line
# The compared lines are the "NCCL WARN" lines and the back-traces ("NCCL INFO
# graph/xml.cc:181 -> 3"), from "NCCL " on, trailing blanks stripped.
# TOPOPLAN_WRAP (e.g. valgrind) prefixes every run.
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
for t in tests/nccl-errors/*.test; do
    [ -e "$t" ] || continue
    name=$(basename "$t" .test)
    args=$(sed -n 's/^args: *//p' "$t")
    want_err=$(sed -n 's/^stderr: *//p' "$t")
    want_exit=$(sed -n 's/^exit: *//p' "$t")
    envs=$(sed -n 's/^env: *\(.*\)$/--env \1/p' "$t" | tr '\n' ' ')
    sed -n 's/^log: //p' "$t" | sed 's/[[:space:]]*$//' >"$tmp/want"
    # shellcheck disable=SC2086
    $TOPOPLAN_WRAP "$bin" --no-env $envs $args >"$tmp/out" 2>"$tmp/err"
    code=$?
    grep -E ' NCCL WARN | NCCL INFO [a-z_/]+\.(cc|h):[0-9]+ -> [0-9]+$' "$tmp/out" |
        sed 's/^.* NCCL \(WARN\|INFO\) /\1 /; s/[[:space:]]*$//' >"$tmp/got"
    got_err=$(head -n 1 "$tmp/err")
    if [ "$code" = "$want_exit" ] && [ "$got_err" = "$want_err" ] && cmp -s "$tmp/want" "$tmp/got"; then
        pass=$((pass+1))
    else
        fail=$((fail+1))
        echo "FAIL $name: exit $code (expected $want_exit)"
        [ "$got_err" = "$want_err" ] || printf '  stderr:   %s\n  expected: %s\n' "$got_err" "$want_err"
        diff -u "$tmp/want" "$tmp/got" | sed -n '3,$s/^/  /p' | head -n 30
    fi
done
echo "nccl-errors: $pass passed, $fail failed"
[ $fail = 0 ]
