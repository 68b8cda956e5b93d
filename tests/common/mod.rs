//! Shared by `tests/all/eval_framework.rs` and `tests/all/gpu_parity.rs`: the demo fixture and proptest
//! strategies for clusters, pending pods and profiles that exercise every plugin the matrix
//! evaluates (labels, taints, cordons, host ports, extended resources, node names, node
//! affinity with every operator and `metadata.name` pins, `addedAffinity`, the three scoring
//! strategies, disabled filters, ignored resource groups, BalancedAllocation over two or four
//! resources, container images with tags, digests and per-node sizes, pod labels in two
//! namespaces, topology spread constraints of both actions over keys some nodes lack, with
//! `minDomains`, both node inclusion policies, system and listed default constraints, required
//! and preferred pod affinity and anti-affinity of pending and bound pods with namespace lists
//! and selectors, InterPodAffinity's arguments).

#![allow(dead_code)]

use std::path::PathBuf;

use kplace::eval::testing::matrix_profile;
use kplace::framework::args::{
    ResourceSpec, ScoringStrategy, ScoringStrategyType, SpreadDefaultingType, UtilizationShapePoint,
};
use kplace::framework::profile::{PluginName, Profile};
use kplace::model::testing::{MI, NodeBuilder, PodBuilder, cluster, node_term, spread_constraint};
use kplace::model::{
    ClusterState, InclusionPolicy, LabelSelector, MatchOp, NodeAffinity, NodeSelector,
    NodeSelectorTerm, Pod, PodAffinityTerm, PreferredSchedulingTerm, Requirement, TaintEffect,
    TolerationOperator, TopologySpreadConstraint, UnsatisfiableAction,
};
use kplace::snapshot::{self, BuildOptions, Cluster};
use proptest::prelude::*;

/// The demo fixture, loaded and built.
pub fn demo() -> Cluster {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo");
    let snap = snapshot::load(&[dir]).expect("the demo fixture loads");
    snapshot::build(&snap, &BuildOptions::default()).expect("the demo fixture builds")
}

/// A generated test input.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// A profile reduced to the plugins the matrix evaluates.
    pub profile: Profile,
    /// The cluster.
    pub state: ClusterState,
    /// Pending pods.
    pub pending: Vec<Pod>,
}

const ZONES: [&str; 3] = ["a", "b", "c"];
const DISKS: [&str; 2] = ["ssd", "hdd"];
const CORES: [&str; 3] = ["4", "8", "16"];
/// Host ports as `(ip, protocol, port)`.
const PORTS: [(&str, &str, i32); 4] =
    [("", "TCP", 80), ("10.0.0.1", "TCP", 443), ("", "UDP", 80), ("10.0.0.2", "TCP", 443)];
/// Taints, unique by key and effect as the API server requires.
const TAINTS: [(&str, &str, TaintEffect); 4] = [
    ("gpu", "yes", TaintEffect::NoSchedule),
    ("spot", "", TaintEffect::PreferNoSchedule),
    ("old", "x", TaintEffect::PreferNoSchedule),
    ("maint", "", TaintEffect::NoExecute),
];
const GPU: &str = "nvidia.com/gpu";
/// Node images as `(names, MiB)`; the same name may have different sizes on different nodes.
const NODE_IMAGES: [(&[&str], i64); 5] = [
    (&["nginx:latest", "nginx:1.27"], 150),
    (&["nginx:latest"], 190),
    (&["redis:7"], 40),
    (&["registry.local:5000/app:latest", "app@sha256:abc"], 900),
    (&["busybox:latest"], 3),
];
/// Pod images (normalized by ImageLocality: "nginx" becomes "nginx:latest").
const POD_IMAGES: [&str; 6] =
    ["nginx", "nginx:1.27", "redis:7", "registry.local:5000/app", "busybox", "absent:1"];
const EXAMPLE_RES: &str = "example.com/foo";
/// Namespaces of pods (the first is the common one).
const NAMESPACES: [&str; 2] = ["d", "e"];
/// Topology keys of spread constraints and affinity terms; not every node has `rack` or the
/// well-known zone label.
const TOPO_KEYS: [&str; 4] =
    ["zone", "kubernetes.io/hostname", "rack", "topology.kubernetes.io/zone"];
