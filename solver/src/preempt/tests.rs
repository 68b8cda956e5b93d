//! Tests of the batch preemption pass: hand-made cases after upstream's SelectVictimsOnNode and
//! pickOneNodeForPreemption tests, properties checked by an independent replay of the plan, a
//! naive re-implementation of the pass, and brute force on tiny instances.

use proptest::prelude::*;

use super::*;

/// A preemptor that may preempt, with no per-node limit.
fn pre(priority: i32, requests: &[i64], count: u32) -> PreemptorSpec {
    PreemptorSpec {
        count,
        priority,
        requests: requests.to_vec(),
        may_preempt: true,
        max_per_node: None,
        spread: Vec::new(),
    }
}

/// The same preemptor with `preemptionPolicy: Never`.
fn never(p: PreemptorSpec) -> PreemptorSpec {
    PreemptorSpec { may_preempt: false, ..p }
}

/// A victim on `node` with no disruption budget, started at time 0.
fn victim(node: usize, priority: i32, requests: &[i64]) -> VictimSpec {
    VictimSpec { node, priority, requests: requests.to_vec(), pdbs: Vec::new(), start_time: 0 }
}

/// The same victim selected by the given budgets.
fn in_pdbs(v: VictimSpec, pdbs: &[usize]) -> VictimSpec {
    VictimSpec { pdbs: pdbs.to_vec(), ..v }
}

/// The same victim with a start time.
fn started(v: VictimSpec, start_time: i64) -> VictimSpec {
    VictimSpec { start_time, ..v }
}

/// A problem where every preemptor is eligible on every node.
fn problem(
    free: &[&[i64]],
    victims: Vec<VictimSpec>,
    pdb_allowed: &[u32],
    preemptors: Vec<PreemptorSpec>,
) -> PreemptProblem {
    let nodes = free.len();
    PreemptProblem {
        resources: free.first().map_or(0, |r| r.len()),
        nodes,
        free: free.iter().flat_map(|r| r.iter().copied()).collect(),
        victims,
        pdb_allowed: pdb_allowed.to_vec(),
        eligible: vec![true; preemptors.len() * nodes],
        preemptors,
        spread: Vec::new(),
    }
}

fn solve(p: &PreemptProblem) -> PreemptPlan {
    solve_preemption(p).expect("valid problem")
}

/// (preemptor, node) of every placement.
fn placed(plan: &PreemptPlan) -> Vec<(usize, usize)> {
    plan.placements.iter().map(|p| (p.preemptor, p.node)).collect()
}

/// (victim, preemptor, node) of every eviction.
fn evicted(plan: &PreemptPlan) -> Vec<(usize, usize, usize)> {
    plan.evictions.iter().map(|e| (e.victim, e.preemptor, e.node)).collect()
}

