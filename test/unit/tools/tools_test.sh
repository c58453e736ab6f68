#!/bin/sh
# tools_test.sh - llc_info and llc_memmodel as installed programs (run by make check
# from the build directory).
set -u
tools=${LLC_TOOLS_DIR:-src/llc/tools}  # run-all points it at $prefix/bin
fail=0
check() { # description, command status
    if [ "$2" -eq 0 ]; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi
}

out=$($tools/llc_info) ; check "llc_info runs" $?
for v in LLC_SHM_RING_BYTES LLC_TCP_ADDR LLC_MEM_REPORT LLC_MAX_CONTEXTS; do
    echo "$out" | grep -q "^  $v " ; check "llc_info lists $v" $?
done
for t in self shm tcp; do
    echo "$out" | grep -q "^  $t .*caps=0x" ; check "llc_info lists transport $t" $?
done
LLC_MAX_CONTEXTS=77 $tools/llc_info --env | grep -q '^  LLC_MAX_CONTEXTS  *77 ' ; check "llc_info shows the current value" $?
# the collectives' variables (libllccoll's table), in their own section
coll() { sed -n '/^collectives (libllccoll)/,$p' ; }
echo "$out" | grep -q '^collectives (libllccoll)' ; check "llc_info has the collectives section" $?
out=$(env -u LLC_BCAST_INTERVAL -u LLC_ALLTOALL_PRUNE -u LLC_ALLTOALL_NATIVE $tools/llc_info)
for vd in LLC_BCAST_INTERVAL:1 LLC_ALLTOALL_PRUNE:2 LLC_ALLTOALL_NATIVE:1; do
    v=${vd%:*} d=${vd#*:}
    echo "$out" | coll | grep -q "^  $v  *(unset)  *default $d " ; check "llc_info lists $v, default $d" $?
done
n=$(echo "$out" | coll | grep -c '^  LLC_\(BCAST\|ALLTOALL\|MODEL\|COLL\)')
[ "$n" -ge 40 ] ; check "llc_info lists the collectives' variables ($n)" $?
env=$(LLC_BCAST_INTERVAL=16 LLC_ALLTOALL_PRUNE=1.5 $tools/llc_info --env)
echo "$env" | coll | grep -q '^  LLC_BCAST_INTERVAL  *16  *default 1 ' ; check "llc_info shows LLC_BCAST_INTERVAL=16" $?
echo "$env" | coll | grep -q '^  LLC_ALLTOALL_PRUNE  *1.5  *default 2 ' ; check "llc_info shows LLC_ALLTOALL_PRUNE=1.5" $?
$tools/llc_info --transports | grep -q '^collectives' ; [ $? -ne 0 ] ; check "llc_info --transports prints no environment" $?
$tools/llc_info --sizes | grep -q 'tcp OutConn' ; check "llc_info --sizes" $?
$tools/llc_info --sizes | grep -q 'udp Peer (per peer talked to)' ; check "llc_info --sizes lists the udp peer" $?
$tools/llc_info --bogus >/dev/null 2>&1 ; [ $? -eq 2 ] ; check "llc_info refuses an unknown option" $?
# doc/settings.md and doc/counters.md are generated from the settings tables
# and the counter table (src/llc/core/counters.def): fail while either is
# stale (regenerate with maint/update-settings-doc).  srcdir: set by
# automake's harness.
for what in settings counters ; do
    doc=${srcdir:-.}/doc/$what.md
    if [ -f "$doc" ] ; then
        $tools/llc_info --$what-markdown | diff -u "$doc" - >/dev/null ; check "doc/$what.md is up to date (maint/update-settings-doc)" $?
    else
        echo "skip: $doc not found (srcdir unset?)"
    fi
done
$tools/llc_info --settings-markdown | grep -q '^| `LLC_NET` | net | `tcp` | tcp, udp, hybrid or verbs | ' ; check "llc_info --settings-markdown lists allowed values" $?
$tools/llc_info --counters-markdown | grep -q '^| `llc_tagged_eager_sends` | counter | tagged | ' ; check "llc_info --counters-markdown lists the counters" $?
[ "$($tools/llc_info --counters-markdown | grep -c '^| `llc_')" -ge 50 ] ; check "llc_info --counters-markdown: at least 50 counters" $?

# The verbs section: libibverbs in the build, RDMA devices, what LLC_NET=verbs does.
verbs() { sed -n '/^verbs (RDMA/,/^  LLC_NET=verbs:/p' ; }
out=$(env -u LLC_VERBS_FALLBACK -u LLC_NET -u LLC_HYBRID $tools/llc_info)
echo "$out" | grep -q '^verbs (RDMA through rdma-core; DC data path when built with mlx5dv, never run on hardware):$' ; check "llc_info has the verbs section" $?
echo "$out" | verbs | grep -q '^  built with libibverbs: \(yes\|no\), mlx5dv: \(yes\|no\), verbs data path: \(yes\|no\)$' ; check "llc_info says whether libibverbs, mlx5dv and the verbs data path are built in" $?
if [ -e /sys/class/infiniband ] ; then
    echo "$out" | verbs | grep -q '^  devices: ' ; check "llc_info lists the RDMA devices" $?
else
    # no RDMA in this kernel: no device, and the reason
    echo "$out" | verbs | grep -q '^  devices: none (\(ibv_get_device_list failed: .*\|no RDMA devices .*\|built without libibverbs\))$' ; check "llc_info: no RDMA device, with the reason" $?
    echo "$out" | verbs | grep -q '^  LLC_NET=verbs: falls back to tcp (LLC_VERBS_FALLBACK=tcp): ' ; check "llc_info: LLC_NET=verbs falls back to tcp by default" $?
    LLC_VERBS_FALLBACK=udp $tools/llc_info --verbs | grep -q '^  LLC_NET=verbs: falls back to udp (LLC_VERBS_FALLBACK=udp): ' ; check "llc_info: LLC_VERBS_FALLBACK=udp" $?
    LLC_VERBS_FALLBACK=hybrid $tools/llc_info --verbs | grep -q '^  LLC_NET=verbs: falls back to hybrid ' ; check "llc_info: LLC_VERBS_FALLBACK=hybrid" $?
    LLC_VERBS_FALLBACK=none $tools/llc_info --verbs | grep -q '^  LLC_NET=verbs: llc_init fails (.*LLC_VERBS_FALLBACK=none' ; check "llc_info: LLC_VERBS_FALLBACK=none fails llc_init" $?
fi
LLC_VERBS_FALLBACK=sometimes $tools/llc_info --verbs | grep -q '^  LLC_NET=verbs: unknown: the environment is not valid: .*LLC_VERBS_FALLBACK="sometimes"' ; check "llc_info: an invalid LLC_VERBS_FALLBACK is named" $?
v=$($tools/llc_info --verbs) ; check "llc_info --verbs runs" $?
echo "$v" | grep -q '^transports built' ; [ $? -ne 0 ] ; check "llc_info --verbs prints only the verbs section" $?
echo "$v" | grep -q '^verbs (RDMA' ; check "llc_info --verbs prints the verbs section" $?
echo "$out" | grep -q '^  LLC_VERBS_FALLBACK  *(unset)  *default tcp ' ; check "llc_info lists LLC_VERBS_FALLBACK" $?
$tools/llc_info --help | grep -q -- '--verbs' ; check "llc_info --help mentions --verbs" $?

# The paper's totals at 2^20 nodes (m=4, c=10, gamma=1024, errata applied).
row=$($tools/llc_memmodel --csv --min-log2 20 --max-log2 20 --no-breakdown | sed -n 2p)
check "llc_memmodel --csv" $?
$tools/llc_memmodel --csv --min-log2 20 --max-log2 20 --no-breakdown | sed -n 1p | grep -q ',llc_udp,llc_hybrid$' ; check "llc_memmodel --csv has the udp and hybrid columns" $?
base=$(echo "$row" | cut -d, -f4) ; design=$(echo "$row" | cut -d, -f5)
[ "$(awk "BEGIN { printf \"%.2f\", $base / 1e12 }")" = 1.74 ] ; check "paper baseline 1.74 TB ($base)" $?
[ "$(awk "BEGIN { printf \"%.2f\", $design / 1e9 }")" = 1.07 ] ; check "paper design 1.07 GB ($design)" $?
hybrid=$(echo "$row" | cut -d, -f9)
awk "BEGIN { exit !($hybrid > 0 && $hybrid <= 1.07e9) }" ; check "llc hybrid model at 2^20 nodes within 1.07 GB ($hybrid)" $?
n=$($tools/llc_memmodel --min-log2 10 --max-log2 22 --no-breakdown | grep -c '^2^')
[ "$n" -eq 13 ] ; check "llc_memmodel prints 2^10 .. 2^22 ($n rows)" $?
$tools/llc_memmodel -m 8 -c 4 -g 512 --breakdown 12 | grep -q 'llc_capped at 2^12 nodes' ; check "llc_memmodel options" $?
$tools/llc_memmodel --udp-mtu 8192 --breakdown 12 | grep -q 'llc_udp at 2^12 nodes' ; check "llc_memmodel --udp-mtu" $?
$tools/llc_memmodel -m >/dev/null 2>&1 ; [ $? -eq 2 ] ; check "llc_memmodel refuses a missing value" $?
exit $fail
