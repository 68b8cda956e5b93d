//! `kplace inspect`: a summary of a cluster snapshot.
//!
//! Input: the model built from a snapshot (nodes with their bound pods, pending pods);
//! output: [`InspectReport`], serializable as JSON/YAML and printable as tables.
//! No upstream counterpart: this is what `kubectl describe nodes` and a few `kubectl get`
//! queries would tell, in one place.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::{ClusterState, GangConvention, GangIndex, Pod};
use crate::resources::{CPU, EPHEMERAL_STORAGE, MEMORY, PODS, Resource};
pub use crate::snapshot::IgnoredPods;

/// Label naming a node's instance type.
pub const INSTANCE_TYPE_LABEL: &str = "node.kubernetes.io/instance-type";
/// Label naming a node's zone.
pub const ZONE_LABEL: &str = "topology.kubernetes.io/zone";

/// Nodes of one shape: instance type and allocatable CPU/memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeShape {
    /// `node.kubernetes.io/instance-type`, or `-`.
    pub instance_type: String,
    /// Allocatable CPU, millicores.
    pub cpu_millis: i64,
    /// Allocatable memory, bytes.
    pub memory_bytes: i64,
    /// Extended resources on the node (e.g. `nvidia.com/gpu`).
    pub extended: BTreeMap<String, i64>,
    /// Number of nodes of this shape.
    pub count: usize,
}

/// Totals of one resource over the cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ResourceTotals {
    /// Sum of node allocatable.
    pub allocatable: i64,
    /// Sum of requests of bound (non-terminal) pods.
    pub requested: i64,
    /// Sum of requests of pending pods.
    pub pending: i64,
    /// `requested / allocatable` (0 when nothing is allocatable).
    pub utilization: f64,
    /// `(requested + pending) / allocatable`.
    pub utilization_if_all_placed: f64,
}

/// Node counts.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct NodeSummary {
    /// All nodes.
    pub total: usize,
    /// Nodes with `spec.unschedulable`.
    pub cordoned: Vec<String>,
    /// Nodes per zone (`-` for nodes without a zone label).
    pub by_zone: BTreeMap<String, usize>,
    /// Nodes per shape.
    pub shapes: Vec<NodeShape>,
    /// `key=value:effect` → number of nodes with that taint.
    pub taints: BTreeMap<String, usize>,
}

/// Pod counts.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PodSummary {
    /// Bound, non-terminal pods.
    pub bound: usize,
    /// Pending pods kplace schedules.
    pub pending: usize,
    /// Pending pods by priority.
    pub pending_by_priority: BTreeMap<i32, usize>,
    /// Pending pods by scheduler name.
    pub pending_by_scheduler: BTreeMap<String, usize>,
    /// Number of scheduling equivalence classes among pending pods.
    pub pending_classes: usize,
    /// Pods not scheduled by kplace.
    pub ignored: IgnoredPods,
}

/// The gangs of one convention (see [`crate::model::gang`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GangSummary {
    /// `coscheduling` or `volcano`.
    pub convention: String,
    /// Number of gangs (groups with at least one pending or bound pod).
    pub gangs: usize,
    /// Their pending pods.
    pub pending_members: usize,
    /// Their bound pods (they count toward `minMember`).
    pub bound_members: usize,
    /// Sum of their `minMember`.
    pub min_member: i64,
    /// Sum over the gangs of the pending members needed, `max(0, minMember - bound)`.
    pub needed_from_pending: usize,
    /// Gangs with fewer pending members than needed: none of their pending pods can be placed.
    pub unsatisfiable: usize,
}

/// The whole report.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct InspectReport {
    /// Nodes.
    pub nodes: NodeSummary,
    /// Pods.
    pub pods: PodSummary,
    /// Gangs, one entry per convention that has any (empty without gangs).
    pub gangs: Vec<GangSummary>,
    /// Per resource (`cpu` in millicores, memory and storage in bytes).
    pub resources: BTreeMap<String, ResourceTotals>,
}

