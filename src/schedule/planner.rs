//! The one place `kplace schedule` asks the batch planner for a decision, so that a new solver
//! changes one call.
//!
//! Input: the cluster model built from the caches, the batch's pending pods (model pods), the
//! scheduler configuration and the wall clock; output: a [`Plan`] (placements in the order they
//! are valid, evictions for preemptors, unschedulable pods with kube-scheduler's FitError
//! message). Upstream counterpart: `ScheduleOne`'s scheduling cycle
//! (`pkg/scheduler/schedule_one.go`), run here for a whole batch by [`crate::batch`].

use crate::batch::{BatchError, BatchOptions, plan_greedy};
use crate::framework::config::SchedulerConfig;
use crate::model::{ClusterState, Pod};
use crate::plan::Plan;

/// Plans one batch. `now_unix` is the preemption clock (Unix seconds). Deterministic for given
/// inputs: the sequential parts use seed 0.
pub fn plan_batch(
    cluster: ClusterState,
    batch: &[Pod],
    config: &SchedulerConfig,
    now_unix: i64,
) -> Result<Plan, BatchError> {
    let options = BatchOptions { now: now_unix, ..BatchOptions::default() };
    plan_greedy(cluster, batch, config, &options)
}
