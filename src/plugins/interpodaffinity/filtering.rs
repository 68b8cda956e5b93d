//! InterPodAffinity PreFilter, Filter and the PreFilter extensions (AddPod/RemovePod).
//!
//! Input: the incoming pod and the whole [`ClusterState`]; output: a [`PreFilterState`] of
//! per-topology-pair counts and, per node, a [`Status`].
//! Upstream: `pkg/scheduler/framework/plugins/interpodaffinity/filtering.go` (v1.35).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{
    AffinityTerm, InterPodAffinity, NAME, existing_term_matches, incoming_terms,
    pod_matches_all_terms,
};
use crate::framework::Status;
use crate::model::{ClusterState, Labels, Node, Pod};

/// Reason when placing the pod would break an existing pod's required anti-affinity
/// (`Unschedulable`: evicting that pod can help).
pub const ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH: &str =
    "node(s) didn't satisfy existing pods anti-affinity rules";
/// Reason when the node fails the pod's required affinity (`UnschedulableAndUnresolvable`).
pub const ERR_REASON_AFFINITY_RULES_NOT_MATCH: &str = "node(s) didn't match pod affinity rules";
/// Reason when the node fails the pod's required anti-affinity (`Unschedulable`).
pub const ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH: &str =
    "node(s) didn't match pod anti-affinity rules";

/// Counts per topology pair (`topologyKey` → value → count), upstream's
/// `topologyToMatchedTermCount`. Entries that reach zero are removed, so two maps describing
/// the same counts compare equal.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TopologyCounts(Arc<BTreeMap<String, BTreeMap<String, i64>>>);

impl TopologyCounts {
    /// The count for `(key, value)` (0 when absent).
    pub fn get(&self, key: &str, value: &str) -> i64 {
        self.0.get(key).and_then(|m| m.get(value)).copied().unwrap_or(0)
    }

    /// Whether no pair has a count.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every `(key, value, count)`, ordered by key then value.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str, i64)> {
        self.0.iter().flat_map(|(k, m)| m.iter().map(move |(v, c)| (k.as_str(), v.as_str(), *c)))
    }

    /// Adds `delta` to the pair `(key, node's value of key)` if the node has the key
    /// (upstream `topologyToMatchedTermCount.update`), dropping the entry at zero.
    fn update(&mut self, node_labels: &Labels, key: &str, delta: i64) {
        let Some(value) = node_labels.get(key) else { return };
        self.add(key, value, delta);
    }

    /// Adds `delta` to the pair `(key, value)`, dropping the entry at zero (shared maps are
    /// copied first: a clone handed to a cycle's state never changes under it).
    fn add(&mut self, key: &str, value: &str, delta: i64) {
        if delta == 0 {
            return;
        }
        let map = Arc::make_mut(&mut self.0);
        let inner = match map.get_mut(key) {
            Some(inner) => inner,
            None => map.entry(key.to_string()).or_default(),
        };
        let count = match inner.get_mut(value) {
            Some(count) => count,
            None => inner.entry(value.to_string()).or_insert(0),
        };
        *count += delta;
        if *count == 0 {
            inner.remove(value);
            if inner.is_empty() {
                map.remove(key);
            }
        }
    }

    /// Adds `sign ×` every count of `other`.
    fn add_all(&mut self, other: &TopologyCounts, sign: i64) {
        for (k, v, c) in other.iter() {
            self.add(k, v, sign * c);
        }
    }

    /// For each term, adds `delta` for the term's topology pair on `node` if `pod` matches
    /// *all* the terms (upstream `updateWithAffinityTerms`).
    fn update_with_affinity_terms(
        &mut self,
        terms: &[AffinityTerm],
        pod: &Pod,
        node_labels: &Labels,
        delta: i64,
    ) {
        if pod_matches_all_terms(terms, pod) {
            for t in terms {
                self.update(node_labels, &t.topology_key, delta);
            }
        }
    }

    /// For each term that `pod` matches, adds `delta` for its topology pair on `node`
    /// (upstream `updateWithAntiAffinityTerms` with the incoming pod's merged terms).
    fn update_with_anti_affinity_terms(
        &mut self,
        terms: &[AffinityTerm],
        pod: &Pod,
        node_labels: &Labels,
        delta: i64,
    ) {
        static NO_LABELS: Labels = Labels::new();
        for t in terms {
            if t.matches(pod, &NO_LABELS) {
                self.update(node_labels, &t.topology_key, delta);
            }
        }
    }

    /// For each required anti-affinity term of the existing pod `existing` that selects the
    /// incoming pod, adds `delta` for its topology pair on `node` (upstream
    /// `updateWithAntiAffinityTerms` with an existing pod's terms and the incoming pod's
    /// namespace labels).
    fn update_with_existing_anti_affinity(
        &mut self,
        existing: &Pod,
        incoming: &Pod,
        incoming_ns_labels: &Labels,
        node_labels: &Labels,
        delta: i64,
    ) {
        for t in &existing.pod_anti_affinity.required {
            if existing_term_matches(&existing.namespace, t, incoming, incoming_ns_labels) {
                self.update(node_labels, &t.topology_key, delta);
            }
        }
    }
}

