//! `kplace bench`: generated workloads at given sizes, in memory, through `baseline` and `plan`
//! (via `compare::run_baseline` and `compare::run_plan`), repeated; medians, ratios, quality
//! differences, machine and adapter.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use kplace::baseline::VictimExit;
use kplace::compare::bench::{
    BenchCase, BenchReport, BenchRun, DEFAULT_NODES, DEFAULT_WORKLOADS, MachineInfo, QualityDelta,
    SCHEMA_VERSION, generate_cluster, median, pod_counts, ratio,
};
use kplace::compare::upstream::{UpstreamCommand, UpstreamRun, run_upstream};
use kplace::compare::{Decided, pods_per_second};
use kplace::eval::{Backend, Evaluator};
use kplace::r#gen::{GenParams, Workload, write_yaml};
use kplace::model::{ClusterState, Pod};
use kplace::plan::Plan;
use kplace::snapshot::BuildOptions;

use super::compare::{PlanSettings, objective_name, run_baseline, run_plan, solver_name};
use super::r#gen::parse_workload;
use super::output::{Table, print_document, print_stdout};
use super::plan::{ObjectiveArg, Solver};
use super::{OutputFormat, load_config, parse_backend};

/// `kplace bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Workloads to run (see `kplace gen --list`; repeatable or comma-separated). Default:
    /// SchedulingBasic, SchedulingPodAntiAffinity, TopologySpreading, fragmentation-mix.
    #[arg(long = "workload", value_name = "NAME", value_parser = parse_workload, num_args = 1.., value_delimiter = ',')]
    workloads: Vec<Workload>,
    /// Node counts to run each workload at (repeatable or comma-separated). Default: 500.
    #[arg(long = "nodes", value_name = "N", num_args = 1.., value_delimiter = ',')]
    nodes: Vec<usize>,
    /// Pods (bound and pending) per node. Default: the workload's own density (SchedulingBasic
    /// 2.2 with 0.2 bound, as scheduler_perf; fragmentation-mix 12 with 2 bound; …).
    #[arg(long, value_name = "F", conflicts_with = "pods")]
    pods_per_node: Option<f64>,
    /// Pods (bound and pending) per case, whatever the node count.
    #[arg(long, value_name = "P")]
    pods: Option<usize>,
    /// Runs of each command per case; medians are reported.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    /// Where `plan` evaluates: `cpu` runs it on the CPU only; `auto` and `gpu` also run it on
    /// the GPU adapter (`auto` only on a hardware one; `gpu` on any, lavapipe included, and
    /// fails without) and report both,
    /// checking that the GPU's plans equal the CPU's.
    #[arg(long, value_parser = parse_backend, default_value = "auto", value_name = "BACKEND")]
    backend: Backend,
    /// The batch algorithm of `plan` (as `kplace plan --solver`).
    #[arg(long, value_enum, default_value_t = Solver::Auto)]
    solver: Solver,
    /// A KubeSchedulerConfiguration file, used by both.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Seed of the generator and of both schedulers.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// What `plan` maximizes within a priority tier (as `kplace plan --objective`).
    #[arg(long, value_enum, default_value_t = ObjectiveArg::Resources)]
    objective: ObjectiveArg,
    /// Let `plan` return the sequential plan when that ranks higher (as `kplace plan
    /// --ensure-baseline`).
    #[arg(long)]
    ensure_baseline: bool,
    /// Accepted for compatibility and ignored (the fallback is off unless --ensure-baseline).
    #[arg(long = "no-fallback", hide = true)]
    _no_fallback: bool,
    /// Also run `kplace check` on the first run's plans and report the violations.
    #[arg(long)]
    check: bool,
    /// Also time an external scheduler on each case's snapshot, written to a file: `CMD
    /// schedule SNAPSHOT -o PLAN [--config FILE]` must write a plan document with
    /// `summary.wall_ms` (the protocol of `../shared/upstream/kso`, the real kube-scheduler).
    /// CMD is a program and its leading arguments, separated by spaces; it runs `--repeat`
    /// times per case.
    #[arg(long, value_name = "CMD")]
    upstream: Option<String>,
    /// An argument for the external scheduler after `schedule SNAPSHOT -o PLAN` (repeatable;
    /// e.g. `--upstream-arg=--timeout=30m` for kso).
    #[arg(long, value_name = "ARG", requires = "upstream", allow_hyphen_values = true)]
    upstream_arg: Vec<String>,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = OutputFormat::Table)]
    output: OutputFormat,
}

