//! The sequential default scheduler, simulated: one pod at a time, as kube-scheduler does it.
//!
//! Input: the cluster model, the pending pods, the scheduler configuration and a seed; output:
//! a [`Plan`]. Counterpart (v1.35): `pkg/scheduler/schedule_one.go` (`schedulePod`,
//! `findNodesThatFitPod`, `findNodesThatPassFilters`, `numFeasibleNodesToFind`,
//! `prioritizeNodes`, the node-score heap), the PrioritySort queue order
//! (`framework/plugins/queuesort/priority_sort.go`) and DefaultPreemption as PostFilter.
//!
//! Ties: v1.35 pops the highest total from a heap whose tie-breaker (`Randomizer`) is only set
//! when extenders score, so equal totals come out in the order of the feasible list — which the
//! parallel filter fills in completion order, i.e. effectively at random. kplace draws the
//! tie-breaker from a generator seeded by `--seed`, so runs are reproducible.
//!
//! Nominations: a pod nominated by a preemption reserves its node's room against pods of equal
//! or lower priority, tries its nominated node first, and may not preempt again while its
//! victims terminate; [`super::queue`] carries preemptions out as upstream does (victims
//! terminating, the preemptor placed on a retry). [`Baseline::schedule_one`] (the batch solver's
//! exact path, `explain`) places a preemptor at once instead.
//!
//! Simplifications, which only matter for timing-dependent behaviour of a live cluster: filters
//! run on one thread in node order (upstream runs them in parallel and may evaluate a few more
//! nodes than it needs before cancelling); retries are [`super::queue`]'s.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::node_order::scheduler_node_order;
use super::preemption::{self, PreemptionOutcome};
use crate::encode::classes::PodSignature;
use crate::eval::{EvalError, Evaluator, Matrix};
use crate::framework::config::SchedulerConfig;
use crate::framework::fit_error::{Diagnosis, FitError};
use crate::framework::profile::{PluginName, Profile};
use crate::framework::runtime::{CycleState, Framework, FrameworkError, PreFilterOutcome};
use crate::framework::{Code, Status};
use crate::model::{ClusterState, Node, Pod};
use crate::plan::Plan;
use crate::progress::Progress;

/// The smallest number of feasible nodes the scheduler looks for (upstream
/// `minFeasibleNodesToFind`).
pub const MIN_FEASIBLE_NODES_TO_FIND: usize = 100;
/// The smallest adaptive percentage (upstream `minFeasibleNodesPercentageToFind`).
pub const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: i64 = 5;
/// The message when the cluster has no nodes (upstream `ErrNoNodesAvailable`).
pub const NO_NODES_AVAILABLE: &str = "no nodes available to schedule pods";

/// `summary.strategy` of a sequential plan (`kplace baseline`).
pub const SEQUENTIAL_STRATEGY: &str = "sequential";

/// When the victims of a preemption leave their node, which decides what the pods queued after
/// the preemptor see: upstream evicts them asynchronously and each stops within its grace
/// period, so kube-scheduler's own plan depends on how fast they stop.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum VictimExit {
    /// After every pending pod's first attempt: victims stop more slowly than the queue drains
    /// (a 30 s grace period against milliseconds a pod; kso `--grace-delay 5s`). The pods
    /// after a preemptor see its victims still there and its nomination reserving its room.
    #[default]
    AfterQueue,
    /// At once (victims that stop on SIGTERM; kso's default `--grace-delay 10ms`): the pods
    /// after a preemptor see the room its victims freed, less its nomination.
    AtOnce,
}

impl VictimExit {
    /// The name `--victims-leave` takes.
    pub fn name(self) -> &'static str {
        match self {
            VictimExit::AfterQueue => "after-queue",
            VictimExit::AtOnce => "at-once",
        }
    }
}

/// Options of a baseline run.
#[derive(Debug, Clone, Default)]
pub struct BaselineOptions {
    /// Seed for tie-breaking among equally scored nodes and for preemption's random offset.
    pub seed: u64,
    /// Score every feasible node instead of sampling (`percentageOfNodesToScore: 100`).
    pub score_all_nodes: bool,
    /// The simulation clock (Unix seconds): the start time of pods that have not started, as
    /// upstream's preemption uses `time.Now()` for them.
    pub now: i64,
    /// Place a preemptor at once, its victims gone (as [`Baseline::schedule_one`] does), rather
    /// than nominate it while they terminate and place it on a retry ([`super::queue`]): a plan
    /// whose evictions each make room for their preemptor (the batch planner's fallback).
    pub immediate_preemption: bool,
    /// When a deferred preemption's victims leave their node.
    pub victims_leave: VictimExit,
}

/// How many feasible nodes to find before scoring (upstream `numFeasibleNodesToFind`).
pub fn num_feasible_nodes_to_find(percentage: Option<i32>, num_all_nodes: usize) -> usize {
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND {
        return num_all_nodes;
    }
    let n = num_all_nodes as i64;
    let mut pct = i64::from(percentage.unwrap_or(0));
    if pct == 0 {
        pct = (50 - n / 125).max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND);
    }
    let num = n * pct / 100;
    if num < MIN_FEASIBLE_NODES_TO_FIND as i64 {
        return MIN_FEASIBLE_NODES_TO_FIND;
    }
    num as usize
}

