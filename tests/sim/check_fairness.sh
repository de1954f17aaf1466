#!/usr/bin/env bash
# ctest scenario.sim.fairness: `gantry sim` end to end on issue 12's three-queue workload
# (weights 1:2:1, demand ~1.8x capacity, reclaim) and on a queue tree: it must exit 0, find
# no eviction loop, and keep each flat queue's steady share within 5% of its deserved share.
# Usage: check_fairness.sh GANTRY SOURCE_DIR
set -euo pipefail
gantry=$1 src=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$gantry" sim --generate nodes=16,pods=3000,rate=0.1,duration=600,queues=q0:1/q1:2/q2:1,seed=42 \
  --actions enqueue,reclaim,allocate,backfill --policy gantry --out "$out/flat" >"$out/flat.txt"
cat "$out/flat.txt"
grep -q 'loops 0,' "$out/flat.txt" || { echo "FAIL: eviction loops found"; exit 1; }
# The queue lines: NAME SHARE DESERVED STEADY_SHARE STEADY_DESERVED ERR% ...
awk '$1 ~ /^q[0-9]$/ { n++; e = $6 < 0 ? -$6 : $6; if (e > 5) { print "FAIL: " $1 " steady share off its deserved share by " $6 "%"; bad = 1 } }
     END { if (n != 3) { print "FAIL: expected 3 queue lines, got " n; exit 1 } exit bad }' "$out/flat.txt"
"$gantry" sim --generate nodes=8,pods=1500,rate=0.1,duration=300,queues=train:1/infer:1/research:1,seed=7 \
  --queues "$src/tests/sim/queue-tree.yaml" --policy gantry --out "$out/tree" >"$out/tree.txt"
cat "$out/tree.txt"
grep -q 'loops 0,' "$out/tree.txt" || { echo "FAIL: eviction loops found (tree)"; exit 1; }
for f in summary.json queues.csv evictions.csv report.html; do
  [[ -s "$out/tree/$f" ]] || { echo "FAIL: $f not written"; exit 1; }
done
grep -q 'Queues and fairness' "$out/tree/report.html" || { echo "FAIL: no fairness section"; exit 1; }
echo PASS
