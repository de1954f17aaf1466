#!/usr/bin/env bash
# scripts/check-sizes.py can fail: small trees with one fault each must be refused with the
# finding that names it, and a clean tree accepted.
#   tests/layering/check_sizes_test.sh SOURCE_DIR
set -euo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
# The checker with one known-large class, so that the cases below can test that list
# whatever the real one holds (it may be empty): its KNOWN_LARGE line replaced in a copy.
checker="$work/check-sizes.py"
sed 's|^KNOWN_LARGE = {|KNOWN_LARGE = {"model/cluster.h: ClusterState": "a test entry", |' \
  "$1/scripts/check-sizes.py" >"$checker"
if ! grep -q '"a test entry",' "$checker"; then
  echo "FAIL: no 'KNOWN_LARGE = {' line in scripts/check-sizes.py to put the test entry in"
  exit 1
fi

# lines N: N lines of code.
lines() { for ((i = 0; i < $1; i++)); do echo "int v$i = $i;"; done; }
# class NAME N: a class declared in N lines (its name, N-2 members, its closing brace).
class() {
  echo "class $1 {"
  for ((i = 0; i < $2 - 2; i++)); do echo "  int m$i;"; done
  echo "};"
}

# A clean tree: a file and a class at the limits, and the class the checker knows to be
# larger (KNOWN_LARGE).
clean() {
  rm -rf "$work/src"
  mkdir -p "$work/src/model" "$work/src/engine" "$work/src/daemon"
  lines 600 >"$work/src/engine/long.cc"
  class AtTheLimit 250 >"$work/src/engine/at_the_limit.h"
  class ClusterState 300 >"$work/src/model/cluster.h"
}

# expect NAME STATUS TEXT: the checker exits STATUS on $work/src and its output has TEXT.
expect() {
  local name="$1" status="$2" text="$3" out got=0
  out=$(python3 "$checker" "$work/src" 2>&1) || got=$?
  if [[ "$got" != "$status" ]] || ! grep -qF -- "$text" <<<"$out"; then
    echo "FAIL $name: exit $got (want $status), output:"
    echo "$out" | sed 's/^/    /'
    echo "    (wanted \"$text\")"
    failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
}

clean
expect clean 0 "files within 600 lines, classes within 250"

clean
echo "int one_more = 0;" >>"$work/src/engine/long.cc"
expect file-too-long 1 "src/engine/long.cc: 601 lines, over 600"

# Every folder is checked, the daemon's included (it was skipped while it was being split).
clean
{ lines 700; class Huge 400; } >"$work/src/daemon/huge.cc"
expect daemon-checked 1 "src/daemon/huge.cc: 1100 lines, over 600"

clean
class TooLong 251 >"$work/src/engine/too_long.h"
expect class-too-long 1 "src/engine/too_long.h:1: class TooLong is declared in 251 lines"

clean
{ echo "namespace x {"; echo "struct Nested {"; class Inner 260 | sed 's/^/  /'; echo "};"; echo "}"; } \
  >"$work/src/engine/nested.h"
expect nested-class-too-long 1 "src/engine/nested.h:3: class Inner is declared in 260 lines"

clean
# Braces in comments and strings do not close a class early.
{ echo "struct Quoted {"; echo '  // }; a comment'; echo '  const char* s = "};";'
  for ((i = 0; i < 250; i++)); do echo "  int m$i;"; done; echo "};"; } >"$work/src/engine/quoted.h"
expect braces-in-comments 1 "src/engine/quoted.h:1: class Quoted is declared in 254 lines"

clean
class ClusterState 200 >"$work/src/model/cluster.h"
expect known-large-now-small 1 "ClusterState is 200 lines now: take it out of KNOWN_LARGE"

clean
rm "$work/src/model/cluster.h"
expect known-large-gone 1 "KNOWN_LARGE names model/cluster.h: ClusterState, which is not there"

if ((failures > 0)); then
  echo "$failures case(s) failed"
  exit 1
fi
echo "all cases passed"