/// PrioritySort: higher priority first, then earlier creation (the queue's timestamp), then
/// `namespace/name` so that equal keys have a defined order.
pub fn queue_order(pending: &[Pod]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..pending.len()).collect();
    idx.sort_by(|&a, &b| {
        let (pa, pb) = (&pending[a], &pending[b]);
        pb.priority
            .cmp(&pa.priority)
            .then(pa.creation_timestamp.cmp(&pb.creation_timestamp))
            .then_with(|| pa.namespace.cmp(&pb.namespace))
            .then_with(|| pa.name.cmp(&pb.name))
    });
    idx
}

/// The result of one scheduling cycle.
#[derive(Debug)]
pub enum CycleResult {
    /// The pod goes to this node.
    Scheduled(usize),
    /// Preemption made room on this node by evicting these pods.
    Preempted(usize, Vec<Arc<Pod>>),
    /// The pod fits nowhere.
    Unschedulable(FitError),
    /// The cluster has no nodes.
    NoNodes,
    /// A plugin failed (a scheduler error, not an unschedulable outcome).
    Error(String),
}

/// The sequential scheduler's state across pods.
#[derive(Debug)]
pub struct Baseline {
    options: BaselineOptions,
    /// The cluster, updated as pods are assumed and victims removed.
    pub cluster: ClusterState,
    /// The scheduler's node order (shared with each cycle's node list, never copied).
    order: Arc<[usize]>,
    next_start_node_index: usize,
    rng: ChaCha8Rng,
    /// Per pod signature that last fit no node: its verdicts, for the next such pod.
    infeasible: BTreeMap<PodSignature, Infeasible>,
    /// Whether `infeasible` is used (tests compare against the full pass).
    memoize: bool,
    /// The feasible nodes the last cycle scored (its sample), for `--follow`'s tie check.
    last_feasible: Vec<usize>,
    /// Pods nominated to a node (by node index) whose victims are still terminating: they
    /// reserve room against pods of equal or lower priority (upstream's nominator).
    nominated: BTreeMap<usize, Vec<Arc<Pod>>>,
    /// Victims of preemptions still terminating, per node index `(namespace, name)`: still on
    /// their node, marked terminating (upstream: deletionTimestamp and the DisruptionTarget
    /// condition).
    terminating: BTreeMap<usize, Vec<(String, String)>>,
    /// Whether a preemption is only decided (the preemptor nominated, placed later by the
    /// caller) rather than placed at once ([`Baseline::schedule_one`] places it at once and
    /// first checks that the pod fits without its victims).
    deferred_preemption: bool,
}

/// The filter verdicts of a pod signature that fit no node, per node, with the node generation
/// each was computed at. Only kept for pods whose filters read nothing but the pod and the node
/// itself ([`node_local_filters`]), so a verdict stays true until its node changes.
#[derive(Debug)]
struct Infeasible {
    /// Per node index: the generation its verdict was computed at.
    generations: Vec<u64>,
    /// Per node index: its verdict, as an index into `statuses`.
    kinds: Vec<usize>,
    /// The distinct verdicts.
    statuses: Vec<Status>,
    /// Per distinct verdict: how many nodes have it.
    counts: Vec<usize>,
}

impl Infeasible {
    fn intern(&mut self, status: Status) -> usize {
        let kind = match self.statuses.iter().position(|s| *s == status) {
            Some(k) => k,
            None => {
                self.statuses.push(status);
                self.counts.push(0);
                self.statuses.len() - 1
            }
        };
        self.counts[kind] += 1;
        kind
    }
}

/// The framework's Filter status of `pod` on node `n`: the static row's rejection when it has
/// one, else the framework's filters.
fn filter_status(
    fw: &Framework,
    state: &CycleState,
    pod: &Pod,
    row: Option<StaticRow<'_>>,
    n: usize,
    node: &Node,
    nominated: Option<&[Arc<Pod>]>,
) -> Status {
    match (row.and_then(|r| r.rejection(n)), nominated) {
        (Some(status), _) => status,
        (None, Some(pods)) => fw.filter_with_nominated(state, pod, node, pods),
        (None, None) => fw.filter(state, pod, node),
    }
}

/// Whether the filter plugin's verdict on a node reads only the pod and that node: the
/// [`STATIC_FILTERS`], and NodePorts and NodeResourcesFit (the node's own pods).
fn node_local(plugin: PluginName) -> bool {
    STATIC_FILTERS.contains(&plugin)
        || matches!(plugin, PluginName::NodePorts | PluginName::NodeResourcesFit)
}

/// Whether every filter that runs for this cycle is node-local: the profile's other evaluated
/// filters (InterPodAffinity, PodTopologySpread) returned `Skip` from PreFilter.
fn node_local_filters(fw: &Framework, state: &CycleState) -> bool {
    fw.profile()
        .plugins
        .filter
        .iter()
        .all(|&p| !p.evaluated() || state.skips_filter(p) || node_local(p))
}

impl Baseline {
    /// A scheduler over `cluster`.
    pub fn new(cluster: ClusterState, options: BaselineOptions) -> Self {
        let order: Arc<[usize]> = scheduler_node_order(&cluster.nodes).into();
        let rng = ChaCha8Rng::seed_from_u64(options.seed);
        Baseline {
            options,
            cluster,
            order,
            next_start_node_index: 0,
            rng,
            infeasible: BTreeMap::new(),
            memoize: true,
            last_feasible: Vec::new(),
            nominated: BTreeMap::new(),
            terminating: BTreeMap::new(),
            deferred_preemption: false,
        }
    }

