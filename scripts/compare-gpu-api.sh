#!/usr/bin/env bash
# Runs the FGD paper's protocol on openb pod lists with `--gpu-api device-plugin` and with
# `--gpu-api dra` (issue 29: GPUs as DRA devices, requests as ResourceClaims) and checks
# that each policy's run allocates the same under both: the pods that failed and every
# percent point of the allocation and fragmentation curves, seed by seed. Prints one line
# per list and policy (allocation at 130% arrived demand, failed pods, wall time of each)
# and exits 1 on any difference.
#
#   scripts/compare-gpu-api.sh [SEEDS] [POLICIES] [LIST...]
#     defaults: 42, random,dotprod,gpuclustering,gpupacking,bestfit,fgd,gantry, every list
#
# Needs build/gantry (or $GANTRY) built with DRA's CEL library (GANTRY_DRA_CEL=ON). A DRA
# run takes 1-6 s on openb's 1213 nodes, about 3.5 times a device-plugin run: every list
# and policy with one seed is about 7 minutes on one core. Outputs go to
# out/compare-gpu-api/LIST/{device-plugin,dra}/.
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-42}
policies=${2:-random,dotprod,gpuclustering,gpupacking,bestfit,fgd,gantry}
shift $(($# < 2 ? $# : 2))
gantry=${GANTRY:-build/gantry}
[[ -x $gantry ]] || { echo "compare-gpu-api: $gantry not built (run make build)" >&2; exit 1; }
data=data/alibaba-gpu-v2023
out=out/compare-gpu-api
lists=("$@")
if [[ ${#lists[@]} -eq 0 ]]; then
  for workload in "$data"/openb_pod_list_*.csv; do
    list=$(basename "$workload" .csv)
    lists+=("${list#openb_pod_list_}")
  done
fi
for list in "${lists[@]}"; do
  for api in device-plugin dra; do
    "$gantry" sim --cluster "$data/openb_node_list_gpu_node.csv" \
      --workload "$data/openb_pod_list_$list.csv" --protocol fgd-atc23 --gpu-api "$api" \
      --policy "$policies" --seeds "$seeds" --jobs 1 --out "$out/$list/$api" >/dev/null
  done
done
python3 - "$out" "${lists[@]}" <<'PY'
import json, os, sys
out, lists = sys.argv[1], sys.argv[2:]
print(f"{'list':12s} {'policy':14s} {'seed':>5s} {'alloc130 dp':>11s} {'alloc130 dra':>12s} "
      f"{'failed dp':>9s} {'failed dra':>10s} {'wall dp':>8s} {'wall dra':>8s}  same")
differ = 0
for lst in lists:
    runs = {api: {(r["policy"], r["seed"]): r for r in
                  json.load(open(os.path.join(out, lst, api, "summary.json")))["runs"]}
            for api in ("device-plugin", "dra")}
    for key, dp in sorted(runs["device-plugin"].items()):
        dra = runs["dra"][key]
        same = all(dp[k] == dra[k] for k in ("alloc_pct", "frag_pct", "pods", "failed_pods"))
        differ += not same
        print(f"{lst:12s} {key[0]:14s} {key[1]:5d} {dp['alloc_pct']['130']:11.3f} "
              f"{dra['alloc_pct']['130']:12.3f} {dp['failed_pods']:9d} {dra['failed_pods']:10d} "
              f"{dp['wall_s']:8.1f} {dra['wall_s']:8.1f}  {'yes' if same else 'NO'}")
print("all runs equal" if differ == 0 else f"{differ} runs differ")
sys.exit(1 if differ else 0)
PY
