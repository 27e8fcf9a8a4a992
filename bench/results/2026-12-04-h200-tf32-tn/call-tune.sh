bash .devx/unpack
export LD_LIBRARY_PATH=$(dirname $(find / -name 'libcublas.so.1*' 2>/dev/null | head -1))
cd runtime
echo "== gpu_tensor_core tn tf32 candidates"
timeout 40 ../.devx/bin/gpu_tensor_core --ignored --exact tc_every_candidate_gives_the_routed_bits_tn_tf32 --nocapture --test-threads 1 2>&1 | grep -E "candidates give|skipped|panicked|test result|differ|wrong" | cut -c1-200
[ ${PIPESTATUS[0]} = 124 ] && { echo HANG; exit 1; }
cd ..
echo "== tune tn"
timeout 170 .devx/bin/gemm-aot-tune --tier sm90a --shapes bench/shapes/tf32-tune.toml --op tn --dtype f32 --policy tensor-core --buckets 256,512,1024,2048 --out $OUT/tn.tuned.toml --json $OUT/tn-tune.json --time-limit 150 2>&1 | tail -30
python3 -c "
import json,collections;d=json.load(open('$OUT/tn-tune.json'))
t=collections.defaultdict(dict)
for r in d['measurements']: t[(r['n'],r['k'],r['m'])][r['kernel']]=r['ms']
for key in sorted(t):
    v=t[key]
    if key[2]<512: continue
    fl=2*key[0]*key[1]*key[2]/1e9
    print(key, ' '.join('%s=%.0f'%(k.replace('tcwide32tn','W').replace('tcasync32','A'),fl/x) for k,x in sorted(v.items())))
"
