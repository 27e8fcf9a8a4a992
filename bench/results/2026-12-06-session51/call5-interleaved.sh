#!/usr/bin/env bash
# Session 51, call 5 (on call 4's machine, still held): the host cost of c66873c (.devx) and of
# the reviewed reader's wheel (.devx/new, 8923aa2), B A B on one host: from C, and the Python
# call's pieces. (A first try, run-first-try.log, ran A and then missed B's unpacked tree.)
export GEMM_AOT_DISPATCH_CACHE=$(mktemp -d)
for side in B A B; do
  echo "== side $side"
  s=$PWD/.s$side; src=.devx; [ $side = B ] && src=.devx/new
  mkdir -p $s/site $s/cc
  [ -d $s/site/gemm_aot ] || { tar xJf $src/site.tar.xz -C $s/site; tar xJf $src/c.tar.xz -C $s/cc; }
  (cd $s/cc/c && LD_LIBRARY_PATH=. timeout 60 ./host_cost 2>&1 | tail -1)
  mkdir -p $OUT/$side
  PYTHONPATH=$s/site timeout 100 python3 bench/python/host_breakdown.py --out $OUT/$side/host_breakdown.json 2>&1 \
    | grep -E "reader|gemm_aot.mm|torch_mm|reads and plan|add_|torch.mm|F.linear"
done 2>&1 | tee $OUT/run.log
