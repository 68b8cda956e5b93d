//! The plan document: what `baseline`, `plan` and `rebalance` produce and what `bind` consumes.
//!
//! Input: decisions of a scheduler run; output: a stable JSON/YAML document
//! (`placements`, `evictions`, `unschedulable`, `summary`). Every pending pod appears exactly once
//! in `placements` or `unschedulable`; `placements` are in scheduling order.
//!
//! A rebalancing plan (`kplace rebalance`) adds `moves` — running pods to evict so that their
//! controllers' replacements land on other nodes, in ordered waves — and `summary.rebalance`.
//! Both are left out of the document when empty, so the documents of the other commands are
//! unchanged.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A pod placed on a node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    /// `namespace/name`.
    pub pod: String,
    /// Node name.
    pub node: String,
}

/// A running pod evicted to make room for a preemptor.
///
/// Read leniently, as other tools write it: a bare `"namespace/name"` string, or an object
/// without `node` or `preemptor`; what is missing is left empty (unknown). Always written whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Eviction {
    /// `namespace/name` of the victim.
    pub pod: String,
    /// The node it runs on (empty when the plan did not say).
    pub node: String,
    /// `namespace/name` of the pod it makes room for (empty when the plan did not say).
    pub preemptor: String,
}

impl<'de> Deserialize<'de> for Eviction {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Whole {
            pod: String,
            #[serde(default)]
            node: String,
            #[serde(default)]
            preemptor: String,
        }
        struct Lenient;
        impl<'de> serde::de::Visitor<'de> for Lenient {
            type Value = Eviction;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an eviction: {pod, node, preemptor} or a \"namespace/name\" string")
            }
            fn visit_str<E: serde::de::Error>(self, pod: &str) -> Result<Eviction, E> {
                Ok(Eviction { pod: pod.to_string(), node: String::new(), preemptor: String::new() })
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Eviction, A::Error> {
                let w = Whole::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(Eviction { pod: w.pod, node: w.node, preemptor: w.preemptor })
            }
        }
        d.deserialize_any(Lenient)
    }
}

/// A running pod moved to another node by a rebalancing plan: it is evicted in its wave and its
/// controller's replacement goes to `to`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Move {
    /// `namespace/name` of the running pod.
    pub pod: String,
    /// The node it runs on.
    pub from: String,
    /// The node its replacement should run on.
    pub to: String,
    /// The wave (1, 2, …): every move of a wave is carried out, and its replacement running,
    /// before the next wave starts.
    pub wave: u32,
    /// Why the pod moves (for `fix`: the descheduler strategy that selects it).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
}

/// A pending pod that could not be placed, with kube-scheduler's FitError message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unschedulable {
    /// `namespace/name`.
    pub pod: String,
    /// The message, byte for byte as kube-scheduler words it
    /// (`0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu.`);
    /// read as empty when a plan from another tool leaves it out.
    #[serde(default)]
    pub message: String,
    /// Reason → number of nodes that gave it (read as none when left out).
    #[serde(default)]
    pub reasons: BTreeMap<String, usize>,
}

/// Wall-clock time per stage, in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Timings {
    /// Reading and parsing the snapshot.
    pub load: f64,
    /// Converting the objects into the cluster model (kube-scheduler's cache snapshot).
    pub build: f64,
    /// Encoding: pod equivalence classes and the solver's arrays (`plan`); copying the model
    /// (`baseline`). With `evaluate` and `solve`, the decision time.
    pub encode: f64,
    /// Filtering and scoring.
    pub evaluate: f64,
    /// Assignment (and preemption).
    pub solve: f64,
}

/// Utilization of one resource over the nodes, after the plan.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ResourceUtilization {
    /// Sum of allocatable over all nodes.
    pub allocatable: i64,
    /// Sum of requests of pods on nodes (bound and placed).
    pub requested: i64,
    /// Mean per-node utilization (requested / allocatable), 0–1, over nodes with allocatable > 0.
    pub mean: f64,
    /// Highest per-node utilization.
    pub max: f64,
    /// Population standard deviation of per-node utilization.
    pub stddev: f64,
}

