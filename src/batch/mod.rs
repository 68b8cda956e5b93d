//! `kplace plan`: the whole pending batch placed at once by the greedy solver, with the exact
//! sequential path as repair for what the matrices cannot express.
//!
//! Input: the cluster model, the pending pods, the scheduler configuration and [`BatchOptions`].
//! Output: a [`Plan`] that `kplace check` finds valid. Placements are listed in the order they
//! were decided (tier by tier: sequential pods, greedy pods, repaired pods), which is the order
//! in which they are valid one after the other.
//!
//! 1. **Classes.** The pending pods are grouped by [`classify`] (pods with the same scheduling
//!    signature get the same filter verdicts and scores). A class is *simple* when nothing about
//!    its pods depends on other pods of the batch: no required pod affinity or anti-affinity, no
//!    host ports, no `DoNotSchedule` spread constraint (explicit or defaulted by the profile).
//!    One exception is kept simple: required anti-affinity on `kubernetes.io/hostname` that
//!    selects only the class's own pods (no other pending pod carries labels its selector
//!    matches), on a cluster where every node has a distinct hostname label — the solver
//!    expresses it exactly as "at most one pod of the class per node". Every other class is
//!    *sequential*. A simple class is also *movable* when no other pending pod has a required
//!    pod (anti-)affinity term or `DoNotSchedule` spread constraint whose selector matches its
//!    labels: no sequential decision can depend on where its pods are.
//!
//! Then, one priority tier at a time (highest first, as the PrioritySort queue):
//!
//! 2. **Sequential pods first.** The tier's sequential pods, in queue order, go through the
//!    exact sequential path
//!    ([`Baseline::schedule_one`](crate::baseline::scheduler::Baseline::schedule_one): filter,
//!    score every feasible node) with preemption switched off: the most constrained pods get
//!    the room first. Those that fit nowhere are tried again in step 5.
//! 3. **Matrices.** For each simple class of the tier — and each movable class whose pods an
//!    earlier tier placed — the representative pod runs through the CPU framework on the
//!    current cluster: PreFilter and Filter on every node *without NodeResourcesFit* (the
//!    feasibility row: everything but capacity, which the solver tracks itself, exactly as
//!    NodeResourcesFit checks it) and PreScore/Score/NormalizeScore over those nodes (the score
//!    row). Each score is split into a static part (plugins whose score does not depend on the
//!    node's usage, or is normalized over the nodes) and the resource part (NodeResourcesFit
//!    and NodeResourcesBalancedAllocation).
//! 4. **Greedy.** [`kplace_solver::solve_greedy`] places the tier's simple classes, largest
//!    first, with the nodes' free capacity per resource (cpu, memory, ephemeral-storage, pods
//!    and every extended resource a class requests and NodeResourcesFit does not ignore), then
//!    relocates: a pod left over gets room by moving one pod of another class — placed by this
//!    tier, or a movable pod of an earlier tier — to a node that can take it (this is what
//!    un-fragments the demo's GPUs). When a node receives a pod the real pod is added to the
//!    cluster and the resource part of the class's score there is recomputed with the
//!    framework ([`Rescore`]); a moved pod is moved in the cluster and in its plan entry.
//! 5. **Repair.** The pods steps 2 and 4 could not place go, in queue order, through the
//!    sequential path again, now with DefaultPreemption. Pods that still fit nowhere get
//!    kube-scheduler's FitError message from that run; a pod whose class already failed on the
//!    same cluster state reuses its class's message (and in step 2 is not tried again).
//!
//! Finally, **fallback** ([`BatchOptions::fallback`], on by default): the greedy and the
//! sequential scheduler each win on some instances (the sequential queue order sometimes leaves
//! a better packing; on random fragmentation-prone instances the greedy alone places more pods
//! in total and wins about one instance in five, loses about one in eight). The sequential plan
//! (`kplace baseline` with the same seed) is computed too and returned instead when it ranks
//! higher ([`plan_rank`]), with `summary.algorithm` set to [`FALLBACK_ALGORITHM`]. So
//! `kplace plan` never places fewer pods than `kplace baseline`, at the cost of one sequential
//! run.
//!
//! Why the plan is valid: a simple pod's feasibility apart from capacity cannot change during
//! its tier's greedy (no inter-pod rule of its own; anti-affinity of every pod already on a node
//! is in the Filter run at the greedy's start; the greedy's pods carry no anti-affinity that
//! could select one another, except the per-node-limited class, whose limit is its
//! anti-affinity), and the solver tracks capacity exactly. Capacity is judged on the final
//! state, so moving a pod keeps every earlier placement valid; moving a pod of an earlier tier
//! is restricted to movable classes, whose position no later decision depended on. Sequential
//! pods see every earlier placement. Preemption only evicts bound pods: pods placed earlier in
//! the run have a priority at least as high as any later preemptor, and victims must have a
//! strictly lower one.
//!
//! Not modelled yet: usage-dependent *soft* inter-pod scores (preferred pod affinity,
//! `ScheduleAnyway` spread including the system default constraints) are evaluated once per
//! tier, not after every placement; gangs; batch preemption (only the sequential
//! DefaultPreemption of pods the greedy leaves out); the LP stage.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Instant;

