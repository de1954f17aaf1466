#!/usr/bin/env bash
# Whether a change to the engine changed any scheduling decision: runs `gantry sim` for
# every policy the binary knows on fixed inputs (the FGD paper's protocol on three openb pod
# lists, and time-driven replays of the shipped trace, of a generated workload with gangs,
# shared GPUs and four queues, and of a job CSV with priorities, partial gangs and GPU
# models), and compares each summary.json and timeseries.csv with an earlier run's.
#
#   scripts/compare-decisions.sh GANTRY OUT [--compare-to DIR]   run into OUT (and compare)
#   scripts/compare-decisions.sh --diff DIR OUT                  only compare two earlier runs
#
# Typical use: build the "before" and run `scripts/compare-decisions.sh build/gantry
# /tmp/before`; change the code, rebuild, run `scripts/compare-decisions.sh build/gantry
# /tmp/after --compare-to /tmp/before`. Exit 0 and "identical: N summaries" when every
# output matches; exit 1 with a unified diff per difference (a file on one side only is a
# difference too). Compared after removing what measures the machine rather than the
# decisions: each run's wall_s; the input paths are compared by file name only. Rerunning
# into OUT replaces what an earlier run left there. About 2 minutes on 2 cores (JOBS=N sets
# `gantry sim --jobs`, default 2).
set -euo pipefail

usage() {
  sed -n '8,9p' "$0" | sed 's/^#  */usage: /' >&2
  exit 2
}

