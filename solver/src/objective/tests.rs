//! Tests of the objective: pod values, ranks, and the choice among strategies.

use proptest::prelude::*;

use super::{
    Assignment, ClassOrder, GreedyOptions, Objective, Placed, Problem, SHARE_ONE, dominant_share,
    pod_values, rank, solve_best, solve_greedy,
};
use crate::greedy::ClassSpec;

fn class(count: u32, priority: i32, requests: &[i64]) -> ClassSpec {
    ClassSpec { count, priority, requests: requests.to_vec(), max_per_node: None }
}

fn problem(classes: Vec<ClassSpec>, free: &[&[i64]], objective: Objective) -> Problem {
    let nodes = free.len();
    let cells = classes.len() * nodes;
    Problem {
        resources: free.first().map_or(0, |r| r.len()),
        nodes,
        classes,
        free: free.iter().flat_map(|r| r.iter().copied()).collect(),
        feasible: vec![true; cells],
        score: vec![0; cells],
        objective,
        ..Problem::default()
    }
}

/// Pods placed per class.
fn placed(p: &Problem, a: &Assignment) -> Vec<u32> {
    (0..p.classes.len())
        .map(|c| a.placements.iter().filter(|pl| pl.class == c).count() as u32)
        .collect()
}

#[test]
fn the_objective_decides_between_one_large_pod_and_several_small_ones() {
    struct Case {
        name: &'static str,
        objective: Objective,
        want: Vec<u32>,
    }
    // One node of 8 cpu; the queue holds seven 1-cpu pods, then one 8-cpu pod.
    let cases = [
        Case { name: "pods: the seven small pods", objective: Objective::Pods, want: vec![7, 0] },
        Case {
            name: "resources: the large pod, worth eight small ones",
            objective: Objective::Resources,
            want: vec![0, 1],
        },
    ];
    for case in cases {
        let p = problem(vec![class(7, 0, &[1]), class(1, 0, &[8])], &[&[8]], case.objective);
        let (a, _) = solve_best(&p).expect("valid");
        assert_eq!(placed(&p, &a), case.want, "{}", case.name);
    }
}

#[test]
fn a_higher_tier_is_never_given_up_for_a_lower_one() {
    // High priority: four 1-cpu pods. Low priority: one 8-cpu pod, worth twice as much, which
    // fits only if the high tier is left out.
    for objective in [Objective::Resources, Objective::Pods] {
        let p = problem(vec![class(1, 0, &[8]), class(4, 10, &[1])], &[&[8]], objective);
        let (a, _) = solve_best(&p).expect("valid");
        assert_eq!(placed(&p, &a), vec![0, 4], "{objective:?}");
        let tiers = rank(&p, &a).tiers;
        assert_eq!(tiers[0].0, 10, "the highest tier comes first");
    }
}

#[test]
fn equal_values_go_to_the_class_first_in_the_queue() {
    // Two classes of the same size compete for one pod's room: the first in the queue wins,
    // whatever the strategy that found it.
    let p = problem(vec![class(1, 0, &[4]), class(1, 0, &[4])], &[&[4]], Objective::Resources);
    let (a, _) = solve_best(&p).expect("valid");
    assert_eq!(placed(&p, &a), vec![1, 0]);
    let worse = Assignment {
        placements: vec![Placed { class: 1, node: 0 }],
        unplaced: vec![1, 0],
        ..Assignment::default()
    };
    assert!(rank(&p, &a) > rank(&p, &worse));
}

#[test]
fn shares_are_taken_of_the_given_capacity_else_of_the_free_room() {
    let mut p = problem(vec![class(1, 0, &[2, 1])], &[&[4, 8], &[4, 8]], Objective::Resources);
    // Free: 8 cpu, 16 memory: cpu dominates, 2/8.
    assert_eq!(pod_values(&p), vec![SHARE_ONE / 4]);
    p.capacity = vec![16, 2];
    // Memory dominates now: 1/2.
    assert_eq!(pod_values(&p), vec![SHARE_ONE / 2]);
    p.objective = Objective::Pods;
    assert_eq!(pod_values(&p), vec![1]);
}

/// A small random problem: up to 4 classes on up to 5 nodes, 2 resources, 2 tiers.
fn small_problem() -> impl Strategy<Value = Problem> {
    (1usize..5, 1usize..6, prop::bool::ANY).prop_flat_map(|(n_classes, n_nodes, pods)| {
        let class = (1u32..9, 0i32..2, prop::collection::vec(1i64..6, 2))
            .prop_map(|(count, priority, requests)| class(count, priority * 10, &requests));
        (
            prop::collection::vec(class, n_classes),
            prop::collection::vec(0i64..13, n_nodes * 2),
            prop::collection::vec(prop::bool::weighted(0.8), n_classes * n_nodes),
            prop::collection::vec(0i64..5, n_classes * n_nodes),
        )
            .prop_map(move |(classes, free, feasible, score)| Problem {
                resources: 2,
                nodes: n_nodes,
                classes,
                free,
                feasible,
                score,
                objective: if pods { Objective::Pods } else { Objective::Resources },
                ..Problem::default()
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// A pod asking k times another's requests is worth k times as much (to the unit).
    #[test]
    fn values_scale_with_the_requests(
        req in prop::collection::vec(0i64..1_000, 3),
        cap in prop::collection::vec(10_000i64..1_000_000, 3),
        k in 1i64..9,
    ) {
        let one = u128::from(dominant_share(&req, &cap));
        let many: Vec<i64> = req.iter().map(|r| r * k).collect();
        let scaled = u128::from(dominant_share(&many, &cap));
        let k = k as u128;
        if req.iter().any(|&r| r > 0) {
            prop_assert!(scaled + k >= one * k && scaled <= one * k + k, "{one} × {k} vs {scaled}");
        } else {
            prop_assert_eq!((one, scaled), (1, 1));
        }
    }

    /// The best strategy ranks at least as high as each strategy alone, and its tier values
    /// are the sums of its placed pods' values.
    #[test]
    fn the_best_strategy_outranks_every_single_one(p in small_problem()) {
        let (best, _) = solve_best(&p).expect("valid");
        let best_rank = rank(&p, &best);
        let values = pod_values(&p);
        let total: u128 = best.placements.iter().map(|pl| u128::from(values[pl.class])).sum();
        prop_assert_eq!(best_rank.tiers.iter().map(|t| t.1).sum::<u128>(), total);
        for order in [ClassOrder::LargestFirst, ClassOrder::SmallestFirst, ClassOrder::Given] {
            let options = GreedyOptions { class_order: order, relocate: true };
            let a = solve_greedy(&p, &options, None).expect("valid");
            if best.unplaced.iter().all(|&u| u == 0) {
                // Everything fits: the first strategy's answer is kept; no tier can do better.
                prop_assert!(best_rank.tiers >= rank(&p, &a).tiers, "{order:?}");
            } else {
                prop_assert!(best_rank >= rank(&p, &a), "{order:?}");
            }
        }
    }
}
