#!/bin/sh
# topoplan(1) lists every command the CLI has, each with exactly the text of
# `topoplan help COMMAND`, and groff reads it without a warning.
#   check-man.sh BUILD/topoplan BUILD/topoplan.1
set -e
bin=$1 page=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
"$bin" --help | awk '/^Commands:/ {on = 1; next} on && /^$/ {exit} on && /^  [a-z]/ {print $1}' \
    > "$tmp/commands"
n=$(wc -l < "$tmp/commands")
if [ "$n" -lt 10 ]; then
    echo "FAIL man: only $n commands found in topoplan --help"; exit 1
fi
for c in $(cat "$tmp/commands"); do
    # The command's section as groff renders it, against the CLI's own help.
    awk -v c="$c" '$0 == ".SS " c {on = 1; next} on && /^\.fi$/ {exit} on && !/^\.nf$/ {print}' \
        "$page" | sed -e 's/\\e/\\/g' -e 's/^\\&//' > "$tmp/page"
    "$bin" help "$c" > "$tmp/help"
    if [ ! -s "$tmp/page" ]; then
        echo "FAIL man: command $c has no section"; fail=1
    elif ! cmp -s "$tmp/page" "$tmp/help"; then
        echo "FAIL man: section $c differs from \`topoplan help $c\`"; fail=1
    fi
done
if command -v groff >/dev/null 2>&1; then
    if ! groff -man -Tutf8 -ww -z "$page" 2> "$tmp/groff" || [ -s "$tmp/groff" ]; then
        echo "FAIL man: groff warnings:"; cat "$tmp/groff"; fail=1
    fi
fi
[ $fail = 0 ] && echo "man: topoplan(1) has all $n commands of the CLI, each as its --help"
exit $fail
