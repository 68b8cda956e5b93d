//! PodDisruptionBudgets, wave by wave: the check's own reading of the budgets, independent of
//! the planner's (`crate::rebalance::budget`), written from upstream's disruption controller
//! (`pkg/controller/disruption/disruption.go`, v1.35: `getExpectedPodCount`, `countHealthyPods`,
//! `updatePdbStatus`) and `intstr.GetScaledValueFromIntOrPercent`.
//!
//! Input: the snapshot's PodDisruptionBudgets and controllers, the cluster model and a plan.
//! Output: a violation for every wave that evicts more pods of a budget than it allows, and for
//! every moved pod that two budgets select (the eviction API refuses those with a 500).
//!
//! A budget allows `healthy − desired` disruptions (0 when negative or when no pod is expected),
//! where `healthy` counts its running pods that are not terminating nor in
//! `status.disruptedPods`, and `desired` is `minAvailable` (an integer), or — given the scale of
//! the matching pods' controllers (ReplicationController, ReplicaSet not owned by a Deployment,
//! StatefulSet, as found in the snapshot) — `ceil(minAvailable% × scale)` or
//! `scale − ceil(maxUnavailable × scale)`. Without a scale the snapshot's
//! `status.disruptionsAllowed` is taken. A wave starts with every earlier replacement running,
//! so each wave gets the same allowance.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{Violation, ViolationKind};
use crate::model::{ClusterState, LabelSelector, Pod, PodPhase};
use crate::plan::Plan;
use crate::snapshot::Snapshot;

/// One budget as the check reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct WaveBudget {
    /// `namespace/name`.
    pub key: String,
    namespace: String,
    selector: Option<LabelSelector>,
    /// Disruptions allowed at the start of every wave.
    pub allowed: i32,
}

impl WaveBudget {
    fn selects(&self, pod: &Pod) -> bool {
        pod.namespace == self.namespace
            && self.selector.as_ref().is_some_and(|s| s.matches(&pod.labels))
    }
}

/// `"N%"` of `total` rounded up, or an integer as is; `None` for anything else.
fn scaled_up(value: &IntOrString, total: i32) -> Option<i32> {
    match value {
        IntOrString::Int(v) => Some(*v),
        IntOrString::String(s) => {
            let percent: i64 = s.strip_suffix('%')?.parse().ok()?;
            let product = percent * i64::from(total);
            i32::try_from(product.div_euclid(100) + i64::from(product.rem_euclid(100) != 0)).ok()
        }
    }
}

/// The replicas of the controller of `pod` found in the snapshot, by its UID.
fn scale_of(snapshot: &Snapshot, pod: &Pod) -> Option<(String, i32)> {
    let owner = pod.owner.as_ref()?;
    let uid = |m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
        m.uid.as_deref() == Some(owner.uid.as_str())
    };
    let scale = match owner.kind.as_str() {
        "ReplicationController" => snapshot
            .replication_controllers
            .iter()
            .find(|o| uid(&o.object.metadata))
            .map(|o| o.object.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1)),
        "ReplicaSet" => snapshot
            .replica_sets
            .iter()
            .find(|o| {
                uid(&o.object.metadata)
                    && !o
                        .object
                        .metadata
                        .owner_references
                        .iter()
                        .flatten()
                        .any(|r| r.controller == Some(true) && r.kind == "Deployment")
            })
            .map(|o| o.object.spec.replicas.unwrap_or(1)),
        "StatefulSet" => snapshot
            .stateful_sets
            .iter()
            .find(|o| uid(&o.object.metadata))
            .map(|o| o.object.spec.replicas.unwrap_or(1)),
        _ => None,
    }?;
    Some((owner.uid.clone(), scale))
}