    /// A scheduler whose preemptions are carried out as upstream's are: [`Baseline::decide_with`]
    /// nominates nothing itself, its caller nominates the preemptor ([`Baseline::preempt`]),
    /// and the pod is placed once its victims are gone ([`Baseline::terminate_victims`]).
    pub fn with_deferred_preemption(cluster: ClusterState, options: BaselineOptions) -> Self {
        let mut sched = Baseline::new(cluster, options);
        sched.deferred_preemption = true;
        sched
    }

    /// Whether preemptions are deferred ([`Baseline::with_deferred_preemption`]).
    pub fn defers_preemption(&self) -> bool {
        self.deferred_preemption
    }

    /// The node `pod` is nominated to, if any.
    pub fn nominated_node(&self, pod: &Pod) -> Option<usize> {
        self.nominated.iter().find_map(|(&n, pods)| {
            pods.iter().any(|p| p.namespace == pod.namespace && p.name == pod.name).then_some(n)
        })
    }

    /// Starts a preemption decided by [`Baseline::decide_with`] or followed: the victims on
    /// `node` are evicted ([`Baseline::evict`]) and `pod` is nominated to `node`. Victims
    /// already terminating are not evicted again (upstream skips the API call for them).
    /// Returns the victims newly evicted.
    pub fn preempt(&mut self, pod: &Pod, node: usize, victims: &[Arc<Pod>]) -> Vec<Arc<Pod>> {
        let mut evicted = Vec::new();
        for v in victims {
            if self.evict(node, &v.namespace, &v.name) {
                evicted.push(Arc::clone(v));
            }
        }
        self.nominate(node, pod);
        evicted
    }

    /// Evicts the pod `namespace/name` on `node` by preemption, as
    /// [`BaselineOptions::victims_leave`] says: it terminates there, keeping its room until
    /// [`Baseline::terminate_victims`] ([`Baseline::mark_terminating`]), or leaves at once.
    /// `false` when it is not there or already terminating.
    pub fn evict(&mut self, node: usize, namespace: &str, name: &str) -> bool {
        match self.options.victims_leave {
            VictimExit::AfterQueue => self.mark_terminating(node, namespace, name),
            VictimExit::AtOnce => {
                !self.is_terminating(node, namespace, name)
                    && self
                        .cluster
                        .nodes
                        .get_mut(node)
                        .and_then(|n| n.remove_pod(namespace, name))
                        .is_some()
            }
        }
    }

    /// Marks the pod `namespace/name` on `node` terminating by preemption; `false` when it is
    /// not there or already terminating. Upstream's cache updates the pod, which moves it to
    /// the end of its node's pod list.
    pub fn mark_terminating(&mut self, node: usize, namespace: &str, name: &str) -> bool {
        if self.is_terminating(node, namespace, name) {
            return false;
        }
        let Some(pod) =
            self.cluster.nodes.get_mut(node).and_then(|n| n.remove_pod(namespace, name))
        else {
            return false;
        };
        let mut pod = Arc::unwrap_or_clone(pod);
        pod.terminating = true;
        self.cluster.nodes[node].add_pod(Arc::new(pod));
        self.terminating.entry(node).or_default().push((namespace.to_string(), name.to_string()));
        true
    }

    /// Whether the pod `namespace/name` on `node` is a victim still terminating.
    pub fn is_terminating(&self, node: usize, namespace: &str, name: &str) -> bool {
        self.terminating
            .get(&node)
            .is_some_and(|pods| pods.iter().any(|(ns, nm)| ns == namespace && nm == name))
    }

    /// Whether victims of a preemption are still terminating.
    pub fn has_terminating_victims(&self) -> bool {
        !self.terminating.is_empty()
    }

    /// Marks the terminating victims terminating (`true`) or running (`false`), in place.
    /// kube-scheduler sees a victim terminating only once its deletion reaches the scheduler's
    /// informer, asynchronously: pods scheduled right after a preemption may still count it
    /// (PodTopologySpread does not count terminating pods).
    pub fn set_victims_terminating(&mut self, terminating: bool) {
        for (n, namespace, name) in self
            .terminating
            .iter()
            .flat_map(|(n, pods)| pods.iter().map(move |(ns, nm)| (n, ns, nm)))
        {
            let node = &mut self.cluster.nodes[*n];
            if let Some(p) =
                node.pods.iter_mut().find(|p| &p.namespace == namespace && &p.name == name)
            {
                let mut pod = Pod::clone(p);
                pod.terminating = terminating;
                *p = Arc::new(pod);
                node.generation = crate::model::Generation::next();
            }
        }
    }

    /// The victims `pod` would evict on `node` (upstream `SelectVictimsOnNode` with the
    /// nominated pods counted), victims already terminating left out.
    pub fn victims_on(
        &self,
        fw: &Framework,
        pod: &Pod,
        node: usize,
    ) -> Result<Vec<Arc<Pod>>, Status> {
        let oracle = fw.oracle(pod, &self.cluster).with_nominated(&self.nominated);
        let victims = preemption::select_victims_on_node(
            pod,
            &self.cluster,
            node,
            &oracle,
            self.options.now,
        )?;
        Ok(victims
            .pods
            .into_iter()
            .filter(|p| !self.is_terminating(node, &p.namespace, &p.name))
            .collect())
    }

