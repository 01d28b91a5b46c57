#!/usr/bin/env bash
# Downloads, on the development machine, the wheels the H200 needs for scripts/bench_peers.py
# into .whl/ (git-ignored). The GPU machine has no network and runs Python 3.12 with torch
# 2.11 + triton 3.6, so only pure-Python or cp312 manylinux x86_64 wheels are fetched, without
# their dependencies (those the image already has). scripts/gpu_check.sh installs FLA's
# offline into /tmp/site.
#
# Usage: scripts/fetch_wheels.sh [--with-flashqla] [--with-flashinfer] [--max-load-mib N]
#   --with-flashqla    also FlashQLA 0.1.3's wheels (flash-qla, tilelang, apache-tvm-ffi,
#                      torch-c-dlpack-ext, z3-solver), for FlashQLA live
#   --with-flashinfer  also FlashInfer 0.7.2.post1's (flashinfer-python, the CuTe DSL's
#                      nvidia-cutlass-dsl with its libs-base, libs-core and libs-cu13 parts,
#                      apache-tvm-ffi), for FlashInfer live
#   --max-load-mib N   largest load (default 50)
# These peer wheels (about 230 MiB for both) go to .whl/peers/ and are packed into loads,
# .whl/loads/load1 ... loadN, each to carry alone in one call to the GPU machine and install
# there with scripts/install_wheel_load.sh (docs/benchmarking.md, "Peers live on a machine
# without network"). Since the loads sit in .whl/, a call carries them by name, never .whl whole.
set -euo pipefail
cd "$(dirname "$0")/.."

readonly WHEEL_DIR=.whl
readonly PEER_DIR=$WHEEL_DIR/peers LOAD_DIR=$WHEEL_DIR/loads
# flash-qla 0.1.3 needs tilelang >= 0.1.12 (0.1.15, the newest), which needs apache-tvm-ffi
# < 0.1.13, torch-c-dlpack-ext and z3-solver < 4.15.5.
readonly FLASHQLA_PINS=(flash-qla==0.1.3 tilelang==0.1.15 apache-tvm-ffi==0.1.12
                        torch-c-dlpack-ext==0.1.5 z3-solver==4.15.4.0)
# flashinfer-python 0.7.2.post1 runs its GDN prefill on the CuTe DSL: nvidia-cutlass-dsl 4.8.1
# (the newest at its release) and its parts; of the toolkit flavours, cu13 is the one the DSL
# loads under a CUDA 13 driver. It allows apache-tvm-ffi >= 0.1.11, < 0.2: 0.1.12 is the one
# version that serves tilelang too (both run in one process).
readonly FLASHINFER_PINS=(flashinfer-python==0.7.2.post1 nvidia-cutlass-dsl==4.8.1
                          nvidia-cutlass-dsl-libs-base==4.8.1 nvidia-cutlass-dsl-libs-core==4.8.1
                          nvidia-cutlass-dsl-libs-cu13==4.8.1 apache-tvm-ffi==0.1.12)
# Requirements the GPU machine's image meets (its package list; torch 2.11, CUDA 13 wheels).
readonly DEVICE_HAS="torch triton numpy click einops ninja requests tabulate tqdm packaging
  nvidia-ml-py cuda-bindings cuda-core cuda-pathfinder typing-extensions cloudpickle ml-dtypes
  psutil protobuf"
# Requirements of flashinfer-python's metadata that importing flashinfer, flashinfer.gdn_prefill
# and its SM90 kernel modules (plain and CP) does not need: checked by importing them with only
# these wheels and the image's packages on the path. cuda-python is a meta-package of
# cuda-bindings, cuda-core and cuda-pathfinder (on the image); libs-cu12 is the CUDA 12 flavour.
readonly NOT_NEEDED="cuda-python cuda-tile nccl4py nccl-extensions nvidia-cudnn-frontend
  nvidia-cutlass-dsl-libs-cu12"

with_flashqla=0 with_flashinfer=0 max_load_mib=50
while (($#)); do
  case "$1" in
    --with-flashqla) with_flashqla=1 ;;
    --with-flashinfer) with_flashinfer=1 ;;
    --max-load-mib) max_load_mib=${2:?--max-load-mib needs a size in MiB}; shift ;;
    -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "fetch_wheels.sh: unknown argument '$1' (expected --with-flashqla," \
            "--with-flashinfer, --max-load-mib N or --help)" >&2; exit 2 ;;
  esac
  shift
done

mkdir -p "$WHEEL_DIR"
# .gitignore has /.whl/ already; a checkout of an older .gitignore gets it in its own excludes
# (in a worktree, .git is a file: git names the excludes' path).
if ! git check-ignore -q "$WHEEL_DIR" 2>/dev/null && exclude=$(git rev-parse --git-path info/exclude 2>/dev/null); then
  mkdir -p "$(dirname "$exclude")" && echo '/.whl/' >> "$exclude"
fi

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

# FLA for the benchmark and the FLA backend's GPU test (tests/python/test_fla_backend_gpu.py):
# fla-core (its kernels, without the models package) at the version scripts/requirements.txt
# pins, with the two packages it imports, in .whl/ (what scripts/gpu_check.sh --wheels installs).
mapfile -t fla_pins < <(grep -E '^(fla-core|einops|packaging)==' scripts/requirements.txt)
pip_download "${fla_pins[@]}"

peer_pins=()
((with_flashqla)) && peer_pins+=("${FLASHQLA_PINS[@]}")
((with_flashinfer)) && peer_pins+=("${FLASHINFER_PINS[@]}")
if ((${#peer_pins[@]})); then
  mapfile -t peer_pins < <(printf '%s\n' "${peer_pins[@]}" | awk '!seen[$0]++')
  mkdir -p "$PEER_DIR"
  pip_download -d "$PEER_DIR" "${peer_pins[@]}"
  python3 scripts/wheel_loads.py pack --from "$PEER_DIR" --to "$LOAD_DIR" \
    --max-load-mib "$max_load_mib" --provided "$DEVICE_HAS" --not-needed "$NOT_NEEDED" \
    "${peer_pins[@]}"
fi

echo "wheels in $WHEEL_DIR:"
for w in "$WHEEL_DIR"/*.whl; do
  printf '  %8.1f KiB  %s\n' "$(( $(stat -c %s "$w") * 10 / 1024 ))e-1" "$w"
done
