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
//!    an earlier tier — to a node that can take it. When a node receives a pod the real pod is
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

mod inter_pod;
mod objective;

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

/// An [`Applier::static_part`] that does not fit 32 bits: the cell keeps the matrix's score.
const NO_STATIC_PART: i32 = i32::MIN;

#[cfg(test)]
thread_local! {
    /// Tests: whether [`Applier`] gives the greedy its bounds (off: every changed node is
    /// rescored, as without [`Rescore::bound`]).
    static BOUNDS: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// The hostname label (`kubernetes.io/hostname`).
pub const HOSTNAME_LABEL: &str = "kubernetes.io/hostname";

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
            },
        ),
        plan: Plan::default(),
        greedy_pods: Vec::new(),
        by_class: BTreeMap::new(),
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

/// A pod placed by the greedy.
#[derive(Debug, Clone, Copy)]
struct GreedyPod {
    /// Index in the pending list.
    member: usize,
    /// The node it is on now.
    node: usize,
    /// Index of its entry in `plan.placements`.
    plan_index: usize,
}

/// The best strategy's result so far.
struct Candidate {
    /// Whether it covers the queue order's result (the floor; true while there is none) and
    /// its rank by the objective: the greater pair wins.
    key: (bool, Rank),
    /// Pods placed per solver class, as the solver counts them.
    placed: Vec<u32>,
    /// Pods placed per solver class, as the applier counts them (members taken in order).
    next: Vec<usize>,
    /// Whether anything changed.
    changed: bool,
    /// Its state, when it is not the live one.
    saved: Option<Saved>,
}

/// A copy of the parts of a [`Run`] a greedy solve changes, to try another class order.
#[derive(Clone)]
struct Saved {
    cluster: ClusterState,
    plan: Plan,
    greedy_pods: Vec<GreedyPod>,
    by_class: BTreeMap<usize, Vec<usize>>,
}

/// The mutable state of a batch run.
struct Run {
    /// The sequential scheduler, whose cluster is the working cluster.
    sched: Baseline,
    plan: Plan,
    /// Every pod placed by the greedy so far.
    greedy_pods: Vec<GreedyPod>,
    /// Class → indices in `greedy_pods` of its pods.
    by_class: BTreeMap<usize, Vec<usize>>,
    /// Bumped on every change to the cluster.
    version: u64,
    /// Class → (cluster version, outcome) of the last pod of the class that fit nowhere.
    failures: BTreeMap<usize, (u64, Unschedulable)>,
    /// Class → cluster version when a pod of the class last failed the first pass.
    first_pass_failures: BTreeMap<usize, u64>,
    evaluate_ms: f64,
    /// The simulation clock (start time of pods that have none).
    now: i64,
    /// Resource → (shift, unit name, objects outside the base unit) of the widened units.
    widened: BTreeMap<String, (u32, String, BTreeSet<String>)>,
    /// Classes moved to the exact path, with why.
    exact_path: Vec<ExactPath>,
    /// The strategy each tier that ran the greedy kept ([`Strategy::name`]), tier by tier.
    strategies: Vec<&'static str>,
    /// Pods the repair step (the sequential path with preemption) placed.
    repaired: usize,
}

impl Run {
    fn save(&self) -> Saved {
        // The nodes (each with its labels and pods) are most of the copy: cloned on all cores.
        let c = &self.sched.cluster;
        let cluster = {
            use rayon::prelude::*;
            ClusterState {
                nodes: c.nodes.par_iter().with_min_len(256).cloned().collect(),
                namespace_labels: c.namespace_labels.clone(),
                pdbs: c.pdbs.clone(),
                claims: c.claims.clone(),
            }
        };
        Saved {
            cluster,
            plan: self.plan.clone(),
            greedy_pods: self.greedy_pods.clone(),
            by_class: self.by_class.clone(),
        }
    }

    fn restore(&mut self, saved: Saved) {
        self.sched.cluster = saved.cluster;
        self.plan = saved.plan;
        self.greedy_pods = saved.greedy_pods;
        self.by_class = saved.by_class;
    }

