//! Tests of the checker: every rule broken once and detected, valid plans accepted, and every
//! plan the sequential `baseline` scheduler produces found valid (a property test).

use proptest::prelude::*;

use super::*;
use crate::baseline::{BaselineOptions, run_baseline};
use crate::framework::config::SchedulerConfig;
use crate::model::testing::{
    GI, NodeBuilder, PodBuilder, affinity_term, cluster, spread_constraint,
};
use crate::model::{
    GangConvention, LabelSelector, MatchOp, PodAffinityTerm, Requirement, TaintEffect,
    TolerationOperator, UnsatisfiableAction,
};
use crate::plan::{Eviction, Placement, Unschedulable};

fn place(pod: &str, node: &str) -> Placement {
    Placement { pod: pod.to_string(), node: node.to_string() }
}

fn unsched(pod: &str) -> Unschedulable {
    Unschedulable { pod: pod.to_string(), message: String::new(), reasons: BTreeMap::new() }
}

fn evict(pod: &str, node: &str, preemptor: &str) -> Eviction {
    Eviction { pod: pod.to_string(), node: node.to_string(), preemptor: preemptor.to_string() }
}

fn plan(placements: Vec<Placement>, evictions: Vec<Eviction>, un: Vec<Unschedulable>) -> Plan {
    Plan { placements, evictions, unschedulable: un, ..Default::default() }
}

fn zone_node(name: &str, zone: &str) -> NodeBuilder {
    NodeBuilder::new(name).cpu(4000).memory(8 * GI).label("zone", zone)
}

/// One scenario: a snapshot, its pending pods, a plan, and the kinds the checker must report
/// (sorted; empty for a valid plan).
struct Case {
    name: &'static str,
    state: ClusterState,
    pending: Vec<Pod>,
    plan: Plan,
    want: Vec<ViolationKind>,
}

fn run_cases(cases: Vec<Case>) {
    for case in cases {
        let report = check(&case.state, &case.pending, &case.plan);
        let mut got: Vec<ViolationKind> = report.violations.iter().map(|v| v.kind).collect();
        got.sort();
        assert_eq!(got, case.want, "{}: {:#?}", case.name, report.violations);
    }
}

fn two_nodes() -> ClusterState {
    cluster(vec![zone_node("n1", "a").obj(), zone_node("n2", "b").obj()], vec![])
}

#[test]
fn bookkeeping_errors_are_reported() {
    use ViolationKind as K;
    let web = || PodBuilder::new("d", "web").cpu(100).obj();
    let db = || PodBuilder::new("d", "db").cpu(100).obj();
    let bound = cluster(
        vec![zone_node("n1", "a").obj()],
        vec![PodBuilder::new("d", "old").node("n1").obj()],
    );
    run_cases(vec![
        Case {
            name: "a plan placing every pending pod on a roomy node is valid",
            state: two_nodes(),
            pending: vec![web(), db()],
            plan: plan(vec![place("d/web", "n1"), place("d/db", "n2")], vec![], vec![]),
            want: vec![],
        },
        Case {
            name: "a plan listing an unplaceable pod as unschedulable is valid",
            state: two_nodes(),
            pending: vec![web()],
            plan: plan(vec![], vec![], vec![unsched("d/web")]),
            want: vec![],
        },
        Case {
            name: "placing a pod that is not pending is reported",
            state: two_nodes(),
            pending: vec![web()],
            plan: plan(vec![place("d/web", "n1"), place("d/ghost", "n1")], vec![], vec![]),
            want: vec![K::UnknownPod],
        },
        Case {
            name: "placing an already bound pod is reported",
            state: bound.clone(),
            pending: vec![],
            plan: plan(vec![place("d/old", "n1")], vec![], vec![]),
            want: vec![K::UnknownPod],
        },
        Case {
            name: "placing a pod on a node that does not exist is reported (and the pod missing)",
            state: two_nodes(),
            pending: vec![web()],
            plan: plan(vec![place("d/web", "n9")], vec![], vec![]),
            want: vec![K::UnknownNode, K::MissingPod],
        },
        Case {
            name: "placing a pod twice is reported",
            state: two_nodes(),
            pending: vec![web()],
            plan: plan(vec![place("d/web", "n1"), place("d/web", "n2")], vec![], vec![]),
            want: vec![K::DuplicatePlacement],
        },
        Case {
            name: "a pod both placed and unschedulable is reported",
            state: two_nodes(),
            pending: vec![web()],
            plan: plan(vec![place("d/web", "n1")], vec![], vec![unsched("d/web")]),
            want: vec![K::PlacedAndUnschedulable],
        },
        Case {
            name: "a pod listed twice as unschedulable is reported",
            state: two_nodes(),
            pending: vec![web()],
            plan: plan(vec![], vec![], vec![unsched("d/web"), unsched("d/web")]),
            want: vec![K::DuplicateUnschedulable],
        },
        Case {
            name: "an unknown unschedulable pod is reported",
            state: two_nodes(),
            pending: vec![web()],
            plan: plan(vec![place("d/web", "n1")], vec![], vec![unsched("d/nope")]),
            want: vec![K::UnknownPod],
        },
        Case {
            name: "a pending pod missing from the plan is reported",
            state: two_nodes(),
            pending: vec![web(), db()],
            plan: plan(vec![place("d/web", "n1")], vec![], vec![]),
            want: vec![K::MissingPod],
        },
    ]);
}

