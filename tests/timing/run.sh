#!/usr/bin/env bash
# Timing independence on a GPU machine, in one command (docs/timing.md), from the repository root:
#   bash tests/timing/run.sh
# 1. perturbed:  gpu_perturbed: the timing-perturbation build against the shipped bits, several seeds
# 2. stress:     gpu_stress: decode and wide kernels beside a hostile co-runner and seven GEMM streams
# 3. sanitized:  gpu_sanitized plainly (writes each case's digest), then under compute-sanitizer
#                memcheck (every case), racecheck and synccheck (the small cases), each run
#                comparing its outputs with float64, a second run and the plain run's digests.
# Test executables: DEVICE_DIR/bin (default .device/bin; packed executables are unpacked with its
# `unpack`), else built here with cargo (release). Logs go to $OUT (default ./timing-out); the
# summary is printed last. STEPS="perturbed stress sanitized" picks steps; GEMM_PERTURB_SEEDS,
# GEMM_STRESS_RUNS and GEMM_TEST_SEED pass through to the tests. Exits non-zero on any failure.
set -u
root=$(pwd)
out=${OUT:-$root/timing-out}
mkdir -p "$out"
dev=$root/${DEVICE_DIR:-.device}
if [ -f "$dev/unpack" ]; then bash "$dev/unpack"; fi
bin() {
  local b
  # cargo's name (<name>-<hash>, device-pack) or the bare name (bench/pack-subset.sh)
  b=$(ls "$dev"/bin/"$1" "$dev"/bin/"$1"-* 2>/dev/null | head -1)
  if [ -z "$b" ]; then
    b=$(ls -t "$root"/target/release/deps/"$1"-* 2>/dev/null | grep -v '\.d$' | head -1)
  fi
  echo "$b"
}
if [ -z "$(bin gpu_perturbed)" ]; then
  cargo test --release -p gemm-timing-tests --no-run > "$out/build.log" 2>&1 || { tail -20 "$out/build.log"; exit 1; }
fi
export GEMM_TEST_SEED=${GEMM_TEST_SEED:-$(date +%s)}
summary=()
fail=0
# One test executable with every test included (GPU tests are ignored elsewhere).
t() {
  local log=$1 exe=$2
  shift 2
  (cd "$root/tests/timing" && "$exe" --include-ignored --test-threads=1 --nocapture "$@") > "$log" 2>&1
  local rc=$?
  [ $rc = 0 ] || fail=1
  summary+=("$(basename "$log" .log): rc $rc; $(grep -E '^test result' "$log" | tail -1)")
}
san() {
  local tool=$1
  shift
  local log=$out/sanitized_$tool.log
  (cd "$root/tests/timing" && timeout "${SAN_TIMEOUT:-900}" compute-sanitizer --tool "$tool" --error-exitcode 9 \
      "$(bin gpu_sanitized)" --include-ignored --test-threads=1 --nocapture "$@") > "$log" 2>&1
  local rc=$?
  summary+=("sanitized under $tool: rc $rc; $(grep -E '^test result' "$log" | tail -1); $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tr '\n' ' ')")
  # Excused only when the tool's own exit code (9: hazards) is the whole failure: every test passed.
  if [ $rc = 9 ] && [ "$tool" = racecheck ] && grep -q '^test result: ok' "$log" && racecheck_split_only "$log"; then rc=0; fi
  [ $rc = 0 ] || fail=1
}
# racecheck does not model mbarrier release/acquire between the CTAs of a cluster: it reports
# hazards on distributed shared memory read after such a wait, as on a real race. The probe
# (tests/timing/probes/racecheck_cluster.cu, the kernels' own sync helpers) shows it on this
# machine: correct reads, ordered by the split-K kernels' pattern, reported as hazards (mode 0);
# none under a cluster barrier (mode 1); a real race reported (mode 2). When the probe shows
# that, and every hazard of the run lies in a K-split kernel (tile names ending s<split>, whose
# partials cross CTAs that way), the run passes with the count said; the perturbed step
# checks those kernels' timing independence instead. Any other hazard fails.
racecheck_split_only() {
  local log=$1 probe=$out/racecheck_probe
  local others split
  others=$(grep 'Race reported' "$log" | grep -cvE 'gemm_sm[0-9a-z]+_[a-z0-9]+_[a-z]+_[a-z0-9_]+_[a-z]+[0-9]*s[0-9]+_m[0-9]+n[0-9]+k[0-9]+')
  split=$(grep -c 'Race reported' "$log")
  [ "$others" = 0 ] && [ "$split" -gt 0 ] || return 1
  nvcc -std=c++17 -arch=sm_90a -I "$root/kernels-templates/tc" -o "$probe" \
    "$root/tests/timing/probes/racecheck_cluster.cu" > "$out/racecheck_probe.log" 2>&1 || return 1
  local m0 m1 m2
  for mode in 0 1 2; do
    echo "== racecheck, probe mode $mode" >> "$out/racecheck_probe.log"
    compute-sanitizer --tool racecheck "$probe" $mode >> "$out/racecheck_probe.log" 2>&1
  done
  m0=$(awk '/probe mode 0/{f=1} /probe mode 1/{f=0} f' "$out/racecheck_probe.log" | grep -cE 'Race reported|hazard detected')
  m1=$(awk '/probe mode 1/{f=1} /probe mode 2/{f=0} f' "$out/racecheck_probe.log" | grep -cE 'Race reported|hazard detected')
  m2=$(awk '/probe mode 2/{f=1} f' "$out/racecheck_probe.log" | grep -cE 'Race reported|hazard detected')
  grep -q 'mode 0 .*: no error, 0 of 128 reads wrong' "$out/racecheck_probe.log" || return 1
  # The blind spot (mode 0 reported), the clean barrier (mode 1 not), the real race (mode 2 reported).
  [ "$m0" -gt 0 ] && [ "$m1" = 0 ] && [ "$m2" -gt 0 ] || return 1
  summary+=("racecheck: all $split hazard reports in K-split kernels; the probe shows racecheck reporting the same sync (correct reads) as a hazard ($m0 reports) and none under a cluster barrier: not counted as a failure (docs/timing.md)")
}
{
  echo "# timing run: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
  echo "# GEMM_TEST_SEED=$GEMM_TEST_SEED GEMM_PERTURB_SEEDS=${GEMM_PERTURB_SEEDS:-default} GEMM_STRESS_RUNS=${GEMM_STRESS_RUNS:-25}"
} | tee "$out/timing.log"
for step in ${STEPS:-perturbed stress sanitized}; do
  case $step in
    perturbed) t "$out/perturbed.log" "$(bin gpu_perturbed)" ;;
    stress) t "$out/stress.log" "$(bin gpu_stress)" ;;
    sanitized)
      rm -f "$out/digests.txt"
      GEMM_TIMING_DIGESTS=write:$out/digests.txt t "$out/sanitized_plain.log" "$(bin gpu_sanitized)"
      export GEMM_TIMING_DIGESTS=check:$out/digests.txt
      if command -v compute-sanitizer > /dev/null; then
        san memcheck
        GEMM_SANITIZED_CASES=small san racecheck
        GEMM_SANITIZED_CASES=small san synccheck
      else
        summary+=("sanitized: compute-sanitizer not found, only the plain run")
        fail=1
      fi
      unset GEMM_TIMING_DIGESTS ;;
    *) echo "unknown step $step" >&2; exit 2 ;;
  esac
done
{
  printf '%s\n' "${summary[@]}"
  echo "timing run: $([ $fail = 0 ] && echo all passed || echo FAILURES)"
} | tee -a "$out/timing.log"
exit $fail
