//! Choosing a class's next node: the candidates a class keeps across its picks
//! ([`Candidates`]: per bucket of nodes that share their inter-pod domains, a heap by score,
//! invalidated lazily as nodes change) and, for a class with a pod or two left, one scan of
//! its row ([`State::best_direct`]).
//!
//! Input: the solver's state. Output: the node the class's next pod goes to, the feasible
//! node with room and the highest score (ties to the lowest index), the same whichever way it
//! is found (tests compare them, [`super::Tuning`]).
//!
//! Upstream counterpart: kube-scheduler's Filter and Score over the nodes, then `selectHost`
//! (which breaks ties at random; here the lowest index wins, for determinism).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use super::State;

/// A class's candidate nodes, kept across its picks ([`State::pick`]): per bucket, a heap of
/// nodes by their own score. A placement changes only its own node's score, room and
/// node-local verdicts (the node is offered again at the next pick, from [`State::changes`]),
/// and its domains' shared verdicts and soft scores, which a bucket reads once per pick for
/// all its nodes; a node a node-local spread rule refuses is parked and offered again when a
/// spread minimum changes. So a pick chooses what a scan of every node would, in
/// `O(buckets + log nodes)` plus the nodes changed since the class's last pick.
pub(super) struct Candidates {
    /// The class's topologies that are not node-local
    /// ([`crate::topology::TopologyState::shared_topologies`]).
    shared: Vec<usize>,
    /// Domains in `shared` → bucket.
    bucket_of: BTreeMap<Vec<u32>, u32>,
    /// Each node's bucket ([`NO_BUCKET`]: not worked out yet).
    node_bucket: Vec<u32>,
    buckets: Vec<Bucket>,
    /// [`crate::topology::TopologyState::generation`] when the parked nodes were last offered.
    generation: u64,
    /// Entries of [`State::changes`] already offered.
    seen: usize,
}

/// A node whose bucket is not worked out yet.
const NO_BUCKET: u32 = u32::MAX;

/// Nodes of one class that share their domains in every topology of the class's inter-pod
/// rules that is not node-local: the rules give them the same verdict and soft score.
struct Bucket {
    /// A node of the bucket, to read the shared verdict and score from.
    rep: usize,
    /// `(node score or its bound, lowest index first, node version when pushed, whether the
    /// first is the score)`.
    heap: BinaryHeap<(i64, Reverse<usize>, u64, bool)>,
    /// Nodes a node-local spread rule refused, tried again when a minimum changes.
    parked: Vec<usize>,
}

impl State<'_, '_> {
    /// Class `c`'s candidates kept by the queue-order pass, else new ones.
    pub(super) fn kept_or_new(&mut self, c: usize) -> Candidates {
        match self.kept[c].take() {
            Some(k) => k,
            None => self.candidates(c),
        }
    }

    /// Class `c`'s candidates: every node that can take a pod of it now, by bucket.
    fn candidates(&mut self, c: usize) -> Candidates {
        let n_nodes = self.problem.nodes;
        let mut cands = Candidates {
            shared: self.topo.shared_topologies(c),
            bucket_of: BTreeMap::new(),
            node_bucket: vec![NO_BUCKET; n_nodes],
            buckets: Vec::new(),
            generation: self.topo.generation(),
            seen: self.changes.len(),
        };
        for node in 0..n_nodes {
            self.offer(c, &mut cands, node);
        }
        cands
    }

    /// Adds `node` to class `c`'s candidates if it can take a pod of it (parked when a
    /// node-local rule refuses it): with its score, or with its bound while the node's rescored
    /// score is not known yet (resolved when it reaches the top, [`State::pick`]).
    fn offer(&mut self, c: usize, cands: &mut Candidates, node: usize) {
        if !self.can_take_base(c, node) {
            return;
        }
        let mut b = cands.node_bucket[node];
        if b == NO_BUCKET {
            let sig: Vec<u32> =
                cands.shared.iter().map(|&t| self.topo.domain_of(t, node)).collect();
            let buckets = &mut cands.buckets;
            b = *cands.bucket_of.entry(sig).or_insert_with(|| {
                buckets.push(Bucket { rep: node, heap: BinaryHeap::new(), parked: Vec::new() });
                (buckets.len() - 1) as u32
            });
            cands.node_bucket[node] = b;
        }
        let bucket = &mut cands.buckets[b as usize];
        if !self.topo.allows_local(c, node, true) {
            bucket.parked.push(node);
            return;
        }
        let version = self.version[node];
        let entry =
            if self.changed(node) && self.rescore.is_some() && self.cached(c, node).is_none() {
                let local = self.topo.soft_local(c, node, true);
                (self.rescore_bound(c, node).saturating_add(local), Reverse(node), version, false)
            } else {
                (self.node_score(c, node), Reverse(node), version, true)
            };
        bucket.heap.push(entry);
    }

    /// Class `c`'s rescored score on `node` when it is cached for the node's current version.
    pub(super) fn cached(&self, c: usize, node: usize) -> Option<i64> {
        let (version, score) = *self.score_cache.get(c)?.as_ref()?.get(node)?;
        (version == self.version[node]).then_some(score)
    }

