//! The checker's `DoNotSchedule` topology spread rule, replayed placement by placement.
//!
//! Input: the replayed cluster at one turn, the pod placed then and its node. Output: one
//! message per violated constraint. Upstream counterpart: PodTopologySpread's Filter
//! (`pkg/scheduler/framework/plugins/podtopologyspread/filtering.go`): matching pods per
//! eligible domain, the global minimum (0 below `minDomains` domains), and
//! `matching here + self - minimum ≤ maxSkew`.
//!
//! The counts are kept per constraint as the replay goes: pods whose constraints select alike
//! (namespace, selector, key, the node inclusion policies and what they read of the pod) share
//! one tally, built by a full scan the first time and then moved by each change of the
//! replayed cluster since (a pod added or removed, a victim leaving at its preemptor's turn).
//! A tally costs one scan of the nodes and pods, then each change once, instead of a scan per
//! placement; a replay that goes back in turns rebuilds it.

use std::collections::BTreeMap;

use super::{Replay, kept, rules};
use crate::model::{InclusionPolicy, Node, Pod, TopologySpreadConstraint, UnsatisfiableAction};

/// The tallies of one replay, by the constraint's signature.
pub(super) type Tallies = kept::Kept<Tally>;

/// Matching pods per eligible domain of one constraint, as of one turn and one change.
pub(super) struct Tally {
    /// Per node: whether it counts (has every constraint's key, passes the policies).
    eligible: Vec<bool>,
    /// Matching pods per eligible domain (every eligible domain present, 0 or more).
    counts: BTreeMap<String, i64>,
    /// How many domains hold each count (the minimum is the first key).
    histogram: BTreeMap<i64, usize>,
    /// The turn the ghosts (victims still visible) were counted for.
    turn: usize,
    /// How many of the replay's changes are counted.
    changes: usize,
}

impl Tally {
    /// Counts pod `q` on node `m` (`by`: 1 as it comes, -1 as it goes) where it counts for
    /// constraint `c` of `pod`: an eligible node, a pod the constraint selects.
    fn count(
        &mut self,
        nodes: &[Node],
        pod: &Pod,
        c: &TopologySpreadConstraint,
        m: usize,
        q: &Pod,
        by: i64,
    ) {
        if self.eligible.get(m).copied().unwrap_or(false)
            && selected(pod, c, q)
            && let Some(v) = nodes.get(m).and_then(|nd| nd.labels.get(&c.topology_key))
        {
            self.shift(v, by);
        }
    }

    fn shift(&mut self, domain: &str, by: i64) {
        let Some(count) = self.counts.get_mut(domain) else { return };
        let old = *count;
        *count += by;
        if let Some(n) = self.histogram.get_mut(&old) {
            *n -= 1;
            if *n == 0 {
                self.histogram.remove(&old);
            }
        }
        *self.histogram.entry(old + by).or_insert(0) += 1;
    }
}

/// Upstream's `DoNotSchedule` topology spread filter for `pod` on node `n`, over the pods seen
/// at `turn`: one message per violated constraint.
pub(super) fn spread_violations(
    replay: &Replay<'_>,
    turn: usize,
    pod: &Pod,
    n: usize,
) -> Vec<String> {
    let constraints: Vec<&TopologySpreadConstraint> = pod
        .topology_spread_constraints
        .iter()
        .filter(|c| c.when_unsatisfiable == UnsatisfiableAction::DoNotSchedule)
        .collect();
    let mut out = Vec::new();
    let Some(node) = replay.node(n) else { return out };
    if constraints.is_empty() {
        return out;
    }
    let keys: Vec<&str> = constraints.iter().map(|c| c.topology_key.as_str()).collect();
    for c in &constraints {
        let Some(value) = node.labels.get(&c.topology_key) else {
            out.push(format!("node has no {:?} label for a spread constraint", c.topology_key));
            continue;
        };
        let (domains, minimum, here) = counts_at(replay, turn, pod, c, &keys, value);
        let min_domains = i64::from(c.min_domains.unwrap_or(1));
        let minimum = if (domains as i64) < min_domains { 0 } else { minimum };
        let self_match = i64::from(rules::selector_matches(c.label_selector.as_ref(), &pod.labels));
        let skew = here + self_match - minimum;
        if skew > i64::from(c.max_skew) {
            out.push(format!(
                "spread on {:?}: {here} matching pods in {value:?} + {self_match} - global minimum {minimum} = skew {skew} > maxSkew {}",
                c.topology_key, c.max_skew
            ));
        }
    }
    out
}

