//! Memoized matching-pod counts for PreScore: per topology domain, the pods that a pod's
//! `ScheduleAnyway` constraints select, summed over every node that passes the node inclusion
//! policies — the sum upstream's `PreScore` recomputes over all pods of the cluster for every
//! pod it schedules.
//!
//! Input: the constraints, what the inclusion policies read of the incoming pod, and the
//! cluster; output: per constraint, domain value → count over the whole cluster. A node's
//! contribution is recomputed only when its [`Generation`](crate::model::Generation) changed
//! (pods added or removed), so a scheduler placing pods one at a time pays for the nodes it
//! changed, not for the cluster. The counts are exactly the ones a full pass gives.
//! Upstream has no such cache (`scoring.go` counts in parallel on every cycle); this is
//! kplace's, to keep the sequential simulator usable at tens of thousands of nodes.

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::common::{
    Constraint, IncomingPod, LABEL_HOSTNAME, count_pods_match_selector,
    match_node_inclusion_policies, node_labels_match_spread_constraints,
};
use crate::model::ClusterState;

/// The most distinct (constraints, incoming pod) keys kept; the cache is emptied past it.
const MAX_ENTRIES: usize = 64;

/// Cached counts, one entry per distinct key. Cloning gives an empty cache; every cache compares
/// equal (it is not part of the plugin's value).
#[derive(Debug, Default)]
pub(crate) struct CountCache {
    entries: Mutex<Vec<Entry>>,
}

impl Clone for CountCache {
    fn clone(&self) -> Self {
        CountCache::default()
    }
}

impl PartialEq for CountCache {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

#[derive(Debug)]
struct Entry {
    constraints: Vec<Constraint>,
    incoming: IncomingPod,
    require_all_topologies: bool,
    /// Per node: the generation its contribution was computed at (`None`: never).
    generations: Vec<Option<u64>>,
    /// Per node, per constraint: `(domain id, matching pods)` when the node counts.
    contributions: Vec<Vec<Option<(usize, i64)>>>,
    /// Per constraint: domain value → id, and the totals by id.
    domains: Vec<BTreeMap<String, usize>>,
    totals: Vec<Vec<i64>>,
}

impl Entry {
    fn new(constraints: &[Constraint], incoming: &IncomingPod, require_all: bool) -> Self {
        Entry {
            constraints: constraints.to_vec(),
            incoming: incoming.clone(),
            require_all_topologies: require_all,
            generations: Vec::new(),
            contributions: Vec::new(),
            domains: vec![BTreeMap::new(); constraints.len()],
            totals: vec![Vec::new(); constraints.len()],
        }
    }

    /// Brings every node's contribution up to date with `cluster`.
    fn refresh(&mut self, cluster: &ClusterState, namespace: &str) {
        if self.generations.len() != cluster.nodes.len() {
            self.generations = vec![None; cluster.nodes.len()];
            self.contributions = vec![Vec::new(); cluster.nodes.len()];
            for t in &mut self.totals {
                t.iter_mut().for_each(|c| *c = 0);
            }
        }
        for (n, node) in cluster.nodes.iter().enumerate() {
            let generation = node.generation.get();
            if self.generations[n] == Some(generation) {
                continue;
            }
            // Take the old contribution out of the totals, then add the new one.
            for (i, old) in self.contributions[n].iter().enumerate() {
                if let Some((domain, count)) = *old {
                    self.totals[i][domain] -= count;
                }
            }
            let counts = !self.require_all_topologies
                || node_labels_match_spread_constraints(&node.labels, &self.constraints);
            let mut contribution = Vec::with_capacity(self.constraints.len());
            for (i, c) in self.constraints.iter().enumerate() {
                if !counts
                    || c.topology_key == LABEL_HOSTNAME
                    || !match_node_inclusion_policies(c, &self.incoming, node)
                {
                    contribution.push(None);
                    continue;
                }
                let value = node.labels.get(&c.topology_key).map_or("", String::as_str);
                let next = self.domains[i].len();
                let domain = *self.domains[i].entry(value.to_string()).or_insert(next);
                if domain == self.totals[i].len() {
                    self.totals[i].push(0);
                }
                let count = count_pods_match_selector(&node.pods, &c.selector, namespace);
                self.totals[i][domain] += count;
                contribution.push(Some((domain, count)));
            }
            self.contributions[n] = contribution;
            self.generations[n] = Some(generation);
        }
    }

    /// The count of constraint `i` in domain `value` (0 for a domain no counted node has).
    fn count(&self, i: usize, value: &str) -> i64 {
        self.domains[i].get(value).map_or(0, |&d| self.totals[i][d])
    }
}

impl CountCache {
    /// Fills `counts[i][value]` for every domain already present in `counts[i]` (the domains of
    /// the scored nodes) with the matching pods of constraint `i` over the nodes of `cluster`
    /// that count: those with every constraint's key when `require_all_topologies`, and that
    /// pass the constraint's inclusion policies for `incoming`. Hostname constraints are left
    /// alone (they are counted per node during Score).
    pub(crate) fn fill(
        &self,
        cluster: &ClusterState,
        constraints: &[Constraint],
        incoming: &IncomingPod,
        require_all_topologies: bool,
        counts: &mut [BTreeMap<String, i64>],
    ) {
        let mut entries = self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let found = entries.iter().position(|e| {
            e.require_all_topologies == require_all_topologies
                && e.constraints == constraints
                && e.incoming == *incoming
        });
        let at = match found {
            Some(at) => at,
            None => {
                if entries.len() >= MAX_ENTRIES {
                    entries.clear();
                }
                entries.push(Entry::new(constraints, incoming, require_all_topologies));
                entries.len() - 1
            }
        };
        let entry = &mut entries[at];
        entry.refresh(cluster, &incoming.namespace);
        for (i, domain_counts) in counts.iter_mut().enumerate() {
            if constraints.get(i).is_some_and(|c| c.topology_key == LABEL_HOSTNAME) {
                continue;
            }
            for (value, count) in domain_counts.iter_mut() {
                *count = entry.count(i, value);
            }
        }
    }
}
