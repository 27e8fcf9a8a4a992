//! A batch of raw GEMMs ([`Context::gemm_raw_batch`]): every entry checked before the first
//! launch, then launched in order. A strided batch (a bmm over one tensor an operand) has each
//! operand's entries inside one driver allocation: then that operand is registered once, over
//! the union of its entries' extents, and each entry runs as a view into it, so the driver's
//! bounds and the registry are consulted once a batch, not once an entry.

use crate::context::Context;
use crate::element::Element;
use crate::raw::{
    by_element_types, check_batch_overlaps, BatchFailure, Bounds, RawExtents, RawGemm, Registered,
};
use crate::request::{GemmRequest, Launch};
use crate::strided::Strides;
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

/// The element strides of a batch whose entries differ only in their pointers, each
/// operand's entries a fixed whole number of elements apart (`elems`: bytes of an A and of a C
/// element); `None` for any other batch.
pub(crate) fn uniform_strides(calls: &[RawGemm], (ea, ec): (u64, u64)) -> Option<Strides> {
    let first = calls.first()?;
    let same = |c: &RawGemm| {
        (c.op, c.m, c.n, c.k, c.ab, c.c_dtype)
            == (first.op, first.m, first.n, first.k, first.ab, first.c_dtype)
            && (c.a.ld, c.b.ld, c.c.ld) == (first.a.ld, first.b.ld, first.c.ld)
            && c.beta.to_bits() == first.beta.to_bits()
            && (c.policy, c.mode) == (first.policy, first.mode)
            && c.bias.is_some() == first.bias.is_some()
    };
    if !calls.iter().all(same) {
        return None;
    }
    // The stride of one pointer, in elements, when every entry keeps it.
    let stride = |ptr: &dyn Fn(&RawGemm) -> u64, elem: u64| -> Option<i64> {
        let step = match calls.get(1) {
            Some(second) => ptr(second).wrapping_sub(ptr(first)) as i64,
            None => 0,
        };
        if step % elem as i64 != 0 {
            return None;
        }
        let kept = calls
            .iter()
            .enumerate()
            .all(|(e, c)| ptr(c) == ptr(first).wrapping_add((e as i64).wrapping_mul(step) as u64));
        kept.then_some(step / elem as i64)
    };
    Some(Strides {
        a: stride(&|c| c.a.ptr, ea)?,
        b: stride(&|c| c.b.ptr, ea)?,
        c: stride(&|c| c.c.ptr, ec)?,
        bias: stride(&|c| c.bias.unwrap_or(0), ec)?,
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
    /// registered once over all of them; where, moreover, the entries are one shape a fixed
    /// distance apart and the route has a batched kernel, the batch is one launch (grid z over
    /// the entries). The bits are those of [`gemm_raw`](Self::gemm_raw) entry by entry; the
    /// returned launch is then the batched one.
    pub fn gemm_raw_batch(&self, calls: &[RawGemm]) -> Result<Option<Launch>, BatchFailure> {
        let failed = |error| BatchFailure { entry: 0, error };
        match calls {
            [] => return Ok(None),
            // One call: gemm_raw's work (the driver's allocations are consulted as it registers
            // them), with nothing allocated for a batch.
            [call] => {
                let e = call.check().map_err(failed)?;
                return by_element_types!(
                    call.ab,
                    call.c_dtype,
                    self.gemm_raw_typed(call, e, Bounds::Queried)
                )
                .map(Some)
                .map_err(failed);
            }
            _ => {}
        }
        let mut extents = Vec::with_capacity(calls.len());
        for (entry, call) in calls.iter().enumerate() {
            extents.push(
                call.check()
                    .map_err(|error| BatchFailure { entry, error })?,
            );
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
        // Bound first: the driver answers allocation queries for the current context.
        let mut reg = match Registered::bound(self) {
            Ok(reg) => reg,
            Err(error) => return Some(Err(BatchFailure { entry: 0, error })),
        };
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
        let request = |call: &RawGemm, e: &RawExtents| {
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
            req
        };
        // Entries a fixed distance apart: one launch of a batched kernel, where the route has
        // one (the same contract, so the same bits as entry by entry).
        if let Some(strides) = uniform_strides(calls, (ea as u64, ec as u64)) {
            match self.gemm_strided(request(&calls[0], &extents[0]), calls.len(), strides) {
                Ok(Some(launch)) => return Some(Ok(Some(launch))),
                Ok(None) => {}
                Err(error) => return Some(Err(BatchFailure { entry: 0, error })),
            }
        }
        let mut last = None;
        for (entry, (call, e)) in calls.iter().zip(extents).enumerate() {
            match self.gemm(request(call, e)) {
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

    fn call() -> RawGemm {
        use crate::raw::RawMatrix;
        use crate::table::Op;
        RawGemm {
            op: Op::Nt,
            m: 3,
            n: 40,
            k: 64,
            ab: Dtype::Bf16,
            c_dtype: Dtype::F32,
            a: RawMatrix {
                ptr: 0x10_0000,
                ld: 64,
            },
            b: RawMatrix {
                ptr: 0x20_0000,
                ld: 64,
            },
            c: RawMatrix {
                ptr: 0x30_0000,
                ld: 40,
            },
            bias: Some(0x40_0000),
            beta: 0.0,
            policy: None,
            mode: None,
        }
    }

    #[test]
    fn a_strided_batch_has_element_strides_and_others_have_none() {
        let elems = (2, 4);
        let calls = call().strided(5, (3 * 64, 0, 3 * 40)).unwrap();
        let s = uniform_strides(&calls, elems).unwrap();
        assert_eq!((s.a, s.b, s.c, s.bias), (3 * 64, 0, 3 * 40, 0));
        // One entry, no distance: strides 0.
        assert_eq!(
            uniform_strides(&calls[..1], elems),
            Some(Strides::default())
        );
        // Entries of another shape, another beta, or not a fixed distance apart.
        let mut other = calls.clone();
        other[3].m = 2;
        assert_eq!(uniform_strides(&other, elems), None);
        let mut other = calls.clone();
        other[2].beta = 1.0;
        assert_eq!(uniform_strides(&other, elems), None);
        let mut other = calls.clone();
        other[4].c.ptr += 4;
        assert_eq!(uniform_strides(&other, elems), None);
        // A distance that is no whole number of elements.
        let mut odd = call();
        odd.c.ptr += 2;
        let other = [call(), odd];
        assert_eq!(uniform_strides(&other, elems), None);
        // Entries walking down in memory: a negative stride.
        let down: Vec<RawGemm> = calls.iter().rev().copied().collect();
        assert_eq!(uniform_strides(&down, elems).unwrap().a, -3 * 64);
        assert_eq!(uniform_strides(&[], elems), None);
    }
}
