//! The pods descheduler's `RemovePodsViolating*` strategies select, and the constraint state
//! a rebalancing plan must not make worse.
//!
//! Input: a cluster state and an evictability predicate (the DefaultEvictor, see
//! [`super::evictor`]). Output: [`select`] — the selected pods, each with the strategy that
//! selects it — and [`ConstraintState`], every constraint a running pod violates now.
//!
//! Upstream: kubernetes-sigs/descheduler at the repository's head (2026-06),
//! `pkg/framework/plugins/`:
//!
//! - `removepodsviolatingnodeaffinity/node_affinity.go` with `nodeAffinityType:
//!   [requiredDuringSchedulingIgnoredDuringExecution]`: a pod with a required node affinity,
//!   evictable, that fits some node ([`node_fit`], its own node included) and whose node no longer
//!   matches its `nodeSelector` and required node affinity.
//! - `removepodsviolatingnodetaints/node_taint.go` with default arguments: an evictable pod that
//!   does not tolerate every `NoSchedule` taint of its node (`NoExecute` taints are the taint
//!   manager's business, `PreferNoSchedule` needs `includePreferNoSchedule`).
//! - `removepodsviolatinginterpodantiaffinity/pod_antiaffinity.go`: node by node, pods sorted by
//!   priority (low first; descheduler then orders equal priorities by QoS class, which kplace's
//!   model does not keep, so by `namespace/name`), a pod whose required anti-affinity selects
//!   another pod in the same topology domain (`utils.CheckPodsWithAntiAffinityExist`: the term's
//!   `namespaces`, or the pod's own; `namespaceSelector` is not read; pods compared by name) is
//!   selected when evictable, and no longer counts for the pods after it.
//! - `removepodsviolatingtopologyspreadconstraint/topologyspreadconstraint.go` with default
//!   arguments (`DoNotSchedule` constraints, `topologyBalanceNodeFit: true`): per namespace and
//!   distinct constraint, over the evictable pods, domains more than `maxSkew` apart are
//!   balanced by `balanceDomains` — the same arithmetic (in `f64`, as upstream), made
//!   deterministic where Go's map order and unstable sorts are not: domains of equal size sort
//!   by value, pods of equal rank by `namespace/name`.
//!
//! [`ConstraintState`] is kplace's own: the same predicates for every running pod, evictable or
//! not, plus required pod affinity no longer satisfied and the imbalance of every
//! `DoNotSchedule` spread constraint, so that [`ConstraintState::no_worse_than`] can tell whether
//! a plan breaks something that held.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::model::{
    ClusterState, InclusionPolicy, LabelSelector, Labels, Node, Pod, TaintEffect,
    TopologySpreadConstraint, UnsatisfiableAction,
};
use crate::plugins::interpodaffinity::AffinityTerm;
use crate::plugins::node_affinity::required_node_affinity_matches;
use crate::plugins::taint_toleration::{
    find_matching_untolerated_taint, is_do_not_schedule_taint, tolerations_tolerate_taint,
};
use crate::resources::{CPU, EPHEMERAL_STORAGE, MEMORY};

/// A descheduler strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Strategy {
    /// `RemovePodsViolatingNodeAffinity`.
    NodeAffinity,
    /// `RemovePodsViolatingNodeTaints`.
    NodeTaints,
    /// `RemovePodsViolatingInterPodAntiAffinity`.
    InterPodAntiAffinity,
    /// `RemovePodsViolatingTopologySpreadConstraint`.
    TopologySpreadConstraint,
}

impl Strategy {
    /// The plugin name.
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::NodeAffinity => "RemovePodsViolatingNodeAffinity",
            Strategy::NodeTaints => "RemovePodsViolatingNodeTaints",
            Strategy::InterPodAntiAffinity => "RemovePodsViolatingInterPodAntiAffinity",
            Strategy::TopologySpreadConstraint => "RemovePodsViolatingTopologySpreadConstraint",
        }
    }

    /// Every strategy, in the order `fix` runs them.
    pub const ALL: [Strategy; 4] = [
        Strategy::NodeAffinity,
        Strategy::NodeTaints,
        Strategy::InterPodAntiAffinity,
        Strategy::TopologySpreadConstraint,
    ];
}

