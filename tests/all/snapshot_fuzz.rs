//! The loader and the model builder never panic: random text, and valid manifests truncated,
//! re-typed, given huge numbers or deep nesting, end in `Ok` or a clean error.

use std::path::Path;

use kplace::snapshot::{self, BuildOptions, Snapshot};
use proptest::prelude::*;

/// A small valid snapshot: a node and a pod exercising most converted fields.
const VALID: &str = r#"apiVersion: v1
kind: Node
metadata:
  name: n1
  labels: {zone: a, kubernetes.io/hostname: n1}
spec:
  taints: [{key: gpu, value: "true", effect: NoSchedule}]
status:
  allocatable: {cpu: 3900m, memory: 15Gi, pods: "110", nvidia.com/gpu: "1"}
  capacity: {cpu: "4", memory: 16Gi, pods: "110"}
  images: [{names: [nginx:1.25], sizeBytes: 100000000}]
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: web-1
    namespace: shop
    labels: {app: web, pod-template-hash: abc}
    ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-abc, uid: u1, controller: true}]
  spec:
    priorityClassName: high
    nodeName: n1
    containers:
    - name: web
      image: nginx:1.25
      ports: [{containerPort: 80, hostPort: 8080}]
      resources:
        requests: {cpu: 500m, memory: 1.5Gi}
        limits: {cpu: "1", memory: 2Gi}
    initContainers:
    - {name: side, image: envoy, restartPolicy: Always, resources: {requests: {cpu: 100m}}}
    tolerations: [{key: gpu, operator: Exists, effect: NoSchedule}]
    affinity:
      podAntiAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
        - topologyKey: kubernetes.io/hostname
          labelSelector: {matchLabels: {app: web}}
          matchLabelKeys: [pod-template-hash]
      nodeAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions: [{key: zone, operator: In, values: [a]}]
    topologySpreadConstraints:
    - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata: {name: web-2, namespace: shop, labels: {app: web}}
  spec:
    containers: [{name: web, image: nginx, resources: {requests: {cpu: "0.25", memory: 200M}}}]
- apiVersion: policy/v1
  kind: PodDisruptionBudget
  metadata: {name: web, namespace: shop}
  spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}
"#;

/// Values that break types, grammars and integer ranges.
const NASTY: &[&str] = &[
    "-1",
    "-100m",
    "1e999999",
    "1e2147483647",
    "99999999999999999999999999999999999999999",
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551616",
    "1.5.3Gi",
    "16Ei",
    "0x1F",
    "[]",
    "{}",
    "null",
    "~",
    "true",
    "\"\"",
    ".inf",
    "-.inf",
    ".nan",
    "!!binary aGVsbG8=",
    "*missing",
    "&a [*a]",
    "'😀'",
    "\"\\u0000\"",
    "In",
    "Exists",
    "Gt",
    "NoSchedule",
    "2147483648",
];

fn run(yaml: &str) {
    let mut snap = Snapshot::new();
    if snap.add_yaml(Path::new("fuzz.yaml"), yaml).is_ok() {
        let _ = snapshot::build(&snap, &BuildOptions::default());
    }
}

fn run_json(json: &str) {
    let mut snap = Snapshot::new();
    if snap.add_json(Path::new("fuzz.json"), json).is_ok() {
        let _ = snapshot::build(&snap, &BuildOptions::default());
    }
}

#[test]
fn the_unmutated_fuzz_seed_loads_and_builds() {
    let mut snap = Snapshot::new();
    snap.add_yaml(Path::new("seed.yaml"), VALID).unwrap();
    let cluster = snapshot::build(&snap, &BuildOptions::default()).unwrap();
    assert_eq!(cluster.state.nodes[0].pods.len(), 1);
    assert_eq!(cluster.pending.len(), 1);
    assert_eq!(cluster.state.pdbs.len(), 1);
}

