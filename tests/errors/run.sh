#!/bin/sh
# Error tests: every tests/errors/*.test runs topoplan on a bad input and
# checks the exact first line of standard error and the exit status.
#   args:   command line after the global options (paths relative to the repo root)
#   env:    KEY=VALUE given as --env (repeatable)
#   stderr: the expected first line of standard error
#   exit:   the expected exit status
#   lines:  (optional) the expected number of lines of standard error
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
for t in tests/errors/*.test; do
    [ -e "$t" ] || continue
    name=$(basename "$t" .test)
    args=$(sed -n 's/^args: *//p' "$t")
    want_err=$(sed -n 's/^stderr: *//p' "$t")
    want_exit=$(sed -n 's/^exit: *//p' "$t")
    want_lines=$(sed -n 's/^lines: *//p' "$t")
    envs=$(sed -n 's/^env: *\(.*\)$/--env \1/p' "$t" | tr '\n' ' ')
    # shellcheck disable=SC2086
    $TOPOPLAN_WRAP "$bin" --no-env $envs $args >/dev/null 2>"$tmp/err"
    code=$?
    got_err=$(head -n 1 "$tmp/err")
    got_lines=$(wc -l < "$tmp/err" | tr -d ' ')
    if [ "$code" = "$want_exit" ] && [ "$got_err" = "$want_err" ] &&
       { [ -z "$want_lines" ] || [ "$got_lines" = "$want_lines" ]; }; then
        pass=$((pass+1))
    else
        fail=$((fail+1))
        echo "FAIL $name: exit $code (expected $want_exit), $got_lines stderr lines${want_lines:+ (expected $want_lines)}"
        echo "  got:      $got_err"
        echo "  expected: $want_err"
    fi
done
echo "errors: $pass passed, $fail failed"
[ $fail = 0 ]
