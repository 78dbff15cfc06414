#!/bin/sh
# make check-verify: topoplan verify on whole-job logs.
#  1. every job of ../shared/logs/jobs gives its `expected` verdict (agree, or diverge R:
#     R the first and only diverging rank);
#  2. logs altered here from a clean job are each found and attributed: a changed ring, a
#     missing channel, another NIC in a search line, a tree line, another NCCL version,
#     a setting missing from the log (its cause found by re-planning), a GPU at PCIe x8
#     (its cause found), the NIC and PXN proxy of ring connections, a degraded node among
#     healthy ones (named, with its edit), CRLF, gzip, a cut last line, launcher prefixes,
#     not a log;
#  3. the log against itself (no topology) and --emit;
#  4. every public conformance case's expected.log agrees for its rank (cases.sh).
# usage: run.sh TOPOPLAN
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")" && pwd)
shared=$here/../../../shared
jobs=$shared/logs/jobs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 n=0
ok() { n=$((n + 1)); }
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "FAIL $*"; }

verify() { env -i PATH="$PATH" "$bin" --no-env verify "$@"; }

if [ ! -d "$jobs" ]; then
    echo "no job logs at $jobs: check-verify skipped"
    exit 0
fi

# 1. the shared jobs
for d in "$jobs"/*/; do
    name=$(basename "$d")
    args=$(sed "s#node\([0-9]*\).xml#$d/node\1.xml#g" "$d/args")
    out=$(verify "$d/job.log" $args 2>&1)
    rc=$?
    set -- $(cat "$d/expected")
    first=$(echo "$out" | sed -n 's/^rank \([0-9]*\): diverges.*/\1/p' | head -1)
    count=$(echo "$out" | grep -c '^rank [0-9]*: diverges')
    if [ "$1" = agree ] && [ $rc -eq 0 ]; then ok
    elif [ "$1" = diverge ] && [ $rc -eq 1 ] && [ "$first" = "$2" ] && [ "$count" = 1 ]; then ok
    else bad "$name: expected '$*', exit $rc, first diverging rank '$first' ($count)"; fi
done

# 2. alterations of one clean job: rank 3 is pid 20020 of gpu-h-039
src=$jobs/syn_dgx1v_nodes2__clean
cp "$src/topo.xml" "$tmp/"
r3='gpu-h-039:20020:20100 \[3\] NCCL INFO'
expect() { # NAME EXIT PATTERN FILE [args]: exit code and a line of the report
    name=$1 want=$2 pattern=$3 file=$4
    shift 4
    out=$(verify "$file" "$@" 2>&1)
    rc=$?
    if [ $rc -eq "$want" ] && echo "$out" | grep -q -- "$pattern"; then ok
    else bad "$name: exit $rc (want $want), no line matching '$pattern'"; echo "$out" | head -12 | sed 's/^/    /'; fi
}
alter() { sed "$1" "$src/job.log" >"$tmp/job.log"; }

alter "/$r3 Ring 02 :/s/2 -> 3 -> 0/0 -> 3 -> 2/"
expect "changed ring" 1 '^rank 3: diverges in channels' "$tmp/job.log"
expect "a topology that is no XML" 3 'cannot be planned' "$tmp/job.log" --topo /dev/null
alter "/$r3 Ring 05 :/d"
expect "missing channel" 1 '^rank 3: diverges in channels' "$tmp/job.log"
alter "/$r3  1 : NET\/1 GPU\/2 GPU\/1/s/NET\/1 GPU\/2/NET\/0 GPU\/2/"
expect "another NIC in a search line" 1 '^rank 3: diverges in search' "$tmp/job.log"
alter "/$r3 Trees/s/\[0\] 7\/-1\/-1->3->2/[0] 6\/-1\/-1->3->2/"
expect "tree line" 1 '^rank 3: diverges in channels' "$tmp/job.log"
alter 's/NCCL version 2.22.3+cuda12.4/NCCL version 2.30.7+cuda12.9/'
# another version's log is compared with that version's profile (a partial one would be noted;
# 2.30.7 is exact: no note): a 2.22.3 log read as 2.30.7's diverges
expect "another NCCL version: compared" 1 'NCCL 2.30.7' "$tmp/job.log"
verify "$tmp/job.log" 2>&1 | grep -q 'not yet exact\|which is partial' && bad "another NCCL version: exact profile noted as partial" || ok
verify "$tmp/job.log" --format json 2>/dev/null | grep -q "\"nccl_version\": \"2.30.7\"" && ok || bad "another NCCL version: not in the JSON"
sed -i 's/NCCL version 2.30.7+cuda12.9/NCCL version 2.99.1+cuda12.9/' "$tmp/job.log"
expect "an NCCL version without a profile" 3 'the job ran NCCL 2.99.1; topoplan does not model it' "$tmp/job.log"
[ "$(verify "$tmp/job.log" 2>&1 | wc -l)" -eq 1 ] && ok || bad "another NCCL version: not one line"

