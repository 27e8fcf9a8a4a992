#!/usr/bin/env bash
# Session 58, call 6: the fmaw tiles of 16 x 8 elements a thread with the fragment pipeline (w256t16p,
# w256k8t16p) against the tiles without it, fmaw.w128 and pedantic SGEMM, bits and times (fma_exact), then their warp
# stall reasons under Nsight Compute.
#   bash bench/experiments/fma_exact.sh build      (carry [".fmabuild"])
#   COMMIT=<head> bash bench/results/2026-12-07-session58/call6.sh
set -u
R=$OUT/call6; mkdir -p $R
echo "commit ${COMMIT:?set COMMIT}" | tee $R/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/card.txt
(OUT=$R REPS=15 timeout 120 bash bench/experiments/fma_exact.sh run) > $R/fma_exact.out 2>&1; echo "fma_exact rc=$?" | tee -a $R/summary.txt
command -v ncu >/dev/null || export PATH=$PATH:/usr/local/cuda/bin
M=""
for s in barrier long_scoreboard short_scoreboard mio_throttle lg_throttle math_pipe_throttle not_selected selected wait dispatch_stall no_instruction branch_resolving drain membar misc sleeping tex_throttle imc_miss; do
  M="$M,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio"
done
M="${M#,},smsp__issue_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__warps_active.avg.per_cycle_active,gpu__time_duration.sum"
# fma_exact with 1 rep launches each of our kernels 3 times a shape (the bits, then a timed pair)
# and cuBLAS twice; the third shape is 4096^3.
for k in fmaw_nn_f32_f32_f32_w256t16p fmaw_nn_f32_f32_f32_w256k8t16p; do
  timeout 90 ncu --kernel-name regex:$k --launch-skip 6 --launch-count 1 --metrics "$M" .fmabuild/fma_exact 1 > $R/ncu_$k.txt 2>&1; echo "ncu $k rc=$?" | tee -a $R/summary.txt
done
grep -E "t16|cublas|fmaw_nn_f32_f32_f32_w128_" $R/fma_exact.log | awk '$1>=512' | head -40
for f in $R/ncu_*.txt; do echo "== $f"; grep -E "^  [a-z]|stalled|issue_active|per_second|inst_executed|pipe_fma|bank_conflicts|warps_active|duration" $f | grep -v "^==PROF" | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' ; done
cd $OUT && tar cJf call6.tar.xz call6 && rm -rf call6
