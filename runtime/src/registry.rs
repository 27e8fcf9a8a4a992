//! The allocation registry: every device span a GEMM may touch is registered with an id and a
//! generation, so a launch can check before enqueue that each pointer lies in a live
//! allocation of this context that was not freed or replaced since the view was taken.

use gemm_core::fast_hash::FastMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// The registry's maps, keyed by span id or base address ([`gemm_core::fast_hash`]).
type IntMap<V> = FastMap<u64, V>;

static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

/// A registered device span, as views carry it. Copying it does not extend its life: the
/// registry decides whether it is still valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Span {
    pub(crate) context: u64,
    pub(crate) id: u64,
    pub(crate) generation: u64,
    pub(crate) base: u64,
    pub(crate) bytes: u64,
}

impl Span {
    /// Allocation id, unique within the process.
    pub fn id(&self) -> u64 {
        self.id
    }
    /// How many registrations the span's base address has had, this one included.
    pub fn generation(&self) -> u64 {
        self.generation
    }
    /// Device address of the first byte.
    pub fn base(&self) -> u64 {
        self.base
    }
    /// Size in bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// Why a span failed its registry check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SpanProblem {
    Foreign,
    Stale,
}

#[derive(Default)]
struct Inner {
    /// id -> span, for live registrations.
    live: IntMap<Span>,
    /// base address -> registrations so far.
    generations: IntMap<u64>,
}

pub(crate) struct Registry {
    context: u64,
    inner: Mutex<Inner>,
}

impl Registry {
    pub fn new() -> Self {
        Registry {
            context: NEXT_TOKEN.fetch_add(1, Ordering::Relaxed),
            inner: Mutex::new(Inner::default()),
        }
    }

    /// The token of the context this registry belongs to.
    pub fn token(&self) -> u64 {
        self.context
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn register(&self, base: u64, bytes: u64) -> Span {
        let mut inner = self.lock();
        let id = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
        let generation = {
            let g = inner.generations.entry(base).or_insert(0);
            *g += 1;
            *g
        };
        let span = Span {
            context: self.context,
            id,
            generation,
            base,
            bytes,
        };
        inner.live.insert(id, span);
        span
    }

    /// Ends a registration; views of it fail their check from now on.
    pub fn release(&self, span: &Span) {
        self.lock().live.remove(&span.id);
    }

    pub fn check(&self, span: &Span) -> Result<(), SpanProblem> {
        if span.context != self.context {
            return Err(SpanProblem::Foreign);
        }
        match self.lock().live.get(&span.id) {
            Some(live) if live == span => Ok(()),
            _ => Err(SpanProblem::Stale),
        }
    }

    pub fn live_count(&self) -> usize {
        self.lock().live.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_and_reuse_of_an_address_invalidate_old_spans() {
        let r = Registry::new();
        let a = r.register(0x1000, 256);
        assert_eq!(r.check(&a), Ok(()));
        r.release(&a);
        assert_eq!(r.check(&a), Err(SpanProblem::Stale));
        let b = r.register(0x1000, 256);
        assert_eq!(b.generation, a.generation + 1);
        assert_ne!(b.id, a.id);
        assert_eq!(
            r.check(&a),
            Err(SpanProblem::Stale),
            "same address, new generation"
        );
        assert_eq!(r.check(&b), Ok(()));
        let other = Registry::new();
        assert_eq!(other.check(&b), Err(SpanProblem::Foreign));
        assert_eq!(r.live_count(), 1);
    }
}