#[test]
fn the_pass_evicts_the_fewest_and_least_important_pods() {
    struct Case {
        name: &'static str,
        problem: PreemptProblem,
        placements: Vec<(usize, usize)>,
        evictions: Vec<(usize, usize, usize)>,
        pdb_violations: usize,
        unplaced: Vec<u32>,
    }
    let one = |v: Vec<VictimSpec>, allowed: &[u32], p: PreemptorSpec| {
        problem(&[&[0]], v, allowed, vec![p])
    };
    let two = |v: Vec<VictimSpec>, allowed: &[u32], p: PreemptorSpec| {
        problem(&[&[0], &[0]], v, allowed, vec![p])
    };
    // Four nodes in zones 0, 1, 0, 1 (group 0, with three pods of the workload in zone 0
    // already) and each node its own domain (group 1), for the spread tie-break.
    let spread_groups = vec![
        PreemptSpread { domain: vec![0, 1, 0, 1], counts: vec![3, 0] },
        PreemptSpread { domain: vec![0, 1, 2, 3], counts: vec![] },
    ];
    let spreading = |p: PreemptorSpec| PreemptorSpec { spread: vec![0, 1], ..p };
    // One victim per node, the youngest on nodes 0 and 2 (zone 0).
    let aged =
        || [9, 1, 9, 2].iter().enumerate().map(|(n, &t)| started(victim(n, 1, &[1]), t)).collect();
    let cases = vec![
        Case {
            name: "equally costly nodes go to the zone, then the node, with the fewest of the workload's pods",
            problem: PreemptProblem {
                spread: spread_groups.clone(),
                ..problem(&[&[2], &[2], &[2], &[2]], vec![], &[], vec![spreading(pre(10, &[1], 4))])
            },
            // Zone 1 until it holds three too (nodes 1, 3, 1), then zone 0's emptier node.
            placements: vec![(0, 1), (0, 3), (0, 1), (0, 0)],
            evictions: vec![],
            pdb_violations: 0,
            unplaced: vec![0],
        },
        Case {
            name: "without spread groups equally costly nodes go by index",
            problem: problem(&[&[2], &[2], &[2], &[2]], vec![], &[], vec![pre(10, &[1], 4)]),
            placements: vec![(0, 0), (0, 0), (0, 1), (0, 1)],
            evictions: vec![],
            pdb_violations: 0,
            unplaced: vec![0],
        },
        Case {
            name: "spread only breaks ties: a node with fewer victims wins in the fuller zone",
            problem: PreemptProblem {
                spread: spread_groups.clone(),
                ..problem(
                    &[&[0], &[0], &[0], &[0]],
                    vec![
                        victim(0, 1, &[2]),
                        victim(1, 1, &[1]),
                        victim(1, 1, &[1]),
                        victim(2, 1, &[1]),
                        victim(2, 1, &[1]),
                        victim(3, 1, &[1]),
                        victim(3, 1, &[1]),
                    ],
                    &[],
                    vec![spreading(pre(10, &[2], 1))],
                )
            },
            placements: vec![(0, 0)],
            evictions: vec![(0, 0, 0)],
            pdb_violations: 0,
            unplaced: vec![0],
        },
        Case {
            name: "with spread groups the emptier zone wins over younger victims",
            problem: PreemptProblem {
                spread: spread_groups.clone(),
                ..problem(&[&[0], &[0], &[0], &[0]], aged(), &[], vec![spreading(pre(10, &[1], 1))])
            },
            // Nodes 0 and 2 run the youngest victims, but zone 0 already holds three pods; of
            // zone 1's nodes, node 3's victim is the younger.
            placements: vec![(0, 3)],
            evictions: vec![(3, 0, 3)],
            pdb_violations: 0,
            unplaced: vec![0],
        },
        Case {
            name: "without spread groups the youngest victims go first",
            problem: problem(&[&[0], &[0], &[0], &[0]], aged(), &[], vec![pre(10, &[1], 1)]),
            placements: vec![(0, 0)],
            evictions: vec![(0, 0, 0)],
            pdb_violations: 0,
            unplaced: vec![0],
        },
        Case {
            name: "a lower-priority pod is evicted to make room",
            problem: one(vec![victim(0, 1, &[4])], &[], pre(10, &[4], 1)),
            placements: vec![(0, 0)],
            evictions: vec![(0, 0, 0)],
            pdb_violations: 0,
            unplaced: vec![0],
        },
        Case {
            name: "a pod of equal priority is never a victim",
            problem: one(vec![victim(0, 10, &[4])], &[], pre(10, &[4], 1)),
            placements: vec![],
            evictions: vec![],
            pdb_violations: 0,
            unplaced: vec![1],
        },
        Case {
            name: "a pod of higher priority is never a victim",
            problem: one(vec![victim(0, 11, &[4])], &[], pre(10, &[4], 1)),
            placements: vec![],
            evictions: vec![],
            pdb_violations: 0,
            unplaced: vec![1],
        },
        Case {
            name: "only the lower-priority pods beside an equal one are evicted",
            problem: one(vec![victim(0, 10, &[2]), victim(0, 1, &[2])], &[], pre(10, &[2], 1)),
            placements: vec![(0, 0)],
            evictions: vec![(1, 0, 0)],
            pdb_violations: 0,
            unplaced: vec![0],
        },
        Case {
            name: "a pod with preemptionPolicy Never evicts nothing",
            problem: one(vec![victim(0, 1, &[4])], &[], never(pre(10, &[4], 1))),
            placements: vec![],
            evictions: vec![],
            pdb_violations: 0,
            unplaced: vec![1],
        },
        Case {
            name: "a pod with preemptionPolicy Never still takes free room",
            problem: problem(
                &[&[0], &[4]],
                vec![victim(0, 1, &[4])],
                &[],
                vec![never(pre(10, &[4], 1))],
            ),
            placements: vec![(0, 1)],
            evictions: vec![],
            pdb_violations: 0,
            unplaced: vec![0],
        },
        Case {
            name: "a PDB-protected victim is spared when another node needs no violation",
            problem: two(
                vec![in_pdbs(victim(0, 1, &[4]), &[0]), victim(1, 5, &[4])],
                &[0],
                pre(10, &[4], 1),
            ),
            placements: vec![(0, 1)],
            evictions: vec![(1, 0, 1)],
            pdb_violations: 0,
            unplaced: vec![0],
        },
        Case {
            name: "a PDB-protected victim is evicted and counted when no node avoids it",
            problem: one(vec![in_pdbs(victim(0, 1, &[4]), &[0])], &[0], pre(10, &[4], 1)),
            placements: vec![(0, 0)],
            evictions: vec![(0, 0, 0)],
            pdb_violations: 1,
            unplaced: vec![0],
        },
        Case {
            name: "a PDB that allows a disruption costs no violation",
            problem: two(
                vec![in_pdbs(victim(0, 1, &[4]), &[0]), victim(1, 5, &[4])],
                &[1],
                pre(10, &[4], 1),
            ),
            placements: vec![(0, 0)],
            evictions: vec![(0, 0, 0)],
            pdb_violations: 0,
            unplaced: vec![0],
        },
        Case {
            name: "PDB-violating victims are reprieved first, before more important ones",
            problem: one(
                vec![in_pdbs(victim(0, 1, &[2]), &[0]), victim(0, 2, &[2])],
                &[0],
                pre(10, &[2], 1),
            ),
            placements: vec![(0, 0)],
            evictions: vec![(1, 0, 0)],
            pdb_violations: 0,
            unplaced: vec![0],
        },
        Case {
            name: "the node whose most important victim has the lowest priority wins",
            problem: two(vec![victim(0, 5, &[4]), victim(1, 2, &[4])], &[], pre(10, &[4], 1)),
            placements: vec![(0, 1)],
            evictions: vec![(1, 0, 1)],
            pdb_violations: 0,
            unplaced: vec![0],
        },
        Case {
            name: "the highest victim priority decides before the number of victims",
            problem: two(
                vec![
                    victim(0, 5, &[4]),
                    victim(1, 1, &[2]),
                    victim(1, 1, &[1]),
                    victim(1, 1, &[1]),
                ],
                &[],
                pre(10, &[4], 1),
            ),
            placements: vec![(0, 1)],
            evictions: vec![(1, 0, 1), (2, 0, 1), (3, 0, 1)],
            pdb_violations: 0,
            unplaced: vec![0],
        },
        Case {
            name: "fewer victims of the same priority win",
            problem: two(
                vec![victim(0, 1, &[2]), victim(0, 1, &[2]), victim(1, 1, &[4])],
                &[],
                pre(10, &[4], 1),
            ),
            placements: vec![(0, 1)],
            evictions: vec![(2, 0, 1)],
            pdb_violations: 0,
            unplaced: vec![0],
        },
        Case {
            name: "the latest start time of the most important victims breaks a tie",
            problem: two(
                vec![started(victim(0, 1, &[4]), 200), started(victim(1, 1, &[4]), 100)],
                &[],
                pre(10, &[4], 1),
            ),
            placements: vec![(0, 0)],
            evictions: vec![(0, 0, 0)],
            pdb_violations: 0,
            unplaced: vec![0],
        },
        Case {
            name: "a full tie goes to the lowest node index",
            problem: two(vec![victim(1, 1, &[4]), victim(0, 1, &[4])], &[], pre(10, &[4], 1)),
            placements: vec![(0, 0)],
            evictions: vec![(1, 0, 0)],
            pdb_violations: 0,
            unplaced: vec![0],
        },
        Case {
            name: "the reprieve keeps the most important victims",
            problem: one(vec![victim(0, 1, &[2]), victim(0, 2, &[2])], &[], pre(10, &[2], 1)),
            placements: vec![(0, 0)],
            evictions: vec![(0, 0, 0)],
            pdb_violations: 0,
            unplaced: vec![0],
        },
        Case {
            name: "among equal priorities the earlier-started victim is kept",
            problem: one(
                vec![started(victim(0, 1, &[2]), 50), started(victim(0, 1, &[2]), 10)],
                &[],
                pre(10, &[2], 1),
            ),
            placements: vec![(0, 0)],
            evictions: vec![(0, 0, 0)],
            pdb_violations: 0,
            unplaced: vec![0],
        },
        Case {
            name: "a pod that fits without eviction takes the free room",
            problem: problem(&[&[0], &[4]], vec![victim(0, 0, &[4])], &[], vec![pre(10, &[4], 1)]),
            placements: vec![(0, 1)],
            evictions: vec![],
            pdb_violations: 0,
            unplaced: vec![0],
        },
        Case {
            name: "a preemptor that cannot fit even after evicting every lower-priority pod \
                   stays unplaced and evicts nothing",
            problem: problem(
                &[&[1], &[1]],
                vec![victim(0, 1, &[2]), victim(1, 1, &[2])],
                &[],
                vec![pre(10, &[4], 1)],
            ),
            placements: vec![],
            evictions: vec![],
            pdb_violations: 0,
            unplaced: vec![1],
        },
        Case {
            name: "an ineligible node is never used, even with victims",
            problem: PreemptProblem {
                eligible: vec![false, true],
                ..two(vec![victim(0, 1, &[4]), victim(1, 5, &[4])], &[], pre(10, &[4], 1))
            },
            placements: vec![(0, 1)],
            evictions: vec![(1, 0, 1)],
            pdb_violations: 0,
            unplaced: vec![0],
        },
        Case {
            name: "an unrequested resource is not checked, even when overcommitted",
            problem: problem(
                &[&[0, -5]],
                vec![victim(0, 1, &[4, 0])],
                &[],
                vec![pre(10, &[4, 0], 1)],
            ),
            placements: vec![(0, 0)],
            evictions: vec![(0, 0, 0)],
            pdb_violations: 0,
            unplaced: vec![0],
        },
        Case {
            name: "every requested resource must be freed",
            problem: problem(
                &[&[0, 0], &[0, 0]],
                vec![victim(0, 1, &[4, 0]), victim(1, 2, &[4, 4])],
                &[],
                vec![pre(10, &[4, 4], 1)],
            ),
            placements: vec![(0, 1)],
            evictions: vec![(1, 0, 1)],
            pdb_violations: 0,
            unplaced: vec![0],
        },
        Case {
            name: "a per-node limit spreads a preemptor's pods",
            problem: two(
                vec![victim(0, 1, &[2]), victim(0, 1, &[2]), victim(1, 5, &[2])],
                &[],
                PreemptorSpec { max_per_node: Some(1), ..pre(10, &[2], 2) },
            ),
            placements: vec![(0, 0), (0, 1)],
            evictions: vec![(1, 0, 0), (2, 0, 1)],
            pdb_violations: 0,
            unplaced: vec![0],
        },
        Case {
            name: "without a per-node limit the cheaper node takes both pods",
            problem: two(
                vec![victim(0, 1, &[2]), victim(0, 1, &[2]), victim(1, 5, &[2])],
                &[],
                pre(10, &[2], 2),
            ),
            placements: vec![(0, 0), (0, 0)],
            evictions: vec![(1, 0, 0), (0, 0, 0)],
            pdb_violations: 0,
            unplaced: vec![0],
        },
    ];
    for case in cases {
        let plan = solve(&case.problem);
        assert_eq!(placed(&plan), case.placements, "{}", case.name);
        assert_eq!(evicted(&plan), case.evictions, "{}", case.name);
        assert_eq!(plan.pdb_violations, case.pdb_violations, "{}", case.name);
        assert_eq!(plan.unplaced, case.unplaced, "{}", case.name);
        check_plan(&case.problem, &plan).unwrap_or_else(|e| panic!("{}: {e}", case.name));
    }
}