use kplace_solver::{ClassOrder, ClassSpec, GreedyOptions, Placed, Problem, Rescore, solve_greedy};

use crate::baseline::scheduler::{
    Baseline, BaselineOptions, CycleResult, NO_NODES_AVAILABLE, queue_order,
    run_baseline_with_progress,
};
use crate::encode::EncodeError;
use crate::encode::classes::classify;
use crate::framework::config::SchedulerConfig;
use crate::framework::profile::PluginName;
use crate::framework::runtime::{Framework, FrameworkError, PreFilterOutcome};
use crate::model::{ClusterState, Pod, UnsatisfiableAction};
use crate::plan::{Eviction, Placement, Plan, Unschedulable};
use crate::plugins::podtopologyspread::PodTopologySpread;
use crate::progress::Progress;
use crate::resources::{
    CPU, EPHEMERAL_STORAGE, MEMORY, PODS, is_extended_resource_name, is_scalar_resource_name,
};

/// The hostname label (`kubernetes.io/hostname`).
pub const HOSTNAME_LABEL: &str = "kubernetes.io/hostname";

/// Options of a batch run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchOptions {
    /// Class order within a priority tier for the greedy.
    pub class_order: ClassOrder,
    /// Let the greedy move pods it placed to make room for pods left over.
    pub relocate: bool,
    /// Also run the sequential scheduler (as `kplace baseline` with the same seed) and return
    /// its plan when it ranks higher ([`plan_rank`]): the plan is then never worse than the
    /// default scheduler's, at the cost of one sequential run.
    pub fallback: bool,
    /// Seed of the sequential path (tie-breaking and preemption's random offset).
    pub seed: u64,
    /// The simulation clock (Unix seconds) for preemption, as in [`BaselineOptions::now`].
    pub now: i64,
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions {
            class_order: ClassOrder::LargestFirst,
            relocate: true,
            fallback: true,
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
    /// The solver rejected its input (an internal error).
    #[error("internal error: {0}")]
    Solver(#[from] kplace_solver::SolverError),
}

/// How a class is placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    /// By the greedy solver, with an optional per-node limit.
    Greedy { max_per_node: Option<u32> },
    /// By the exact sequential path.
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
}

