# One device call: python/tests/test_dispatch_cpu.py (the native dispatch at torch's CPU key,
# real torch) on both wheels of call 2, with Python's fault handler on: in call 2 it stopped
# after its seventh test on B's wheel without a summary line.
set -u
root=$PWD
for side in A B; do
  src=$root/.devx; [ $side = B ] && src=$root/.devx/new
  d=$root/.side$side; mkdir -p $d/site; tar xJf $src/site.tar.xz -C $d/site
done
export GEMM_AOT_DISPATCH_CACHE=$(mktemp -d)
cd python/tests
for side in A B; do
  echo "=== side $side"
  PYTHONPATH=$root/.side$side/site timeout 150 python3 -X faulthandler -m unittest -v test_dispatch_cpu 2>&1 \
    | grep -v "Warning\|Overriding\|operator:\|registered at\|dispatch key\|previous kernel\|new kernel" | tail -40
  echo "exit ${PIPESTATUS[0]}"
done