#[test]
fn preemptors_share_room_and_budgets_across_the_batch() {
    struct Case {
        name: &'static str,
        problem: PreemptProblem,
        placements: Vec<(usize, usize)>,
        evictions: Vec<(usize, usize, usize)>,
        pdb_violations: usize,
        unplaced: Vec<u32>,
        leftover_start: usize,
    }
    let cases = vec![
        Case {
            name: "room freed for one preemptor is not given to another",
            problem: problem(
                &[&[0]],
                vec![victim(0, 1, &[4])],
                &[],
                vec![pre(10, &[3], 1), pre(9, &[2], 1)],
            ),
            placements: vec![(0, 0)],
            evictions: vec![(0, 0, 0)],
            pdb_violations: 0,
            unplaced: vec![0, 1],
            leftover_start: 1,
        },
        Case {
            name: "room left over by one preemptor is used by the next without evicting",
            problem: problem(
                &[&[0]],
                vec![victim(0, 1, &[4])],
                &[],
                vec![pre(10, &[3], 1), pre(9, &[1], 1)],
            ),
            placements: vec![(0, 0), (1, 0)],
            evictions: vec![(0, 0, 0)],
            pdb_violations: 0,
            unplaced: vec![0, 0],
            leftover_start: 2,
        },
        Case {
            name: "two preemptors share a node, each evicting its own victims",
            problem: problem(
                &[&[0]],
                vec![victim(0, 0, &[2]), victim(0, 0, &[2])],
                &[],
                vec![pre(5, &[2], 1), pre(5, &[2], 1)],
            ),
            placements: vec![(0, 0), (1, 0)],
            evictions: vec![(1, 0, 0), (0, 1, 0)],
            pdb_violations: 0,
            unplaced: vec![0, 0],
            leftover_start: 2,
        },
        Case {
            name: "the higher-priority preemptor takes the room first, whatever the given order",
            problem: problem(
                &[&[0]],
                vec![victim(0, 1, &[4])],
                &[],
                vec![pre(5, &[4], 1), pre(10, &[4], 1)],
            ),
            placements: vec![(1, 0)],
            evictions: vec![(0, 1, 0)],
            pdb_violations: 0,
            unplaced: vec![1, 0],
            leftover_start: 1,
        },
        Case {
            name: "a PDB budget shared across nodes is consumed, then violated",
            problem: problem(
                &[&[0], &[0]],
                vec![in_pdbs(victim(0, 1, &[4]), &[0]), in_pdbs(victim(1, 1, &[4]), &[0])],
                &[1],
                vec![pre(10, &[4], 2)],
            ),
            placements: vec![(0, 0), (0, 1)],
            evictions: vec![(0, 0, 0), (1, 0, 1)],
            pdb_violations: 1,
            unplaced: vec![0],
            leftover_start: 2,
        },
        Case {
            name: "once a shared PDB budget is used up, a node without it is preferred",
            problem: problem(
                &[&[0], &[0], &[0]],
                vec![
                    in_pdbs(victim(0, 1, &[4]), &[0]),
                    in_pdbs(victim(1, 1, &[4]), &[0]),
                    victim(2, 3, &[4]),
                ],
                &[1],
                vec![pre(10, &[4], 2)],
            ),
            placements: vec![(0, 0), (0, 2)],
            evictions: vec![(0, 0, 0), (2, 0, 2)],
            pdb_violations: 0,
            unplaced: vec![0],
            leftover_start: 2,
        },
        Case {
            name: "a victim in two budgets uses both and violates when either is used up",
            problem: problem(
                &[&[0], &[0]],
                vec![in_pdbs(victim(0, 1, &[4]), &[0, 1]), in_pdbs(victim(1, 1, &[4]), &[1])],
                &[5, 1],
                vec![pre(10, &[4], 2)],
            ),
            placements: vec![(0, 0), (0, 1)],
            evictions: vec![(0, 0, 0), (1, 0, 1)],
            pdb_violations: 1,
            unplaced: vec![0],
            leftover_start: 2,
        },
        Case {
            name: "a pod with preemptionPolicy Never takes room another preemptor's evictions \
                   left over",
            problem: problem(
                &[&[0]],
                vec![victim(0, 1, &[4])],
                &[],
                vec![pre(10, &[2], 1), never(pre(20, &[2], 1))],
            ),
            placements: vec![(0, 0), (1, 0)],
            evictions: vec![(0, 0, 0)],
            pdb_violations: 0,
            unplaced: vec![0, 0],
            leftover_start: 1,
        },
    ];
    for case in cases {
        let plan = solve(&case.problem);
        assert_eq!(placed(&plan), case.placements, "{}", case.name);
        assert_eq!(evicted(&plan), case.evictions, "{}", case.name);
        assert_eq!(plan.pdb_violations, case.pdb_violations, "{}", case.name);
        assert_eq!(plan.unplaced, case.unplaced, "{}", case.name);
        assert_eq!(plan.leftover_start, case.leftover_start, "{}", case.name);
        check_plan(&case.problem, &plan).unwrap_or_else(|e| panic!("{}: {e}", case.name));
    }
}

