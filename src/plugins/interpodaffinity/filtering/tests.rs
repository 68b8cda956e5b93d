use super::*;
use crate::framework::Code;
use crate::model::testing::{NodeBuilder, PodBuilder, affinity_term, cluster};
use crate::model::{LabelSelector, MatchOp, PodAffinityTerm, Requirement};

const SECURITY_SCAN: (&str, &str) = ("service", "securityscan");

/// A term over `key` whose selector is the given requirements.
fn term(key: &str, reqs: Vec<Requirement>) -> PodAffinityTerm {
    let mut sel = LabelSelector { requirements: reqs };
    sel.normalize();
    PodAffinityTerm { label_selector: Some(sel), ..affinity_term(key, &[]) }
}

fn service_in(values: &[&str]) -> Requirement {
    Requirement::new("service", MatchOp::In, values)
}

/// machine1 in region r1, zone z11 (upstream's `labels1`).
fn machine1() -> NodeBuilder {
    NodeBuilder::new("machine1").label("region", "r1").label("zone", "z11")
}

fn run(pod: &Pod, cluster: &ClusterState, node: &str) -> Status {
    let pl = InterPodAffinity::default();
    let idx = cluster.node_index(node).expect("test node exists");
    match pl.pre_filter(pod, cluster) {
        Ok(state) => pl.filter(&state, pod, &cluster.nodes[idx]),
        Err(s) if s.code == Code::Skip => Status::success(),
        Err(s) => s,
    }
}

/// The expected rejection (code and reasons), `None` for success.
type Rejection = Option<(Code, String)>;

fn want(code: Code, reason: &str) -> Rejection {
    Some((code, reason.to_string()))
}

