//! `kplace plan`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use kplace::batch::{BatchOptions, SolverChoice, plan_greedy_on};

use super::output::{print_document, print_stdout};
use super::{
    BackendArgs, OutputFormat, SnapshotArgs, load_cluster, load_config, open_evaluator,
    with_gpu_fallback,
};

/// The batch algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Solver {
    /// Priority-tiered greedy over pod classes (largest first; smallest first when a tier does
    /// not fit), with relocation and conflicts; other inter-pod constraints through the exact
    /// sequential path.
    Greedy,
    /// The greedy following the quotas of an LP over pod classes × node groups.
    Lp,
    /// The greedy; when a tier does not fit, also smallest first and the LP-guided greedy,
    /// keeping the best (within --time-limit).
    Auto,
}

impl From<Solver> for SolverChoice {
    fn from(s: Solver) -> Self {
        match s {
            Solver::Greedy => SolverChoice::Greedy,
            Solver::Lp => SolverChoice::Lp,
            Solver::Auto => SolverChoice::Auto,
        }
    }
}

/// Parses a duration such as `500ms`, `10s`, `2m` or `1.5s`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 =
        number.parse().map_err(|_| format!("{text:?} is not a duration (e.g. 500ms, 10s, 2m)"))?;
    let seconds = match unit {
        "ms" => value / 1000.0,
        "s" | "" => value,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(format!("{text:?}: unknown unit {unit:?} (use ms, s, m or h)")),
    };
    if !seconds.is_finite() || seconds < 0.0 {
        return Err(format!("{text:?} is not a non-negative duration"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// `kplace plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    #[command(flatten)]
    snapshot: SnapshotArgs,
    #[command(flatten)]
    backend: BackendArgs,
    /// A KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) file.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The batch algorithm.
    #[arg(long, value_enum, default_value_t = Solver::Auto)]
    solver: Solver,
    /// Stop optional work (other strategies, the LP, the sequential fallback) after this long,
    /// counted from the start of planning; the first greedy pass and the repair always run.
    #[arg(long, value_name = "DUR", value_parser = parse_duration)]
    time_limit: Option<Duration>,
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
    let options = BatchOptions {
        seed: args.seed,
        fallback: !args.no_fallback,
        solver: args.solver.into(),
        deadline: args.time_limit.map(|limit| Instant::now() + limit),
        ..Default::default()
    };
    let mut evaluator = open_evaluator(args.backend.backend)?;
    let mut state = super::Attempts::new(loaded.cluster.state, args.backend.backend, &evaluator);
    let progress = super::progress();
    let mut plan = with_gpu_fallback(args.backend.backend, &mut evaluator, |evaluator| {
        plan_greedy_on(
            state.take(),
            &loaded.cluster.pending,
            &config,
            &options,
            &progress,
            evaluator,
        )
    })?;
    plan.summary.timings_ms.load = loaded.load_ms;
    plan.summary.timings_ms.build = loaded.build_ms;
    match args.output {
        OutputFormat::Table => print_stdout(&super::baseline::render(&plan))?,
        other => print_document(&plan, other)?,
    }
    Ok(ExitCode::SUCCESS)
}
