#!/usr/bin/env bash
# Builds what the fronts need on the GPU machine (which has no Rust) into .device/fronts:
# the release wheel of python/, the C example and bench/c/host_cost.c linked against libgemm_aot.so (found
# beside it through its rpath). Run after ../shared/tools/device-pack, from the repository
# root; then `bash bench/gpu-run.sh <commit> fronts` there.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
out=.device/fronts
rm -rf "$out" && mkdir -p "$out"
python3 -m pip wheel --no-deps --quiet -w "$out" ./python
cargo build --release -p gemm-aot-c
cp target/release/libgemm_aot.so "$out/"
strip "$out/libgemm_aot.so"
cc -std=c11 -O2 -Wall -Wextra -Werror -pedantic -I capi/include examples/c/gemm_example.c \
  -L "$out" -Wl,-rpath,'$ORIGIN' -lgemm_aot -ldl -lm -o "$out/gemm_example"
cc -std=c11 -O2 -Wall -Wextra -Werror -pedantic -I capi/include bench/c/host_cost.c \
  -L "$out" -Wl,-rpath,'$ORIGIN' -lgemm_aot -ldl -lm -o "$out/host_cost"
du -sh "$out"/*
# Packed: the library embeds every cubin (bench/gpu-run.sh unpacks it).
tar cf - -C .device fronts | xz -T0 -6 > .device/fronts.tar.xz
rm -rf "$out"
du -sh .device/fronts.tar.xz
