#!/usr/bin/env bash
# scripts/slurm/ on a real Slurm. Starts munged, slurmctld and slurmd (Debian's packages,
# installed by scripts/setup.sh) on localhost with a minimal slurm.conf written here (one node
# of 2 CPUs, no cgroups, no GPUs: the sweep is a replay), then:
#   1. submits a replay sweep of the bundled H200 database sharded four ways through
#      submit_sweep.sh, waits for the merge job and checks that the merged database holds
#      exactly the rows of the same replay run in one process (none duplicated, none lost);
#   2. submits it again with slow workers, cancels one array task mid-run (scancel), checks
#      that the merge job did not run, merges the partial shards by hand, resubmits the
#      cancelled shard (--resubmit) and checks again: the shard continued its sweep and the
#      merge, run twice into the same file, still holds exactly the one-process rows.
# Exit 77 (ctest: Skipped) with the reason when the daemons cannot run here; every daemon and
# job it started is stopped on exit, whatever the outcome. Bounded: every wait has a deadline.
#
# Usage: test_slurm_sharded_sweep.sh GDNLAB BUNDLED_DB
set -uo pipefail

gdnlab=${1:?usage: test_slurm_sharded_sweep.sh GDNLAB BUNDLED_DB FAULT_WORKER}
bundled=${2:?usage: test_slurm_sharded_sweep.sh GDNLAB BUNDLED_DB FAULT_WORKER}
fault_worker=${3:?usage: test_slurm_sharded_sweep.sh GDNLAB BUNDLED_DB FAULT_WORKER}
repo=$(cd "$(dirname "$0")/../../.." && pwd)
submit=$repo/scripts/slurm/submit_sweep.sh
export PATH=$PATH:/usr/sbin:/sbin
node=gdnci1

skip() { echo "skipped: $*"; exit 77; }

[[ $(id -u) -eq 0 ]] || skip "the test starts munged, slurmctld and slurmd itself, which needs root (CI runs as root)"
for tool in munged munge unmunge slurmctld slurmd sbatch squeue scontrol scancel sinfo runuser python3; do
  command -v "$tool" >/dev/null || skip "'$tool' is not installed (scripts/setup.sh installs munge, slurmctld, slurmd and slurm-client)"
done
id munge >/dev/null 2>&1 || skip "there is no 'munge' user to run munged as (the munge package creates it)"

tmp=$(mktemp -d /tmp/gdn-slurm-test.XXXXXX)
chmod 755 "$tmp"  # munged requires its socket's folder to be reachable by everyone
ctld_pid= slurmd_pid=
export SLURM_CONF=$tmp/slurm.conf

