//! `kplace bind`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, ValueEnum};
use kplace::bind::{ActionResult, BindOptions, BindReport};

use super::output::{Table, pod_names, print_list_document, print_text};
use super::{EXIT_INCOMPLETE, ListFormat};

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
    /// How long the binder keeps retrying 429s, 5xx, timeouts and dropped connections, from
    /// its start (a Go duration: 500ms, 30s, 5m); a write left uncertain is then settled by
    /// reading the pod back.
    #[arg(long, default_value = "5m", value_parser = kplace::duration::parse, value_name = "DURATION")]
    timeout: Duration,
    /// How long to wait for one reply before the attempt counts as failed (a Go duration:
    /// 500ms, 30s, 1m30s).
    #[arg(long, default_value = "30s", value_parser = kplace::duration::parse, value_name = "DURATION")]
    request_timeout: Duration,
    /// How long to wait for evicted pods to be gone before their preemptor's binding is
    /// skipped.
    #[arg(long, default_value = "5m", value_parser = kplace::duration::parse, value_name = "DURATION")]
    eviction_timeout: Duration,
    /// How long a wave of moves (a rebalancing plan) may take: its evictions, then every
    /// replacement bound, running and ready; later waves are skipped when it runs out.
    #[arg(long, default_value = "10m", value_parser = kplace::duration::parse, value_name = "DURATION")]
    wave_timeout: Duration,
    /// The time between checks of a wave's replacements (10ms to 1h).
    #[arg(long, default_value = "2s", value_parser = kplace::duration::parse, value_name = "DURATION")]
    wave_poll: Duration,
    /// Scheduler names kplace serves (repeatable): a move's replacement pod with one of these
    /// `spec.schedulerName`s is bound to the planned node; others are left to their scheduler
    /// (which may choose another node). Default: `kplace`.
    #[arg(long = "scheduler-name", value_name = "NAME")]
    scheduler_names: Vec<String>,
    /// Output format.
    /// (`wide`: also the pod each eviction makes room for; `name`: every pod acted on.)
    #[arg(short, long, value_enum, default_value_t = ListFormat::Table)]
    output: ListFormat,
}

pub fn run(args: &BindArgs) -> anyhow::Result<ExitCode> {
    if !(args.qps.is_finite() && args.qps >= 0.0) {
        anyhow::bail!("--qps must be a number of requests per second, 0 or more: {}", args.qps);
    }
    if args.request_timeout.is_zero() {
        anyhow::bail!("--request-timeout must be more than 0");
    }
    if !(Duration::from_millis(10)..=Duration::from_secs(3600)).contains(&args.wave_poll) {
        anyhow::bail!(
            "--wave-poll must be between 10ms and 1h: {}",
            kplace::duration::format(args.wave_poll)
        );
    }
    let plan = kplace::bind::read_plan(&args.plan)?;
    kplace::bind::validate(&plan).with_context(|| format!("plan {}", args.plan.display()))?;
    let options = BindOptions {
        dry_run: args.dry_run == DryRun::Server,
        concurrency: args.concurrency as usize,
        qps: args.qps,
        burst: args.burst,
        timeout: args.timeout,
        request_timeout: args.request_timeout,
        eviction_timeout: args.eviction_timeout,
        wave_timeout: args.wave_timeout,
        wave_poll: args.wave_poll,
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
        ListFormat::Table => print_text(&render(&report, false))?,
        ListFormat::Wide => print_text(&render(&report, true))?,
        ListFormat::Name => print_text(&pod_names(
            report
                .evictions
                .iter()
                .chain(&report.bindings)
                .map(|r| r.pod.as_str())
                .chain(report.moves.iter().map(|m| m.pod.as_str())),
        ))?,
        document => print_list_document(&report, document)?,
    }
    Ok(if report.complete { ExitCode::SUCCESS } else { ExitCode::from(EXIT_INCOMPLETE) })
}

/// The report as a table, then one line of totals; `wide` adds the pod each eviction makes room
/// for.
pub fn render(report: &BindReport, wide: bool) -> String {
    let headers: &[&str] = if wide {
        &["ACTION", "POD", "NODE", "OUTCOME", "ATTEMPTS", "FOR", "MESSAGE"]
    } else {
        &["ACTION", "POD", "NODE", "OUTCOME", "ATTEMPTS", "MESSAGE"]
    };
    let mut t = Table::new(headers);
    for r in report.evictions.iter().chain(&report.bindings) {
        let action = match r.action {
            kplace::bind::Action::Evict => "evict",
            kplace::bind::Action::Bind => "bind",
            kplace::bind::Action::Move => "move",
        };
        let mut row = vec![
            action.to_string(),
            r.pod.clone(),
            r.node.clone(),
            r.outcome.label().to_string(),
            r.attempts.to_string(),
        ];
        if wide {
            row.push(r.preemptor.clone().unwrap_or_else(|| "-".to_string()));
        }
        row.push(r.message.clone());
        t.row(row);
    }
    for m in &report.moves {
        let landed = match (&m.replacement, &m.node) {
            (Some(p), Some(n)) => format!("; replacement {p} on {n}"),
            (Some(p), None) => format!("; replacement {p}"),
            _ => String::new(),
        };
        let mut row = vec![
            format!("move (wave {})", m.wave),
            m.pod.clone(),
            format!("{} -> {}", m.from, m.to),
            m.outcome.label().to_string(),
            m.attempts.to_string(),
        ];
        if wide {
            row.push("-".to_string());
        }
        row.push(format!("{}{landed}{}", m.message, if m.steered { " (steered)" } else { "" }));
        t.row(row);
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
