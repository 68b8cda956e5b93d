//! PersistentVolumeClaims end to end on `fixtures/volumes/`: `baseline` and `plan` fail the same
//! pods with the same kube-scheduler messages (the claim checks of VolumeBinding's and
//! VolumeRestrictions' PreFilters), `explain` and `snapshot` carry the claims, and a snapshot
//! without claims says why its pods fail.

use crate::run::kplace;
use serde_json::Value;

fn plan(command: &str, snapshot: &str) -> Value {
    let out = kplace(&[command, snapshot, "--backend", "cpu", "-q", "-o", "json"]);
    assert!(out.status.success(), "{command}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

/// The message of `pod` in `doc`'s `unschedulable`, or `None` when it was placed.
fn failure<'a>(doc: &'a Value, pod: &str) -> Option<&'a str> {
    let placed = doc["placements"].as_array().unwrap().iter().any(|p| p["pod"] == pod);
    let failed = doc["unschedulable"].as_array().unwrap().iter().find(|u| u["pod"] == pod);
    assert!(placed != failed.is_some(), "{pod} is placed or unschedulable, once");
    failed.map(|u| u["message"].as_str().unwrap())
}

const SUFFIX: &str = ". not found";

#[test]
fn baseline_and_plan_fail_pods_whose_claims_cannot_be_used_with_kube_schedulers_messages() {
    let baseline = plan("baseline", "fixtures/volumes");
    let batch = plan("plan", "fixtures/volumes");
    // (case, pod, the PreFilter message; `None`: placed).
    let cases: [(&str, &str, Option<&str>); 14] = [
        ("a pod with a bound claim is placed", "data/db-1", None),
        ("a pod mounting one bound claim twice is placed", "data/db-2", None),
        ("a pod with its own ephemeral claim is placed", "data/scratch-0", None),
        ("a pod without volumes is placed", "data/web-0", None),
        ("another pod without volumes is placed", "data/web-1", None),
        (
            "a missing claim is not found",
            "data/orphan-0",
            Some("persistentvolumeclaim \"data-missing\" not found"),
        ),
        (
            "a lost claim names the volume it lost",
            "data/lost-0",
            Some(
                "persistentvolumeclaim \"data-lost\" bound to non-existent persistentvolume \"pv-gone\"",
            ),
        ),
        (
            "a claim being deleted is refused",
            "data/deleting-0",
            Some("persistentvolumeclaim \"data-deleting\" is being deleted"),
        ),
        (
            "an ephemeral claim of another pod is refused",
            "data/stolen-0",
            Some(
                "PVC data/stolen-0-scratch was not created for pod data/stolen-0 (pod is not owner)",
            ),
        ),
        (
            "an ephemeral claim not yet created is waited for",
            "data/fresh-0",
            Some(
                "waiting for ephemeral volume controller to create the persistentvolumeclaim \"fresh-0-scratch\"",
            ),
        ),
        (
            "an unbound claim without a storage class binds immediately, so the pod waits",
            "data/waiting-0",
            Some("pod has unbound immediate PersistentVolumeClaims"),
        ),
        (
            "VolumeRestrictions reports a missing claim before VolumeBinding's missing ephemeral one",
            "data/mixed-0",
            Some("persistentvolumeclaim \"data-missing\" not found"),
        ),
        (
            "a high-priority pod without its claim preempts nothing",
            "data/urgent-0",
            Some("persistentvolumeclaim \"data-urgent\" not found"),
        ),
        ("the bound pod stays where it is", "data/db-0", None),
    ];
    for (case, pod, reason) in cases {
        if pod == "data/db-0" {
            // Bound before the run: in neither list.
            for doc in [&baseline, &batch] {
                assert!(
                    !doc["placements"].as_array().unwrap().iter().any(|p| p["pod"] == pod),
                    "{case}"
                );
            }
            continue;
        }
        let want = reason.map(|r| format!("0/3 nodes are available: {r}{SUFFIX}"));
        assert_eq!(failure(&baseline, pod), want.as_deref(), "baseline: {case}");
        assert_eq!(failure(&batch, pod), want.as_deref(), "plan: {case}");
    }
    for doc in [&baseline, &batch] {
        assert_eq!(doc["summary"]["placed"], 5);
        // Nothing is evicted for a pod no node can take.
        assert_eq!(doc["evictions"].as_array().map_or(0, Vec::len), 0);
    }
}

#[test]
fn explain_shows_the_pre_filter_rejection_of_a_pod_without_its_claim() {
    let out =
        kplace(&["explain", "fixtures/volumes", "--pod", "data/orphan-0", "--backend", "cpu"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("persistentvolumeclaim \"data-missing\" not found"), "{text}");
}

#[test]
fn a_snapshot_without_claims_warns_why_the_pods_that_use_them_fail() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/volumes");
    for f in ["nodes.yaml", "pods.yaml"] {
        std::fs::copy(root.join(f), dir.path().join(f)).unwrap();
    }
    let path = dir.path().to_str().unwrap();
    let out = kplace(&["baseline", path, "--backend", "cpu", "-o", "json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("use PersistentVolumeClaims but the snapshot holds none"), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        failure(&doc, "data/db-1"),
        Some("0/3 nodes are available: persistentvolumeclaim \"data-db-1\" not found. not found")
    );
    // With the claims, no such warning.
    let out = kplace(&["baseline", "fixtures/volumes", "--backend", "cpu", "-o", "json"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("the snapshot holds none"));
}

#[test]
fn kplace_snapshot_keeps_the_claims_so_the_dump_plans_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("dump.yaml");
    let out = kplace(&["snapshot", "fixtures/volumes", "-o", dump.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&dump).unwrap();
    assert_eq!(text.matches("kind: PersistentVolumeClaim").count(), 8, "{text}");
    let a = plan("baseline", "fixtures/volumes");
    let b = plan("baseline", dump.to_str().unwrap());
    assert_eq!(a["placements"], b["placements"]);
    assert_eq!(a["unschedulable"], b["unschedulable"]);
}