/// Totals of a plan.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Summary {
    /// Number of placements.
    pub placed: usize,
    /// Number of unschedulable pods.
    pub unschedulable: usize,
    /// Number of evictions.
    pub evicted: usize,
    /// Placed pods by priority.
    pub placed_by_priority: BTreeMap<i32, usize>,
    /// Unschedulable pods by priority.
    pub unschedulable_by_priority: BTreeMap<i32, usize>,
    /// Nodes with at least one pod after the plan.
    pub nodes_used: usize,
    /// Utilization per resource after the plan (`cpu` in millicores, others in base units).
    pub utilization: BTreeMap<String, ResourceUtilization>,
    /// Time per stage.
    pub timings_ms: Timings,
    /// The evaluation backend used (`cpu` or the GPU adapter's name).
    pub backend: String,
    /// The algorithm that produced the plan (`baseline`, `greedy`, `lp`, …).
    pub algorithm: String,
    /// How the plan was actually made: `sequential` (`kplace baseline`); for `kplace plan` the
    /// strategy each priority tier kept (`greedy-largest-first`, `greedy-smallest-first`,
    /// `lp-guided`, `greedy-queue`, several joined by `+`), `sequential-path` (no pod for the
    /// greedy) or `fallback-baseline` (with `--ensure-baseline`: the sequential plan ranked
    /// higher and was returned);
    /// `rebalance-<objective>` for `kplace rebalance`.
    pub strategy: String,
    /// Pods the batch plan's repair step (the exact sequential path with preemption, for the
    /// pods the greedy and batch preemption left over) placed; 0 for other plans.
    pub repaired: usize,
    /// Before/after figures of a rebalancing plan (absent for other plans).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rebalance: Option<RebalanceSummary>,
    /// What `baseline --follow` found (absent for other plans).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub follow: Option<crate::baseline::follow::FollowReport>,
    /// What was evaluated other than by the class × node matrices in their base units (absent
    /// when nothing was).
    #[serde(skip_serializing_if = "Degraded::is_empty")]
    pub degraded: Degraded,
}

/// Objects outside the range of the matrices' encoding, and how the plan dealt with them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Degraded {
    /// Resources encoded in a coarser unit than their base unit (amounts rounded
    /// conservatively: never a false fit; scores may differ from the framework's by rounding).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub wider_units: Vec<WiderUnit>,
    /// Pods whose class the matrices cannot evaluate; they were planned on the exact path
    /// (the framework, one pod at a time, as `kplace baseline` does).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exact_path: Vec<ExactPath>,
}

impl Degraded {
    /// Whether nothing was degraded.
    pub fn is_empty(&self) -> bool {
        self.wider_units.is_empty() && self.exact_path.is_empty()
    }
}

/// A resource encoded in a wider unit.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct WiderUnit {
    /// The resource name.
    pub resource: String,
    /// The unit used (e.g. `2 MiB`).
    pub unit: String,
    /// The objects whose amounts do not fit the base unit (`node/NAME`, `pod/NS/NAME`).
    pub objects: Vec<String>,
}

/// Pods planned on the exact path because their class is outside the matrices' range.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ExactPath {
    /// `namespace/name` of the pods.
    pub pods: Vec<String>,
    /// Why the matrices could not evaluate them.
    pub reason: String,
}

/// A PodDisruptionBudget as a rebalancing plan used it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct BudgetUse {
    /// `namespace/name` of the budget.
    pub pdb: String,
    /// Disruptions it allows at the start of every wave.
    pub allowed: i32,
    /// `computed` (from `minAvailable`/`maxUnavailable` and the matching pods, as the disruption
    /// controller computes it) or `status` (its `status.disruptionsAllowed`, when the snapshot
    /// lacks what the computation needs).
    pub source: String,
    /// Moves of pods it selects, over all waves.
    pub moves: usize,
    /// The most moves of its pods in one wave.
    pub max_per_wave: usize,
}

/// A pod a rebalancing plan wanted to move but could not.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Unmoved {
    /// `namespace/name`.
    pub pod: String,
    /// The node it stays on.
    pub node: String,
    /// Why it stays.
    pub reason: String,
}

