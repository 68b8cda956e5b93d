//! The cluster's topology and PodTopologySpread as the solver's inter-pod model
//! ([`kplace_solver::topology`]): domain ids per topology key, counters of matching pods per
//! domain (bound pods as initial counts, pending classes as members) and the rules over them.
//!
//! Input: the working cluster, the representatives of a tier's solver classes, their
//! frameworks. Output: [`Problem::topologies`], [`Problem::domains`] and
//! [`Problem::inter_pod`], and which classes' PodTopologySpread score the soft terms replace.
//!
//! Upstream (v1.35): `podtopologyspread/filtering.go` (PreFilter's counts: pods in the incoming
//! pod's namespace matched by the selector, on nodes that have every constraint's key and pass
//! the node inclusion policies) and `scoring.go` (the same counts for `ScheduleAnyway`
//! constraints and the system default constraints).
//!
//! - Required pod affinity becomes [`Rule::Affinity`] (upstream `interpodaffinity/filtering.go`:
//!   counts of pods matching all the terms per term's domain, the first-pod rule); the rest of
//!   InterPodAffinity's filter (anti-affinity either way against bound pods) is evaluated per
//!   node once, and anti-affinity between the solve's own pods stays a conflict.
//! - Preferred pod affinity and anti-affinity toward the pods the solve places become
//!   [`Rule::Soft`] terms (`plugin weight × term weight` per matching pod); bound pods stay in
//!   the matrix's InterPodAffinity score.
//! - `DoNotSchedule` constraints become [`Rule::Spread`]: exact, as upstream's Filter, with the
//!   counts updated as the solver's pods land.
//! - `ScheduleAnyway` constraints (explicit, or the profile's defaults with the pod's default
//!   selector from its Services, ReplicationControllers, ReplicaSets and StatefulSets) become
//!   [`Rule::Soft`] terms of weight `-(plugin weight × 100)` per matching pod in the node's
//!   domain: one more matching pod in a domain costs the plugin's whole weighted range
//!   (upstream's normalized score gives the least crowded domains 100 and the most crowded
//!   less). Upstream normalizes over the feasible nodes, which changes every node's score
//!   whenever one changes; the unnormalized count changes only the domains a pod lands in, so
//!   the solver updates it per placement. These terms replace the matrix's PodTopologySpread
//!   score for the class.

use std::collections::BTreeMap;

use kplace_solver::{Counter, NO_DOMAIN, Problem, Rule};

use crate::framework::profile::PluginName;
use crate::model::{ClusterState, Pod, UnsatisfiableAction};
use crate::plugins::interpodaffinity::{AffinityTerm, InterPodAffinity, pod_matches_all_terms};
use crate::plugins::podtopologyspread::{
    Constraint, IncomingPod, PodTopologySpread, count_pods_match_selector,
    match_node_inclusion_policies,
};

use super::{Frameworks, HOSTNAME_LABEL, ZONE_LABEL};

/// The topology whose every node is its own domain (host-port conflicts).
pub(super) const NODE_TOPOLOGY: &str = "";

/// MaxNodeScore: the range of a plugin's normalized score.
const MAX_NODE_SCORE: i64 = 100;

/// Topology keys in the order they are first needed, with each node's domain id per key (a
/// node's label value's index among the values seen, in node order; [`NO_DOMAIN`] without
/// the label).
pub(super) struct Keys<'c> {
    cluster: &'c ClusterState,
    keys: Vec<String>,
    rows: Vec<Vec<u32>>,
}

impl<'c> Keys<'c> {
    pub(super) fn new(cluster: &'c ClusterState) -> Self {
        Keys { cluster, keys: Vec::new(), rows: Vec::new() }
    }

