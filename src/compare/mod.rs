//! `kplace compare`: the sequential default scheduler (`baseline`) and the batch planner
//! (`plan`) on the same snapshot, side by side, measured the same way.
//!
//! Input: the cluster before the decisions ([`ClusterState`]), the pending pods, and the two
//! [`Plan`]s with the wall time each took. Output: a [`Comparison`], a stable serde document
//! (`kplace compare -o json`, [`SCHEMA_VERSION`]) plus the per-node figures the HTML report
//! ([`report`]) draws. `bench` ([`bench`]) repeats the same measurements on generated
//! clusters.
//!
//! No upstream counterpart: this is kplace's yardstick. Every figure is computed here from the
//! plan documents and the snapshot, never taken on trust from the solver:
//!
//! * **After-state.** Each plan is applied to a copy of the snapshot ([`apply_plan`]): its
//!   evictions removed, its placements added.
//! * **Placed / unschedulable / evictions**, per priority: counted from the plan document.
//! * **Nodes used**: nodes with at least one pod in the after-state.
//! * **Utilization** per resource ([`crate::plan::summarize`] on the after-state): per node
//!   `requested / allocatable` over nodes with allocatable > 0 (`pods`: pods on the node /
//!   allowed pods); the mean, the max, and the *balance*: the population standard deviation
//!   of those ratios.
//! * **Stranded capacity** per resource ([`stranded`]): free capacity that no pod of the batch
//!   could use. A node's free vector is `allocatable − requested` per resource (`pods`:
//!   allowed − present). The *reference shapes* are one fixed set for both plans: the distinct
//!   request vectors (cpu, memory, ephemeral-storage, one pod, extended resources) of every
//!   pending pod of the batch, whatever either plan did with them. A shape fits a node when
//!   every resource it requests (> 0) is at most the node's free amount (NodeResourcesFit's
//!   arithmetic; taints, affinity and other filters are ignored). A node where no reference
//!   shape fits contributes all of its free capacity to `stranded`, resource by resource; a
//!   node where one fits contributes nothing. So stranded capacity is the free capacity of the
//!   nodes too full for even the smallest pending shape, measured the same way for both
//!   plans. With no pending pods at all nothing is stranded.
//! * **Per workload** ([`workloads`]): placed and unplaced pods, requests placed, and the
//!   spread of each controlling owner's replicas (skew over zones and nodes, most per node).
//! * **Per workload across seeds** ([`seeds`], `--baseline-seeds N`): baseline breaks score
//!   ties at random, as kube-scheduler does, so it runs under N seeds, and each workload's
//!   skew under the plan is set against baseline's under the first seed, their median and
//!   every one.
//! * **Soft rules** ([`soft`]): spread constraints kept within `maxSkew`, preferred pod
//!   (anti-)affinity weight satisfied, and the profile's score of the final state.
//! * **Verdict** ([`verdict`]): better / worse / mixed on placed pods per priority, placed
//!   resources, starved workloads, spread and soft rules.
//! * **Violations**: [`crate::check::check`] on each plan (the independent validator, default
//!   profile). `kplace compare` exits with 3 when the *plan* has one; the baseline's are
//!   reported only (kube-scheduler, which it simulates, does not place gangs all or nothing).
//! * **Decision time**: `encode + evaluate + solve` of the plan's `summary.timings_ms` (the
//!   time from the built model to the plan; reading and building the model are measured once,
//!   outside both), and `pods/s` = pending pods / decision time.
//! * **Differences**: where each pending pod went under each plan, and per node how many of
//!   the batch's pods each plan put there.

pub mod bench;
pub mod report;
pub mod seeds;
pub mod soft;
pub mod upstream;
pub mod verdict;
pub mod workloads;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::check::{CheckReport, check};
use crate::framework::config::SchedulerConfig;
use crate::model::{ClusterState, Pod};
use crate::plan::{Plan, ResourceUtilization, summarize};
use crate::progress::Progress;
use crate::resources::{CPU, EPHEMERAL_STORAGE, MEMORY, PODS};

