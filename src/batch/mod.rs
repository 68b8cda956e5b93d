//! `kplace plan`: the whole pending batch placed at once by the greedy solver (guided by the
//! LP stage when a tier does not fit), with a batch preemption pass and the exact sequential
//! path as repair for what the matrices cannot express.
//!
//! Input: the cluster model, the pending pods, the scheduler configuration and [`BatchOptions`].
//! Output: a [`Plan`] that `kplace check` finds valid. Placements are listed in the order they
//! were decided (tier by tier: sequential pods, greedy pods, preemptors, repaired pods), which
//! is the order in which they are valid one after the other.
//!
//! 1. **Classes.** The pending pods are grouped by [`classify`] (pods with the same scheduling
//!    signature get the same filter verdicts and scores). Every class goes to the *greedy*
//!    (a class the matrices cannot evaluate goes to the exact path, below). Required
//!    anti-affinity and
//!    host ports stay in the greedy as *conflicts* between classes ([`add_conflicts`]): two
//!    classes whose pods may not share a topology domain (either class's anti-affinity term
//!    selects the other's pods, with the term's topology key; conflicting host ports, per
//!    node). PodTopologySpread becomes the solver's inter-pod rules ([`inter_pod`]):
//!    `DoNotSchedule` constraints (explicit or defaulted by the profile) hard rules, checked
//!    on counts kept exact as pods land (the class's matrix is evaluated without that filter),
//!    and `ScheduleAnyway` constraints with the profile's system default constraints soft
//!    terms updated per placement, which replace the tier-start PodTopologySpread score.
//!    Required pod affinity is a hard rule too (the first pod of a self-affine group goes
//!    anywhere); the rest of InterPodAffinity's filter for such a class is evaluated per node
//!    against the bound pods. A
//!    greedy class is also *movable* when it has no conflicts, no `DoNotSchedule` constraint
//!    and no required pod affinity, and no other pending pod has a required pod (anti-)affinity term or
//!    `DoNotSchedule` spread constraint whose selector matches its labels: no decision on
//!    counts can depend on where its pods are.
//!
//! Then, one priority tier at a time (highest first, as the PrioritySort queue):
//!
//! 2. **Sequential pods first.** The tier's sequential pods, in queue order, go through the
//!    exact sequential path
//!    ([`Baseline::schedule_one`](crate::baseline::scheduler::Baseline::schedule_one): filter
//!    until the profile's sample of feasible nodes is found — `percentageOfNodesToScore`, every
//!    node up to 100 — and score those, as kube-scheduler does) with preemption switched off:
//!    the most constrained pods get the room first. Those that fit nowhere are tried again in
//!    step 6. (Scoring every feasible node instead cost 20× kube-scheduler's time per pod at
//!    50,000 nodes, where the sample is 5%.)
//! 3. **Matrices.** The greedy classes of the tier — and the movable classes whose pods an
//!    earlier tier placed — are evaluated as a class × node matrix ([`crate::eval`], on the
//!    [`Evaluator`] the caller chose: CPU or GPU, bit-identical) on the current cluster, with
//!    the profile *without NodeResourcesFit's filter*: a cell's feasibility is everything but
//!    capacity, which the solver tracks itself, exactly as NodeResourcesFit checks it; its total
//!    is the profile's score over those feasible nodes (without PodTopologySpread's score for
//!    the classes whose soft spread terms the solver keeps; only the lean form of the matrix,
//!    [`crate::eval::LeanMatrix`], is built). Each total is split into a static part
//!    (plugins whose score does not depend on the node's usage, or is normalized over the nodes)
//!    and the resource part (NodeResourcesFit and NodeResourcesBalancedAllocation, which do not
//!    normalize).
//! 4. **Greedy** ([`kplace_solver::solve_greedy`]) with the nodes' free capacity per resource
//!    (cpu, memory, ephemeral-storage, pods and every extended resource a class requests and
//!    NodeResourcesFit does not ignore) and the conflicts, then relocation: a pod left over
//!    gets room by moving one pod of another class — placed by this tier, or a movable pod of
//!    an earlier tier — to a node that can take it; last, each workload's `ScheduleAnyway`
//!    spread is evened out by moving pods the tier placed (the same pods stay placed). When a node receives a pod the real pod is
//!    added to the cluster, and the resource part of the scores on that node is re-evaluated
//!    through evaluation's incremental entry point ([`crate::eval::columns::cell_cpu`]: the
//!    node's usage re-encoded once per change, then only the cells the greedy asks for, so a
//!    placement costs the classes still placing, not a column of every class; [`Rescore`]).
//!    [`SolverChoice`] picks the strategies: largest first (packs
//!    best when the tier fits); when it leaves pods over, `auto` also tries the queue order
//!    (`greedy-queue`, kube-scheduler's PrioritySort order, when the tier's pods × nodes are
//!    not huge), smallest first (places the most pods when the tier does not fit) and the
//!    LP-guided greedy ([`kplace_solver::lp_guide`]: quotas per class × node group from a
//!    tier-lexicographic LP on the same objective, followed first), each from a copy of the
//!    state, and keeps the best by [`BatchOptions::objective`] ([`kplace_solver::objective`]:
//!    by default the tier's placed requests, each pod weighted by its dominant share of the
//!    cluster, among the results that cover the queue order's — no fewer pods, no less of any
//!    resource, no class it serves left out; `pods` counts pods; then queue order, then
//!    score). `--time-limit` ([`BatchOptions::deadline`]) stops trying further strategies.
//! 5. **Batch preemption** ([`kplace_solver::solve_preemption`]): the greedy classes' pods
//!    still unplaced (without conflicts, when the profile runs DefaultPreemption) free room in
//!    one pass over the whole tier, with upstream's victim selection and node ranking and the
//!    PodDisruptionBudgets' budgets shared across the batch; each eviction names its preemptor.
//! 6. **Repair.** The pods still unplaced go, in queue order, through the sequential path
//!    again, now with DefaultPreemption. Pods that still fit nowhere get kube-scheduler's
//!    FitError message from that run; a pod whose class already failed on the same cluster
//!    state reuses its class's message (and in step 2 is not tried again).
//!
//! **Gangs** ([`plan_greedy_with_progress`]): a pod group is placed all or nothing; a group
//! partly placed is taken out and the rest planned again.
//!
//! Finally, **`--ensure-baseline`** ([`BatchOptions::ensure_baseline`], off by default): the
//! batch plan and the sequential scheduler can each win on an instance (an early choice of the
//! greedy, such as the zone of an anti-affine pod, can shut out a later pod that the queue
//! order happened to place). With it, when the batch plan leaves a pod unplaced or evicts one,
//! the sequential plan (`kplace baseline` with the same seed) is computed too and returned
//! instead when it ranks higher by the objective, with `summary.algorithm` set to
//! [`FALLBACK_ALGORITHM`] and `summary.strategy` to [`FALLBACK_STRATEGY`]; a plan that places
//! every pod without evictions cannot be outranked, and costs no sequential run. Without it
//! `plan` never enters the sequential scheduler except through the counted repair.
//!
//! Why the plan is valid: a greedy pod's feasibility apart from capacity, conflicts and
//! `DoNotSchedule` spread cannot change during its tier's greedy (no inter-pod rule of its own
//! other than anti-affinity and spread; anti-affinity of every pod already on a node is in the
//! Filter run at the greedy's start; anti-affinity between the greedy's own pods, either way,
//! is a conflict the solver enforces; spread is a rule the solver checks on exact counts of
//! bound and placed pods), and the solver tracks capacity exactly. Pods that a spread rule
//! counts are never moved, and batch preemption skips classes with spread rules. Capacity is judged on the final state, so moving a
//! pod keeps every earlier placement valid; moving a pod of an earlier tier is restricted to
//! movable classes, whose position no later decision depended on. Sequential pods see every
//! earlier placement. Preemption only evicts bound pods: pods placed earlier in the run have a
//! priority at least as high as any later preemptor, and victims must have a strictly lower
//! one.
//!
//! Approximations: preferred pod (anti-)affinity toward the pods the solve places is counted
//! per placement, toward bound pods scored once per tier (normalized), and the placed pods'
//! own preferred terms toward later classes are not counted. The
//! soft spread terms count pods without upstream's normalization over the feasible nodes
//! ([`inter_pod`]). NodeResourcesFit's score comes from the matrix, in encoded
//! units: where an amount is not a whole number of units (see [`crate::eval`]) it can differ by
//! rounding from the framework's, which changes a preference, never feasibility (the solver
//! tracks capacity in exact amounts).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Instant;

