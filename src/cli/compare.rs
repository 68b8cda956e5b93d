//! `kplace compare`: `baseline` and `plan` on the same snapshot, side by side, and
//! optionally an HTML report. Also home of [`run_plan`] and [`run_baseline`], the only places
//! `compare` and `bench` make plans.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::Args;
use kplace::baseline::{BaselineOptions, VictimExit};
use kplace::batch::{BatchOptions, plan_greedy_on};
use kplace::compare::{Comparison, Decided, Settings, SnapshotInfo, compare, report};
use kplace::eval::{Backend, Evaluator};
use kplace::framework::config::SchedulerConfig;
use kplace::model::{ClusterState, Pod};
use kplace::progress::Progress;

use super::baseline::VictimsArg;
use super::output::{Table, count, print_document, print_stdout};
use super::plan::{ObjectiveArg, Solver};
use super::{
    OutputFormat, SnapshotArgs, load_cluster, load_config, open_evaluator, parse_backend,
    with_gpu_fallback,
};

/// Exit code when the plan (not the baseline) breaks a rule.
pub const EXIT_VIOLATIONS: u8 = 3;

/// `kplace compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    #[command(flatten)]
    snapshot: SnapshotArgs,
    /// A KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) file, used by both.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The batch algorithm of `plan` (as `kplace plan --solver`).
    #[arg(long, value_enum, default_value_t = Solver::Auto)]
    solver: Solver,
    /// Where `baseline` and `plan` evaluate: auto, gpu or cpu (as their `--backend`).
    #[arg(long, value_parser = parse_backend, default_value = "auto", value_name = "BACKEND")]
    backend: Backend,
    /// Seed of both (tie-breaking, preemption).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Also run `baseline` with the next N-1 seeds and set each workload's spread under the
    /// plan against baseline's under every seed (kube-scheduler breaks ties between equally
    /// scored nodes at random, so one baseline run is one draw of its spread).
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100))]
    baseline_seeds: u32,
    /// Set `plan` against this plan document instead of running `baseline`: another
    /// scheduler's decisions on the same snapshot, e.g. the real kube-scheduler's
    /// (`../shared/upstream/kso schedule SNAPSHOT -o PLAN`). Its `summary.wall_ms`, when it has
    /// one, is its decision time. Pending pods it does not decide count as missing (`kplace
    /// check`): with kso, `--scheduler-name default-scheduler` leaves out the pods it does not
    /// serve. Given more than once (runs of a scheduler that breaks ties at random), the first
    /// is the baseline and each workload's spread is set against every one's, as with
    /// `--baseline-seeds`.
    #[arg(long, value_name = "PLAN", conflicts_with_all = ["baseline_seeds", "victims_leave"])]
    baseline_plan: Vec<PathBuf>,
    /// What `plan` maximizes within a priority tier (as `kplace plan --objective`).
    #[arg(long, value_enum, default_value_t = ObjectiveArg::Resources)]
    objective: ObjectiveArg,
    /// Let `plan` return the sequential plan when that ranks higher (as `kplace plan
    /// --ensure-baseline`).
    #[arg(long)]
    ensure_baseline: bool,
    /// When `baseline`'s preemption victims leave their node (as `kplace baseline
    /// --victims-leave`).
    #[arg(long, value_enum, default_value_t = VictimsArg::AfterQueue)]
    victims_leave: VictimsArg,
    /// Accepted for compatibility and ignored (the fallback is off unless --ensure-baseline).
    #[arg(long = "no-fallback", hide = true)]
    _no_fallback: bool,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = OutputFormat::Table)]
    output: OutputFormat,
    /// Also write a self-contained HTML report (charts as inline SVG) to this file.
    #[arg(long, value_name = "FILE.html")]
    report: Option<PathBuf>,
}

/// How `compare` and `bench` ask for a plan.
#[derive(Debug, Clone, Copy)]
pub(super) struct PlanSettings {
    /// `--solver`.
    pub solver: Solver,
    /// `--backend`.
    pub backend: Backend,
    /// `--seed`.
    pub seed: u64,
    /// `--objective`.
    pub objective: ObjectiveArg,
    /// `--ensure-baseline`.
    pub ensure_baseline: bool,
}