    /// Whether victims of a preemption are still terminating on `node`.
    pub fn has_terminating_victims_on(&self, node: usize) -> bool {
        self.terminating.contains_key(&node)
    }

    /// The terminating victims leave their nodes (their grace period is over).
    pub fn terminate_victims(&mut self) {
        for (node, pods) in std::mem::take(&mut self.terminating) {
            for (namespace, name) in pods {
                self.cluster.nodes[node].remove_pod(&namespace, &name);
            }
        }
    }

    /// The victim `namespace/name` on `node` leaves it, terminating or not.
    pub fn remove_victim(&mut self, node: usize, namespace: &str, name: &str) {
        if let Some(pods) = self.terminating.get_mut(&node) {
            pods.retain(|(ns, nm)| !(ns == namespace && nm == name));
            if pods.is_empty() {
                self.terminating.remove(&node);
            }
        }
        if let Some(n) = self.cluster.nodes.get_mut(node) {
            n.remove_pod(namespace, name);
        }
    }

    /// `PodEligibleToPreemptOthers`' second rule: a pod nominated to a node that its filters
    /// did not find unresolvable may not preempt while a lower-priority pod there is still
    /// terminating by preemption.
    fn waits_for_victims(&self, pod: &Pod, diagnosis: &Diagnosis) -> bool {
        let Some(n) = self.nominated_node(pod) else { return false };
        let code = diagnosis.status_of(n).map_or(Code::UnschedulableAndUnresolvable, |s| s.code);
        code != Code::UnschedulableAndUnresolvable
            && self.cluster.nodes[n]
                .pods
                .iter()
                .any(|p| p.priority < pod.priority && self.is_terminating(n, &p.namespace, &p.name))
    }

    /// Nominates `pod` to node `node`: until [`Baseline::clear_nomination`], the filters of
    /// pods of equal or lower priority count it on that node.
    pub fn nominate(&mut self, node: usize, pod: &Pod) {
        self.clear_nomination(&pod.namespace, &pod.name);
        let mut p = pod.clone();
        p.node_name = Some(self.cluster.nodes[node].name.clone());
        self.nominated.entry(node).or_default().push(Arc::new(p));
    }

    /// Drops the nomination of the pod `namespace/name`, if any.
    pub fn clear_nomination(&mut self, namespace: &str, name: &str) {
        for pods in self.nominated.values_mut() {
            pods.retain(|p| !(p.namespace == namespace && p.name == name));
        }
        self.nominated.retain(|_, pods| !pods.is_empty());
    }

    /// Runs one scheduling cycle for `pod` and applies its outcome to the cluster.
    pub fn schedule_one(&mut self, fw: &Framework, pod: &Pod) -> CycleResult {
        self.schedule_one_with(fw, pod, None)
    }

    /// [`Baseline::schedule_one`], with the verdicts of the profile's leading static filters on
    /// every node already evaluated as a matrix row ([`StaticFilters`]): a node the row rejects
    /// gets the row's status without running the framework's filters; the others run them.
    pub fn schedule_one_with(
        &mut self,
        fw: &Framework,
        pod: &Pod,
        row: Option<StaticRow<'_>>,
    ) -> CycleResult {
        let result = self.decide_with(fw, pod, row);
        match &result {
            CycleResult::Scheduled(n) => self.assume(pod, *n),
            CycleResult::Preempted(n, victims) => {
                for v in victims {
                    self.cluster.nodes[*n].remove_pod(&v.namespace, &v.name);
                }
                self.assume(pod, *n);
            }
            _ => {}
        }
        result
    }

