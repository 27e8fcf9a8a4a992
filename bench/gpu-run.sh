#!/usr/bin/env bash
# One GPU session's work, run on the device machine from the repository root after
# `../shared/tools/device-pack` has built the test executables and the bench into .device/:
#   bash bench/gpu-run.sh <commit> [tests|sanitizer|example|launch|bench|ncu|tc-tests|tc-sanitizer|tc-bench]...
#   (default: tests sanitizer example launch bench)
# TESTS="gpu_graph gpu_exact" limits the tests step to those executables.
# tc-tests: the tensor-core policy's GPU tests: all of gpu_tensor_core, and the `tc_` tests of
#   gpu_invariance (batch invariance sweeps, 20 runs) and gpu_exact (float64 bound);
#   TC_TESTS="gpu_exact" limits it to those executables.
# tc-sanitizer: tests/timing/run.sh's sanitized step (also part of `sanitizer`).
# fronts: the Python wheel's GPU and real-client tests, its bench, the C example (after
#   python/pack-device.sh).
# exact-candidates: every exact kernel by name (gpu_exact's every_exact_kernel_gives_the_models_bits),
#   under memcheck and racecheck too, and bench/experiments/fma_exact.sh's run when .fmabuild is there.
# tc-bench: the tensor-core kernels against cuBLAS's default bf16/f16 GEMM (issue rows and
#   targets); TC_BENCH_ARGS="--quick" (or "--dtype bf16", ...) is passed on.
# Writes logs and bench JSON to $OUT (or ./gpu-out) and prints a short summary last.
# DEVICE_DIR=.devX reads the executables from another device-pack folder (default .device).
set -u
commit=${1:-unknown}
shift || true
steps=${*:-tests sanitizer example launch bench}
root=$(pwd)
out=${OUT:-$root/gpu-out}
mkdir -p "$out"
dev=${DEVICE_DIR:-.device}
# device-pack ships the executables packed; unpack them once.
[ -d "$root/$dev/bin" ] || { [ -f "$root/$dev/unpack" ] && bash "$root/$dev/unpack"; }
bin() { ls "$root"/$dev/bin/$1-* 2>/dev/null | head -1; }
# python/pack-device.sh's fronts (the wheel, libgemm_aot.so, the C example), when packed.
[ -d "$root/$dev/fronts" ] || { [ -f "$root/$dev/fronts.tar.xz" ] && tar xJf "$root/$dev/fronts.tar.xz" -C "$root/$dev"; }
summary=()
# One test executable (from runtime/), all its tests or those matching the filters given.
run_tests() {
  local t=$1 log=$2
  shift 2
  (cd runtime && "$(bin $t)" --include-ignored --test-threads=1 --nocapture "$@") > "$log" 2>&1
  summary+=("$(basename "$log" .log): $(grep -E '^test result' "$log" | tail -1) $(grep -c 'skipped' "$log") skip lines")
}
# The tensor-core sanitizer cases: tests/timing/run.sh's sanitized step (small and GPU-filling
# cases under memcheck, racecheck and synccheck, each output checked against float64 or the
# exact model, a second run and the plain run's digests; docs/timing.md).
tc_sanitizer() {
  (cd "$root" && STEPS=sanitized OUT="$out/timing" DEVICE_DIR=$dev bash tests/timing/run.sh)
  echo "tests/timing sanitized rc=$?"
}
for step in $steps; do
  case $step in
    tests)
      for t in ${TESTS:-gpu_exact gpu_validation gpu_invariance gpu_graph gpu_tensor_core}; do
        run_tests $t "$out/$t.log"
      done ;;
    tc-tests)
      for t in ${TC_TESTS:-gpu_tensor_core gpu_invariance gpu_exact}; do
        if [ $t = gpu_tensor_core ]; then
          run_tests $t "$out/tc_$t.log"
        else
          run_tests $t "$out/tc_$t.log" tc_
        fi
      done ;;
    tc-sanitizer)
      tc_sanitizer > "$out/compute_sanitizer_tc.log" 2>&1
      summary+=("tc sanitizer: $(grep -E 'rc=|sanitized under' "$out/compute_sanitizer_tc.log" | tr '\n' ' ')") ;;
    sanitizer)
      (
        cd runtime
        compute-sanitizer --tool memcheck --error-exitcode 9 "$(bin gpu_exact)" --include-ignored --test-threads=1 f32_to_f32_all_ops bf16_to_f32_all_ops convenience_ops bf16_to_bf16_tn_half_fallback
        echo "memcheck gpu_exact rc=$?"
        compute-sanitizer --tool memcheck --error-exitcode 9 "$(bin gpu_graph)" --include-ignored --test-threads=1
        echo "memcheck gpu_graph rc=$?"
        compute-sanitizer --tool memcheck --error-exitcode 9 "$(bin gpu_validation)" --include-ignored --test-threads=1
        echo "memcheck gpu_validation rc=$?"
        compute-sanitizer --tool racecheck --error-exitcode 9 "$(bin gpu_exact)" --include-ignored --test-threads=1 f16_to_f16_nn_nt convenience_ops
        echo "racecheck gpu_exact rc=$?"
        compute-sanitizer --tool synccheck --error-exitcode 9 "$(bin gpu_exact)" --include-ignored --test-threads=1 f32_to_f32_all_ops
        echo "synccheck gpu_exact rc=$?"
        tc_sanitizer
      ) > "$out/compute_sanitizer.log" 2>&1
      summary+=("sanitizer: $(grep -E 'rc=|ERROR SUMMARY' "$out/compute_sanitizer.log" | tr '\n' ' ')") ;;
    launch)
      "$root"/$dev/bin/gemm-aot-bench --commit "$commit" --launch-overhead --out "$out" > "$out/launch_overhead.log" 2>&1
      summary+=("launch overhead: $(grep -E 'NoObserver|Recorder|bare' "$out/launch_overhead.log" | tr -s ' ' | tr '\n' ';' || true) $(grep -i error "$out/launch_overhead.log" || true)") ;;
    example)
      "$root"/$dev/bin/gemm-mlp-example > "$out/mlp_example.log" 2>&1
      summary+=("example: $(tail -1 "$out/mlp_example.log")") ;;
    ncu)
      for m in 1 4096; do
        ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis \
          -k regex:gemm_ -c 1 "$root"/$dev/bin/gemm-aot-bench --m $m --nk 4096x4096 --dtype f32 --reps 1 --out "$out/ncu-bench"
      done > "$out/ncu.log" 2>&1
      summary+=("ncu: $(grep -c 'Section' "$out/ncu.log") sections") ;;
    bench)
      "$root"/$dev/bin/gemm-aot-bench --commit "$commit" --dtype f32,bf16 --out "$out" > "$out/bench.log" 2>&1
      summary+=("bench: $(tail -1 "$out/bench.log")") ;;
    tc-bench)
      # shellcheck disable=SC2086
      "$root"/$dev/bin/gemm-aot-bench --commit "$commit" --policy tensor-core ${TC_BENCH_ARGS:-} --out "$out" > "$out/tc_bench.log" 2>&1
      summary+=("tc-bench: $(grep -E '^tensor-core bench:|rror' "$out/tc_bench.log" | tail -2 | tr '\n' ' ') $(tail -1 "$out/tc_bench.log")") ;;
    fronts)
      # The Python and C fronts (python/pack-device.sh put the wheel and libgemm_aot.so in
      # $dev/fronts): the wheel installed beside the machine's own python3 (the one with torch
      # and transformers; a venv over it would not see them), its GPU tests and the
      # real-client test (GEMM_AOT_REQUIRE_CUDA=1: a skip is a failure), the front's bench;
      # the C example.
      [ -d "$root/$dev/fronts" ] || tar xJf "$root/$dev/fronts.tar.xz" -C "$root/$dev"
      (
        set -x
        site=$(mktemp -d)/site  # outside $OUT: the installed package is no result
        python3 -m pip install --quiet --no-deps --no-index --target "$site" "$root"/$dev/fronts/gemm_aot-*.whl
        echo "pip rc=$?"
        # The mode's native dispatch is built here, once, against the machine's torch.
        export PYTHONPATH="$site" GEMM_AOT_REQUIRE_CUDA=1 GEMM_AOT_DISPATCH_CACHE="$(dirname "$site")/cache"
        (cd "$root/python/tests" && python3 -m unittest -v test_dispatch_cpu test_gpu test_real_client)
        echo "python tests rc=$?"
        python3 "$root/bench/python/front.py" --out "$out/python_front.json"
        echo "python bench rc=$?"
        "$root"/$dev/fronts/gemm_example
        echo "c example rc=$?"
      ) > "$out/fronts.log" 2>&1
      summary+=("fronts: $(grep -E 'rc=|^Ran |^OK|^FAILED' "$out/fronts.log" | tr '\n' ' ')") ;;
    exact-candidates)
      # Every exact kernel by name against the CPU model (the fmaw candidates among them), the
      # same under memcheck (and racecheck at the small shapes), and fma_exact's bits and times against cuBLAS
      # pedantic SGEMM (when bench/experiments/fma_exact.sh build made .fmabuild and it was carried).
      run_tests gpu_exact "$out/exact_candidates.log" every_exact_kernel
      (
        cd runtime
        compute-sanitizer --tool memcheck --error-exitcode 9 "$(bin gpu_exact)" --include-ignored --test-threads=1 every_exact_kernel
        echo "memcheck every_exact_kernel rc=$?"
        compute-sanitizer --tool racecheck --error-exitcode 9 "$(bin gpu_exact)" --include-ignored --test-threads=1 --exact every_exact_kernel_gives_the_models_bits
        echo "racecheck every_exact_kernel_gives_the_models_bits rc=$?"
      ) > "$out/exact_candidates_sanitizer.log" 2>&1
      summary+=("exact candidates sanitizer: $(grep -E 'rc=|ERROR SUMMARY' "$out/exact_candidates_sanitizer.log" | tr '\n' ' ')")
      if [ -x "$root/.fmabuild/fma_exact" ]; then
        (cd "$root" && OUT="$out" bash bench/experiments/fma_exact.sh run > /dev/null 2>&1)
        summary+=("fma_exact: $(grep -c equal "$out/fma_exact.log") equal, $(grep -c diff "$out/fma_exact.log") differing")
      fi ;;
    *)
      summary+=("unknown step $step (steps: tests sanitizer example launch bench ncu tc-tests tc-sanitizer tc-bench fronts exact-candidates)") ;;
  esac
done
cat "$out/bench.log" 2>/dev/null | head -40
cat "$out/tc_bench.log" 2>/dev/null | head -80
printf '%s\n' "${summary[@]}"