/// What PreFilter computes for one incoming pod and Filter reads (upstream `preFilterState`).
#[derive(Debug, Clone, PartialEq)]
pub struct PreFilterState {
    /// Per topology pair, how many existing pods have a required anti-affinity term that
    /// selects the incoming pod (symmetry).
    pub existing_anti_affinity_counts: TopologyCounts,
    /// Per topology pair of each required affinity term, how many existing pods match *all*
    /// the incoming pod's required affinity terms.
    pub affinity_counts: TopologyCounts,
    /// Per topology pair of each required anti-affinity term, how many existing pods match
    /// that term.
    pub anti_affinity_counts: TopologyCounts,
    /// The incoming pod's required affinity terms, namespace selectors merged.
    pub required_affinity_terms: Vec<AffinityTerm>,
    /// The incoming pod's required anti-affinity terms, namespace selectors merged.
    pub required_anti_affinity_terms: Vec<AffinityTerm>,
    /// Labels of the incoming pod's namespace (empty when not in the snapshot).
    pub namespace_labels: Labels,
    /// Whether the incoming pod matches all its own required affinity terms (the
    /// "first pod of a self-affine group" rule).
    pub pod_matches_own_affinity_terms: bool,
    /// The incoming pod's namespace and labels, which AddPod/RemovePod match existing pods'
    /// anti-affinity terms against.
    incoming: Pod,
}

impl PreFilterState {
    /// Updates the counts as if `pod` were added to `node` (upstream `AddPod`).
    pub fn add_pod(&mut self, pod: &Pod, node: &Node) {
        self.update_with_pod(pod, node, 1);
    }

    /// Updates the counts as if `pod` were removed from `node` (upstream `RemovePod`).
    pub fn remove_pod(&mut self, pod: &Pod, node: &Node) {
        self.update_with_pod(pod, node, -1);
    }

    /// Upstream `preFilterState.updateWithPod`.
    fn update_with_pod(&mut self, pod: &Pod, node: &Node, delta: i64) {
        self.existing_anti_affinity_counts.update_with_existing_anti_affinity(
            pod,
            &self.incoming,
            &self.namespace_labels,
            &node.labels,
            delta,
        );
        self.affinity_counts.update_with_affinity_terms(
            &self.required_affinity_terms,
            pod,
            &node.labels,
            delta,
        );
        self.anti_affinity_counts.update_with_anti_affinity_terms(
            &self.required_anti_affinity_terms,
            pod,
            &node.labels,
            delta,
        );
    }

    /// Whether placing the pod on a node with these labels breaks no existing pod's required
    /// anti-affinity (upstream `satisfyExistingPodsAntiAffinity`): none of the node's labels is
    /// a topology pair with a count.
    fn satisfies_existing_pods_anti_affinity(&self, node_labels: &Labels) -> bool {
        // Upstream looks every label of the node up in the counts; looking the (few) keys with
        // counts up among the node's labels gives the same answer.
        !self.existing_anti_affinity_counts.0.iter().any(|(k, values)| {
            node_labels.get(k).is_some_and(|v| values.get(v).is_some_and(|&c| c > 0))
        })
    }

    /// Upstream `satisfyPodAntiAffinity`: no pod selected by a required anti-affinity term
    /// is in the node's domain of that term (a node lacking the key satisfies the term).
    fn satisfies_pod_anti_affinity(&self, node_labels: &Labels) -> bool {
        if self.anti_affinity_counts.is_empty() {
            return true;
        }
        !self.required_anti_affinity_terms.iter().any(|t| {
            node_labels
                .get(&t.topology_key)
                .is_some_and(|v| self.anti_affinity_counts.get(&t.topology_key, v) > 0)
        })
    }

