#!/usr/bin/env bash
# Minimizes a crashing input and keeps it as a regression case of its harness:
#   tests/fuzz/keep_crash.sh BUILD_DIR NAME CRASH_FILE WHAT_IT_TRIGGERS
# e.g. tests/fuzz/keep_crash.sh build-fuzz yaml_json build-fuzz/fuzz/yaml_json/crashes/crash-1a2b \
#        invalid-utf8-label
# writes tests/fuzz/NAME/regressions/WHAT_IT_TRIGGERS and prints the report it gives.
set -euo pipefail
build=$1 name=$2 crash=$3 what=$4
here="$(cd "$(dirname "$0")" && pwd)"
binary="$build/tests/fuzz/fuzz_$name"
out="$here/$name/regressions/$what"
mkdir -p "$(dirname "$out")"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1"
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ]; then
  for s in /usr/lib/llvm-16/bin/llvm-symbolizer "$(command -v llvm-symbolizer || true)"; do
    if [ -x "$s" ]; then export ASAN_SYMBOLIZER_PATH=$s; break; fi
  done
fi
# The timeout and memory limits of a regression run (a slow or greedy input must still fail).
"$binary" -minimize_crash=1 -max_total_time="${MINIMIZE_SECONDS:-60}" -timeout=10 \
  -rss_limit_mb=2048 -exact_artifact_path="$out" "$crash" >/dev/null 2>&1 || true
[ -f "$out" ] || cp "$crash" "$out"
echo "kept $out ($(wc -c <"$out") bytes, from $(wc -c <"$crash")):"
"$binary" -timeout=10 -rss_limit_mb=2048 "$out" 2>&1 |
  grep -E 'FUZZ CHECK|^  |ERROR|SUMMARY|runtime error|^ +#[0-9]+ ' | grep -v 'in fuzzer::\|libc\.so\|__sanitizer\|__asan\|__ubsan\|nptl\|raise\|abort stdlib\|fuzz::Fail' | head -16 || true
