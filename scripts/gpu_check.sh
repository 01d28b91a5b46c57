#!/usr/bin/env bash
# Runs the GPU checks on a Hopper (sm_90) machine in one command: the GPU tests, a smoke sweep,
# the peer benchmarks and a resources log; full logs and CSVs go to OUTDIR, a short table is
# printed last.
#
#   scripts/gpu_check.sh OUTDIR [--stages LIST] [options]
#   scripts/gpu_check.sh --pack DIR       (build here, copy the build to DIR for another machine)
#   scripts/gpu_check.sh --pack FILE.tar.xz   (the same, as one archive: about 10 MB, which one
#                                          call to the GPU machine carries; --build-dir takes it)
#
# Options:
#   --stages LIST        comma-separated, in this order: resources,tests,sweep,tune,tune-bwd,
#                        validate,ab,bench-fwd,bench-bwd,bench-train,timeline (default: all but
#                        tune, tune-bwd, validate, ab and timeline). bench-train times a training
#                        step (forward + backward) on the backward rows. timeline: the
#                        per-kernel timeline of one call (scripts/kernel_timeline.py) of the
#                        forward rows --timeline-fwd and the backward rows --timeline-bwd.
#                        tune: the forward anchor sweep of the candidates (variants with
#                        launch-plan pins) in scripts/spaces/anchors_fwd.txt into tuning.sqlite,
#                        and the exported dispatch table (table.tar.gz); tune-bwd: the backward
#                        anchor sweep of scripts/spaces/anchors_bwd.txt into the same database,
#                        and the table exported again with both passes (export --merge-sweep;
#                        without a forward sweep there, onto the committed forward sweep's);
#                        validate: a
#                        second, independent forward sweep of the same shapes into the same
#                        database and the oracle gap of the table (gdnlab gap). Pass the
#                        database back with --tune-db.
#                        ab: an A/B of two builds through the lab: the same sweep (--ab-shapes,
#                        --ab-variants, a quick protocol) by the --ab-base build into
#                        ab_base.sqlite and by this build into ab_head.sqlite, one after the
#                        other, then `gdnlab compare` of the two per candidate and per problem
#                        (ab_compare_candidate.csv, ab_compare_problem.csv; the summaries in
#                        the stage's log).
#   --build-dir DIR      the build to use (default build-gpu); configured and built here
#                        (Release, no GUI) when it holds no CMakeCache.txt. A build made on
#                        another machine (--pack) is relocated to this checkout; an archive
#                        of --pack (FILE.tar.xz) is unpacked into $TMPDIR (default /tmp) first.
#   --wheels DIR         wheels to install offline for the peers (default .whl, written by
#                        scripts/fetch_wheels.sh); without any, FLA is left out.
#   --peers-site DIR     FlashQLA and FlashInfer live: a folder the wheel loads were installed
#                        into by scripts/install_wheel_load.sh (docs/benchmarking.md); without
#                        it, or where they do not import, their published figures are used.
#   --bench-budget-s N   bench_peers stops starting rows after N s (default 400); rerun the stage
#                        with --fwd-resume/--bwd-resume FILE (an earlier peers_*.csv) to finish.
#   --fwd-resume FILE, --bwd-resume FILE, --train-resume FILE   continue an earlier CSV
#                        instead of starting afresh.
#   --bench-args "..."   extra arguments for scripts/bench_peers.py (e.g. "--reps 50 --rows 2/8").
#   --timeline-fwd ROWS, --timeline-bwd ROWS   row filters of the timeline stage (default: the
#                        batch rows 1024x8,4096x8,8192x4 and 16/32; "" leaves a pass out).
#   --tune-db FILE       the tuning.sqlite of an earlier run: tune continues its unfinished sweep
#                        (--resume: same build, same arguments); validate sweeps it again.
#   --sweep-gpus LIST    GPU ordinals of the tune and validate sweeps, one worker each (default 0);
#                        a resumed sweep may use other GPUs than it started on.
#   --sweep-metrics SET  CUPTI counters of the tune sweep: none | basic | full (default basic;
#                        none times only, about 5x faster).
#   --tune-plans SPACE   launch-plan candidates added per listed candidate in tune and tune-bwd:
#                        rule | axes | grid (default rule: the lists' pins only; axes: each plan
#                        field pinned alone at each value).
#   --tune-strategy S    strategy of tune and tune-bwd: exhaustive | halving (default halving:
#                        cheap rungs rank the plan candidates, the best third get the full
#                        protocol).
#   --ab-base BUILD      ab: the build to compare with (a folder or an archive of --pack,
#                        unpacked into $TMPDIR/gdn-ab-base).
#   --ab-shapes SET      ab: the shape set (a name in scripts/shapes or a CSV; default
#                        bwd_anchors).
#   --ab-variants GLOBS  ab: comma-separated globs on variant names (default: every variant).
# Outputs in OUTDIR: summary.txt, resources.txt, peers_fwd.csv, peers_bwd.csv, peers_train.csv,
# timeline_fwd.csv, timeline_bwd.csv,
# smoke_sweep.sqlite, tuning.sqlite, table.tar.gz, gap.csv, ab_base.sqlite, ab_head.sqlite,
# ab_compare_candidate.csv, ab_compare_problem.csv, logs.tar.gz, triton_autotune.tar.gz
# (FLA's Triton autotuning results, kept in TRITON_CACHE_DIR, default .triton_cache: they save
# 30-110 s per head configuration on the next run).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
REPO=$PWD

