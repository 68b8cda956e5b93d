//! `kplace schedule`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use kplace::schedule::lease::LeaseConfig;
use kplace::schedule::queue::BackoffPolicy;
use kplace::schedule::settings::{FileSettings, read_file_settings};
use kplace::schedule::{ScheduleOptions, hostname};

/// `kplace schedule`.
#[derive(Debug, Args)]
pub struct ScheduleArgs {
    /// The kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then the in-cluster
    /// service account).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// The kubeconfig context (default: the current context).
    #[arg(long, value_name = "NAME")]
    context: Option<String>,
    /// Scheduler names whose pending pods kplace places (repeatable). Default: the profiles of
    /// `--config`; without a config, `kplace`.
    #[arg(long = "scheduler-name", value_name = "NAME")]
    scheduler_names: Vec<String>,
    /// A KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) file: profiles, and
    /// `leaderElection` and the pod backoff for this command.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// How long a batch gathers pods after the first one is ready (e.g. 500ms, 2s).
    #[arg(long, default_value = "500ms", value_parser = kplace::duration::parse, value_name = "DURATION")]
    batch_window: Duration,
    /// The most pods in one batch.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    max_batch: u32,
    /// Where to serve /metrics, /healthz (liveness) and /readyz (`off` for nowhere). Local
    /// only by default; `0.0.0.0:10261` exposes it (e.g. to Prometheus in a pod).
    #[arg(long, default_value = "127.0.0.1:10261", value_name = "ADDR")]
    metrics_addr: String,
    /// Elect a leader among replicas through a Lease (default: the config's
    /// leaderElection.leaderElect, else true).
    #[arg(long, value_name = "BOOL")]
    leader_elect: Option<bool>,
    /// The Lease's name (default: the config's leaderElection.resourceName, else `kplace`).
    #[arg(long, value_name = "NAME")]
    lease_name: Option<String>,
    /// The Lease's namespace (default: the config's leaderElection.resourceNamespace, else
    /// `kube-system`).
    #[arg(long, value_name = "NAMESPACE")]
    lease_namespace: Option<String>,
    /// This replica's identity in the Lease (default: host name plus a random suffix).
    #[arg(long, value_name = "ID")]
    identity: Option<String>,
    /// How long standbys wait before taking an unrenewed Lease (default: config, else 15s).
    #[arg(long, value_parser = kplace::duration::parse, value_name = "DURATION")]
    lease_duration: Option<Duration>,
    /// How long the leader tries to renew before it stops (default: config, else 10s).
    #[arg(long, value_parser = kplace::duration::parse, value_name = "DURATION")]
    renew_deadline: Option<Duration>,
    /// The time between election tries (default: config, else 2s).
    #[arg(long, value_parser = kplace::duration::parse, value_name = "DURATION")]
    retry_period: Option<Duration>,
    /// Client-side request rate limit for bindings, requests per second (0: none).
    #[arg(long, default_value_t = 50.0)]
    qps: f64,
    /// Requests allowed at once before `--qps` applies.
    #[arg(long, default_value_t = 100)]
    burst: u32,
    /// A rebalancing plan (`kplace rebalance -o json|yaml`) being carried out by
    /// `kplace bind --plan`: the replacement of each moved pod (the next pending pod of the same
    /// controlling owner, once the moved pod is gone) is placed on the move's planned node when
    /// that node can take it (repeatable).
    #[arg(long, value_name = "PLAN")]
    steer: Vec<std::path::PathBuf>,
    /// What each batch maximizes within a priority tier (as `kplace plan --objective`).
    #[arg(long, value_enum, default_value_t = super::plan::ObjectiveArg::Resources)]
    objective: super::plan::ObjectiveArg,
    #[command(flatten)]
    backend: super::BackendArgs,
}

/// The served names: `--scheduler-name`, else the config's profiles, else `kplace`.
fn served_names(
    args: &ScheduleArgs,
    config: &kplace::framework::config::SchedulerConfig,
) -> Vec<String> {
    if !args.scheduler_names.is_empty() {
        return args.scheduler_names.clone();
    }
    if args.config.is_some() {
        return config.served_scheduler_names().iter().map(|s| (*s).to_string()).collect();
    }
    vec!["kplace".to_string()]
}

