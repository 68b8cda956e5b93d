//! Tests of the dense encoding: resources, lists, compiled requirements and selectors.

use super::*;
use crate::encode::encode;
use crate::model::testing::{
    GI, MI, NodeBuilder, PodBuilder, affinity_term, cluster, node_term, spread_constraint,
};
use crate::model::{LabelSelector, NodeSelectorTerm, TolerationOperator, UnsatisfiableAction};

#[test]
fn node_requested_is_the_sum_of_rounded_up_pod_requests() {
    let state = cluster(
        vec![NodeBuilder::new("n1").cpu(4000).memory(8 * GI + 1).pods(110).obj()],
        vec![
            PodBuilder::new("d", "a").cpu(100).memory(MI + 1).node("n1").obj(),
            PodBuilder::new("d", "b").cpu(0).memory(0).node("n1").obj(),
        ],
    );
    let enc = encode(&state, &[]).unwrap();
    let t = &enc.tensors;
    assert_eq!(
        t.node_allocatable.row(0).to_vec()[..4],
        [4000, 8192, 0, 110],
        "allocatable rounds down"
    );
    assert_eq!(
        t.node_requested.row(0).to_vec()[..4],
        [100, 2, 0, 2],
        "1 MiB + 1 byte rounds up to 2; 2 pods"
    );
    // Non-zero: pod b counts 100m and 200 MiB.
    assert_eq!(t.node_nonzero_requested.row(0).to_vec()[..4], [200, 202, 0, 2]);
    assert_eq!(t.node_flags[0] & NODE_INEXACT_UNITS, NODE_INEXACT_UNITS);
}

#[test]
fn class_requests_round_up_and_count_one_pod() {
    let pending = vec![
        PodBuilder::new("d", "a").cpu(250).memory(100 * MI).scalar("nvidia.com/gpu", 2).obj(),
        PodBuilder::new("d", "b").memory(1_000_000_000).obj(),
    ];
    let state = cluster(vec![NodeBuilder::new("n1").obj()], vec![]);
    let enc = encode(&state, &pending).unwrap();
    let t = &enc.tensors;
    let gpu = enc.dicts.resources.column("nvidia.com/gpu").unwrap();
    assert_eq!(t.class_requests.row(0).to_vec(), vec![250, 100, 0, 1, 2]);
    assert_eq!(t.class_nonzero_requests.row(0)[gpu], 2);
    assert_eq!(t.class_requests.row(1).to_vec(), vec![0, 954, 0, 1, 0]);
    assert_eq!(
        t.class_nonzero_requests.row(1).to_vec()[..2],
        [100, 954],
        "cpu 0 counts 100m when scoring"
    );
    assert_eq!(t.class_flags[0] & CLASS_INEXACT_UNITS, 0, "whole MiB are exact");
    assert_eq!(t.class_flags[1] & CLASS_INEXACT_UNITS, CLASS_INEXACT_UNITS, "1G is not whole MiB");
}

#[test]
fn node_lists_and_flags_follow_the_dictionaries() {
    let state = cluster(
        vec![
            NodeBuilder::new("n1")
                .label("topology.kubernetes.io/zone", "a")
                .taint("gpu", "", TaintEffect::NoSchedule)
                .taint("spot", "", TaintEffect::PreferNoSchedule)
                .unschedulable()
                .obj(),
            NodeBuilder::new("n2").obj(),
        ],
        vec![PodBuilder::new("d", "a").host_port("", "TCP", 80).label("app", "x").node("n2").obj()],
    );
    let enc = encode(&state, &[]).unwrap();
    let (t, d) = (&enc.tensors, &enc.dicts);
    assert_eq!(t.node_flags.to_vec(), vec![NODE_UNSCHEDULABLE, 0]);
    assert_eq!(t.node_taints.row(0), &[0, 1]);
    assert_eq!(t.taint_effects, vec![EFFECT_NO_SCHEDULE, EFFECT_PREFER_NO_SCHEDULE]);
    let zone = d.topology_keys.id("topology.kubernetes.io/zone").unwrap() as usize;
    assert_eq!(t.node_domains[[0, zone]], 0);
    assert_eq!(t.node_domains[[1, zone]], NONE, "a node without the key has no domain");
    assert_eq!(t.node_used_ports.row(1), &[0]);
    assert_eq!(t.node_bound_pods.row(1), &[0]);
    assert_eq!(t.bound_pod_node.to_vec(), vec![1]);
    assert_eq!(t.bound_pod_labels.row(0), &[d.label_pairs.id("app", "x").unwrap()]);
}