/// Version of the [`Comparison`] document; bumped when a field changes meaning or is removed
/// (adding fields does not bump it).
/// Version 2: `valid` is the plan's validity alone; stranded capacity is judged against every
/// pending pod's shape for both plans; `owners`, `verdict`, `soft_rules`, `strategy` added.
pub const SCHEMA_VERSION: u32 = 2;

/// At most this many pods are listed in [`Differences::pods`].
pub const MAX_LISTED_PODS: usize = 200;
/// At most this many nodes are listed in [`Differences::node_deltas`].
pub const MAX_LISTED_NODES: usize = 1000;
/// At most this many violations are listed per plan in [`Side::violation_list`].
pub const MAX_LISTED_VIOLATIONS: usize = 100;
/// At most this many workloads are listed in [`Comparison::owners`].
pub const MAX_LISTED_OWNERS: usize = 1000;

/// The whole comparison, as `kplace compare -o json` prints it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Comparison {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// What was compared.
    pub snapshot: SnapshotInfo,
    /// How the two plans were made.
    pub settings: Settings,
    /// The sequential default scheduler (`kplace baseline`).
    pub baseline: Side,
    /// The batch planner (`kplace plan`).
    pub plan: Side,
    /// Per workload (controlling owner), both plans, the workloads that differ most first, at
    /// most [`MAX_LISTED_OWNERS`].
    pub owners: Vec<workloads::OwnerRow>,
    /// How many workloads are not listed.
    pub owners_not_listed: usize,
    /// How many workloads (listed or not) are more skewed under the plan than under baseline,
    /// and how many of them beyond their own `maxSkew`.
    pub more_skewed: workloads::MoreSkewed,
    /// Better, worse or mixed, criterion by criterion.
    pub verdict: verdict::Verdict,
    /// Where the plans differ.
    pub differences: Differences,
    /// Whether the plan has no violation (the baseline's are reported in its side and the
    /// verdict, not here).
    pub valid: bool,
    /// With `--baseline-seeds N` (N > 1): the plan's per-workload spread against baseline's
    /// under N seeds ([`seeds`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline_seeds: Option<seeds::SeedComparison>,
    /// Per-node figures for the HTML report; not part of the JSON document.
    #[serde(skip)]
    pub nodes: NodeView,
}

/// The snapshot compared.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SnapshotInfo {
    /// The paths given on the command line.
    pub paths: Vec<String>,
    /// Number of nodes.
    pub nodes: usize,
    /// Pods already bound to nodes.
    pub bound_pods: usize,
    /// Pending pods (the batch both plans decide).
    pub pending_pods: usize,
    /// Milliseconds reading and parsing the files (once, shared by both plans).
    pub load_ms: f64,
    /// Milliseconds building the model (once, shared by both plans).
    pub build_ms: f64,
}

/// How the plans were made.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// `--solver` as given.
    pub solver: String,
    /// `--backend` as given (`auto`, `gpu`, `cpu`).
    pub backend: String,
    /// `--seed`, used by both.
    pub seed: u64,
    /// `--objective` (`resources` or `pods`; empty in documents older than the flag).
    pub objective: String,
    /// Whether `plan` may return the sequential plan when it ranks higher
    /// (`--ensure-baseline`).
    pub ensure_baseline: bool,
    /// `--config`, when given.
    pub config: Option<String>,
    /// `--victims-leave`: when `baseline`'s preemption victims leave their node
    /// (`after-queue` or `at-once`; empty with `--baseline-plan` and in documents older than
    /// the flag).
    pub victims_leave: String,
    /// `--baseline-plan`: the plan documents set against `plan` instead of `baseline`'s run
    /// (the first is the baseline side).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub baseline_plan: Vec<String>,
    /// Remarks on the settings (e.g. a flag accepted but not yet wired into `plan`).
    pub notes: Vec<String>,
}

