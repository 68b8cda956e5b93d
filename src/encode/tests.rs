//! Tests of the whole encoder: determinism, typed errors, and a property test over random small
//! clusters.

use proptest::prelude::*;

use super::classes::PodSignature;
use super::*;
use crate::model::testing::{
    GI, MI, NodeBuilder, PodBuilder, affinity_term, cluster, node_term, spread_constraint,
};
use crate::model::{
    LabelSelector, MatchOp, Node, Requirement, TaintEffect, TolerationOperator, UnsatisfiableAction,
};

const TI: i64 = 1 << 40;
const PI: i64 = 1 << 50;

fn sample_nodes(reverse: bool) -> Vec<Node> {
    let mut out = Vec::new();
    for i in 0..6 {
        let mut labels = vec![
            ("topology.kubernetes.io/zone", ["a", "b", "c"][i % 3]),
            ("disk", if i % 2 == 0 { "ssd" } else { "hdd" }),
            ("cores", ["8", "16", "32"][i % 3]),
        ];
        let mut taints = vec![
            ("dedicated", "db", TaintEffect::NoSchedule),
            ("spot", "", TaintEffect::PreferNoSchedule),
        ];
        let mut images = vec![(vec!["nginx:1"], 100 * MI), (vec!["redis:7", "redis@sha"], 50 * MI)];
        let mut scalars = vec![("nvidia.com/gpu", 8), ("example.com/nic", 2)];
        if reverse {
            labels.reverse();
            taints.reverse();
            images.reverse();
            scalars.reverse();
        }
        let mut b =
            NodeBuilder::new(&format!("node-{i}")).cpu(16_000).memory(64 * GI + 12_345).pods(110);
        for (k, v) in labels {
            b = b.label(k, v);
        }
        if i % 3 == 0 {
            for (k, v, e) in taints {
                b = b.taint(k, v, e);
            }
        }
        for (names, size) in images {
            b = b.image(&names, size);
        }
        for (k, v) in scalars {
            b = b.scalar(k, v);
        }
        out.push(b.obj());
    }
    if reverse {
        out.reverse();
    }
    out
}

fn sample_pending(reverse: bool) -> Vec<crate::model::Pod> {
    let mut pods = Vec::new();
    for i in 0..20 {
        let mut tols = vec![
            ("dedicated", TolerationOperator::Equal, "db", Some(TaintEffect::NoSchedule)),
            ("spot", TolerationOperator::Exists, "", None),
        ];
        if reverse {
            tols.reverse();
        }
        let mut b = PodBuilder::new(["a", "b"][i % 2], &format!("p{i}"))
            .cpu([100, 250, 1000][i % 3])
            .memory([128 * MI, 1_000_000_000][i % 2])
            .label("app", ["web", "db"][i % 2])
            .image("nginx:1")
            .node_selector("disk", "ssd");
        if i % 4 == 0 {
            for (k, op, v, e) in tols {
                b = b.toleration(k, op, v, e);
            }
        }
        if i % 5 == 0 {
            b = b
                .spread(spread_constraint(
                    1,
                    "topology.kubernetes.io/zone",
                    UnsatisfiableAction::DoNotSchedule,
                    &[("app", "web")],
                ))
                .pod_anti_affinity(affinity_term("kubernetes.io/hostname", &[("app", "db")]))
                .preferred_node_affinity(
                    10,
                    node_term(vec![Requirement::new("cores", MatchOp::Gt, &["10"])]),
                );
        }
        pods.push(b.obj());
    }
    pods
}

fn sample_state(reverse: bool) -> crate::model::ClusterState {
    let bound = vec![
        PodBuilder::new("a", "old-1").cpu(500).memory(GI).label("app", "db").node("node-1").obj(),
        PodBuilder::new("b", "old-2").cpu(100).host_port("", "TCP", 80).node("node-2").obj(),
    ];
    let mut state = cluster(sample_nodes(reverse), bound);
    let mut ns = vec![("a", "x"), ("b", "y")];
    if reverse {
        ns.reverse();
    }
    for (n, team) in ns {
        state
            .namespace_labels
            .insert(n.to_string(), [("team".to_string(), team.to_string())].into());
    }
    state
}