mod applier;
mod inter_pod;
mod objective;
mod problem;
mod run;

use applier::{Applier, ResourcePlanes};
use problem::{
    SolverRow, add_conflicts, free_capacity, resource_names, solver_requests, solver_row,
};
use run::{GreedyPod, Run};

pub use kplace_solver::Objective;
use kplace_solver::{
    ClassOrder, ClassSpec, Conflict, GreedyOptions, LpOptions, Placed, PreemptProblem,
    PreemptorSpec, Problem, Rank, Rescore, Strategy, VictimSpec, lp_guide, solve_greedy,
    solve_preemption,
};

use crate::baseline::scheduler::{
    Baseline, BaselineOptions, CycleResult, NO_NODES_AVAILABLE, queue_order,
    run_baseline_with_progress,
};
use crate::encode::classes::classify;
use crate::encode::{EncodeError, Encoded};
use crate::eval::columns::{self, NodeUsage};
use crate::eval::prep::STRATEGY_LEAST_ALLOCATED;
use crate::eval::{CELL_FEASIBLE, EvalError, Evaluator, LeanMatrix, Prepared};
use crate::framework::MAX_NODE_SCORE;
use crate::framework::config::SchedulerConfig;
use crate::framework::profile::PluginName;
use crate::framework::runtime::{Framework, FrameworkError, PreFilterOutcome};
use crate::model::gang::{GangIndex, GangKey};
use crate::model::{ClusterState, Labels, Pod, UnsatisfiableAction};
use crate::plan::{Degraded, Eviction, ExactPath, Placement, Plan, Unschedulable, WiderUnit};
use crate::plugins::interpodaffinity::AffinityTerm;
use crate::plugins::node_ports::fits_ports;
use crate::plugins::podtopologyspread::PodTopologySpread;
use crate::progress::Progress;
use crate::resources::{
    CPU, EPHEMERAL_STORAGE, MEMORY, PODS, is_extended_resource_name, is_scalar_resource_name,
};

