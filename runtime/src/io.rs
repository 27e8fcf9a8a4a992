//! Allocation and copies between host and device, on the context's stream. Every copy checks
//! its range against the buffer and refuses a length that does not match
//! ([`GemmError::LengthMismatch`], [`GemmError::RangeOutOfBounds`]) instead of copying less.
//!
//! What waits for what: `download` synchronizes the stream; `read_at` waits only for its own
//! copy (the stream's earlier work first, as any stream-ordered copy); `write`, `write_at` and
//! `copy` are enqueued and return at once (a pageable host source is staged by the driver
//! before the call returns, so the slice may be reused right away); `read_at_async` into
//! pinned host memory returns at once, and the pinned slice waits for the copy when it is
//! read.

use crate::buffer::DeviceBuffer;
use crate::context::Context;
use crate::element::Element;
use crate::error::GemmError;
use cudarc::driver::{CudaSlice, DevicePtr, PinnedHostSlice};

/// `offset..offset + len` of a buffer of `buffer` elements, or the refusal naming them.
fn range(offset: usize, len: usize, buffer: usize) -> Result<std::ops::Range<usize>, GemmError> {
    match offset.checked_add(len) {
        Some(end) if end <= buffer => Ok(offset..end),
        _ => Err(GemmError::RangeOutOfBounds {
            offset,
            len,
            buffer,
        }),
    }
}

impl Context {
    /// A zeroed buffer of `len` elements.
    pub fn alloc<T: Element>(&self, len: usize) -> Result<DeviceBuffer<T>, GemmError> {
        let slice = self.stream().alloc_zeros::<T>(len.max(1))?;
        Ok(self.wrap(slice, len))
    }

    /// A buffer of `len` elements that is **not** zero-filled: its contents are whatever the
    /// memory held. Cheaper than [`alloc`](Self::alloc) for outputs a GEMM overwrites (beta
    /// = 0) or buffers filled by a copy before any read.
    ///
    /// # Safety
    /// Nothing may read an element before it is written: not a GEMM with `beta != 0` or a
    /// bias from it, not a download. Reading it gives unspecified values.
    pub unsafe fn alloc_uninit<T: Element>(
        &self,
        len: usize,
    ) -> Result<DeviceBuffer<T>, GemmError> {
        // SAFETY: the caller writes every element before it is read (see above).
        let slice = unsafe { self.stream().alloc::<T>(len.max(1)) }?;
        Ok(self.wrap(slice, len))
    }

    /// A buffer holding a copy of `host`.
    pub fn upload<T: Element>(&self, host: &[T]) -> Result<DeviceBuffer<T>, GemmError> {
        // SAFETY: every element is written by the copy below before anything can read it
        // (the copy is enqueued before the buffer is returned).
        let mut buf = unsafe { self.alloc_uninit::<T>(host.len()) }?;
        self.write_at(&mut buf, 0, host)?;
        Ok(buf)
    }

    /// Overwrites the whole buffer with `host`, which must have the buffer's length
    /// ([`GemmError::LengthMismatch`] otherwise; nothing is copied). Enqueued; `host` may be
    /// reused when it returns.
    pub fn write<T: Element>(
        &self,
        buf: &mut DeviceBuffer<T>,
        host: &[T],
    ) -> Result<(), GemmError> {
        if host.len() != buf.len() {
            return Err(GemmError::LengthMismatch {
                buffer: buf.len(),
                host: host.len(),
            });
        }
        self.write_at(buf, 0, host)
    }

    /// Writes `host` into elements `offset..offset + host.len()` of the buffer
    /// ([`GemmError::RangeOutOfBounds`] past its end; nothing is copied). Enqueued; from
    /// pageable host memory (a `Vec`, a slice of one) `host` may be reused when it returns.
    /// A slice of pinned memory is copied asynchronously: keep it unchanged until the stream
    /// has passed the copy (for example [`synchronize`](Self::synchronize)).
    pub fn write_at<T: Element>(
        &self,
        buf: &mut DeviceBuffer<T>,
        offset: usize,
        host: &[T],
    ) -> Result<(), GemmError> {
        let r = range(offset, host.len(), buf.len())?;
        if !r.is_empty() {
            self.stream()
                .memcpy_htod(host, &mut buf.slice.slice_mut(r))?;
        }
        Ok(())
    }

