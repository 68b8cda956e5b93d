//! `kplace plan`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use kplace::batch::{BatchOptions, Objective, SolverChoice, plan_greedy_on};

use super::{
    BackendArgs, ListFormat, SnapshotArgs, load_cluster, load_config, open_evaluator,
    with_gpu_fallback,
};

/// The batch algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Solver {
    /// Priority-tiered greedy over pod classes (largest first; smallest first when a tier does
    /// not fit), with relocation, conflicts and inter-pod rules (topology spread, pod
    /// affinity) kept on exact counts as pods land.
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

/// What `plan` maximizes within a priority tier (`--objective`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ObjectiveArg {
    /// Placed requested resources, each pod weighted by its dominant share of the cluster (one
    /// 8-CPU pod is worth eight 1-CPU pods); queue order breaks ties.
    Resources,
    /// Placed pods.
    Pods,
}

impl From<ObjectiveArg> for Objective {
    fn from(o: ObjectiveArg) -> Self {
        match o {
            ObjectiveArg::Resources => Objective::Resources,
            ObjectiveArg::Pods => Objective::Pods,
        }
    }
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
    /// Stop optional work (other strategies, the LP, the --ensure-baseline run) after this long,
    /// counted from the start of planning; the first greedy pass and the repair always run
    /// (a Go duration: 500ms, 30s, 1m30s).
    #[arg(long, value_name = "DURATION", value_parser = kplace::duration::parse)]
    time_limit: Option<Duration>,
    /// Output format (`wide`: each pod's priority and requests; `name`: the placed pods).
    #[arg(short, long, value_enum, default_value_t = ListFormat::Table)]
    output: ListFormat,
    /// Seed for the sequential parts (tie-breaking, preemption).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// What the batch maximizes within a priority tier.
    #[arg(long, value_enum, default_value_t = ObjectiveArg::Resources)]
    objective: ObjectiveArg,
    /// Also run the sequential scheduler (as `kplace baseline`) when the plan leaves a pod out
    /// or evicts one, and return its plan instead when it ranks higher by the objective.
    #[arg(long)]
    ensure_baseline: bool,
    /// Accepted for compatibility and ignored: the sequential fallback is off unless
    /// --ensure-baseline.
    #[arg(long = "no-fallback", hide = true)]
    _no_fallback: bool,
}

pub fn run(args: &PlanArgs) -> anyhow::Result<ExitCode> {
    let config = load_config(args.config.as_deref())?;
    let loaded = load_cluster(&args.snapshot, Some(&config))?;
    let options = BatchOptions {
        seed: args.seed,
        ensure_baseline: args.ensure_baseline,
        objective: args.objective.into(),
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
    super::baseline::print_plan(&plan, args.output, &loaded.cluster.pending)?;
    std::io::Write::flush(&mut std::io::stdout())?;
    // The process ends here: its memory goes back to the system at once, without freeing the
    // model and the plan object by object.
    std::mem::forget((plan, loaded.cluster.pending, loaded.cluster.gangs, state));
    Ok(ExitCode::SUCCESS)
}
