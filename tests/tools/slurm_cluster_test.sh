#!/usr/bin/env bash
# Integration test of packaging/stallscope-slurm.sh: starts a one-node Slurm cluster on this
# machine (munged, slurmctld, slurmd from Debian's munge and slurm-wlm, every file in a temporary
# directory, ports of its own), submits the shard array over 16 generated host files (4 per
# task) and the dependent merge, and checks that the merged profile's `hosts --json` equals a
# single-process import of the same files. Exits 77 (skipped) with the reason when the tools
# are missing or the daemons cannot start here.
#
# usage: slurm_cluster_test.sh STALLSCOPE GEN_MULTIHOST_PY SLURM_SCRIPT
set -uo pipefail
stallscope="$1" generator="$2" script="$3"

skip() { echo "SKIPPED: $*"; exit 77; }
for tool in munged slurmctld slurmd sbatch squeue sinfo python3; do
    command -v "$tool" >/dev/null || skip "$tool is not installed (.ci/install-deps installs slurm-wlm and munge)"
done

work="$(mktemp -d /tmp/stallscope-slurm.XXXXXX)"
started=()
cleanup() {
    for pid in "${started[@]}"; do kill "$pid" 2>/dev/null; done
    [ -f "$work/munged.pid" ] && kill "$(cat "$work/munged.pid")" 2>/dev/null
    sleep 0.5
    rm -rf "$work"
}
trap cleanup EXIT
began=$(date +%s.%N)

# munge with its own key and socket.
dd if=/dev/urandom of="$work/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge.key"
munged --force --key-file="$work/munge.key" --socket="$work/munge.sock" \
    --pid-file="$work/munged.pid" --log-file="$work/munged.log" --seed-file="$work/munge.seed" \
    || skip "munged did not start: $(tail -3 "$work/munged.log" 2>/dev/null)"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
node="$(hostname -s 2>/dev/null || echo localhost)"
mkdir -p "$work/state" "$work/spool"
cat > "$work/slurm.conf" <<EOF
ClusterName=stallscope-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
AuthInfo=socket=$work/munge.sock
CredType=cred/munge
SlurmUser=$(id -un)
SlurmdUser=root
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$work/slurm.conf"
slurmctld -D -i >"$work/slurmctld.out" 2>&1 &
started+=($!)
slurmd -D -N "$node" >"$work/slurmd.out" 2>&1 &
started+=($!)
ready=""
for _ in $(seq 1 60); do
    state="$(sinfo -h -o %t 2>/dev/null | head -1)"
    case "$state" in idle*|mix*|alloc*) ready=1; break ;; esac
    sleep 0.5
done
[ -n "$ready" ] || skip "the one-node cluster did not come up (node state '${state:-none}'):
$(tail -5 "$work/slurmctld.log" "$work/slurmd.log" "$work/slurmctld.out" "$work/slurmd.out" 2>/dev/null)"
cluster_up=$(date +%s.%N)

python3 "$generator" "$work/run" --hosts 16 --kernels 8 --straggler-rank 11 \
    --expected "$work/expected.json" || { echo "FAIL: generator"; exit 1; }
submitted=$(date +%s.%N)
"$script" --per-task 4 --stallscope "$stallscope" "$work/run" "$work/out" \
    || { echo "FAIL: stallscope-slurm.sh did not submit"; exit 1; }
done_=""
for _ in $(seq 1 240); do
    if [ -z "$(squeue -h 2>/dev/null)" ]; then done_=1; break; fi
    sleep 0.5
done
[ -n "$done_" ] || { echo "FAIL: jobs still queued after 120 s"; squeue; exit 1; }
finished=$(date +%s.%N)
if [ ! -f "$work/out/run.sqlite" ]; then
    echo "FAIL: no merged workspace"; tail -5 "$work"/out/*.log; exit 1
fi
ls "$work"/out/shard-*.sqlite | wc -l | grep -qx 4 || { echo "FAIL: expected 4 shards"; exit 1; }

"$stallscope" --store "$work/single.sqlite" import "$work/run" >/dev/null || exit 1
"$stallscope" --store "$work/out/run.sqlite" hosts 1 --json >"$work/merged.json" || exit 1
"$stallscope" --store "$work/single.sqlite" hosts 1 --json >"$work/single.json" || exit 1
python3 - "$work" <<'EOF' || exit 1
import json, sys
work = sys.argv[1]
def place_free(d):
    d = dict(d)
    d.pop("id", None); d.pop("name", None)
    d["hosts"] = [{k: v for k, v in h.items()
                   if k not in ("track", "shard", "shard_profile", "shard_track", "offset_ns")}
                  for h in d["hosts"]]
    return d
merged = json.load(open(work + "/merged.json"))
single = json.load(open(work + "/single.json"))
expected = json.load(open(work + "/expected.json"))
if place_free(merged) != place_free(single):
    sys.exit("FAIL: the merged profile differs from the single-process import")
if len(merged["hosts"]) != 16:
    sys.exit("FAIL: %d hosts merged" % len(merged["hosts"]))
step = expected["straggler"]["step"]
if merged["stragglers"][step]["host"] != expected["straggler"]["host"]:
    sys.exit("FAIL: straggler %s, planted %s" % (merged["stragglers"][step]["host"],
                                                 expected["straggler"]["host"]))
print("merged profile equals the single-process import; straggler",
      merged["stragglers"][step]["host"])
EOF
end=$(date +%s.%N)
python3 -c "import sys; b,u,s,f,e=map(float,sys.argv[1:]); print('wall: %.1f s (cluster start %.1f s, jobs %.1f s, checks %.1f s)' % (e-b, u-b, f-s, e-f))" \
    "$began" "$cluster_up" "$submitted" "$finished" "$end"
echo PASSED