#[test]
fn node_rules_are_checked() {
    use ViolationKind as K;
    let state = cluster(
        vec![
            zone_node("cordoned", "a").unschedulable().obj(),
            zone_node("tainted", "a").taint("gpu", "yes", TaintEffect::NoSchedule).obj(),
            zone_node("draining", "a").taint("drain", "", TaintEffect::NoExecute).obj(),
            zone_node("soft", "a").taint("meh", "", TaintEffect::PreferNoSchedule).obj(),
            zone_node("plain", "b").label("disk", "hdd").obj(),
        ],
        vec![],
    );
    let p = |name: &str| PodBuilder::new("d", name).cpu(100);
    let one = |pod: Pod, node: &str| -> (Vec<Pod>, Plan) {
        let key = pod.key();
        (vec![pod], plan(vec![place(&key, node)], vec![], vec![]))
    };
    let mut cases = Vec::new();
    let table: Vec<(&'static str, Pod, &str, Vec<ViolationKind>)> = vec![
        ("a pod on a cordoned node is reported", p("a").obj(), "cordoned", vec![K::NodeCordoned]),
        (
            "a pod tolerating the unschedulable taint may go to a cordoned node",
            p("b")
                .toleration(
                    rules::UNSCHEDULABLE_TAINT_KEY,
                    TolerationOperator::Exists,
                    "",
                    Some(TaintEffect::NoSchedule),
                )
                .obj(),
            "cordoned",
            vec![],
        ),
        (
            "a pod on a node with an untolerated NoSchedule taint is reported",
            p("c").obj(),
            "tainted",
            vec![K::UntoleratedTaint],
        ),
        (
            "a pod on a node with an untolerated NoExecute taint is reported",
            p("c2").obj(),
            "draining",
            vec![K::UntoleratedTaint],
        ),
        (
            "a pod with a toleration for the node's NoSchedule taint fits",
            p("d").toleration("gpu", TolerationOperator::Equal, "yes", None).obj(),
            "tainted",
            vec![],
        ),
        ("a PreferNoSchedule taint is not a hard rule", p("e").obj(), "soft", vec![]),
        (
            "a node missing the nodeSelector label is reported",
            p("f").node_selector("disk", "ssd").obj(),
            "plain",
            vec![K::NodeSelectorMismatch],
        ),
        (
            "a node with the nodeSelector label fits",
            p("g").node_selector("disk", "hdd").obj(),
            "plain",
            vec![],
        ),
        (
            "a node outside the required node affinity is reported",
            p("h")
                .required_node_affinity(vec![crate::model::testing::node_term(vec![
                    Requirement::new("zone", MatchOp::In, &["a"]),
                ])])
                .obj(),
            "plain",
            vec![K::NodeAffinityMismatch],
        ),
        (
            "a node in the required node affinity fits",
            p("i")
                .required_node_affinity(vec![crate::model::testing::node_term(vec![
                    Requirement::new("zone", MatchOp::In, &["b"]),
                ])])
                .obj(),
            "plain",
            vec![],
        ),
    ];
    for (name, pod, node, want) in table {
        let (pending, plan) = one(pod, node);
        cases.push(Case { name, state: state.clone(), pending, plan, want });
    }
    run_cases(cases);
}

#[test]
fn capacity_and_ports_are_checked() {
    use ViolationKind as K;
    let state = cluster(
        vec![
            zone_node("n1", "a")
                .pods(3)
                .ephemeral_storage(10 * GI)
                .scalar("nvidia.com/gpu", 1)
                .obj(),
        ],
        vec![
            PodBuilder::new("d", "busy")
                .cpu(3000)
                .memory(2 * GI)
                .host_port("", "TCP", 80)
                .node("n1")
                .obj(),
        ],
    );
    let p = |name: &str| PodBuilder::new("d", name);
    let cases: Vec<(&'static str, Vec<Pod>, Vec<ViolationKind>)> = vec![
        ("a pod that fits the room left fits", vec![p("a").cpu(1000).memory(6 * GI).obj()], vec![]),
        (
            "a pod asking for more cpu than is left is reported",
            vec![p("b").cpu(1001).obj()],
            vec![K::InsufficientResource],
        ),
        (
            "a pod asking for more memory than is left is reported",
            vec![p("c").memory(6 * GI + 1).obj()],
            vec![K::InsufficientResource],
        ),
        (
            "a pod asking for more ephemeral storage than allocatable is reported",
            vec![p("d").ephemeral_storage(11 * GI).obj()],
            vec![K::InsufficientResource],
        ),
        (
            "a pod asking for an extended resource the node lacks is reported",
            vec![p("e").scalar("example.com/foo", 1).obj()],
            vec![K::InsufficientResource],
        ),
        (
            "two pods sharing the last gpu are reported once, for the second",
            vec![
                p("f").scalar("nvidia.com/gpu", 1).obj(),
                p("g").scalar("nvidia.com/gpu", 1).obj(),
            ],
            vec![K::InsufficientResource],
        ),
        (
            "a fourth pod on a node allowing three is reported",
            vec![p("h").obj(), p("i").obj(), p("i2").obj()],
            vec![K::TooManyPods],
        ),
        (
            "a pod asking for a host port in use is reported",
            vec![p("j").host_port("10.0.0.1", "TCP", 80).obj()],
            vec![K::HostPortConflict],
        ),
        (
            "a pod asking for another host port fits",
            vec![p("k").host_port("", "UDP", 80).obj()],
            vec![],
        ),
    ];
    run_cases(
        cases
            .into_iter()
            .map(|(name, pending, want)| {
                let placements = pending.iter().map(|p| place(&p.key(), "n1")).collect();
                Case {
                    name,
                    state: state.clone(),
                    pending,
                    plan: plan(placements, vec![], vec![]),
                    want,
                }
            })
            .collect(),
    );
}

#[test]
fn capacity_counts_evictions_first() {
    // The victim's room is usable by any placement, whatever its position in the plan.
    let state = cluster(
        vec![zone_node("n1", "a").obj()],
        vec![PodBuilder::new("d", "low").cpu(4000).priority(1).node("n1").obj()],
    );
    let pending = vec![
        PodBuilder::new("d", "small").cpu(1000).priority(5).obj(),
        PodBuilder::new("d", "big").cpu(3000).priority(10).obj(),
    ];
    let p = plan(
        vec![place("d/small", "n1"), place("d/big", "n1")],
        vec![evict("d/low", "n1", "d/big")],
        vec![],
    );
    assert!(check(&state, &pending, &p).is_valid());
}