/// A pod a strategy selects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selected {
    /// `namespace/name`.
    pub pod: String,
    /// Index of its node.
    pub node: usize,
    /// The first strategy that selects it.
    pub strategy: Strategy,
}

/// Every pod the four strategies select on `state`, strategy by strategy (a pod selected by an
/// earlier strategy is not listed again). `evictable` is the DefaultEvictor's `Filter`.
pub fn select(state: &ClusterState, evictable: &dyn Fn(&Pod) -> bool) -> Vec<Selected> {
    let mut out: Vec<Selected> = Vec::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut push = |pod: &Pod, node: usize, strategy: Strategy| {
        if seen.insert(pod.key()) {
            out.push(Selected { pod: pod.key(), node, strategy });
        }
    };
    for (n, p) in node_affinity(state, evictable) {
        push(&p, n, Strategy::NodeAffinity);
    }
    for (n, p) in node_taints(state, evictable) {
        push(&p, n, Strategy::NodeTaints);
    }
    for (n, p) in inter_pod_anti_affinity(state, evictable) {
        push(&p, n, Strategy::InterPodAntiAffinity);
    }
    for (n, p) in topology_spread(state, evictable) {
        push(&p, n, Strategy::TopologySpreadConstraint);
    }
    out
}

/// Counts of selected pods per strategy name.
pub fn counts(selected: &[Selected]) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for s in selected {
        *out.entry(s.strategy.as_str().to_string()).or_insert(0) += 1;
    }
    out
}

fn pods_on(state: &ClusterState) -> impl Iterator<Item = (usize, &Arc<Pod>)> {
    state.nodes.iter().enumerate().flat_map(|(n, node)| node.pods.iter().map(move |p| (n, p)))
}

/// `RemovePodsViolatingNodeAffinity` (required).
fn node_affinity(state: &ClusterState, evictable: &dyn Fn(&Pod) -> bool) -> Vec<(usize, Arc<Pod>)> {
    let mut out = Vec::new();
    for (n, node) in state.nodes.iter().enumerate() {
        for p in &node.pods {
            if p.node_affinity.required.is_some()
                && evictable(p)
                && (0..state.nodes.len()).any(|m| node_fit(state, p, m))
                && !required_node_affinity_matches(p, node)
            {
                out.push((n, Arc::clone(p)));
            }
        }
    }
    out
}

/// Whether the pod tolerates every `NoSchedule` taint of the node (the strategy's filter).
fn tolerates_no_schedule(pod: &Pod, node: &Node) -> bool {
    node.taints
        .iter()
        .filter(|t| t.effect == TaintEffect::NoSchedule)
        .all(|t| tolerations_tolerate_taint(&pod.tolerations, t))
}

/// `RemovePodsViolatingNodeTaints` (default arguments).
fn node_taints(state: &ClusterState, evictable: &dyn Fn(&Pod) -> bool) -> Vec<(usize, Arc<Pod>)> {
    pods_on(state)
        .filter(|(n, p)| {
            evictable(p) && state.nodes.get(*n).is_some_and(|node| !tolerates_no_schedule(p, node))
        })
        .map(|(n, p)| (n, Arc::clone(p)))
        .collect()
}

