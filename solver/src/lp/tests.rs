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
use crate::testing::{class, problem};
use crate::topology::{Counter, InterPod, Rule};

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
    let options = GreedyOptions {
        class_order: ClassOrder::SmallestFirst,
        relocate: false,
        even_spread: false,
        substitute: true,
        trade_again: true,
    };
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

/// `problem` with one topology (`domains`, a domain per node) and `rules` of class 0 over one
/// counter of class 0's own pods (`initial`: its count per domain before the solve).
fn with_rule(mut p: Problem, domains: &[u32], initial: &[u32], rule: Rule) -> Problem {
    p.topologies = 1;
    p.domains = domains.to_vec();
    p.inter_pod = InterPod {
        counters: vec![Counter {
            topology: 0,
            members: vec![0],
            initial: initial.to_vec(),
            ..Counter::default()
        }],
        rules: vec![rule],
    };
    p.objective = Objective::Pods;
    p
}

#[test]
fn the_exact_mip_honours_spread_affinity_and_anti_affinity() {
    let spread =
        |max_skew, min_domains| Rule::Spread { class: 0, counter: 0, max_skew, min_domains };
    let affinity = Rule::Affinity { class: 0, counters: vec![0], self_match: true };
    let anti = Rule::AntiAffinity { class: 0, counter: 0 };
    // (case, room per node, domain per node, counted before per domain, rule, pods placed)
    type Case<'a> = (&'a str, &'a [i64], &'a [u32], &'a [u32], Rule, u128);
    let cases: &[Case] = &[
        (
            "spread: the full zone holds the others to maxSkew",
            &[4, 4, 0],
            &[0, 1, 2],
            &[],
            spread(1, 1),
            2,
        ),
        ("spread: a wider skew lets more in", &[4, 4, 0], &[0, 1, 2], &[], spread(2, 1), 4),
        ("spread: two roomy zones take all", &[4, 4], &[0, 1], &[], spread(1, 1), 6),
        (
            "spread: too few domains for minDomains pin the minimum at 0",
            &[4, 4],
            &[0, 1],
            &[],
            spread(1, 3),
            2,
        ),
        (
            "spread: a node without the key takes none",
            &[4, 4],
            &[0, NO_DOMAIN],
            &[],
            spread(1, 1),
            4,
        ),
        (
            "affinity: the first pod picks one zone, the rest follow",
            &[3, 2],
            &[0, 1],
            &[],
            affinity.clone(),
            3,
        ),
        (
            "affinity: only where a matching pod runs",
            &[3, 2],
            &[0, 1],
            &[0, 1],
            affinity.clone(),
            2,
        ),
        (
            "anti-affinity: one of its own pods per zone",
            &[4, 4, 4],
            &[0, 0, 1],
            &[],
            anti.clone(),
            2,
        ),
        (
            "anti-affinity: none where a counted pod runs",
            &[4, 4, 4],
            &[0, 0, 1],
            &[1, 0],
            anti.clone(),
            1,
        ),
    ];
    for (case, room, domains, initial, rule, want) in cases {
        let free: Vec<&[i64]> = room.iter().map(std::slice::from_ref).collect();
        let p = with_rule(problem(vec![class(6, 0, &[1])], &free), domains, initial, rule.clone());
        let exact = solve_exact(&p, Duration::from_secs(20)).expect("solves").expect("optimal");
        assert_eq!(exact, vec![(0, *want)], "{case}");
        // The greedy's pod-by-pod placement reaches the same count on these.
        let got = per_tier(&p, &best_of_strategies(&p));
        assert_eq!(got, exact, "{case}: the strategies");
    }
}