/// Free capacity no reference shape can use, for one resource (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Stranded {
    /// Free amount over all nodes (`cpu` in millicores, others in base units).
    pub free: i64,
    /// The part of it on nodes where no reference shape fits.
    pub stranded: i64,
    /// `stranded / free` (0 when nothing is free).
    pub fraction_of_free: f64,
}

/// Which pods' shapes the stranded capacity is judged against.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StrandedReference {
    /// The pods the plan left unplaced (schema version 1 only).
    Unplaced,
    /// Every pending pod of the batch (the same shapes for both plans).
    Pending,
    /// No pending pods: nothing is stranded.
    #[default]
    None,
}

/// Wall time of one plan, in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SideTimings {
    /// `summary.timings_ms.encode` of the plan (encoding beyond the shared model build).
    pub encode: f64,
    /// `summary.timings_ms.evaluate`.
    pub evaluate: f64,
    /// `summary.timings_ms.solve`.
    pub solve: f64,
    /// `encode + evaluate + solve`: the decision time.
    pub decision: f64,
    /// Wall time of the whole call that made the plan (decision plus summaries).
    pub wall: f64,
    /// Wall time of `kplace check` on the plan.
    pub check: f64,
}

/// One violation found by `kplace check`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ViolationRow {
    /// The rule (`insufficient_resource`, …).
    pub kind: String,
    /// The pod concerned.
    pub pod: String,
    /// The node concerned, if any.
    pub node: Option<String>,
    /// What is wrong.
    pub message: String,
}

/// Everything measured about one plan.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Side {
    /// `summary.algorithm` (`baseline`, `greedy`, `greedy-sequential-fallback`, …).
    pub algorithm: String,
    /// `summary.backend` (`cpu` or the GPU adapter).
    pub backend: String,
    /// `summary.strategy`: how the plan was made (`sequential`, `greedy-largest-first`,
    /// `lp-guided`, `fallback-baseline`, …).
    pub strategy: String,
    /// `summary.repaired`: pods the batch plan's sequential repair step placed.
    pub repaired: usize,
    /// Pods placed.
    pub placed: usize,
    /// Pods placed, by priority.
    pub placed_by_priority: BTreeMap<i32, usize>,
    /// Pods left unschedulable.
    pub unschedulable: usize,
    /// Pods left unschedulable, by priority.
    pub unschedulable_by_priority: BTreeMap<i32, usize>,
    /// Running pods evicted.
    pub evictions: usize,
    /// Running pods evicted, by priority (empty without evictions).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub evicted_by_priority: BTreeMap<i32, usize>,
    /// CPU (millicores) the evicted pods requested.
    #[serde(skip_serializing_if = "is_zero")]
    pub evicted_cpu_m: i64,
    /// Memory (bytes) the evicted pods requested.
    #[serde(skip_serializing_if = "is_zero")]
    pub evicted_memory_bytes: i64,
    /// Nodes with at least one pod after the plan.
    pub nodes_used: usize,
    /// Per resource: allocatable, requested, mean, max and standard deviation (balance) of the
    /// per-node utilization after the plan.
    pub utilization: BTreeMap<String, ResourceUtilization>,
    /// Per resource: stranded capacity after the plan.
    pub stranded: BTreeMap<String, Stranded>,
    /// Nodes whose free capacity is stranded (no reference shape fits), with free capacity
    /// left in some resource other than `pods`.
    pub stranded_nodes: usize,
    /// Which shapes `stranded` is judged against.
    pub stranded_reference: StrandedReference,
    /// Number of distinct reference shapes (after dropping shapes that a smaller one covers).
    pub stranded_shapes: usize,
    /// Soft rules kept ([`soft`]).
    pub soft_rules: soft::SoftRules,
    /// Violations found by `kplace check`.
    pub violations: usize,
    /// Violations by kind.
    pub violations_by_kind: BTreeMap<String, usize>,
    /// The first [`MAX_LISTED_VIOLATIONS`] violations.
    pub violation_list: Vec<ViolationRow>,
    /// Time taken.
    pub timings_ms: SideTimings,
    /// Pending pods decided per second of decision time (0 when the time is 0).
    pub pods_per_second: f64,
}

