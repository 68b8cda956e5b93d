//! Tests of the inter-pod state and of the greedy with inter-pod rules: hand-made cases, and
//! properties over random problems checked against a recount from scratch.

use proptest::prelude::*;

use crate::greedy::{
    Assignment, ClassOrder, ClassSpec, GreedyOptions, NO_DOMAIN, Placed, Problem, Tuning,
    solve_greedy, solve_with,
};

use super::*;

/// `classes` (count, requests of one resource) on `nodes` nodes with `capacity` each; topology 0
/// is `zones` zones (node `n` in zone `n % zones`), topology 1 the node itself.
fn problem(classes: &[(u32, i64)], nodes: usize, capacity: i64, zones: u32) -> Problem {
    let cells = classes.len() * nodes;
    let mut domains: Vec<u32> = (0..nodes as u32).map(|n| n % zones).collect();
    domains.extend(0..nodes as u32);
    Problem {
        resources: 1,
        nodes,
        classes: classes
            .iter()
            .map(|&(count, req)| ClassSpec {
                count,
                priority: 0,
                requests: vec![req],
                max_per_node: None,
            })
            .collect(),
        free: vec![capacity; nodes],
        feasible: vec![true; cells],
        score: vec![0; cells],
        topologies: 2,
        domains,
        ..Problem::default()
    }
}

fn counter(topology: usize, members: &[usize]) -> Counter {
    Counter { topology, members: members.to_vec(), ..Counter::default() }
}

/// Pods of `class` per domain of topology `t`.
fn per_domain(p: &Problem, a: &Assignment, class: usize, t: usize, domains: usize) -> Vec<u32> {
    let mut v = vec![0; domains];
    for pl in a.placements.iter().filter(|pl| pl.class == class) {
        v[p.domains[t * p.nodes + pl.node] as usize] += 1;
    }
    v
}

#[test]
fn hard_zone_spread_with_max_skew_one_fills_zones_evenly_even_when_scores_prefer_one_zone() {
    let mut p = problem(&[(7, 1)], 6, 10, 3);
    p.score = vec![100, 0, 0, 100, 0, 0]; // Zone 0 scores best.
    p.inter_pod = InterPod {
        counters: vec![counter(0, &[0])],
        rules: vec![Rule::Spread { class: 0, counter: 0, max_skew: 1, min_domains: 1 }],
    };
    let a = solve_greedy(&p, &GreedyOptions::default(), None).expect("valid");
    assert_eq!(per_domain(&p, &a, 0, 0, 3), vec![3, 2, 2]);
}

#[test]
fn min_domains_above_the_eligible_domains_caps_every_domain_at_max_skew() {
    // Two zones, minDomains 3: the minimum counts as 0, so at most maxSkew (2) per zone.
    let mut p = problem(&[(6, 1)], 4, 10, 2);
    p.inter_pod = InterPod {
        counters: vec![counter(0, &[0])],
        rules: vec![Rule::Spread { class: 0, counter: 0, max_skew: 2, min_domains: 3 }],
    };
    let a = solve_greedy(&p, &GreedyOptions::default(), None).expect("valid");
    assert_eq!(per_domain(&p, &a, 0, 0, 2), vec![2, 2]);
    assert_eq!(a.unplaced, vec![2]);
}

#[test]
fn a_spread_rule_counts_bound_pods_and_refuses_nodes_without_the_key() {
    let mut p = problem(&[(2, 1)], 3, 10, 3);
    p.domains[2] = NO_DOMAIN; // Node 2 has no zone label.
    p.inter_pod = InterPod {
        counters: vec![Counter { initial: vec![1, 0], ..counter(0, &[0]) }],
        rules: vec![Rule::Spread { class: 0, counter: 0, max_skew: 1, min_domains: 1 }],
    };
    let a = solve_greedy(&p, &GreedyOptions::default(), None).expect("valid");
    // Zone 0 already holds one: the first pod must go to zone 1, then zone 0 and 1 tie.
    assert_eq!(a.placements[0], Placed { class: 0, node: 1 });
    assert!(a.placements.iter().all(|pl| pl.node != 2));
    assert_eq!(a.unplaced, vec![0]);
}

#[test]
fn ineligible_nodes_neither_count_nor_make_their_domain_a_minimum() {
    // Zone 2's only node is ineligible (say, outside the pod's node affinity): with it the
    // minimum would stay 0 and allow only one pod per zone.
    let mut p = problem(&[(4, 1)], 3, 10, 3);
    p.inter_pod = InterPod {
        counters: vec![Counter { eligible: vec![true, true, false], ..counter(0, &[0]) }],
        rules: vec![Rule::Spread { class: 0, counter: 0, max_skew: 1, min_domains: 1 }],
    };
    p.feasible = vec![true, true, false];
    let a = solve_greedy(&p, &GreedyOptions::default(), None).expect("valid");
    assert_eq!(per_domain(&p, &a, 0, 0, 3), vec![2, 2, 0]);
}

#[test]
fn the_first_pod_of_a_self_affine_group_goes_anywhere_and_the_rest_follow_it() {
    let mut p = problem(&[(3, 1)], 4, 10, 2);
    p.score = vec![0, 5, 0, 0];
    p.inter_pod = InterPod {
        counters: vec![counter(0, &[0])],
        rules: vec![Rule::Affinity { class: 0, counters: vec![0], self_match: true }],
    };
    let a = solve_greedy(&p, &GreedyOptions::default(), None).expect("valid");
    assert_eq!(per_domain(&p, &a, 0, 0, 2), vec![0, 3]);
}

