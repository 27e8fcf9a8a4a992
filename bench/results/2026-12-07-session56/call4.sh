#!/usr/bin/env bash
# Session 56, call 4: where the narrow-deep kernels' time goes at m = 128 (512 x 3584).
# (1) tile_loads again, now with the split's ranks in clusters along z (gemmC) and the fixed
# cost of a launch with clusters of 1-8 and no stage; (2) Nsight Compute (full set, SASS-level
# samples) over one launch each of bf16 tcwidechunk.mid64s4dnf (the routed split, 8.3 us of fixed
# cost against mid64's 3.8 in the tuner's times), bf16 tcwidechunk.mid64, and TF32
# tcdec32split.dec32cm32 (25 bytes a cycle into shared memory where the ring takes 59).
#   bash bench/pack-subset.sh gemm-aot-tune; nvcc ... -o .probe/tile_loads bench/experiments/tile_loads.cu
#   COMMIT=<head> END=300 bash bench/results/2026-12-07-session56/call4.sh      (carry [".devx", ".probe"])
set -u
bash .devx/unpack
B=$PWD/.devx/bin
C="${COMMIT:?set COMMIT}"
R=$OUT/call4; mkdir -p $R
S=$R/summary.txt
echo "commit $C" | tee $S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/card.txt
t0=$(date +%s)
END=${END:-300}
cap() { v=$(( END - ($(date +%s) - t0) )); [ $v -gt $1 ] && v=$1; [ $v -lt 5 ] && v=5; echo $v; }
st() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s" | tee -a $S; }
timeout $(cap 60) .probe/tile_loads > $R/tile_loads.log 2>&1; st tile_loads $?
D=bench/results/2026-12-07-session56
prof() {  # tile dtype
  timeout $(cap 90) ncu --set full --import-source no -k "regex:_$1_m" -s 2 -c 1 -o $R/$1 \
    $B/gemm-aot-tune --tier sm90a --dtype $2 --shapes $D/prof128.toml --op nn --from-m 65 --reps 4 --confirm 0 --only $1 \
    --out specs/sm90a.tuned.toml > $R/ncu_$1.log 2>&1; st ncu_$1 $?
  ncu -i $R/$1.ncu-rep --page source --csv --print-source sass > $R/$1_sass.csv 2>&1
  ncu -i $R/$1.ncu-rep --page details > $R/$1_details.txt 2>&1
  rm -f $R/$1.ncu-rep
}
prof mid64s4dnf bf16
prof mid64 bf16
prof dec32cm32 f32
xz -9 $R/*_sass.csv
cd $OUT && tar cJf call4.tar.xz call4 && rm -rf call4
