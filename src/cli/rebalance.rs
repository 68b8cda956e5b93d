//! `kplace rebalance`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, ValueEnum};
use kplace::plan::Plan;
use kplace::rebalance::evictor::EvictorOptions;
use kplace::rebalance::{Objective, RebalanceOptions, WaveLimits, budget, rebalance, report};

use super::output::{Table, count, pod_names, print_list_document, print_text};
use super::{EXIT_INCOMPLETE, ListFormat, SnapshotArgs, load_cluster_and_snapshot, load_config};

/// `--objective`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ObjectiveArg {
    /// Empty as many nodes as possible, least-loaded first (for scale-down).
    Pack,
    /// Even out cpu and memory utilization across nodes and zones.
    Balance,
    /// Move the pods descheduler's RemovePodsViolating* strategies select, each to a valid node.
    Fix,
}

/// `kplace rebalance`.
#[derive(Debug, Args)]
pub struct RebalanceArgs {
    #[command(flatten)]
    snapshot: SnapshotArgs,
    /// What to optimize.
    #[arg(long, value_enum)]
    objective: ObjectiveArg,
    /// The most pods to move (default: no limit; 0 moves none); descheduler's
    /// maxNoOfPodsToEvictTotal. In the plan document, `max_moves` is this number, or null
    /// without a limit.
    #[arg(long, value_name = "K", alias = "max-no-of-pods-to-evict-total")]
    max_moves: Option<usize>,
    /// The most evictions in one wave (default: no limit beyond the budgets).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_evictions_per_wave: Option<u64>,
    /// The most evictions from one node in one wave (descheduler's maxNoOfPodsToEvictPerNode,
    /// which it applies per descheduling cycle).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_no_of_pods_to_evict_per_node: Option<u64>,
    /// The most evictions in one namespace in one wave (descheduler's
    /// maxNoOfPodsToEvictPerNamespace).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_no_of_pods_to_evict_per_namespace: Option<u64>,
    /// A KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) file: the profiles that
    /// judge where replacements may go.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Output format (`wide`: each move's pod priority and requests too; `name`: the moved
    /// pods).
    #[arg(short, long, value_enum, default_value_t = ListFormat::Table)]
    output: ListFormat,
    /// Also write a self-contained HTML report (before/after utilization per node) to this file.
    #[arg(long, value_name = "FILE.html")]
    report: Option<PathBuf>,
    /// Move pods with local storage (emptyDir, hostPath) too (descheduler's evictLocalStoragePods).
    #[arg(long)]
    evict_local_storage_pods: bool,
    /// Let DaemonSet pods be selected (descheduler's evictDaemonSetPods; they are still not
    /// moved, their controller decides where they run).
    #[arg(long)]
    evict_daemonset_pods: bool,
    /// Move pods with system-critical priority too (descheduler's evictSystemCriticalPods).
    #[arg(long)]
    evict_system_critical_pods: bool,
    /// Do not move pods with PersistentVolumeClaims (descheduler's ignorePvcPods).
    #[arg(long)]
    ignore_pvc_pods: bool,
}

pub fn run(args: &RebalanceArgs) -> anyhow::Result<ExitCode> {
    let config = load_config(args.config.as_deref())?;
    let (loaded, snapshot) = load_cluster_and_snapshot(&args.snapshot, Some(&config))?;
    let state = &loaded.cluster.state;
    let (budgets, warnings) = budget::budgets(&snapshot, state, &loaded.cluster.pending);
    drop(snapshot);
    for w in warnings {
        tracing::warn!("{w}");
    }
    let options = RebalanceOptions {
        objective: match args.objective {
            ObjectiveArg::Pack => Objective::Pack,
            ObjectiveArg::Balance => Objective::Balance,
            ObjectiveArg::Fix => Objective::Fix,
        },
        max_moves: args.max_moves,
        evictor: EvictorOptions {
            evict_local_storage_pods: args.evict_local_storage_pods,
            evict_daemonset_pods: args.evict_daemonset_pods,
            evict_system_critical_pods: args.evict_system_critical_pods,
            ignore_pvc_pods: args.ignore_pvc_pods,
        },
        limits: WaveLimits {
            per_wave: args.max_evictions_per_wave.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
            per_node: args
                .max_no_of_pods_to_evict_per_node
                .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
            per_namespace: args
                .max_no_of_pods_to_evict_per_namespace
                .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
        },
    };
    let start = std::time::Instant::now();
    let mut result = rebalance(state, &budgets, &config, &options)?;
    result.plan.summary.timings_ms.load = loaded.load_ms;
    result.plan.summary.timings_ms.encode = loaded.build_ms;
    result.plan.summary.timings_ms.solve = start.elapsed().as_secs_f64() * 1000.0;
    if let Some(path) = &args.report {
        std::fs::write(path, report::render(&result))
            .with_context(|| format!("writing report {}", path.display()))?;
    }
    match args.output {
        ListFormat::Table => print_text(&render(&result.plan, None))?,
        ListFormat::Wide => print_text(&render(&result.plan, Some(state)))?,
        ListFormat::Name => {
            print_text(&pod_names(result.plan.moves.iter().map(|m| m.pod.as_str())))?
        }
        document => print_list_document(&result.plan, document)?,
    }
    if !result.check.is_valid() {
        for v in &result.check.violations {
            tracing::error!("check: {} {}: {}", v.kind, v.pod, v.message);
        }
        return Ok(ExitCode::from(EXIT_INCOMPLETE));
    }
    Ok(ExitCode::SUCCESS)
}

