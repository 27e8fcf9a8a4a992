//! Snapshots of what the generator makes of the shipped specs: the argument ABI (Rust and C),
//! the kernel table and the dispatch. A change here is a change to the ABI or to routing that
//! downstream code sees: review it with `cargo insta review`.

use gemm_codegen::pipeline::{generate, plan};
use gemm_codegen::Provenance;

fn file(name: &str) -> String {
    let (plan, _) = plan(&gemm_aot_tests::shipped_specs(), &[]).expect("shipped specs validate");
    let generated = generate(&plan, &Provenance::new("gemm-aot build"));
    generated
        .files
        .into_iter()
        .find(|(p, _)| p.file_name().is_some_and(|f| f == name))
        .map(|(_, text)| text)
        .unwrap_or_else(|| panic!("{name} not generated"))
}

#[test]
fn abi_rust() {
    insta::assert_snapshot!("abi.rs", file("abi.rs"));
}

#[test]
fn abi_header() {
    insta::assert_snapshot!("gemm_abi.h", file("gemm_abi.h"));
}

#[test]
fn kernel_table() {
    insta::assert_snapshot!("kernels.rs", file("kernels.rs"));
}

#[test]
fn dispatch() {
    insta::assert_snapshot!("dispatch.rs", file("dispatch.rs"));
}