#[test]
fn required_affinity_without_a_matching_pod_and_without_self_match_places_nothing() {
    let mut p = problem(&[(2, 1), (1, 1)], 4, 10, 2);
    p.inter_pod = InterPod {
        counters: vec![counter(0, &[1])],
        rules: vec![Rule::Affinity { class: 0, counters: vec![0], self_match: false }],
    };
    // Class 0 (placed first: same size, lower index) has no pod of class 1 to join yet.
    let options = GreedyOptions { relocate: false, even_spread: false, ..GreedyOptions::default() };
    let a = solve_greedy(&p, &options, None).expect("valid");
    assert_eq!(a.unplaced, vec![2, 0]);
}

#[test]
fn required_anti_affinity_on_the_hostname_puts_one_pod_per_node() {
    let mut p = problem(&[(5, 1)], 3, 10, 3);
    p.inter_pod = InterPod {
        counters: vec![counter(1, &[0])],
        rules: vec![Rule::AntiAffinity { class: 0, counter: 0 }],
    };
    let a = solve_greedy(&p, &GreedyOptions::default(), None).expect("valid");
    assert_eq!(per_domain(&p, &a, 0, 1, 3), vec![1, 1, 1]);
    assert_eq!(a.unplaced, vec![2]);
}

#[test]
fn soft_zone_spread_alternates_zones_against_a_smaller_score_preference() {
    let mut p = problem(&[(6, 1)], 6, 10, 3);
    p.score = vec![50, 40, 30, 50, 40, 30];
    p.inter_pod = InterPod {
        counters: vec![counter(0, &[0])],
        rules: vec![Rule::Soft { class: 0, counter: 0, weight: -100, max_skew: 0 }],
    };
    let a = solve_greedy(&p, &GreedyOptions::default(), None).expect("valid");
    assert_eq!(per_domain(&p, &a, 0, 0, 3), vec![2, 2, 2]);
    // Without the term every pod goes to zone 0's nodes.
    p.inter_pod = InterPod::default();
    let a = solve_greedy(&p, &GreedyOptions::default(), None).expect("valid");
    assert_eq!(per_domain(&p, &a, 0, 0, 3), vec![6, 0, 0]);
}

#[test]
fn relocation_keeps_a_schedule_anyway_term_within_its_max_skew() {
    // Zones n % 2. Class 0 (placed first) prefers node 0; class 1 (4 pods, a soft zone term)
    // fills nodes 0-2 as 2 in zone 0, 1 in zone 1 (node 3 cannot take it). Room for its last
    // pod comes only from moving class 0's pod from node 0 to node 3: a third pod in zone 0.
    let mut p = problem(&[(1, 1), (4, 1)], 4, 1, 2);
    p.free = vec![2, 1, 1, 1];
    p.classes[0].priority = 1;
    p.score = vec![10, 0, 0, 0, 0, 0, 0, 0];
    p.feasible[7] = false;
    let cases = [
        ("a term without maxSkew lets relocation crowd zone 0", 0, vec![3, 1], 0),
        ("maxSkew 2 allows the third pod in zone 0", 2, vec![3, 1], 0),
        ("maxSkew 1 leaves the pod unplaced rather than crowd zone 0", 1, vec![2, 1], 1),
    ];
    for (name, max_skew, zones, unplaced) in cases {
        p.inter_pod = InterPod {
            counters: vec![counter(0, &[1])],
            rules: vec![Rule::Soft { class: 1, counter: 0, weight: -100, max_skew }],
        };
        let a = solve_greedy(&p, &GreedyOptions::default(), None).expect("valid");
        assert_eq!(per_domain(&p, &a, 1, 0, 2), zones, "{name}");
        assert_eq!(a.unplaced[1], unplaced, "{name}");
        let moved = a.placements.iter().any(|pl| pl.class == 0 && pl.node == 3);
        assert_eq!(moved, unplaced == 0, "{name}: class 0's pod moved only to make room");
    }
}

#[test]
fn evening_out_moves_or_swaps_placed_pods_until_each_workload_is_spread() {
    struct Case {
        name: &'static str,
        /// `(count, request)` per class, each with a soft zone term on its own counter.
        classes: &'static [(u32, i64)],
        capacity: i64,
        /// Static scores, class after class (zones: node `n % 2`).
        score: Vec<i32>,
        /// Per class: its pods per zone without and with evening out.
        without: Vec<Vec<u32>>,
        with: Vec<Vec<u32>>,
    }
    let cases = [
        Case {
            name: "a workload the scores pile into zone 0 moves half its pods to zone 1's free nodes",
            classes: &[(4, 1)],
            capacity: 2,
            score: vec![10, 0, 10, 0],
            without: vec![vec![4, 0]],
            with: vec![vec![2, 2]],
        },
        Case {
            name: "two workloads piled into different zones of full nodes trade pods",
            classes: &[(2, 1), (2, 1)],
            capacity: 1,
            score: vec![10, 0, 10, 0, 0, 10, 0, 10],
            without: vec![vec![2, 0], vec![0, 2]],
            with: vec![vec![1, 1], vec![1, 1]],
        },
        Case {
            name: "a skew of one is as even as it gets",
            classes: &[(3, 1)],
            capacity: 2,
            score: vec![10, 0, 10, 0],
            without: vec![vec![3, 0]],
            with: vec![vec![2, 1]],
        },
    ];
    for case in cases {
        let mut p = problem(case.classes, 4, case.capacity, 2);
        p.score = case.score;
        let n = case.classes.len();
        p.inter_pod = InterPod {
            counters: (0..n).map(|c| counter(0, &[c])).collect(),
            rules: (0..n)
                .map(|c| Rule::Soft { class: c, counter: c, weight: -1, max_skew: 1 })
                .collect(),
        };
        for (even_spread, want) in [(false, &case.without), (true, &case.with)] {
            let options = GreedyOptions { even_spread, ..GreedyOptions::default() };
            let a = solve_greedy(&p, &options, None).expect("valid");
            let got: Vec<Vec<u32>> = (0..n).map(|c| per_domain(&p, &a, c, 0, 2)).collect();
            assert_eq!(&got, want, "{} (even_spread {even_spread})", case.name);
            assert!(a.unplaced.iter().all(|&u| u == 0), "{}", case.name);
        }
    }
}

