//! Command-line definitions (clap derive) and dispatch. `anyhow` lives here and nowhere else.
//!
//! Exit codes: 0 success (unschedulable pods are an outcome, not a failure); 1 an error
//! (bad input, I/O, an invalid configuration); 2 invalid command-line usage (from clap); 3 the
//! outcome is a failure: the plan given to `kplace check` breaks a rule, `kplace compare` found
//! a violation in one of the two plans, or `kplace bind` did not carry the plan out completely
//! (a pod did not bind, an eviction was refused).
//!
//! Progress bars ([`progress`]) draw on stderr for the long steps, unless `--quiet` is given or
//! stderr is not a terminal.

mod baseline;
mod bench;
mod bind;
mod check;
mod compare;
mod explain;
// `gen` is a reserved keyword in edition 2024.
mod r#gen;
mod inspect;
mod output;
mod plan;
mod rebalance;
mod schedule;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::OnceLock;

use clap::{Args, Parser, Subcommand, ValueEnum};
use tracing_subscriber::EnvFilter;

/// Exit code for errors.
pub const EXIT_ERROR: u8 = 1;
/// Exit code of `bind` when some action did not succeed.
pub const EXIT_INCOMPLETE: u8 = 3;

/// kplace: GPU-accelerated batch placement for Kubernetes.
#[derive(Debug, Parser)]
#[command(name = "kplace", version, about, propagate_version = true)]
pub struct Cli {
    /// More log output on stderr (-v: debug, -vv: trace).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Only errors on stderr.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Summarize a cluster snapshot: nodes, pods, pod classes, capacity and utilization.
    Inspect(InspectArgs),
    /// Simulate the default kube-scheduler placing the pending pods one at a time.
    Baseline(baseline::BaselineArgs),
    /// Show, for one pending pod, every node's filter verdicts and scores.
    Explain(explain::ExplainArgs),
    /// Place the whole pending batch at once (batch solver) and print the plan.
    Plan(plan::PlanArgs),
    /// Check a plan against a snapshot: every hard constraint, eviction rule and pod accounted
    /// for. Exits with 3 when the plan breaks a rule.
    Check(check::CheckArgs),
    /// Write a synthetic cluster snapshot (scheduler_perf workloads and kplace's own) as YAML.
    Gen(r#gen::GenArgs),
    /// Carry out a plan on a cluster: evictions through the Eviction API, then Bindings; a
    /// rebalancing plan's moves wave by wave.
    Bind(bind::BindArgs),
    /// Run `baseline` and `plan` on the same snapshot and report them side by side (and, with
    /// --report, as an HTML page). Exits with 3 when `kplace check` finds a violation in either.
    Compare(compare::CompareArgs),
    /// Generate workloads at given sizes in memory and time `baseline` and `plan` on them,
    /// repeated: median decision times, pods/s, ratios and quality differences.
    Bench(bench::BenchArgs),
    /// Run as a secondary scheduler: watch the cluster, place the pending pods that ask for
    /// kplace in batches, bind them and record events. Stops cleanly on SIGTERM or SIGINT.
    Schedule(schedule::ScheduleArgs),
    /// Plan which running pods to move where (pack, balance or fix), in waves that
    /// PodDisruptionBudgets allow.
    Rebalance(rebalance::RebalanceArgs),
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Human-readable tables.
    Table,
    /// JSON on stdout.
    Json,
    /// YAML on stdout.
    Yaml,
}

/// Where the cluster comes from, shared by every command that reads a snapshot.
#[derive(Debug, Clone, Args)]
pub struct SnapshotArgs {
    /// Files or directories of Kubernetes manifests (YAML, multi-document, `kind: List`, JSON).
    #[arg(required = true, value_name = "SNAPSHOT")]
    pub paths: Vec<PathBuf>,
    /// Scheduler names whose pending pods kplace places (repeatable). Default: the profiles of
    /// `--config` (plus `kplace`, served by the `default-scheduler` profile unless a profile is
    /// named so); without a config, `default-scheduler` and `kplace`.
    #[arg(long = "scheduler-name", value_name = "NAME")]
    pub scheduler_names: Vec<String>,
}

/// `kplace inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    #[command(flatten)]
    snapshot: SnapshotArgs,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = OutputFormat::Table)]
    output: OutputFormat,
}

/// A snapshot read and converted into the model, with timings.
pub struct Loaded {
    /// The model.
    pub cluster: kplace::snapshot::Cluster,
    /// Milliseconds spent reading and parsing files.
    pub load_ms: f64,
    /// Milliseconds spent building the model.
    pub build_ms: f64,
}

