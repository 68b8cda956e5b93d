//! An external scheduler timed on the same snapshot as kplace (`kplace bench --upstream CMD`).
//!
//! Input: the command (a program and its leading arguments, e.g. `../shared/upstream/kso`), a
//! snapshot file, an optional KubeSchedulerConfiguration file. The command is run as
//! `CMD schedule SNAPSHOT -o PLAN [--config FILE]` — the protocol of `kso`, the real
//! kube-scheduler run in-process — and must write a plan document whose `summary.wall_ms` is its
//! own scheduling time (loading excluded). Output: an [`UpstreamRun`] per call, its wall time
//! and outcome counts. Exit status 3 means the command timed out and its plan is partial (kso's
//! convention): the run is kept and marked [`UpstreamRun::partial`]; any other failure is an
//! [`UpstreamError`] naming the command and carrying the end of its stderr.
//!
//! No upstream counterpart: this is how BENCHMARKS.md compares with kube-scheduler measured on
//! the same machine in the same minutes.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde::{Deserialize, Serialize};

/// How much of the command's stderr an error quotes.
const STDERR_TAIL: usize = 2000;

/// The exit status of a command that timed out and wrote a partial plan.
pub const EXIT_PARTIAL: i32 = 3;

/// An external scheduler command: a program and the arguments that come before `schedule`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamCommand {
    /// The program.
    pub program: PathBuf,
    /// Its leading arguments.
    pub args: Vec<String>,
    /// Arguments after `schedule SNAPSHOT -o PLAN` (e.g. kso's `--timeout=30m`).
    pub trailing: Vec<String>,
}

impl UpstreamCommand {
    /// Parses `CMD`: words separated by whitespace, the first the program. `None` when blank.
    pub fn parse(cmd: &str) -> Option<UpstreamCommand> {
        let mut words = cmd.split_whitespace();
        let program = PathBuf::from(words.next()?);
        Some(UpstreamCommand {
            program,
            args: words.map(str::to_string).collect(),
            trailing: Vec::new(),
        })
    }

    /// The command as written (for reports).
    pub fn display(&self) -> String {
        let mut s = self.program.display().to_string();
        for a in &self.args {
            s.push(' ');
            s.push_str(a);
        }
        s
    }

    /// The whole invocation, with `SNAPSHOT` and `PLAN` for the files (for reports).
    pub fn invocation(&self) -> String {
        let mut s = format!("{} schedule SNAPSHOT -o PLAN", self.display());
        for a in &self.trailing {
            s.push(' ');
            s.push_str(a);
        }
        s
    }
}

/// One or more runs of the external scheduler on one case.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct UpstreamRun {
    /// The invocation (`CMD schedule SNAPSHOT -o PLAN …`).
    pub command: String,
    /// `summary.wall_ms` of each run.
    pub wall_ms: Vec<f64>,
    /// Their median.
    pub wall_ms_median: f64,
    /// Pending pods / median `wall_ms` (the same measure as kplace's pods per second).
    pub pods_per_second: f64,
    /// Wall time of each whole call, loading included, in milliseconds.
    pub process_ms: Vec<f64>,
    /// Pods the first run placed.
    pub placed: usize,
    /// Pods the first run left unschedulable.
    pub unschedulable: usize,
    /// Evictions of the first run.
    pub evictions: usize,
    /// Whether some run timed out (exit status 3) and its plan is partial.
    pub partial: bool,
}

/// What one call returned.
#[derive(Debug, Clone, PartialEq)]
pub struct UpstreamOutcome {
    /// `summary.wall_ms`.
    pub wall_ms: f64,
    /// Wall time of the whole call, in milliseconds.
    pub process_ms: f64,
    /// `placements` in the plan.
    pub placed: usize,
    /// `unschedulable` in the plan.
    pub unschedulable: usize,
    /// `evictions` in the plan.
    pub evictions: usize,
    /// Exit status 3: timed out, partial plan.
    pub partial: bool,
}

