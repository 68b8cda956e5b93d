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
pub mod runtime_dir;
mod schedule;
mod snapshot;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::OnceLock;

use anyhow::Context as _;
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
    /// Write the cluster (read from its API server, or from SNAPSHOT paths) as one file kplace
    /// reads again: a YAML or JSON `List` without managedFields and the fields kplace never
    /// reads, for offline what-if runs and bug reports.
    Snapshot(snapshot::SnapshotCommandArgs),
    /// Print a shell completion script: `source <(kplace completion bash)`, or for zsh
    /// `kplace completion zsh > "${fpath[1]}/_kplace"`, for fish
    /// `kplace completion fish > ~/.config/fish/completions/kplace.fish`.
    Completion(CompletionArgs),
}

/// `kplace completion`.
#[derive(Debug, Args)]
pub struct CompletionArgs {
    /// The shell.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// Writes the completion script for `shell` on stdout.
fn completion(args: &CompletionArgs) -> anyhow::Result<ExitCode> {
    let mut script = Vec::new();
    clap_complete::generate(
        args.shell,
        &mut <Cli as clap::CommandFactory>::command(),
        "kplace",
        &mut script,
    );
    output::print_stdout(&String::from_utf8_lossy(&script))?;
    Ok(ExitCode::SUCCESS)
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

/// Output formats of the commands that list pods (`baseline`, `plan`, `check`, `rebalance`,
/// `bind`): kubectl's set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    /// Human-readable tables.
    Table,
    /// The tables with more columns (priority and requests of each pod, …).
    Wide,
    /// One `pod/NAMESPACE/NAME` line per pod the command acts on, for scripts.
    Name,
    /// JSON on stdout.
    Json,
    /// YAML on stdout.
    Yaml,
}

/// Where the cluster comes from, shared by every command that reads a snapshot.
#[derive(Debug, Clone, Args)]
pub struct SnapshotArgs {
    /// Files or directories of Kubernetes manifests (YAML, multi-document, `kind: List`, JSON);
    /// `-` reads standard input (JSON when it starts with `{` or `[`, else YAML). Without any,
    /// the cluster is read from its API server (see --kubeconfig).
    #[arg(value_name = "SNAPSHOT")]
    pub paths: Vec<PathBuf>,
    /// Read the cluster of this kubeconfig instead of files. Without SNAPSHOT paths and without
    /// this flag, kubectl's resolution: the files in KUBECONFIG, else ~/.kube/config, else the
    /// in-cluster service account. Read-only: nodes, pods, PodDisruptionBudgets,
    /// PriorityClasses, namespaces, Services, ReplicationControllers, ReplicaSets,
    /// StatefulSets and PodGroups are listed.
    #[arg(long, value_name = "FILE", conflicts_with = "paths")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to read (default: its current context).
    #[arg(long, value_name = "NAME", conflicts_with = "paths")]
    pub context: Option<String>,
    /// Objects per page when listing from the API server (`limit`; the rest follows with
    /// `continue` tokens).
    #[arg(long, value_name = "N", default_value_t = 500, value_parser = clap::value_parser!(u32).range(1..), conflicts_with = "paths")]
    pub page_size: u32,
    /// Only pending pods of this namespace form the batch; every other pod still counts as it
    /// is (bound pods hold their room, other pending pods are not placed in this run).
    #[arg(short = 'n', long, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
    /// Only pending pods whose labels match this selector form the batch (kubectl's syntax:
    /// `app=web,tier!=db,team in (a,b),!canary`).
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// Scheduler names whose pending pods kplace places (repeatable). Default: the profiles of
    /// `--config` (plus `kplace`, served by the `default-scheduler` profile unless a profile is
    /// named so); without a config, `default-scheduler` and `kplace`.
    #[arg(long = "scheduler-name", value_name = "NAME")]
    pub scheduler_names: Vec<String>,
}

impl SnapshotArgs {
    /// The batch `-n`/`-l` choose.
    pub fn batch(&self) -> anyhow::Result<kplace::snapshot::BatchFilter> {
        Ok(kplace::snapshot::BatchFilter::new(self.namespace.as_deref(), self.selector.as_deref())?)
    }

