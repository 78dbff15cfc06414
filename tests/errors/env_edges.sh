#!/bin/sh
# Every integer NCCL_* setting (TP_KIND_INT and TP_KIND_LEVEL rows of src/lib/config/config.h)
# at edge values, through planning commands: each run ends within the timeout with exit 0 (the
# value NCCL 2.22.3 computes) or exit 3 with a message naming the setting; never a hang, a
# crash or an internal error. Settings NCCL keeps in an int wrap as NCCL's do.
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
# Settings NCCL 2.22.3 reads into an int (int x = ncclParamX(), strtol into an int): V and
# V + 2^32 are the same value to NCCL, so the same log and NIC choices.
int_params="NCCL_P2P_DISABLE NCCL_NET_GDR_READ NCCL_P2P_PXN_LEVEL NCCL_IB_MERGE_NICS
NCCL_PXN_DISABLE NCCL_NCHANNELS_PER_NET_PEER NCCL_MIN_P2P_NCHANNELS NCCL_MAX_P2P_NCHANNELS
NCCL_NTHREADS NCCL_LL128_NTHREADS NCCL_NVLS_NCHANNELS NCCL_MIN_CTAS NCCL_MAX_CTAS"
same_run() { # PARAM VALUE
    "$bin" --no-env --env "$1=$2" nccl-log --builtin dgx-a100 --nodes 2 --sizes 2>/dev/null |
        grep -v 'set by environment'
    "$bin" --no-env --env "$1=$2" --format json nics --builtin dgx-a100 --nodes 2 2>/dev/null
}
for p in $int_params; do
    for v in 0 1 2; do
        same_run "$p" "$v" >"$tmp/a"
        same_run "$p" "$((v + 4294967296))" >"$tmp/b"
        if cmp -s "$tmp/a" "$tmp/b"; then
            pass=$((pass+1))
        else
            fail=$((fail+1))
            echo "FAIL $p=$((v + 4294967296)) is not read as $p=$v (NCCL keeps an int)"
        fi
    done
done
echo "env edges: $pass passed, $fail failed"
[ $fail = 0 ]
