#!/usr/bin/env bash
# The dra-oracle command line as a C++ test will call it: built (or taken from the cache) by
# scripts/dra/build-oracle.sh, generate is byte-identical for one seed and different for
# another, check answers the hand-written cases in testdata/, and bad input fails with a
# message naming it.
#
#   tests/dra/oracle/oracle_cli_test.sh [ORACLE]   # ORACLE: a built binary (default: build one)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ORACLE=${1:-$("$HERE/../../../scripts/dra/build-oracle.sh")}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$ORACLE" generate --seed 5 --cases 40 --out "$TMP/a.jsonl" 2>"$TMP/a.err"
"$ORACLE" generate --seed 5 --cases 40 >"$TMP/b.jsonl" 2>/dev/null
"$ORACLE" generate --seed 6 --cases 40 >"$TMP/c.jsonl" 2>/dev/null
cmp -s "$TMP/a.jsonl" "$TMP/b.jsonl" || fail "seed 5 twice: outputs differ"
! cmp -s "$TMP/a.jsonl" "$TMP/c.jsonl" || fail "seeds 5 and 6: same output"
grep -q '^seed 5: 40 cases, .* allocatable (' "$TMP/a.err" || fail "no summary on stderr: $(cat "$TMP/a.err")"
lines=$(wc -l <"$TMP/a.jsonl")
[ "$lines" -ge 80 ] || fail "40 cases of 2-3 nodes gave $lines verdict lines"

# check reads generate's lines back and answers the same.
"$ORACLE" check "$TMP/a.jsonl" >"$TMP/a.check"
cmp -s "$TMP/a.jsonl" "$TMP/a.check" || fail "check of generated cases differs from generate"

# The hand-written partitions: two 3g partitions fit one GPU's counters, three do not.
"$ORACLE" check "$HERE/testdata/partitions.json" >"$TMP/p.jsonl"
verdicts=$(sed -n 's/.*"node":"\([^"]*\)".*"allocatable":\(true\|false\).*/\1=\2/p' "$TMP/p.jsonl" | tr '\n' ' ')
[ "$verdicts" = "node-0=true node-0=false node-1=false " ] || fail "partitions.json: got $verdicts"

# Bad input: a clear error naming the file, exit status 1.
echo '{"objects":{"nodes":[]},"bogus":1}' >"$TMP/bad.json"
if "$ORACLE" check "$TMP/bad.json" >/dev/null 2>"$TMP/bad.err"; then fail "bad.json accepted"; fi
grep -q 'bad.json: case #0' "$TMP/bad.err" || fail "bad.json: unclear error: $(cat "$TMP/bad.err")"
echo "dra-oracle command line: ok"
