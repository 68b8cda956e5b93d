//! kube-scheduler's filter and score plugins: the CPU reference (the specification the GPU
//! kernels must match bit for bit).
//!
//! One module per plugin, named after it, each naming its upstream file (v1.35). Conventions,
//! mirroring upstream's extension points (the framework runtime calls them in this order):
//!
//! - `pre_filter(&self, pod, cluster) -> Result<State, Status>` — per-pod state computed once
//!   over the whole cluster (only plugins that need it). `Err(status)` with `Code::Skip` means
//!   the plugin does not apply; an unschedulable status rejects the pod on every node.
//! - `filter(&self, [state,] pod, node) -> Status` — one node's verdict with upstream's reasons.
//! - `add_pod` / `remove_pod` on the state (PreFilterExtensions), used by preemption.
//! - `pre_score(&self, pod, cluster, feasible: &[usize]) -> Result<ScoreState, Status>`,
//!   `score(&self, [state,] pod, node) -> i64`, and `normalize_score(&self, [state,] scores)`
//!   where `feasible` indexes `cluster.nodes` and `scores` is aligned with it.
//!
//! Arithmetic follows upstream step for step: integer where upstream uses integers, and float64
//! in the few places upstream does (BalancedAllocation, ImageLocality's spread factor,
//! InterPodAffinity's normalization, PodTopologySpread's weights), each documented where it
//! happens, so that a GPU twin knows exactly what it must reproduce.

pub mod image_locality;
pub mod interpodaffinity;
#[cfg(test)]
mod memo_tests;
pub mod node_affinity;
mod node_memo;
pub mod node_name;
pub mod node_ports;
pub mod node_unschedulable;
pub mod noderesources;
pub mod podtopologyspread;
pub mod taint_toleration;
pub mod volume_binding;