#[test]
fn a_move_within_the_extremes_neither_tops_the_fullest_domain_nor_undercuts_the_emptiest() {
    // Zones n % 3 over 6 nodes; counts per zone set by bound pods.
    let p = problem(&[(1, 1)], 6, 10, 3);
    let cases = [
        ("from the fullest zone to the emptiest", [3, 1, 2], 0, 1, true),
        ("into the fullest zone", [3, 1, 2], 2, 0, false),
        ("out of the emptiest zone", [3, 1, 2], 1, 2, false),
        ("between two equal zones", [2, 2, 2], 0, 1, false),
        ("within one zone", [2, 2, 2], 0, 3, true),
    ];
    for (name, initial, from, to, want) in cases {
        let inter = InterPod {
            counters: vec![Counter { initial: initial.to_vec(), ..counter(0, &[0]) }],
            rules: vec![Rule::Soft { class: 0, counter: 0, weight: -1, max_skew: 1 }],
        };
        let state = TopologyState::new(&inter, 1, p.nodes, 2, &p.domains);
        assert_eq!(state.move_within_extremes(0, from, to), want, "{name}");
    }
}

#[test]
fn a_pod_may_leave_only_where_its_workload_could_still_reach_the_same_skew_over_its_bound_pods() {
    // Zones n % 3 over 6 nodes (node 0 in zone a, 1 in b, 2 in c); bound pods per zone, then
    // the solve's pods per zone, and the node the pod leaves.
    let p = problem(&[(20, 1)], 6, 10, 3);
    let cases = [
        (
            "5 bound in a, 1 / 3 / 2 placed: 5 / 3 / 3 is in reach, 5 / 3 / 2 is not",
            [5, 0, 0],
            [1, 3, 2],
            0,
            false,
        ),
        ("the same from b", [5, 0, 0], [1, 3, 2], 1, false),
        ("5 bound in a, 1 / 3 / 3 placed: 5 / 3 / 3 stays in reach", [5, 0, 0], [1, 3, 3], 0, true),
        ("never from the emptiest zone", [5, 0, 0], [1, 3, 3], 1, false),
        ("none bound, 2 / 2 / 2 placed: an even total", [0, 0, 0], [2, 2, 2], 0, false),
        ("none bound, 3 / 2 / 2 placed: 2 / 2 / 2 is even", [0, 0, 0], [3, 2, 2], 0, true),
        ("a zone over the rest by its bound pods alone", [9, 0, 0], [1, 2, 2], 0, true),
    ];
    for (name, bound, placed, node, want) in cases {
        let inter = InterPod {
            counters: vec![Counter { initial: bound.to_vec(), ..counter(0, &[0]) }],
            rules: vec![Rule::Soft { class: 0, counter: 0, weight: -1, max_skew: 1 }],
        };
        let mut state = TopologyState::new(&inter, 1, p.nodes, 2, &p.domains);
        for (zone, &n) in placed.iter().enumerate() {
            for _ in 0..n {
                state.update(0, zone, true);
            }
        }
        assert_eq!(state.removal_keeps_even_skew(0, node), want, "{name}");
    }
    // The rule without the bound pods lets the first case's pod go (6 > 2, 11 pods are odd).
    let inter = InterPod {
        counters: vec![Counter { initial: vec![5, 0, 0], ..counter(0, &[0]) }],
        rules: vec![Rule::Soft { class: 0, counter: 0, weight: -1, max_skew: 1 }],
    };
    let mut state = TopologyState::new(&inter, 1, p.nodes, 2, &p.domains);
    for (zone, n) in [(0, 1), (1, 3), (2, 2)] {
        for _ in 0..n {
            state.update(0, zone, true);
        }
    }
    assert!(state.removal_keeps_spread(0, 0));
    assert!(!state.removal_keeps_even_skew(0, 0));
}

#[test]
fn evening_out_moves_a_pod_of_another_workload_on_to_make_room() {
    // Class 0 (2 pods of 2, a soft zone term) fills node 0 (zone 0); class 1 (1 pod of 1, no
    // spread term, barred from zone 0) takes node 1. Zone 1 has room for class 0 only once
    // class 1's pod moves from node 1 on to node 3: then one pod of class 0 goes to node 1.
    let mut p = problem(&[(2, 2), (1, 1)], 4, 0, 2);
    p.free = vec![4, 2, 0, 1];
    p.score = vec![10, 0, 10, 0, 0, 10, 0, 5];
    p.feasible = vec![true, true, true, true, false, true, false, true];
    p.inter_pod = InterPod {
        counters: vec![counter(0, &[0])],
        rules: vec![Rule::Soft { class: 0, counter: 0, weight: -1, max_skew: 1 }],
    };
    for (even_spread, class0, class1) in
        [(false, vec![2, 0, 0, 0], vec![0, 1, 0, 0]), (true, vec![1, 1, 0, 0], vec![0, 0, 0, 1])]
    {
        let options = GreedyOptions { even_spread, ..GreedyOptions::default() };
        let a = solve_greedy(&p, &options, None).expect("valid");
        assert_eq!(per_domain(&p, &a, 0, 1, 4), class0, "class 0, even_spread {even_spread}");
        assert_eq!(per_domain(&p, &a, 1, 1, 4), class1, "class 1, even_spread {even_spread}");
    }
}

