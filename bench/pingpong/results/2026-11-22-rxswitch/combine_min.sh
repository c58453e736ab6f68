#!/usr/bin/env bash
# combine_min.sh - best-of-all-runs latency per size for llc (tcp), the
# receiver-driven and the sender-driven hybrid, over the raw files of the
# runs in this directory (., run2, run3, run4), and their ratios to tcp.
set -euo pipefail
cd "$(dirname "$0")"
min_of() { # variant -> "size min_latency" lines
    cat raw/"$1"-inter-r*.txt run*/raw/"$1"-inter-r*.txt | grep -v '^#' |
        awk '{ if (!($1 in m) || $2 < m[$1]) m[$1] = $2; n[$1]++ } END { for (s in m) print s, m[s], n[s] }' | sort -n
}
join <(min_of llc) <(min_of llc-hybrid-receiver) | join - <(min_of llc-hybrid-sender) |
    awk 'BEGIN { print "| size | runs | tcp us | receiver us | sender us | receiver/tcp | sender/tcp |"; print "|---:|---:|---:|---:|---:|---:|---:|" }
         { printf "| %s | %d | %.2f | %.2f | %.2f | %.2f | %.2f |\n", $1, $3, $2, $4, $6, $4 / $2, $6 / $2 }'
