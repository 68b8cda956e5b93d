//! Soft rules a plan kept, measured on its after-state for the pods of the batch it placed.
//!
//! Input: the after-state ([`super::apply_plan`]), the pending pods, the plan and the
//! scheduler configuration. Output: [`SoftRules`].
//!
//! * **Spread**: a placed pod's `ScheduleAnyway` constraints — its own, or the profile's
//!   default constraints (PodTopologySpread's `constraints`, the system defaults unless the
//!   configuration lists others) when it has none — are *kept* when, for every one of them, the
//!   matching pods in the pod's domain minus the fewest in any eligible domain is at most
//!   `maxSkew` in the final state. Domains, matching pods and node eligibility are
//!   PodTopologySpread's (nodes with every constraint's key, the constraint's node inclusion
//!   policies, same-namespace non-terminating pods its selector matches). A pod whose node
//!   lacks a key, or whose constraints select nothing, is not counted.
//! * **Preferred pod (anti-)affinity**: the weight of every preferred term of the placed pods,
//!   and the part satisfied in the final state: an affinity term when another pod the term
//!   selects runs in the pod's topology domain, an anti-affinity term when none does (or the
//!   pod's node lacks the key).
//! * **Score**: the sum over the placed pods of the profile's total score (the weighted sum of
//!   every score plugin's normalized score) of the pod's node, evaluated on the final state
//!   with the pod taken out — how the profile rates each decision once every other decision is
//!   made. Only computed up to [`SCORE_CELL_LIMIT`] pod × node evaluations.
//!
//! Upstream counterparts: PodTopologySpread's skew and InterPodAffinity's preferred terms
//! (`pkg/scheduler/framework/plugins/{podtopologyspread,interpodaffinity}`, v1.35).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::framework::config::SchedulerConfig;
use crate::framework::runtime::{Framework, PreFilterOutcome};
use crate::model::{ClusterState, InclusionPolicy, Node, Pod, UnsatisfiableAction};
use crate::plan::Plan;
use crate::plugins::interpodaffinity::AffinityTerm;
use crate::plugins::node_affinity::required_node_affinity_matches;
use crate::plugins::podtopologyspread::{Constraint, PodTopologySpread};
use crate::plugins::taint_toleration::{find_matching_untolerated_taint, is_do_not_schedule_taint};

/// The most pod × node evaluations spent on the score of a final state (beyond, the score is
/// left out).
pub const SCORE_CELL_LIMIT: usize = 1_000_000;

/// Soft rules kept by one plan (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SoftRules {
    /// Placed pods with `ScheduleAnyway` spread constraints (their own or the defaults).
    pub spread_pods: usize,
    /// Those whose every such constraint ends within `maxSkew`.
    pub spread_pods_within_max_skew: usize,
    /// Total weight of the placed pods' preferred pod affinity and anti-affinity terms.
    pub preferred_weight: i64,
    /// The part of it satisfied in the final state.
    pub preferred_weight_satisfied: i64,
    /// Sum of the profile's total score of each placed pod's node in the final state
    /// (`None` when the cluster is too large to evaluate it, see [`SCORE_CELL_LIMIT`]).
    pub score_total: Option<i64>,
}

impl SoftRules {
    /// `spread_pods_within_max_skew / spread_pods` (1 when there are none).
    pub fn spread_fraction(&self) -> f64 {
        if self.spread_pods == 0 {
            1.0
        } else {
            self.spread_pods_within_max_skew as f64 / self.spread_pods as f64
        }
    }

    /// `preferred_weight_satisfied / preferred_weight` (1 when there is none).
    pub fn preferred_fraction(&self) -> f64 {
        if self.preferred_weight == 0 {
            1.0
        } else {
            self.preferred_weight_satisfied as f64 / self.preferred_weight as f64
        }
    }
}

/// Whether `node`'s pods count toward constraint `c` of `pod` (PodTopologySpread's node
/// inclusion policies).
fn included(c: &Constraint, pod: &Pod, node: &Node) -> bool {
    (c.node_affinity_policy != InclusionPolicy::Honor || required_node_affinity_matches(pod, node))
        && (c.node_taints_policy != InclusionPolicy::Honor
            || find_matching_untolerated_taint(
                &node.taints,
                &pod.tolerations,
                is_do_not_schedule_taint,
            )
            .is_none())
}

/// Matching pods per eligible domain of constraint `c` of `pod` (one of `all`).
fn domain_counts(
    after: &ClusterState,
    pod: &Pod,
    all: &[Constraint],
    c: &Constraint,
) -> BTreeMap<String, i64> {
    let mut counts = BTreeMap::new();
    let Some(selector) = c.selector.as_ref().filter(|s| !s.is_empty()) else { return counts };
    for node in &after.nodes {
        if !all.iter().all(|k| node.labels.contains_key(&k.topology_key)) || !included(c, pod, node)
        {
            continue;
        }
        let value = node.labels.get(&c.topology_key).cloned().unwrap_or_default();
        let n = node
            .pods
            .iter()
            .filter(|p| {
                !p.terminating && p.namespace == pod.namespace && selector.matches(&p.labels)
            })
            .count() as i64;
        *counts.entry(value).or_insert(0) += n;
    }
    counts
}

