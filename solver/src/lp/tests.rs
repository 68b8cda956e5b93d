//! Tests of the LP stage: grouping, quotas, tiers, and the greedy's quality against the exact
//! MIP on small random problems.

use std::time::Duration;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

use super::*;
use crate::greedy::{
    Assignment, ClassOrder, ClassSpec, Conflict, GreedyOptions, NO_DOMAIN, solve_greedy,
};
use crate::objective::Objective;

fn class(count: u32, priority: i32, requests: &[i64]) -> ClassSpec {
    ClassSpec { count, priority, requests: requests.to_vec(), max_per_node: None }
}

fn problem(classes: Vec<ClassSpec>, free: &[&[i64]]) -> Problem {
    let nodes = free.len();
    let cells = classes.len() * nodes;
    Problem {
        resources: free.first().map_or(0, |r| r.len()),
        nodes,
        classes,
        free: free.iter().flat_map(|r| r.iter().copied()).collect(),
        feasible: vec![true; cells],
        score: vec![0; cells],
        ..Problem::default()
    }
}

#[test]
fn alike_nodes_share_a_group_and_quotas_fit_their_aggregate_room() {
    // Nodes 0 and 2 are alike; node 1 has less room; node 3 is infeasible for class 1.
    let mut p = problem(
        vec![class(10, 0, &[2, 1]), class(3, 0, &[1, 4])],
        &[&[4, 8], &[2, 8], &[4, 8], &[4, 8]],
    );
    p.feasible[p.nodes + 3] = false;
    let guide = lp_guide(&p, &LpOptions::default()).expect("solves").expect("a guide");
    assert_eq!(guide.group_of_node, vec![0, 1, 0, 2]);
    assert_eq!(guide.groups, 3);
    // Aggregate room per group: cpu 8/2/4, memory 16/8/8. Every quota fits it.
    let size = [2i64, 1, 1];
    for (g, &size) in size.iter().enumerate() {
        let node = guide.group_of_node.iter().position(|&x| x == g).expect("a node");
        for r in 0..2 {
            let used: i64 =
                (0..2).map(|c| i64::from(guide.quota[c * 3 + g]) * p.classes[c].requests[r]).sum();
            assert!(used <= size * p.free[node * 2 + r], "group {g} resource {r}");
        }
    }
    assert_eq!(guide.quota[3 + 2], 0, "class 1 gets no quota where it is infeasible");
    // The relaxation's optimum is 8.5 pods (cpu 14 in all; all 3 of class 1, 5.5 of class 0);
    // rounding down per cell loses at most one pod per fractional cell.
    let total: u32 = guide.quota.iter().sum();
    assert!((7..=8).contains(&total), "quotas place {total} pods: {guide:?}");
}

#[test]
fn a_higher_tier_keeps_its_optimum_in_the_lp() {
    // One node with 4 cpu: 2 high-priority pods of 2 cpu, 4 low-priority pods of 1 cpu. The
    // count alone would prefer the small pods; tiers put the high ones first.
    let p = problem(vec![class(4, 0, &[1]), class(2, 10, &[2])], &[&[4]]);
    let guide = lp_guide(&p, &LpOptions::default()).expect("solves").expect("a guide");
    assert_eq!(guide.quota, vec![0, 2]);
}

#[test]
fn the_guided_greedy_follows_quotas_then_places_the_rest() {
    // Class 0 (4 cpu) fits only the cpu-rich node 0; class 1 (small) prefers node 0 too.
    // Smallest first without a guide puts class 1 on node 0 and strands a pod of class 0; the
    // LP sends class 1 to node 1.
    let mut p = problem(vec![class(2, 0, &[4, 1]), class(2, 0, &[1, 4])], &[&[8, 8], &[2, 8]]);
    p.score = vec![0, 0, 5, 0]; // class 1 prefers node 0.
    let options = GreedyOptions { class_order: ClassOrder::SmallestFirst, relocate: false };
    let plain = solve_greedy(&p, &options, None).expect("valid");
    let guide = lp_guide(&p, &LpOptions::default()).expect("solves").expect("a guide");
    let guided =
        solve_greedy(&Problem { guide: Some(guide), ..p.clone() }, &options, None).expect("valid");
    assert!(plain.placements.len() < 4, "the plain greedy strands a pod: {plain:?}");
    assert_eq!(guided.placements.len(), 4, "{guided:?}");
}