    /// One scheduling cycle's decision for `pod`, without applying it to the cluster: the
    /// scheduler's own state (sampling start index, random draws, memo) advances as in
    /// [`Baseline::schedule_one_with`], the pods on the nodes do not change.
    pub fn decide_with(
        &mut self,
        fw: &Framework,
        pod: &Pod,
        row: Option<StaticRow<'_>>,
    ) -> CycleResult {
        self.last_feasible.clear();
        let num_nodes = self.order.len();
        if num_nodes == 0 {
            return CycleResult::NoNodes;
        }
        let mut diagnosis = Diagnosis::default();
        let state = match fw.pre_filter(pod, &self.cluster) {
            PreFilterOutcome::Rejected(status) => {
                diagnosis.pre_filter_msg = Some(status.reasons.join(", "));
                diagnosis.add_plugin_status(&status);
                diagnosis.absent_nodes_status = Some(status);
                return self.post_filter(fw, pod, diagnosis);
            }
            PreFilterOutcome::Proceed(state) => state,
        };

        // Nodes to evaluate: all, or those PreFilter restricted the pod to.
        let nodes: Arc<[usize]> = match state.node_names() {
            None => Arc::clone(&self.order),
            Some(names) => {
                let subset: Vec<usize> = self
                    .order
                    .iter()
                    .copied()
                    .filter(|&i| names.contains(&self.cluster.nodes[i].name))
                    .collect();
                let plugins = state.pre_filter_restricting_plugins().join(" ");
                diagnosis.absent_nodes_status = Some(Status::new(
                    Code::UnschedulableAndUnresolvable,
                    [format!("node(s) didn't satisfy plugin(s) [{plugins}]")],
                ));
                subset.into()
            }
        };

        // A pod nominated by an earlier preemption tries its nominated node first and goes
        // there when it fits (upstream `evaluateNominatedNode`), without scoring.
        if let Some(n) = self.nominated_node(pod).filter(|n| nodes.contains(n)) {
            let nominated = self.nominated.get(&n).map(Vec::as_slice);
            let node = &self.cluster.nodes[n];
            if filter_status(fw, &state, pod, row, n, node, nominated).is_success() {
                self.last_feasible = vec![n];
                return CycleResult::Scheduled(n);
            }
        }

        let mut num_to_find = if self.options.score_all_nodes {
            nodes.len()
        } else {
            num_feasible_nodes_to_find(fw.percentage_of_nodes_to_score(), nodes.len())
        };
        if !fw.has_score_plugins() {
            num_to_find = 1;
        }

        // A pod whose signature fit no node last time, with node-local filters only: re-run
        // the filters on the nodes that changed since; if it still fits nowhere, the outcome is
        // the full pass's (every node evaluated, the start index unchanged).
        let memoizable = self.memoize
            && self.nominated.is_empty()
            && state.node_names().is_none()
            && node_local_filters(fw, &state);
        if memoizable && !self.infeasible.is_empty() {
            let key = PodSignature::of(pod);
            if let Some(result) = self.reuse_infeasible(fw, pod, &state, row, &key) {
                return result;
            }
        }

        // Filter until enough feasible nodes are found; rejected nodes only get their statuses
        // (a second pass over them) when none is feasible, since only then are they reported.
        let mut feasible = Vec::new();
        let mut rejected = Vec::new();
        if !nodes.is_empty() {
            for i in 0..nodes.len() {
                let n = nodes[(self.next_start_node_index + i) % nodes.len()];
                let node = &self.cluster.nodes[n];
                let passes = !row.is_some_and(|r| r.rejects(n))
                    && match self.nominated.get(&n) {
                        None => fw.passes(&state, pod, node),
                        Some(pods) => {
                            fw.filter_with_nominated(&state, pod, node, pods).is_success()
                        }
                    };
                if passes {
                    feasible.push(n);
                    if feasible.len() >= num_to_find {
                        break;
                    }
                } else {
                    rejected.push(n);
                }
            }
        }
        let processed = feasible.len() + rejected.len();
        self.next_start_node_index = (self.next_start_node_index + processed) % num_nodes;
        if feasible.is_empty() {
            for &n in &rejected {
                let nominated = self.nominated.get(&n).map(Vec::as_slice);
                let status =
                    filter_status(fw, &state, pod, row, n, &self.cluster.nodes[n], nominated);
                diagnosis.add_plugin_status(&status);
                diagnosis.node_statuses.insert(n, status);
            }
        }

        let chosen = match feasible.len() {
            0 => {
                if memoizable {
                    self.remember_infeasible(PodSignature::of(pod), &diagnosis);
                }
                return self.post_filter(fw, pod, diagnosis);
            }
            1 => feasible[0],
            _ => {
                let totals = match fw.score_totals(pod, &self.cluster, &feasible) {
                    Ok(t) => t,
                    Err(status) => return CycleResult::Error(status.reasons.join(", ")),
                };
                // Upstream pops a max-heap on (total score, random): a uniform choice among ties.
                let mut best: Option<(i64, u64, usize)> = None;
                for (&total, &node) in totals.iter().zip(&feasible) {
                    let r: u64 = self.rng.random();
                    let key = (total, r, node);
                    if best.is_none_or(|b| (key.0, key.1) > (b.0, b.1)) {
                        best = Some(key);
                    }
                }
                match best {
                    Some((_, _, node)) => node,
                    None => feasible[0],
                }
            }
        };
        self.last_feasible = feasible;
        CycleResult::Scheduled(chosen)
    }

    /// Keeps the verdicts of a full pass that found no feasible node (every node evaluated).
    fn remember_infeasible(&mut self, key: PodSignature, diagnosis: &Diagnosis) {
        let n = self.cluster.nodes.len();
        if diagnosis.node_statuses.len() != n {
            return;
        }
        let mut memo = Infeasible {
            generations: Vec::with_capacity(n),
            kinds: Vec::with_capacity(n),
            statuses: Vec::new(),
            counts: Vec::new(),
        };
        for (&i, status) in &diagnosis.node_statuses {
            memo.generations.push(self.cluster.nodes[i].generation.get());
            let kind = memo.intern(status.clone());
            memo.kinds.push(kind);
        }
        self.infeasible.insert(key, memo);
    }