    /// Evaluates and solves the greedy classes of one tier (with the movable pods earlier
    /// tiers placed, which relocation may move), adds the placements to the plan and the
    /// cluster, and returns the pods left unplaced as `(class, pending index)`. The inner error
    /// is a class × node matrix limit ([`matrix_limit`]) met before anything changed.
    fn greedy_tier(
        &mut self,
        tier: &[usize],
        classes: &[Class],
        pending: &[Pod],
        frameworks: &BTreeMap<String, Frameworks>,
        options: &BatchOptions,
        evaluator: &mut Evaluator,
    ) -> Result<Result<Vec<(usize, usize)>, BatchError>, BatchError> {
        let eval_start = Instant::now();
        let to_place: Vec<usize> =
            tier.iter().copied().filter(|&c| classes[c].route == Route::Greedy).collect();
        if to_place.is_empty() {
            return Ok(Ok(Vec::new()));
        }
        // Solver classes: this tier's, then earlier tiers' movable classes with placed pods.
        let mut global = to_place.clone();
        if options.relocate {
            global.extend(self.by_class.iter().filter_map(|(&c, pods)| {
                (classes[c].movable && !pods.is_empty() && !to_place.contains(&c)).then_some(c)
            }));
        }
        let cluster = &self.sched.cluster;
        let n_nodes = cluster.nodes.len();
        let reps: Vec<&Pod> = global.iter().map(|&c| &pending[classes[c].members[0]]).collect();

        let (names, requests) = resource_names(&reps, frameworks);
        let mut problem = Problem {
            resources: names.len(),
            nodes: n_nodes,
            classes: Vec::with_capacity(global.len()),
            free: Vec::new(),
            feasible: vec![false; global.len() * n_nodes],
            score: vec![0; global.len() * n_nodes],
            initial: Vec::new(),
            topologies: 0,
            domains: Vec::new(),
            conflicts: Vec::new(),
            guide: None,
            inter_pod: Default::default(),
            objective: options.objective,
            capacity: Vec::new(),
            queue: Vec::new(),
        };
        let mut keys = inter_pod::Keys::new(cluster);
        add_conflicts(&mut problem, &mut keys, cluster, &reps[..to_place.len()]);
        let soft_spread =
            inter_pod::add_spread(&mut problem, &mut keys, &reps, to_place.len(), frameworks);
        let affinity_masks =
            inter_pod::add_affinity(&mut problem, &mut keys, &reps, to_place.len(), frameworks);
        inter_pod::add_preferred(&mut problem, &mut keys, &reps, to_place.len(), frameworks);
        keys.fill(&mut problem);
        problem.free = free_capacity(cluster, &names);
        problem.capacity = objective::capacity(cluster, &names);
        for (k, &c) in global.iter().enumerate() {
            let placing = k < to_place.len();
            problem.classes.push(ClassSpec {
                count: if placing {
                    u32::try_from(classes[c].members.len()).unwrap_or(u32::MAX)
                } else {
                    0
                },
                priority: classes[c].priority,
                requests: names.iter().map(|n| requests[k].get(n).copied().unwrap_or(0)).collect(),
                max_per_node: None,
            });
            if !placing {
                for &g in self.by_class.get(&c).into_iter().flatten() {
                    problem.initial.push(Placed { class: k, node: self.greedy_pods[g].node });
                }
            }
        }
        // Feasibility apart from capacity (the solver tracks capacity) and scores: matrices on
        // the evaluator's backend, one per scheduler name and chunk of classes (a chunk's
        // planes are at most EVAL_CHUNK_CELLS cells; only what the solver keeps outlives it).
        let mut by_name: BTreeMap<(&str, usize), Vec<usize>> = BTreeMap::new();
        for (k, rep) in reps.iter().enumerate() {
            let variant = frameworks[&rep.scheduler_name].variant(rep, k < to_place.len());
            debug_assert_eq!(variant & 4 != 0, soft_spread[k]);
            by_name.entry((rep.scheduler_name.as_str(), variant)).or_default().push(k);
        }
        let per_chunk = (EVAL_CHUNK_CELLS / n_nodes.max(1)).max(1);
        let groups: Vec<((&str, usize), Vec<usize>)> = by_name
            .into_iter()
            .flat_map(|(name, ks)| {
                ks.chunks(per_chunk).map(|chunk| (name, chunk.to_vec())).collect::<Vec<_>>()
            })
            .collect();
        let group_pods: Vec<Vec<Pod>> =
            groups.iter().map(|(_, ks)| ks.iter().map(|&k| reps[k].clone()).collect()).collect();
        // The nodes' side of the encoding is collected once for every group; the groups are
        // encoded on all cores (in order: the first error is the first group's).
        let encs = match crate::encode::NodeSide::build(cluster).and_then(|side| {
            use rayon::prelude::*;
            group_pods
                .par_iter()
                .map(|pods| crate::encode::encode_with(&side, cluster, pods))
                .collect::<Vec<_>>()
                .into_iter()
                .collect::<Result<Vec<_>, _>>()
        }) {
            Ok(encs) => encs,
            Err(e) => return Ok(Err(e.into())),
        };
        for (pods, enc) in group_pods.iter().zip(&encs) {
            for (resource, shift, unit, objects) in widened_units(enc, cluster, pods) {
                let entry =
                    self.widened.entry(resource).or_insert((shift, unit.clone(), objects.clone()));
                if shift > entry.0 {
                    (entry.0, entry.1) = (shift, unit);
                }
                entry.2.extend(objects);
            }
        }
        let mut prepared = Vec::with_capacity(groups.len());
        for ((((name, variant), _), pods), enc) in groups.iter().zip(&group_pods).zip(&encs) {
            let fw = frameworks[*name].matrix_framework(*variant);
            match Prepared::new(fw.profile(), cluster, pods, enc) {
                Ok(p) => prepared.push(p),
                Err(e) => return limit_or_fatal(e.into()),
            }
        }
        let mut source = vec![(0usize, 0usize); global.len()];
        let mut resource_planes = Vec::with_capacity(groups.len());
        // Per cell: the score without the usage-dependent planes (NO_STATIC_PART when it does
        // not fit 32 bits) and NodeResourcesFit's raw score at the tier's start.
        let mut static_part = vec![0i32; global.len() * n_nodes];
        let mut fit_start = vec![0u8; global.len() * n_nodes];
        // Each solver class's row of the four arrays, taken by the group that evaluates it
        // and filled on all cores.
        let width = n_nodes.max(1);
        let mut rows: Vec<Option<SolverRow<'_>>> = problem
            .feasible
            .chunks_mut(width)
            .zip(problem.score.chunks_mut(width))
            .zip(static_part.chunks_mut(width).zip(fit_start.chunks_mut(width)))
            .map(|((feasible, score), (fixed, fit0))| {
                Some(SolverRow { feasible, score, fixed, fit0 })
            })
            .collect();
        for (g, (_, ks)) in groups.iter().enumerate() {
            let m = match evaluator.evaluate_lean(&prepared[g], &KEPT_PLANES) {
                Ok(m) => m,
                Err(e) => return limit_or_fatal(e.into()),
            };
            let planes = ResourcePlanes::of(&m);
            let mut work = Vec::with_capacity(ks.len());
            for (i, &k) in ks.iter().enumerate() {
                let Some(&c) = encs[g].classes.pod_class.get(i) else { continue };
                let c = c as usize;
                source[k] = (g, c);
                if m.score_errors[c].is_some() {
                    continue; // A plugin error: left to the repair path, which reports it.
                }
                if let Some(row) = rows.get_mut(k).and_then(Option::take) {
                    work.push((c, row));
                }
            }
            {
                use rayon::prelude::*;
                let (m, planes) = (&m, &planes);
                work.into_par_iter().for_each(|(c, row)| solver_row(m, planes, c, n_nodes, row));
            }
            resource_planes.push(planes);
        }
        // Classes evaluated without InterPodAffinity's filter keep its anti-affinity part.
        for (k, mask) in affinity_masks.iter().enumerate() {
            let Some(mask) = mask else { continue };
            for (n, &ok) in mask.iter().enumerate() {
                if !ok {
                    problem.feasible[k * n_nodes + n] = false;
                }
            }
        }
        self.evaluate_ms += eval_start.elapsed().as_secs_f64() * 1000.0;

        // Largest first packs best when the tier fits (and favours the pods worth most by
        // dominant share); when it does not, smallest first (the most pods), the LP-guided
        // greedy and the queue order (kube-scheduler's order, a floor for fairness) are tried
        // from a copy of the state, and the best by the objective is kept
        // ([`kplace_solver::objective::rank`]: tier value, queue order, total score).
        let members: Vec<&[usize]> =
            global.iter().map(|&c| classes[c].members.as_slice()).collect();
        let mut strategies: Vec<Strategy> = match options.solver {
            SolverChoice::Greedy => vec![Strategy::Order(options.class_order)],
            SolverChoice::Lp => vec![Strategy::LpGuided],
            SolverChoice::Auto => vec![Strategy::Order(options.class_order), Strategy::LpGuided],
        };
        if options.try_orders && options.solver != SolverChoice::Lp {
            // The queue order second (the floor of the resources objective), smallest first
            // third.
            let tier_pods: usize = members.iter().take(to_place.len()).map(|m| m.len()).sum();
            for order in [ClassOrder::SmallestFirst, ClassOrder::Given] {
                let cheap = order != ClassOrder::Given
                    || tier_pods.saturating_mul(n_nodes) <= QUEUE_ORDER_CELLS;
                if order != options.class_order && cheap {
                    strategies.insert(1, Strategy::Order(order));
                }
            }
        }
        let mut floor: Option<Vec<u32>> = None;
        if strategies.contains(&Strategy::Order(ClassOrder::Given)) {
            // The tier's pods in PrioritySort's order, as their solver classes.
            let mut pods: Vec<(usize, usize)> =
                Vec::with_capacity(tier_pods_of(&members, to_place.len()));
            for (k, m) in members.iter().take(to_place.len()).enumerate() {
                pods.extend(m.iter().map(|&i| (i, k)));
            }
            let position = queue_positions(pending);
            pods.sort_by_key(|&(i, _)| position[i]);
            problem.queue = pods.into_iter().map(|(_, k)| k).collect();
        }
        let backup = (strategies.len() > 1).then(|| self.save());
        let mut best: Option<Candidate> = None;
        let mut kept = strategies[0];
        for (i, &strategy) in strategies.iter().enumerate() {
            if i > 0 && options.deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
            let (class_order, guided) = match strategy {
                Strategy::Order(order) => (order, None),
                Strategy::LpGuided => match lp_guide(&problem, &LpOptions::default()) {
                    Ok(Some(guide)) => (
                        options.class_order,
                        Some(Problem { guide: Some(guide), ..problem.clone() }),
                    ),
                    Ok(None) => (options.class_order, None),
                    Err(e) => {
                        tracing::warn!("the LP stage failed ({e}); the greedy goes on without it");
                        (options.class_order, None)
                    }
                },
            };
            if i > 0 {
                // Without a guide the LP strategy is the first strategy again: nothing to try.
                if strategy == Strategy::LpGuided && guided.is_none() {
                    continue;
                }
                let Some(backup) = &backup else { break };
                if let Some(b) = best.as_mut() {
                    b.saved = Some(self.save());
                }
                self.restore(backup.clone());
            }
            let mut applier = Applier {
                cluster: &mut self.sched.cluster,
                plan: &mut self.plan,
                greedy_pods: &mut self.greedy_pods,
                by_class: &mut self.by_class,
                pending,
                global: &global,
                members: &members,
                next: vec![0; global.len()],
                moving: vec![None; global.len()],
                changed: false,
                static_part: &static_part,
                fit_start: &fit_start,
                shrunk: vec![false; n_nodes],
                score: &problem.score,
                nodes: n_nodes,
                encs: &encs,
                prepared: &prepared,
                source: &source,
                resource_planes: &resource_planes,
                max_part: source
                    .iter()
                    .map(|&(g, c)| {
                        let monotone = prepared[g].fit_strategy == STRATEGY_LEAST_ALLOCATED;
                        resource_planes[g].max_part(c, monotone)
                    })
                    .collect(),
                usage: vec![None; encs.len() * n_nodes],
            };
            let greedy = GreedyOptions {
                class_order,
                relocate: options.relocate,
                even_spread: options.even_spread,
            };
            let assignment =
                solve_greedy(guided.as_ref().unwrap_or(&problem), &greedy, Some(&mut applier))?;
            let (next, changed) = (applier.next, applier.changed);
            let placed = kplace_solver::objective::placed(&problem, &assignment);
            if strategy == Strategy::Order(ClassOrder::Given)
                && options.objective == Objective::Resources
            {
                if let Some(b) = best.as_mut() {
                    b.key.0 = kplace_solver::objective::covers(&problem, &b.placed, &placed);
                }
                floor = Some(placed.clone());
            }
            let admissible = floor
                .as_ref()
                .is_none_or(|f| kplace_solver::objective::covers(&problem, &placed, f));
            let key = (admissible, kplace_solver::objective::rank(&problem, &assignment));
            match best.as_mut() {
                Some(b) if key <= b.key => {
                    if let Some(saved) = b.saved.take() {
                        self.restore(saved);
                    }
                }
                _ => {
                    best = Some(Candidate { key, placed, next, changed, saved: None });
                    kept = strategy;
                }
            }
            if assignment.unplaced.iter().take(to_place.len()).all(|&u| u == 0) {
                break;
            }
        }
        // The copy of the state before the tier, unused once a strategy is kept, is freed on
        // another thread (a copy of every node).
        if let Some(backup) = backup {
            std::thread::spawn(move || drop(backup));
        }
        let Some(Candidate { next, changed, .. }) = best else { return Ok(Ok(Vec::new())) };
        self.strategies.push(kept.name());
        if changed {
            self.version += 1;
        }
        let mut leftovers = Vec::new();
        for (k, &c) in to_place.iter().enumerate() {
            leftovers.extend(classes[c].members[next[k]..].iter().map(|&m| (c, m)));
        }
        Ok(Ok(leftovers))
    }

