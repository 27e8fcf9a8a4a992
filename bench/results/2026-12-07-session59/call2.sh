#!/usr/bin/env bash
# Session 59, call 2: after the exact decode routes chosen from call 1: (1) the exact bench, the
# default rows and the model list at m = 1, 8, 16 against pedantic SGEMM; (2) the timing suite's
# perturbed and sanitized steps (fmadecs's cases after the template change; fmaw's 16 x 8 tile as
# its own code path); (3) on an H200 (the README's table is the H200's; none since 86b00ec): the
# tensor-core bench over the model list (bf16 NN), NT and TN at m = 1024 and 4096, the holdout list.
#   bash bench/pack-subset.sh gemm-aot-tune gemm-aot-bench gpu_perturbed gpu_sanitized gpu_exact
#   COMMIT=<head> END=570 bash bench/results/2026-12-07-session59/call2.sh      (carry [".devx"])
set -u
bash .devx/unpack
B=$PWD/.devx/bin
C="${COMMIT:?set COMMIT}"
R=$OUT/call2; mkdir -p $R
S=$R/summary.txt
echo "commit $C" | tee $S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/card.txt
t0=$(date +%s)
END=${END:-570}
cap() { v=$(( END - ($(date +%s) - t0) )); [ $v -gt $1 ] && v=$1; [ $v -lt 5 ] && v=5; echo $v; }
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s $(grep -E 'test result|geometric' $3 2>/dev/null | tail -1)" | tee -a $S; }
NK=$(grep -o -- "--nk [0-9x,]*" bench/results/2026-12-05-h200-session39/tune-nt.sh)
timeout $(cap 45) $B/gemm-aot-bench --policy exact --commit $C --out $R/exact > $R/bench_exact.log 2>&1; st bench_exact $? $R/bench_exact.log
timeout $(cap 70) $B/gemm-aot-bench --policy exact --shapes bench/shapes/models.toml --m 1,8,16 --commit $C --out $R/models_decode > $R/bench_exact_decode.log 2>&1; st bench_exact_decode $? $R/bench_exact_decode.log
T=$(cap 250)
OUT=$R/timing DEVICE_DIR=.devx STEPS="perturbed sanitized" GEMM_TEST_SEED=20261211 SAN_TIMEOUT=160 \
  timeout $T bash tests/timing/run.sh > /dev/null 2>&1
tail -8 $R/timing/timing.log | tee -a $S
rm -f $R/timing/racecheck_probe
if grep -q H200 $R/card.txt; then
  timeout $(cap 80) $B/gemm-aot-bench --policy tensor-core --shapes bench/shapes/models.toml --dtype bf16 --commit $C --out $R/nn > $R/bench_nn.log 2>&1; st bench_nn $? $R/bench_nn.log
  timeout $(cap 50) $B/gemm-aot-bench --policy tensor-core --op tn --m 1024,4096 --dtype bf16 --commit $C $NK --out $R/tn > $R/bench_tn.log 2>&1; st bench_tn $? $R/bench_tn.log
  timeout $(cap 50) $B/gemm-aot-bench --policy tensor-core --op nt --m 1024,4096 --dtype bf16 --commit $C $NK --out $R/nt > $R/bench_nt.log 2>&1; st bench_nt $? $R/bench_nt.log
  timeout $(cap 40) $B/gemm-aot-bench --policy tensor-core --shapes bench/shapes/holdout.toml --dtype bf16 --commit $C --out $R/holdout > $R/bench_holdout.log 2>&1; st bench_holdout $? $R/bench_holdout.log
else
  echo "tensor-core benches skipped: not an H200" | tee -a $S
fi
xz -9 $R/*/*.json 2>/dev/null
cat $S
cd $OUT && tar cJf call2.tar.xz call2 && rm -rf call2