const RACKS: [&str; 3] = ["r1", "r2", "r3"];
const HUGE: &str = "hugepages-2Mi";

/// Memory in bytes: whole MiB when `exact`, else sometimes a few bytes off.
fn memory(mib: u32, jitter: u32, exact: bool) -> i64 {
    let base = i64::from(mib) * MI;
    if exact || base == 0 { base } else { base + i64::from(jitter % 3) * 4097 }
}

#[derive(Debug, Clone)]
struct NodeSpec {
    cpu: u32,
    mem_mib: u32,
    jitter: u32,
    pods: u8,
    gpu: u8,
    example_res: u8,
    huge: u8,
    zone: Option<usize>,
    disk: Option<usize>,
    cores: Option<usize>,
    images: u8,
    taints: u8,
    cordoned: bool,
    rack: Option<usize>,
    std_zone: bool,
    bound: Vec<PodSpec>,
}

/// A pod's labels, namespace and inter-pod constraints.
#[derive(Debug, Clone)]
struct InterPodSpec {
    namespace: usize,
    /// Bits 0–1: `app` (none, web, db, cache); bit 2: `tier=front`; bit 3: `team=a`.
    labels: u8,
    spread: Vec<SpreadSpec>,
    default_selector: bool,
    affinity: Vec<AffinitySpec>,
}

/// A pod (anti-)affinity term: `kind` 0 required affinity, 1 required anti-affinity, 2
/// preferred affinity, 3 preferred anti-affinity; `namespaces` 0 the pod's own, 1 listed `e`,
/// 2 a namespace selector `team=a`, 3 an empty namespace selector (all namespaces).
#[derive(Debug, Clone)]
struct AffinitySpec {
    kind: u8,
    weight: i32,
    key: usize,
    selector: usize,
    namespaces: u8,
}

fn affinity_spec() -> impl Strategy<Value = AffinitySpec> {
    (
        prop::sample::select(vec![0u8, 1, 1, 2, 2, 3]),
        1i32..101,
        prop::sample::select(vec![0usize, 0, 1, 1, 2, 3]),
        prop::sample::select(vec![0usize, 0, 1, 2, 3, 4]),
        prop::sample::select(vec![0u8, 0, 0, 1, 2, 3]),
    )
        .prop_map(|(kind, weight, key, selector, namespaces)| AffinitySpec {
            kind,
            weight,
            key,
            selector,
            namespaces,
        })
}

fn affinity_term(a: &AffinitySpec) -> PodAffinityTerm {
    let (namespaces, namespace_selector) = match a.namespaces {
        1 => (vec!["e".to_string()], None),
        2 => (Vec::new(), Some(LabelSelector::from_match_labels([("team", "a")]))),
        3 => (Vec::new(), Some(LabelSelector::default())),
        _ => (Vec::new(), None),
    };
    PodAffinityTerm {
        label_selector: selector(a.selector),
        namespaces,
        namespace_selector,
        topology_key: TOPO_KEYS[a.key].to_string(),
        match_label_keys: Vec::new(),
        mismatch_label_keys: Vec::new(),
    }
}

#[derive(Debug, Clone)]
struct SpreadSpec {
    key: usize,
    max_skew: i32,
    do_not_schedule: bool,
    selector: usize,
    min_domains: Option<i32>,
    honor_affinity: bool,
    honor_taints: bool,
}

/// Label selectors of spread constraints and affinity terms: `app=web`, `app=db`, `tier`
/// exists, empty (everything; counts nothing in spreading), absent (nothing).
fn selector(i: usize) -> Option<LabelSelector> {
    match i {
        0 => Some(LabelSelector::from_match_labels([("app", "web")])),
        1 => Some(LabelSelector::from_match_labels([("app", "db")])),
        2 => Some(LabelSelector {
            requirements: vec![Requirement::new("tier", MatchOp::Exists, &[])],
        }),
        3 => Some(LabelSelector::default()),
        _ => None,
    }
}

