//! What the parent holds on a child's behalf, and the cap on it.
//!
//! A child can make its parent hold memory without spending any of its own:
//! args that wait for a tool, answers the child does not read, a tool's
//! output being read on the child's behalf. None of it is the child's
//! memory, so the child's own cap does not bound it. [`Holdings`] does: every
//! byte the parent keeps for one connection is held against one cap, and
//! what does not fit is refused at once (the call is answered `limit`),
//! never queued and never grown into.
//!
//! ```
//! use wire::Holdings;
//! let holdings = Holdings::new(100);
//! let args = holdings.try_hold(60).expect("60 of 100 fit");
//! assert!(holdings.try_hold(60).is_err()); // 120 would go over
//! drop(args); // released when the call ends
//! assert!(holdings.try_hold(60).is_ok());
//! assert_eq!(holdings.peak(), 60);
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The parent's default cap on what it holds for one execution: 64 MiB, room
/// for a few frames at the largest size while bounding what a hostile child
/// can pin.
pub const DEFAULT_MAX_HELD: usize = 64 << 20;

/// One cap on the bytes a parent holds for one connection. Cheap to clone;
/// clones share the count.
#[derive(Clone)]
pub struct Holdings {
    shared: Arc<Shared>,
}

struct Shared {
    cap: usize,
    used: AtomicUsize,
    peak: AtomicUsize,
}

/// Bytes held against a [`Holdings`], given back when dropped.
#[must_use = "the bytes are released when this is dropped"]
pub struct Held {
    holdings: Holdings,
    bytes: usize,
}

/// A hold that would have gone over the cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "the parent holds {used} of its {cap} bytes for this execution; {asked} more would go over"
)]
pub struct OverHoldings {
    /// Bytes asked for.
    pub asked: usize,
    /// Bytes held when it was asked.
    pub used: usize,
    /// The cap.
    pub cap: usize,
}

impl Holdings {
    /// A cap of `cap` bytes.
    pub fn new(cap: usize) -> Self {
        Holdings {
            shared: Arc::new(Shared {
                cap,
                used: AtomicUsize::new(0),
                peak: AtomicUsize::new(0),
            }),
        }
    }

    /// Holds `bytes` if they fit under the cap; all or nothing.
    pub fn try_hold(&self, bytes: usize) -> Result<Held, OverHoldings> {
        let cap = self.shared.cap;
        let updated = self
            .shared
            .used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(bytes).filter(|total| *total <= cap)
            });
        match updated {
            Ok(before) => {
                self.note_peak(before + bytes);
                Ok(Held {
                    holdings: self.clone(),
                    bytes,
                })
            }
            Err(used) => Err(OverHoldings {
                asked: bytes,
                used,
                cap,
            }),
        }
    }

    /// Holds `bytes` whether or not they fit. Only for small things whose
    /// number is bounded elsewhere (a failure answer: its text is capped and
    /// the calls that can produce one are capped), so that refusing them
    /// would lose an answer for nothing.
    pub fn hold_anyway(&self, bytes: usize) -> Held {
        let before = self.shared.used.fetch_add(bytes, Ordering::AcqRel);
        self.note_peak(before.saturating_add(bytes));
        Held {
            holdings: self.clone(),
            bytes,
        }
    }

    /// Bytes held now.
    pub fn used(&self) -> usize {
        self.shared.used.load(Ordering::Acquire)
    }

    /// The most held at once so far.
    pub fn peak(&self) -> usize {
        self.shared.peak.load(Ordering::Acquire)
    }

    /// The cap.
    pub fn cap(&self) -> usize {
        self.shared.cap
    }

    fn note_peak(&self, used: usize) {
        self.shared.peak.fetch_max(used, Ordering::AcqRel);
    }
}

impl Held {
    /// Holds `more` bytes as part of this hold, if they fit.
    pub fn try_grow(&mut self, more: usize) -> Result<(), OverHoldings> {
        let extra = self.holdings.try_hold(more)?;
        self.bytes += extra.bytes;
        std::mem::forget(extra);
        Ok(())
    }

    /// The bytes this hold has.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.holdings
            .shared
            .used
            .fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

impl std::fmt::Debug for Holdings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Holdings")
            .field("used", &self.used())
            .field("peak", &self.peak())
            .field("cap", &self.cap())
            .finish()
    }
}

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Held").field("bytes", &self.bytes).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hold_over_the_cap_is_refused_whole_and_says_why() {
        let holdings = Holdings::new(10);
        let _a = holdings.try_hold(7).unwrap();
        let err = holdings.try_hold(4).unwrap_err();
        assert_eq!(
            err,
            OverHoldings {
                asked: 4,
                used: 7,
                cap: 10
            }
        );
        assert_eq!(holdings.used(), 7, "a refused hold takes nothing");
        assert!(err.to_string().contains("7 of its 10 bytes"), "{err}");
    }

    #[test]
    fn dropping_a_hold_gives_its_bytes_back_and_the_peak_stays() {
        let holdings = Holdings::new(10);
        let mut a = holdings.try_hold(3).unwrap();
        a.try_grow(5).unwrap();
        assert_eq!((a.bytes(), holdings.used()), (8, 8));
        assert!(a.try_grow(3).is_err());
        assert_eq!(a.bytes(), 8);
        drop(a);
        assert_eq!((holdings.used(), holdings.peak()), (0, 8));
    }

    #[test]
    fn holding_anyway_goes_over_and_blocks_further_holds() {
        let holdings = Holdings::new(10);
        let over = holdings.hold_anyway(12);
        assert_eq!(holdings.used(), 12);
        assert!(holdings.try_hold(1).is_err());
        drop(over);
        assert!(holdings.try_hold(10).is_ok());
    }

    #[test]
    fn the_cap_is_what_was_given() {
        assert_eq!(Holdings::new(10).cap(), 10);
        assert_eq!(Holdings::new(0).cap(), 0);
        assert_eq!(DEFAULT_MAX_HELD, 64 * 1024 * 1024);
    }

    #[test]
    fn a_hold_that_would_overflow_is_refused() {
        let holdings = Holdings::new(usize::MAX);
        let _a = holdings.try_hold(usize::MAX - 1).unwrap();
        assert!(holdings.try_hold(2).is_err());
    }
}
