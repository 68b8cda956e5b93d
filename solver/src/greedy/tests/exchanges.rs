//! Tests of the steps that change the greedy's placements after it: trading one placed pod for
//! several, substituting an unplaced pod for a better-served workload's, evening out spread and
//! filling the room the moves join.

use super::*;

/// Follows the callback's placements and removals per class and node.
struct Tally(BTreeMap<(usize, usize), i64>);

impl Rescore for Tally {
    fn placed(&mut self, class: usize, node: usize) {
        *self.0.entry((class, node)).or_default() += 1;
    }
    fn removed(&mut self, class: usize, node: usize) {
        *self.0.entry((class, node)).or_default() -= 1;
    }
    fn rescore(&mut self, _class: usize, _node: usize, _free: &[i64]) -> i64 {
        0
    }
}

/// Solves `problem` with a [`Tally`] as callback and asserts that it heard every placement,
/// move, trade and substitution as they stand at the end, and that no node of room 2000 in
/// the first resource holds more.
fn solve_heard(problem: &Problem, options: &GreedyOptions, name: &str) -> Assignment {
    let mut tally = Tally(BTreeMap::new());
    let a = solve_greedy(problem, options, Some(&mut tally)).expect("valid");
    let mut want: BTreeMap<(usize, usize), i64> = BTreeMap::new();
    for p in &a.placements {
        *want.entry((p.class, p.node)).or_default() += 1;
    }
    tally.0.retain(|_, n| *n != 0);
    assert_eq!(tally.0, want, "{name}: the callback heard every change");
    for node in 0..problem.nodes {
        let used: i64 = a
            .placements
            .iter()
            .filter(|p| p.node == node)
            .map(|p| problem.classes[p.class].requests[0])
            .sum();
        assert!(used <= 2000, "{name}: node {node} holds {used}");
    }
    a
}

#[test]
fn a_placed_pod_is_traded_for_more_pods_that_request_as_much() {
    struct Case {
        name: &'static str,
        problem: Problem,
        relocate: bool,
        unplaced: Vec<u32>,
    }
    // Class 0: large pods, placed first (largest first); class 1: small pods that find no room.
    let two_nodes = |large: u32, small: u32, large_req: &[i64], small_req: &[i64]| {
        let free: &[i64] = if large_req.len() == 1 { &[2000] } else { &[2000, 4000] };
        problem(vec![class(large, large_req), class(small, small_req)], &[free, free])
    };
    let lower_tier = {
        let mut p = two_nodes(2, 4, &[2000], &[500]);
        p.classes[1].priority = -1;
        p
    };
    // One zone per node; a `ScheduleAnyway` spread term (maxSkew 5) over class `c`'s pods,
    // `initial` of them per zone before the solve.
    let zoned = |c: usize, initial: &[u32]| {
        let mut p = two_nodes(2, 4, &[2000], &[500]);
        p.topologies = 1;
        p.domains = vec![0, 1];
        p.inter_pod = InterPod {
            counters: vec![Counter {
                topology: 0,
                members: vec![c],
                initial: initial.to_vec(),
                ..Counter::default()
            }],
            rules: vec![Rule::Soft { class: c, counter: 0, weight: -1, max_skew: 5 }],
        };
        p
    };
    let cases = vec![
        Case {
            name: "four small pods take the room of one large pod",
            problem: two_nodes(2, 4, &[2000], &[500]),
            relocate: true,
            unplaced: vec![1, 0],
        },
        Case {
            name: "three small pods requesting less than the large one are not worth it",
            problem: two_nodes(2, 3, &[2000], &[500]),
            relocate: true,
            unplaced: vec![0, 3],
        },
        Case {
            name: "every resource must be covered, not only the first",
            problem: two_nodes(2, 4, &[2000, 4000], &[500, 500]),
            relocate: true,
            unplaced: vec![0, 4],
        },
        Case {
            name: "a class keeps at least one pod this solve placed",
            problem: two_nodes(1, 8, &[2000], &[500]),
            relocate: true,
            unplaced: vec![0, 4],
        },
        Case {
            name: "pods of a lower priority tier never take a higher tier's room",
            problem: lower_tier,
            relocate: true,
            unplaced: vec![0, 4],
        },
        Case {
            name: "a pod whose leaving lowers its workload's spread minimum stays",
            problem: zoned(0, &[]),
            relocate: true,
            unplaced: vec![0, 4],
        },
        Case {
            name: "a pod whose zone holds more than the minimum may leave",
            problem: zoned(0, &[1, 0]),
            relocate: true,
            unplaced: vec![1, 0],
        },
        Case {
            name: "a workload whose total could be spread evenly keeps every pod",
            problem: zoned(0, &[2, 0]),
            relocate: true,
            unplaced: vec![0, 4],
        },
        Case {
            name: "pods taken never raise their workload's spread maximum",
            problem: zoned(1, &[2, 2]),
            relocate: true,
            unplaced: vec![0, 4],
        },
        Case {
            name: "without relocation nothing is traded",
            problem: two_nodes(2, 4, &[2000], &[500]),
            relocate: false,
            unplaced: vec![0, 4],
        },
    ];
    for case in cases {
        let options =
            GreedyOptions { relocate: case.relocate, even_spread: false, ..Default::default() };
        let a = solve_heard(&case.problem, &options, case.name);
        assert_eq!(a.unplaced, case.unplaced, "{}", case.name);
    }
}

