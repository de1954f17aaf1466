#!/usr/bin/env bash
# ctest scenario.sim.snapshot: `gantry sim --snapshot` on tests/sim/snapshot-fragmented.yaml
# (see its comment): the running pods are the start, the waiting pod and the hour's arrivals
# the workload. gantry and fgd keep n3 whole and place every pod; random breaks n3 up and
# the 8-GPU pod never fits. 12 pods are replayed (1 waiting + 10 + 1 arriving).
# Usage: check_snapshot.sh GANTRY SOURCE_DIR
set -euo pipefail
gantry=$1 src=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$gantry" sim --snapshot "$src/tests/sim/snapshot-fragmented.yaml" --policy gantry,fgd,random \
  --out "$out/run" >"$out/run.txt"
cat "$out/run.txt"
# The table: POLICY RUNS GPU_ALLOC% JCT_MEAN_S WAIT_MEAN_S FAILED WALL_S
failed() { awk -v p="$1" '$1 == p && $2 == 1 { print $6 }' "$out/run.txt"; }
[[ "$(failed gantry)" == 0 ]] || { echo "FAIL: gantry left $(failed gantry) pods unplaced (expected 0)"; exit 1; }
[[ "$(failed fgd)" == 0 ]] || { echo "FAIL: fgd left $(failed fgd) pods unplaced (expected 0)"; exit 1; }
[[ "$(failed random)" == 1 ]] || { echo "FAIL: random left $(failed random) pods unplaced (expected 1: the 8-GPU pod)"; exit 1; }
[[ $(grep -c '"pods": 12,' "$out/run/summary.json") == 3 ]] ||
  { echo "FAIL: expected 12 pods replayed in each of the 3 runs"; exit 1; }
grep -q '"cluster": "snapshot: ' "$out/run/summary.json" || { echo "FAIL: summary does not name the snapshot"; exit 1; }
[[ -s "$out/run/report.html" ]] || { echo "FAIL: report.html not written"; exit 1; }
# The snapshot's own checks: the cluster it cannot be given with.
if "$gantry" sim --snapshot "$src/tests/sim/snapshot-fragmented.yaml" --cluster x.csv --out "$out/bad" 2>"$out/bad.txt"; then
  echo "FAIL: --snapshot with --cluster was accepted"; exit 1
fi
grep -q -- '--cluster cannot be given with --snapshot' "$out/bad.txt" || { cat "$out/bad.txt"; exit 1; }
echo PASS