/// Makes `plan`'s plan for `pending` on `state`, exactly as `kplace plan` does with the same
/// flags, on `evaluator` (opened from `settings.backend`), and times it. Every plan of
/// `compare` and `bench` is made here, so that wiring a new `plan` flag is a change to this
/// one function.
pub(super) fn run_plan(
    state: ClusterState,
    pending: &[Pod],
    config: &SchedulerConfig,
    settings: &PlanSettings,
    progress: &Progress,
    evaluator: &mut Evaluator,
) -> anyhow::Result<Decided> {
    let start = Instant::now();
    let options = BatchOptions {
        seed: settings.seed,
        ensure_baseline: settings.ensure_baseline,
        objective: settings.objective.into(),
        solver: settings.solver.into(),
        ..Default::default()
    };
    let mut state = super::Attempts::new(state, settings.backend, evaluator);
    let plan = with_gpu_fallback(settings.backend, evaluator, |evaluator| {
        plan_greedy_on(state.take(), pending, config, &options, progress, evaluator)
    })?;
    Ok(Decided { plan, wall_ms: start.elapsed().as_secs_f64() * 1000.0 })
}

/// Makes `baseline`'s plan, exactly as `kplace baseline` does with the same seed and backend,
/// and times it.
pub(super) fn run_baseline(
    state: ClusterState,
    pending: &[Pod],
    config: &SchedulerConfig,
    (seed, victims_leave): (u64, VictimExit),
    progress: &Progress,
    (backend, evaluator): (Backend, &mut Evaluator),
) -> anyhow::Result<Decided> {
    let start = Instant::now();
    let options = BaselineOptions { seed, victims_leave, ..Default::default() };
    let mut state = super::Attempts::new(state, backend, evaluator);
    let plan = with_gpu_fallback(backend, evaluator, |evaluator| {
        let options = options.clone();
        super::baseline::sequential(state.take(), pending, config, options, progress, evaluator)
    })?;
    Ok(Decided { plan, wall_ms: start.elapsed().as_secs_f64() * 1000.0 })
}

/// The plan document at `path` as the baseline side (`--baseline-plan`): its decision time is
/// its `summary.wall_ms` (kso's), else its own `summary.timings_ms`; its `summary.algorithm`
/// names the scheduler (`kube-scheduler VERSION` from kso's `summary.kube_scheduler_version`).
fn external_baseline(path: &std::path::Path) -> anyhow::Result<Decided> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let (mut plan, summary) = kplace::bind::parse_plan_and_summary(&text)
        .map_err(|e| anyhow::anyhow!("{}: not a plan document: {e}", path.display()))?;
    // kso's summary is not kplace's: its two fields are read as written.
    let summary = summary.unwrap_or_default();
    if let Some(wall) = summary["wall_ms"].as_f64().filter(|w| w.is_finite() && *w >= 0.0) {
        plan.summary.timings_ms = kplace::plan::Timings { solve: wall, ..Default::default() };
    }
    if plan.summary.algorithm.is_empty() {
        plan.summary.algorithm = match summary["kube_scheduler_version"].as_str() {
            Some(v) => format!("kube-scheduler {v}"),
            None => "plan document".to_string(),
        };
    }
    let t = &plan.summary.timings_ms;
    let wall_ms = t.encode + t.evaluate + t.solve;
    Ok(Decided { plan, wall_ms })
}

