//! The checker's required pod affinity and anti-affinity of the placed pod, counted per domain
//! as the replay goes.
//!
//! Input: the replayed cluster at one turn, the placed pod's terms and its node's value of
//! each term's topology key. Output: per term, how many pods the terms select in that domain,
//! and in every domain of the key. Upstream counterpart: InterPodAffinity's Filter
//! (`pkg/scheduler/framework/plugins/interpodaffinity/filtering.go`), which counts the existing
//! pods matching the incoming pod's terms per topology value in its PreFilter.
//!
//! Pods whose terms select alike (owner namespace, terms, topology keys, whether victims still
//! count) share one tally, built by a full scan the first time and then moved by each change of
//! the replayed cluster since, as the spread rule's tallies are (`check/spread.rs`): one scan of
//! the pods per tally instead of one per placement.

use std::collections::BTreeMap;

use super::{Replay, kept};
use crate::model::Pod;

/// The tallies of one replay, by signature.
pub(super) type Tallies = kept::Kept<Tally>;

/// The pods one set of terms counts, per topology key (one per term), on nodes with the key.
pub(super) struct Term<'s> {
    /// What the counts depend on besides `keys` and `ghosts` (the owner's namespace and terms).
    pub(super) signature: String,
    /// The topology keys.
    pub(super) keys: &'s [&'s str],
    /// Whether the victims of later preemptors still count (affinity), or only live pods
    /// (anti-affinity).
    pub(super) ghosts: bool,
    /// Whether a pod counts.
    pub(super) selects: &'s dyn Fn(&Pod) -> bool,
}

/// Counted pods per value of each key, as of one turn and one change.
pub(super) struct Tally {
    /// Per key: counted pods per value.
    counts: Vec<BTreeMap<String, i64>>,
    /// Per key: counted pods on nodes with the key.
    totals: Vec<i64>,
    /// The turn the ghosts were counted for.
    turn: usize,
    /// How many of the replay's changes are counted.
    changes: usize,
}

impl Tally {
    fn count(&mut self, replay: &Replay<'_>, term: &Term<'_>, m: usize, q: &Pod, by: i64) {
        let Some(node) = replay.node(m) else { return };
        if !term.keys.iter().any(|k| node.labels.contains_key(*k)) || !(term.selects)(q) {
            return;
        }
        for (i, k) in term.keys.iter().enumerate() {
            if let Some(v) = node.labels.get(*k) {
                *self.counts[i].entry(v.clone()).or_insert(0) += by;
                self.totals[i] += by;
            }
        }
    }
}

/// For `term` at `turn`, per key: the pods it counts in the domain of `values`' entry for the
/// key, and in all domains of the key.
pub(super) fn counts_at(
    replay: &Replay<'_>,
    turn: usize,
    term: &Term<'_>,
    values: &[&str],
) -> Vec<(i64, i64)> {
    let signature = format!("{} {:?} {}", term.signature, term.keys, term.ghosts);
    let stored = replay.terms.take(&signature).filter(|t| t.turn <= turn);
    let mut tally = match stored {
        Some(t) => t,
        None => build(replay, turn, term),
    };
    advance(replay, &mut tally, turn, term);
    let answer = tally
        .counts
        .iter()
        .zip(&tally.totals)
        .zip(values)
        .map(|((counts, &total), v)| (counts.get(*v).copied().unwrap_or(0), total))
        .collect();
    replay.terms.put(signature, tally);
    answer
}

/// A tally by a full scan of the pods seen at `turn` (live only without ghosts).
fn build(replay: &Replay<'_>, turn: usize, term: &Term<'_>) -> Tally {
    let mut tally = Tally {
        counts: vec![BTreeMap::new(); term.keys.len()],
        totals: vec![0; term.keys.len()],
        turn,
        changes: replay.changes.len(),
    };
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

/// Brings `tally` to `turn` and the replay's present ([`Replay::seen_since`]).
fn advance(replay: &Replay<'_>, tally: &mut Tally, turn: usize, term: &Term<'_>) {
    for (m, q, by) in replay.seen_since(tally.changes, tally.turn, turn, term.ghosts) {
        tally.count(replay, term, m, q, by);
    }
    tally.changes = replay.changes.len();
    tally.turn = turn;
}
