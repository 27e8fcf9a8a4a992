#!/bin/bash
# Device call 1: every candidate kernel (the new decode and 192-column tiles among them) against
# the routed bits; `gemm-aot tune --op nn` over them; the shipped routes on the holdout list and
# TN over the TN-retuned routes; the fronts (refactored fast path) and the GPU-filling batch case.
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
S=$R/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/card.txt
t0=$(date +%s)
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s" >> $S; }
left() { echo $(( $1 - ($(date +%s) - t0) )); }
bash .device/d1/unpack; B=.device/d1/bin
C=$(cat .device/commit)
(cd runtime && timeout 120 ../$B/gpu_tensor_core-* --include-ignored --test-threads=1 --nocapture every_candidate) > $R/every_candidate.log 2>&1; rc=$?; st every_candidate $rc
if [ $rc = 0 ]; then
  cp specs/sm90a.tuned.toml $R/sm90a.tuned.before.toml
  timeout 270 $B/gemm-aot-tune --tier sm90a --shapes bench/shapes/models.toml --op nn --reps 12 --out specs/sm90a.tuned.toml --json $R/tune_nn.json > $R/tune_nn.log 2>&1; st tune_nn $?
  cp specs/sm90a.tuned.toml $R/sm90a.tuned.after_nn.toml
fi
timeout 60 $B/gemm-aot-bench --policy tensor-core --shapes bench/shapes/holdout.toml --m 1,16,64,256,1024,4096 --dtype bf16 --commit $C --out $R/holdout > $R/bench_holdout.log 2>&1; st bench_holdout $?
NK=$(cat .device/nk50)
timeout 45 $B/gemm-aot-bench --policy tensor-core --op tn --m 1024,4096 --dtype bf16 --nk $NK --commit $C --out $R/tn > $R/bench_tn.log 2>&1; st bench_tn $?
(cd tests/timing && timeout 90 ../../$B/gpu_perturbed-* --include-ignored --test-threads=1 --nocapture perturbed_candidates) > $R/gpu_perturbed_candidates.log 2>&1; st perturbed_candidates $?
(cd tests/timing && timeout $(left 530) ../../$B/gpu_perturbed-* --include-ignored --test-threads=1 --nocapture perturbed_batch) > $R/gpu_perturbed_batch.log 2>&1; st perturbed_batch $?
if [ -f .device/fronts.tar.xz ] && [ $(left 560) -gt 60 ]; then
  tar xJf .device/fronts.tar.xz -C .device
  site=$(mktemp -d)/site
  python3 -m pip install --quiet --no-deps --no-index --target $site .device/fronts/gemm_aot-*.whl > $R/pip.log 2>&1; st pip $?
  export PYTHONPATH=$site GEMM_AOT_REQUIRE_CUDA=1
  (cd python/tests && timeout $(left 560) python3 -m unittest -v test_gpu) > $R/test_gpu.log 2>&1; st test_gpu $?
  [ $(left 560) -gt 45 ] && { (cd python/tests && timeout $(left 560) python3 -m unittest -v test_real_client) > $R/test_real_client.log 2>&1; st test_real_client $?; }
  [ $(left 560) -gt 35 ] && { timeout $(left 560) python3 bench/python/front.py --out $R/python_front.json > $R/python_front.log 2>&1; st front_bench $?; }
  [ $(left 560) -gt 20 ] && { timeout $(left 560) python3 bench/python/diag.py > $R/diag.log 2>&1; st diag $?; }
fi
cat $S
