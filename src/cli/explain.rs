//! `kplace explain`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use kplace::baseline::BaselineOptions;
use kplace::eval::Evaluator;
use kplace::explain::{ExplainError, ExplainOptions, Explanation, explain_on};

use super::output::{Table, print_document, print_stdout};
use super::{
    BackendArgs, GpuFailure, OutputFormat, SnapshotArgs, load_cluster, load_config, open_evaluator,
    with_gpu_fallback,
};

/// `kplace explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    #[command(flatten)]
    snapshot: SnapshotArgs,
    #[command(flatten)]
    backend: BackendArgs,
    /// The pending pod, as NAMESPACE/NAME.
    #[arg(long, value_name = "NAMESPACE/NAME")]
    pod: String,
    /// Only this node.
    #[arg(long, value_name = "NODE")]
    node: Option<String>,
    /// Explain against the snapshot as it is, instead of the state baseline reaches when the
    /// pod's turn comes (every pod ahead of it in the queue placed first).
    #[arg(long)]
    as_is: bool,
    /// A KubeSchedulerConfiguration file.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Seed baseline uses to reach the pod's turn.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Output format (table or json).
    #[arg(short, long, value_enum, default_value_t = OutputFormat::Table)]
    output: OutputFormat,
}

pub fn run(args: &ExplainArgs) -> anyhow::Result<ExitCode> {
    let config = load_config(args.config.as_deref())?;
    let loaded = load_cluster(&args.snapshot, Some(&config))?;
    let options = ExplainOptions {
        node: args.node.clone(),
        as_is: args.as_is,
        baseline: BaselineOptions { seed: args.seed, ..Default::default() },
    };
    let mut evaluator = open_evaluator(args.backend.backend)?;
    let progress = super::progress();
    // On the CPU the framework explains (the reference); on a GPU the pod's row is a matrix.
    let explanation = with_gpu_fallback(args.backend.backend, &mut evaluator, |evaluator| {
        let evaluator = match evaluator {
            Evaluator::Cpu => None,
            gpu => Some(gpu),
        };
        explain_on(
            loaded.cluster.state.clone(),
            &loaded.cluster.pending,
            &config,
            &args.pod,
            &options,
            &progress,
            evaluator,
        )
    })?;
    match args.output {
        OutputFormat::Table => print_stdout(&render(&explanation))?,
        other => print_document(&explanation, other)?,
    }
    Ok(ExitCode::SUCCESS)
}

impl GpuFailure for ExplainError {
    fn is_gpu_failure(&self) -> bool {
        matches!(self, ExplainError::Eval(kplace::eval::EvalError::Gpu(_)))
    }
}

fn render(e: &Explanation) -> String {
    let mut out = format!(
        "pod {} (priority {}, scheduler {}, queue position {})\nnodes shown in {}\n",
        e.pod, e.priority, e.scheduler_name, e.queue_position, e.state
    );
    if let Some(r) = &e.pre_filter_rejection {
        out.push_str(&format!("PreFilter rejected the pod: {r}\n"));
    }
    out.push('\n');
    let mut t = Table::new(&["NODE", "FEASIBLE", "FAILED FILTERS", "TOTAL"]);
    for n in &e.nodes {
        let failed: Vec<String> = n
            .filters
            .iter()
            .filter(|f| f.code != "Success" && f.code != "Skip")
            .map(|f| format!("{}: {}", f.plugin, f.reasons.join(", ")))
            .collect();
        t.row(vec![
            n.node.clone(),
            if n.feasible { "yes" } else { "no" }.to_string(),
            if failed.is_empty() { "-".to_string() } else { failed.join("; ") },
            n.total.map_or_else(|| "-".to_string(), |t| t.to_string()),
        ]);
    }
    out.push_str(&t.render());
    let scored: Vec<_> = e.nodes.iter().filter(|n| n.total.is_some()).collect();
    if let Some(first) = scored.first() {
        out.push('\n');
        let mut headers: Vec<String> = vec!["NODE".to_string()];
        headers.extend(first.scores.iter().map(|s| format!("{} (x{})", s.plugin, s.weight)));
        headers.push("TOTAL".to_string());
        let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
        let mut t = Table::new(&header_refs);
        for n in scored {
            let mut row = vec![n.node.clone()];
            row.extend(n.scores.iter().map(|s| format!("{} -> {}", s.raw, s.normalized)));
            row.push(n.total.unwrap_or(0).to_string());
            t.row(row);
        }
        out.push_str("scores (raw -> normalized; the total weights each normalized score):\n");
        out.push_str(&t.render());
    }
    if !e.best_nodes.is_empty() {
        out.push_str(&format!("\nhighest score: {}\n", e.best_nodes.join(", ")));
    }
    if let Some(m) = &e.message {
        out.push_str(&format!("\n{m}\n"));
    }
    if let Some(d) = &e.baseline_decision {
        out.push_str(&format!("baseline: {d}\n"));
    }
    out
}
