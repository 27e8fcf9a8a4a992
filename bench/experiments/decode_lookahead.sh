#!/usr/bin/env bash
# The shipped decode template against its one-stage look-ahead variant (decode_lookahead.cu).
#   bash bench/experiments/decode_lookahead.sh build [COMMIT] # here; COMMIT: the commit whose template is
#                                                             # "lookahead" (default 9f2959c)
#   bash bench/experiments/decode_lookahead.sh run            # on the GPU machine (carry .lookbuild)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${LOOK_BUILD:-.lookbuild}
case "${1:-}" in
build)
  VARIANT=${2:-9f2959c}
  . bench/experiments/toolchain.sh  # NVCC and CU
  mkdir -p "$BUILD/variants"
  cargo run --release -q -p gemm-codegen --bin gemm-aot -- build --no-cubins --tier sm90a --out "$BUILD/gen" > "$BUILD/gen.txt"
  git show "$VARIANT:kernels-templates/mma/mma_decode_tma.cuh" > "$BUILD/variant.cuh"
  grep -q "struct mma_decode_tma {" "$BUILD/variant.cuh" || { echo "no mma_decode_tma in $VARIANT's template" >&2; exit 1; }
  { echo "// Taken by bench/experiments/decode_lookahead.sh from $VARIANT's kernels-templates/mma/mma_decode_tma.cuh: variant lookahead."
    sed 's/struct mma_decode_tma {/struct mma_decode_tma_lookahead {/' "$BUILD/variant.cuh"; } > "$BUILD/variants/mma_decode_tma_lookahead.cuh"
  flags=(-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I kernels-templates -I "$BUILD" -I "$BUILD/gen/cuda" -I "$BUILD/gen/cuda/include" -I "$CU/include" -L "$CU/lib" -Xptxas -v)
  "$NVCC" "${flags[@]}" -o "$BUILD/decode_lookahead" bench/experiments/decode_lookahead.cu -ldl > "$BUILD/ptxas.txt" 2>&1 || { tail -30 "$BUILD/ptxas.txt"; exit 1; }
  { git rev-parse --short HEAD; echo "lookahead from $VARIANT"; sha256sum kernels-templates/mma/mma_decode_tma.cuh "$BUILD/variants/mma_decode_tma_lookahead.cuh" bench/experiments/decode_lookahead.cu; } > "$BUILD/sources.txt"
  echo "built $BUILD/decode_lookahead"
  ;;
run)
  OUT=${OUT:-${TMPDIR:-/tmp}/decode_lookahead_out}
  mkdir -p "$OUT"
  { echo "# decode_lookahead: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
    sed 's/^/# /' "$BUILD/sources.txt"; } | tee "$OUT/decode_lookahead.log"
  timeout ${LOOK_TIMEOUT:-120} "$BUILD/decode_lookahead" "${REPS:-30}" 2>&1 | tee -a "$OUT/decode_lookahead.log"
  ;;
*) echo "usage: $0 build [COMMIT] | run" >&2; exit 2 ;;
esac
