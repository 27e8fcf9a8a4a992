bash .devx/unpack
export LD_LIBRARY_PATH=$(dirname $(find / -name 'libcublas.so.1*' 2>/dev/null | head -1))
timeout 400 .devx/bin/gemm-aot-tune --tier sm90a --shapes bench/shapes/tf32-tune.toml --op nn,nt --dtype f32 --policy tensor-core --buckets 16,32,64,128,256,512,1024,2048 --out $OUT/tf32.tuned.toml --json $OUT/tf32-tune.json --time-limit 330 2>&1 | tail -150