#[test]
fn each_eviction_names_its_placement_and_budget_verdict() {
    let p = problem(
        &[&[0], &[0]],
        vec![
            in_pdbs(victim(0, 1, &[2]), &[0]),
            in_pdbs(victim(0, 1, &[2]), &[0]),
            in_pdbs(victim(1, 1, &[4]), &[0]),
        ],
        &[1],
        vec![pre(10, &[4], 2)],
    );
    let plan = solve(&p);
    // Node 1 needs one victim (of the budget's one disruption), node 0 two (one violation):
    // node 1 first; then node 0 is the only node left, and both its victims now violate.
    assert_eq!(placed(&plan), vec![(0, 1), (0, 0)]);
    assert_eq!(
        plan.evictions,
        vec![
            Eviction { victim: 2, preemptor: 0, node: 1, placement: 0, violates_pdb: false },
            Eviction { victim: 0, preemptor: 0, node: 0, placement: 1, violates_pdb: true },
            Eviction { victim: 1, preemptor: 0, node: 0, placement: 1, violates_pdb: true },
        ]
    );
    assert_eq!(plan.pdb_violations, 2);
}

#[test]
fn a_single_pass_may_strand_a_later_preemptor() {
    // The documented limit of one pass: the 2-unit pod (higher priority) ranks node 0 first
    // (its victim has the lower priority) and takes it; the 4-unit pod, eligible only on node
    // 0, then finds 2 units left and nothing more to evict. Putting the 2-unit pod on node 1
    // would have placed both.
    let mut p = problem(
        &[&[0], &[0]],
        vec![victim(0, 1, &[4]), victim(1, 3, &[2])],
        &[],
        vec![pre(10, &[2], 1), pre(5, &[4], 1)],
    );
    p.eligible = vec![true, true, true, false];
    let plan = solve(&p);
    assert_eq!(placed(&plan), vec![(0, 0)]);
    assert_eq!(plan.unplaced, vec![0, 1]);
}