#[test]
fn after_spreading_smaller_pods_of_the_worst_served_workloads_take_a_large_pods_room() {
    // Two nodes of 2000. Class 0: two large pods, placed first, filling both nodes; class 1:
    // one large pod that finds no room and, first in line, makes every in-order trade fail
    // (it fills the room alone); classes 2 and 3: four pods of 500 each, none placed.
    let p = problem(
        vec![class(2, &[2000]), class(1, &[2000]), class(4, &[500]), class(4, &[500])],
        &[&[2000], &[2000]],
    );
    let cases = [
        ("without evening out the second trade does not run", false, vec![0, 1, 4, 4]),
        ("the room goes round the small classes, two pods each", true, vec![1, 1, 2, 2]),
    ];
    for (name, even_spread, unplaced) in cases {
        let options = GreedyOptions { even_spread, ..Default::default() };
        let a = solve_heard(&p, &options, name);
        assert_eq!(a.unplaced, unplaced, "{name}");
    }
}

#[test]
fn an_unplaced_pod_takes_the_node_of_a_better_served_workload_where_that_evens_spread_out() {
    struct Case {
        name: &'static str,
        problem: Problem,
        even_spread: bool,
        unplaced: Vec<u32>,
        taker_nodes: Vec<usize>,
    }
    // One zone per node, room for two pods on each. Class 0 (the giver, 4 pods, placed first)
    // fills nodes 1 and 2 by its scores; class 1 (the taker, 3 pods, barred from node 1) finds
    // room for two on node 0. The taker's `ScheduleAnyway` counter starts at 1, 2, 0 per zone,
    // so its one emptiest zone is node 2's; the giver's starts at `giver_initial`.
    let base = |giver_initial: &[u32], giver_req: &[i64], taker_req: &[i64], giver_prio: i32| {
        let free: &[i64] = if giver_req.len() == 1 { &[2000] } else { &[2000, 2000] };
        let mut p = problem(
            vec![
                crate::testing::class(4, giver_prio, giver_req),
                crate::testing::class(3, 0, taker_req),
            ],
            &[free, free, free],
        );
        p.score = vec![0, 5, 9, 0, 0, 0];
        p.feasible[3 + 1] = false;
        p.topologies = 1;
        p.domains = vec![0, 1, 2];
        p.inter_pod = InterPod {
            counters: vec![
                Counter {
                    topology: 0,
                    members: vec![1],
                    initial: vec![1, 2, 0],
                    ..Counter::default()
                },
                Counter {
                    topology: 0,
                    members: vec![0],
                    initial: giver_initial.to_vec(),
                    ..Counter::default()
                },
            ],
            rules: vec![
                Rule::Soft { class: 1, counter: 0, weight: -1, max_skew: 5 },
                Rule::Soft { class: 0, counter: 1, weight: -1, max_skew: 5 },
            ],
        };
        p
    };
    let cases = vec![
        Case {
            name: "a pod of the more-served, evenly spread workload gives way (skews 3 and 0 \
                   become 2 and 1)",
            problem: base(&[2, 0, 0], &[1000], &[1000], 0),
            even_spread: true,
            unplaced: vec![1, 0],
            taker_nodes: vec![0, 0, 2],
        },
        Case {
            name: "a giver whose skew would rise past one keeps its pod",
            problem: base(&[3, 0, 0], &[1000], &[1000], 0),
            even_spread: true,
            unplaced: vec![0, 1],
            taker_nodes: vec![0, 0],
        },
        Case {
            name: "a giver requesting more of any resource than the taker keeps its pod",
            problem: base(&[2, 0, 0], &[1000, 600], &[1000, 500], 0),
            even_spread: true,
            unplaced: vec![0, 1],
            taker_nodes: vec![0, 0],
        },
        Case {
            name: "a pod of another priority tier is never given up",
            problem: base(&[2, 0, 0], &[1000], &[1000], 1),
            even_spread: true,
            unplaced: vec![0, 1],
            taker_nodes: vec![0, 0],
        },
        Case {
            name: "a workload served no better than the taker keeps its pods",
            problem: {
                // The giver's two pods fill node 2; node 1 has no room (nothing to relocate to).
                let mut p = base(&[2, 0, 0], &[1000], &[1000], 0);
                p.classes[0].count = 2;
                p.classes[1].count = 4;
                p.free[1] = 0;
                p
            },
            even_spread: true,
            unplaced: vec![0, 2],
            taker_nodes: vec![0, 0],
        },
        Case {
            name: "without evening out nothing is substituted",
            problem: base(&[2, 0, 0], &[1000], &[1000], 0),
            even_spread: false,
            unplaced: vec![0, 1],
            taker_nodes: vec![0, 0],
        },
    ];
    for case in cases {
        let options = GreedyOptions {
            class_order: ClassOrder::Given,
            even_spread: case.even_spread,
            ..Default::default()
        };
        let a = solve_heard(&case.problem, &options, case.name);
        assert_eq!(a.unplaced, case.unplaced, "{}", case.name);
        let mut taker = nodes_of(&a, 1);
        taker.sort_unstable();
        assert_eq!(taker, case.taker_nodes, "{}", case.name);
    }
}