fn spread_spec() -> impl Strategy<Value = SpreadSpec> {
    (
        0usize..TOPO_KEYS.len(),
        1i32..4,
        any::<bool>(),
        prop::sample::select(vec![0usize, 0, 1, 2, 3, 4]),
        prop::option::weighted(0.3, 1i32..5),
        any::<bool>(),
        prop::bool::weighted(0.3),
    )
        .prop_map(
            |(
                key,
                max_skew,
                do_not_schedule,
                selector,
                min_domains,
                honor_affinity,
                honor_taints,
            )| {
                SpreadSpec {
                    key,
                    max_skew,
                    do_not_schedule,
                    selector,
                    min_domains,
                    honor_affinity,
                    honor_taints,
                }
            },
        )
}

fn interpod_spec(constraints: bool) -> impl Strategy<Value = InterPodSpec> {
    (
        prop::sample::select(vec![0usize, 0, 0, 1]),
        any::<u8>(),
        prop::collection::vec(spread_spec(), 0..(1 + 2 * constraints as usize)),
        prop::bool::weighted(0.5),
        // Bound pods carry terms too: their anti-affinity filters, their terms score.
        prop::collection::vec(affinity_spec(), 0..(2 + constraints as usize)),
    )
        .prop_map(|(namespace, labels, spread, default_selector, affinity)| InterPodSpec {
            namespace,
            labels,
            spread,
            default_selector,
            affinity,
        })
}

#[derive(Debug, Clone)]
struct PodSpec {
    cpu: u32,
    mem_mib: u32,
    jitter: u32,
    gpu: u8,
    example_res: u8,
    huge: u8,
    ports: u8,
    tolerations: u8,
    images: Vec<usize>,
    selector: Option<usize>,
    required: Option<Vec<TermSpec>>,
    preferred: Vec<(i32, TermSpec)>,
    node_name: Option<usize>,
    copies: u8,
    interpod: InterPodSpec,
}

#[derive(Debug, Clone)]
struct TermSpec {
    exprs: Vec<(usize, usize, usize)>,
    pin: Option<(bool, Vec<usize>)>,
}

fn term_spec() -> impl Strategy<Value = TermSpec> {
    (
        prop::collection::vec((0usize..3, 0usize..6, 0usize..3), 0..3),
        prop::option::weighted(0.3, (any::<bool>(), prop::collection::vec(0usize..10, 1..3))),
    )
        .prop_map(|(exprs, pin)| TermSpec { exprs, pin })
}

fn pod_spec(with_affinity: bool) -> impl Strategy<Value = PodSpec> {
    // Bound pods' node affinity plays no part; keep it rare there.
    let required = if with_affinity { 0.35 } else { 0.01 };
    (
        (0u32..3000, 0u32..6000, any::<u32>(), 0u8..3, 0u8..2, 0u8..2),
        (
            any::<u8>(),
            any::<u8>(),
            prop::option::weighted(0.2, 0usize..3),
            prop::collection::vec(0usize..POD_IMAGES.len(), 0..3),
        ),
        prop::option::weighted(required, prop::collection::vec(term_spec(), 0..3)),
        prop::collection::vec((0i32..101, term_spec()), 0..(1 + 3 * with_affinity as usize)),
        prop::option::weighted(0.05, 0usize..10),
        1u8..3,
        interpod_spec(with_affinity),
    )
        .prop_map(
            |(
                (cpu, mem_mib, jitter, gpu, example_res, huge),
                (ports, tolerations, selector, images),
                required,
                preferred,
                node_name,
                copies,
                interpod,
            )| PodSpec {
                cpu: cpu / 100 * 100,
                mem_mib,
                jitter,
                gpu,
                example_res,
                huge,
                ports,
                tolerations,
                images,
                selector,
                required,
                preferred,
                node_name,
                copies,
                interpod,
            },
        )
}

fn node_spec() -> impl Strategy<Value = NodeSpec> {
    (
        (0u32..9000, 0u32..20000, any::<u32>(), 0u8..12, 0u8..5, 0u8..3, 0u8..4),
        (
            prop::option::of(0usize..3),
            prop::option::of(0usize..2),
            prop::option::of(0usize..3),
            any::<u8>(),
            prop::bool::weighted(0.1),
            any::<u8>(),
            prop::option::weighted(0.7, 0usize..RACKS.len()),
            prop::bool::weighted(0.6),
        ),
        prop::collection::vec(pod_spec(false), 0..3),
    )
        .prop_map(
            |(
                (cpu, mem_mib, jitter, pods, gpu, example_res, huge),
                (zone, disk, cores, taints, cordoned, images, rack, std_zone),
                bound,
            )| {
                NodeSpec {
                    cpu: cpu / 100 * 100,
                    mem_mib,
                    jitter,
                    pods,
                    gpu,
                    example_res,
                    huge,
                    zone,
                    disk,
                    cores,
                    images,
                    taints,
                    cordoned,
                    rack,
                    std_zone,
                    bound,
                }
            },
        )
}