/// Where one pod went under each plan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PodDifference {
    /// `namespace/name`.
    pub pod: String,
    /// Its priority.
    pub priority: i32,
    /// Its node under `baseline` (`None`: unplaced).
    pub baseline: Option<String>,
    /// Its node under `plan` (`None`: unplaced).
    pub plan: Option<String>,
}

/// How many of the batch's pods each plan put on one node.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct NodeDelta {
    /// Node name.
    pub node: String,
    /// Pods `baseline` placed there.
    pub baseline: usize,
    /// Pods `plan` placed there.
    pub plan: usize,
    /// `plan − baseline`.
    pub delta: i64,
}

/// Where the two plans differ.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Differences {
    /// Pending pods both plans put on the same node.
    pub same_node: usize,
    /// Pending pods both plans placed, on different nodes.
    pub different_node: usize,
    /// Pending pods only `baseline` placed.
    pub only_baseline: usize,
    /// Pending pods only `plan` placed.
    pub only_plan: usize,
    /// Pending pods neither placed.
    pub neither: usize,
    /// Pods placed differently (different node, or placed by one plan only), ordered by pod,
    /// at most [`MAX_LISTED_PODS`].
    pub pods: Vec<PodDifference>,
    /// How many such pods are not listed.
    pub pods_not_listed: usize,
    /// Nodes where the plans put a different number of the batch's pods.
    pub nodes_changed: usize,
    /// Those nodes, largest difference first (then by name), at most [`MAX_LISTED_NODES`].
    pub node_deltas: Vec<NodeDelta>,
    /// How many such nodes are not listed.
    pub node_deltas_not_listed: usize,
}

/// Per-node figures of both plans, for the report: node `i` of every vector is
/// `names[i]`; utilization is `None` where the node has no allocatable of that resource.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeView {
    /// Node names, sorted.
    pub names: Vec<String>,
    /// Resources charted: cpu, memory, pods, then every other resource some pod requests.
    pub resources: Vec<String>,
    /// `[resource][node]` utilization after `baseline`.
    pub baseline: Vec<Vec<Option<f64>>>,
    /// `[resource][node]` utilization after `plan`.
    pub plan: Vec<Vec<Option<f64>>>,
    /// Pods of the batch `baseline` placed on each node.
    pub baseline_placed: Vec<usize>,
    /// Pods of the batch `plan` placed on each node.
    pub plan_placed: Vec<usize>,
}

/// One plan to measure, with the wall time it took.
#[derive(Debug, Clone)]
pub struct Decided {
    /// The plan.
    pub plan: Plan,
    /// Wall time of the call that made it, in milliseconds.
    pub wall_ms: f64,
}

/// Where eviction `e` takes its pod from: the index of its node in `cluster` (`None` when the
/// node is unknown) and the pod's namespace and name.
fn victim_at<'e>(
    cluster: &ClusterState,
    e: &'e crate::plan::Eviction,
) -> Option<(usize, &'e str, &'e str)> {
    let (ns, name) = e.pod.split_once('/').unwrap_or(("", e.pod.as_str()));
    cluster.node_index(&e.node).map(|n| (n, ns, name))
}

/// Applies `plan` to a copy of `before`: evictions first, then placements (pending pods with
/// their node set). Entries naming unknown pods or nodes are skipped (`check` reports them).
pub fn apply_plan(before: &ClusterState, pending: &[Pod], plan: &Plan) -> ClusterState {
    let mut after = before.clone();
    for e in &plan.evictions {
        let Some((n, ns, name)) = victim_at(&after, e) else { continue };
        after.nodes[n].remove_pod(ns, name);
    }
    let by_key: BTreeMap<String, &Pod> = pending.iter().map(|p| (p.key(), p)).collect();
    for p in &plan.placements {
        let (Some(n), Some(pod)) = (after.node_index(&p.node), by_key.get(&p.pod)) else {
            continue;
        };
        let mut placed = (*pod).clone();
        placed.node_name = Some(p.node.clone());
        after.nodes[n].add_pod(Arc::new(placed));
    }
    after
}

