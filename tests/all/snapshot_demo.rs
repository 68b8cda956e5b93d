//! The demo fixture (`fixtures/demo`) loads and builds, and kplace's own accounting reproduces
//! every total in `fixtures/demo-expected.json` (computed independently by the generator).

use std::collections::BTreeMap;
use std::path::PathBuf;

use kplace::model::{Pod, PodPhase};
use kplace::resources::Resource;
use kplace::snapshot::{self, BuildOptions, Cluster};

fn demo_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo")
}

fn demo() -> (snapshot::Snapshot, Cluster) {
    let snap = snapshot::load(&[demo_dir()]).expect("the demo fixture loads");
    let cluster =
        snapshot::build(&snap, &BuildOptions::default()).expect("the demo fixture builds");
    (snap, cluster)
}

fn expected() -> serde_json::Value {
    let text = std::fs::read_to_string(demo_dir().with_file_name("demo-expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn sum<'a>(rs: impl IntoIterator<Item = &'a Resource>) -> Resource {
    let mut total = Resource::default();
    for r in rs {
        total.add(r);
    }
    total
}

#[test]
fn demo_fixture_reads_every_object_and_nothing_else() {
    let (snap, cluster) = demo();
    assert_eq!(snap.nodes.len(), 24);
    assert_eq!(snap.pods.len(), 300);
    assert_eq!(snap.namespaces.len(), 10);
    assert_eq!(snap.priority_classes.len(), 5);
    assert_eq!(snap.pdbs.len(), 4);
    assert!(snap.skipped.is_empty(), "skipped kinds: {:?}", snap.skipped);
    assert_eq!(cluster.state.pdbs.len(), 4);
    // Only pending pods with PersistentVolumeClaims warn (generate.py beside the manifests is
    // not a manifest and is passed over silently).
    for w in &cluster.warnings {
        assert!(w.message.contains("PersistentVolumeClaims"), "unexpected warning: {w}");
    }
}

#[test]
fn demo_node_counts_match_the_generator() {
    let (_, cluster) = demo();
    let want = &expected()["nodes"];
    let nodes = &cluster.state.nodes;
    assert_eq!(nodes.len() as u64, want["total"].as_u64().unwrap());
    assert_eq!(
        nodes.iter().filter(|n| n.unschedulable).count() as u64,
        want["cordoned"].as_u64().unwrap()
    );
    let count_by = |label: &str| {
        let mut m: BTreeMap<String, u64> = BTreeMap::new();
        for n in nodes {
            *m.entry(n.labels[label].clone()).or_default() += 1;
        }
        serde_json::to_value(m).unwrap()
    };
    assert_eq!(count_by("topology.kubernetes.io/zone"), want["per_zone"]);
    assert_eq!(count_by("node.kubernetes.io/instance-type"), want["per_instance_type"]);
    // The nodes are sorted by name, and the cordoned one carries its taint.
    assert!(nodes.windows(2).all(|w| w[0].name < w[1].name));
    let cordoned = nodes.iter().find(|n| n.unschedulable).unwrap();
    assert_eq!(cordoned.name, "ip-10-0-73-8.eu-west-1.compute.internal");
    assert!(cordoned.taints.iter().any(|t| t.key == "node.kubernetes.io/unschedulable"));
}

#[test]
fn demo_pod_counts_match_the_generator() {
    let (_, cluster) = demo();
    let want = &expected()["pods"];
    let bound: usize = cluster.state.nodes.iter().map(|n| n.pods.len()).sum();
    assert_eq!(bound as u64, want["bound_non_terminal"].as_u64().unwrap());
    assert_eq!(cluster.ignored.terminal as u64, want["terminal"].as_u64().unwrap());
    assert_eq!(cluster.pending.len() as u64, want["pending_served"].as_u64().unwrap());
    assert_eq!(
        cluster.ignored.other_scheduler as u64,
        want["ignored_other_scheduler"].as_u64().unwrap()
    );
    let total = bound
        + cluster.pending.len()
        + cluster.ignored.terminal
        + cluster.ignored.other_scheduler
        + cluster.ignored.terminating
        + cluster.ignored.gated
        + cluster.ignored.unknown_node;
    assert_eq!(total as u64, want["total"].as_u64().unwrap());
    let mut by_scheduler: BTreeMap<String, u64> = BTreeMap::new();
    for p in &cluster.pending {
        *by_scheduler.entry(p.scheduler_name.clone()).or_default() += 1;
    }
    assert_eq!(serde_json::to_value(by_scheduler).unwrap(), want["pending_by_scheduler"]);
    // Bound pods are running and on the node they name; pending ones are not bound.
    for n in &cluster.state.nodes {
        for p in &n.pods {
            assert_eq!(p.node_name.as_deref(), Some(n.name.as_str()));
            assert!(!p.is_terminal());
        }
    }
    assert!(cluster.pending.iter().all(|p| p.node_name.is_none() && p.phase == PodPhase::Pending));
}

#[test]
fn demo_resource_totals_match_the_generator() {
    let (_, cluster) = demo();
    let want = &expected()["resources"];
    let nodes = &cluster.state.nodes;
    let allocatable = sum(nodes.iter().map(|n| &n.allocatable));
    let bound = sum(nodes.iter().map(|n| &n.requested));
    let pending = sum(cluster.pending.iter().map(|p| &p.requests));
    let bound_pods: usize = nodes.iter().map(|n| n.pods.len()).sum();
    for name in ["cpu", "memory", "ephemeral-storage", "nvidia.com/gpu"] {
        let w = &want[name];
        assert_eq!(allocatable.get(name), w["allocatable"].as_i64().unwrap(), "{name} allocatable");
        assert_eq!(bound.get(name), w["bound_requests"].as_i64().unwrap(), "{name} bound requests");
        assert_eq!(
            pending.get(name),
            w["pending_requests"].as_i64().unwrap(),
            "{name} pending requests"
        );
    }
    let pods = &want["pods"];
    assert_eq!(allocatable.allowed_pod_number, pods["allocatable"].as_i64().unwrap());
    assert_eq!(bound_pods as i64, pods["bound_requests"].as_i64().unwrap());
    assert_eq!(cluster.pending.len() as i64, pods["pending_requests"].as_i64().unwrap());
    // Each node's requested total is the sum of its pods' requests.
    for n in nodes {
        assert_eq!(n.requested, sum(n.pods.iter().map(|p| &p.requests)), "{}", n.name);
    }
}

#[test]
fn demo_pending_pods_by_priority_match_the_generator() {
    let (_, cluster) = demo();
    let mut by_priority: BTreeMap<String, u64> = BTreeMap::new();
    for p in &cluster.pending {
        *by_priority.entry(p.priority.to_string()).or_default() += 1;
    }
    assert_eq!(serde_json::to_value(by_priority).unwrap(), expected()["pending_by_priority"]);
}

fn pending<'a>(cluster: &'a Cluster, prefix: &str) -> Vec<&'a Pod> {
    cluster.pending.iter().filter(|p| p.name.starts_with(prefix)).collect()
}

