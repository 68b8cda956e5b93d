//! Progress reporting for long operations: one small handle that library code is given and the
//! command line decides how (and whether) to draw.
//!
//! Input: a [`Progress`] handle passed into a long-running function (loading, the baseline
//! loop, the batch tiers, generation, compare, bench, bind). Output: [`Task`]s — a bar with a
//! known length or a spinner — that the function advances. Library code never looks at the
//! terminal: it receives [`Progress::hidden`] (the default, which draws nothing but still
//! counts, so tests can read a task's position) or whatever the caller built.
//!
//! The command line builds [`Progress::stderr`]: every task becomes a line of one process-wide
//! `indicatif::MultiProgress` drawn on stderr. indicatif's stderr target hides itself when
//! stderr is not a terminal or `TERM` is unset or `dumb` (`ProgressDrawTarget::term`, checked
//! in indicatif 0.18.6), so piped and redirected runs and tests get no escape codes. Log lines
//! go through [`suspend`] so that they do not tear a bar (see `cli::init_logging`).
//!
//! No upstream counterpart: kube-scheduler has no progress output.

use std::borrow::Cow;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Where the tasks of a run are drawn: nowhere ([`Progress::hidden`]) or on stderr
/// ([`Progress::stderr`]). Cheap to clone; clones draw to the same place.
#[derive(Debug, Clone, Default)]
pub struct Progress {
    /// `None`: hidden.
    multi: Option<MultiProgress>,
    /// Where finished tasks are recorded ([`Progress::recording`]).
    record: Option<Arc<Mutex<Vec<Finished>>>>,
}

/// A task as it ended, for [`Progress::recording`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    /// Its label.
    pub label: String,
    /// Steps done.
    pub position: u64,
    /// Its total, for a bar.
    pub total: Option<u64>,
}

/// The process-wide set of bars on stderr (created on first use).
fn stderr_multi() -> &'static MultiProgress {
    static MULTI: OnceLock<MultiProgress> = OnceLock::new();
    MULTI.get_or_init(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()))
}

/// Runs `f` (which writes to stderr) with the stderr bars cleared, then redraws them, so that a
/// log line does not tear a bar. Without bars on screen it just runs `f`.
pub fn suspend<R>(f: impl FnOnce() -> R) -> R {
    match STDERR_USED.get() {
        Some(()) => stderr_multi().suspend(f),
        None => f(),
    }
}

/// Set once [`Progress::stderr`] has been called (so [`suspend`] does not create the bars).
static STDERR_USED: OnceLock<()> = OnceLock::new();

impl Progress {
    /// Draws nothing. Tasks still count, so callers and tests can read their position.
    pub fn hidden() -> Progress {
        Progress::default()
    }

    /// Draws nothing and records every task when it ends (see [`Progress::finished`]): for
    /// tests of what a long operation reports.
    pub fn recording() -> Progress {
        Progress { multi: None, record: Some(Arc::default()) }
    }

    /// The tasks ended so far, in order ([`Progress::recording`] only; empty otherwise).
    pub fn finished(&self) -> Vec<Finished> {
        self.record.as_ref().and_then(|r| r.lock().ok().map(|v| v.clone())).unwrap_or_default()
    }

    /// Draws on stderr, at most 20 times a second; nothing when stderr is not a terminal (or
    /// `TERM` is unset or `dumb`).
    pub fn stderr() -> Progress {
        let _ = STDERR_USED.set(());
        Progress { multi: Some(stderr_multi().clone()), record: None }
    }

    /// Whether nothing will be drawn.
    pub fn is_hidden(&self) -> bool {
        self.multi.as_ref().is_none_or(MultiProgress::is_hidden)
    }

    /// A bar of `total` steps, labelled `label`.
    pub fn bar(&self, label: impl Into<Cow<'static, str>>, total: u64) -> Task {
        let label = label.into();
        let bar = match &self.multi {
            Some(multi) if !multi.is_hidden() => {
                let bar = multi.add(ProgressBar::new(total));
                if let Ok(style) = ProgressStyle::with_template(
                    "{prefix:>22} [{bar:30}] {human_pos}/{human_len} {elapsed} (eta {eta}) {wide_msg}",
                ) {
                    bar.set_style(style.progress_chars("=> "));
                }
                bar
            }
            _ => hidden_bar(Some(total)),
        };
        self.task(bar, label)
    }

