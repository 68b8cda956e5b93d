//! Cluster-wide sums of per-node contributions, kept across scheduling cycles: the maintained
//! per-domain counts behind the inter-pod plugins' PreFilter and PreScore.
//!
//! Input: a key (what the sum depends on besides the cluster: the incoming pod's relevant
//! fields), the cluster, and how one node contributes. Output: the totals over every node,
//! exactly those a full pass would sum. Each node's contribution is remembered with the node's
//! [`Generation`](crate::model::Generation), which changes whenever a pod is added or removed
//! (and a clone keeps it, so equal generations mean equal pods); a cycle recomputes only the
//! nodes whose generation changed and moves the totals by the difference. A sequential
//! scheduler that assumes one pod per cycle thus pays one node's recount plus a generation
//! check per node, instead of a walk over every pod of the cluster.
//!
//! A key is kept from its second use on: its first use sums the nodes directly, without
//! storing a contribution per node. Callers that ask once per distinct key (the matrix
//! preparation of a batch whose pods all differ) thus pay a plain pass, not the memo's
//! per-node storage and its eviction.
//!
//! Upstream has no such memo: its PreFilter and PreScore walk all nodes (in parallel) every
//! cycle. The totals are the same; kplace keeps them to make the simulator fast.

use std::sync::Mutex;

use crate::model::{ClusterState, Node};

/// The most distinct keys kept per plugin; past it the least recently used is dropped.
const MAX_ENTRIES: usize = 16;

/// The most keys remembered as used once (not yet kept); past it the oldest is forgotten.
const MAX_SEEN: usize = 16;

/// Totals that per-node contributions are added to and taken out of.
pub(crate) trait Totals<C>: Default {
    /// Adds (`sign` 1) or removes (`sign` -1) one node's contribution.
    fn apply(&mut self, contribution: &C, sign: i64);
}

/// Memoized totals, one entry per distinct key. Cloning gives an empty memo; memos compare
/// equal (a memo is not part of its plugin's value).
#[derive(Debug)]
pub(crate) struct NodeMemo<K, C, T> {
    inner: Mutex<Inner<K, C, T>>,
}

#[derive(Debug)]
struct Inner<K, C, T> {
    entries: Vec<Entry<K, C, T>>,
    /// Keys used once and not kept, oldest first.
    seen: Vec<K>,
    clock: u64,
}

#[derive(Debug)]
struct Entry<K, C, T> {
    key: K,
    last_used: u64,
    /// Per node index: the generation its contribution was computed at (`None`: never).
    generations: Vec<Option<u64>>,
    contributions: Vec<C>,
    totals: T,
}

impl<K, C, T> Default for NodeMemo<K, C, T> {
    fn default() -> Self {
        NodeMemo { inner: Mutex::new(Inner { entries: Vec::new(), seen: Vec::new(), clock: 0 }) }
    }
}

impl<K, C, T> Clone for NodeMemo<K, C, T> {
    fn clone(&self) -> Self {
        NodeMemo::default()
    }
}

