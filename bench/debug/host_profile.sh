#!/usr/bin/env bash
# The host cost of one call from C, instruction by instruction, on a machine with no GPU: the C
# library and bench/c/host_cost.c run over bench/debug/stub_driver.c (a stand-in libcuda that
# launches nothing) under valgrind's callgrind. Prints the host_cost line (the stub's wall time:
# the library's part of a call alone, noisy on a shared machine), the instructions a call takes
# (callgrind's total over host_cost's 16000 calls, setup included) and the functions that take
# them. Instruction counts are what to compare between commits; the device's figures are what
# a call costs.
#
#   bash bench/debug/host_profile.sh [OUT_DIR]     (default: a temporary directory)
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
out=${1:-$(mktemp -d)}
mkdir -p "$out"
command -v valgrind >/dev/null || { echo "host_profile: valgrind is not installed" >&2; exit 2; }
cargo build --release -p gemm-aot-c >&2
cc -O2 -Wall -shared -fPIC -o "$out/libcuda.so.1" bench/debug/stub_driver.c
ln -sf libcuda.so.1 "$out/libcuda.so"
cp target/release/libgemm_aot.so "$out/"
cc -std=c11 -O2 -I capi/include bench/c/host_cost.c -L "$out" -lgemm_aot -ldl -lm -o "$out/host_cost"
cd "$out"
LD_LIBRARY_PATH=. ./host_cost
LD_LIBRARY_PATH=. valgrind --tool=callgrind --callgrind-out-file=callgrind.out ./host_cost 2>callgrind.log >/dev/null
total=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' callgrind.log)
echo "instructions: $total over 16000 calls ($((total / 16000)) a call, setup included)"
callgrind_annotate --inclusive=yes callgrind.out 2>/dev/null |
  awk '/PROGRAM TOTALS/{go=1; next} go && /^ *[0-9,]+ /{ n=$1; gsub(",", "", n);
       sub(/^ *[0-9,]+ +\( *[0-9.]+%\) +/, ""); if (n / 16000 >= 50) printf "%7d a call  %s\n", n / 16000, $0 }' |
  grep -v "below main\|libc_start\|ld-linux" | head -40
echo "(callgrind's data: $out/callgrind.out)"