/// descheduler's `hasSameLabelValue`.
fn same_domain(state: &ClusterState, a: usize, b: usize, key: &str) -> bool {
    if a == b {
        return true;
    }
    match (
        state.nodes.get(a).and_then(|n| n.labels.get(key)),
        state.nodes.get(b).and_then(|n| n.labels.get(key)),
    ) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// The namespaces of an anti-affinity term as descheduler reads them
/// (`GetNamespacesFromPodAffinityTerm`: `namespaces`, or the pod's own).
fn term_namespaces<'a>(pod: &'a Pod, namespaces: &'a [String]) -> Vec<&'a str> {
    if namespaces.is_empty() {
        vec![pod.namespace.as_str()]
    } else {
        namespaces.iter().map(String::as_str).collect()
    }
}

fn selector_matches(selector: Option<&LabelSelector>, labels: &Labels) -> bool {
    selector.is_some_and(|s| s.matches(labels))
}

/// descheduler's `CheckPodsWithAntiAffinityExist`: whether `candidate` (on node `node`) has a
/// required anti-affinity term selecting another of `assigned` in the same topology domain.
fn anti_affinity_violated(
    state: &ClusterState,
    candidate: &Pod,
    node: usize,
    assigned: &BTreeMap<&str, Vec<(usize, Arc<Pod>)>>,
) -> bool {
    for term in &candidate.pod_anti_affinity.required {
        let namespaces = term_namespaces(candidate, &term.namespaces);
        for ns in &namespaces {
            for (m, other) in assigned.get(ns).into_iter().flatten() {
                if other.name == candidate.name
                    || !namespaces.contains(&other.namespace.as_str())
                    || !selector_matches(term.label_selector.as_ref(), &other.labels)
                {
                    continue;
                }
                if same_domain(state, node, *m, &term.topology_key) {
                    return true;
                }
            }
        }
    }
    false
}

fn by_namespace(state: &ClusterState) -> BTreeMap<&str, Vec<(usize, Arc<Pod>)>> {
    let mut map: BTreeMap<&str, Vec<(usize, Arc<Pod>)>> = BTreeMap::new();
    for (n, p) in pods_on(state) {
        map.entry(p.namespace.as_str()).or_default().push((n, Arc::clone(p)));
    }
    map
}

/// `RemovePodsViolatingInterPodAntiAffinity`.
fn inter_pod_anti_affinity(
    state: &ClusterState,
    evictable: &dyn Fn(&Pod) -> bool,
) -> Vec<(usize, Arc<Pod>)> {
    let mut assigned = by_namespace(state);
    let mut out = Vec::new();
    for (n, node) in state.nodes.iter().enumerate() {
        let mut pods: Vec<Arc<Pod>> = node.pods.clone();
        pods.sort_by_key(|p| (p.priority, p.key()));
        for p in pods {
            if anti_affinity_violated(state, &p, n, &assigned) && evictable(&p) {
                if let Some(list) = assigned.get_mut(p.namespace.as_str()) {
                    list.retain(|(_, q)| q.name != p.name);
                }
                out.push((n, p));
            }
        }
    }
    out
}

/// descheduler's `NodeFit`: whether `pod` could be scheduled onto node `n` (cordon, node
/// selection, `NoSchedule`/`NoExecute` taints, the pod's own anti-affinity against the node's
/// pods, and requests against what the node's pods leave — not checked on the pod's own node).
pub fn node_fit(state: &ClusterState, pod: &Pod, n: usize) -> bool {
    let Some(node) = state.nodes.get(n) else { return false };
    if node.unschedulable || !required_node_affinity_matches(pod, node) {
        return false;
    }
    if find_matching_untolerated_taint(&node.taints, &pod.tolerations, is_do_not_schedule_taint)
        .is_some()
    {
        return false;
    }
    for term in &pod.pod_anti_affinity.required {
        let namespaces = term_namespaces(pod, &term.namespaces);
        let hit = node.pods.iter().any(|q| {
            q.name != pod.name
                && namespaces.contains(&q.namespace.as_str())
                && selector_matches(term.label_selector.as_ref(), &q.labels)
        });
        if hit && node.labels.contains_key(&term.topology_key) {
            return false;
        }
    }
    if pod.node_name.as_deref() == Some(node.name.as_str()) {
        return true;
    }
    // fitsRequest: cpu and memory always, other resources the pod requests, and a free pod slot.
    let mut names: Vec<&str> = vec![CPU, MEMORY];
    if pod.requests.ephemeral_storage > 0 {
        names.push(EPHEMERAL_STORAGE);
    }
    names.extend(pod.requests.scalar.iter().filter(|(_, v)| **v > 0).map(|(k, _)| k.as_str()));
    for name in names {
        let used: i64 = node.pods.iter().map(|q| q.requests.get(name)).sum();
        if pod.requests.get(name) > node.allocatable.get(name) - used {
            return false;
        }
    }
    node.allocatable.allowed_pod_number - node.pods.len() as i64 > 0
}

/// A spread constraint as descheduler keeps it (`topologySpreadConstraint`), with what its
/// declaring pod contributes to the node inclusion policies.
#[derive(Debug, Clone, PartialEq)]
struct Tsc {
    constraint: TopologySpreadConstraint,
    node_selector: Labels,
    required: Option<crate::model::NodeSelector>,
    tolerations: Vec<crate::model::Toleration>,
}

impl Tsc {
    fn of(c: &TopologySpreadConstraint, pod: &Pod) -> Self {
        Tsc {
            constraint: c.clone(),
            node_selector: pod.node_selector.clone(),
            required: pod.node_affinity.required.clone(),
            tolerations: pod.tolerations.clone(),
        }
    }

    /// Whether two constraints are the same for descheduler (`hasIdenticalConstraints`).
    fn same(&self, other: &Tsc) -> bool {
        let (a, b) = (&self.constraint, &other.constraint);
        a.max_skew == b.max_skew
            && a.topology_key == b.topology_key
            && a.label_selector == b.label_selector
            && a.node_affinity_policy == b.node_affinity_policy
            && a.node_taints_policy == b.node_taints_policy
            && self.node_selector == other.node_selector
            && self.required == other.required
            && self.tolerations == other.tolerations
    }

    /// `matchNodeInclusionPolicies`.
    fn includes(&self, node: &Node) -> bool {
        if self.constraint.node_affinity_policy == InclusionPolicy::Honor {
            let selector_ok = self.node_selector.iter().all(|(k, v)| node.labels.get(k) == Some(v));
            let affinity_ok =
                self.required.as_ref().is_none_or(|s| s.matches(&node.name, &node.labels));
            if !(selector_ok && affinity_ok) {
                return false;
            }
        }
        if self.constraint.node_taints_policy == InclusionPolicy::Honor
            && find_matching_untolerated_taint(
                &node.taints,
                &self.tolerations,
                is_do_not_schedule_taint,
            )
            .is_some()
        {
            return false;
        }
        true
    }

    fn selects(&self, pod: &Pod) -> bool {
        selector_matches(self.constraint.label_selector.as_ref(), &pod.labels)
    }

    /// A stable identity for reports and [`ConstraintState`].
    fn id(&self, namespace: &str) -> String {
        let c = &self.constraint;
        format!(
            "{namespace}: {} maxSkew {} selector {:?} nodeAffinityPolicy {:?} nodeTaintsPolicy {:?} nodeSelector {:?} affinity {:?} tolerations {:?}",
            c.topology_key,
            c.max_skew,
            c.label_selector,
            c.node_affinity_policy,
            c.node_taints_policy,
            self.node_selector,
            self.required,
            self.tolerations
        )
    }
}

/// Distinct `DoNotSchedule` constraints of the pods, in pod order.
fn namespace_constraints<'a>(pods: impl Iterator<Item = &'a Pod>) -> Vec<Tsc> {
    let mut out: Vec<Tsc> = Vec::new();
    for p in pods {
        for c in &p.topology_spread_constraints {
            if c.when_unsatisfiable != UnsatisfiableAction::DoNotSchedule {
                continue;
            }
            let tsc = Tsc::of(c, p);
            if !out.iter().any(|o| o.same(&tsc)) {
                out.push(tsc);
            }
        }
    }
    out
}

