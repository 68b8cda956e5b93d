//! `kplace baseline`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use kplace::baseline::{BaselineOptions, VictimExit, run_baseline_on, run_baseline_with_progress};
use kplace::eval::Evaluator;
use kplace::plan::Plan;

use super::output::{Table, count, pod_names, print_list_document, print_text};
use super::{
    BackendArgs, ListFormat, SnapshotArgs, load_cluster, load_config, open_evaluator,
    with_gpu_fallback,
};

/// When preemption victims leave their node (`--victims-leave`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum VictimsArg {
    /// After every pending pod's first attempt: victims stop more slowly than the queue drains
    /// (a 30 s grace period; kso `--grace-delay 5s`).
    #[default]
    AfterQueue,
    /// As soon as they are evicted: victims that stop on SIGTERM (kso's default
    /// `--grace-delay 10ms`); the pods after a preemptor may use the room it leaves over.
    AtOnce,
}

impl From<VictimsArg> for VictimExit {
    fn from(v: VictimsArg) -> Self {
        match v {
            VictimsArg::AfterQueue => VictimExit::AfterQueue,
            VictimsArg::AtOnce => VictimExit::AtOnce,
        }
    }
}

/// `kplace baseline`.
#[derive(Debug, Args)]
pub struct BaselineArgs {
    #[command(flatten)]
    snapshot: SnapshotArgs,
    #[command(flatten)]
    backend: BackendArgs,
    /// A KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) file.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Output format (`wide`: each pod's priority and requests; `name`: the placed pods).
    #[arg(short, long, value_enum, default_value_t = ListFormat::Table)]
    output: ListFormat,
    /// Seed for breaking ties between equally scored nodes.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Score every feasible node instead of upstream's adaptive sample.
    #[arg(long)]
    score_all_nodes: bool,
    /// When preemption victims leave their node: kube-scheduler's plan depends on it (the pods
    /// queued after a preemptor see either the victims or the room they freed).
    #[arg(long, value_enum, default_value_t = VictimsArg::AfterQueue)]
    victims_leave: VictimsArg,
    /// Replay another scheduler's plan document (e.g. the real kube-scheduler's, from kso)
    /// decision by decision, checking each against kplace's own; divergences are listed in
    /// `summary.follow` and make the exit code 3.
    #[arg(long, value_name = "PLAN")]
    follow: Option<PathBuf>,
}

/// The sequential scheduler's plan, as `kplace baseline` makes it on `evaluator`: on a GPU the
/// profiles' leading static filters are evaluated there as matrices
/// ([`kplace::baseline::StaticFilters`]); on the CPU the framework evaluates every node it
/// visits (the CPU reference). The plans are the same.
pub(super) fn sequential(
    state: kplace::model::ClusterState,
    pending: &[kplace::model::Pod],
    config: &kplace::framework::config::SchedulerConfig,
    options: BaselineOptions,
    progress: &kplace::progress::Progress,
    evaluator: &mut Evaluator,
) -> Result<Plan, kplace::baseline::BaselineError> {
    match evaluator {
        Evaluator::Cpu => {
            Ok(run_baseline_with_progress(state, pending, config, options, progress)?)
        }
        gpu => run_baseline_on(state, pending, config, options, progress, gpu),
    }
}

pub fn run(args: &BaselineArgs) -> anyhow::Result<ExitCode> {
    let config = load_config(args.config.as_deref())?;
    let loaded = load_cluster(&args.snapshot, Some(&config))?;
    let options = BaselineOptions {
        seed: args.seed,
        score_all_nodes: args.score_all_nodes,
        victims_leave: args.victims_leave.into(),
        ..Default::default()
    };
    if let Some(path) = &args.follow {
        return follow(args, path, loaded, &config, options);
    }
    let mut evaluator = open_evaluator(args.backend.backend)?;
    let mut state = super::Attempts::new(loaded.cluster.state, args.backend.backend, &evaluator);
    let progress = super::progress();
    let mut plan = with_gpu_fallback(args.backend.backend, &mut evaluator, |evaluator| {
        sequential(
            state.take(),
            &loaded.cluster.pending,
            &config,
            options.clone(),
            &progress,
            evaluator,
        )
    })?;
    plan.summary.timings_ms.load = loaded.load_ms;
    plan.summary.timings_ms.build = loaded.build_ms;
    print_plan(&plan, args.output, &loaded.cluster.pending)?;
    Ok(ExitCode::SUCCESS)
}

/// `kplace baseline --follow PLAN`: the followed plan, with every divergence; exit code 3 when
/// there is one.
fn follow(
    args: &BaselineArgs,
    path: &std::path::Path,
    loaded: super::Loaded,
    config: &kplace::framework::config::SchedulerConfig,
    options: BaselineOptions,
) -> anyhow::Result<ExitCode> {
    let theirs = kplace::bind::read_plan(path)?;
    let started = std::time::Instant::now();
    let mut plan = kplace::baseline::follow::run_follow(
        loaded.cluster.state,
        &loaded.cluster.pending,
        config,
        options,
        &theirs,
    )?;
    plan.summary.timings_ms.solve = started.elapsed().as_secs_f64() * 1000.0;
    plan.summary.timings_ms.load = loaded.load_ms;
    plan.summary.timings_ms.build = loaded.build_ms;
    match (args.output, &plan.summary.follow) {
        (ListFormat::Table | ListFormat::Wide, Some(report)) => {
            let wide = (args.output == ListFormat::Wide).then_some(&loaded.cluster.pending[..]);
            print_text(&(render(&plan, wide) + &render_follow(report)))?
        }
        (format, _) => print_plan(&plan, format, &loaded.cluster.pending)?,
    }
    let diverged = plan.summary.follow.as_ref().is_some_and(|f| !f.divergences.is_empty());
    Ok(if diverged { ExitCode::from(super::EXIT_INCOMPLETE) } else { ExitCode::SUCCESS })
}

