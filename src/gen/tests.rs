//! Whole-generator tests: every workload's snapshot loads and builds without errors or
//! warnings, has the asked-for counts, binds pods only where they fit, keeps each workload's
//! own promises, and is a pure function of the seed.

use std::collections::BTreeMap;

use super::*;
use crate::model::{Node, Pod};
use crate::snapshot::{BuildOptions, Cluster, Snapshot, build, load};

/// Generates `params` into a temporary file and reads it back with the real loader.
fn generate_and_load(params: &GenParams) -> (GenSummary, Snapshot, Cluster) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cluster.yaml");
    let file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let summary = write_yaml(params, file).unwrap();
    let snapshot = load(std::slice::from_ref(&path)).unwrap();
    let cluster = build(&snapshot, &BuildOptions::default()).unwrap();
    (summary, snapshot, cluster)
}

fn bytes(params: &GenParams) -> Vec<u8> {
    let mut out = Vec::new();
    write_yaml(params, &mut out).unwrap();
    out
}

fn params(workload: Workload, nodes: usize, pods: usize, init_pods: usize) -> GenParams {
    GenParams { workload, nodes, pods, init_pods, seed: 42 }
}

/// The small instance of each workload: (workload, init pods, whether every init pod must
/// find a node). 20 nodes, 60 pods.
const SMALL: [(Workload, usize, bool); 12] = [
    (Workload::SchedulingBasic, 20, true),
    (Workload::SchedulingPodAntiAffinity, 10, true),
    (Workload::SchedulingPodAffinity, 20, true),
    (Workload::SchedulingNodeAffinity, 20, true),
    (Workload::TopologySpreading, 30, true),
    (Workload::PreferredTopologySpreading, 30, true),
    (Workload::PreemptionBasic, 50, true),
    (Workload::FragmentationMix, 40, true),
    // Gangs are bound whole or not at all, so some may stay pending.
    (Workload::MlBatch, 30, false),
    (Workload::MixedPriority, 40, true),
    (Workload::Deployments, 20, true),
    (Workload::Heterogeneous, 20, true),
];

fn bound_pods(cluster: &Cluster) -> impl Iterator<Item = (&Node, &Pod)> {
    cluster.state.nodes.iter().flat_map(|n| n.pods.iter().map(move |p| (n, p.as_ref())))
}

/// Every node's bound pods fit its allocatable resources and pod count, and tolerate its
/// NoSchedule taints.
fn assert_bound_pods_fit(name: &str, cluster: &Cluster) {
    for node in &cluster.state.nodes {
        let (req, alloc) = (&node.requested, &node.allocatable);
        assert!(req.milli_cpu <= alloc.milli_cpu, "{name}: cpu on {}", node.name);
        assert!(req.memory <= alloc.memory, "{name}: memory on {}", node.name);
        assert!(req.ephemeral_storage <= alloc.ephemeral_storage, "{name}: {}", node.name);
        for (resource, amount) in &req.scalar {
            assert!(*amount <= alloc.get(resource), "{name}: {resource} on {}", node.name);
        }
        assert!(
            node.pods.len() as i64 <= alloc.allowed_pod_number,
            "{name}: pods on {}",
            node.name
        );
    }
}

#[test]
fn every_workload_loads_with_the_asked_for_counts_and_bound_pods_that_fit() {
    for (workload, init, all_fit) in SMALL {
        let p = params(workload, 20, 60, init);
        let (summary, snapshot, cluster) = generate_and_load(&p);
        let name = workload.name();
        assert!(cluster.warnings.is_empty(), "{name}: {:?}", cluster.warnings);
        assert_eq!(cluster.state.nodes.len(), 20, "{name}: nodes");
        assert_eq!(snapshot.pods.len(), 60, "{name}: pods");
        assert_eq!(cluster.ignored, Default::default(), "{name}: no pod is left out");
        let bound = bound_pods(&cluster).count();
        assert_eq!(bound, summary.bound_pods, "{name}: bound pods match the summary");
        assert_eq!(cluster.pending.len(), summary.pending_pods, "{name}: pending pods");
        assert_eq!(bound + cluster.pending.len(), 60, "{name}: every pod is bound or pending");
        assert_eq!(bound, init - summary.unplaced_init_pods, "{name}: the init batch is bound");
        if all_fit {
            assert_eq!(summary.unplaced_init_pods, 0, "{name}: every init pod found a node");
        } else {
            assert!(bound > 0, "{name}: some init pods are bound");
        }
        assert_bound_pods_fit(name, &cluster);
        // A bound pod tolerates its node's taints.
        for (node, pod) in bound_pods(&cluster) {
            for taint in &node.taints {
                assert!(
                    pod.tolerations.iter().any(|t| t.key == taint.key || t.key.is_empty()),
                    "{name}: {} on tainted {}",
                    pod.name,
                    node.name
                );
            }
        }
    }
}