#[test]
fn encoding_twice_gives_byte_identical_arrays() {
    let state = sample_state(false);
    let pending = sample_pending(false);
    let a = encode(&state, &pending).unwrap();
    let b = encode(&state, &pending).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.gpu.byte_views(), b.gpu.byte_views());
}

#[test]
fn encoding_groups_with_one_node_side_equals_encoding_each_group_alone() {
    let state = sample_state(false);
    let pending = sample_pending(false);
    let side = NodeSide::build(&state).unwrap();
    for size in [1, 2, 3, pending.len()] {
        for group in pending.chunks(size) {
            let shared = encode_with(&side, &state, group).unwrap();
            assert_eq!(shared, encode(&state, group).unwrap());
            assert_eq!(shared.gpu.byte_views(), encode(&state, group).unwrap().gpu.byte_views());
        }
    }
}

#[test]
fn a_node_side_of_another_state_is_not_used() {
    let state = sample_state(false);
    let pending = sample_pending(false);
    let other = cluster(sample_nodes(false)[..2].to_vec(), vec![]);
    let side = NodeSide::build(&other).unwrap();
    assert_eq!(encode_with(&side, &state, &pending).unwrap(), encode(&state, &pending).unwrap());
}

#[test]
fn insertion_order_of_maps_and_lists_does_not_change_the_encoding() {
    let a = encode(&sample_state(false), &sample_pending(false)).unwrap();
    let b = encode(&sample_state(true), &sample_pending(true)).unwrap();
    assert_eq!(a.tensors, b.tensors);
    assert_eq!(a.dicts, b.dicts);
    assert_eq!(a.gpu.byte_views(), b.gpu.byte_views());
    assert!(a.classes.len() < 20, "the sample pods fall into few classes");
}

#[test]
fn amounts_outside_the_base_range_widen_the_unit_instead_of_failing() {
    let huge_node = || NodeBuilder::new("big").cpu(50_000_000).obj();
    let small = || NodeBuilder::new("small").cpu(1000).memory(GI).obj();
    // (name, cluster, pending, resource column, its shift, its unit's name, an encoded amount
    // to check: (node allocatable or class request, row, want))
    type Case = (
        &'static str,
        crate::model::ClusterState,
        Vec<crate::model::Pod>,
        usize,
        u32,
        &'static str,
    );
    let cases: Vec<Case> = vec![
        (
            "a node with 50,000 cores gets 2-millicore units",
            cluster(vec![huge_node()], vec![]),
            vec![],
            dict::RESOURCE_CPU,
            1,
            "2 millicores",
        ),
        (
            "a node with 41 TiB of memory gets 2 MiB units",
            cluster(vec![NodeBuilder::new("big").memory(41 * TI).obj()], vec![]),
            vec![],
            dict::RESOURCE_MEMORY,
            21,
            "2 MiB",
        ),
        (
            "a node of 42,949,673 pods gets 2-pod units",
            cluster(vec![NodeBuilder::new("big").pods(42_949_673).obj()], vec![]),
            vec![],
            dict::RESOURCE_PODS,
            1,
            "2 units",
        ),
        (
            "a pod asking for 50 TiB of memory gets 2 MiB units",
            cluster(vec![small()], vec![]),
            vec![PodBuilder::new("d", "greedy").memory(50 * TI).obj()],
            dict::RESOURCE_MEMORY,
            21,
            "2 MiB",
        ),
        (
            "two bound pods whose cpu sums past the base range get 2-millicore units",
            cluster(
                vec![small()],
                vec![
                    PodBuilder::new("d", "x").cpu(30_000_000).node("small").obj(),
                    PodBuilder::new("d", "y").cpu(30_000_000).node("small").obj(),
                ],
            ),
            vec![],
            dict::RESOURCE_CPU,
            1,
            "2 millicores",
        ),
    ];
    for (name, state, pending, column, shift, unit) in cases {
        let enc = encode(&state, &pending).unwrap_or_else(|e| panic!("{name}: {e}"));
        let u = &enc.dicts.resources.units[column];
        assert_eq!((u.shift, u.unit_name().as_str()), (shift, unit), "{name}");
    }
    // Allocatable rounds down in the wider unit, and the node is flagged when that loses
    // something (an odd number of millicores).
    let enc =
        encode(&cluster(vec![NodeBuilder::new("big").cpu(50_000_001).obj()], vec![]), &[]).unwrap();
    assert_eq!(enc.tensors.node_allocatable[[0, dict::RESOURCE_CPU]], 25_000_000);
    assert_ne!(enc.tensors.node_flags[0] & tensors::NODE_INEXACT_UNITS, 0);
    let enc = encode(&cluster(vec![huge_node()], vec![]), &[]).unwrap();
    assert_eq!(
        enc.tensors.node_flags[0] & tensors::NODE_INEXACT_UNITS,
        0,
        "an even amount is exact"
    );

    // What no unit can hold is still a typed error naming the object.
    let negative = cluster(vec![NodeBuilder::new("neg").memory(-1).obj()], vec![]);
    assert_eq!(
        encode(&negative, &[]).err(),
        Some(EncodeError::Negative {
            subject: Subject::Node("neg".into()),
            resource: "memory".into(),
            field: AmountField::Allocatable,
            value: -1,
        }),
    );
    let overflow = EncodeError::Overflow {
        subject: Subject::Node("big".into()),
        resource: "cpu".into(),
        field: AmountField::Allocatable,
        value: 50_000_000,
        max: units::AMOUNT_MAX,
        unit: "millicores".into(),
    };
    assert_eq!(
        overflow.to_string(),
        "node \"big\": cpu allocatable of 50000000 does not fit the encoded range (at most 42949672 millicores)"
    );
}