    /// The cycle's outcome from the verdicts remembered for `key`, re-running the filters on
    /// the nodes whose generation changed; `None` (and the memo dropped) when there is none or
    /// some node now fits, so the full pass runs.
    fn reuse_infeasible(
        &mut self,
        fw: &Framework,
        pod: &Pod,
        state: &CycleState,
        row: Option<StaticRow<'_>>,
        key: &PodSignature,
    ) -> Option<CycleResult> {
        let mut memo = self.infeasible.remove(key)?;
        let num_nodes = self.cluster.nodes.len();
        if memo.generations.len() != num_nodes {
            return None;
        }
        let mut potential = 0;
        let mut victims_possible = false;
        for (n, node) in self.cluster.nodes.iter().enumerate() {
            let generation = node.generation.get();
            if memo.generations[n] != generation {
                let status = filter_status(fw, state, pod, row, n, node, None);
                if status.is_success() {
                    return None;
                }
                memo.counts[memo.kinds[n]] -= 1;
                memo.kinds[n] = memo.intern(status);
                memo.generations[n] = generation;
            }
            if memo.statuses[memo.kinds[n]].code == Code::Unschedulable {
                potential += 1;
                victims_possible |= node.lowest_priority < pod.priority;
            }
        }

        let mut diagnosis = Diagnosis::default();
        for (status, &count) in memo.statuses.iter().zip(&memo.counts) {
            if count > 0 {
                diagnosis.add_plugin_status(status);
                diagnosis.grouped_statuses.push((status.clone(), count));
            }
        }
        if fw.preemption_enabled() && victims_possible {
            // Preemption reads each node's verdict: list them.
            diagnosis.grouped_statuses.clear();
            for (n, &kind) in memo.kinds.iter().enumerate() {
                diagnosis.node_statuses.insert(n, memo.statuses[kind].clone());
            }
            self.infeasible.insert(key.clone(), memo);
            return Some(self.post_filter(fw, pod, diagnosis));
        }
        let preemption = fw.preemption_enabled().then(|| {
            preemption::preempt_without_victims(
                pod,
                num_nodes,
                potential,
                &fw.preemption_args(),
                &mut self.rng,
            )
            .status()
        });
        diagnosis.post_filter_msg = fw.post_filter_msg(preemption.as_ref());
        self.infeasible.insert(key.clone(), memo);
        Some(CycleResult::Unschedulable(FitError { num_all_nodes: num_nodes, diagnosis }))
    }

    fn post_filter(&mut self, fw: &Framework, pod: &Pod, mut diagnosis: Diagnosis) -> CycleResult {
        let num_all_nodes = self.cluster.nodes.len();
        // After a PreFilter rejection that ended PreFilter before DynamicResources' PreFilter,
        // that plugin's PostFilter errs (no state), which ends the PostFilter plugins.
        let rejection =
            diagnosis.pre_filter_msg.as_ref().and(diagnosis.absent_nodes_status.as_ref());
        let dra_missing = rejection.is_some_and(|s| fw.pre_filter_rejection_skips_dra(s));
        if rejection.is_some_and(|s| !fw.preemption_runs_after_pre_filter(s)) {
            diagnosis.post_filter_msg = fw.post_filter_msg_after(None, dra_missing);
            return CycleResult::Unschedulable(FitError { num_all_nodes, diagnosis });
        }
        if fw.preemption_enabled() {
            let oracle = fw.oracle(pod, &self.cluster).with_nominated(&self.nominated);
            let args = fw.preemption_args();
            let outcome = if self.waits_for_victims(pod, &diagnosis) {
                preemption::ineligible(preemption::NOT_ELIGIBLE_TERMINATING)
            } else {
                preemption::preempt(
                    pod,
                    &self.cluster,
                    &diagnosis,
                    &args,
                    &oracle,
                    self.options.now,
                    &mut self.rng,
                )
            };
            drop(oracle);
            match outcome {
                PreemptionOutcome::Preempted { node, victims, .. } if self.deferred_preemption => {
                    // Victims already terminating are not evicted again.
                    let victims = victims
                        .into_iter()
                        .filter(|v| !self.is_terminating(node, &v.namespace, &v.name))
                        .collect();
                    return CycleResult::Preempted(node, victims);
                }
                PreemptionOutcome::Preempted { node, victims, .. } => {
                    // Upstream nominates the node and schedules the pod again once the victims
                    // are gone; kplace places it at once, so it first runs that next cycle's
                    // PreFilter and Filter on the cluster without the victims. (Preemption's
                    // incremental state can disagree with a fresh PreFilter, e.g. a terminating
                    // victim PodTopologySpread never counted.) If the pod still does not fit,
                    // nothing is evicted and the pod stays pending with the filter's message.
                    let mut after = self.cluster.clone();
                    for v in &victims {
                        after.nodes[node].remove_pod(&v.namespace, &v.name);
                    }
                    let fits = match fw.pre_filter(pod, &after) {
                        PreFilterOutcome::Proceed(state) => {
                            fw.filter(&state, pod, &after.nodes[node]).is_success()
                        }
                        PreFilterOutcome::Rejected(_) => false,
                    };
                    if !fits {
                        return CycleResult::Unschedulable(FitError { num_all_nodes, diagnosis });
                    }
                    return CycleResult::Preempted(node, victims);
                }
                outcome => {
                    // A failed preemption clears the pod's nomination (upstream nominates
                    // ""); an ineligible pod keeps it.
                    if !matches!(outcome, PreemptionOutcome::Ineligible { .. }) {
                        self.clear_nomination(&pod.namespace, &pod.name);
                    }
                    diagnosis.post_filter_msg =
                        fw.post_filter_msg_after(Some(&outcome.status()), dra_missing);
                }
            }
        } else {
            diagnosis.post_filter_msg = fw.post_filter_msg_after(None, dra_missing);
        }
        CycleResult::Unschedulable(FitError { num_all_nodes, diagnosis })
    }

