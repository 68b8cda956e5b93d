//! `kplace inspect`.

use std::process::ExitCode;

use kplace::inspect::{InspectReport, human_amount, inspect};

use super::output::{Table, count, print_document, print_stdout};
use super::{OutputFormat, SnapshotArgs, load_cluster};

pub fn run(args: &SnapshotArgs, output: OutputFormat) -> anyhow::Result<ExitCode> {
    let loaded = load_cluster(args, None)?;
    let classes = kplace::encode::classes::classify(&loaded.cluster.pending)?.classes.len();
    let report =
        inspect(&loaded.cluster.state, &loaded.cluster.pending, loaded.cluster.ignored, classes);
    match output {
        OutputFormat::Table => print_stdout(&render(&report))?,
        other => print_document(&report, other)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn render(r: &InspectReport) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "Nodes: {} ({} cordoned{})\n",
        r.nodes.total,
        r.nodes.cordoned.len(),
        if r.nodes.cordoned.is_empty() {
            String::new()
        } else {
            format!(": {}", r.nodes.cordoned.join(", "))
        }
    ));
    let mut t = Table::new(&["SHAPE", "CPU", "MEMORY", "EXTENDED", "NODES"]);
    for s in &r.nodes.shapes {
        let ext: Vec<String> =
            s.extended.iter().filter(|(_, v)| **v != 0).map(|(k, v)| format!("{k}={v}")).collect();
        t.row(vec![
            s.instance_type.clone(),
            human_amount("cpu", s.cpu_millis),
            human_amount("memory", s.memory_bytes),
            if ext.is_empty() { "-".to_string() } else { ext.join(",") },
            s.count.to_string(),
        ]);
    }
    out.push_str(&t.render());
    out.push('\n');
    let mut t = Table::new(&["ZONE", "NODES"]);
    for (z, n) in &r.nodes.by_zone {
        t.row(vec![z.clone(), n.to_string()]);
    }
    out.push_str(&t.render());
    if !r.nodes.taints.is_empty() {
        out.push('\n');
        let mut t = Table::new(&["TAINT", "NODES"]);
        for (k, n) in &r.nodes.taints {
            t.row(vec![k.clone(), n.to_string()]);
        }
        out.push_str(&t.render());
    }
    out.push_str(&format!(
        "\nPods: {} bound, {} pending in {} (not scheduled by kplace: {} for other schedulers, {} terminal, {} terminating, {} gated, {} on unknown nodes{})\n",
        r.pods.bound,
        r.pods.pending,
        count(r.pods.pending_classes, "class"),
        r.pods.ignored.other_scheduler,
        r.pods.ignored.terminal,
        r.pods.ignored.terminating,
        r.pods.ignored.gated,
        r.pods.ignored.unknown_node,
        match r.pods.ignored.outside_batch {
            0 => String::new(),
            n => format!(", {n} pending outside the batch of -n/-l"),
        },
    ));
    let mut t = Table::new(&["PRIORITY", "PENDING"]);
    for (p, n) in r.pods.pending_by_priority.iter().rev() {
        t.row(vec![p.to_string(), n.to_string()]);
    }
    out.push_str(&t.render());
    if !r.gangs.is_empty() {
        out.push('\n');
        let mut t = Table::new(&[
            "GANGS",
            "GROUPS",
            "PENDING",
            "BOUND",
            "MIN MEMBER",
            "NEEDED",
            "UNSATISFIABLE",
        ]);
        for g in &r.gangs {
            t.row(vec![
                g.convention.clone(),
                g.gangs.to_string(),
                g.pending_members.to_string(),
                g.bound_members.to_string(),
                g.min_member.to_string(),
                g.needed_from_pending.to_string(),
                g.unsatisfiable.to_string(),
            ]);
        }
        out.push_str(&t.render());
    }
    out.push('\n');
    let mut t = Table::new(&[
        "RESOURCE",
        "ALLOCATABLE",
        "REQUESTED",
        "PENDING",
        "UTIL",
        "UTIL IF ALL PLACED",
    ]);
    for (name, x) in &r.resources {
        t.row(vec![
            name.clone(),
            human_amount(name, x.allocatable),
            human_amount(name, x.requested),
            human_amount(name, x.pending),
            format!("{:.1}%", x.utilization * 100.0),
            format!("{:.1}%", x.utilization_if_all_placed * 100.0),
        ]);
    }
    out.push_str(&t.render());
    out
}
