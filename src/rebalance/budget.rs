//! PodDisruptionBudgets as the disruption controller computes them, and as the eviction API
//! applies them.
//!
//! Input: the snapshot's `policy/v1` PodDisruptionBudgets, its ReplicationControllers,
//! ReplicaSets and StatefulSets (the controllers whose scale a percentage or `maxUnavailable`
//! budget needs) and the pods of the model. Output: one [`Budget`] per PDB: which pods it
//! selects and how many healthy pods it needs, so that the disruptions it allows can be counted
//! on any simulated state ([`Budget::allowed`]).
//!
//! Upstream: `pkg/controller/disruption/disruption.go` (`getExpectedPodCount`,
//! `getExpectedScale`, `countHealthyPods`, `updatePdbStatus` and the controller finders),
//! `apimachinery/pkg/util/intstr` (`GetScaledValueFromIntOrPercent`) and
//! `client-go/listers/policy/v1` (`GetPodPodDisruptionBudgets`: in policy/v1 an empty selector
//! selects every pod of the namespace, a missing one none), v1.35:
//!
//! - `maxUnavailable` set: `expected` = the sum of the scales of the matching pods' controllers;
//!   `desired = max(0, expected − scaled(maxUnavailable, expected, round up))`.
//! - else `minAvailable` an integer: `desired = minAvailable`, `expected` = matching pods.
//! - else `minAvailable` a percentage: `expected` = controller scales,
//!   `desired = scaled(minAvailable, expected, round up)`.
//! - `allowed = healthy − desired`, and 0 when that is negative or `expected ≤ 0`.
//!
//! `healthy` counts matching pods that are not being deleted, not in `status.disruptedPods`, and
//! ready. kplace's model has no pod conditions, so *ready* is read as phase `Running`.
//!
//! A controller's scale comes from the snapshot (`spec.replicas`, defaulting to 1): a
//! ReplicationController, a ReplicaSet not controlled by a Deployment, or a StatefulSet, matched
//! by name and UID. Snapshots do not carry Deployments (nor custom resources with a scale
//! subresource), so when the controller of some matching pod is not found the budget falls back
//! to its `status.disruptionsAllowed` — what the real controller computed when the snapshot was
//! taken ([`BudgetSource::Status`]). An invalid percentage fails the computation as upstream's
//! `failSafe` does: the budget allows nothing.

use std::collections::BTreeMap;

use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::model::{ClusterState, LabelSelector, Pod, PodPhase};
use crate::snapshot::Snapshot;
use crate::snapshot::convert::optional_label_selector;

/// Where a budget's numbers come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum BudgetSource {
    /// Computed from the spec and the matching pods, as the disruption controller does.
    Computed,
    /// The snapshot's `status.disruptionsAllowed` (the scale of some controller is unknown).
    Status,
}

impl BudgetSource {
    /// `computed` or `status`.
    pub fn as_str(self) -> &'static str {
        match self {
            BudgetSource::Computed => "computed",
            BudgetSource::Status => "status",
        }
    }
}

/// One PodDisruptionBudget, ready to count allowed disruptions on any state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `spec.selector` (`None`: selects no pod; empty: every pod of the namespace).
    pub selector: Option<LabelSelector>,
    /// Healthy pods the budget needs (`status.desiredHealthy` as the controller computes it).
    pub desired_healthy: i32,
    /// Pods the budget expects (`status.expectedPods`); no disruption is allowed when ≤ 0.
    pub expected_pods: i32,
    /// Pod names listed in `status.disruptedPods` (not counted as healthy).
    pub disrupted_pods: Vec<String>,
    /// Where the numbers come from.
    pub source: BudgetSource,
}

impl Budget {
    /// A budget selecting pods of `namespace` whose labels include `labels`, needing
    /// `desired_healthy` healthy pods (for tests and callers without a snapshot).
    pub fn new(namespace: &str, name: &str, labels: &[(&str, &str)], desired_healthy: i32) -> Self {
        Budget {
            namespace: namespace.to_string(),
            name: name.to_string(),
            selector: Some(LabelSelector::from_match_labels(labels.iter().copied())),
            desired_healthy,
            expected_pods: 1,
            disrupted_pods: Vec::new(),
            source: BudgetSource::Computed,
        }
    }

