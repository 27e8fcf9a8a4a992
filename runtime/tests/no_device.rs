//! Without a CUDA driver (as on CI), opening a context is an error, never a panic.

use gemm_runtime::{Context, GemmError};

#[test]
fn opening_a_context_without_a_driver_is_an_error() {
    match std::panic::catch_unwind(|| Context::new(0)) {
        Err(_) => panic!("Context::new panicked"),
        Ok(Ok(ctx)) => eprintln!("SKIPPED: a driver and device are present ({ctx:?})"),
        Ok(Err(GemmError::NoDriver)) => {
            let msg = GemmError::NoDriver.to_string();
            assert!(msg.contains("no CUDA driver found"), "{msg}");
        }
        Ok(Err(e)) => eprintln!("SKIPPED: a driver is present but no usable device: {e}"),
    }
}