#[test]
fn inter_pod_rules_are_checked() {
    use ViolationKind as K;
    let nodes = || {
        vec![
            zone_node("a1", "a").obj(),
            zone_node("a2", "a").obj(),
            zone_node("b1", "b").obj(),
            zone_node("c1", "c").obj(),
            NodeBuilder::new("nozone").cpu(4000).memory(8 * GI).obj(),
        ]
    };
    let web = |name: &str| PodBuilder::new("d", name).cpu(100).label("app", "web");
    let anti = |name: &str| web(name).pod_anti_affinity(affinity_term("zone", &[("app", "web")]));
    let with_bound = |bound: Vec<Pod>| cluster(nodes(), bound);
    // An affinity target filling node a1, evictable by any pod of higher priority.
    let target =
        || PodBuilder::new("d", "target").cpu(4000).label("app", "t").priority(0).node("a1").obj();
    let cases = vec![
        Case {
            name: "a pod whose anti-affinity selects a pod in its zone is reported",
            state: with_bound(vec![web("old").node("a1").obj()]),
            pending: vec![anti("new").obj()],
            plan: plan(vec![place("d/new", "a2")], vec![], vec![]),
            want: vec![K::PodAntiAffinity],
        },
        Case {
            name: "a pod whose anti-affinity selects only pods in other zones fits",
            state: with_bound(vec![web("old").node("a1").obj()]),
            pending: vec![anti("new").obj()],
            plan: plan(vec![place("d/new", "b1")], vec![], vec![]),
            want: vec![],
        },
        Case {
            name: "a node without the topology key never violates anti-affinity",
            state: with_bound(vec![web("old").node("nozone").obj()]),
            pending: vec![anti("new").obj()],
            plan: plan(vec![place("d/new", "nozone")], vec![], vec![]),
            want: vec![],
        },
        Case {
            name: "a pod landing in the zone of a bound pod's anti-affinity is reported",
            state: with_bound(vec![anti("old").obj_on("a1")]),
            pending: vec![web("new").obj()],
            plan: plan(vec![place("d/new", "a2")], vec![], vec![]),
            want: vec![K::ExistingPodAntiAffinity],
        },
        Case {
            name: "two placed pods with mutual anti-affinity in one zone are reported both ways",
            state: with_bound(vec![]),
            pending: vec![anti("x").obj(), anti("y").obj()],
            plan: plan(vec![place("d/x", "a1"), place("d/y", "a2")], vec![], vec![]),
            want: vec![K::PodAntiAffinity, K::ExistingPodAntiAffinity],
        },
        Case {
            name: "anti-affine pods in distinct zones are valid",
            state: with_bound(vec![]),
            pending: vec![anti("x").obj(), anti("y").obj(), anti("z").obj()],
            plan: plan(
                vec![place("d/x", "a1"), place("d/y", "b1"), place("d/z", "c1")],
                vec![],
                vec![],
            ),
            want: vec![],
        },
        Case {
            name: "a pod with affinity to a zone holding no matching pod is reported",
            state: with_bound(vec![
                PodBuilder::new("d", "cart").label("app", "cart").node("a1").obj(),
            ]),
            pending: vec![
                PodBuilder::new("d", "cache")
                    .pod_affinity(affinity_term("zone", &[("app", "cart")]))
                    .obj(),
            ],
            plan: plan(vec![place("d/cache", "b1")], vec![], vec![]),
            want: vec![K::PodAffinity],
        },
        Case {
            name: "a pod with affinity placed in the zone of a matching pod fits",
            state: with_bound(vec![
                PodBuilder::new("d", "cart").label("app", "cart").node("a1").obj(),
            ]),
            pending: vec![
                PodBuilder::new("d", "cache")
                    .pod_affinity(affinity_term("zone", &[("app", "cart")]))
                    .obj(),
            ],
            plan: plan(vec![place("d/cache", "a2")], vec![], vec![]),
            want: vec![],
        },
        Case {
            name: "the first pod of a self-affine group may go anywhere, the next must follow it",
            state: with_bound(vec![]),
            pending: vec![
                web("g1").pod_affinity(affinity_term("zone", &[("app", "web")])).obj(),
                web("g2").pod_affinity(affinity_term("zone", &[("app", "web")])).obj(),
            ],
            plan: plan(vec![place("d/g1", "b1"), place("d/g2", "a1")], vec![], vec![]),
            want: vec![K::PodAffinity],
        },
        Case {
            name: "a self-affine pod may not start a new group when a matching pod exists",
            state: with_bound(vec![web("old").node("a1").obj()]),
            pending: vec![web("g1").pod_affinity(affinity_term("zone", &[("app", "web")])).obj()],
            plan: plan(vec![place("d/g1", "b1")], vec![], vec![]),
            want: vec![K::PodAffinity],
        },
        Case {
            name: "an affinity pod on a node without the topology key is reported",
            state: with_bound(vec![web("old").node("a1").obj()]),
            pending: vec![
                PodBuilder::new("d", "p")
                    .pod_affinity(affinity_term("zone", &[("app", "web")]))
                    .obj(),
            ],
            plan: plan(vec![place("d/p", "nozone")], vec![], vec![]),
            want: vec![K::PodAffinity],
        },
        Case {
            name: "an affinity target evicted for a later preemptor still counts",
            state: with_bound(vec![target()]),
            pending: vec![
                PodBuilder::new("d", "follower")
                    .priority(10)
                    .pod_affinity(affinity_term("zone", &[("app", "t")]))
                    .obj(),
                PodBuilder::new("d", "preemptor").cpu(4000).priority(5).obj(),
            ],
            plan: plan(
                vec![place("d/follower", "a2"), place("d/preemptor", "a1")],
                vec![evict("d/target", "a1", "d/preemptor")],
                vec![],
            ),
            want: vec![],
        },
        Case {
            name: "an affinity target evicted before the pod is placed does not count",
            state: with_bound(vec![target()]),
            pending: vec![
                PodBuilder::new("d", "preemptor").cpu(4000).priority(5).obj(),
                PodBuilder::new("d", "follower")
                    .priority(1)
                    .pod_affinity(affinity_term("zone", &[("app", "t")]))
                    .obj(),
            ],
            plan: plan(
                vec![place("d/preemptor", "a1"), place("d/follower", "a2")],
                vec![evict("d/target", "a1", "d/preemptor")],
                vec![],
            ),
            // No pod matches any more: the follower would be a group's first pod, but it does
            // not match its own term.
            want: vec![K::PodAffinity],
        },
        Case {
            name: "an affinity target stops counting at its preemptor's turn for the pods after it",
            state: with_bound(vec![target()]),
            pending: vec![
                PodBuilder::new("d", "before")
                    .priority(10)
                    .pod_affinity(affinity_term("zone", &[("app", "t")]))
                    .obj(),
                PodBuilder::new("d", "preemptor").cpu(4000).priority(5).obj(),
                PodBuilder::new("d", "after")
                    .priority(1)
                    .pod_affinity(affinity_term("zone", &[("app", "t")]))
                    .obj(),
            ],
            plan: plan(
                vec![place("d/before", "a2"), place("d/preemptor", "a1"), place("d/after", "a2")],
                vec![evict("d/target", "a1", "d/preemptor")],
                vec![],
            ),
            // The same terms as the first follower's, counted since its turn.
            want: vec![K::PodAffinity],
        },
    ];
    run_cases(cases);
}

trait OnNode {
    fn obj_on(self, node: &str) -> Pod;
}

impl OnNode for PodBuilder {
    fn obj_on(self, node: &str) -> Pod {
        self.node(node).obj()
    }
}

