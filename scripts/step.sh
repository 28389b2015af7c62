#!/usr/bin/env bash
# step.sh LOG NAME COMMAND...: runs one step of `make test`, prints a banner
# before it, and appends "PASS NAME (Ns)" or "FAIL NAME (exit N, Ns)" to LOG.
# It always exits 0, so that make goes on to the next step and every module's
# tests run even when one fails; summary.sh reads LOG at the end and decides.
set -uo pipefail
log=$1 name=$2
shift 2
printf '\n=== step %s: %s\n' "$name" "$*"
start=$SECONDS
"$@"
code=$?
took=$((SECONDS - start))
if [ "$code" = 0 ]; then
  printf 'PASS  %-22s %4ds\n' "$name" "$took" >>"$log"
else
  printf 'FAIL  %-22s %4ds  (exit %d)\n' "$name" "$took" "$code" >>"$log"
  printf '=== step %s FAILED (exit %d); going on with the other steps\n' "$name" "$code"
fi
exit 0
