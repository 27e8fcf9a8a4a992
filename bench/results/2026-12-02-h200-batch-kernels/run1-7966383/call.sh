#!/bin/bash
# The batched kind (bmm in one launch) and raw calls' tensor maps cached by address: the Rust
# GPU tests of the raw path and the tensor-core suite, the tc invariance tests, the fronts'
# tests, the real client, the profile and the front's bench (the tax).
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
S=$R/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/card.txt
t0=$(date +%s)
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s" >> $S; }
bash .device/d7/unpack; B=.device/d7/bin
timeout 60 $B/gpu_raw --ignored --test-threads=1 --nocapture > $R/gpu_raw.log 2>&1; st gpu_raw $?
timeout 90 $B/gpu_tensor_core --ignored --test-threads=1 > $R/gpu_tensor_core.log 2>&1; st gpu_tensor_core $?
timeout 120 $B/gpu_invariance --ignored --test-threads=1 tc_ > $R/gpu_invariance_tc.log 2>&1; st gpu_invariance_tc $?
tar xJf .device/fronts.tar.xz -C .device
timeout 60 python3 -m pip install --quiet --no-deps --no-index --target /tmp/site .device/fronts/gemm_aot-*.whl > $R/pip.log 2>&1; st pip $?
export PYTHONPATH=/tmp/site GEMM_AOT_REQUIRE_CUDA=1
(cd python/tests && timeout 60 python3 -m unittest -v test_gpu) > $R/test_gpu.log 2>&1; st test_gpu $?
(cd python/tests && timeout 100 python3 -m unittest -v test_real_client) > $R/test_real_client.log 2>&1; st test_real_client $?
timeout 60 .device/fronts/gemm_example > $R/gemm_example.log 2>&1; st gemm_example $?
timeout 90 python3 bench/python/diag.py > $R/diag.log 2>&1; st diag $?
timeout 120 python3 bench/python/front.py --out $R/python_front.json > $R/python_front.log 2>&1; st front_bench $?
cat $S
