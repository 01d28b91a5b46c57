#!/usr/bin/env bash
# Sets up, builds, and runs the whole test suite with ctest. GPU tests report "skipped"
# without a CUDA device. Extra arguments go to ctest (e.g. -L cpu, -R Validate).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cd "${GDN_BUILD_DIR:-build}"
# Say up front what will not run here, so a green run without a GPU is not mistaken for one
# that exercised the kernels.
if ! ./gdnlab devices > /dev/null 2>&1; then
  gpu_tests=$(ctest -N -L gpu | sed -n 's/^Total Tests: //p')
  echo "skipped: no CUDA device: the ${gpu_tests:-0} GPU tests (ctest label gpu) report Skipped"
fi
ctest --output-on-failure -j "${GDN_JOBS:-$(nproc)}" "$@"
