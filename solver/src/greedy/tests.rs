//! Tests of the greedy assignment: hand-made cases and properties over random problems.

use proptest::prelude::*;

use super::*;
use crate::objective::Objective;
use crate::testing::problem;
use crate::topology::{Counter, InterPod, Rule};

mod exchanges;

/// A class with these requests and count, priority 0, no per-node limit.
fn class(count: u32, requests: &[i64]) -> ClassSpec {
    crate::testing::class(count, 0, requests)
}

fn nodes_of(a: &Assignment, class: usize) -> Vec<usize> {
    a.placements.iter().filter(|p| p.class == class).map(|p| p.node).collect()
}

fn solve(p: &Problem) -> Assignment {
    solve_greedy(p, &GreedyOptions::default(), None).expect("valid problem")
}

#[test]
fn pods_go_to_the_best_scoring_feasible_node_with_room() {
    struct Case {
        name: &'static str,
        problem: Problem,
        want: Vec<usize>,
        unplaced: u32,
    }
    let with = |mut p: Problem, feasible: &[bool], score: &[i32]| {
        p.feasible = feasible.to_vec();
        p.score = score.to_vec();
        p
    };
    let cases = vec![
        Case {
            name: "the highest score wins",
            problem: with(
                problem(vec![class(1, &[1])], &[&[4], &[4], &[4]]),
                &[true; 3],
                &[1, 7, 3],
            ),
            want: vec![1],
            unplaced: 0,
        },
        Case {
            name: "ties go to the lowest node index",
            problem: with(
                problem(vec![class(1, &[1])], &[&[4], &[4], &[4]]),
                &[true; 3],
                &[5, 7, 7],
            ),
            want: vec![1],
            unplaced: 0,
        },
        Case {
            name: "an infeasible cell is never used, whatever its score",
            problem: with(problem(vec![class(1, &[1])], &[&[4], &[4]]), &[false, true], &[100, 0]),
            want: vec![1],
            unplaced: 0,
        },
        Case {
            name: "a node that fills is skipped for the next pod",
            problem: with(problem(vec![class(3, &[2])], &[&[4], &[4]]), &[true; 2], &[9, 1]),
            want: vec![0, 0, 1],
            unplaced: 0,
        },
        Case {
            name: "pods that fit nowhere stay unplaced",
            problem: with(problem(vec![class(3, &[3])], &[&[4], &[2]]), &[true; 2], &[0, 0]),
            want: vec![0],
            unplaced: 2,
        },
        Case {
            name: "every requested resource must fit",
            problem: with(
                problem(vec![class(1, &[1, 5])], &[&[8, 4], &[1, 5]]),
                &[true; 2],
                &[9, 0],
            ),
            want: vec![1],
            unplaced: 0,
        },
        Case {
            name: "an unrequested resource is not checked, even when overcommitted",
            problem: with(problem(vec![class(1, &[1, 0])], &[&[2, -5]]), &[true], &[0]),
            want: vec![0],
            unplaced: 0,
        },
        Case {
            name: "a per-node limit of one spreads the class",
            problem: with(
                problem(vec![ClassSpec { max_per_node: Some(1), ..class(3, &[1]) }], &[&[9], &[9]]),
                &[true; 2],
                &[5, 1],
            ),
            want: vec![0, 1],
            unplaced: 1,
        },
    ];
    for case in cases {
        let a = solve(&case.problem);
        assert_eq!(nodes_of(&a, 0), case.want, "{}", case.name);
        assert_eq!(a.unplaced, vec![case.unplaced], "{}", case.name);
    }
}

#[test]
fn a_higher_priority_tier_takes_the_capacity_first() {
    let mut p = problem(vec![class(2, &[2]), class(2, &[2])], &[&[4]]);
    p.classes[1].priority = 10;
    let a = solve(&p);
    assert_eq!(a.class_order, vec![1, 0]);
    assert_eq!(nodes_of(&a, 1), vec![0, 0]);
    assert_eq!(a.unplaced, vec![2, 0]);
}