#[test]
fn required_affinity_on_a_single_node() {
    let aff = || PodBuilder::new("default", "p").label("security", "S1");
    let existing = || PodBuilder::new("default", "e").label(SECURITY_SCAN.0, SECURITY_SCAN.1);
    let not_match = want(Code::UnschedulableAndUnresolvable, ERR_REASON_AFFINITY_RULES_NOT_MATCH);
    let anti_not_match = want(Code::Unschedulable, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH);
    let existing_not_match =
        want(Code::Unschedulable, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH);
    let mut diff_ns = term("region", vec![service_in(&["securityscan", "value2"])]);
    diff_ns.namespaces = vec!["DiffNameSpace".to_string()];
    // (case, incoming pod, existing pods, expected rejection)
    let cases: Vec<(&str, Pod, Vec<Pod>, Rejection)> = vec![
        (
            "a pod without pod affinity can schedule onto a node with no existing pods",
            PodBuilder::new("default", "p").obj(),
            vec![],
            None,
        ),
        (
            "an In affinity term matching the existing pod's labels is satisfied",
            aff().pod_affinity(term("region", vec![service_in(&["securityscan", "value2"])])).obj(),
            vec![existing().node("machine1").obj()],
            None,
        ),
        (
            "a NotIn affinity term matching the existing pod's labels is satisfied",
            aff()
                .pod_affinity(term(
                    "region",
                    vec![Requirement::new("service", MatchOp::NotIn, &["securityscan3", "value3"])],
                ))
                .obj(),
            vec![existing().node("machine1").obj()],
            None,
        ),
        (
            "an affinity term restricted to another namespace is not satisfied by a pod in the pod's own namespace",
            aff().pod_affinity(diff_ns).obj(),
            vec![existing().node("machine1").obj()],
            not_match.clone(),
        ),
        (
            "an affinity term whose selector no existing pod matches is not satisfied",
            aff()
                .pod_affinity(term("region", vec![service_in(&["antivirusscan", "value2"])]))
                .obj(),
            vec![existing().node("machine1").obj()],
            not_match.clone(),
        ),
        (
            "several affinity terms with different operators are all satisfied by the existing pod",
            aff()
                .pod_affinity(term(
                    "region",
                    vec![
                        Requirement::new("service", MatchOp::Exists, &[]),
                        Requirement::new("wrongkey", MatchOp::DoesNotExist, &[]),
                    ],
                ))
                .pod_affinity(term(
                    "region",
                    vec![
                        service_in(&["securityscan"]),
                        Requirement::new("service", MatchOp::NotIn, &["WrongValue"]),
                    ],
                ))
                .obj(),
            vec![existing().node("machine1").obj()],
            None,
        ),
        (
            "selector requirements are ANDed, so one unmatched requirement fails the affinity",
            aff()
                .pod_affinity(term(
                    "region",
                    vec![
                        Requirement::new("service", MatchOp::Exists, &[]),
                        Requirement::new("wrongkey", MatchOp::DoesNotExist, &[]),
                    ],
                ))
                .pod_affinity(term(
                    "region",
                    vec![
                        service_in(&["securityscan2"]),
                        Requirement::new("service", MatchOp::NotIn, &["WrongValue"]),
                    ],
                ))
                .obj(),
            vec![existing().node("machine1").obj()],
            not_match.clone(),
        ),
        (
            "affinity and anti-affinity are both satisfied by the existing pod",
            aff()
                .pod_affinity(term("region", vec![service_in(&["securityscan", "value2"])]))
                .pod_anti_affinity(term("node", vec![service_in(&["antivirusscan", "value2"])]))
                .obj(),
            vec![existing().node("machine1").obj()],
            None,
        ),
        (
            "affinity, anti-affinity and the existing pod's anti-affinity (symmetry) are all satisfied",
            aff()
                .pod_affinity(term("region", vec![service_in(&["securityscan", "value2"])]))
                .pod_anti_affinity(term("node", vec![service_in(&["antivirusscan", "value2"])]))
                .obj(),
            vec![
                existing()
                    .pod_anti_affinity(term("node", vec![service_in(&["antivirusscan", "value2"])]))
                    .node("machine1")
                    .obj(),
            ],
            None,
        ),
        (
            "affinity is satisfied but the pod's anti-affinity to the same existing pod in its zone is not",
            aff()
                .pod_affinity(term("region", vec![service_in(&["securityscan", "value2"])]))
                .pod_anti_affinity(term("zone", vec![service_in(&["securityscan", "value2"])]))
                .obj(),
            vec![existing().node("machine1").obj()],
            anti_not_match.clone(),
        ),
        (
            "the pod's own terms are satisfied but the existing pod's anti-affinity selects it (symmetry)",
            PodBuilder::new("default", "p")
                .label(SECURITY_SCAN.0, SECURITY_SCAN.1)
                .pod_affinity(term("region", vec![service_in(&["securityscan", "value2"])]))
                .pod_anti_affinity(term("node", vec![service_in(&["antivirusscan", "value2"])]))
                .obj(),
            vec![
                existing()
                    .pod_anti_affinity(term("zone", vec![service_in(&["securityscan", "value2"])]))
                    .node("machine1")
                    .obj(),
            ],
            existing_not_match.clone(),
        ),
        (
            "an affinity term matched only by a pod in another region rejects the node",
            PodBuilder::new("default", "p")
                .label(SECURITY_SCAN.0, SECURITY_SCAN.1)
                .pod_affinity(term(
                    "region",
                    vec![Requirement::new("service", MatchOp::NotIn, &["securityscan", "value2"])],
                ))
                .obj(),
            vec![PodBuilder::new("default", "e").label("service", "other").node("machine2").obj()],
            not_match.clone(),
        ),
        (
            "an existing pod's anti-affinity is honoured when the incoming pod has no anti-affinity",
            PodBuilder::new("default", "p").label(SECURITY_SCAN.0, SECURITY_SCAN.1).obj(),
            vec![
                existing()
                    .pod_anti_affinity(term("zone", vec![service_in(&["securityscan", "value2"])]))
                    .node("machine1")
                    .obj(),
            ],
            existing_not_match.clone(),
        ),
        (
            "an existing pod's anti-affinity that does not select the incoming pod is satisfied",
            PodBuilder::new("default", "p").label(SECURITY_SCAN.0, SECURITY_SCAN.1).obj(),
            vec![
                existing()
                    .pod_anti_affinity(term(
                        "zone",
                        vec![Requirement::new(
                            "service",
                            MatchOp::NotIn,
                            &["securityscan", "value2"],
                        )],
                    ))
                    .node("machine1")
                    .obj(),
            ],
            None,
        ),
        (
            "an existing pod's anti-affinity over a key the node lacks does not block the node",
            PodBuilder::new("default", "p").label(SECURITY_SCAN.0, SECURITY_SCAN.1).obj(),
            vec![
                existing()
                    .pod_anti_affinity(term("rack", vec![service_in(&["securityscan"])]))
                    .node("machine1")
                    .obj(),
            ],
            None,
        ),
        (
            "the pod's anti-affinity over a key the node lacks is satisfied",
            aff().pod_anti_affinity(term("rack", vec![service_in(&["securityscan"])])).obj(),
            vec![existing().node("machine1").obj()],
            None,
        ),
        (
            "the pod's affinity over a key the node lacks is never satisfied",
            aff().pod_affinity(term("rack", vec![service_in(&["securityscan"])])).obj(),
            vec![existing().node("machine1").obj()],
            not_match.clone(),
        ),
    ];
    for (name, pod, existing_pods, expected) in cases {
        let c = cluster(
            vec![machine1().obj(), NodeBuilder::new("machine2").label("region", "r2").obj()],
            existing_pods,
        );
        let got = run(&pod, &c, "machine1");
        let got = (!got.is_success()).then(|| (got.code, got.reasons.join(", ")));
        assert_eq!(got, expected, "{name}");
    }
}