    /// `namespace/name`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// Whether the budget selects `pod` (same namespace, selector matches its labels).
    pub fn selects(&self, pod: &Pod) -> bool {
        pod.namespace == self.namespace
            && self.selector.as_ref().is_some_and(|s| s.matches(&pod.labels))
    }

    /// Whether `pod` counts as healthy for this budget (upstream `countHealthyPods`, with
    /// *ready* read as phase `Running`).
    fn healthy(&self, pod: &Pod) -> bool {
        !pod.terminating
            && pod.phase == PodPhase::Running
            && !self.disrupted_pods.contains(&pod.name)
    }

    /// Healthy selected pods of `state`.
    pub fn healthy_pods(&self, state: &ClusterState) -> i32 {
        let n = state
            .nodes
            .iter()
            .flat_map(|n| &n.pods)
            .filter(|p| self.selects(p) && self.healthy(p))
            .count();
        i32::try_from(n).unwrap_or(i32::MAX)
    }

    /// Disruptions allowed on `state` (upstream `updatePdbStatus`).
    pub fn allowed(&self, state: &ClusterState) -> i32 {
        allowed_disruptions(self.healthy_pods(state), self.desired_healthy, self.expected_pods)
    }
}

/// `currentHealthy − desiredHealthy`, or 0 when negative or when no pod is expected.
pub fn allowed_disruptions(current_healthy: i32, desired_healthy: i32, expected: i32) -> i32 {
    let allowed = current_healthy.saturating_sub(desired_healthy);
    if expected <= 0 || allowed <= 0 { 0 } else { allowed }
}

/// Upstream `intstr.GetScaledValueFromIntOrPercent`: an integer as is; `"N%"` of `total`,
/// rounded up or down; any other string is an error.
pub fn scaled_value(value: &IntOrString, total: i32, round_up: bool) -> Result<i32, String> {
    match value {
        IntOrString::Int(v) => Ok(*v),
        IntOrString::String(s) => {
            let Some(number) = s.strip_suffix('%') else {
                return Err(format!("invalid value {s:?}: string is not a percentage"));
            };
            let percent: i64 = number
                .parse()
                .map_err(|_| format!("invalid value for IntOrString: invalid value {s:?}"))?;
            let product = percent * i64::from(total);
            // ceil / floor of product / 100 for either sign (math.Ceil / math.Floor of the
            // float quotient, which is exact for these magnitudes).
            let scaled = if round_up {
                product.div_euclid(100) + i64::from(product.rem_euclid(100) != 0)
            } else {
                product.div_euclid(100)
            };
            i32::try_from(scaled).map_err(|_| format!("value {s:?} of {total} overflows"))
        }
    }
}

/// The budget's needs from its spec (upstream `getExpectedPodCount`): `(expected, desired)`.
/// `matching` is the number of matching pods; `scale` the sum of their controllers' scales,
/// `None` when some controller is unknown. `Ok(None)`: the scale is needed and unknown.
pub fn expected_and_desired(
    min_available: Option<&IntOrString>,
    max_unavailable: Option<&IntOrString>,
    matching: i32,
    scale: Option<i32>,
) -> Result<Option<(i32, i32)>, String> {
    if let Some(max) = max_unavailable {
        let Some(expected) = scale else { return Ok(None) };
        let max = scaled_value(max, expected, true)?;
        return Ok(Some((expected, expected.saturating_sub(max).max(0))));
    }
    match min_available {
        Some(IntOrString::Int(v)) => Ok(Some((matching, *v))),
        Some(min @ IntOrString::String(_)) => {
            let Some(expected) = scale else { return Ok(None) };
            Ok(Some((expected, scaled_value(min, expected, true)?)))
        }
        None => Ok(Some((0, 0))),
    }
}