#[test]
fn topology_spread_is_checked() {
    use ViolationKind as K;
    let nodes = || {
        vec![
            zone_node("a1", "a").obj(),
            zone_node("b1", "b").obj(),
            zone_node("c1", "c").taint("x", "", TaintEffect::NoSchedule).obj(),
            NodeBuilder::new("nozone").cpu(4000).memory(8 * GI).obj(),
        ]
    };
    let dns = |max_skew| {
        spread_constraint(max_skew, "zone", UnsatisfiableAction::DoNotSchedule, &[("app", "web")])
    };
    let web = |name: &str| PodBuilder::new("d", name).cpu(100).label("app", "web");
    let spread = |name: &str| web(name).spread(dns(1));
    let cases = vec![
        Case {
            name: "a victim leaves the counts at its preemptor's turn, not before",
            // b1 takes s1 while the victim is still in a (1 - 1 + 1 = 1); x evicts it; s2 then
            // makes b two above a's 0.
            state: cluster(
                vec![zone_node("a1", "a").obj(), zone_node("b1", "b").obj()],
                vec![web("v").obj_on("a1")],
            ),
            pending: vec![
                spread("s1").obj(),
                PodBuilder::new("d", "x").cpu(100).priority(10).obj(),
                spread("s2").obj(),
            ],
            plan: plan(
                vec![place("d/s1", "b1"), place("d/x", "a1"), place("d/s2", "b1")],
                vec![evict("d/v", "a1", "d/x")],
                vec![],
            ),
            want: vec![K::TopologySpread],
        },
        Case {
            name: "a pod making its zone two above the emptiest eligible zone is reported",
            state: cluster(nodes(), vec![web("o1").obj_on("a1")]),
            pending: vec![spread("new").obj()],
            plan: plan(vec![place("d/new", "a1")], vec![], vec![]),
            want: vec![K::TopologySpread],
        },
        Case {
            name: "a pod going to the emptiest zone fits",
            state: cluster(nodes(), vec![web("o1").obj_on("a1")]),
            pending: vec![spread("new").obj()],
            plan: plan(vec![place("d/new", "b1")], vec![], vec![]),
            want: vec![],
        },
        Case {
            name: "nodes with an untolerated taint are not eligible with the default Ignore policy",
            // c (tainted, empty) counts as a domain with the default nodeTaintsPolicy Ignore:
            // a1 gets 2 - 0 = 2 > 1.
            state: cluster(nodes(), vec![web("o1").obj_on("a1"), web("o2").obj_on("b1")]),
            pending: vec![spread("new").obj()],
            plan: plan(vec![place("d/new", "a1")], vec![], vec![]),
            want: vec![K::TopologySpread],
        },
        Case {
            name: "with nodeTaintsPolicy Honor a tainted zone is not a domain",
            state: cluster(nodes(), vec![web("o1").obj_on("a1"), web("o2").obj_on("b1")]),
            pending: vec![
                web("new")
                    .spread(crate::model::TopologySpreadConstraint {
                        node_taints_policy: crate::model::InclusionPolicy::Honor,
                        ..dns(1)
                    })
                    .obj(),
            ],
            plan: plan(vec![place("d/new", "a1")], vec![], vec![]),
            want: vec![],
        },
        Case {
            name: "a spread pod on a node without the topology key is reported",
            state: cluster(nodes(), vec![]),
            pending: vec![spread("new").obj()],
            plan: plan(vec![place("d/new", "nozone")], vec![], vec![]),
            want: vec![K::TopologySpread],
        },
        Case {
            name: "placements are checked in plan order against earlier placements",
            state: cluster(nodes(), vec![]),
            pending: vec![spread("x").obj(), spread("y").obj(), spread("z").obj()],
            // a:1 b:0 c:0, then a:2 → 2 - 0 > 1.
            plan: plan(
                vec![place("d/x", "a1"), place("d/y", "a1"), place("d/z", "b1")],
                vec![],
                vec![],
            ),
            want: vec![K::TopologySpread],
        },
        Case {
            name: "a later pod without the constraint may skew the domains",
            state: cluster(nodes(), vec![]),
            pending: vec![spread("x").obj(), web("free1").obj(), web("free2").obj()],
            plan: plan(
                vec![place("d/x", "a1"), place("d/free1", "a1"), place("d/free2", "a1")],
                vec![],
                vec![],
            ),
            want: vec![],
        },
        Case {
            name: "minDomains above the number of domains makes the minimum zero",
            // Eligible domains a, b, c (3) < minDomains 4 → minimum 0; b has 1 → 1 + 1 - 0 = 2.
            state: cluster(
                nodes(),
                vec![web("o1").obj_on("a1"), web("o2").obj_on("b1"), web("o3").obj_on("c1")],
            ),
            pending: vec![
                web("new")
                    .spread(crate::model::TopologySpreadConstraint {
                        min_domains: Some(4),
                        ..dns(1)
                    })
                    .obj(),
            ],
            plan: plan(vec![place("d/new", "b1")], vec![], vec![]),
            want: vec![K::TopologySpread],
        },
        Case {
            name: "pods in other namespaces and terminating pods are not counted",
            state: cluster(
                nodes(),
                vec![
                    PodBuilder::new("other", "o1").label("app", "web").node("a1").obj(),
                    web("dying").terminating().node("a1").obj(),
                ],
            ),
            pending: vec![spread("new").obj()],
            plan: plan(vec![place("d/new", "a1")], vec![], vec![]),
            want: vec![],
        },
    ];
    run_cases(cases);
}

#[test]
fn eviction_rules_are_checked() {
    use ViolationKind as K;
    let state = || {
        cluster(
            vec![zone_node("n1", "a").obj(), zone_node("n2", "b").obj()],
            vec![
                PodBuilder::new("d", "low").cpu(4000).priority(1).node("n1").obj(),
                PodBuilder::new("d", "high").cpu(4000).priority(100).node("n2").obj(),
            ],
        )
    };
    let preemptor = || PodBuilder::new("d", "p").cpu(4000).priority(10).obj();
    let cases = vec![
        Case {
            name: "evicting a lower-priority pod for a preemptor placed on its node is valid",
            state: state(),
            pending: vec![preemptor()],
            plan: plan(vec![place("d/p", "n1")], vec![evict("d/low", "n1", "d/p")], vec![]),
            want: vec![],
        },
        Case {
            name: "placing the preemptor without the eviction overcommits the node",
            state: state(),
            pending: vec![preemptor()],
            plan: plan(vec![place("d/p", "n1")], vec![], vec![]),
            want: vec![K::InsufficientResource],
        },
        Case {
            name: "evicting a pod of equal or higher priority is reported",
            state: state(),
            pending: vec![preemptor()],
            plan: plan(vec![place("d/p", "n2")], vec![evict("d/high", "n2", "d/p")], vec![]),
            want: vec![K::EvictionPriority],
        },
        Case {
            name: "a preemptor with preemptionPolicy Never may not evict",
            state: state(),
            pending: vec![
                PodBuilder::new("d", "p").cpu(4000).priority(10).preemption_never().obj(),
            ],
            plan: plan(vec![place("d/p", "n1")], vec![evict("d/low", "n1", "d/p")], vec![]),
            want: vec![K::EvictionPreemptionPolicy],
        },
        Case {
            name: "evicting a pending pod is reported",
            state: state(),
            pending: vec![preemptor(), PodBuilder::new("d", "q").obj()],
            plan: plan(
                vec![place("d/p", "n1"), place("d/q", "n2")],
                vec![evict("d/low", "n1", "d/p"), evict("d/q", "n2", "d/p")],
                vec![],
            ),
            want: vec![K::EvictionNotBound],
        },
        Case {
            name: "an eviction naming the wrong node is reported",
            state: state(),
            pending: vec![preemptor()],
            plan: plan(vec![place("d/p", "n1")], vec![evict("d/low", "n2", "d/p")], vec![]),
            want: vec![K::EvictionWrongNode],
        },
        Case {
            name: "evicting the same pod twice is reported",
            state: state(),
            pending: vec![preemptor()],
            plan: plan(
                vec![place("d/p", "n1")],
                vec![evict("d/low", "n1", "d/p"), evict("d/low", "n1", "d/p")],
                vec![],
            ),
            want: vec![K::DuplicateEviction],
        },
        Case {
            name: "a preemptor that is not placed is reported",
            state: state(),
            pending: vec![preemptor()],
            plan: plan(vec![], vec![evict("d/low", "n1", "d/p")], vec![unsched("d/p")]),
            want: vec![K::EvictionPreemptor],
        },
        Case {
            name: "a preemptor placed on another node than its victim is reported",
            state: state(),
            pending: vec![PodBuilder::new("d", "p").cpu(100).priority(10).obj()],
            plan: plan(vec![place("d/p", "n2")], vec![evict("d/low", "n1", "d/p")], vec![]),
            want: vec![K::InsufficientResource, K::EvictionPreemptor],
        },
        Case {
            name: "an eviction from another tool naming neither node nor preemptor is valid when \
                   a pod placed on the victim's node may preempt it",
            state: state(),
            pending: vec![preemptor()],
            plan: plan(vec![place("d/p", "n1")], vec![evict("d/low", "", "")], vec![]),
            want: vec![],
        },
        Case {
            name: "an eviction naming no preemptor, with no pod placed on its node that may \
                   preempt it, is reported",
            state: state(),
            pending: vec![preemptor()],
            plan: plan(
                vec![place("d/p", "n1")],
                vec![evict("d/low", "n1", "d/p"), evict("d/high", "n2", "")],
                vec![],
            ),
            want: vec![K::EvictionPreemptor],
        },
    ];
    run_cases(cases);
}