#[test]
fn largest_first_keeps_small_pods_from_stranding_a_big_one() {
    // Two nodes with 2 GPUs each; two 1-GPU pods come first in queue order and prefer spreading
    // (node 1 scores higher for them until it holds one). Given order: the small pods land on
    // both nodes and the 2-GPU pod fits nowhere. Largest first: the 2-GPU pod goes first.
    let mut p = problem(vec![class(2, &[1]), class(1, &[2])], &[&[2], &[2]]);
    p.score = vec![20, 20, 20, 20]; // The same scale as `Spread` on the empty nodes.
    struct Spread;
    impl Rescore for Spread {
        fn rescore(&mut self, _class: usize, _node: usize, free: &[i64]) -> i64 {
            free[0] * 10 // More free: better (least allocated).
        }
    }
    let given = solve_greedy(
        &p,
        &GreedyOptions {
            class_order: ClassOrder::Given,
            relocate: false,
            even_spread: false,
            substitute: true,
            trade_again: true,
        },
        Some(&mut Spread),
    )
    .expect("valid");
    assert_eq!(nodes_of(&given, 0), vec![0, 1]);
    assert_eq!(given.unplaced, vec![0, 1]);
    let largest = solve_greedy(
        &p,
        &GreedyOptions {
            class_order: ClassOrder::LargestFirst,
            relocate: false,
            even_spread: false,
            substitute: true,
            trade_again: true,
        },
        Some(&mut Spread),
    )
    .expect("valid");
    assert_eq!(largest.class_order, vec![1, 0]);
    assert_eq!(largest.unplaced, vec![0, 0]);
}

#[test]
fn smallest_first_places_the_most_pods_when_the_tier_does_not_fit() {
    // One node with 4 units: a 4-unit pod and four 1-unit pods. Largest first places one pod;
    // smallest first places four.
    let p = problem(vec![class(1, &[4]), class(4, &[1])], &[&[4]]);
    let options = |class_order| GreedyOptions {
        class_order,
        relocate: false,
        even_spread: false,
        substitute: true,
        trade_again: true,
    };
    let largest = solve_greedy(&p, &options(ClassOrder::LargestFirst), None).expect("valid");
    assert_eq!(largest.placements.len(), 1);
    let smallest = solve_greedy(&p, &options(ClassOrder::SmallestFirst), None).expect("valid");
    assert_eq!(smallest.class_order, vec![1, 0]);
    assert_eq!(smallest.placements.len(), 4);
    assert_eq!(smallest.unplaced, vec![1, 0]);
}

#[test]
fn conflicting_classes_never_share_a_domain() {
    struct Case {
        name: &'static str,
        conflicts: Vec<Conflict>,
        /// Domain of each of the 4 nodes in topology 0 (zones) and 1 (hostnames).
        domains: [[u32; 4]; 2],
        counts: [u32; 2],
        /// The nodes of each class's pods, in placement order.
        want: [Vec<usize>; 2],
    }
    let zones = [0, 0, 1, 1];
    let hosts = [0, 1, 2, 3];
    let cases = vec![
        Case {
            name: "a class in conflict with itself on hostnames gets one pod per node",
            conflicts: vec![Conflict { a: 0, b: 0, topology: 1 }],
            domains: [zones, hosts],
            counts: [6, 0],
            want: [vec![0, 1, 2, 3], vec![]],
        },
        Case {
            name: "a class in conflict with itself on zones gets one pod per zone",
            conflicts: vec![Conflict { a: 0, b: 0, topology: 0 }],
            domains: [zones, hosts],
            counts: [6, 0],
            want: [vec![0, 2], vec![]],
        },
        Case {
            name: "nodes without the topology label are in no domain and never barred",
            conflicts: vec![Conflict { a: 0, b: 0, topology: 0 }],
            domains: [[0, NO_DOMAIN, NO_DOMAIN, 1], hosts],
            counts: [3, 0],
            want: [vec![0, 1, 1], vec![]],
        },
        Case {
            name: "two classes in conflict on zones take different zones",
            conflicts: vec![Conflict { a: 0, b: 1, topology: 0 }],
            domains: [zones, hosts],
            counts: [2, 2],
            want: [vec![0, 0], vec![2, 2]],
        },
        Case {
            name: "without conflicts both classes fill every node",
            conflicts: vec![],
            domains: [zones, hosts],
            counts: [4, 4],
            want: [vec![0, 0, 0, 0], vec![0, 0, 0, 0]],
        },
    ];
    for case in cases {
        let mut p = problem(
            vec![class(case.counts[0], &[1]), class(case.counts[1], &[1])],
            &[&[10], &[10], &[10], &[10]],
        );
        // Class 1 prefers node 0 (zone 0), where class 0 lands first.
        p.score = vec![4, 3, 2, 1, 4, 3, 2, 1];
        p.topologies = 2;
        p.domains = case.domains.iter().flatten().copied().collect();
        p.conflicts = case.conflicts;
        let a = solve_greedy(
            &p,
            &GreedyOptions {
                class_order: ClassOrder::Given,
                relocate: true,
                even_spread: true,
                substitute: true,
                trade_again: true,
            },
            None,
        )
        .expect("valid");
        assert_eq!([nodes_of(&a, 0), nodes_of(&a, 1)], case.want, "{}", case.name);
    }
}