/// One topology domain with its pods, as `balanceDomains` sorts them.
struct Domain {
    value: String,
    pods: Vec<(usize, Arc<Pod>)>,
}

/// `RemovePodsViolatingTopologySpreadConstraint` (default arguments).
fn topology_spread(
    state: &ClusterState,
    evictable: &dyn Fn(&Pod) -> bool,
) -> Vec<(usize, Arc<Pod>)> {
    // Only evictable pods are listed (the plugin's podFilter wraps the evictor's Filter).
    let mut namespaced: BTreeMap<&str, Vec<(usize, Arc<Pod>)>> = BTreeMap::new();
    for (n, p) in pods_on(state) {
        if evictable(p) {
            namespaced.entry(p.namespace.as_str()).or_default().push((n, Arc::clone(p)));
        }
    }
    let mut selected: BTreeMap<String, (usize, Arc<Pod>)> = BTreeMap::new();
    for pods in namespaced.values_mut() {
        pods.sort_by_key(|(_, p)| p.key());
        let constraints = namespace_constraints(pods.iter().map(|(_, p)| p.as_ref()));
        for tsc in &constraints {
            let key = tsc.constraint.topology_key.as_str();
            let mut domains: BTreeMap<String, Vec<(usize, Arc<Pod>)>> = BTreeMap::new();
            for node in &state.nodes {
                if let Some(v) = node.labels.get(key)
                    && tsc.includes(node)
                {
                    domains.entry(v.clone()).or_default();
                }
            }
            let mut sum_pods = 0.0f64;
            for (n, p) in pods.iter() {
                if p.terminating || !tsc.selects(p) {
                    continue;
                }
                let Some(v) = state.nodes.get(*n).and_then(|node| node.labels.get(key)) else {
                    continue;
                };
                domains.entry(v.clone()).or_default().push((*n, Arc::clone(p)));
                sum_pods += 1.0;
            }
            let min = domains.values().map(Vec::len).min().unwrap_or(0);
            let max = domains.values().map(Vec::len).max().unwrap_or(0);
            if (max - min) as i64 <= i64::from(tsc.constraint.max_skew) {
                continue;
            }
            for (n, p) in balance_domains(state, tsc, domains, sum_pods) {
                selected.insert(p.key(), (n, p));
            }
        }
    }
    selected.into_values().collect()
}

