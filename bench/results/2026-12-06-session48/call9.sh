#!/usr/bin/env bash
# Session 48, review: the slotted splits without the fence against their fenced twins at chunked
# (n, k) off the tuned list (offlist.toml), NN / NT / TN, at the m the tuner times in each m range (9-16384). The routes file written
# goes to a scratch path (nothing shipped from it); the times are in the JSON.
# Pack: bash bench/pack-subset.sh gemm-aot-tune; carry [".devx"].
set -u
bash .devx/unpack
B=$PWD/.devx/bin
H=bench/results/2026-12-06-session48
R=$OUT/call9; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/card.txt
timeout 150 $B/gemm-aot-tune --tier sm90a --shapes $H/offlist.toml --op nn,nt,tn --reps 8 --confirm 0 \
  --only mid64s2nf,mid64s4dnf,mid2s4nf,mid64s2,mid64s4d,mid2s4 --time-limit 90 \
  --out /tmp/offlist.tuned.toml --json $R/tune_offlist.json > $R/tune_offlist.log 2>&1
echo "tune rc=$?" | tee -a $R/tune_offlist.log
python3 $H/pairs.py $R/tune_offlist.json mid64s2nf:mid64s2,mid64s4dnf:mid64s4d,mid2s4nf:mid2s4 2>&1 | tee $R/pairs.txt
tar cJf $OUT/call9.tar.xz -C $OUT call9
