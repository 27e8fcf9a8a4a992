#!/usr/bin/env bash
# The narrow-deep tiles' TMA ring with no math (tile_loads.cu says what is measured): build here,
# run on the GPU machine.
#   bash bench/experiments/tile_loads.sh build   # here: .probe/tile_loads (git-ignored)
#   bash bench/experiments/tile_loads.sh run     # on the GPU machine (carry .probe): tile_loads.log to $OUT
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${TILE_LOADS_BUILD:-.probe}
case "${1:-}" in
build)
  . bench/experiments/toolchain.sh  # NVCC and CU
  mkdir -p "$BUILD"
  "$NVCC" -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I kernels-templates -I bench/experiments \
    -I "$CU/include" -L "$CU/lib" -Xptxas -v -o "$BUILD/tile_loads" bench/experiments/tile_loads.cu 2>&1 | grep -E "registers|spill" || true
  echo "built $BUILD/tile_loads"
  ;;
run)
  OUT=${OUT:-${TMPDIR:-/tmp}/tile_loads_out}
  mkdir -p "$OUT"
  "$BUILD/tile_loads" 2>&1 | tee "$OUT/tile_loads.log"
  ;;
*) echo "usage: $0 build|run" >&2; exit 2 ;;
esac
