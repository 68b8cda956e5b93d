//! Per-workload figures of a comparison: for every controlling owner of a pending pod (its
//! ReplicaSet, StatefulSet, Job, … from `metadata.ownerReferences[controller=true]`, or the
//! pod itself when it has none), what each plan did to its replicas.
//!
//! Input: the cluster before the plans, the pending pods, each plan and its after-state
//! ([`super::apply_plan`]). Output: [`OwnerRow`]s, both plans side by side, the rows that
//! differ most first.
//!
//! * `placed` / `unplaced`: the workload's pending pods the plan placed / did not place.
//! * `cpu_placed_m` / `memory_placed_bytes`: the requests of the pods it placed.
//! * `max_per_node`: the most pods of the workload (bound and placed) on one node after the plan.
//! * `skew` per topology key ([`SKEW_KEYS`]): `max − min` of the workload's pods per domain,
//!   over the domains *eligible* for it: the values of the key on nodes that carry it, match
//!   the workload's node selector and required node affinity (PodTopologySpread's
//!   `nodeAffinityPolicy: Honor`, the default) and whose `NoSchedule`/`NoExecute` taints it
//!   tolerates (`nodeTaintsPolicy: Honor`; upstream's default is `Ignore`, but a zone whose
//!   nodes the workload can never use is not an empty domain of its spread). Pods on other
//!   nodes do not count. The workload's scheduling terms are those of its first pending pod.
//!   No eligible domain: skew 0.
//! * `max_skew` per topology key: the least `maxSkew` of the workload's own topology spread
//!   constraints on that key (those of its first pending pod whose selector matches the pod),
//!   what the workload itself tolerates; none without such a constraint.
//!
//! No upstream counterpart (PodTopologySpread computes the same skew for one constraint).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::model::{ClusterState, Node, Pod};
use crate::plan::Plan;
use crate::plugins::node_affinity::required_node_affinity_matches;
use crate::plugins::taint_toleration::{find_matching_untolerated_taint, is_do_not_schedule_taint};
use crate::resources::{CPU, MEMORY};

/// The zone label.
pub const ZONE_LABEL: &str = "topology.kubernetes.io/zone";
/// The hostname label.
pub const HOSTNAME_LABEL: &str = "kubernetes.io/hostname";
/// The topology keys whose skew is reported per workload.
pub const SKEW_KEYS: [&str; 2] = [ZONE_LABEL, HOSTNAME_LABEL];

/// What one plan did to one workload.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct WorkloadSide {
    /// Pending pods of the workload placed.
    pub placed: usize,
    /// Pending pods of the workload not placed.
    pub unplaced: usize,
    /// CPU requested by the pods placed, in millicores.
    pub cpu_placed_m: i64,
    /// Memory requested by the pods placed, in bytes.
    pub memory_placed_bytes: i64,
    /// The most pods of the workload (bound and placed) on one node.
    pub max_per_node: usize,
    /// Per topology key: `max − min` pods of the workload per eligible domain.
    pub skew: BTreeMap<String, i64>,
}

/// One workload, both plans.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct OwnerRow {
    /// `Kind namespace/name` of the controlling owner (`Pod namespace/name` when bare).
    pub owner: String,
    /// Under `baseline`.
    pub baseline: WorkloadSide,
    /// Under `plan`.
    pub plan: WorkloadSide,
    /// Per topology key of [`SKEW_KEYS`]: the least `maxSkew` of the workload's own spread
    /// constraints on it (see the module docs); absent without one.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub max_skew: BTreeMap<String, i64>,
}

/// The workloads more skewed under the plan than under baseline.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct MoreSkewed {
    /// Zone or node skew above baseline's ([`OwnerRow::more_skewed`]).
    pub workloads: usize,
    /// Of them, those above their own `maxSkew` too, or with no constraint of their own on a
    /// key whose skew rose ([`OwnerRow::more_skewed_beyond_max_skew`]).
    pub beyond_max_skew: usize,
}

impl MoreSkewed {
    /// Counted over `rows`.
    pub fn of(rows: &[OwnerRow]) -> MoreSkewed {
        MoreSkewed {
            workloads: rows.iter().filter(|r| r.more_skewed()).count(),
            beyond_max_skew: rows.iter().filter(|r| r.more_skewed_beyond_max_skew()).count(),
        }
    }
}