/// `: a, b, c` (at most ten names, then how many more).
fn freed(names: &[String]) -> String {
    const SHOWN: usize = 10;
    match names.len() {
        0 => String::new(),
        n if n <= SHOWN => format!(": {}", names.join(", ")),
        n => format!(": {}, and {} more", names[..SHOWN].join(", "), n - SHOWN),
    }
}

fn fmt_map(m: &std::collections::BTreeMap<String, usize>) -> String {
    if m.is_empty() {
        return "none".to_string();
    }
    m.iter().map(|(k, v)| format!("{v} {k}")).collect::<Vec<_>>().join(", ")
}

/// The plan as tables: moves by wave, pods not moved, then the before/after figures; with the
/// cluster (`-o wide`), each moved pod's priority and requests too.
pub fn render(plan: &Plan, wide: Option<&kplace::model::ClusterState>) -> String {
    let mut out = String::new();
    let Some(s) = &plan.summary.rebalance else { return out };
    let pods: std::collections::BTreeMap<String, &kplace::model::Pod> = wide
        .map(|state| {
            state
                .nodes
                .iter()
                .flat_map(|n| &n.pods)
                .map(|p| (format!("{}/{}", p.namespace, p.name), p.as_ref()))
                .collect()
        })
        .unwrap_or_default();
    let mut headers = vec!["WAVE", "POD", "FROM", "TO"];
    if wide.is_some() {
        headers.extend(["PRIORITY", "CPU", "MEMORY"]);
    }
    headers.push("REASON");
    let mut t = Table::new(&headers);
    for m in &plan.moves {
        let mut row = vec![m.wave.to_string(), m.pod.clone(), m.from.clone(), m.to.clone()];
        if wide.is_some() {
            row.extend(match pods.get(&m.pod) {
                Some(p) => [
                    p.priority.to_string(),
                    kplace::inspect::human_amount(kplace::resources::CPU, p.requests.milli_cpu),
                    kplace::inspect::human_amount(kplace::resources::MEMORY, p.requests.memory),
                ],
                None => ["-".to_string(), "-".to_string(), "-".to_string()],
            });
        }
        row.push(m.reason.clone());
        t.row(row);
    }
    out.push_str(&t.render());
    if !s.unmoved.is_empty() {
        out.push('\n');
        let mut t = Table::new(&["NOT MOVED", "NODE", "REASON"]);
        for u in &s.unmoved {
            t.row(vec![u.pod.clone(), u.node.clone(), u.reason.clone()]);
        }
        out.push_str(&t.render());
    }
    out.push_str(&format!(
        "\n{}: {} in {}; nodes in use {} -> {} ({} freed{}{})\n",
        s.objective,
        count(s.moves, "move"),
        count(s.waves, "wave"),
        s.nodes_in_use_before,
        s.nodes_in_use_after,
        s.nodes_freed.len(),
        freed(&s.nodes_freed),
        match s.nodes_newly_used.len() {
            0 => String::new(),
            n => format!("; {n} newly used{}", freed(&s.nodes_newly_used)),
        }
    ));
    let mut t = Table::new(&["RESOURCE", "NODE STDDEV", "AFTER", "ZONE STDDEV", "AFTER"]);
    for (r, before) in &s.node_stddev_before {
        let zone = |m: &std::collections::BTreeMap<String, f64>| {
            m.get(r).map_or_else(|| "-".to_string(), |v| format!("{v:.4}"))
        };
        t.row(vec![
            r.clone(),
            format!("{before:.4}"),
            format!("{:.4}", s.node_stddev_after.get(r).copied().unwrap_or(0.0)),
            zone(&s.zone_stddev_before),
            zone(&s.zone_stddev_after),
        ]);
    }
    out.push('\n');
    out.push_str(&t.render());
    out.push_str(&format!(
        "\nviolations (descheduler selections): before {}; after {}; fixed {}\n",
        fmt_map(&s.violations_before),
        fmt_map(&s.violations_after),
        s.violations_fixed
    ));
    if !s.budgets.is_empty() {
        out.push('\n');
        let mut t = Table::new(&["PDB", "ALLOWED", "SOURCE", "MOVES", "MAX PER WAVE"]);
        for b in &s.budgets {
            t.row(vec![
                b.pdb.clone(),
                b.allowed.to_string(),
                b.source.clone(),
                b.moves.to_string(),
                b.max_per_wave.to_string(),
            ]);
        }
        out.push_str(&t.render());
    }
    out.push_str(&format!(
        "\ncheck: {}\n",
        if s.check_valid {
            "every wave is valid".to_string()
        } else {
            format!("INVALID: {}", fmt_map(&s.check_violations))
        }
    ));
    out
}