#[test]
fn bad_input_is_an_error() {
    let ok = problem(&[&[4], &[4]], vec![victim(0, 1, &[1])], &[1], vec![pre(10, &[1], 1)]);
    assert_eq!(solve_preemption(&ok).map(|p| p.unplaced), Ok(vec![0]));
    let cases: Vec<(&str, PreemptProblem, PreemptError)> = vec![
        (
            "a free row of the wrong width",
            PreemptProblem { free: vec![1, 2, 3], ..ok.clone() },
            SolverError::Dimension { what: "free capacity entries", expected: 2, found: 3 }.into(),
        ),
        (
            "a short eligibility matrix",
            PreemptProblem { eligible: vec![true], ..ok.clone() },
            SolverError::Dimension { what: "eligibility entries", expected: 2, found: 1 }.into(),
        ),
        (
            "preemptor requests of the wrong width",
            PreemptProblem { preemptors: vec![pre(10, &[1, 1], 1)], ..ok.clone() },
            SolverError::Dimension { what: "requests of a preemptor", expected: 1, found: 2 }
                .into(),
        ),
        (
            "a negative preemptor request",
            PreemptProblem { preemptors: vec![pre(10, &[-1], 1)], ..ok.clone() },
            SolverError::NegativeRequest { class: 0, resource: 0, value: -1 }.into(),
        ),
        (
            "victim requests of the wrong width",
            PreemptProblem { victims: vec![victim(0, 1, &[])], ..ok.clone() },
            SolverError::Dimension { what: "requests of a victim", expected: 1, found: 0 }.into(),
        ),
        (
            "a victim on a node that does not exist",
            PreemptProblem { victims: vec![victim(2, 1, &[1])], ..ok.clone() },
            PreemptError::VictimNode { victim: 0, node: 2 },
        ),
        (
            "a victim in a budget that does not exist",
            PreemptProblem { victims: vec![in_pdbs(victim(0, 1, &[1]), &[1])], ..ok.clone() },
            PreemptError::VictimPdb { victim: 0, pdb: 1 },
        ),
        (
            "a negative victim request",
            PreemptProblem { victims: vec![victim(0, 1, &[-3])], ..ok.clone() },
            PreemptError::NegativeVictimRequest { victim: 0, resource: 0, value: -3 },
        ),
        (
            "dimensions that overflow",
            PreemptProblem { nodes: usize::MAX, resources: 2, ..ok.clone() },
            SolverError::TooLarge { what: "free capacity entries" }.into(),
        ),
    ];
    for (name, p, want) in cases {
        assert_eq!(solve_preemption(&p), Err(want), "{name}");
    }
}

// ----- Independent replay of a plan ---------------------------------------------------------

