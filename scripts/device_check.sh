#!/usr/bin/env bash
# Everything the H200 should run, in one command: GPU tests, a smoke sweep, the peer benchmarks,
# and a resources log; full logs and CSVs go to OUTDIR, a short table is printed last.
#
# On the development machine, once (builds build-device/, copies a lean build to
# .carry/build-device without object files, fetches the wheels into .whl/):
#   scripts/device_check.sh --prepare
# On the GPU machine (device tool: carry [".carry/build-device", ".whl"], or build-device):
#   GDN_GIT_SHA=<sha> scripts/device_check.sh "$OUT" --stages tests,sweep,bench-fwd
#
# Options (GPU machine):
#   --stages LIST        comma-separated, in this order: resources,tests,sweep,tune,validate,
#                        bench-fwd,bench-bwd,bench-train (default: all but tune and validate).
#                        Split them over several calls to stay under 10 minutes. bench-train
#                        times a training step (forward + backward) on the backward rows.
#                        tune: the forward anchor sweep of the fused variants (tuning.sqlite) and
#                        its exported dispatch table (table/); validate: a second, independent
#                        sweep of the same shapes into the same database and the oracle gap of
#                        the table (gdnlab gap). Pass the database back with --tune-db.
#   --build-dir DIR      a build made elsewhere (default .carry/build-device, else build-device);
#                        without one, configure and build here (needs gtest, CLI11, SQLite headers).
#   --bench-budget-s N   bench_peers stops starting rows after N s (default 400); rerun the stage
#                        with --fwd-resume/--bwd-resume FILE (an earlier peers_*.csv) to finish.
#   --fwd-resume FILE, --bwd-resume FILE, --train-resume FILE   continue an earlier CSV
#                        instead of starting afresh.
#   --bench-args "..."   extra arguments for scripts/bench_peers.py (e.g. "--reps 50 --rows 2/8").
#   --tune-db FILE       the tuning.sqlite of an earlier call: tune continues its unfinished sweep
#                        (--resume: same build, same arguments); validate sweeps it again.
#   --sweep-gpus LIST    GPU ordinals of the tune and validate sweeps, one worker each (default 0);
#                        a resumed sweep may use other GPUs than it started on.
#   --sweep-metrics SET  CUPTI counters of the tune sweep: none | basic | full (default basic;
#                        none times only, about 5x faster).
# Outputs in OUTDIR (few files: the device tool returns at most 8): summary.txt, resources.txt,
# peers_fwd.csv, peers_bwd.csv, peers_train.csv, smoke_h200.sqlite, tuning.sqlite, table.tar.gz, gap.csv,
# logs.tar.gz, triton_autotune.tar.gz (FLA's
# Triton autotuning results: unpack into .carry/triton_cache to skip 30-110 s per head config).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
REPO=$PWD

usage() { sed -n '2,32p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "device_check: $*" >&2; exit 2; }

ALL_STAGES="resources,tests,sweep,tune,validate,bench-fwd,bench-bwd,bench-train"
stages="resources,tests,sweep,bench-fwd,bench-bwd,bench-train" build_dir="" bench_budget=400
fwd_resume="" bwd_resume="" train_resume="" bench_args="" tune_db="" sweep_gpus=0 sweep_metrics=basic
outdir="" prepare=0
while (($#)); do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --prepare) prepare=1 ;;
    --stages) stages=${2:?--stages needs a list}; shift ;;
    --build-dir) build_dir=${2:?--build-dir needs a folder}; shift ;;
    --bench-budget-s) bench_budget=${2:?--bench-budget-s needs seconds}; shift ;;
    --fwd-resume) fwd_resume=${2:?--fwd-resume needs a CSV}; shift ;;
    --bwd-resume) bwd_resume=${2:?--bwd-resume needs a CSV}; shift ;;
    --train-resume) train_resume=${2:?--train-resume needs a CSV}; shift ;;
    --bench-args) bench_args=${2?--bench-args needs a string}; shift ;;
    --tune-db) tune_db=${2:?--tune-db needs a database file}; shift ;;
    --sweep-gpus) sweep_gpus=${2:?--sweep-gpus needs a list such as 0,1}; shift ;;
    --sweep-metrics) sweep_metrics=${2:?--sweep-metrics needs none, basic or full}; shift ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) [[ -z $outdir ]] || die "one OUTDIR expected; got '$outdir' and '$1'"; outdir=$1 ;;
  esac
  shift
done

