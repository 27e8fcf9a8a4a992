# One device call: the native dispatch's error messages built as strings (dispatch.cpp at the
# commit named; call 4 found the crash in streaming an integer): B's wheel of call 2 with the
# working tree's python/gemm_aot/csrc over its own, then python/tests/test_dispatch_cpu.py and
# `bias.addmm_(x, w)` under the mode at the CUDA key (call 4's probe, statement 3).
set -u
root=$PWD
mkdir -p .sideB/site && tar xJf .devx/new/site.tar.xz -C .sideB/site
cp python/gemm_aot/csrc/* .sideB/site/gemm_aot/csrc/
export PYTHONPATH=$root/.sideB/site GEMM_AOT_DISPATCH_CACHE=$(mktemp -d)
(cd python/tests && timeout 150 python3 -m unittest -v test_dispatch_cpu 2>&1 \
  | grep -v "Warning\|Overriding\|operator:\|registered at\|dispatch key\|previous kernel\|new kernel" | tail -45)
sed -n '/^cat > \/tmp\/inplace.py/,/^PY$/p' bench/results/2026-12-06-session49/call4-segv.sh | sed '1d;$d' > /tmp/inplace.py
for i in 0 3; do timeout 60 python3 /tmp/inplace.py CUDA $i 2>&1 | grep "^==\|raised\|returned"; echo "exit ${PIPESTATUS[0]}"; done
