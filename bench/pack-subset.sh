#!/usr/bin/env bash
# Packs a subset for a short GPU call: the release binaries gemm-aot-tune and gemm-aot-bench and
# the runtime's GPU test executables named, stripped, into .devx/bins.tar.xz (git-ignored), with
# .devx/unpack (mkdir -p .devx/bin && tar xJf .devx/bins.tar.xz -C .devx/bin). Lighter than
# ../shared/tools/device-pack, which packs every test executable.
#
#   bash bench/pack-subset.sh gpu_tensor_core gpu_repack gpu_invariance gpu_graph gpu_serving gpu_rows
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
grep -qx '/.devx/' .git/info/exclude 2>/dev/null || echo '/.devx/' >> .git/info/exclude
mkdir -p .devx
stage=$(mktemp -d)
cargo build --release -p gemm-aot-tune -p gemm-aot-bench
for t in "$@"; do
  exe=$(cargo test --release -p gemm-runtime --test "$t" --no-run --message-format=json 2>/dev/null |
    python3 -c "
import json, sys
for line in sys.stdin:
    try:
        d = json.loads(line)
    except ValueError:
        continue
    if d.get('reason') == 'compiler-artifact' and d.get('executable') and d['target']['name'] == '$t':
        print(d['executable'])")
  [ -n "$exe" ] || { echo "no test executable $t in gemm-runtime" >&2; exit 1; }
  cp "$exe" "$stage/$t"
done
cp target/release/gemm-aot-tune target/release/gemm-aot-bench "$stage/"
strip "$stage"/*
tar cJf .devx/bins.tar.xz -C "$stage" .
printf '#!/usr/bin/env bash\nmkdir -p .devx/bin && tar xJf .devx/bins.tar.xz -C .devx/bin\n' > .devx/unpack
rm -rf "$stage"
ls -la .devx/bins.tar.xz