#[test]
fn a_json_list_holds_the_same_objects_as_the_yaml_stream() {
    let dir = tempfile::tempdir().unwrap();
    for (workload, init, _) in SMALL {
        let p = params(workload, 20, 60, init);
        let read = |name: &str, format: Format| {
            let path = dir.path().join(name);
            let file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
            let summary = write_with_progress(&p, file, format, &Progress::hidden()).unwrap();
            assert_eq!(summary.bytes, std::fs::metadata(&path).unwrap().len(), "{name}: bytes");
            (summary, load(std::slice::from_ref(&path)).unwrap())
        };
        let (yaml_summary, yaml) = read("cluster.yaml", Format::for_path("c.yaml".as_ref()));
        let (json_summary, json) = read("cluster.json", Format::for_path("c.JSON".as_ref()));
        let name = workload.name();
        assert_eq!(yaml_summary.nodes, json_summary.nodes, "{name}");
        assert_eq!(yaml_summary.pending_pods, json_summary.pending_pods, "{name}");
        fn objects<T: Clone>(v: &[crate::snapshot::Sourced<T>]) -> Vec<T> {
            v.iter().map(|s| s.object.clone()).collect()
        }
        assert_eq!(objects(&yaml.nodes), objects(&json.nodes), "{name}: nodes");
        assert_eq!(objects(&yaml.pods), objects(&json.pods), "{name}: pods");
        assert_eq!(objects(&yaml.pdbs), objects(&json.pdbs), "{name}: budgets");
        assert_eq!(objects(&yaml.namespaces), objects(&json.namespaces), "{name}: namespaces");
        assert_eq!(
            objects(&yaml.priority_classes),
            objects(&json.priority_classes),
            "{name}: priority classes"
        );
        assert_eq!(objects(&yaml.services), objects(&json.services), "{name}: services");
        assert_eq!(yaml.pods.len(), 60, "{name}: the objects are there");
    }
}

#[test]
fn an_init_batch_larger_than_the_cluster_binds_only_what_fits() {
    for workload in Workload::ALL {
        let (summary, _, cluster) = generate_and_load(&params(workload, 5, 500, 500));
        let name = workload.name();
        assert!(summary.unplaced_init_pods > 0, "{name}: the cluster overflows");
        assert_eq!(summary.bound_pods + summary.unplaced_init_pods, 500, "{name}");
        assert_bound_pods_fit(name, &cluster);
    }
}

#[test]
fn the_same_seed_gives_the_same_bytes_and_another_seed_other_bytes() {
    for workload in Workload::ALL {
        let a = GenParams { seed: 7, ..params(workload, 12, 40, 15) };
        let b = GenParams { seed: 8, ..a };
        let first = bytes(&a);
        assert_eq!(first, bytes(&a), "{workload}: same seed, same bytes");
        assert_ne!(first, bytes(&b), "{workload}: another seed, other bytes");
    }
}

#[test]
fn every_workload_has_a_distinct_name_that_parses_back() {
    let mut names: Vec<&str> = Workload::ALL.iter().map(|w| w.name()).collect();
    for w in Workload::ALL {
        assert_eq!(w.name().parse::<Workload>().unwrap(), w);
        let info = w.info();
        assert!(!info.mirrors.is_empty() && !info.nodes.is_empty() && !info.pods.is_empty());
    }
    assert_eq!("scheduling-basic".parse::<Workload>().unwrap(), Workload::SchedulingBasic);
    assert_eq!("MLBATCH".parse::<Workload>().unwrap(), Workload::MlBatch);
    assert!(matches!("nope".parse::<Workload>(), Err(GenError::UnknownWorkload { .. })));
    names.sort();
    names.dedup();
    assert_eq!(names.len(), Workload::ALL.len());
}

#[test]
fn bad_parameters_are_errors() {
    let cases: &[(&str, GenParams)] = &[
        ("more init pods than pods", params(Workload::SchedulingBasic, 1, 1, 2)),
        ("more nodes than kplace can name", params(Workload::SchedulingBasic, MAX_NODES + 1, 0, 0)),
    ];
    for (name, p) in cases {
        assert!(generate(p).is_err(), "{name}");
    }
}