    /// Whether the cluster is read from an API server (no SNAPSHOT paths).
    pub fn is_live(&self) -> bool {
        self.paths.is_empty()
    }
}

/// Reads the objects: the SNAPSHOT paths (`-` from standard input), or the cluster of the
/// kubeconfig. Returns them with what they came from (the paths, or the server's URL).
pub fn read_snapshot(
    args: &SnapshotArgs,
) -> anyhow::Result<(kplace::snapshot::Snapshot, Vec<String>)> {
    if !args.is_live() {
        let snapshot = kplace::snapshot::dump::load_paths(&args.paths, || {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin().lock(), &mut text)?;
            Ok(text)
        })?;
        let origin = args.paths.iter().map(|p| p.display().to_string()).collect();
        return Ok((snapshot, origin));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let live = runtime.block_on(kplace::live::read(
        args.kubeconfig.as_deref(),
        args.context.as_deref(),
        &kplace::live::ReadOptions { page_size: args.page_size, ..Default::default() },
    ))?;
    tracing::info!(
        nodes = live.snapshot.nodes.len(),
        pods = live.snapshot.pods.len(),
        "read the cluster at {} ({})",
        live.server,
        live.source
    );
    Ok((live.snapshot, vec![live.server]))
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
    /// What the snapshot came from: the paths given, or the API server's URL.
    pub origin: Vec<String>,
}

/// Reads the snapshot named on the command line and builds the model; logs warnings.
pub fn load_cluster(
    args: &SnapshotArgs,
    config: Option<&kplace::framework::config::SchedulerConfig>,
) -> anyhow::Result<Loaded> {
    let (loaded, snapshot) = load_cluster_and_snapshot(args, config)?;
    // The typed objects are no longer needed: freeing them (about half a second at 100,000
    // nodes and 100,000 pods) happens beside the command rather than before it goes on.
    std::thread::spawn(move || drop(snapshot));
    Ok(loaded)
}

/// [`load_cluster`], also returning the typed objects read (for what the model does not keep).
pub fn load_cluster_and_snapshot(
    args: &SnapshotArgs,
    config: Option<&kplace::framework::config::SchedulerConfig>,
) -> anyhow::Result<(Loaded, kplace::snapshot::Snapshot)> {
    let start = std::time::Instant::now();
    let task = progress().spinner("loading the snapshot");
    let batch = args.batch()?;
    let (snapshot, origin) = read_snapshot(args)?;
    task.finish();
    let load_ms = start.elapsed().as_secs_f64() * 1000.0;
    let start = std::time::Instant::now();
    let task = progress().spinner("building the model");
    let mut options = kplace::snapshot::BuildOptions { batch, ..Default::default() };
    if let Some(config) = config {
        check_scheduler_names(&args.scheduler_names, config)?;
    }
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
    if cluster.ignored.outside_batch > 0 {
        tracing::info!(
            "{} outside the batch ({}) not placed in this run",
            output::count(cluster.ignored.outside_batch, "pending pod"),
            options.batch.describe()
        );
    }
    Ok((Loaded { cluster, load_ms, build_ms, origin }, snapshot))
}

/// An error naming each `--scheduler-name` that no profile of `config` serves, and the names
/// that are served.
pub fn check_scheduler_names(
    names: &[String],
    config: &kplace::framework::config::SchedulerConfig,
) -> anyhow::Result<()> {
    let unknown: Vec<&str> =
        names.iter().filter(|n| config.profile_for(n).is_none()).map(String::as_str).collect();
    if unknown.is_empty() {
        return Ok(());
    }
    let quoted = |v: &[&str]| v.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", ");
    let noun = if unknown.len() == 1 { "this name" } else { "these names" };
    anyhow::bail!(
        "--scheduler-name {}: no profile of the scheduler configuration serves {noun}; \
         the served names are {} (a profile with that schedulerName in --config serves it)",
        quoted(&unknown),
        quoted(&config.served_scheduler_names())
    )
}

