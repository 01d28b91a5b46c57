#!/bin/bash
# CUDA compiler launcher (CMake option GDN_FAIL_ON_WGMMA_SERIALIZATION): runs the compile
# command given as arguments, passes its messages on, and fails the compile (removing the
# object it wrote) when ptxas reports that it serialised wgmma: C7510 (wgmma pipeline crossing
# a function boundary or a device assert) or C7511 (insufficient register resources for the
# wgmma pipeline), or that it injected a wait or an arrive: C7517 (registers a wgmma defines
# read before a wait_group covers it) or C7519 (registers a wgmma reads written after the
# fence). ptxas reports them as "info" and the compile otherwise succeeds: with C7510/C7511
# every wgmma of the kernel waits for the one before it, which made the column-warp loop 30 %
# slower without a failing test (docs/decisions/lower-packed-t-and-p.md); with C7517 the work
# meant to run beside a product waits for it (the wgmma chain's dS update beside K dS' did).
set -u
messages=$(mktemp)
trap 'rm -f "$messages"' EXIT
"$@" 2>"$messages"
rc=$?
cat "$messages" >&2
if grep -qE '\(C75(10|11|17|19)\)' "$messages"; then
  # The object named after -o: removed so that the next build compiles it again.
  prev=""
  for arg in "$@"; do
    [[ $prev == "-o" ]] && rm -f -- "$arg"
    prev=$arg
  done
  echo "error: ptxas serialised wgmma instructions (see its C7510/C7511/C7517/C7519 message above); fix the" \
       "kernel, or configure with -DGDN_FAIL_ON_WGMMA_SERIALIZATION=OFF to build it anyway" >&2
  exit 1
fi
exit $rc