usage() { sed -n '2,/^[^#]/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "gpu_check: $*" >&2; exit 2; }

ALL_STAGES="resources,tests,sweep,tune,tune-bwd,validate,ab,bench-fwd,bench-bwd,bench-train,timeline"
stages="resources,tests,sweep,bench-fwd,bench-bwd,bench-train" build_dir="" bench_budget=400
fwd_resume="" bwd_resume="" train_resume="" bench_args="" tune_db="" sweep_gpus=0
sweep_metrics=basic tune_plans=rule tune_strategy=halving wheels=.whl outdir="" pack=""
peers_site="" timeline_fwd="1024x8,4096x8,8192x4" timeline_bwd="16/32"
ab_base="" ab_shapes=bwd_anchors ab_variants='*'
while (($#)); do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --pack) pack=${2:?--pack needs a folder}; shift ;;
    --stages) stages=${2:?--stages needs a list}; shift ;;
    --build-dir) build_dir=${2:?--build-dir needs a folder}; shift ;;
    --wheels) wheels=${2:?--wheels needs a folder}; shift ;;
    --peers-site) peers_site=${2:?--peers-site needs a folder}; shift ;;
    --bench-budget-s) bench_budget=${2:?--bench-budget-s needs seconds}; shift ;;
    --fwd-resume) fwd_resume=${2:?--fwd-resume needs a CSV}; shift ;;
    --bwd-resume) bwd_resume=${2:?--bwd-resume needs a CSV}; shift ;;
    --train-resume) train_resume=${2:?--train-resume needs a CSV}; shift ;;
    --bench-args) bench_args=${2?--bench-args needs a string}; shift ;;
    --timeline-fwd) timeline_fwd=${2?--timeline-fwd needs row filters (or "")}; shift ;;
    --timeline-bwd) timeline_bwd=${2?--timeline-bwd needs row filters (or "")}; shift ;;
    --tune-db) tune_db=${2:?--tune-db needs a database file}; shift ;;
    --sweep-gpus) sweep_gpus=${2:?--sweep-gpus needs a list such as 0,1}; shift ;;
    --sweep-metrics) sweep_metrics=${2:?--sweep-metrics needs none, basic or full}; shift ;;
    --tune-plans) tune_plans=${2:?--tune-plans needs rule, axes or grid}; shift ;;
    --tune-strategy) tune_strategy=${2:?--tune-strategy needs exhaustive or halving}; shift ;;
    --ab-base) ab_base=${2:?--ab-base needs a build folder or archive}; shift ;;
    --ab-shapes) ab_shapes=${2:?--ab-shapes needs a shape set}; shift ;;
    --ab-variants) ab_variants=${2:?--ab-variants needs globs}; shift ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) [[ -z $outdir ]] || die "one OUTDIR expected; got '$outdir' and '$1'"; outdir=$1 ;;
  esac
  shift
done