/// `--backend`, shared by every command that evaluates.
#[derive(Debug, Clone, Copy, Args)]
pub struct BackendArgs {
    /// Where filters and scores are evaluated: `auto` (a hardware GPU when there is one, else
    /// the CPU; one line says which), `gpu` (any Vulkan adapter, a software one such as
    /// lavapipe included; an error without one) or `cpu`. Every backend gives the same result.
    #[arg(long, value_parser = parse_backend, default_value = "auto", value_name = "BACKEND")]
    pub backend: kplace::eval::Backend,
}

/// Parses `--backend` as `kplace::eval::Backend` spells it.
pub fn parse_backend(s: &str) -> Result<kplace::eval::Backend, String> {
    s.parse().map_err(|e: kplace::eval::BackendParseError| e.to_string())
}

/// Opens the evaluator `--backend` asks for. `auto` says in one line on stderr which it chose
/// (a hardware GPU, or the CPU and why); `gpu` without an adapter is an error; the explicit
/// choices are logged. `-q` hides the line.
pub fn open_evaluator(backend: kplace::eval::Backend) -> anyhow::Result<kplace::eval::Evaluator> {
    let selected = kplace::eval::Evaluator::select(backend)
        .map_err(|e| anyhow::anyhow!("--backend {backend}: {e}"))?;
    match (&selected.notice, backend) {
        (Some(notice), _) => notice_line(notice),
        (None, kplace::eval::Backend::Auto) => {
            notice_line(&format!("evaluating on {}", selected.evaluator.describe()))
        }
        (None, _) => tracing::info!("evaluating on {}", selected.evaluator.describe()),
    }
    Ok(selected.evaluator)
}

/// Prints `notice: <text>` on stderr unless `--quiet` was given.
pub fn notice_line(text: &str) {
    if !QUIET.get().copied().unwrap_or(false) {
        eprint_line(&format!("notice: {text}"));
    }
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
            notice_line(&format!("the GPU failed ({e}); evaluating on the CPU"));
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

/// The log filter for `-q` / `-v` when `RUST_LOG` is not set: kplace's own logs at the level
/// asked for; other crates' (wgpu, naga, kube, hyper) warnings and errors only, so that `-v`
/// is not buried under shader-compiler and HTTP debug output. kube's client logs every failed
/// request at ERROR, which `bind` and `schedule` report themselves: it shows with `-vv` only.
/// `RUST_LOG` replaces the whole filter (`RUST_LOG=debug` opens everything).
pub fn log_filter(verbose: u8, quiet: bool) -> &'static str {
    match (quiet, verbose) {
        (true, _) => "error,kube_client=off",
        (false, 0) => "warn,kube_client=off,kplace=info,kplace_solver=info",
        (false, 1) => "warn,kube_client=off,kplace=debug,kplace_solver=debug",
        (false, _) => "warn,kplace=trace,kplace_solver=trace",
    }
}

/// Sets up `tracing` on stderr. `RUST_LOG` overrides the level.
pub fn init_logging(verbose: u8, quiet: bool) {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(log_filter(verbose, quiet)));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| Stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .without_time()
        // A closed stderr loses the logs; it must not also panic in `eprintln!`.
        .log_internal_errors(false)
        .init();
}

/// The error and its causes on one line, `outer: inner: innermost`, each cause said once: a
/// cause whose text the outer messages already contain (an error that prints its source, then
/// reports it again as its source) is not repeated.
pub fn render_error(err: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// Writes `line` and a newline to stderr with the progress bars lifted off the screen, its
/// control characters escaped (an error may quote a path or a name from the input); a closed
/// or broken stderr loses the line (where `eprintln!` would panic).
pub fn eprint_line(line: &str) {
    use std::io::Write;
    let safe: Vec<_> = line.split('\n').map(output::escape_controls).collect();
    let text = safe.join("\n");
    kplace::progress::suspend(|| {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{text}");
    });
}

/// stderr for log lines: each line is written with the progress bars lifted off the screen
/// ([`kplace::progress::suspend`]), so bars and logs do not tear each other. Errors (a closed
/// stderr) are ignored: the logs are lost, the command goes on.
struct Stderr;

impl std::io::Write for Stderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let _ = kplace::progress::suspend(|| std::io::stderr().write_all(buf));
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let _ = std::io::stderr().flush();
        Ok(())
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
        Command::Snapshot(args) => snapshot::run(&args),
        Command::Completion(args) => completion(&args),
    }
}