# run-time connection lines: P2P between NVLinked GPUs agrees, SHM between them diverges
{ cat "$src/job.log"
  echo "gpu-h-039:20020:20100 [3] NCCL INFO Channel 00/0 : 3[3] -> 0[0] via P2P/CUMEM/read"
  echo "gpu-h-039:20020:20100 [3] NCCL INFO Channel 00/1 : 3[3] -> 11[3] [send] via NET/IB/0/GDRDMA"
  echo "gpu-h-039:20020:20100 [3] NCCL INFO Connected all rings"; } >"$tmp/conn.log"
expect "connections as planned" 0 '16 of 16 ranks agree' "$tmp/conn.log"
{ cat "$src/job.log"
  echo "gpu-h-039:20020:20100 [3] NCCL INFO Channel 01/0 : 3[3] -> 2[2] via SHM/direct/direct"; } >"$tmp/conn.log"
expect "connection via SHM" 1 '^rank 3: diverges in connections' "$tmp/conn.log"
expect "connection via SHM: the plan's" 1 'between ranks 3 and 2 via P2P' "$tmp/conn.log"
{ cat "$src/job.log"
  echo "gpu-h-039:20020:20100 [3] NCCL INFO Channel 00/1 : 3[3] -> 11[3] [send] via NET/IB/0"; } >"$tmp/conn.log"
expect "connection without GDR" 1 'between ranks 3 and 11 via NET with GPU Direct RDMA' "$tmp/conn.log"

# the IB plugin's "NCCL_IB_HCA set to V" line (net_ib.cc's own wording) is a setting too
sed 's/^\(.*\) NCCL INFO NCCL_TOPO_FILE set by environment to .*$/\1 NCCL INFO NCCL_IB_HCA set to mlx5\n&/' \
    "$src/job.log" >"$tmp/ib.log"
expect "NCCL_IB_HCA from the IB plugin's line" 0 '^setting from the log: NCCL_IB_HCA=mlx5 ' "$tmp/ib.log"
# the NIC and the PXN proxy of ring connections over the network (connection index 0, before
# "Connected all rings"): rank 19 of a 4-node job (planned by its kind) leaves ring channel 01
# on NET/1 (mlx5_1) through its own proxy
j4=$jobs/syn_dgx1v_nodes4__clean
r19='gpu-h-331:20036:20116 [3] NCCL INFO'
conn4() { { cat "$j4/job.log"; for l in "$@"; do echo "$r19 $l"; done; } >"$tmp/nic.log"; }
conn4 "Channel 01/0 : 19[3] -> 26[2] [send] via NET/IB/1/GDRDMA" "Connected all rings" \
    "Channel 01/0 : 19[3] -> 26[2] [send] via NET/IB/0/GDRDMA"
