//! Counts kept per signature as the replay goes: the store the inter-pod rules' tallies
//! (`check/spread.rs`, `check/terms.rs`) share.
//!
//! Input: tallies by the signature of what they count. Output: the tally of a signature, taken
//! out for one placement and given back after it, within a bound on how many are kept.
//! No upstream counterpart (kube-scheduler's PreFilter counts afresh for every pod).

use std::cell::RefCell;
use std::collections::BTreeMap;

/// The most tallies of one kind kept at once; past it the counts are worked out afresh for
/// each placement (as correct, only slower).
const MAX_TALLIES: usize = 256;

/// The tallies of one replay, by signature.
pub(super) struct Kept<T> {
    by_signature: RefCell<BTreeMap<String, T>>,
    /// The most kept at once.
    limit: usize,
}

impl<T> Kept<T> {
    /// Keeping at most `limit` tallies (0: every placement's counts by a full scan).
    pub(super) fn new(limit: usize) -> Self {
        Kept { by_signature: RefCell::new(BTreeMap::new()), limit }
    }

    /// The tally kept for `signature`, taken out (none kept: the caller builds one).
    pub(super) fn take(&self, signature: &str) -> Option<T> {
        self.by_signature.borrow_mut().remove(signature)
    }

    /// Keeps `tally` for `signature` when there is room for it.
    pub(super) fn put(&self, signature: String, tally: T) {
        let mut kept = self.by_signature.borrow_mut();
        if kept.len() < self.limit {
            kept.insert(signature, tally);
        }
    }
}

impl<T> Default for Kept<T> {
    fn default() -> Self {
        Kept::new(MAX_TALLIES)
    }
}