/// The resource columns of stranded capacity: cpu, memory, ephemeral-storage, pods, then every
/// scalar resource a node offers or a pending pod requests, by name.
pub fn resource_columns(state: &ClusterState, pending: &[Pod]) -> Vec<String> {
    let mut extra = BTreeSet::new();
    for n in &state.nodes {
        extra.extend(n.allocatable.scalar.keys().cloned());
    }
    for p in pending {
        extra.extend(p.requests.scalar.iter().filter(|(_, v)| **v > 0).map(|(k, _)| k.clone()));
    }
    let mut out: Vec<String> =
        [CPU, MEMORY, EPHEMERAL_STORAGE, PODS].iter().map(|s| (*s).to_string()).collect();
    out.extend(extra);
    out
}

/// A pod's request vector over `columns` (`pods`: 1).
fn shape(pod: &Pod, columns: &[String]) -> Vec<i64> {
    columns.iter().map(|c| if c == PODS { 1 } else { pod.requests.get(c) }).collect()
}

/// The shapes no other shape of the set is component-wise at most (if a smaller shape does
/// not fit a node, neither does a larger one, so only these decide), sorted.
fn minimal_shapes(shapes: BTreeSet<Vec<i64>>) -> Vec<Vec<i64>> {
    let all: Vec<Vec<i64>> = shapes.into_iter().collect();
    all.iter()
        .filter(|s| !all.iter().any(|o| o != *s && o.iter().zip(s.iter()).all(|(a, b)| a <= b)))
        .cloned()
        .collect()
}

/// Stranded capacity of `after` against `shapes` (request vectors over `columns`), per column,
/// and the number of nodes with stranded free capacity. See the module docs.
pub fn stranded(
    after: &ClusterState,
    columns: &[String],
    shapes: &[Vec<i64>],
) -> (BTreeMap<String, Stranded>, usize) {
    let mut out: BTreeMap<String, Stranded> =
        columns.iter().map(|c| (c.clone(), Stranded::default())).collect();
    let mut nodes = 0;
    for node in &after.nodes {
        let free: Vec<i64> = columns
            .iter()
            .map(|c| {
                if c == PODS {
                    node.allocatable.allowed_pod_number - node.pods.len() as i64
                } else {
                    node.allocatable.get(c) - node.requested.get(c)
                }
            })
            .collect();
        let fits = |s: &Vec<i64>| s.iter().zip(&free).all(|(req, f)| *req <= 0 || req <= f);
        let stuck = !shapes.is_empty() && !shapes.iter().any(fits);
        let mut any_free = false;
        for (c, f) in columns.iter().zip(&free) {
            let f = (*f).max(0);
            if let Some(s) = out.get_mut(c) {
                s.free += f;
                if stuck {
                    s.stranded += f;
                    any_free |= f > 0 && c != PODS;
                }
            }
        }
        if any_free {
            nodes += 1;
        }
    }
    for s in out.values_mut() {
        s.fraction_of_free = if s.free > 0 { s.stranded as f64 / s.free as f64 } else { 0.0 };
    }
    // Columns nobody offers or asks for (e.g. ephemeral-storage on clusters that do not report
    // it) say nothing.
    out.retain(|_, s| s.free > 0 || s.stranded > 0);
    (out, nodes)
}

/// The reference shapes of stranded capacity: every pending pod's request vector over
/// `columns`, reduced to the minimal ones (the same set for both plans).
pub fn reference_shapes(pending: &[Pod], columns: &[String]) -> Vec<Vec<i64>> {
    minimal_shapes(pending.iter().map(|p| shape(p, columns)).collect())
}

