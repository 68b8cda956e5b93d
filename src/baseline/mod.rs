//! `kplace baseline`: the sequential default kube-scheduler, simulated faithfully.
//!
//! Input: the cluster model, pending pods, a scheduler configuration; output: a plan.
//! [`scheduler`] is the scheduling loop (`pkg/scheduler/schedule_one.go`), [`node_order`] the
//! order the scheduler lists nodes in, [`preemption`] DefaultPreemption (v1.35), [`queue`] the
//! retries around preemption (victims terminating, preemptors nominated), [`follow`] the replay
//! of another scheduler's decisions (`--follow`).

pub mod follow;
pub mod node_order;
pub mod preemption;
pub mod queue;
pub mod scheduler;

pub use scheduler::{
    BaselineError, BaselineOptions, StaticFilters, VictimExit, run_baseline, run_baseline_on,
    run_baseline_with_progress,
};