/// descheduler's `balanceDomains`: the pods to evict from the domains above the ideal average.
fn balance_domains(
    state: &ClusterState,
    tsc: &Tsc,
    domains: BTreeMap<String, Vec<(usize, Arc<Pod>)>>,
    sum_pods: f64,
) -> Vec<(usize, Arc<Pod>)> {
    let ideal_avg = sum_pods / domains.len() as f64;
    let key = tsc.constraint.topology_key.as_str();
    let max_skew = f64::from(tsc.constraint.max_skew);
    // sortDomains: pods with a node selector or node affinity first, then by priority
    // (ascending, as the comparator orders them), then by key; domains by size, then value.
    let mut sorted: Vec<Domain> = domains
        .into_iter()
        .map(|(value, mut pods)| {
            pods.sort_by(|(_, a), (_, b)| {
                (!has_selector_or_affinity(a), a.priority, a.key()).cmp(&(
                    !has_selector_or_affinity(b),
                    b.priority,
                    b.key(),
                ))
            });
            Domain { value, pods }
        })
        .collect();
    sorted.sort_by(|a, b| (a.pods.len(), &a.value).cmp(&(b.pods.len(), &b.value)));
    // filterNodesBelowIdealAvg over the eligible nodes, in sorted-domain order.
    let mut below: Vec<usize> = Vec::new();
    for d in &sorted {
        if (d.pods.len() as f64) < ideal_avg {
            below.extend(state.nodes.iter().enumerate().filter_map(|(i, node)| {
                (tsc.includes(node) && node.labels.get(key) == Some(&d.value)).then_some(i)
            }));
        }
    }
    let fits_other = |pod: &Pod| {
        below.iter().any(|&m| {
            state
                .nodes
                .get(m)
                .is_some_and(|node| Some(node.name.as_str()) != pod.node_name.as_deref())
                && node_fit(state, pod, m)
        })
    };
    let mut out = Vec::new();
    let mut i: isize = 0;
    let mut j: isize = sorted.len() as isize - 1;
    let len = |d: &[Domain], k: isize| {
        usize::try_from(k).ok().and_then(|k| d.get(k)).map_or(0, |d| d.pods.len())
    };
    while i < j {
        if (len(&sorted, j) as f64) <= ideal_avg {
            j -= 1;
        }
        let skew = len(&sorted, j) as f64 - len(&sorted, i) as f64;
        if (skew as i32) <= tsc.constraint.max_skew {
            i += 1;
            continue;
        }
        let above_avg = (len(&sorted, j) as f64 - ideal_avg).ceil();
        let below_avg = (ideal_avg - len(&sorted, i) as f64).ceil();
        let smallest = above_avg.min(below_avg);
        let half_skew = ((skew - max_skew) / 2.0).ceil();
        let move_pods = smallest.min(half_skew) as i64;
        if move_pods <= 0 {
            i += 1;
            continue;
        }
        let (Ok(iu), Ok(ju)) = (usize::try_from(i), usize::try_from(j)) else { break };
        let Some(dj) = sorted.get_mut(ju) else { break };
        // Prefer, at the back, pods that fit a node below the ideal average (stable).
        dj.pods.sort_by_key(|(_, p)| fits_other(p));
        let take = usize::try_from(move_pods).unwrap_or(0).min(dj.pods.len());
        let moved: Vec<(usize, Arc<Pod>)> = dj.pods.split_off(dj.pods.len() - take);
        for (n, p) in &moved {
            if fits_other(p) {
                out.push((*n, Arc::clone(p)));
            }
        }
        if let Some(di) = sorted.get_mut(iu) {
            di.pods.extend(moved);
        }
    }
    out
}