#[test]
fn required_affinity_across_nodes_and_the_first_pod_of_a_self_affine_group() {
    // Three nodes: machine1 and machine2 in region r1, machine3 in region r2; machine4 has
    // no region label.
    let nodes = || {
        vec![
            NodeBuilder::new("machine1").label("region", "r1").label("zone", "z1").obj(),
            NodeBuilder::new("machine2").label("region", "r1").label("zone", "z2").obj(),
            NodeBuilder::new("machine3").label("region", "r2").label("zone", "z3").obj(),
            NodeBuilder::new("machine4").label("zone", "z4").obj(),
        ]
    };
    let self_affine = |extra: &str| {
        PodBuilder::new("default", "p")
            .label("foo", "bar")
            .label("service", extra)
            .pod_affinity(affinity_term("region", &[("foo", "bar")]))
    };
    let ok = Code::Success;
    let aff = Code::UnschedulableAndUnresolvable;
    let anti = Code::Unschedulable;
    // (case, pod, existing pods, codes for machine1..4)
    let cases: Vec<(&str, Pod, Vec<Pod>, [Code; 4])> = vec![
        (
            "a matching pod in region r1 admits both r1 nodes only",
            self_affine("x").obj(),
            vec![PodBuilder::new("default", "e").label("foo", "bar").node("machine2").obj()],
            [ok, ok, aff, aff],
        ),
        (
            "the first pod of a self-affine group may go to any node that has the topology key",
            self_affine("x").obj(),
            vec![],
            [ok, ok, ok, aff],
        ),
        (
            "a pod that does not match its own affinity terms has no first-pod exception",
            PodBuilder::new("default", "p")
                .pod_affinity(affinity_term("region", &[("foo", "bar")]))
                .obj(),
            vec![],
            [aff, aff, aff, aff],
        ),
        (
            "a matching pod on a node without the key is not counted, so the first-pod exception holds",
            // The pod on machine4 matches but machine4 has no region: no pair is counted.
            self_affine("x").obj(),
            vec![PodBuilder::new("default", "e").label("foo", "bar").node("machine4").obj()],
            [ok, ok, ok, aff],
        ),
        (
            "a matching pod in another namespace does not count for an own-namespace term",
            self_affine("x").obj(),
            vec![PodBuilder::new("other", "e").label("foo", "bar").node("machine3").obj()],
            [ok, ok, ok, aff],
        ),
        (
            "with two terms an existing pod counts only if it matches both",
            self_affine("x").pod_affinity(affinity_term("zone", &[("service", "x")])).obj(),
            vec![
                PodBuilder::new("default", "e1").label("foo", "bar").node("machine1").obj(),
                PodBuilder::new("default", "e2").label("service", "x").node("machine3").obj(),
            ],
            // No pod matches both terms and the pod matches its own terms: first pod.
            [ok, ok, ok, aff],
        ),
        (
            "with two terms a pod matching both admits only nodes sharing every domain with it",
            self_affine("x").pod_affinity(affinity_term("zone", &[("service", "x")])).obj(),
            vec![
                PodBuilder::new("default", "e")
                    .label("foo", "bar")
                    .label("service", "x")
                    .node("machine1")
                    .obj(),
            ],
            [ok, aff, aff, aff],
        ),
        (
            "anti-affinity to pods in the same region rejects the region holding one",
            PodBuilder::new("default", "p")
                .pod_anti_affinity(affinity_term("region", &[("foo", "bar")]))
                .obj(),
            vec![PodBuilder::new("default", "e").label("foo", "bar").node("machine3").obj()],
            [ok, ok, anti, ok],
        ),
        (
            "an existing pod's anti-affinity over zone rejects only its own zone",
            PodBuilder::new("default", "p").label("foo", "bar").obj(),
            vec![
                PodBuilder::new("default", "e")
                    .pod_anti_affinity(affinity_term("zone", &[("foo", "bar")]))
                    .node("machine2")
                    .obj(),
            ],
            [ok, anti, ok, ok],
        ),
        (
            "an existing pod's anti-affinity over region rejects every node of that region",
            PodBuilder::new("default", "p").label("foo", "bar").obj(),
            vec![
                PodBuilder::new("default", "e")
                    .pod_anti_affinity(affinity_term("region", &[("foo", "bar")]))
                    .node("machine2")
                    .obj(),
            ],
            [anti, anti, ok, ok],
        ),
    ];
    for (name, pod, existing, codes) in cases {
        let c = cluster(nodes(), existing);
        for (i, node) in ["machine1", "machine2", "machine3", "machine4"].iter().enumerate() {
            let got = run(&pod, &c, node);
            assert_eq!(got.code, codes[i], "{name}: {node}: {got}");
        }
    }
}