/// Why the external scheduler gave no time.
#[derive(Debug, thiserror::Error)]
pub enum UpstreamError {
    /// The program could not be started.
    #[error("running {command}: {source}")]
    Spawn {
        /// The command.
        command: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// It exited with a failure status (other than 3).
    #[error("{command} exited with {status}: {stderr}")]
    Failed {
        /// The command.
        command: String,
        /// The exit status as printed.
        status: String,
        /// The end of its stderr.
        stderr: String,
    },
    /// Its plan could not be read or lacks `summary.wall_ms`.
    #[error("{command}: plan {path}: {message}")]
    Plan {
        /// The command.
        command: String,
        /// The plan file.
        path: String,
        /// What was wrong.
        message: String,
    },
}

/// Runs `cmd schedule SNAPSHOT -o PLAN [--config CONFIG] [trailing…]` and reads the plan it wrote to
/// `plan`.
pub fn run_upstream(
    cmd: &UpstreamCommand,
    snapshot: &Path,
    config: Option<&Path>,
    plan: &Path,
) -> Result<UpstreamOutcome, UpstreamError> {
    let command = cmd.display();
    let mut c = Command::new(&cmd.program);
    c.args(&cmd.args).arg("schedule").arg(snapshot).arg("-o").arg(plan);
    if let Some(config) = config {
        c.arg("--config").arg(config);
    }
    c.args(&cmd.trailing);
    let start = Instant::now();
    let out =
        c.output().map_err(|source| UpstreamError::Spawn { command: command.clone(), source })?;
    let process_ms = start.elapsed().as_secs_f64() * 1000.0;
    let partial = out.status.code() == Some(EXIT_PARTIAL);
    if !out.status.success() && !partial {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let trimmed = stderr.trim_end();
        let cut = trimmed.len().saturating_sub(STDERR_TAIL);
        let from = (cut..=trimmed.len()).find(|&i| trimmed.is_char_boundary(i)).unwrap_or(0);
        return Err(UpstreamError::Failed {
            command,
            status: out.status.to_string(),
            stderr: trimmed[from..].to_string(),
        });
    }
    let plan_err = |message: String| UpstreamError::Plan {
        command: command.clone(),
        path: plan.display().to_string(),
        message,
    };
    let text = std::fs::read_to_string(plan).map_err(|e| plan_err(e.to_string()))?;
    let doc: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| plan_err(format!("not JSON: {e}")))?;
    let wall_ms = doc
        .pointer("/summary/wall_ms")
        .and_then(serde_json::Value::as_f64)
        .filter(|t| t.is_finite() && *t >= 0.0)
        .ok_or_else(|| plan_err("no summary.wall_ms (a number of milliseconds)".to_string()))?;
    let count = |key: &str| doc.get(key).and_then(serde_json::Value::as_array).map_or(0, Vec::len);
    Ok(UpstreamOutcome {
        wall_ms,
        process_ms,
        placed: count("placements"),
        unschedulable: count("unschedulable"),
        evictions: count("evictions"),
        partial,
    })
}

impl UpstreamRun {
    /// The runs of one case, summarized (counts from the first run).
    pub fn summarize(command: &str, outcomes: &[UpstreamOutcome], pending: usize) -> UpstreamRun {
        let wall_ms: Vec<f64> = outcomes.iter().map(|o| o.wall_ms).collect();
        let wall_ms_median = super::bench::median(&wall_ms);
        let first = outcomes.first();
        UpstreamRun {
            command: command.to_string(),
            pods_per_second: super::pods_per_second(pending, wall_ms_median),
            wall_ms_median,
            wall_ms,
            process_ms: outcomes.iter().map(|o| o.process_ms).collect(),
            placed: first.map_or(0, |o| o.placed),
            unschedulable: first.map_or(0, |o| o.unschedulable),
            evictions: first.map_or(0, |o| o.evictions),
            partial: outcomes.iter().any(|o| o.partial),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_is_a_program_and_its_leading_arguments() {
        /// (text, the program and its leading arguments)
        type Case<'a> = (&'a str, Option<(&'a str, Vec<&'a str>)>);
        let cases: [Case; 4] = [
            ("../shared/upstream/kso", Some(("../shared/upstream/kso", vec![]))),
            ("kso  --x 1", Some(("kso", vec!["--x", "1"]))),
            ("", None),
            ("   ", None),
        ];
        for (text, want) in cases {
            let got = UpstreamCommand::parse(text);
            let want = want.map(|(p, a)| UpstreamCommand {
                program: PathBuf::from(p),
                args: a.into_iter().map(str::to_string).collect(),
                trailing: Vec::new(),
            });
            assert_eq!(got, want, "{text:?}");
        }
        assert_eq!(
            UpstreamCommand::parse("kso  --x 1").map(|c| c.display()),
            Some("kso --x 1".into())
        );
    }

    #[test]
    fn runs_are_summarized_with_medians_and_the_first_runs_counts() {
        let o = |wall_ms, placed, partial| UpstreamOutcome {
            wall_ms,
            process_ms: wall_ms + 100.0,
            placed,
            unschedulable: 10 - placed,
            evictions: 0,
            partial,
        };
        let r = UpstreamRun::summarize(
            "kso",
            &[o(300.0, 9, false), o(100.0, 8, true), o(200.0, 9, false)],
            10,
        );
        assert_eq!(r.wall_ms_median, 200.0);
        assert_eq!(r.pods_per_second, 50.0);
        assert_eq!((r.placed, r.unschedulable), (9, 1));
        assert!(r.partial);
        assert_eq!(r.process_ms.len(), 3);
    }
}
