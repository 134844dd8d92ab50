#!/usr/bin/env bash
# Regenerates the seed corpus fuzz/corpus/<target>/: enc-* from the product's own encoders
# (fuzz_make_seeds), fixture-* copied from tests/fixtures (OSU, IMB, perftest outputs).
# The rdmabench JSON seeds (compare_json/run-*) are real `--format json` outputs of lat, bw,
# lat --compare and allreduce --np 2 over socket loopback; rerun those by hand when the format
# changes. Usage: fuzz/make_seeds.sh BUILD_DIR (a fuzz build: bench/fuzz.sh makes one).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:?usage: fuzz/make_seeds.sh BUILD_DIR}
cmake --build "$BUILD" --target fuzz_make_seeds >/dev/null
"$BUILD/fuzz/fuzz_make_seeds" fuzz/corpus
for kind in osu imb perftest; do
  mkdir -p "fuzz/corpus/compare_$kind"
  for f in tests/fixtures/"$kind"*.txt; do
    cp "$f" "fuzz/corpus/compare_$kind/fixture-$(basename "$f" .txt)"
  done
done