#[test]
fn violations_name_the_pod_and_node() {
    let state = two_nodes();
    let pending = vec![PodBuilder::new("d", "big").cpu(5000).obj()];
    let report = check(&state, &pending, &plan(vec![place("d/big", "n2")], vec![], vec![]));
    assert_eq!(report.violations.len(), 1);
    let v = &report.violations[0];
    assert_eq!((v.pod.as_str(), v.node.as_deref()), ("d/big", Some("n2")));
    assert_eq!(v.message, "insufficient cpu: requests 5000, 4000 of 4000 left");
}

#[test]
fn a_preemptor_placed_by_a_miscounted_spread_is_reported() {
    // Zone b holds one running and one terminating `app=batch` pod; zone a is empty. The
    // terminating pod is not counted (b: 1, a: 0), so a spread pod in b has skew 2 > 1.
    // Upstream's preemption dry run subtracts the terminating victim anyway and nominates b;
    // after the eviction the filter still says no. The checker judges the filter.
    let state = cluster(
        vec![zone_node("a1", "a").obj(), zone_node("b1", "b").obj()],
        vec![
            PodBuilder::new("d", "run").label("app", "batch").node("b1").obj(),
            PodBuilder::new("d", "dying").label("app", "batch").terminating().node("b1").obj(),
        ],
    );
    let pending = vec![
        PodBuilder::new("d", "p")
            .label("app", "batch")
            .priority(1)
            .spread(spread_constraint(
                1,
                "zone",
                UnsatisfiableAction::DoNotSchedule,
                &[("app", "batch")],
            ))
            .obj(),
    ];
    let p = plan(vec![place("d/p", "b1")], vec![evict("d/dying", "b1", "d/p")], vec![]);
    let kinds: Vec<ViolationKind> =
        check(&state, &pending, &p).violations.iter().map(|v| v.kind).collect();
    assert_eq!(kinds, vec![ViolationKind::TopologySpread]);
}

// ---------------------------------------------------------------------------------------------
// Baseline plans are valid.

fn baseline_plan(state: &ClusterState, pending: &[Pod]) -> Plan {
    run_baseline(
        state.clone(),
        pending,
        &SchedulerConfig::default(),
        // Preemptors placed at once, so that each eviction makes room for its preemptor: with
        // upstream's asynchronous preemption a preemptor may end on another node than its
        // victims (`baseline::queue`), which this checker reports.
        BaselineOptions { seed: 3, immediate_preemption: true, ..Default::default() },
    )
    .expect("default profile builds")
}

#[test]
fn baseline_plan_on_the_demo_fixture_is_valid() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo");
    let snapshot = crate::snapshot::load(&[dir]).expect("demo loads");
    let built = crate::snapshot::build(&snapshot, &Default::default()).expect("demo builds");
    let plan = baseline_plan(&built.state, &built.pending);
    let report = check(&built.state, &built.pending, &plan);
    assert!(report.is_valid(), "{:#?}", report.violations);
    assert!(plan.placements.len() > 100, "the demo places most pods");
}

/// A random small cluster with zones, taints, a cordoned node, and pending pods mixing
/// requests, priorities (so baseline preempts), anti-affinity, affinity, spread and host ports.
///
/// With `terminating`, some bound pods are terminating. Like upstream, preemption's dry run
/// (`PodTopologySpread.RemovePod`) subtracts a terminating victim from spread counts that never
/// counted it; baseline therefore re-runs the filters on the nominated node before placing a
/// preemptor (see `a_preemptor_placed_by_a_miscounted_spread_is_reported` for the plan the
/// checker rejects).
fn random_instance(terminating: bool) -> impl Strategy<Value = (ClusterState, Vec<Pod>)> {
    let node = (0u8..3, 2i64..=12, 4i64..=32, 0u8..4, 0u8..10);
    let pod = (
        0u8..4,    // app label
        1i64..=20, // cpu in 100m
        1i64..=16, // memory in 256Mi
        0i32..3,   // priority
        0u8..12,   // feature
        0u8..3,    // node: bound to node i, or pending
    );
    (
        prop::collection::vec(node, 2..7),
        prop::collection::vec(pod.clone(), 1..25),
        prop::collection::vec(pod, 1..25),
    )
        .prop_map(move |(nodes, bound, pending)| {
            let zones = ["a", "b", "c"];
            let apps = ["web", "db", "cache", "batch"];
            let n = nodes.len();
            let nodes: Vec<_> = nodes
                .into_iter()
                .enumerate()
                .map(|(i, (z, cpu, mem, tainted, extra))| {
                    let mut b = NodeBuilder::new(&format!("n{i}"))
                        .cpu(cpu * 1000)
                        .memory(mem * GI)
                        .pods(12)
                        .label("zone", zones[usize::from(z)]);
                    if tainted == 0 {
                        b = b.taint("dedicated", "x", TaintEffect::NoSchedule);
                    }
                    if extra == 0 {
                        b = b.unschedulable();
                    }
                    b.obj()
                })
                .collect();
            let make = |i: usize, bound_to: Option<String>, spec: (u8, i64, i64, i32, u8, u8)| {
                let (app, cpu, mem, prio, feature, _) = spec;
                let app = apps[usize::from(app)];
                let name = if bound_to.is_some() { format!("b{i}") } else { format!("p{i}") };
                let namespace = if i % 4 == 3 { "e" } else { "d" };
                let mut b = PodBuilder::new(namespace, &name)
                    .cpu(cpu * 100)
                    .memory(mem * 256 * MI)
                    .priority(prio)
                    .created(i as i64)
                    .label("app", app);
                b = match feature {
                    0 => b.pod_anti_affinity(affinity_term(
                        "kubernetes.io/hostname",
                        &[("app", app)],
                    )),
                    1 => b.pod_anti_affinity(affinity_term("zone", &[("app", app)])),
                    2 => b.pod_affinity(affinity_term("zone", &[("app", "web")])),
                    3 => b.spread(spread_constraint(
                        1,
                        "zone",
                        UnsatisfiableAction::DoNotSchedule,
                        &[("app", app)],
                    )),
                    4 => b.host_port("", "TCP", 8080),
                    5 => b.toleration("dedicated", TolerationOperator::Exists, "", None),
                    6 => b.node_selector("zone", "a"),
                    7 => b.preemption_never(),
                    8 => b.pod_anti_affinity(PodAffinityTerm {
                        namespace_selector: Some(LabelSelector::default()),
                        ..affinity_term("zone", &[("app", app)])
                    }),
                    9 if terminating && bound_to.is_some() => b.terminating(),
                    _ => b,
                };
                if let Some(node) = bound_to {
                    b = b.node(&node);
                }
                b.obj()
            };
            // Bound pods go where they fit by cpu/memory/pods/ports (the snapshot is sane).
            let mut state = cluster(nodes, vec![]);
            for (i, spec) in bound.into_iter().enumerate() {
                let target = (usize::from(spec.5) + i) % n;
                let pod = make(i, Some(format!("n{target}")), spec);
                let nd = &state.nodes[target];
                let fits = nd.requested.milli_cpu + pod.requests.milli_cpu
                    <= nd.allocatable.milli_cpu
                    && nd.requested.memory + pod.requests.memory <= nd.allocatable.memory
                    && (nd.pods.len() as i64) < nd.allocatable.allowed_pod_number
                    && !pod
                        .host_ports
                        .iter()
                        .any(|w| nd.used_ports.iter().any(|u| rules::ports_conflict(w, u)));
                if fits {
                    state.nodes[target].add_pod(std::sync::Arc::new(pod));
                }
            }
            let pending: Vec<Pod> =
                pending.into_iter().enumerate().map(|(i, spec)| make(i, None, spec)).collect();
            (state, pending)
        })
}