/// Replays `plan` on `p` and checks every rule the pass promises, with its own arithmetic.
fn check_plan(p: &PreemptProblem, plan: &PreemptPlan) -> Result<(), String> {
    let r = p.resources;
    let n_pre = p.preemptors.len();
    let mut free = p.free.clone();
    let mut running = vec![true; p.victims.len()];
    let mut budget: Vec<i64> = p.pdb_allowed.iter().map(|&a| i64::from(a)).collect();
    let mut violations = 0usize;
    let mut per_node = vec![0u32; n_pre * p.nodes];
    let mut placed = vec![0u32; n_pre];
    let mut requested = vec![false; p.nodes * r];
    let mut next = 0usize;
    if plan.leftover_start > plan.placements.len() {
        return Err("leftover_start past the placements".into());
    }
    for (k, pl) in plan.placements.iter().enumerate() {
        let (c, node) = (pl.preemptor, pl.node);
        let spec = p.preemptors.get(c).ok_or("unknown preemptor")?;
        if node >= p.nodes || !p.eligible[c * p.nodes + node] {
            return Err(format!("placement {k} on an ineligible node {node}"));
        }
        let row = node * r..(node + 1) * r;
        let mut mine: Vec<usize> = Vec::new();
        while let Some(e) = plan.evictions.get(next).filter(|e| e.placement == k) {
            let v = p.victims.get(e.victim).ok_or("unknown victim")?;
            if !running[e.victim] {
                return Err(format!("victim {} evicted twice", e.victim));
            }
            if v.priority >= spec.priority {
                return Err(format!("victim {} has priority ≥ its preemptor's", e.victim));
            }
            if e.node != node || v.node != node || e.preemptor != c {
                return Err(format!("eviction {next} does not match its placement"));
            }
            if !spec.may_preempt || k >= plan.leftover_start {
                return Err(format!("placement {k} may not evict"));
            }
            running[e.victim] = false;
            let mut bad = false;
            for &q in &v.pdbs {
                budget[q] -= 1;
                bad |= budget[q] < 0;
            }
            if bad != e.violates_pdb {
                return Err(format!("eviction {next} has the wrong budget verdict"));
            }
            violations += usize::from(bad);
            for (f, &q) in free[row.clone()].iter_mut().zip(&v.requests) {
                *f += q;
            }
            mine.push(e.victim);
            next += 1;
        }
        let fits_in =
            |room: &[i64]| spec.requests.iter().zip(room).all(|(&q, &f)| q == 0 || q <= f);
        if !fits_in(&free[row.clone()]) {
            return Err(format!("placement {k} does not fit after its evictions"));
        }
        // Minimal by inclusion: giving back any one victim leaves no room.
        for &v in &mine {
            let back: Vec<i64> =
                free[row.clone()].iter().zip(&p.victims[v].requests).map(|(f, q)| f - q).collect();
            if fits_in(&back) {
                return Err(format!("victim {v} of placement {k} could have been spared"));
            }
        }
        // Most important first.
        let key = |v: usize| (Reverse(p.victims[v].priority), p.victims[v].start_time, v);
        if mine.windows(2).any(|w| key(w[0]) > key(w[1])) {
            return Err(format!("victims of placement {k} are not most important first"));
        }
        for (i, (f, &q)) in free[row.clone()].iter_mut().zip(&spec.requests).enumerate() {
            *f -= q;
            requested[node * r + i] |= q > 0;
        }
        per_node[c * p.nodes + node] += 1;
        if per_node[c * p.nodes + node] > spec.max_per_node.unwrap_or(u32::MAX) {
            return Err(format!("placement {k} exceeds the per-node limit"));
        }
        placed[c] += 1;
    }
    if next != plan.evictions.len() {
        return Err("evictions out of order or naming no placement".into());
    }
    if violations != plan.pdb_violations {
        return Err(format!("{} violations reported, {violations} counted", plan.pdb_violations));
    }
    for (i, &req) in requested.iter().enumerate() {
        if req && free[i] < 0 {
            return Err(format!("node {} below zero on resource {}", i / r, i % r));
        }
    }
    for (c, spec) in p.preemptors.iter().enumerate() {
        if placed[c] + plan.unplaced.get(c).copied().unwrap_or(0) != spec.count {
            return Err(format!("preemptor {c}: placed + unplaced ≠ count"));
        }
        // Maximal: an unplaced pod fits nowhere, even evicting every lower-priority pod left.
        if plan.unplaced[c] == 0 {
            continue;
        }
        for node in 0..p.nodes {
            if !p.eligible[c * p.nodes + node]
                || per_node[c * p.nodes + node] >= spec.max_per_node.unwrap_or(u32::MAX)
            {
                continue;
            }
            let mut room = free[node * r..(node + 1) * r].to_vec();
            if spec.may_preempt {
                for (v, victim) in p.victims.iter().enumerate() {
                    if running[v] && victim.node == node && victim.priority < spec.priority {
                        for (f, &q) in room.iter_mut().zip(&victim.requests) {
                            *f += q;
                        }
                    }
                }
            }
            if spec.requests.iter().zip(&room).all(|(&q, &f)| q == 0 || q <= f) {
                return Err(format!("an unplaced pod of preemptor {c} fits node {node}"));
            }
        }
    }
    Ok(())
}

// ----- A naive re-implementation of the pass -------------------------------------------------

