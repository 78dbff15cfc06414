#!/bin/sh
# Every integer NCCL_* setting (TP_KIND_INT and TP_KIND_LEVEL rows of src/lib/config/config.h)
# at edge values, through planning commands: each run ends within the timeout with exit 0 (the
# value NCCL 2.22.3 computes) or exit 3 with a message naming the setting; never a hang, a
# crash or an internal error.
#   env_edges.sh TOPOPLAN [SECONDS]
bin=$1
limit=${2:-60}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
params=$(sed -n 's/.*X([A-Z0-9_]*, "\(NCCL_[A-Z0-9_]*\)", TP_KIND_\(INT\|LEVEL\),.*/\1/p' \
    src/lib/config/config.h)
[ -n "$params" ] || { echo "env_edges: no integer settings found in config.h"; exit 1; }
values="0 -1 1 2 -2 33 1073741824 1073741825 2147483647 2147483648 -2147483648 -2147483649
4294967295 4294967296 4294967297 9223372036854775807 -9223372036854775808 0x7fffffff
99999999999999999999999 12x"
pass=0; fail=0
check() { # PARAM VALUE COMMAND...
    p=$1 v=$2; shift 2
    # shellcheck disable=SC2086
    timeout "$limit" $TOPOPLAN_WRAP "$bin" --no-env --env "$p=$v" "$@" >/dev/null 2>"$tmp/err"
    code=$?
    if [ $code = 0 ] || { [ $code = 3 ] && grep -q "$p" "$tmp/err"; }; then
        pass=$((pass+1))
    else
        fail=$((fail+1))
        echo "FAIL $p=$v $*: exit $code$([ $code = 124 ] && echo ' (timeout)')"
        head -n 2 "$tmp/err" | sed 's/^/  /'
    fi
}
for p in $params; do
    for v in $values; do
        check "$p" "$v" plan --builtin dgx-h100 --nodes 2
    done
    # The tuning model and the NIC views read more settings: extremes only.
    for v in 2147483647 -2147483648 9223372036854775807; do
        check "$p" "$v" tune --builtin dgx-h100 --nodes 2 --sizes 1M..1M
        check "$p" "$v" nics --builtin dgx-a100 --nodes 2
    done
done
echo "env edges: $pass passed, $fail failed"
[ $fail = 0 ]
