bash .devx/unpack
for b in gemm-aot-tune tune-v1 tune-v2; do
echo "== $b"
timeout 60 .devx/bin/$b --tier sm90a --shapes .devx/one.toml --op tn --dtype f32 --policy tensor-core --buckets 4096 --out /tmp/t.toml --json /tmp/t-$b.json --time-limit 40 2>&1 | tail -2
python3 -c "
import json; d=json.load(open('/tmp/t-$b.json'))
print(' '.join('%s=%.0f'%(r['kernel'],2*4096**3/r['ms']/1e9) for r in d['measurements']))"
done
