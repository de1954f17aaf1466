#!/usr/bin/env bash
# Runs `gantry schedule` on a valid scenario whose expectations must NOT be met, and checks
# that it fails the way the file's first line says: "# expect-unmet: REGEX" (an extended
# regex that one of the unmet-expectation lines must match). Exit status 1 is required:
# 0 would mean the checker let it pass, 2 that the file was refused before it ran.
#
#   check_unmet.sh GANTRY FILE
set -u
gantry="$1"
file="$2"
want=$(sed -n '1s/^# expect-unmet: //p' "$file")
if [ -z "$want" ]; then
  echo "$file: first line must be '# expect-unmet: REGEX'" >&2
  exit 1
fi
err=$("$gantry" schedule --scenario "$file" 2>&1 >/dev/null)
rc=$?
if [ "$rc" -ne 1 ]; then
  echo "$file: expected exit status 1 (expectations not met), got $rc; stderr: $err" >&2
  exit 1
fi
if ! printf '%s\n' "$err" | grep '^  - ' | grep -Eq -- "$want"; then
  echo "$file: no unmet expectation matches /$want/:" >&2
  echo "$err" >&2
  exit 1
fi
echo "unmet as expected: $err"