#[test]
fn class_tolerations_resolve_to_tolerated_taints() {
    let state = cluster(
        vec![
            NodeBuilder::new("n1")
                .taint("gpu", "", TaintEffect::NoSchedule)
                .taint("spot", "yes", TaintEffect::PreferNoSchedule)
                .obj(),
        ],
        vec![],
    );
    let pending = vec![
        PodBuilder::new("d", "plain").obj(),
        PodBuilder::new("d", "gpu").toleration("gpu", TolerationOperator::Exists, "", None).obj(),
        PodBuilder::new("d", "all").toleration("", TolerationOperator::Exists, "", None).obj(),
        PodBuilder::new("d", "cordon")
            .toleration(
                UNSCHEDULABLE_TAINT_KEY,
                TolerationOperator::Exists,
                "",
                Some(TaintEffect::NoSchedule),
            )
            .obj(),
    ];
    let enc = encode(&state, &pending).unwrap();
    let t = &enc.tensors;
    assert_eq!(
        t.class_tolerated_taints.row(0),
        &[] as &[u32],
        "a pod without tolerations tolerates nothing"
    );
    assert_eq!(
        t.class_tolerated_taints.row(1),
        &[0],
        "the gpu toleration tolerates only the gpu taint"
    );
    assert_eq!(
        t.class_tolerated_taints.row(2),
        &[0, 1],
        "an empty-key Exists toleration tolerates all"
    );
    let tol = |c: usize| t.class_flags[c] & CLASS_TOLERATES_UNSCHEDULABLE != 0;
    assert_eq!((tol(0), tol(1), tol(2), tol(3)), (false, false, true, true));
}

