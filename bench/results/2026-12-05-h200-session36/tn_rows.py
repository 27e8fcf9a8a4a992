# TF32 TN (A a transposed view) through the wheel: each output row computed alone and inside
# batches of every size up to 600 (rows spanning the routes' m ranges: 128, 256, 512) gives
# the same bits, at three (n, k); and against float64.
import torch, gemm_aot
torch.manual_seed(0)
bad = 0
for n, k in ((1024, 4096), (2304, 768), (5120, 1000)):
    at = torch.randn(k, 600, device="cuda")  # A^T stored [k, m]: A = at.t() is m-contiguous
    b = torch.randn(k, n, device="cuda")
    full = gemm_aot.mm(at.t(), b, policy="tensor-core")
    ref = at.t().double() @ b.double()
    err = ((full.double() - ref).abs() / (at.t().double().abs() @ b.double().abs())).max().item()
    for m in (1, 2, 16, 77, 128, 129, 256, 257, 512, 513, 600):
        part = gemm_aot.mm(at[:, :m].t(), b, policy="tensor-core")
        if not torch.equal(part.view(torch.int32), full[:m].view(torch.int32)):
            bad += 1
            print("rows differ: n=%d k=%d m=%d" % (n, k, m))
    print("n=%d k=%d: rows checked at 11 m, max error relative to sum |a b| %.2e" % (n, k, err))
print("TN TF32 invariance:", "PASS" if bad == 0 else "FAIL (%d)" % bad)