#[test]
fn rescore_is_asked_only_for_nodes_whose_usage_changed() {
    struct Log(Vec<(usize, usize, Vec<i64>)>, Vec<(usize, usize)>);
    impl Rescore for Log {
        fn placed(&mut self, class: usize, node: usize) {
            self.1.push((class, node));
        }
        fn rescore(&mut self, class: usize, node: usize, free: &[i64]) -> i64 {
            self.0.push((class, node, free.to_vec()));
            -free[0] // Prefer the fuller node (most allocated).
        }
    }
    let mut p = problem(vec![class(2, &[1]), class(1, &[1])], &[&[4], &[4]]);
    p.score = vec![5, 1, 5, 1];
    let mut log = Log(Vec::new(), Vec::new());
    let a = solve_greedy(
        &p,
        &GreedyOptions {
            class_order: ClassOrder::Given,
            relocate: false,
            even_spread: false,
            substitute: true,
            trade_again: true,
        },
        Some(&mut log),
    )
    .expect("valid");
    // Class 0 (two pods: a scan per pod): static score sends pod 1 to node 0 (5 > 1); node 0
    // is rescored (-3 < 1), so pod 2 goes to node 1 (static 1). Class 1 starts: both nodes
    // changed, both rescored (-3 each): the tie goes to node 0. Nothing is rescored after the
    // last pod of a class is placed.
    assert_eq!(nodes_of(&a, 0), vec![0, 1]);
    assert_eq!(nodes_of(&a, 1), vec![0]);
    assert_eq!(log.0, vec![(0, 0, vec![3]), (1, 0, vec![3]), (1, 1, vec![3])]);
    assert_eq!(log.1, vec![(0, 0), (0, 1), (1, 0)]);
}

#[test]
fn a_class_placed_pod_by_pod_rescores_only_the_nodes_changed_since_its_last_pick() {
    // 40 pods of one class in the queue's order on 10 nodes, each on the node with the most
    // room left (lowest index on ties): pod k lands on node k mod 10. Every node changes, so
    // without the score cache each pick would rescore every changed node (up to 10 per
    // pod); with it, only the node the previous pod took.
    struct Counted(usize);
    impl Rescore for Counted {
        fn rescore(&mut self, _class: usize, _node: usize, free: &[i64]) -> i64 {
            self.0 += 1;
            free[0]
        }
    }
    let rows: Vec<[i64; 1]> = vec![[8]; 10];
    let free: Vec<&[i64]> = rows.iter().map(|r| r.as_slice()).collect();
    let mut p = problem(vec![class(40, &[1])], &free);
    p.score = vec![8; 10];
    p.queue = vec![0; 40];
    let mut counted = Counted(0);
    let a = solve_greedy(
        &p,
        &GreedyOptions {
            class_order: ClassOrder::Given,
            relocate: false,
            even_spread: false,
            substitute: true,
            trade_again: true,
        },
        Some(&mut counted),
    )
    .expect("valid");
    let want: Vec<usize> = (0..40).map(|k| k % 10).collect();
    assert_eq!(a.placements.iter().map(|pl| pl.node).collect::<Vec<_>>(), want);
    assert!(counted.0 <= 10 + 40, "{} rescores for 40 pods on 10 nodes", counted.0);
}