    /// The topology index of `key`, added with its domains when new.
    pub(super) fn index(&mut self, key: &str) -> usize {
        if let Some(i) = self.keys.iter().position(|k| k == key) {
            return i;
        }
        let row: Vec<u32> = if key == NODE_TOPOLOGY {
            (0..self.cluster.nodes.len() as u32).collect()
        } else {
            let mut values: BTreeMap<&str, u32> = BTreeMap::new();
            self.cluster
                .nodes
                .iter()
                .map(|node| match node.labels.get(key) {
                    Some(v) => {
                        let next = values.len() as u32;
                        *values.entry(v.as_str()).or_insert(next)
                    }
                    None => NO_DOMAIN,
                })
                .collect()
        };
        self.keys.push(key.to_string());
        self.rows.push(row);
        self.keys.len() - 1
    }

    /// The domain of node `n` in topology `t`.
    fn domain(&self, t: usize, n: usize) -> u32 {
        self.rows[t][n]
    }

    /// Sets the problem's topologies and domains.
    pub(super) fn fill(self, problem: &mut Problem) {
        problem.topologies = self.keys.len();
        problem.domains = self.rows.into_iter().flatten().collect();
    }
}

/// Whether `rep`'s profile filters with PodTopologySpread and `rep` has `DoNotSchedule`
/// constraints (its own, or defaulted): the solver enforces them, so its matrix is evaluated
/// without that filter.
pub(super) fn has_hard_spread(rep: &Pod, fws: &Frameworks) -> bool {
    let profile = fws.full.profile();
    profile.plugins.filter.contains(&PluginName::PodTopologySpread)
        && !PodTopologySpread::new(profile.args.pod_topology_spread.clone())
            .constraints(rep, UnsatisfiableAction::DoNotSchedule)
            .is_empty()
}

/// Whether soft terms replace `rep`'s PodTopologySpread score when the solve places it
/// ([`add_spread`]): its profile scores with the plugin and it has `ScheduleAnyway`
/// constraints (its own, or the defaults); its matrix is then evaluated without that score.
pub(super) fn has_soft_spread(rep: &Pod, fws: &Frameworks) -> bool {
    let profile = fws.full.profile();
    profile.score_weight(PluginName::PodTopologySpread).is_some_and(|w| w > 0)
        && !PodTopologySpread::new(profile.args.pod_topology_spread.clone())
            .constraints(rep, UnsatisfiableAction::ScheduleAnyway)
            .is_empty()
}

