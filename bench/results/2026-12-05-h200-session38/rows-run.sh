# The row kernels on the GPU, one device call (.devx from `bash bench/pack-subset.sh gpu_rows`):
# gpu_rows plain (every row kernel's bits alone and in batches, against the tree and float64; the
# warp and block paths agree; rows alone equal launches that fill the GPU), then under memcheck
# and racecheck (the fold's shuffles and the block path's shared memory).
set -u
root=$(pwd)
bash .devx/unpack
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cd runtime
echo "== gpu_rows"
timeout 240 "$root/.devx/bin/gpu_rows" --ignored --test-threads 1 2>&1 | grep -vE "^\s*$" | tail -30
for tool in memcheck racecheck; do
  echo "== $tool: the warp and block paths"
  timeout 150 compute-sanitizer --tool $tool "$root/.devx/bin/gpu_rows" --ignored the_warp_path_and_the_block_path_give_the_same_bits 2>&1 | tail -5
done
