//! The `kplace` binary end to end: output formats, the demo fixture's totals and decisions,
//! exit codes and error messages.

use std::path::{Path, PathBuf};

use crate::run::kplace;
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn json(args: &[&str]) -> Value {
    let out = kplace(args);
    assert!(
        out.status.success(),
        "kplace {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is exactly one JSON document")
}

fn expected() -> Value {
    let text = std::fs::read_to_string(root().join("fixtures/demo-expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn inspect_reports_the_demo_fixtures_totals_as_the_generator_computed_them() {
    let r = json(&["inspect", "fixtures/demo", "-o", "json"]);
    let e = expected();
    assert_eq!(r["nodes"]["total"], e["nodes"]["total"]);
    assert_eq!(r["nodes"]["cordoned"].as_array().unwrap().len() as u64, e["nodes"]["cordoned"]);
    for (zone, n) in e["nodes"]["per_zone"].as_object().unwrap() {
        assert_eq!(&r["nodes"]["by_zone"][zone], n, "zone {zone}");
    }
    assert_eq!(r["pods"]["bound"], e["pods"]["bound_non_terminal"]);
    assert_eq!(r["pods"]["pending"], e["pods"]["pending_served"]);
    assert_eq!(r["pods"]["ignored"]["other_scheduler"], e["pods"]["ignored_other_scheduler"]);
    assert_eq!(r["pods"]["ignored"]["terminal"], e["pods"]["terminal"]);
    for (prio, n) in e["pending_by_priority"].as_object().unwrap() {
        assert_eq!(&r["pods"]["pending_by_priority"][prio], n, "priority {prio}");
    }
    for (sched, n) in e["pods"]["pending_by_scheduler"].as_object().unwrap() {
        assert_eq!(&r["pods"]["pending_by_scheduler"][sched], n, "scheduler {sched}");
    }
    for (name, t) in e["resources"].as_object().unwrap() {
        assert_eq!(r["resources"][name]["allocatable"], t["allocatable"], "{name} allocatable");
        assert_eq!(r["resources"][name]["requested"], t["bound_requests"], "{name} requested");
        assert_eq!(r["resources"][name]["pending"], t["pending_requests"], "{name} pending");
    }
    // 109180m of 413280m requested.
    let util = r["resources"]["cpu"]["utilization"].as_f64().unwrap();
    assert!((util - 109_180.0 / 413_280.0).abs() < 1e-12);
    assert!(r["pods"]["pending_classes"].as_u64().unwrap() > 0);
}

#[test]
fn inspect_prints_readable_tables_by_default_and_yaml_on_request() {
    let out = kplace(&["inspect", "fixtures/demo"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("Nodes: 24 (1 cordoned"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("nvidia.com/gpu=present:NoSchedule") && l.ends_with(" 4")),
        "{text}"
    );
    assert!(text.contains("nvidia.com/gpu=4"), "the GPU shape lists its GPUs: {text}");
    assert!(!text.contains("hugepages-1Gi=0"), "zero extended resources are not listed: {text}");
    let yaml =
        String::from_utf8(kplace(&["inspect", "fixtures/demo", "-o", "yaml"]).stdout).unwrap();
    assert!(yaml.contains("pending: 118"), "{yaml}");
}

#[test]
fn baseline_on_the_demo_fixture_accounts_for_every_pending_pod_once() {
    let plan = json(&["baseline", "fixtures/demo", "-o", "json"]);
    let placed: Vec<&str> =
        plan["placements"].as_array().unwrap().iter().map(|p| p["pod"].as_str().unwrap()).collect();
    let unsched: Vec<&str> = plan["unschedulable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["pod"].as_str().unwrap())
        .collect();
    let mut all: Vec<&str> = placed.iter().chain(&unsched).copied().collect();
    all.sort_unstable();
    let before = all.len();
    all.dedup();
    assert_eq!(before, all.len(), "a pod appears twice");
    assert_eq!(all.len(), 118);
    assert_eq!(plan["summary"]["placed"].as_u64().unwrap() as usize, placed.len());
    // The three pods the generator built to fit no node are unschedulable.
    for pod in expected()["pods"]["pending_fitting_no_node"].as_array().unwrap() {
        assert!(unsched.contains(&pod.as_str().unwrap()), "{pod} should be unschedulable");
    }
}

#[test]
fn baseline_words_the_demo_fixtures_impossible_pod_as_kube_scheduler_does() {
    // genome-assembly asks for 49 CPUs: 19 general nodes are too small in cpu and memory, the 4
    // GPU nodes carry an untolerated taint, 1 node is cordoned (NodeUnschedulable runs first).
    // Every reason is UnschedulableAndUnresolvable, so preemption cannot help anywhere.
    let plan = json(&["baseline", "fixtures/demo", "-o", "json"]);
    let u = plan["unschedulable"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["pod"] == "batch/genome-assembly-55x9f")
        .expect("genome-assembly is unschedulable");
    assert_eq!(
        u["message"],
        "0/24 nodes are available: 1 node(s) were unschedulable, 19 Insufficient cpu, \
         19 Insufficient memory, 4 node(s) had untolerated taint(s). no new claims to deallocate, preemption: 0/24 nodes are \
         available: 24 Preemption is not helpful for scheduling."
    );
    assert_eq!(u["reasons"]["Insufficient cpu"], 19);
}

#[test]
fn baseline_is_deterministic_for_a_seed() {
    let a = json(&["baseline", "fixtures/demo", "-o", "json", "--seed", "3"]);
    let b = json(&["baseline", "fixtures/demo", "-o", "json", "--seed", "3"]);
    assert_eq!(a["placements"], b["placements"]);
    assert_eq!(a["unschedulable"], b["unschedulable"]);
}

#[test]
fn explain_shows_why_the_impossible_pod_fits_nowhere() {
    let e =
        json(&["explain", "fixtures/demo", "--pod", "batch/genome-assembly-55x9f", "-o", "json"]);
    let nodes = e["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 24);
    assert!(nodes.iter().all(|n| n["feasible"] == false));
    let gpu_node = nodes
        .iter()
        .find(|n| {
            n["filters"].as_array().unwrap().iter().any(|f| {
                f["plugin"] == "TaintToleration" && f["code"] == "UnschedulableAndUnresolvable"
            })
        })
        .expect("a GPU node rejects by taint");
    // explain runs every filter, so the GPU node also reports its resource verdict.
    assert!(
        gpu_node["filters"].as_array().unwrap().iter().any(|f| f["plugin"] == "NodeResourcesFit")
    );
    let message = e["message"].as_str().unwrap();
    assert!(message.starts_with(
        "0/24 nodes are available: 1 node(s) were unschedulable, 19 Insufficient cpu"
    ));
}

#[test]
fn explain_shows_scores_and_the_node_baseline_chose_is_among_the_best() {
    let plan = json(&["baseline", "fixtures/demo", "-o", "json"]);
    let first = &plan["placements"][0];
    let pod = first["pod"].as_str().unwrap();
    let e = json(&["explain", "fixtures/demo", "--pod", pod, "-o", "json"]);
    assert_eq!(e["queue_position"], 0);
    let best: Vec<&str> =
        e["best_nodes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert!(best.contains(&first["node"].as_str().unwrap()), "{best:?} vs {first}");
    let scored = e["nodes"].as_array().unwrap().iter().find(|n| n["feasible"] == true).unwrap();
    let lines = scored["scores"].as_array().unwrap();
    let total: i64 = lines.iter().map(|s| s["weighted"].as_i64().unwrap()).sum();
    assert_eq!(scored["total"].as_i64().unwrap(), total);
    for s in lines {
        assert_eq!(
            s["weighted"].as_i64().unwrap(),
            s["normalized"].as_i64().unwrap() * s["weight"].as_i64().unwrap()
        );
    }
    assert_eq!(e["baseline_decision"], format!("placed on {}", first["node"].as_str().unwrap()));
}

#[test]
fn bad_input_exits_1_with_a_message_naming_file_object_and_field() {
    let bad = Path::new("tests/data/bad/bad-quantity.yaml");
    let out = kplace(&["inspect", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("bad-quantity.yaml"), "{err}");
    assert!(err.contains("1.5.3Gi"), "{err}");
    assert!(err.contains("resources.requests"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn an_invalid_config_file_exits_1_naming_the_field() {
    let out = kplace(&[
        "baseline",
        "fixtures/demo",
        "--config",
        "tests/data/config/invalid-unknown-field.yaml",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("invalid-unknown-field.yaml"), "{err}");
}

#[test]
fn an_unknown_pod_for_explain_exits_1_and_usage_errors_exit_2() {
    let out = kplace(&["explain", "fixtures/demo", "--pod", "nope/nothing"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8(out.stderr).unwrap().contains("nope/nothing"));
    // Without SNAPSHOT paths the cluster is read; with paths, --kubeconfig is a usage error.
    let out = kplace(&["inspect", "fixtures/demo", "--kubeconfig", "k"]);
    assert_eq!(out.status.code(), Some(2));
}
