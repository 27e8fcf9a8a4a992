#!/usr/bin/env bash
# Session 56, call 1: (1) bench/experiments/tile_loads.cu, the TMA ring of the narrow-deep tiles with
# no math, shared tiles against rotated walks and multicast A; (2) the timing suite's perturbed and
# sanitized steps at the routes of 0782ec9 (the row tiles among the sanitizer's cases); (3) the
# tensor-core sweeps of gpu_invariance at those routes. Between (1) and (2), Nsight Compute over
# one launch of tcwidechunk.mid64 at 512 x 3584, m = 256 (session 48's prof.toml), its warp
# samples by SASS instruction: whether the consumers wait on full stages or work.
#   bash bench/pack-subset.sh gpu_perturbed gpu_sanitized gpu_invariance gemm-aot-bench gemm-aot-tune
#   nvcc ... -o .probe/tile_loads bench/experiments/tile_loads.cu (the header of tile_loads.cu)
#   COMMIT=<head> END=420 bash bench/results/2026-12-07-session56/call1.sh   (carry [".devx", ".probe"])
set -u
bash .devx/unpack
B=$PWD/.devx/bin
C="${COMMIT:?set COMMIT}"
R=$OUT/call1; mkdir -p $R
S=$R/summary.txt
echo "commit $C" | tee $S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/card.txt
t0=$(date +%s)
END=${END:-420}
cap() { v=$(( END - ($(date +%s) - t0) )); [ $v -gt $1 ] && v=$1; [ $v -lt 5 ] && v=5; echo $v; }
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s $(grep -E 'test result' $3 2>/dev/null | tail -1)" | tee -a $S; }
timeout $(cap 60) .probe/tile_loads > $R/tile_loads.log 2>&1; st tile_loads $? $R/tile_loads.log
H=bench/results/2026-12-06-session48
timeout $(cap 90) ncu --set full --import-source no -k "regex:_mid64_m" -s 2 -c 1 -o $R/mid64_256 \
  $B/gemm-aot-tune --tier sm90a --shapes $H/prof.toml --op nn --from-m 129 --reps 4 --confirm 0 --only mid64 \
  --out /tmp/scratch.tuned.toml > $R/ncu_mid64.log 2>&1; st ncu_mid64 $? /dev/null
ncu -i $R/mid64_256.ncu-rep --page source --csv --print-source sass > $R/mid64_256_sass.csv 2>&1
ncu -i $R/mid64_256.ncu-rep --page details > $R/mid64_256_details.txt 2>&1
T=$(cap 220)
OUT=$R/timing DEVICE_DIR=.devx STEPS="perturbed sanitized" GEMM_TEST_SEED=20261208 SAN_TIMEOUT=150 \
  timeout $T bash tests/timing/run.sh > /dev/null 2>&1
tail -8 $R/timing/timing.log | tee -a $S
rm -f $R/timing/racecheck_probe
(cd runtime && timeout $(cap 120) $B/gpu_invariance --include-ignored --test-threads=1 --nocapture tc_) > $R/gpu_invariance.log 2>&1; st gpu_invariance $? $R/gpu_invariance.log
cd $OUT && tar cJf call1.tar.xz call1 && rm -rf call1
