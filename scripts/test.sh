#!/usr/bin/env bash
# Sets up, builds, and runs the whole test suite with ctest. GPU tests report "skipped"
# without a CUDA device. Extra arguments go to ctest (e.g. -L cpu, -R Validate).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cd "${GDN_BUILD_DIR:-build}"
ctest --output-on-failure -j "${GDN_JOBS:-$(nproc)}" "$@"
