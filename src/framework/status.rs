//! Plugin results: status codes and reasons.
//!
//! Counterpart: `pkg/scheduler/framework/interface.go` (`Code`, `Status`), v1.35.

use std::fmt;

/// A plugin result code (upstream `framework.Code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Code {
    /// The plugin ran and the pod may proceed.
    Success,
    /// An internal error, not a scheduling outcome.
    Error,
    /// The pod does not fit, but preemption may help.
    Unschedulable,
    /// The pod does not fit and preemption cannot help on this node.
    UnschedulableAndUnresolvable,
    /// The plugin does not apply to this pod; its later phases are skipped.
    Skip,
}

/// A plugin's verdict with human-readable reasons (upstream `framework.Status`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// The code.
    pub code: Code,
    /// Reasons, exactly as upstream words them (they feed the FitError message).
    pub reasons: Vec<String>,
    /// The plugin that produced a non-success status.
    pub plugin: Option<&'static str>,
}

impl Status {
    /// Success.
    pub const fn success() -> Self {
        Status { code: Code::Success, reasons: Vec::new(), plugin: None }
    }

    /// A status with one or more reasons.
    pub fn new(code: Code, reasons: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Status { code, reasons: reasons.into_iter().map(Into::into).collect(), plugin: None }
    }

    /// `Unschedulable` with one reason.
    pub fn unschedulable(reason: impl Into<String>) -> Self {
        Status::new(Code::Unschedulable, [reason.into()])
    }

    /// `UnschedulableAndUnresolvable` with one reason.
    pub fn unresolvable(reason: impl Into<String>) -> Self {
        Status::new(Code::UnschedulableAndUnresolvable, [reason.into()])
    }

    /// `Skip`.
    pub fn skip() -> Self {
        Status::new(Code::Skip, std::iter::empty::<String>())
    }

    /// `Error` with a message.
    pub fn error(message: impl Into<String>) -> Self {
        Status::new(Code::Error, [message.into()])
    }

    /// Records which plugin produced this status.
    #[must_use]
    pub fn with_plugin(mut self, plugin: &'static str) -> Self {
        self.plugin = Some(plugin);
        self
    }

    /// Whether the code is `Success`.
    pub fn is_success(&self) -> bool {
        self.code == Code::Success
    }

    /// Whether the code is `Unschedulable` or `UnschedulableAndUnresolvable`.
    pub fn is_rejected(&self) -> bool {
        matches!(self.code, Code::Unschedulable | Code::UnschedulableAndUnresolvable)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reasons.join(", "))
    }
}

/// The highest score a score plugin may give a node after normalization (upstream
/// `framework.MaxNodeScore`).
pub const MAX_NODE_SCORE: i64 = 100;
/// The lowest score (upstream `framework.MinNodeScore`).
pub const MIN_NODE_SCORE: i64 = 0;

/// Scales `scores` so the highest becomes [`MAX_NODE_SCORE`] (or, with `reverse`, maps them to
/// `MAX_NODE_SCORE - scaled`), as upstream's `helper.DefaultNormalizeScore` does.
pub fn default_normalize_score(max_priority: i64, reverse: bool, scores: &mut [i64]) {
    let max = scores.iter().copied().max().unwrap_or(0);
    if max == 0 {
        if reverse {
            for s in scores.iter_mut() {
                *s = max_priority;
            }
        }
        return;
    }
    for s in scores.iter_mut() {
        let mut v = max_priority * *s / max;
        if reverse {
            v = max_priority - v;
        }
        *s = v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_normalize_scales_the_maximum_to_100() {
        let mut s = [10, 5, 0];
        default_normalize_score(MAX_NODE_SCORE, false, &mut s);
        assert_eq!(s, [100, 50, 0]);
    }

    #[test]
    fn default_normalize_reversed_gives_the_maximum_zero() {
        let mut s = [10, 5, 0];
        default_normalize_score(MAX_NODE_SCORE, true, &mut s);
        assert_eq!(s, [0, 50, 100]);
    }

    #[test]
    fn default_normalize_of_all_zero_scores_reversed_gives_everyone_100() {
        let mut s = [0, 0];
        default_normalize_score(MAX_NODE_SCORE, true, &mut s);
        assert_eq!(s, [100, 100]);
        let mut s = [0, 0];
        default_normalize_score(MAX_NODE_SCORE, false, &mut s);
        assert_eq!(s, [0, 0]);
    }
}
