//! Unit tests of the CPU matrix: hand-built clusters whose every cell must agree with the
//! framework runtime, plus the matrix-only details (every failed check, first failure, the
//! NodeResourcesFit word, row reductions).

use super::testing::{Agreement, framework_mismatches, matrix_profile};
use super::*;
use crate::encode::encode;
use crate::framework::args::{ResourceSpec, ScoringStrategyType, UtilizationShapePoint};
use crate::model::testing::{GI, MI, NodeBuilder, PodBuilder, cluster, node_term};
use crate::model::{
    MatchOp, NodeAffinity as ModelNodeAffinity, NodeSelector, NodeSelectorTerm,
    PreferredSchedulingTerm, Requirement, TaintEffect, TolerationOperator,
};

/// The default profile without the plugins the matrix does not evaluate.
fn profile() -> Profile {
    matrix_profile(&Profile::default_profile())
}

/// Evaluates and checks every cell against the framework.
fn evaluate_checked(profile: &Profile, state: &ClusterState, pending: &[Pod]) -> Matrix {
    let enc = encode(state, pending).expect("encodes");
    let m = evaluate_cpu(profile, state, pending, &enc).expect("evaluates");
    let mismatches = framework_mismatches(profile, state, pending, &enc, &m, Agreement::Exact)
        .expect("framework builds");
    assert!(
        mismatches.is_empty(),
        "matrix disagrees with the framework:\n{}",
        mismatches.join("\n")
    );
    m
}

fn node_index(state: &ClusterState, name: &str) -> usize {
    state.node_index(name).expect("node exists")
}