#[test]
fn relocation_moves_a_placed_pod_to_make_room() {
    // Node 0 (4 cpu) and node 1 (2 cpu). A 2-cpu pod (class 0, placed first: higher priority)
    // prefers node 0; the 4-cpu pod (class 1) then fits nowhere. Relocation moves the small pod
    // to node 1 and places the big one on node 0.
    let mut p = problem(vec![class(1, &[2]), class(1, &[4])], &[&[4], &[2]]);
    p.classes[0].priority = 1;
    p.score = vec![5, 1, 0, 0];
    let without = solve_greedy(
        &p,
        &GreedyOptions { relocate: false, even_spread: false, ..Default::default() },
        None,
    )
    .expect("valid");
    assert_eq!(without.unplaced, vec![0, 1]);
    struct Log(Vec<String>);
    impl Rescore for Log {
        fn placed(&mut self, class: usize, node: usize) {
            self.0.push(format!("+{class}@{node}"));
        }
        fn removed(&mut self, class: usize, node: usize) {
            self.0.push(format!("-{class}@{node}"));
        }
        fn rescore(&mut self, _class: usize, _node: usize, _free: &[i64]) -> i64 {
            0
        }
    }
    let mut log = Log(Vec::new());
    let with = solve_greedy(&p, &GreedyOptions::default(), Some(&mut log)).expect("valid");
    assert_eq!(with.unplaced, vec![0, 0]);
    assert_eq!(
        with.placements,
        vec![Placed { class: 0, node: 1 }, Placed { class: 1, node: 0 }],
        "the moved pod keeps its place in the decision order"
    );
    assert_eq!(log.0, vec!["+0@0", "-0@0", "+0@1", "+1@0"]);
}

#[test]
fn relocation_may_move_an_initial_pod() {
    // Two GPU nodes with 2 GPUs, each already running one 1-GPU pod of class 0 (placed by an
    // earlier solve). A 2-GPU pod fits only after one of them moves next to the other.
    let mut p = problem(vec![class(0, &[1]), class(1, &[2])], &[&[1], &[1]]);
    p.initial = vec![Placed { class: 0, node: 0 }, Placed { class: 0, node: 1 }];
    let a = solve(&p);
    assert_eq!(a.placements, vec![Placed { class: 1, node: 0 }]);
    assert_eq!(a.initial, vec![Placed { class: 0, node: 1 }, Placed { class: 0, node: 1 }]);
    let bad = Problem { initial: vec![Placed { class: 0, node: 7 }], ..p };
    assert_eq!(
        solve_greedy(&bad, &GreedyOptions::default(), None),
        Err(SolverError::InitialOutOfRange { class: 0, node: 7 })
    );
}

#[test]
fn bad_dimensions_and_negative_requests_are_errors() {
    let ok = problem(vec![class(1, &[1])], &[&[4], &[4]]);
    let cases: Vec<(&str, Problem, SolverError)> = vec![
        (
            "a short score matrix",
            Problem { score: vec![0], ..ok.clone() },
            SolverError::Dimension { what: "score entries", expected: 2, found: 1 },
        ),
        (
            "a short feasibility matrix",
            Problem { feasible: vec![], ..ok.clone() },
            SolverError::Dimension { what: "feasibility entries", expected: 2, found: 0 },
        ),
        (
            "a free row of the wrong width",
            Problem { free: vec![1, 2, 3], ..ok.clone() },
            SolverError::Dimension { what: "free capacity entries", expected: 2, found: 3 },
        ),
        (
            "requests of the wrong width",
            Problem { classes: vec![class(1, &[1, 1])], ..ok.clone() },
            SolverError::Dimension { what: "requests of a class", expected: 1, found: 2 },
        ),
        (
            "a negative request",
            Problem { classes: vec![class(1, &[-1])], ..ok.clone() },
            SolverError::NegativeRequest { class: 0, resource: 0, value: -1 },
        ),
    ];
    for (name, p, want) in cases {
        assert_eq!(solve_greedy(&p, &GreedyOptions::default(), None), Err(want), "{name}");
    }
}