#[test]
fn two_pods_give_their_node_to_a_larger_one_of_a_worse_served_workload_for_a_pod_trading_won() {
    struct Case {
        name: &'static str,
        problem: Problem,
        unplaced: Vec<u32>,
        taker_nodes: Vec<usize>,
    }
    // Nodes 0-2 (one zone each, room 2000). Classes 0 and 4 (the givers, two pods of 1000
    // each, at most one per node) prefer node 2, then node 1; class 1 (the taker, 3 pods of
    // `taker_req`), placed between them, finds room on node 0 only. The taker's
    // `ScheduleAnyway` counter starts at 1, 2, 0 per zone, so its one emptiest zone is node
    // 2's, where only both givers' pods leaving make room; class 0's counter starts at
    // `giver_initial`, class 4's at 2, 0, 1. Nodes 3 and 4 (a zone the counters leave out)
    // hold `large` pods of 2000 of class 2, which trading gives up for four of class 3's 500:
    // the pods won that a pair may spend. Where the cases give two resources, a third counts
    // pod slots (each pod requests one of 110, as kplace encodes them).
    let with = |giver_initial: &[u32], giver_req: &[i64], taker_req: &[i64], large: u32| {
        let wide = |r: &[i64]| {
            let mut v = r.to_vec();
            if giver_req.len() == 2 {
                v.resize(2, 0);
                v.push(1);
            }
            v
        };
        let giver = |count| ClassSpec { max_per_node: Some(1), ..class(count, &wide(giver_req)) };
        let free = if giver_req.len() == 2 { vec![2000, 4000, 110] } else { vec![2000] };
        let mut p = problem(
            vec![
                giver(2),
                class(3, &wide(taker_req)),
                class(large, &wide(&[2000])),
                class(4, &wide(&[500])),
                giver(2),
            ],
            &[&free[..]; 5],
        );
        for c in 0..5 {
            for n in 0..5 {
                p.feasible[c * 5 + n] = (c == 2 || c == 3) == (n >= 3);
            }
        }
        for c in [0, 4] {
            p.score[c * 5 + 1] = 5;
            p.score[c * 5 + 2] = 9;
        }
        p.topologies = 1;
        p.domains = vec![0, 1, 2, 3, 3];
        let counter = |members: Vec<usize>, initial: &[u32]| Counter {
            topology: 0,
            members,
            initial: initial.to_vec(),
            eligible: vec![true, true, true, false, false],
        };
        p.inter_pod = InterPod {
            counters: vec![
                counter(vec![1], &[1, 2, 0]),
                counter(vec![0], giver_initial),
                counter(vec![4], &[2, 0, 1]),
            ],
            rules: [(1, 0), (0, 1), (4, 2)]
                .into_iter()
                .map(|(class, counter)| Rule::Soft { class, counter, weight: -1, max_skew: 5 })
                .collect(),
        };
        p
    };
    let base = |giver_initial: &[u32], taker_req: i64, large: u32| {
        with(giver_initial, &[1000], &[taker_req], large)
    };
    let cases = vec![
        Case {
            name: "a pod of each better-served workload gives way (the taker's skew 2 becomes 1, \
                   the givers' stay 1), spending one of the three pods trading won",
            problem: base(&[2, 0, 1], 2000, 2),
            unplaced: vec![1, 1, 1, 0, 1],
            taker_nodes: vec![0, 2],
        },
        Case {
            name: "without a pod won by trading the pair keeps its node",
            problem: base(&[2, 0, 1], 2000, 0),
            unplaced: vec![0, 2, 0, 0, 0],
            taker_nodes: vec![0],
        },
        Case {
            name: "a pair requesting more of a resource than the taker keeps its node, though \
                   worth no more (its dominant resource is the other)",
            problem: with(&[2, 0, 1], &[1000, 100], &[2000, 150], 2),
            unplaced: vec![0, 2, 1, 0, 0],
            taker_nodes: vec![0],
        },
        Case {
            name: "the same pair gives way to a taker requesting as much of both (the pod \
                   slots, one per pod of every class, count pods, not size)",
            problem: with(&[2, 0, 1], &[1000, 100], &[2000, 200], 2),
            unplaced: vec![1, 1, 1, 0, 1],
            taker_nodes: vec![0, 2],
        },
        Case {
            name: "a pair one of whose workloads is spread evenly (one pod per zone) keeps its node",
            problem: base(&[1, 0, 0], 2000, 2),
            unplaced: vec![0, 2, 1, 0, 0],
            taker_nodes: vec![0],
        },
        Case {
            name: "under the pods objective two pods are worth more than one and keep their node",
            problem: Problem { objective: Objective::Pods, ..base(&[2, 0, 1], 2000, 2) },
            unplaced: vec![0, 2, 1, 0, 0],
            taker_nodes: vec![0],
        },
    ];
    for case in cases {
        let options = GreedyOptions { class_order: ClassOrder::Given, ..Default::default() };
        let a = solve_heard(&case.problem, &options, case.name);
        assert_eq!(a.unplaced, case.unplaced, "{}", case.name);
        let mut taker = nodes_of(&a, 1);
        taker.sort_unstable();
        assert_eq!(taker, case.taker_nodes, "{}", case.name);
    }
}

