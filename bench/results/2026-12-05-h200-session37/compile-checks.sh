# What this session's compile-only claims rest on (no GPU), from the repository root, writing
# compile-checks.log beside this script:
#  1. the tc fixture's wgmma batch kernels (kBatch = 1, 3-D maps): registers and spills from the
#     build's report.json;
#  2. the shipped row kernels, 512- and 1024-column warp paths: ptxas -v of conversions.cu;
#  3. every wide kernel of the shipped sm90a tcwide.cu built for one GEMM a launch: its PTX with
#     the templates of 06e2299 (before the batch support) against today's, kernel by kernel.
set -eu
here=$(dirname "$0")
log=$here/compile-checks.log
tmp=$(mktemp -d)
cargo build -q --release -p gemm-codegen --bin gemm-aot
nvcc=$(ls "$HOME"/.cache/gemm-aot/toolchain/cuda-*/nvidia/cu13/bin/nvcc | head -1)
{
echo "== 1. tc fixture (tests/fixtures/tc/specs): batch kernels"
./target/release/gemm-aot build --specs tests/fixtures/tc/specs --out "$tmp/fx" > /dev/null
python3 - "$tmp/fx/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for k in r["kernels"]:
    if k.get("batch"):
        res = k.get("resources") or {}
        print(k["name"], "registers", res.get("registers"), "spill bytes", res.get("spill_store_bytes", 0) + res.get("spill_load_bytes", 0))
PY
echo "== 2. shipped sm90a row kernels (ptxas -v)"
./target/release/gemm-aot build --no-cubins --out "$tmp/sh" > /dev/null
(cd "$tmp/sh/cuda/sm90a" && "$nvcc" -arch=sm_90a -cubin -O3 -I../include -I.. -I../kernels-templates -Xptxas -v conversions.cu -o /dev/null 2>&1) |
  python3 -c '
import re, sys
cur = None
for l in sys.stdin:
    m = re.search(r"Compiling entry function .(\w+).", l)
    if m: cur = m.group(1); continue
    m = re.search(r"Used (\d+) registers", l)
    if m and cur and ("softmax" in cur or "rowmean" in cur): print(cur, "registers", m.group(1))
    m = re.search(r"(\d+) bytes spill stores", l)
    if m and cur and m.group(1) != "0": print("SPILL", cur, m.group(1))
'
echo "== 3. sm90a tcwide.cu: PTX with 06e2299's templates against today's"
cp -r "$tmp/sh/cuda" "$tmp/old"
for f in wgmma/wgmma_tma_gemm.cuh tc/tma.cuh tc/batch_entry.cuh; do
  git show 06e2299:kernels-templates/$f > "$tmp/old/kernels-templates/$f"
done
for d in sh/cuda old; do
  (cd "$tmp/$d/sm90a" && "$nvcc" -arch=sm_90a -ptx -O3 -I../include -I.. -I../kernels-templates tcwide.cu -o "$tmp/$(basename $d).ptx")
done
python3 - "$tmp/old.ptx" "$tmp/cuda.ptx" <<'PY'
import re, sys
def kernels(p):
    s = open(p).read()
    out = {}
    for m in re.finditer(r"\.visible \.entry (\w+)\(", s):
        body = s[m.start():s.find("\n}\n", m.start())]
        out[m.group(1)] = re.sub(r"\$L__BB\d+_", "$L__BB_", body)
    return out
old, new = kernels(sys.argv[1]), kernels(sys.argv[2])
same = sum(1 for k in old if new.get(k) == old[k])
print(f"{len(new)} kernels today, {len(old)} before; identical PTX: {same} of {len(old)}")
for k in old:
    if new.get(k) != old[k]: print("DIFFERS", k)
PY
} 2>&1 | tee "$log"
rm -rf "$tmp"
