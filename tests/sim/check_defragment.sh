#!/usr/bin/env bash
# ctest scenario.sim.defragment: `gantry sim` end to end on issue 13's defragmentation
# experiment (`make defragment`), one seed: openb's pods with departures, arrivals 1000x as
# dense, on every 4th openb GPU node, pods with a share of one GPU movable. With the
# defragment action the idle GPUs waiting whole-GPU jobs could not use (GPU-hours over the
# run) fall to at most three quarters of what they are without it, the action evicts, and
# no eviction closes a loop.
# Usage: check_defragment.sh GANTRY SOURCE_DIR
set -euo pipefail
gantry=$1 src=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
trace=$src/data/alibaba-gpu-v2023
awk -F, 'NR == 1 || NR % 4 == 2' "$trace/openb_node_list_gpu_node.csv" >"$out/nodes.csv"
run() {  # run NAME ACTIONS
  "$gantry" sim --cluster "$out/nodes.csv" --workload "$trace/openb_pod_list_default.csv" \
    --time-scale 1000 --movable shared --defragment-budget 60 --actions "$2" \
    --policy gantry --seeds 42 --out "$out/$1" >"$out/$1.txt"
  cat "$out/$1.txt"
}
run without enqueue,allocate,backfill
run with enqueue,allocate,backfill,defragment
# "idle gantry seed 42: ... (H GPU-hours over the run); M movable tasks, E defragment evictions, ..."
hours() { grep "^idle gantry seed 42:" "$out/$1.txt" | sed -E 's/.*\(([0-9.]+) GPU-hours over the run\).*/\1/'; }
evictions() { grep "^idle gantry seed 42:" "$out/$1.txt" | sed -E 's/.* ([0-9]+) defragment evictions.*/\1/'; }
loops=$(grep -o '"eviction_loops": [0-9]*' "$out/with/summary.json" | grep -o '[0-9]*$')
awk -v without="$(hours without)" -v with="$(hours with)" -v ev="$(evictions with)" \
    -v ev0="$(evictions without)" -v loops="$loops" 'BEGIN {
  if (without <= 0) { print "FAIL: no unusable idle GPUs without defragment (" without ")"; exit 1 }
  if (with > 0.75 * without) { print "FAIL: unusable idle GPU-hours " with " with defragment, " without " without"; exit 1 }
  if (ev <= 0 || ev0 != 0) { print "FAIL: defragment evictions " ev " with, " ev0 " without"; exit 1 }
  if (loops != 0) { print "FAIL: " loops " eviction loops"; exit 1 }
}'
grep -q '"idle_unusable_gpu_hours"' "$out/with/summary.json" ||
  { echo "FAIL: no idle_unusable_gpu_hours in summary.json"; exit 1; }
grep -q 'Defragmentation: idle GPUs that could not be used' "$out/with/report.html" ||
  { echo "FAIL: no defragmentation section in report.html"; exit 1; }
echo PASS