/// A random problem: up to 6 classes, up to 8 nodes, 2 resources.
fn random_problem() -> impl Strategy<Value = Problem> {
    (1usize..7, 1usize..9).prop_flat_map(|(n_classes, n_nodes)| {
        let class =
            (0u32..6, 0i32..3, prop::collection::vec(0i64..5, 2), prop::option::of(1u32..3))
                .prop_map(|(count, priority, requests, max_per_node)| ClassSpec {
                    count,
                    priority,
                    requests,
                    max_per_node,
                });
        (
            prop::collection::vec(class, n_classes),
            prop::collection::vec(-2i64..10, n_nodes * 2),
            prop::collection::vec(prop::bool::weighted(0.7), n_classes * n_nodes),
            crate::testing::scores(0..5, n_classes * n_nodes),
            prop::collection::vec((0..n_classes, 0..n_nodes), 0..6),
            // Two topologies: domains 0..3 or none (3 stands for NO_DOMAIN).
            prop::collection::vec(0u32..4, n_nodes * 2),
            prop::collection::vec((0..n_classes, 0..n_classes, 0usize..2), 0..4),
        )
            .prop_map(
                move |(classes, mut free, feasible, score, initial, domains, conflicts)| {
                    // Initial pods where they are feasible, fit and respect the limit.
                    let mut placed = Vec::new();
                    let mut count = vec![0u32; n_classes * n_nodes];
                    for (c, n) in initial {
                        let req = &classes[c].requests;
                        let row = &mut free[n * 2..n * 2 + 2];
                        let cell = c * n_nodes + n;
                        if feasible[cell]
                            && count[cell] < classes[c].max_per_node.unwrap_or(u32::MAX)
                            && fits(req, row)
                        {
                            for (f, r) in row.iter_mut().zip(req) {
                                *f -= r;
                            }
                            count[cell] += 1;
                            placed.push(Placed { class: c, node: n });
                        }
                    }
                    Problem {
                        resources: 2,
                        nodes: n_nodes,
                        classes,
                        free,
                        feasible,
                        score,
                        initial: placed,
                        topologies: 2,
                        domains: domains
                            .into_iter()
                            .map(|d| if d == 3 { NO_DOMAIN } else { d })
                            .collect(),
                        conflicts: conflicts
                            .into_iter()
                            .map(|(a, b, topology)| Conflict { a, b, topology })
                            .collect(),
                        ..Problem::default()
                    }
                },
            )
    })
}

/// Whether a pod of class `c` on `node` would conflict with one of `placed`.
fn conflicts_with(p: &Problem, placed: &[Placed], c: usize, node: usize) -> bool {
    p.conflicts.iter().any(|k| {
        let d = p.domains[k.topology * p.nodes + node];
        d != NO_DOMAIN
            && placed.iter().any(|q| {
                let pair = (k.a == c && k.b == q.class) || (k.b == c && k.a == q.class);
                pair && p.domains[k.topology * p.nodes + q.node] == d
            })
    })
}

/// A usage-dependent score: prefers nodes with more free capacity of resource 0.
struct LeastAllocated;

impl Rescore for LeastAllocated {
    fn rescore(&mut self, class: usize, _node: usize, free: &[i64]) -> i64 {
        free[0] * 3 + free[1] - class as i64
    }
}

/// A usage-dependent score within 5 of the static one (more free room of resource 0 scores
/// higher), with that range as its [`Rescore::bound`] when `bounded` (else the default bound,
/// which rescores every changed node), and whole rows at once ([`Rescore::rescore_row`]) when
/// `rows`.
pub(crate) struct Capped {
    pub(crate) score: Vec<i32>,
    pub(crate) nodes: usize,
    pub(crate) bounded: bool,
    pub(crate) rows: bool,
}

impl Rescore for Capped {
    fn rescore(&mut self, class: usize, node: usize, free: &[i64]) -> i64 {
        i64::from(self.score[class * self.nodes + node]) + free[0].clamp(0, 10) - 5
    }

    fn bound(&mut self, class: usize, node: usize) -> i64 {
        if self.bounded { i64::from(self.score[class * self.nodes + node]) + 5 } else { i64::MAX }
    }

    fn rescore_row(
        &mut self,
        class: usize,
        version: &[u64],
        free: &[i64],
        width: usize,
        out: &mut Vec<i64>,
    ) -> bool {
        if !self.rows {
            return false;
        }
        for (node, &v) in version.iter().enumerate() {
            out.push(if v == 0 {
                i64::from(self.score[class * self.nodes + node])
            } else {
                self.rescore(class, node, &free[node * width..(node + 1) * width])
            });
        }
        true
    }
}