/// descheduler's `hasSelectorOrAffinity` (kplace cannot tell an empty `nodeSelector` or node
/// affinity from an absent one; empty ones count as absent).
fn has_selector_or_affinity(pod: &Pod) -> bool {
    !pod.node_selector.is_empty()
        || pod.node_affinity.required.is_some()
        || !pod.node_affinity.preferred.is_empty()
}

/// Every hard constraint a running pod violates now. See the module documentation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConstraintState {
    /// `(what, namespace/name)`: `node_selection`, `taint`, `anti_affinity`, `pod_affinity`.
    pub pods: BTreeSet<(&'static str, String)>,
    /// Spread constraint → `max − min` pods over its domains, for those above `maxSkew`.
    pub spread: BTreeMap<String, i64>,
}

impl ConstraintState {
    /// The constraint state of `state`.
    pub fn of(state: &ClusterState) -> Self {
        let mut out = ConstraintState::default();
        let assigned = by_namespace(state);
        let mut groups: BTreeMap<String, AffinityGroup> = BTreeMap::new();
        for (n, p) in pods_on(state) {
            let Some(node) = state.nodes.get(n) else { continue };
            if !required_node_affinity_matches(p, node) {
                out.pods.insert(("node_selection", p.key()));
            }
            if !tolerates_no_schedule(p, node) {
                out.pods.insert(("taint", p.key()));
            }
            if !p.pod_anti_affinity.required.is_empty()
                && anti_affinity_violated(state, p, n, &assigned)
            {
                out.pods.insert(("anti_affinity", p.key()));
            }
            if !p.pod_affinity.required.is_empty() {
                let signature = format!("{}/{:?}", p.namespace, p.pod_affinity.required);
                let group = groups.entry(signature).or_insert_with(|| AffinityGroup::new(state, p));
                if !group.holds(state, p, n) {
                    out.pods.insert(("pod_affinity", p.key()));
                }
            }
        }
        for (ns, pods) in &assigned {
            for tsc in namespace_constraints(pods.iter().map(|(_, p)| p.as_ref())) {
                let key = tsc.constraint.topology_key.as_str();
                let mut domains: BTreeMap<&str, i64> = BTreeMap::new();
                for node in &state.nodes {
                    if let Some(v) = node.labels.get(key)
                        && tsc.includes(node)
                    {
                        domains.entry(v.as_str()).or_insert(0);
                    }
                }
                for (n, p) in pods {
                    if p.terminating || !tsc.selects(p) {
                        continue;
                    }
                    if let Some(v) = state.nodes.get(*n).and_then(|node| node.labels.get(key))
                        && let Some(c) = domains.get_mut(v.as_str())
                    {
                        *c += 1;
                    }
                }
                let min = domains.values().copied().min().unwrap_or(0);
                let max = domains.values().copied().max().unwrap_or(0);
                if max - min > i64::from(tsc.constraint.max_skew) {
                    out.spread.insert(tsc.id(ns), max - min);
                }
            }
        }
        out
    }