# ---- development machine: build and pack what the GPU machine needs ---------------------------
if ((prepare)); then
  cmake -S . -B build-device -G Ninja -DGDN_WITH_GUI=OFF -DCMAKE_BUILD_TYPE=Release || exit 1
  cmake --build build-device -j2 || exit 1
  rm -rf .carry/build-device && mkdir -p .carry
  grep -qxF '/.carry/' .git/info/exclude 2>/dev/null || echo '/.carry/' >> .git/info/exclude
  # Object files and static archives are not needed to run: leave them behind.
  cp -a build-device .carry/build-device || exit 1
  find .carry/build-device -type f \( -name '*.o' -o -name '*.a' \) -delete
  scripts/fetch_wheels.sh || exit 1
  du -sh .carry/build-device .whl
  echo "carry: [\".carry/build-device\", \".whl\"] (keep the total under 64 MiB with the sources)"
  exit 0
fi

[[ -n $outdir ]] || die "OUTDIR missing (see --help)"
for s in ${stages//,/ }; do
  [[ ",$ALL_STAGES," == *",$s,"* ]] || die "--stages: unknown stage '$s' (expected some of $ALL_STAGES)"
done
has_stage() { [[ ",$stages," == *",$1,"* ]]; }
mkdir -p "$outdir" || die "cannot create OUTDIR '$outdir'"
outdir=$(cd "$outdir" && pwd)
logs=$outdir/logs
mkdir -p "$logs"
summary=$outdir/summary.txt
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }

# A build made elsewhere holds absolute paths of that machine (CTest files, discovered gtest
# lists): make those paths resolve here, to this checkout and this build folder.
relocate_build() {
  local cache=$1/CMakeCache.txt src_orig bld_orig
  src_orig=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$cache")
  bld_orig=$(sed -n 's/^CMAKE_CACHEFILE_DIR:INTERNAL=//p' "$cache")
  if [[ -n $src_orig && ! -e $src_orig ]]; then
    mkdir -p "$(dirname "$src_orig")" && ln -s "$REPO" "$src_orig"
  elif [[ -n $src_orig && $(cd "$src_orig" && pwd -P) != $(pwd -P) ]]; then
    note "warning: the build's source folder $src_orig exists here and is not this checkout"
  fi
  if [[ -n $bld_orig && ! -e $bld_orig ]]; then
    ln -s "$(cd "$1" && pwd)" "$bld_orig"
  fi
}

if [[ -z $build_dir ]]; then
  for d in .carry/build-device build-device; do
    [[ -f $d/CMakeCache.txt ]] && { build_dir=$d; break; }
  done
fi
if [[ -n $build_dir && -f $build_dir/CMakeCache.txt ]]; then
  relocate_build "$build_dir"
  note "build: carried $build_dir"
else
  build_dir=${build_dir:-build-device}
  note "build: none carried; configuring and building $build_dir here"
  { cmake -S . -B "$build_dir" -G Ninja -DGDN_WITH_GUI=OFF -DCMAKE_BUILD_TYPE=Release &&
    cmake --build "$build_dir" -j16; } > "$logs/build.log" 2>&1 ||
    note "build: FAILED (logs/build.log): $(tail -3 "$logs/build.log" | tr '\n' ' ')"
fi
build_dir=$(cd "$build_dir" 2>/dev/null && pwd || echo "$REPO/$build_dir")
export GDN_LIBRARY=$build_dir/kernels/libgdn.so
[[ -f $GDN_LIBRARY ]] || note "warning: $GDN_LIBRARY missing: every 'ours' measurement will fail"

# Wheels brought along (FLA); the image has torch and triton.
export PYTHONPATH=$REPO/python
if compgen -G ".whl/*.whl" > /dev/null; then
  if python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
       --target /tmp/site .whl/*.whl > "$logs/pip.log" 2>&1; then
    export PYTHONPATH=$PYTHONPATH:/tmp/site
    # FLA's full package imports every model (and transformers) from fla/__init__.py; only fla.ops
    # is needed, so an __init__ that pulls models in is replaced by an empty one.
    if grep -q "models\|layers" /tmp/site/fla/__init__.py 2>/dev/null; then
      : > /tmp/site/fla/__init__.py
    fi
    note "wheels: installed $(cd .whl && printf '%s ' *.whl)"
  else
    note "wheels: pip install FAILED (logs/pip.log)"
  fi
else
  note "wheels: none in .whl/ (FLA will be missing)"
fi
export TRITON_CACHE_DIR=$REPO/.carry/triton_cache
# Triton >= 3.4 keeps autotuning results in its cache only when asked to.
export TRITON_CACHE_AUTOTUNING=1
mkdir -p "$TRITON_CACHE_DIR"
export PYTHONUNBUFFERED=1
# The commit of the build that runs: what its gdnlab recorded at build time (`gdnlab --version`:
# "gdnlab 0.1.0 (git <sha>, ...)"). The checkout's HEAD is only the fallback: a copied working
# tree can carry a stale .git (session 4 read an older HEAD than the carried build's).
if [[ -z ${GDN_GIT_SHA:-} && -x $build_dir/gdnlab ]]; then
  GDN_GIT_SHA=$("$build_dir/gdnlab" --version 2>/dev/null | sed -n 's/.*(git \([0-9a-f]\{7,\}\).*/\1/p')