impl OwnerRow {
    /// The keys of [`SKEW_KEYS`] on which the workload is more skewed under the plan.
    fn keys_more_skewed(&self) -> impl Iterator<Item = (&'static str, i64)> + '_ {
        SKEW_KEYS.iter().filter_map(|&k| {
            let plan = self.plan.skew.get(k).copied().unwrap_or(0);
            (plan > self.baseline.skew.get(k).copied().unwrap_or(0)).then_some((k, plan))
        })
    }

    /// Whether the zone or node skew is above baseline's.
    pub fn more_skewed(&self) -> bool {
        self.keys_more_skewed().next().is_some()
    }

    /// Whether a skew above baseline's is also above the workload's own `maxSkew` on that key,
    /// or the workload has no constraint of its own there.
    pub fn more_skewed_beyond_max_skew(&self) -> bool {
        self.keys_more_skewed().any(|(k, skew)| self.max_skew.get(k).is_none_or(|&m| skew > m))
    }

    /// How much the two plans differ on this workload: `|Δplaced| + |Δmax_per_node| +
    /// Σ |Δskew|`.
    pub fn difference(&self) -> i64 {
        let (a, b) = (&self.baseline, &self.plan);
        let skew: i64 = SKEW_KEYS
            .iter()
            .map(|k| {
                (a.skew.get(*k).copied().unwrap_or(0) - b.skew.get(*k).copied().unwrap_or(0)).abs()
            })
            .sum();
        (a.placed as i64 - b.placed as i64).abs()
            + (a.max_per_node as i64 - b.max_per_node as i64).abs()
            + skew
    }
}

/// The workload a pod belongs to: `Kind namespace/name` of its controlling owner, or
/// `Pod namespace/name`.
pub fn owner_of(pod: &Pod) -> String {
    match &pod.owner {
        Some(o) => format!("{} {}/{}", o.kind, pod.namespace, o.name),
        None => format!("Pod {}/{}", pod.namespace, pod.name),
    }
}

/// Whether `node` is an eligible spread domain member for pods scheduled like `pod` (see the
/// module docs).
pub fn eligible(pod: &Pod, node: &Node) -> bool {
    required_node_affinity_matches(pod, node)
        && find_matching_untolerated_taint(&node.taints, &pod.tolerations, is_do_not_schedule_taint)
            .is_none()
}

/// The nodes eligible for a workload and, per [`SKEW_KEYS`] key, the domains they form.
#[derive(Debug)]
struct Eligibility {
    nodes: Vec<bool>,
    domains: Vec<BTreeSet<String>>,
}

impl Eligibility {
    fn of(rep: &Pod, state: &ClusterState) -> Eligibility {
        let nodes: Vec<bool> = state.nodes.iter().map(|n| eligible(rep, n)).collect();
        let domains = SKEW_KEYS
            .iter()
            .map(|key| {
                state
                    .nodes
                    .iter()
                    .zip(&nodes)
                    .filter(|(_, e)| **e)
                    .filter_map(|(n, _)| n.labels.get(*key).cloned())
                    .collect()
            })
            .collect();
        Eligibility { nodes, domains }
    }
}

/// A workload's side under one plan. `nodes` are the node indices of the workload's pods in
/// the after-state.
fn side_of(
    after: &ClusterState,
    members: &[&Pod],
    placed_on: &BTreeMap<&str, &str>,
    nodes: &[usize],
    eligibility: &Eligibility,
) -> WorkloadSide {
    let mut s = WorkloadSide::default();
    for p in members {
        if placed_on.contains_key(p.key().as_str()) {
            s.placed += 1;
            s.cpu_placed_m += p.requests.get(CPU);
            s.memory_placed_bytes += p.requests.get(MEMORY);
        } else {
            s.unplaced += 1;
        }
    }
    let mut per_node: BTreeMap<usize, usize> = BTreeMap::new();
    for &n in nodes {
        *per_node.entry(n).or_default() += 1;
    }
    s.max_per_node = per_node.values().copied().max().unwrap_or(0);
    for (k, key) in SKEW_KEYS.iter().enumerate() {
        // Pods per eligible domain that has some; the others have none.
        let mut counts: BTreeMap<&str, i64> = BTreeMap::new();
        for (&n, &c) in &per_node {
            if !eligibility.nodes[n] {
                continue;
            }
            if let Some(v) = after.nodes[n].labels.get(*key) {
                *counts.entry(v.as_str()).or_default() += c as i64;
            }
        }
        let all = &eligibility.domains[k];
        let max = counts.values().copied().max().unwrap_or(0);
        let min =
            if counts.len() < all.len() { 0 } else { counts.values().copied().min().unwrap_or(0) };
        s.skew.insert((*key).to_string(), if all.is_empty() { 0 } else { max - min });
    }
    s
}

/// Node indices of each workload's pods in `after` (only the workloads in `wanted`).
fn pods_by_owner<T>(
    after: &ClusterState,
    wanted: &BTreeMap<String, T>,
) -> BTreeMap<String, Vec<usize>> {
    let mut out: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (n, node) in after.nodes.iter().enumerate() {
        for p in &node.pods {
            let owner = owner_of(p);
            if wanted.contains_key(&owner) {
                out.entry(owner).or_default().push(n);
            }
        }
    }
    out
}

/// Per [`SKEW_KEYS`] key, the least `maxSkew` of `pod`'s topology spread constraints on it
/// whose selector matches the pod itself.
fn own_max_skew(pod: &Pod) -> BTreeMap<String, i64> {
    let mut out: BTreeMap<String, i64> = BTreeMap::new();
    for c in &pod.topology_spread_constraints {
        if SKEW_KEYS.contains(&c.topology_key.as_str())
            && c.label_selector.as_ref().is_some_and(|s| s.matches(&pod.labels))
        {
            let m = i64::from(c.max_skew);
            out.entry(c.topology_key.clone()).and_modify(|v| *v = (*v).min(m)).or_insert(m);
        }
    }
    out
}

/// The workloads of a batch, what every plan's figures are measured against: each
/// workload's pending pods and its eligible nodes and domains, worked out once.
#[derive(Debug)]
pub struct Workloads<'a> {
    /// Per workload, its pending pods and the index of its eligibility in `eligibility`.
    members: BTreeMap<String, (Vec<&'a Pod>, usize)>,
    eligibility: Vec<Eligibility>,
}

impl<'a> Workloads<'a> {
    /// The workloads of `pending` on `before`.
    pub fn new(before: &ClusterState, pending: &'a [Pod]) -> Self {
        let mut pods: BTreeMap<String, Vec<&Pod>> = BTreeMap::new();
        for p in pending {
            pods.entry(owner_of(p)).or_default().push(p);
        }
        // Eligibility depends only on the pod's node selector, affinity and tolerations:
        // computed once per distinct set of them.
        let mut by_signature: BTreeMap<String, usize> = BTreeMap::new();
        let mut eligibility = Vec::new();
        let members = pods
            .into_iter()
            .map(|(owner, pods)| {
                let rep = pods[0];
                let signature = format!(
                    "{:?}|{:?}|{:?}",
                    rep.node_selector, rep.node_affinity.required, rep.tolerations
                );
                let e = *by_signature.entry(signature).or_insert_with(|| {
                    eligibility.push(Eligibility::of(rep, before));
                    eligibility.len() - 1
                });
                (owner, (pods, e))
            })
            .collect();
        Workloads { members, eligibility }
    }

