#!/usr/bin/env bash
# ctest scenario.sim.topology: `gantry sim` end to end on issue 13's synthetic cluster
# (tests/sim/topology-cluster.yaml: 256 nodes of 8 GPUs, 4 spines of 4 racks) with gangs of
# four 8-GPU pods: without a topology request they span several racks; with a required rack
# every gang is inside one; with a preferred rack most are.
# Usage: check_topology.sh GANTRY SOURCE_DIR
set -euo pipefail
gantry=$1 src=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
rack=topology.gantry.dev/rack
run() {  # run NAME [GENERATE_SUFFIX]
  "$gantry" sim --cluster "$src/tests/sim/topology-cluster.yaml" \
    --generate "pods=4000,rate=0.05,duration=3600,mix=40/20/35/5,seed=42$2" \
    --policy gantry --seeds 42 --out "$out/$1" >"$out/$1.txt"
  cat "$out/$1.txt"
}
# The rack line: "gangs gantry seed 42: RACK: N gangs, MEAN domains each on average (max M), P% inside one"
field() { grep "seed 42: $rack:" "$out/$1.txt" | sed -E "s/.*gangs, ([0-9.]+) domains.*, ([0-9.]+)% inside one/\\$2/"; }
run off ""
run required ",gangtopology=required:$rack"
run preferred ",gangtopology=preferred:$rack"
awk -v off="$(field off 1)" -v req="$(field required 2)" -v pref="$(field preferred 2)" 'BEGIN {
  if (off < 2) { print "FAIL: without topology gangs span " off " racks on average (expected 2 or more)"; exit 1 }
  if (req != 100) { print "FAIL: with a required rack " req "% of gangs are inside one (expected 100)"; exit 1 }
  if (pref < 80) { print "FAIL: with a preferred rack " pref "% of gangs are inside one (expected 80 or more)"; exit 1 }
}'
grep -q '"gang_spans"' "$out/required/summary.json" || { echo "FAIL: no gang_spans in summary.json"; exit 1; }
grep -q 'Topology: domains per gang' "$out/required/report.html" ||
  { echo "FAIL: no topology section in report.html"; exit 1; }
echo PASS
