#!/usr/bin/env bash
# summary.sh LOG: prints the PASS/FAIL line of every step step.sh ran, and
# exits 1 if any failed (or if no step ran at all), 0 otherwise.
set -uo pipefail
log=$1
printf '\n=== summary\n'
if [ ! -s "$log" ]; then
  echo "no step ran"
  exit 1
fi
cat "$log"
failed=$(grep -c '^FAIL' "$log")
rm -f "$log"
if [ "$failed" != 0 ]; then
  printf '%d step(s) failed; scroll up to "=== step NAME" for each one'"'"'s output\n' "$failed"
  exit 1
fi
echo "all steps passed"