/// The divergences of a `--follow` run, as a table and a one-line count.
fn render_follow(report: &kplace::baseline::follow::FollowReport) -> String {
    let mut out = String::new();
    if !report.divergences.is_empty() {
        out.push('\n');
        let mut t = Table::new(&["DIVERGES", "THEIRS", "OURS", "WHY"]);
        for d in &report.divergences {
            t.row(vec![d.pod.clone(), d.theirs.clone(), d.ours.clone(), d.why.clone()]);
        }
        out.push_str(&t.render());
    }
    out.push_str(&format!(
        "\nfollowed {} decisions: {}\n",
        report.followed,
        count(report.divergences.len(), "divergence")
    ));
    out
}

/// Prints a plan of `baseline` or `plan` as `-o` asks: `name` lists the placed pods
/// (`pod/NAMESPACE/NAME`); `wide` adds the priority and requests of each pending pod.
pub fn print_plan(
    plan: &Plan,
    format: ListFormat,
    pending: &[kplace::model::Pod],
) -> anyhow::Result<()> {
    match format {
        ListFormat::Table => print_text(&render(plan, None)),
        ListFormat::Wide => print_text(&render(plan, Some(pending))),
        ListFormat::Name => print_text(&pod_names(plan.placements.iter().map(|p| p.pod.as_str()))),
        document => print_list_document(plan, document),
    }
}

/// `PRIORITY`, `CPU` and `MEMORY` of a pending pod for `-o wide` (`-` when unknown).
fn pod_columns(
    pods: &std::collections::BTreeMap<String, &kplace::model::Pod>,
    key: &str,
) -> [String; 3] {
    match pods.get(key) {
        Some(p) => [
            p.priority.to_string(),
            kplace::inspect::human_amount(kplace::resources::CPU, p.requests.milli_cpu),
            kplace::inspect::human_amount(kplace::resources::MEMORY, p.requests.memory),
        ],
        None => ["-".to_string(), "-".to_string(), "-".to_string()],
    }
}

/// The plan as tables: placements, evictions, unschedulable pods, then the summary; with the
/// pending pods (`-o wide`), the placed and unschedulable pods' priority and requests too.
pub fn render(plan: &Plan, wide: Option<&[kplace::model::Pod]>) -> String {
    let pods: std::collections::BTreeMap<String, &kplace::model::Pod> = wide
        .unwrap_or_default()
        .iter()
        .map(|p| (format!("{}/{}", p.namespace, p.name), p))
        .collect();
    let extra: &[&str] = if wide.is_some() { &["PRIORITY", "CPU", "MEMORY"] } else { &[] };
    let headers = |first: &[&'static str], last: &[&'static str]| -> Vec<&'static str> {
        [first, extra, last].concat()
    };
    let with_extra = |mut row: Vec<String>, pod: &str| {
        if wide.is_some() {
            row.extend(pod_columns(&pods, pod));
        }
        row
    };
    let mut out = String::new();
    let mut t = Table::new(&headers(&["POD", "NODE"], &[]));
    for p in &plan.placements {
        t.row(with_extra(vec![p.pod.clone(), p.node.clone()], &p.pod));
    }
    out.push_str(&t.render());
    if !plan.evictions.is_empty() {
        out.push('\n');
        let mut t = Table::new(&["EVICTED", "NODE", "FOR"]);
        for e in &plan.evictions {
            t.row(vec![e.pod.clone(), e.node.clone(), e.preemptor.clone()]);
        }
        out.push_str(&t.render());
    }
    if !plan.unschedulable.is_empty() {
        out.push('\n');
        let mut t = Table::new(&headers(&["UNSCHEDULABLE"], &["MESSAGE"]));
        for u in &plan.unschedulable {
            let mut row = with_extra(vec![u.pod.clone()], &u.pod);
            // The message last: it is the long column.
            row.push(u.message.clone());
            t.row(row);
        }
        out.push_str(&t.render());
    }
    let s = &plan.summary;
    out.push_str(&format!(
        "\n{}: {} placed, {} unschedulable, {} evicted; {} in use\n",
        s.algorithm,
        s.placed,
        s.unschedulable,
        s.evicted,
        count(s.nodes_used, "node")
    ));
    let mut t = Table::new(&["PRIORITY", "PLACED", "UNSCHEDULABLE"]);
    let mut prios: Vec<i32> =
        s.placed_by_priority.keys().chain(s.unschedulable_by_priority.keys()).copied().collect();
    prios.sort_unstable_by(|a, b| b.cmp(a));
    prios.dedup();
    for p in prios {
        t.row(vec![
            p.to_string(),
            s.placed_by_priority.get(&p).copied().unwrap_or(0).to_string(),
            s.unschedulable_by_priority.get(&p).copied().unwrap_or(0).to_string(),
        ]);
    }
    out.push_str(&t.render());
    out.push('\n');
    let mut t = Table::new(&["RESOURCE", "MEAN UTIL", "MAX UTIL", "STDDEV"]);
    for (name, u) in &s.utilization {
        t.row(vec![
            name.clone(),
            format!("{:.1}%", u.mean * 100.0),
            format!("{:.1}%", u.max * 100.0),
            format!("{:.3}", u.stddev),
        ]);
    }
    out.push_str(&t.render());
    out.push_str(&format!(
        "\ntime: load {:.1} ms, build {:.1} ms, encode {:.1} ms, evaluate {:.1} ms, \
         schedule {:.1} ms\n",
        s.timings_ms.load,
        s.timings_ms.build,
        s.timings_ms.encode,
        s.timings_ms.evaluate,
        s.timings_ms.solve
    ));
    out
}