/// Adds the spread rules of the first `placing` classes of `reps` (the classes the solve
/// places; the others are pods placed earlier that it may move, counted as members; `sizes`:
/// each class's pods). Returns, per class of `reps`, whether soft terms replace its
/// PodTopologySpread score.
pub(super) fn add_spread(
    problem: &mut Problem,
    keys: &mut Keys<'_>,
    reps: &[&Pod],
    sizes: &[usize],
    placing: usize,
    frameworks: &BTreeMap<String, Frameworks>,
) -> Vec<bool> {
    let mut soft = vec![false; reps.len()];
    let mut owners: Option<Owners> = None;
    for (k, rep) in reps.iter().enumerate().take(placing) {
        let fws = &frameworks[&rep.scheduler_name];
        let profile = fws.full.profile();
        let pts = PodTopologySpread::new(profile.args.pod_topology_spread.clone());
        let hard = pts.constraints(rep, UnsatisfiableAction::DoNotSchedule);
        if has_hard_spread(rep, fws) {
            for c in &hard {
                let counter = spread_counter(problem, keys, reps, rep, c, &hard);
                problem.inter_pod.rules.push(Rule::Spread {
                    class: k,
                    counter,
                    max_skew: u32::try_from(c.max_skew).unwrap_or(1).max(1),
                    min_domains: u32::try_from(c.min_domains).unwrap_or(1).max(1),
                });
            }
        }
        let Some(weight) = profile.score_weight(PluginName::PodTopologySpread) else { continue };
        let constraints = pts.constraints(rep, UnsatisfiableAction::ScheduleAnyway);
        if weight > 0 && constraints.is_empty() && hard.is_empty() {
            // A workload of two pods or more with no spread constraint at all (no Service,
            // ReplicaSet, … gives it the profile's defaults): the solver's evening out still
            // spreads its pods over zones, then nodes, after every other counter (weight 0: no
            // score, no bound on the skew), where kube-scheduler's resource scores alone tend
            // to spread them.
            let owners = owners.get_or_insert_with(|| Owners::new(keys.cluster, reps, sizes));
            for counter in owners.counters(problem, keys, rep) {
                problem.inter_pod.rules.push(Rule::Soft {
                    class: k,
                    counter,
                    weight: 0,
                    max_skew: u32::MAX,
                });
            }
        }
        // As `has_soft_spread`.
        if weight <= 0 || constraints.is_empty() {
            continue;
        }
        // Upstream `requireAllTopologies`: with the system default constraints, a node lacking
        // one constraint's key still counts for the others.
        let require_all = !rep.topology_spread_constraints.is_empty() || !pts.system_defaulted();
        let all: &[Constraint] = if require_all { &constraints } else { &[] };
        for c in &constraints {
            let counter = spread_counter(problem, keys, reps, rep, c, all);
            problem.inter_pod.rules.push(Rule::Soft {
                class: k,
                counter,
                weight: -weight.saturating_mul(MAX_NODE_SCORE),
                max_skew: u32::try_from(c.max_skew).unwrap_or(1).max(1),
            });
        }
        // Own constraints none of which spreads over nodes: the solver's evening out still
        // spreads the same pods over nodes, after every counter above (weight 0: no score,
        // no bound on the skew).
        let over_nodes = |cs: &[Constraint]| cs.iter().any(|c| c.topology_key == HOSTNAME_LABEL);
        if require_all
            && !over_nodes(&constraints)
            && !over_nodes(&hard)
            && let Some(first) = constraints.first()
        {
            let nodes = Constraint { topology_key: HOSTNAME_LABEL.to_string(), ..first.clone() };
            let counter = spread_counter(problem, keys, reps, rep, &nodes, &[]);
            problem.inter_pod.rules.push(Rule::Soft {
                class: k,
                counter,
                weight: 0,
                max_skew: u32::MAX,
            });
        }
        soft[k] = true;
    }
    soft
}

/// The spread groups that weigh `rep`'s nodes in the batch preemption pass
/// ([`kplace_solver::PreemptorSpec::spread`]): for each of its `ScheduleAnyway` constraints
/// (its own, or the profile's defaults; none when [`has_soft_spread`] is false), the pods its
/// selector matches in `rep`'s namespace per domain, over the nodes that count for the
/// constraint ([`counted`], as for the greedy's soft terms); zone-like keys before
/// `kubernetes.io/hostname`.
pub(super) fn preempt_spread(
    keys: &mut Keys<'_>,
    rep: &Pod,
    fws: &Frameworks,
) -> Vec<kplace_solver::PreemptSpread> {
    use kplace_solver::{NO_SPREAD_DOMAIN, PreemptSpread};
    if !has_soft_spread(rep, fws) {
        return Vec::new();
    }
    let profile = fws.full.profile();
    let pts = PodTopologySpread::new(profile.args.pod_topology_spread.clone());
    let mut constraints = pts.constraints(rep, UnsatisfiableAction::ScheduleAnyway);
    constraints.sort_by_key(|c| c.topology_key == HOSTNAME_LABEL);
    // As `add_spread`'s soft terms: upstream `requireAllTopologies`.
    let require_all = !rep.topology_spread_constraints.is_empty() || !pts.system_defaulted();
    let all: &[Constraint] = if require_all { &constraints } else { &[] };
    constraints
        .iter()
        .map(|c| {
            let (topology, eligible, counts) = counted(keys, rep, c, all);
            let domain = eligible
                .iter()
                .enumerate()
                .map(|(n, &ok)| {
                    let d = keys.domain(topology, n);
                    if ok && d != NO_DOMAIN { d } else { NO_SPREAD_DOMAIN }
                })
                .collect();
            PreemptSpread { domain, counts }
        })
        .collect()
}

