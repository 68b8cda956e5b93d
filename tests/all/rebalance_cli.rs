//! `kplace rebalance` end to end, on the demo fixture and on generated clusters (`kplace gen`),
//! for all three objectives: the plans are valid under `kplace check` wave by wave (checked here
//! again, independently of the command's own verdict), keep every PodDisruptionBudget at every
//! eviction, respect `--max-moves`, and improve their objective; the other commands' plan
//! documents are unchanged; `--report` writes a self-contained HTML page. `kplace check --plan`
//! accepts the rebalancing plans (moves replayed wave by wave) and rejects corrupted moves.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::run::kplace_logging;
use kplace::plan::Plan;
use kplace::rebalance::budget::{Budget, budgets};
use kplace::rebalance::waves::{check_moves, verify_waves};
use kplace::snapshot::{self, BuildOptions};
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn plan(args: &[&str]) -> Plan {
    let out = kplace(args);
    assert!(out.status.success(), "kplace {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("stdout is exactly one JSON plan")
}

/// The snapshot's model and budgets, loaded by the library, to check plans independently.
fn load(path: &Path) -> (kplace::model::ClusterState, Vec<Budget>) {
    let snap = snapshot::load(&[path.to_path_buf()]).expect("the snapshot loads");
    let cluster = snapshot::build(&snap, &BuildOptions::default()).expect("the snapshot builds");
    let (budgets, _) = budgets(&snap, &cluster.state, &cluster.pending);
    (cluster.state, budgets)
}

/// Runs every objective on `path` and checks each plan; returns the plans by objective.
fn every_objective(path: &Path, extra: &[&str]) -> Vec<(&'static str, Plan)> {
    let (state, budgets) = load(path);
    let mut out = Vec::new();
    for objective in ["pack", "balance", "fix"] {
        let mut args =
            vec!["rebalance", path.to_str().unwrap(), "--objective", objective, "-o", "json"];
        args.extend_from_slice(extra);
        let p = plan(&args);
        let s = p.summary.rebalance.as_ref().expect("summary.rebalance");
        assert_eq!(s.objective, objective);
        assert!(s.check_valid, "{objective}: {s:#?}");
        assert_eq!(s.moves, p.moves.len());
        assert_eq!(s.waves as u32, p.moves.iter().map(|m| m.wave).max().unwrap_or(0));
        assert!(p.placements.is_empty() && p.evictions.is_empty());
        let report = check_moves(&state, &p.moves);
        assert!(report.is_valid(), "{objective}: {report:#?}");
        assert_eq!(verify_waves(&state, &budgets, &p.moves), Ok(()), "{objective}");
        // `kplace check --plan` replays the moves on its own and agrees.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plan.json");
        std::fs::write(&file, serde_json::to_string(&p).unwrap()).unwrap();
        let (code, report) = check_plan(path, &file);
        assert!(report.is_valid(), "{objective}: {:#?}", report.violations);
        assert_eq!(code, Some(0), "{objective}");
        out.push((objective, p));
    }
    out
}

#[test]
fn every_objective_on_the_demo_fixture_gives_a_valid_budget_safe_plan_that_improves_it() {
    let demo = root().join("fixtures/demo");
    for (objective, p) in every_objective(&demo, &[]) {
        let s = p.summary.rebalance.as_ref().unwrap();
        match objective {
            "pack" => {
                assert!(s.nodes_freed.len() >= 5, "pack frees nodes: {s:#?}");
                assert_eq!(s.nodes_in_use_after, s.nodes_in_use_before - s.nodes_freed.len());
            }
            "balance" => {
                assert!(!p.moves.is_empty());
                let (b, a) = (s.node_stddev_before["cpu"], s.node_stddev_after["cpu"]);
                assert!(a < b - 0.01, "cpu stddev {b} -> {a}");
            }
            _ => {
                // The two pods left on the cordoned node, which do not tolerate its taint.
                let mut pods: Vec<&str> = p.moves.iter().map(|m| m.pod.as_str()).collect();
                pods.sort();
                assert_eq!(pods.len(), 2, "{:#?}", p.moves);
                assert!(pods[0].starts_with("data/airflow-worker-") && pods[0].ends_with("-4cjl7"));
                assert!(pods[1].starts_with("data/log-sampler-") && pods[1].ends_with("-wpd85"));
                for m in &p.moves {
                    assert_eq!(m.from, "ip-10-0-73-8.eu-west-1.compute.internal");
                    assert_eq!(m.reason, "RemovePodsViolatingNodeTaints");
                }
                assert_eq!(s.violations_fixed, 2);
                assert!(s.violations_after.is_empty(), "{s:#?}");
            }
        }
    }
}

#[test]
fn max_moves_bounds_the_plan() {
    for objective in ["pack", "balance"] {
        let p = plan(&[
            "rebalance",
            "fixtures/demo",
            "--objective",
            objective,
            "--max-moves",
            "3",
            "-o",
            "json",
        ]);
        assert!(!p.moves.is_empty() && p.moves.len() <= 3, "{objective}: {:#?}", p.moves);
        assert_eq!(p.summary.rebalance.unwrap().max_moves, Some(3));
    }
}

#[test]
fn the_other_commands_documents_have_no_moves_or_rebalance_summary() {
    let out = kplace(&["baseline", "fixtures/demo", "-o", "json"]);
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v.get("moves").is_none(), "no moves key");
    assert!(v["summary"].get("rebalance").is_none(), "no rebalance summary");
    // A rebalancing plan reads back, from YAML too, as a plan with moves.
    let out = kplace(&["rebalance", "fixtures/demo", "--objective", "fix", "-o", "yaml"]);
    assert!(out.status.success());
    let p: Plan = serde_saphyr::from_str(&String::from_utf8(out.stdout).unwrap()).unwrap();
    assert_eq!(p.moves.len(), 2);
}