expect "ring NIC as planned (tree phase after)" 0 '32 of 32 ranks agree' "$tmp/nic.log" --topo "$j4/topo.xml"
conn4 "Channel 01/0 : 19[3] -> 26[2] [send] via NET/IB/0/GDRDMA"
expect "ring send on another NIC" 1 'rank 19 sends to rank 26 via NET/1 (mlx5_1) (the plan' "$tmp/nic.log" --topo "$j4/topo.xml"
conn4 "Channel 01/0 : 19[3] -> 26[2] [send] via NET/IB/1(18)/GDRDMA"
expect "ring send through PXN, planned without" 1 'through its own proxy, not PXN' "$tmp/nic.log" --topo "$j4/topo.xml"
conn4 "Channel 05/0 : 26[2] -> 19[3] [receive] via NET/IB/3/GDRDMA"
expect "ring receive on another NIC" 1 'ring channel 05: rank 19 receives from rank 26 via NET/1 (mlx5_1)' "$tmp/nic.log" --topo "$j4/topo.xml"
# a ring channel the plan sends through PXN: real_oci_h100's rank 1 leaves ring channel 00 on
# NET/0 (mlx5_0) through rank 0's proxy
joci=$jobs/real_oci_h100_nodes_2_rank_11__clean
pxn() { { cat "$joci/job.log"; echo "gpu-a-176:20018:20098 [1] NCCL INFO Channel 00/0 : 1[1] -> 8[0] [send] via $1"; } >"$tmp/pxn.log"; }
pxn "NET/IB/0(0)/GDRDMA"
expect "ring send through PXN as planned" 0 '16 of 16 ranks agree' "$tmp/pxn.log" --topo "$joci/topo.xml"
pxn "NET/IB/0/GDRDMA"
expect "ring send without the planned PXN" 1 "on NET/0 (mlx5_0) through rank 0's proxy (PXN" "$tmp/pxn.log" --topo "$joci/topo.xml"
# a node of fewer channels: NCCL reads channel % the job's ring channels (7, not node 0's 8):
# hetero_dgx_h100_gpu3_x8's rank 0 leaves ring channel 15 (channel 1's copy) on NET/0 itself
hcase=$shared/conformance/cases/hetero_dgx_h100_gpu3_x8_nodes2
if [ -d "$hcase" ]; then
    : >"$tmp/het.log"
    for r in $(seq 0 15); do
        "$bin" --no-env nccl-log "$hcase/topo.xml" --nodes 2 --node-topo "$hcase/node1.xml" \
            --rank $r | sed "s/^/node$((r / 8)):$((100 + r)):1 /" >>"$tmp/het.log"
    done
    het() { { cat "$tmp/het.log"; echo "node0:100:1 [0] NCCL INFO Channel 15/0 : 0[0] -> 9[1] [send] via $1"; } >"$tmp/het1.log"; }
    hargs="--topo $hcase/topo.xml --node-topo $hcase/node1.xml"
    het "NET/IB/0/GDRDMA"
    expect "ring channel of a duplicate, job's channel count" 0 '16 of 16 ranks agree' "$tmp/het1.log" $hargs
    het "NET/IB/6(6)/GDRDMA"
    expect "ring channel of a duplicate, node's channel count" 1 'ring channel 15: rank 0 sends to rank 9 via NET/0 (mlx5_0)' "$tmp/het1.log" $hargs
fi

# a process that initialises a second communicator (a subgroup): only the first is checked
{ cat "$src/job.log"
  grep 'gpu-h-039:20020:' "$src/job.log" |
      sed 's/comm 0x7fffd0000b70 rank 3 nRanks 16 nNodes 2 localRanks 8 localRank 3/comm 0x7fffd0000c00 rank 1 nRanks 2 nNodes 2 localRanks 1 localRank 0/'; } >"$tmp/twocomm.log"
expect "second communicator" 0 "rank 3's process begins another communicator's init" "$tmp/twocomm.log"