/// Constraint `c` of `rep` over the cluster: its topology in `keys`, which nodes count for it
/// (they have `c`'s key and every key of `all` and pass `c`'s node inclusion policies for
/// `rep`), and per domain the pods in `rep`'s namespace its selector matches on those nodes.
fn counted(
    keys: &mut Keys<'_>,
    rep: &Pod,
    c: &Constraint,
    all: &[Constraint],
) -> (usize, Vec<bool>, Vec<u32>) {
    let topology = keys.index(&c.topology_key);
    let cluster = keys.cluster;
    let incoming = IncomingPod::new(rep);
    let mut counts = vec![0u32; cluster.nodes.len()];
    let eligible: Vec<bool> = cluster
        .nodes
        .iter()
        .enumerate()
        .map(|(n, node)| {
            let ok = all.iter().all(|k| node.labels.contains_key(&k.topology_key))
                && match_node_inclusion_policies(c, &incoming, node);
            let d = keys.domain(topology, n);
            if ok && d != NO_DOMAIN {
                let here = count_pods_match_selector(&node.pods, &c.selector, &rep.namespace);
                let slot = &mut counts[d as usize];
                *slot = slot.saturating_add(u32::try_from(here).unwrap_or(u32::MAX));
            }
            ok
        })
        .collect();
    (topology, eligible, counts)
}

/// The counter of constraint `c` of `rep`: pods in `rep`'s namespace that the selector matches,
/// on nodes with `c`'s key and every key of `all` that pass `c`'s node inclusion policies for
/// `rep`.
fn spread_counter(
    problem: &mut Problem,
    keys: &mut Keys<'_>,
    reps: &[&Pod],
    rep: &Pod,
    c: &Constraint,
    all: &[Constraint],
) -> usize {
    let (topology, eligible, mut initial) = counted(keys, rep, c, all);
    let selector = c.selector.as_ref().filter(|s| !s.is_empty());
    let members = reps
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            !r.terminating
                && r.namespace == rep.namespace
                && selector.is_some_and(|s| s.matches(&r.labels))
        })
        .map(|(i, _)| i)
        .collect();
    // The compact forms the solver reads the same way: no eligibility list when every node with
    // the key is eligible, no trailing zero counts.
    let every =
        eligible.iter().enumerate().all(|(n, &ok)| ok || keys.domain(topology, n) == NO_DOMAIN);
    let eligible = if every { Vec::new() } else { eligible };
    while initial.last() == Some(&0) {
        initial.pop();
    }
    problem.inter_pod.counters.push(Counter { topology, members, eligible, initial });
    problem.inter_pod.counters.len() - 1
}

/// A pod's controlling owner: namespace, kind, name (none for a bare or terminating pod).
fn owner_key(p: &Pod) -> Option<(&str, &str, &str)> {
    let o = p.owner.as_ref().filter(|_| !p.terminating)?;
    Some((p.namespace.as_str(), o.kind.as_str(), o.name.as_str()))
}

/// The most counters × nodes the owners' counters may add to a solve (the solver keeps a row
/// per node for each counter): past it only the owners with the most pods get them.
const OWNER_COUNTER_CELLS: usize = 1 << 25;

/// The pods of one controlling owner.
#[derive(Default)]
struct OwnerPods {
    /// The classes of `reps` with the owner.
    classes: Vec<usize>,
    /// Its pods: the classes' and the bound ones.
    pods: usize,
    /// Its bound pods per node.
    on_nodes: BTreeMap<usize, u32>,
    /// Whether it gets counters: two pods or more, within [`OWNER_COUNTER_CELLS`].
    counted: bool,
    /// Its counters, once made (one per key, shared by its classes).
    counters: Option<Vec<usize>>,
}

/// The pods of every controlling owner of a class, worked out once per tier.
struct Owners<'p> {
    by: BTreeMap<(&'p str, &'p str, &'p str), OwnerPods>,
    /// The keys of the counters, zone then node, that some node carries.
    keys: Vec<&'static str>,
}