/// Before/after figures of a rebalancing plan (`kplace rebalance`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RebalanceSummary {
    /// `pack`, `balance` or `fix`.
    pub objective: String,
    /// Number of moves.
    pub moves: usize,
    /// Number of waves.
    pub waves: usize,
    /// The move limit (`--max-moves`): `null` when there is none; 0 allows no move, as the
    /// flag.
    #[serde(default)]
    pub max_moves: Option<usize>,
    /// Nodes running at least one pod that is not a node daemon (DaemonSet, mirror or static
    /// pod), before the moves.
    pub nodes_in_use_before: usize,
    /// The same after the moves.
    pub nodes_in_use_after: usize,
    /// Nodes in use before and not after (only node daemons are left on them).
    pub nodes_freed: Vec<String>,
    /// Nodes in use after and not before, so that
    /// `nodes_in_use_before − freed + newly used = nodes_in_use_after` (`pack` never adds one).
    pub nodes_newly_used: Vec<String>,
    /// Population standard deviation of per-node utilization per resource, before.
    pub node_stddev_before: BTreeMap<String, f64>,
    /// The same after.
    pub node_stddev_after: BTreeMap<String, f64>,
    /// Population standard deviation of per-zone utilization (`topology.kubernetes.io/zone`)
    /// per resource, before.
    pub zone_stddev_before: BTreeMap<String, f64>,
    /// The same after.
    pub zone_stddev_after: BTreeMap<String, f64>,
    /// Pods that descheduler's RemovePodsViolating* strategies select, per strategy, before.
    pub violations_before: BTreeMap<String, usize>,
    /// The same after.
    pub violations_after: BTreeMap<String, usize>,
    /// Violating pods moved to a node where they are valid.
    pub violations_fixed: usize,
    /// Pods the objective wanted to move but could not (for `fix`: the unfixable ones).
    pub unmoved: Vec<Unmoved>,
    /// Running pods that may not move, by reason.
    pub unmovable: BTreeMap<String, usize>,
    /// The budgets that select moved pods.
    pub budgets: Vec<BudgetUse>,
    /// Whether `kplace check` finds every wave valid (evictions, then placements).
    pub check_valid: bool,
    /// Its violations, by kind, when not.
    pub check_violations: BTreeMap<String, usize>,
}

/// A complete plan.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Plan {
    /// Placements in scheduling order.
    pub placements: Vec<Placement>,
    /// Evictions (preemption victims).
    pub evictions: Vec<Eviction>,
    /// Pods that could not be placed.
    pub unschedulable: Vec<Unschedulable>,
    /// Moves of running pods (rebalancing plans only; left out when empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub moves: Vec<Move>,
    /// Totals.
    pub summary: Summary,
}

/// Computes the summary of `plan`, given the cluster *after* the plan was applied and the
/// pending pods it was made for. Timings, backend and algorithm are left for the caller.
pub fn summarize(
    plan: &Plan,
    after: &crate::model::ClusterState,
    pending: &[crate::model::Pod],
) -> Summary {
    use crate::resources::{CPU, EPHEMERAL_STORAGE, MEMORY, PODS};

    let priority: BTreeMap<String, i32> = pending.iter().map(|p| (p.key(), p.priority)).collect();
    let mut s = Summary {
        placed: plan.placements.len(),
        unschedulable: plan.unschedulable.len(),
        evicted: plan.evictions.len(),
        ..Default::default()
    };
    for p in &plan.placements {
        *s.placed_by_priority.entry(priority.get(&p.pod).copied().unwrap_or(0)).or_insert(0) += 1;
    }
    for u in &plan.unschedulable {
        *s.unschedulable_by_priority
            .entry(priority.get(&u.pod).copied().unwrap_or(0))
            .or_insert(0) += 1;
    }
    s.nodes_used = after.nodes.iter().filter(|n| !n.pods.is_empty()).count();

    let mut names: Vec<String> =
        [CPU, MEMORY, EPHEMERAL_STORAGE, PODS].iter().map(|n| (*n).to_string()).collect();
    for n in &after.nodes {
        for k in n.allocatable.scalar.keys() {
            if !names.contains(k) {
                names.push(k.clone());
            }
        }
    }
    for name in names {
        let mut u = ResourceUtilization::default();
        let mut ratios = Vec::new();
        for n in &after.nodes {
            let alloc = n.allocatable.get(&name);
            let req = if name == PODS { n.pods.len() as i64 } else { n.requested.get(&name) };
            u.allocatable += alloc;
            u.requested += req;
            if alloc > 0 {
                ratios.push(req as f64 / alloc as f64);
            }
        }
        if u.allocatable == 0 && u.requested == 0 {
            continue;
        }
        if !ratios.is_empty() {
            let len = ratios.len() as f64;
            u.mean = ratios.iter().sum::<f64>() / len;
            u.max = ratios.iter().copied().fold(0.0, f64::max);
            u.stddev = (ratios.iter().map(|r| (r - u.mean).powi(2)).sum::<f64>() / len).sqrt();
        }
        s.utilization.insert(name, u);
    }
    s
}