#[test]
fn the_largest_real_nodes_encode_with_storage_in_coarser_units() {
    let node = NodeBuilder::new("x-large")
        .cpu(448_000)
        .memory(24 * TI)
        .ephemeral_storage(PI)
        .pods(1000)
        .scalar("nvidia.com/gpu", 16)
        .obj();
    let pending =
        vec![PodBuilder::new("d", "p").cpu(1000).memory(GI).ephemeral_storage(10 * GI).obj()];
    let enc = encode(&cluster(vec![node], vec![]), &pending).unwrap();
    let units = &enc.dicts.resources.units;
    assert_eq!(units[dict::RESOURCE_EPHEMERAL_STORAGE].shift, 25);
    assert_eq!(units[dict::RESOURCE_MEMORY].shift, 20);
    assert_eq!(
        enc.tensors.node_allocatable.row(0).to_vec(),
        vec![448_000, 25_165_824, 1 << 25, 1000, 16]
    );
    assert_eq!(
        enc.tensors.class_requests[[0, dict::RESOURCE_EPHEMERAL_STORAGE]],
        320,
        "10 GiB in 32 MiB units"
    );
}

#[test]
fn an_empty_cluster_and_queue_encode_to_empty_arrays() {
    let enc = encode(&crate::model::ClusterState::default(), &[]).unwrap();
    assert_eq!(enc.gpu.dims.num_nodes, 0);
    assert_eq!(enc.gpu.dims.num_classes, 0);
    assert_eq!(enc.tensors.node_allocatable.dim(), (0, 4));
    assert_eq!(enc.dicts.topology_keys.len(), 2, "the default topology keys are always present");
}

// ---------------------------------------------------------------------------------------------
// Property test: random small clusters.

#[derive(Debug, Clone)]
struct NodeSpec {
    zone: u8,
    disk: Option<u8>,
    taints: Vec<(u8, u8)>,
    cpu: i64,
    mem: i64,
    unschedulable: bool,
    gpus: i64,
}

#[derive(Debug, Clone)]
struct PodSpec {
    ns: u8,
    app: u8,
    cpu: u8,
    mem: u8,
    priority: u8,
    tolerations: Vec<(u8, bool, Option<u8>)>,
    selector: Option<u8>,
    affinity: Option<(u8, Vec<u8>)>,
    anti: bool,
    spread: Option<u8>,
    bind_to: Option<u8>,
}

const EFFECTS: [TaintEffect; 3] =
    [TaintEffect::NoSchedule, TaintEffect::PreferNoSchedule, TaintEffect::NoExecute];
const OPS: [MatchOp; 6] =
    [MatchOp::In, MatchOp::NotIn, MatchOp::Exists, MatchOp::DoesNotExist, MatchOp::Gt, MatchOp::Lt];

