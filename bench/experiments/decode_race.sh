#!/usr/bin/env bash
# The mma_decode_tma release race (docs/timing.md): build here, run on the H200.
#   bash bench/experiments/decode_race.sh build   # here: derives the variants, builds two binaries into .racebuild/
#   bash bench/experiments/decode_race.sh run     # on the GPU machine (carry .racebuild): every mode, and memcheck
#   MODES="time" bash bench/experiments/decode_race.sh run   # some modes (default: quiet corunner perturb time memcheck)
# The variants come from the current kernels-templates/mma/mma_decode_tma.cuh (decode_race.cu
# says what each is). Writes decode_race.log (and the sanitizer's own output) to $OUT.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${RACE_BUILD:-.racebuild}
case "${1:-}" in
build)
  . bench/experiments/toolchain.sh  # NVCC and CU
  mkdir -p "$BUILD/variants"
  # The decode kernels' configs and TcGemmArgs, as the generator writes them for sm90a.
  cargo run --release -q -p gemm-codegen --bin gemm-aot -- build --no-cubins --tier sm90a --out "$BUILD/gen" > "$BUILD/gen.txt"
  python3 - "$BUILD/variants" <<'PY'
import sys
src = open("kernels-templates/mma/mma_decode_tma.cuh").read()
fenced = "            mbar_release_after_generic_reads(empty(s), lane);\n"
plain = "            __syncwarp();\n            if (lane == 0) mbar_arrive(empty(s));\n"
assert src.count(fenced) == 1 and src.count("struct mma_decode_tma {") == 1, "the template changed: update decode_race.sh"
# legacy: the release as it was before the fix, unfenced, where it was.
legacy = src.replace("struct mma_decode_tma {", "struct mma_decode_tma_legacy {").replace(fenced, plain)
# early: the stage released right after its wait, before it is read (a real race, the control).
wait = "            mbar_wait(full(s), ph);\n"
assert src.count(wait) == 1
early = src.replace("struct mma_decode_tma {", "struct mma_decode_tma_early {").replace(fenced, "").replace(wait, wait + plain)
for name, text in (("legacy", legacy), ("early", early)):
    open(f"{sys.argv[1]}/mma_decode_tma_{name}.cuh", "w").write(
        f"// Derived by bench/experiments/decode_race.sh from kernels-templates/mma/mma_decode_tma.cuh: variant {name}.\n" + text)
PY
  flags=(-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I kernels-templates -I "$BUILD" -I "$BUILD/gen/cuda" -I "$BUILD/gen/cuda/include" -I "$CU/include" -L "$CU/lib" -Xptxas -v)
  "$NVCC" "${flags[@]}" -o "$BUILD/decode_race" bench/experiments/decode_race.cu -ldl > "$BUILD/ptxas.txt" 2>&1 || { tail -30 "$BUILD/ptxas.txt"; exit 1; }
  "$NVCC" "${flags[@]}" -DGEMM_AOT_TIMING_PERTURBATION -o "$BUILD/decode_race_perturbed" bench/experiments/decode_race.cu -ldl > "$BUILD/ptxas_perturbed.txt" 2>&1 || { tail -30 "$BUILD/ptxas_perturbed.txt"; exit 1; }
  sha256sum kernels-templates/mma/mma_decode_tma.cuh bench/experiments/decode_race.cu bench/experiments/decode_harness.cuh "$BUILD/gen/cuda/sm90a/tcdec.cu" tests/timing/corunner.cu > "$BUILD/sources.sha256"
  echo "built $BUILD/decode_race and $BUILD/decode_race_perturbed"
  ;;
run)
  OUT=${OUT:-${TMPDIR:-/tmp}/decode_race_out}
  mkdir -p "$OUT"
  LOG=$OUT/decode_race.log
  REPS=${REPS:-20}
  {
    echo "# decode_race: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
    echo "# sources:"; sed 's/^/#   /' "$BUILD/sources.sha256"
  } | tee "$LOG"
  rc=0
  for mode in ${MODES:-quiet corunner perturb time memcheck}; do
    case $mode in
      quiet|corunner) timeout ${MODE_TIMEOUT:-90} "$BUILD/decode_race" $mode "$REPS" 2>&1 | tee -a "$LOG" || rc=1 ;;
      perturb) timeout ${MODE_TIMEOUT:-90} "$BUILD/decode_race_perturbed" perturb "$REPS" 2>&1 | tee -a "$LOG" || rc=1 ;;
      time) timeout ${MODE_TIMEOUT:-90} "$BUILD/decode_race" time "${TIME_REPS:-50}" 2>&1 | tee -a "$LOG" || rc=1 ;;
      memcheck)
        echo "# compute-sanitizer memcheck, quiet, ${SAN_REPS:-3} steps" | tee -a "$LOG"
        timeout ${SAN_TIMEOUT:-240} compute-sanitizer --tool memcheck --print-limit 10 "$BUILD/decode_race" quiet "${SAN_REPS:-3}" > "$OUT/decode_race_memcheck.txt" 2>&1 || rc=1
        grep -vE '^=+ *$' "$OUT/decode_race_memcheck.txt" | tail -12 | tee -a "$LOG" ;;
      *) echo "unknown mode $mode" >&2; rc=2 ;;
    esac
  done
  echo "# exit status: $rc" | tee -a "$LOG"
  exit $rc
  ;;
*) echo "usage: $0 build|run" >&2; exit 2 ;;
esac