#[test]
fn empty_clusters_and_pod_only_snapshots_generate() {
    let s = write_yaml(&params(Workload::MlBatch, 0, 5, 3), std::io::sink()).unwrap();
    assert_eq!((s.nodes, s.bound_pods, s.pending_pods, s.unplaced_init_pods), (0, 0, 5, 3));
    let s = write_yaml(&params(Workload::SchedulingBasic, 3, 0, 0), std::io::sink()).unwrap();
    assert_eq!((s.nodes, s.bound_pods, s.pending_pods), (3, 0, 0));
}

#[test]
fn the_generator_holds_the_same_memory_whether_it_has_written_ten_pods_or_twenty_thousand() {
    let p = params(Workload::MixedPriority, 50, 20_000, 1_000);
    let mut g = generate(&p).unwrap();
    let mut sizes = Vec::new();
    let mut pods = 0usize;
    while let Some(object) = g.next() {
        if object["kind"] == "Pod" {
            pods += 1;
            if pods == 10 || pods.is_multiple_of(5_000) {
                sizes.push(g.retained_bytes());
            }
        }
    }
    assert_eq!(pods, 20_000);
    assert_eq!(g.summary().bound_pods + g.summary().pending_pods, 20_000);
    assert_eq!(sizes.len(), 5);
    assert!(sizes.windows(2).all(|w| w[0] == w[1]), "retained bytes changed: {sizes:?}");
    assert!(sizes[0] < 50 * 64 + 64 * 1024, "O(nodes) state: {sizes:?}");
}

fn labelled<'a>(pods: impl Iterator<Item = &'a Pod>, key: &str, value: &str) -> usize {
    pods.filter(|p| p.labels.get(key).is_some_and(|v| v == value)).count()
}

#[test]
fn anti_affinity_pods_are_bound_at_most_one_per_node() {
    let p = params(Workload::SchedulingPodAntiAffinity, 5, 12, 8);
    let (summary, _, cluster) = generate_and_load(&p);
    // Five nodes hold five of the eight init pods; three stay pending.
    assert_eq!((summary.bound_pods, summary.unplaced_init_pods), (5, 3));
    for node in &cluster.state.nodes {
        assert_eq!(labelled(node.pods.iter().map(|p| p.as_ref()), "color", "green"), 1);
    }
    let pod = &cluster.pending[0];
    assert_eq!(pod.pod_anti_affinity.required[0].topology_key, "kubernetes.io/hostname");
    assert_eq!(pod.pod_anti_affinity.required[0].namespaces, ["sched-1", "sched-0"]);
}

#[test]
fn scheduler_perf_templates_carry_their_constraints() {
    use crate::model::UnsatisfiableAction::{DoNotSchedule, ScheduleAnyway};
    for (workload, action) in [
        (Workload::TopologySpreading, DoNotSchedule),
        (Workload::PreferredTopologySpreading, ScheduleAnyway),
    ] {
        let (_, _, cluster) = generate_and_load(&params(workload, 7, 10, 4));
        let mut zones: BTreeMap<&str, usize> = BTreeMap::new();
        for n in &cluster.state.nodes {
            *zones.entry(n.labels["topology.kubernetes.io/zone"].as_str()).or_default() += 1;
        }
        assert_eq!(zones, BTreeMap::from([("moon-1", 3), ("moon-2", 2), ("moon-3", 2)]));
        for pod in &cluster.pending {
            let c = &pod.topology_spread_constraints[0];
            assert_eq!(
                (c.max_skew, c.topology_key.as_str(), c.when_unsatisfiable),
                (5, "topology.kubernetes.io/zone", action)
            );
            assert_eq!(pod.namespace, "namespace-2");
        }
        for (_, pod) in bound_pods(&cluster) {
            assert!(pod.topology_spread_constraints.is_empty(), "init pods are pod-default");
            assert_eq!(pod.namespace, "namespace-1");
        }
    }

    // Four 900m pods fill a 4-CPU node; the 13th to 15th init pods fit nowhere.
    let (summary, _, cluster) = generate_and_load(&params(Workload::PreemptionBasic, 3, 20, 15));
    assert_eq!((summary.bound_pods, summary.unplaced_init_pods), (12, 3));
    for (_, pod) in bound_pods(&cluster) {
        assert_eq!((pod.priority, pod.requests.milli_cpu), (0, 900));
    }
    for node in &cluster.state.nodes {
        assert_eq!(node.requested.milli_cpu, 3600, "four low-priority pods fill each node");
    }
    for pod in cluster.pending.iter().filter(|p| p.namespace == "namespace-2") {
        assert_eq!(
            (pod.priority, pod.requests.milli_cpu, pod.requests.memory),
            (10, 3000, 500 << 20)
        );
    }
    assert_eq!(cluster.pending.iter().filter(|p| p.namespace == "namespace-2").count(), 5);

    let (_, _, cluster) = generate_and_load(&params(Workload::SchedulingNodeAffinity, 2, 4, 2));
    assert!(cluster.state.nodes.iter().all(|n| n.labels["topology.kubernetes.io/zone"] == "zone1"));
    assert!(cluster.pending.iter().all(|p| p.node_affinity.required.is_some()));

    let (_, _, cluster) = generate_and_load(&params(Workload::SchedulingBasic, 2, 4, 2));
    let pod = &cluster.pending[0];
    assert_eq!((pod.requests.milli_cpu, pod.requests.memory), (100, 500 << 20));
    assert_eq!(cluster.state.nodes[0].allocatable.milli_cpu, 4000);
    assert_eq!(cluster.state.nodes[0].allocatable.memory, 32 << 30);
    assert_eq!(cluster.state.nodes[0].allocatable.allowed_pod_number, 110);
}

