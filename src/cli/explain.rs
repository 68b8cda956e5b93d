//! `kplace explain`: why a pending pod is pending or where `baseline` would put it; why a
//! batch plan put a pod where it did (`--plan`); why a bound pod is where it is. A pod that is
//! none of these gets a message saying what it is instead (not in the snapshot, served by
//! another scheduler, finished, being deleted, gated) and what to try.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use clap::Args;
use kplace::baseline::BaselineOptions;
use kplace::eval::Evaluator;
use kplace::explain::{
    ExplainError, ExplainOptions, Explanation, NodeExplanation, PlacedExplanation, explain_bound,
    explain_on, explain_planned,
};

use super::output::{Table, print_document, print_stdout};
use super::{
    BackendArgs, GpuFailure, OutputFormat, SnapshotArgs, load_cluster_and_snapshot, load_config,
    open_evaluator, with_gpu_fallback,
};

/// `kplace explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    #[command(flatten)]
    snapshot: SnapshotArgs,
    #[command(flatten)]
    backend: BackendArgs,
    /// The pod, as NAMESPACE/NAME: a pending pod, a pod the `--plan` places, or a bound pod.
    #[arg(long, value_name = "NAMESPACE/NAME")]
    pod: String,
    /// Only this node (for a placed or bound pod: also explain this node, e.g. where
    /// `baseline` put it).
    #[arg(long, value_name = "NODE")]
    node: Option<String>,
    /// A plan document (`kplace plan -o json`): explain why it put the pod where it did.
    #[arg(long, value_name = "PLAN.json")]
    plan: Option<PathBuf>,
    /// Explain against the snapshot as it is, instead of the state baseline reaches when the
    /// pod's turn comes (every pod ahead of it in the queue placed first).
    #[arg(long)]
    as_is: bool,
    /// A KubeSchedulerConfiguration file.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Seed baseline uses to reach the pod's turn.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Output format (table or json).
    #[arg(short, long, value_enum, default_value_t = OutputFormat::Table)]
    output: OutputFormat,
}