/// The soft rules `plan` kept on `after` (see the module docs).
pub fn soft_rules(
    after: &ClusterState,
    pending: &[Pod],
    plan: &Plan,
    config: &SchedulerConfig,
) -> SoftRules {
    let by_key: BTreeMap<String, &Pod> = pending.iter().map(|p| (p.key(), p)).collect();
    let mut frameworks: BTreeMap<String, Option<Framework>> = BTreeMap::new();
    let mut out = SoftRules::default();
    // Counts per (namespace, constraint, eligibility) are shared by the pods of a workload.
    let mut cache: BTreeMap<String, BTreeMap<String, i64>> = BTreeMap::new();
    // Nodes per (topology key, value), for preferred terms.
    let mut domains: BTreeMap<String, BTreeMap<String, Vec<usize>>> = BTreeMap::new();
    let mut placed: Vec<(&Pod, usize)> = Vec::new();
    for pl in &plan.placements {
        let (Some(pod), Some(n)) = (by_key.get(&pl.pod), after.node_index(&pl.node)) else {
            continue;
        };
        placed.push((pod, n));
    }
    for &(pod, n) in &placed {
        let fw = frameworks
            .entry(pod.scheduler_name.clone())
            .or_insert_with(|| Framework::for_scheduler(config, &pod.scheduler_name).ok());
        let node = &after.nodes[n];
        if let Some(fw) = fw.as_ref() {
            let pts = PodTopologySpread::new(fw.profile().args.pod_topology_spread.clone());
            let constraints = pts.constraints(pod, UnsatisfiableAction::ScheduleAnyway);
            let counted = !constraints.is_empty()
                && constraints.iter().all(|c| {
                    node.labels.contains_key(&c.topology_key)
                        && c.selector.as_ref().is_some_and(|s| !s.is_empty())
                });
            if counted {
                out.spread_pods += 1;
                let kept = constraints.iter().all(|c| {
                    let key = format!(
                        "{}|{:?}|{}|{:?}|{:?}|{:?}|{:?}|{:?}",
                        pod.namespace,
                        c.selector,
                        c.topology_key,
                        constraints.iter().map(|k| &k.topology_key).collect::<Vec<_>>(),
                        c.node_affinity_policy,
                        c.node_taints_policy,
                        (&pod.node_selector, &pod.node_affinity.required),
                        pod.tolerations,
                    );
                    let counts = cache
                        .entry(key)
                        .or_insert_with(|| domain_counts(after, pod, &constraints, c));
                    let min = counts.values().copied().min().unwrap_or(0);
                    let here = node
                        .labels
                        .get(&c.topology_key)
                        .and_then(|v| counts.get(v))
                        .copied()
                        .unwrap_or(0);
                    here - min <= i64::from(c.max_skew)
                });
                out.spread_pods_within_max_skew += usize::from(kept);
            }
        }
        let terms = pod
            .pod_affinity
            .preferred
            .iter()
            .map(|t| (t, true))
            .chain(pod.pod_anti_affinity.preferred.iter().map(|t| (t, false)));
        for (weighted, affinity) in terms {
            let weight = i64::from(weighted.weight);
            out.preferred_weight += weight;
            let term = AffinityTerm::new_incoming(pod, &weighted.term, after);
            let Some(value) = node.labels.get(&term.topology_key) else {
                out.preferred_weight_satisfied += if affinity { 0 } else { weight };
                continue;
            };
            let nodes = domains
                .entry(term.topology_key.clone())
                .or_insert_with(|| {
                    let mut m: BTreeMap<String, Vec<usize>> = BTreeMap::new();
                    for (i, nd) in after.nodes.iter().enumerate() {
                        if let Some(v) = nd.labels.get(&term.topology_key) {
                            m.entry(v.clone()).or_default().push(i);
                        }
                    }
                    m
                })
                .get(value);
            let found = nodes.into_iter().flatten().any(|&i| {
                after.nodes[i].pods.iter().any(|q| {
                    !(q.namespace == pod.namespace && q.name == pod.name)
                        && term.matches(q, after.namespace_labels(&q.namespace))
                })
            });
            if found == affinity {
                out.preferred_weight_satisfied += weight;
            }
        }
    }
    if placed.len().saturating_mul(after.nodes.len()) <= SCORE_CELL_LIMIT {
        out.score_total = Some(final_score(after, &placed, &frameworks));
    }
    out
}

/// Σ over `placed` of the profile's total score of the pod's node on `after` without the pod.
fn final_score(
    after: &ClusterState,
    placed: &[(&Pod, usize)],
    frameworks: &BTreeMap<String, Option<Framework>>,
) -> i64 {
    let mut state = after.clone();
    let mut total = 0;
    for &(pod, n) in placed {
        let Some(Some(fw)) = frameworks.get(&pod.scheduler_name) else { continue };
        let Some(me) = state.nodes[n].remove_pod(&pod.namespace, &pod.name) else { continue };
        if let PreFilterOutcome::Proceed(cycle) = fw.pre_filter(pod, &state) {
            let feasible: Vec<usize> = state
                .nodes
                .iter()
                .enumerate()
                .filter(|(_, node)| {
                    cycle.node_names().is_none_or(|names| names.contains(&node.name))
                        && fw.passes(&cycle, pod, node)
                })
                .map(|(i, _)| i)
                .collect();
            if feasible.contains(&n)
                && let Ok(scores) = fw.score(pod, &state, &feasible)
            {
                total += scores.iter().find(|s| s.node == n).map_or(0, |s| s.total);
            }
        }
        state.nodes[n].add_pod(Arc::clone(&me));
    }
    total
}