    /// Number of pod-level violations plus violated spread constraints.
    pub fn len(&self) -> usize {
        self.pods.len() + self.spread.len()
    }

    /// Whether nothing is violated.
    pub fn is_empty(&self) -> bool {
        self.pods.is_empty() && self.spread.is_empty()
    }

    /// `Ok` when `self` breaks nothing that held in `before`: every pod violation was there
    /// before, and every violated spread constraint was, with at least the same imbalance.
    /// Else the first new violation, in words.
    pub fn no_worse_than(&self, before: &ConstraintState) -> Result<(), String> {
        if let Some((what, pod)) = self.pods.difference(&before.pods).next() {
            return Err(format!("{pod} would violate its {}", what.replace('_', " ")));
        }
        for (id, imbalance) in &self.spread {
            match before.spread.get(id) {
                Some(old) if old >= imbalance => {}
                _ => return Err(format!("spread constraint {id} would be {imbalance} pods apart")),
            }
        }
        Ok(())
    }
}

/// The pods matching every required pod affinity term of a group of pods with the same
/// namespace and terms, counted per term by the domain of the term's key.
#[derive(Debug)]
struct AffinityGroup {
    terms: Vec<AffinityTerm>,
    /// Per term: domain value → matching pods on nodes in that domain.
    per_domain: Vec<BTreeMap<String, usize>>,
    /// Matching pods in all.
    total: usize,
}

impl AffinityGroup {
    fn new(state: &ClusterState, pod: &Pod) -> Self {
        let terms: Vec<AffinityTerm> =
            pod.pod_affinity.required.iter().map(|t| AffinityTerm::new(pod, t)).collect();
        let mut per_domain = vec![BTreeMap::new(); terms.len()];
        let mut total = 0;
        for (m, q) in pods_on(state) {
            if !terms.iter().all(|t| t.matches(q, state.namespace_labels(&q.namespace))) {
                continue;
            }
            total += 1;
            for (i, t) in terms.iter().enumerate() {
                if let Some(v) = state.nodes.get(m).and_then(|n| n.labels.get(&t.topology_key))
                    && let Some(counts) = per_domain.get_mut(i)
                {
                    *counts.entry(v.clone()).or_insert(0) += 1;
                }
            }
        }
        AffinityGroup { terms, per_domain, total }
    }

    /// Whether the affinity of `pod` (one of the group) holds on node `n`: for every term some
    /// *other* pod matching all terms is in the node's domain — or no other pod matches them all
    /// and the pod matches its own terms (the first pod of a self-affine group).
    fn holds(&self, state: &ClusterState, pod: &Pod, n: usize) -> bool {
        let Some(node) = state.nodes.get(n) else { return false };
        let own = self.terms.iter().all(|t| t.matches(pod, state.namespace_labels(&pod.namespace)));
        let own = usize::from(own);
        let mut all = true;
        for (t, counts) in self.terms.iter().zip(&self.per_domain) {
            let Some(v) = node.labels.get(&t.topology_key) else { return false };
            if counts.get(v).copied().unwrap_or(0) <= own {
                all = false;
            }
        }
        all || (self.total <= own && own == 1)
    }
}