fi
if [[ -z ${GDN_GIT_SHA:-} ]]; then
  GDN_GIT_SHA=$(git -C "$REPO" rev-parse --verify -q HEAD 2>/dev/null) ||
    GDN_GIT_SHA="unknown (no commit or no .git here; pass GDN_GIT_SHA)"
fi
export GDN_GIT_SHA
note "git SHA: $GDN_GIT_SHA"

run_stage() {  # name, command...: times it, logs it, records ok/FAILED in the summary
  local name=$1 t0 rc
  shift
  t0=$(date +%s)
  "$@" > "$logs/$name.log" 2>&1
  rc=$?
  note "stage $name: $([[ $rc == 0 ]] && echo ok || echo "FAILED (rc $rc)") in $(( $(date +%s) - t0 )) s"
  return $rc
}

resources() {
  local so=$GDN_LIBRARY
  echo "== nvidia-smi"; nvidia-smi
  echo "== clocks and performance"; nvidia-smi -q -d CLOCK,PERFORMANCE
  echo "== compute processes"; nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv
  echo "== cuobjdump --dump-resource-usage $so"; cuobjdump --dump-resource-usage "$so"
  echo "== SASS counts per kernel (HGMMA: wgmma; UTMALDG: TMA loads; LDL/STL: local memory)"
  cuobjdump --dump-sass "$so" | awk '
    /Function :/ { if (f) printf "%-90s %6d %7d %5d %5d\n", f, h, t, l, s; f = $3; h = t = l = s = 0 }
    /HGMMA/ { h++ } /UTMALDG/ { t++ } /[^A-Z]LDL[ .]/ { l++ } /[^A-Z]STL[ .]/ { s++ }
    BEGIN { printf "%-90s %6s %7s %5s %5s\n", "function", "HGMMA", "UTMALDG", "LDL", "STL" }
    END { if (f) printf "%-90s %6d %7d %5d %5d\n", f, h, t, l, s }'
}

gpu_tests() {
  # Correctness tests share the GPU in parallel (their time is mostly the float64 reference on
  # the CPU); the profiler's timing and counter tests (DeviceInfoGpu reads counter availability)
  # then run alone so nothing disturbs them.
  local timing='^(TimingGpu|RangeProfilerGpu|PmSamplingGpu|DeviceInfoGpu)'
  ctest --test-dir "$build_dir" -L gpu -E "$timing" -j 6 --output-on-failure --timeout 600 \
        --output-junit "$logs/ctest_gpu.xml"
  local rc=$?
  ctest --test-dir "$build_dir" -L gpu -R "$timing" --output-on-failure --timeout 300 \
        --output-junit "$logs/ctest_gpu_timing.xml" || rc=1
  return $rc
}

find_gdnlab() {
  find "$build_dir" -maxdepth 3 -type f -name gdnlab -perm -u+x 2>/dev/null | head -1
}

smoke_sweep() {
  local gdnlab
  gdnlab=$(find_gdnlab)
  [[ -n $gdnlab ]] || { echo "no gdnlab executable in $build_dir"; return 3; }
  rm -f "$outdir/smoke_h200.sqlite"
  "$gdnlab" sweep --space default --shapes smoke --db "$outdir/smoke_h200.sqlite" --metrics basic &&
    "$gdnlab" report --db "$outdir/smoke_h200.sqlite" --format table
}

# The anchor sweep behind the committed dispatch table: every fused forward variant on every
# forward anchor row, exhaustive, with a lighter protocol than the precise default (171 rows x
# 48 variants of a GDN_VARIANTS=all build = 8208 trials must fit in minutes): 3 warm-up calls,
# 10..40 samples to a 2% spread.
anchor_sweep() {  # database, metrics (basic: SM utilisation; none: timing only), [--resume]
  "$gdnlab" sweep --space default --shapes fwd_anchors --variants 'gdn_fwd_sm90_fused*' \
    --strategy exhaustive --metrics "$2" --no-progress --db "$1" ${3:+"$3"} --gpus "$sweep_gpus" \
    --warmup 3 --min-samples 10 --max-samples 40 --target-spread 0.02 --time-cap-ms 1000
}