impl<'p> Owners<'p> {
    /// The counters of `rep`'s owner over zones and nodes, made on first use.
    fn counters(&mut self, problem: &mut Problem, keys: &mut Keys<'_>, rep: &'p Pod) -> Vec<usize> {
        let Some(owner) = owner_key(rep).and_then(|o| self.by.get_mut(&o)) else {
            return Vec::new();
        };
        if !owner.counted {
            return Vec::new();
        }
        if owner.counters.is_none() {
            let made =
                self.keys.iter().map(|key| owner_counter(problem, keys, owner, key)).collect();
            owner.counters = Some(made);
        }
        owner.counters.clone().unwrap_or_default()
    }

    fn new(cluster: &'p ClusterState, reps: &[&'p Pod], sizes: &[usize]) -> Self {
        let mut by: BTreeMap<(&str, &str, &str), OwnerPods> = BTreeMap::new();
        for (i, rep) in reps.iter().enumerate() {
            if let Some(o) = owner_key(rep) {
                let entry = by.entry(o).or_default();
                entry.classes.push(i);
                entry.pods += sizes.get(i).copied().unwrap_or(1);
            }
        }
        for (n, node) in cluster.nodes.iter().enumerate() {
            for p in &node.pods {
                if let Some(entry) = owner_key(p).and_then(|o| by.get_mut(&o)) {
                    entry.pods += 1;
                    *entry.on_nodes.entry(n).or_insert(0) += 1;
                }
            }
        }
        // Two counters each; the owners with the most pods first.
        let room = OWNER_COUNTER_CELLS / cluster.nodes.len().max(1) / 2;
        let mut many: Vec<(usize, (&str, &str, &str))> =
            by.iter().filter(|(_, o)| o.pods >= 2).map(|(&k, o)| (o.pods, k)).collect();
        many.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for (_, k) in many.into_iter().take(room) {
            if let Some(o) = by.get_mut(&k) {
                o.counted = true;
            }
        }
        let keys = [ZONE_LABEL, HOSTNAME_LABEL]
            .into_iter()
            .filter(|k| cluster.nodes.iter().any(|n| n.labels.contains_key(*k)))
            .collect();
        Owners { by, keys }
    }
}

/// A counter of one owner's pods per domain of `key`: its bound pods as initial counts, its
/// classes as members.
fn owner_counter(
    problem: &mut Problem,
    keys: &mut Keys<'_>,
    owner: &OwnerPods,
    key: &str,
) -> usize {
    let topology = keys.index(key);
    let mut initial: Vec<u32> = Vec::new();
    for (&n, &here) in &owner.on_nodes {
        let d = keys.domain(topology, n);
        if d == NO_DOMAIN {
            continue;
        }
        let d = d as usize;
        if initial.len() <= d {
            initial.resize(d + 1, 0);
        }
        initial[d] = initial[d].saturating_add(here);
    }
    let members = owner.classes.clone();
    problem.inter_pod.counters.push(Counter { topology, members, eligible: Vec::new(), initial });
    problem.inter_pod.counters.len() - 1
}

/// Whether `rep`'s profile filters with InterPodAffinity and `rep` has required pod affinity:
/// the solver enforces it, so its matrix is evaluated without that filter.
pub(super) fn has_required_affinity(rep: &Pod, fws: &Frameworks) -> bool {
    fws.full.profile().plugins.filter.contains(&PluginName::InterPodAffinity)
        && !rep.pod_affinity.required.is_empty()
}