#[test]
fn gangs_are_bound_whole_or_not_at_all_and_have_a_pod_group() {
    use crate::model::GangConvention;
    let p = params(Workload::MlBatch, 40, 300, 150);
    let (summary, snapshot, cluster) = generate_and_load(&p);
    assert!(cluster.warnings.is_empty(), "{:?}", cluster.warnings);
    let gangs = &cluster.gangs.gangs;
    assert!(gangs.len() > 5);
    assert!(gangs.iter().any(|g| g.bound > 0), "some gangs are bound");
    for convention in GangConvention::ALL {
        let n = gangs.iter().filter(|g| g.key.convention == convention).count();
        assert!(n >= gangs.len() / 2 - 1, "{convention}: {n} of {} gangs", gangs.len());
    }
    for g in gangs {
        assert!(
            g.bound == 0 || g.pending.is_empty(),
            "gang {}: {} bound, {:?} pending",
            g.key,
            g.bound,
            g.pending
        );
        assert_eq!(
            g.min_member as usize,
            g.bound + g.pending.len(),
            "gang {}: every PodGroup asks for the whole gang",
            g.key
        );
    }
    // Every PodGroup written is read back, none skipped, and each names a gang of the model.
    assert_eq!(summary.other_objects.get("PodGroup"), Some(&gangs.len()));
    assert_eq!(snapshot.pod_groups.len(), gangs.len());
    assert_eq!(snapshot.skipped.get("PodGroup"), None);
    // Pending members carry their convention's key; the index points back at them.
    for (i, pod) in cluster.pending.iter().enumerate() {
        let Some(g) = cluster.gangs.gang_of(i) else {
            assert!(pod.gang.is_none(), "{}", pod.name);
            continue;
        };
        let c = g.key.convention;
        assert_eq!(
            c.group_of(&pod.labels, &pod.annotations),
            Some(g.key.name.as_str()),
            "{}",
            pod.name
        );
    }
    // GPU pods only on GPU nodes, CPU pods only on CPU nodes.
    for (node, pod) in bound_pods(&cluster) {
        let gpu_node = node.allocatable.get("nvidia.com/gpu") > 0;
        assert_eq!(pod.requests.get("nvidia.com/gpu") > 0, gpu_node, "{}", pod.name);
    }
}