/// The scale of a pod's controller found in the snapshot (upstream's finders:
/// ReplicationController, ReplicaSet not controlled by a Deployment, StatefulSet); `None` when
/// the controller is not in the snapshot, or is a ReplicaSet controlled by a Deployment.
fn controller_scale(snapshot: &Snapshot, pod: &Pod) -> Option<(String, i32)> {
    let owner = pod.owner.as_ref()?;
    let same = |meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
        meta.namespace.as_deref().unwrap_or("default") == pod.namespace
            && meta.name.as_deref() == Some(owner.name.as_str())
            && meta.uid.as_deref().unwrap_or("") == owner.uid
    };
    let controlled_by_deployment =
        |meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
            meta.owner_references
                .iter()
                .flatten()
                .any(|o| o.controller == Some(true) && o.kind == "Deployment")
        };
    match owner.kind.as_str() {
        "ReplicationController" => snapshot
            .replication_controllers
            .iter()
            .find(|o| same(&o.object.metadata))
            .map(|o| o.object.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1)),
        "ReplicaSet" => snapshot
            .replica_sets
            .iter()
            .find(|o| same(&o.object.metadata) && !controlled_by_deployment(&o.object.metadata))
            .map(|o| o.object.spec.replicas.unwrap_or(1)),
        "StatefulSet" => snapshot
            .stateful_sets
            .iter()
            .find(|o| same(&o.object.metadata))
            .map(|o| o.object.spec.replicas.unwrap_or(1)),
        _ => None,
    }
    .map(|scale| (owner.uid.clone(), scale))
}

