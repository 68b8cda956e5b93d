//! kplace: batch placement for Kubernetes.
//!
//! The pipeline, in data-flow order (see `ARCHITECTURE.md`):
//! [`snapshot`] (read manifests) → [`model`] (scheduling view of nodes and pods) →
//! [`encode`] (equivalence classes and dense arrays) → evaluation (the [`plugins`] run by the
//! [`framework`], CPU reference) → solve (`kplace-solver`) → plan → bind.
//!
//! Semantics follow kube-scheduler **v1.35** ([`UPSTREAM_VERSION`]); each plugin's module doc
//! names its upstream file.

pub mod baseline;
pub mod batch;
pub mod bind;
pub mod check;
pub mod compare;
pub mod duration;
pub mod encode;
pub mod eval;
pub mod explain;
pub mod framework;
// `gen` is a reserved keyword in edition 2024, hence the raw identifier.
pub mod r#gen;
pub mod inspect;
pub mod json;
pub mod live;
pub mod model;
pub mod plan;
pub mod plugins;
pub mod progress;
pub mod quantity;
pub mod rebalance;
pub mod resources;
pub mod schedule;
pub mod snapshot;

/// The kube-scheduler release whose semantics kplace follows.
pub const UPSTREAM_VERSION: &str = "v1.35";