#[test]
fn pod_disruption_budgets_report_the_pods_written() {
    let p = params(Workload::MixedPriority, 10, 200, 100);
    let (_, snapshot, cluster) = generate_and_load(&p);
    assert_eq!(snapshot.pdbs.len(), 5);
    assert_eq!(snapshot.priority_classes.len(), 5);
    let all: Vec<&Pod> =
        bound_pods(&cluster).map(|(_, p)| p).chain(cluster.pending.iter()).collect();
    for pdb in &snapshot.pdbs {
        let o = &pdb.object;
        let ns = o.metadata.namespace.as_deref().unwrap();
        let app = o.metadata.name.as_deref().unwrap();
        let status = o.status.as_ref().unwrap();
        let of_app = |p: &&&Pod| p.namespace == ns && p.labels.get("app").is_some_and(|a| a == app);
        let healthy = all.iter().filter(of_app).filter(|p| p.node_name.is_some()).count();
        let expected = all.iter().filter(of_app).count();
        let current = status.current_healthy.expect("currentHealthy is written");
        let desired = status.desired_healthy.expect("desiredHealthy is written");
        assert_eq!(current as usize, healthy, "{app}");
        assert_eq!(
            status.expected_pods.expect("expectedPods is written") as usize,
            expected,
            "{app}"
        );
        assert_eq!(status.disruptions_allowed, Some((current - desired).max(0)), "{app}");
    }
    let values = [1_000_000, 100_000, 1000, 100, 10];
    assert!(all.iter().all(|p| values.contains(&p.priority)));
    let high =
        |pods: &[&Pod]| pods.iter().filter(|p| p.priority >= 100_000).count() * 100 / pods.len();
    let bound: Vec<&Pod> = bound_pods(&cluster).map(|(_, p)| p).collect();
    let pending: Vec<&Pod> = cluster.pending.iter().collect();
    assert!(high(&pending) > high(&bound), "pending pods lean high-priority");
}

#[test]
fn fragmentation_mix_mixes_node_shapes_and_request_sizes() {
    let (_, _, cluster) = generate_and_load(&params(Workload::FragmentationMix, 30, 200, 120));
    let shapes: std::collections::BTreeSet<i64> = cluster
        .state
        .nodes
        .iter()
        .map(|n| n.allocatable.milli_cpu * 1_000_000 + n.allocatable.memory / (1 << 20))
        .collect();
    assert!(shapes.len() >= 4, "{shapes:?}");
    let sizes: std::collections::BTreeSet<(i64, i64)> =
        cluster.pending.iter().map(|p| (p.requests.milli_cpu, p.requests.memory)).collect();
    assert!(sizes.len() >= 6, "{sizes:?}");
}

#[test]
fn pods_are_owned_by_their_controllers_as_on_a_real_cluster() {
    // (case, workload, init pods, (apiVersion, kind) owning each pod; None: bare pods).
    type Kinds = &'static [(&'static str, &'static str)];
    let cases: &[(&str, Workload, usize, Option<Kinds>)] = &[
        (
            "fragmentation-mix pods are owned by their Deployment's ReplicaSet",
            Workload::FragmentationMix,
            40,
            Some(&[("apps/v1", "ReplicaSet")]),
        ),
        (
            "mixed-priority pods are owned by their service's ReplicaSet",
            Workload::MixedPriority,
            40,
            Some(&[("apps/v1", "ReplicaSet")]),
        ),
        (
            "ml-batch workers are owned by their job, CPU pods by ReplicaSets",
            Workload::MlBatch,
            30,
            Some(&[
                ("apps/v1", "ReplicaSet"),
                ("kubeflow.org/v1", "PyTorchJob"),
                ("batch.volcano.sh/v1alpha1", "Job"),
            ]),
        ),
        (
            "scheduler_perf pods are bare, as its createPods op makes them",
            Workload::SchedulingBasic,
            20,
            None,
        ),
    ];
    for (case, workload, init, kinds) in cases {
        let (_, snapshot, cluster) = generate_and_load(&params(*workload, 20, 60, *init));
        // The objects as written: one controller reference, blockOwnerDeletion set.
        for sourced in &snapshot.pods {
            let meta = &sourced.object.metadata;
            let refs = meta.owner_references.as_deref().unwrap_or_default();
            match kinds {
                None => assert!(refs.is_empty(), "{case}: {:?}", meta.name),
                Some(kinds) => {
                    assert_eq!(refs.len(), 1, "{case}: {:?}", meta.name);
                    let r = &refs[0];
                    assert!(
                        kinds.contains(&(r.api_version.as_str(), r.kind.as_str())),
                        "{case}: {r:?}"
                    );
                    assert_eq!(r.controller, Some(true), "{case}");
                    assert_eq!(r.block_owner_deletion, Some(true), "{case}");
                    let name = meta.name.as_deref().unwrap_or_default();
                    assert!(name.starts_with(&format!("{}-", r.name)), "{case}: {name} of {r:?}");
                }
            }
        }
        // The model reads them back: every pod of one owner names the same uid, distinct
        // owners distinct uids.
        let all: Vec<&Pod> =
            bound_pods(&cluster).map(|(_, p)| p).chain(cluster.pending.iter()).collect();
        let mut uids: BTreeMap<(String, String, String), String> = BTreeMap::new();
        for pod in &all {
            match (kinds, &pod.owner) {
                (None, owner) => assert!(owner.is_none(), "{case}: {}", pod.name),
                (Some(_), None) => panic!("{case}: {} has no owner in the model", pod.name),
                (Some(_), Some(o)) => {
                    let key = (pod.namespace.clone(), o.kind.clone(), o.name.clone());
                    let uid = uids.entry(key).or_insert_with(|| o.uid.clone());
                    assert_eq!(uid, &o.uid, "{case}: {}", pod.name);
                }
            }
        }
        let distinct: std::collections::BTreeSet<&String> = uids.values().collect();
        assert_eq!(distinct.len(), uids.len(), "{case}: one uid per owner");
        if kinds.is_some() {
            let movable = bound_pods(&cluster)
                .filter(|(_, p)| crate::rebalance::evictor::filter(p, &Default::default()).is_ok())
                .count();
            assert!(movable > 0, "{case}: descheduler's evictor may evict bound pods");
        }
    }
}

