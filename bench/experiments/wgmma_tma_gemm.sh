#!/usr/bin/env bash
# Build and run bench/experiments/wgmma_tma_gemm.cu on an H200 (sm_90a), from the repository root
# or from bench/experiments. Writes the log (and the ptxas report, SASS summary) to $OUT when set.
# Usage: bench/experiments/wgmma_tma_gemm.sh [reps] [extra nvcc flags...]
#        PROFILE=1 adds Nsight Compute (ncu) on one launch of V0, V3, V5 and cuBLAS.
# Takes about 20 s on an H200 (compile included); everything runs in one process.
set -euo pipefail
cd "$(dirname "$0")"
OUT=${OUT:-${TMPDIR:-/tmp}/wgmma_tma_out}
BIN=${TMPDIR:-/tmp}/wgmma_tma_gemm
mkdir -p "$OUT"
REPS=${1:-30}; shift || true
LOG=$OUT/wgmma_tma_gemm.log
{
  echo "# wgmma_tma_gemm: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader)"
  echo "# source: bench/experiments/wgmma_tma_gemm.cu sha256 $(sha256sum wgmma_tma_gemm.cu | cut -c1-16), $(nvcc --version | tail -1)"
} | tee "$LOG"
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -DHAVE_CUBLAS -Xptxas -v "$@" \
     -o "$BIN" wgmma_tma_gemm.cu -lcublas 2>&1 | grep -E "Compiling entry|registers|spill|warning|error" | tee "$OUT/ptxas.txt"
if command -v cuobjdump >/dev/null; then
  cuobjdump -sass "$BIN" > "$BIN.sass" || true
  echo "# SASS: HGMMA $(grep -c HGMMA "$BIN.sass" || true), HMMA $(grep -c 'HMMA' "$BIN.sass" || true), UTMALDG $(grep -c UTMALDG "$BIN.sass" || true), LDL/STL $(grep -cE 'LDL|STL' "$BIN.sass" || true)" | tee -a "$LOG"
  gzip -c "$BIN.sass" > "$OUT/sass.txt.gz"
fi
set -o pipefail
timeout 150 "$BIN" "$REPS" 2>&1 | tee -a "$LOG"
# Optional: Nsight Compute on one launch of V0, V3, V5 and cuBLAS at 4096 x 14336 x 4096 (clocks left alone).
if [ "${PROFILE:-0}" = 1 ] && command -v ncu >/dev/null; then
  timeout 240 ncu --clock-control none --section SpeedOfLight --section ComputeWorkloadAnalysis \
      --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy \
      "$BIN" profile > "$OUT/ncu.txt" 2>&1 || echo "ncu failed: $?"
  grep -E "^  [a-zA-Z_].*\(|Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|L2 Hit Rate|Executed Ipc Active|Registers Per|Grid Size|Block Size|Dynamic Shared" "$OUT/ncu.txt" | head -80
fi
