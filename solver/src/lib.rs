//! kplace-solver: whole-batch assignment (greedy + LP), gangs and preemption over plain arrays.
//!
//! This crate never depends on wgpu, kube or the `kplace` crate: its inputs are pod classes,
//! node capacities and the feasibility/score matrices produced by evaluation, as integers.
//!
//! [`greedy`]: the priority-tiered greedy assignment (with conflicts and relocation);
//! [`lp`]: the LP relaxation that guides it, and an exact MIP for small problems;
//! [`objective`]: what a better assignment is (priority tiers, then placed resources by
//! dominant share or placed pods, queue order, score) and the choice among strategies by it;
//! [`preempt`]: the batch preemption pass for the pods still unplaced;
//! [`topology`]: inter-pod counts per topology domain and the rules over them (spread, pod
//! (anti-)affinity), which the greedy reads as pods land.

pub mod greedy;
pub mod lp;
pub mod objective;
pub mod preempt;
pub mod topology;

#[cfg(test)]
mod testing;

pub use greedy::{
    Assignment, ClassOrder, ClassSpec, Conflict, GreedyOptions, NO_DOMAIN, Placed, Problem,
    Rescore, SolverError, solve_greedy,
};
pub use lp::{Guide, LpError, LpOptions, lp_guide, solve_exact};
pub use objective::{Objective, Rank, Strategy, solve_best};
pub use preempt::{
    Eviction, NO_SPREAD_DOMAIN, PreemptError, PreemptPlacement, PreemptPlan, PreemptProblem,
    PreemptSpread, PreemptorSpec, VictimSpec, solve_preemption,
};
pub use topology::{Counter, InterPod, Rule, TopologyState};