#[test]
fn evening_out_trades_a_pod_for_two_smaller_ones_when_one_leaving_is_not_enough() {
    // Class 0 (2 pods of 2, a soft zone term, barred from node 3) piles on node 0 (zone 0);
    // class 1 (2 pods of 1, no spread term) fills node 1, zone 1's only other node. Neither of
    // class 1's pods alone frees room for class 0 there; both leaving for node 0 do.
    let mut p = problem(&[(2, 2), (2, 1)], 4, 0, 2);
    p.free = vec![4, 2, 0, 0];
    p.score = vec![10, 0, 0, 0, 0, 10, 0, 0];
    p.feasible = vec![true, true, true, false, true, true, true, true];
    p.inter_pod = InterPod {
        counters: vec![counter(0, &[0])],
        rules: vec![Rule::Soft { class: 0, counter: 0, weight: -1, max_skew: 1 }],
    };
    for (even_spread, class0, class1) in
        [(false, vec![2, 0, 0, 0], vec![0, 2, 0, 0]), (true, vec![1, 1, 0, 0], vec![2, 0, 0, 0])]
    {
        let options = GreedyOptions { even_spread, ..GreedyOptions::default() };
        let a = solve_greedy(&p, &options, None).expect("valid");
        assert_eq!(per_domain(&p, &a, 0, 1, 4), class0, "class 0, even_spread {even_spread}");
        assert_eq!(per_domain(&p, &a, 1, 1, 4), class1, "class 1, even_spread {even_spread}");
    }
}

#[test]
fn evening_out_takes_no_step_that_crowds_a_node_beyond_the_workload_s_node_skew() {
    // Zone 1 holds two bound pods of the workload, both on node 1; node 3 is full. The greedy
    // puts the 4 pods on nodes 0 and 2 (zone 0): zones 4 + 0 and 0 + 2 bound, nodes 2, 2, 2, 0.
    // Moving one to node 1 would even the zones (3, 3) but put 3 pods on node 1 (node skew
    // 2 → 3): not taken, though the two skews together would fall.
    let mut p = problem(&[(4, 1)], 4, 2, 2);
    p.free = vec![2, 2, 2, 0];
    p.score = vec![10, 0, 10, 0];
    p.inter_pod = InterPod {
        counters: vec![
            Counter { initial: vec![0, 2], ..counter(0, &[0]) },
            Counter { initial: vec![0, 2, 0, 0], ..counter(1, &[0]) },
        ],
        rules: vec![
            Rule::Soft { class: 0, counter: 0, weight: -1, max_skew: 1 },
            Rule::Soft { class: 0, counter: 1, weight: -1, max_skew: 1 },
        ],
    };
    let a = solve_greedy(&p, &GreedyOptions::default(), None).expect("valid");
    assert_eq!(per_domain(&p, &a, 0, 1, 4), vec![2, 0, 2, 0]);
}

#[test]
fn a_workload_beyond_its_max_skew_trades_zones_with_one_that_stays_within_its_own() {
    // Five nodes with room for one pod each: nodes 0-2 in zone 0, nodes 3 and 4 in zone 1.
    // Class 0 (3 pods, scoring zone 0 best) piles into zone 0: skew 3. Class 1 (2 pods,
    // scoring zone 1 best) fills zone 1, beside `bound` pods of its workload in zone 0. Only
    // a swap spreads class 0, and it moves a pod of class 1 from zone 1 to zone 0.
    let build = |max_skew: [u32; 2], bound: u32| {
        let mut p = problem(&[(3, 1), (2, 1)], 5, 1, 2);
        p.domains = vec![0, 0, 0, 1, 1, 0, 1, 2, 3, 4];
        p.score = vec![10, 10, 10, 0, 0, 0, 0, 0, 10, 10];
        p.inter_pod = InterPod {
            counters: vec![
                counter(0, &[0]),
                Counter { initial: vec![bound, 0], ..counter(0, &[1]) },
            ],
            rules: (0..2)
                .map(|c| Rule::Soft { class: c, counter: c, weight: -1, max_skew: max_skew[c] })
                .collect(),
        };
        p
    };
    let (moved, kept) = ([vec![2, 1], vec![1, 1]], [vec![3, 0], vec![0, 2]]);
    let cases = [
        (
            "class 1 (2 + 0 bound, skew 0) may reach skew 2, within its maxSkew of 2, so that \
             class 0 ends within its maxSkew of 1",
            [1, 2],
            2,
            moved.clone(),
        ),
        ("class 1's maxSkew of 1 would be exceeded: nothing moves", [1, 1], 2, kept.clone()),
        (
            "class 1 (3 + 0 bound, skew 1) would reach skew 3: past the shared skew of 2, \
             though within its maxSkew of 5, nothing moves",
            [1, 5],
            3,
            kept.clone(),
        ),
        ("class 0 within its own maxSkew of 3 asks nothing of class 1", [3, 2], 2, kept.clone()),
    ];
    for (name, max_skew, bound, want) in cases {
        let p = build(max_skew, bound);
        let options = GreedyOptions { class_order: ClassOrder::Given, ..GreedyOptions::default() };
        let a = solve_greedy(&p, &options, None).expect("valid");
        let got = [per_domain(&p, &a, 0, 0, 2), per_domain(&p, &a, 1, 0, 2)];
        assert_eq!(got, want, "{name}");
        assert!(a.unplaced.iter().all(|&u| u == 0), "{name}");
    }
}

#[test]
fn preferred_affinity_pulls_a_class_to_the_zone_of_the_pods_it_likes() {
    let mut p = problem(&[(2, 1), (2, 1)], 4, 10, 2);
    p.classes[0].requests = vec![2]; // Placed first (largest first).
    p.score = vec![0, 9, 0, 9, 0, 1, 0, 1];
    p.inter_pod = InterPod {
        counters: vec![counter(0, &[0])],
        rules: vec![Rule::Soft { class: 1, counter: 0, weight: 10, max_skew: 0 }],
    };
    let a = solve_greedy(&p, &GreedyOptions::default(), None).expect("valid");
    assert_eq!(per_domain(&p, &a, 0, 0, 2), vec![0, 2]);
    assert_eq!(per_domain(&p, &a, 1, 0, 2), vec![0, 2]);
}