fn scalar_lines() -> Vec<usize> {
    VALID.lines().enumerate().filter(|(_, l)| l.contains(": ")).map(|(i, _)| i).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics(text in "(?s).{0,400}") {
        run(&text);
        run_json(&text);
    }

    #[test]
    fn random_yaml_shaped_text_never_panics(text in "([a-zA-Z:{}\\[\\],\\- \n'\"#&*!|>0-9.]){0,300}") {
        run(&text);
    }

    #[test]
    fn truncated_manifests_never_panic(cut in 0usize..VALID.len()) {
        let cut = (0..=cut).rev().find(|i| VALID.is_char_boundary(*i)).unwrap_or(0);
        run(&VALID[..cut]);
    }

    #[test]
    fn manifests_with_a_value_replaced_never_panic(
        line in 0usize..1000,
        nasty in 0usize..NASTY.len(),
    ) {
        let lines: Vec<&str> = VALID.lines().collect();
        let candidates = scalar_lines();
        let target = candidates[line % candidates.len()];
        let mut out = String::new();
        for (i, l) in lines.iter().enumerate() {
            if i == target {
                let at = l.find(": ").unwrap_or(0);
                out.push_str(&l[..at + 2]);
                out.push_str(NASTY[nasty]);
            } else {
                out.push_str(l);
            }
            out.push('\n');
        }
        run(&out);
    }

    #[test]
    fn manifests_with_a_line_dropped_or_doubled_never_panic(line in 0usize..1000, double in any::<bool>()) {
        let lines: Vec<&str> = VALID.lines().collect();
        let target = line % lines.len();
        let mut out = String::new();
        for (i, l) in lines.iter().enumerate() {
            if i != target || double {
                out.push_str(l);
                out.push('\n');
            }
            if i == target && double {
                out.push_str(l);
                out.push('\n');
            }
        }
        run(&out);
    }

    #[test]
    fn deep_nesting_never_panics(depth in 1usize..20_000, flow in any::<bool>()) {
        let nested = if flow {
            format!("{}{}", "[".repeat(depth), "]".repeat(depth))
        } else {
            format!("{}{}", "{a: ".repeat(depth), "}".repeat(depth))
        };
        run(&format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec: {nested}\n"));
        run(&format!("apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  labels: {nested}\n"));
        let (open, close) = ("[".repeat(depth), "]".repeat(depth));
        run_json(&format!(
            "{{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{{\"name\":\"p\"}},\"spec\":{open}{close}}}"
        ));
    }

    #[test]
    fn huge_quantities_never_panic(digits in "[0-9]{1,60}", frac in "[0-9]{0,30}", suffix in "(|m|k|Ki|Mi|Gi|Ti|Pi|Ei|E|e[0-9]{1,12}|e-[0-9]{1,12})") {
        let q = if frac.is_empty() { format!("{digits}{suffix}") } else { format!("{digits}.{frac}{suffix}") };
        let yaml = format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: n}}\nstatus: {{allocatable: {{cpu: '{q}', memory: '{q}', example.com/x: '{q}'}}}}\n---\n\
             apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  overhead: {{cpu: '{q}'}}\n  containers:\n  - {{name: a, resources: {{requests: {{cpu: '{q}', memory: '{q}'}}}}}}\n  - {{name: b, resources: {{requests: {{cpu: '{q}', memory: '{q}'}}}}}}\n"
        );
        run(&yaml);
    }

    #[test]
    fn json_with_a_value_replaced_never_panics(nasty in 0usize..NASTY.len(), field in 0usize..4) {
        let value = serde_json::to_string(NASTY[nasty]).unwrap();
        let fields = [
            format!("\"spec\":{{\"containers\":[{{\"name\":\"c\",\"resources\":{{\"requests\":{{\"cpu\":{value}}}}}}}]}}"),
            format!("\"spec\":{{\"containers\":[{{\"name\":\"c\",\"ports\":[{{\"containerPort\":{}}}]}}]}}", NASTY[nasty]),
            format!("\"spec\":{{\"priority\":{},\"containers\":[]}}", NASTY[nasty]),
            format!("\"spec\":{{\"containers\":[],\"tolerations\":[{{\"operator\":{value}}}]}}"),
        ];
        run_json(&format!("{{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{{\"name\":\"p\"}},{}}}", fields[field]));
    }
}
