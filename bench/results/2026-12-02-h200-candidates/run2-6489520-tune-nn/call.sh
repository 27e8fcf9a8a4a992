#!/bin/bash
# Device call 2: `gemm-aot tune --op nn` (8 timed launches a measurement) over every candidate,
# the new decode and 192-column tiles among them; then the fronts (the refactored fast path).
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
S=$R/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/card.txt
t0=$(date +%s)
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s" >> $S; }
left() { echo $(( $1 - ($(date +%s) - t0) )); }
bash .device/d1/unpack; B=.device/d1/bin
cp specs/sm90a.tuned.toml $R/sm90a.tuned.before.toml
timeout 420 $B/gemm-aot-tune --tier sm90a --shapes bench/shapes/models.toml --op nn --reps 8 --out specs/sm90a.tuned.toml --json $R/tune_nn.json > $R/tune_nn.log 2>&1; st tune_nn $?
cp specs/sm90a.tuned.toml $R/sm90a.tuned.after_nn.toml
xz -T0 $R/tune_nn.json 2>/dev/null
tar xJf .device/fronts.tar.xz -C .device
site=$(mktemp -d)/site
python3 -m pip install --quiet --no-deps --no-index --target $site .device/fronts/gemm_aot-*.whl > $R/pip.log 2>&1; st pip $?
export PYTHONPATH=$site GEMM_AOT_REQUIRE_CUDA=1
[ $(left 540) -gt 20 ] && { (cd python/tests && timeout $(left 540) python3 -m unittest -v test_gpu) > $R/test_gpu.log 2>&1; st test_gpu $?; }
[ $(left 540) -gt 45 ] && { (cd python/tests && timeout $(left 540) python3 -m unittest -v test_real_client) > $R/test_real_client.log 2>&1; st test_real_client $?; }
[ $(left 540) -gt 35 ] && { timeout $(left 540) python3 bench/python/front.py --out $R/python_front.json > $R/python_front.log 2>&1; st front_bench $?; }
[ $(left 540) -gt 15 ] && { timeout $(left 540) python3 bench/python/diag.py > $R/diag.log 2>&1; st diag $?; }
cat $S
