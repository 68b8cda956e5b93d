//! `kplace plan`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, ValueEnum};
use kplace::batch::{BatchOptions, plan_greedy_with_progress};

use super::output::{print_document, print_stdout};
use super::{OutputFormat, SnapshotArgs, load_cluster, load_config};

/// The batch algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Solver {
    /// Priority-tiered greedy over pod classes, largest first, with relocation; inter-pod
    /// constraints through the exact sequential path.
    Greedy,
}

/// `kplace plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    #[command(flatten)]
    snapshot: SnapshotArgs,
    /// A KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) file.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The batch algorithm.
    #[arg(long, value_enum, default_value_t = Solver::Greedy)]
    solver: Solver,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = OutputFormat::Table)]
    output: OutputFormat,
    /// Seed for the sequential parts (tie-breaking, preemption).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Do not fall back to the sequential scheduler's plan when it places more pods.
    #[arg(long)]
    no_fallback: bool,
}

pub fn run(args: &PlanArgs) -> anyhow::Result<ExitCode> {
    let config = load_config(args.config.as_deref())?;
    let loaded = load_cluster(&args.snapshot, Some(&config))?;
    let encode_start = Instant::now();
    let state = loaded.cluster.state.clone();
    let encode_ms = encode_start.elapsed().as_secs_f64() * 1000.0;
    let options =
        BatchOptions { seed: args.seed, fallback: !args.no_fallback, ..Default::default() };
    let mut plan = match args.solver {
        Solver::Greedy => plan_greedy_with_progress(
            state,
            &loaded.cluster.pending,
            &config,
            &options,
            &super::progress(),
        )?,
    };
    plan.summary.timings_ms.load = loaded.load_ms;
    plan.summary.timings_ms.encode = loaded.build_ms + encode_ms;
    match args.output {
        OutputFormat::Table => print_stdout(&super::baseline::render(&plan))?,
        other => print_document(&plan, other)?,
    }
    Ok(ExitCode::SUCCESS)
}