#[test]
fn tables_and_a_self_contained_html_report() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.html");
    let out = kplace(&[
        "rebalance",
        "fixtures/demo",
        "--objective",
        "pack",
        "--report",
        report.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("WAVE  POD"), "{text}");
    assert!(text.contains("check: every wave is valid"), "{text}");
    assert!(text.contains("NODE STDDEV"), "{text}");
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    assert_eq!(html.matches("<svg").count(), 2, "cpu and memory charts");
    assert!(html.contains("ip-10-0-73-8.eu-west-1.compute.internal"), "nodes are labelled");
    assert!(!html.contains("<script"), "no script");
    let without_namespace = html.replace("http://www.w3.org/2000/svg", "");
    assert!(!without_namespace.contains("http"), "nothing from the network");
}

#[test]
fn bad_arguments_exit_with_2() {
    assert_eq!(
        kplace(&["rebalance", "fixtures/demo"]).status.code(),
        Some(2),
        "--objective is required"
    );
    assert_eq!(
        kplace(&["rebalance", "fixtures/demo", "--objective", "shuffle"]).status.code(),
        Some(2)
    );
    assert_eq!(
        kplace(&["rebalance", "fixtures/demo", "--objective", "pack", "--max-moves", "-1"])
            .status
            .code(),
        Some(2)
    );
}