    /// Copies the buffer back (synchronizing the stream).
    pub fn download<T: Element>(&self, buf: &DeviceBuffer<T>) -> Result<Vec<T>, GemmError> {
        let mut host = vec![T::default(); buf.len()];
        self.read_at(buf, 0, &mut host)?;
        self.stream().synchronize()?;
        Ok(host)
    }

    /// Reads elements `offset..offset + host.len()` of the buffer into `host`, after the
    /// stream's earlier work; returns when the copy is done, without synchronizing the rest
    /// of the stream ([`GemmError::RangeOutOfBounds`] past the buffer's end).
    pub fn read_at<T: Element>(
        &self,
        buf: &DeviceBuffer<T>,
        offset: usize,
        host: &mut [T],
    ) -> Result<(), GemmError> {
        let r = range(offset, host.len(), buf.len())?;
        if !r.is_empty() {
            // A copy into pageable memory returns once the copy has completed; into pinned
            // memory it is asynchronous, so wait for it (an event after it, not the stream).
            self.stream().memcpy_dtoh(&buf.slice.slice(r), host)?;
            self.stream().record_event(None)?.synchronize()?;
        }
        Ok(())
    }

    /// Pinned (page-locked) host memory of `len` elements, filled with `T::default()`: the
    /// target of [`read_at_async`](Self::read_at_async).
    pub fn alloc_pinned<T: Element>(&self, len: usize) -> Result<PinnedHostSlice<T>, GemmError> {
        // SAFETY: every element is written below before the slice is handed out.
        let mut pinned = unsafe { self.cuda().alloc_pinned::<T>(len.max(1)) }?;
        pinned.as_mut_slice()?.fill(T::default());
        Ok(pinned)
    }

    /// Enqueues a copy of elements `offset..offset + host.len()` of the buffer into pinned
    /// host memory and returns at once, without synchronizing. `host` records the copy:
    /// reading it (`as_slice`) waits for the copy, so it is never read half-written.
    pub fn read_at_async<T: Element>(
        &self,
        buf: &DeviceBuffer<T>,
        offset: usize,
        host: &mut PinnedHostSlice<T>,
    ) -> Result<(), GemmError> {
        let r = range(offset, host.len(), buf.len())?;
        if !r.is_empty() {
            self.stream().memcpy_dtoh(&buf.slice.slice(r), host)?;
        }
        Ok(())
    }

    /// Enqueues a device-to-device copy of `len` elements from `src` at `src_offset` to `dst`
    /// at `dst_offset`; returns at once, without synchronizing
    /// ([`GemmError::RangeOutOfBounds`] when either range leaves its buffer).
    pub fn copy<T: Element>(
        &self,
        (src, src_offset): (&DeviceBuffer<T>, usize),
        (dst, dst_offset): (&mut DeviceBuffer<T>, usize),
        len: usize,
    ) -> Result<(), GemmError> {
        let from = range(src_offset, len, src.len())?;
        let to = range(dst_offset, len, dst.len())?;
        if len > 0 {
            self.stream()
                .memcpy_dtod(&src.slice.slice(from), &mut dst.slice.slice_mut(to))?;
        }
        Ok(())
    }

    /// Registers a fresh allocation; `len` may be below the slice's length (empty buffers
    /// still allocate one element so they have an address).
    fn wrap<T: Element>(&self, slice: CudaSlice<T>, len: usize) -> DeviceBuffer<T> {
        let base = {
            let (ptr, _sync) = slice.device_ptr(self.stream());
            ptr
        };
        let span = self
            .registry()
            .register(base, (len * std::mem::size_of::<T>()) as u64);
        DeviceBuffer {
            slice,
            len,
            span,
            registry: self.registry().clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_past_the_end_are_refused_with_their_numbers() {
        assert_eq!(range(0, 4, 4).ok(), Some(0..4));
        assert_eq!(range(4, 0, 4).ok(), Some(4..4));
        assert_eq!(range(2, 2, 4).ok(), Some(2..4));
        for (offset, len) in [(0, 5), (3, 2), (5, 0), (usize::MAX, 2)] {
            match range(offset, len, 4) {
                Err(GemmError::RangeOutOfBounds {
                    offset: o,
                    len: l,
                    buffer: 4,
                }) => assert_eq!((o, l), (offset, len)),
                other => panic!("{offset}+{len} in 4: expected a refusal, got {other:?}"),
            }
        }
    }
}