/// Reads every budget of the snapshot against the bound pods of `cluster`.
pub fn wave_budgets(snapshot: &Snapshot, cluster: &ClusterState) -> Vec<WaveBudget> {
    let pods: Vec<&Pod> =
        cluster.nodes.iter().flat_map(|n| n.pods.iter().map(AsRef::as_ref)).collect();
    let mut out = Vec::new();
    for sourced in &snapshot.pdbs {
        let pdb = &sourced.object;
        let namespace = pdb.metadata.namespace.clone().unwrap_or_else(|| "default".to_string());
        let name = pdb.metadata.name.clone().unwrap_or_default();
        let spec = pdb.spec.as_ref();
        let status = pdb.status.as_ref();
        // policy/v1: an empty selector selects every pod of the namespace, a missing one none.
        let selector = crate::snapshot::convert::optional_label_selector(
            spec.and_then(|s| s.selector.as_ref()),
        )
        .ok()
        .flatten();
        let mut budget =
            WaveBudget { key: format!("{namespace}/{name}"), namespace, selector, allowed: 0 };
        let disrupted: Vec<String> = status
            .and_then(|s| s.disrupted_pods.as_ref())
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        let matching: Vec<&Pod> = pods.iter().copied().filter(|p| budget.selects(p)).collect();
        let healthy = matching
            .iter()
            .filter(|p| {
                !p.terminating && p.phase == PodPhase::Running && !disrupted.contains(&p.name)
            })
            .count();
        let healthy = i32::try_from(healthy).unwrap_or(i32::MAX);
        let scale = || {
            let mut by_controller: BTreeMap<String, i32> = BTreeMap::new();
            for p in &matching {
                let (uid, s) = scale_of(snapshot, p)?;
                by_controller.insert(uid, s);
            }
            Some(by_controller.values().sum::<i32>())
        };
        let from_spec = match (
            spec.and_then(|s| s.max_unavailable.as_ref()),
            spec.and_then(|s| s.min_available.as_ref()),
        ) {
            (Some(max), _) => {
                scale().and_then(|e| Some((e, e.saturating_sub(scaled_up(max, e)?).max(0))))
            }
            (None, Some(IntOrString::Int(min))) => {
                Some((i32::try_from(matching.len()).unwrap_or(i32::MAX), *min))
            }
            (None, Some(min)) => scale().and_then(|e| Some((e, scaled_up(min, e)?))),
            (None, None) => Some((0, 0)),
        };
        budget.allowed = match from_spec {
            Some((expected, desired)) if expected > 0 => healthy.saturating_sub(desired).max(0),
            Some(_) => 0,
            None => status.and_then(|s| s.disruptions_allowed).unwrap_or(0).max(0),
        };
        out.push(budget);
    }
    out
}

/// The moves of each wave against the budgets: a wave may not evict more of a budget's pods
/// than it allows, and a moved pod may not be selected by two budgets.
pub fn check_waves(cluster: &ClusterState, plan: &Plan, budgets: &[WaveBudget]) -> Vec<Violation> {
    let bound: BTreeMap<String, &Pod> =
        cluster.nodes.iter().flat_map(|n| n.pods.iter().map(|p| (p.key(), p.as_ref()))).collect();
    let mut per_wave: BTreeMap<(u32, usize), Vec<&str>> = BTreeMap::new();
    let mut out = Vec::new();
    for m in &plan.moves {
        let Some(pod) = bound.get(&m.pod) else { continue };
        let mine: Vec<usize> = (0..budgets.len()).filter(|&b| budgets[b].selects(pod)).collect();
        if mine.len() > 1 {
            let names: Vec<&str> = mine.iter().map(|&b| budgets[b].key.as_str()).collect();
            out.push(Violation {
                kind: ViolationKind::DisruptionBudget,
                pod: m.pod.clone(),
                node: Some(m.from.clone()),
                message: format!(
                    "wave {}: the pod is selected by several budgets ({}); the eviction API \
                     refuses to evict it",
                    m.wave,
                    names.join(", ")
                ),
            });
        }
        for b in mine {
            per_wave.entry((m.wave, b)).or_default().push(m.pod.as_str());
        }
    }
    for ((wave, b), pods) in per_wave {
        let Some(budget) = budgets.get(b) else { continue };
        let allowed = usize::try_from(budget.allowed).unwrap_or(0);
        if pods.len() > allowed {
            out.push(Violation {
                kind: ViolationKind::DisruptionBudget,
                pod: pods.get(allowed).map(|p| p.to_string()).unwrap_or_default(),
                node: None,
                message: format!(
                    "wave {wave} evicts {} pods of budget {} ({}), which allows {}",
                    pods.len(),
                    budget.key,
                    pods.join(", "),
                    budget.allowed
                ),
            });
        }
    }
    out
}