#[test]
fn the_exact_mip_honours_conflicts_and_tiers() {
    let mut p = problem(vec![class(3, 0, &[1]), class(2, 5, &[1])], &[&[2], &[2], &[2]]);
    p.objective = Objective::Pods;
    p.topologies = 1;
    p.domains = vec![0, 0, 1]; // Two zones: nodes 0 and 1, node 2.
    p.conflicts = vec![Conflict { a: 1, b: 1, topology: 0 }, Conflict { a: 0, b: 1, topology: 0 }];
    let exact = solve_exact(&p, Duration::from_secs(20)).expect("solves").expect("optimal");
    // Class 1 (priority 5): one pod per zone → 2. Class 0 may not share a zone with class 1.
    assert_eq!(exact, vec![(5, 2), (0, 0)]);
    p.domains = vec![0, 0, NO_DOMAIN];
    let exact = solve_exact(&p, Duration::from_secs(20)).expect("solves").expect("optimal");
    // Node 2 is in no zone: class 1 puts both pods there, and class 0 takes zone 0 freely.
    assert_eq!(exact, vec![(5, 2), (0, 3)]);
}

/// The value placed per priority tier, highest first.
fn per_tier(p: &Problem, a: &Assignment) -> Vec<(i32, u128)> {
    crate::objective::tier_values(p, &a.placements)
}

/// The strategies `kplace plan` tries, kept by the objective.
fn best_of_strategies(p: &Problem) -> Assignment {
    crate::objective::solve_best(p).expect("valid").0
}

/// A small random problem: up to 4 classes, 5 nodes, 2 resources, 2 tiers, some conflicts;
/// sized so that the pods usually do not all fit.
fn small_problem() -> impl Strategy<Value = Problem> {
    (1usize..5, 1usize..6).prop_flat_map(|(n_classes, n_nodes)| {
        let class = (1u32..9, 0i32..2, prop::collection::vec(1i64..6, 2)).prop_map(
            |(count, priority, requests)| ClassSpec {
                count,
                priority: priority * 10,
                requests,
                max_per_node: None,
            },
        );
        (
            prop::collection::vec(class, n_classes),
            prop::collection::vec(0i64..13, n_nodes * 2),
            prop::collection::vec(prop::bool::weighted(0.8), n_classes * n_nodes),
            prop::collection::vec(0i64..5, n_classes * n_nodes),
            prop::collection::vec(0u32..2, n_nodes),
            prop::collection::vec((0..n_classes, 0..n_classes), 0..2),
        )
            .prop_map(move |(classes, free, feasible, score, domains, conflicts)| {
                Problem {
                    resources: 2,
                    nodes: n_nodes,
                    classes,
                    free,
                    feasible,
                    score,
                    topologies: 1,
                    domains,
                    conflicts: conflicts
                        .into_iter()
                        .map(|(a, b)| Conflict { a, b, topology: 0 })
                        .collect(),
                    ..Problem::default()
                }
            })
    })
}

#[test]
fn the_strategies_match_the_exact_optimum_per_tier_on_small_problems() {
    // Over deterministic random problems with the pod-count objective, the best of the
    // strategies places exactly the optimum's pods in every priority tier (the exact MIP's,
    // each tier maximized with the tiers above held at their optimum), where the queue-order
    // greedy falls short.
    let mut runner = TestRunner::deterministic();
    let (mut total, mut optimum, mut solved) = (0u128, 0u128, 0);
    // The queue-order greedy without relocation, to show the instances are not trivial.
    let mut naive_total = 0u128;
    for _ in 0..150 {
        let mut p = small_problem().new_tree(&mut runner).expect("a problem").current();
        p.objective = Objective::Pods;
        let Some(exact) = solve_exact(&p, Duration::from_secs(5)).expect("solves") else {
            continue; // Not proven in time: no yardstick.
        };
        solved += 1;
        let naive = solve_greedy(
            &p,
            &GreedyOptions { class_order: ClassOrder::Given, relocate: false },
            None,
        )
        .expect("valid");
        naive_total += per_tier(&p, &naive).iter().map(|t| t.1).sum::<u128>();
        let got = per_tier(&p, &best_of_strategies(&p));
        assert_eq!(got, exact, "placed per tier vs the optimum\n{p:?}");
        total += got.iter().map(|t| t.1).sum::<u128>();
        optimum += exact.iter().map(|t| t.1).sum::<u128>();
    }
    assert!(solved >= 120, "only {solved} problems solved exactly");
    assert!(naive_total < optimum, "the instances are too easy: the naive greedy is optimal");
    eprintln!(
        "strategies: {total} pods of the optimum's {optimum} (naive greedy {naive_total}), \
         {solved} problems"
    );
}