compare() {  # compare BEFORE AFTER: prints diffs, exits 1 on any
  python3 - "$1" "$2" <<'EOF'
import difflib, json, os, sys

before, after = sys.argv[1:3]

def outputs(root):
    found = set()
    for d, _, files in os.walk(root):
        for f in files:
            if f in ("summary.json", "timeseries.csv"):
                found.add(os.path.relpath(os.path.join(d, f), root))
    return found

def decisions(path):
    """The file's text without what measures the machine."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if not path.endswith(".json"):
        return text.splitlines(keepends=True)
    summary = json.loads(text)
    for key in ("cluster", "workload"):
        if isinstance(summary.get(key), str):
            summary[key] = os.path.basename(summary[key])
    for run in summary.get("runs", []):
        run.pop("wall_s", None)
    return (json.dumps(summary, indent=2) + "\n").splitlines(keepends=True)

a, b = outputs(before), outputs(after)
if not a:
    sys.exit(f"compare-decisions: no summary.json under {before}")
differences = 0
for rel in sorted(a | b):
    if rel not in b or rel not in a:
        side = after if rel not in b else before
        print(f"compare-decisions: {rel} is missing from {side}")
        differences += 1
        continue
    x, y = decisions(os.path.join(before, rel)), decisions(os.path.join(after, rel))
    if x != y:
        sys.stdout.writelines(difflib.unified_diff(
            x, y, os.path.join(before, rel), os.path.join(after, rel), n=2))
        differences += 1
summaries = sum(1 for rel in a | b if rel.endswith("summary.json"))
if differences:
    print(f"different: {differences} of {len(a | b)} files ({summaries} summaries and their "
          f"timeseries.csv)")
    sys.exit(1)
print(f"identical: {summaries} summaries (and their timeseries.csv)")
EOF
}

if [[ ${1:-} == --diff ]]; then
  [[ $# -eq 3 && -d $2 && -d $3 ]] || usage
  compare "$2" "$3"
  exit
fi
[[ $# -eq 2 || ($# -eq 4 && $3 == --compare-to) ]] || usage
[[ -x $1 ]] || { echo "compare-decisions: $1 is not an executable" >&2; exit 2; }
gantry=$(realpath "$1")
out=$(realpath -m "$2")
baseline=
if [[ $# -eq 4 ]]; then
  [[ -d $4 ]] || { echo "compare-decisions: --compare-to $4: no such directory" >&2; exit 2; }
  baseline=$(realpath "$4")
  [[ $baseline != "$out" ]] || { echo "compare-decisions: OUT is the --compare-to directory" >&2; exit 2; }
fi
jobs=${JOBS:-2}
cd "$(dirname "$0")/.."  # the inputs are named relative to the repository
data=data/alibaba-gpu-v2023
nodes=$data/openb_node_list_gpu_node.csv

# Every policy the binary knows, from its own error message.
policies=$("$gantry" sim --cluster "$nodes" --workload "$data/openb_pod_list_default.csv" \
  --policy '?' --out /dev/null 2>&1 | sed -n 's/.*(known: \(.*\))$/\1/p' | tr -d ' ') || true
[[ -n $policies ]] || { echo "compare-decisions: cannot read the policies from $gantry" >&2; exit 2; }
echo "policies: $policies"

mkdir -p "$out/inputs"
# A job CSV the other inputs lack: priorities, partial gangs (min_member < pods), GPU
# models, fractions, three queues. Made by a fixed generator, so the same every time.
python3 - "$out/inputs/jobs.csv" <<'EOF'
import sys
state = 20231
def draw(n):
    global state
    state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
    return (state >> 33) % n
rows = ["name,submit_time,duration,pods,min_member,gpus_per_pod,gpu_fraction,cpu,memory,"
        "queue,priority,gpu_model"]
t = 0
for i in range(2500):
    t += draw(2)
    duration = 60 + draw(12000)
    pods, min_member, gpus, fraction, models = 1, 1, 1, "", ""
    cpu, memory = f"{4 + draw(12)}", f"{16 + 16 * draw(4)}Gi"
    kind = draw(10)
    if kind < 3:
        pass
    elif kind < 5:
        gpus, fraction = 0, ("0.1", "0.25", "0.5", "0.75", "0.333")[draw(5)]
    elif kind == 5:
        pods = min_member = 2 + draw(3)
        gpus = 8
    elif kind == 6:
        pods, min_member, gpus = 6, 2 + draw(4), 2
    elif kind == 7:
        models, gpus = ("V100M16|V100M32", "T4", "P100|T4")[draw(3)], 1 + draw(2)
    elif kind == 8:
        gpus, cpu = 4, "32"
    else:
        gpus = 0
    rows.append(f"job-{i},{t},{duration},{pods},{min_member},{gpus},{fraction},{cpu},{memory},"
                f"q{draw(3)},{draw(4)},{models}")
with open(sys.argv[1], "w") as f:
    f.write("\n".join(rows) + "\n")
EOF

# name | options. Seeds: three on the default list (the protocol's samples differ per seed),
# two or one elsewhere; every case runs every policy.
cases=(
  "protocol-default|--protocol fgd-atc23 --workload $data/openb_pod_list_default.csv --seeds 42-44"
  "protocol-gpushare100|--protocol fgd-atc23 --workload $data/openb_pod_list_gpushare100.csv --seeds 42"
  "protocol-multigpu50|--protocol fgd-atc23 --workload $data/openb_pod_list_multigpu50.csv --seeds 42"
  "replay-trace|--workload $data/openb_pod_list_default.csv --seeds 42-43"
  "replay-generated|--generate pods=6000,rate=2,duration=7200,mix=50/30/10/10 --seeds 42-43"
  "replay-generated-all-nodes|--generate pods=4000,rate=2,duration=7200,seed=7 --nodes-to-score 0 --period 30 --seeds 42"
  "replay-jobs|--workload $out/inputs/jobs.csv --seeds 42-43"
)
start=$SECONDS
for entry in "${cases[@]}"; do
  name=${entry%%|*}
  read -r -a options <<<"${entry#*|}"
  rm -rf "${out:?}/$name"
  mkdir -p "$out/$name"
  for policy in ${policies//,/ }; do
    dir=$out/$name/$policy
    if ! "$gantry" sim --cluster "$nodes" "${options[@]}" --policy "$policy" --jobs "$jobs" \
      --out "$dir" >"$dir.log" 2>&1; then
      echo "compare-decisions: $name $policy failed:" >&2
      cat "$dir.log" >&2
      exit 2
    fi
    rm -f "$dir.log" "$dir/report.html"  # the report shows wall times; it adds no decision
  done
  echo "ran $name ($((SECONDS - start)) s)"
done
echo "outputs: $out"
[[ -z $baseline ]] || compare "$baseline" "$out"