fn options(
    args: &ScheduleArgs,
    names: Vec<String>,
    file: &FileSettings,
) -> anyhow::Result<ScheduleOptions> {
    if !(args.qps.is_finite() && args.qps >= 0.0) {
        anyhow::bail!("--qps must be a number of requests per second, 0 or more: {}", args.qps);
    }
    let mut o = ScheduleOptions::new(names);
    o.backend = args.backend.backend;
    o.objective = args.objective.into();
    for path in &args.steer {
        let plan = kplace::bind::read_plan(path)?;
        if plan.moves.is_empty() {
            tracing::warn!("{}: the plan has no moves; nothing to steer", path.display());
        }
        o.steer.extend(plan.moves);
    }
    o.batch_window = args.batch_window;
    o.max_batch = args.max_batch as usize;
    let defaults = BackoffPolicy::default();
    o.backoff = BackoffPolicy {
        initial: file.pod_initial_backoff.unwrap_or(defaults.initial),
        max: file.pod_max_backoff.unwrap_or(defaults.max),
        ..defaults
    };
    o.bind.qps = args.qps;
    o.bind.burst = args.burst;
    if args.leader_elect.or(file.leader_elect).unwrap_or(true) {
        let identity = match &args.identity {
            Some(id) => id.clone(),
            None => format!("{}_{:016x}", hostname(), rand::random::<u64>()),
        };
        let name = args.lease_name.clone().or(file.lease_name.clone()).unwrap_or("kplace".into());
        let namespace = args
            .lease_namespace
            .clone()
            .or(file.lease_namespace.clone())
            .unwrap_or("kube-system".into());
        let mut le = LeaseConfig::new(&name, &namespace, &identity);
        le.lease_duration =
            args.lease_duration.or(file.lease_duration).unwrap_or(le.lease_duration);
        le.renew_deadline =
            args.renew_deadline.or(file.renew_deadline).unwrap_or(le.renew_deadline);
        le.retry_period = args.retry_period.or(file.retry_period).unwrap_or(le.retry_period);
        o.leader_election = Some(le);
    }
    Ok(o)
}

/// Turns SIGTERM or SIGINT into the shutdown signal.
async fn signals(tx: tokio::sync::watch::Sender<bool>) -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).context("listening for SIGTERM")?;
    let mut int = signal(SignalKind::interrupt()).context("listening for SIGINT")?;
    let which = tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    };
    tracing::info!("{which}: finishing the bindings in flight, then stopping");
    tx.send_replace(true);
    Ok(())
}

pub fn run(args: &ScheduleArgs) -> anyhow::Result<ExitCode> {
    let config = super::load_config(args.config.as_deref())?;
    let file = match &args.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            read_file_settings(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?
        }
        None => FileSettings::default(),
    };
    let names = served_names(args, &config);
    super::check_scheduler_names(&names, &config)?;
    let options = options(args, names, &file)?;
    kplace::schedule::check_profiles(&config, &options.scheduler_names)?;
    if let Some(le) = &options.leader_election {
        le.validate().map_err(|e| anyhow::anyhow!("leader election: {e}"))?;
    }
    if options.scheduler_names.iter().any(|n| n == "default-scheduler") {
        tracing::warn!(
            "serving pods of `default-scheduler`: kube-scheduler serves them too unless it is \
             not running"
        );
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let summary = runtime.block_on(async {
        let (config_k, source) =
            kplace::bind::load_config(args.kubeconfig.as_deref(), args.context.as_deref()).await?;
        tracing::info!(
            names = %options.scheduler_names.join(","),
            "scheduling against {} ({source})",
            config_k.cluster_url
        );
        let client = kplace::bind::client(config_k)?;
        let listener = match args.metrics_addr.as_str() {
            "off" | "" => None,
            addr => {
                let l = tokio::net::TcpListener::bind(addr)
                    .await
                    .with_context(|| format!("listening on {addr:?} for /metrics"))?;
                tracing::info!("serving /metrics, /healthz and /readyz on {}", l.local_addr()?);
                Some(l)
            }
        };
        let (tx, rx) = tokio::sync::watch::channel(false);
        let signal_task = tokio::spawn(signals(tx));
        let summary = kplace::schedule::run(client, config, options, listener, rx).await;
        signal_task.abort();
        anyhow::Ok(summary?)
    })?;
    tracing::info!(
        led = summary.led,
        lease_released = ?summary.lease_released,
        "bound {} in {}",
        super::output::count(summary.bound as usize, "pod"),
        super::output::count(summary.batches as usize, "batch")
    );
    Ok(ExitCode::SUCCESS)
}
