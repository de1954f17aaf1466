#!/usr/bin/env bash
# Runs gantry on an invalid input file and checks that it is rejected the way the file's
# first line says: "# expect-error: REGEX" (an extended regex that the error message must
# match). Exit status 2 and no crash are required too.
#
#   check_invalid.sh GANTRY FILE                 # gantry schedule --scenario FILE
#   check_invalid.sh GANTRY FILE SUBCOMMAND...   # gantry SUBCOMMAND... FILE (e.g. validate)
set -u
gantry="$1"
file="$2"
shift 2
if [ $# -eq 0 ]; then
  set -- schedule --scenario
fi
want=$(sed -n '1s/^# expect-error: //p' "$file")
if [ -z "$want" ]; then
  echo "$file: first line must be '# expect-error: REGEX'" >&2
  exit 1
fi
err=$("$gantry" "$@" "$file" 2>&1 >/dev/null)
rc=$?
if [ "$rc" -ne 2 ]; then
  echo "$file: expected exit status 2, got $rc; stderr: $err" >&2
  exit 1
fi
if ! printf '%s' "$err" | grep -Eq -- "$want"; then
  echo "$file: error does not match /$want/:" >&2
  echo "$err" >&2
  exit 1
fi
echo "rejected as expected: $err"