/// Reads the snapshot named on the command line and builds the model; logs warnings.
pub fn load_cluster(
    args: &SnapshotArgs,
    config: Option<&kplace::framework::config::SchedulerConfig>,
) -> anyhow::Result<Loaded> {
    load_cluster_and_snapshot(args, config).map(|(loaded, _)| loaded)
}

/// [`load_cluster`], also returning the typed objects read (for what the model does not keep).
pub fn load_cluster_and_snapshot(
    args: &SnapshotArgs,
    config: Option<&kplace::framework::config::SchedulerConfig>,
) -> anyhow::Result<(Loaded, kplace::snapshot::Snapshot)> {
    let start = std::time::Instant::now();
    let task = progress().spinner("loading the snapshot");
    let snapshot = kplace::snapshot::load(&args.paths)?;
    task.finish();
    let load_ms = start.elapsed().as_secs_f64() * 1000.0;
    let start = std::time::Instant::now();
    let task = progress().spinner("building the model");
    let mut options = kplace::snapshot::BuildOptions::default();
    if !args.scheduler_names.is_empty() {
        options.scheduler_names = args.scheduler_names.clone();
    } else if let Some(config) = config {
        options.scheduler_names =
            config.served_scheduler_names().iter().map(|s| (*s).to_string()).collect();
    }
    let cluster = kplace::snapshot::build(&snapshot, &options)?;
    task.finish();
    let build_ms = start.elapsed().as_secs_f64() * 1000.0;
    for w in &cluster.warnings {
        tracing::warn!("{w}");
    }
    tracing::info!(
        nodes = cluster.state.nodes.len(),
        pending = cluster.pending.len(),
        "loaded snapshot in {load_ms:.1} ms"
    );
    Ok((Loaded { cluster, load_ms, build_ms }, snapshot))
}

/// `--backend`, shared by every command that evaluates.
#[derive(Debug, Clone, Copy, Args)]
pub struct BackendArgs {
    /// Where filters and scores are evaluated: `auto` (a GPU adapter when there is one,
    /// hardware first, else the CPU with a one-line notice), `gpu` (an error without a usable
    /// adapter) or `cpu`. Every backend gives the same result.
    #[arg(long, value_parser = parse_backend, default_value = "auto", value_name = "BACKEND")]
    pub backend: kplace::eval::Backend,
}

/// Parses `--backend` as `kplace::eval::Backend` spells it.
pub fn parse_backend(s: &str) -> Result<kplace::eval::Backend, String> {
    s.parse().map_err(|e: kplace::eval::BackendParseError| e.to_string())
}

/// Opens the evaluator `--backend` asks for and logs which it is; `auto` without a usable GPU
/// prints a one-line notice and evaluates on the CPU; `gpu` without one is an error.
pub fn open_evaluator(backend: kplace::eval::Backend) -> anyhow::Result<kplace::eval::Evaluator> {
    let selected = kplace::eval::Evaluator::select(backend)
        .map_err(|e| anyhow::anyhow!("--backend {backend}: {e}"))?;
    if let Some(notice) = &selected.notice {
        kplace::progress::suspend(|| eprintln!("notice: {notice}"));
    }
    tracing::info!("evaluating on {}", selected.evaluator.describe());
    Ok(selected.evaluator)
}

/// Runs `work` on `evaluator`; when `--backend auto` chose a GPU and the GPU fails (device
/// lost, out of memory), says so in one line and runs `work` again on the CPU. With an
/// explicit `--backend gpu` the failure is the command's error. Never a wrong answer: a
/// failed GPU evaluation returns an error, not a result.
pub fn with_gpu_fallback<T, E>(
    backend: kplace::eval::Backend,
    evaluator: &mut kplace::eval::Evaluator,
    mut work: impl FnMut(&mut kplace::eval::Evaluator) -> Result<T, E>,
) -> Result<T, E>
where
    E: std::fmt::Display + GpuFailure,
{
    match work(evaluator) {
        Err(e)
            if backend == kplace::eval::Backend::Auto
                && e.is_gpu_failure()
                && matches!(evaluator, kplace::eval::Evaluator::Gpu(_)) =>
        {
            kplace::progress::suspend(|| {
                eprintln!("notice: the GPU failed ({e}); evaluating on the CPU")
            });
            *evaluator = kplace::eval::Evaluator::Cpu;
            work(evaluator)
        }
        other => other,
    }
}

