//! `kplace check`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use kplace::check::{CheckReport, check};
use kplace::plan::Plan;

use super::output::{Table, print_document, print_stdout};
use super::{OutputFormat, SnapshotArgs, load_cluster_and_snapshot};

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
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = OutputFormat::Table)]
    output: OutputFormat,
}

/// Reads a plan document, leniently as the binder does (plans written by other tools).
fn read_plan(path: &Path) -> anyhow::Result<Plan> {
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
        OutputFormat::Table => print_stdout(&render(&report, &plan))?,
        other => print_document(&report, other)?,
    }
    Ok(if report.is_valid() { ExitCode::SUCCESS } else { ExitCode::from(EXIT_INVALID_PLAN) })
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
        format!("plan is invalid: {} violation(s)", report.violations.len())
    };
    let moves =
        if plan.moves.is_empty() { String::new() } else { format!(", {} moves", plan.moves.len()) };
    out.push_str(&format!(
        "{verdict} ({} placements, {} evictions, {} unschedulable{moves} checked)\n",
        plan.placements.len(),
        plan.evictions.len(),
        plan.unschedulable.len()
    ));
    out
}
