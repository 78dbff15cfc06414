#!/bin/sh
# Golden tests: every tests/golden/*.test descriptor runs topoplan and compares
# its standard output with the expected file (diff -u). Descriptor lines:
#   args:   the command line after the global options (paths relative to the repo root)
#   env:    KEY=VALUE given as --env (repeatable); the process environment is ignored
#   expect: expected output, relative to tests/golden/
#   exit:   expected exit status (default 0)
# Each case runs twice to prove the output is byte-identical. JSON output must
# parse, DOT and SVG output must render. TP_UPDATE_GOLDEN=1 rewrites the expected files.
# TOPOPLAN_WRAP (e.g. valgrind) prefixes every run.
bin=$1
dir=tests/golden
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
for t in "$dir"/*.test; do
    [ -e "$t" ] || continue
    name=$(basename "$t" .test)
    args=$(sed -n 's/^args: *//p' "$t")
    expect=$(sed -n 's/^expect: *//p' "$t")
    want_exit=$(sed -n 's/^exit: *//p' "$t"); want_exit=${want_exit:-0}
    envs=$(sed -n 's/^env: *\(.*\)$/--env \1/p' "$t" | tr '\n' ' ')
    ok=1
    for round in 1 2; do
        # shellcheck disable=SC2086
        $TOPOPLAN_WRAP "$bin" --no-env $envs $args >"$tmp/out.$round" 2>"$tmp/err"
        code=$?
        if [ "$code" != "$want_exit" ]; then
            echo "FAIL $name: exit $code, expected $want_exit"; sed 's/^/  /' "$tmp/err"; ok=0; break
        fi
    done
    if [ $ok = 1 ] && ! cmp -s "$tmp/out.1" "$tmp/out.2"; then
        echo "FAIL $name: output differs between two runs"; ok=0
    fi
    if [ $ok = 1 ] && [ -n "$TP_UPDATE_GOLDEN" ]; then
        cp "$tmp/out.1" "$dir/$expect"
    fi
    if [ $ok = 1 ] && ! diff -u "$dir/$expect" "$tmp/out.1" >"$tmp/diff"; then
        echo "FAIL $name: output differs from $expect"; head -n 40 "$tmp/diff"; ok=0
    fi
    case "$expect" in
    *.json) [ $ok = 1 ] && ! python3 -m json.tool "$tmp/out.1" >/dev/null && { echo "FAIL $name: invalid JSON"; ok=0; } ;;
    *.svg) [ $ok = 1 ] && ! rsvg-convert -o "$tmp/plot.png" "$tmp/out.1" && { echo "FAIL $name: SVG does not render"; ok=0; } ;;
    *.dot) [ $ok = 1 ] && ! dot -Tsvg -o /dev/null "$tmp/out.1" && { echo "FAIL $name: DOT does not render"; ok=0; } ;;
    esac
    if [ $ok = 1 ]; then pass=$((pass+1)); else fail=$((fail+1)); fi
done
echo "golden: $pass passed, $fail failed"
[ $fail = 0 ]