build_here() {  # folder: a Release build without the GUI
  cmake -S . -B "$1" -G Ninja -DGDN_WITH_GUI=OFF -DCMAKE_BUILD_TYPE=Release &&
    cmake --build "$1" -j "$(nproc)"
}

# ---- --pack: build here, copy what running needs to DIR (or into one archive) --------------------
# The archive holds the build as one top folder, `build`; the test binaries each link the
# kernels' device code, which xz compresses about 17-fold (170 MB to 10 MB).
if [[ -n $pack ]]; then
  build_here "${build_dir:-build-gpu}" || exit 1
  archive=""
  if [[ $pack == *.tar.xz ]]; then
    archive=$pack
    pack=$(mktemp -d)/build || exit 1
  fi
  rm -rf "$pack" && mkdir -p "$(dirname "$pack")" || exit 1
  cp -a "${build_dir:-build-gpu}" "$pack" || exit 1
  # Object files and static archives are not needed to run: leave them behind.
  find "$pack" -type f \( -name '*.o' -o -name '*.a' \) -delete
  if [[ -n $archive ]]; then
    mkdir -p "$(dirname "$archive")" &&
      tar -C "$(dirname "$pack")" -cf - build | xz -9 -T0 > "$archive.part" &&
      mv "$archive.part" "$archive" || { rm -f "$archive.part"; exit 1; }
    rm -rf "$(dirname "$pack")"
    pack=$archive
  fi
  du -sh "$pack"
  echo "run elsewhere with: scripts/gpu_check.sh OUTDIR --build-dir $pack"
  exit 0
fi