tune() {
  gdnlab=$(find_gdnlab)
  [[ -n $gdnlab ]] || { echo "no gdnlab executable in $build_dir"; return 3; }
  local resume=""
  if [[ -n $tune_db ]]; then  # continue the unfinished tuning sweep of an earlier call
    [[ -f $tune_db ]] || { echo "--tune-db '$tune_db' not found"; return 2; }
    [[ $tune_db -ef $outdir/tuning.sqlite ]] || cp "$tune_db" "$outdir/tuning.sqlite"
    resume=--resume
  else
    rm -f "$outdir/tuning.sqlite"
  fi
  anchor_sweep "$outdir/tuning.sqlite" "$sweep_metrics" $resume || return 1
  "$gdnlab" report --db "$outdir/tuning.sqlite" --format table
  rm -rf "$outdir/table"
  "$gdnlab" export --db "$outdir/tuning.sqlite" --out "$outdir/table" || return 1
  tar -czf "$outdir/table.tar.gz" -C "$outdir" table && rm -rf "$outdir/table"
}

validate() {
  gdnlab=$(find_gdnlab)
  [[ -n $gdnlab ]] || { echo "no gdnlab executable in $build_dir"; return 3; }
  local db=${tune_db:-$outdir/tuning.sqlite}
  [[ -f $db ]] || { echo "no tuning database '$db' (run the tune stage or pass --tune-db)"; return 2; }
  [[ $db -ef $outdir/tuning.sqlite ]] || cp "$db" "$outdir/tuning.sqlite"
  anchor_sweep "$outdir/tuning.sqlite" none || return 1
  # Sweep 1 made the table; the newest sweep measures it.
  local newest
  newest=$(sqlite3 "$outdir/tuning.sqlite" 'SELECT max(id) FROM sweeps' 2>/dev/null ||
           python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT max(id) FROM sweeps').fetchone()[0])" "$outdir/tuning.sqlite")
  "$gdnlab" gap --db "$outdir/tuning.sqlite" --table-sweep 1 --sweep "$newest" --format csv \
    --out "$outdir/gap.csv" &&
    "$gdnlab" gap --db "$outdir/tuning.sqlite" --table-sweep 1 --sweep "$newest" --format table
}

bench() {  # pass, resume-file
  local pass=$1 resume=$2 csv=$outdir/peers_$1.csv extra=()
  if [[ -n $resume ]]; then
    [[ -f $resume ]] || { echo "resume file '$resume' not found"; return 2; }
    [[ $resume -ef $csv ]] || cp "$resume" "$csv"
    extra+=(--resume)
  fi
  # shellcheck disable=SC2086  # bench_args is a user-given word list
  python3 scripts/bench_peers.py --pass "$pass" --out "$csv" --budget-s "$bench_budget" \
    "${extra[@]}" $bench_args
}

has_stage resources && { resources > "$outdir/resources.txt" 2>&1; note "stage resources: written"; }
has_stage tests && run_stage ctest_gpu gpu_tests
has_stage sweep && run_stage smoke_sweep smoke_sweep
has_stage tune && run_stage tune tune
has_stage validate && run_stage validate validate
has_stage bench-fwd && run_stage bench_fwd bench fwd "$fwd_resume"
has_stage bench-bwd && run_stage bench_bwd bench bwd "$bwd_resume"
has_stage bench-train && run_stage bench_train bench train "$train_resume"

# Triton autotuning results (small JSON files) for the next call; logs in one archive.
(cd "$TRITON_CACHE_DIR" && find . -name '*autotune*' | tar -czf "$outdir/triton_autotune.tar.gz" -T -) 2>/dev/null
tar -czf "$outdir/logs.tar.gz" -C "$outdir" logs && rm -rf "$logs"

{
  echo
  echo "==== device_check summary ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null))"
  cat "$summary"
  if has_stage tests; then
    echo "-- ctest -L gpu:"
    tar -xzOf "$outdir/logs.tar.gz" logs/ctest_gpu.log 2>/dev/null |
      grep -E "tests passed|Failed|\*\*\*|Not Run|Skipped" | tail -15
  fi
  if has_stage sweep; then
    echo "-- smoke sweep report (head):"
    tar -xzOf "$outdir/logs.tar.gz" logs/smoke_sweep.log 2>/dev/null | tail -15
  fi
  if has_stage validate; then
    echo "-- oracle gap of the tuned table (tail):"
    tar -xzOf "$outdir/logs.tar.gz" logs/validate.log 2>/dev/null | tail -8
  fi
  for p in fwd bwd train; do
    has_stage "bench-$p" || continue
    echo "-- bench $p (geometric means; full table in logs, rows in peers_$p.csv):"
    tar -xzOf "$outdir/logs.tar.gz" "logs/bench_$p.log" 2>/dev/null |
      sed -n '/^geomean/,/^x<peer>/p'
    tar -xzOf "$outdir/logs.tar.gz" "logs/bench_$p.log" 2>/dev/null | grep -E "budget-s|Error|Traceback" | tail -3
  done
} > "$outdir/summary.final"
mv "$outdir/summary.final" "$summary"
cat "$summary"