fn node_spec() -> impl Strategy<Value = NodeSpec> {
    (
        0..3u8,
        proptest::option::of(0..2u8),
        proptest::collection::vec((0..3u8, 0..3u8), 0..3),
        0i64..64_000,
        0i64..(256 * GI),
        any::<bool>(),
        0i64..9,
    )
        .prop_map(|(zone, disk, taints, cpu, mem, unschedulable, gpus)| NodeSpec {
            zone,
            disk,
            taints,
            cpu,
            mem,
            unschedulable,
            gpus,
        })
}

fn pod_spec() -> impl Strategy<Value = PodSpec> {
    (
        (0..2u8, 0..3u8, 0..3u8, 0..3u8, 0..2u8),
        proptest::collection::vec((0..4u8, any::<bool>(), proptest::option::of(0..3u8)), 0..3),
        proptest::option::of(0..2u8),
        proptest::option::of((0..6u8, proptest::collection::vec(0..4u8, 0..3))),
        any::<bool>(),
        proptest::option::of(0..2u8),
        proptest::option::of(0..8u8),
    )
        .prop_map(
            |(
                (ns, app, cpu, mem, priority),
                tolerations,
                selector,
                affinity,
                anti,
                spread,
                bind_to,
            )| PodSpec {
                ns,
                app,
                cpu,
                mem,
                priority,
                tolerations,
                selector,
                affinity,
                anti,
                spread,
                bind_to,
            },
        )
}

fn build_node(i: usize, s: &NodeSpec) -> Node {
    let mut b = NodeBuilder::new(&format!("n{i}"))
        .cpu(s.cpu)
        .memory(s.mem)
        .label("zone", ["a", "b", "c"][s.zone as usize])
        .label("cores", ["4", "16", "x"][s.zone as usize])
        .scalar("nvidia.com/gpu", s.gpus);
    if let Some(d) = s.disk {
        b = b.label("disk", ["ssd", "hdd"][d as usize]);
    }
    for (k, e) in &s.taints {
        b = b.taint(["a", "b", "c"][*k as usize], "v", EFFECTS[*e as usize]);
    }
    if s.unschedulable {
        b = b.unschedulable();
    }
    b.obj()
}