impl<K, C, T> PartialEq for NodeMemo<K, C, T> {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

impl<K, C, T> Eq for NodeMemo<K, C, T> {}

impl<K: PartialEq + Clone, C: Default, T: Totals<C>> NodeMemo<K, C, T> {
    /// Brings the totals of `key` up to date with `cluster` — `contribution` computes one
    /// node's part — and hands them to `read`.
    pub(crate) fn with<R>(
        &self,
        key: &K,
        cluster: &ClusterState,
        mut contribution: impl FnMut(&Node) -> C,
        read: impl FnOnce(&T) -> R,
    ) -> R {
        let mut inner = self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        inner.clock += 1;
        let clock = inner.clock;
        let at = match inner.entries.iter().position(|e| e.key == *key) {
            Some(at) => at,
            None => {
                // First use: a plain sum, and the key remembered; kept from its second use.
                match inner.seen.iter().position(|k| k == key) {
                    Some(i) => {
                        inner.seen.remove(i);
                    }
                    None => {
                        if inner.seen.len() >= MAX_SEEN {
                            inner.seen.remove(0);
                        }
                        inner.seen.push(key.clone());
                        drop(inner);
                        let mut totals = T::default();
                        for node in &cluster.nodes {
                            totals.apply(&contribution(node), 1);
                        }
                        return read(&totals);
                    }
                }
                if inner.entries.len() >= MAX_ENTRIES
                    && let Some(oldest) =
                        (0..inner.entries.len()).min_by_key(|&i| inner.entries[i].last_used)
                {
                    inner.entries.swap_remove(oldest);
                }
                inner.entries.push(Entry {
                    key: key.clone(),
                    last_used: clock,
                    generations: Vec::new(),
                    contributions: Vec::new(),
                    totals: T::default(),
                });
                inner.entries.len() - 1
            }
        };
        let entry = &mut inner.entries[at];
        entry.last_used = clock;
        let n = cluster.nodes.len();
        if entry.generations.len() != n {
            entry.generations = vec![None; n];
            entry.contributions = (0..n).map(|_| C::default()).collect();
            entry.totals = T::default();
        }
        for (i, node) in cluster.nodes.iter().enumerate() {
            let generation = node.generation.get();
            if entry.generations[i] == Some(generation) {
                continue;
            }
            let new = contribution(node);
            if entry.generations[i].is_some() {
                entry.totals.apply(&entry.contributions[i], -1);
            }
            entry.totals.apply(&new, 1);
            entry.contributions[i] = new;
            entry.generations[i] = Some(generation);
        }
        read(&entry.totals)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::testing::{NodeBuilder, PodBuilder, cluster};
    use std::sync::Arc;

    #[derive(Default)]
    struct Sum(i64);

    impl Totals<i64> for Sum {
        fn apply(&mut self, c: &i64, sign: i64) {
            self.0 += sign * c;
        }
    }

    fn pods(c: &ClusterState) -> i64 {
        c.nodes.iter().map(|n| n.pods.len() as i64).sum()
    }

    #[test]
    fn totals_follow_pods_added_and_removed_and_only_changed_nodes_are_recounted() {
        let mut c = cluster(
            vec![NodeBuilder::new("a").obj(), NodeBuilder::new("b").obj()],
            vec![PodBuilder::new("ns", "p0").node("a").obj()],
        );
        let memo: NodeMemo<u8, i64, Sum> = NodeMemo::default();
        let mut visits = 0;
        let total = |c: &ClusterState, visits: &mut usize| {
            memo.with(
                &0,
                c,
                |n| {
                    *visits += 1;
                    n.pods.len() as i64
                },
                |t| t.0,
            )
        };
        assert_eq!(total(&c, &mut visits), 1);
        assert_eq!(visits, 2, "the first cycle counts every node");
        assert_eq!(total(&c, &mut visits), 1);
        assert_eq!(visits, 4, "the second use of the key counts every node and keeps them");
        assert_eq!(total(&c, &mut visits), 1);
        assert_eq!(visits, 4, "nothing changed: no node recounted");
        c.nodes[1].add_pod(Arc::new(PodBuilder::new("ns", "p1").node("b").obj()));
        assert_eq!(total(&c, &mut visits), pods(&c));
        assert_eq!(visits, 5, "only the changed node is recounted");
        c.nodes[0].remove_pod("ns", "p0");
        assert_eq!(total(&c, &mut visits), pods(&c));
        // Another cluster (a clone that diverged) is brought up to date as well.
        let mut other = c.clone();
        other.nodes[0].add_pod(Arc::new(PodBuilder::new("ns", "p2").node("a").obj()));
        assert_eq!(total(&other, &mut visits), pods(&other));
        assert_eq!(total(&c, &mut visits), pods(&c));
    }

    #[test]
    fn the_least_recently_used_key_makes_room() {
        let c = cluster(vec![NodeBuilder::new("a").obj()], vec![]);
        let memo: NodeMemo<usize, i64, Sum> = NodeMemo::default();
        for key in 0..MAX_ENTRIES + 3 {
            for _ in 0..2 {
                assert_eq!(memo.with(&key, &c, |_| key as i64, |t| t.0), key as i64);
            }
        }
        let inner = memo.inner.lock().unwrap();
        assert_eq!(inner.entries.len(), MAX_ENTRIES);
        assert!(inner.entries.iter().all(|e| e.key >= 3), "the three oldest keys went first");
    }

    #[test]
    fn a_key_used_once_is_summed_without_being_kept() {
        let c = cluster(
            vec![NodeBuilder::new("a").obj(), NodeBuilder::new("b").obj()],
            vec![PodBuilder::new("ns", "p0").node("a").obj()],
        );
        let memo: NodeMemo<usize, i64, Sum> = NodeMemo::default();
        for key in 0..MAX_SEEN + 5 {
            assert_eq!(memo.with(&key, &c, |n| n.pods.len() as i64, |t| t.0), 1);
        }
        let inner = memo.inner.lock().unwrap();
        assert!(inner.entries.is_empty(), "no key was used twice");
        assert_eq!(inner.seen.len(), MAX_SEEN, "the oldest keys seen once are forgotten");
        assert_eq!(inner.seen.first(), Some(&5));
    }
}