/// The frameworks of one scheduler name: the full profile; the profile without preemption; the
/// profile without NodeResourcesFit's filter (feasibility apart from capacity, which the solver
/// tracks itself); and the profile restricted to the usage-dependent resource scores.
#[derive(Debug)]
struct Frameworks {
    full: Framework,
    no_preemption: Framework,
    no_fit: Framework,
    resources: Framework,
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
        let mut profile = full.profile().clone();
        profile.plugins.score.retain(|(p, _)| is_resource_score(*p));
        profile.plugins.pre_score.retain(|p| is_resource_score(*p));
        let resources = Framework::new(&profile)?;
        Ok(Frameworks { full, no_preemption, no_fit, resources })
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
/// or finally decided (and the sequential fallback run as a bar of its own).
pub fn plan_greedy_with_progress(
    cluster: ClusterState,
    pending: &[Pod],
    config: &SchedulerConfig,
    options: &BatchOptions,
    progress: &Progress,
) -> Result<Plan, BatchError> {
    let started = Instant::now();
    let original = options.fallback.then(|| cluster.clone());
    let order = queue_order(pending);
    let mut position = vec![0usize; pending.len()];
    for (i, &p) in order.iter().enumerate() {
        position[p] = i;
    }

    let pod_classes = classify(pending)?;
    let mut frameworks: BTreeMap<String, Frameworks> = BTreeMap::new();
    for class in &pod_classes.classes {
        let name = &pending[class.representative].scheduler_name;
        if !frameworks.contains_key(name) {
            frameworks.insert(name.clone(), Frameworks::new(config, name)?);
        }
    }
    let unique_hostnames = hostnames_are_unique(&cluster);
    let mut classes: Vec<Class> = Vec::with_capacity(pod_classes.len());
    for (c, class) in pod_classes.classes.iter().enumerate() {
        let mut members = class.members.clone();
        members.sort_by_key(|&m| position[m]);
        let rep = &pending[class.representative];
        let fw = &frameworks[&rep.scheduler_name].full;
        let route = route_of(rep, c, &pod_classes.pod_class, pending, fw, unique_hostnames);
        classes.push(Class { members, priority: rep.priority, route, movable: false });
    }
    mark_movable(&mut classes, &pod_classes, pending, &frameworks);
    // Classes in order of their first pod in the queue; tiers by priority, highest first.
    let mut class_ids: Vec<usize> = (0..classes.len()).collect();
    class_ids.sort_by_key(|&c| classes[c].members.first().map_or(usize::MAX, |&m| position[m]));
    let mut tiers: BTreeMap<std::cmp::Reverse<i32>, Vec<usize>> = BTreeMap::new();
    for c in class_ids {
        tiers.entry(std::cmp::Reverse(classes[c].priority)).or_default().push(c);
    }

    let mut run = Run {
        sched: Baseline::new(
            cluster,
            BaselineOptions { seed: options.seed, score_all_nodes: true, now: options.now },
        ),
        plan: Plan::default(),
        greedy_pods: Vec::new(),
        by_class: BTreeMap::new(),
        version: 0,
        failures: BTreeMap::new(),
        first_pass_failures: BTreeMap::new(),
        evaluate_ms: 0.0,
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
        // 2. The greedy over the simple classes.
        let greedy_pods: usize = tier
            .iter()
            .filter(|&&c| matches!(classes[c].route, Route::Greedy { .. }))
            .map(|&c| classes[c].members.len())
            .sum();
        let leftovers = run.greedy_tier(tier, &classes, pending, &frameworks, options)?;
        task.inc(greedy_pods.saturating_sub(leftovers.len()) as u64);
        rest.extend(leftovers);
        // 3. Everything left, in queue order, with preemption and FitError messages.
        rest.sort_by_key(|&(_, m)| position[m]);
        for (c, m) in rest {
            let fw = &frameworks[&pending[m].scheduler_name].full;
            run.schedule_sequential(fw, c, &pending[m]);
            task.inc(1);
        }
    }
    task.finish();

    let total_ms = started.elapsed().as_secs_f64() * 1000.0;
    let mut plan = run.plan;
    plan.summary = crate::plan::summarize(&plan, &run.sched.cluster, pending);
    plan.summary.timings_ms.evaluate = run.evaluate_ms;
    plan.summary.timings_ms.solve = (total_ms - run.evaluate_ms).max(0.0);
    plan.summary.algorithm = "greedy".to_string();
    plan.summary.backend = "cpu".to_string();

    if let Some(original) = original {
        let seq_start = Instant::now();
        let seq_options =
            BaselineOptions { seed: options.seed, now: options.now, ..Default::default() };
        let mut sequential =
            run_baseline_with_progress(original, pending, config, seq_options, progress)?;
        if plan_rank(&sequential) > plan_rank(&plan) {
            tracing::info!(
                greedy = plan.placements.len(),
                sequential = sequential.placements.len(),
                "the sequential scheduler places more pods than the greedy: using its plan"
            );
            sequential.summary.timings_ms.evaluate = plan.summary.timings_ms.evaluate;
            sequential.summary.timings_ms.solve =
                plan.summary.timings_ms.solve + seq_start.elapsed().as_secs_f64() * 1000.0;
            sequential.summary.algorithm = FALLBACK_ALGORITHM.to_string();
            return Ok(sequential);
        }
        plan.summary.timings_ms.solve += seq_start.elapsed().as_secs_f64() * 1000.0;
    }
    Ok(plan)
}

/// `summary.algorithm` of a plan that comes from the sequential fallback.
pub const FALLBACK_ALGORITHM: &str = "greedy-sequential-fallback";

/// How good a plan is, for the fallback: more pods placed first; then, from the highest
/// priority down, more pods of that priority; then fewer evictions.
pub fn plan_rank(plan: &Plan) -> (usize, Vec<(i32, usize)>, std::cmp::Reverse<usize>) {
    let by_priority: Vec<(i32, usize)> =
        plan.summary.placed_by_priority.iter().rev().map(|(p, n)| (*p, *n)).collect();
    (plan.placements.len(), by_priority, std::cmp::Reverse(plan.evictions.len()))
}

/// Whether every node has a hostname label and no two share a value.
fn hostnames_are_unique(cluster: &ClusterState) -> bool {
    let mut seen = BTreeSet::new();
    cluster.nodes.iter().all(|n| n.labels.get(HOSTNAME_LABEL).is_some_and(|h| seen.insert(h)))
}

/// Decides how class `c`, represented by `rep`, is placed (see the module documentation).
fn route_of(
    rep: &Pod,
    c: usize,
    pod_class: &[u32],
    pending: &[Pod],
    fw: &Framework,
    unique_hostnames: bool,
) -> Route {
    let pts = PodTopologySpread::new(fw.profile().args.pod_topology_spread.clone());
    if !rep.pod_affinity.required.is_empty()
        || !rep.host_ports.is_empty()
        || !pts.constraints(rep, UnsatisfiableAction::DoNotSchedule).is_empty()
    {
        return Route::Sequential;
    }
    let anti = &rep.pod_anti_affinity.required;
    if anti.is_empty() {
        return Route::Greedy { max_per_node: None };
    }
    let self_only = unique_hostnames
        && anti.iter().all(|t| {
            t.topology_key == HOSTNAME_LABEL
                && t.namespaces.is_empty()
                && t.namespace_selector.is_none()
                && t.label_selector.as_ref().is_some_and(|sel| {
                    sel.matches(&rep.labels)
                        && pending
                            .iter()
                            .zip(pod_class)
                            .all(|(p, &pc)| pc as usize == c || !sel.matches(&p.labels))
                })
        });
    if self_only { Route::Greedy { max_per_node: Some(1) } } else { Route::Sequential }
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
            k.movable = matches!(k.route, Route::Greedy { .. })
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
}

impl Run {
    /// Evaluates and solves the greedy classes of one tier (with the movable pods earlier
    /// tiers placed, which relocation may move), adds the placements to the plan and the
    /// cluster, and returns the pods left unplaced as `(class, pending index)`.
    fn greedy_tier(
        &mut self,
        tier: &[usize],
        classes: &[Class],
        pending: &[Pod],
        frameworks: &BTreeMap<String, Frameworks>,
        options: &BatchOptions,
    ) -> Result<Vec<(usize, usize)>, BatchError> {
        let eval_start = Instant::now();
        let to_place: Vec<usize> = tier
            .iter()
            .copied()
            .filter(|&c| matches!(classes[c].route, Route::Greedy { .. }))
            .collect();
        if to_place.is_empty() {
            return Ok(Vec::new());
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

        // Resources: the fixed four, then every extended resource a class asks the solver for.
        let mut names: Vec<String> =
            [CPU, MEMORY, EPHEMERAL_STORAGE, PODS].iter().map(|s| (*s).to_string()).collect();
        let mut requests: Vec<BTreeMap<String, i64>> = Vec::new();
        for rep in &reps {
            let req = solver_requests(rep, &frameworks[&rep.scheduler_name].full);
            for name in req.keys() {
                if !names.contains(name) {
                    names.push(name.clone());
                }
            }
            requests.push(req);
        }
        let mut problem = Problem {
            resources: names.len(),
            nodes: n_nodes,
            classes: Vec::with_capacity(global.len()),
            free: Vec::with_capacity(n_nodes * names.len()),
            feasible: vec![false; global.len() * n_nodes],
            score: vec![0; global.len() * n_nodes],
            initial: Vec::new(),
        };
        for node in &cluster.nodes {
            for name in &names {
                let free = if name == PODS {
                    node.allocatable.allowed_pod_number - node.pods.len() as i64
                } else {
                    node.allocatable.get(name) - node.requested.get(name)
                };
                problem.free.push(free);
            }
        }
        let mut static_part = vec![0i64; global.len() * n_nodes];
        for (k, &c) in global.iter().enumerate() {
            let rep = reps[k];
            let placing = k < to_place.len();
            problem.classes.push(ClassSpec {
                count: if placing {
                    u32::try_from(classes[c].members.len()).unwrap_or(u32::MAX)
                } else {
                    0
                },
                priority: classes[c].priority,
                requests: names.iter().map(|n| requests[k].get(n).copied().unwrap_or(0)).collect(),
                max_per_node: match classes[c].route {
                    Route::Greedy { max_per_node } => max_per_node,
                    Route::Sequential => None,
                },
            });
            if !placing {
                for &g in self.by_class.get(&c).into_iter().flatten() {
                    problem.initial.push(Placed { class: k, node: self.greedy_pods[g].node });
                }
            }
            // Feasibility apart from capacity (the solver tracks capacity), and scores.
            let fws = &frameworks[&rep.scheduler_name];
            let PreFilterOutcome::Proceed(state) = fws.no_fit.pre_filter(rep, cluster) else {
                continue; // Fits nowhere: the repair path words the message.
            };
            let feasible: Vec<usize> = (0..n_nodes)
                .filter(|&n| {
                    let node = &cluster.nodes[n];
                    state.node_names().is_none_or(|names| names.contains(&node.name))
                        && fws.no_fit.filter(&state, rep, node).is_success()
                })
                .collect();
            let Ok(scores) = fws.full.score(rep, cluster, &feasible) else {
                continue; // A plugin error: left to the repair path, which reports it.
            };
            for s in scores {
                let cell = k * n_nodes + s.node;
                problem.feasible[cell] = true;
                problem.score[cell] = s.total;
                let resource: i64 = s
                    .plugins
                    .iter()
                    .filter(|p| is_resource_score(p.plugin))
                    .map(|p| p.normalized * p.weight)
                    .sum();
                static_part[cell] = s.total - resource;
            }
        }
        self.evaluate_ms += eval_start.elapsed().as_secs_f64() * 1000.0;

        let mut applier = Applier {
            cluster: &mut self.sched.cluster,
            plan: &mut self.plan,
            greedy_pods: &mut self.greedy_pods,
            by_class: &mut self.by_class,
            pending,
            global: global.clone(),
            members: global.iter().map(|&c| classes[c].members.as_slice()).collect(),
            next: vec![0; global.len()],
            moving: vec![None; global.len()],
            changed: false,
            reps,
            frameworks,
            static_part,
            nodes: n_nodes,
        };
        let options =
            GreedyOptions { class_order: options.class_order, relocate: options.relocate };
        solve_greedy(&problem, &options, Some(&mut applier))?;
        let next = applier.next;
        if applier.changed {
            self.version += 1;
        }
        let mut leftovers = Vec::new();
        for (k, &c) in to_place.iter().enumerate() {
            leftovers.extend(classes[c].members[next[k]..].iter().map(|&m| (c, m)));
        }
        Ok(leftovers)
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
    global: Vec<usize>,
    /// Per solver class, its pods in queue order.
    members: Vec<&'a [usize]>,
    /// Per solver class, how many of its pods this solve placed.
    next: Vec<usize>,
    /// Per solver class, the pod (index in `greedy_pods`) relocation just took off a node.
    moving: Vec<Option<usize>>,
    /// Whether anything was placed or moved.
    changed: bool,
    reps: Vec<&'a Pod>,
    frameworks: &'a BTreeMap<String, Frameworks>,
    /// Per solver class × node, the part of the score that does not depend on usage.
    static_part: Vec<i64>,
    nodes: usize,
}

impl Applier<'_> {
    fn add_to_cluster(&mut self, m: usize, node: usize) {
        let Some(target) = self.cluster.nodes.get_mut(node) else { return };
        let mut pod = self.pending[m].clone();
        pod.node_name = Some(target.name.clone());
        target.add_pod(Arc::new(pod));
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
        if let Some(n) = self.cluster.nodes.get_mut(node) {
            n.remove_pod(&pod.namespace, &pod.name);
        }
        self.moving[class] = Some(g);
    }

    fn rescore(&mut self, class: usize, node: usize, _free: &[i64]) -> i64 {
        let base = self.static_part.get(class * self.nodes + node).copied().unwrap_or(0);
        let Some(rep) = self.reps.get(class) else { return base };
        let fw = &self.frameworks[&rep.scheduler_name].resources;
        match fw.score(rep, self.cluster, &[node]) {
            Ok(scores) => base + scores.first().map_or(0, |s| s.total),
            Err(_) => base,
        }
    }
}

#[cfg(test)]
mod tests;