/// Adds the required pod affinity rules of the first `placing` classes of `reps` (see
/// [`has_required_affinity`]): one counter per term, counting the pods that match all the
/// class's terms (bound pods as InterPodAffinity's PreFilter counts them). Returns, per such
/// class, the nodes where the rest of InterPodAffinity's filter — the class's anti-affinity
/// and existing pods' anti-affinity, against the bound pods — passes, for the caller to
/// apply to the matrix evaluated without the filter.
pub(super) fn add_affinity(
    problem: &mut Problem,
    keys: &mut Keys<'_>,
    reps: &[&Pod],
    placing: usize,
    frameworks: &BTreeMap<String, Frameworks>,
) -> Vec<Option<Vec<bool>>> {
    let cluster = keys.cluster;
    let mut masks = vec![None; reps.len()];
    for (k, rep) in reps.iter().enumerate().take(placing) {
        let fws = &frameworks[&rep.scheduler_name];
        if !has_required_affinity(rep, fws) {
            continue;
        }
        let ipa = InterPodAffinity::new(fws.full.profile().args.inter_pod_affinity.clone());
        let Ok(state) = ipa.pre_filter(rep, cluster) else { continue };
        let terms = &state.required_affinity_terms;
        let members: Vec<usize> = reps
            .iter()
            .enumerate()
            .filter(|(_, r)| pod_matches_all_terms(terms, r))
            .map(|(i, _)| i)
            .collect();
        let mut counters = Vec::with_capacity(terms.len());
        for t in terms {
            let topology = keys.index(&t.topology_key);
            let mut initial = vec![0u32; cluster.nodes.len()];
            for (n, node) in cluster.nodes.iter().enumerate() {
                let d = keys.domain(topology, n);
                if let Some(v) = node.labels.get(&t.topology_key)
                    && d != NO_DOMAIN
                {
                    let count = state.affinity_counts.get(&t.topology_key, v);
                    initial[d as usize] = u32::try_from(count.max(0)).unwrap_or(u32::MAX);
                }
            }
            problem.inter_pod.counters.push(Counter {
                topology,
                members: members.clone(),
                eligible: Vec::new(),
                initial,
            });
            counters.push(problem.inter_pod.counters.len() - 1);
        }
        problem.inter_pod.rules.push(Rule::Affinity {
            class: k,
            counters,
            self_match: state.pod_matches_own_affinity_terms,
        });
        // The rest of the filter: the same pod without its affinity terms.
        let mut without = (*rep).clone();
        without.pod_affinity.required.clear();
        masks[k] = Some(match ipa.pre_filter(&without, cluster) {
            Ok(rest) => {
                cluster.nodes.iter().map(|n| ipa.filter(&rest, &without, n).is_success()).collect()
            }
            Err(_) => vec![true; cluster.nodes.len()],
        });
    }
    masks
}

/// Adds soft terms for the preferred pod affinity (positive) and anti-affinity (negative) of
/// the first `placing` classes of `reps` toward the pods *this solve* places: `plugin weight ×
/// term weight` per matching pod in the node's domain. Bound pods are already in the matrix's
/// InterPodAffinity score (normalized as upstream), so the counters start at 0; the terms add
/// what the pods landing during the solve change. Preferred terms of the placed pods toward
/// the class (the other direction) are not counted.
pub(super) fn add_preferred(
    problem: &mut Problem,
    keys: &mut Keys<'_>,
    reps: &[&Pod],
    placing: usize,
    frameworks: &BTreeMap<String, Frameworks>,
) {
    let cluster = keys.cluster;
    for (k, rep) in reps.iter().enumerate().take(placing) {
        let profile = frameworks[&rep.scheduler_name].full.profile();
        let Some(weight) = profile.score_weight(PluginName::InterPodAffinity) else { continue };
        if weight <= 0 {
            continue;
        }
        let terms = rep
            .pod_affinity
            .preferred
            .iter()
            .map(|t| (1, t))
            .chain(rep.pod_anti_affinity.preferred.iter().map(|t| (-1, t)));
        for (sign, wt) in terms {
            let term = AffinityTerm::new_incoming(rep, &wt.term, cluster);
            let members: Vec<usize> = reps
                .iter()
                .enumerate()
                .filter(|(_, r)| term.matches(r, cluster.namespace_labels(&r.namespace)))
                .map(|(i, _)| i)
                .collect();
            if members.is_empty() || wt.weight == 0 {
                continue;
            }
            let topology = keys.index(&term.topology_key);
            problem.inter_pod.counters.push(Counter { topology, members, ..Counter::default() });
            problem.inter_pod.rules.push(Rule::Soft {
                class: k,
                counter: problem.inter_pod.counters.len() - 1,
                weight: sign * weight.saturating_mul(i64::from(wt.weight)),
                max_skew: 0,
            });
        }
    }
}
