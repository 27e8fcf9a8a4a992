//! A batch of raw GEMMs ([`Context::gemm_raw_batch`]): every entry checked before the first
//! launch, then launched in order. A strided batch (a bmm over one tensor an operand) has each
//! operand's entries inside one driver allocation: then that operand is registered once, over
//! the union of its entries' extents, and each entry runs as a view into it, so the driver's
//! bounds and the registry are consulted once a batch, not once an entry.

use crate::context::Context;
use crate::element::Element;
use crate::raw::{
    by_element_types, check_batch_overlaps, BatchFailure, RawExtents, RawGemm, Registered,
};
use crate::request::{GemmRequest, Launch};
use crate::table::Dtype;
use half::{bf16, f16};

/// Each operand's union of extents over a batch: (start, end) bytes, `None` where no entry
/// reads or writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Unions {
    pub a: Option<(u64, u64)>,
    pub b: Option<(u64, u64)>,
    pub bias: Option<(u64, u64)>,
    pub c: Option<(u64, u64)>,
}

/// The unions of `extents`, when every entry has the same operands present (else `None`:
/// the batch runs entry by entry).
pub(crate) fn unions(extents: &[RawExtents]) -> Option<Unions> {
    fn join(
        all: &[RawExtents],
        get: impl Fn(&RawExtents) -> Option<(u64, u64)>,
    ) -> Result<Option<(u64, u64)>, ()> {
        let present = get(all.first().ok_or(())?).is_some();
        let mut union: Option<(u64, u64)> = None;
        for e in all {
            match (get(e), present) {
                (Some((s, t)), true) => {
                    union = Some(union.map_or((s, t), |(us, ut)| (us.min(s), ut.max(t))));
                }
                (None, false) => {}
                _ => return Err(()),
            }
        }
        Ok(union)
    }
    Some(Unions {
        a: join(extents, |e| e.a).ok()?,
        b: join(extents, |e| e.b).ok()?,
        bias: join(extents, |e| e.bias).ok()?,
        c: join(extents, |e| e.c).ok()?,
    })
}

impl Context {
    /// Runs `calls` in order on this stream. Before the first is launched, every one is
    /// checked without the device ([`RawGemm::check`]), no entry's output overlaps another
    /// entry's output or any entry's inputs (entries run in order, so such a batch would read
    /// what it wrote), and every extent stays inside the allocation the driver reports for
    /// it; calls of one shape share their route, so the first entry's routing refusal comes
    /// before any launch. Returns the last launch (`None` for no calls).
    ///
    /// When each operand's entries lie in one allocation (a strided batch), the operand is
    /// registered once over all of them; the launches and their bits are those of
    /// [`gemm_raw`](Self::gemm_raw) entry by entry.
    pub fn gemm_raw_batch(&self, calls: &[RawGemm]) -> Result<Option<Launch>, BatchFailure> {
        let mut extents = Vec::with_capacity(calls.len());
        for (entry, call) in calls.iter().enumerate() {
            extents.push(
                call.check()
                    .map_err(|error| BatchFailure { entry, error })?,
            );
        }
        if calls.len() <= 1 {
            // One call: gemm_raw checks it against the driver's allocations itself.
            return match calls.first() {
                Some(call) => self
                    .gemm_raw(call)
                    .map(Some)
                    .map_err(|error| BatchFailure { entry: 0, error }),
                None => Ok(None),
            };
        }
        check_batch_overlaps(&extents)?;
        let same_types = calls
            .iter()
            .all(|c| (c.ab, c.c_dtype) == (calls[0].ab, calls[0].c_dtype));
        if let (true, Some(unions)) = (same_types, unions(&extents)) {
            if let Some(done) = self.batch_in_unions(calls, &extents, unions) {
                return done;
            }
        }
        self.cuda().bind_to_thread().map_err(|e| BatchFailure {
            entry: 0,
            error: e.into(),
        })?;
        for (entry, e) in extents.iter().enumerate() {
            for (start, end) in [e.a, e.b, e.bias, e.c].into_iter().flatten() {
                crate::external::check_span(
                    (start, end - start),
                    crate::external::driver_allocation(start),
                )
                .map_err(|error| BatchFailure { entry, error })?;
            }
        }
        let mut last = None;
        for (entry, call) in calls.iter().enumerate() {
            last = Some(
                self.gemm_raw(call)
                    .map_err(|error| BatchFailure { entry, error })?,
            );
        }
        Ok(last)
    }