fn node_name(i: usize) -> String {
    format!("n{i:03}")
}

fn term(spec: &TermSpec, num_nodes: usize) -> NodeSelectorTerm {
    let keys = ["zone", "disk", "cores"];
    let values: [&[&str]; 3] = [&ZONES, &DISKS, &CORES];
    let mut t = node_term(Vec::new());
    for &(k, op, v) in &spec.exprs {
        let key = keys[k];
        let value = values[k][v % values[k].len()];
        let r = match op {
            0 => Requirement::new(key, MatchOp::In, &[value]),
            1 => Requirement::new(key, MatchOp::NotIn, &[value]),
            2 => Requirement::new(key, MatchOp::Exists, &[]),
            3 => Requirement::new(key, MatchOp::DoesNotExist, &[]),
            4 => Requirement::new(key, MatchOp::Gt, &["6"]),
            _ => Requirement::new(key, MatchOp::Lt, &["10"]),
        };
        t.match_expressions.push(r);
    }
    if let Some((negate, nodes)) = &spec.pin {
        // Indices past the node count name nodes that do not exist.
        let names: Vec<String> = nodes.iter().map(|&i| node_name(i % (num_nodes + 2))).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let op = if *negate { MatchOp::NotIn } else { MatchOp::In };
        t.match_fields.push(Requirement::new("metadata.name", op, &refs));
    }
    t
}

fn build_pod(name: &str, s: &PodSpec, exact: bool, num_nodes: usize) -> PodBuilder {
    let ip = &s.interpod;
    let mut b = PodBuilder::new(NAMESPACES[ip.namespace], name);
    // One pod in eight is best effort (no cpu or memory request).
    if !s.jitter.is_multiple_of(8) {
        b = b.cpu(i64::from(s.cpu)).memory(memory(s.mem_mib, s.jitter, exact));
    }
    let app = ["", "web", "db", "cache"][usize::from(ip.labels & 3)];
    if !app.is_empty() {
        b = b.label("app", app);
    }
    if ip.labels & 4 != 0 {
        b = b.label("tier", "front");
    }
    if ip.labels & 8 != 0 {
        b = b.label("team", "a");
    }
    for c in &ip.spread {
        b = b.spread(TopologySpreadConstraint {
            max_skew: c.max_skew,
            topology_key: TOPO_KEYS[c.key].to_string(),
            when_unsatisfiable: if c.do_not_schedule {
                UnsatisfiableAction::DoNotSchedule
            } else {
                UnsatisfiableAction::ScheduleAnyway
            },
            label_selector: selector(c.selector),
            min_domains: if c.do_not_schedule { c.min_domains } else { None },
            node_affinity_policy: if c.honor_affinity {
                InclusionPolicy::Honor
            } else {
                InclusionPolicy::Ignore
            },
            node_taints_policy: if c.honor_taints {
                InclusionPolicy::Honor
            } else {
                InclusionPolicy::Ignore
            },
            match_label_keys: Vec::new(),
        });
    }
    for a in &ip.affinity {
        let term = affinity_term(a);
        b = match a.kind {
            0 => b.pod_affinity(term),
            1 => b.pod_anti_affinity(term),
            2 => b.preferred_pod_affinity(a.weight, term),
            _ => b.preferred_pod_anti_affinity(a.weight, term),
        };
    }
    if ip.default_selector && !app.is_empty() {
        // What the API server derives from the pod's owning service or controller.
        b = b.default_spread_selector(LabelSelector::from_match_labels([("app", app)]));
    }
    if s.gpu > 0 {
        b = b.scalar(GPU, i64::from(s.gpu));
    }
    if s.example_res > 0 {
        b = b.scalar(EXAMPLE_RES, i64::from(s.example_res));
    }
    if s.huge > 0 {
        b = b.scalar(HUGE, i64::from(s.huge) * 2 * MI);
    }
    for (i, (ip, proto, port)) in PORTS.iter().enumerate() {
        if s.ports & (1 << i) != 0 && s.ports & 0xC0 == 0 {
            b = b.host_port(ip, proto, *port);
        }
    }
    let tolerations = [
        ("gpu", TolerationOperator::Equal, "yes", None),
        ("spot", TolerationOperator::Exists, "", Some(TaintEffect::PreferNoSchedule)),
        ("maint", TolerationOperator::Exists, "", Some(TaintEffect::NoExecute)),
        (
            "node.kubernetes.io/unschedulable",
            TolerationOperator::Exists,
            "",
            Some(TaintEffect::NoSchedule),
        ),
        ("", TolerationOperator::Exists, "", None),
        ("old", TolerationOperator::Equal, "y", None),
    ];
    for (i, (key, op, value, effect)) in tolerations.iter().enumerate() {
        // The catch-all toleration (index 4) is rare.
        let wanted = s.tolerations & (1 << i) != 0 && (i != 4 || s.tolerations & 0x80 != 0);
        if wanted {
            b = b.toleration(key, *op, value, *effect);
        }
    }
    if let Some(z) = s.selector {
        b = b.node_selector("zone", ZONES[z]);
    }
    for &i in &s.images {
        b = b.image(POD_IMAGES[i]);
    }
    if let Some(terms) = &s.required {
        b = b.required_node_affinity(terms.iter().map(|t| term(t, num_nodes)).collect());
    }
    for (w, t) in &s.preferred {
        b = b.preferred_node_affinity(*w, term(t, num_nodes));
    }
    b
}

