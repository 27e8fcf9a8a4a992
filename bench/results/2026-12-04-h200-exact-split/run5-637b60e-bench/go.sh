#!/usr/bin/env bash
# call B: the exact invariance sweeps the first call did not reach, and the exact bench over the shape list and the table's rows.
set -u
root=$(pwd); out=${OUT:-$root/gpu-out}; mkdir -p $out
bash .devx/unpack
B=$root/.devx/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $out/card.txt
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s); timeout $limit "$@" > $out/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s)-t0 ))s $(grep -E '^test result' $out/$name.log | tail -1)"; }
cd runtime
step gpu_invariance_f32_tn 170 $B/gpu_invariance-x --include-ignored --test-threads=1 --nocapture nn_nt_f32 tn_matches_its_contract_for_every_batch twenty_runs_give_identical_bits
cd $root
step bench_exact_shapes 230 $B/gemm-aot-bench --policy exact --shapes bench/shapes/models.toml --m 1,16,32,64,128,256,512,1024,4096 --reps 20 --commit ${COMMIT:-unknown} --out $out
step bench_exact 80 $B/gemm-aot-bench --policy exact --nk 4096x4096,14336x4096,4096x14336,1024x4096 --m 1,16,32,64,128,256,512,1024,4096 --commit ${COMMIT:-unknown} --out $out
grep -E "rows over" $out/gpu_invariance_f32_tn.log | cut -c1-120
tail -3 $out/bench_exact_shapes.log
