//! kplace-solver: whole-batch assignment (greedy + LP), gangs and preemption over plain arrays.
//!
//! This crate never depends on wgpu, kube or the `kplace` crate: its inputs are pod classes,
//! node capacities and the feasibility/score matrices produced by evaluation, as integers.
//!
//! [`greedy`]: the priority-tiered greedy assignment (with conflicts and relocation);
//! [`lp`]: the LP relaxation that guides it, and an exact MIP for small problems.

pub mod greedy;
pub mod lp;

pub use greedy::{
    Assignment, ClassOrder, ClassSpec, Conflict, GreedyOptions, NO_DOMAIN, Placed, Problem,
    Rescore, SolverError, solve_greedy,
};
