//! Element types a buffer can hold: f32, bf16 and f16 (from the `half` crate).

use crate::table::Dtype;
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};

/// A storage type of GEMM operands and outputs.
pub trait Element: DeviceRepr + ValidAsZeroBits + Copy + Default + Send + Sync + 'static {
    /// The dtype the generated tables know this type as.
    const DTYPE: Dtype;
    /// Exact widening to f32.
    fn to_f32(self) -> f32;
    /// Rounding to nearest even (the kernels' store).
    fn from_f32(v: f32) -> Self;
}

impl Element for f32 {
    const DTYPE: Dtype = Dtype::F32;
    fn to_f32(self) -> f32 {
        self
    }
    fn from_f32(v: f32) -> Self {
        v
    }
}

impl Element for half::bf16 {
    const DTYPE: Dtype = Dtype::Bf16;
    fn to_f32(self) -> f32 {
        half::bf16::to_f32(self)
    }
    fn from_f32(v: f32) -> Self {
        half::bf16::from_f32(v)
    }
}

impl Element for half::f16 {
    const DTYPE: Dtype = Dtype::F16;
    fn to_f32(self) -> f32 {
        half::f16::to_f32(self)
    }
    fn from_f32(v: f32) -> Self {
        half::f16::from_f32(v)
    }
}
