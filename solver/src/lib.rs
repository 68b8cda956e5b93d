//! kplace-solver: whole-batch assignment (greedy + LP), gangs and preemption over plain arrays.
//!
//! This crate never depends on wgpu, kube or the `kplace` crate: its inputs are pod classes,
//! node capacities and the feasibility/score matrices produced by evaluation, as integers.
//!
//! Implemented so far: [`greedy`], the priority-tiered greedy assignment.

pub mod greedy;

pub use greedy::{
    Assignment, ClassOrder, ClassSpec, GreedyOptions, Placed, Problem, Rescore, SolverError,
    solve_greedy,
};
