#!/usr/bin/env bash
# Installs what the build needs and configures + builds it into build/ (Ninja). Idempotent:
# installs only missing Debian packages, only PyPI pins not already satisfied, and lets Ninja
# rebuild only what changed.
#
# Usage: scripts/setup.sh [--no-build]
#   --no-build        install dependencies only
# Environment:
#   GDN_BUILD_DIR     build folder (default: build)
#   GDN_CMAKE_ARGS    extra configure arguments, e.g. "-DGDN_WITH_GUI=OFF -DGDN_VARIANTS=all"
#   GDN_JOBS          parallel build jobs (default: all cores)
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages (versions pinned by the distribution release).
readonly DEBIAN_PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libgtest-dev libcli11-dev libsqlite3-dev nlohmann-json3-dev libfmt-dev
  libimgui-dev libglfw3-dev libgl1-mesa-dri xvfb xauth
  python3 python3-venv xz-utils
  slurmctld slurmd slurm-client munge
)
# PyPI packages, one name==version per line, when the project needs any.
readonly PYPI_REQUIREMENTS=scripts/requirements.txt

build=1
for arg in "$@"; do
  case "$arg" in
    --no-build) build=0 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown argument '$arg' (expected --no-build or --help)" >&2; exit 2 ;;
  esac
done

log() { printf '[setup] %s\n' "$*"; }

as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else echo "setup.sh: '$*' needs root (or sudo)" >&2; exit 1
  fi
}

install_debian_packages() {
  local missing=()
  for pkg in "${DEBIAN_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$pkg")
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    log "Debian packages: all ${#DEBIAN_PACKAGES[@]} present"
    return
  fi
  log "Debian packages: installing ${missing[*]}"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends \
    "${missing[@]}"
}

install_pypi_packages() {
  [[ -f $PYPI_REQUIREMENTS ]] || { log "PyPI packages: none required"; return; }
  local unmet=()
  while IFS= read -r line; do
    line=${line%%#*}
    line=${line//[[:space:]]/}
    [[ -z $line ]] && continue
    if [[ $line != *==* ]]; then
      echo "setup.sh: $PYPI_REQUIREMENTS: '$line' is not pinned (expected name==version)" >&2
      exit 1
    fi
    local name=${line%%==*} version=${line##*==}
    local installed
    # pip show exits 1 for a package that is not installed: that is the case to install.
    installed=$(python3 -m pip show "$name" 2>/dev/null | sed -n 's/^Version: //p' || true)
    [[ $installed == "$version" ]] || unmet+=("$line")
  done <"$PYPI_REQUIREMENTS"
  if [[ ${#unmet[@]} -eq 0 ]]; then
    log "PyPI packages: all pins satisfied"
    return
  fi
  log "PyPI packages: installing ${unmet[*]}"
  python3 -m pip install --disable-pip-version-check --no-input -q "${unmet[@]}"
}

# The CUDA 13 toolkit is part of the machine image (Debian's packages are older); say so
# plainly when it is missing instead of failing inside CMake.
find_nvcc() {
  if command -v nvcc >/dev/null; then return; fi
  if [[ -x /usr/local/cuda/bin/nvcc ]]; then
    export PATH="/usr/local/cuda/bin:$PATH"
    return
  fi
  echo "setup.sh: nvcc (CUDA 13 toolkit) not found on PATH or in /usr/local/cuda/bin" >&2
  exit 1
}

configure_and_build() {
  local dir=${GDN_BUILD_DIR:-build}
  local jobs=${GDN_JOBS:-$(nproc)}
  # shellcheck disable=SC2206  # GDN_CMAKE_ARGS is a list of arguments on purpose
  local extra=(${GDN_CMAKE_ARGS:-})
  log "configure: $dir (Ninja) ${extra[*]}"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${extra[@]}" >/dev/null
  log "build: $jobs jobs"
  cmake --build "$dir" -j "$jobs"
}

install_debian_packages
install_pypi_packages
find_nvcc
if [[ $build -eq 1 ]]; then configure_and_build; fi
log "done"
