#!/usr/bin/env bash
# On the GPU machine: `front.py` (the invariance tax, host cost and row kernels) over the wheel
# that `bench/pack-subset.sh wheel` unpacked into .devx/site, the three paths interleaved in
# --rounds rounds, with torch's operator-override warnings left out of the output.
#   bash bench/python/front-tax.sh OUT_JSON [ROUNDS (default 6)]
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
export PYTHONPATH=$root/.devx/site GEMM_AOT_DISPATCH_CACHE=$(mktemp -d)
python3 "$root/bench/python/front.py" --out "${1:?the JSON to write}" --rounds "${2:-6}" 2>&1 |
  grep -v "Warning\|Overriding\|operator:\|registered at\|dispatch key\|previous kernel\|new kernel" |
  tail -16
