#!/bin/bash
cd "$(dirname "$0")/.."
bash .device/unpack
B=$PWD/.device/bin
R=$OUT/r; mkdir -p $R/holdout
S=$R/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/card.txt
export GEMM_TEST_SEED=20261201
t0=$(date +%s)
(cd runtime && timeout 100 $B/gpu_split_k --include-ignored --test-threads=1 --nocapture) > $R/gpu_split_k.log 2>&1; echo "gpu_split_k rc=$? $(( $(date +%s) - t0 )) s" >> $S
(cd runtime && timeout 100 $B/gpu_tensor_core --include-ignored --test-threads=1) > $R/gpu_tensor_core.log 2>&1; echo "gpu_tensor_core rc=$? $(( $(date +%s) - t0 )) s" >> $S
(cd runtime && timeout 100 $B/gpu_repack --include-ignored --test-threads=1) > $R/gpu_repack.log 2>&1; echo "gpu_repack rc=$? $(( $(date +%s) - t0 )) s" >> $S
timeout 200 $B/gemm-aot-bench --policy tensor-core --shapes bench/shapes/models.toml --m 1,16,64,256,1024,4096 --dtype bf16 --commit 002cdc2 --out $R > $R/bench.log 2>&1; echo "bench rc=$? $(( $(date +%s) - t0 )) s" >> $S
timeout 60 $B/gemm-aot-bench --policy tensor-core --shapes bench/shapes/holdout.toml --dtype bf16 --commit 002cdc2 --out $R/holdout > $R/bench_holdout.log 2>&1; echo "holdout rc=$? $(( $(date +%s) - t0 )) s" >> $S
cp .device/empty.tuned.toml specs/sm90a.tuned.toml
timeout 230 $B/gemm-aot-tune --tier sm90a --shapes bench/shapes/models.toml --op nn --out $R/sm90a.tuned.toml --json $R/tune.json > $R/tune.log 2>&1; echo "tune rc=$? $(( $(date +%s) - t0 )) s" >> $S
[ -f $R/tune.json ] && xz -T4 $R/tune.json
cat $S
grep -E "test result|FAILED|panicked" $R/gpu_*.log | head
tail -3 $R/bench.log; tail -2 $R/tune.log
tar cJf $OUT/results.tar.xz -C $OUT r && rm -rf $R