    /// The feasible nodes the last [`Baseline::decide_with`] scored (empty unless it placed the
    /// pod on a node of several feasible ones, or one).
    pub fn last_feasible(&self) -> &[usize] {
        &self.last_feasible
    }

    /// Binds `pod` to `node` in the simulated cluster (upstream's assume).
    pub fn assume(&mut self, pod: &Pod, node: usize) {
        if !self.nominated.is_empty() {
            self.clear_nomination(&pod.namespace, &pod.name);
        }
        let mut placed = pod.clone();
        placed.node_name = Some(self.cluster.nodes[node].name.clone());
        self.cluster.nodes[node].add_pod(Arc::new(placed));
    }
}

/// The filter plugins whose verdict on a node never changes while pods are placed and evicted:
/// they read only the node object and the pod's spec.
pub const STATIC_FILTERS: [PluginName; 4] = [
    PluginName::NodeUnschedulable,
    PluginName::NodeName,
    PluginName::TaintToleration,
    PluginName::NodeAffinity,
];

/// The most cells of one matrix evaluation of [`StaticFilters::evaluate`] (classes are
/// evaluated in chunks below it).
const STATIC_CHUNK_CELLS: usize = 1 << 22;

/// The verdicts of a profile's leading static filters — the filter plugins it runs first,
/// before any plugin whose verdict depends on usage — for every pending pod's class on every
/// node, evaluated as class × node matrices by an [`Evaluator`] (CPU or GPU) once for the
/// whole run. Those verdicts cannot change while pods are placed or evicted, and the framework
/// runs these plugins first and stops at the first failure, so a node they reject gets exactly
/// the status the framework would return: the sequential scheduler then runs the framework's
/// filters only on the nodes that pass them. Results are the same on every backend, and the
/// same as without a matrix.
#[derive(Debug, Default)]
pub struct StaticFilters {
    /// Per scheduler name: the chunks' matrices (filter words only).
    matrices: Vec<Matrix>,
    /// Per pending pod: `(matrix, class)`, when its profile has a static prefix.
    rows: Vec<Option<(usize, usize)>>,
}

/// One pod's row of [`StaticFilters`].
#[derive(Debug, Clone, Copy)]
pub struct StaticRow<'a> {
    matrix: &'a Matrix,
    class: usize,
}

impl StaticRow<'_> {
    /// Whether a static filter rejects node `n` ([`StaticRow::rejection`] is `Some`).
    pub fn rejects(&self, n: usize) -> bool {
        n < self.matrix.num_nodes && !self.matrix.feasible(self.class, n)
    }

    /// The status the framework's Filter returns on node `n` when a static filter rejects it,
    /// or `None` when they all pass (the framework's filters must then run).
    pub fn rejection(&self, n: usize) -> Option<Status> {
        if n >= self.matrix.num_nodes || self.matrix.feasible(self.class, n) {
            return None;
        }
        Some(self.matrix.filter_status(self.class, n))
    }
}

impl StaticFilters {
    /// Evaluates the leading static filters of each pending pod's profile on `evaluator`.
    /// Profiles whose first evaluated filter is not static get no rows.
    pub fn evaluate(
        cluster: &ClusterState,
        pending: &[Pod],
        frameworks: &BTreeMap<String, Framework>,
        evaluator: &mut Evaluator,
    ) -> Result<StaticFilters, EvalError> {
        let mut out = StaticFilters { matrices: Vec::new(), rows: vec![None; pending.len()] };
        let n_nodes = cluster.nodes.len().max(1);
        for (name, fw) in frameworks {
            let Some(profile) = static_profile(fw.profile()) else { continue };
            // This profile's pods, grouped by class so that chunks hold whole classes.
            let mine: Vec<usize> =
                (0..pending.len()).filter(|&i| &pending[i].scheduler_name == name).collect();
            let mine_pods: Vec<Pod> = mine.iter().map(|&i| pending[i].clone()).collect();
            let classes = crate::encode::classes::classify(&mine_pods)?;
            let per_chunk = (STATIC_CHUNK_CELLS / n_nodes).max(1);
            for chunk in classes.classes.chunks(per_chunk) {
                let reps: Vec<Pod> =
                    chunk.iter().map(|c| mine_pods[c.representative].clone()).collect();
                let enc = crate::encode::encode(cluster, &reps)?;
                let mut m = evaluator.evaluate(&profile, cluster, &reps, &enc)?;
                // Only the filter words are read: drop the score planes.
                m.scores.clear();
                m.total = Vec::new();
                m.fit_insufficient = Vec::new();
                let at = out.matrices.len();
                for (k, class) in chunk.iter().enumerate() {
                    let Some(&row) = enc.classes.pod_class.get(k) else { continue };
                    for &member in &class.members {
                        out.rows[mine[member]] = Some((at, row as usize));
                    }
                }
                out.matrices.push(m);
            }
        }
        Ok(out)
    }

