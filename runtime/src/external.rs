//! Memory from other allocators enters as an [`ExternalSpan`]. Where the driver knows the
//! allocation the address lies in (`cuMemGetAddressRange`: memory from `cuMemAlloc`, a
//! stream-ordered pool, `cuMemCreate` mappings), a span that runs past its end is refused when
//! it is registered, not when a kernel writes past it. Memory the driver does not know (a
//! null pointer, host-registered memory) is registered as given: the caller answers for it.

use crate::buffer::ExternalSpan;
use crate::context::Context;
use crate::element::Element;
use crate::error::GemmError;
use cudarc::driver::sys;
use std::marker::PhantomData;

/// The allocation the driver reports for `ptr`: (base, bytes), or `None` when the driver
/// does not know the address.
pub(crate) fn driver_allocation(ptr: u64) -> Option<(u64, u64)> {
    let mut base: sys::CUdeviceptr = 0;
    let mut size: usize = 0;
    // SAFETY: both out-pointers are valid; the driver only reads `ptr` as an address.
    let r = unsafe { sys::cuMemGetAddressRange_v2(&mut base, &mut size, ptr) };
    (r == sys::CUresult::CUDA_SUCCESS).then_some((base, size as u64))
}

/// Whether `[ptr, ptr + bytes)` stays inside the allocation `(base, size)`.
pub(crate) fn check_span(
    (ptr, bytes): (u64, u64),
    allocation: Option<(u64, u64)>,
) -> Result<(), GemmError> {
    let Some((base, size)) = allocation else {
        return Ok(());
    };
    let end = ptr.checked_add(bytes);
    match end {
        Some(end) if ptr >= base && end <= base.saturating_add(size) => Ok(()),
        _ => Err(GemmError::ExternalOverrun {
            address: ptr,
            bytes,
            allocation_base: base,
            allocation_bytes: size,
        }),
    }
}

impl Context {
    /// Registers `len` elements at device address `ptr` from another allocator. Refused
    /// ([`GemmError::ExternalOverrun`]) when the driver knows the allocation `ptr` lies in
    /// and the span runs past its end; `len * size_of::<T>()` over `u64` is refused as
    /// [`GemmError::DimensionOverflow`].
    pub fn register_external<T: Element>(
        &self,
        ptr: u64,
        len: usize,
    ) -> Result<ExternalSpan<T>, GemmError> {
        let bytes = (len as u64)
            .checked_mul(std::mem::size_of::<T>() as u64)
            .ok_or(GemmError::DimensionOverflow {
                what: "external span bytes",
                value: len as u64,
                max: u64::MAX / std::mem::size_of::<T>() as u64,
            })?;
        self.cuda().bind_to_thread()?;
        self.register_bound(ptr, bytes)
    }

    /// [`register_external`](Self::register_external) of `bytes` at `ptr`, with this context
    /// already bound to the thread (a raw call binds it once for all its operands).
    pub(crate) fn register_bound<T: Element>(
        &self,
        ptr: u64,
        bytes: u64,
    ) -> Result<ExternalSpan<T>, GemmError> {
        check_span((ptr, bytes), driver_allocation(ptr))?;
        Ok(ExternalSpan {
            span: self.registry().register(ptr, bytes),
            _p: PhantomData,
        })
    }

    /// [`register_bound`](Self::register_bound) without the driver's allocation query: the
    /// caller vouched that the span lies inside its allocation
    /// ([`gemm_raw_in_bounds`](Self::gemm_raw_in_bounds)).
    pub(crate) fn register_vouched<T: Element>(&self, ptr: u64, bytes: u64) -> ExternalSpan<T> {
        ExternalSpan {
            span: self.registry().register(ptr, bytes),
            _p: PhantomData,
        }
    }

    /// How many allocations and external spans are registered and live.
    pub fn live_allocations(&self) -> usize {
        self.registry().live_count()
    }

    /// Ends an external registration: views of it are refused from now on.
    pub fn unregister<T: Element>(&self, span: ExternalSpan<T>) {
        self.registry().release(&span.span);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_inside_the_allocation_pass_and_overruns_are_refused() {
        let alloc = Some((0x1000, 0x100));
        assert!(check_span((0x1000, 0x100), alloc).is_ok());
        assert!(check_span((0x1080, 0x80), alloc).is_ok());
        assert!(check_span((0x1080, 0), alloc).is_ok());
        // Unknown to the driver: as given.
        assert!(check_span((0x1000, u64::MAX), None).is_ok());
        for (ptr, bytes) in [(0x1000, 0x101), (0x10ff, 2), (u64::MAX, 2)] {
            match check_span((ptr, bytes), alloc) {
                Err(GemmError::ExternalOverrun {
                    address,
                    bytes: b,
                    allocation_base: 0x1000,
                    allocation_bytes: 0x100,
                }) => assert_eq!((address, b), (ptr, bytes)),
                other => panic!("{ptr:#x}+{bytes}: expected an overrun, got {other:?}"),
            }
        }
    }
}