    /// Class `c`'s best candidate now (highest score, lowest index), as [`State::best_direct`]
    /// finds it: the nodes changed since the last pick are offered again, parked nodes
    /// retried when a spread minimum changed, then each bucket's top is checked and its
    /// shared soft score added. Stale entries (the node changed since) are dropped; a node
    /// that can no longer take a pod of the class is dropped too (nothing frees room while
    /// candidates are kept: relocation and the end of quotas drop them).
    pub(super) fn pick(&mut self, c: usize, cands: &mut Candidates) -> Option<usize> {
        let logged = self.changes.len();
        if cands.seen < logged {
            self.offer_epoch += 1;
            for i in cands.seen..logged {
                let node = self.changes[i];
                if self.offered[node] != self.offer_epoch {
                    self.offered[node] = self.offer_epoch;
                    self.offer(c, cands, node);
                }
            }
            cands.seen = logged;
        }
        if self.topo.generation() != cands.generation {
            cands.generation = self.topo.generation();
            for b in 0..cands.buckets.len() {
                for node in std::mem::take(&mut cands.buckets[b].parked) {
                    self.offer(c, cands, node);
                }
            }
        }
        let mut best: Option<((i64, Reverse<usize>), usize)> = None;
        for b in 0..cands.buckets.len() {
            let rep = cands.buckets[b].rep;
            if !self.topo.allows_local(c, rep, false) {
                continue;
            }
            let top = loop {
                let bucket = &mut cands.buckets[b];
                let Some(&(s, Reverse(node), version, exact)) = bucket.heap.peek() else {
                    break None;
                };
                if version != self.version[node] || !self.can_take_base(c, node) {
                    bucket.heap.pop(); // Stale, or the node can no longer take one.
                    continue;
                }
                if !self.topo.allows_local(c, node, true) {
                    bucket.heap.pop();
                    bucket.parked.push(node);
                    continue;
                }
                if !exact {
                    bucket.heap.pop();
                    let s = self.node_score(c, node);
                    cands.buckets[b].heap.push((s, Reverse(node), version, true));
                    continue;
                }
                break Some((s, node));
            };
            let Some((s, node)) = top else { continue };
            let key = (s.saturating_add(self.topo.soft_local(c, rep, false)), Reverse(node));
            if best.is_none_or(|(k, _)| key > k) {
                best = Some((key, b));
            }
        }
        best.map(|((_, Reverse(node)), _)| node)
    }

    /// The best node that can take a pod of class `c` now (highest score, lowest index).
    ///
    /// With a callback that scores whole rows ([`super::Rescore::rescore_row`]), a scan of the row.
    /// Otherwise nodes whose usage has not changed score from the matrix, and a changed node
    /// is rescored only if its [`super::Rescore::bound`] could beat the best found so far, highest
    /// bound first. Each node is compared by its score before the (dearer) checks of whether
    /// it can take the pod: the best of a set does not depend on the order its members are
    /// filtered in. Since a bound is at least the node's score and keys are unique per node,
    /// every way gives the node a rescoring of every node gives (property tests compare them).
    pub(super) fn best_direct(&mut self, c: usize) -> Option<usize> {
        let mut best: Option<(i64, Reverse<usize>)> = None;
        let n_nodes = self.problem.nodes;
        let row = c * n_nodes..(c + 1) * n_nodes;
        let mut scores = std::mem::take(&mut self.row_scores);
        scores.clear();
        let by_row = self.rescore.as_mut().is_some_and(|r| {
            r.rescore_row(c, &self.version, &self.free, self.problem.resources, &mut scores)
        }) && scores.len() == n_nodes;
        if by_row {
            let soft = self.topo.has_rules(c);
            for (node, &feasible) in self.problem.feasible[row].iter().enumerate() {
                if !feasible {
                    continue;
                }
                let s = if soft { self.topo.soft(c, node) } else { 0 };
                let key = (scores[node].saturating_add(s), Reverse(node));
                if best.is_none_or(|b| key > b) && self.can_take(c, node) {
                    best = Some(key);
                }
            }
            self.row_scores = scores;
            return best.map(|(_, Reverse(n))| n);
        }
        self.row_scores = scores;
        let bounded = self.rescore.is_some();
        let mut changed = std::mem::take(&mut self.changed_scratch);
        changed.clear();
        // The unchanged nodes first; changed nodes wait for the best of them.
        for (node, &feasible) in self.problem.feasible[row].iter().enumerate() {
            if !feasible {
                continue;
            }
            if bounded && self.changed(node) {
                changed.push(node);
                continue;
            }
            let key = (self.total_score(c, node), Reverse(node));
            if best.is_none_or(|b| key > b) && self.can_take(c, node) {
                best = Some(key);
            }
        }
        // The changed nodes whose bound could beat that best, rescored highest bound first
        // until none can beat the best.
        let mut deferred = std::mem::take(&mut self.deferred);
        deferred.clear();
        for &node in &changed {
            let soft = self.topo.soft(c, node);
            let bound = self.rescore_bound(c, node).saturating_add(soft);
            if best.is_none_or(|b| (bound, Reverse(node)) > b) && self.can_take(c, node) {
                deferred.push((bound, Reverse(node), soft));
            }
        }
        self.changed_scratch = changed;
        let mut heap = BinaryHeap::from(deferred);
        while let Some((bound, Reverse(node), soft)) = heap.pop() {
            if best.is_some_and(|b| (bound, Reverse(node)) <= b) {
                break;
            }
            let key = (self.score(c, node).saturating_add(soft), Reverse(node));
            if best.is_none_or(|b| key > b) {
                best = Some(key);
            }
        }
        self.deferred = heap.into_vec();
        best.map(|(_, Reverse(n))| n)
    }

    /// An upper bound of [`State::score`] of `c` on `node`, whatever the node's usage.
    fn rescore_bound(&mut self, c: usize, node: usize) -> i64 {
        match self.rescore.as_mut() {
            Some(r) if self.version[node] != 0 => r.bound(c, node),
            _ => i64::from(self.problem.score[self.cell(c, node)]),
        }
    }
}