use crate::model::testing::MI;

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn every_baseline_plan_is_valid((state, pending) in random_instance(false)) {
        let plan = baseline_plan(&state, &pending);
        let report = check(&state, &pending, &plan);
        prop_assert!(report.is_valid(), "{:#?}\nplan: {:#?}", report.violations, plan);
    }

    /// Terminating bound pods included: baseline re-checks a preemptor on its nominated node
    /// before placing it, so a miscounted spread never yields an invalid plan.
    #[test]
    fn every_baseline_plan_is_valid_with_terminating_pods((state, pending) in random_instance(true)) {
        let plan = baseline_plan(&state, &pending);
        let report = check(&state, &pending, &plan);
        prop_assert!(report.is_valid(), "{:#?}\nplan: {:#?}", report.violations, plan);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The inter-pod rules' tallies (spread, pod affinity and anti-affinity), kept and moved
    /// as the replay goes, give the verdicts of a full count per placement: on baseline's plans
    /// and on arbitrary placements and evictions (violations; victims seen until their
    /// preemptor's turn), in any order.
    #[test]
    fn kept_inter_pod_tallies_agree_with_a_full_count_per_placement(
        (state, pending) in random_instance(true),
        picks in prop::collection::vec((0usize..8, any::<bool>()), 25),
        victims in prop::collection::vec((any::<bool>(), 0usize..25), 40),
    ) {
        let nodes = state.nodes.len();
        let placements: Vec<Placement> = pending
            .iter()
            .zip(&picks)
            .filter(|(_, (_, skip))| !skip)
            .map(|(p, (n, _))| place(&p.key(), &state.nodes[n % nodes].name))
            .rev()
            .collect();
        // Bound pods evicted for placed pods (valid or not, each victim stays seen until its
        // preemptor's turn).
        let bound = state.nodes.iter().flat_map(|n| n.pods.iter().map(move |p| (n, p)));
        let evictions: Vec<Eviction> = bound
            .zip(&victims)
            .filter(|(_, (evict, _))| *evict && !placements.is_empty())
            .map(|((n, p), (_, by))| {
                evict(&p.key(), &n.name, &placements[by % placements.len()].pod)
            })
            .collect();
        let arbitrary = plan(placements, evictions, vec![]);
        for p in [baseline_plan(&state, &pending), arbitrary] {
            let kept = check(&state, &pending, &p);
            let fresh = check_with(&state, &pending, &p, Some(0));
            prop_assert_eq!(format!("{:?}", kept.violations), format!("{:?}", fresh.violations));
        }
    }
}

