//! `kplace plan` and `kplace check` end to end on the demo fixture: the plans `plan` and
//! `baseline` print are found valid by `check`, `plan` places at least as many pods as
//! `baseline`, and a tampered plan is rejected with exit code 3.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::run::kplace_logging;
use kplace::check::CheckReport;
use kplace::plan::Plan;

fn demo_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo")
}

fn plan_of(command: &str) -> Plan {
    let demo = demo_dir();
    let out = kplace(&[command, demo.to_str().expect("utf-8 path"), "-o", "json"]);
    assert!(out.status.success(), "{command}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("one JSON plan on stdout")
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("temp file written");
    path
}

fn check_json(plan: &Path) -> (Option<i32>, CheckReport) {
    let demo = demo_dir();
    let out = kplace(&[
        "check",
        demo.to_str().expect("utf-8 path"),
        "--plan",
        plan.to_str().expect("utf-8 path"),
        "-o",
        "json",
    ]);
    let report = serde_json::from_slice(&out.stdout).expect("one JSON report on stdout");
    (out.status.code(), report)
}

#[test]
fn plan_and_baseline_outputs_are_valid_and_plan_places_at_least_as_many() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let plan = plan_of("plan");
    let baseline = plan_of("baseline");
    assert_eq!(plan.summary.algorithm, "auto");
    assert!(plan.placements.len() >= baseline.placements.len());
    assert_eq!(
        plan.placements.len(),
        114,
        "only the three pods that fit no node and kafka-2 (its claim is missing) are left"
    );
    for (name, p) in [("plan.json", &plan), ("baseline.json", &baseline)] {
        let path = write(tmp.path(), name, &serde_json::to_string(p).expect("serializes"));
        let (code, report) = check_json(&path);
        assert!(report.is_valid(), "{name}: {:#?}", report.violations);
        assert_eq!(code, Some(0), "{name}");
    }
}

#[test]
fn a_tampered_plan_is_rejected_with_exit_code_3() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let mut plan = plan_of("plan");
    // The cordoned node (tainted, and in zone 1b) for the first placed pod; a pod not pending.
    plan.placements[0].node = "ip-10-0-73-8.eu-west-1.compute.internal".to_string();
    plan.placements.push(kplace::plan::Placement { pod: "x/nope".into(), node: "n".into() });
    let path = write(tmp.path(), "bad.json", &serde_json::to_string(&plan).expect("serializes"));
    let (code, report) = check_json(&path);
    assert_eq!(code, Some(3));
    let kinds: Vec<String> = report.violations.iter().map(|v| v.kind.to_string()).collect();
    assert!(kinds.contains(&"node_cordoned".to_string()), "{kinds:?}");
    assert!(kinds.contains(&"unknown_pod".to_string()), "{kinds:?}");
}

#[test]
fn a_minimal_yaml_plan_is_read_and_unknown_and_missing_pods_are_reported() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let path =
        write(tmp.path(), "plan.yaml", "placements:\n- pod: x/not-pending\n  node: nowhere\n");
    let demo = demo_dir();
    let out = kplace(&[
        "check",
        demo.to_str().expect("utf-8 path"),
        "--plan",
        path.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(out.status.code(), Some(3));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("unknown_pod"), "{text}");
    assert!(text.contains("missing_pod"), "{text}");
    assert!(text.contains("plan is invalid"), "{text}");
}

#[test]
fn an_unreadable_plan_is_an_error_naming_the_file() {
    let demo = demo_dir();
    let out =
        kplace(&["check", demo.to_str().expect("utf-8 path"), "--plan", "/no/such/plan.json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/no/such/plan.json"));
}

/// Four 4-CPU nodes, each running one replica (1 CPU) of ReplicaSet `web` (replicas 4), with a
/// budget of `minAvailable: 3`: one disruption at a time.
fn budget_snapshot(dir: &Path) -> PathBuf {
    let mut docs = vec![
        "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: web, namespace: ns, uid: uid-rs-web}\n\
         spec:\n  replicas: 4\n  selector: {matchLabels: {app: web}}\n  template: {metadata: {labels: {app: web}}}\n"
            .to_string(),
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: ns}\n\
         spec:\n  minAvailable: 3\n  selector: {matchLabels: {app: web}}\n"
            .to_string(),
    ];
    for i in 1..=4 {
        docs.push(format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: n{i}}}\n\
             status: {{allocatable: {{cpu: '4', memory: 16Gi, pods: '110'}}}}\n"
        ));
        docs.push(format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-{i}\n  namespace: ns\n  labels: {{app: web}}\n\
             \x20 ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: uid-rs-web, controller: true}}]\n\
             spec:\n  nodeName: n{i}\n  containers: [{{name: c, image: web, resources: {{requests: {{cpu: '1'}}}}}}]\n\
             status: {{phase: Running}}\n"
        ));
    }
    write(dir, "cluster.yaml", &docs.join("---\n"))
}

#[test]
fn check_verifies_disruption_budgets_wave_by_wave() {
    let dir = tempfile::tempdir().expect("temp dir");
    let snapshot = budget_snapshot(dir.path());
    let moves = |waves: [u32; 3]| {
        format!(
            r#"{{"placements": [], "moves": [
                {{"pod": "ns/web-1", "from": "n1", "to": "n4", "wave": {}}},
                {{"pod": "ns/web-2", "from": "n2", "to": "n4", "wave": {}}},
                {{"pod": "ns/web-3", "from": "n3", "to": "n4", "wave": {}}}]}}"#,
            waves[0], waves[1], waves[2]
        )
    };
    let cases = [
        ("three of four pods in one wave, the budget allowing one", [1, 1, 1], Some(3), 1),
        ("two in one wave is still one too many", [1, 1, 2], Some(3), 1),
        ("one per wave is valid", [1, 2, 3], Some(0), 0),
    ];
    for (name, waves, code, violations) in cases {
        let plan = write(dir.path(), "plan.json", &moves(waves));
        let out = kplace(&[
            "check",
            snapshot.to_str().unwrap(),
            "--plan",
            plan.to_str().unwrap(),
            "-o",
            "json",
        ]);
        assert_eq!(out.status.code(), code, "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let report: CheckReport = serde_json::from_slice(&out.stdout).expect("a JSON report");
        let budget: Vec<_> = report
            .violations
            .iter()
            .filter(|v| v.kind == kplace::check::ViolationKind::DisruptionBudget)
            .collect();
        assert_eq!(budget.len(), violations, "{name}: {:#?}", report.violations);
        assert_eq!(
            report.violations.len(),
            violations,
            "{name}: nothing else: {:#?}",
            report.violations
        );
        if let Some(v) = budget.first() {
            assert!(
                v.message.contains("ns/web") && v.message.contains("allows 1"),
                "{name}: {v:?}"
            );
        }
    }
}

fn kplace(args: &[&str]) -> Output {
    kplace_logging(args, "error")
}