dump_logs() {
  for f in "$tmp"/log/*.log "$tmp"/run*/logs/*.out; do
    [[ -f $f ]] || continue
    echo "----- $f (last 30 lines)"
    tail -n 30 "$f"
  done
}

stop_pid() {  # pid: TERM, then KILL after 10 s
  local pid=$1
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 0
  kill "$pid" 2>/dev/null
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.2; done
  kill -9 "$pid" 2>/dev/null
}

cleanup() {
  if [[ -n $ctld_pid ]] && kill -0 "$ctld_pid" 2>/dev/null; then
    # Every job of this test's cluster (its own slurmctld): their processes end with them.
    squeue -h -o %A 2>/dev/null | sort -u | xargs -r scancel 2>/dev/null
    for _ in $(seq 1 25); do [[ -z $(squeue -h 2>/dev/null) ]] && break; sleep 0.2; done
  fi
  stop_pid "$slurmd_pid"
  stop_pid "$ctld_pid"
  [[ -f $tmp/munge/private/munged.pid ]] && stop_pid "$(cat "$tmp/munge/private/munged.pid")"
  if [[ -n ${GDN_KEEP_SLURM_TEST_DIR:-} ]]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
  echo "FAILED: $*"
  dump_logs
  exit 1
}

# ---- daemons ---------------------------------------------------------------------------------
mkdir -p "$tmp/munge/private" "$tmp/state" "$tmp/spool" "$tmp/log"
chmod 755 "$tmp/munge"
chmod 700 "$tmp/munge/private"
head -c 1024 /dev/urandom >"$tmp/munge/private/munge.key"
chmod 400 "$tmp/munge/private/munge.key"
chown -R munge:munge "$tmp/munge"
socket=$tmp/munge/munge.socket
if ! runuser -u munge -- munged --key-file="$tmp/munge/private/munge.key" --socket="$socket" \
    --pid-file="$tmp/munge/private/munged.pid" --log-file="$tmp/munge/private/munged.log" \
    --seed-file="$tmp/munge/private/munged.seed" >"$tmp/log/munged.out" 2>&1; then
  skip "munged did not start: $(tail -n 3 "$tmp/log/munged.out" "$tmp/munge/private/munged.log" 2>/dev/null | tr '\n' ' ')"
fi
munge -S "$socket" -n 2>/dev/null | unmunge -S "$socket" >/dev/null 2>&1 ||
  skip "munge credentials do not round-trip through munged on $socket"

read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*(x.getsockname()[1] for x in s))')
host=$(hostname -s)
cat >"$SLURM_CONF" <<CONF
ClusterName=gdnci
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
MinJobAge=600
SchedulerType=sched/builtin
NodeName=$node NodeHostname=$host NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=ci Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
slurmctld -D -i -f "$SLURM_CONF" >"$tmp/log/slurmctld.out" 2>&1 &
ctld_pid=$!
slurmd -D -N "$node" -f "$SLURM_CONF" >"$tmp/log/slurmd.out" 2>&1 &
slurmd_pid=$!

# Every wait ends by this deadline, well inside ctest's TIMEOUT (600 s), so that the daemons are
# always stopped by this script rather than left behind by a killed one.
deadline=$((SECONDS + 480))
wait_until() {  # seconds command...: true once the command succeeds, false at its deadline
  local end=$((SECONDS + $1))
  ((end <= deadline)) || end=$deadline
  shift
  until "$@"; do
    ((SECONDS < end)) || return 1
    sleep 0.5
  done
}
node_idle() { [[ $(sinfo -h -n "$node" -o %t 2>/dev/null) == idle ]]; }
if ! wait_until 60 node_idle; then
  echo "slurmctld/slurmd did not bring node $node up within 60 s:"
  tail -n 5 "$tmp"/log/slurm*.out "$tmp"/log/slurm*.log 2>/dev/null
  skip "the Slurm daemons did not start here (see the logs above)"
fi
echo "Slurm up: slurmctld port $ctld_port, slurmd port $slurmd_port, node $node idle"

# ---- helpers -----------------------------------------------------------------------------------
job_state() { scontrol -o show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -n 1; }
job_gone() { [[ -z $(squeue -h -j "$1" 2>/dev/null) ]]; }
job_id() { awk -v key="$1" '$0 ~ "^" key ":" {print $(NF > 2 ? 3 : 2); exit}' <<<"$2"; }

compare() {  # merged single: exactly the same result rows (with samples), none twice
  python3 - "$1" "$2" <<'PY'
import collections, sqlite3, sys
COLUMNS = ("v.name, v.pass, p.shape_set_hash, p.row_index, r.outcome, r.message, r.max_rel_rms, "
           "r.errors_json, r.latency_p20_ms, r.latency_p50_ms, r.latency_p80_ms, r.sample_count, "
           "r.rel_spread, r.clock_mhz, r.sm_busy_pct, r.achieved_occupancy_pct, r.issue_active_pct, "
           "r.dram_pct, r.tensor_pipe_pct, r.sm_throughput_pct, r.memory_sol_pct, r.gpc_clock_hz, "
           "r.metrics_unavailable_reason, r.registers, r.shared_bytes, r.local_bytes, "
           "(SELECT group_concat(ms, ',') FROM (SELECT ms FROM samples s WHERE s.result_id = r.id ORDER BY idx))")
def rows(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    sweeps = [s for (s,) in db.execute("SELECT id FROM sweeps")]
    if len(sweeps) != 1:
        sys.exit(f"{path}: expected one sweep, found {len(sweeps)}")
    return db, sweeps[0], db.execute(f"SELECT {COLUMNS} FROM results r JOIN variants v ON v.id = r.variant_id "
                                     "JOIN problems p ON p.id = r.problem_id WHERE r.sweep_id = ?", sweeps).fetchall()
merged_db, merged_sweep, merged = rows(sys.argv[1])
_, _, single = rows(sys.argv[2])
keys = collections.Counter(r[:4] for r in merged)
dups = [k for k, n in keys.items() if n > 1]
if dups:
    sys.exit(f"{len(dups)} (variant, problem) pairs stored more than once, e.g. {dups[0]}")
a, b = collections.Counter(merged), collections.Counter(single)
if a != b:
    lost, extra = b - a, a - b
    sys.exit(f"merged {len(merged)} rows vs one process {len(single)}: {sum(lost.values())} missing "
             f"(e.g. {next(iter(lost), None)}), {sum(extra.values())} unexpected (e.g. {next(iter(extra), None)})")
untagged = merged_db.execute("SELECT count(*) FROM results WHERE merged_shard_id IS NULL").fetchone()[0]
shards = merged_db.execute("SELECT count(DISTINCT shard_index), min(shard_count), max(shard_count) "
                           "FROM merged_shards WHERE sweep_id = ?", (merged_sweep,)).fetchone()
status = merged_db.execute("SELECT status FROM sweeps WHERE id = ?", (merged_sweep,)).fetchone()[0]
if untagged or shards != (4, 4, 4) or status != "finished":
    sys.exit(f"merged sweep: {untagged} results without their shard, shards {shards}, status {status}")
print(f"merged: {len(merged)} rows, identical to the one-process replay, none twice, each with its shard (of 4)")
PY
}

result_count() {  # db: results stored so far (0 while the file is being created)
  python3 -c '
import sqlite3, sys
try:
    print(sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True).execute("SELECT count(*) FROM results").fetchone()[0])
except Exception:
    print(0)' "$1"
}

# ---- the same replay in one process --------------------------------------------------------------
sweep_args=(--replay "$bundled" --shapes smoke)
"$gdnlab" sweep "${sweep_args[@]}" --db "$tmp/single.sqlite" --no-progress >"$tmp/log/single.log" 2>&1 ||
  fail "the one-process replay failed: $(tail -n 5 "$tmp/log/single.log")"
echo "one process: $(head -n 1 "$tmp/log/single.log")"

# ---- 1. four shards through submit_sweep.sh, merged ----------------------------------------------
out1=$("$submit" --shards 4 --out "$tmp/run1" --gpus-per-task 0 --partition ci --time 10 \
  --gdnlab "$gdnlab" -- "${sweep_args[@]}" 2>&1) || fail "submit_sweep.sh failed: $out1"
echo "$out1"
merge1=$(job_id "merge job" "$out1")
[[ -n $merge1 ]] || fail "submit_sweep.sh printed no merge job id"
grep -q "^merged database: $tmp/run1/merged.sqlite$" <<<"$out1" || fail "submit_sweep.sh did not name the merged database"
wait_until 240 job_gone "$merge1" || fail "the merge job $merge1 did not finish within 240 s (state $(job_state "$merge1"))"
[[ $(job_state "$merge1") == COMPLETED ]] || fail "the merge job $merge1 ended $(job_state "$merge1")"
compare "$tmp/run1/merged.sqlite" "$tmp/single.sqlite" || fail "run 1: the merged database differs from the one-process replay"

# ---- 2. a shard cancelled mid-run, resubmitted ---------------------------------------------------
# Slow workers (the test worker's delay hook; gdnlab's own worker has none) so that a shard is
# still running when it is cancelled.
out2=$(GDN_TEST_WORKER_DELAY_MS=400 "$submit" --shards 4 --out "$tmp/run2" --gpus-per-task 0 \
  --gdnlab "$gdnlab" -- "${sweep_args[@]}" --worker-exe "$fault_worker" 2>&1) || fail "submit_sweep.sh failed: $out2"
echo "$out2"
array2=$(job_id "array job" "$out2")
merge2=$(job_id "merge job" "$out2")
shard2=$tmp/run2/shards/2.sqlite
has_results() { [[ $(result_count "$shard2") -gt 0 ]]; }
wait_until 120 has_results || fail "shard 2 stored no result within 120 s"
scancel "${array2}_2" || fail "scancel ${array2}_2 failed"
task_gone() { job_gone "${array2}_2"; }
wait_until 60 task_gone || fail "array task ${array2}_2 was still there 60 s after scancel"
kept=$(result_count "$shard2")
echo "cancelled array task ${array2}_2 with $kept results stored"
wait_until 240 job_gone "$array2" || fail "the other array tasks did not finish within 240 s"
# The merge depends on every task succeeding: it must not have run (it is cancelled).
wait_until 30 job_gone "$merge2" || scancel "$merge2"
[[ $(job_state "$merge2") != COMPLETED ]] || fail "the merge job $merge2 ran although shard 2 was cancelled"
[[ ! -e $tmp/run2/merged.sqlite ]] || fail "run2/merged.sqlite exists although the merge job did not run"

# A merge of what is there: allowed, says the sweep is incomplete; merged again below.
partial=$("$gdnlab" merge --into "$tmp/run2/merged.sqlite" "$tmp"/run2/shards/{1,2,3,4}.sqlite 2>&1) ||
  fail "merging the partial shards failed: $partial"
grep -q "not every shard sweep finished" <<<"$partial" || fail "the partial merge did not say it is incomplete: $partial"

out3=$("$submit" --out "$tmp/run2" --resubmit 2 2>&1) || fail "submit_sweep.sh --resubmit 2 failed: $out3"
echo "$out3"
merge3=$(job_id "merge job" "$out3")
wait_until 240 job_gone "$merge3" || fail "the merge job $merge3 did not finish within 240 s"
[[ $(job_state "$merge3") == COMPLETED ]] || fail "the merge job $merge3 ended $(job_state "$merge3")"
grep -q "(resumed)" "$tmp/run2/logs/shard-2.out" || fail "the resubmitted shard 2 did not continue its sweep"
compare "$tmp/run2/merged.sqlite" "$tmp/single.sqlite" || fail "run 2: the merged database differs from the one-process replay"
again=$("$gdnlab" merge --into "$tmp/run2/merged.sqlite" "$tmp"/run2/shards/{1,2,3,4}.sqlite 2>&1) ||
  fail "merging again failed: $again"
grep -q "(0 added now)" <<<"$again" || fail "merging the same shards again added results: $again"
compare "$tmp/run2/merged.sqlite" "$tmp/single.sqlite" || fail "run 2: merging again changed the merged database"
echo "passed: sharded on Slurm, merged, a cancelled shard resubmitted and merged again"