#[test]
fn compiled_node_affinity_agrees_with_the_model() {
    let nodes = vec![
        NodeBuilder::new("n1").label("zone", "a").label("cores", "8").obj(),
        NodeBuilder::new("n2").label("zone", "b").label("cores", "16").obj(),
        NodeBuilder::new("n3").label("zone", "c").obj(),
        NodeBuilder::new("n4").obj(),
    ];
    let state = cluster(nodes, vec![]);
    let r = Requirement::new;
    let field = |op, vals: &[&str]| NodeSelectorTerm {
        match_fields: vec![r("metadata.name", op, vals)],
        ..Default::default()
    };
    let terms: Vec<(&str, Vec<NodeSelectorTerm>)> = vec![
        ("In picks listed zones", vec![node_term(vec![r("zone", MatchOp::In, &["a", "c"])])]),
        (
            "NotIn also matches nodes without the key",
            vec![node_term(vec![r("zone", MatchOp::NotIn, &["a"])])],
        ),
        ("Exists needs the key", vec![node_term(vec![r("cores", MatchOp::Exists, &[])])]),
        (
            "DoesNotExist needs its absence",
            vec![node_term(vec![r("zone", MatchOp::DoesNotExist, &[])])],
        ),
        ("Gt compares integers", vec![node_term(vec![r("cores", MatchOp::Gt, &["10"])])]),
        ("Lt compares integers", vec![node_term(vec![r("cores", MatchOp::Lt, &["10"])])]),
        (
            "an unknown key with In matches nothing",
            vec![node_term(vec![r("rack", MatchOp::In, &["x"])])],
        ),
        (
            "terms are ORed",
            vec![node_term(vec![r("zone", MatchOp::In, &["a"])]), field(MatchOp::In, &["n4"])],
        ),
        ("a field NotIn excludes one node", vec![field(MatchOp::NotIn, &["n2"])]),
        ("an empty term matches nothing", vec![NodeSelectorTerm::default()]),
        ("no terms match nothing", vec![]),
        (
            "requirements in a term are ANDed",
            vec![node_term(vec![
                r("zone", MatchOp::Exists, &[]),
                r("cores", MatchOp::DoesNotExist, &[]),
            ])],
        ),
    ];
    let pending: Vec<_> = terms
        .iter()
        .enumerate()
        .map(|(i, (_, ts))| {
            PodBuilder::new("d", &format!("p{i}")).required_node_affinity(ts.clone()).obj()
        })
        .collect();
    let enc = encode(&state, &pending).unwrap();
    for (i, (name, _)) in terms.iter().enumerate() {
        let class = enc.classes.pod_class[i] as usize;
        let want: Vec<bool> = state
            .nodes
            .iter()
            .map(|n| {
                pending[i]
                    .node_affinity
                    .required
                    .as_ref()
                    .is_some_and(|s| s.matches(&n.name, &n.labels))
            })
            .collect();
        let got: Vec<bool> = (0..state.nodes.len())
            .map(|n| enc.tensors.class_required_node_affinity_matches(class, n))
            .collect();
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn node_selectors_and_label_selectors_compile() {
    let state = cluster(
        vec![
            NodeBuilder::new("n1").label("disk", "ssd").obj(),
            NodeBuilder::new("n2").label("disk", "hdd").obj(),
        ],
        vec![PodBuilder::new("d", "old").label("app", "web").node("n1").obj()],
    );
    let pending = vec![
        PodBuilder::new("d", "p")
            .node_selector("disk", "ssd")
            .spread(spread_constraint(
                1,
                "kubernetes.io/hostname",
                UnsatisfiableAction::DoNotSchedule,
                &[("app", "web")],
            ))
            .obj(),
    ];
    let enc = encode(&state, &pending).unwrap();
    let t = &enc.tensors;
    assert!(t.class_required_node_affinity_matches(0, 0), "the ssd node matches the nodeSelector");
    assert!(!t.class_required_node_affinity_matches(0, 1), "the hdd node does not");
    let row = t.spread[t.class_spread.row(0)[0] as usize];
    assert_eq!(row.flags & SPREAD_DO_NOT_SCHEDULE, SPREAD_DO_NOT_SCHEDULE);
    assert_eq!(row.topology_key, enc.dicts.topology_keys.id("kubernetes.io/hostname").unwrap());
    assert!(
        t.selector_matches(row.selector, t.bound_pod_labels.row(0)),
        "the selector matches the bound web pod"
    );
    assert!(!t.selector_matches(row.selector, &[]), "and not an unlabelled pod");
    assert!(!t.selector_matches(NONE, &[]), "a nil selector matches nothing");
    let everything = enc.dicts.selectors.id(&LabelSelector::default());
    assert_eq!(everything, None, "no empty selector was used");
}

#[test]
fn affinity_terms_resolve_their_namespaces() {
    let mut state = cluster(vec![NodeBuilder::new("n1").obj()], vec![]);
    for (ns, team) in [("a", "x"), ("b", "y"), ("c", "x")] {
        state
            .namespace_labels
            .insert(ns.to_string(), [("team".to_string(), team.to_string())].into());
    }
    let mut by_selector = affinity_term("kubernetes.io/hostname", &[("app", "db")]);
    by_selector.namespace_selector = Some(LabelSelector::from_match_labels([("team", "x")]));
    let mut listed = affinity_term("kubernetes.io/hostname", &[("app", "db")]);
    listed.namespaces = vec!["b".to_string()];
    let mut all = affinity_term("kubernetes.io/hostname", &[("app", "db")]);
    all.namespace_selector = Some(LabelSelector::default());
    let pending = vec![
        PodBuilder::new("b", "own")
            .pod_affinity(affinity_term("kubernetes.io/hostname", &[("app", "db")]))
            .obj(),
        PodBuilder::new("b", "sel").pod_affinity(by_selector).obj(),
        PodBuilder::new("a", "list").preferred_pod_anti_affinity(7, listed).obj(),
        PodBuilder::new("a", "all").pod_anti_affinity(all).obj(),
    ];
    let enc = encode(&state, &pending).unwrap();
    let (t, d) = (&enc.tensors, &enc.dicts);
    let ns =
        |names: &[&str]| names.iter().map(|n| d.namespaces.id(*n).unwrap()).collect::<Vec<_>>();
    let row = |c: usize| t.class_affinity.row(c)[0] as usize;
    let cases: [(&str, usize, Vec<u32>, u32, i32); 4] = [
        (
            "no namespaces and no selector means the pod's own namespace",
            0,
            ns(&["b"]),
            AFFINITY_REQUIRED,
            0,
        ),
        (
            "a namespace selector picks namespaces by label",
            1,
            ns(&["a", "c"]),
            AFFINITY_REQUIRED,
            0,
        ),
        ("listed namespaces are taken as given", 2, ns(&["b"]), ANTI_AFFINITY_PREFERRED, 7),
        (
            "an empty namespace selector picks every namespace",
            3,
            ns(&["a", "b", "c"]),
            ANTI_AFFINITY_REQUIRED,
            0,
        ),
    ];
    for (name, class, want, kind, weight) in cases {
        assert_eq!(t.affinity_namespaces.row(row(class)), want.as_slice(), "{name}");
        assert_eq!(
            (t.affinity[row(class)].kind, t.affinity[row(class)].weight),
            (kind, weight),
            "{name}"
        );
    }
    assert_eq!(t.affinity[row(3)].flags, AFFINITY_ALL_NAMESPACES);
}

#[test]
fn large_sets_are_stored_as_complements() {
    let nodes: Vec<_> = (0..10).map(|i| NodeBuilder::new(&format!("n{i}")).obj()).collect();
    let state = cluster(nodes, vec![]);
    let pending = vec![
        PodBuilder::new("d", "p")
            .required_node_affinity(vec![node_term(vec![Requirement::new(
                "kubernetes.io/hostname",
                MatchOp::Gt,
                &["-1"],
            )])])
            .obj(),
        PodBuilder::new("d", "q")
            .required_node_affinity(vec![node_term(vec![Requirement::new(
                "kubernetes.io/hostname",
                MatchOp::Exists,
                &[],
            )])])
            .obj(),
    ];
    let enc = encode(&state, &pending).unwrap();
    let t = &enc.tensors;
    for r in &t.requirements {
        assert!(r.set_count <= 5, "no set holds more than half its key's pairs: {r:?}");
    }
    assert!(
        (0..10).all(|n| t.class_required_node_affinity_matches(1, n)),
        "Exists matches every node"
    );
    assert!(
        (0..10).all(|n| !t.class_required_node_affinity_matches(0, n)),
        "Gt on non-integers matches none"
    );
}
