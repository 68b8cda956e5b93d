//! `kplace plan`'s default objective against the sequential scheduler, per workload, on
//! oversubscribed `fragmentation-mix` clusters, without the sequential fallback: no fewer pods,
//! no less requested CPU or memory, and no workload left with no pod that `baseline` serves.
//! Figures come from `kplace compare -o json` (its per-owner rows); `--objective` and
//! `--ensure-baseline` are recorded in its settings.

use std::path::Path;

use crate::run::ok;
use serde_json::Value;

fn compare(path: &Path, extra: &[&str]) -> Value {
    let path = path.to_str().expect("a UTF-8 path");
    let mut args = vec!["compare", path, "--backend", "cpu", "-o", "json"];
    args.extend_from_slice(extra);
    serde_json::from_slice(&ok(&args).stdout).expect("one JSON document")
}

fn generate(dir: &Path, nodes: usize, pods: usize, init: usize, seed: u64) -> std::path::PathBuf {
    let path = dir.join(format!("fm-{nodes}-{pods}-{seed}.yaml"));
    let (n, p, i, s) = (nodes.to_string(), pods.to_string(), init.to_string(), seed.to_string());
    ok(&[
        "gen",
        "--workload",
        "fragmentation-mix",
        "--nodes",
        &n,
        "--pods",
        &p,
        "--init-pods",
        &i,
        "--seed",
        &s,
        "-o",
        path.to_str().expect("a UTF-8 path"),
    ]);
    path
}

/// Per side: (placed pods, cpu placed, memory placed, workloads with none placed that the
/// other side serves).
fn totals(doc: &Value, side: &str, other: &str) -> (u64, i64, i64, Vec<String>) {
    assert_eq!(doc["owners_not_listed"], 0, "every workload is listed");
    let owners = doc["owners"].as_array().expect("owners");
    let mut cpu = 0;
    let mut memory = 0;
    let mut starved = Vec::new();
    for row in owners {
        cpu += row[side]["cpu_placed_m"].as_i64().unwrap_or(0);
        memory += row[side]["memory_placed_bytes"].as_i64().unwrap_or(0);
        if row[side]["placed"] == 0 && row[other]["placed"].as_u64().unwrap_or(0) > 0 {
            starved.push(row["owner"].as_str().unwrap_or_default().to_string());
        }
    }
    (doc[side]["placed"].as_u64().expect("placed"), cpu, memory, starved)
}

#[test]
fn the_default_objective_places_at_least_baselines_pods_cpu_and_memory_per_workload() {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    // Oversubscribed: ten pending pods per node on a fleet with room for about half of them.
    for (nodes, pods, init, seed) in [(30, 300, 60, 42), (40, 400, 80, 7), (25, 250, 50, 3)] {
        let path = generate(tmp.path(), nodes, pods, init, seed);
        let doc = compare(&path, &[]);
        let instance = format!("{nodes} nodes, {pods} pods, seed {seed}");
        assert_eq!(doc["settings"]["objective"], "resources", "{instance}");
        assert_eq!(doc["settings"]["ensure_baseline"], false, "{instance}");
        assert_ne!(doc["plan"]["strategy"], "fallback-baseline", "{instance}");
        assert_eq!(doc["plan"]["violations"], 0, "{instance}");
        let (b_pods, b_cpu, b_mem, _) = totals(&doc, "baseline", "plan");
        let (p_pods, p_cpu, p_mem, starved) = totals(&doc, "plan", "baseline");
        assert!(
            doc["plan"]["unschedulable"].as_u64().unwrap_or(0) > 0,
            "{instance}: not oversubscribed, the test would prove nothing"
        );
        assert!(p_pods >= b_pods, "{instance}: pods {p_pods} < baseline {b_pods}");
        assert!(p_cpu >= b_cpu, "{instance}: cpu {p_cpu}m < baseline {b_cpu}m");
        assert!(p_mem >= b_mem, "{instance}: memory {p_mem} < baseline {b_mem}");
        assert!(
            starved.is_empty(),
            "{instance}: workloads baseline serves, plan starves: {starved:?}"
        );
    }
}

#[test]
fn the_objective_and_the_ensure_baseline_flag_are_recorded() {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let path = generate(tmp.path(), 30, 300, 60, 42);
    let resources = compare(&path, &[]);
    let pods = compare(&path, &["--objective", "pods", "--ensure-baseline"]);
    assert_eq!(pods["settings"]["objective"], "pods");
    assert_eq!(pods["settings"]["ensure_baseline"], true);
    assert_eq!(resources["settings"]["objective"], "resources");
    // Counting pods never places fewer pods than weighing them by their share.
    let (r_pods, _, _, _) = totals(&resources, "plan", "baseline");
    let (n_pods, _, _, _) = totals(&pods, "plan", "baseline");
    assert!(n_pods >= r_pods, "pods objective {n_pods} pods < resources objective {r_pods}");
    // `--no-fallback` is still accepted (ignored).
    compare(&path, &["--no-fallback"]);
}
