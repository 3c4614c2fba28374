#!/usr/bin/env bash
# A fuzzing campaign for one importer: run_campaign.sh BUILD_DIR FORMAT SECONDS [libFuzzer args]
# (BUILD_DIR configured with -DCMAKE_CXX_COMPILER=clang++ -DSTALLSCOPE_FUZZ=ON). The working
# corpus grows in BUILD_DIR/campaign/FORMAT, seeded from tests/fuzz/corpus/FORMAT and, when
# ../shared/samples is beside the checkout, from the real samples cut small; crash inputs land in
# BUILD_DIR/campaign/FORMAT-crashes/ (copy each into tests/fuzz/regressions/FORMAT/ once fixed).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$(cd "$1" && pwd)"; format="$2"; seconds="$3"; shift 3
target="$build/tests/fuzz/fuzz_${format//-/_}"
[ -x "$target" ] || { echo "no fuzz target $target (build $build first)" >&2; exit 2; }
case "$format" in
  noise-csv|cpi-csv|ncu-csv|estimates-csv) dict="$here/dict/csv.dict" ;;
  *) dict="$here/dict/$format.dict" ;;
esac
work="$build/campaign/$format"; crashes="$build/campaign/$format-crashes"
mkdir -p "$work" "$crashes"
samples="$here/../../../shared/samples"
if [ -d "$samples" ] && [ ! -e "$build/campaign/.samples-cut" ]; then
  python3 "$here/make_seeds.py" "$build/campaign/samples" --samples "$samples"
  touch "$build/campaign/.samples-cut"
fi
seeds=("$here/corpus/$format")
[ -d "$build/campaign/samples/$format" ] && seeds+=("$build/campaign/samples/$format")
exec "$target" "$work" "${seeds[@]}" -dict="$dict" -max_total_time="$seconds" \
  -artifact_prefix="$crashes/" -print_final_stats=1 -max_len=65536 "$@"