fn is_zero(v: &i64) -> bool {
    *v == 0
}

/// The pods `plan` evicts, by priority, and the CPU (millicores) and memory (bytes) they
/// requested: the pods of `before` that [`apply_plan`] takes off their nodes (an eviction
/// naming no pod on its node counts nowhere).
fn evicted(before: &ClusterState, plan: &Plan) -> (BTreeMap<i32, usize>, i64, i64) {
    let mut by_priority = BTreeMap::new();
    let (mut cpu, mut memory) = (0i64, 0i64);
    for e in &plan.evictions {
        let on_node = victim_at(before, e).and_then(|(n, ns, name)| {
            before.nodes[n].pods.iter().find(|p| p.namespace == ns && p.name == name)
        });
        if let Some(pod) = on_node {
            *by_priority.entry(pod.priority).or_insert(0) += 1;
            cpu = cpu.saturating_add(pod.requests.milli_cpu);
            memory = memory.saturating_add(pod.requests.memory);
        }
    }
    (by_priority, cpu, memory)
}

/// Measures one plan: applies it, summarizes, computes stranded capacity and the soft rules,
/// and runs `check`. Returns the side and the after-state.
pub fn measure(
    before: &ClusterState,
    pending: &[Pod],
    decided: &Decided,
    config: &SchedulerConfig,
    progress: &Progress,
) -> (Side, ClusterState) {
    let plan = &decided.plan;
    let after = apply_plan(before, pending, plan);
    let summary = summarize(plan, &after, pending);
    let columns = resource_columns(before, pending);

    let reference =
        if pending.is_empty() { StrandedReference::None } else { StrandedReference::Pending };
    let shapes = reference_shapes(pending, &columns);
    let (stranded_by_resource, stranded_nodes) = stranded(&after, &columns, &shapes);

    let task = progress.spinner(format!("check: {} plan", summary_algorithm(plan)));
    let check_start = std::time::Instant::now();
    let report: CheckReport = check(before, pending, plan);
    let check_ms = check_start.elapsed().as_secs_f64() * 1000.0;
    task.finish();

    let task = progress.spinner(format!("soft rules: {} plan", summary_algorithm(plan)));
    let soft_rules = soft::soft_rules(&after, pending, plan, config);
    task.finish();

    let t = &plan.summary.timings_ms;
    let decision = t.encode + t.evaluate + t.solve;
    let (evicted_by_priority, evicted_cpu_m, evicted_memory_bytes) = evicted(before, plan);
    let side = Side {
        algorithm: plan.summary.algorithm.clone(),
        backend: plan.summary.backend.clone(),
        strategy: plan.summary.strategy.clone(),
        repaired: plan.summary.repaired,
        soft_rules,
        placed: summary.placed,
        placed_by_priority: summary.placed_by_priority,
        unschedulable: summary.unschedulable,
        unschedulable_by_priority: summary.unschedulable_by_priority,
        evictions: summary.evicted,
        evicted_by_priority,
        evicted_cpu_m,
        evicted_memory_bytes,
        nodes_used: summary.nodes_used,
        utilization: summary.utilization,
        stranded: stranded_by_resource,
        stranded_nodes,
        stranded_reference: reference,
        stranded_shapes: shapes.len(),
        violations: report.violations.len(),
        violations_by_kind: report
            .counts()
            .into_iter()
            .map(|(k, n)| (k.as_str().to_string(), n))
            .collect(),
        violation_list: report
            .violations
            .iter()
            .take(MAX_LISTED_VIOLATIONS)
            .map(|v| ViolationRow {
                kind: v.kind.as_str().to_string(),
                pod: v.pod.clone(),
                node: v.node.clone(),
                message: v.message.clone(),
            })
            .collect(),
        timings_ms: SideTimings {
            encode: t.encode,
            evaluate: t.evaluate,
            solve: t.solve,
            decision,
            wall: decided.wall_ms,
            check: check_ms,
        },
        pods_per_second: pods_per_second(pending.len(), decision),
    };
    (side, after)
}