/// One [`Budget`] per PodDisruptionBudget of the snapshot, sorted by namespace and name.
/// `state` holds the bound pods, `pending` the pending ones (both count as matching pods).
/// Second value: warnings (budgets that fell back to their status, or failed).
pub fn budgets(
    snapshot: &Snapshot,
    state: &ClusterState,
    pending: &[Pod],
) -> (Vec<Budget>, Vec<String>) {
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    let pods: Vec<&Pod> =
        state.nodes.iter().flat_map(|n| n.pods.iter().map(AsRef::as_ref)).chain(pending).collect();
    for sourced in &snapshot.pdbs {
        let pdb: &PodDisruptionBudget = &sourced.object;
        let namespace = pdb.metadata.namespace.clone().unwrap_or_else(|| "default".to_string());
        let name = pdb.metadata.name.clone().unwrap_or_default();
        let spec = pdb.spec.as_ref();
        let status = pdb.status.as_ref();
        let selector = optional_label_selector(spec.and_then(|s| s.selector.as_ref()));
        let disrupted_pods: Vec<String> = status
            .and_then(|s| s.disrupted_pods.as_ref())
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        let mut budget = Budget {
            namespace,
            name,
            selector: selector.as_ref().ok().cloned().flatten(),
            desired_healthy: 0,
            expected_pods: 0,
            disrupted_pods,
            source: BudgetSource::Computed,
        };
        if let Err(e) = &selector {
            // Upstream: the sync fails and failSafe sets disruptionsAllowed to 0.
            warnings
                .push(format!("pdb {}: spec.selector: {e}; it allows no disruption", budget.key()));
            budget.desired_healthy = i32::MAX;
            out.push(budget);
            continue;
        }
        let matching: Vec<&Pod> = pods.iter().copied().filter(|p| budget.selects(p)).collect();
        let mut scales: BTreeMap<String, i32> = BTreeMap::new();
        let mut unknown = false;
        for p in &matching {
            if p.owner.is_none() {
                continue; // Unmanaged pods are skipped (upstream records them in an event).
            }
            match controller_scale(snapshot, p) {
                Some((uid, scale)) => {
                    scales.insert(uid, scale);
                }
                None => unknown = true,
            }
        }
        let scale = (!unknown).then(|| scales.values().fold(0i32, |a, b| a.saturating_add(*b)));
        let count = i32::try_from(matching.len()).unwrap_or(i32::MAX);
        let min = spec.and_then(|s| s.min_available.as_ref());
        let max = spec.and_then(|s| s.max_unavailable.as_ref());
        match expected_and_desired(min, max, count, scale) {
            Ok(Some((expected, desired))) => {
                budget.expected_pods = expected;
                budget.desired_healthy = desired;
            }
            Ok(None) => {
                // Fall back to what the disruption controller wrote.
                let allowed = status.and_then(|s| s.disruptions_allowed).unwrap_or(0).max(0);
                budget.source = BudgetSource::Status;
                budget.expected_pods = 1;
                budget.desired_healthy = budget.healthy_pods(state).saturating_sub(allowed);
                warnings.push(format!(
                    "pdb {}: the scale of some selected pod's controller is not in the snapshot \
                     (Deployments are not read); using status.disruptionsAllowed = {allowed}",
                    budget.key()
                ));
            }
            Err(e) => {
                warnings.push(format!("pdb {}: {e}; it allows no disruption", budget.key()));
                budget.desired_healthy = i32::MAX;
            }
        }
        out.push(budget);
    }
    out.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    (out, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(v: i32) -> IntOrString {
        IntOrString::Int(v)
    }

    fn pct(s: &str) -> IntOrString {
        IntOrString::String(s.to_string())
    }

    #[test]
    #[allow(clippy::type_complexity)]
    fn scaled_values_follow_intstr() {
        let cases: Vec<(&str, IntOrString, i32, bool, Result<i32, ()>)> = vec![
            ("an integer is taken as is", int(3), 10, true, Ok(3)),
            ("50% of 5 rounded up is 3", pct("50%"), 5, true, Ok(3)),
            ("50% of 5 rounded down is 2", pct("50%"), 5, false, Ok(2)),
            ("34% of 3 rounded up is 2", pct("34%"), 3, true, Ok(2)),
            ("100% of 7 is 7", pct("100%"), 7, true, Ok(7)),
            ("0% is 0", pct("0%"), 7, true, Ok(0)),
            ("a string without % is an error", pct("5"), 7, true, Err(())),
            ("a non-number percentage is an error", pct("x%"), 7, true, Err(())),
        ];
        for (name, v, total, up, want) in cases {
            assert_eq!(scaled_value(&v, total, up).map_err(|_| ()), want, "{name}");
        }
    }

    #[test]
    #[allow(clippy::type_complexity)]
    fn expected_and_desired_follow_get_expected_pod_count() {
        let cases: Vec<(
            &str,
            Option<IntOrString>,
            Option<IntOrString>,
            i32,
            Option<i32>,
            Option<(i32, i32)>,
        )> = vec![
            (
                "integer minAvailable uses the matching pods",
                Some(int(4)),
                None,
                6,
                None,
                Some((6, 4)),
            ),
            (
                "percentage minAvailable uses the controllers' scale",
                Some(pct("50%")),
                None,
                3,
                Some(5),
                Some((5, 3)),
            ),
            (
                "percentage minAvailable without a known scale falls back",
                Some(pct("50%")),
                None,
                3,
                None,
                None,
            ),
            ("maxUnavailable 1 of 3 needs 2", None, Some(int(1)), 3, Some(3), Some((3, 2))),
            (
                "maxUnavailable 25% of 3 rounds up to 1, needs 2",
                None,
                Some(pct("25%")),
                3,
                Some(3),
                Some((3, 2)),
            ),
            (
                "maxUnavailable above the scale needs 0",
                None,
                Some(int(9)),
                3,
                Some(3),
                Some((3, 0)),
            ),
            (
                "maxUnavailable wins over minAvailable",
                Some(int(3)),
                Some(int(1)),
                3,
                Some(3),
                Some((3, 2)),
            ),
            ("maxUnavailable without a known scale falls back", None, Some(int(1)), 3, None, None),
            ("neither field expects nothing", None, None, 3, Some(3), Some((0, 0))),
        ];
        for (name, min, max, matching, scale, want) in cases {
            let got = expected_and_desired(min.as_ref(), max.as_ref(), matching, scale).unwrap();
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn allowed_disruptions_follow_update_pdb_status() {
        let cases = [
            ("two healthy above the need allow two", 5, 3, 5, 2),
            ("healthy equal to the need allows none", 3, 3, 3, 0),
            ("fewer healthy than needed allows none", 2, 3, 3, 0),
            ("no expected pods allows none", 5, 0, 0, 0),
        ];
        for (name, healthy, desired, expected, want) in cases {
            assert_eq!(allowed_disruptions(healthy, desired, expected), want, "{name}");
        }
    }
}
