#!/bin/bash
# Provider files: `topoplan complete` on each published partial file of
# ../shared/provider must give a topology whose nccl-log (1 and 2 nodes) is the
# expected.log of the completed conformance case its README names, and must keep
# every published element, attribute, comment and whitespace (check_derived.py);
# past the header comment, its text is the completed case's topo.xml byte for byte.
# Builds temporary copies of the cases with the completed file as topo.xml and
# runs the conformance runner on them. Usage: run.sh TOPOPLAN
bin=$1
provider=../shared/provider
cases=../shared/conformance/cases
runner=../shared/conformance/run
if [ ! -d "$provider" ] || [ ! -x "$runner" ]; then
    echo "provider files or conformance runner not found: skipped"; exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/cases"
fail=0
# file  SKU  completed case  [complete options]
while read -r file sku case opts; do
    [ -n "$file" ] || continue
    out="$tmp/$case.xml"
    # shellcheck disable=SC2086
    if ! "$bin" --no-env complete "$provider/$file.xml" --sku "$sku" $opts -o "$out" 2>"$tmp/err"; then
        echo "FAIL $file: complete failed"; sed 's/^/  /' "$tmp/err"; fail=1; continue
    fi
    if ! python3 - "$provider/$file.xml" "$out" <<'PY' >"$tmp/derived" 2>&1; then
import sys
sys.path.insert(0, "../shared/provider")
import check_derived
r, total = check_derived.check(sys.argv[1], sys.argv[2])
for e in r.errors:
    print(e)
sys.exit(1 if r.errors else 0)
PY
        echo "FAIL $file: a published element, attribute, comment or whitespace was lost"
        sed 's/^/  /' "$tmp/derived" | head -n 5; fail=1
    fi
    # Beyond the log: the text after the header comment is the case's completed file.
    if ! cmp -s <(sed '1,/^-->/d' "$cases/$case/topo.xml") <(sed '1,/^-->/d' "$out") 2>/dev/null; then
        echo "FAIL $file: differs from $case/topo.xml after the header comment"; fail=1
    fi
    for c in "$case" "${case}_nodes_2"; do
        [ -d "$cases/$c" ] || continue
        cp -r "$cases/$c" "$tmp/cases/$c"
        cp "$out" "$tmp/cases/$c/topo.xml"
    done
done <<'LIST'
real_aws_g5             aws-g5.48xlarge        real_aws_g5
real_aws_p4d            aws-p4d.24xlarge       real_aws_p4d
real_aws_p4de           aws-p4de.24xlarge      real_aws_p4de
real_aws_p5_2023        aws-p5.48xlarge        real_aws_p5_2023
real_aws_p5_2023        aws-p5.48xlarge        real_aws_p5_2023_32nets  --plugin-mode sendrecv
real_aws_p5_2026        aws-p5.48xlarge        real_aws_p5_2026
real_azure_ndv2         azure-nd40rs-v2        real_azure_ndv2
real_azure_ndv4         azure-nd96asr-v4       real_azure_ndv4
real_azure_ndv4_2021    azure-nd96asr-v4       real_azure_ndv4_2021
real_azure_ndv4_2023    azure-nd96asr-v4       real_azure_ndv4_2023
real_azure_ndv5         azure-nd96isr-h100-v5  real_azure_ndv5
real_azure_ndv5_pr877   azure-nd96isr-h100-v5  real_azure_ndv5_pr877
real_oci_b4_8           oci-bm.gpu.b4.8        real_oci_b4_8
real_oci_gpu4_8         oci-bm.gpu4.8          real_oci_gpu4_8
LIST
n=$(ls "$tmp/cases" | wc -l)
if ! "$runner" --jobs 2 --cases "$tmp/cases" "$bin" >"$tmp/log" 2>&1; then
    tail -n 30 "$tmp/log"; fail=1
fi
grep -q " 0 failed" "$tmp/log" || { grep -E "^FAIL" "$tmp/log" | head -n 30; fail=1; }
tail -n 1 "$tmp/log"
[ "$fail" = 0 ] && echo "provider: $n completed cases match NCCL's log"
exit $fail
