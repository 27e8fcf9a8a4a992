# Sourced by the experiments' build steps: NVCC, the compiler the generator uses (NVCC,
# CUDA_HOME, PATH, else the bootstrapped copy, installed if missing), and CU, its toolkit root.
NVCC=$(cargo run --release -q -p gemm-codegen --bin gemm-aot -- toolchain install | sed -n 's/^nvcc: //p')
[ -x "$NVCC" ] || { echo "no nvcc: see \`gemm-aot toolchain install\`" >&2; exit 1; }
CU=$(dirname "$(dirname "$NVCC")")
