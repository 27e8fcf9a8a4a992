#!/usr/bin/env bash
# Why the chunked region's splits lose (session 48): Nsight Compute over one launch each of the
# unsplit 64 x 64 tile (mid64), its slotted splits (mid64s2, mid64s4d), the 128 x 128 tile
# (mid2) and the asynchronous exchange (mid2xa2), NN bf16 at 512 x 3584 and 1024 x 8192, m = 256
# and 1024 (prof.toml), launched by the tuner (--only that tile); and cuBLAS at the same shapes
# from torch, to see its grid, cluster and kernels.
# Pack: bash bench/pack-subset.sh gemm-aot-tune; carry [".devx"]. (--out is the tier's routes
# file because --from-m keeps the routes below it from that file; on the device it is a copy.)
set -u
bash .devx/unpack
B=$PWD/.devx/bin
H=bench/results/2026-12-06-session48
R=$OUT/call2; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/card.txt
SEC="--section SpeedOfLight --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis"
prof() {  # tile shapes from-m: the tile's third launch (the first shape's first m)
  timeout 120 ncu $SEC -k "regex:_$1_m" -s 2 -c 1 $B/gemm-aot-tune --tier sm90a --shapes $H/$2 --op nn --from-m $3 \
    --reps 4 --confirm 0 --only $1 --out specs/sm90a.tuned.toml > $R/ncu_$1_$3.log 2>&1
  echo "$1 $2 rc=$?"; grep -E "^  [a-z_]+.*\(|Duration|Grid Size|Cluster Size|Compute \(SM\) Throughput|Memory Throughput|L1/TEX Hit|Shared Memory" $R/ncu_$1_$3.log | head -12
}
# 512 x 3584 at m = 256 (the list's first shape and m), then 1024 x 8192 at m = 1024 alone.
for t in mid64 mid64s2 mid64s4d; do prof $t prof.toml 129; done
for t in mid2 mid2xa2 mid64s2; do prof $t prof1024.toml 513; done
if [ "${CUBLAS:-0}" = 1 ]; then
# cuBLAS (CUBLAS=1; its first run: call2-cublas/).
cat > /tmp/cub.py <<'PY'
import torch
for (m, n, k) in [(256, 512, 3584), (1024, 512, 3584), (256, 1024, 8192), (1024, 1024, 8192)]:
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        c = a @ b
    torch.cuda.synchronize()
PY
timeout 120 ncu $SEC -c 40 python3 /tmp/cub.py > $R/ncu_cublas.log 2>&1; echo "cublas rc=$?"
grep -E "^  [a-zA-Z_].*\(|Duration|Grid Size|Cluster Size|Block Size" $R/ncu_cublas.log | head -80
fi
tar cJf $OUT/call2.tar.xz -C $OUT call2
