#!/bin/sh
# Diagnostic tests: every tests/notes/*.test runs topoplan and checks its
# standard error, which golden tests do not see. Descriptor lines:
#   args:    the command line after the global options (paths relative to the repo root)
#   env:     KEY=VALUE given as --env (repeatable); the process environment is ignored
#   has:     text that one line of standard error must contain (repeatable)
#   lacks:   text that no line of standard error may contain (repeatable)
#   exit:    expected exit status (default 0)
# Every case also runs with both streams into one pipe (2>&1 | cat): each
# "topoplan: " diagnostic must start its line (a report line is never split).
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
for t in tests/notes/*.test; do
    [ -e "$t" ] || continue
    name=$(basename "$t" .test)
    args=$(sed -n 's/^args: *//p' "$t")
    want_exit=$(sed -n 's/^exit: *//p' "$t"); want_exit=${want_exit:-0}
    envs=$(sed -n 's/^env: *\(.*\)$/--env \1/p' "$t" | tr '\n' ' ')
    # shellcheck disable=SC2086
    "$bin" --no-env $envs $args >"$tmp/out" 2>"$tmp/err"
    code=$?
    ok=1
    [ "$code" = "$want_exit" ] || { echo "FAIL $name: exit $code, expected $want_exit"; ok=0; }
    sed -n 's/^has: *//p' "$t" >"$tmp/has"
    while IFS= read -r want; do
        grep -qF -- "$want" "$tmp/err" || { echo "FAIL $name: no stderr line has: $want"; ok=0; }
    done <"$tmp/has"
    sed -n 's/^lacks: *//p' "$t" >"$tmp/lacks"
    while IFS= read -r bad; do
        ! grep -qF -- "$bad" "$tmp/err" || { echo "FAIL $name: a stderr line has: $bad"; ok=0; }
    done <"$tmp/lacks"
    # shellcheck disable=SC2086
    "$bin" --no-env $envs $args 2>&1 | cat >"$tmp/merged"
    if grep -q '.topoplan: ' "$tmp/merged"; then
        echo "FAIL $name: a diagnostic splits a report line (2>&1):"
        grep -n '.topoplan: ' "$tmp/merged" | head -3 | cut -c1-160
        ok=0
    fi
    if [ $ok = 1 ]; then pass=$((pass+1)); else fail=$((fail+1)); sed 's/^/  stderr: /' "$tmp/err" | head -20 | cut -c1-200; fi
done
echo "notes: $pass passed, $fail failed"
[ $fail = 0 ]