#[test]
fn namespace_selectors_decide_which_pods_count() {
    // ns1 and ns2 are team a, ns3 team b. One pod labelled foo=bar in ns2 on machine1
    // (region r1); machine2 is region r2.
    let mut c = cluster(
        vec![
            NodeBuilder::new("machine1").label("region", "r1").obj(),
            NodeBuilder::new("machine2").label("region", "r2").obj(),
        ],
        vec![PodBuilder::new("ns2", "e").label("foo", "bar").node("machine1").obj()],
    );
    for (ns, team) in [("ns1", "a"), ("ns2", "a"), ("ns3", "b")] {
        c.namespace_labels.insert(ns.to_string(), [("team".to_string(), team.to_string())].into());
    }
    let with_ns_selector = |sel: Option<LabelSelector>, namespaces: &[&str]| PodAffinityTerm {
        namespace_selector: sel,
        namespaces: namespaces.iter().map(|n| (*n).to_string()).collect(),
        ..affinity_term("region", &[("foo", "bar")])
    };
    let team = |t: &str| Some(LabelSelector::from_match_labels([("team", t)]));
    let ok = Code::Success;
    let aff = Code::UnschedulableAndUnresolvable;
    let anti = Code::Unschedulable;
    // (case, pod, codes for machine1, machine2)
    let cases: Vec<(&str, Pod, [Code; 2])> = vec![
        (
            "an affinity term with a namespace selector counts pods in selected namespaces",
            PodBuilder::new("ns1", "p").pod_affinity(with_ns_selector(team("a"), &[])).obj(),
            [ok, aff],
        ),
        (
            "an affinity term with a namespace selector ignores pods in unselected namespaces",
            PodBuilder::new("ns1", "p").pod_affinity(with_ns_selector(team("b"), &[])).obj(),
            [aff, aff],
        ),
        (
            "an empty namespace selector counts pods in every namespace",
            PodBuilder::new("ns3", "p")
                .pod_affinity(with_ns_selector(Some(LabelSelector::default()), &[]))
                .obj(),
            [ok, aff],
        ),
        (
            "listed namespaces are unioned with the selected ones",
            PodBuilder::new("ns1", "p").pod_affinity(with_ns_selector(team("b"), &["ns2"])).obj(),
            [ok, aff],
        ),
        (
            "an anti-affinity term with a namespace selector rejects the region of a selected pod",
            PodBuilder::new("ns3", "p").pod_anti_affinity(with_ns_selector(team("a"), &[])).obj(),
            [anti, ok],
        ),
        (
            "an anti-affinity term without namespaces ignores pods of other namespaces",
            PodBuilder::new("ns3", "p")
                .pod_anti_affinity(affinity_term("region", &[("foo", "bar")]))
                .obj(),
            [ok, ok],
        ),
    ];
    for (name, pod, codes) in cases {
        for (i, node) in ["machine1", "machine2"].iter().enumerate() {
            assert_eq!(run(&pod, &c, node).code, codes[i], "{name}: {node}");
        }
    }
}