    /// The classes among `cs` (greedy classes of a tier) whose matrices cannot be evaluated
    /// ([`matrix_limit`]), each with the error, found by bisection. Classes that fail only
    /// together (none of them alone) are all returned.
    fn out_of_range(
        &self,
        cs: &[usize],
        classes: &[Class],
        pending: &[Pod],
        frameworks: &BTreeMap<String, Frameworks>,
        evaluator: &mut Evaluator,
    ) -> Result<Vec<(usize, String)>, BatchError> {
        let Some(e) = self.matrix_failure(cs, classes, pending, frameworks, evaluator)? else {
            return Ok(Vec::new());
        };
        if cs.len() <= 1 {
            return Ok(cs.iter().map(|&c| (c, e.to_string())).collect());
        }
        let (a, b) = cs.split_at(cs.len() / 2);
        let mut bad = self.out_of_range(a, classes, pending, frameworks, evaluator)?;
        bad.extend(self.out_of_range(b, classes, pending, frameworks, evaluator)?);
        if bad.is_empty() {
            return Ok(cs.iter().map(|&c| (c, e.to_string())).collect());
        }
        Ok(bad)
    }

    /// The matrix limit met evaluating the classes `cs` on the current cluster, if any (what
    /// [`Run::greedy_tier`] evaluates, without solving).
    fn matrix_failure(
        &self,
        cs: &[usize],
        classes: &[Class],
        pending: &[Pod],
        frameworks: &BTreeMap<String, Frameworks>,
        evaluator: &mut Evaluator,
    ) -> Result<Option<BatchError>, BatchError> {
        let cluster = &self.sched.cluster;
        let per_chunk = (EVAL_CHUNK_CELLS / cluster.nodes.len().max(1)).max(1);
        let mut by_name: BTreeMap<(&str, usize), Vec<Pod>> = BTreeMap::new();
        for &c in cs {
            let rep = &pending[classes[c].members[0]];
            let variant = frameworks[&rep.scheduler_name].variant(rep, true);
            by_name.entry((rep.scheduler_name.as_str(), variant)).or_default().push(rep.clone());
        }
        let side = match crate::encode::NodeSide::build(cluster) {
            Ok(side) => side,
            Err(e) => return Ok(Some(e.into())), // An encoding limit, as in the loop below.
        };
        for ((name, variant), reps) in by_name {
            for pods in reps.chunks(per_chunk) {
                let result = crate::encode::encode_with(&side, cluster, pods)
                    .map_err(BatchError::from)
                    .and_then(|enc| {
                        let fw = frameworks[name].matrix_framework(variant);
                        let prepared = Prepared::new(fw.profile(), cluster, pods, &enc)?;
                        evaluator.evaluate_lean(&prepared, &KEPT_PLANES)?;
                        Ok(())
                    });
                match result {
                    Ok(()) => {}
                    Err(e) if matrix_limit(&e) => return Ok(Some(e)),
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(None)
    }

    /// The batch preemption pass over `rest` (pods left unplaced, `(class, pending index)`):
    /// the pods of greedy classes without conflicts, whose profile runs DefaultPreemption, are
    /// given to [`solve_preemption`] with every lower-priority pod on the nodes as a possible
    /// victim; its evictions and placements go into the cluster and the plan. Returns the pods
    /// still unplaced.
    fn batch_preempt(
        &mut self,
        rest: Vec<(usize, usize)>,
        classes: &[Class],
        pending: &[Pod],
        frameworks: &BTreeMap<String, Frameworks>,
    ) -> Result<Vec<(usize, usize)>, BatchError> {
        // Preemptor classes, in order of first appearance in `rest`, with their pods.
        let mut order: Vec<usize> = Vec::new();
        let mut pods_of: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        let mut keep = Vec::new();
        for (c, m) in rest {
            let rep = &pending[classes[c].members[0]];
            let fws = &frameworks[&rep.scheduler_name];
            let eligible = classes[c].route == Route::Greedy
                && !classes[c].hard_rules
                && rep.pod_anti_affinity.required.is_empty()
                && rep.host_ports.is_empty()
                && fws.full.profile().plugins.post_filter.contains(&PluginName::DefaultPreemption);
            if !eligible {
                keep.push((c, m));
                continue;
            }
            let list = pods_of.entry(c).or_default();
            if list.is_empty() {
                order.push(c);
            }
            list.push(m);
        }
        if order.is_empty() {
            return Ok(keep);
        }
        let cluster = &self.sched.cluster;
        let reps: Vec<&Pod> = order.iter().map(|&c| &pending[classes[c].members[0]]).collect();
        let (names, requests) = resource_names(&reps, frameworks);
        let row = |pod: &Pod| -> Vec<i64> {
            names
                .iter()
                .map(|n| match n.as_str() {
                    CPU => pod.requests.milli_cpu,
                    MEMORY => pod.requests.memory,
                    EPHEMERAL_STORAGE => pod.requests.ephemeral_storage,
                    PODS => 1,
                    other => pod.requests.get(other),
                })
                .collect()
        };
        let n_nodes = cluster.nodes.len();
        let free = free_capacity(cluster, &names);
        let top = reps.iter().map(|r| r.priority).max().unwrap_or(i32::MIN);
        let mut victims = Vec::new();
        let mut victim_pods: Vec<(usize, Arc<Pod>)> = Vec::new();
        for (n, node) in cluster.nodes.iter().enumerate() {
            for pod in node.pods.iter().filter(|p| p.priority < top) {
                let pdbs = cluster
                    .pdbs
                    .iter()
                    .enumerate()
                    .filter(|(_, pdb)| {
                        !pod.labels.is_empty()
                            && pdb.namespace == pod.namespace
                            && pdb
                                .selector
                                .as_ref()
                                .is_some_and(|s| !s.is_empty() && s.matches(&pod.labels))
                            && !pdb.disrupted_pods.iter().any(|name| *name == pod.name)
                    })
                    .map(|(i, _)| i)
                    .collect();
                victims.push(VictimSpec {
                    node: n,
                    priority: pod.priority,
                    requests: row(pod),
                    pdbs,
                    start_time: crate::baseline::preemption::pod_start_time(pod, self.now),
                });
                victim_pods.push((n, Arc::clone(pod)));
            }
        }
        let mut eligible = vec![false; order.len() * n_nodes];
        for (k, rep) in reps.iter().enumerate() {
            let fws = &frameworks[&rep.scheduler_name];
            let PreFilterOutcome::Proceed(state) = fws.no_fit.pre_filter(rep, cluster) else {
                continue;
            };
            for (n, node) in cluster.nodes.iter().enumerate() {
                eligible[k * n_nodes + n] =
                    state.node_names().is_none_or(|names| names.contains(&node.name))
                        && fws.no_fit.filter(&state, rep, node).is_success();
            }
        }
        let problem = PreemptProblem {
            resources: names.len(),
            nodes: n_nodes,
            free,
            victims,
            pdb_allowed: cluster
                .pdbs
                .iter()
                .map(|p| u32::try_from(p.disruptions_allowed).unwrap_or(0))
                .collect(),
            preemptors: order
                .iter()
                .enumerate()
                .map(|(k, &c)| PreemptorSpec {
                    count: u32::try_from(pods_of[&c].len()).unwrap_or(u32::MAX),
                    priority: reps[k].priority,
                    requests: names
                        .iter()
                        .map(|n| requests[k].get(n).copied().unwrap_or(0))
                        .collect(),
                    may_preempt: reps[k].preemption_policy != crate::model::PreemptionPolicy::Never,
                    max_per_node: None,
                })
                .collect(),
            eligible,
        };
        let result = match solve_preemption(&problem) {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!("batch preemption skipped: {e}");
                keep.extend(order.iter().flat_map(|c| pods_of[c].iter().map(move |&m| (*c, m))));
                return Ok(keep);
            }
        };
        // Which pod each placement is: the next pod of its class.
        let mut next: BTreeMap<usize, usize> = BTreeMap::new();
        let mut placed_pod: Vec<usize> = Vec::with_capacity(result.placements.len());
        for pl in &result.placements {
            let c = order[pl.preemptor];
            let i = next.entry(c).or_insert(0);
            placed_pod.push(pods_of[&c][*i]);
            *i += 1;
        }
        for ev in &result.evictions {
            let (n, victim) = &victim_pods[ev.victim];
            let node_name = self.sched.cluster.nodes[*n].name.clone();
            self.sched.cluster.nodes[*n].remove_pod(&victim.namespace, &victim.name);
            self.plan.evictions.push(Eviction {
                pod: victim.key(),
                node: node_name,
                preemptor: pending[placed_pod[ev.placement]].key(),
            });
        }
        for (pl, &m) in result.placements.iter().zip(&placed_pod) {
            let node = &mut self.sched.cluster.nodes[pl.node];
            let mut pod = pending[m].clone();
            pod.node_name = Some(node.name.clone());
            self.plan.placements.push(Placement { pod: pod.key(), node: node.name.clone() });
            node.add_pod(Arc::new(pod));
        }
        if !result.placements.is_empty() || !result.evictions.is_empty() {
            self.version += 1;
        }
        for &c in &order {
            let done = next.get(&c).copied().unwrap_or(0);
            keep.extend(pods_of[&c][done..].iter().map(|&m| (c, m)));
        }
        Ok(keep)
    }

    /// Tries to place one pod through the sequential path with `fw` (a profile without
    /// preemption); records only a success. A pod whose class already failed on the same
    /// cluster state is not tried again.
    fn try_place(&mut self, fw: &Framework, class: usize, pod: &Pod) -> bool {
        if self.first_pass_failures.get(&class) == Some(&self.version) {
            return false;
        }
        match self.sched.schedule_one(fw, pod) {
            CycleResult::Scheduled(n) => {
                let node = self.sched.cluster.nodes[n].name.clone();
                self.plan.placements.push(Placement { pod: pod.key(), node });
                self.version += 1;
                true
            }
            _ => {
                self.first_pass_failures.insert(class, self.version);
                false
            }
        }
    }

    /// Places one pod through the exact sequential path and records the outcome.
    fn schedule_sequential(&mut self, fw: &Framework, class: usize, pod: &Pod) {
        if let Some((version, failure)) = self.failures.get(&class)
            && *version == self.version
        {
            self.plan.unschedulable.push(Unschedulable { pod: pod.key(), ..failure.clone() });
            return;
        }
        let failure = match self.sched.schedule_one(fw, pod) {
            CycleResult::Scheduled(n) => {
                let node = self.sched.cluster.nodes[n].name.clone();
                self.plan.placements.push(Placement { pod: pod.key(), node });
                self.version += 1;
                self.repaired += 1;
                return;
            }
            CycleResult::Preempted(n, victims) => {
                let node = self.sched.cluster.nodes[n].name.clone();
                for v in victims {
                    self.plan.evictions.push(Eviction {
                        pod: v.key(),
                        node: node.clone(),
                        preemptor: pod.key(),
                    });
                }
                self.plan.placements.push(Placement { pod: pod.key(), node });
                self.version += 1;
                self.repaired += 1;
                return;
            }
            CycleResult::Unschedulable(err) => {
                Unschedulable { pod: pod.key(), message: err.message(), reasons: err.reasons() }
            }
            CycleResult::NoNodes => Unschedulable {
                pod: pod.key(),
                message: NO_NODES_AVAILABLE.to_string(),
                reasons: BTreeMap::new(),
            },
            CycleResult::Error(message) => {
                Unschedulable { pod: pod.key(), message, reasons: BTreeMap::new() }
            }
        };
        self.plan.unschedulable.push(failure.clone());
        self.failures.insert(class, (self.version, failure));
    }
}

/// Adds the conflicts between the classes represented by `reps` (the classes the solve places,
/// the first rows of `problem`): required anti-affinity in either direction, with the term's
/// topology key, and conflicting host ports, per node ([`inter_pod::NODE_TOPOLOGY`]).
fn add_conflicts(
    problem: &mut Problem,
    keys: &mut inter_pod::Keys<'_>,
    cluster: &ClusterState,
    reps: &[&Pod],
) {
    let incoming: Vec<Vec<AffinityTerm>> = reps
        .iter()
        .map(|rep| {
            rep.pod_anti_affinity
                .required
                .iter()
                .map(|t| AffinityTerm::new_incoming(rep, t, cluster))
                .collect()
        })
        .collect();
    let existing: Vec<Vec<AffinityTerm>> = reps
        .iter()
        .map(|rep| {
            rep.pod_anti_affinity.required.iter().map(|t| AffinityTerm::new(rep, t)).collect()
        })
        .collect();
    // Only classes with required anti-affinity or host ports can conflict: the pair loop skips
    // the rest (a batch of 10,000 distinct classes has 10^8 pairs).
    let namespaces: Vec<&Labels> =
        reps.iter().map(|rep| cluster.namespace_labels(&rep.namespace)).collect();
    for (a, rep_a) in reps.iter().enumerate() {
        if incoming[a].is_empty() && rep_a.host_ports.is_empty() {
            continue;
        }
        for (b, rep_b) in reps.iter().enumerate() {
            for (inc, ext) in incoming[a].iter().zip(&existing[a]) {
                if inc.matches(rep_b, namespaces[b]) || ext.matches(rep_b, namespaces[b]) {
                    let topology = keys.index(&inc.topology_key);
                    problem.conflicts.push(Conflict { a, b, topology });
                }
            }
            if a <= b
                && !rep_b.host_ports.is_empty()
                && !fits_ports(&rep_a.host_ports, &rep_b.host_ports)
            {
                let topology = keys.index(inter_pod::NODE_TOPOLOGY);
                problem.conflicts.push(Conflict { a, b, topology });
            }
        }
    }
}

/// Free capacity of every node per resource of `names` (`nodes × names`, row-major): allocatable
/// less requested, and for `pods` the pod slots left. Negative on an overcommitted node.
fn free_capacity(cluster: &ClusterState, names: &[String]) -> Vec<i64> {
    let mut free = Vec::with_capacity(cluster.nodes.len() * names.len());
    for node in &cluster.nodes {
        for name in names {
            free.push(if name == PODS {
                node.allocatable.allowed_pod_number - node.pods.len() as i64
            } else {
                node.allocatable.get(name) - node.requested.get(name)
            });
        }
    }
    free
}

/// The solver's resources for the classes represented by `reps` — cpu, memory,
/// ephemeral-storage, pods, then every extended resource a class asks the solver for — and
/// each class's requests by name.
fn resource_names(
    reps: &[&Pod],
    frameworks: &BTreeMap<String, Frameworks>,
) -> (Vec<String>, Vec<BTreeMap<String, i64>>) {
    let mut names: Vec<String> =
        [CPU, MEMORY, EPHEMERAL_STORAGE, PODS].iter().map(|s| (*s).to_string()).collect();
    let mut requests: Vec<BTreeMap<String, i64>> = Vec::new();
    for rep in reps {
        let req = solver_requests(rep, &frameworks[&rep.scheduler_name].full);
        for name in req.keys() {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
        requests.push(req);
    }
    (names, requests)
}

/// What a class asks the solver for: cpu, memory, ephemeral-storage, one pod, and every
/// extended resource NodeResourcesFit checks. Nothing when the profile does not run
/// NodeResourcesFit as a filter.
fn solver_requests(pod: &Pod, fw: &Framework) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    let profile = fw.profile();
    if !profile.plugins.filter.contains(&PluginName::NodeResourcesFit) {
        return out;
    }
    let args = &profile.args.node_resources_fit;
    out.insert(CPU.to_string(), pod.requests.milli_cpu);
    out.insert(MEMORY.to_string(), pod.requests.memory);
    out.insert(EPHEMERAL_STORAGE.to_string(), pod.requests.ephemeral_storage);
    out.insert(PODS.to_string(), 1);
    for (name, &amount) in &pod.requests.scalar {
        if amount <= 0 || !is_scalar_resource_name(name) {
            continue;
        }
        if is_extended_resource_name(name) {
            let group = name.split('/').next().unwrap_or_default();
            if args.ignored_resources.iter().any(|r| r == name)
                || args.ignored_resource_groups.iter().any(|g| g == group)
            {
                continue;
            }
        }
        out.insert(name.clone(), amount);
    }
    out
}

/// One solver class's row of [`Problem::feasible`], [`Problem::score`], the static parts and
/// NodeResourcesFit's tier-start raw scores.
struct SolverRow<'a> {
    feasible: &'a mut [bool],
    score: &'a mut [i64],
    fixed: &'a mut [i32],
    fit0: &'a mut [u8],
}

/// Fills `row` from class `c`'s row of the lean matrix `m`: on every feasible node the total
/// score, the score without the usage-dependent planes ([`NO_STATIC_PART`] when it does not fit
/// 32 bits) and NodeResourcesFit's raw score (at most [`MAX_NODE_SCORE`]). The soft spread
/// terms of the solver replace the tier-start spread score: such a class's matrix has no
/// PodTopologySpread score ([`Frameworks::variant`]).
fn solver_row(m: &LeanMatrix, planes: &ResourcePlanes, c: usize, n_nodes: usize, row: SolverRow) {
    let cells = m.cell(c, 0)..m.cell(c, 0) + n_nodes;
    let resource: Vec<(&[i32], i64, bool)> = planes
        .planes
        .iter()
        .zip(&planes.is_fit)
        .filter(|((_, _, skipped), _)| !skipped.get(c).copied().unwrap_or(false))
        .filter_map(|(&(i, weight, _), &fit)| {
            Some((m.planes[i].normalized.get(cells.clone())?, weight, fit))
        })
        .collect();
    let words = m.filter[cells.clone()].iter().zip(&m.total[cells]).enumerate();
    let out = row
        .feasible
        .iter_mut()
        .zip(row.score.iter_mut())
        .zip(row.fixed.iter_mut().zip(row.fit0.iter_mut()));
    for ((n, (&word, &total)), ((feasible, score), (fixed, fit0))) in words.zip(out) {
        if word & CELL_FEASIBLE == 0 {
            continue;
        }
        let total = i64::from(total);
        *feasible = true;
        *score = total;
        let mut part = 0i64;
        for &(v, w, fit) in &resource {
            part += w * i64::from(v[n]);
            if fit {
                // Out of range (never, for a class without score errors): no bound.
                *fit0 = u8::try_from(v[n])
                    .ok()
                    .filter(|&f| i64::from(f) <= MAX_NODE_SCORE)
                    .unwrap_or(MAX_NODE_SCORE as u8);
            }
        }
        *fixed = i32::try_from(total - part)
            .ok()
            .filter(|&f| f != NO_STATIC_PART)
            .unwrap_or(NO_STATIC_PART);
    }
}

/// The usage-dependent score planes of a matrix (NodeResourcesFit and
/// NodeResourcesBalancedAllocation: neither normalizes, so their raw score is their final one):
/// their weights and, per class, whether PreScore skipped them.
#[derive(Debug, Clone)]
struct ResourcePlanes {
    /// `(plane index in the matrix, weight, per class skipped)`.
    planes: Vec<(usize, i64, Vec<bool>)>,
    /// Which [`crate::eval::columns::ResourceColumns`] plane each entry of `planes` reads: NodeResourcesFit or not.
    is_fit: Vec<bool>,
}

impl ResourcePlanes {
    fn of(m: &LeanMatrix) -> Self {
        let mut planes = Vec::new();
        let mut is_fit = Vec::new();
        for (i, plane) in m.planes.iter().enumerate() {
            if is_resource_score(plane.plugin) {
                planes.push((i, plane.weight, plane.skipped.clone()));
                is_fit.push(plane.plugin == PluginName::NodeResourcesFit);
            }
        }
        ResourcePlanes { planes, is_fit }
    }