fn build_pod(i: usize, s: &PodSpec, bound: Option<String>) -> crate::model::Pod {
    let mut b = PodBuilder::new(["x", "y"][s.ns as usize], &format!("p{i}"))
        .cpu([0, 100, 1500][s.cpu as usize])
        .memory([0, 64 * MI, 1_000_000_007][s.mem as usize])
        .label("app", ["web", "db", "cache"][s.app as usize])
        .priority([0, 100][s.priority as usize]);
    for (k, exists, e) in &s.tolerations {
        let key = ["", "a", "b", "node.kubernetes.io/unschedulable"][*k as usize];
        let op = if *exists || key.is_empty() {
            TolerationOperator::Exists
        } else {
            TolerationOperator::Equal
        };
        let value = if op == TolerationOperator::Exists { "" } else { "v" };
        b = b.toleration(key, op, value, e.map(|e| EFFECTS[e as usize]));
    }
    if let Some(d) = s.selector {
        b = b.node_selector("disk", ["ssd", "hdd"][d as usize]);
    }
    if let Some((op, vals)) = &s.affinity {
        let op = OPS[*op as usize];
        let vals: Vec<&str> = match op {
            MatchOp::Exists | MatchOp::DoesNotExist => vec![],
            MatchOp::Gt | MatchOp::Lt => vec!["8"],
            _ => vals.iter().map(|v| ["a", "b", "c", "z"][*v as usize]).collect(),
        };
        let key = if matches!(op, MatchOp::Gt | MatchOp::Lt) { "cores" } else { "zone" };
        b = b.required_node_affinity(vec![node_term(vec![Requirement::new(key, op, &vals)])]);
        b = b.preferred_node_affinity(
            5,
            node_term(vec![Requirement::new("disk", MatchOp::Exists, &[])]),
        );
    }
    if s.anti {
        b = b.pod_anti_affinity(affinity_term("kubernetes.io/hostname", &[("app", "db")]));
    }
    if let Some(sp) = s.spread {
        let mut c =
            spread_constraint(1, "zone", UnsatisfiableAction::ScheduleAnyway, &[("app", "web")]);
        if sp == 1 {
            c.label_selector = Some(LabelSelector::default());
        }
        b = b.spread(c);
    }
    if let Some(n) = bound {
        b = b.node(&n);
    }
    b.obj()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_small_clusters_encode_consistently(
        nodes in proptest::collection::vec(node_spec(), 0..8),
        pods in proptest::collection::vec(pod_spec(), 0..24),
    ) {
        let node_objs: Vec<Node> = nodes.iter().enumerate().map(|(i, s)| build_node(i, s)).collect();
        let mut bound = Vec::new();
        let mut pending = Vec::new();
        for (i, s) in pods.iter().enumerate() {
            match s.bind_to {
                Some(n) if !node_objs.is_empty() => {
                    let name = node_objs[n as usize % node_objs.len()].name.clone();
                    bound.push(build_pod(i, s, Some(name)));
                }
                _ => pending.push(build_pod(i, s, None)),
            }
        }
        let state = cluster(node_objs, bound);
        let enc = encode(&state, &pending).expect("small clusters always encode");

        // Classes.
        prop_assert!(enc.classes.len() <= pending.len());
        prop_assert_eq!(enc.classes.pod_class.len(), pending.len());
        for (i, pod) in pending.iter().enumerate() {
            let class = &enc.classes.classes[enc.classes.pod_class[i] as usize];
            let sig = PodSignature::of(pod);
            prop_assert_eq!(&sig, &class.signature);
            prop_assert_eq!(&sig, &PodSignature::of(&pending[class.representative]));
            prop_assert!(class.members.contains(&i));
        }

        // Compiled node affinity and tolerations agree with the model.
        let t = &enc.tensors;
        for class in 0..enc.classes.len() {
            let rep = &pending[enc.classes.classes[class].representative];
            for (n, node) in state.nodes.iter().enumerate() {
                let want = rep.node_selector.iter().all(|(k, v)| node.labels.get(k) == Some(v))
                    && rep.node_affinity.required.as_ref().is_none_or(|s| s.matches(&node.name, &node.labels));
                prop_assert_eq!(t.class_required_node_affinity_matches(class, n), want);
                for (term, &id) in rep.node_affinity.preferred.iter().zip(t.class_preferred_terms.row(class)) {
                    prop_assert_eq!(t.node_term_matches(id, n), term.preference.matches(&node.name, &node.labels));
                }
            }
            let tolerated: Vec<u32> = enc.dicts.taints.items().iter().enumerate()
                .filter(|(_, taint)| rep.tolerations.iter().any(|tol| classes::TolerationShape::of(tol).tolerates(taint)))
                .map(|(i, _)| i as u32)
                .collect();
            prop_assert_eq!(t.class_tolerated_taints.row(class), tolerated.as_slice());
            // Spread selectors agree with the model on every bound pod.
            for (row, c) in t.class_spread.row(class).iter().zip(&rep.topology_spread_constraints) {
                let sel = t.spread[*row as usize].selector;
                for (b, pod) in state.nodes.iter().flat_map(|n| n.pods.iter()).enumerate() {
                    let want = c.label_selector.as_ref().is_some_and(|s| s.matches(&pod.labels));
                    prop_assert_eq!(t.selector_matches(sel, t.bound_pod_labels.row(b)), want);
                }
            }
        }

        // Units: allocatable never rounds up, requests never round down.
        for (n, node) in state.nodes.iter().enumerate() {
            for (j, unit) in enc.dicts.resources.units.iter().enumerate() {
                let raw = node.allocatable.get(&unit.name) as u64;
                prop_assert!(unit.decode(t.node_allocatable[[n, j]]) <= raw);
            }
        }
        for (c, class) in enc.classes.classes.iter().enumerate() {
            for (j, unit) in enc.dicts.resources.units.iter().enumerate() {
                if unit.name != crate::resources::PODS {
                    let raw = class.signature.requests.get(&unit.name) as u64;
                    prop_assert!(unit.decode(t.class_requests[[c, j]]) >= raw);
                }
            }
        }

        // Determinism.
        let again = encode(&state, &pending).unwrap();
        prop_assert_eq!(enc.gpu.byte_views(), again.gpu.byte_views());

        // One node side shared by groups of the queue encodes each group as alone.
        let side = NodeSide::build(&state).unwrap();
        prop_assert_eq!(&encode_with(&side, &state, &pending).unwrap(), &enc);
        for group in pending.chunks(5) {
            prop_assert_eq!(encode_with(&side, &state, group).unwrap(), encode(&state, group).unwrap());
        }
    }
}