#[test]
fn a_changed_node_whose_bound_cannot_win_is_not_rescored() {
    // Three 1-pod classes in queue order, each node with room for all. Class 0 lands on node 0
    // (static 9 beats 1 and 0); node 0 has changed from then on.
    struct Counting(Capped, Vec<usize>);
    impl Rescore for Counting {
        fn rescore(&mut self, class: usize, node: usize, free: &[i64]) -> i64 {
            self.1.push(node);
            self.0.rescore(class, node, free)
        }
        fn bound(&mut self, class: usize, node: usize) -> i64 {
            self.0.bound(class, node)
        }
    }
    let mut p = problem(vec![class(1, &[1]), class(1, &[1]), class(1, &[1])], &[&[9], &[9], &[9]]);
    p.score = vec![9, 1, 0, 9, 1, 0, 3, 20, 0];
    let capped = Capped { score: p.score.clone(), nodes: 3, bounded: true, rows: false };
    let mut counting = Counting(capped, Vec::new());
    let options = GreedyOptions {
        class_order: ClassOrder::Given,
        relocate: false,
        even_spread: false,
        substitute: true,
        trade_again: true,
    };
    let a = solve_greedy(&p, &options, Some(&mut counting)).expect("valid");
    // Class 1: node 0 rescored (9 + 5 - 5 = 9 > 1). Class 2: node 1 (static 20) beats node 0's
    // bound (3 + 5), so node 0 is not rescored.
    assert_eq!([nodes_of(&a, 0), nodes_of(&a, 1), nodes_of(&a, 2)], [vec![0], vec![0], vec![1]]);
    assert_eq!(counting.1, vec![0]);
}

#[test]
fn a_callback_that_scores_whole_rows_is_asked_for_rows_and_never_for_a_node() {
    // One-pod classes in queue order. Class 0 takes node 0 and class 1 node 1 (9 against 0);
    // class 2's row has both changed nodes rescored (6 and 7, node 2 unchanged at 5): node 1.
    struct Rows(Vec<Vec<u64>>);
    impl Rescore for Rows {
        fn rescore(&mut self, _class: usize, node: usize, _free: &[i64]) -> i64 {
            panic!("node {node} rescored alone");
        }
        fn bound(&mut self, _class: usize, node: usize) -> i64 {
            panic!("node {node} bounded");
        }
        fn rescore_row(
            &mut self,
            class: usize,
            version: &[u64],
            _free: &[i64],
            _width: usize,
            out: &mut Vec<i64>,
        ) -> bool {
            self.0.push(version.to_vec());
            let fixed = [[9, 0, 0], [0, 9, 0], [0, 0, 5]][class];
            out.extend(
                version.iter().zip(fixed).enumerate().map(
                    |(n, (&v, s))| {
                        if v == 0 { s } else { 6 + n as i64 }
                    },
                ),
            );
            true
        }
    }
    let mut p = problem(vec![class(1, &[1]), class(1, &[1]), class(1, &[1])], &[&[9], &[9], &[9]]);
    p.score = vec![9, 0, 0, 0, 9, 0, 0, 0, 5];
    let options = GreedyOptions {
        class_order: ClassOrder::Given,
        relocate: false,
        even_spread: false,
        substitute: true,
        trade_again: true,
    };
    let mut rows = Rows(Vec::new());
    let a = solve_greedy(&p, &options, Some(&mut rows)).expect("valid");
    assert_eq!([nodes_of(&a, 0), nodes_of(&a, 1), nodes_of(&a, 2)], [vec![0], vec![1], vec![1]]);
    assert_eq!(rows.0, vec![vec![0, 0, 0], vec![1, 0, 0], vec![1, 1, 0]]);
}

