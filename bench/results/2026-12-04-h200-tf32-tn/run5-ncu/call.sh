bash .devx/unpack
export LD_LIBRARY_PATH=$(dirname $(find / -name 'libcublas.so.1*' 2>/dev/null | head -1))
for pat in "tcwide32tn_tn_f32_f32_f32_wide" "tcwide32_nn_f32_f32_f32_wide"; do
op=tn; [[ $pat == *_nn_* ]] && op=nn
echo "== ncu $pat"
timeout 150 ncu --kernel-name regex:"$pat" --launch-count 1 --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section LaunchStats .devx/bin/gemm-aot-tune --tier sm90a --shapes .devx/one.toml --op $op --dtype f32 --policy tensor-core --buckets 4096 --out /tmp/t.toml --json /tmp/t.json --time-limit 60 2>&1 | grep -v "^\s*$" | grep -vE "^\[|tuning|chosen|wrote" | tail -75
done