#[test]
fn lp_quotas_keep_a_spread_class_within_its_skew() {
    // Zone 0 has room for 10 pods, zone 1 for 2: spread with maxSkew 1 over its own pods
    // allows 3 + 2. Without the rule the LP would send all 8 to zone 0.
    let p = problem(vec![class(8, 0, &[1])], &[&[10], &[2]]);
    let p = with_rule(
        p,
        &[0, 1],
        &[],
        Rule::Spread { class: 0, counter: 0, max_skew: 1, min_domains: 1 },
    );
    let guide = lp_guide(&p, &LpOptions::default()).expect("solves").expect("a guide");
    assert_ne!(guide.group_of_node[0], guide.group_of_node[1], "one group per zone");
    let quota = |node: usize| guide.quota[guide.group_of_node[node]];
    assert!(quota(0) <= 3, "zone 0's quota {} exceeds the skew", quota(0));
    assert!(quota(0) + quota(1) >= 4, "the quotas place too little: {guide:?}");
    let unruled = Problem { inter_pod: InterPod::default(), ..p.clone() };
    let guide = lp_guide(&unruled, &LpOptions::default()).expect("solves").expect("a guide");
    assert!(guide.quota[guide.group_of_node[0]] > 3, "without the rule: {guide:?}");
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
            crate::testing::scores(0..5, n_classes * n_nodes),
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
            &GreedyOptions {
                class_order: ClassOrder::Given,
                relocate: false,
                even_spread: false,
                substitute: true,
                trade_again: true,
            },
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

/// [`small_problem`] with hard inter-pod rules: each class, with some chance, spreads its own
/// pods (`maxSkew` 1–2, `minDomains` 1–3), requires affinity to its own pods or avoids them,
/// over the problem's one topology, with a few of its pods counted before the solve.
fn small_problem_with_rules() -> impl Strategy<Value = Problem> {
    small_problem().prop_flat_map(|p| {
        let n_classes = p.classes.len();
        let n_nodes = p.nodes;
        let rule = (0u8..4, 1u32..3, 1u32..4, prop::collection::vec(0u32..2, n_nodes));
        (Just(p), prop::collection::vec(rule, n_classes)).prop_map(move |(mut p, rules)| {
            // Domain ids must be below the number of nodes.
            for d in &mut p.domains {
                *d %= n_nodes as u32;
            }
            for (c, (kind, max_skew, min_domains, initial)) in rules.into_iter().enumerate() {
                let initial = if kind == 1 { vec![0; n_nodes] } else { initial };
                let counter = p.inter_pod.counters.len();
                let rule = match kind {
                    0 => Rule::Spread { class: c, counter, max_skew, min_domains },
                    1 | 2 => Rule::Affinity { class: c, counters: vec![counter], self_match: true },
                    _ => Rule::AntiAffinity { class: c, counter },
                };
                p.inter_pod.counters.push(Counter {
                    topology: 0,
                    members: vec![c],
                    initial,
                    ..Counter::default()
                });
                p.inter_pod.rules.push(rule);
            }
            p
        })
    })
}

#[test]
fn the_strategies_are_near_the_exact_optimum_with_spread_and_affinity_rules() {
    // Random small problems where every class has a hard spread, affinity or anti-affinity
    // rule, both objectives. The MIP states the rules on the final counts, a relaxation of
    // their pod-by-pod form (see `rules`), so it bounds what any sequential placement can
    // reach from above: the kept strategy is never above it. Measured: the rules lower the
    // optimum of 56 (pods) and 62 (resources) of the 150; the kept strategy reaches the
    // relaxed optimum on 147 of 150 with the pods objective (1.92% of the optimum's pods lost
    // in all) and on 140 of 150 with the resources objective (2.22% of the value).
    for objective in [Objective::Pods, Objective::Resources] {
        let mut runner = TestRunner::deterministic();
        let (mut solved, mut optimal, mut binding) = (0u32, 0u32, 0u32);
        let (mut got_total, mut optimum) = (0u128, 0u128);
        for _ in 0..150 {
            let mut p =
                small_problem_with_rules().new_tree(&mut runner).expect("a problem").current();
            p.objective = objective;
            let Some(exact) = solve_exact(&p, Duration::from_secs(5)).expect("solves") else {
                continue;
            };
            solved += 1;
            let free = Problem { inter_pod: InterPod::default(), ..p.clone() };
            if solve_exact(&free, Duration::from_secs(5))
                .expect("solves")
                .is_some_and(|f| f != exact)
            {
                binding += 1;
            }
            let got = per_tier(&p, &best_of_strategies(&p));
            let differs = got.iter().zip(&exact).find(|(g, e)| g.1.abs_diff(e.1) * 1_000_000 > e.1);
            match differs {
                None => optimal += 1,
                Some((g, e)) => {
                    assert!(g.1 < e.1, "above the relaxed optimum: {got:?} > {exact:?}\n{p:?}")
                }
            }
            got_total += got.iter().map(|t| t.1).sum::<u128>();
            optimum += exact.iter().map(|t| t.1).sum::<u128>();
        }
        let gap = 1.0 - got_total as f64 / optimum.max(1) as f64;
        eprintln!(
            "{objective:?} with rules: optimal on {optimal} of {solved} problems; {:.2}% of the \
             optimum lost in all; the rules lower the optimum of {binding}",
            gap * 100.0
        );
        assert!(binding >= 30, "{objective:?}: the rules bind on only {binding} problems");
        assert!(solved >= 120, "{objective:?}: only {solved} problems solved exactly");
        assert!(
            optimal * 100 >= solved * 85,
            "{objective:?}: optimal on only {optimal} of {solved}"
        );
        assert!(gap <= 0.03, "{objective:?}: the strategies lose {:.2}%", gap * 100.0);
    }
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
        let guide = match lp_guide(&p, &LpOptions::default()) {
            Ok(Some(guide)) => guide,
            Ok(None) => return Ok(()),
            // microlp 0.6 reports a singular basis on a few problems (one is kept in
            // proptest-regressions); `plan` then goes on without the LP-guided strategy.
            Err(LpError::Backend(e)) => {
                let (a, strategy) = crate::objective::solve_best(&p).expect("valid without the LP");
                prop_assert_ne!(strategy, crate::objective::Strategy::LpGuided, "{}", e);
                let wanted: u32 = p.classes.iter().map(|c| c.count).sum();
                prop_assert_eq!(a.placements.len() as u32 + a.unplaced.iter().sum::<u32>(), wanted);
                return Ok(());
            }
            Err(e) => panic!("the LP failed: {e}"),
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