#[test]
fn rules_naming_what_does_not_exist_are_rejected() {
    let p = problem(&[(1, 1)], 2, 10, 2);
    let cases: Vec<(&str, InterPod, SolverError)> = vec![
        (
            "a counter on a missing topology",
            InterPod {
                counters: vec![counter(5, &[0])],
                rules: vec![Rule::Soft { class: 0, counter: 0, weight: 1, max_skew: 0 }],
            },
            SolverError::InterPod { what: "counter", index: 0 },
        ),
        (
            "a rule on a missing counter",
            InterPod { counters: vec![], rules: vec![Rule::AntiAffinity { class: 0, counter: 0 }] },
            SolverError::InterPod { what: "rule", index: 0 },
        ),
        (
            "a spread rule with maxSkew 0",
            InterPod {
                counters: vec![counter(0, &[0])],
                rules: vec![Rule::Spread { class: 0, counter: 0, max_skew: 0, min_domains: 1 }],
            },
            SolverError::InterPod { what: "rule", index: 0 },
        ),
        (
            "an eligibility mask of the wrong length",
            InterPod {
                counters: vec![Counter { eligible: vec![true], ..counter(0, &[0]) }],
                rules: vec![Rule::Soft { class: 0, counter: 0, weight: 1, max_skew: 0 }],
            },
            SolverError::InterPod { what: "counter", index: 0 },
        ),
    ];
    for (name, inter_pod, want) in cases {
        let q = Problem { inter_pod, ..p.clone() };
        assert_eq!(solve_greedy(&q, &GreedyOptions::default(), None), Err(want), "{name}");
    }
}

// ---- Properties against a recount from scratch ----

/// Counts of `counter` per domain, recounted from the initial counts and `pods`.
fn recount(p: &Problem, k: usize, pods: &[Placed]) -> Vec<u32> {
    let c = &p.inter_pod.counters[k];
    let mut v = vec![0u32; p.nodes];
    for (d, &n) in c.initial.iter().enumerate() {
        v[d] = n;
    }
    for pl in pods {
        let d = p.domains[c.topology * p.nodes + pl.node];
        let eligible = c.eligible.is_empty() || c.eligible[pl.node];
        if c.members.contains(&pl.class) && eligible && d != NO_DOMAIN {
            v[d as usize] += 1;
        }
    }
    v
}

/// The skew of counter `k` (`max − min` over the domains of its eligible nodes), recounted.
fn skew(p: &Problem, k: usize, pods: &[Placed]) -> u32 {
    let ctr = &p.inter_pod.counters[k];
    let counts = recount(p, k, pods);
    let dom = |n: usize| p.domains[ctr.topology * p.nodes + n];
    let eligible: Vec<u32> = (0..p.nodes)
        .filter(|&n| (ctr.eligible.is_empty() || ctr.eligible[n]) && dom(n) != NO_DOMAIN)
        .map(|n| counts[dom(n) as usize])
        .collect();
    let (min, max) = (eligible.iter().min(), eligible.iter().max());
    max.zip(min).map_or(0, |(max, min)| max - min)
}

/// The hard rules of class `c` on `node` given `pods` placed, written from the rules'
/// definitions without the incremental state.
fn fresh_allows(p: &Problem, pods: &[Placed], c: usize, node: usize) -> bool {
    let dom = |k: usize, n: usize| p.domains[p.inter_pod.counters[k].topology * p.nodes + n];
    p.inter_pod.rules.iter().filter(|r| r.class() == c).all(|r| match r {
        Rule::Spread { counter: k, max_skew, min_domains, .. } => {
            let k = *k;
            if dom(k, node) == NO_DOMAIN {
                return false;
            }
            let counts = recount(p, k, pods);
            let ctr = &p.inter_pod.counters[k];
            let mut eligible: Vec<u32> = (0..p.nodes)
                .filter(|&n| (ctr.eligible.is_empty() || ctr.eligible[n]) && dom(k, n) != NO_DOMAIN)
                .map(|n| dom(k, n))
                .collect();
            eligible.sort_unstable();
            eligible.dedup();
            let Some(min) = eligible.iter().map(|&d| counts[d as usize]).min() else {
                return true;
            };
            let min = if (eligible.len() as u32) < *min_domains { 0 } else { min };
            let me = u32::from(ctr.members.contains(&c));
            counts[dom(k, node) as usize] + me <= min + max_skew
        }
        Rule::Affinity { counters, self_match, .. } => {
            if counters.iter().any(|&k| dom(k, node) == NO_DOMAIN) {
                return false;
            }
            let all = counters.iter().all(|&k| recount(p, k, pods)[dom(k, node) as usize] > 0);
            let none = counters.iter().all(|&k| recount(p, k, pods).iter().all(|&n| n == 0));
            all || (*self_match && none)
        }
        Rule::AntiAffinity { counter: k, .. } => {
            dom(*k, node) == NO_DOMAIN || recount(p, *k, pods)[dom(*k, node) as usize] == 0
        }
        Rule::Soft { .. } => true,
    })
}

/// The soft score of class `c` on `node` given `pods` placed, recounted.
fn fresh_soft(p: &Problem, pods: &[Placed], c: usize, node: usize) -> i64 {
    p.inter_pod
        .rules
        .iter()
        .filter(|r| r.class() == c)
        .map(|r| match r {
            Rule::Soft { counter: k, weight, .. } => {
                let d = p.domains[p.inter_pod.counters[*k].topology * p.nodes + node];
                if d == NO_DOMAIN {
                    0
                } else {
                    weight * i64::from(recount(p, *k, pods)[d as usize])
                }
            }
            _ => 0,
        })
        .sum()
}