pub fn run(args: &ExplainArgs) -> anyhow::Result<ExitCode> {
    let config = load_config(args.config.as_deref())?;
    let (loaded, snapshot) = load_cluster_and_snapshot(&args.snapshot, Some(&config))?;
    let cluster = &loaded.cluster;
    let pending = cluster.pending.iter().any(|p| p.key() == args.pod);
    if let Some(path) = &args.plan {
        let plan = super::check::read_plan(path)?;
        if plan.placements.iter().any(|p| p.pod == args.pod) {
            let e = explain_planned(
                &cluster.state,
                &cluster.pending,
                &config,
                &plan,
                &args.pod,
                args.node.as_deref(),
            )?;
            return print_placed(&e, args.output);
        }
        match plan.unschedulable.iter().find(|u| u.pod == args.pod) {
            Some(u) => eprintln!(
                "{}: {} is unschedulable in this plan: {}\nexplaining it as a pending pod:",
                path.display(),
                args.pod,
                u.message
            ),
            None if pending => bail!(
                "{}: the plan neither places {} nor lists it as unschedulable (was the plan made \
                 for this snapshot?)",
                path.display(),
                args.pod
            ),
            None => {}
        }
    }
    if !pending {
        if let Some(e) = explain_bound(&cluster.state, &config, &args.pod, args.node.as_deref())? {
            return print_placed(&e, args.output);
        }
        let batch = args.snapshot.batch()?;
        bail!("{}", not_schedulable(&args.pod, &snapshot, &cluster.state, &config, &batch));
    }
    let options = ExplainOptions {
        node: args.node.clone(),
        as_is: args.as_is,
        baseline: BaselineOptions { seed: args.seed, ..Default::default() },
    };
    let mut evaluator = open_evaluator(args.backend.backend)?;
    let progress = super::progress();
    // On the CPU the framework explains (the reference); on a GPU the pod's row is a matrix.
    let explanation = with_gpu_fallback(args.backend.backend, &mut evaluator, |evaluator| {
        let evaluator = match evaluator {
            Evaluator::Cpu => None,
            gpu => Some(gpu),
        };
        explain_on(
            cluster.state.clone(),
            &cluster.pending,
            &config,
            &args.pod,
            &options,
            &progress,
            evaluator,
        )
    })?;
    match args.output {
        OutputFormat::Table => print_stdout(&render(&explanation))?,
        other => print_document(&explanation, other)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// What `key` is when it is neither pending for kplace nor bound: the message of `explain`'s
/// error, with what to try.
fn not_schedulable(
    key: &str,
    snapshot: &kplace::snapshot::Snapshot,
    state: &kplace::model::ClusterState,
    config: &kplace::framework::config::SchedulerConfig,
    batch: &kplace::snapshot::BatchFilter,
) -> String {
    let (ns, name) = key.split_once('/').unwrap_or(("", key));
    if !key.contains('/') {
        return format!(
            "{key:?} is not NAMESPACE/NAME; pods named so: {}",
            pods_named(snapshot, name)
        );
    }
    let found = snapshot.pods.iter().find(|p| {
        p.object.metadata.namespace.as_deref() == Some(ns)
            && p.object.metadata.name.as_deref() == Some(name)
    });
    let Some(p) = found else {
        let elsewhere = pods_named(snapshot, name);
        return format!(
            "pod {key} is not in the snapshot ({} pods read){}",
            snapshot.pods.len(),
            if elsewhere == "none" {
                String::new()
            } else {
                format!("; pods of that name in other namespaces: {elsewhere}")
            }
        );
    };
    let pod = &p.object;
    let spec = pod.spec.as_ref();
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("Pending");
    if matches!(phase, "Succeeded" | "Failed") {
        return format!("pod {key} has finished (phase {phase}); the scheduler ignores it");
    }
    if let Some(node) = spec.and_then(|s| s.node_name.as_deref()).filter(|n| !n.is_empty())
        && state.node_index(node).is_none()
    {
        return format!(
            "pod {key} is bound to node {node}, which is not in the snapshot; add the node to \
             explain it"
        );
    }
    if spec.and_then(|s| s.node_name.as_deref()).is_none_or(str::is_empty) && !batch.admits_pod(pod)
    {
        return format!(
            "pod {key} is pending but outside the batch this run places ({}); run without \
             -n/-l, or with a namespace and selector that include it, to explain it",
            batch.describe()
        );
    }
    if pod.metadata.deletion_timestamp.is_some() {
        return format!("pod {key} is being deleted; the scheduler skips it");
    }
    if spec.and_then(|s| s.scheduling_gates.as_ref()).is_some_and(|g| !g.is_empty()) {
        return format!(
            "pod {key} has scheduling gates; it is not scheduled until they are removed"
        );
    }
    let scheduler = spec
        .and_then(|s| s.scheduler_name.as_deref())
        .filter(|s| !s.is_empty())
        .unwrap_or("default-scheduler");
    let served = config.served_scheduler_names();
    let profile = if served.contains(&scheduler) {
        String::new()
    } else {
        format!(
            " and a --config with a profile named {scheduler:?} (the profiles here: {})",
            served.join(", ")
        )
    };
    format!(
        "pod {key} is pending for scheduler {scheduler:?}, which this run does not serve; to \
         explain it as that scheduler's profile would, pass --scheduler-name {scheduler}{profile}"
    )
}

/// `namespace/name` of the pods called `name`, or `none`.
fn pods_named(snapshot: &kplace::snapshot::Snapshot, name: &str) -> String {
    let found: Vec<String> = snapshot
        .pods
        .iter()
        .filter(|p| p.object.metadata.name.as_deref() == Some(name))
        .take(5)
        .map(|p| format!("{}/{name}", p.object.metadata.namespace.as_deref().unwrap_or("default")))
        .collect();
    if found.is_empty() { "none".to_string() } else { found.join(", ") }
}

fn print_placed(e: &PlacedExplanation, output: OutputFormat) -> anyhow::Result<ExitCode> {
    match output {
        OutputFormat::Table => print_stdout(&render_placed(e))?,
        other => print_document(e, other)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// A node's failed filters, or `-`.
fn failed_filters(n: &NodeExplanation) -> String {
    let failed: Vec<String> = n
        .filters
        .iter()
        .filter(|f| f.code != "Success" && f.code != "Skip")
        .map(|f| format!("{}: {}", f.plugin, f.reasons.join(", ")))
        .collect();
    if failed.is_empty() { "-".to_string() } else { failed.join("; ") }
}

fn render_placed(e: &PlacedExplanation) -> String {
    let mut out = format!(
        "pod {} (priority {}, scheduler {}) is on {}\nnodes shown in {} ({} feasible)\n\n",
        e.pod, e.priority, e.scheduler_name, e.node, e.state, e.feasible_nodes
    );
    for s in &e.summary {
        out.push_str(&format!("- {s}\n"));
    }
    let mut shown: Vec<(&str, &NodeExplanation)> = vec![("chosen", &e.chosen)];
    if let Some(r) = &e.runner_up {
        shown.push(("runner-up", r));
    }
    let first = shown.iter().map(|(_, n)| n).find(|n| !n.scores.is_empty());
    if let Some(first) = first {
        out.push_str("\nscores (raw -> normalized; the total weights each normalized score):\n");
        let mut headers: Vec<String> = vec!["".to_string(), "NODE".to_string()];
        headers.extend(first.scores.iter().map(|s| format!("{} (x{})", s.plugin, s.weight)));
        headers.push("TOTAL".to_string());
        let refs: Vec<&str> = headers.iter().map(String::as_str).collect();
        let mut t = Table::new(&refs);
        for (label, n) in &shown {
            let mut row = vec![(*label).to_string(), n.node.clone()];
            row.extend(n.scores.iter().map(|s| format!("{} -> {}", s.raw, s.normalized)));
            row.push(n.total.map_or_else(|| "-".to_string(), |t| t.to_string()));
            t.row(row);
        }
        out.push_str(&t.render());
    }
    if !e.alternatives.is_empty() {
        out.push_str(
            "\nnodes that scored higher on the snapshot as it is (and --node), and why not:\n",
        );
        let mut t = Table::new(&["NODE", "SCORE AS IS", "NOW", "WHY NOT"]);
        for a in &e.alternatives {
            t.row(vec![
                a.node.clone(),
                a.score_as_is.map_or_else(|| "-".to_string(), |s| s.to_string()),
                if a.cells.feasible {
                    a.cells.total.map_or_else(|| "-".to_string(), |s| s.to_string())
                } else {
                    format!("infeasible ({})", failed_filters(&a.cells))
                },
                a.why.clone(),
            ]);
        }
        out.push_str(&t.render());
    }
    out
}

impl GpuFailure for ExplainError {
    fn is_gpu_failure(&self) -> bool {
        matches!(self, ExplainError::Eval(kplace::eval::EvalError::Gpu(_)))
    }
}

fn render(e: &Explanation) -> String {
    let mut out = format!(
        "pod {} (priority {}, scheduler {}, queue position {})\nnodes shown in {}\n",
        e.pod, e.priority, e.scheduler_name, e.queue_position, e.state
    );
    if let Some(r) = &e.pre_filter_rejection {
        out.push_str(&format!("PreFilter rejected the pod: {r}\n"));
    }
    out.push('\n');
    let mut t = Table::new(&["NODE", "FEASIBLE", "FAILED FILTERS", "TOTAL"]);
    for n in &e.nodes {
        let failed: Vec<String> = n
            .filters
            .iter()
            .filter(|f| f.code != "Success" && f.code != "Skip")
            .map(|f| format!("{}: {}", f.plugin, f.reasons.join(", ")))
            .collect();
        t.row(vec![
            n.node.clone(),
            if n.feasible { "yes" } else { "no" }.to_string(),
            if failed.is_empty() { "-".to_string() } else { failed.join("; ") },
            n.total.map_or_else(|| "-".to_string(), |t| t.to_string()),
        ]);
    }
    out.push_str(&t.render());
    let scored: Vec<_> = e.nodes.iter().filter(|n| n.total.is_some()).collect();
    if let Some(first) = scored.first() {
        out.push('\n');
        let mut headers: Vec<String> = vec!["NODE".to_string()];
        headers.extend(first.scores.iter().map(|s| format!("{} (x{})", s.plugin, s.weight)));
        headers.push("TOTAL".to_string());
        let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
        let mut t = Table::new(&header_refs);
        for n in scored {
            let mut row = vec![n.node.clone()];
            row.extend(n.scores.iter().map(|s| format!("{} -> {}", s.raw, s.normalized)));
            row.push(n.total.unwrap_or(0).to_string());
            t.row(row);
        }
        out.push_str("scores (raw -> normalized; the total weights each normalized score):\n");
        out.push_str(&t.render());
    }
    if !e.best_nodes.is_empty() {
        out.push_str(&format!("\nhighest score: {}\n", e.best_nodes.join(", ")));
    }
    if let Some(m) = &e.message {
        out.push_str(&format!("\n{m}\n"));
    }
    if let Some(d) = &e.baseline_decision {
        out.push_str(&format!("baseline: {d}\n"));
    }
    out
}