    /// The weighted sum over the planes of `value(plane)` for class `c` (skipped planes count 0).
    #[cfg(test)]
    fn part(
        &self,
        m: &LeanMatrix,
        c: usize,
        value: impl Fn(&crate::eval::LeanPlane) -> i64,
    ) -> i64 {
        self.planes
            .iter()
            .filter(|(_, _, skipped)| !skipped.get(c).copied().unwrap_or(false))
            .map(|&(i, weight, _)| weight * value(&m.planes[i]))
            .sum()
    }

    /// The most the usage-dependent part of class `c`'s score can be, as `(fit weight, rest)`:
    /// at most `fit weight × NodeResourcesFit's raw score at the tier's start + rest` on a node
    /// whose usage only grew since. Every plane's raw score is at most [`MAX_NODE_SCORE`], and
    /// with `monotone` (LeastAllocated) NodeResourcesFit's only falls as usage grows; otherwise
    /// the fit weight is 0 and its plane counts in the rest.
    fn max_part(&self, c: usize, monotone: bool) -> (i64, i64) {
        let (mut fit_weight, mut rest) = (0, 0);
        for (&(_, weight, ref skipped), &fit) in self.planes.iter().zip(&self.is_fit) {
            if skipped.get(c).copied().unwrap_or(false) {
                continue;
            }
            if fit && monotone {
                fit_weight += weight.max(0);
            } else {
                rest += weight.max(0) * MAX_NODE_SCORE;
            }
        }
        (fit_weight, rest)
    }

