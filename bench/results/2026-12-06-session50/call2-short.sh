# The short form of call1-ab.sh, for a call with little device time left: the same packs
# (A: .devx, B: .devx/new), most telling first, so a call cut short still says the most.
#  1. The host cost from C, A then B, twice; `gemm_aot.mm(a, b, out=o)` on a 1 x 64 x 64 bf16
#     product (bench/python/host_timing.py's measure), A then B, twice.
#  2. B: session 49's crashing probe `bias.addmm_(x, w)` under the mode at the CUDA key, and
#     a wrong out= dtype; then test_dispatch_cpu.py whole, test_gpu.py, the launch overhead.
#   COMMIT_A=... COMMIT_B=... bash call2-short.sh
set -u
: "${COMMIT_A:?}" "${COMMIT_B:?}"
root=$PWD
for side in A B; do
  src=$root/.devx; [ $side = B ] && src=$root/.devx/new
  d=$root/.side$side; mkdir -p $d/bin $d/site $d/cc
  tar xJf $src/site.tar.xz -C $d/site; tar xJf $src/c.tar.xz -C $d/cc
done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
lscpu | grep -E "Model name"
export GEMM_AOT_DISPATCH_CACHE=$(mktemp -d)
quiet() { grep -v "Warning\|Overriding\|operator:\|registered at\|dispatch key\|previous kernel\|new kernel"; }
cat > /tmp/mm_out.py <<'PY'
import sys, torch, gemm_aot
sys.path.insert(0, "bench/python")
from host_timing import per_call
a = torch.randn(1, 64, device="cuda", dtype=torch.bfloat16)
b = torch.randn(64, 64, device="cuda", dtype=torch.bfloat16)
o = torch.empty(1, 64, device="cuda", dtype=torch.bfloat16)
gemm_aot.mm(a, b, out=o)
for label, f in [("gemm_aot.mm(a, b, out=o)", lambda: gemm_aot.mm(a, b, out=o)),
                 ("o.add_(0)", lambda: o.add_(0)),
                 ("torch.mm(a, b, out=o)", lambda: torch.mm(a, b, out=o))]:
    r = per_call(f, calls=2000, rounds=5)
    print("%7.3f us  %s  (rounds: %s)" % (r["us_per_call_median"], label,
          " ".join("%.2f" % x for x in r["rounds"])), flush=True)
PY
for round in 1 2; do
  for side in A B; do
    c=COMMIT_$side; d=$root/.side$side
    echo "=== 1. round $round, side $side (${!c})"
    (cd $d/cc/c && LD_LIBRARY_PATH=. timeout 60 ./host_cost 2>&1 | tail -1)
    PYTHONPATH=$d/site timeout 60 python3 /tmp/mm_out.py 2>&1 | quiet | tail -4
  done
done
echo "=== 2. B: the in-place probe at the CUDA key (3: the crash of session 49; 0: a wrong out= dtype)"
sed -n '/^cat > \/tmp\/inplace.py/,/^PY$/p' bench/results/2026-12-06-session49/call4-segv.sh | sed '1d;$d' > /tmp/inplace.py
for i in 3 0; do
  PYTHONPATH=$root/.sideB/site timeout 90 python3 /tmp/inplace.py CUDA $i 2>&1 | grep "^==\|raised\|returned"
  echo "exit ${PIPESTATUS[0]}"
done
for t in test_dispatch_cpu test_gpu; do
  echo "== $t (B)"
  (cd python/tests && PYTHONPATH=$root/.sideB/site GEMM_AOT_REQUIRE_CUDA=1 timeout 150 python3 -m unittest -v $t 2>&1 \
    | quiet | grep -E "ok$|FAIL|ERROR|Error|Ran |^OK|assert|skipped" | tail -50)
done
mkdir -p .sideB/bin && tar xJf .devx/new/bins.tar.xz -C .sideB/bin
timeout 120 .sideB/bin/gemm-aot-bench --launch-overhead --commit $COMMIT_B --out $OUT/B 2>&1 | tail -14