[[ -n $outdir ]] || die "OUTDIR missing (see --help)"
for s in ${stages//,/ }; do
  [[ ",$ALL_STAGES," == *",$s,"* ]] || die "--stages: unknown stage '$s' (expected some of $ALL_STAGES)"
done
has_stage() { [[ ",$stages," == *",$1,"* ]]; }
if has_stage ab; then
  [[ -n $ab_base ]] || die "--stages ab needs --ab-base (the build to compare this one with)"
  [[ -e $ab_base ]] || die "--ab-base: no build folder or archive '$ab_base'"
fi
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

# An archive of --pack unpacked afresh into $TMPDIR/NAME; prints the build folder.
unpack_build() {  # option, archive, name
  [[ -f $2 ]] || die "$1: no archive '$2'"
  local unpacked=${TMPDIR:-/tmp}/$3
  rm -rf "$unpacked" && mkdir -p "$unpacked" && xz -dc "$2" | tar -C "$unpacked" -xf - ||
    die "$1: cannot unpack '$2' into $unpacked"
  [[ -f $unpacked/build/CMakeCache.txt ]] || die "$1: '$2' holds no build/CMakeCache.txt (not made by --pack)"
  echo "$unpacked/build"
}

build_dir=${build_dir:-build-gpu}
if [[ $build_dir == *.tar.xz ]]; then
  build_dir=$(unpack_build --build-dir "$build_dir" gdn-packed-build) || exit 2
fi
if [[ $ab_base == *.tar.xz ]]; then
  ab_base=$(unpack_build --ab-base "$ab_base" gdn-ab-base) || exit 2
fi
if [[ -f $build_dir/CMakeCache.txt ]]; then
  relocate_build "$build_dir"
  note "build: $build_dir"
else
  note "build: none in $build_dir; configuring and building it here"
  build_here "$build_dir" > "$logs/build.log" 2>&1 ||
    note "build: FAILED (logs/build.log): $(tail -3 "$logs/build.log" | tr '\n' ' ')"
fi
# The kernels are sm_90a: on another architecture the GPU tests skip or fail, so say so first.
gpu_caps=$(nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader 2>/dev/null)
if [[ -z $gpu_caps ]]; then
  note "warning: nvidia-smi lists no GPU; the GPU tests will report skipped"
elif ! grep -q ', 9\.0' <<<"$gpu_caps"; then
  note "warning: no compute capability 9.0 GPU here ($(tr '\n' ';' <<<"$gpu_caps")): libgdn's kernels need sm_90"
else
  note "gpu: $(head -1 <<<"$gpu_caps")"
fi
build_dir=$(cd "$build_dir" 2>/dev/null && pwd || echo "$REPO/$build_dir")
export GDN_LIBRARY=$build_dir/kernels/libgdn.so
[[ -f $GDN_LIBRARY ]] || note "warning: $GDN_LIBRARY missing: every 'ours' measurement will fail"

# Wheels installed offline (FLA); torch and triton come from the machine's Python.
export PYTHONPATH=$REPO/python
if compgen -G "$wheels/*.whl" > /dev/null; then
  if python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
       --target /tmp/site "$wheels"/*.whl > "$logs/pip.log" 2>&1; then
    export PYTHONPATH=$PYTHONPATH:/tmp/site
    # FLA's full package imports every model (and transformers) from fla/__init__.py; only fla.ops
    # is needed, so an __init__ that pulls models in is replaced by its __version__ line alone
    # (which the FLA backend and bench_peers read).
    if grep -q "models\|layers" /tmp/site/fla/__init__.py 2>/dev/null; then
      grep -m1 "^__version__" /tmp/site/fla/__init__.py > /tmp/site/fla/__init__.new || true
      mv /tmp/site/fla/__init__.new /tmp/site/fla/__init__.py
    fi
    note "wheels: installed $(cd "$wheels" && printf '%s ' *.whl)"
  else
    note "wheels: pip install FAILED (logs/pip.log)"
  fi
else
  note "wheels: none in $wheels (FLA will be missing)"
fi
# The FLA backend's GPU test (python.fla_backend_gpu reads GDN_FLA_SITE) takes the same fla-core.
[[ -d /tmp/site/fla ]] && export GDN_FLA_SITE=/tmp/site
if [[ -n $peers_site ]]; then
  if [[ -f $peers_site/env.sh ]]; then
    # shellcheck disable=SC1091  # written on this machine by scripts/install_wheel_load.sh
    . "$peers_site/env.sh"
    note "wheels: peers from $peers_site: $(cd "$peers_site/.wheel-loads" 2>/dev/null && printf '%s ' *.whl)"
  else
    note "wheels: --peers-site $peers_site holds no env.sh (install the loads into it with" \
         "scripts/install_wheel_load.sh first): FlashQLA and FlashInfer stay published"
  fi
fi
export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-$REPO/.triton_cache}
# Triton >= 3.4 keeps autotuning results in its cache only when asked to.
export TRITON_CACHE_AUTOTUNING=1
mkdir -p "$TRITON_CACHE_DIR"
export PYTHONUNBUFFERED=1
# The commit of the build that runs: what its gdnlab recorded at build time (`gdnlab --version`:
# "gdnlab 0.1.0 (git <sha>, ...)"). The checkout's HEAD is only the fallback: a copied working
# tree can carry a stale .git whose HEAD is older than the build.
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

find_gdnlab() {  # [build folder]
  find "${1:-$build_dir}" -maxdepth 3 -type f -name gdnlab -perm -u+x 2>/dev/null | head -1
}

smoke_sweep() {
  local gdnlab
  gdnlab=$(find_gdnlab)
  [[ -n $gdnlab ]] || { echo "no gdnlab executable in $build_dir"; return 3; }
  rm -f "$outdir/smoke_sweep.sqlite"
  "$gdnlab" sweep --space default --shapes smoke --db "$outdir/smoke_sweep.sqlite" --metrics basic &&
    "$gdnlab" report --db "$outdir/smoke_sweep.sqlite" --format table
}

# The forward anchor sweep that dispatch tables are exported from: every fused forward variant
# on every forward anchor row, exhaustive, with a lighter protocol than the precise default
# (171 rows x 64 variants of a GDN_VARIANTS=all build = 10944 trials must fit in minutes):
# 3 warm-up calls, 10..40 samples to a 2% spread.
anchor_sweep() {  # database, metrics (basic: SM utilisation; none: timing only), [--resume]
  "$gdnlab" sweep --space default --shapes fwd_anchors --variants 'gdn_fwd_sm90_fused*' \
    --strategy exhaustive --metrics "$2" --no-progress --db "$1" ${3:+"$3"} --gpus "$sweep_gpus" \
    --warmup 3 --min-samples 10 --max-samples 40 --target-spread 0.02 --time-cap-ms 1000
}

# The tuning sweeps: a pass's anchors, its candidates (a space file), each with its launch-plan
# candidates.
plan_sweep() {  # database, shapes, space file, [--resume]
  "$gdnlab" sweep --space "$3" --shapes "$2" --plans "$tune_plans" \
    --strategy "$tune_strategy" --metrics "$sweep_metrics" --no-progress --db "$1" ${4:+"$4"} \
    --gpus "$sweep_gpus" --warmup 3 --min-samples 10 --max-samples 40 --target-spread 0.02 \
    --time-cap-ms 1000
}

sql() {  # database, query: one value
  sqlite3 "$1" "$2" 2>/dev/null ||
    python3 -c "import sqlite3,sys; r=sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone(); print('' if r is None or r[0] is None else r[0])" "$1" "$2"
}

# The newest sweep of a shape set in the tuning database, and whether it is unfinished.
newest_sweep() { sql "$1" "SELECT max(id) FROM sweeps WHERE shapes = '$2'"; }
unfinished_sweep() { sql "$1" "SELECT max(id) FROM sweeps WHERE shapes = '$2' AND status <> 'finished'"; }

# tuning.sqlite in OUTDIR: the --tune-db of an earlier call, else a fresh one.
take_tune_db() {
  if [[ -n $tune_db ]]; then
    [[ -f $tune_db ]] || { echo "--tune-db '$tune_db' not found"; return 2; }
    [[ $tune_db -ef $outdir/tuning.sqlite ]] || cp "$tune_db" "$outdir/tuning.sqlite"
  fi
}

# The forward anchor sweep the committed dispatch table was exported from (its `sweep` and
# `merged_db` fields): a backward-only tuning run is exported on top of it.
readonly COMMITTED_FWD_SWEEP_DB=bench/results/h200_2026-11-30_anchors_sweep.sqlite COMMITTED_FWD_SWEEP=1

# One table of both passes: the newest forward anchor sweep, the backward one merged in. Without
# a forward sweep in the tuning database (tune-bwd alone), the committed forward sweep is the
# base and the backward sweep is merged from the tuning database; gdnlab export refuses sweeps
# of two kinds of device, so on another GPU than the committed sweep's no table is written.
export_table() {
  local db=$outdir/tuning.sqlite fwd bwd
  fwd=$(newest_sweep "$db" fwd_anchors)
  bwd=$(newest_sweep "$db" bwd_anchors)
  rm -rf "$outdir/table"
  if [[ -n $fwd ]]; then
    "$gdnlab" export --db "$db" --out "$outdir/table" --sweep "$fwd" ${bwd:+--merge-sweep "$bwd"} || return 1
  elif [[ -n $bwd && -f $COMMITTED_FWD_SWEEP_DB ]]; then
    echo "no forward anchor sweep in $db: exporting the committed forward sweep" \
         "($COMMITTED_FWD_SWEEP_DB, sweep $COMMITTED_FWD_SWEEP) with backward sweep $bwd merged"
    "$gdnlab" export --db "$COMMITTED_FWD_SWEEP_DB" --sweep "$COMMITTED_FWD_SWEEP" \
      --merge-db "$db" --merge-sweep "$bwd" --out "$outdir/table" || return 1
  else
    echo "no forward anchor sweep in $db (and no backward one to merge into $COMMITTED_FWD_SWEEP_DB)"
    return 2
  fi
  tar -czf "$outdir/table.tar.gz" -C "$outdir" table && rm -rf "$outdir/table"
}

tune_pass() {  # shapes, space file
  gdnlab=$(find_gdnlab)
  [[ -n $gdnlab ]] || { echo "no gdnlab executable in $build_dir"; return 3; }
  take_tune_db || return 2
  local db=$outdir/tuning.sqlite resume=""
  [[ -n $(unfinished_sweep "$db" "$1" 2>/dev/null) ]] && resume=--resume
  plan_sweep "$db" "$1" "$2" $resume || return 1
  "$gdnlab" report --db "$db" --sweep "$(newest_sweep "$db" "$1")" --format table
  export_table
}

tune() {
  [[ -n $tune_db ]] || rm -f "$outdir/tuning.sqlite"
  tune_pass fwd_anchors scripts/spaces/anchors_fwd.txt
}

# The backward sweep, then what each overlap pin of the space does row by row (its candidates
# with the pin against the same ones without it, in that sweep): pin_<field>.csv beside it.
tune_bwd() {
  tune_pass bwd_anchors scripts/spaces/anchors_bwd.txt || return $?
  local db=$outdir/tuning.sqlite sweep pin
  sweep=$(newest_sweep "$db" bwd_anchors)
  for pin in pass1_beside_recompute=1 group_sum_beside=1; do
    # (the table is exported by now: a comparison that fails is reported, not the stage's failure)
    { "$gdnlab" compare --db "$db" --sweep "$sweep" --against "$sweep" --by pin --pin "$pin" --format csv \
        --out "$outdir/pin_${pin%=*}.csv" &&
        "$gdnlab" compare --db "$db" --sweep "$sweep" --against "$sweep" --by pin --pin "$pin" | tail -n 2; } ||
      echo "warning: gdnlab compare --by pin --pin $pin failed"
  done
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

# The A/B of --ab-base against this build: one sweep each, the same arguments but the database,
# the base first, then the lab's comparison of the two.
ab() {
  local base head name gdnlab rc=0
  base=$(find_gdnlab "$ab_base")
  head=$(find_gdnlab)
  [[ -n $base ]] || { echo "no gdnlab executable in the --ab-base build $ab_base"; return 3; }
  [[ -n $head ]] || { echo "no gdnlab executable in $build_dir"; return 3; }
  for name in base head; do
    [[ $name == base ]] && gdnlab=$base || gdnlab=$head
    rm -f "$outdir/ab_$name.sqlite"
    echo "== $name: $("$gdnlab" --version 2>/dev/null)"
    "$gdnlab" sweep --space default --shapes "$ab_shapes" --variants "$ab_variants" \
      --metrics none --no-progress --db "$outdir/ab_$name.sqlite" --warmup 3 --min-samples 10 \
      --max-samples 30 --target-spread 0.02 --time-cap-ms 400 || return 1
  done
  for by in candidate problem; do
    "$head" compare --db "$outdir/ab_base.sqlite" --sweep 1 --against 1 \
      --against-db "$outdir/ab_head.sqlite" --by "$by" --format csv \
      --out "$outdir/ab_compare_$by.csv" || rc=1
    "$head" compare --db "$outdir/ab_base.sqlite" --sweep 1 --against 1 \
      --against-db "$outdir/ab_head.sqlite" --by "$by" | tail -2
  done
  return $rc
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

timeline() {  # the per-kernel timelines of the chosen rows
  local rc=0
  if [[ -n $timeline_fwd ]]; then
    python3 scripts/kernel_timeline.py --pass fwd --rows "$timeline_fwd" \
      --out "$outdir/timeline_fwd.csv" || rc=1
  fi
  if [[ -n $timeline_bwd ]]; then
    python3 scripts/kernel_timeline.py --pass bwd --rows "$timeline_bwd" \
      --out "$outdir/timeline_bwd.csv" || rc=1
  fi
  return $rc
}

has_stage resources && { resources > "$outdir/resources.txt" 2>&1; note "stage resources: written"; }
has_stage tests && run_stage ctest_gpu gpu_tests
has_stage sweep && run_stage smoke_sweep smoke_sweep
has_stage tune && run_stage tune tune
has_stage tune-bwd && run_stage tune_bwd tune_bwd
has_stage validate && run_stage validate validate
has_stage ab && run_stage ab ab
has_stage bench-fwd && run_stage bench_fwd bench fwd "$fwd_resume"
has_stage bench-bwd && run_stage bench_bwd bench bwd "$bwd_resume"
has_stage bench-train && run_stage bench_train bench train "$train_resume"
has_stage timeline && run_stage timeline timeline

# Triton autotuning results (small JSON files) for the next call; logs in one archive.
(cd "$TRITON_CACHE_DIR" && find . -name '*autotune*' | tar -czf "$outdir/triton_autotune.tar.gz" -T -) 2>/dev/null
tar -czf "$outdir/logs.tar.gz" -C "$outdir" logs && rm -rf "$logs"

{
  echo
  echo "==== gpu_check summary ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null))"
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
