#!/usr/bin/env bash
# The exact policy's large-m kernels against each other and cuBLAS SGEMM (pedantic): build here,
# run on the H200.
#   bash bench/experiments/fma_exact.sh build   # here: generates sm90a's units, builds .fmabuild/fma_exact
#   bash bench/experiments/fma_exact.sh run     # on the GPU machine (carry .fmabuild): writes fma_exact.log to $OUT
# Kernels: the shipped fma.tiled (the reference bits) and fma.mid, then every fmaw tile of
# specs/sm90a.toml, then every fmaws tile (K split over a cluster), nn f32 (fma_exact.cu says what is checked).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${FMA_BUILD:-.fmabuild}
case "${1:-}" in
build)
  . bench/experiments/toolchain.sh  # NVCC and CU
  mkdir -p "$BUILD"
  cargo run --release -q -p gemm-codegen --bin gemm-aot -- build --no-cubins --tier sm90a --out "$BUILD/gen" > "$BUILD/gen.txt"
  python3 - "$BUILD" <<'PY'
import re, sys
build = sys.argv[1]
def blocks(unit):
    """The generated unit's preamble and its kernels' blocks (config struct + entry), by name."""
    text = open(f"{build}/gen/cuda/sm90a/{unit}.cu").read()
    parts = re.split(r"\n(?=// \S+ (?:nn|tn|nt) )", text)
    out = {}
    for p in parts[1:]:
        name = re.search(r"__global__ void .*?(gemm_\w+)\(const", p).group(1)
        out[name] = p
    return parts[0], out
ref = "gemm_sm90a_fma_nn_f32_f32_f32_tiled_m128n128k8"
chosen = []
for unit, pattern in (("fma", r"gemm_sm90a_fma_nn_f32_f32_f32_\w+"), ("fmaw", r"gemm_sm90a_fmaw_nn_f32_f32_f32_\w+"),
                      ("fmaws", r"gemm_sm90a_fmaws_nn_f32_f32_f32_\w+")):
    head, ks = blocks(unit)
    names = sorted((n for n in ks if re.fullmatch(pattern, n)), key=lambda n: n != ref)
    open(f"{build}/sm90a_{unit}.cu", "w").write(head + "\n" + "\n".join(ks[n] for n in names))
    chosen += names
chosen.sort(key=lambda n: n != ref)
assert chosen[0] == ref, "the reference kernel is not generated: update fma_exact.sh"
open(f"{build}/fma_exact_kernels.inc", "w").write(
    "#define KERNELS {" + ", ".join(f"KERNEL({n})" for n in chosen) + "}\n")
print("kernels:", " ".join(chosen))
PY
  mkdir -p "$BUILD/sm90a"
  for u in fma fmaw fmaws; do mv "$BUILD/sm90a_$u.cu" "$BUILD/sm90a/$u.cu"; done
  flags=(-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I kernels-templates -I "$BUILD" -I "$BUILD/gen/cuda/include" -I "$CU/include" -L "$CU/lib" -Xptxas -v)
  "$NVCC" "${flags[@]}" -o "$BUILD/fma_exact" bench/experiments/fma_exact.cu -ldl > "$BUILD/ptxas.txt" 2>&1 || { tail -30 "$BUILD/ptxas.txt"; exit 1; }
  grep -E "Compiling entry|registers|spill" "$BUILD/ptxas.txt" | sed 's/ptxas info    : //' || true
  echo "built $BUILD/fma_exact"
  ;;
run)
  OUT=${OUT:-${TMPDIR:-/tmp}/fma_exact_out}
  mkdir -p "$OUT"
  { echo "# fma_exact: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
    "$BUILD/fma_exact" "${REPS:-20}"; } 2>&1 | tee "$OUT/fma_exact.log"
  cp "$BUILD/ptxas.txt" "$OUT/fma_exact_ptxas.txt"
  ;;
*) echo "usage: $0 build|run" >&2; exit 2 ;;
esac
