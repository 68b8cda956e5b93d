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
//! Simplifications, all of which only matter for timing-dependent behaviour of a live cluster:
//! filters run on one thread in node order (upstream runs them in parallel and may evaluate a few
//! more nodes than it needs before cancelling); each pod is attempted once, in queue order (a live
//! scheduler retries unschedulable pods when the cluster changes); a preemptor is placed on its
//! nominated node at once, with its victims removed (a live scheduler waits for the victims to
//! terminate and schedules the pod again, normally onto that node).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::node_order::scheduler_node_order;
use super::preemption::{self, PreemptionOutcome};
use crate::framework::config::SchedulerConfig;
use crate::framework::fit_error::{Diagnosis, FitError};
use crate::framework::runtime::{Framework, FrameworkError, PreFilterOutcome};
use crate::framework::{Code, Status};
use crate::model::{ClusterState, Pod};
use crate::plan::{Eviction, Placement, Plan, Unschedulable};
use crate::progress::Progress;

/// The smallest number of feasible nodes the scheduler looks for (upstream
/// `minFeasibleNodesToFind`).
pub const MIN_FEASIBLE_NODES_TO_FIND: usize = 100;
/// The smallest adaptive percentage (upstream `minFeasibleNodesPercentageToFind`).
pub const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: i64 = 5;
/// The message when the cluster has no nodes (upstream `ErrNoNodesAvailable`).
pub const NO_NODES_AVAILABLE: &str = "no nodes available to schedule pods";

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
    order: Vec<usize>,
    next_start_node_index: usize,
    rng: ChaCha8Rng,
}

impl Baseline {
    /// A scheduler over `cluster`.
    pub fn new(cluster: ClusterState, options: BaselineOptions) -> Self {
        let order = scheduler_node_order(&cluster.nodes);
        let rng = ChaCha8Rng::seed_from_u64(options.seed);
        Baseline { options, cluster, order, next_start_node_index: 0, rng }
    }

    /// Runs one scheduling cycle for `pod` and applies its outcome to the cluster.
    pub fn schedule_one(&mut self, fw: &Framework, pod: &Pod) -> CycleResult {
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
        let nodes: Vec<usize> = match state.node_names() {
            None => self.order.clone(),
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
                subset
            }
        };

        let mut num_to_find = if self.options.score_all_nodes {
            nodes.len()
        } else {
            num_feasible_nodes_to_find(fw.percentage_of_nodes_to_score(), nodes.len())
        };
        if !fw.has_score_plugins() {
            num_to_find = 1;
        }

        let mut feasible = Vec::new();
        if !nodes.is_empty() {
            for i in 0..nodes.len() {
                let n = nodes[(self.next_start_node_index + i) % nodes.len()];
                let status = fw.filter(&state, pod, &self.cluster.nodes[n]);
                if status.is_success() {
                    feasible.push(n);
                    if feasible.len() >= num_to_find {
                        break;
                    }
                } else {
                    diagnosis.add_plugin_status(&status);
                    diagnosis.node_statuses.insert(n, status);
                }
            }
        }
        let processed = feasible.len() + diagnosis.node_statuses.len();
        self.next_start_node_index = (self.next_start_node_index + processed) % num_nodes;

