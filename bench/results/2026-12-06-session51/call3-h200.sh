#!/usr/bin/env bash
# Session 51, call 3 (on an H200 where one comes): the host cost of B's wheel (7eff377, the
# tensor reader) and C library on this card's host, then call2-bench.sh's benches at 5c787af's
# routes (the README's tables are the H200's).   COMMIT=5c787af bash call3-h200.sh  (carry [".devx"])
set -u
root=$PWD
d=$root/.sideB; mkdir -p $d/site $d/cc
tar xJf .devx/new/site.tar.xz -C $d/site; tar xJf .devx/new/c.tar.xz -C $d/cc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
lscpu | grep -E "Model name"
export GEMM_AOT_DISPATCH_CACHE=$(mktemp -d)
echo "== host cost from C (B)"
(cd $d/cc/c && LD_LIBRARY_PATH=. timeout 60 ./host_cost 2>&1 | tail -1)
echo "== the Python call's pieces (B)"
mkdir -p $OUT/call3
PYTHONPATH=$d/site timeout 150 python3 bench/python/host_breakdown.py --out $OUT/call3/host_breakdown.json 2>&1 \
  | grep -v "Warning\|Overriding\|operator:\|registered at\|dispatch key\|previous kernel\|new kernel" | tail -30
END=${END:-300} bash bench/results/2026-12-06-session51/call2-bench.sh
