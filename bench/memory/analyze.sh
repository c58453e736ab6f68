#!/usr/bin/env bash
# bench/memory/analyze.sh DIR [NOTRAFFIC_DIR] - tables from one run.sh output
# directory: the per-size means of summary.md, the least-squares slope over
# all job sizes (growth per added peer, B/peer) per MPI, the ratios llc/MPICH
# and llc/Open MPI, and libllc's count by component with its least-squares
# slope.  NOTRAFFIC_DIR (optional) is a run of the same configuration with
# mem_bench -peers 0 (run.sh --peers 0: no application traffic); its libllc
# count, printed by llc_finalize, stands in for the count after MPI_Init,
# which libllc does not print earlier.
set -euo pipefail
D=$1 N=${2:-}
# rows: mpi np hosts rss_init rss_after anon_after shmem_after llc_after
rows() { awk -F'|' '/^$/ { exit } NR > 2 && $3 ~ /^ *[0-9]+ *$/ { gsub(/ /, ""); print $2, $3, $4, $5, $6, $7, $8, $9 }' "$1/summary.md"; }
# mean over ranks of libllc's total at finalize, per np
llc_total() { sed -n 's/^llc mem rank [0-9]*: total *\([0-9]*\) B.*/\1/p' "$1" | awk '{s += $1; n++} END {if (n) printf "%.0f", s / n; else print "-"}'; }
declare -A NT
if [ -n "$N" ]; then
    for f in "$N"/llc-np*.txt; do
        np=${f##*-np}; np=${np%.txt}
        NT[$np]=$(llc_total "$f")
    done
fi
echo "| MPI | procs | hosts | RSS init [kB] | RSS after [kB] | private after [kB] | shared after [kB] | libllc count, no traffic [B] | libllc count after [B] |"
echo "|---|---|---|---|---|---|---|---|---|"
rows "$D" | while read -r m np h ri ra an sh l; do
    nt=-; [ "$m" = llc ] && nt=${NT[$np]:--}
    echo "| $m | $np | $h | $ri | $ra | $an | $sh | $nt | $l |"
done
echo
echo "Growth per added peer: least-squares slope over the job sizes [B/peer] (kB x 1024):"
echo
{
    rows "$D"
    if [ -n "$N" ]; then for np in "${!NT[@]}"; do echo "llcNT $np - - - - - ${NT[$np]}"; done; fi
} | awk '
    function slope(m, k,   i, sx, sy, sxx, sxy, n, x, y) {
        n = cnt[m]; if (n < 2) return "-"
        for (i = 1; i <= n; i++) { x = X[m, i]; y = V[m, k, i]; if (y == "-" || y == "") return "-"; sx += x; sy += y; sxx += x * x; sxy += x * y }
        return (n * sxy - sx * sy) / (n * sxx - sx * sx)
    }
    $1 == "llcNT" { i = ++cnt["llcNT"]; X["llcNT", i] = $2; V["llcNT", 8, i] = $8; next }
    { m = $1; if (!(m in cnt)) order[++nm] = m; i = ++cnt[m]; X[m, i] = $2; for (k = 4; k <= 8; k++) V[m, k, i] = $k; A[m, $2] = $5; P[m, $2] = $6; lo[m] = (lo[m] == "" || $2 < lo[m]) ? $2 : lo[m]; hi[m] = $2 > hi[m] ? $2 : hi[m] }
    END {
        print "| MPI | procs (sizes) | RSS init [B/peer] | RSS after [B/peer] | private after [B/peer] | shared after [B/peer] | libllc count after [B/peer] | libllc count, no traffic [B/peer] |"
        print "|---|---|---|---|---|---|---|---|"
        for (j = 1; j <= nm; j++) {
            m = order[j]
            for (k = 4; k <= 7; k++) { s[m, k] = slope(m, k); s[m, k] = s[m, k] == "-" ? "-" : s[m, k] * 1024 }
            s[m, 8] = slope(m, 8)
            nt = (m == "llc" && cnt["llcNT"] > 1) ? sprintf("%.0f", slope("llcNT", 8)) : "-"
            printf "| %s | %d -> %d (%d) | %.0f | %.0f | %.0f | %.0f | %s | %s |\n", m, lo[m], hi[m], cnt[m], s[m, 4], s[m, 5], s[m, 6], s[m, 7], s[m, 8] == "-" ? "-" : sprintf("%.0f", s[m, 8]), nt
        }
        print ""
        print "| ratio of slopes | RSS init | RSS after | private after |"
        print "|---|---|---|---|"
        for (j = 1; j <= nm; j++) {
            o = order[j]; if (o == "llc") continue
            printf "| llc / %s |", o
            for (k = 4; k <= 6; k++) printf " %s |", s[o, k] != 0 ? sprintf("%.3f", s["llc", k] / s[o, k]) : "-"
            printf "\n"
        }
        print ""
        print "| absolute, per process, after traffic | procs | RSS llc / other | private llc / other |"
        print "|---|---|---|---|"
        for (j = 1; j <= nm; j++) {
            o = order[j]; if (o == "llc") continue
            n = hi[o] < hi["llc"] ? hi[o] : hi["llc"]
            if ((o SUBSEP n) in A && ("llc" SUBSEP n) in A) printf "| llc / %s | %d | %.3f | %.3f |\n", o, n, A["llc", n] / A[o, n], P["llc", n] / P[o, n]
        }
    }'
echo
echo "libllc count by component, mean over ranks at finalize, and least-squares slope over the job sizes ([shared] rows are not in the total):"
echo
files=$(ls "$D"/llc-np*.txt | sort -V)
awk '
    FNR == 1 { f++; np = FILENAME; sub(/.*-np/, "", np); sub(/\.txt$/, "", np); X[f] = np + 0 }
    /^llc mem rank [0-9]+: / && $5 != "note:" {
        c = $5; v[f, c] += $6; k[f, c]++
        if (!(c in seen)) { seen[c] = 1; order[++nc] = c }
        if (index($0, "[shared")) sh[c] = 1
    }
    END {
        printf "| component |"; for (i = 1; i <= f; i++) printf " np=%d [B] |", X[i]; printf " slope [B/peer] |\n"
        printf "|---|"; for (i = 1; i <= f; i++) printf "---|"; printf "---|\n"
        for (j = 1; j <= nc; j++) {
            c = order[j]; sx = sy = sxx = sxy = 0
            printf "| %s%s |", c, sh[c] ? " (shared)" : ""
            for (i = 1; i <= f; i++) { y = k[i, c] ? v[i, c] / k[i, c] : 0; printf " %.0f |", y; sx += X[i]; sy += y; sxx += X[i] * X[i]; sxy += X[i] * y }
            b = (f * sxy - sx * sy) / (f * sxx - sx * sx)
            printf " %.1f |\n", b
            if (c != "total" && b > 0.05) { grow += b; growl = growl sprintf("%s%s %.1f", growl == "" ? "" : ", ", c, b) }
        }
        printf "\nComponents with a positive slope (shared ones included): %.1f B/peer in all (%s).\n", grow, growl
    }' $files
