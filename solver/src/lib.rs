//! kplace-solver: whole-batch assignment (greedy + LP), gangs and preemption over plain arrays.
//!
//! This crate never depends on wgpu or kube: its inputs are pod classes, node capacities and the
//! feasibility/score matrices produced by evaluation.
