#!/bin/bash
# Device call 4: Nsight Compute on the decode kernel where SMs idle (1 x 3072 x 8192, dec32: 96
# CTAs) and where it streams best (1 x 128256 x 4096, dec64), and on cuBLAS's kernel beside it.
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
bash .device/d2/unpack; B=.device/d2/bin
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats"
for nk in 3072x8192 128256x4096; do
  timeout 100 ncu --kernel-name regex:tcdec --launch-count 2 $S \
    $B/gemm-aot-bench --policy tensor-core --m 1 --dtype bf16 --nk $nk --commit ncu --out $R/b > $R/ncu_ours_$nk.log 2>&1
  echo "ours $nk rc=$?" >> $R/summary.txt
  timeout 100 ncu --kernel-name regex:'^(gemv|sm90_|cutlass|xmma|gemmSN|splitK|gemmk1|ampere|sm80_)' --launch-count 2 $S \
    $B/gemm-aot-bench --policy tensor-core --m 1 --dtype bf16 --nk $nk --commit ncu --out $R/b > $R/ncu_cublas_$nk.log 2>&1
  echo "cublas $nk rc=$?" >> $R/summary.txt
done
cat $R/summary.txt
