#!/usr/bin/env bash
# Runs one libFuzzer harness for ctest (see CMakeLists.txt here).
#   run_fuzzer.sh fuzz        BINARY HARNESS_DIR WORK_DIR [libFuzzer options...]
#   run_fuzzer.sh regressions BINARY HARNESS_DIR WORK_DIR [libFuzzer options...]
# fuzz: fuzzes for $FUZZ_SECONDS (default 30; 0 skips) from HARNESS_DIR/corpus, HARNESS_DIR/regressions
# and WORK_DIR/corpus (where new inputs go, kept between runs); a crash is saved under
# WORK_DIR/crashes/ and fails the run. regressions: runs each file of HARNESS_DIR/corpus and
# HARNESS_DIR/regressions once.
set -euo pipefail
mode=$1 binary=$2 dir=$3 work=$4
shift 4
name=$(basename "$dir")
# Leaks count as findings, and UBSan stops at the first report.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1"
# Stacks with function names and lines: the symbolizer of the compiler's version if there.
for s in /usr/lib/llvm-16/bin/llvm-symbolizer "$(command -v llvm-symbolizer || true)"; do
  if [ -x "$s" ]; then export ASAN_SYMBOLIZER_PATH="${ASAN_SYMBOLIZER_PATH:-$s}"; break; fi
done
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1:halt_on_error=1"

inputs=()
for sub in corpus regressions; do
  if [ -d "$dir/$sub" ]; then
    while IFS= read -r -d '' f; do inputs+=("$f"); done < <(find "$dir/$sub" -type f -print0 | sort -z)
  fi
done

case "$mode" in
  regressions)
    if [ ${#inputs[@]} -eq 0 ]; then
      echo "fuzz $name: no seeds or regressions"
      exit 0
    fi
    # Given files, libFuzzer runs each once and exits non-zero on the first failure.
    mkdir -p "$work"
    log="$work/regressions.log"
    set +e
    "$binary" "$@" "${inputs[@]}" >"$log" 2>&1
    status=$?
    set -e
    if [ "$status" -ne 0 ]; then
      grep -v '^Executed ' "$log" | tail -n 80
      # Which of them fail (libFuzzer stops at the first).
      failing=()
      for f in "${inputs[@]}"; do
        "$binary" "$@" "$f" >/dev/null 2>&1 || failing+=("$f")
      done
      echo "fuzz $name: FAILED (exit $status): ${#failing[@]} of ${#inputs[@]} inputs fail:"
      printf '  %s\n' "${failing[@]}"
      exit 1
    fi
    echo "fuzz $name: ${#inputs[@]} seeds and regressions ok"
    ;;
  fuzz)
    seconds=${FUZZ_SECONDS:-30}
    if ! [ "$seconds" -gt 0 ] 2>/dev/null; then
      # libFuzzer takes 0 as "forever"; here it means no fuzzing (the regressions still run).
      echo "fuzz $name: skipped (FUZZ_SECONDS=$seconds)"
      exit 0
    fi
    mkdir -p "$work/corpus" "$work/crashes"
    seeds=()
    for sub in corpus regressions; do [ -d "$dir/$sub" ] && seeds+=("$dir/$sub"); done
    log="$work/last-run.log"
    set +e
    "$binary" "$@" -max_total_time="$seconds" -print_final_stats=1 \
      -artifact_prefix="$work/crashes/" "$work/corpus" "${seeds[@]}" >"$log" 2>&1
    status=$?
    set -e
    if [ "$status" -ne 0 ]; then
      # The report: the sanitizer's or the check's message and the stack.
      grep -v '^#[0-9]*\s*\(NEW\|REDUCE\|pulse\|INITED\|RELOAD\)' "$log" | tail -n 80
      echo
      echo "fuzz $name: FAILED (exit $status); the input is in $work/crashes/:"
      ls -1 "$work/crashes/" | sed 's/^/  /'
      echo "Keep it as a regression case: cp $work/crashes/FILE $dir/regressions/WHAT_IT_TRIGGERS"
      echo "Reproduce: $binary $work/crashes/FILE"
      exit 1
    fi
    grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$log" | tr '\n' ' ' |
      sed "s/^/fuzz $name: ${seconds}s ok, /"
    echo "($(find "$work/corpus" -type f | wc -l) inputs in $work/corpus)"
    ;;
  *)
    echo "usage: $0 fuzz|regressions BINARY HARNESS_DIR WORK_DIR [options]" >&2
    exit 2
    ;;
esac
