#!/usr/bin/env bash
# Downloads, on the development machine, the wheels the H200 needs for scripts/bench_peers.py
# into .whl/ (git-ignored). The GPU machine has no network and runs Python 3.12 with torch
# 2.11 + triton 3.6, so only pure-Python or cp312 manylinux x86_64 wheels are fetched, without
# their dependencies (those the image already has). scripts/gpu_check.sh installs them
# offline into /tmp/site.
#
# Usage: scripts/fetch_wheels.sh [--with-flashqla]
#   --with-flashqla  also try flash-qla + tilelang (FlashQLA live); skipped with a message when
#                    no cp312 manylinux wheel exists or the total exceeds the wheel budget.
set -euo pipefail
cd "$(dirname "$0")/.."

readonly WHEEL_DIR=.whl
readonly FLA_SPEC="flash-linear-attention==0.5.0"
# The wheels travel with a packed build (scripts/gpu_check.sh --pack) to a machine without
# network: keep them small.
readonly WHEEL_BUDGET_BYTES=$((40 * 1024 * 1024))

with_flashqla=0
for arg in "$@"; do
  case "$arg" in
    --with-flashqla) with_flashqla=1 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "fetch_wheels.sh: unknown argument '$arg' (expected --with-flashqla or --help)" >&2; exit 2 ;;
  esac
done

mkdir -p "$WHEEL_DIR"
grep -qxF '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude

# The target interpreter is the GPU machine's, not this one's.
pip_download() {
  python3 -m pip download -q --no-deps --only-binary=:all: \
    --python-version 3.12 --implementation cp --abi cp312 --abi abi3 --abi none \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform manylinux_2_34_x86_64 --platform manylinux_2_35_x86_64 \
    --platform manylinux_2_31_x86_64 --platform manylinux_2_24_x86_64 \
    --platform manylinux1_x86_64 --platform any \
    -d "$WHEEL_DIR" "$@"
}

pip_download "$FLA_SPEC"
# FLA 0.5.0 ships its kernels in a separate package (fla-core); fetch it when the wheel needs it.
if unzip -p "$WHEEL_DIR"/flash_linear_attention-0.5.0-*.whl '*/METADATA' | grep -q '^Requires-Dist: fla-core'; then
  core_spec=$(unzip -p "$WHEEL_DIR"/flash_linear_attention-0.5.0-*.whl '*/METADATA' \
              | sed -n 's/^Requires-Dist: \(fla-core[^;]*\).*/\1/p' | head -1 | tr -d ' ')
  pip_download "$core_spec"
fi

# The FLA backend's GPU test (tests/python/test_fla_backend_gpu.py) needs fla-core >= 0.6: kept
# in its own folder, apart from the benchmark's FLA, at the versions scripts/requirements.txt pins.
mapfile -t fla_backend_pins < <(grep -E '^(fla-core|einops|packaging)==' scripts/requirements.txt)
mkdir -p "$WHEEL_DIR/fla-backend"
pip_download -d "$WHEEL_DIR/fla-backend" "${fla_backend_pins[@]}"

if [[ $with_flashqla == 1 ]]; then
  tmp=$(mktemp -d)
  if pip_download -d "$tmp" flash-qla tilelang 2>"$tmp/err"; then
    extra=$(du -cb "$tmp"/*.whl | tail -1 | cut -f1)
    have=$(du -cb "$WHEEL_DIR"/*.whl | tail -1 | cut -f1)
    if (( extra + have <= WHEEL_BUDGET_BYTES )); then
      mv "$tmp"/*.whl "$WHEEL_DIR"/
    else
      echo "flash-qla + tilelang need $((extra / 1048576)) MiB: over the wheel budget; FlashQLA stays published-only"
    fi
  else
    echo "flash-qla/tilelang: no cp312 manylinux x86_64 wheel found; FlashQLA stays published-only"
    sed 's/^/  /' "$tmp/err" | tail -3
  fi
  rm -rf "$tmp"
fi

echo "wheels in $WHEEL_DIR:"
for w in "$WHEEL_DIR"/*.whl; do
  printf '  %8.1f KiB  %s\n' "$(( $(stat -c %s "$w") * 10 / 1024 ))e-1" "$w"
done
du -sh "$WHEEL_DIR"