/// `p` with its pods in a random queue order.
pub(crate) fn with_queue(p: Problem) -> impl Strategy<Value = Problem> {
    let queue: Vec<usize> = p
        .classes
        .iter()
        .enumerate()
        .flat_map(|(c, class)| std::iter::repeat_n(c, class.count as usize))
        .collect();
    Just(queue).prop_shuffle().prop_map(move |queue| Problem { queue, ..p.clone() })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Skipping changed nodes whose bound cannot win, and scanning rescored rows, choose what
    /// rescoring every changed node does.
    #[test]
    fn bounded_rescoring_chooses_what_rescoring_every_node_chooses(
        p in random_problem(),
        order in 0u8..3,
        relocate in any::<bool>(),
        scan_pods in prop::sample::select(vec![0u32, SCAN_PODS, u32::MAX]),
    ) {
        let class_order = match order {
            0 => ClassOrder::Given,
            1 => ClassOrder::LargestFirst,
            _ => ClassOrder::SmallestFirst,
        };
        let options = GreedyOptions { class_order, relocate, even_spread: relocate, substitute: true, trade_again: true };
        let mut bounded = Capped { score: p.score.clone(), nodes: p.nodes, bounded: true, rows: false };
        let mut every = Capped { score: p.score.clone(), nodes: p.nodes, bounded: false, rows: false };
        let mut rows = Capped { score: p.score.clone(), nodes: p.nodes, bounded: true, rows: true };
        let tuning = Tuning { scan_pods, plain: false };
        let a = solve_with(&p, &options, Some(&mut bounded), tuning).expect("valid");
        let b = solve_with(&p, &options, Some(&mut every), tuning).expect("valid");
        let c = solve_with(&p, &options, Some(&mut rows), tuning).expect("valid");
        prop_assert_eq!(&a, &b);
        prop_assert_eq!(&a, &c);
    }

    /// The candidates kept across picks (relocation's destinations) choose what scans of
    /// every node choose, in every class order, with and without rescoring.
    #[test]
    fn kept_candidates_choose_what_plain_scans_choose(
        p in random_problem().prop_flat_map(with_queue),
        order in 0u8..3,
        rescored in any::<bool>(),
        scan_pods in prop::sample::select(vec![0u32, SCAN_PODS, u32::MAX]),
    ) {
        let class_order = match order {
            0 => ClassOrder::Given,
            1 => ClassOrder::LargestFirst,
            _ => ClassOrder::SmallestFirst,
        };
        let options = GreedyOptions { class_order, relocate: true, even_spread: true, substitute: true, trade_again: true };
        let run = |plain: bool| {
            let mut capped = Capped { score: p.score.clone(), nodes: p.nodes, bounded: true, rows: false };
            let rescore: Option<&mut dyn Rescore> = if rescored { Some(&mut capped) } else { None };
            solve_with(&p, &options, rescore, Tuning { scan_pods, plain }).expect("valid")
        };
        prop_assert_eq!(run(false), run(true));
    }

    /// A scan of a class's row per pod ([`State::best_direct`]: unchanged nodes compared by
    /// score before the checks of whether they can take the pod, changed nodes bounded by the
    /// best of those) chooses what the class's candidate heaps choose.
    #[test]
    fn row_scans_choose_what_candidate_heaps_choose(
        p in random_problem().prop_flat_map(with_queue),
        order in 0u8..3,
        rescored in any::<bool>(),
        bounded in any::<bool>(),
        relocate in any::<bool>(),
    ) {
        let class_order = match order {
            0 => ClassOrder::Given,
            1 => ClassOrder::LargestFirst,
            _ => ClassOrder::SmallestFirst,
        };
        let options = GreedyOptions { class_order, relocate, even_spread: relocate, substitute: true, trade_again: true };
        let run = |scan_pods: u32| {
            let mut capped = Capped { score: p.score.clone(), nodes: p.nodes, bounded, rows: false };
            let rescore: Option<&mut dyn Rescore> = if rescored { Some(&mut capped) } else { None };
            solve_with(&p, &options, rescore, Tuning { scan_pods, plain: false }).expect("valid")
        };
        prop_assert_eq!(run(u32::MAX), run(0));
    }

    #[test]
    fn assignments_respect_capacity_feasibility_and_limits(
        p in random_problem(),
        order in 0u8..3,
        dynamic in any::<bool>(),
        relocate in any::<bool>(),
    ) {
        let options = GreedyOptions {
            class_order: match order {
                0 => ClassOrder::Given,
                1 => ClassOrder::LargestFirst,
                _ => ClassOrder::SmallestFirst,
            },
            relocate,
            even_spread: relocate,
            substitute: true,
            trade_again: true,
        };
        let mut scorer = LeastAllocated;
        let a = solve_greedy(&p, &options, if dynamic { Some(&mut scorer) } else { None })
            .expect("valid problem");
        // Replay from the capacity before the initial pods: the initial pods where they end
        // up, then the placements; each fits when it is made, on a feasible cell, within the
        // limit.
        let mut free = p.free.clone();
        for pl in &p.initial {
            for r in 0..p.resources {
                free[pl.node * p.resources + r] += p.classes[pl.class].requests[r];
            }
        }
        let mut per = vec![0u32; p.classes.len() * p.nodes];
        let mut placed = vec![0u32; p.classes.len()];
        prop_assert_eq!(a.initial.len(), p.initial.len());
        for (k, pl) in a.initial.iter().chain(&a.placements).enumerate() {
            let req = &p.classes[pl.class].requests;
            prop_assert!(p.feasible[pl.class * p.nodes + pl.node], "infeasible cell used");
            for r in 0..p.resources {
                let f = &mut free[pl.node * p.resources + r];
                prop_assert!(req[r] == 0 || req[r] <= *f, "capacity exceeded");
                *f -= req[r];
            }
            per[pl.class * p.nodes + pl.node] += 1;
            prop_assert!(
                per[pl.class * p.nodes + pl.node] <= p.classes[pl.class].max_per_node.unwrap_or(u32::MAX),
                "per-node limit exceeded"
            );
            if k >= a.initial.len() {
                placed[pl.class] += 1;
                let before = &a.placements[..k - a.initial.len()];
                prop_assert!(!conflicts_with(&p, before, pl.class, pl.node), "conflict violated");
            }
        }
        for (c, class) in p.classes.iter().enumerate() {
            prop_assert_eq!(placed[c] + a.unplaced[c], class.count);
            // Maximal: an unplaced pod fits on no feasible node at the end.
            if a.unplaced[c] > 0 {
                for n in 0..p.nodes {
                    let room = fits(&class.requests, &free[n * p.resources..(n + 1) * p.resources]);
                    let under = per[c * p.nodes + n] < class.max_per_node.unwrap_or(u32::MAX);
                    let open = !conflicts_with(&p, &a.placements, c, n);
                    prop_assert!(!(p.feasible[c * p.nodes + n] && room && under && open), "an unplaced pod fits node {}", n);
                }
            }
        }
        // Priority tiers: classes are placed highest priority first.
        let prios: Vec<i32> = a.class_order.iter().map(|&c| p.classes[c].priority).collect();
        prop_assert!(prios.windows(2).all(|w| w[0] >= w[1]));
        // Relocation only adds placements to the greedy pass.
        if relocate {
            let mut scorer3 = LeastAllocated;
            let plain = solve_greedy(
                &p,
                &GreedyOptions { relocate: false, even_spread: false, ..options },
                if dynamic { Some(&mut scorer3) } else { None },
            )
            .expect("valid problem");
            prop_assert!(plain.placements.len() <= a.placements.len());
        }
        // Deterministic.
        let mut scorer2 = LeastAllocated;
        let again = solve_greedy(&p, &options, if dynamic { Some(&mut scorer2) } else { None })
            .expect("valid problem");
        prop_assert_eq!(again, a);
    }

    #[test]
    fn without_relocation_each_pod_takes_a_best_candidate(p in random_problem()) {
        let options = GreedyOptions { relocate: false, even_spread: false, ..GreedyOptions::default() };
        let a = solve_greedy(&p, &options, None).expect("valid problem");
        let mut free = p.free.clone();
        let mut per = vec![0u32; p.classes.len() * p.nodes];
        for pl in &p.initial {
            per[pl.class * p.nodes + pl.node] += 1;
        }
        prop_assert_eq!(&a.initial, &p.initial, "nothing moves without relocation");
        for (k, pl) in a.placements.iter().enumerate() {
            let class = &p.classes[pl.class];
            let before = &a.placements[..k];
            let best = (0..p.nodes)
                .filter(|&n| {
                    p.feasible[pl.class * p.nodes + n]
                        && fits(&class.requests, &free[n * p.resources..(n + 1) * p.resources])
                        && per[pl.class * p.nodes + n] < class.max_per_node.unwrap_or(u32::MAX)
                        && !conflicts_with(&p, before, pl.class, n)
                })
                .max_by(|&x, &y| {
                    p.score[pl.class * p.nodes + x]
                        .cmp(&p.score[pl.class * p.nodes + y])
                        .then(y.cmp(&x))
                });
            prop_assert_eq!(best, Some(pl.node));
            for r in 0..p.resources {
                free[pl.node * p.resources + r] -= class.requests[r];
            }
            per[pl.class * p.nodes + pl.node] += 1;
        }
    }
}
