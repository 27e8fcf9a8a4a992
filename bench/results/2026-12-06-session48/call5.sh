#!/usr/bin/env bash
# Session 48: why a slotted split's CTAs run each stage slower than the unsplit tile's
# (call2: mid64 about 400 cycles a 64-k stage on 32 SMs, mid64s2 870 on 64): Nsight Compute with
# the source counters (stall reasons by SASS instruction) and per-SM cycle spreads, for mid64
# and mid64s2 at 512 x 3584, m = 256 (prof.toml), and mid64 at m = 1024 alone (128 CTAs).
# Pack: bash bench/pack-subset.sh gemm-aot-tune; carry [".devx"].
set -u
bash .devx/unpack
B=$PWD/.devx/bin
H=bench/results/2026-12-06-session48
R=$OUT/call5; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/card.txt
MET="sm__cycles_active.max,sm__cycles_active.min,sm__cycles_active.sum,gpc__cycles_elapsed.max,l1tex__m_xbar2l1tex_read_bytes.sum,lts__t_bytes.sum,smsp__inst_executed.sum,smsp__average_warp_latency_issue_stalled_barrier,smsp__average_warp_latency_issue_stalled_long_scoreboard,smsp__average_warp_latency_issue_stalled_wait,smsp__average_warp_latency_issue_stalled_membar,smsp__average_warp_latency_issue_stalled_sleeping"
prof() {  # tile shapes from-m skip
  timeout 150 ncu --section WarpStateStats --section SourceCounters --metrics $MET --print-details all -k "regex:_$1_m" -s $4 -c 1 \
    $B/gemm-aot-tune --tier sm90a --shapes $H/$2 --op nn --from-m $3 --reps 4 --confirm 0 --only $1 \
    --out specs/sm90a.tuned.toml > $R/ncu_$1_$3.log 2>&1
  echo "$1 $2 rc=$?"; grep -E "sm__cycles_active|gpc__cycles|xbar2l1tex|lts__t_bytes|stalled" $R/ncu_$1_$3.log | head -14
}
prof mid64 prof.toml 129 2
prof mid64s2 prof.toml 129 2
prof mid64 prof1024.toml 513 2
tar cJf $OUT/call5.tar.xz -C $OUT call5
