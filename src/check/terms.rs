//! The checker's required pod affinity and anti-affinity of the placed pod, counted per domain
//! as the replay goes.
//!
//! Input: the replayed cluster at one turn, the placed pod's terms and its node's value of a
//! term's topology key. Output: how many pods the term selects in that domain, and in every
//! domain of the key. Upstream counterpart: InterPodAffinity's Filter
//! (`pkg/scheduler/framework/plugins/interpodaffinity/filtering.go`), which counts the existing
//! pods matching the incoming pod's terms per topology value in its PreFilter.
//!
//! Pods whose terms select alike (owner namespace, terms, topology key, whether victims still
//! count) share one tally, built by a full scan the first time and then moved by each change of
//! the replayed cluster since, as the spread rule's tallies are (`check/spread.rs`): one scan of
//! the pods per tally instead of one per placement.

use std::collections::BTreeMap;

use super::{Replay, kept};
use crate::model::Pod;

/// The tallies of one replay, by signature.
pub(super) type Tallies = kept::Kept<Tally>;

/// The pods one term counts, on nodes with its key.
pub(super) struct Term<'s> {
    /// What the counts depend on besides `key` and `ghosts` (the owner's namespace and terms).
    pub(super) signature: String,
    /// The topology key.
    pub(super) key: &'s str,
    /// Whether the victims of later preemptors still count (affinity), or only live pods
    /// (anti-affinity).
    pub(super) ghosts: bool,
    /// Whether a pod counts.
    pub(super) selects: &'s dyn Fn(&Pod) -> bool,
}

/// Counted pods per value of one key, as of one turn and one change.
pub(super) struct Tally {
    /// Counted pods per value of the key.
    counts: BTreeMap<String, i64>,
    /// Counted pods on nodes with the key.
    total: i64,
    /// The turn the ghosts were counted for.
    turn: usize,
    /// How many of the replay's changes are counted.
    changes: usize,
}

impl Tally {
    fn count(&mut self, replay: &Replay<'_>, term: &Term<'_>, m: usize, q: &Pod, by: i64) {
        if let Some(v) = replay.node(m).and_then(|nd| nd.labels.get(term.key))
            && (term.selects)(q)
        {
            *self.counts.entry(v.clone()).or_insert(0) += by;
            self.total += by;
        }
    }
}

/// For `term` at `turn`: the pods it counts in the domain `value`, and in all domains.
pub(super) fn counts_at(
    replay: &Replay<'_>,
    turn: usize,
    term: &Term<'_>,
    value: &str,
) -> (i64, i64) {
    let signature = format!("{} {:?} {}", term.signature, term.key, term.ghosts);
    let stored = replay.terms.take(&signature).filter(|t| t.turn <= turn);
    let mut tally = match stored {
        Some(t) => t,
        None => build(replay, turn, term),
    };
    advance(replay, &mut tally, turn, term);
    let answer = (tally.counts.get(value).copied().unwrap_or(0), tally.total);
    replay.terms.put(signature, tally);
    answer
}

/// A tally by a full scan of the pods seen at `turn` (live only without ghosts).
fn build(replay: &Replay<'_>, turn: usize, term: &Term<'_>) -> Tally {
    let mut tally =
        Tally { counts: BTreeMap::new(), total: 0, turn, changes: replay.changes.len() };
    if term.ghosts {
        for (m, q) in replay.seen_at(turn) {
            tally.count(replay, term, m, q, 1);
        }
    } else {
        for (m, q) in replay.live_pods() {
            tally.count(replay, term, m, q, 1);
        }
    }
    tally
}

/// Brings `tally` to `turn` and the replay's present: the changes since it was last moved,
/// and, when ghosts count, the victims whose preemptor's turn came in between.
fn advance(replay: &Replay<'_>, tally: &mut Tally, turn: usize, term: &Term<'_>) {
    for &(m, q, added) in &replay.changes[tally.changes..] {
        tally.count(replay, term, m, q, if added { 1 } else { -1 });
    }
    if term.ghosts {
        // The ghosts are sorted by their preemptor's turn.
        let ghosts = &replay.ghosts;
        let gone = ghosts.partition_point(|g| g.turn <= tally.turn)
            ..ghosts.partition_point(|g| g.turn <= turn);
        for g in &ghosts[gone] {
            tally.count(replay, term, g.node, g.pod, -1);
        }
    }
    tally.changes = replay.changes.len();
    tally.turn = turn;
}
