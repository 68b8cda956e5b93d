//! kplace-solver: whole-batch assignment (greedy + LP), gangs and preemption over plain arrays.
//!
//! This crate never depends on wgpu, kube or the `kplace` crate: its inputs are pod classes,
//! node capacities and the feasibility/score matrices produced by evaluation, as integers.
//!
//! Implemented so far: [`greedy`], the priority-tiered greedy assignment, and [`preempt`], the
//! batch preemption pass for the pods still unplaced.

pub mod greedy;
pub mod preempt;

pub use greedy::{
    Assignment, ClassOrder, ClassSpec, GreedyOptions, Placed, Problem, Rescore, SolverError,
    solve_greedy,
};
pub use preempt::{
    Eviction, PreemptError, PreemptPlacement, PreemptPlan, PreemptProblem, PreemptorSpec,
    VictimSpec, solve_preemption,
};
