#!/usr/bin/env bash
# Device call for the session after 43: first the TN bench at m = 1024 and 4096 over the model
# list's 50 (n, k) on the packed routes (session 43's TN tune included: its bench after), then
# the TN tune of the three LM heads that run did not reach (tn-rest.toml, --from-m 513),
# rewriting specs/sm90a.tuned.toml in place (copy it back from the archive; its routes are
# benched once committed). Everything in one archive, $OUT/tn-rest.tar.xz (a call returns at
# most 8 files).
# Pack: bash bench/pack-subset.sh gemm-aot-bench gemm-aot-tune; COMMIT=<packed commit>; run with
# carry [".devx"] (git-ignored, so it travels only when carried).
set -u
bash .devx/unpack
B=$PWD/.devx/bin
C="${COMMIT:?set COMMIT}"
R=$OUT/tn-rest; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/card.txt
NK=$(grep -o -- "--nk [0-9x,]*" bench/results/2026-12-05-h200-session39/tune-nt.sh)
t0=$(date +%s)
timeout 60 $B/gemm-aot-bench --policy tensor-core --op tn --m 1024,4096 --dtype bf16 --commit $C $NK --out $R/tn > $R/bench_tn.log 2>&1
echo "bench_tn rc=$? $(( $(date +%s) - t0 )) s"; tail -2 $R/bench_tn.log | head -1
timeout 300 $B/gemm-aot-tune --tier sm90a --shapes bench/results/2026-12-05-session43/tn-rest.toml --op tn --from-m 513 --reps 8 --time-limit 240 \
  --out specs/sm90a.tuned.toml --json $R/tune_tn_rest.json > $R/tune_tn_rest.log 2>&1
echo "tune_tn_rest rc=$? $(( $(date +%s) - t0 )) s"; grep -c chosen $R/tune_tn_rest.log; tail -1 $R/tune_tn_rest.log
cp specs/sm90a.tuned.toml $R/
tar cJf $OUT/tn-rest.tar.xz -C $OUT tn-rest
