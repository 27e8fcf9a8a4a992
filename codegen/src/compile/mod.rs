//! Turning generated CUDA into cubins: the toolchain, the content cache, nvcc per tier in
//! parallel, and the ptxas resource report.

pub mod cache;
pub mod nvcc;
pub mod ptxas;
pub mod toolchain;