pub fn run(args: &CompareArgs) -> anyhow::Result<ExitCode> {
    let config = load_config(args.config.as_deref())?;
    let loaded = load_cluster(&args.snapshot, Some(&config))?;
    let progress = super::progress();
    let settings = PlanSettings {
        solver: args.solver,
        backend: args.backend,
        seed: args.seed,
        objective: args.objective,
        ensure_baseline: args.ensure_baseline,
    };
    let state = &loaded.cluster.state;
    let pending = &loaded.cluster.pending;
    let mut evaluator = open_evaluator(args.backend)?;
    // Baseline under `--seed` and, with `--baseline-seeds N`, the next N-1 seeds; or the plan
    // document given.
    let mut baselines = Vec::new();
    if !args.baseline_plan.is_empty() {
        for (k, path) in (1u64..).zip(&args.baseline_plan) {
            baselines.push((k, external_baseline(path)?));
        }
    } else {
        for k in 0..u64::from(args.baseline_seeds) {
            let seed = args.seed.wrapping_add(k);
            let decided = run_baseline(
                state.clone(),
                pending,
                &config,
                (seed, args.victims_leave.into()),
                &progress,
                (args.backend, &mut evaluator),
            )?;
            baselines.push((seed, decided));
        }
    }
    let (_, baseline) = baselines.remove(0);
    let documents: Vec<String> =
        args.baseline_plan.iter().map(|p| p.display().to_string()).collect();
    let plan = run_plan(state.clone(), pending, &config, &settings, &progress, &mut evaluator)?;
    let snapshot = SnapshotInfo {
        paths: loaded.origin.clone(),
        load_ms: loaded.load_ms,
        build_ms: loaded.build_ms,
        ..Default::default()
    };
    let doc_settings = Settings {
        solver: solver_name(args.solver).to_string(),
        backend: evaluator.describe(),
        seed: args.seed,
        objective: objective_name(args.objective).to_string(),
        ensure_baseline: settings.ensure_baseline,
        config: args.config.as_ref().map(|p| p.display().to_string()),
        victims_leave: match documents.first() {
            Some(_) => String::new(),
            None => VictimExit::from(args.victims_leave).name().to_string(),
        },
        baseline_plan: documents.clone(),
        notes: match (documents.first(), args.victims_leave) {
            (Some(path), _) => vec![format!(
                "baseline: the plan document {path} ({}), not simulated",
                baseline.plan.summary.algorithm
            )],
            (None, VictimsArg::AfterQueue) => Vec::new(),
            (None, VictimsArg::AtOnce) => vec![
                "baseline: preemption victims leave their node as soon as they are evicted \
                 (--victims-leave at-once)"
                    .to_string(),
            ],
        },
    };
    let comparison = compare(
        state,
        pending,
        &baseline,
        &plan,
        &baselines.iter().map(|(seed, d)| (*seed, &d.plan)).collect::<Vec<_>>(),
        &config,
        snapshot,
        doc_settings,
        &progress,
    );
    if let Some(path) = &args.report {
        let task = progress.spinner("writing the report");
        let html = report::render_html(&comparison);
        std::fs::write(path, html).with_context(|| format!("writing {}", path.display()))?;
        task.finish();
        tracing::info!("wrote the report to {}", path.display());
    }
    match args.output {
        OutputFormat::Table => print_stdout(&render(&comparison))?,
        other => print_document(&comparison, other)?,
    }
    if comparison.baseline.violations > 0 {
        tracing::warn!(
            violations = comparison.baseline.violations,
            "kplace check finds violations in the baseline (reported, not failed: the plan is what \
             kplace would bind)"
        );
    }
    if !comparison.valid {
        tracing::error!(
            violations = comparison.plan.violations,
            "kplace check finds violations in the plan"
        );
        return Ok(ExitCode::from(EXIT_VIOLATIONS));
    }
    Ok(ExitCode::SUCCESS)
}

/// The name `--solver` takes.
pub(super) fn solver_name(s: Solver) -> &'static str {
    kplace::batch::SolverChoice::from(s).as_str()
}

/// The name `--objective` takes.
pub(super) fn objective_name(o: ObjectiveArg) -> &'static str {
    kplace::batch::Objective::from(o).as_str()
}

/// At most this many workloads in the text output (all are in `-o json`).
const TEXT_WORKLOADS: usize = 20;

/// The workloads that differ most, one row each: baseline / plan.
fn render_workloads(c: &Comparison) -> String {
    use kplace::compare::workloads::{HOSTNAME_LABEL, ZONE_LABEL};
    if c.owners.is_empty() {
        return String::new();
    }
    let total = c.owners.len() + c.owners_not_listed;
    let mut out = format!(
        "\nworkloads (baseline / plan), the {} of {total} that differ most:\n",
        total.min(TEXT_WORKLOADS)
    );
    let mut t =
        Table::new(&["WORKLOAD", "PLACED", "UNPLACED", "ZONE SKEW", "NODE SKEW", "MOST ON A NODE"]);
    let skew =
        |s: &kplace::compare::workloads::WorkloadSide, k: &str| s.skew.get(k).copied().unwrap_or(0);
    for r in c.owners.iter().take(TEXT_WORKLOADS) {
        let (a, b) = (&r.baseline, &r.plan);
        t.row(vec![
            r.owner.clone(),
            format!("{} / {}", a.placed, b.placed),
            format!("{} / {}", a.unplaced, b.unplaced),
            format!("{} / {}", skew(a, ZONE_LABEL), skew(b, ZONE_LABEL)),
            format!("{} / {}", skew(a, HOSTNAME_LABEL), skew(b, HOSTNAME_LABEL)),
            format!("{} / {}", a.max_per_node, b.max_per_node),
        ]);
    }
    out.push_str(&t.render());
    let m = c.more_skewed;
    out.push_str(&format!(
        "workloads more skewed (zone or node) under plan than baseline: {}, of which beyond \
         their own constraints' maxSkew: {}\n",
        m.workloads, m.beyond_max_skew
    ));
    out
}