/// The pass written the simplest way: every pod re-costs every node from scratch.
fn reference(p: &PreemptProblem) -> PreemptPlan {
    let r = p.resources;
    let fit = |req: &[i64], room: &[i64]| req.iter().zip(room).all(|(&q, &f)| q == 0 || q <= f);
    let mut order: Vec<usize> = (0..p.preemptors.len()).collect();
    order.sort_by_key(|&c| (Reverse(p.preemptors[c].priority), c));
    let mut free = p.free.clone();
    let mut running = vec![true; p.victims.len()];
    let mut budget: Vec<i64> = p.pdb_allowed.iter().map(|&a| i64::from(a)).collect();
    let mut emptied = vec![false; p.nodes];
    // Pods of each spread group per domain, the pass's placements added.
    let mut counts: Vec<Vec<u32>> = p.spread.iter().map(|g| g.counts.clone()).collect();
    let spread_at = |counts: &[Vec<u32>], c: usize, node: usize| -> [u32; SPREAD_LEVELS] {
        let mut out = [0; SPREAD_LEVELS];
        for (slot, &g) in out.iter_mut().zip(&p.preemptors[c].spread) {
            let d = p.spread[g].domain[node];
            *slot = if d == NO_SPREAD_DOMAIN {
                u32::MAX
            } else {
                counts[g].get(d as usize).copied().unwrap_or(0)
            };
        }
        out
    };
    let mut plan = PreemptPlan {
        unplaced: p.preemptors.iter().map(|c| c.count).collect(),
        order: order.clone(),
        ..PreemptPlan::default()
    };
    // Whether each of `vs`, evicted in order from budgets `base`, takes a budget below zero.
    let flags = |vs: &[usize], base: &[i64]| -> Vec<bool> {
        let mut left = base.to_vec();
        vs.iter()
            .map(|&v| {
                let mut bad = false;
                for &q in &p.victims[v].pdbs {
                    left[q] -= 1;
                    bad |= left[q] < 0;
                }
                bad
            })
            .collect()
    };
    let apply = |plan: &mut PreemptPlan,
                 free: &mut Vec<i64>,
                 running: &mut Vec<bool>,
                 budget: &mut Vec<i64>,
                 emptied: &mut Vec<bool>,
                 c: usize,
                 node: usize,
                 vs: &[usize]| {
        let k = plan.placements.len();
        for (&v, bad) in vs.iter().zip(flags(vs, budget)) {
            running[v] = false;
            for &q in &p.victims[v].pdbs {
                budget[q] -= 1;
            }
            for i in 0..r {
                free[node * r + i] += p.victims[v].requests[i];
            }
            plan.pdb_violations += usize::from(bad);
            plan.evictions.push(Eviction {
                victim: v,
                preemptor: c,
                node,
                placement: k,
                violates_pdb: bad,
            });
        }
        if !vs.is_empty() {
            emptied[node] = true;
        }
        for i in 0..r {
            free[node * r + i] -= p.preemptors[c].requests[i];
        }
        plan.placements.push(PreemptPlacement { preemptor: c, node });
        plan.unplaced[c] -= 1;
    };
    for &c in &order {
        let spec = &p.preemptors[c];
        let labels = budget.clone();
        let mut here = vec![0u32; p.nodes];
        while plan.unplaced[c] > 0 {
            type Key = (usize, i64, i64, usize, [u32; SPREAD_LEVELS], Reverse<i64>, usize);
            let mut best: Option<(Key, Vec<usize>)> = None;
            for node in 0..p.nodes {
                if !p.eligible[c * p.nodes + node]
                    || here[node] >= spec.max_per_node.unwrap_or(u32::MAX)
                {
                    continue;
                }
                let row = &free[node * r..(node + 1) * r];
                let option = if fit(&spec.requests, row) {
                    let spread = spread_at(&counts, c, node);
                    Some(((0, i64::MIN, 0, 0, spread, Reverse(i64::MAX), node), Vec::new()))
                } else if spec.may_preempt {
                    let mut cands: Vec<usize> = (0..p.victims.len())
                        .filter(|&v| {
                            running[v]
                                && p.victims[v].node == node
                                && p.victims[v].priority < spec.priority
                        })
                        .collect();
                    cands.sort_by_key(|&v| {
                        (Reverse(p.victims[v].priority), p.victims[v].start_time, v)
                    });
                    let mut room = row.to_vec();
                    for &v in &cands {
                        for (f, q) in room.iter_mut().zip(&p.victims[v].requests) {
                            *f += q;
                        }
                    }
                    if cands.is_empty() || !fit(&spec.requests, &room) {
                        None
                    } else {
                        let labelled = flags(&cands, &labels);
                        let tries = cands
                            .iter()
                            .zip(&labelled)
                            .filter(|(_, b)| **b)
                            .chain(cands.iter().zip(&labelled).filter(|(_, b)| !**b))
                            .map(|(&v, _)| v);
                        let mut vs = Vec::new();
                        for v in tries.collect::<Vec<_>>() {
                            let after: Vec<i64> = room
                                .iter()
                                .zip(&p.victims[v].requests)
                                .map(|(a, q)| a - q)
                                .collect();
                            if fit(&spec.requests, &after) {
                                room = after;
                            } else {
                                vs.push(v);
                            }
                        }
                        vs.sort_by_key(|&v| {
                            (Reverse(p.victims[v].priority), p.victims[v].start_time, v)
                        });
                        let highest = p.victims[vs[0]].priority;
                        let key = (
                            flags(&vs, &budget).iter().filter(|b| **b).count(),
                            i64::from(highest),
                            vs.iter()
                                .map(|&v| i64::from(p.victims[v].priority) + (1i64 << 31))
                                .sum(),
                            vs.len(),
                            spread_at(&counts, c, node),
                            Reverse(
                                vs.iter()
                                    .filter(|&&v| p.victims[v].priority == highest)
                                    .map(|&v| p.victims[v].start_time)
                                    .min()
                                    .unwrap_or(i64::MAX),
                            ),
                            node,
                        );
                        Some((key, vs))
                    }
                } else {
                    None
                };
                if let Some((key, vs)) = option
                    && best.as_ref().is_none_or(|(b, _)| key < *b)
                {
                    best = Some((key, vs));
                }
            }
            let Some((key, vs)) = best else { break };
            let node = key.6;
            apply(&mut plan, &mut free, &mut running, &mut budget, &mut emptied, c, node, &vs);
            here[node] += 1;
            for &g in &spec.spread {
                let d = p.spread[g].domain[node];
                if d != NO_SPREAD_DOMAIN {
                    let d = d as usize;
                    if counts[g].len() <= d {
                        counts[g].resize(d + 1, 0);
                    }
                    counts[g][d] += 1;
                }
            }
        }
    }
    plan.leftover_start = plan.placements.len();
    for &c in &order {
        let spec = &p.preemptors[c];
        for node in 0..p.nodes {
            if !emptied[node] || !p.eligible[c * p.nodes + node] {
                continue;
            }
            while plan.unplaced[c] > 0
                && (plan.placements.iter().filter(|pl| pl.preemptor == c && pl.node == node).count()
                    as u32)
                    < spec.max_per_node.unwrap_or(u32::MAX)
                && fit(&spec.requests, &free[node * r..(node + 1) * r])
            {
                apply(&mut plan, &mut free, &mut running, &mut budget, &mut emptied, c, node, &[]);
            }
        }
    }
    plan
}

// ----- Brute force on tiny instances ---------------------------------------------------------

