# One device call for both: the TF32 TN bench on its new routes (.devx holding gemm-aot-bench
# alone, packed from bench/pack-subset.sh's output), TN rows' invariance through the wheel, then
# fronts-run.sh (.device/fronts holding the wheel alone). Usage: bash both-run.sh <commit>
d=bench/results/2026-12-05-h200-session36
bash .devx/unpack
export LD_LIBRARY_PATH=$(dirname $(find / -name 'libcublas.so.1*' 2>/dev/null | head -1))
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== bench: TN TF32 (tuned (n, k), then others)"
timeout 150 .devx/bin/gemm-aot-bench --policy tensor-core --dtype f32 --op tn --m 1,16,256,1024,4096 --nk 4096x4096,14336x4096,4096x14336,1024x4096,2304x768,512x3584,3584x3584,18944x3584,8192x8192,768x3072,3072x3072,5120x5120 --reps 10 --commit $1 --out $OUT/tn 2>&1 | grep -v "^  warning"
site=$(mktemp -d)/site
python3 -m pip install -q --no-deps --no-index --target "$site" .device/fronts/gemm_aot-*.whl
echo "== TN TF32 rows through the wheel: a row alone = the same row in a batch"
PYTHONPATH=$site timeout 60 python3 $d/tn_rows.py
bash $d/fronts-run.sh