fn summary_algorithm(plan: &Plan) -> &str {
    if plan.summary.algorithm.is_empty() { "the" } else { &plan.summary.algorithm }
}

/// `pods / (ms / 1000)`, or 0 when no time was measured.
pub fn pods_per_second(pods: usize, ms: f64) -> f64 {
    if ms > 0.0 { pods as f64 / (ms / 1000.0) } else { 0.0 }
}

/// Compares the two plans made for `pending` on `before` with `config`'s profiles. `snapshot`
/// and `settings` are copied into the document as given (the node and pod counts are filled
/// in here). `other_baselines`, baseline's plans under more seeds than `settings.seed` (with
/// their seeds), give [`Comparison::baseline_seeds`] when there are any.
#[allow(clippy::too_many_arguments)]
pub fn compare(
    before: &ClusterState,
    pending: &[Pod],
    baseline: &Decided,
    plan: &Decided,
    other_baselines: &[(u64, &Plan)],
    config: &SchedulerConfig,
    mut snapshot: SnapshotInfo,
    settings: Settings,
    progress: &Progress,
) -> Comparison {
    let (baseline_side, baseline_after) = measure(before, pending, baseline, config, progress);
    let (plan_side, plan_after) = measure(before, pending, plan, config, progress);
    let workloads = workloads::Workloads::new(before, pending);
    let baseline_sides = workloads.sides(&baseline.plan, &baseline_after);
    let plan_sides = workloads.sides(&plan.plan, &plan_after);
    let mut owners = workloads::rows(&workloads, &baseline_sides, &plan_sides);
    let more_skewed = workloads::MoreSkewed::of(&owners);
    let baseline_seeds = (!other_baselines.is_empty()).then(|| {
        // Plan documents (`--baseline-plan`) are numbered from 1; a baseline run has its seed.
        let documents = &settings.baseline_plan;
        let own = seeds::SeedRun {
            seed: if documents.is_empty() { settings.seed } else { 1 },
            placed: baseline.plan.placements.len(),
            sides: baseline_sides,
        };
        let others = other_baselines.iter().map(|&(seed, p)| seeds::SeedRun {
            seed,
            placed: p.placements.len(),
            sides: workloads.sides(p, &apply_plan(before, pending, p)),
        });
        let runs: Vec<seeds::SeedRun> = std::iter::once(own).chain(others).collect();
        seeds::SeedComparison {
            documents: documents.clone(),
            ..seeds::seed_comparison(&plan_sides, &runs)
        }
    });
    let verdict = verdict::verdict(&baseline_side, &plan_side, &owners);
    let owners_not_listed = owners.len().saturating_sub(MAX_LISTED_OWNERS);
    owners.truncate(MAX_LISTED_OWNERS);
    snapshot.nodes = before.nodes.len();
    snapshot.bound_pods = before.nodes.iter().map(|n| n.pods.len()).sum();
    snapshot.pending_pods = pending.len();
    let differences = differences(before, pending, &baseline.plan, &plan.plan);
    let nodes =
        node_view(before, pending, &baseline_after, &plan_after, &baseline.plan, &plan.plan);
    Comparison {
        schema_version: SCHEMA_VERSION,
        valid: plan_side.violations == 0,
        owners,
        owners_not_listed,
        more_skewed,
        verdict,
        snapshot,
        settings,
        baseline: baseline_side,
        plan: plan_side,
        differences,
        nodes,
        baseline_seeds,
    }
}

/// Pods of the batch each plan put on each node (indexed like `before.nodes`).
fn placed_per_node(before: &ClusterState, plan: &Plan) -> Vec<usize> {
    let mut out = vec![0; before.nodes.len()];
    for p in &plan.placements {
        if let Some(n) = before.node_index(&p.node) {
            out[n] += 1;
        }
    }
    out
}