# a setting NCCL reported, missing from the log: the re-planned cause
cp "$jobs/syn_hgx_a100_nodes2_cross_nic1__clean/topo.xml" "$tmp/topo.xml"
grep -v 'NCCL_CROSS_NIC set by' "$jobs/syn_hgx_a100_nodes2_cross_nic1__clean/job.log" >"$tmp/job.log"
expect "setting missing" 1 'cause: NCCL_CROSS_NIC=1 (re-planned with it: reproduces all' "$tmp/job.log"
expect "setting missing: ranks by cause" 1 'NCCL_CROSS_NIC=1: 16 ranks (0-15)' "$tmp/job.log"
expect "setting missing: the cost" 1 'AllReduce busbw, predicted -> with the cause: 1 MiB' "$tmp/job.log"

# hardware: the log of a machine whose GPU 0000:07:00.0 is at PCIe x4, checked against the healthy one
case_dir=$shared/conformance/cases/syn_dgx1v
if [ -d "$case_dir" ]; then
    cp "$case_dir/topo.xml" "$tmp/topo.xml"
    "$bin" --no-env mutate "$tmp/topo.xml" --set 0000:07:00.0:link_width=4 >"$tmp/x4.xml"
    : >"$tmp/job.log"
    for r in 0 1 2 3 4 5 6 7; do
        "$bin" --no-env nccl-log "$tmp/x4.xml" --rank $r | sed "s/^/node1:$((100 + r)):1 /" >>"$tmp/job.log"
    done
    expect "GPU at x4" 1 'cause: topoplan mutate --set 0000:07:00.0:link_width=4' "$tmp/job.log" --topo "$tmp/topo.xml"
fi

# a degraded node among healthy ones: node 2 of 4 has GPU 0000:07:00.0 at PCIe x4 (then, NIC
# 0000:0c:00.0 missing); the log against the healthy topology names the node and its edit
if [ -d "$case_dir" ]; then
    cp "$case_dir/topo.xml" "$tmp/topo.xml"
    degraded() { # EDIT...: the 4-node job's log, node 2 edited
        "$bin" --no-env mutate "$tmp/topo.xml" "$@" >"$tmp/sick.xml"
        : >"$tmp/job.log"
        for r in $(seq 0 31); do
            "$bin" --no-env nccl-log "$tmp/topo.xml" --nodes 4 --node-topo "$tmp/topo.xml" \
                --node-topo "$tmp/sick.xml" --rank $r | sed "s/^/gpu-$((r / 8)):$((100 + r)):1 /" >>"$tmp/job.log"
        done
    }
    degraded --set 0000:07:00.0:link_width=4
    expect "degraded node: the cause" 1 'cause: node 2 alone: topoplan mutate --set 0000:07:00.0:link_width=4' "$tmp/job.log" --topo "$tmp/topo.xml"
    expect "degraded node: named" 1 'degraded node: node 2 (host gpu-2, ranks 16-23)' "$tmp/job.log" --topo "$tmp/topo.xml"
    # every diverging rank (node 2's own, the others' rings and trees) has that cause
    verify "$tmp/job.log" --topo "$tmp/topo.xml" 2>&1 | grep -q 'no cause found' && bad "degraded node: a rank without the cause" || ok
    verify "$tmp/job.log" --topo "$tmp/topo.xml" --format json | grep -q '"node_index": 2, "host": "gpu-2"' && ok || bad "degraded node: not in the JSON"
    degraded --remove 0000:0c:00.0
    expect "degraded node: a NIC missing" 1 'cause: node 2 alone: topoplan mutate --remove 0000:0c:00.0' "$tmp/job.log" --topo "$tmp/topo.xml"
    # without a topology: the host whose ring search found fewer channels than all others
    expect "degraded node: the log against itself" 1 "host gpu-2: its ring search found 3 channels, every other host's 4" "$tmp/job.log"
fi

