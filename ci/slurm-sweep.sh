#!/usr/bin/env bash
# A one-node Slurm cluster in a scratch folder, no systemd: munged and the
# Slurm daemons run as the calling user with every socket, port, state and
# log file under the scratch folder (proctrack/linuxproc, task/none). It runs
# a 2 × 2 sweep (3 seeds per point) as a job array plus a dependent merge
# job, waits for the merge, checks the merged sweep.csv is byte-identical to
# a local run's; then a sampled replay split into 4 parts (`replay --parts 4
# --slurm`), whose merged summary.json must be the local split run's byte
# for byte; and stops everything it started.
#
#   ci/slurm-sweep.sh [NUMASIM]        (default: target/release/numasim)
#
# Needs Debian's slurmctld slurmd slurm-client munge (.ci/run installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
numasim=$(realpath "${1:-target/release/numasim}")
for t in munged slurmctld slurmd sbatch scontrol sinfo; do
  command -v "$t" >/dev/null || { echo "slurm-sweep: $t is not installed (apt-get install slurmctld slurmd slurm-client munge)" >&2; exit 1; }
done
S=$(mktemp -d /tmp/numasim-slurm.XXXXXX)
pids=()
stop() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 1
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  if [ "${KEEP_SLURM_SCRATCH:-0}" != 1 ]; then rm -rf "$S"; fi
}
trap stop EXIT
mkdir -p "$S"/{munge,state,spool,log,out}
user=$(id -un)
host=$(hostname -s)
cpus=$(nproc)

# munge: a fresh key, its own socket.
dd if=/dev/urandom of="$S/munge/munge.key" bs=1024 count=1 status=none
chmod 700 "$S/munge"; chmod 400 "$S/munge/munge.key"
munged --force --foreground --key-file="$S/munge/munge.key" --socket="$S/munge/munge.sock" \
  --pid-file="$S/munge/munged.pid" --log-file="$S/log/munged.log" --seed-file="$S/munge/seed" \
  >"$S/log/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$S/munge/munge.sock" ] && break; sleep 0.1; done

# Free ports for the two daemons.
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
p_ctl=$(port); p_d=$(port)
cat > "$S/slurm.conf" <<CONF
ClusterName=numasim-ci
SlurmctldHost=$host(127.0.0.1)
SlurmUser=$user
SlurmdUser=$user
SlurmctldPort=$p_ctl
SlurmdPort=$p_d
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$S/munge/munge.sock
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmdTimeout=60
NodeName=$host NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$S/slurm.conf"
slurmctld -D -i -f "$SLURM_CONF" >"$S/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$host" >"$S/log/slurmd.out" 2>&1 &
pids+=($!)
up=0
for _ in $(seq 60); do
  if sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then up=1; break; fi
  sleep 1
done
if [ $up != 1 ]; then
  echo "slurm-sweep: the cluster did not come up" >&2
  tail -20 "$S"/log/* >&2 || true
  exit 1
fi
sinfo

# The sweep: 2 × 2 points, 3 seeds each (the experiment's).
cat > "$S/sweep.toml" <<TOML
[sweep]
experiment = "$(pwd)/scenarios/seed-inference.toml"
rows = ["static", "numa_aware"]

[grid]
"workload.qps" = [3000.0, 5000.0]
"workload.duration_s" = [0.5, 0.8]
TOML
"$numasim" sweep "$S/sweep.toml" --out "$S/out/local"
"$numasim" sweep "$S/sweep.toml" --out "$S/out/slurm" --slurm --array-limit 2
# Waits for Slurm job $1 to complete; fails on any other end.
wait_job() {
  local state=""
  for _ in $(seq 600); do
    state=$(scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -1)
    # A merge job whose array failed waits forever: say so now.
    if [ "$state" = PENDING ] && scontrol show job "$1" 2>/dev/null | grep -q 'Reason=DependencyNeverSatisfied'; then
      state=FAILED
    fi
    case "$state" in
      COMPLETED) return 0 ;;
      FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY) echo "slurm-sweep: job $1 $state" >&2; tail -20 "$2"/slurm/*.out "$S"/log/* >&2 || true; exit 1 ;;
    esac
    sleep 1
  done
  echo "slurm-sweep: job $1 still $state after 10 min" >&2
  exit 1
}
merge_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["merge"])' "$1/slurm-jobs.json"; }
wait_job "$(merge_of "$S/out/slurm")" "$S/out/slurm"
cmp "$S/out/local/sweep.csv" "$S/out/slurm/sweep.csv"
echo "slurm-sweep: $(($(wc -l < "$S/out/slurm/sweep.csv") - 1)) lines, the Slurm array's sweep.csv is byte-identical to the local run's"

# A sampled replay split into 4 parts: the array's merged summary.json
# against the local split run's.
"$numasim" trace gen zipf -n 400000 --threads 4 --footprint 8M --write-ratio 0.2 -o "$S/z.nst"
split=(replay "$S/z.nst" --machine xeon-2s --pin spread --sample 1000:20000 --parts 4 --part-warming 50000)
"$numasim" "${split[@]}" --out "$S/out/replay-local" > /dev/null
"$numasim" "${split[@]}" --out "$S/out/replay-slurm" --slurm --array-limit 2
wait_job "$(merge_of "$S/out/replay-slurm")" "$S/out/replay-slurm"
cmp "$S/out/replay-local/summary.json" "$S/out/replay-slurm/summary.json"
echo "slurm-sweep: the sampled replay's 4 parts, run as a Slurm array and merged, give the local run's summary.json byte for byte"