/// The plan's per-workload spread against baseline's under several seeds
/// (`--baseline-seeds`): the counts, then the workloads worse than under the first seed or
/// the median.
fn render_seeds(c: &Comparison) -> String {
    use kplace::compare::workloads::{HOSTNAME_LABEL, ZONE_LABEL};
    let Some(s) = &c.baseline_seeds else { return String::new() };
    let first = s.seeds.first().copied().unwrap_or(0);
    let word = s.run_word();
    let range = |v: &[usize]| kplace::compare::seeds::range(v, "-");
    let why = if s.documents.is_empty() {
        " (ties between equally scored nodes are broken at random)"
    } else {
        ""
    };
    let mut out = format!(
        "\n{}{why}: {} pods placed against the plan's {}\nworkloads more skewed under plan than \
         under {word} {first}: {}, than the {word}s' median: {}, than every {word}: {}\n",
        s.origin("-"),
        range(&s.baseline_placed),
        c.plan.placed,
        s.worse_than_first,
        s.worse_than_median,
        s.worse_than_every
    );
    if s.owners.is_empty() {
        return out;
    }
    let by = word.to_uppercase();
    let headers = [
        "WORKLOAD".to_string(),
        "PLACED (PLAN; BASELINE)".to_string(),
        format!("ZONE SKEW (PLAN; BASELINE BY {by})"),
        format!("NODE SKEW (PLAN; BASELINE BY {by})"),
        format!("WORSE THAN EVERY {by}"),
    ];
    let mut t = Table::new(&headers.iter().map(String::as_str).collect::<Vec<_>>());
    for r in s.owners.iter().take(TEXT_WORKLOADS) {
        t.row(vec![
            r.owner.clone(),
            format!("{}; {}", r.plan_placed, range(&r.baseline_placed)),
            r.skews(ZONE_LABEL),
            r.skews(HOSTNAME_LABEL),
            if r.worse_than_every { "yes" } else { "no" }.to_string(),
        ]);
    }
    out.push_str(&t.render());
    out
}

/// The comparison as text: the verdict, the side-by-side table, the workloads, the
/// differences, violations if any.
fn render(c: &Comparison) -> String {
    let mut out = format!(
        "{}: {}, {}, {} (load {:.0} ms, build {:.0} ms)\n\n",
        c.snapshot.paths.join(", "),
        count(c.snapshot.nodes, "node"),
        count(c.snapshot.bound_pods, "bound pod"),
        count(c.snapshot.pending_pods, "pending pod"),
        c.snapshot.load_ms,
        c.snapshot.build_ms
    );
    out.push_str(&format!("verdict: {}\n", c.verdict.line));
    for cr in &c.verdict.criteria {
        out.push_str(&format!("  {:<25} {:<7} {}\n", cr.name, cr.outcome.as_str(), cr.detail));
    }
    out.push('\n');
    let mut t = Table::new(&["METRIC", "BASELINE", "PLAN", "PLAN - BASELINE"]);
    for row in report::summary_rows(c) {
        t.row(row.to_vec());
    }
    out.push_str(&t.render());
    out.push_str(&render_workloads(c));
    out.push_str(&render_seeds(c));
    let d = &c.differences;
    out.push_str(&format!(
        "\npods: {} on the same node, {} on different nodes, {} placed only by baseline, {} only \
         by plan, {} by neither; {} a different number of pods\n",
        d.same_node,
        d.different_node,
        d.only_baseline,
        d.only_plan,
        d.neither,
        if d.nodes_changed == 1 {
            "1 node receives".to_string()
        } else {
            format!("{} nodes receive", d.nodes_changed)
        }
    ));
    for (name, side) in [("baseline", &c.baseline), ("plan", &c.plan)] {
        if side.violations == 0 {
            continue;
        }
        out.push_str(&format!("\n{name}: {}\n", count(side.violations, "violation")));
        let mut t = Table::new(&["KIND", "POD", "NODE", "MESSAGE"]);
        for v in &side.violation_list {
            t.row(vec![
                v.kind.clone(),
                v.pod.clone(),
                v.node.clone().unwrap_or_default(),
                v.message.clone(),
            ]);
        }
        out.push_str(&t.render());
    }
    for n in &c.settings.notes {
        out.push_str(&format!("\nnote: {n}\n"));
    }
    out
}
