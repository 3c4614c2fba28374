#!/usr/bin/env bash
# Imports a multi-host run on a Slurm cluster: an array job where task i imports host files
# i*K ... (i+1)*K-1 of the run directory into a shard workspace, then a job that depends on the
# whole array merges the shards' host summaries into one run profile (no slices are copied;
# each host's timeline stays in its shard).
#
# usage: stallscope-slurm.sh [--per-task K] [--stallscope PATH] [--sbatch ARGS] RUN_DIR OUT_DIR
#   RUN_DIR  an XProf run directory (*.xplane.pb) or a folder of per-rank Kineto traces
#            (*.pt.trace.json, *.pt.trace.json.gz); files are taken in name order (sort -V)
#   OUT_DIR  where shard-<i>.sqlite and run.sqlite are written (a shared file system)
#   --per-task K     host files per array task (default 4)
#   --stallscope P   the stallscope binary the nodes run (default: `stallscope` on PATH)
#   --sbatch ARGS    extra sbatch options for both jobs (e.g. "--partition=cpu --time=30")
# Prints the two job ids. `stallscope --store OUT_DIR/run.sqlite hosts 1` reads the result.
set -euo pipefail

self="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
per_task=4
stallscope=stallscope
sbatch_args=""

host_files() {
    find "$1" -maxdepth 1 -type f \( -name '*.xplane.pb' -o -name '*.xplane.pb.gz' \
        -o -name '*.pt.trace.json' -o -name '*.pt.trace.json.gz' \) | sort -V
}

case "${1:-}" in
    --task)  # inside array task $SLURM_ARRAY_TASK_ID: stallscope RUN_DIR OUT_DIR K
        shift
        stallscope="$1" run_dir="$2" out_dir="$3" per_task="$4"
        task="${SLURM_ARRAY_TASK_ID:?not in a Slurm array task}"
        mapfile -t files < <(host_files "$run_dir")
        slice=("${files[@]:$((task * per_task)):$per_task}")
        if [ "${#slice[@]}" -eq 0 ]; then echo "task $task: no files" >&2; exit 0; fi
        shard="$out_dir/shard-$task.sqlite"
        rm -f "$shard" "$shard-wal" "$shard-shm"  # a re-run task builds its shard again
        exec "$stallscope" import --shard "$shard" "${slice[@]}"
        ;;
    --merge)  # after the array: stallscope OUT_DIR
        shift
        stallscope="$1" out_dir="$2"
        rm -f "$out_dir/run.sqlite" "$out_dir/run.sqlite-wal" "$out_dir/run.sqlite-shm"
        exec "$stallscope" merge "$out_dir/run.sqlite" "$out_dir"/shard-*.sqlite
        ;;
esac

while [ $# -gt 0 ]; do
    case "$1" in
        --per-task) per_task="$2"; shift 2 ;;
        --stallscope) stallscope="$2"; shift 2 ;;
        --sbatch) sbatch_args="$2"; shift 2 ;;
        -h|--help) sed -n '2,17p' "$self"; exit 0 ;;
        -*) echo "stallscope-slurm.sh: unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
if [ $# -ne 2 ]; then sed -n '7,15p' "$self" >&2; exit 2; fi
run_dir="$(cd "$1" && pwd)"
mkdir -p "$2"
out_dir="$(cd "$2" && pwd)"
case "$stallscope" in */*) stallscope="$(cd "$(dirname "$stallscope")" && pwd)/$(basename "$stallscope")" ;; esac
count="$(host_files "$run_dir" | wc -l)"
if [ "$count" -eq 0 ]; then echo "stallscope-slurm.sh: $run_dir: no host files" >&2; exit 2; fi
tasks=$(( (count + per_task - 1) / per_task ))
# shellcheck disable=SC2086  # sbatch_args is a list of options
array=$(sbatch --parsable $sbatch_args --job-name=stallscope-shards --array="0-$((tasks - 1))" \
    --output="$out_dir/shard-%a.log" \
    --wrap "'$self' --task '$stallscope' '$run_dir' '$out_dir' $per_task")
# shellcheck disable=SC2086
merge=$(sbatch --parsable $sbatch_args --job-name=stallscope-merge --dependency="afterok:$array" \
    --output="$out_dir/merge.log" --wrap "'$self' --merge '$stallscope' '$out_dir'")
echo "shards: job $array ($tasks tasks of up to $per_task hosts), merge: job $merge"