    /// Upstream `satisfyPodAffinity`: the node has every term's key, and each term's domain
    /// holds a matching pod — or no pod anywhere matches the terms and the pod matches its own
    /// terms (the first pod of a self-affine group may go to any node with the keys).
    fn satisfies_pod_affinity(&self, node_labels: &Labels) -> bool {
        let mut pods_exist = true;
        for t in &self.required_affinity_terms {
            match node_labels.get(&t.topology_key) {
                Some(v) => {
                    if self.affinity_counts.get(&t.topology_key, v) <= 0 {
                        pods_exist = false;
                    }
                }
                None => return false,
            }
        }
        pods_exist || (self.affinity_counts.is_empty() && self.pod_matches_own_affinity_terms)
    }
}

/// What PreFilter's counts depend on besides the cluster: the incoming pod's namespace, its
/// labels and its namespace's labels (matched by existing pods' anti-affinity), and its
/// processed required terms.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FilterKey {
    namespace: String,
    labels: Labels,
    namespace_labels: Labels,
    required_affinity_terms: Vec<AffinityTerm>,
    required_anti_affinity_terms: Vec<AffinityTerm>,
}

/// PreFilter's three counts: one node's part, or their sums over the cluster.
#[derive(Debug, Clone, Default)]
pub(crate) struct FilterCounts {
    existing_anti_affinity: TopologyCounts,
    affinity: TopologyCounts,
    anti_affinity: TopologyCounts,
}

impl super::super::node_memo::Totals<FilterCounts> for FilterCounts {
    fn apply(&mut self, node: &FilterCounts, sign: i64) {
        self.existing_anti_affinity.add_all(&node.existing_anti_affinity, sign);
        self.affinity.add_all(&node.affinity, sign);
        self.anti_affinity.add_all(&node.anti_affinity, sign);
    }
}

/// The memo of PreFilter's counts ([`super::super::node_memo`]).
pub(crate) type FilterMemo =
    super::super::node_memo::NodeMemo<FilterKey, FilterCounts, FilterCounts>;

impl FilterKey {
    fn has_required_terms(&self) -> bool {
        !self.required_affinity_terms.is_empty() || !self.required_anti_affinity_terms.is_empty()
    }

    /// One node's part of the counts (upstream's per-node step of `getExistingAntiAffinityCounts`
    /// and `getIncomingAffinityAntiAffinityCounts`).
    fn node_counts(&self, pod: &Pod, node: &Node) -> FilterCounts {
        let mut counts = FilterCounts::default();
        let has_required_terms = self.has_required_terms();
        // Without required terms of its own, only existing pods with required anti-affinity
        // can count (upstream walks `HavePodsWithRequiredAntiAffinityList`).
        if !has_required_terms && node.pods_with_required_anti_affinity == 0 {
            return counts;
        }
        for existing in &node.pods {
            // getExistingAntiAffinityCounts (over the nodes with pods that have required
            // anti-affinity).
            counts.existing_anti_affinity.update_with_existing_anti_affinity(
                existing,
                pod,
                &self.namespace_labels,
                &node.labels,
                1,
            );
            // getIncomingAffinityAntiAffinityCounts (over all nodes).
            if has_required_terms {
                counts.affinity.update_with_affinity_terms(
                    &self.required_affinity_terms,
                    existing,
                    &node.labels,
                    1,
                );
                counts.anti_affinity.update_with_anti_affinity_terms(
                    &self.required_anti_affinity_terms,
                    existing,
                    &node.labels,
                    1,
                );
            }
        }
        counts
    }
}

