#!/usr/bin/env bash
# Build and run bench/experiments/tc_templates_check.cu (the tensor-core templates' GPU check) on an
# H200 (sm_90a). Run from anywhere; writes the log, the ptxas report and a SASS summary to $OUT.
#   TC_CHECK_BIN=path  use a binary built elsewhere (it opens cuBLAS with dlopen) if it runs here;
#                      otherwise build here with -DHAVE_CUBLAS -lcublas.
#   SANITIZE=1         also compute-sanitizer memcheck and racecheck on the small mode
#                      (SAN_TIMEOUT seconds each, default 120; SAN_TOOLS="memcheck" for one).
# Local build without cuBLAS (cuBLAS opened at run time), into the ignored .tcbuild/ that a device
# run carries (with a pip-installed toolchain, add -L <toolchain>/lib for cudart_static / cudadevrt):
#   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I kernels-templates -Xptxas -v \
#        -Xptxas -warn-spills -o .tcbuild/tc_check bench/experiments/tc_templates_check.cu -ldl
# then on the device: TC_CHECK_BIN=.tcbuild/tc_check bench/experiments/tc_templates_check.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-${TMPDIR:-/tmp}/tc_templates_check_out}
mkdir -p "$OUT"
LOG=$OUT/tc_templates_check.log
BIN=${TC_CHECK_BIN:-}
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
CUDA_LIB=$(dirname "$(dirname "$NVCC")")/lib64
export LD_LIBRARY_PATH=${CUDA_LIB}:${LD_LIBRARY_PATH:-}
{
  echo "# tc_templates_check: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null)"
  echo "# source: bench/experiments/tc_templates_check.cu sha256 $(sha256sum bench/experiments/tc_templates_check.cu | cut -c1-16), harness tc_check_common.cuh $(sha256sum bench/experiments/tc_check_common.cuh | cut -c1-16), templates $(cat kernels-templates/wgmma/*.cuh kernels-templates/mma/*.cuh kernels-templates/tc/*.cuh kernels-templates/common/*.cuh | sha256sum | cut -c1-16), $($NVCC --version 2>/dev/null | tail -1)"
} | tee "$LOG"
if [ -n "$BIN" ] && "$BIN" probe >/dev/null 2>&1; then
  echo "# binary: prebuilt ($BIN, cuBLAS through dlopen)" | tee -a "$LOG"
else
  BIN=${TMPDIR:-/tmp}/tc_templates_check
  echo "# binary: built here with -DHAVE_CUBLAS -lcublas" | tee -a "$LOG"
  "$NVCC" -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I kernels-templates -DHAVE_CUBLAS -Xptxas -v \
      -o "$BIN" bench/experiments/tc_templates_check.cu -lcublas -ldl > "$OUT/ptxas.txt" 2>&1 || { tail -30 "$OUT/ptxas.txt"; exit 1; }
  grep -cE "[1-9][0-9]* bytes spill" "$OUT/ptxas.txt" | sed 's/^/# ptxas: kernels with spills: /' | tee -a "$LOG"
fi
if command -v cuobjdump >/dev/null; then
  cuobjdump -sass "$BIN" > "${TMPDIR:-/tmp}/tc_check.sass" 2>/dev/null || true
  echo "# SASS: HGMMA $(grep -c HGMMA "${TMPDIR:-/tmp}/tc_check.sass"), HMMA $(grep -c HMMA "${TMPDIR:-/tmp}/tc_check.sass"), UTMALDG $(grep -c UTMALDG "${TMPDIR:-/tmp}/tc_check.sass"), UTMASTG $(grep -c UTMASTG "${TMPDIR:-/tmp}/tc_check.sass"), STSM $(grep -c STSM "${TMPDIR:-/tmp}/tc_check.sass"), LDL/STL $(grep -cE '\bLDL|\bSTL' "${TMPDIR:-/tmp}/tc_check.sass"); wgmma kernels without HGMMA: $(awk '/Function :/{if (f ~ /wgmma_tma_gemm/ && !h) n++; f=$0; h=0} /HGMMA/{h=1} END{if (f ~ /wgmma_tma_gemm/ && !h) n++; print n+0}' "${TMPDIR:-/tmp}/tc_check.sass")" | tee -a "$LOG"
fi
timeout ${TC_TIMEOUT:-300} "$BIN" "$@" 2>&1 | tee -a "$LOG"
RC=${PIPESTATUS[0]}
echo "# exit status: $RC" | tee -a "$LOG"
if [ "${SANITIZE:-0}" = 1 ] && command -v compute-sanitizer >/dev/null; then
  for tool in ${SAN_TOOLS:-memcheck racecheck}; do
    timeout ${SAN_TIMEOUT:-120} compute-sanitizer --tool $tool --print-limit 20 "$BIN" small > "$OUT/sanitizer_$tool.txt" 2>&1
    echo "# compute-sanitizer $tool (small mode): exit $?, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|ALL CHECKS|FAILURES' "$OUT/sanitizer_$tool.txt" | tr '\n' ' ')" | tee -a "$LOG"
  done
fi
exit $RC