/// Where the plans differ: per pod and per node.
pub fn differences(
    before: &ClusterState,
    pending: &[Pod],
    baseline: &Plan,
    plan: &Plan,
) -> Differences {
    fn nodes_of(p: &Plan) -> BTreeMap<&str, &str> {
        p.placements.iter().map(|x| (x.pod.as_str(), x.node.as_str())).collect()
    }
    let (a, b) = (nodes_of(baseline), nodes_of(plan));
    let mut d = Differences::default();
    let mut keyed: Vec<(String, i32)> = pending.iter().map(|p| (p.key(), p.priority)).collect();
    keyed.sort();
    for (key, priority) in &keyed {
        let (x, y) = (a.get(key.as_str()).copied(), b.get(key.as_str()).copied());
        match (x, y) {
            (Some(x), Some(y)) if x == y => {
                d.same_node += 1;
                continue;
            }
            (Some(_), Some(_)) => d.different_node += 1,
            (Some(_), None) => d.only_baseline += 1,
            (None, Some(_)) => d.only_plan += 1,
            (None, None) => {
                d.neither += 1;
                continue;
            }
        }
        if d.pods.len() < MAX_LISTED_PODS {
            d.pods.push(PodDifference {
                pod: key.clone(),
                priority: *priority,
                baseline: x.map(str::to_string),
                plan: y.map(str::to_string),
            });
        } else {
            d.pods_not_listed += 1;
        }
    }
    let (pa, pb) = (placed_per_node(before, baseline), placed_per_node(before, plan));
    let mut deltas: Vec<NodeDelta> = before
        .nodes
        .iter()
        .zip(pa.iter().zip(&pb))
        .filter(|(_, (x, y))| x != y)
        .map(|(n, (&x, &y))| NodeDelta {
            node: n.name.clone(),
            baseline: x,
            plan: y,
            delta: y as i64 - x as i64,
        })
        .collect();
    deltas.sort_by(|x, y| y.delta.abs().cmp(&x.delta.abs()).then_with(|| x.node.cmp(&y.node)));
    d.nodes_changed = deltas.len();
    d.node_deltas_not_listed = deltas.len().saturating_sub(MAX_LISTED_NODES);
    deltas.truncate(MAX_LISTED_NODES);
    d.node_deltas = deltas;
    d
}

/// Per-node utilization of a resource (`None` without allocatable).
fn utilization(after: &ClusterState, resource: &str) -> Vec<Option<f64>> {
    after
        .nodes
        .iter()
        .map(|n| {
            let alloc = n.allocatable.get(resource);
            let req =
                if resource == PODS { n.pods.len() as i64 } else { n.requested.get(resource) };
            (alloc > 0).then(|| req as f64 / alloc as f64)
        })
        .collect()
}

/// The per-node figures the report draws.
fn node_view(
    before: &ClusterState,
    pending: &[Pod],
    baseline_after: &ClusterState,
    plan_after: &ClusterState,
    baseline: &Plan,
    plan: &Plan,
) -> NodeView {
    let mut resources: Vec<String> = [CPU, MEMORY, PODS].iter().map(|s| (*s).to_string()).collect();
    let requested: BTreeSet<String> =
        pending
            .iter()
            .flat_map(|p| p.requests.names().into_iter().map(str::to_string))
            .chain(before.nodes.iter().flat_map(|n| {
                n.requested.names().into_iter().map(str::to_string).collect::<Vec<_>>()
            }))
            .collect();
    for r in requested {
        let offered = before.nodes.iter().any(|n| n.allocatable.get(&r) > 0);
        if !resources.contains(&r) && offered {
            resources.push(r);
        }
    }
    NodeView {
        names: before.nodes.iter().map(|n| n.name.clone()).collect(),
        baseline: resources.iter().map(|r| utilization(baseline_after, r)).collect(),
        plan: resources.iter().map(|r| utilization(plan_after, r)).collect(),
        resources,
        baseline_placed: placed_per_node(before, baseline),
        plan_placed: placed_per_node(before, plan),
    }
}

#[cfg(test)]
mod tests;
