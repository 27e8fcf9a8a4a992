//! Builds this crate's kernel set: the tier sm90a of its own specs (specs/), with the shipped
//! definitions beside them and its own kernel kind (templates/) beside the shipped kinds, into
//! OUT_DIR, through the same pipeline and cubin cache as gemm-runtime's build. No environment
//! variable is needed (GEMM_AOT_NO_CUBINS still skips nvcc, as for the runtime).

fn main() {
    let built = gemm_codegen::Builder::new()
        .specs("specs")
        .shipped_definitions(true)
        .extra_templates("templates")
        .tiers(["sm90a"])
        .build();
    if let Err(e) = built {
        eprintln!("error: {e}");
        if e.is_toolchain() {
            eprintln!("hint: install the compiler with `cargo run -p gemm-codegen --bin gemm-aot -- toolchain install`, or set GEMM_AOT_NO_CUBINS=1 to build the tables only");
        }
        std::process::exit(1);
    }
}
