//! Each thread's memo of recent route lookups. The generated `match` walks a tier's routes in
//! order, and a tuned tier has hundreds (sm90a's bf16 NN: 436), so a shape that falls to a
//! late route costs about a thousand instructions a lookup, twice a call (the default policy's
//! probe, then the route). A decode loop asks for the same few shapes on every step: a
//! direct-mapped memo of the last answers serves them in a few dozen. The answer is a pure
//! function of (set, tier, policy, op, dtype, m, n, k); each set gets its own id, so a set
//! dropped and another made at its address never reads the first one's answers.

use crate::fast_hash::mix64;
use crate::table::{RouteHit, TierId};
use crate::vocab::{DtypeTriple, Op, Policy};
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

// The packing of `Question::what` gives the tier 16 bits and each enum 8.
const _: () = assert!(std::mem::size_of::<TierId>() == 2);

/// Slots a thread keeps: every GEMM shape of a few transformer layers at one m.
const SLOTS: usize = 64;

/// Ids of sets, from 1 (0 marks an empty slot).
static NEXT_SET: AtomicU64 = AtomicU64::new(1);

/// A fresh set id.
pub(crate) fn new_set_id() -> u64 {
    NEXT_SET.fetch_add(1, Ordering::Relaxed)
}

/// What a lookup asks: the set, its (tier, policy, op, dtype) packed in one word, and m, n, k.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Question {
    set: u64,
    what: u64,
    m: u64,
    n: u64,
    k: u64,
}

impl Question {
    pub(crate) fn new(
        set: u64,
        (tier, policy, op, dtype): (TierId, Policy, Op, DtypeTriple),
        (m, n, k): (u64, u64, u64),
    ) -> Question {
        let what = u64::from(tier.0)
            | (policy as u64) << 16
            | (op as u64) << 24
            | (dtype.ab as u64) << 32
            | (dtype.c as u64) << 40
            | (dtype.acc as u64) << 48;
        Question { set, what, m, n, k }
    }

    fn slot(&self) -> usize {
        let h = mix64(
            self.what
                ^ self.m.rotate_left(13)
                ^ self.n.rotate_left(29)
                ^ self.k.rotate_left(43)
                ^ self.set.rotate_left(59),
        );
        (h as usize) % SLOTS
    }
}

#[derive(Clone, Copy)]
struct Entry {
    question: Question,
    answer: Option<RouteHit>,
}

const EMPTY: Entry = Entry {
    question: Question {
        set: 0,
        what: 0,
        m: 0,
        n: 0,
        k: 0,
    },
    answer: None,
};

thread_local! {
    static MEMO: RefCell<[Entry; SLOTS]> = const { RefCell::new([EMPTY; SLOTS]) };
}

/// The answer to `question`: the memo's, or `compute`'s (then kept).
pub(crate) fn answer(
    question: Question,
    compute: impl FnOnce() -> Option<RouteHit>,
) -> Option<RouteHit> {
    let slot = question.slot();
    let kept = MEMO
        .try_with(|memo| {
            let memo = memo.try_borrow().ok()?;
            let e = memo[slot];
            (e.question == question).then_some(e.answer)
        })
        .ok()
        .flatten();
    if let Some(answer) = kept {
        return answer;
    }
    let answer = compute();
    // A thread being torn down, or a lookup inside a lookup, keeps nothing.
    let _ = MEMO.try_with(|memo| {
        if let Ok(mut memo) = memo.try_borrow_mut() {
            memo[slot] = Entry { question, answer };
        }
    });
    answer
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::KernelId;
    use crate::vocab::Dtype;
    use std::cell::Cell;

    fn q(set: u64, m: u64) -> Question {
        let bf16 = DtypeTriple::new(Dtype::Bf16, Dtype::Bf16, Dtype::F32);
        Question::new(
            set,
            (TierId(3), Policy::TensorCore, Op::Nn, bf16),
            (m, 4096, 4096),
        )
    }

    fn hit(kernel: u16) -> Option<RouteHit> {
        Some(RouteHit {
            kernel: KernelId(kernel),
            rule: 1,
            unaligned: None,
            wave_fit: &[],
        })
    }

    #[test]
    fn a_question_asked_again_is_answered_from_the_memo_and_others_are_computed() {
        let computed = Cell::new(0);
        let ask = |question: Question, kernel: u16| {
            answer(question, || {
                computed.set(computed.get() + 1);
                hit(kernel)
            })
        };
        let set = new_set_id();
        assert_eq!(ask(q(set, 1), 7), hit(7));
        assert_eq!(ask(q(set, 1), 99), hit(7), "kept: not computed again");
        assert_eq!(computed.get(), 1);
        // Another m, another set: their own answers.
        assert_eq!(ask(q(set, 2), 8), hit(8));
        let other = new_set_id();
        assert_eq!(ask(q(other, 1), 9), hit(9));
        assert_eq!(computed.get(), 3);
        // A refusal is kept as one.
        let none = q(set, 3);
        assert_eq!(answer(none, || None), None);
        assert_eq!(answer(none, || hit(1)), None);
    }

    #[test]
    fn questions_that_share_a_slot_each_get_their_own_answer() {
        // More questions than slots: whatever the memo evicts, every answer is the right one.
        let set = new_set_id();
        for round in 0..3 {
            for m in 0..(4 * SLOTS as u64) {
                let expected = hit((m % 1000) as u16);
                assert_eq!(
                    answer(q(set, m), || expected),
                    expected,
                    "round {round}, m {m}"
                );
            }
        }
    }
}
