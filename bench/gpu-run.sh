#!/usr/bin/env bash
# One GPU session's work, run on the device machine from the repository root after
# `../shared/tools/device-pack` has built the test executables and the bench into .device/:
#   bash bench/gpu-run.sh <commit> [tests|sanitizer|example|launch|bench|ncu]...
#   (default: tests sanitizer example launch bench)
# TESTS="gpu_graph gpu_exact" limits the tests step to those executables.
# Writes logs and bench JSON to $OUT (or ./gpu-out) and prints a short summary last.
set -u
commit=${1:-unknown}
shift || true
steps=${*:-tests sanitizer example launch bench}
root=$(pwd)
out=${OUT:-$root/gpu-out}
mkdir -p "$out"
bin() { ls "$root"/.device/bin/$1-* 2>/dev/null | head -1; }
summary=()
for step in $steps; do
  case $step in
    tests)
      for t in ${TESTS:-gpu_exact gpu_validation gpu_invariance gpu_graph}; do
        (cd runtime && "$(bin $t)" --include-ignored --test-threads=1 --nocapture) > "$out/$t.log" 2>&1
        summary+=("$t: $(grep -E '^test result' "$out/$t.log" | tail -1)")
      done ;;
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
      ) > "$out/compute_sanitizer.log" 2>&1
      summary+=("sanitizer: $(grep -E 'rc=|ERROR SUMMARY' "$out/compute_sanitizer.log" | tr '\n' ' ')") ;;
    launch)
      "$root"/.device/bin/gemm-aot-bench --commit "$commit" --launch-overhead --out "$out" > "$out/launch_overhead.log" 2>&1
      summary+=("launch overhead: $(grep -E 'NoObserver|Recorder|bare' "$out/launch_overhead.log" | tr -s ' ' | tr '\n' ';' || true) $(grep -i error "$out/launch_overhead.log" || true)") ;;
    example)
      "$root"/.device/bin/gemm-mlp-example > "$out/mlp_example.log" 2>&1
      summary+=("example: $(tail -1 "$out/mlp_example.log")") ;;
    ncu)
      for m in 1 4096; do
        ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis \
          -k regex:gemm_ -c 1 "$root"/.device/bin/gemm-aot-bench --m $m --nk 4096x4096 --dtype f32 --reps 1 --out "$out/ncu-bench"
      done > "$out/ncu.log" 2>&1
      summary+=("ncu: $(grep -c 'Section' "$out/ncu.log") sections") ;;
    bench)
      "$root"/.device/bin/gemm-aot-bench --commit "$commit" --dtype f32,bf16 --out "$out" > "$out/bench.log" 2>&1
      summary+=("bench: $(tail -1 "$out/bench.log")") ;;
  esac
done
cat "$out/bench.log" 2>/dev/null | head -40
printf '%s\n' "${summary[@]}"