    /// The batch with each operand registered once over its union; `None` (nothing launched)
    /// when a union is not inside one driver allocation, so the caller goes entry by entry
    /// and names the entry at fault.
    fn batch_in_unions(
        &self,
        calls: &[RawGemm],
        extents: &[RawExtents],
        unions: Unions,
    ) -> Option<Result<Option<Launch>, BatchFailure>> {
        by_element_types!(
            calls[0].ab,
            calls[0].c_dtype,
            self.batch_typed(calls, extents, unions)
        )
    }

    fn batch_typed<A: Element, C: Element>(
        &self,
        calls: &[RawGemm],
        extents: &[RawExtents],
        u: Unions,
    ) -> Option<Result<Option<Launch>, BatchFailure>> {
        // Only where the driver knows the allocation of each union's start (the union then
        // lies inside it, which covers every entry); memory it does not know (host-registered)
        // goes entry by entry, so each entry's own allocation is checked.
        let known = [u.a, u.b, u.bias, u.c]
            .into_iter()
            .flatten()
            .all(|(start, _)| crate::external::driver_allocation(start).is_some());
        if !known {
            return None;
        }
        let mut reg = Registered {
            ctx: self,
            spans: Vec::with_capacity(4),
        };
        // An operand some entry does not read (k = 0), or a registration refused (a union
        // across allocations, or past one): entry by entry.
        let a = reg.add::<A>(0, Some(u.a?)).ok()?;
        let b = reg.add::<A>(0, Some(u.b?)).ok()?;
        let c = reg.add::<C>(0, Some(u.c?)).ok()?;
        let bias = match u.bias {
            Some(union) => Some(reg.add::<C>(0, Some(union)).ok()?),
            None => None,
        };
        // Element offsets of an entry's operand in its union (pointers are element-aligned:
        // RawGemm::check refuses others).
        let at = |e: Option<(u64, u64)>, union: Option<(u64, u64)>, elem: usize| match (e, union) {
            (Some((s, _)), Some((us, _))) => ((s - us) / elem as u64) as usize,
            _ => 0,
        };
        let (ea, ec) = (std::mem::size_of::<A>(), std::mem::size_of::<C>());
        let mut last = None;
        for (entry, (call, e)) in calls.iter().zip(extents).enumerate() {
            let bias = bias
                .as_ref()
                .map(|span| span.mat_at(at(e.bias, u.bias, ec), call.n));
            let mut req = GemmRequest::new(
                call.op,
                (call.m, call.n, call.k),
                a.mat_at(at(e.a, u.a, ea), call.a.ld),
                b.mat_at(at(e.b, u.b, ea), call.b.ld),
                c.mat_mut_at(at(e.c, u.c, ec), call.c.ld),
            )
            .with_bias(bias)
            .with_beta(call.beta);
            req.policy = call.policy;
            req.mode = call.mode;
            match self.gemm(req) {
                Ok(l) => last = Some(l),
                Err(error) => return Some(Err(BatchFailure { entry, error })),
            }
        }
        Some(Ok(last))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(a: u64, c: u64) -> RawExtents {
        RawExtents {
            a: Some((a, a + 64)),
            b: Some((0x9000, 0x9100)),
            bias: None,
            c: Some((c, c + 32)),
        }
    }

    #[test]
    fn unions_span_every_entry_of_an_operand() {
        let u = unions(&[
            ext(0x1000, 0x5000),
            ext(0x1040, 0x5020),
            ext(0x1080, 0x5040),
        ])
        .unwrap();
        assert_eq!(u.a, Some((0x1000, 0x10c0)));
        assert_eq!(u.b, Some((0x9000, 0x9100)));
        assert_eq!(u.bias, None);
        assert_eq!(u.c, Some((0x5000, 0x5060)));
    }

    #[test]
    fn entries_with_different_operands_present_have_no_unions() {
        let mut odd = ext(0x1040, 0x5020);
        odd.bias = Some((0x7000, 0x7010));
        assert_eq!(unions(&[ext(0x1000, 0x5000), odd]), None);
        assert_eq!(unions(&[]), None);
    }
}