#[test]
fn an_existing_pods_anti_affinity_namespace_selector_is_matched_against_the_incoming_pods_namespace_labels()
 {
    let existing_term = |sel: LabelSelector| PodAffinityTerm {
        namespace_selector: Some(sel),
        ..affinity_term("region", &[("foo", "bar")])
    };
    let mut c = cluster(
        vec![NodeBuilder::new("machine1").label("region", "r1").obj()],
        vec![
            PodBuilder::new("ns-e", "e")
                .pod_anti_affinity(existing_term(LabelSelector::from_match_labels([("team", "a")])))
                .node("machine1")
                .obj(),
        ],
    );
    c.namespace_labels.insert("ns-a".into(), [("team".to_string(), "a".to_string())].into());
    c.namespace_labels.insert("ns-b".into(), [("team".to_string(), "b".to_string())].into());
    let cases = [
        ("an incoming pod in a selected namespace is repelled", "ns-a", Code::Unschedulable),
        ("an incoming pod in an unselected namespace is not", "ns-b", Code::Success),
        (
            "an incoming pod in a namespace missing from the snapshot has no labels",
            "ns-x",
            Code::Success,
        ),
    ];
    for (name, ns, code) in cases {
        let pod = PodBuilder::new(ns, "p").label("foo", "bar").obj();
        assert_eq!(run(&pod, &c, "machine1").code, code, "{name}");
    }
}

#[test]
fn pre_filter_skips_when_nothing_applies() {
    let c = cluster(
        vec![NodeBuilder::new("machine1").label("region", "r1").obj()],
        vec![
            PodBuilder::new("default", "e")
                .pod_anti_affinity(affinity_term("region", &[("app", "db")]))
                .node("machine1")
                .obj(),
        ],
    );
    let pl = InterPodAffinity::default();
    let plain = PodBuilder::new("default", "p").label("app", "web").obj();
    let err = pl.pre_filter(&plain, &c).expect_err("no terms apply");
    assert_eq!(err.code, Code::Skip);
    // Preferred-only terms do not make the filter apply either.
    let preferred = PodBuilder::new("default", "p")
        .preferred_pod_affinity(10, affinity_term("region", &[("app", "db")]))
        .obj();
    assert_eq!(pl.pre_filter(&preferred, &c).expect_err("skip").code, Code::Skip);
    // An existing pod's anti-affinity that selects the incoming pod makes it apply.
    let db = PodBuilder::new("default", "p").label("app", "db").obj();
    let state = pl.pre_filter(&db, &c).expect("applies");
    assert_eq!(state.existing_anti_affinity_counts.get("region", "r1"), 1);
}