/// The most cells of one matrix evaluation in a tier (classes are evaluated in chunks below it).
const EVAL_CHUNK_CELLS: usize = 1 << 24;

/// The normalized planes the greedy reads from a tier's matrix: the usage-dependent ones
/// ([`is_resource_score`]).
const KEPT_PLANES: [PluginName; 2] =
    [PluginName::NodeResourcesFit, PluginName::NodeResourcesBalancedAllocation];

/// The queue-order strategy runs only when the tier's pods × nodes are at most this: it is a
/// floor for the objective, not worth a fourth greedy pass on the largest batches.
const QUEUE_ORDER_CELLS: usize = 1 << 28;

/// An [`Applier::fit_start`] that marks a cell whose usage-dependent raw scores are not known
/// ([`problem::solver_row`]): the cell keeps the matrix's score.
const NO_RAW: u8 = u8::MAX;

#[cfg(test)]
thread_local! {
    /// Tests: whether [`Applier`] gives the greedy its bounds and rows (off: every changed
    /// node is rescored alone, as without [`Rescore::bound`] and [`Rescore::rescore_row`]).
    static BOUNDS: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// The hostname label (`kubernetes.io/hostname`).
pub const HOSTNAME_LABEL: &str = "kubernetes.io/hostname";

/// The zone label: the zone-level key of owner-spreading tie-breaks (`batch/inter_pod.rs`).
pub const ZONE_LABEL: &str = "topology.kubernetes.io/zone";

/// Which assignment stages a batch run uses for its greedy classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SolverChoice {
    /// The greedy: largest first, then smallest first when a tier does not fit.
    Greedy,
    /// The LP stage: the greedy follows the LP's quotas (then places what is left).
    Lp,
    /// The greedy; when a tier does not fit, also smallest first and the LP-guided greedy,
    /// keeping the best (within the time limit).
    #[default]
    Auto,
}

impl SolverChoice {
    /// The name used on the command line and in `summary.algorithm`.
    pub fn as_str(self) -> &'static str {
        match self {
            SolverChoice::Greedy => "greedy",
            SolverChoice::Lp => "lp",
            SolverChoice::Auto => "auto",
        }
    }
}

/// Options of a batch run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchOptions {
    /// The assignment stages to use.
    pub solver: SolverChoice,
    /// What a tier's strategies are judged by ([`kplace_solver::objective`]): placed requested
    /// resources by dominant share (the default) or placed pods; queue order breaks ties.
    pub objective: Objective,
    /// Past this instant, optional work is skipped: further strategies, the LP, the
    /// `--ensure-baseline` run. The first greedy pass and the repair always run.
    pub deadline: Option<Instant>,
    /// Class order within a priority tier for the greedy.
    pub class_order: ClassOrder,
    /// Let the greedy move pods it placed to make room for pods left over.
    pub relocate: bool,
    /// Let the greedy even out each workload's replicas per zone and node at the end, by
    /// moving or swapping pods it placed (`kplace_solver`'s `GreedyOptions::even_spread`).
    pub even_spread: bool,
    /// Run the batch preemption pass ([`kplace_solver::solve_preemption`]) for the pods the
    /// greedy leaves over, before the sequential repair (when the profile enables
    /// DefaultPreemption).
    pub batch_preemption: bool,
    /// When a tier's greedy leaves pods over, also try smallest-first and queue class orders
    /// and keep the best result by the objective.
    pub try_orders: bool,
    /// Also run the whole sequential scheduler (as `kplace baseline` with the same seed) and
    /// return its plan when it ranks higher by the objective ([`plan_rank`] for pods, per
    /// tier placed value for resources): the plan is then never worse than the default
    /// scheduler's by that measure, at the cost of one sequential run. Off by default
    /// (`--ensure-baseline`). It runs only when the batch plan leaves a pod unplaced or evicts
    /// one: a plan that places every pending pod without evictions cannot be outranked.
    pub ensure_baseline: bool,
    /// Seed of the sequential path (tie-breaking and preemption's random offset).
    pub seed: u64,
    /// The simulation clock (Unix seconds) for preemption, as in [`BaselineOptions::now`].
    pub now: i64,
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions {
            solver: SolverChoice::Auto,
            objective: Objective::Resources,
            deadline: None,
            class_order: ClassOrder::LargestFirst,
            relocate: true,
            even_spread: true,
            batch_preemption: true,
            try_orders: true,
            ensure_baseline: false,
            seed: 0,
            now: 0,
        }
    }
}