/// Builds the report. `pending_classes` is the number of equivalence classes the encoder found.
pub fn inspect(
    state: &ClusterState,
    pending: &[Pod],
    ignored: IgnoredPods,
    pending_classes: usize,
) -> InspectReport {
    let mut report = InspectReport::default();
    let mut alloc = Resource::default();
    let mut requested = Resource::default();
    let mut pending_req = Resource::default();
    let mut shapes: BTreeMap<(String, i64, i64, BTreeMap<String, i64>), usize> = BTreeMap::new();

    report.nodes.total = state.nodes.len();
    for node in &state.nodes {
        alloc.add(&node.allocatable);
        requested.add(&node.requested);
        requested.allowed_pod_number += node.pods.len() as i64;
        if node.unschedulable {
            report.nodes.cordoned.push(node.name.clone());
        }
        let zone = node.labels.get(ZONE_LABEL).cloned().unwrap_or_else(|| "-".to_string());
        *report.nodes.by_zone.entry(zone).or_insert(0) += 1;
        for t in &node.taints {
            let key = if t.value.is_empty() {
                format!("{}:{}", t.key, t.effect.as_str())
            } else {
                format!("{}={}:{}", t.key, t.value, t.effect.as_str())
            };
            *report.nodes.taints.entry(key).or_insert(0) += 1;
        }
        let it = node.labels.get(INSTANCE_TYPE_LABEL).cloned().unwrap_or_else(|| "-".to_string());
        let extended: BTreeMap<String, i64> = node
            .allocatable
            .scalar
            .iter()
            .filter(|(_, v)| **v != 0)
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        *shapes
            .entry((it, node.allocatable.milli_cpu, node.allocatable.memory, extended))
            .or_insert(0) += 1;
        report.pods.bound += node.pods.len();
    }
    report.nodes.shapes = shapes
        .into_iter()
        .map(|((instance_type, cpu_millis, memory_bytes, extended), count)| NodeShape {
            instance_type,
            cpu_millis,
            memory_bytes,
            extended,
            count,
        })
        .collect();

    report.pods.pending = pending.len();
    for pod in pending {
        pending_req.add(&pod.requests);
        pending_req.allowed_pod_number += 1;
        *report.pods.pending_by_priority.entry(pod.priority).or_insert(0) += 1;
        *report.pods.pending_by_scheduler.entry(pod.scheduler_name.clone()).or_insert(0) += 1;
    }
    report.pods.pending_classes = pending_classes;
    report.pods.ignored = ignored;
    report.gangs = gang_summaries(state, pending);

    let mut names: Vec<String> =
        [CPU, MEMORY, EPHEMERAL_STORAGE, PODS].iter().map(|s| (*s).to_string()).collect();
    for r in [&alloc, &requested, &pending_req] {
        for k in r.scalar.keys() {
            if !names.contains(k) {
                names.push(k.clone());
            }
        }
    }
    for name in names {
        let a = alloc.get(&name);
        let r = requested.get(&name);
        let p = pending_req.get(&name);
        if a == 0 && r == 0 && p == 0 {
            continue;
        }
        let ratio = |x: i64| if a > 0 { x as f64 / a as f64 } else { 0.0 };
        report.resources.insert(
            name,
            ResourceTotals {
                allocatable: a,
                requested: r,
                pending: p,
                utilization: ratio(r),
                utilization_if_all_placed: ratio(r + p),
            },
        );
    }
    report
}

/// Gang totals per convention, in the conventions' order.
fn gang_summaries(state: &ClusterState, pending: &[Pod]) -> Vec<GangSummary> {
    let index = GangIndex::new(state, pending);
    let mut by: BTreeMap<GangConvention, GangSummary> = BTreeMap::new();
    for g in &index.gangs {
        let s = by.entry(g.key.convention).or_insert_with(|| GangSummary {
            convention: g.key.convention.as_str().to_string(),
            ..GangSummary::default()
        });
        s.gangs += 1;
        s.pending_members += g.pending.len();
        s.bound_members += g.bound;
        s.min_member += i64::from(g.min_member);
        s.needed_from_pending += g.needed_from_pending();
        s.unsatisfiable += usize::from(!g.is_satisfiable());
    }
    by.into_values().collect()
}

/// Formats an amount of a resource for people: CPU as cores, memory/storage in GiB.
pub fn human_amount(resource: &str, amount: i64) -> String {
    match resource {
        CPU => format!("{:.2}", amount as f64 / 1000.0),
        MEMORY | EPHEMERAL_STORAGE => format!("{:.1}Gi", amount as f64 / (1u64 << 30) as f64),
        _ => amount.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::testing::{NodeBuilder, PodBuilder, cluster};

    #[test]
    fn gangs_are_summed_per_convention() {
        use GangConvention::{Coscheduling as C, Volcano as V};
        let m = |name: &str, c, group: &str, min| PodBuilder::new("ml", name).gang(c, group, min);
        let state = cluster(
            vec![NodeBuilder::new("n1").obj()],
            vec![m("a-old", C, "a", 3).node("n1").obj()],
        );
        let pending = vec![
            m("a0", C, "a", 3).obj(),
            m("a1", C, "a", 3).obj(),
            m("b0", C, "b", 4).obj(), // cannot reach 4
            m("v0", V, "v", 2).obj(),
            m("v1", V, "v", 2).obj(),
            PodBuilder::new("ml", "plain").obj(),
        ];
        let r = inspect(&state, &pending, IgnoredPods::default(), 1);
        let row = |c: &str, g, p, b, min, need, un| GangSummary {
            convention: c.to_string(),
            gangs: g,
            pending_members: p,
            bound_members: b,
            min_member: min,
            needed_from_pending: need,
            unsatisfiable: un,
        };
        assert_eq!(
            r.gangs,
            vec![row("coscheduling", 2, 3, 1, 7, 6, 1), row("volcano", 1, 2, 0, 2, 2, 0)]
        );
        let none = inspect(&state, &pending[5..], IgnoredPods::default(), 1);
        assert_eq!(none.gangs.len(), 1, "the bound member alone still forms its gang");
        assert!(inspect(&ClusterState::default(), &[], IgnoredPods::default(), 0).gangs.is_empty());
    }
}