/// For constraint `c` of `pod` at `turn`: the number of eligible domains, the least matching
/// pods in one of them, and the matching pods in domain `value`.
fn counts_at(
    replay: &Replay<'_>,
    turn: usize,
    pod: &Pod,
    c: &TopologySpreadConstraint,
    keys: &[&str],
    value: &str,
) -> (usize, i64, i64) {
    let signature = signature(pod, c, keys);
    let stored = replay.tallies.take(&signature).filter(|t| t.turn <= turn);
    let mut tally = match stored {
        Some(t) => t,
        None => build(replay, turn, pod, c, keys),
    };
    advance(replay, &mut tally, turn, pod, c);
    let answer = (
        tally.counts.len(),
        tally.histogram.keys().next().copied().unwrap_or(0),
        tally.counts.get(value).copied().unwrap_or(0),
    );
    replay.tallies.put(signature, tally);
    answer
}

/// What decides which nodes and pods constraint `c` of `pod` counts: pods with the same
/// signature share a tally.
fn signature(pod: &Pod, c: &TopologySpreadConstraint, keys: &[&str]) -> String {
    let mut s = format!(
        "{:?} {:?} {:?} {:?} {:?} {keys:?}",
        pod.namespace,
        c.topology_key,
        c.label_selector,
        c.node_affinity_policy,
        c.node_taints_policy
    );
    if c.node_affinity_policy != InclusionPolicy::Ignore {
        s.push_str(&format!(" {:?} {:?}", pod.node_selector, pod.node_affinity.required));
    }
    if c.node_taints_policy != InclusionPolicy::Ignore {
        s.push_str(&format!(" {:?}", pod.tolerations));
    }
    s
}

/// Whether node `nd` counts for constraint `c` of `pod`.
fn eligible(pod: &Pod, c: &TopologySpreadConstraint, keys: &[&str], nd: &Node) -> bool {
    keys.iter().all(|k| nd.labels.contains_key(*k))
        && (c.node_affinity_policy == InclusionPolicy::Ignore
            || rules::required_node_selection_matches(pod, nd))
        && (c.node_taints_policy == InclusionPolicy::Ignore
            || rules::untolerated_hard_taint(pod, nd).is_none())
}

/// Whether pod `q` counts for constraint `c` of `pod` (on an eligible node).
fn selected(pod: &Pod, c: &TopologySpreadConstraint, q: &Pod) -> bool {
    !q.terminating
        && q.namespace == pod.namespace
        && rules::selector_matches(c.label_selector.as_ref(), &q.labels)
}

/// A tally by a full scan of the pods seen at `turn`.
fn build(
    replay: &Replay<'_>,
    turn: usize,
    pod: &Pod,
    c: &TopologySpreadConstraint,
    keys: &[&str],
) -> Tally {
    let nodes = &replay.cluster.nodes;
    let eligible: Vec<bool> = nodes.iter().map(|nd| eligible(pod, c, keys, nd)).collect();
    let mut counts: BTreeMap<String, i64> = BTreeMap::new();
    for (nd, _) in nodes.iter().zip(&eligible).filter(|(_, e)| **e) {
        if let Some(v) = nd.labels.get(&c.topology_key) {
            counts.entry(v.clone()).or_insert(0);
        }
    }
    let histogram =
        if counts.is_empty() { BTreeMap::new() } else { BTreeMap::from([(0, counts.len())]) };
    let mut tally = Tally { eligible, counts, histogram, turn, changes: replay.changes.len() };
    for (m, q) in replay.seen_at(turn) {
        tally.count(nodes, pod, c, m, q, 1);
    }
    tally
}

/// Brings `tally` to `turn` and the replay's present: the changes since it was last moved,
/// and the victims whose preemptor's turn came in between (no longer seen).
fn advance(
    replay: &Replay<'_>,
    tally: &mut Tally,
    turn: usize,
    pod: &Pod,
    c: &TopologySpreadConstraint,
) {
    let nodes = &replay.cluster.nodes;
    for (m, q, by) in replay.seen_since(tally.changes, tally.turn, turn, true) {
        tally.count(nodes, pod, c, m, q, by);
    }
    tally.changes = replay.changes.len();
    tally.turn = turn;
}