#[test]
fn pre_filter_counts_match_upstream_state() {
    // Adapted from upstream's TestPreFilterStateAddRemovePod: nodeA (r1,z11), nodeB
    // (r1,z12), nodeC (r2,z21).
    let c = cluster(
        vec![
            NodeBuilder::new("nodeA").label("region", "r1").label("zone", "z11").obj(),
            NodeBuilder::new("nodeB").label("region", "r1").label("zone", "z12").obj(),
            NodeBuilder::new("nodeC").label("region", "r2").label("zone", "z21").obj(),
        ],
        vec![
            PodBuilder::new("default", "a").label("service", "securityscan").node("nodeA").obj(),
            PodBuilder::new("default", "b")
                .label("service", "securityscan")
                .label("team", "x")
                .node("nodeB")
                .obj(),
            PodBuilder::new("default", "c")
                .pod_anti_affinity(affinity_term("zone", &[("app", "incoming")]))
                .node("nodeC")
                .obj(),
        ],
    );
    let pod = PodBuilder::new("default", "p")
        .label("app", "incoming")
        .pod_affinity(affinity_term("region", &[("service", "securityscan")]))
        .pod_affinity(affinity_term("zone", &[("team", "x")]))
        .pod_anti_affinity(affinity_term("region", &[("service", "securityscan")]))
        .obj();
    let state = InterPodAffinity::default().pre_filter(&pod, &c).expect("applies");
    let collect = |t: &TopologyCounts| {
        t.iter().map(|(k, v, n)| (k.to_string(), v.to_string(), n)).collect::<Vec<_>>()
    };
    let s = |k: &str, v: &str, n: i64| (k.to_string(), v.to_string(), n);
    // Only pod b matches both affinity terms; its node adds to both keys' pairs.
    assert_eq!(collect(&state.affinity_counts), vec![s("region", "r1", 1), s("zone", "z12", 1)]);
    // Pods a and b match the anti-affinity term, both in region r1.
    assert_eq!(collect(&state.anti_affinity_counts), vec![s("region", "r1", 2)]);
    // Pod c's anti-affinity selects the incoming pod.
    assert_eq!(collect(&state.existing_anti_affinity_counts), vec![s("zone", "z21", 1)]);
    assert!(!state.pod_matches_own_affinity_terms);
}

#[test]
fn remove_pod_equals_pre_filter_without_the_pod_and_add_pod_restores_it() {
    let nodes = || {
        vec![
            NodeBuilder::new("nodeA").label("region", "r1").label("zone", "z11").obj(),
            NodeBuilder::new("nodeB").label("region", "r1").label("zone", "z12").obj(),
            NodeBuilder::new("nodeC").label("region", "r2").label("zone", "z21").obj(),
        ]
    };
    let pods = vec![
        PodBuilder::new("default", "a")
            .label("service", "securityscan")
            .label("team", "x")
            .node("nodeA")
            .obj(),
        PodBuilder::new("default", "b")
            .label("service", "securityscan")
            .label("team", "x")
            .node("nodeB")
            .obj(),
        PodBuilder::new("default", "c")
            .label("service", "securityscan")
            .pod_anti_affinity(affinity_term("zone", &[("app", "incoming")]))
            .node("nodeC")
            .obj(),
        PodBuilder::new("other", "d")
            .label("service", "securityscan")
            .pod_anti_affinity(PodAffinityTerm {
                namespace_selector: Some(LabelSelector::default()),
                ..affinity_term("region", &[("app", "incoming")])
            })
            .node("nodeB")
            .obj(),
    ];
    let pod = PodBuilder::new("default", "p")
        .label("app", "incoming")
        .pod_affinity(affinity_term("region", &[("service", "securityscan")]))
        .pod_affinity(affinity_term("zone", &[("team", "x")]))
        .pod_anti_affinity(affinity_term("zone", &[("service", "securityscan")]))
        .obj();
    let pl = InterPodAffinity::default();
    let full = cluster(nodes(), pods.clone());
    let full_state = pl.pre_filter(&pod, &full).expect("applies");
    for removed in &pods {
        let rest: Vec<Pod> = pods.iter().filter(|p| p.name != removed.name).cloned().collect();
        let without = cluster(nodes(), rest);
        let want = pl.pre_filter(&pod, &without).expect("applies");
        let node =
            &full.nodes[full.node_index(removed.node_name.as_deref().unwrap_or("")).expect("node")];
        let mut got = full_state.clone();
        got.remove_pod(removed, node);
        assert_eq!(got, want, "removing {}", removed.name);
        got.add_pod(removed, node);
        assert_eq!(got, full_state, "adding {} back", removed.name);
    }
}