/// Writes a generated cluster (`kplace gen`, seed 7) as it comes: its pods are owned by their
/// controllers (ReplicaSets for Deployment-like services), so descheduler's evictor and
/// `rebalance` may move them.
fn generated(dir: &Path, workload: &str, nodes: &str, pods: &str, init: &str) -> PathBuf {
    let path = dir.join(format!("{workload}.yaml"));
    let out = kplace(&[
        "gen",
        "--workload",
        workload,
        "--nodes",
        nodes,
        "--pods",
        pods,
        "--init-pods",
        init,
        "--seed",
        "7",
        "-o",
        path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    path
}

#[test]
fn every_objective_on_generated_clusters_gives_valid_budget_safe_plans() {
    let dir = tempfile::tempdir().unwrap();
    let frag = generated(dir.path(), "fragmentation-mix", "30", "260", "260");
    let plans = every_objective(&frag, &[]);
    let pack = &plans[0].1;
    let s = pack.summary.rebalance.as_ref().unwrap();
    assert!(!s.nodes_freed.is_empty(), "pack frees nodes of a fragmented fleet: {s:#?}");
    let balance = plans[1].1.summary.rebalance.as_ref().unwrap();
    assert!(balance.node_stddev_after["cpu"] < balance.node_stddev_before["cpu"], "{balance:#?}");

    // Budgets with minAvailable percentages and maxUnavailable, and several priorities.
    let mixed = generated(dir.path(), "mixed-priority", "20", "200", "150");
    let plans = every_objective(&mixed, &["--max-moves", "25"]);
    for (objective, p) in &plans {
        assert!(p.moves.len() <= 25, "{objective}");
    }
    let pack = plans[0].1.summary.rebalance.as_ref().unwrap();
    assert!(!pack.budgets.is_empty() || pack.moves == 0, "{pack:#?}");
}

/// `kplace check SNAPSHOT --plan PLAN -o json`: exit code and report.
fn check_plan(snapshot: &Path, plan: &Path) -> (Option<i32>, kplace::check::CheckReport) {
    let out = kplace(&[
        "check",
        snapshot.to_str().unwrap(),
        "--plan",
        plan.to_str().unwrap(),
        "-o",
        "json",
    ]);
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code(), report)
}

#[test]
fn plans_on_a_generated_cluster_move_pods_improve_their_objective_and_pass_check() {
    let dir = tempfile::tempdir().unwrap();
    // 40 of the 200 pods stay pending: a rebalancing plan leaves them alone.
    let snapshot = generated(dir.path(), "fragmentation-mix", "24", "200", "160");
    let (state, _) = load(&snapshot);
    let mut plans = Vec::new();
    for objective in ["pack", "balance"] {
        let p = plan(&[
            "rebalance",
            snapshot.to_str().unwrap(),
            "--objective",
            objective,
            "-o",
            "json",
        ]);
        let s = p.summary.rebalance.as_ref().expect("summary.rebalance");
        assert!(!p.moves.is_empty(), "{objective}: gen's pods are movable: {s:#?}");
        match objective {
            "pack" => assert!(!s.nodes_freed.is_empty(), "pack frees nodes: {s:#?}"),
            _ => {
                let (b, a) = (s.node_stddev_before["cpu"], s.node_stddev_after["cpu"]);
                assert!(a < b, "balance lowers the cpu stddev: {b} -> {a}");
            }
        }
        let path = dir.path().join(format!("{objective}.json"));
        std::fs::write(&path, serde_json::to_string(&p).unwrap()).unwrap();
        let (code, report) = check_plan(&snapshot, &path);
        assert!(report.is_valid(), "{objective}: {:#?}", report.violations);
        assert_eq!(code, Some(0), "{objective}");
        plans.push(p);
    }

    // A corrupted move: a `from` node the pod is not on; the table names the pod and the node.
    let mut bad = plans[0].clone();
    let first = bad.moves[0].clone();
    let elsewhere = state.nodes.iter().map(|n| n.name.as_str()).find(|n| *n != first.from).unwrap();
    bad.moves[0].from = elsewhere.to_string();
    let path = dir.path().join("wrong-from.json");
    std::fs::write(&path, serde_json::to_string(&bad).unwrap()).unwrap();
    let (code, report) = check_plan(&snapshot, &path);
    assert_eq!(code, Some(3));
    assert!(
        report.violations.iter().any(|v| v.kind.as_str() == "move_wrong_node"
            && v.pod == first.pod
            && v.message.contains(&first.from)
            && v.message.contains(elsewhere)),
        "{:#?}",
        report.violations
    );
    let out = kplace(&["check", snapshot.to_str().unwrap(), "--plan", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("move_wrong_node") && text.contains(&first.pod), "{text}");
    assert!(text.contains(elsewhere) && text.contains("plan is invalid"), "{text}");

    // A corrupted move: onto a node where the pod does not fit (one no move touches).
    let mut bad = plans[0].clone();
    let touched: std::collections::BTreeSet<&str> =
        bad.moves.iter().flat_map(|m| [m.from.as_str(), m.to.as_str()]).collect();
    let pod_cpu = |key: &str| {
        state
            .nodes
            .iter()
            .flat_map(|n| &n.pods)
            .find(|p| p.key() == key)
            .unwrap()
            .requests
            .milli_cpu
    };
    let (i, full) = bad
        .moves
        .iter()
        .enumerate()
        .find_map(|(i, m)| {
            let cpu = pod_cpu(&m.pod);
            state
                .nodes
                .iter()
                .find(|n| {
                    !touched.contains(n.name.as_str())
                        && n.allocatable.milli_cpu - n.requested.milli_cpu < cpu
                })
                .map(|n| (i, n.name.clone()))
        })
        .expect("some moved pod does not fit some untouched node");
    bad.moves[i].to = full.clone();
    let pod = bad.moves[i].pod.clone();
    let path = dir.path().join("no-room.json");
    std::fs::write(&path, serde_json::to_string(&bad).unwrap()).unwrap();
    let (code, report) = check_plan(&snapshot, &path);
    assert_eq!(code, Some(3));
    assert!(
        report.violations.iter().any(|v| v.kind.as_str() == "insufficient_resource"
            && v.pod == pod
            && v.node.as_deref() == Some(full.as_str())),
        "{:#?}",
        report.violations
    );
}

fn kplace(args: &[&str]) -> Output {
    kplace_logging(args, "error")
}