impl InterPodAffinity {
    /// PreFilter: counts, over every node of the cluster, the existing pods relevant to the
    /// incoming pod's required terms and the existing pods whose required anti-affinity
    /// selects it. `Err(Skip)` when the pod has no required terms and no existing pod's
    /// anti-affinity selects it (every node then passes).
    ///
    /// The counts are sums of per-node parts kept across cycles ([`FilterMemo`]): only nodes
    /// whose pods changed since the last pod with the same key are recounted.
    pub fn pre_filter(&self, pod: &Pod, cluster: &ClusterState) -> Result<PreFilterState, Status> {
        let key = FilterKey {
            namespace: pod.namespace.clone(),
            labels: pod.labels.clone(),
            namespace_labels: cluster.namespace_labels(&pod.namespace).clone(),
            required_affinity_terms: incoming_terms(pod, &pod.pod_affinity.required, cluster),
            required_anti_affinity_terms: incoming_terms(
                pod,
                &pod.pod_anti_affinity.required,
                cluster,
            ),
        };
        let has_required_terms = key.has_required_terms();
        // Nothing to count: no terms of its own and no existing pod with required
        // anti-affinity anywhere (the counts would be empty; no per-node pass).
        if !has_required_terms
            && cluster.nodes.iter().all(|n| n.pods_with_required_anti_affinity == 0)
        {
            return Err(Status::skip().with_plugin(NAME));
        }
        let counts = self.filter_memo.with(
            &key,
            cluster,
            |node| key.node_counts(pod, node),
            FilterCounts::clone,
        );
        if counts.existing_anti_affinity.is_empty() && !has_required_terms {
            return Err(Status::skip().with_plugin(NAME));
        }
        let pod_matches_own_affinity_terms =
            pod_matches_all_terms(&key.required_affinity_terms, pod);
        Ok(PreFilterState {
            existing_anti_affinity_counts: counts.existing_anti_affinity,
            affinity_counts: counts.affinity,
            anti_affinity_counts: counts.anti_affinity,
            required_affinity_terms: key.required_affinity_terms,
            required_anti_affinity_terms: key.required_anti_affinity_terms,
            namespace_labels: key.namespace_labels,
            pod_matches_own_affinity_terms,
            incoming: pod.clone(),
        })
    }

    /// [`InterPodAffinity::pre_filter`] computed afresh, walking every pod of the cluster (the
    /// specification the memoized counts are tested against).
    #[cfg(test)]
    pub(crate) fn pre_filter_fresh(
        &self,
        pod: &Pod,
        cluster: &ClusterState,
    ) -> Result<PreFilterState, Status> {
        let required_affinity_terms = incoming_terms(pod, &pod.pod_affinity.required, cluster);
        let required_anti_affinity_terms =
            incoming_terms(pod, &pod.pod_anti_affinity.required, cluster);
        let namespace_labels = cluster.namespace_labels(&pod.namespace).clone();
        let pod_matches_own_affinity_terms = pod_matches_all_terms(&required_affinity_terms, pod);
        let mut state = PreFilterState {
            existing_anti_affinity_counts: TopologyCounts::default(),
            affinity_counts: TopologyCounts::default(),
            anti_affinity_counts: TopologyCounts::default(),
            required_affinity_terms,
            required_anti_affinity_terms,
            namespace_labels,
            pod_matches_own_affinity_terms,
            incoming: pod.clone(),
        };

        let has_required_terms = !state.required_affinity_terms.is_empty()
            || !state.required_anti_affinity_terms.is_empty();
        for node in &cluster.nodes {
            // Without required terms of its own, only existing pods with required anti-affinity
            // can count (upstream walks `HavePodsWithRequiredAntiAffinityList`).
            if !has_required_terms && node.pods_with_required_anti_affinity == 0 {
                continue;
            }
            for existing in &node.pods {
                // getExistingAntiAffinityCounts (over the nodes with pods that have required
                // anti-affinity).
                state.existing_anti_affinity_counts.update_with_existing_anti_affinity(
                    existing,
                    pod,
                    &state.namespace_labels,
                    &node.labels,
                    1,
                );
                // getIncomingAffinityAntiAffinityCounts (over all nodes).
                if has_required_terms {
                    state.affinity_counts.update_with_affinity_terms(
                        &state.required_affinity_terms,
                        existing,
                        &node.labels,
                        1,
                    );
                    state.anti_affinity_counts.update_with_anti_affinity_terms(
                        &state.required_anti_affinity_terms,
                        existing,
                        &node.labels,
                        1,
                    );
                }
            }
        }

        if state.existing_anti_affinity_counts.is_empty() && !has_required_terms {
            return Err(Status::skip().with_plugin(NAME));
        }
        Ok(state)
    }

    /// Filter: the node's verdict, checked in upstream's order — the pod's affinity
    /// (`UnschedulableAndUnresolvable`), its anti-affinity (`Unschedulable`), then existing
    /// pods' anti-affinity (`Unschedulable`).
    pub fn filter(&self, state: &PreFilterState, _pod: &Pod, node: &Node) -> Status {
        if !state.satisfies_pod_affinity(&node.labels) {
            return Status::unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH).with_plugin(NAME);
        }
        if !state.satisfies_pod_anti_affinity(&node.labels) {
            return Status::unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
                .with_plugin(NAME);
        }
        if !state.satisfies_existing_pods_anti_affinity(&node.labels) {
            return Status::unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
                .with_plugin(NAME);
        }
        Status::success()
    }
}

#[cfg(test)]
mod tests;