#[test]
fn a_tie_break_counter_is_evened_out_last_and_the_room_it_joins_goes_to_pods_left_over() {
    // Nodes 0-2 in one zone, room 2000, 1000 and 1000. Class 0 (two pods of 1000, scoring node
    // 0 best) has a `ScheduleAnyway` zone term and, with `tie_break`, a weight-0 term over
    // nodes; class 1 (one pod of 1000) may go on node 0 only. Without relocation both of
    // class 0's pods fill node 0 and class 1 finds no room.
    let build = |tie_break: bool| {
        let mut p =
            problem(vec![class(2, &[1000]), class(1, &[1000])], &[&[2000], &[1000], &[1000]]);
        p.score[0] = 10;
        p.feasible[3 + 1] = false;
        p.feasible[3 + 2] = false;
        p.topologies = 2;
        p.domains = vec![0, 0, 0, 0, 1, 2];
        let counter = |topology| Counter { topology, members: vec![0], ..Counter::default() };
        p.inter_pod = InterPod {
            counters: vec![counter(0), counter(1)],
            rules: vec![Rule::Soft { class: 0, counter: 0, weight: -1, max_skew: 1 }],
        };
        if tie_break {
            p.inter_pod.rules.push(Rule::Soft {
                class: 0,
                counter: 1,
                weight: 0,
                max_skew: u32::MAX,
            });
        }
        p
    };
    let cases = [
        (
            "with the tie-break, a pod moves to node 1 and the pod left over takes its room",
            true,
            vec![0, 1],
            vec![0u32, 0],
        ),
        ("without it nothing spreads class 0 over nodes", false, vec![0, 0], vec![0, 1]),
    ];
    for (name, tie_break, nodes, unplaced) in cases {
        let options =
            GreedyOptions { class_order: ClassOrder::Given, relocate: false, ..Default::default() };
        let a = solve_heard(&build(tie_break), &options, name);
        let mut got = nodes_of(&a, 0);
        got.sort_unstable();
        assert_eq!(got, nodes, "{name}");
        assert_eq!(a.unplaced, unplaced, "{name}");
    }
}