/// A case: cluster, pending pods, and the expected first failure of `(pod, node)` cells.
struct Case {
    name: &'static str,
    profile: Profile,
    state: ClusterState,
    pending: Vec<Pod>,
    expect: Vec<(usize, &'static str, Option<Check>)>,
}

fn cases() -> Vec<Case> {
    let big = || NodeBuilder::new("big").cpu(8000).memory(16 * GI).pods(110);
    let mut added = profile();
    added.args.node_affinity.added_affinity = Some(ModelNodeAffinity {
        required: Some(NodeSelector {
            terms: vec![node_term(vec![Requirement::new("pool", MatchOp::In, &["a"])])],
        }),
        preferred: vec![PreferredSchedulingTerm {
            weight: 7,
            preference: node_term(vec![Requirement::new("disk", MatchOp::In, &["ssd"])]),
        }],
    });
    let mut most = profile();
    most.args.node_resources_fit.scoring_strategy.kind = ScoringStrategyType::MostAllocated;
    let mut ratio = profile();
    ratio.args.node_resources_fit.scoring_strategy = crate::framework::args::ScoringStrategy {
        kind: ScoringStrategyType::RequestedToCapacityRatio,
        resources: vec![
            ResourceSpec::new("cpu", 3),
            ResourceSpec::new("memory", 1),
            ResourceSpec::new("nvidia.com/gpu", 2),
        ],
        shape: vec![
            UtilizationShapePoint { utilization: 0, score: 10 },
            UtilizationShapePoint { utilization: 60, score: 3 },
            UtilizationShapePoint { utilization: 100, score: 0 },
        ],
    };
    let mut no_ports = profile();
    no_ports.plugins.filter.retain(|p| *p != PluginName::NodePorts);
    let name_pin = |names: &[&str]| NodeSelectorTerm {
        match_fields: vec![Requirement::new("metadata.name", MatchOp::In, names)],
        ..Default::default()
    };
    vec![
        Case {
            name: "a cordoned node rejects a pod unless it tolerates the unschedulable taint",
            profile: profile(),
            state: cluster(vec![big().unschedulable().obj(), NodeBuilder::new("b").obj()], vec![]),
            pending: vec![
                PodBuilder::new("d", "plain").obj(),
                PodBuilder::new("d", "tolerant")
                    .toleration(
                        "node.kubernetes.io/unschedulable",
                        TolerationOperator::Exists,
                        "",
                        Some(TaintEffect::NoSchedule),
                    )
                    .obj(),
            ],
            expect: vec![
                (0, "big", Some(Check::NodeUnschedulable)),
                (0, "b", None),
                (1, "big", None),
            ],
        },
        Case {
            name: "a pod naming a node fits only that node, and one naming an unknown node fits none",
            profile: profile(),
            state: cluster(vec![big().obj(), NodeBuilder::new("b").obj()], vec![]),
            pending: vec![
                {
                    let mut p = PodBuilder::new("d", "named").obj();
                    p.node_name = Some("b".into());
                    p
                },
                {
                    let mut p = PodBuilder::new("d", "lost").obj();
                    p.node_name = Some("nowhere".into());
                    p
                },
            ],
            expect: vec![
                (0, "big", Some(Check::NodeName)),
                (0, "b", None),
                (1, "b", Some(Check::NodeName)),
            ],
        },
        Case {
            name: "untolerated NoSchedule taints reject and PreferNoSchedule taints lower the score",
            profile: profile(),
            state: cluster(
                vec![
                    big().taint("gpu", "yes", TaintEffect::NoSchedule).obj(),
                    NodeBuilder::new("spot")
                        .cpu(4000)
                        .taint("spot", "", TaintEffect::PreferNoSchedule)
                        .taint("old", "", TaintEffect::PreferNoSchedule)
                        .obj(),
                    NodeBuilder::new("plain").cpu(4000).obj(),
                ],
                vec![],
            ),
            pending: vec![
                PodBuilder::new("d", "p").cpu(100).obj(),
                PodBuilder::new("d", "q")
                    .cpu(100)
                    .toleration("gpu", TolerationOperator::Equal, "yes", None)
                    .toleration("spot", TolerationOperator::Exists, "", None)
                    .obj(),
            ],
            expect: vec![
                (0, "big", Some(Check::TaintToleration)),
                (0, "spot", None),
                (1, "big", None),
            ],
        },
        Case {
            name: "nodeSelector, required and preferred node affinity select and rank nodes",
            profile: profile(),
            state: cluster(
                vec![
                    big().label("zone", "a").label("disk", "ssd").obj(),
                    NodeBuilder::new("b").cpu(1000).label("zone", "b").obj(),
                    NodeBuilder::new("c").cpu(1000).label("zone", "c").label("disk", "hdd").obj(),
                ],
                vec![],
            ),
            pending: vec![
                PodBuilder::new("d", "sel").node_selector("zone", "b").obj(),
                PodBuilder::new("d", "req")
                    .required_node_affinity(vec![
                        node_term(vec![Requirement::new("zone", MatchOp::NotIn, &["b"])]),
                        node_term(vec![Requirement::new("disk", MatchOp::DoesNotExist, &[])]),
                    ])
                    .preferred_node_affinity(
                        5,
                        node_term(vec![Requirement::new("disk", MatchOp::Exists, &[])]),
                    )
                    .preferred_node_affinity(
                        20,
                        node_term(vec![Requirement::new("zone", MatchOp::In, &["c"])]),
                    )
                    .obj(),
                PodBuilder::new("d", "none").required_node_affinity(vec![]).obj(),
            ],
            expect: vec![
                (0, "big", Some(Check::NodeAffinityPod)),
                (0, "b", None),
                (1, "b", None),
                (1, "c", None),
                (2, "b", Some(Check::NodeAffinityPod)),
            ],
        },
        Case {
            name: "the profile's addedAffinity is enforced before the pod's own affinity and adds to the score",
            profile: added,
            state: cluster(
                vec![
                    big().label("pool", "a").label("disk", "ssd").obj(),
                    NodeBuilder::new("b").label("pool", "a").obj(),
                    NodeBuilder::new("c").label("pool", "b").obj(),
                ],
                vec![],
            ),
            pending: vec![
                PodBuilder::new("d", "p").node_selector("pool", "x").obj(),
                PodBuilder::new("d", "q").obj(),
            ],
            expect: vec![
                (0, "c", Some(Check::NodeAffinityEnforced)),
                (0, "b", Some(Check::NodeAffinityPod)),
                (1, "big", None),
                (1, "c", Some(Check::NodeAffinityEnforced)),
            ],
        },
        Case {
            name: "metadata.name pins restrict PreFilter to the named nodes and conflicting pins reject the class",
            profile: profile(),
            state: cluster(
                vec![big().obj(), NodeBuilder::new("b").obj(), NodeBuilder::new("c").obj()],
                vec![],
            ),
            pending: vec![
                PodBuilder::new("d", "pinned")
                    .required_node_affinity(vec![name_pin(&["b", "ghost"]), name_pin(&["c"])])
                    .obj(),
                PodBuilder::new("d", "conflict")
                    .required_node_affinity(vec![NodeSelectorTerm {
                        match_fields: vec![
                            Requirement::new("metadata.name", MatchOp::In, &["b"]),
                            Requirement::new("metadata.name", MatchOp::In, &["c"]),
                        ],
                        ..Default::default()
                    }])
                    .obj(),
            ],
            expect: vec![
                (0, "big", Some(Check::PreFilterAbsent)),
                (0, "b", None),
                (0, "c", None),
                (1, "b", Some(Check::PreFilterRejected)),
            ],
        },
        Case {
            name: "a wanted host port conflicts with the same port on the wildcard or the same IP",
            profile: profile(),
            state: cluster(
                vec![big().obj(), NodeBuilder::new("b").obj(), NodeBuilder::new("c").obj()],
                vec![
                    PodBuilder::new("d", "x").host_port("", "TCP", 80).node("big").obj(),
                    PodBuilder::new("d", "y").host_port("10.0.0.1", "TCP", 443).node("b").obj(),
                    PodBuilder::new("d", "z").host_port("", "UDP", 80).node("c").obj(),
                ],
            ),
            pending: vec![
                PodBuilder::new("d", "web").host_port("10.0.0.2", "TCP", 80).obj(),
                PodBuilder::new("d", "tls").host_port("10.0.0.2", "TCP", 443).obj(),
                PodBuilder::new("d", "any").host_port("", "TCP", 443).obj(),
            ],
            expect: vec![
                (0, "big", Some(Check::NodePorts)),
                (0, "c", None),
                (1, "b", None),
                (2, "b", Some(Check::NodePorts)),
            ],
        },
        Case {
            name: "NodeResourcesFit reports too many pods, short and unresolvable resources",
            profile: profile(),
            state: cluster(
                vec![
                    big().scalar("nvidia.com/gpu", 4).obj(),
                    NodeBuilder::new("tiny").cpu(500).memory(GI).pods(1).obj(),
                ],
                vec![
                    PodBuilder::new("d", "x").cpu(7900).memory(GI).node("big").obj(),
                    PodBuilder::new("d", "y").node("tiny").obj(),
                ],
            ),
            pending: vec![
                PodBuilder::new("d", "p").cpu(200).memory(512 * MI).obj(),
                PodBuilder::new("d", "g").cpu(100).scalar("nvidia.com/gpu", 2).obj(),
                PodBuilder::new("d", "h").scalar("nvidia.com/gpu", 8).obj(),
                PodBuilder::new("d", "nothing").obj(),
            ],
            expect: vec![
                (0, "big", Some(Check::NodeResourcesFit)),
                (0, "tiny", Some(Check::NodeResourcesFit)),
                (1, "big", None),
                (2, "big", Some(Check::NodeResourcesFit)),
                (3, "tiny", Some(Check::NodeResourcesFit)),
            ],
        },
        Case {
            name: "MostAllocated scores the fuller node higher",
            profile: most,
            state: cluster(
                vec![big().obj(), NodeBuilder::new("b").cpu(2000).memory(4 * GI).obj()],
                vec![PodBuilder::new("d", "x").cpu(1000).memory(GI).node("b").obj()],
            ),
            pending: vec![PodBuilder::new("d", "p").cpu(500).memory(GI).obj()],
            expect: vec![(0, "big", None), (0, "b", None)],
        },
        Case {
            name: "RequestedToCapacityRatio weights only resources with a positive score",
            profile: ratio,
            state: cluster(
                vec![
                    big().scalar("nvidia.com/gpu", 4).obj(),
                    NodeBuilder::new("b").cpu(2000).memory(4 * GI).obj(),
                ],
                vec![PodBuilder::new("d", "x").cpu(1900).memory(GI).node("b").obj()],
            ),
            pending: vec![
                PodBuilder::new("d", "p").cpu(100).memory(GI).scalar("nvidia.com/gpu", 4).obj(),
                PodBuilder::new("d", "q").cpu(100).obj(),
            ],
            expect: vec![(0, "big", None), (1, "b", None)],
        },
        Case {
            name: "a filter the profile disables is not checked",
            profile: no_ports,
            state: cluster(
                vec![big().obj()],
                vec![PodBuilder::new("d", "x").host_port("", "TCP", 80).node("big").obj()],
            ),
            pending: vec![PodBuilder::new("d", "web").host_port("", "TCP", 80).obj()],
            expect: vec![(0, "big", None)],
        },
        Case {
            name: "a cluster without nodes has empty rows",
            profile: profile(),
            state: cluster(vec![], vec![]),
            pending: vec![PodBuilder::new("d", "p").obj()],
            expect: vec![],
        },
    ]
}

#[test]
fn every_case_agrees_with_the_framework_and_reports_the_expected_first_failure() {
    for case in cases() {
        let m = evaluate_checked(&case.profile, &case.state, &case.pending);
        let enc = encode(&case.state, &case.pending).unwrap();
        for (pod, node, want) in &case.expect {
            let class = enc.classes.pod_class[*pod] as usize;
            let n = node_index(&case.state, node);
            assert_eq!(m.first_failure(class, n), *want, "{}: pod {pod} on {node}", case.name);
            assert_eq!(m.feasible(class, n), want.is_none(), "{}: pod {pod} on {node}", case.name);
        }
    }
}

/// Asserts that the row evaluator, on one thread and on several, gives the cell-by-cell
/// specification's matrix.
fn assert_rows_equal_cells(profile: &Profile, state: &ClusterState, pending: &[Pod], what: &str) {
    let enc = encode(state, pending).expect("encodes");
    let p = Prepared::new(profile, state, pending, &enc).expect("prepares");
    let want = cpu::evaluate_cells(&p);
    for (how, got) in
        [("one thread", cpu::evaluate(&p)), ("3 threads", cpu::evaluate_parallel(&p, 3))]
    {
        if let Some(diff) = want.first_difference(&got) {
            panic!("{what}, {how}: the row evaluator differs from the cells: {diff}");
        }
        assert_eq!(got.score_errors, want.score_errors, "{what}, {how}: score errors");
    }
}

#[test]
fn the_row_evaluator_equals_the_cell_by_cell_specification() {
    for case in cases() {
        assert_rows_equal_cells(&case.profile, &case.state, &case.pending, case.name);
    }
    for (classes, nodes) in [(60, 130), (7, 64), (33, 1), (1, 200)] {
        let s = synthetic::cluster_of(classes, nodes);
        assert_rows_equal_cells(&profile(), &s.state, &s.pending, "synthetic cluster");
        // Profiles that score with only some plugins, or a different fit strategy.
        let mut some = profile();
        some.plugins
            .score
            .retain(|(p, _)| matches!(p, PluginName::NodeAffinity | PluginName::PodTopologySpread));
        assert_rows_equal_cells(&some, &s.state, &s.pending, "synthetic, two scores");
        let mut most = profile();
        most.args.node_resources_fit.scoring_strategy.kind = ScoringStrategyType::MostAllocated;
        assert_rows_equal_cells(&most, &s.state, &s.pending, "synthetic, MostAllocated");
    }
}

#[test]
fn every_failed_check_is_recorded_not_only_the_first() {
    let state = cluster(
        vec![
            NodeBuilder::new("n")
                .cpu(100)
                .unschedulable()
                .taint("t", "", TaintEffect::NoExecute)
                .obj(),
        ],
        vec![],
    );
    let pending = vec![PodBuilder::new("d", "p").cpu(200).node_selector("zone", "a").obj()];
    let m = evaluate_checked(&profile(), &state, &pending);
    let word = m.filter[0];
    let want = CHECK_NODE_UNSCHEDULABLE
        | CHECK_TAINT_TOLERATION
        | CHECK_NODE_AFFINITY_POD
        | CHECK_NODE_RESOURCES_FIT;
    assert_eq!(word & CHECK_MASK, want, "every failing check has its bit");
    assert_eq!(m.first_failure(0, 0), Some(Check::NodeUnschedulable), "profile order decides");
    assert_eq!(word & CELL_FEASIBLE, 0);
    assert_eq!(
        m.fit_insufficient[0],
        (1 << crate::encode::dict::RESOURCE_CPU) | FIT_UNRESOLVABLE,
        "200m on a 100m node is short and unresolvable"
    );
}

#[test]
fn the_fit_word_names_each_short_column_and_unresolvable_requests() {
    let state = cluster(
        vec![NodeBuilder::new("n").cpu(1000).memory(GI).pods(1).scalar("example.com/foo", 1).obj()],
        vec![PodBuilder::new("d", "x").cpu(900).node("n").obj()],
    );
    let pending = vec![
        PodBuilder::new("d", "p")
            .cpu(200)
            .memory(2 * GI)
            .scalar("example.com/foo", 1)
            .scalar("nvidia.com/gpu", 1)
            .obj(),
    ];
    let m = evaluate_checked(&profile(), &state, &pending);
    let enc = encode(&state, &pending).unwrap();
    let col = |name: &str| enc.dicts.resources.column(name).unwrap();
    let want = (1 << col("pods"))
        | (1 << col("cpu"))
        | (1 << col("memory"))
        | (1 << col("nvidia.com/gpu"))
        | FIT_UNRESOLVABLE;
    assert_eq!(m.fit_insufficient[0], want);
    assert_eq!(
        m.filter_status(0, 0).reasons,
        vec![
            "Too many pods",
            "Insufficient cpu",
            "Insufficient memory",
            "Insufficient nvidia.com/gpu"
        ]
    );
}

#[test]
fn row_reductions_count_feasible_nodes_and_keep_the_best_total() {
    let state = cluster(
        vec![
            NodeBuilder::new("a").cpu(4000).memory(8 * GI).obj(),
            NodeBuilder::new("b").cpu(2000).memory(8 * GI).obj(),
            NodeBuilder::new("c").cpu(100).memory(8 * GI).obj(),
        ],
        vec![],
    );
    let pending = vec![
        PodBuilder::new("d", "p").cpu(1000).obj(),
        PodBuilder::new("d", "huge").cpu(100_000).obj(),
    ];
    let m = evaluate_checked(&profile(), &state, &pending);
    assert_eq!(m.feasible_count, vec![2, 0]);
    let best = (0..3).filter(|&n| m.feasible(0, n)).map(|n| m.total[m.cell(0, n)]).max();
    assert_eq!(Some(m.best_total[0]), best);
    assert_eq!(m.best_total[1], i32::MIN, "a class nothing fits has no best total");
    assert!(m.total[m.cell(1, 0)] == 0, "infeasible cells have no total");
}

#[test]
fn an_invalid_preferred_term_is_a_score_error_of_its_class() {
    let state = cluster(vec![NodeBuilder::new("a").obj()], vec![]);
    let mut bad = node_term(vec![Requirement::new("zone", MatchOp::In, &["a"])]);
    bad.invalid = true;
    let pending = vec![
        PodBuilder::new("d", "p").preferred_node_affinity(3, bad).obj(),
        PodBuilder::new("d", "q").obj(),
    ];
    let m = evaluate_checked(&profile(), &state, &pending);
    assert!(m.score_errors[0].as_ref().is_some_and(|s| s.code == Code::Error));
    assert_eq!(m.score_errors[1], None);
    let na = m.plane(PluginName::NodeAffinity).unwrap();
    assert_eq!(na.skipped, vec![false, true], "a pod without preferred terms skips the score");
}

#[test]
fn every_evaluated_plugin_of_the_default_profile_is_in_the_matrix() {
    assert!(NOT_YET_IN_MATRIX.is_empty());
    let state = cluster(vec![NodeBuilder::new("a").obj()], vec![]);
    let pending = vec![PodBuilder::new("d", "p").obj()];
    let enc = encode(&state, &pending).unwrap();
    let m = evaluate_cpu(&Profile::default_profile(), &state, &pending, &enc).unwrap();
    assert!(m.not_evaluated.is_empty());
    let scored: Vec<PluginName> = m.scores.iter().map(|p| p.plugin).collect();
    for plugin in ScorePlugin::ALL {
        assert!(scored.contains(&plugin.plugin()), "{} scores in the matrix", plugin.plugin());
    }
    for check in [Check::PodTopologySpreadSkew, Check::InterPodExistingAntiAffinity] {
        assert!(m.check_order.contains(&check), "{check:?} is checked");
    }
}

#[test]
fn more_resource_columns_than_the_fit_word_holds_are_refused() {
    let mut node = NodeBuilder::new("a");
    for i in 0..30 {
        node = node.scalar(&format!("example.com/r{i:02}"), 1);
    }
    let state = cluster(vec![node.obj()], vec![]);
    let pending = vec![PodBuilder::new("d", "p").obj()];
    let enc = encode(&state, &pending).unwrap();
    let err = evaluate_cpu(&profile(), &state, &pending, &enc).unwrap_err();
    assert!(matches!(err, EvalError::TooManyResources { count: 34 }), "{err}");
}

#[test]
fn backend_names_parse_as_the_cli_spells_them() {
    let cases = [("auto", Ok(Backend::Auto)), ("gpu", Ok(Backend::Gpu)), ("cpu", Ok(Backend::Cpu))];
    for (text, want) in cases {
        assert_eq!(text.parse::<Backend>(), want, "{text}");
        assert_eq!(want.unwrap().to_string(), text);
    }
    assert_eq!("cuda".parse::<Backend>(), Err(BackendParseError("cuda".into())));
}

#[test]
fn the_framework_oracle_notices_a_wrong_cell() {
    let state = cluster(
        vec![NodeBuilder::new("a").cpu(1000).obj(), NodeBuilder::new("b").cpu(2000).obj()],
        vec![],
    );
    let pending = vec![PodBuilder::new("d", "p").cpu(1500).obj()];
    let enc = encode(&state, &pending).unwrap();
    let good = evaluate_cpu(&profile(), &state, &pending, &enc).unwrap();
    let check = |m: &Matrix| {
        framework_mismatches(&profile(), &state, &pending, &enc, m, Agreement::Exact).unwrap()
    };
    assert!(check(&good).is_empty());
    let mut flipped = good.clone();
    flipped.filter[0] = CELL_FEASIBLE;
    assert!(!check(&flipped).is_empty(), "a feasible cell the framework rejects is reported");
    let mut rescored = good.clone();
    rescored.scores[0].raw[1] += 1;
    assert!(!check(&rescored).is_empty(), "a changed raw score is reported");
}

#[test]
fn balanced_allocation_scores_match_the_plugin_including_binary64_truncation() {
    /// Millicores, MiB of memory, GPUs.
    type Amounts = (i64, i64, i64);
    // (case, node amounts, pod amounts, raw score)
    let cases: &[(&str, Amounts, Amounts, i32)] = &[
        (
            "fractions 0 and 0.68 give 65, not the 66 of exact arithmetic",
            (1000, 100, 0),
            (0, 68, 0),
            65,
        ),
        ("fractions 1 and 0.82 give 90, not 91", (100, 100, 0), (100, 82, 0), 90),
        ("equal fractions give 100", (4000, 1000, 0), (1000, 250, 0), 100),
        (
            "three resources use the standard deviation (0.75, 0.5, 0.25 give 79)",
            (4000, 1000, 4),
            (3000, 500, 1),
            79,
        ),
        (
            "a request above allocatable counts as a fraction of 1",
            (1000, 1000, 0),
            (3000, 0, 0),
            50,
        ),
    ];
    let mut p = profile();
    p.args.balanced_allocation.resources = vec![
        ResourceSpec::new("cpu", 1),
        ResourceSpec::new("memory", 1),
        ResourceSpec::new("nvidia.com/gpu", 1),
    ];
    for &(name, (ncpu, nmem, ngpu), (pcpu, pmem, pgpu), want) in cases {
        let mut node = NodeBuilder::new("n").cpu(ncpu).memory(nmem * MI).pods(10);
        if ngpu > 0 {
            node = node.scalar("nvidia.com/gpu", ngpu);
        }
        let mut pod = PodBuilder::new("d", "p").cpu(pcpu).memory(pmem * MI);
        if pgpu > 0 {
            pod = pod.scalar("nvidia.com/gpu", pgpu);
        }
        let state = cluster(vec![node.obj()], vec![]);
        // NodeResourcesFit would reject the oversized pod; only the score matters here.
        let mut p = p.clone();
        p.plugins.filter.retain(|f| *f != PluginName::NodeResourcesFit);
        let m = evaluate_checked(&p, &state, &[pod.obj()]);
        let plane = m.plane(PluginName::NodeResourcesBalancedAllocation).expect("scored");
        assert_eq!(plane.raw, vec![want], "{name}");
        assert_eq!(plane.normalized, vec![want], "{name}: no normalization");
    }
}

#[test]
fn balanced_allocation_skips_best_effort_classes() {
    let state = cluster(vec![NodeBuilder::new("n").cpu(1000).memory(GI).obj()], vec![]);
    let pending = vec![PodBuilder::new("d", "best-effort").obj()];
    let m = evaluate_checked(&profile(), &state, &pending);
    let plane = m.plane(PluginName::NodeResourcesBalancedAllocation).expect("scored");
    assert_eq!(plane.skipped, vec![true]);
    assert_eq!(plane.normalized, vec![0], "a skipped plugin adds nothing");
}

#[test]
fn image_locality_scores_match_the_plugin_cases() {
    // Upstream's nodes: m1 lists gcr.io/40 (40 MiB, under three names), gcr.io/300 and
    // gcr.io/2000; m2 lists gcr.io/250 and gcr.io/10.
    let m1 = || {
        NodeBuilder::new("m1")
            .cpu(1000)
            .image(&["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40 * MI)
            .image(&["gcr.io/300:latest", "gcr.io/300:v1"], 300 * MI)
            .image(&["gcr.io/2000:latest"], 2000 * MI)
    };
    let m2 = || {
        NodeBuilder::new("m2")
            .cpu(1000)
            .image(&["gcr.io/250:latest"], 250 * MI)
            .image(&["gcr.io/10:latest", "gcr.io/10:v1"], 10 * MI)
    };
    let pod =
        |images: &[&str]| images.iter().fold(PodBuilder::new("d", "p"), |b, i| b.image(i)).obj();
    // (case, pod images, extra empty node, raw scores per node)
    let cases: &[(&str, &[&str], bool, &[i32])] = &[
        (
            "two images spread on two nodes prefer the larger",
            &["gcr.io/40", "gcr.io/250"],
            false,
            &[0, 5],
        ),
        ("two images on one node prefer that node", &["gcr.io/40", "gcr.io/300"], false, &[7, 0]),
        (
            "sizes between the thresholds scale linearly",
            &["gcr.io/2000", "gcr.io/10"],
            false,
            &[49, 0],
        ),
        ("a sum at the maximum scores 100", &["gcr.io/2000"], false, &[100, 0]),
        (
            "an image on one of three nodes counts a third (binary64 spread)",
            &["gcr.io/2000", "gcr.io/10"],
            true,
            &[32, 0, 0],
        ),
        // gcr.io/300 on one of two nodes: 150 MiB → 100 · (150 − 23) / 977 = 12.
        ("an untagged name matches the latest tag", &["gcr.io/300"], false, &[12, 0]),
        ("no containers score 0", &[], false, &[0, 0]),
        (
            "an image no node lists counts as a container only",
            &["nowhere:1", "gcr.io/2000"],
            false,
            &[49, 0],
        ),
    ];
    for &(name, images, third, want) in cases {
        let mut nodes = vec![m1().obj(), m2().obj()];
        if third {
            nodes.push(NodeBuilder::new("m3").cpu(1000).obj());
        }
        let state = cluster(nodes, vec![]);
        let m = evaluate_checked(&profile(), &state, &[pod(images)]);
        let plane = m.plane(PluginName::ImageLocality).expect("scored");
        assert_eq!(plane.raw, want.to_vec(), "{name}");
    }
}

/// `count` pods labelled `foo` bound to `node`.
fn foo_pods(node: &str, count: usize) -> Vec<Pod> {
    (0..count)
        .map(|i| PodBuilder::new("d", &format!("{node}-{i}")).label("foo", "").node(node).obj())
        .collect()
}

#[test]
fn pod_topology_spread_filters_with_the_first_failing_constraint() {
    use crate::model::UnsatisfiableAction::DoNotSchedule;
    use crate::model::testing::spread_constraint;
    // node-a, node-b in zone1, node-x, node-y in zone2, each labelled node=<name>; node-z has
    // no `node` label. foo pods spread 2/1/0/3 over a/b/x/y.
    let mut nodes: Vec<_> = ["node-a", "node-b", "node-x", "node-y"]
        .iter()
        .map(|n| {
            let zone = if *n < "node-x" { "zone1" } else { "zone2" };
            NodeBuilder::new(n).label("zone", zone).label("node", n).obj()
        })
        .collect();
    nodes.push(NodeBuilder::new("node-z").label("zone", "zone2").obj());
    let existing = [foo_pods("node-a", 2), foo_pods("node-b", 1), foo_pods("node-y", 3)].concat();
    let state = cluster(nodes, existing);
    let pod = |skew: i32, key: &str| {
        PodBuilder::new("d", "p")
            .label("foo", "")
            .spread(spread_constraint(skew, key, DoNotSchedule, &[("foo", "")]))
            .obj()
    };
    let label = Some(Check::PodTopologySpreadLabel);
    let skew = Some(Check::PodTopologySpreadSkew);
    // (case, pod, first failure per node a, b, x, y, z)
    let cases = [
        (
            "maxSkew 1 over nodes leaves only the empty node",
            pod(1, "node"),
            [skew, skew, None, skew, label],
        ),
        (
            "maxSkew 2 over nodes also admits node-b",
            pod(2, "node"),
            [skew, None, None, skew, label],
        ),
        (
            "zones count 3 and 3, so every zoned node fits",
            pod(1, "zone"),
            [None, None, None, None, None],
        ),
    ];
    for (name, pod, want) in cases {
        let m = evaluate_checked(&profile(), &state, &[pod]);
        let got: Vec<Option<Check>> = (0..5).map(|n| m.first_failure(0, n)).collect();
        assert_eq!(got, want.to_vec(), "{name}");
    }
}

#[test]
fn pod_topology_spread_scores_spread_pods_as_upstream() {
    use crate::model::UnsatisfiableAction::ScheduleAnyway;
    use crate::model::testing::spread_constraint;
    let hosts =
        |names: &[&str]| names.iter().map(|n| NodeBuilder::new(n).obj()).collect::<Vec<_>>();
    let existing =
        || [foo_pods("node-a", 2), foo_pods("node-b", 1), foo_pods("node-d", 3)].concat();
    let pod = |skew: i32| {
        PodBuilder::new("d", "p")
            .label("foo", "")
            .spread(spread_constraint(
                skew,
                "kubernetes.io/hostname",
                ScheduleAnyway,
                &[("foo", "")],
            ))
            .obj()
    };
    // Upstream's "2/1/0/3" cases: w = ln(4 + 2); maxSkew 1: raw 4, 2, 0, 5 → 20, 60, 100, 0;
    // maxSkew 2: raw 5, 3, 1, 6 → 33, 66, 100, 16.
    let cases = [
        ("maxSkew 1", pod(1), vec![4, 2, 0, 5], vec![20, 60, 100, 0]),
        ("maxSkew 2 waters the differences down", pod(2), vec![5, 3, 1, 6], vec![33, 66, 100, 16]),
    ];
    for (name, pod, raw, normalized) in cases {
        let state = cluster(hosts(&["node-a", "node-b", "node-c", "node-d"]), existing());
        let m = evaluate_checked(&profile(), &state, &[pod]);
        let plane = m.plane(PluginName::PodTopologySpread).expect("scored");
        assert_eq!((plane.raw.clone(), plane.normalized.clone()), (raw, normalized), "{name}");
    }
    // A node without the hostname label is ignored (raw and normalized 0), and the weight
    // counts the three others: w = ln(3 + 2).
    let mut nodes = hosts(&["node-a", "node-c", "node-d"]);
    let mut b = NodeBuilder::new("node-b").obj();
    b.labels.clear();
    nodes.push(b);
    let state = cluster(nodes, existing());
    let m = evaluate_checked(&profile(), &state, &[pod(1)]);
    let plane = m.plane(PluginName::PodTopologySpread).expect("scored");
    let b = state.node_index("node-b").unwrap();
    assert_eq!((plane.raw[b], plane.normalized[b]), (0, 0), "the ignored node");
}

#[test]
fn inter_pod_affinity_filters_each_rule_with_its_reason() {
    use crate::model::testing::affinity_term;
    // n1, n2 in zone a, n3 in zone b, n4 without a zone. A db pod runs on n1; a green pod with
    // required anti-affinity to green pods (per host) runs on n3.
    let nodes = vec![
        NodeBuilder::new("n1").label("zone", "a").obj(),
        NodeBuilder::new("n2").label("zone", "a").obj(),
        NodeBuilder::new("n3").label("zone", "b").obj(),
        NodeBuilder::new("n4").obj(),
    ];
    let existing = vec![
        PodBuilder::new("d", "db").label("app", "db").node("n1").obj(),
        PodBuilder::new("d", "green")
            .label("color", "green")
            .pod_anti_affinity(affinity_term("kubernetes.io/hostname", &[("color", "green")]))
            .node("n3")
            .obj(),
    ];
    let state = cluster(nodes, existing);
    let affinity = Some(Check::InterPodAffinity);
    let anti = Some(Check::InterPodAntiAffinity);
    let existing_anti = Some(Check::InterPodExistingAntiAffinity);
    // (case, pod, first failure on n1..n4)
    let cases = [
        (
            "required affinity to db pods per zone admits the db pod's zone only",
            PodBuilder::new("d", "p").pod_affinity(affinity_term("zone", &[("app", "db")])).obj(),
            [None, None, affinity, affinity],
        ),
        (
            "required anti-affinity to db pods per zone rejects the db pod's zone",
            PodBuilder::new("d", "p")
                .pod_anti_affinity(affinity_term("zone", &[("app", "db")]))
                .obj(),
            [anti, anti, None, None],
        ),
        (
            "an existing pod's anti-affinity rejects a green pod on its host",
            PodBuilder::new("d", "p").label("color", "green").obj(),
            [None, None, existing_anti, None],
        ),
        (
            "the first of a self-affine group may go to any node with the key",
            PodBuilder::new("d", "p")
                .label("app", "cache")
                .pod_affinity(affinity_term("zone", &[("app", "cache")]))
                .obj(),
            [None, None, None, affinity],
        ),
    ];
    for (name, pod, want) in cases {
        let m = evaluate_checked(&profile(), &state, &[pod]);
        let got: Vec<Option<Check>> = (0..4).map(|n| m.first_failure(0, n)).collect();
        assert_eq!(got, want.to_vec(), "{name}");
    }
}

#[test]
fn inter_pod_affinity_normalizes_in_binary64_as_upstream() {
    use crate::model::testing::affinity_term;
    // Preferred affinity of weight 100 to web pods and 29 to db pods, per zone: zone a (a web
    // pod) scores 100, zone b (a db pod) 29, zone c 0. 100 · (29 / 100) is 28.999999999999996 in
    // binary64, so upstream normalizes 29 to 28, not to the 29 of integer arithmetic.
    let nodes = vec![
        NodeBuilder::new("n1").label("zone", "a").obj(),
        NodeBuilder::new("n2").label("zone", "b").obj(),
        NodeBuilder::new("n3").label("zone", "c").obj(),
    ];
    let existing = vec![
        PodBuilder::new("d", "web").label("app", "web").node("n1").obj(),
        PodBuilder::new("d", "db").label("app", "db").node("n2").obj(),
    ];
    let state = cluster(nodes, existing);
    let pod = PodBuilder::new("d", "p")
        .preferred_pod_affinity(100, affinity_term("zone", &[("app", "web")]))
        .preferred_pod_affinity(29, affinity_term("zone", &[("app", "db")]))
        .obj();
    let m = evaluate_checked(&profile(), &state, &[pod]);
    let plane = m.plane(PluginName::InterPodAffinity).expect("scored");
    assert_eq!(plane.raw, vec![100, 29, 0]);
    assert_eq!(plane.normalized, vec![100, 28, 0]);
    // A pod without preferred terms that no existing pod's terms select is skipped.
    let m = evaluate_checked(&profile(), &state, &[PodBuilder::new("d", "q").obj()]);
    assert_eq!(m.plane(PluginName::InterPodAffinity).unwrap().skipped, vec![true]);
}

#[test]
fn a_pod_without_preferred_terms_is_scored_by_existing_pods_terms_that_select_it() {
    use crate::model::testing::affinity_term;
    // The existing pod on n1 prefers app=q pods in its zone: q, with no terms of its own, is
    // scored by that term (zone a); a pod the term does not select is skipped.
    let nodes = vec![
        NodeBuilder::new("n1").label("zone", "a").obj(),
        NodeBuilder::new("n2").label("zone", "b").obj(),
    ];
    let existing = vec![
        PodBuilder::new("d", "w")
            .preferred_pod_affinity(50, affinity_term("zone", &[("app", "q")]))
            .node("n1")
            .obj(),
    ];
    let state = cluster(nodes, existing);
    let q = PodBuilder::new("d", "q").label("app", "q").obj();
    let other = PodBuilder::new("d", "o").label("app", "o").obj();
    let m = evaluate_checked(&profile(), &state, &[q, other]);
    let plane = m.plane(PluginName::InterPodAffinity).expect("scored");
    assert_eq!(plane.skipped, vec![false, true]);
    assert_eq!(plane.raw[..2], [50, 0]);
    assert_eq!(plane.normalized[..2], [100, 0]);
}
