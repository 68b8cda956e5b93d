//! `kplace bind`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, ValueEnum};
use kplace::bind::{ActionResult, BindOptions, BindReport};

use super::output::{Table, print_document, print_stdout};
use super::{EXIT_INCOMPLETE, OutputFormat};

/// Server-side dry run, as kubectl's `--dry-run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DryRun {
    /// Change the cluster.
    None,
    /// Send every request with `dryRun=All`: the API server validates, admits and changes
    /// nothing.
    Server,
}

/// `kplace bind`.
#[derive(Debug, Args)]
pub struct BindArgs {
    /// The plan document (JSON or YAML) to carry out, as `baseline -o json` prints it.
    #[arg(long, value_name = "PLAN")]
    plan: PathBuf,
    /// The kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then the in-cluster
    /// service account).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// The kubeconfig context (default: the current context).
    #[arg(long, value_name = "NAME")]
    context: Option<String>,
    /// `server` sends every request as a server-side dry run; nothing changes.
    #[arg(long, value_enum, default_value_t = DryRun::None, value_name = "MODE")]
    dry_run: DryRun,
    /// Most eviction groups or bindings in flight at once.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..))]
    concurrency: u32,
    /// Client-side request rate limit, requests per second (0: none).
    #[arg(long, default_value_t = 50.0)]
    qps: f64,
    /// Requests allowed at once before `--qps` applies.
    #[arg(long, default_value_t = 100)]
    burst: u32,
    /// Seconds the binder keeps retrying 429s, 5xx, timeouts and dropped connections, from its
    /// start; a write left uncertain is then settled by reading the pod back.
    #[arg(long, default_value_t = 300, value_name = "SECONDS")]
    timeout: u64,
    /// Seconds to wait for one reply before the attempt counts as failed.
    #[arg(long, default_value_t = 30, value_name = "SECONDS")]
    request_timeout: u64,
    /// Seconds to wait for evicted pods to be gone before their preemptor's binding is skipped.
    #[arg(long, default_value_t = 300, value_name = "SECONDS")]
    eviction_timeout: u64,
    /// Seconds a wave of moves (a rebalancing plan) may take: its evictions, then every
    /// replacement bound, running and ready; later waves are skipped when it runs out.
    #[arg(long, default_value_t = 600, value_name = "SECONDS")]
    wave_timeout: u64,
    /// Seconds between checks of a wave's replacements (fractions allowed).
    #[arg(long, default_value_t = 2.0, value_name = "SECONDS")]
    wave_poll: f64,
    /// Scheduler names kplace serves (repeatable): a move's replacement pod with one of these
    /// `spec.schedulerName`s is bound to the planned node; others are left to their scheduler
    /// (which may choose another node). Default: `kplace`.
    #[arg(long = "scheduler-name", value_name = "NAME")]
    scheduler_names: Vec<String>,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = OutputFormat::Table)]
    output: OutputFormat,
}

pub fn run(args: &BindArgs) -> anyhow::Result<ExitCode> {
    if !(args.qps.is_finite() && args.qps >= 0.0) {
        anyhow::bail!("--qps must be a number of requests per second, 0 or more: {}", args.qps);
    }
    if !(args.wave_poll.is_finite() && (0.01..=3600.0).contains(&args.wave_poll)) {
        anyhow::bail!("--wave-poll must be between 0.01 and 3600 seconds: {}", args.wave_poll);
    }
    let plan = kplace::bind::read_plan(&args.plan)?;
    kplace::bind::validate(&plan).with_context(|| format!("plan {}", args.plan.display()))?;
    let options = BindOptions {
        dry_run: args.dry_run == DryRun::Server,
        concurrency: args.concurrency as usize,
        qps: args.qps,
        burst: args.burst,
        timeout: Duration::from_secs(args.timeout.max(1)),
        request_timeout: Duration::from_secs(args.request_timeout.max(1)),
        eviction_timeout: Duration::from_secs(args.eviction_timeout),
        wave_timeout: Duration::from_secs(args.wave_timeout),
        wave_poll: Duration::from_secs_f64(args.wave_poll),
        steer_scheduler_names: if args.scheduler_names.is_empty() {
            vec!["kplace".to_string()]
        } else {
            args.scheduler_names.clone()
        },
        ..BindOptions::default()
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let report = runtime.block_on(async {
        let (config, source) =
            kplace::bind::load_config(args.kubeconfig.as_deref(), args.context.as_deref()).await?;
        tracing::info!(
            placements = plan.placements.len(),
            evictions = plan.evictions.len(),
            moves = plan.moves.len(),
            dry_run = options.dry_run,
            "binding against {} ({source})",
            config.cluster_url
        );
        let server = config.cluster_url.to_string();
        let client = kplace::bind::client(config)?;
        kplace::bind::preflight(&client, &plan, &options, &server).await?;
        let total = (plan.placements.len() + plan.evictions.len() + plan.moves.len()) as u64;
        let task = super::progress().bar("bind: actions", total);
        let report = kplace::bind::bind(&client, &plan, &options, &|r: &ActionResult| {
            task.set_message(r.pod.clone());
            task.inc(1);
        })
        .await?;
        task.finish();
        anyhow::Ok(report)
    })?;
    match args.output {
        OutputFormat::Table => print_stdout(&render(&report))?,
        other => print_document(&report, other)?,
    }
    Ok(if report.complete { ExitCode::SUCCESS } else { ExitCode::from(EXIT_INCOMPLETE) })
}

/// The report as a table, then one line of totals.
pub fn render(report: &BindReport) -> String {
    let mut t = Table::new(&["ACTION", "POD", "NODE", "OUTCOME", "ATTEMPTS", "MESSAGE"]);
    for r in report.evictions.iter().chain(&report.bindings) {
        let action = match r.action {
            kplace::bind::Action::Evict => "evict",
            kplace::bind::Action::Bind => "bind",
            kplace::bind::Action::Move => "move",
        };
        t.row(vec![
            action.to_string(),
            r.pod.clone(),
            r.node.clone(),
            r.outcome.label().to_string(),
            r.attempts.to_string(),
            r.message.clone(),
        ]);
    }
    for m in &report.moves {
        let landed = match (&m.replacement, &m.node) {
            (Some(p), Some(n)) => format!("; replacement {p} on {n}"),
            (Some(p), None) => format!("; replacement {p}"),
            _ => String::new(),
        };
        t.row(vec![
            format!("move (wave {})", m.wave),
            m.pod.clone(),
            format!("{} -> {}", m.from, m.to),
            m.outcome.label().to_string(),
            m.attempts.to_string(),
            format!("{}{landed}{}", m.message, if m.steered { " (steered)" } else { "" }),
        ]);
    }
    let mut out = t.render();
    let counts = |m: &std::collections::BTreeMap<kplace::bind::Outcome, usize>| {
        m.iter().map(|(o, n)| format!("{n} {o}")).collect::<Vec<_>>().join(", ")
    };
    out.push('\n');
    out.push_str(&format!("bindings: {}", or_none(counts(&report.summary.bindings))));
    if !report.evictions.is_empty() {
        out.push_str(&format!("; evictions: {}", counts(&report.summary.evictions)));
    }
    if !report.moves.is_empty() {
        out.push_str(&format!("; moves: {}", counts(&report.summary.moves)));
    }
    if report.dry_run {
        out.push_str(" (server dry run: nothing changed)");
    }
    out.push('\n');
    if !report.complete {
        out.push_str(
            "the plan was not carried out completely; running bind again retries what is left\n",
        );
    }
    out
}

fn or_none(s: String) -> String {
    if s.is_empty() { "none".to_string() } else { s }
}