#[test]
fn the_strategies_are_near_the_exact_optimum_of_placed_resources_on_small_problems() {
    // The same instances with the default objective (placed pods weighted by dominant share
    // per tier): the kept strategy is never above the exact optimum (lexicographically per
    // tier), is optimal on most instances, and loses little value on the others. Measured:
    // optimal on 134 of 150, 2.05% of the optimum's value lost in all, 41.8% in the worst
    // tier — the queue order's floor (no fewer pods, no less of any resource) keeps small
    // pods where the optimum trades them for larger ones; without the floor 145 of 150 and
    // 0.18%.
    let mut runner = TestRunner::deterministic();
    let (mut solved, mut optimal) = (0u32, 0u32);
    let (mut got_total, mut optimum) = (0u128, 0u128);
    let mut worst = 0f64;
    for _ in 0..150 {
        let p = small_problem().new_tree(&mut runner).expect("a problem").current();
        assert_eq!(p.objective, Objective::Resources);
        let Some(exact) = solve_exact(&p, Duration::from_secs(5)).expect("solves") else {
            continue;
        };
        solved += 1;
        let got = per_tier(&p, &best_of_strategies(&p));
        // The first tier that differs by more than the MIP's tolerance (values are in units
        // of 2⁻³² of the cluster; microlp proves optimality to about 1e-9 relative).
        let differs = got.iter().zip(&exact).find(|(g, e)| g.1.abs_diff(e.1) * 1_000_000 > e.1);
        match differs {
            None => optimal += 1,
            Some((g, e)) => {
                assert!(g.1 < e.1, "above the optimum: {got:?} > {exact:?}\n{p:?}");
                worst = worst.max(1.0 - g.1 as f64 / e.1.max(1) as f64);
            }
        }
        got_total += got.iter().map(|t| t.1).sum::<u128>();
        optimum += exact.iter().map(|t| t.1).sum::<u128>();
    }
    let gap = 1.0 - got_total as f64 / optimum.max(1) as f64;
    eprintln!(
        "resources objective: optimal on {optimal} of {solved} problems; value gap {:.2}% in \
         all, worst tier {:.1}%",
        gap * 100.0,
        worst * 100.0
    );
    assert!(solved >= 120, "only {solved} problems solved exactly");
    assert!(optimal * 100 >= solved * 85, "optimal on only {optimal} of {solved} problems");
    assert!(gap <= 0.03, "the strategies lose {:.2}% of the optimum's value", gap * 100.0);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn guided_assignments_respect_capacity_and_conflicts(p in small_problem()) {
        let Some(guide) = lp_guide(&p, &LpOptions::default()).expect("solves") else {
            return Ok(());
        };
        prop_assert_eq!(guide.group_of_node.len(), p.nodes);
        let guided = Problem { guide: Some(guide), ..p.clone() };
        let a = solve_greedy(&guided, &GreedyOptions::default(), None).expect("valid");
        let mut free = p.free.clone();
        for (k, pl) in a.placements.iter().enumerate() {
            prop_assert!(p.feasible[pl.class * p.nodes + pl.node]);
            for r in 0..p.resources {
                let req = p.classes[pl.class].requests[r];
                let f = &mut free[pl.node * p.resources + r];
                prop_assert!(req == 0 || req <= *f, "capacity exceeded");
                *f -= req;
            }
            for q in &a.placements[..k] {
                for c in &p.conflicts {
                    let pair = (c.a == pl.class && c.b == q.class) || (c.b == pl.class && c.a == q.class);
                    let d = p.domains[pl.node];
                    prop_assert!(!(pair && d != NO_DOMAIN && p.domains[q.node] == d), "conflict violated");
                }
            }
        }
        // Following quotas never costs pods against the plain greedy's first pass? Not
        // guaranteed; but the total is bounded by the exact optimum per class count.
        let placed: u32 = a.placements.len() as u32;
        let wanted: u32 = p.classes.iter().map(|c| c.count).sum();
        prop_assert_eq!(placed + a.unplaced.iter().sum::<u32>(), wanted);
    }
}
