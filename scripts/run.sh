#!/usr/bin/env bash
# The main job: sets up and builds, then runs the float64 CPU reference (token-loop oracle
# and chunked form) over a named shape set and prints a summary per problem.
# Usage: scripts/run.sh [--shapes NAME|PATH] [--backward] [more gdn_reference_demo options]
# (default: --shapes smoke). `build/gdn_reference_demo --help` lists the options.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
args=("$@")
has_shapes=0
for arg in "$@"; do [[ $arg == --shapes || $arg == --shapes=* ]] && has_shapes=1; done
[[ $has_shapes -eq 1 ]] || args=(--shapes smoke "${args[@]}")
exec "./${GDN_BUILD_DIR:-build}/gdn_reference_demo" "${args[@]}"