/// The checker's verdict on placing one pod on one node, compared with the framework's
/// PreFilter + Filter (the default profile): two independent implementations of the same rules.
fn framework_fits(state: &ClusterState, pod: &Pod, node: usize) -> bool {
    use crate::framework::runtime::{Framework, PreFilterOutcome};
    let fw = Framework::for_scheduler(&SchedulerConfig::default(), "default-scheduler")
        .expect("default profile builds");
    match fw.pre_filter(pod, state) {
        PreFilterOutcome::Rejected(_) => false,
        PreFilterOutcome::Proceed(s) => {
            s.node_names().is_none_or(|names| names.contains(&state.nodes[node].name))
                && fw.filter(&s, pod, &state.nodes[node]).is_success()
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn single_placements_agree_with_the_framework((state, pending) in random_instance(true)) {
        for pod in pending.iter().take(4) {
            for n in 0..state.nodes.len() {
                let node = state.nodes[n].name.clone();
                let p = plan(vec![place(&pod.key(), &node)], vec![], vec![]);
                let report = check(&state, std::slice::from_ref(pod), &p);
                let fits = framework_fits(&state, pod, n);
                prop_assert_eq!(
                    report.is_valid(),
                    fits,
                    "pod {} on {}: {:#?}",
                    pod.key(),
                    node,
                    report.violations
                );
            }
        }
    }
}

#[test]
fn gangs_are_placed_all_or_nothing() {
    use GangConvention::{Coscheduling as C, Volcano as V};
    use ViolationKind as K;
    let member = |name: &str, c: GangConvention, group: &str, min: i32| {
        PodBuilder::new("ml", name).cpu(100).gang(c, group, min)
    };
    // Four pending members of "train" (minMember 4) and two of "infer" (minMember 2).
    let pending = || {
        vec![
            member("t0", C, "train", 4).obj(),
            member("t1", C, "train", 4).obj(),
            member("t2", C, "train", 4).obj(),
            member("t3", C, "train", 4).obj(),
            member("i0", V, "infer", 2).obj(),
            member("i1", V, "infer", 2).obj(),
        ]
    };
    let all = ["ml/t0", "ml/t1", "ml/t2", "ml/t3", "ml/i0", "ml/i1"];
    // Places `pods` on n1 and lists the rest of `all` as unschedulable.
    let partial = |pods: &[&str]| {
        plan(
            pods.iter().map(|p| place(p, "n1")).collect(),
            vec![],
            all.iter().filter(|p| !pods.contains(p)).map(|p| unsched(p)).collect(),
        )
    };
    let with_bound = |bound: Vec<Pod>| cluster(vec![zone_node("n1", "a").obj()], bound);
    run_cases(vec![
        Case {
            name: "placing every member of every gang is valid",
            state: two_nodes(),
            pending: pending(),
            plan: partial(&all),
            want: vec![],
        },
        Case {
            name: "placing no member of a gang is valid",
            state: two_nodes(),
            pending: pending(),
            plan: partial(&["ml/i0", "ml/i1"]),
            want: vec![],
        },
        Case {
            name: "placing some but fewer than minMember members is reported once per gang",
            state: two_nodes(),
            pending: pending(),
            plan: partial(&["ml/t0", "ml/t1", "ml/i0"]),
            want: vec![K::Gang, K::Gang],
        },
        Case {
            name: "bound members count toward minMember",
            state: with_bound(vec![member("t-old", C, "train", 4).node("n1").obj()]),
            pending: pending(),
            plan: partial(&["ml/t0", "ml/t1", "ml/t2"]),
            want: vec![],
        },
        Case {
            name: "a terminal member does not count",
            state: with_bound(vec![
                member("t-old", C, "train", 4)
                    .node("n1")
                    .phase(crate::model::PodPhase::Succeeded)
                    .obj(),
            ]),
            pending: pending(),
            plan: partial(&["ml/t0", "ml/t1", "ml/t2"]),
            want: vec![K::Gang],
        },
        Case {
            name: "a bound member the plan evicts does not count",
            state: with_bound(vec![member("t-old", C, "train", 4).node("n1").obj()]),
            pending: vec![
                member("t0", C, "train", 4).priority(10).obj(),
                member("t1", C, "train", 4).obj(),
                member("t2", C, "train", 4).obj(),
            ],
            plan: plan(
                vec![place("ml/t0", "n1"), place("ml/t1", "n1"), place("ml/t2", "n1")],
                vec![evict("ml/t-old", "n1", "ml/t0")],
                vec![],
            ),
            want: vec![K::Gang],
        },
        Case {
            name: "a gang already at minMember through bound members takes any number more",
            state: with_bound(vec![
                member("i-old0", V, "infer", 2).node("n1").obj(),
                member("i-old1", V, "infer", 2).node("n1").obj(),
            ]),
            pending: pending(),
            plan: partial(&["ml/i0"]),
            want: vec![],
        },
        Case {
            name: "a group of the same name in the other convention is another gang",
            state: two_nodes(),
            pending: vec![member("a", C, "g", 2).obj(), member("b", V, "g", 2).obj()],
            plan: plan(vec![place("ml/a", "n1"), place("ml/b", "n2")], vec![], vec![]),
            want: vec![K::Gang, K::Gang],
        },
        Case {
            name: "a group of the same name in another namespace is another gang",
            state: two_nodes(),
            pending: vec![
                member("a", C, "g", 2).obj(),
                PodBuilder::new("other", "b").cpu(100).gang(C, "g", 2).obj(),
            ],
            plan: plan(vec![place("ml/a", "n1"), place("other/b", "n2")], vec![], vec![]),
            want: vec![K::Gang, K::Gang],
        },
        Case {
            name: "minMember 1 holds nothing together",
            state: two_nodes(),
            pending: vec![member("a", C, "solo", 1).obj(), member("b", C, "solo", 1).obj()],
            plan: plan(vec![place("ml/a", "n1")], vec![], vec![unsched("ml/b")]),
            want: vec![],
        },
    ]);

    let report = check(&two_nodes(), &pending(), &partial(&["ml/t2", "ml/t1", "ml/i0"]));
    let v = report.violations.iter().find(|v| v.message.contains("train")).expect("a violation");
    assert_eq!(v.kind.as_str(), "gang");
    assert_eq!(
        (v.pod.as_str(), v.node.as_deref()),
        ("ml/t2", Some("n1")),
        "the first placed member"
    );
    assert_eq!(
        v.message,
        "gang ml/train (coscheduling): 2 of its 4 pending pods placed + 0 bound = 2, below \
         minMember 4; all or nothing"
    );
}

/// A pod a ReplicaSet owns (its replacement is created elsewhere when it is evicted).
fn owned(b: PodBuilder) -> Pod {
    owned_by(b, "ReplicaSet")
}

fn owned_by(b: PodBuilder, kind: &str) -> Pod {
    let mut p = b.obj();
    p.owner = Some(crate::model::OwnerRef {
        kind: kind.to_string(),
        name: format!("{}-rs", p.name),
        uid: format!("uid-{}", p.name),
    });
    p
}

fn mv(pod: &str, from: &str, to: &str, wave: u32) -> crate::plan::Move {
    crate::plan::Move {
        pod: pod.to_string(),
        from: from.to_string(),
        to: to.to_string(),
        wave,
        reason: String::new(),
    }
}

fn moves(list: Vec<crate::plan::Move>) -> Plan {
    Plan { moves: list, ..Default::default() }
}

#[test]
fn moves_are_replayed_wave_by_wave() {
    use ViolationKind as K;
    // n1 and n2 hold 4000m each; web (1000m) on n1, big (3000m) on n2.
    let web = || owned(PodBuilder::new("d", "web").cpu(1000).label("app", "web").node("n1"));
    let big = || owned(PodBuilder::new("d", "big").cpu(3000).node("n2"));
    let state = |extra: Vec<Pod>| {
        let mut pods = vec![web(), big()];
        pods.extend(extra);
        cluster(
            vec![
                zone_node("n1", "a").obj(),
                zone_node("n2", "b").obj(),
                zone_node("n3", "c").unschedulable().obj(),
            ],
            pods,
        )
    };
    let pending = || vec![PodBuilder::new("d", "waiting").cpu(100).obj()];
    let rebalancing_without_moves = {
        let mut p = Plan::default();
        p.summary.rebalance = Some(Default::default());
        p
    };
    let low = owned(PodBuilder::new("d", "low").cpu(2500).priority(0).node("n1"));
    let hi = PodBuilder::new("d", "hi").cpu(3000).priority(100).obj();
    let filler = owned(PodBuilder::new("d", "filler").cpu(2000).node("n1"));
    let guard = owned(
        PodBuilder::new("d", "guard")
            .cpu(0)
            .node("n2")
            .pod_anti_affinity(affinity_term("kubernetes.io/hostname", &[("app", "web")])),
    );
    let bare = PodBuilder::new("d", "bare").cpu(100).node("n1").obj();
    let daemon = owned_by(PodBuilder::new("d", "daemon").cpu(100).node("n1"), "DaemonSet");
    run_cases(vec![
        Case {
            name: "a move of a controller-owned pod onto a roomy node is valid",
            state: state(vec![]),
            pending: vec![],
            plan: moves(vec![mv("d/web", "n1", "n2", 1)]),
            want: vec![],
        },
        Case {
            name: "pending pods a rebalancing plan leaves alone are not missing",
            state: state(vec![]),
            pending: pending(),
            plan: moves(vec![mv("d/web", "n1", "n2", 1)]),
            want: vec![],
        },
        Case {
            name: "a rebalancing plan without moves leaves pending pods alone too",
            state: state(vec![]),
            pending: pending(),
            plan: rebalancing_without_moves,
            want: vec![],
        },
        Case {
            name: "a plan that is not a rebalancing plan still misses unlisted pending pods",
            state: state(vec![]),
            pending: pending(),
            plan: Plan::default(),
            want: vec![K::MissingPod],
        },
        Case {
            name: "a move onto a node where the pod does not fit is insufficient_resource",
            state: state(vec![filler.clone()]),
            pending: vec![],
            plan: moves(vec![mv("d/big", "n2", "n1", 1)]),
            want: vec![K::InsufficientResource],
        },
        Case {
            name: "a move onto a cordoned node is node_cordoned",
            state: state(vec![]),
            pending: vec![],
            plan: moves(vec![mv("d/web", "n1", "n3", 1)]),
            want: vec![K::NodeCordoned],
        },
        Case {
            name: "a move next to a pod whose anti-affinity selects it is existing_pod_anti_affinity",
            state: state(vec![guard]),
            pending: vec![],
            plan: moves(vec![mv("d/web", "n1", "n2", 1)]),
            want: vec![K::ExistingPodAntiAffinity],
        },
        Case {
            name: "two pods swapping nodes in one wave fit: both leave before either lands",
            state: state(vec![filler.clone()]),
            pending: vec![],
            plan: moves(vec![mv("d/big", "n2", "n1", 1), mv("d/filler", "n1", "n2", 1)]),
            want: vec![],
        },
        Case {
            name: "the same swap in two waves does not fit: the target is still full in wave 1",
            state: state(vec![filler.clone()]),
            pending: vec![],
            plan: moves(vec![mv("d/big", "n2", "n1", 1), mv("d/filler", "n1", "n2", 2)]),
            want: vec![K::InsufficientResource],
        },
        Case {
            name: "waves are replayed in ascending order whatever the plan's order",
            state: cluster(
                vec![
                    zone_node("n1", "a").obj(),
                    zone_node("n2", "b").obj(),
                    zone_node("n3", "c").obj(),
                ],
                vec![
                    owned(PodBuilder::new("d", "x").cpu(3000).node("n1")),
                    owned(PodBuilder::new("d", "y").cpu(3000).node("n2")),
                ],
            ),
            pending: vec![],
            // y leaves n2 in wave 1, so x fits there in wave 2.
            plan: moves(vec![mv("d/x", "n1", "n2", 2), mv("d/y", "n2", "n3", 1)]),
            want: vec![],
        },
        Case {
            name: "a move whose from node is not the pod's node is move_wrong_node",
            state: state(vec![]),
            pending: vec![],
            plan: moves(vec![mv("d/web", "n2", "n1", 1)]),
            want: vec![K::MoveWrongNode],
        },
        Case {
            name: "a move of a pod that is not in the snapshot is unknown_pod",
            state: state(vec![]),
            pending: vec![],
            plan: moves(vec![mv("d/ghost", "n1", "n2", 1)]),
            want: vec![K::UnknownPod],
        },
        Case {
            name: "a move of a pending pod is unknown_pod",
            state: state(vec![]),
            pending: pending(),
            plan: moves(vec![mv("d/waiting", "n1", "n2", 1)]),
            want: vec![K::UnknownPod],
        },
        Case {
            name: "a move to a node that is not in the snapshot is unknown_node",
            state: state(vec![]),
            pending: vec![],
            plan: moves(vec![mv("d/web", "n1", "n9", 1)]),
            want: vec![K::UnknownNode],
        },
        Case {
            name: "the same pod moved twice in one wave is duplicate_move",
            state: state(vec![]),
            pending: vec![],
            plan: moves(vec![mv("d/web", "n1", "n2", 1), mv("d/web", "n1", "n2", 1)]),
            want: vec![K::DuplicateMove],
        },
        Case {
            name: "the same pod moved again in a later wave is duplicate_move",
            state: state(vec![]),
            pending: vec![],
            plan: moves(vec![mv("d/web", "n1", "n2", 1), mv("d/web", "n2", "n1", 2)]),
            want: vec![K::DuplicateMove],
        },
        Case {
            name: "a move of a pod without a controlling owner is move_not_replaced",
            state: state(vec![bare]),
            pending: vec![],
            plan: moves(vec![mv("d/bare", "n1", "n2", 1)]),
            want: vec![K::MoveNotReplaced],
        },
        Case {
            name: "a move of a DaemonSet pod is move_not_replaced",
            state: state(vec![daemon]),
            pending: vec![],
            plan: moves(vec![mv("d/daemon", "n1", "n2", 1)]),
            want: vec![K::MoveNotReplaced],
        },
        Case {
            name: "a pod the plan evicts cannot also move",
            state: cluster(
                vec![zone_node("n1", "a").obj(), zone_node("n2", "b").obj()],
                vec![low.clone()],
            ),
            pending: vec![hi.clone()],
            plan: Plan {
                placements: vec![place("d/hi", "n1")],
                evictions: vec![evict("d/low", "n1", "d/hi")],
                moves: vec![mv("d/low", "n1", "n2", 1)],
                ..Default::default()
            },
            want: vec![K::UnknownPod],
        },
        Case {
            name: "moves are replayed after the placements, on the room they leave",
            state: state(vec![]),
            pending: vec![PodBuilder::new("d", "new").cpu(1000).obj()],
            plan: Plan {
                placements: vec![place("d/new", "n2")],
                moves: vec![mv("d/web", "n1", "n2", 1)],
                ..Default::default()
            },
            want: vec![K::InsufficientResource],
        },
    ]);
}

#[test]
fn a_bad_move_is_reported_with_its_pod_node_and_wave() {
    let state = cluster(
        vec![zone_node("n1", "a").obj(), zone_node("n2", "b").obj()],
        vec![
            owned(PodBuilder::new("d", "web").cpu(1000).node("n1")),
            owned(PodBuilder::new("d", "big").cpu(3500).node("n2")),
        ],
    );
    let report = check(&state, &[], &moves(vec![mv("d/web", "n1", "n2", 3)]));
    assert_eq!(report.violations.len(), 1, "{:#?}", report.violations);
    let v = &report.violations[0];
    assert_eq!(v.kind, ViolationKind::InsufficientResource);
    assert_eq!(v.pod, "d/web");
    assert_eq!(v.node.as_deref(), Some("n2"));
    assert!(v.message.starts_with("wave 3: move from \"n1\": insufficient cpu"), "{}", v.message);
}