    /// A spinner for a step of unknown length, labelled `label`; it ticks on its own.
    pub fn spinner(&self, label: impl Into<Cow<'static, str>>) -> Task {
        let label = label.into();
        let bar = match &self.multi {
            Some(multi) if !multi.is_hidden() => {
                let bar = multi.add(ProgressBar::new_spinner());
                if let Ok(style) =
                    ProgressStyle::with_template("{spinner} {prefix} {elapsed} {wide_msg}")
                {
                    bar.set_style(style);
                }
                bar.enable_steady_tick(Duration::from_millis(120));
                bar
            }
            _ => hidden_bar(None),
        };
        self.task(bar, label)
    }

    fn task(&self, bar: ProgressBar, label: Cow<'static, str>) -> Task {
        bar.set_prefix(label.clone());
        Task { bar, label, record: self.record.clone() }
    }
}

fn hidden_bar(len: Option<u64>) -> ProgressBar {
    ProgressBar::with_draw_target(len, ProgressDrawTarget::hidden())
}

/// One step being reported: advance it, and drop or [`Task::finish`] it when done (the line
/// is cleared either way, also when the step fails).
#[derive(Debug)]
pub struct Task {
    bar: ProgressBar,
    label: Cow<'static, str>,
    record: Option<Arc<Mutex<Vec<Finished>>>>,
}

impl Task {
    /// Advances by `n` steps.
    pub fn inc(&self, n: u64) {
        self.bar.inc(n);
    }

    /// Sets the position.
    pub fn set_position(&self, n: u64) {
        self.bar.set_position(n);
    }

    /// Sets the total (for a bar whose length becomes known late).
    pub fn set_length(&self, total: u64) {
        self.bar.set_length(total);
    }

    /// Sets the detail shown after the bar (e.g. the item being worked on).
    pub fn set_message(&self, message: impl Into<Cow<'static, str>>) {
        self.bar.set_message(message);
    }

    /// Steps done so far.
    pub fn position(&self) -> u64 {
        self.bar.position()
    }

    /// Ends the task and clears its line.
    pub fn finish(self) {}
}

impl Drop for Task {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
        if let Some(record) = &self.record
            && let Ok(mut v) = record.lock()
        {
            v.push(Finished {
                label: self.label.to_string(),
                position: self.bar.position(),
                total: self.bar.length(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hidden_bar_counts_its_steps() {
        let p = Progress::hidden();
        assert!(p.is_hidden());
        let t = p.bar("pods", 10);
        t.inc(3);
        t.inc(4);
        assert_eq!(t.position(), 7);
        t.set_position(10);
        assert_eq!(t.position(), 10);
    }

    #[test]
    fn a_hidden_spinner_draws_nothing_and_can_be_advanced() {
        let p = Progress::default();
        let t = p.spinner("loading");
        t.inc(1);
        assert_eq!(t.position(), 1);
        t.finish();
    }

    #[test]
    fn a_recording_progress_keeps_every_finished_task_in_order() {
        let p = Progress::recording();
        let a = p.bar("a", 3);
        a.inc(3);
        a.finish();
        {
            let b = p.spinner("b");
            b.inc(1);
        }
        assert_eq!(
            p.finished(),
            [
                Finished { label: "a".into(), position: 3, total: Some(3) },
                Finished { label: "b".into(), position: 1, total: None },
            ]
        );
        assert!(Progress::hidden().finished().is_empty());
    }

    #[test]
    fn the_stderr_target_is_hidden_when_stderr_is_not_a_terminal() {
        // Under `cargo test` stderr is captured or piped, never a terminal.
        use std::io::IsTerminal;
        if !std::io::stderr().is_terminal() {
            assert!(Progress::stderr().is_hidden());
        }
    }

    #[test]
    fn suspend_runs_the_closure_and_returns_its_value() {
        assert_eq!(suspend(|| 41 + 1), 42);
    }
}
