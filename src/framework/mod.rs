//! The scheduling framework: plugin statuses, the profile (which plugins run, with which weights
//! and arguments), running a pod through filter and score, and FitError messages.
//!
//! Counterpart: `pkg/scheduler/framework/` and `pkg/scheduler/schedule_one.go` (v1.35).

pub mod args;
pub mod config;
pub mod fit_error;
pub mod profile;
pub mod runtime;
pub mod status;

pub use status::{Code, MAX_NODE_SCORE, MIN_NODE_SCORE, Status, default_normalize_score};
