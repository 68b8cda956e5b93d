//! Tests of the objective: pod values, ranks, and the choice among strategies.

use proptest::prelude::*;

use super::{
    Assignment, ClassOrder, GreedyOptions, Objective, Placed, Problem, SHARE_ONE, covers,
    dominant_share, placed, pod_values, rank, solve_best, solve_greedy,
};
use crate::greedy::ClassSpec;
use crate::testing::class;

fn problem(classes: Vec<ClassSpec>, free: &[&[i64]], objective: Objective) -> Problem {
    Problem { objective, ..crate::testing::problem(classes, free) }
}

#[test]
fn one_large_pod_is_worth_the_small_pods_of_its_size() {
    // One node of 8 cpu; the queue holds seven 1-cpu pods, then one 8-cpu pod.
    let assignment = |small: u32, large: u32| Assignment {
        placements: (0..small)
            .map(|_| Placed { class: 0, node: 0 })
            .chain((0..large).map(|_| Placed { class: 1, node: 0 }))
            .collect(),
        unplaced: vec![7 - small, 1 - large],
        ..Assignment::default()
    };
    let (small, large) = (assignment(7, 0), assignment(0, 1));
    for (objective, large_wins) in [(Objective::Resources, true), (Objective::Pods, false)] {
        let p = problem(vec![class(7, 0, &[1]), class(1, 0, &[8])], &[&[8]], objective);
        assert_eq!(rank(&p, &large) > rank(&p, &small), large_wins, "{objective:?}");
        // The large pod is worth eight small ones.
        let values = pod_values(&p);
        if objective == Objective::Resources {
            assert_eq!(values[1], 8 * values[0]);
        }
        // Whatever the objective, the queue order's seven pods are the floor: the large
        // pod alone places fewer pods, so it is not kept.
        let (a, _) = solve_best(&p).expect("valid");
        assert_eq!(placed(&p, &a), vec![7, 0], "{objective:?}");
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
            crate::testing::scores(0..5, n_classes * n_nodes),
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

    /// The best strategy covers the queue order's assignment (resources objective) and ranks
    /// at least as high as each strategy alone that covers it; its tier values are the sums
    /// of its placed pods' values.
    #[test]
    fn the_best_strategy_covers_the_queue_order_and_outranks_the_others(p in small_problem()) {
        let (best, _) = solve_best(&p).expect("valid");
        let best_rank = rank(&p, &best);
        let values = pod_values(&p);
        let total: u128 = best.placements.iter().map(|pl| u128::from(values[pl.class])).sum();
        prop_assert_eq!(best_rank.tiers.iter().map(|t| t.1).sum::<u128>(), total);
        let solve = |order| {
            let options = GreedyOptions { class_order: order, relocate: true, even_spread: true, substitute: true, trade_again: true };
            solve_greedy(&p, &options, None).expect("valid")
        };
        let queue = placed(&p, &solve(ClassOrder::Given));
        let all_placed = best.unplaced.iter().all(|&u| u == 0);
        let resources = p.objective == Objective::Resources;
        if resources {
            prop_assert!(covers(&p, &placed(&p, &best), &queue), "the floor is not covered");
        }
        for order in [ClassOrder::LargestFirst, ClassOrder::SmallestFirst, ClassOrder::Given] {
            let a = solve(order);
            if all_placed {
                // Everything fits: the first strategy's answer is kept; no tier can do better.
                prop_assert!(best_rank.tiers >= rank(&p, &a).tiers, "{order:?}");
            } else if !resources || covers(&p, &placed(&p, &a), &queue) {
                prop_assert!(best_rank >= rank(&p, &a), "{order:?}");
            }
        }
    }

    /// `covers` is a partial order's "at least": every assignment covers itself, and adding
    /// a pod to a class keeps covering.
    #[test]
    fn an_assignment_covers_itself_and_less(p in small_problem(), extra in 0usize..4) {
        let counts: Vec<u32> = p.classes.iter().map(|c| c.count / 2).collect();
        prop_assert!(covers(&p, &counts, &counts));
        let mut more = counts.clone();
        if let Some(c) = more.get_mut(extra) {
            *c += 1;
        }
        prop_assert!(covers(&p, &more, &counts));
        if more != counts {
            // One pod fewer in its tier.
            prop_assert!(!covers(&p, &counts, &more));
        }
    }
}