    /// Every workload's side under `plan`, whose after-state is `after`, by owner.
    pub fn sides(&self, plan: &Plan, after: &ClusterState) -> BTreeMap<String, WorkloadSide> {
        let placed_on: BTreeMap<&str, &str> =
            plan.placements.iter().map(|x| (x.pod.as_str(), x.node.as_str())).collect();
        let nodes = pods_by_owner(after, &self.members);
        let empty = Vec::new();
        self.members
            .iter()
            .map(|(owner, (pods, e))| {
                let on = nodes.get(owner).unwrap_or(&empty);
                (owner.clone(), side_of(after, pods, &placed_on, on, &self.eligibility[*e]))
            })
            .collect()
    }
}

/// The per-workload rows of two plans' sides ([`Workloads::sides`]), the rows that differ
/// most ([`OwnerRow::difference`]) first, then by owner.
pub fn rows(
    workloads: &Workloads<'_>,
    baseline: &BTreeMap<String, WorkloadSide>,
    plan: &BTreeMap<String, WorkloadSide>,
) -> Vec<OwnerRow> {
    let mut rows: Vec<OwnerRow> = baseline
        .iter()
        .map(|(owner, side)| OwnerRow {
            owner: owner.clone(),
            baseline: side.clone(),
            plan: plan.get(owner).cloned().unwrap_or_default(),
            max_skew: workloads
                .members
                .get(owner)
                .and_then(|(pods, _)| pods.first())
                .map(|p| own_max_skew(p))
                .unwrap_or_default(),
        })
        .collect();
    rows.sort_by(|x, y| y.difference().cmp(&x.difference()).then_with(|| x.owner.cmp(&y.owner)));
    rows
}
