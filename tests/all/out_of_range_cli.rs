//! Objects outside the range of the matrices' integer encoding degrade instead of failing, on
//! every command that encodes (issue: a node of 41 TiB of memory, of 42,950 CPUs or of
//! 42,949,673 pods, or a pod with `maxSkew: 2147483647, whenUnsatisfiable: ScheduleAnyway`,
//! made `plan` exit 1): `plan` places every pod and names what it degraded in
//! `summary.degraded` (the maxSkew pod's spread score is the solver's, so it needs no exact
//! path); `baseline`, `compare` and `explain` succeed on the same snapshots.

use std::path::Path;
use std::process::{Command, Output};

use kplace::plan::Plan;

fn kplace(args: &[&str], runtime_dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kplace"))
        .args(args)
        .env("RUST_LOG", "error")
        .env("XDG_RUNTIME_DIR", runtime_dir)
        .output()
        .expect("kplace runs")
}

const PODS: &str = r#"apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: web-0, namespace: d, uid: u0, labels: {app: web}}
  spec:
    containers: [{name: c, image: x, resources: {requests: {cpu: 100m, memory: 100Mi}}}]
  status: {phase: Pending}
- apiVersion: v1
  kind: Pod
  metadata: {name: skewed, namespace: d, uid: u1, labels: {app: web}}
  spec:
    topologySpreadConstraints:
    - {maxSkew: 2147483647, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: web}}}
    containers: [{name: c, image: x, resources: {requests: {cpu: 100m, memory: 100Mi}}}]
  status: {phase: Pending}
"#;

/// A snapshot of a small node and a node `big` with these allocatable amounts, and [`PODS`].
fn snapshot(dir: &Path, big: &str) {
    let nodes = format!(
        "apiVersion: v1\nkind: List\nitems:\n\
         - apiVersion: v1\n  kind: Node\n  metadata: {{name: n1, labels: {{kubernetes.io/hostname: n1, zone: a}}}}\n  \
           status: {{allocatable: {{cpu: \"4\", memory: 16Gi, pods: \"110\"}}}}\n\
         - apiVersion: v1\n  kind: Node\n  metadata: {{name: big, labels: {{kubernetes.io/hostname: big, zone: b}}}}\n  \
           status: {{allocatable: {big}}}\n"
    );
    std::fs::write(dir.join("nodes.yaml"), nodes).expect("written");
    std::fs::write(dir.join("pods.yaml"), PODS).expect("written");
}

#[test]
fn plan_and_the_other_commands_degrade_on_objects_outside_the_encoded_range() {
    let runtime = tempfile::tempdir().expect("temp dir");
    // (name, the big node's allocatable, the resource widened and its unit)
    let cases = [
        ("41 TiB of memory", r#"{cpu: "4", memory: 41Ti, pods: "110"}"#, "memory", "2 MiB"),
        ("42,950 CPUs", r#"{cpu: "42950", memory: 16Gi, pods: "110"}"#, "cpu", "2 millicores"),
        ("42,949,673 pods", r#"{cpu: "4", memory: 16Gi, pods: "42949673"}"#, "pods", "2 units"),
    ];
    for (name, big, resource, unit) in cases {
        let dir = tempfile::tempdir().expect("temp dir");
        snapshot(dir.path(), big);
        let snap = dir.path().to_str().expect("utf-8");
        let out = kplace(&["plan", snap, "-o", "json", "--backend", "cpu"], runtime.path());
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let plan: Plan = serde_json::from_slice(&out.stdout).expect("one JSON plan");
        assert_eq!(plan.placements.len(), 2, "{name}: both pods placed");
        let d = &plan.summary.degraded;
        assert_eq!(d.wider_units.len(), 1, "{name}: {d:?}");
        let w = &d.wider_units[0];
        assert_eq!(
            (w.resource.as_str(), w.unit.as_str(), w.objects.clone()),
            (resource, unit, vec!["node/big".to_string()]),
            "{name}"
        );
        // The huge `ScheduleAnyway` maxSkew is no reason for the exact path: the matrix of a
        // class the solve places leaves PodTopologySpread's score to the solver's soft terms,
        // which count pods and take no maxSkew.
        let exact: Vec<&str> =
            d.exact_path.iter().flat_map(|e| e.pods.iter().map(String::as_str)).collect();
        assert!(exact.is_empty(), "{name}: nothing goes the exact path: {exact:?}");

        for args in [
            vec!["baseline", snap, "--backend", "cpu"],
            vec!["compare", snap, "--backend", "cpu"],
            vec!["explain", snap, "--pod", "d/skewed", "--backend", "cpu"],
            vec!["explain", snap, "--pod", "d/web-0", "--backend", "cpu"],
        ] {
            let out = kplace(&args, runtime.path());
            assert!(
                out.status.success(),
                "{name}: {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}