#[test]
fn deployments_write_a_replicaset_and_a_service_per_deployment_owning_all_its_pods() {
    for (pods, init) in [(300, 60), (3700, 0)] {
        let objects: Vec<serde_json::Value> =
            generate(&params(Workload::Deployments, 30, pods, init)).expect("valid").collect();
        let of = |kind: &'static str| objects.iter().filter(move |o| o["kind"] == kind);
        let sets: std::collections::BTreeMap<String, u64> = of("ReplicaSet")
            .map(|o| {
                let key = format!(
                    "{}/{}",
                    o["metadata"]["namespace"].as_str().unwrap(),
                    o["metadata"]["name"].as_str().unwrap()
                );
                (key, o["spec"]["replicas"].as_u64().unwrap())
            })
            .collect();
        // 300 pods: 10 Deployments; 3700: 124, of which the last 4 share names with the first.
        assert_eq!(sets.len(), pods.div_ceil(30).min(120), "{pods}");
        assert_eq!(of("Service").count(), sets.len(), "{pods}");
        assert_eq!(sets.values().sum::<u64>(), pods as u64, "replicas add up to the pods");
        let mut owned: std::collections::BTreeMap<String, u64> = Default::default();
        for pod in of("Pod") {
            let refs = pod["metadata"]["ownerReferences"].as_array().expect("an owner");
            assert_eq!(refs[0]["kind"], "ReplicaSet");
            assert_eq!(refs[0]["controller"], true);
            let key = format!(
                "{}/{}",
                pod["metadata"]["namespace"].as_str().unwrap(),
                refs[0]["name"].as_str().unwrap()
            );
            *owned.entry(key).or_default() += 1;
        }
        assert_eq!(owned, sets, "{pods}: each ReplicaSet owns as many pods as its replicas");
    }
}

#[test]
fn every_heterogeneous_pending_pod_is_a_class_of_its_own_with_varied_constraints() {
    let (_, _, cluster) = generate_and_load(&params(Workload::Heterogeneous, 30, 400, 20));
    let classes = crate::encode::classes::classify(&cluster.pending).unwrap();
    assert_eq!(cluster.pending.len(), 380);
    assert_eq!(classes.len(), 380, "one class per pending pod");
    let pending = &cluster.pending;
    assert!(pending.iter().any(|p| !p.node_selector.is_empty()), "some node selectors");
    assert!(pending.iter().any(|p| p.node_selector.is_empty()), "some pods select no node");
    assert!(
        pending.iter().any(|p| p.tolerations.iter().any(|t| t.key == "dedicated")),
        "some pods tolerate the dedicated taint"
    );
    let tainted = cluster.state.nodes.iter().filter(|n| !n.taints.is_empty()).count();
    assert_eq!(tainted, 3, "every tenth node is tainted");
    let pools: std::collections::BTreeSet<&str> = cluster
        .state
        .nodes
        .iter()
        .filter_map(|n| n.labels.get("pool").map(String::as_str))
        .collect();
    assert_eq!(pools.len(), 6, "six pools: {pools:?}");
    for node in &cluster.state.nodes {
        assert!(node.labels.contains_key("pool"), "{}: pool label", node.name);
        assert!(node.labels.contains_key("disk"), "{}: disk label", node.name);
        assert_eq!(node.images.len(), 3, "{}: cached images", node.name);
    }
}