/// Why a batch plan could not be made (never because pods do not fit: that is an outcome).
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// A profile's plugins could not be built from its arguments.
    #[error(transparent)]
    Framework(#[from] FrameworkError),
    /// The pending pods could not be classed.
    #[error(transparent)]
    Encode(#[from] EncodeError),
    /// Matrix evaluation failed (a GPU error, or a profile the matrices cannot take).
    #[error("evaluation: {0}")]
    Eval(#[from] EvalError),
    /// The solver rejected its input (an internal error).
    #[error("internal error: {0}")]
    Solver(#[from] kplace_solver::SolverError),
}

/// How a class is placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    /// By the greedy solver (its required anti-affinity and host ports become conflicts, its
    /// spread constraints and required pod affinity inter-pod rules).
    Greedy,
    /// By the exact sequential path (a class the matrices cannot evaluate).
    Sequential,
}

/// A class of pending pods.
#[derive(Debug, Clone)]
struct Class {
    /// Pending indices, in queue order.
    members: Vec<usize>,
    priority: i32,
    route: Route,
    /// Whether pods of this class placed by an earlier tier's greedy may be moved by a later
    /// tier's relocation: no other pending pod has a required pod (anti-)affinity term or a
    /// `DoNotSchedule` spread constraint whose selector matches the class's labels, so no
    /// sequential decision depended on where they are.
    movable: bool,
    /// Whether the solver enforces `DoNotSchedule` spread constraints or required pod affinity
    /// of the class (its pods are never moved, and batch preemption, which does not model
    /// them, skips them).
    hard_rules: bool,
}

/// The frameworks of one scheduler name: the full profile; the profile without preemption; and
/// the profile without NodeResourcesFit's filter (feasibility apart from capacity, which the
/// solver tracks itself; the greedy's matrices evaluate it).
#[derive(Debug)]
struct Frameworks {
    full: Framework,
    no_preemption: Framework,
    no_fit: Framework,
    /// `no_fit` without PodTopologySpread's filter (index bit 0) and without InterPodAffinity's
    /// (bit 1): the matrices of classes whose `DoNotSchedule` constraints or required pod
    /// affinity the solver enforces ([`inter_pod`]).
    matrix: Vec<Framework>,
}

/// Whether a score plugin's score depends on the node's usage and is not normalized over nodes.
fn is_resource_score(p: PluginName) -> bool {
    matches!(p, PluginName::NodeResourcesFit | PluginName::NodeResourcesBalancedAllocation)
}

impl Frameworks {
    fn new(config: &SchedulerConfig, scheduler_name: &str) -> Result<Self, FrameworkError> {
        let full = Framework::for_scheduler(config, scheduler_name)?;
        let mut profile = full.profile().clone();
        profile.plugins.post_filter.retain(|p| *p != PluginName::DefaultPreemption);
        let no_preemption = Framework::new(&profile)?;
        let mut profile = full.profile().clone();
        profile.plugins.filter.retain(|p| *p != PluginName::NodeResourcesFit);
        profile.plugins.pre_filter.retain(|p| *p != PluginName::NodeResourcesFit);
        let no_fit = Framework::new(&profile)?;
        let mut matrix = Vec::with_capacity(8);
        for variant in 0..8 {
            let mut p = profile.clone();
            for (bit, plugin) in
                [(1, PluginName::PodTopologySpread), (2, PluginName::InterPodAffinity)]
            {
                if variant & bit != 0 {
                    p.plugins.filter.retain(|x| *x != plugin);
                    p.plugins.pre_filter.retain(|x| *x != plugin);
                }
            }
            if variant & 4 != 0 {
                p.plugins.score.retain(|(x, _)| *x != PluginName::PodTopologySpread);
                p.plugins.pre_score.retain(|x| *x != PluginName::PodTopologySpread);
            }
            matrix.push(Framework::new(&p)?);
        }
        Ok(Frameworks { full, no_preemption, no_fit, matrix })
    }

    /// The framework of a class's matrix: without PodTopologySpread's filter when the solver
    /// enforces the class's `DoNotSchedule` constraints, without InterPodAffinity's when it
    /// enforces its required pod affinity, without PodTopologySpread's score when the solver's
    /// soft terms replace it ([`Frameworks::variant`]).
    fn matrix_framework(&self, variant: usize) -> &Framework {
        &self.matrix[variant]
    }

    /// Which of [`Frameworks::matrix`] evaluates `rep`'s class; `placing`: the solve places
    /// the class (its PodTopologySpread score is then the solver's soft terms,
    /// [`inter_pod::add_spread`], and the matrix does not compute it, nor its PreScore counts).
    /// A class the solve only may relocate keeps the matrix's score.
    fn variant(&self, rep: &Pod, placing: bool) -> usize {
        usize::from(inter_pod::has_hard_spread(rep, self))
            | usize::from(inter_pod::has_required_affinity(rep, self)) << 1
            | usize::from(placing && inter_pod::has_soft_spread(rep, self)) << 2
    }
}

/// The batch solver's plan for `pending` on `cluster`. See the module documentation.
pub fn plan_greedy(
    cluster: ClusterState,
    pending: &[Pod],
    config: &SchedulerConfig,
    options: &BatchOptions,
) -> Result<Plan, BatchError> {
    plan_greedy_with_progress(cluster, pending, config, options, &Progress::hidden())
}

/// [`plan_greedy`], reporting each pending pod as a step of a `progress` bar once it is placed
/// or finally decided (and the `--ensure-baseline` run as a bar of its own).
///
/// Gangs ([`GangIndex`]): a group is placed all or nothing. The batch is planned; every group
/// with some but too few pending members placed (fewer than `minMember` less its members
/// already bound and not evicted) is taken out of the batch, and the rest is planned again,
/// until no group is partly placed. A group that could never reach `minMember` is out from the
/// start. The pods of groups taken out are unschedulable with a message naming the group.
pub fn plan_greedy_with_progress(
    cluster: ClusterState,
    pending: &[Pod],
    config: &SchedulerConfig,
    options: &BatchOptions,
    progress: &Progress,
) -> Result<Plan, BatchError> {
    plan_greedy_on(cluster, pending, config, options, progress, &mut Evaluator::Cpu)
}

/// [`plan_greedy_with_progress`] with the greedy's matrices (and their incremental updates)
/// evaluated by `evaluator`: the CPU or a GPU. Both give the same plan (the evaluators agree
/// bit for bit); `summary.backend` names the one used.
pub fn plan_greedy_on(
    cluster: ClusterState,
    pending: &[Pod],
    config: &SchedulerConfig,
    options: &BatchOptions,
    progress: &Progress,
    evaluator: &mut Evaluator,
) -> Result<Plan, BatchError> {
    let gangs = GangIndex::new(&cluster, pending);
    if gangs.is_empty() {
        return plan_once(cluster, pending, config, options, progress, evaluator);
    }
    let started = Instant::now();
    // (gang index, pending members placed when it was taken out).
    let mut out: BTreeMap<usize, usize> = gangs
        .gangs
        .iter()
        .enumerate()
        .filter(|(_, g)| !g.is_satisfiable())
        .map(|(i, _)| (i, 0))
        .collect();
    loop {
        let keep: Vec<usize> = (0..pending.len())
            .filter(|&i| gangs.of_pending[i].is_none_or(|g| !out.contains_key(&g)))
            .collect();
        let subset: Vec<Pod> = keep.iter().map(|&i| pending[i].clone()).collect();
        let mut plan = plan_once(cluster.clone(), &subset, config, options, progress, evaluator)?;
        let placed: BTreeSet<&str> = plan.placements.iter().map(|p| p.pod.as_str()).collect();
        let evicted: BTreeSet<&str> = plan.evictions.iter().map(|e| e.pod.as_str()).collect();
        // Bound members this plan evicts no longer count toward their group.
        let mut lost: BTreeMap<GangKey, usize> = BTreeMap::new();
        if !evicted.is_empty() {
            for pod in cluster.nodes.iter().flat_map(|node| &node.pods) {
                if let Some(key) = pod.gang_key()
                    && evicted.contains(pod.key().as_str())
                {
                    *lost.entry(key).or_default() += 1;
                }
            }
        }
        let mut partial = Vec::new();
        for (g, gang) in gangs.gangs.iter().enumerate() {
            if out.contains_key(&g) {
                continue;
            }
            let n = gang
                .pending
                .iter()
                .filter(|&&i| placed.contains(pending[i].key().as_str()))
                .count();
            let needed = gang.needed_from_pending() + lost.get(&gang.key).copied().unwrap_or(0);
            if n > 0 && n < needed {
                partial.push((g, n));
            }
        }
        if partial.is_empty() {
            for (&g, &n) in &out {
                let gang = &gangs.gangs[g];
                let message = gang_message(gang, n);
                for &i in &gang.pending {
                    plan.unschedulable.push(Unschedulable {
                        pod: pending[i].key(),
                        message: message.clone(),
                        reasons: BTreeMap::new(),
                    });
                }
            }
            let timings = plan.summary.timings_ms.clone();
            let (algorithm, backend, degraded) = (
                plan.summary.algorithm.clone(),
                plan.summary.backend.clone(),
                plan.summary.degraded.clone(),
            );
            let (strategy, repaired) = (plan.summary.strategy.clone(), plan.summary.repaired);
            let after = crate::compare::apply_plan(&cluster, pending, &plan);
            plan.summary = crate::plan::summarize(&plan, &after, pending);
            plan.summary.timings_ms = timings;
            plan.summary.timings_ms.solve = (started.elapsed().as_secs_f64() * 1000.0
                - plan.summary.timings_ms.evaluate
                - plan.summary.timings_ms.encode)
                .max(0.0);
            plan.summary.algorithm = algorithm;
            plan.summary.backend = backend;
            plan.summary.degraded = degraded;
            plan.summary.strategy = strategy;
            plan.summary.repaired = repaired;
            return Ok(plan);
        }
        out.extend(partial);
    }
}

/// The message of a pending pod whose group was not placed: how many of its pods could be
/// placed against how many `minMember` needs.
fn gang_message(gang: &crate::model::gang::Gang, placed: usize) -> String {
    format!(
        "pod group {}: {} of the {} pending pods minMember {} needs could be placed \
         ({} already bound); the group is placed all or nothing",
        gang.key,
        placed,
        gang.needed_from_pending(),
        gang.min_member,
        gang.bound
    )
}

/// One batch plan of `pending` (gangs not considered).
fn plan_once(
    cluster: ClusterState,
    pending: &[Pod],
    config: &SchedulerConfig,
    options: &BatchOptions,
    progress: &Progress,
    evaluator: &mut Evaluator,
) -> Result<Plan, BatchError> {
    let started = Instant::now();
    let original = options.ensure_baseline.then(|| cluster.clone());
    let order = queue_order(pending);
    let mut position = vec![0usize; pending.len()];
    for (i, &p) in order.iter().enumerate() {
        position[p] = i;
    }

    let encode_start = Instant::now();
    let pod_classes = classify(pending)?;
    let mut frameworks: BTreeMap<String, Frameworks> = BTreeMap::new();
    for class in &pod_classes.classes {
        let name = &pending[class.representative].scheduler_name;
        if !frameworks.contains_key(name) {
            frameworks.insert(name.clone(), Frameworks::new(config, name)?);
        }
    }
    let mut classes: Vec<Class> = Vec::with_capacity(pod_classes.len());
    for class in &pod_classes.classes {
        let mut members = class.members.clone();
        members.sort_by_key(|&m| position[m]);
        let rep = &pending[class.representative];
        let hard_rules = frameworks[&rep.scheduler_name].variant(rep, false) != 0;
        classes.push(Class {
            members,
            priority: rep.priority,
            route: Route::Greedy,
            movable: false,
            hard_rules,
        });
    }
    mark_movable(&mut classes, &pod_classes, pending, &frameworks);
    // Classes in order of their first pod in the queue; tiers by priority, highest first.
    let mut class_ids: Vec<usize> = (0..classes.len()).collect();
    class_ids.sort_by_key(|&c| classes[c].members.first().map_or(usize::MAX, |&m| position[m]));
    let mut tiers: BTreeMap<std::cmp::Reverse<i32>, Vec<usize>> = BTreeMap::new();
    for c in class_ids {
        tiers.entry(std::cmp::Reverse(classes[c].priority)).or_default().push(c);
    }
    let encode_ms = encode_start.elapsed().as_secs_f64() * 1000.0;

    let mut run = Run {
        sched: Baseline::new(
            cluster,
            BaselineOptions {
                seed: options.seed,
                score_all_nodes: false,
                now: options.now,
                immediate_preemption: true,
                ..Default::default()
            },
        ),
        plan: Plan::default(),
        greedy_pods: Vec::new(),
        by_class: BTreeMap::new(),
        shared: vec![None; pending.len()],
        version: 0,
        failures: BTreeMap::new(),
        first_pass_failures: BTreeMap::new(),
        evaluate_ms: 0.0,
        now: options.now,
        widened: BTreeMap::new(),
        exact_path: Vec::new(),
        strategies: Vec::new(),
        repaired: 0,
    };
    // Each pending pod is one step, counted when it is placed or finally decided.
    let task = progress.bar("plan: pods", pending.len() as u64);
    for tier in tiers.values() {
        // 1. Sequential pods first (the most constrained), without preemption.
        let mut sequential: Vec<(usize, usize)> = Vec::new(); // (class, pending index)
        for &c in tier {
            if classes[c].route == Route::Sequential {
                sequential.extend(classes[c].members.iter().map(|&m| (c, m)));
            }
        }
        sequential.sort_by_key(|&(_, m)| position[m]);
        let mut rest = Vec::new();
        for (c, m) in sequential {
            let fw = &frameworks[&pending[m].scheduler_name].no_preemption;
            if run.try_place(fw, c, &pending[m]) {
                task.inc(1);
            } else {
                rest.push((c, m));
            }
        }
        // 2. The greedy over the simple classes. A class the matrices cannot evaluate (an
        // amount or weight outside their range) goes to the exact path instead.
        let leftovers = loop {
            let out = run.greedy_tier(tier, &classes, pending, &frameworks, options, evaluator)?;
            let e = match out {
                Ok(leftovers) => break leftovers,
                Err(e) => e,
            };
            let greedy: Vec<usize> =
                tier.iter().copied().filter(|&c| classes[c].route == Route::Greedy).collect();
            let bad = run.out_of_range(&greedy, &classes, pending, &frameworks, evaluator)?;
            if bad.is_empty() {
                return Err(e);
            }
            for (c, reason) in bad {
                tracing::warn!(
                    "{} pods planned on the exact path: {reason}",
                    classes[c].members.len()
                );
                classes[c].route = Route::Sequential;
                classes[c].movable = false;
                let mut members = classes[c].members.clone();
                members.sort_by_key(|&m| position[m]);
                run.exact_path.push(ExactPath {
                    pods: members.iter().map(|&m| pending[m].key()).collect(),
                    reason,
                });
                for m in members {
                    let fw = &frameworks[&pending[m].scheduler_name].no_preemption;
                    if run.try_place(fw, c, &pending[m]) {
                        task.inc(1);
                    } else {
                        rest.push((c, m));
                    }
                }
            }
        };
        let greedy_pods: usize = tier
            .iter()
            .filter(|&&c| classes[c].route == Route::Greedy)
            .map(|&c| classes[c].members.len())
            .sum();
        task.inc(greedy_pods.saturating_sub(leftovers.len()) as u64);
        rest.extend(leftovers);
        // 3. One victim-minimizing preemption pass for the greedy classes' leftovers.
        if options.batch_preemption {
            let before = rest.len();
            rest = run.batch_preempt(rest, &classes, pending, &frameworks)?;
            task.inc(before.saturating_sub(rest.len()) as u64);
        }
        // 4. Everything left, in queue order, with DefaultPreemption and FitError messages.
        rest.sort_by_key(|&(_, m)| position[m]);
        for (c, m) in rest {
            let fw = &frameworks[&pending[m].scheduler_name].full;
            run.schedule_sequential(fw, c, &pending[m]);
            task.inc(1);
        }
    }
    task.finish();

    let total_ms = started.elapsed().as_secs_f64() * 1000.0;
    let mut plan = std::mem::take(&mut run.plan);
    plan.summary = crate::plan::summarize(&plan, &run.sched.cluster, pending);
    plan.summary.timings_ms.encode = encode_ms;
    plan.summary.timings_ms.evaluate = run.evaluate_ms;
    plan.summary.timings_ms.solve = (total_ms - run.evaluate_ms - encode_ms).max(0.0);
    plan.summary.algorithm = options.solver.as_str().to_string();
    plan.summary.backend = evaluator.describe();
    plan.summary.degraded = run_degraded(run.widened, run.exact_path);
    plan.summary.strategy = strategy_name(&run.strategies);
    plan.summary.repaired = run.repaired;
    // The working cluster (every node with every pod placed on it) is freed on another thread:
    // at 100,000 nodes and pods, dropping it here took a fifth of the plan phase.
    let (sched, greedy_pods) = (run.sched, run.greedy_pods);
    std::thread::spawn(move || drop((sched, greedy_pods, pod_classes, classes)));

    // The sequential plan can only rank higher when this one left a pod out or evicted one.
    let improvable = !plan.unschedulable.is_empty() || !plan.evictions.is_empty();
    let in_time = options.deadline.is_none_or(|d| Instant::now() < d);
    if let Some(original) = original.filter(|_| improvable && in_time) {
        let seq_start = Instant::now();
        let seq_options = BaselineOptions {
            seed: options.seed,
            now: options.now,
            immediate_preemption: true,
            ..Default::default()
        };
        let values = (options.objective == Objective::Resources)
            .then(|| objective::pod_values(&original, pending, &frameworks));
        let mut sequential =
            run_baseline_with_progress(original, pending, config, seq_options, progress)?;
        let better = match &values {
            Some(values) => {
                objective::value_rank(&sequential, values) > objective::value_rank(&plan, values)
            }
            None => plan_rank(&sequential) > plan_rank(&plan),
        };
        if better {
            tracing::info!(
                greedy = plan.placements.len(),
                sequential = sequential.placements.len(),
                "the sequential scheduler's plan ranks higher than the batch plan: using it"
            );
            sequential.summary.timings_ms.encode = plan.summary.timings_ms.encode;
            sequential.summary.timings_ms.evaluate = plan.summary.timings_ms.evaluate;
            sequential.summary.timings_ms.solve =
                plan.summary.timings_ms.solve + seq_start.elapsed().as_secs_f64() * 1000.0;
            sequential.summary.algorithm = FALLBACK_ALGORITHM.to_string();
            sequential.summary.backend = plan.summary.backend.clone();
            sequential.summary.degraded = plan.summary.degraded.clone();
            sequential.summary.strategy = FALLBACK_STRATEGY.to_string();
            sequential.summary.repaired = 0;
            return Ok(sequential);
        }
        plan.summary.timings_ms.solve += seq_start.elapsed().as_secs_f64() * 1000.0;
    }
    Ok(plan)
}

/// `summary.algorithm` of a plan that comes from the sequential scheduler (`--ensure-baseline`).
pub const FALLBACK_ALGORITHM: &str = "greedy-sequential-fallback";

/// Each pending pod's position in PrioritySort's queue ([`queue_order`]).
fn queue_positions(pending: &[Pod]) -> Vec<usize> {
    let mut position = vec![0usize; pending.len()];
    for (at, i) in queue_order(pending).into_iter().enumerate() {
        position[i] = at;
    }
    position
}

/// The pods of the first `n` solver classes.
fn tier_pods_of(members: &[&[usize]], n: usize) -> usize {
    members.iter().take(n).map(|m| m.len()).sum()
}

/// Whether `e` is a limit of the class × node matrices (an amount, weight or count outside
/// their integer range, or more resource columns than they name) rather than a failure: the
/// classes concerned are planned on the exact path instead.
fn matrix_limit(e: &BatchError) -> bool {
    matches!(
        e,
        BatchError::Encode(_)
            | BatchError::Eval(
                EvalError::Encode(_)
                    | EvalError::WeightsTooLarge { .. }
                    | EvalError::TooManyResources { .. }
            )
    )
}

/// `Ok(Err(e))` for a matrix limit (see [`Run::greedy_tier`]), else `Err(e)`.
#[allow(clippy::type_complexity)]
fn limit_or_fatal(e: BatchError) -> Result<Result<Vec<(usize, usize)>, BatchError>, BatchError> {
    if matrix_limit(&e) { Ok(Err(e)) } else { Err(e) }
}

/// The resources `enc` encodes in a unit wider than their base unit, each with its shift, the
/// unit's name and the objects whose amounts do not fit the base unit (`node/NAME`,
/// `pod/NS/NAME` for the pods of `pods`).
fn widened_units(
    enc: &Encoded,
    cluster: &ClusterState,
    pods: &[Pod],
) -> Vec<(String, u32, String, BTreeSet<String>)> {
    use crate::encode::units::{Rounding, encode_amount, encode_request_sum};
    let mut out = Vec::new();
    for unit in &enc.dicts.resources.units {
        let base = crate::encode::units::ResourceUnit::base(&unit.name).shift;
        if unit.shift <= base {
            continue;
        }
        let name = unit.name.as_str();
        let mut objects = BTreeSet::new();
        for node in &cluster.nodes {
            let alloc = encode_amount(node.allocatable.get(name), base, Rounding::Down);
            let used = encode_request_sum(node.pods.iter().map(|p| p.requests.get(name)), base);
            if alloc.is_err() || used.is_err() {
                objects.insert(format!("node/{}", node.name));
            }
        }
        for pod in pods {
            if encode_amount(pod.requests.get(name), base, Rounding::Up).is_err() {
                objects.insert(format!("pod/{}", pod.key()));
            }
        }
        out.push((unit.name.clone(), unit.shift, unit.unit_name(), objects));
    }
    out
}

/// The `summary.degraded` of a batch run.
fn run_degraded(
    widened: BTreeMap<String, (u32, String, BTreeSet<String>)>,
    exact_path: Vec<ExactPath>,
) -> Degraded {
    Degraded {
        wider_units: widened
            .into_iter()
            .map(|(resource, (_, unit, objects))| WiderUnit {
                resource,
                unit,
                objects: objects.into_iter().collect(),
            })
            .collect(),
        exact_path,
    }
}

/// `summary.strategy` of a plan that comes from the sequential scheduler (`--ensure-baseline`).
pub const FALLBACK_STRATEGY: &str = "fallback-baseline";

/// `summary.strategy` of a batch plan whose tiers had no greedy classes (every pod went
/// through the exact sequential path, in queue order).
pub const SEQUENTIAL_PATH_STRATEGY: &str = "sequential-path";

/// `summary.strategy` of a batch plan: the strategy whose result each tier kept
/// ([`Strategy::name`]), distinct names in the order of the first tier that kept them, joined
/// by `+` (`greedy-largest-first`, `greedy-largest-first+lp-guided`, …);
/// [`SEQUENTIAL_PATH_STRATEGY`] when no tier ran the greedy.
fn strategy_name(kept: &[&'static str]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for name in kept {
        if !names.contains(name) {
            names.push(name);
        }
    }
    if names.is_empty() { SEQUENTIAL_PATH_STRATEGY.to_string() } else { names.join("+") }
}

/// How good a plan is by pod count, for `--ensure-baseline` with `--objective pods`: more pods
/// placed first; then, from the highest priority down, more pods of that priority; then fewer
/// evictions.
pub fn plan_rank(plan: &Plan) -> (usize, Vec<(i32, usize)>, std::cmp::Reverse<usize>) {
    let by_priority: Vec<(i32, usize)> =
        plan.summary.placed_by_priority.iter().rev().map(|(p, n)| (*p, *n)).collect();
    (plan.placements.len(), by_priority, std::cmp::Reverse(plan.evictions.len()))
}

/// Marks the greedy classes whose placed pods later tiers may move (see [`Class::movable`]).
fn mark_movable(
    classes: &mut [Class],
    pod_classes: &crate::encode::PodClasses,
    pending: &[Pod],
    frameworks: &BTreeMap<String, Frameworks>,
) {
    // Every selector a pending pod's placement decision depends on, with its class.
    let mut selectors: Vec<(usize, crate::model::LabelSelector)> = Vec::new();
    for (c, class) in pod_classes.classes.iter().enumerate() {
        let rep = &pending[class.representative];
        let terms = rep.pod_affinity.required.iter().chain(&rep.pod_anti_affinity.required);
        selectors.extend(terms.filter_map(|t| t.label_selector.clone()).map(|s| (c, s)));
        let pts = PodTopologySpread::new(
            frameworks[&rep.scheduler_name].full.profile().args.pod_topology_spread.clone(),
        );
        for constraint in pts.constraints(rep, UnsatisfiableAction::DoNotSchedule) {
            if let Some(sel) = constraint.selector {
                selectors.push((c, sel));
            }
        }
    }
    for (c, class) in pod_classes.classes.iter().enumerate() {
        let labels = &pending[class.representative].labels;
        if let Some(k) = classes.get_mut(c) {
            let rep = &pending[class.representative];
            k.movable = k.route == Route::Greedy
                && !k.hard_rules
                && rep.pod_anti_affinity.required.is_empty()
                && rep.host_ports.is_empty()
                && selectors.iter().all(|(owner, sel)| *owner == c || !sel.matches(labels));
        }
    }
}

#[cfg(test)]
mod tests;
