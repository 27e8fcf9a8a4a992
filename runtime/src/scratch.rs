//! The f32 scratch of the half fallback: one registered allocation per context, grown on
//! demand, and frozen while a captured graph points into it (growing would free memory the
//! graph's nodes still address).

use crate::buffer::DeviceBuffer;
use crate::error::GemmError;
use crate::registry::Span;
use std::sync::{Arc, Mutex, MutexGuard};

/// Regions start on 256-byte boundaries (64 f32), so every scratch operand is as aligned as a
/// fresh allocation.
pub(crate) const REGION_ALIGN: usize = 64;

/// Element offsets of `sizes` laid out one after another, each region aligned; and the total.
pub(crate) fn layout<const N: usize>(sizes: [usize; N]) -> ([usize; N], usize) {
    let mut offsets = [0; N];
    let mut end = 0usize;
    for (o, s) in offsets.iter_mut().zip(sizes) {
        *o = end;
        end = end.saturating_add(s.div_ceil(REGION_ALIGN).saturating_mul(REGION_ALIGN));
    }
    (offsets, end)
}

#[derive(Default)]
pub(crate) struct Scratch {
    buffer: Mutex<Option<DeviceBuffer<f32>>>,
    /// Held by every captured graph that uses the scratch: while any is alive the scratch
    /// may not grow.
    pins: Arc<()>,
}

/// Exclusive use of the scratch while a fallback enqueues its launches: another thread's
/// fallback on the same context waits, so their launches never interleave on the regions and
/// the scratch is never replaced under launches still being enqueued.
pub(crate) struct ScratchGuard<'a> {
    _lock: MutexGuard<'a, Option<DeviceBuffer<f32>>>,
    /// The scratch allocation.
    pub span: Span,
}

impl Scratch {
    /// The scratch, at least `elements` f32 long, held exclusively until the guard drops;
    /// grown when allowed. `grow` allocates a new buffer (the old one is released: its
    /// generation ends).
    pub(crate) fn lock_for(
        &self,
        elements: usize,
        grow: impl FnOnce(usize) -> Result<DeviceBuffer<f32>, GemmError>,
    ) -> Result<ScratchGuard<'_>, GemmError> {
        let needed = (elements as u64)
            .checked_mul(4)
            .ok_or(GemmError::ScratchTooLarge { elements })?;
        let mut buffer = self.buffer.lock().unwrap_or_else(|p| p.into_inner());
        let held = buffer.as_ref().map_or(0, |b| b.len());
        if let Some(span) = buffer
            .as_ref()
            .filter(|_| held >= elements)
            .map(|b| b.span())
        {
            return Ok(ScratchGuard {
                _lock: buffer,
                span,
            });
        }
        if Arc::strong_count(&self.pins) > 1 {
            return Err(GemmError::ScratchFrozen {
                needed,
                frozen: held as u64 * 4,
            });
        }
        // Grow by at least half again, so a sequence of growing requests reallocates rarely.
        let new = grow(elements.max(held.saturating_add(held / 2)))?;
        let span = new.span();
        *buffer = Some(new);
        Ok(ScratchGuard {
            _lock: buffer,
            span,
        })
    }

    /// A pin that freezes the scratch while it is alive.
    pub(crate) fn pin(&self) -> Arc<()> {
        self.pins.clone()
    }

    /// The current scratch allocation, if any.
    pub(crate) fn current(&self) -> Option<Span> {
        self.buffer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .map(|b| b.span())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_are_aligned_and_do_not_overlap() {
        let (offsets, total) = layout([1, 0, 65, 3]);
        assert_eq!(offsets, [0, 64, 64, 192]);
        assert_eq!(total, 256);
        assert!(offsets.iter().all(|o| o % REGION_ALIGN == 0));
    }
}