    /// The row of pending pod `i`, if its profile has static filters.
    pub fn row(&self, i: usize) -> Option<StaticRow<'_>> {
        let (m, class) = self.rows.get(i).copied().flatten()?;
        Some(StaticRow { matrix: self.matrices.get(m)?, class })
    }
}

/// `profile` cut to its leading static filters (and their PreFilter, without scoring), or
/// `None` when its first evaluated filter is not static.
fn static_profile(profile: &Profile) -> Option<Profile> {
    let prefix: Vec<PluginName> = profile
        .plugins
        .filter
        .iter()
        .copied()
        .filter(|p| p.evaluated())
        .take_while(|p| STATIC_FILTERS.contains(p))
        .collect();
    if prefix.is_empty() {
        return None;
    }
    let mut cut = profile.clone();
    cut.plugins.pre_filter.retain(|p| prefix.contains(p));
    cut.plugins.filter = prefix;
    cut.plugins.pre_score.clear();
    cut.plugins.score.clear();
    Some(cut)
}

/// Runs the sequential scheduler over every pending pod and returns the plan. Fails only when a
/// profile's plugins cannot be built from its arguments.
pub fn run_baseline(
    cluster: ClusterState,
    pending: &[Pod],
    config: &SchedulerConfig,
    options: BaselineOptions,
) -> Result<Plan, FrameworkError> {
    run_baseline_with_progress(cluster, pending, config, options, &Progress::hidden())
}

/// [`run_baseline`], reporting each pod decided as one step of a `progress` bar.
pub fn run_baseline_with_progress(
    cluster: ClusterState,
    pending: &[Pod],
    config: &SchedulerConfig,
    options: BaselineOptions,
    progress: &Progress,
) -> Result<Plan, FrameworkError> {
    let frameworks = frameworks_for(config, pending)?;
    let statics = StaticFilters::default();
    Ok(run_with(cluster, pending, &frameworks, options, progress, &statics, (0.0, "cpu".into())))
}

/// The framework of every scheduler name of `pending`.
fn frameworks_for(
    config: &SchedulerConfig,
    pending: &[Pod],
) -> Result<BTreeMap<String, Framework>, FrameworkError> {
    let mut frameworks: BTreeMap<String, Framework> = BTreeMap::new();
    for pod in pending {
        if !frameworks.contains_key(&pod.scheduler_name) {
            let fw = Framework::for_scheduler(config, &pod.scheduler_name)?;
            frameworks.insert(pod.scheduler_name.clone(), fw);
        }
    }
    Ok(frameworks)
}

/// Why a baseline run failed.
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    /// A profile's plugins could not be built from its arguments.
    #[error(transparent)]
    Framework(#[from] FrameworkError),
    /// The static filters' matrices could not be evaluated (e.g. the GPU failed).
    #[error("evaluation: {0}")]
    Eval(#[from] EvalError),
}

/// [`run_baseline_with_progress`] with the profiles' leading static filters evaluated as
/// matrices by `evaluator` ([`StaticFilters`]): the same plan, with the filter work on the
/// nodes they reject done on the evaluator's backend, in bulk, once.
pub fn run_baseline_on(
    cluster: ClusterState,
    pending: &[Pod],
    config: &SchedulerConfig,
    options: BaselineOptions,
    progress: &Progress,
    evaluator: &mut Evaluator,
) -> Result<Plan, BaselineError> {
    let frameworks = frameworks_for(config, pending)?;
    let start = Instant::now();
    let statics = StaticFilters::evaluate(&cluster, pending, &frameworks, evaluator)?;
    let evaluate = (start.elapsed().as_secs_f64() * 1000.0, evaluator.describe());
    Ok(run_with(cluster, pending, &frameworks, options, progress, &statics, evaluate))
}

/// The sequential run, with `evaluate`: the time the static filters took and the backend.
///
/// Preemption is carried out as upstream carries it out (see [`super::queue::run_cycles`]).
fn run_with(
    cluster: ClusterState,
    pending: &[Pod],
    frameworks: &BTreeMap<String, Framework>,
    options: BaselineOptions,
    progress: &Progress,
    statics: &StaticFilters,
    evaluate: (f64, String),
) -> Plan {
    let started = Instant::now();
    let (evaluate_ms, backend) = evaluate;
    let task = progress.bar("baseline: pods", pending.len() as u64);
    let mut sched = if options.immediate_preemption {
        Baseline::new(cluster, options)
    } else {
        Baseline::with_deferred_preemption(cluster, options)
    };
    let mut plan =
        super::queue::run_cycles(&mut sched, pending, frameworks, statics, &|| task.inc(1));
    task.finish();
    let solve_ms = started.elapsed().as_secs_f64() * 1000.0;
    plan.summary = crate::plan::summarize(&plan, &sched.cluster, pending);
    plan.summary.timings_ms.evaluate = evaluate_ms;
    plan.summary.timings_ms.solve = solve_ms;
    plan.summary.algorithm = "baseline".to_string();
    plan.summary.strategy = SEQUENTIAL_STRATEGY.to_string();
    plan.summary.backend = backend;
    plan
}

#[cfg(test)]
mod tests;

/// The memo of infeasible signatures never changes an outcome: runs with and without it agree
/// pod by pod, on random clusters where pods fit nowhere, nodes fill up, preemption frees nodes
/// and inter-pod terms switch the memo off for some cycles.
#[cfg(test)]
mod memo_tests;