    /// The weighted sum for class `c` of an update's NodeResourcesFit and
    /// NodeResourcesBalancedAllocation raw scores.
    fn updated(&self, c: usize, fit_raw: i32, balanced_raw: i32) -> i64 {
        self.planes
            .iter()
            .zip(&self.is_fit)
            .filter(|((_, _, skipped), _)| !skipped.get(c).copied().unwrap_or(false))
            .map(|(&(_, weight, _), &fit)| {
                weight * i64::from(if fit { fit_raw } else { balanced_raw })
            })
            .sum()
    }
}

/// The greedy's callback: adds each placed pod to the working cluster and the plan, moves
/// relocated pods (in the cluster and in their plan entry), and recomputes the usage-dependent
/// part of a class's score on a node that changed.
struct Applier<'a> {
    cluster: &'a mut ClusterState,
    plan: &'a mut Plan,
    greedy_pods: &'a mut Vec<GreedyPod>,
    by_class: &'a mut BTreeMap<usize, Vec<usize>>,
    pending: &'a [Pod],
    /// Solver class → class.
    global: &'a [usize],
    /// Per solver class, its pods in queue order.
    members: &'a [&'a [usize]],
    /// Per solver class, how many of its pods this solve placed.
    next: Vec<usize>,
    /// Per solver class, the pod (index in `greedy_pods`) relocation just took off a node.
    moving: Vec<Option<usize>>,
    /// Whether anything was placed or moved.
    changed: bool,
    /// Per solver class × node, the part of the score that does not depend on usage
    /// ([`NO_STATIC_PART`]: none; the matrix's score stays).
    static_part: &'a [i32],
    /// Per solver class × node, NodeResourcesFit's raw score at the tier's start.
    fit_start: &'a [u8],
    /// Per node, whether relocation took a pod off it (its usage may be below the tier
    /// start's, so [`Applier::fit_start`] bounds nothing there).
    shrunk: Vec<bool>,
    /// Per solver class × node, the score before any change (used if an update fails).
    score: &'a [i64],
    nodes: usize,
    /// Per scheduler-name group: the encoding and prepared profile of its matrix.
    encs: &'a [Encoded],
    prepared: &'a [Prepared<'a>],
    /// Per solver class: its group and class in that group's matrix.
    source: &'a [(usize, usize)],
    /// Per group: the usage-dependent score planes.
    resource_planes: &'a [ResourcePlanes],
    /// Per solver class: [`ResourcePlanes::max_part`] (for [`Rescore::bound`]).
    max_part: Vec<(i64, i64)>,
    /// Per group × node (`g * nodes + node`), once asked for since the node last changed: the
    /// node's usage in the group's units (`None` when it no longer fits them). A class's
    /// usage-dependent score there is computed from it when the solver asks for that cell, so
    /// a change costs the cells of the classes still placing, not a column of every class.
    usage: Vec<Option<Option<NodeUsage>>>,
}

