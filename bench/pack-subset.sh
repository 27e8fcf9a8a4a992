#!/usr/bin/env bash
# Packs a subset for a short GPU call: the executables named, stripped, into .devx/bins.tar.xz
# (git-ignored), with .devx/unpack (mkdir -p .devx/bin && tar xJf .devx/bins.tar.xz -C .devx/bin).
# A name gemm-aot-tune or gemm-aot-bench is that release binary; any other name is one of the
# runtime's GPU test executables, or of the timing suite's (tests/timing/tests/<name>.rs).
# Lighter than ../shared/tools/device-pack, which packs every test executable: each executable
# embeds every cubin, and a device call carries 64 MiB at most, the working tree included, so a
# call's pack holds what that call runs.
#
#   bash bench/pack-subset.sh gpu_tensor_core gpu_repack gpu_invariance gpu_graph gpu_serving gpu_rows
#   bash bench/pack-subset.sh gemm-aot-tune gemm-aot-bench
#
# The name `wheel` packs the Python package instead: the wheel built from ./python, unpacked
# (a wheel is a zip of what pip would install) into .devx/site.tar.xz, 4 MB against the
# wheel's 22 (zip compresses each file alone); on the device, `bash .devx/unpack` also makes
# .devx/site, which PYTHONPATH takes.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
grep -qx '/.devx/' .git/info/exclude 2>/dev/null || echo '/.devx/' >> .git/info/exclude
mkdir -p .devx
rm -f .devx/bins.tar.xz .devx/site.tar.xz
stage=$(mktemp -d)
site=
for t in "$@"; do
  case "$t" in
    wheel)
      site=$(mktemp -d)
      python3 -m pip wheel -q --no-deps -w "$site/wheel" ./python
      (mkdir "$site/tree" && cd "$site/tree" && python3 -m zipfile -e "$site"/wheel/gemm_aot-*.whl .)
      tar cf - -C "$site/tree" . | xz -9 -T1 > .devx/site.tar.xz
      rm -rf "$site"
      site=1
      continue ;;
    gemm-aot-tune | gemm-aot-bench)
      cargo build --release -p "$t"
      cp "target/release/$t" "$stage/"
      continue ;;
  esac
  # The runtime's GPU tests, or the timing suite's (gpu_perturbed: the perturbed build).
  pkg=gemm-runtime
  [ -f "tests/timing/tests/$t.rs" ] && pkg=gemm-timing-tests
  exe=$(cargo test --release -p "$pkg" --test "$t" --no-run --message-format=json 2>/dev/null |
    python3 -c "
import json, sys
for line in sys.stdin:
    try:
        d = json.loads(line)
    except ValueError:
        continue
    if d.get('reason') == 'compiler-artifact' and d.get('executable') and d['target']['name'] == '$t':
        print(d['executable'])")
  [ -n "$exe" ] || { echo "no test executable $t in $pkg" >&2; exit 1; }
  cp "$exe" "$stage/$t"
done
echo '#!/usr/bin/env bash' > .devx/unpack
if [ -n "$(ls -A "$stage")" ]; then
  strip "$stage"/*
  # One xz stream whose window spans several executables (each about 130 MB, most of it the
  # same embedded cubins): a solid archive then stores the cubins about once. 6 executables:
  # 7.6 MB at a 512 MiB window against 28.3 MB at xz -9's 64 MiB. Compressing takes about 5 GB
  # of memory and about 80 s an executable; unpacking, 513 MiB.
  tar cf - -C "$stage" . | xz -T1 --lzma2=preset=9e,dict=512MiB > .devx/bins.tar.xz
  echo 'mkdir -p .devx/bin && tar xJf .devx/bins.tar.xz -C .devx/bin' >> .devx/unpack
fi
[ -n "$site" ] && echo 'mkdir -p .devx/site && tar xJf .devx/site.tar.xz -C .devx/site' >> .devx/unpack
rm -rf "$stage"
ls -la .devx/*.tar.xz
