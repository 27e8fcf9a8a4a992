#!/usr/bin/env bash
# Build and run bench/experiments/mma_async_check.cu (mma_async_gemm against wgmma_tma_gemm and
# mma_gemm, bit for bit) on an H200 (sm_90a). Run from anywhere; writes the log to $OUT.
#   MMA_ASYNC_BIN=path  use a binary built elsewhere (it opens cuBLAS with dlopen); otherwise
#                       build here with -DHAVE_CUBLAS -lcublas.
#   SANITIZE=1          also compute-sanitizer memcheck and racecheck on the small mode.
# Local build without cuBLAS, into the ignored .tcbuild/ that a device run carries (with a
# pip-installed toolchain, add -L <toolchain>/lib for cudart_static):
#   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I kernels-templates -Xptxas -v \
#        -Xptxas -warn-spills -o .tcbuild/mma_async_check bench/experiments/mma_async_check.cu -ldl
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-${TMPDIR:-/tmp}/mma_async_check_out}
mkdir -p "$OUT"
LOG=$OUT/mma_async_check.log
BIN=${MMA_ASYNC_BIN:-}
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
{
  echo "# mma_async_check: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
  echo "# source: bench/experiments/mma_async_check.cu sha256 $(sha256sum bench/experiments/mma_async_check.cu | cut -c1-16), harness tc_check_common.cuh $(sha256sum bench/experiments/tc_check_common.cuh | cut -c1-16), templates $(cat kernels-templates/wgmma/*.cuh kernels-templates/mma/*.cuh kernels-templates/tc/*.cuh kernels-templates/common/*.cuh | sha256sum | cut -c1-16)"
} | tee "$LOG"
if [ -n "$BIN" ] && "$BIN" probe >/dev/null 2>&1; then
  echo "# binary: prebuilt, cuBLAS through dlopen" | tee -a "$LOG"
else
  BIN=${TMPDIR:-/tmp}/mma_async_check
  echo "# binary: built here with -DHAVE_CUBLAS -lcublas" | tee -a "$LOG"
  "$NVCC" -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I kernels-templates -DHAVE_CUBLAS -Xptxas -v \
      -o "$BIN" bench/experiments/mma_async_check.cu -lcublas -ldl > "$OUT/ptxas.txt" 2>&1 || { tail -30 "$OUT/ptxas.txt"; exit 1; }
fi
timeout ${CHECK_TIMEOUT:-300} "$BIN" "$@" 2>&1 | tee -a "$LOG"
RC=${PIPESTATUS[0]}
echo "# exit status: $RC" | tee -a "$LOG"
if [ "${SANITIZE:-0}" = 1 ] && command -v compute-sanitizer >/dev/null; then
  for tool in ${SAN_TOOLS:-memcheck racecheck}; do
    timeout ${SAN_TIMEOUT:-60} compute-sanitizer --tool $tool --print-limit 20 "$BIN" small > "$OUT/sanitizer_$tool.txt" 2>&1
    echo "# compute-sanitizer $tool (small mode): exit $?, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer_$tool.txt" | tr '\n' ' ')" | tee -a "$LOG"
  done
fi
exit $RC