#[test]
fn room_an_evening_out_move_frees_goes_to_a_pod_left_over_even_past_its_max_skew() {
    // Node 0 (zone 0, room 2000) and node 1 (zone 1, room 1000). Class 0 (two pods of 1000,
    // scoring node 0 best, a `ScheduleAnyway` zone term) piles on node 0. Class 1 (one pod of
    // 1000, allowed on node 0 only) finds no room; its workload already has two pods in zone 0,
    // so landing there takes its zone skew to 3, past its `maxSkew` of 1. Evening out moves
    // one of class 0's pods to node 1, and the room it leaves goes to class 1 all the same
    // (the caller's later stages would place it there, blind to spread).
    let mut p = problem(vec![class(2, &[1000]), class(1, &[1000])], &[&[2000], &[1000]]);
    p.score[0] = 10;
    p.feasible[2 + 1] = false;
    p.topologies = 1;
    p.domains = vec![0, 1];
    p.inter_pod = InterPod {
        counters: vec![
            Counter { topology: 0, members: vec![0], ..Counter::default() },
            Counter { topology: 0, members: vec![1], initial: vec![2, 0], ..Counter::default() },
        ],
        rules: vec![
            Rule::Soft { class: 0, counter: 0, weight: -1, max_skew: 1 },
            Rule::Soft { class: 1, counter: 1, weight: -1, max_skew: 1 },
        ],
    };
    let cases = [
        ("with evening out, class 1 takes the room a move frees", true, vec![0, 1], vec![0u32, 0]),
        ("without it, node 0 stays full", false, vec![0, 0], vec![0, 1]),
    ];
    for (name, even_spread, class0, unplaced) in cases {
        let options = GreedyOptions {
            class_order: ClassOrder::Given,
            relocate: false,
            even_spread,
            ..Default::default()
        };
        let a = solve_greedy(&p, &options, None).expect("valid");
        let mut got = nodes_of(&a, 0);
        got.sort_unstable();
        assert_eq!(got, class0, "{name}");
        assert_eq!(a.unplaced, unplaced, "{name}");
        assert_eq!(nodes_of(&a, 1), if even_spread { vec![0] } else { vec![] }, "{name}");
    }
}
