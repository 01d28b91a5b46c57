#!/usr/bin/env bash
# The main job: sets up and builds, then runs a quick gdnlab sweep of the compiled kernel
# variants over a named shape set on the local GPU into an SQLite file and ends with a report.
# Without a usable CUDA device it says so and runs the same sweep pipeline as a replay of the
# bundled database recorded on the H200 (tests/data/smoke_h200.sqlite).
#
# Usage: scripts/run.sh [--shapes NAME|PATH] [--db PATH] [more `gdnlab sweep` options]
#   defaults: --shapes smoke, --db results/run-<UTC time>.sqlite
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
build=${GDN_BUILD_DIR:-build}
gdnlab="./$build/gdnlab"
bundled=tests/data/smoke_h200.sqlite

shapes=smoke
db=""
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --shapes) shapes=${2:?--shapes needs a value}; shift 2 ;;
    --shapes=*) shapes=${1#--shapes=}; shift ;;
    --db) db=${2:?--db needs a value}; shift 2 ;;
    --db=*) db=${1#--db=}; shift ;;
    *) extra+=("$1"); shift ;;
  esac
done
mkdir -p results
[[ -n $db ]] || db="results/run-$(date -u +%Y%m%dT%H%M%SZ).sqlite"

if "$gdnlab" devices; then
  echo "[run] sweeping the compiled variants over shape set '$shapes' into $db"
  "$gdnlab" sweep --space default --shapes "$shapes" --db "$db" --metrics basic "${extra[@]}"
else
  echo "[run] no usable CUDA device here: replaying the bundled H200 database $bundled"
  "$gdnlab" sweep --replay "$bundled" --shapes "$shapes" --db "$db" "${extra[@]}"
fi
echo "[run] report of $db"
"$gdnlab" report --db "$db" --format table