impl Applier<'_> {
    fn add_to_cluster(&mut self, m: usize, node: usize) {
        self.forget(node);
        let Some(target) = self.cluster.nodes.get_mut(node) else { return };
        let mut pod = self.pending[m].clone();
        pod.node_name = Some(target.name.clone());
        target.add_pod(Arc::new(pod));
    }

    /// Drops the cached usage of a node whose usage changed.
    fn forget(&mut self, node: usize) {
        for g in 0..self.encs.len() {
            if let Some(slot) = self.usage.get_mut(g * self.nodes + node) {
                *slot = None;
            }
        }
    }

    /// The usage of `node` now, in group `g`'s units (checked against its evaluation).
    fn node_usage(&self, g: usize, node: usize) -> Option<NodeUsage> {
        let usage = NodeUsage::of(&self.encs[g], self.cluster, &[node])
            .and_then(|u| u.validate(&self.prepared[g]).map(|()| u));
        match usage {
            Ok(u) => Some(u),
            Err(e) => {
                tracing::warn!(
                    "re-evaluating node {node} failed ({e}); its scores stay as they were"
                );
                None
            }
        }
    }

    /// The usage-dependent part of class `c` of group `g`'s score on the node of `usage`: the
    /// incremental entry point of evaluation (the CPU twin; every backend's cells are equal).
    fn updated_part(&self, g: usize, c: usize, usage: &NodeUsage) -> Option<i64> {
        let (_, fit, balanced) = columns::cell_cpu(&self.prepared[g], usage, 0, c)?;
        Some(self.resource_planes[g].updated(c, fit, balanced))
    }

    fn node_name(&self, node: usize) -> String {
        self.cluster.nodes.get(node).map(|n| n.name.clone()).unwrap_or_default()
    }
}

