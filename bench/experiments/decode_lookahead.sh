#!/usr/bin/env bash
# The decode template's look-ahead against the template before it (decode_lookahead.cu).
#   bash bench/experiments/decode_lookahead.sh build [BASE]   # here; BASE: the commit whose template is
#                                                             # "inline" (default 17abcd8, the last before the change)
#   bash bench/experiments/decode_lookahead.sh run            # on the GPU machine (carry .lookbuild)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${LOOK_BUILD:-.lookbuild}
case "${1:-}" in
build)
  BASE=${2:-17abcd8}
  NVCC=$(cargo run --release -q -p gemm-codegen --bin gemm-aot -- toolchain install | sed -n 's/^nvcc: //p')
  [ -x "$NVCC" ] || { echo "no nvcc: see \`gemm-aot toolchain install\`" >&2; exit 1; }
  CU=$(dirname "$(dirname "$NVCC")")
  mkdir -p "$BUILD/variants"
  cargo run --release -q -p gemm-codegen --bin gemm-aot -- build --no-cubins --tier sm90a --out "$BUILD/gen" > "$BUILD/gen.txt"
  git show "$BASE:kernels-templates/mma/mma_decode_tma.cuh" > "$BUILD/base.cuh"
  grep -q "struct mma_decode_tma {" "$BUILD/base.cuh" || { echo "no mma_decode_tma in $BASE's template" >&2; exit 1; }
  { echo "// Taken by bench/experiments/decode_lookahead.sh from $BASE's kernels-templates/mma/mma_decode_tma.cuh: variant inline."
    sed 's/struct mma_decode_tma {/struct mma_decode_tma_inline {/' "$BUILD/base.cuh"; } > "$BUILD/variants/mma_decode_tma_inline.cuh"
  flags=(-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I kernels-templates -I "$BUILD" -I "$BUILD/gen/cuda" -I "$BUILD/gen/cuda/include" -I "$CU/include" -L "$CU/lib" -Xptxas -v)
  "$NVCC" "${flags[@]}" -o "$BUILD/decode_lookahead" bench/experiments/decode_lookahead.cu -ldl > "$BUILD/ptxas.txt" 2>&1 || { tail -30 "$BUILD/ptxas.txt"; exit 1; }
  { git rev-parse --short HEAD; echo "inline from $BASE"; sha256sum kernels-templates/mma/mma_decode_tma.cuh "$BUILD/variants/mma_decode_tma_inline.cuh" bench/experiments/decode_lookahead.cu; } > "$BUILD/sources.txt"
  echo "built $BUILD/decode_lookahead"
  ;;
run)
  OUT=${OUT:-${TMPDIR:-/tmp}/decode_lookahead_out}
  mkdir -p "$OUT"
  { echo "# decode_lookahead: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
    sed 's/^/# /' "$BUILD/sources.txt"; } | tee "$OUT/decode_lookahead.log"
  timeout ${LOOK_TIMEOUT:-120} "$BUILD/decode_lookahead" "${REPS:-30}" 2>&1 | tee -a "$OUT/decode_lookahead.log"
  ;;
*) echo "usage: $0 build [BASE] | run" >&2; exit 2 ;;
esac