#[test]
fn demo_priorities_resolve_through_classes_and_the_global_default() {
    let (_, cluster) = demo();
    let cases: &[(&str, i32)] = &[
        ("bert-finetune-0-", 100_000),
        ("bert-finetune-1-", 100_000),
        ("video-transcode-", 100),
        ("arm-benchmark-", 1000),
    ];
    for (prefix, priority) in cases {
        let pods = pending(&cluster, prefix);
        assert!(!pods.is_empty(), "{prefix}");
        for p in pods {
            assert_eq!(p.priority, *priority, "{}", p.key());
        }
    }
    for p in pending(&cluster, "video-transcode-") {
        assert_eq!(p.preemption_policy, kplace::model::PreemptionPolicy::Never, "{}", p.key());
    }
}

#[test]
fn demo_effective_requests_follow_the_sidecar_rules() {
    let (_, cluster) = demo();
    let all: Vec<&Pod> = cluster
        .state
        .nodes
        .iter()
        .flat_map(|n| n.pods.iter().map(|p| p.as_ref()))
        .chain(cluster.pending.iter())
        .collect();
    let find = |prefix: &str| {
        all.iter()
            .find(|p| p.name.starts_with(prefix))
            .copied()
            .unwrap_or_else(|| panic!("{prefix}"))
    };
    const MI: i64 = 1024 * 1024;
    const GI: i64 = 1024 * MI;
    let cases: &[(&str, &str, i64, i64)] = &[
        // (pod name prefix, why, millicores, memory bytes)
        (
            "catalog-",
            "init warm-cache (2/3Gi) dominates the app container (500m/1Gi)",
            2000,
            3 * GI,
        ),
        (
            "checkout-",
            "regular init db-migrate (1500m/1Gi) runs before the envoy sidecar exists",
            1500,
            GI,
        ),
        (
            "postgres-0",
            "init restore (3/6Gi) runs beside the fluent-bit sidecar declared before it",
            3100,
            8 * GI + 128 * MI,
        ),
        ("payments-", "overhead 250m/120Mi is added", 1250, GI + 120 * MI),
        ("airflow-worker-", "the log-forwarder sidecar adds to the worker", 1100, 2 * GI + 64 * MI),
        ("kafka-0", "cpu: \"1.5\" is 1500 millicores", 1500, 6 * GI),
    ];
    for (prefix, why, cpu, memory) in cases {
        let p = find(prefix);
        assert_eq!((p.requests.milli_cpu, p.requests.memory), (*cpu, *memory), "{prefix}: {why}");
    }
    assert_eq!(find("kafka-0").requests.ephemeral_storage, 10 * GI);
    // aws-node requests 25m in both containers and no memory: for scoring, each container
    // counts 200Mi of memory, and the init container's 25m/200Mi does not add to the app's.
    let aws = find("aws-node-");
    assert_eq!((aws.requests.milli_cpu, aws.requests.memory), (25, 0));
    assert_eq!((aws.non_zero_requests.milli_cpu, aws.non_zero_requests.memory), (25, 200 * MI));
    assert!(
        aws.host_ports
            .iter()
            .any(|h| h.port == 61678 && h.host_ip == "0.0.0.0" && h.protocol == "TCP")
    );
}