        let chosen = match feasible.len() {
            0 => return self.post_filter(fw, pod, diagnosis),
            1 => feasible[0],
            _ => {
                let scores = match fw.score(pod, &self.cluster, &feasible) {
                    Ok(s) => s,
                    Err(status) => return CycleResult::Error(status.reasons.join(", ")),
                };
                // Upstream pops a max-heap on (total score, random): a uniform choice among ties.
                let mut best: Option<(i64, u64, usize)> = None;
                for s in &scores {
                    let r: u64 = self.rng.random();
                    let key = (s.total, r, s.node);
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
        self.assume(pod, chosen);
        CycleResult::Scheduled(chosen)
    }

    fn post_filter(&mut self, fw: &Framework, pod: &Pod, mut diagnosis: Diagnosis) -> CycleResult {
        let num_all_nodes = self.cluster.nodes.len();
        if fw.preemption_enabled() {
            let oracle = fw.oracle(pod, &self.cluster);
            let args = fw.preemption_args();
            let outcome = preemption::preempt(
                pod,
                &self.cluster,
                &diagnosis,
                &args,
                &oracle,
                self.options.now,
                &mut self.rng,
            );
            match outcome {
                PreemptionOutcome::Preempted { node, victims, .. } => {
                    drop(oracle);
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
                    self.cluster = after;
                    self.assume(pod, node);
                    return CycleResult::Preempted(node, victims);
                }
                PreemptionOutcome::NotPossible { post_filter_msg }
                | PreemptionOutcome::Ineligible { post_filter_msg }
                | PreemptionOutcome::Error { post_filter_msg } => {
                    diagnosis.post_filter_msg = Some(post_filter_msg);
                }
            }
        }
        CycleResult::Unschedulable(FitError { num_all_nodes, diagnosis })
    }

    fn assume(&mut self, pod: &Pod, node: usize) {
        let mut placed = pod.clone();
        placed.node_name = Some(self.cluster.nodes[node].name.clone());
        self.cluster.nodes[node].add_pod(Arc::new(placed));
    }
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
    let started = Instant::now();
    let mut plan = Plan::default();
    let mut frameworks: BTreeMap<String, Framework> = BTreeMap::new();
    let mut sched = Baseline::new(cluster, options);
    let task = progress.bar("baseline: pods", pending.len() as u64);
    for i in queue_order(pending) {
        task.inc(1);
        let pod = &pending[i];
        if !frameworks.contains_key(&pod.scheduler_name) {
            let fw = Framework::for_scheduler(config, &pod.scheduler_name)?;
            frameworks.insert(pod.scheduler_name.clone(), fw);
        }
        let fw = &frameworks[&pod.scheduler_name];
        match sched.schedule_one(fw, pod) {
            CycleResult::Scheduled(n) => {
                plan.placements
                    .push(Placement { pod: pod.key(), node: sched.cluster.nodes[n].name.clone() });
            }
            CycleResult::Preempted(n, victims) => {
                let node = sched.cluster.nodes[n].name.clone();
                for v in victims {
                    plan.evictions.push(Eviction {
                        pod: v.key(),
                        node: node.clone(),
                        preemptor: pod.key(),
                    });
                }
                plan.placements.push(Placement { pod: pod.key(), node });
            }
            CycleResult::Unschedulable(err) => {
                plan.unschedulable.push(Unschedulable {
                    pod: pod.key(),
                    message: err.message(),
                    reasons: err.reasons(),
                });
            }
            CycleResult::NoNodes => {
                plan.unschedulable.push(Unschedulable {
                    pod: pod.key(),
                    message: NO_NODES_AVAILABLE.to_string(),
                    reasons: BTreeMap::new(),
                });
            }
            CycleResult::Error(message) => {
                plan.unschedulable.push(Unschedulable {
                    pod: pod.key(),
                    message,
                    reasons: BTreeMap::new(),
                });
            }
        }
    }
    task.finish();
    let solve_ms = started.elapsed().as_secs_f64() * 1000.0;
    plan.summary = crate::plan::summarize(&plan, &sched.cluster, pending);
    plan.summary.timings_ms.solve = solve_ms;
    plan.summary.algorithm = "baseline".to_string();
    plan.summary.backend = "cpu".to_string();
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_clusters_evaluate_every_node() {
        assert_eq!(num_feasible_nodes_to_find(None, 99), 99);
    }

    #[test]
    fn five_thousand_nodes_score_ten_percent() {
        // 50 - 5000/125 = 10 %, 5000 * 10 / 100 = 500.
        assert_eq!(num_feasible_nodes_to_find(None, 5000), 500);
    }

    #[test]
    fn the_adaptive_percentage_bottoms_out_at_five() {
        // 50 - 10000/125 = -30 → 5 %, 10000 * 5 / 100 = 500.
        assert_eq!(num_feasible_nodes_to_find(None, 10_000), 500);
    }

    #[test]
    fn at_least_one_hundred_nodes_are_found() {
        // 50 - 150/125 = 49 %, 150 * 49 / 100 = 73 → raised to 100.
        assert_eq!(num_feasible_nodes_to_find(None, 150), 100);
        // An explicit 10 % of 500 = 50 → raised to 100.
        assert_eq!(num_feasible_nodes_to_find(Some(10), 500), 100);
    }

    #[test]
    fn an_explicit_percentage_is_used_as_is() {
        assert_eq!(num_feasible_nodes_to_find(Some(100), 5000), 5000);
        assert_eq!(num_feasible_nodes_to_find(Some(30), 1000), 300);
    }

    #[test]
    fn queue_orders_by_priority_then_creation_time() {
        use crate::model::testing::PodBuilder;
        let pods = vec![
            PodBuilder::new("ns", "low").priority(1).created(1).obj(),
            PodBuilder::new("ns", "high-late").priority(10).created(5).obj(),
            PodBuilder::new("ns", "high-early").priority(10).created(2).obj(),
        ];
        let names: Vec<&str> =
            queue_order(&pods).into_iter().map(|i| pods[i].name.as_str()).collect();
        assert_eq!(names, ["high-early", "high-late", "low"]);
    }
}
