#!/usr/bin/env bash
# Session 61, call 1: the wave model (routes' wave_fit) on the GPU. (1) gpu_invariance's wave-fit
# test: the model's kernels give the route kernel's bits at 3000 x 1000, m = 129-4096; (2) the
# bench with and without --no-wave-fit in one process each, back to back: the off-list shapes
# (offlist-shapes.toml, m = 256-4096), the model list, the holdout list, NT at the off-list (n, k);
# (3) gpu_invariance's tensor-core NN and NT sweeps (a new off-list pair, 3000 x 1000, where the
# model runs six tiles over the batch sizes), as time allows.
#   bash bench/pack-subset.sh gemm-aot-bench gpu_invariance
#   COMMIT=<head> END=420 bash bench/results/2026-12-08-session61/call1.sh      (carry [".devx"])
set -u
bash .devx/unpack
B=$PWD/.devx/bin
C="${COMMIT:?set COMMIT}"
H=bench/results/2026-12-08-session61
R=$OUT/call1; mkdir -p $R
S=$R/summary.txt
echo "commit $C" | tee $S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/card.txt
t0=$(date +%s)
END=${END:-420}
cap() { v=$(( END - ($(date +%s) - t0) )); [ $v -gt $1 ] && v=$1; [ $v -lt 5 ] && v=5; echo $v; }
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s $(grep -E 'test result|geometric' $3 2>/dev/null | tail -1)" | tee -a $S; }
(cd runtime && timeout $(cap 60) $B/gpu_invariance --include-ignored --test-threads=1 --nocapture tc_wave_fit_kernels_give_the_routes_bits) > $R/gpu_wave_fit.log 2>&1; st gpu_wave_fit $? $R/gpu_wave_fit.log
ab() {  # name, cap, bench args...
  local n=$1 c=$2; shift 2
  timeout $(cap $c) $B/gemm-aot-bench --policy tensor-core "$@" --commit $C --out $R/$n-on > $R/$n-on.log 2>&1; st $n-on $? $R/$n-on.log
  timeout $(cap $c) $B/gemm-aot-bench --policy tensor-core "$@" --no-wave-fit --commit $C --out $R/$n-off > $R/$n-off.log 2>&1; st $n-off $? $R/$n-off.log
  python3 $H/ab_summary.py $R/$n-on/*.json $R/$n-off/*.json > $R/$n-ab.txt 2>&1; tail -1 $R/$n-ab.txt | tee -a $S
}
ab offlist 70 --shapes $H/offlist-shapes.toml --dtype bf16 --reps 10
ab models 80 --shapes bench/shapes/models.toml --dtype bf16
ab holdout 50 --shapes bench/shapes/holdout.toml --dtype bf16
NK=$(python3 -c "import tomllib;d=tomllib.load(open('$H/offlist-shapes.toml','rb'));print(','.join(f\"{l['n']}x{l['k']}\" for mm in d['model'] for l in mm['layers']))")
ab offlist-nt 60 --op nt --m 256,512,1024,2048,4096 --nk $NK --dtype bf16 --reps 10
(cd runtime && timeout $(cap 120) $B/gpu_invariance --include-ignored --test-threads=1 --nocapture tc_nn_rows_follow_the_batch tc_nt_rows_follow_the_batch) > $R/gpu_invariance_tc.log 2>&1; st gpu_invariance_tc $? $R/gpu_invariance_tc.log
xz -9 $R/*/*.json 2>/dev/null
cat $S
cd $OUT && tar cJf call1.tar.xz call1 && rm -rf call1