/// The input of each attempt of [`with_gpu_fallback`]: the first attempt takes the value
/// itself; a copy for the retry is made only when a retry can happen (`auto` on a GPU).
pub struct Attempts<T> {
    first: Option<T>,
    spare: Option<T>,
}

impl<T: Clone + Default> Attempts<T> {
    /// Holds `value` for the attempts `with_gpu_fallback(backend, evaluator, …)` makes.
    pub fn new(
        value: T,
        backend: kplace::eval::Backend,
        evaluator: &kplace::eval::Evaluator,
    ) -> Self {
        let retry = backend == kplace::eval::Backend::Auto
            && matches!(evaluator, kplace::eval::Evaluator::Gpu(_));
        let spare = retry.then(|| value.clone());
        Attempts { first: Some(value), spare }
    }

    /// The value for the next attempt.
    pub fn take(&mut self) -> T {
        self.first.take().or_else(|| self.spare.take()).unwrap_or_default()
    }
}

/// Errors that can say whether the GPU failed.
pub trait GpuFailure {
    /// Whether the error is a GPU failure.
    fn is_gpu_failure(&self) -> bool;
}

impl GpuFailure for kplace::baseline::BaselineError {
    fn is_gpu_failure(&self) -> bool {
        matches!(self, kplace::baseline::BaselineError::Eval(kplace::eval::EvalError::Gpu(_)))
    }
}

impl GpuFailure for kplace::batch::BatchError {
    fn is_gpu_failure(&self) -> bool {
        matches!(self, kplace::batch::BatchError::Eval(kplace::eval::EvalError::Gpu(_)))
    }
}

/// Reads `--config`, or returns upstream's default configuration.
pub fn load_config(
    path: Option<&std::path::Path>,
) -> anyhow::Result<kplace::framework::config::SchedulerConfig> {
    let config = match path {
        Some(p) => kplace::framework::config::SchedulerConfig::from_file(p)?,
        None => kplace::framework::config::SchedulerConfig::default(),
    };
    for w in &config.warnings {
        tracing::warn!("{w}");
    }
    for profile in &config.profiles {
        let skipped: Vec<&str> = profile.unevaluated().iter().map(|(p, _)| p.as_str()).collect();
        if !skipped.is_empty() {
            tracing::debug!(
                profile = %profile.scheduler_name,
                "enabled plugins kplace does not evaluate: {}",
                skipped.join(", ")
            );
        }
    }
    Ok(config)
}

/// Sets up `tracing` on stderr. `RUST_LOG` overrides the level.
pub fn init_logging(verbose: u8, quiet: bool) {
    // kube's client logs every failed request at ERROR; `bind` reports failures itself, so its
    // logs show only with -v.
    let level = match (quiet, verbose) {
        (true, _) => "error,kube_client=off",
        (false, 0) => "info,kube_client=off",
        (false, 1) => "debug",
        (false, _) => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| Stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .without_time()
        .init();
}

/// stderr for log lines: each line is written with the progress bars lifted off the screen
/// ([`kplace::progress::suspend`]), so bars and logs do not tear each other.
struct Stderr;

impl std::io::Write for Stderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        kplace::progress::suspend(|| std::io::stderr().write(buf))
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        kplace::progress::suspend(|| std::io::stderr().write_all(buf))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// Whether `--quiet` was given (set once by [`run`]).
static QUIET: OnceLock<bool> = OnceLock::new();

/// The progress handle every command passes to the library: bars on stderr, hidden with
/// `--quiet` or when stderr is not a terminal.
pub fn progress() -> kplace::progress::Progress {
    if QUIET.get().copied().unwrap_or(false) {
        kplace::progress::Progress::hidden()
    } else {
        kplace::progress::Progress::stderr()
    }
}

/// Runs the parsed command.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let quiet = cli.quiet;
    let _ = QUIET.set(quiet);
    match cli.command {
        Command::Inspect(args) => inspect::run(&args.snapshot, args.output),
        Command::Baseline(args) => baseline::run(&args),
        Command::Explain(args) => explain::run(&args),
        Command::Plan(args) => plan::run(&args),
        Command::Check(args) => check::run(&args),
        Command::Gen(args) => r#gen::run(&args),
        Command::Bind(args) => bind::run(&args),
        Command::Compare(args) => compare::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Schedule(args) => schedule::run(&args),
        Command::Rebalance(args) => rebalance::run(&args),
    }
}