/// A random problem with inter-pod rules: up to 5 classes, up to 9 nodes; topology 0 has up to
/// 3 domains (3: no label), topology 1 is the node itself (or no label).
/// Pods and requests per resource placed per priority tier.
fn per_tier(p: &Problem, a: &Assignment) -> BTreeMap<i32, (usize, Vec<i64>)> {
    let mut tiers: BTreeMap<i32, (usize, Vec<i64>)> = BTreeMap::new();
    for pl in &a.placements {
        let class = &p.classes[pl.class];
        let (pods, req) = tiers.entry(class.priority).or_insert((0, vec![0; p.resources]));
        *pods += 1;
        for (r, &q) in req.iter_mut().zip(&class.requests) {
            *r += q;
        }
    }
    tiers
}

/// Every node within its capacity, every cell feasible, every per-node limit kept, and the
/// pods a hard rule reads obeying it in decision order.
fn keeps_capacity_feasibility_limits_and_hard_rules(
    p: &Problem,
    after: &Assignment,
) -> Result<(), TestCaseError> {
    let state = TopologyState::new(&p.inter_pod, p.classes.len(), p.nodes, 2, &p.domains);
    let mut used = vec![0i64; p.nodes * p.resources];
    let mut count = vec![0u32; p.classes.len() * p.nodes];
    for (i, pl) in after.placements.iter().enumerate() {
        prop_assert!(p.feasible[pl.class * p.nodes + pl.node]);
        for (r, &q) in p.classes[pl.class].requests.iter().enumerate() {
            used[pl.node * p.resources + r] += q;
        }
        count[pl.class * p.nodes + pl.node] += 1;
        if state.has_hard_rules(pl.class) {
            prop_assert!(fresh_allows(p, &after.placements[..i], pl.class, pl.node));
        }
    }
    for (i, (&u, &free)) in used.iter().zip(&p.free).enumerate() {
        prop_assert!(u <= free, "node {} over its capacity", i / p.resources.max(1));
    }
    for (c, spec) in p.classes.iter().enumerate() {
        let most = (0..p.nodes).map(|n| count[c * p.nodes + n]).max().unwrap_or(0);
        prop_assert!(most <= spec.max_per_node.unwrap_or(u32::MAX));
    }
    Ok(())
}

