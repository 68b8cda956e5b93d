//! `kplace check`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use kplace::check::{CheckReport, check};
use kplace::plan::Plan;

use serde::Serialize;

use super::output::{Table, count, pod_names, print_list_document, print_text};
use super::{ListFormat, SnapshotArgs, load_cluster_and_snapshot};

/// Exit code when the plan breaks a rule.
pub const EXIT_INVALID_PLAN: u8 = 3;

/// `kplace check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    snapshot: SnapshotArgs,
    /// The plan to check: a plan document (JSON, or YAML for `.yaml`/`.yml`), as `kplace plan`,
    /// `kplace baseline` and `kplace rebalance` print it (a rebalancing plan's moves are replayed
    /// wave by wave).
    #[arg(long, value_name = "PLAN")]
    plan: PathBuf,
    /// Output format (`wide` is the table; `name`: the pods with a violation; `json`/`yaml`:
    /// the verdict, the counts and the violations).
    #[arg(short, long, value_enum, default_value_t = ListFormat::Table)]
    output: ListFormat,
}

/// Reads a plan document, leniently as the binder does (plans written by other tools).
pub(super) fn read_plan(path: &Path) -> anyhow::Result<Plan> {
    Ok(kplace::bind::read_plan(path)?)
}

pub fn run(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let plan = read_plan(&args.plan)?;
    let (loaded, snapshot) = load_cluster_and_snapshot(&args.snapshot, None)?;
    let task = super::progress().spinner("checking the plan");
    let mut report = check(&loaded.cluster.state, &loaded.cluster.pending, &plan);
    let budgets = kplace::check::budgets::wave_budgets(&snapshot, &loaded.cluster.state);
    drop(snapshot);
    report.violations.extend(kplace::check::budgets::check_waves(
        &loaded.cluster.state,
        &plan,
        &budgets,
    ));
    task.finish();
    match args.output {
        ListFormat::Table | ListFormat::Wide => print_text(&render(&report, &plan))?,
        ListFormat::Name => {
            print_text(&pod_names(report.violations.iter().map(|v| v.pod.as_str())))?
        }
        document => print_list_document(&CheckDocument::new(&report, &plan), document)?,
    }
    Ok(if report.is_valid() { ExitCode::SUCCESS } else { ExitCode::from(EXIT_INVALID_PLAN) })
}

/// `check -o json|yaml`: the verdict, what was checked and the violations by kind, then every
/// violation.
#[derive(Debug, Serialize)]
struct CheckDocument<'a> {
    /// `valid` or `invalid`.
    verdict: &'static str,
    /// Whether the plan breaks no rule (exit code 0).
    valid: bool,
    /// How many of each action the plan holds.
    checked: Checked,
    /// Violations per kind (empty when valid).
    violation_counts: BTreeMap<String, usize>,
    /// Every violation, in the order the replay found them.
    violations: &'a [kplace::check::Violation],
}

/// What `check` replayed.
#[derive(Debug, Serialize)]
struct Checked {
    placements: usize,
    evictions: usize,
    unschedulable: usize,
    moves: usize,
}

impl<'a> CheckDocument<'a> {
    fn new(report: &'a CheckReport, plan: &Plan) -> Self {
        CheckDocument {
            verdict: if report.is_valid() { "valid" } else { "invalid" },
            valid: report.is_valid(),
            checked: Checked {
                placements: plan.placements.len(),
                evictions: plan.evictions.len(),
                unschedulable: plan.unschedulable.len(),
                moves: plan.moves.len(),
            },
            violation_counts: report.counts().iter().map(|(k, n)| (k.to_string(), *n)).collect(),
            violations: &report.violations,
        }
    }
}

/// The report as a table of violations and a one-line verdict.
fn render(report: &CheckReport, plan: &Plan) -> String {
    let mut out = String::new();
    if !report.violations.is_empty() {
        let mut t = Table::new(&["KIND", "POD", "NODE", "MESSAGE"]);
        for v in &report.violations {
            t.row(vec![
                v.kind.to_string(),
                v.pod.clone(),
                v.node.clone().unwrap_or_default(),
                v.message.clone(),
            ]);
        }
        out.push_str(&t.render());
        out.push('\n');
    }
    let verdict = if report.is_valid() {
        "plan is valid".to_string()
    } else {
        format!("plan is invalid: {}", count(report.violations.len(), "violation"))
    };
    let moves = if plan.moves.is_empty() {
        String::new()
    } else {
        format!(", {}", count(plan.moves.len(), "move"))
    };
    out.push_str(&format!(
        "{verdict} ({}, {}, {} unschedulable{moves} checked)\n",
        count(plan.placements.len(), "placement"),
        count(plan.evictions.len(), "eviction"),
        plan.unschedulable.len()
    ));
    out
}
