#!/usr/bin/env bash
# Submits a sharded gdnlab sweep to Slurm: a job array of N shards (sweep_shard.sbatch: one
# `gdnlab sweep --shard I/N` per task, each into OUT/shards/I.sqlite) and a merge job that runs
# after every shard succeeded (merge_shards.sbatch, --dependency=afterok) and writes
# OUT/merged.sqlite. Prints the job ids and the merged database's path.
#
# Usage:
#   scripts/slurm/submit_sweep.sh --shards N --out DIR [options] -- SWEEP_ARGS...
#   scripts/slurm/submit_sweep.sh --out DIR --resubmit I[,J...] [options]
# SWEEP_ARGS are `gdnlab sweep` arguments without --db, --shard, --gpus and --resume (the
# scripts set them), e.g. -- --shapes fwd_anchors --space all.
# Options:
#   --shards N          number of shards (array tasks), 1..4096
#   --out DIR           where shards/, logs/ and merged.sqlite go (on storage every node sees)
#   --gpus-per-task G   GPUs per shard (default 1; 0 for --replay sweeps, which need none)
#   --partition P       passed to sbatch (--partition)
#   --time T            time limit of each task and of the merge job (sbatch --time)
#   --account A         passed to sbatch (--account)
#   --sbatch-arg ARG    any further sbatch argument, e.g. --sbatch-arg=--qos=high (repeatable)
#   --gdnlab PATH       the gdnlab binary (default: build/gdnlab of this checkout)
#   --resubmit LIST     submit these shards again (after a cancel or a failure) and a new merge
#                       job; the sweep arguments, N and G are the ones DIR was submitted with.
#                       Each continues its shard's sweep where it stopped.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
die() { echo "submit_sweep.sh: $*" >&2; exit 2; }
is_count() { [[ $1 =~ ^[0-9]+$ ]] && ((10#$1 >= $2 && 10#$1 <= $3)); }

shards= out= gpus=1 partition= time_limit= account= resubmit=
gdnlab=$here/../../build/gdnlab
sbatch_extra=()
sweep_args=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --shards|--out|--gpus-per-task|--partition|--time|--account|--sbatch-arg|--gdnlab|--resubmit)
      [[ $# -ge 2 ]] || die "$1: expected a value, got nothing"
      opt=$1 val=$2
      shift 2 ;;
    --*=*) opt=${1%%=*} val=${1#*=}; shift ;;
    --) shift; sweep_args=("$@"); break ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (expected the options of --help, then -- and the sweep arguments)" ;;
  esac
  case $opt in
    --shards) shards=$val ;;
    --out) out=$val ;;
    --gpus-per-task) gpus=$val ;;
    --partition) partition=$val ;;
    --time) time_limit=$val ;;
    --account) account=$val ;;
    --sbatch-arg) sbatch_extra+=("$val") ;;
    --gdnlab) gdnlab=$val ;;
    --resubmit) resubmit=$val ;;
    *) die "unknown option '$opt' (see --help)" ;;
  esac
done

[[ -n $out ]] || die "--out: expected the directory of the sharded sweep, got nothing"
mkdir -p "$out/shards" "$out/logs"
out=$(cd "$out" && pwd)
submission=$out/submission  # N, G, gdnlab and the sweep arguments, for --resubmit

if [[ -n $resubmit ]]; then
  [[ -f $submission/count ]] || die "--resubmit: expected '$out' to hold a submitted sweep ($submission), found none"
  [[ -z $shards && ${#sweep_args[@]} -eq 0 ]] ||
    die "--resubmit: takes no --shards and no sweep arguments (it reuses those '$out' was submitted with)"
  shards=$(<"$submission/count")
  gpus=$(<"$submission/gpus")
  gdnlab=$(<"$submission/gdnlab")
  mapfile -d '' sweep_args <"$submission/sweep_args"
  [[ $resubmit =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--resubmit: expected shard numbers such as 2 or 1,3, got '$resubmit'"
  IFS=, read -ra list <<<"$resubmit"
  for i in "${list[@]}"; do
    is_count "$i" 1 "$shards" || die "--resubmit: expected shard numbers in 1..$shards, got '$i'"
  done
  array=$resubmit
else
  is_count "${shards:-x}" 1 4096 || die "--shards: expected a whole number in 1..4096, got '${shards}'"
  [[ ${#sweep_args[@]} -gt 0 ]] || die "expected gdnlab sweep arguments after --, e.g. -- --shapes fwd_anchors"
  for a in "${sweep_args[@]}"; do
    case $a in
      --db|--db=*|--shard|--shard=*|--gpus|--gpus=*|--resume|--resume-or-start)
        die "sweep arguments: '$a' is set by the Slurm scripts (per shard); leave it out" ;;
    esac
  done
  [[ -x $gdnlab ]] || die "--gdnlab: expected an executable gdnlab, got '$gdnlab' (build first, or pass --gdnlab)"
  gdnlab=$(cd "$(dirname "$gdnlab")" && pwd)/$(basename "$gdnlab")
  if [[ -f $submission/count ]]; then
    die "--out: '$out' already holds a submitted sweep; use --resubmit to run shards of it again, or another --out"
  fi
  mkdir -p "$submission"
  echo "$shards" >"$submission/count"
  echo "$gpus" >"$submission/gpus"
  echo "$gdnlab" >"$submission/gdnlab"
  printf '%s\0' "${sweep_args[@]}" >"$submission/sweep_args"
  array=1-$shards
fi
is_count "$gpus" 0 64 || die "--gpus-per-task: expected a whole number in 0..64, got '$gpus'"

common=()
[[ -n $partition ]] && common+=(--partition="$partition")
[[ -n $account ]] && common+=(--account="$account")
[[ -n $time_limit ]] && common+=(--time="$time_limit")
common+=("${sbatch_extra[@]}")

shard_opts=(--array="$array" --job-name=gdn-shards --output="$out/logs/shard-%a.out")
[[ $gpus -gt 0 ]] && shard_opts+=(--gpus-per-task="$gpus")
array_job=$(sbatch --parsable "${common[@]}" "${shard_opts[@]}" \
  "$here/sweep_shard.sbatch" "$gdnlab" "$out" "$shards" "$gpus" "${sweep_args[@]}")
array_job=${array_job%%;*}
# --kill-on-invalid-dep: a shard that fails or is cancelled cancels the merge instead of
# leaving it pending forever; --resubmit submits a new one.
merge_job=$(sbatch --parsable "${common[@]}" --dependency=afterok:"$array_job" --kill-on-invalid-dep=yes \
  --job-name=gdn-merge --output="$out/logs/merge-%j.out" \
  "$here/merge_shards.sbatch" "$gdnlab" "$out" "$shards")
merge_job=${merge_job%%;*}

echo "array job:       $array_job (shards $array of $shards, logs in $out/logs)"
echo "merge job:       $merge_job (after every shard succeeded)"
echo "merged database: $out/merged.sqlite"
