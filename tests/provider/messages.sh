#!/bin/sh
# Partial-file messages and provider-file lints: each fixture of
# tests/fixtures/provider must make nccl-log say its finding on stderr (and keep
# stdout NCCL's), validate say it on stdout; complete's options must show in
# the XML it writes. Usage: messages.sh TOPOPLAN
bin=$1
fx=tests/fixtures/provider
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0

# expect NAME FILE TEXT: FILE contains TEXT (fixed string)
expect() {
    if grep -qF -- "$3" "$2"; then pass=$((pass+1)); else
        fail=$((fail+1)); echo "FAIL $1: no \"$3\""; sed 's/^/  /' "$2" | head -n 8; fi
}
# absent NAME FILE REGEX
absent() {
    if grep -qE -- "$3" "$2"; then fail=$((fail+1)); echo "FAIL $1: has /$3/"; else pass=$((pass+1)); fi
}
# nccl_log FIXTURE TEXT: the finding on stderr, nothing but NCCL lines on stdout
nccl_log() {
    "$bin" --no-env nccl-log "$fx/$1" >"$tmp/out" 2>"$tmp/err"
    expect "nccl-log $1" "$tmp/err" "$2"
    absent "nccl-log $1 stdout" "$tmp/out" "partial|lint|complete"
}

nccl_log no_gpu.xml "partial file: no GPU in the file: NCCL adds each GPU it finds"
nccl_log no_gpu.xml "partial file: 2 NIC endpoints without <nic><net>: the network plugin reports them"
nccl_log no_gpu.xml "run \`topoplan complete $fx/no_gpu.xml --sku NAME -o FULL.xml\`"
nccl_log bare_gpus.xml "partial file: 2 GPU endpoints without <gpu> (0000:10:00.0, 0000:11:00.0): NCCL fills dev, sm, rank and gdr from NVML"
nccl_log bare_gpus.xml "partial file: 1 NIC endpoint without <nic><net>"
nccl_log bare_gpus.xml "partial file: 1 <pci> element without class or link attributes: NCCL reads them from sysfs"
nccl_log bare_gpus.xml "partial file: 1 <cpu> without arch/vendor/familyid/modelid"
nccl_log no_nvlinks.xml "partial file: 2 NVLink-class GPUs without <nvlink> (0000:10:00.0, 0000:11:00.0): NCCL asks NVML"
nccl_log defects.xml "lint: 2 <net> on distinct NICs share guid 0x0 and port 1 (as NCCL reads guid \"1\" with 0x%lx): NCCL counts them as ONE NIC port"
nccl_log defects.xml "lint: line 6: GPU 0000:10:00.0 has an <nvlink> to itself (count 2)"
nccl_log p4d_one_cpu.xml "lint: one <cpu> for the 2-socket aws-p4d.24xlarge"
nccl_log p4d_one_cpu.xml "lint: 1 NIC bus id off the aws-p4d.24xlarge layout (0000:a0:1d.0), 1 of them where the SKU has a GPU"
nccl_log p4d_one_cpu.xml "lint: 1 GPU bus id off the aws-p4d.24xlarge layout (0000:a0:1b.0), 1 of them where the SKU has a NIC"

# validate: on standard output after "ok"; plan and check: on standard error
"$bin" --no-env validate "$fx/no_nvlinks.xml" >"$tmp/out" 2>&1
expect "validate" "$tmp/out" "partial: 2 NVLink-class GPUs without <nvlink>"
expect "validate" "$tmp/out" "hint: NCCL completes this file at run time"
"$bin" --no-env plan "$fx/defects.xml" >/dev/null 2>"$tmp/err"
expect "plan" "$tmp/err" "lint: line 6: GPU 0000:10:00.0 has an <nvlink> to itself (count 2)"
"$bin" --no-env check "$fx/no_nvlinks.xml" --baseline "$fx/no_nvlinks.xml" >/dev/null 2>"$tmp/err"
expect "check" "$tmp/err" "partial file: 2 NVLink-class GPUs without <nvlink>"
"$bin" --no-env validate --builtin dgx-h100 >"$tmp/out" 2>&1
absent "validate builtin" "$tmp/out" "^(partial|lint|hint)"

# complete: defaults and each override, on a fixture
c() { "$bin" --no-env complete "$fx/bare_gpus.xml" --sku aws-p4d.24xlarge "$@" -o "$tmp/full.xml" 2>"$tmp/err"; }
c
expect "complete" "$tmp/full.xml" '<gpu dev="0" sm="80" rank="0" gdr="1">'
expect "complete" "$tmp/full.xml" '<nvlink target="fffffff:ff:ff.0" count="12" tclass="0x068000"/>'
expect "complete" "$tmp/full.xml" '<net name="rdmap18s0" dev="0" speed="100000" port="1" latency="75.000000" guid="0xa00000100000000" maxconn="2147483647" gdr="1"/>'
expect "complete" "$tmp/full.xml" 'COMPLETED NCCL topology'
expect "complete" "$tmp/full.xml" '<cpu numaid="0" affinity="ffffffff" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="85">'
expect "complete report" "$tmp/err" "complete: SKU aws-p4d.24xlarge:"
c --sm 86 --gdr 0 --nic-speed 200000 --nvlinks 6
expect "complete --sm" "$tmp/full.xml" '<gpu dev="1" sm="86" rank="1" gdr="0">'
expect "complete --nvlinks" "$tmp/full.xml" 'count="6"'
expect "complete --nic-speed --gdr" "$tmp/full.xml" 'speed="200000" port="1" latency="75.000000" guid="0xa00000100000000" maxconn="2147483647" gdr="0"'
c --nvlinks 0
absent "complete --nvlinks 0" "$tmp/full.xml" "<nvlink"
"$bin" --no-env --format json complete "$fx/bare_gpus.xml" --sku aws-p4d.24xlarge -o "$tmp/full.xml" >"$tmp/json"
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["schema"]=="topoplan.complete" and d["added"]' "$tmp/json"; then
    pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL complete --format json"; fi
if [ -f ../shared/provider/real_aws_p5_2023.xml ]; then
    "$bin" --no-env complete ../shared/provider/real_aws_p5_2023.xml -o "$tmp/p5.xml" 2>/dev/null
    n=$(grep -c "^ *<net " "$tmp/p5.xml")
    [ "$n" = 8 ] && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL p5 default: $n nets, expected 8"; }
    "$bin" --no-env complete ../shared/provider/real_aws_p5_2023.xml --plugin-mode sendrecv -o "$tmp/p5.xml" 2>/dev/null
    n=$(grep -c "^ *<net " "$tmp/p5.xml")
    [ "$n" = 32 ] && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL p5 sendrecv: $n nets, expected 32"; }
fi
echo "provider messages: $pass passed, $fail failed"
[ "$fail" = 0 ]
