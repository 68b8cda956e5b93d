//! The batch objective on the cluster's terms: the capacity the solver's shares are taken of,
//! and the rank of whole plans (for `--ensure-baseline`).
//!
//! Input: the cluster, the pending pods, their frameworks and a plan. Output: per resource the
//! cluster's allocatable total ([`capacity`]) and a plan's [`value_rank`] under
//! [`Objective::Resources`] — the same pod values as the solver's
//! ([`kplace_solver::objective`]), so that the batch plan and the sequential plan are judged
//! as the solver judges its strategies.

use std::collections::BTreeMap;

use kplace_solver::objective::dominant_share;

use super::{Frameworks, solver_requests};
use crate::model::{ClusterState, Pod};
use crate::plan::Plan;
use crate::resources::PODS;

/// The cluster's allocatable total per resource of `names` (`pods`: pod slots), the capacity
/// the solver's dominant shares are taken of. The same in every tier: nodes do not change.
pub(super) fn capacity(cluster: &ClusterState, names: &[String]) -> Vec<i64> {
    names
        .iter()
        .map(|name| {
            cluster
                .nodes
                .iter()
                .map(|node| {
                    if name == PODS {
                        node.allocatable.allowed_pod_number
                    } else {
                        node.allocatable.get(name)
                    }
                })
                .fold(0i64, |a, b| a.saturating_add(b.max(0)))
        })
        .collect()
}

/// Each pending pod's priority and value (its dominant share of the cluster, as the solver
/// weighs it), by pod key.
pub(super) fn pod_values(
    cluster: &ClusterState,
    pending: &[Pod],
    frameworks: &BTreeMap<String, Frameworks>,
) -> BTreeMap<String, (i32, u64)> {
    let requests: Vec<BTreeMap<String, i64>> = pending
        .iter()
        .map(|p| {
            frameworks
                .get(&p.scheduler_name)
                .map(|fw| solver_requests(p, &fw.full))
                .unwrap_or_default()
        })
        .collect();
    let mut names: Vec<String> = requests.iter().flat_map(|r| r.keys().cloned()).collect();
    names.sort();
    names.dedup();
    let cap = capacity(cluster, &names);
    pending
        .iter()
        .zip(&requests)
        .map(|(pod, req)| {
            let amounts: Vec<i64> =
                names.iter().map(|n| req.get(n).copied().unwrap_or(0)).collect();
            (pod.key(), (pod.priority, dominant_share(&amounts, &cap)))
        })
        .collect()
}

/// How good `plan` is under [`Objective::Resources`]: per priority (highest first, every
/// priority of `values`) the summed value of the placed pods; then fewer evictions.
///
/// [`Objective::Resources`]: kplace_solver::Objective::Resources
pub(super) fn value_rank(
    plan: &Plan,
    values: &BTreeMap<String, (i32, u64)>,
) -> (Vec<(i32, u128)>, std::cmp::Reverse<usize>) {
    let mut tiers: BTreeMap<std::cmp::Reverse<i32>, u128> =
        values.values().map(|&(p, _)| (std::cmp::Reverse(p), 0)).collect();
    for placement in &plan.placements {
        if let Some(&(p, v)) = values.get(&placement.pod) {
            *tiers.entry(std::cmp::Reverse(p)).or_default() += u128::from(v);
        }
    }
    (tiers.into_iter().map(|(p, v)| (p.0, v)).collect(), std::cmp::Reverse(plan.evictions.len()))
}