fn random_problem() -> impl Strategy<Value = Problem> {
    (1usize..6, 1usize..10).prop_flat_map(|(n_classes, n_nodes)| {
        let class = (0u32..7, 0i32..2, 1i64..4).prop_map(|(count, priority, req)| ClassSpec {
            count,
            priority,
            requests: vec![req],
            max_per_node: None,
        });
        let ctr = (
            0usize..2,
            prop::collection::vec(0..n_classes, 1..3),
            prop::option::of(prop::collection::vec(prop::bool::weighted(0.8), n_nodes)),
            prop::collection::vec(0u32..3, 0..3),
        )
            .prop_map(|(topology, members, eligible, initial)| Counter {
                topology,
                members,
                eligible: eligible.unwrap_or_default(),
                initial,
            });
        let rule =
            (0usize..4, 0..n_classes, 0usize..4, 1u32..3, 1u32..5, -30i64..30, any::<bool>())
                .prop_map(|(kind, class, counter, max_skew, min_domains, weight, self_match)| {
                    match kind {
                        0 => Rule::Spread { class, counter, max_skew, min_domains },
                        1 => Rule::Affinity { class, counters: vec![counter], self_match },
                        2 => Rule::AntiAffinity { class, counter },
                        _ => Rule::Soft { class, counter, weight, max_skew: max_skew - 1 },
                    }
                });
        (
            prop::collection::vec(class, n_classes),
            prop::collection::vec(2i64..12, n_nodes),
            prop::collection::vec(prop::bool::weighted(0.85), n_classes * n_nodes),
            crate::testing::scores(0..20, n_classes * n_nodes),
            prop::collection::vec(0u32..4, n_nodes),
            prop::collection::vec(prop::bool::weighted(0.9), n_nodes),
            prop::collection::vec(ctr, 4),
            prop::collection::vec(rule, 0..6),
        )
            .prop_map(
                move |(classes, free, feasible, score, zones, hosts, counters, rules)| {
                    // Domain ids stay below the number of nodes, as the solver requires.
                    let mut domains: Vec<u32> = zones
                        .iter()
                        .map(|&z| if z == 3 { NO_DOMAIN } else { z % n_nodes as u32 })
                        .collect();
                    let mut counters: Vec<Counter> = counters;
                    for c in &mut counters {
                        c.initial.truncate(n_nodes);
                    }
                    domains.extend(
                        hosts
                            .iter()
                            .enumerate()
                            .map(|(n, &h)| if h { n as u32 } else { NO_DOMAIN }),
                    );
                    Problem {
                        resources: 1,
                        nodes: n_nodes,
                        classes,
                        free,
                        feasible,
                        score,
                        topologies: 2,
                        domains,
                        inter_pod: InterPod { counters, rules },
                        ..Problem::default()
                    }
                },
            )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Without relocation the placements are in decision order: each one obeys its class's
    /// hard rules on the pods placed before it, recounted from scratch.
    #[test]
    fn every_hard_rule_holds_at_every_placement(p in random_problem()) {
        let options = GreedyOptions { relocate: false, even_spread: false, ..GreedyOptions::default() };
        let a = solve_greedy(&p, &options, None).expect("valid");
        for (i, pl) in a.placements.iter().enumerate() {
            prop_assert!(
                fresh_allows(&p, &a.placements[..i], pl.class, pl.node),
                "placement {i} {pl:?} breaks a rule: {:?}", a.placements
            );
        }
    }

    /// With relocation, pods are only ever moved if no hard rule reads them: the final
    /// placements, in decision order with the moved pods at their final nodes, still obey
    /// every rule.
    #[test]
    fn relocation_keeps_every_hard_rule(p in random_problem()) {
        let a = solve_greedy(&p, &GreedyOptions::default(), None).expect("valid");
        let state = TopologyState::new(&p.inter_pod, p.classes.len(), p.nodes, 2, &p.domains);
        for (i, pl) in a.placements.iter().enumerate() {
            if state.has_hard_rules(pl.class) {
                prop_assert!(fresh_allows(&p, &a.placements[..i], pl.class, pl.node));
            }
        }
    }

    /// Evening out the spread keeps every pod placed (pods left over may take room its moves
    /// join), every node within its capacity, every cell feasible and every per-node limit,
    /// and moves only pods no hard rule or conflict reads. Where no pod left over was placed,
    /// no `ScheduleAnyway` counter ends more skewed than it was, unless within its `maxSkew`
    /// and the shared skew, and the counters' summed skew beyond their `maxSkew` does not grow.
    #[test]
    fn evening_out_keeps_every_pod_and_rule_and_skews_no_counter_more(
        p in random_problem(),
        relocate in any::<bool>(),
        limit in prop::option::of(1u32..3),
    ) {
        let mut p = p;
        if let Some(c) = p.classes.first_mut() {
            c.max_per_node = limit;
        }
        let run = |even_spread| {
            let options = GreedyOptions {
                relocate,
                even_spread,
                substitute: false,
                ..GreedyOptions::default()
            };
            solve_greedy(&p, &options, None).expect("valid")
        };
        let (before, after) = (run(false), run(true));
        let added = after.placements.len() - before.placements.len();
        for (c, (&b, &a)) in before.unplaced.iter().zip(&after.unplaced).enumerate() {
            prop_assert!(a <= b, "class {c} lost a pod");
        }
        prop_assert_eq!(
            before.unplaced.iter().sum::<u32>(),
            after.unplaced.iter().sum::<u32>() + added as u32
        );
        let state = TopologyState::new(&p.inter_pod, p.classes.len(), p.nodes, 2, &p.domains);
        let mut used = vec![0i64; p.nodes];
        let mut count = vec![0u32; p.classes.len() * p.nodes];
        for (b, a) in before.placements.iter().zip(&after.placements) {
            prop_assert_eq!(b.class, a.class);
            if b != a {
                prop_assert!(
                    !state.has_hard_rules(a.class) && !state.counted_by_hard_rule(a.class),
                    "moved a pod of class {} that a hard rule reads", a.class
                );
            }
        }
        for a in &after.placements {
            prop_assert!(p.feasible[a.class * p.nodes + a.node]);
            used[a.node] += p.classes[a.class].requests[0];
            count[a.class * p.nodes + a.node] += 1;
        }
        for (n, (&u, &free)) in used.iter().zip(&p.free).enumerate() {
            prop_assert!(u <= free, "node {n} over its capacity");
        }
        for (c, spec) in p.classes.iter().enumerate() {
            let most = (0..p.nodes).map(|n| count[c * p.nodes + n]).max().unwrap_or(0);
            prop_assert!(most <= spec.max_per_node.unwrap_or(u32::MAX));
        }
        if added > 0 {
            return Ok(());
        }
        // A counter's `maxSkew`: the least of the spread terms reading it; none for a
        // tie-break (only terms of weight 0 read it), whose skew may not grow.
        let max_skew = |k: usize| {
            let terms: Vec<(i64, u32)> = p
                .inter_pod
                .rules
                .iter()
                .filter_map(|r| match *r {
                    Rule::Soft { counter, weight, max_skew, .. } if counter == k && max_skew > 0 => {
                        Some((weight, max_skew))
                    }
                    _ => None,
                })
                .collect();
            terms.iter().any(|&(w, _)| w != 0).then(|| terms.iter().map(|&(_, m)| m).min()).flatten()
        };
        let mut excess = (0u32, 0u32);
        for k in state.soft_spread_counters() {
            let (b, a) = (skew(&p, k, &before.placements), skew(&p, k, &after.placements));
            let cap = max_skew(k);
            prop_assert!(
                a <= b || cap.is_some_and(|m| a <= m.min(crate::greedy::SHARED_SKEW as u32)),
                "counter {k} more skewed: {b} → {a}"
            );
            if let Some(m) = cap {
                excess.0 += b.saturating_sub(m);
                excess.1 += a.saturating_sub(m);
            }
        }
        prop_assert!(excess.1 <= excess.0, "skew beyond maxSkew grew: {excess:?}");
    }

    /// Substituting keeps per priority tier at least the pods placed before trading (and never
    /// adds any), at least the value under the objective and the requests of every resource
    /// but pod slots (which pairs spend with their pod), every node within its capacity, every
    /// cell feasible and every per-node limit, and the pods a hard rule reads obey it in
    /// decision order (the pods taken come last).
    #[test]
    fn substituting_keeps_pods_and_requests_per_tier_and_every_rule(
        p in random_problem(),
        relocate in any::<bool>(),
        limit in prop::option::of(1u32..3),
    ) {
        let mut p = p;
        if let Some(c) = p.classes.first_mut() {
            c.max_per_node = limit;
        }
        let run = |substitute| {
            let options = GreedyOptions {
                relocate,
                substitute,
                trade_again: false,
                ..GreedyOptions::default()
            };
            solve_greedy(&p, &options, None).expect("valid")
        };
        let (before, after) = (run(false), run(true));
        let (b, a) = (per_tier(&p, &before), per_tier(&p, &after));
        prop_assert_eq!(&before.placed_before_trading, &after.placed_before_trading);
        prop_assert_eq!(b.keys().collect::<Vec<_>>(), a.keys().collect::<Vec<_>>());
        let slot = |r: usize| {
            let first = p.classes.first().map_or(0, |c| c.requests[r]);
            first > 0 && p.classes.iter().all(|c| c.requests[r] == first)
        };
        let values: BTreeMap<i32, u128> =
            crate::objective::tier_values(&p, &before.placements).into_iter().collect();
        for (prio, value) in crate::objective::tier_values(&p, &after.placements) {
            prop_assert!(value >= values[&prio], "tier {} is worth less", prio);
        }
        for (prio, (pods, req)) in &b {
            let (pods_after, req_after) = &a[prio];
            let floor = after.placed_before_trading.get(prio).copied().unwrap_or(0) as usize;
            prop_assert!(pods_after <= pods, "tier {} placed more pods", prio);
            prop_assert!(*pods_after >= floor, "tier {} fell below its pods before trading", prio);
            prop_assert!(
                (0..p.resources).all(|r| slot(r) || req_after[r] >= req[r]),
                "tier {prio} placed less: {req:?} → {req_after:?}"
            );
        }
        keeps_capacity_feasibility_limits_and_hard_rules(&p, &after)?;
    }

    /// Trading again places per priority tier at least the pods and at least the requests of
    /// every resource it found, keeps every node within its capacity, every cell feasible and
    /// every per-node limit, and the pods a hard rule reads obey it in decision order.
    #[test]
    fn trading_again_places_no_fewer_pods_nor_less_of_any_resource_and_keeps_every_rule(
        p in random_problem(),
        limit in prop::option::of(1u32..3),
    ) {
        let mut p = p;
        if let Some(c) = p.classes.first_mut() {
            c.max_per_node = limit;
        }
        let run = |trade_again| {
            let options = GreedyOptions { trade_again, ..GreedyOptions::default() };
            solve_greedy(&p, &options, None).expect("valid")
        };
        let (before, after) = (run(false), run(true));
        let (b, a) = (per_tier(&p, &before), per_tier(&p, &after));
        for (prio, (pods, req)) in &b {
            let (pods_after, req_after) = a.get(prio).cloned().unwrap_or_default();
            prop_assert!(pods_after >= *pods, "tier {} placed fewer pods", prio);
            prop_assert!(
                (0..p.resources).all(|r| req_after[r] >= req[r]),
                "tier {prio} placed less: {req:?} → {req_after:?}"
            );
        }
        keeps_capacity_feasibility_limits_and_hard_rules(&p, &after)?;
    }

    /// The per-bucket heaps, kept across picks in queue order too, choose exactly what a scan
    /// of every node per pod chooses.
    #[test]
    fn buckets_choose_what_a_full_scan_chooses(
        p in random_problem().prop_flat_map(crate::greedy::tests::with_queue),
        relocate in any::<bool>(),
        queue_order in any::<bool>(),
    ) {
        let class_order =
            if queue_order { ClassOrder::Given } else { ClassOrder::LargestFirst };
        let options = GreedyOptions { relocate, class_order, even_spread: relocate, substitute: true, trade_again: true };
        let heaps = solve_with(&p, &options, None, Tuning { scan_pods: 0, plain: false }).expect("valid");
        let scan = solve_with(&p, &options, None, Tuning { scan_pods: u32::MAX, plain: true }).expect("valid");
        prop_assert_eq!(heaps, scan);
    }

    /// With soft terms too, rescoring only the changed nodes whose bound could win, and
    /// scanning rescored rows, choose what rescoring every changed node chooses.
    #[test]
    fn bounded_rescoring_with_soft_terms_chooses_what_full_rescoring_chooses(
        p in random_problem(),
        relocate in any::<bool>(),
    ) {
        use crate::greedy::tests::Capped;
        let options = GreedyOptions { relocate, even_spread: relocate, ..GreedyOptions::default() };
        let mut bounded = Capped { score: p.score.clone(), nodes: p.nodes, bounded: true, rows: false };
        let mut every = Capped { score: p.score.clone(), nodes: p.nodes, bounded: false, rows: false };
        let mut rows = Capped { score: p.score.clone(), nodes: p.nodes, bounded: true, rows: true };
        let tuning = Tuning { scan_pods: u32::MAX, plain: false };
        let a = solve_with(&p, &options, Some(&mut bounded), tuning).expect("valid");
        let b = solve_with(&p, &options, Some(&mut every), tuning).expect("valid");
        let c = solve_with(&p, &options, Some(&mut rows), tuning).expect("valid");
        prop_assert_eq!(&a, &b);
        prop_assert_eq!(&a, &c);
    }

    /// Counts updated as pods land and leave, in any order, give the verdicts and soft scores
    /// of a recount from scratch on every class and node.
    #[test]
    fn incremental_state_equals_a_fresh_recount(
        p in random_problem(),
        steps in prop::collection::vec((0usize..5, 0usize..9, prop::bool::weighted(0.7)), 0..25),
    ) {
        let n_classes = p.classes.len();
        let mut state = TopologyState::new(&p.inter_pod, n_classes, p.nodes, 2, &p.domains);
        let mut pods: Vec<Placed> = Vec::new();
        for (c, n, add) in steps {
            let (c, n) = (c % n_classes, n % p.nodes);
            if add {
                pods.push(Placed { class: c, node: n });
                state.update(c, n, true);
            } else if let Some(i) = pods.iter().position(|q| *q == Placed { class: c, node: n }) {
                pods.remove(i);
                state.update(c, n, false);
            }
            for c in 0..n_classes {
                for n in 0..p.nodes {
                    prop_assert_eq!(state.allows(c, n), fresh_allows(&p, &pods, c, n));
                    prop_assert_eq!(state.soft(c, n), fresh_soft(&p, &pods, c, n));
                }
            }
        }
    }
}
