#!/usr/bin/env bash
# ctest scenario.sim.datasets: `gantry sim --datasets` end to end (issue 13, dataset
# locality): 50 nodes of 8 GPUs, 2,000 generated pods, 80% of the jobs reading one of 30
# datasets (Zipf popularity, 10Gi-1Ti, filled at 1 GiB/s, 4 TiB of cache per node). With
# the datalocality plugin more reads find their data cached and less warm-up is paid than
# in the same run without it; summary.json and report.html say so.
# Usage: check_datasets.sh GANTRY
set -euo pipefail
gantry=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$gantry" sim --generate nodes=50,pods=2000,rate=0.1,duration=1800,seed=42 \
  --datasets count=30,share=80,cache=4Ti,seed=7 --policy gantry --seeds 42 --jobs 1 \
  --out "$out/run" >"$out/run.txt"
cat "$out/run.txt"
# "datasets gantry seed 42: N task runs read data: H% hits (...), warm-up W s; without
#  datalocality H0% hits, warm-up W0 s: locality saved S s (P%)"
line=$(grep '^datasets gantry seed 42:' "$out/run.txt")
hits=$(sed -E 's/.*read data: ([0-9.]+)% hits.*/\1/' <<<"$line")
hits0=$(sed -E 's/.*without datalocality ([0-9.]+)% hits.*/\1/' <<<"$line")
saved=$(sed -E 's/.*locality saved -?[0-9]+ s \(([-0-9.]+)%\).*/\1/' <<<"$line")
awk -v h="$hits" -v h0="$hits0" -v s="$saved" 'BEGIN {
  if (h <= h0 + 5) { print "FAIL: hits " h "% with locality, " h0 "% without (expected 5 points more)"; exit 1 }
  if (s < 20) { print "FAIL: locality saved " s "% of the warm-up (expected 20% or more)"; exit 1 }
}'
grep -q '"warmup_saved_s"' "$out/run/summary.json" || { echo "FAIL: no warmup_saved_s in summary.json"; exit 1; }
grep -q 'Dataset locality: warm-up paid and saved' "$out/run/report.html" ||
  { echo "FAIL: no dataset locality section in report.html"; exit 1; }
echo PASS