fn build_scenario(
    nodes: &[NodeSpec],
    pending: &[PodSpec],
    profile_choice: (u8, bool, bool, bool),
    exact: bool,
) -> Scenario {
    let n = nodes.len();
    let mut built = Vec::new();
    let mut bound = Vec::new();
    for (i, s) in nodes.iter().enumerate() {
        let name = node_name(i);
        let mut b = NodeBuilder::new(&name)
            .cpu(i64::from(s.cpu))
            .memory(memory(s.mem_mib, s.jitter, exact))
            .ephemeral_storage(i64::from(s.mem_mib) * 4 * MI)
            .pods(i64::from(s.pods));
        if s.gpu > 0 {
            b = b.scalar(GPU, i64::from(s.gpu));
        }
        if s.example_res > 0 {
            b = b.scalar(EXAMPLE_RES, i64::from(s.example_res));
        }
        if s.huge > 0 {
            b = b.scalar(HUGE, i64::from(s.huge) * 4 * MI);
        }
        if let Some(z) = s.zone {
            b = b.label("zone", ZONES[z]);
            if s.std_zone {
                b = b.label("topology.kubernetes.io/zone", ZONES[z]);
            }
        }
        if let Some(r) = s.rack {
            b = b.label("rack", RACKS[r]);
        }
        if let Some(d) = s.disk {
            b = b.label("disk", DISKS[d]);
        }
        if let Some(c) = s.cores {
            b = b.label("cores", CORES[c]);
        }
        for (k, (key, value, effect)) in TAINTS.iter().enumerate() {
            if s.taints & (1 << k) != 0 && s.taints & 0x30 != 0 {
                b = b.taint(key, value, *effect);
            }
        }
        if s.cordoned {
            b = b.unschedulable();
        }
        for (k, (names, mib)) in NODE_IMAGES.iter().enumerate() {
            if s.images & (1 << k) != 0 {
                b = b.image(names, mib * MI);
            }
        }
        built.push(b.obj());
        for (j, p) in s.bound.iter().enumerate() {
            bound.push(build_pod(&format!("b{i}-{j}"), p, exact, n).node(&name).obj());
        }
    }
    let mut state = cluster(built, bound);
    // Namespace labels for namespace selectors; pods of `e` are not selected by `team=a`.
    for (ns, team) in [("d", "a"), ("e", "b")] {
        state
            .namespace_labels
            .insert(ns.to_string(), [("team".to_string(), team.to_string())].into());
    }
    let mut pods = Vec::new();
    for (i, s) in pending.iter().enumerate() {
        for copy in 0..s.copies {
            let mut pod = build_pod(&format!("p{i}-{copy}"), s, exact, n).obj();
            if let Some(k) = s.node_name {
                pod.node_name = Some(node_name(k % (n + 2)));
            }
            pods.push(pod);
        }
    }
    let (strategy, added, no_ports, ignore_foo) = profile_choice;
    let mut profile = matrix_profile(&Profile::default_profile());
    let fit = &mut profile.args.node_resources_fit;
    fit.scoring_strategy = match strategy % 3 {
        0 => ScoringStrategy::default(),
        1 => ScoringStrategy {
            kind: ScoringStrategyType::MostAllocated,
            resources: vec![
                ResourceSpec::new("cpu", 2),
                ResourceSpec::new("memory", 1),
                ResourceSpec::new(GPU, 5),
                ResourceSpec::new("ephemeral-storage", 1),
            ],
            shape: Vec::new(),
        },
        _ => ScoringStrategy {
            kind: ScoringStrategyType::RequestedToCapacityRatio,
            resources: vec![
                ResourceSpec::new("cpu", 1),
                ResourceSpec::new("memory", 3),
                ResourceSpec::new(EXAMPLE_RES, 2),
                ResourceSpec::new("pods", 1),
            ],
            shape: vec![
                UtilizationShapePoint { utilization: 10, score: 2 },
                UtilizationShapePoint { utilization: 50, score: 9 },
                UtilizationShapePoint { utilization: 90, score: 4 },
            ],
        },
    };
    if ignore_foo {
        fit.ignored_resource_groups = vec!["example.com".to_string()];
    }
    if (strategy / 3) % 2 == 1 {
        // BalancedAllocation over four resources: the standard-deviation formula, and scalar
        // resources left out for classes that do not request them.
        profile.args.balanced_allocation.resources = vec![
            ResourceSpec::new("cpu", 1),
            ResourceSpec::new("memory", 1),
            ResourceSpec::new(GPU, 1),
            ResourceSpec::new("ephemeral-storage", 1),
        ];
    }
    if added {
        profile.args.node_affinity.added_affinity = Some(NodeAffinity {
            required: Some(NodeSelector {
                terms: vec![node_term(vec![Requirement::new("zone", MatchOp::NotIn, &["c"])])],
            }),
            preferred: vec![PreferredSchedulingTerm {
                weight: 9,
                preference: node_term(vec![Requirement::new("disk", MatchOp::In, &["ssd"])]),
            }],
        });
    }
    if no_ports {
        profile.plugins.filter.retain(|p| *p != PluginName::NodePorts);
    }
    match (strategy / 12) % 3 {
        1 => profile.args.inter_pod_affinity.hard_pod_affinity_weight = 0,
        2 => {
            profile.args.inter_pod_affinity.hard_pod_affinity_weight = 5;
            profile.args.inter_pod_affinity.ignore_preferred_terms_of_existing_pods = true;
        }
        _ => {}
    }
    if (strategy / 6) % 2 == 1 {
        // Cluster-level default constraints instead of the system defaults.
        let spread = &mut profile.args.pod_topology_spread;
        spread.defaulting_type = SpreadDefaultingType::List;
        let mut zone = spread_constraint(2, "zone", UnsatisfiableAction::ScheduleAnyway, &[]);
        zone.label_selector = None;
        let mut rack = spread_constraint(1, "rack", UnsatisfiableAction::DoNotSchedule, &[]);
        rack.label_selector = None;
        spread.default_constraints = vec![zone, rack];
    }
    Scenario { profile, state, pending: pods }
}

/// Clusters of `nodes` nodes (each with up to 2 bound pods) and up to `max_pending` pod specs
/// (each pending once or twice), with amounts in whole units when `exact`.
pub fn scenarios(
    nodes: std::ops::RangeInclusive<usize>,
    max_pending: usize,
    exact: bool,
) -> impl Strategy<Value = Scenario> {
    (
        prop::collection::vec(node_spec(), nodes),
        prop::collection::vec(pod_spec(true), 0..=max_pending),
        (any::<u8>(), prop::bool::weighted(0.3), prop::bool::weighted(0.2), any::<bool>()),
    )
        .prop_map(move |(nodes, pending, choice)| build_scenario(&nodes, &pending, choice, exact))
}