# the way logs arrive: CRLF, gzip, launcher prefixes, a cut last line
cp "$src/topo.xml" "$tmp/topo.xml"
sed 's/$/\r/' "$src/job.log" >"$tmp/crlf.log"
expect "CRLF" 0 '16 of 16 ranks agree' "$tmp/crlf.log"
gzip -c "$src/job.log" >"$tmp/job.log.gz"
expect "gzip" 0 '16 of 16 ranks agree' "$tmp/job.log.gz"
verify "$tmp/job.log.gz" --format json | grep -q '"gzip": true' && ok || bad "gzip: not in the JSON"
sed 's/^gpu-\([hb]\)/[rank\1]:gpu-\1/' "$src/job.log" >"$tmp/torchrun.log"
expect "torchrun prefixes" 0 '16 of 16 ranks agree' "$tmp/torchrun.log"
sed 's/^/[1,3]<stdout>:/' "$src/job.log" >"$tmp/mpirun.log"
expect "mpirun prefixes" 0 '16 of 16 ranks agree' "$tmp/mpirun.log"
sed 's/^/[2026-12-07 18:00:00.123] /' "$src/job.log" >"$tmp/stamped.log"
expect "timestamps" 0 '16 of 16 ranks agree' "$tmp/stamped.log"
head -c -40 "$src/job.log" >"$tmp/cut.log"
expect "cut last line" 1 'the log.s last line is cut (rank 13)' "$tmp/cut.log"
expect "cut last line: the rank" 1 '^rank 13: diverges' "$tmp/cut.log"
for r in 0 1 2 3 4 5 6 7; do "$bin" --no-env nccl-log "$tmp/topo.xml" --rank $r >"$tmp/rank$r.log"; done
expect "one file per rank" 0 '8 of 8 ranks agree' "$tmp"/rank[0-7].log --topo "$tmp/topo.xml" --nodes 1
printf 'hello\nworld\n' >"$tmp/notnccl.log"
expect "not an NCCL log" 3 'not an NCCL log' "$tmp/notnccl.log"
[ "$(verify "$tmp/notnccl.log" 2>&1 | wc -l)" -eq 1 ] && ok || bad "not an NCCL log: not one line"
expect "missing log" 4 'cannot open' "$tmp/none.log"

# 3. without a topology: the log against itself, and the partial topology it shows
grep -v 'NCCL_TOPO_FILE set by' "$src/job.log" >"$tmp/self.log"
expect "self-check clean" 0 'checked against each other, 0 findings' "$tmp/self.log"
sed "/$r3 Ring 02 :/s/2 -> 3 -> 0/0 -> 3 -> 2/" "$tmp/self.log" >"$tmp/self-ring.log"
expect "self-check ring" 1 'ring 02: rank 3 sends to rank 2' "$tmp/self-ring.log"
sed "/$r3 8 coll channels/s/8 coll/6 coll/" "$tmp/self.log" >"$tmp/self-count.log"
expect "self-check counts" 1 "rank 3's channel counts differ" "$tmp/self-count.log"
verify "$tmp/self.log" --emit "$tmp/partial.xml" >/dev/null
if [ "$(grep -c '<gpu ' "$tmp/partial.xml")" = 8 ] && [ "$(grep -c '<net ' "$tmp/partial.xml")" = 4 ] &&
    grep -q 'numaid="1"' "$tmp/partial.xml" && grep -q 'busid="0000:8a:00.0"><gpu dev="7"' "$tmp/partial.xml" &&
    "$bin" --no-env validate "$tmp/partial.xml" 2>&1 | grep -q 'partial file'; then ok
else bad "--emit: partial topology"; fi

echo "verify: $((n - fails)) of $n checks passed"
# 4. the conformance cases' own logs; each other version's that pass its ratchet, version from
# the log
if [ -d "$shared/conformance/cases" ]; then
    sh "$here/cases.sh" "$bin" "$shared/conformance/cases" | tail -n 20 || fails=$((fails + 1))
fi
for version in 2.27.5 2.30.7; do
    [ -d "$shared/conformance/nccl-$version/cases" ] || continue
    sh "$here/cases.sh" "$bin" "$shared/conformance/nccl-$version/cases" $version \
        "$here/../conformance-pass-$version.txt" | tail -n 20 || fails=$((fails + 1))
done
[ $fails -eq 0 ]