impl Rescore for Applier<'_> {
    fn placed(&mut self, class: usize, node: usize) {
        self.changed = true;
        let name = self.node_name(node);
        if let Some(g) = self.moving.get_mut(class).and_then(Option::take) {
            let gp = &mut self.greedy_pods[g];
            gp.node = node;
            if let Some(entry) = self.plan.placements.get_mut(gp.plan_index) {
                entry.node = name;
            }
            let member = gp.member;
            self.add_to_cluster(member, node);
            return;
        }
        let Some(next) = self.next.get_mut(class) else { return };
        let Some(&m) = self.members.get(class).and_then(|ms| ms.get(*next)) else { return };
        *next += 1;
        let g = self.greedy_pods.len();
        self.greedy_pods.push(GreedyPod {
            member: m,
            node,
            plan_index: self.plan.placements.len(),
        });
        self.plan.placements.push(Placement { pod: self.pending[m].key(), node: name });
        self.by_class.entry(self.global[class]).or_default().push(g);
        self.add_to_cluster(m, node);
    }

    fn removed(&mut self, class: usize, node: usize) {
        let Some(ids) = self.by_class.get(&self.global[class]) else { return };
        let Some(&g) = ids.iter().rev().find(|&&g| self.greedy_pods[g].node == node) else {
            return;
        };
        let pod = &self.pending[self.greedy_pods[g].member];
        self.forget(node);
        if let Some(s) = self.shrunk.get_mut(node) {
            *s = true;
        }
        if let Some(n) = self.cluster.nodes.get_mut(node) {
            n.remove_pod(&pod.namespace, &pod.name);
        }
        self.moving[class] = Some(g);
    }

    fn rescore(&mut self, class: usize, node: usize, _free: &[i64]) -> i64 {
        let cell = class * self.nodes + node;
        let Some(&(g, c)) = self.source.get(class) else { return 0 };
        let slot = g * self.nodes + node;
        if self.usage.get(slot).is_some_and(Option::is_none) {
            self.usage[slot] = Some(self.node_usage(g, node));
        }
        let part = match self.usage.get(slot) {
            Some(Some(Some(usage))) => self.updated_part(g, c, usage),
            _ => None,
        };
        let score = self.score.get(cell).copied().unwrap_or(0);
        match (part, self.static_part.get(cell)) {
            (Some(part), Some(&fixed)) if fixed != NO_STATIC_PART => i64::from(fixed) + part,
            _ => score,
        }
    }

    /// The static part plus the most the resource planes can add now ([`ResourcePlanes::max_part`];
    /// at least the matrix's score, which a failed update returns).
    fn bound(&mut self, class: usize, node: usize) -> i64 {
        #[cfg(test)]
        if !BOUNDS.get() {
            return i64::MAX;
        }
        let cell = class * self.nodes + node;
        let (Some(&fixed), Some(&(fit_weight, rest)), Some(&score), Some(&fit0), Some(&shrunk)) = (
            self.static_part.get(cell),
            self.max_part.get(class),
            self.score.get(cell),
            self.fit_start.get(cell),
            self.shrunk.get(node),
        ) else {
            return i64::MAX;
        };
        if fixed == NO_STATIC_PART {
            return score;
        }
        let fit = if shrunk { MAX_NODE_SCORE } else { i64::from(fit0) };
        (i64::from(fixed) + fit_weight * fit + rest).max(score)
    }
}

#[cfg(test)]
mod tests;