/// The most pods of preemptor `c` any plan could place on the state `free`/`running` (and
/// within its per-node limit): every way of spreading up to `count` pods over the nodes, each
/// node checked against every subset of its evictable pods.
fn brute_force_best(p: &PreemptProblem, c: usize, free: &[i64], running: &[bool]) -> u32 {
    let spec = &p.preemptors[c];
    let r = p.resources;
    let cap = spec.count.min(spec.max_per_node.unwrap_or(u32::MAX));
    // Whether `m` pods fit on `node` with some subset of its evictable pods evicted.
    let fits_m = |node: usize, m: u32| -> bool {
        if m == 0 {
            return true;
        }
        if !p.eligible[c * p.nodes + node] {
            return false;
        }
        let evictable: Vec<usize> = (0..p.victims.len())
            .filter(|&v| {
                spec.may_preempt
                    && running[v]
                    && p.victims[v].node == node
                    && p.victims[v].priority < spec.priority
            })
            .collect();
        (0u32..1 << evictable.len()).any(|mask| {
            (0..r).all(|i| {
                let mut room = free[node * r + i];
                for (b, &v) in evictable.iter().enumerate() {
                    if mask & (1 << b) != 0 {
                        room += p.victims[v].requests[i];
                    }
                }
                let need = i64::from(m) * spec.requests[i];
                need == 0 || need <= room
            })
        })
    };
    let mut best = 0;
    let mut counts = vec![0u32; p.nodes];
    loop {
        let total: u32 = counts.iter().sum();
        if total <= spec.count
            && total > best
            && counts.iter().enumerate().all(|(n, &m)| fits_m(n, m))
        {
            best = total;
        }
        // Next combination of per-node counts in 0..=cap.
        let mut i = 0;
        loop {
            if i == p.nodes {
                return best;
            }
            if counts[i] < cap {
                counts[i] += 1;
                break;
            }
            counts[i] = 0;
            i += 1;
        }
    }
}

/// A random problem: `nodes` nodes, 2 resources, up to `victims` victims, 3 budgets, up to
/// `preemptors` preemptors of up to `count` pods.
fn random_problem(
    nodes: usize,
    victims: usize,
    preemptors: usize,
    count: u32,
) -> impl Strategy<Value = PreemptProblem> {
    (1..=nodes, 0..=victims, 1..=preemptors).prop_flat_map(move |(n_nodes, n_victims, n_pre)| {
        let victim = (
            0..n_nodes,
            0i32..4,
            prop::collection::vec(0i64..4, 2),
            prop::collection::btree_set(0usize..3, 0..=2),
            0i64..3,
        )
            .prop_map(|(node, priority, requests, pdbs, start_time)| VictimSpec {
                node,
                priority,
                requests,
                pdbs: pdbs.into_iter().collect(),
                start_time,
            });
        let preemptor = (
            0..=count,
            0i32..5,
            prop::collection::vec(0i64..5, 2),
            prop::bool::weighted(0.8),
            prop::option::weighted(0.3, 1u32..3),
            prop::collection::vec(0usize..2, 0..=2),
        )
            .prop_map(|(count, priority, requests, may_preempt, max_per_node, spread)| {
                PreemptorSpec { count, priority, requests, may_preempt, max_per_node, spread }
            });
        // Two spread groups: each node in one of two domains or none, a few pods counted.
        let group = (
            prop::collection::vec(prop_oneof![3 => 0u32..2, 1 => Just(NO_SPREAD_DOMAIN)], n_nodes),
            prop::collection::vec(0u32..3, 0..=2),
        )
            .prop_map(|(domain, counts)| PreemptSpread { domain, counts });
        (
            prop::collection::vec(-1i64..4, n_nodes * 2),
            prop::collection::vec(victim, n_victims),
            prop::collection::vec(0u32..3, 3),
            prop::collection::vec(preemptor, n_pre),
            prop::collection::vec(prop::bool::weighted(0.8), n_pre * n_nodes),
            prop::collection::vec(group, 2),
        )
            .prop_map(move |(free, victims, pdb_allowed, preemptors, eligible, spread)| {
                PreemptProblem {
                    resources: 2,
                    nodes: n_nodes,
                    free,
                    victims,
                    pdb_allowed,
                    preemptors,
                    eligible,
                    spread,
                }
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    /// Every rule the pass promises holds, and the plan is exactly the naive pass's.
    #[test]
    fn plans_keep_every_rule_and_match_the_naive_pass(p in random_problem(5, 12, 4, 4)) {
        let plan = solve(&p);
        if let Err(e) = check_plan(&p, &plan) {
            prop_assert!(false, "{}", e);
        }
        prop_assert_eq!(&plan, &reference(&p));
        prop_assert_eq!(&plan, &solve(&p), "deterministic");
    }

    /// On tiny instances, each preemptor places as many pods as brute force finds possible on
    /// the state the preemptors before it left (a `Never` pod may place more, in room left
    /// over after every turn).
    #[test]
    fn each_preemptor_places_the_most_pods_possible_after_those_before_it(
        p in random_problem(3, 4, 2, 2),
    ) {
        let plan = solve(&p);
        let r = p.resources;
        let mut free = p.free.clone();
        let mut running = vec![true; p.victims.len()];
        let mut next = 0; // Next placement to replay.
        for &c in &plan.order {
            let best = brute_force_best(&p, c, &free, &running);
            let turn = plan.placements[..plan.leftover_start]
                .iter()
                .filter(|pl| pl.preemptor == c)
                .count() as u32;
            prop_assert_eq!(turn, best, "preemptor {} at its turn", c);
            let total = plan.placements.iter().filter(|pl| pl.preemptor == c).count() as u32;
            prop_assert!(total >= best);
            // Replay this preemptor's turn.
            while next < plan.leftover_start && plan.placements[next].preemptor == c {
                let node = plan.placements[next].node;
                for e in plan.evictions.iter().filter(|e| e.placement == next) {
                    running[e.victim] = false;
                    for i in 0..r {
                        free[node * r + i] += p.victims[e.victim].requests[i];
                    }
                }
                for i in 0..r {
                    free[node * r + i] -= p.preemptors[c].requests[i];
                }
                next += 1;
            }
        }
        prop_assert_eq!(next, plan.leftover_start);
    }
}
