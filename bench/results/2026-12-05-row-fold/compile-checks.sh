# The row kernels' registers and spills under ptxas -v, on every shipped tier (no GPU), from the
# repository root, writing compile-checks.log beside this script: the shipped specs (softmax:
# warp_fold = "halving", min_blocks = [5, 3]) against the same specs without those two keys
# (every row kernel folding by butterflies, uncapped: what shipped before).
set -eu
here=$(dirname "$0")
log=$here/compile-checks.log
tmp=$(mktemp -d)
cargo build -q --release -p gemm-codegen --bin gemm-aot
nvcc=$(ls "$HOME"/.cache/gemm-aot/toolchain/cuda-*/nvidia/cu13/bin/nvcc | head -1)
cp -r specs "$tmp/before-specs"
sed -i '/^warp_fold = /d; /^min_blocks = /d' "$tmp/before-specs/families.toml"
{
for which in before shipped; do
  specs=specs; [ "$which" = before ] && specs="$tmp/before-specs"
  ./target/release/gemm-aot build --no-cubins --specs "$specs" --out "$tmp/$which" > /dev/null
  echo "== $which"
  for t in $(ls "$tmp/$which/cuda" | grep '^sm'); do
    g=$(grep '^gencode' "specs/$t.toml" | sed 's/.*= "//; s/"//')
    (cd "$tmp/$which/cuda/$t" && "$nvcc" -gencode "$g" -cubin -O3 -I../include -I.. -I../kernels-templates -Xptxas -v conversions.cu -o /dev/null 2>&1) |
    python3 -c '
import re, sys
t = sys.argv[1]; cur = None; regs = {}; spill = set()
for l in sys.stdin:
    m = re.search(r"Compiling entry function .(\w+).", l)
    if m: cur = m.group(1); continue
    m = re.search(r"Used (\d+) registers", l)
    if m and cur: regs[cur] = int(m.group(1))
    m = re.search(r"(\d+) bytes spill stores", l)
    if m and cur and m.group(1) != "0": spill.add(cur)
out = []
for op in ["softmax", "logsoftmax", "rowmean"]:
    for w in ["_512", "_w1024"]:
        ks = [k for k in regs if ("_" + op + "_") in k and k.endswith("_w1024") == (w == "_w1024")]
        if ks:
            r = [regs[k] for k in ks]
            out.append("%s%s %d-%d%s" % (op, w, min(r), max(r), " SPILL" if any(k in spill for k in ks) else ""))
print(t, " | ".join(out))
' "$t"
  done
done
} 2>&1 | tee "$log"
rm -rf "$tmp"
# Shuffles in the PTX of sm90a's 512-column f32 softmax, before and after.
tmp=$(mktemp -d)
cp -r specs "$tmp/before-specs"
sed -i '/^warp_fold = /d; /^min_blocks = /d' "$tmp/before-specs/families.toml"
{
echo "== shfl.sync in convert_sm90a_softmax_f32_f32's PTX (its warp path and block path)"
for which in before shipped; do
  specs=specs; [ "$which" = before ] && specs="$tmp/before-specs"
  ./target/release/gemm-aot build --no-cubins --tier sm90a --specs "$specs" --out "$tmp/$which" > /dev/null
  (cd "$tmp/$which/cuda/sm90a" && "$nvcc" -arch=sm_90a -ptx -O3 -I../include -I.. -I../kernels-templates conversions.cu -o "$tmp/$which.ptx")
  python3 - "$tmp/$which.ptx" "$which" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
m = re.search(r"\.entry convert_sm90a_softmax_f32_f32\(", s)
body = s[m.start():s.find("\n}\n", m.start())]
print(sys.argv[2], body.count("shfl.sync"))
PY
done
} 2>&1 | tee -a "$log"
rm -rf "$tmp"
