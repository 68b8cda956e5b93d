//! The one place `kplace schedule` asks the batch planner for a decision, so that a new solver
//! changes one call.
//!
//! Input: the cluster model built from the caches, the batch's pending pods (model pods), the
//! scheduler configuration and the wall clock; output: a [`Plan`] (placements in the order they
//! are valid, evictions for preemptors, unschedulable pods with kube-scheduler's FitError
//! message). Upstream counterpart: `ScheduleOne`'s scheduling cycle
//! (`pkg/scheduler/schedule_one.go`), run here for a whole batch by [`crate::batch`].

use std::sync::Arc;

use crate::batch::{BatchError, BatchOptions, plan_greedy_on};
use crate::eval::Evaluator;
use crate::framework::config::SchedulerConfig;
use crate::framework::runtime::{Framework, PreFilterOutcome};
use crate::model::{ClusterState, Pod};
use crate::plan::{Move, Placement, Plan};

/// One move of a rebalancing plan whose replacement `kplace schedule` steers: the first pending
/// pod with the same controlling owner as the moved pod, seen once the moved pod is gone or
/// terminating, is placed on the planned node if that node passes every filter for it (else
/// it is planned as any other pod). One replacement per move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Steer {
    /// `namespace/name` of the moved pod.
    pub pod: String,
    /// The planned node of its replacement.
    pub node: String,
    /// The moved pod's controlling owner's uid, once the moved pod was seen.
    pub owner_uid: Option<String>,
    /// Whether the moved pod is gone or terminating (its replacement may be pending).
    pub vacated: bool,
    /// The replacement placed on the planned node, once one was.
    pub taken_by: Option<String>,
    /// Whether the placement was counted in the run summary.
    pub counted: bool,
}

impl Steer {
    /// A move not seen yet.
    pub fn new(m: &Move) -> Self {
        Steer {
            pod: m.pod.clone(),
            node: m.to.clone(),
            owner_uid: None,
            vacated: false,
            taken_by: None,
            counted: false,
        }
    }

    /// Updates the move from the moved pod as the cache has it now (`None`: not there).
    pub fn observe(&mut self, pod: Option<&k8s_openapi::api::core::v1::Pod>) {
        let Some(pod) = pod else {
            self.vacated = true;
            return;
        };
        if pod.metadata.deletion_timestamp.is_some() {
            self.vacated = true;
        }
        let controller =
            pod.metadata.owner_references.iter().flatten().find(|o| o.controller == Some(true));
        if let Some(o) = controller {
            self.owner_uid = Some(o.uid.clone());
        }
    }

    /// Whether `pod` (pending) is this move's replacement.
    fn replaced_by(&self, pod: &Pod) -> bool {
        self.taken_by.is_none()
            && self.vacated
            && pod.key() != self.pod
            && pod.owner.as_ref().is_some_and(|o| Some(&o.uid) == self.owner_uid.as_ref())
    }
}

/// [`plan_batch`] with steering: replacements of the moves in `steering` are placed on their
/// planned node first, when it passes every filter (the full profile, on the cluster as it is,
/// each steered pod added before the next is checked); the rest of the batch is planned on the
/// cluster with them. A move whose replacement was placed records it in `taken_by`.
pub fn plan_batch_steered(
    mut cluster: ClusterState,
    batch: &[Pod],
    config: &SchedulerConfig,
    now_unix: i64,
    steering: &mut [Steer],
    evaluator: &mut Evaluator,
) -> Result<Plan, BatchError> {
    let mut steered = Vec::new();
    let mut rest = Vec::new();
    for pod in batch {
        let Some(s) = steering.iter_mut().find(|s| s.replaced_by(pod)) else {
            rest.push(pod.clone());
            continue;
        };
        let Some(node) = cluster.node_index(&s.node) else {
            rest.push(pod.clone());
            continue;
        };
        let fw = Framework::for_scheduler(config, &pod.scheduler_name)?;
        let fits = match fw.pre_filter(pod, &cluster) {
            PreFilterOutcome::Proceed(state) => {
                state.node_names().is_none_or(|names| names.contains(&s.node))
                    && fw.filter(&state, pod, &cluster.nodes[node]).is_success()
            }
            PreFilterOutcome::Rejected(_) => false,
        };
        if !fits {
            tracing::info!(
                "the planned node {} cannot take {} (replacing {}); planning it as any pod",
                s.node,
                pod.key(),
                s.pod
            );
            rest.push(pod.clone());
            continue;
        }
        s.taken_by = Some(pod.key());
        let mut placed = pod.clone();
        placed.node_name = Some(s.node.clone());
        cluster.nodes[node].add_pod(Arc::new(placed));
        steered.push(Placement { pod: pod.key(), node: s.node.clone() });
    }
    let mut plan = plan_batch(cluster, &rest, config, now_unix, evaluator)?;
    if !steered.is_empty() {
        steered.append(&mut plan.placements);
        plan.placements = steered;
    }
    Ok(plan)
}

/// Plans one batch. `now_unix` is the preemption clock (Unix seconds). Deterministic for given
/// inputs: the sequential parts use seed 0.
pub fn plan_batch(
    cluster: ClusterState,
    batch: &[Pod],
    config: &SchedulerConfig,
    now_unix: i64,
    evaluator: &mut Evaluator,
) -> Result<Plan, BatchError> {
    let options = BatchOptions { now: now_unix, ..BatchOptions::default() };
    let progress = crate::progress::Progress::hidden();
    plan_greedy_on(cluster, batch, config, &options, &progress, evaluator)
}