pub fn run(args: &BenchArgs) -> anyhow::Result<ExitCode> {
    let config = load_config(args.config.as_deref())?;
    let progress = super::progress();
    let workloads: Vec<Workload> =
        if args.workloads.is_empty() { DEFAULT_WORKLOADS.to_vec() } else { args.workloads.clone() };
    let sizes: Vec<usize> =
        if args.nodes.is_empty() { vec![DEFAULT_NODES] } else { args.nodes.clone() };
    if let Some(f) = args.pods_per_node
        && !(f.is_finite() && f >= 0.0)
    {
        anyhow::bail!("--pods-per-node must be a number of pods, 0 or more: {f}");
    }
    let settings = PlanSettings {
        solver: args.solver,
        backend: args.backend,
        seed: args.seed,
        objective: args.objective,
        ensure_baseline: args.ensure_baseline,
    };
    let mut notes = Vec::new();
    let machine = MachineInfo::detect();
    if machine.debug_build {
        notes.push("debug build: timings are not representative; use a release build".to_string());
    }
    // The GPU run of `plan`, when there is a GPU to run it on.
    let mut no_gpu = None;
    let mut gpu = match args.backend {
        Backend::Cpu => None,
        backend => {
            let selected = Evaluator::select(backend)?;
            if let Some(notice) = &selected.notice {
                notes.push(notice.clone());
                no_gpu = Some(notice.clone());
            }
            match selected.evaluator {
                Evaluator::Gpu(_) => Some(selected.evaluator),
                Evaluator::Cpu => None,
            }
        }
    };
    let adapter = gpu.as_ref().map(Evaluator::describe);
    let gpu_note = match (&gpu, args.backend) {
        (_, Backend::Cpu) => Some("--backend cpu".to_string()),
        (None, _) => Some(no_gpu.unwrap_or_else(|| "no GPU adapter".to_string())),
        (Some(_), _) => None,
    };
    let mut cpu = Evaluator::Cpu;
    let upstream = match args.upstream.as_deref() {
        None => None,
        Some(cmd) => Some(UpstreamCommand {
            trailing: args.upstream_arg.clone(),
            ..UpstreamCommand::parse(cmd)
                .ok_or_else(|| anyhow::anyhow!("--upstream needs a command, got {cmd:?}"))?
        }),
    };

    let repeat = args.repeat as usize;
    let commands = if gpu.is_some() { 4 } else { 2 } + usize::from(upstream.is_some());
    let runs = (workloads.len() * sizes.len() * commands * repeat) as u64;
    let overall = progress.bar("bench: runs", runs);
    let build = BuildOptions {
        scheduler_names: config.served_scheduler_names().iter().map(|s| (*s).to_string()).collect(),
        ..BuildOptions::default()
    };
    let mut cases = Vec::new();
    for &workload in &workloads {
        for &nodes in &sizes {
            let (pods, init_pods) = pod_counts(workload, nodes, args.pods_per_node, args.pods);
            let params = GenParams { workload, nodes, pods, init_pods, seed: args.seed };
            overall.set_message(format!("{workload}, {nodes} nodes"));
            let generated = generate_cluster(&params, &build, &progress)?;
            let state = &generated.cluster.state;
            let pending = &generated.cluster.pending;
            let mut baseline = Vec::new();
            for _ in 0..repeat {
                baseline.push(run_baseline(
                    state.clone(),
                    pending,
                    &config,
                    (args.seed, VictimExit::AfterQueue),
                    &progress,
                    (Backend::Cpu, &mut cpu),
                )?);
                overall.inc(1);
            }
            let mut plan = Vec::new();
            let cpu_settings = PlanSettings { backend: Backend::Cpu, ..settings };
            for _ in 0..repeat {
                plan.push(run_plan(
                    state.clone(),
                    pending,
                    &config,
                    &cpu_settings,
                    &progress,
                    &mut cpu,
                )?);
                overall.inc(1);
            }
            let (mut plan_gpu, mut baseline_gpu) = (None, None);
            if let Some(evaluator) = gpu.as_mut() {
                let mut runs = Vec::new();
                for _ in 0..repeat {
                    runs.push(run_baseline(
                        state.clone(),
                        pending,
                        &config,
                        (args.seed, VictimExit::AfterQueue),
                        &progress,
                        (args.backend, &mut *evaluator),
                    )?);
                    overall.inc(1);
                }
                if let (Some(g), Some(c)) = (runs.first(), baseline.first())
                    && outcome(&g.plan) != outcome(&c.plan)
                {
                    notes.push(format!(
                        "{workload}, {nodes} nodes: baseline's GPU plan differs from its CPU plan \
                         (a bug: please report it)"
                    ));
                }
                baseline_gpu = Some(summarize_runs("baseline", &runs, state, pending, false));
                let mut runs = Vec::new();
                for _ in 0..repeat {
                    runs.push(run_plan(
                        state.clone(),
                        pending,
                        &config,
                        &settings,
                        &progress,
                        evaluator,
                    )?);
                    overall.inc(1);
                }
                if let (Some(g), Some(c)) = (runs.first(), plan.first())
                    && outcome(&g.plan) != outcome(&c.plan)
                {
                    notes.push(format!(
                        "{workload}, {nodes} nodes: the GPU's plan differs from the CPU's (a bug: \
                         please report it)"
                    ));
                }
                plan_gpu = Some(summarize_runs("plan", &runs, state, pending, args.check));
            }
            let baseline = summarize_runs("baseline", &baseline, state, pending, args.check);
            let plan_cpu = summarize_runs("plan", &plan, state, pending, args.check);
            let (mut upstream_run, mut upstream_error) = (None, None);
            if let Some(cmd) = &upstream {
                match time_upstream(cmd, &params, args.config.as_deref(), repeat, pending.len()) {
                    Ok(run) => upstream_run = Some(run),
                    Err(e) => {
                        let e = format!("{e:#}");
                        notes.push(format!("{workload}, {nodes} nodes: upstream: {e}"));
                        upstream_error = Some(e);
                    }
                }
                overall.inc(repeat as u64);
            }
            let upstream_over_baseline =
                upstream_run.as_ref().map(|u| ratio(u.wall_ms_median, baseline.decision_ms_median));
            cases.push(BenchCase {
                workload: workload.to_string(),
                nodes,
                pods,
                init_pods,
                bound_pods: state.nodes.iter().map(|n| n.pods.len()).sum(),
                pending_pods: pending.len(),
                load_ms: generated.load_ms,
                build_ms: generated.build_ms,
                ratio_cpu: ratio(plan_cpu.decision_ms_median, baseline.decision_ms_median),
                quality_cpu: QualityDelta::between(&baseline, &plan_cpu),
                ratio_gpu: plan_gpu
                    .as_ref()
                    .map(|g| ratio(g.decision_ms_median, baseline.decision_ms_median)),
                baseline,
                baseline_gpu,
                plan_cpu,
                plan_gpu,
                gpu_note: gpu_note.clone(),
                upstream_over_baseline,
                upstream: upstream_run,
                upstream_error,
            });
        }
    }
    overall.finish();
    let report = BenchReport {
        schema_version: SCHEMA_VERSION,
        machine,
        adapter,
        backend: args.backend.to_string(),
        solver: solver_name(args.solver).to_string(),
        objective: objective_name(args.objective).to_string(),
        ensure_baseline: settings.ensure_baseline,
        repeat,
        seed: args.seed,
        cases,
        notes,
    };
    match args.output {
        OutputFormat::Table => print_stdout(&render(&report))?,
        other => print_document(&report, other)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes the case's snapshot to a temporary file and runs the external scheduler on it
/// `repeat` times.
fn time_upstream(
    cmd: &UpstreamCommand,
    params: &GenParams,
    config: Option<&Path>,
    repeat: usize,
    pending: usize,
) -> anyhow::Result<UpstreamRun> {
    let dir = tempfile::Builder::new().prefix("kplace-bench-").tempdir()?;
    let snapshot = dir.path().join("snapshot.yaml");
    let file = std::fs::File::create(&snapshot)
        .with_context(|| format!("creating {}", snapshot.display()))?;
    let mut writer = std::io::BufWriter::with_capacity(1 << 20, file);
    write_yaml(params, &mut writer)?;
    writer.flush().with_context(|| format!("writing {}", snapshot.display()))?;
    drop(writer);
    let mut outcomes = Vec::with_capacity(repeat);
    for i in 0..repeat {
        let plan = dir.path().join(format!("plan-{i}.json"));
        outcomes.push(run_upstream(cmd, &snapshot, config, &plan)?);
    }
    Ok(UpstreamRun::summarize(&cmd.invocation(), &outcomes, pending))
}

/// What a plan decided, for comparing repeats.
fn outcome(plan: &Plan) -> (&[kplace::plan::Placement], &[kplace::plan::Eviction], Vec<&str>) {
    (&plan.placements, &plan.evictions, plan.unschedulable.iter().map(|u| u.pod.as_str()).collect())
}

/// Medians over the repeats, quality from the first run.
fn summarize_runs(
    command: &str,
    runs: &[Decided],
    state: &ClusterState,
    pending: &[Pod],
    check: bool,
) -> BenchRun {
    let Some(first) = runs.first() else {
        return BenchRun { command: command.to_string(), ..Default::default() };
    };
    let decision_ms: Vec<f64> = runs
        .iter()
        .map(|r| {
            let t = &r.plan.summary.timings_ms;
            t.encode + t.evaluate + t.solve
        })
        .collect();
    let walls: Vec<f64> = runs.iter().map(|r| r.wall_ms).collect();
    let decision_ms_median = median(&decision_ms);
    let s = &first.plan.summary;
    BenchRun {
        command: command.to_string(),
        backend: s.backend.clone(),
        algorithm: s.algorithm.clone(),
        decision_ms_median,
        wall_ms_median: median(&walls),
        pods_per_second: pods_per_second(pending.len(), decision_ms_median),
        placed: s.placed,
        placed_by_priority: s.placed_by_priority.clone(),
        unschedulable: s.unschedulable,
        evictions: s.evicted,
        nodes_used: s.nodes_used,
        deterministic: runs.iter().all(|r| outcome(&r.plan) == outcome(&first.plan)),
        violations: check
            .then(|| kplace::check::check(state, pending, &first.plan).violations.len()),
        decision_ms,
    }
}

/// The report as a table, with the machine on top.
fn render(r: &BenchReport) -> String {
    let m = &r.machine;
    let mut out = format!(
        "machine: {} ({} cores, {:.1} GiB, {}){}\nadapter: {}\nkplace {}, solver {}, objective {}, backend {}, ensure-baseline {}, {} run(s) per command, seed {}\n\n",
        if m.cpu_model.is_empty() { "unknown CPU" } else { &m.cpu_model },
        m.cores,
        m.memory_bytes as f64 / (1024.0 * 1024.0 * 1024.0),
        m.os,
        if m.debug_build { ", debug build" } else { "" },
        r.adapter.as_deref().unwrap_or("none"),
        m.kplace_version,
        r.solver,
        r.objective,
        r.backend,
        if r.ensure_baseline { "on" } else { "off" },
        r.repeat,
        r.seed,
    );
    let with_upstream = r.cases.iter().any(|c| c.upstream.is_some() || c.upstream_error.is_some());
    let mut headers = vec![
        "WORKLOAD",
        "NODES",
        "PENDING",
        "LOAD MS",
        "BASELINE MS",
        "PLAN MS",
        "PLAN/BASELINE",
        "BASELINE PODS/S",
        "PLAN PODS/S",
        "PLACED B/P",
        "NODES USED B/P",
        "GPU BASELINE/PLAN MS",
    ];
    if with_upstream {
        headers.extend(["UPSTREAM MS", "UPSTREAM PODS/S", "UPSTREAM/BASELINE"]);
    }
    let mut t = Table::new(&headers);
    for c in &r.cases {
        let mut row = vec![
            c.workload.clone(),
            c.nodes.to_string(),
            c.pending_pods.to_string(),
            format!("{:.0}", c.load_ms + c.build_ms),
            format!("{:.1}", c.baseline.decision_ms_median),
            format!("{:.1}", c.plan_cpu.decision_ms_median),
            format!("{:.2}", c.ratio_cpu),
            format!("{:.0}", c.baseline.pods_per_second),
            format!("{:.0}", c.plan_cpu.pods_per_second),
            format!("{}/{}", c.baseline.placed, c.plan_cpu.placed),
            format!("{}/{}", c.baseline.nodes_used, c.plan_cpu.nodes_used),
            match (&c.baseline_gpu, &c.plan_gpu) {
                (Some(b), Some(p)) => {
                    format!("{:.1} / {:.1}", b.decision_ms_median, p.decision_ms_median)
                }
                _ => "n/a".to_string(),
            },
        ];
        if with_upstream {
            match (&c.upstream, c.upstream_over_baseline) {
                (Some(u), Some(x)) => row.extend([
                    format!("{:.1}{}", u.wall_ms_median, if u.partial { " (partial)" } else { "" }),
                    format!("{:.0}", u.pods_per_second),
                    format!("{x:.1}"),
                ]),
                _ => row.extend(["failed".to_string(), "n/a".to_string(), "n/a".to_string()]),
            }
        }
        t.row(row);
    }
    out.push_str(&t.render());
    if let Some(u) = r.cases.iter().find_map(|c| c.upstream.as_ref()) {
        out.push_str(&format!(
            "UPSTREAM: `{}`, its summary.wall_ms (median); UPSTREAM/BASELINE: that over BASELINE MS\n",
            u.command
        ));
    }
    for c in &r.cases {
        if let (Some(a), Some(b)) = (c.baseline.violations, c.plan_cpu.violations) {
            out.push_str(&format!(
                "{} {}: check found {} in baseline, {b} in plan\n",
                c.workload,
                super::output::count(c.nodes, "node"),
                super::output::count(a, "violation")
            ));
        }
    }
    if let Some(note) = r.cases.first().and_then(|c| c.gpu_note.as_ref()) {
        out.push_str(&format!("\nGPU: {note}\n"));
    }
    for n in &r.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}
