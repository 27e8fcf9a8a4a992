#!/usr/bin/env bash
# Session 51, call 1: A = c66873c (.devx), B (.devx/new) = the wheel of 7eff377 (the tensor
# reader) with the bench, gpu_raw, C library and host_cost of 5c787af (the runtime is the same).
#  0. Where Python's headers are (the reader is built only where Python.h is), B's gpu_raw
#     (session 50's gemm_raw_in_bounds bits check).
#  1-3. Session 50's call1-ab.sh: B's dispatch tests and crash probe, then A B A B host cost
#     (C, launch overhead, the Python call's pieces, which now print the reader's status),
#     B's wheel tests (test_gpu has the reader's test).
#   COMMIT_A=c66873c COMMIT_B=7eff377 bash call1.sh   (carry [".devx"])
set -u
mkdir -p .sideB/bin && tar xJf .devx/new/bins.tar.xz -C .sideB/bin
echo "=== 0. Python.h, gpu_raw"
python3 -c "import sysconfig, os; d = sysconfig.get_paths()['include']; print(d, os.path.isfile(os.path.join(d, 'Python.h')))"
timeout 120 .sideB/bin/gpu_raw --include-ignored 2>&1 | grep -E "^test |test result|panicked|assert" | tail -40
bash bench/results/2026-12-06-session50/call1-ab.sh
