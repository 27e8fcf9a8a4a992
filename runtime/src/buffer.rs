//! Typed device buffers and views of them. A buffer registers its allocation with its
//! context's registry and releases it when dropped; raw pointers from other allocators enter
//! as [`ExternalSpan`]s. GEMM calls take [`Mat`] and [`MatMut`] views: a span, an element
//! offset and a leading dimension.

use crate::element::Element;
use crate::registry::{Registry, Span};
use cudarc::driver::CudaSlice;
use std::marker::PhantomData;
use std::sync::Arc;

/// A device allocation of `len` elements of `T`, registered with its context.
pub struct DeviceBuffer<T: Element> {
    pub(crate) slice: CudaSlice<T>,
    pub(crate) len: usize,
    pub(crate) span: Span,
    pub(crate) registry: Arc<Registry>,
}

impl<T: Element> DeviceBuffer<T> {
    /// Elements in the buffer.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The registered span (id, generation, address, size).
    pub fn span(&self) -> Span {
        self.span
    }

    /// A read view starting at element 0 with leading dimension `ld`.
    pub fn mat(&self, ld: usize) -> Mat<'_, T> {
        self.mat_at(0, ld)
    }

    /// A read view starting at element `offset` with leading dimension `ld`.
    pub fn mat_at(&self, offset: usize, ld: usize) -> Mat<'_, T> {
        Mat {
            span: self.span,
            offset,
            ld,
            _p: PhantomData,
        }
    }

    /// A write view starting at element 0 with leading dimension `ld`.
    pub fn mat_mut(&mut self, ld: usize) -> MatMut<'_, T> {
        self.mat_mut_at(0, ld)
    }

    /// A write view starting at element `offset` with leading dimension `ld`.
    pub fn mat_mut_at(&mut self, offset: usize, ld: usize) -> MatMut<'_, T> {
        MatMut {
            span: self.span,
            offset,
            ld,
            _p: PhantomData,
        }
    }
}

impl<T: Element> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        self.registry.release(&self.span);
    }
}

/// Memory owned elsewhere (another allocator, a framework's tensor), registered so GEMM calls
/// can check it. It stays valid until [`Context::unregister`](crate::Context::unregister);
/// copies taken before then are refused afterwards, also if the same address is registered
/// again.
#[derive(Clone, Copy, Debug)]
pub struct ExternalSpan<T: Element> {
    pub(crate) span: Span,
    pub(crate) _p: PhantomData<T>,
}

impl<T: Element> ExternalSpan<T> {
    /// The registered span (id, generation, address, size).
    pub fn span(&self) -> Span {
        self.span
    }

    /// A read view at element `offset` with leading dimension `ld`.
    pub fn mat_at(&self, offset: usize, ld: usize) -> Mat<'static, T> {
        Mat {
            span: self.span,
            offset,
            ld,
            _p: PhantomData,
        }
    }

    /// A write view at element `offset` with leading dimension `ld`. The caller answers for
    /// other users of the memory; the runtime checks it against the call's inputs.
    pub fn mat_mut_at(&self, offset: usize, ld: usize) -> MatMut<'static, T> {
        MatMut {
            span: self.span,
            offset,
            ld,
            _p: PhantomData,
        }
    }
}

/// A read-only row-major matrix view: element (r, c) is at `offset + r * ld + c`.
#[derive(Clone, Copy, Debug)]
pub struct Mat<'a, T: Element> {
    pub(crate) span: Span,
    pub(crate) offset: usize,
    pub(crate) ld: usize,
    pub(crate) _p: PhantomData<&'a T>,
}

/// A writable row-major matrix view.
#[derive(Debug)]
pub struct MatMut<'a, T: Element> {
    pub(crate) span: Span,
    pub(crate) offset: usize,
    pub(crate) ld: usize,
    pub(crate) _p: PhantomData<&'a mut T>,
}

impl<T: Element> Mat<'_, T> {
    /// Leading dimension in elements.
    pub fn ld(&self) -> usize {
        self.ld
    }
    /// Offset of element (0, 0) from the span start, in elements.
    pub fn offset(&self) -> usize {
        self.offset
    }
    /// The span the view is of.
    pub fn span(&self) -> Span {
        self.span
    }
}

impl<T: Element> MatMut<'_, T> {
    /// Leading dimension in elements.
    pub fn ld(&self) -> usize {
        self.ld
    }
    /// Offset of element (0, 0) from the span start, in elements.
    pub fn offset(&self) -> usize {
        self.offset
    }
    /// The span the view is of.
    pub fn span(&self) -> Span {
        self.span
    }
    /// A shorter-lived write view of the same memory, so one `MatMut` can serve many calls.
    pub fn reborrow(&mut self) -> MatMut<'_, T> {
        MatMut {
            span: self.span,
            offset: self.offset,
            ld: self.ld,
            _p: PhantomData,
        }
    }
}
