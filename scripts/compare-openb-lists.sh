#!/usr/bin/env bash
# Runs the FGD paper's protocol on every openb pod list in data/alibaba-gpu-v2023 with two
# policies and prints, per list, both means of the GPU allocation at 130% arrived demand
# and the paired difference (same seeds, so the same sampled pods) with its standard error.
#
#   scripts/compare-openb-lists.sh [SEEDS] [POLICY_A] [POLICY_B]    (default 42-51 fgd gantry)
#
# Needs build/gantry (make build). About 1 s per run; 24 lists x 2 policies x 10 seeds
# take ~4 minutes on 2 cores. Outputs go to out/compare-lists/LIST/.
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-42-51}
a=${2:-fgd}
b=${3:-gantry}
gantry=build/gantry
[[ -x $gantry ]] || { echo "compare-openb-lists: $gantry not built (run make build)" >&2; exit 1; }
data=data/alibaba-gpu-v2023
out=out/compare-lists
for workload in "$data"/openb_pod_list_*.csv; do
  list=$(basename "$workload" .csv)
  list=${list#openb_pod_list_}
  "$gantry" sim --cluster "$data/openb_node_list_gpu_node.csv" --workload "$workload" \
    --protocol fgd-atc23 --policy "$a,$b" --seeds "$seeds" --out "$out/$list" >/dev/null
done
python3 - "$out" "$a" "$b" <<'EOF'
import json, math, os, sys
out, a, b = sys.argv[1:4]
print(f"{'list':12s} {a:>9s} {b:>9s} {'diff':>8s} {'se':>6s}")
below = 0
for lst in sorted(os.listdir(out)):
    runs = json.load(open(os.path.join(out, lst, "summary.json")))["runs"]
    by = {p: {r["seed"]: r["alloc_pct"]["130"] for r in runs if r["policy"] == p} for p in (a, b)}
    seeds = sorted(by[a])
    d = [by[b][s] - by[a][s] for s in seeds]
    mean = lambda xs: sum(xs) / len(xs)
    se = math.sqrt(sum((x - mean(d)) ** 2 for x in d) / (len(d) - 1) / len(d)) if len(d) > 1 else 0
    flag = "  below" if mean(d) < 0 else ""
    below += mean(d) < 0
    print(f"{lst:12s} {mean([by[a][s] for s in seeds]):9.3f} {mean([by[b][s] for s in seeds]):9.3f} "
          f"{mean(d):+8.3f} {se:6.3f}{flag}")
print(f"{b} below {a} on {below} of {len(os.listdir(out))} lists")
EOF
