//! Tests of the batch plan: routes, the score split, validity under the independent checker,
//! and "at least as many pods as the sequential baseline".

use proptest::prelude::*;
use proptest::strategy::Strategy;

use super::*;
use crate::baseline::run_baseline;
use crate::check::check;
use crate::model::testing::{
    GI, MI, NodeBuilder, PodBuilder, affinity_term, cluster, spread_constraint,
};
use crate::model::{TaintEffect, TolerationOperator};
use kplace_solver::NO_DOMAIN;
use std::collections::BTreeSet;

fn plan(state: &ClusterState, pending: &[Pod]) -> Plan {
    plan_greedy(state.clone(), pending, &SchedulerConfig::default(), &BatchOptions::default())
        .expect("default profile builds")
}

fn baseline(state: &ClusterState, pending: &[Pod], seed: u64) -> Plan {
    run_baseline(
        state.clone(),
        pending,
        &SchedulerConfig::default(),
        // The sequential plan the planner falls back to: preemptors placed at once.
        BaselineOptions { seed, immediate_preemption: true, ..Default::default() },
    )
    .expect("default profile builds")
}

fn demo() -> crate::snapshot::Cluster {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo");
    let snapshot = crate::snapshot::load(&[dir]).expect("demo loads");
    crate::snapshot::build(&snapshot, &Default::default()).expect("demo builds")
}

#[test]
fn anti_affinity_and_host_ports_become_conflicts_between_classes() {
    let state = cluster(
        vec![
            NodeBuilder::new("n1").label("zone", "a").label(HOSTNAME_LABEL, "n1").obj(),
            NodeBuilder::new("n2").label("zone", "a").label(HOSTNAME_LABEL, "n2").obj(),
            NodeBuilder::new("n3").label(HOSTNAME_LABEL, "n3").obj(),
        ],
        vec![],
    );
    let web = || PodBuilder::new("d", "w").label("app", "web");
    let db = || PodBuilder::new("d", "db").label("app", "db");
    // (name, class representatives, want conflicts as (a, b, topology key), want domains).
    type Want = Vec<(usize, usize, &'static str)>;
    let cases: Vec<(&str, Vec<Pod>, Want)> = vec![
        (
            "pods without anti-affinity or ports conflict with nothing",
            vec![web().obj(), db().obj()],
            vec![],
        ),
        (
            "anti-affinity to its own labels is a conflict of the class with itself",
            vec![web().pod_anti_affinity(affinity_term("zone", &[("app", "web")])).obj()],
            vec![(0, 0, "zone")],
        ),
        (
            "anti-affinity to another class's labels conflicts with that class",
            vec![
                web().pod_anti_affinity(affinity_term(HOSTNAME_LABEL, &[("app", "db")])).obj(),
                db().obj(),
            ],
            vec![(0, 1, HOSTNAME_LABEL)],
        ),
        (
            "a selector in another namespace does not match",
            vec![
                web().pod_anti_affinity(affinity_term("zone", &[("app", "db")])).obj(),
                PodBuilder::new("other", "db").label("app", "db").obj(),
            ],
            vec![],
        ),
        (
            "the same host port conflicts per node, a different one does not",
            vec![
                web().host_port("", "TCP", 80).obj(),
                db().host_port("", "TCP", 80).obj(),
                PodBuilder::new("d", "x").host_port("", "TCP", 81).obj(),
            ],
            vec![(0, 0, ""), (0, 1, ""), (1, 1, ""), (2, 2, "")],
        ),
    ];
    for (name, reps, want) in cases {
        let refs: Vec<&Pod> = reps.iter().collect();
        let mut problem = Problem { nodes: state.nodes.len(), ..Problem::default() };
        let mut keys = inter_pod::Keys::new(&state);
        add_conflicts(&mut problem, &mut keys, &state, &refs);
        keys.fill(&mut problem);
        let key_of = |t: usize| -> &'static str {
            // Recover the key from the domains: the node topology numbers nodes 0, 1, 2; the
            // zone topology leaves n3 without a domain; hostnames give 0, 1, 2 as well.
            let d = &problem.domains[t * 3..t * 3 + 3];
            if d[2] == NO_DOMAIN {
                "zone"
            } else if want.iter().any(|w| w.2 == HOSTNAME_LABEL) {
                HOSTNAME_LABEL
            } else {
                ""
            }
        };
        let got: Vec<(usize, usize, &str)> =
            problem.conflicts.iter().map(|c| (c.a, c.b, key_of(c.topology))).collect();
        assert_eq!(got, want, "{name}");
        assert_eq!(problem.domains.len(), problem.topologies * 3, "{name}");
    }
}

#[test]
fn the_static_and_resource_parts_add_up_to_the_framework_score() {
    let state = cluster(
        vec![
            NodeBuilder::new("n1").cpu(4000).memory(8 * GI).label("zone", "a").obj(),
            NodeBuilder::new("n2")
                .cpu(8000)
                .memory(8 * GI)
                .label("zone", "b")
                .taint("x", "", TaintEffect::PreferNoSchedule)
                .obj(),
        ],
        vec![PodBuilder::new("d", "busy").cpu(3000).memory(GI).node("n1").obj()],
    );
    let pod = PodBuilder::new("d", "p").cpu(500).memory(GI).obj();
    let fws = Frameworks::new(&SchedulerConfig::default(), "default-scheduler").expect("builds");
    let pods = vec![pod.clone()];
    let enc = crate::encode::encode(&state, &pods).expect("encodes");
    let prepared = Prepared::new(fws.no_fit.profile(), &state, &pods, &enc).expect("prepares");
    let mut evaluator = Evaluator::Cpu;
    let m = evaluator.evaluate_lean(&prepared, &KEPT_PLANES).expect("evaluates");
    let planes = ResourcePlanes::of(&m);
    assert_eq!(planes.planes.len(), 2, "NodeResourcesFit and BalancedAllocation");
    let statics: Vec<i64> = (0..2)
        .map(|n| {
            let cell = m.cell(0, n);
            i64::from(m.total[cell]) - planes.part(&m, 0, |p| i64::from(p.normalized[cell]))
        })
        .collect();
    // TaintToleration (weight 3): n1 has no PreferNoSchedule taint (100), n2 one (0).
    assert_eq!(statics, vec![300, 0]);
    // Static part + the incremental column's resource part = the framework's total, before and
    // after a pod fills a node.
    let mut filled = state.clone();
    let mut busy = PodBuilder::new("d", "more").cpu(2000).memory(4 * GI).node("n2").obj();
    busy.node_name = Some("n2".into());
    filled.nodes[1].add_pod(Arc::new(busy));
    for (what, cluster) in [("as it is", &state), ("after n2 filled", &filled)] {
        let full = fws.full.score(&pod, cluster, &[0, 1]).expect("scores");
        for s in &full {
            let usage = NodeUsage::of(&enc, cluster, &[s.node]).expect("usage");
            let cols = evaluator.resource_columns(&prepared, &usage).expect("update");
            let cell = cols.cell(0, 0);
            let resource = planes.updated(0, cols.fit_raw[cell], cols.balanced_raw[cell]);
            assert_eq!(statics[s.node] + resource, s.total, "{what}: node {}", s.node);
        }
    }
    let before = fws.full.score(&pod, &state, &[1]).expect("scores")[0].total;
    let after = fws.full.score(&pod, &filled, &[1]).expect("scores")[0].total;
    assert_ne!(before, after, "filling n2 changes its score");
}

#[test]
fn solver_rows_keep_the_raw_resource_scores_from_which_the_static_part_follows() {
    let state = cluster(
        vec![
            NodeBuilder::new("tainted")
                .cpu(8000)
                .memory(16 * GI)
                .taint("x", "", TaintEffect::NoSchedule)
                .obj(),
            NodeBuilder::new("idle").cpu(8000).memory(16 * GI).obj(),
            NodeBuilder::new("busy").cpu(8000).memory(16 * GI).obj(),
        ],
        vec![PodBuilder::new("d", "used").cpu(5000).memory(2 * GI).node("busy").obj()],
    );
    let pods = vec![
        PodBuilder::new("d", "cpu-heavy").cpu(2000).memory(GI / 2).obj(),
        PodBuilder::new("d", "memory-heavy").cpu(250).memory(6 * GI).obj(),
    ];
    let fws = Frameworks::new(&SchedulerConfig::default(), "default-scheduler").expect("builds");
    let enc = crate::encode::encode(&state, &pods).expect("encodes");
    let prepared = Prepared::new(fws.no_fit.profile(), &state, &pods, &enc).expect("prepares");
    let mut m = Evaluator::Cpu.evaluate_lean(&prepared, &KEPT_PLANES).expect("evaluates");
    let planes = ResourcePlanes::of(&m);
    let fill_with = |m: &LeanMatrix, planes: &ResourcePlanes, c: usize| {
        let (mut feasible, mut score, mut fit0, mut balanced0) =
            (vec![false; 3], vec![0; 3], vec![0u8; 3], vec![0u8; 3]);
        let row = SolverRow {
            feasible: &mut feasible,
            score: &mut score,
            fit0: &mut fit0,
            balanced0: &mut balanced0,
        };
        solver_row(m, planes, c, 3, row);
        (feasible, score, fit0, balanced0)
    };
    let fill = |m: &LeanMatrix, c: usize| fill_with(m, &planes, c);
    let (fit_plane, balanced_plane) = (planes.planes[0].0, planes.planes[1].0);
    assert_eq!(planes.is_fit, vec![true, false]);
    for c in 0..2 {
        let (feasible, score, fit0, balanced0) = fill(&m, c);
        let (fit_weight, other_weight) = planes.weights(c);
        for n in 0..3 {
            let cell = m.cell(c, n);
            assert_eq!(feasible[n], m.feasible(c, n), "class {c} node {n}");
            if !feasible[n] {
                continue;
            }
            assert_eq!(score[n], m.total[cell]);
            assert_eq!(fit0[n], m.planes[fit_plane].normalized[cell]);
            assert_eq!(balanced0[n], m.planes[balanced_plane].normalized[cell]);
            let fixed =
                i64::from(m.total[cell]) - planes.part(&m, c, |p| i64::from(p.normalized[cell]));
            let derived = i64::from(score[n])
                - fit_weight * i64::from(fit0[n])
                - other_weight * i64::from(balanced0[n]);
            assert_eq!(derived, fixed, "class {c} node {n}");
        }
        // Nodes are in name order: busy, idle, tainted.
        assert!(!feasible[2], "class {c} does not tolerate the taint");
    }
    // The classes score the busy node differently, and a raw score out of range marks the
    // cell as not known.
    assert_ne!(fill(&m, 0).3[0], fill(&m, 1).3[0], "balanced differs by shape");
    let cell = m.cell(1, 0);
    m.planes[fit_plane].normalized[cell] = crate::eval::narrow(101);
    let (_, _, fit0, _) = fill(&m, 1);
    assert_eq!((fit0[0], fit0[1] == NO_RAW), (NO_RAW, false));
    let cell = m.cell(0, 1);
    m.planes[balanced_plane].normalized[cell] = crate::eval::narrow(-1);
    let (_, _, fit0, balanced0) = fill(&m, 0);
    assert_eq!((fit0[1], balanced0[1]), (NO_RAW, 0), "a negative raw score is not known");
    // The row of one plane of each kind is filled by its own loop; the general one (here with
    // the NodeResourcesFit plane listed twice, which agrees with itself) fills it alike.
    let mut twice = planes.clone();
    twice.planes.push(twice.planes[0].clone());
    twice.is_fit.push(true);
    for c in 0..2 {
        let general = fill_with(&m, &twice, c);
        assert_eq!(fill(&m, c), general, "class {c}");
    }
}

#[test]
fn a_self_anti_affine_class_is_spread_one_per_node() {
    let state = cluster(
        (1..=3)
            .map(|i| NodeBuilder::new(&format!("n{i}")).cpu(4000).memory(8 * GI).obj())
            .collect(),
        vec![],
    );
    let pending: Vec<Pod> = (0..4)
        .map(|i| {
            PodBuilder::new("d", &format!("cart-{i}"))
                .cpu(100)
                .label("app", "cart")
                .pod_anti_affinity(affinity_term(HOSTNAME_LABEL, &[("app", "cart")]))
                .created(i)
                .obj()
        })
        .collect();
    let p = plan(&state, &pending);
    let nodes: BTreeSet<&str> = p.placements.iter().map(|pl| pl.node.as_str()).collect();
    assert_eq!((p.placements.len(), nodes.len()), (3, 3));
    assert_eq!(p.unschedulable.len(), 1);
    assert_eq!(p.unschedulable[0].pod, "d/cart-3", "the last pod in queue order is left out");
    assert!(
        p.unschedulable[0].message.starts_with(
            "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules."
        ),
        "{}",
        p.unschedulable[0].message
    );
    assert!(check(&state, &pending, &p).is_valid());
}

#[test]
fn a_pod_the_greedy_leaves_out_may_preempt_a_lower_priority_bound_pod() {
    let state = cluster(
        vec![NodeBuilder::new("n1").cpu(4000).memory(8 * GI).obj()],
        vec![PodBuilder::new("d", "low").cpu(3000).priority(1).node("n1").obj()],
    );
    let pending = vec![PodBuilder::new("d", "high").cpu(2000).priority(10).obj()];
    let p = plan(&state, &pending);
    assert_eq!(p.placements, vec![Placement { pod: "d/high".into(), node: "n1".into() }]);
    assert_eq!(
        p.evictions,
        vec![Eviction { pod: "d/low".into(), node: "n1".into(), preemptor: "d/high".into() }]
    );
    assert!(check(&state, &pending, &p).is_valid());
}

#[test]
fn batch_preemption_evicts_the_fewest_lowest_priority_pods_and_spares_pdb_protected_ones() {
    use crate::model::LabelSelector;
    use crate::model::Pdb;
    // Three 4-cpu nodes. n1 holds one 3-cpu pod of priority 1 protected by a budget that
    // allows no disruption; n2 holds two 1.5-cpu pods of priority 1; n3 one 3-cpu pod of
    // priority 2. Two pending 2-cpu pods of priority 10: for each, upstream's ranking prefers
    // no PDB violation (not n1), then the lowest highest-victim priority (n2's pods, priority
    // 1, over n3's, priority 2). Each evicts one pod of n2.
    let mut state = cluster(
        vec![
            NodeBuilder::new("n1").cpu(4000).memory(8 * GI).obj(),
            NodeBuilder::new("n2").cpu(4000).memory(8 * GI).obj(),
            NodeBuilder::new("n3").cpu(4000).memory(8 * GI).obj(),
        ],
        vec![
            PodBuilder::new("d", "guarded")
                .cpu(3000)
                .priority(1)
                .label("app", "db")
                .node("n1")
                .obj(),
            PodBuilder::new("d", "a").cpu(1500).priority(1).node("n2").obj(),
            PodBuilder::new("d", "b").cpu(1500).priority(1).node("n2").obj(),
            PodBuilder::new("d", "c").cpu(3000).priority(2).node("n3").obj(),
        ],
    );
    state.pdbs.push(Pdb {
        namespace: "d".into(),
        name: "db".into(),
        selector: Some(LabelSelector::from_match_labels([("app", "db")])),
        disruptions_allowed: 0,
        disrupted_pods: vec![],
    });
    let pending = vec![
        PodBuilder::new("d", "h1").cpu(2000).priority(10).created(1).obj(),
        PodBuilder::new("d", "h2").cpu(2000).priority(10).created(2).obj(),
    ];
    let p = plan(&state, &pending);
    assert!(
        check(&state, &pending, &p).is_valid(),
        "{:#?}",
        check(&state, &pending, &p).violations
    );
    let mut evicted: Vec<&str> = p.evictions.iter().map(|e| e.pod.as_str()).collect();
    evicted.sort_unstable();
    assert_eq!(evicted, vec!["d/a", "d/b"]);
    let nodes: Vec<&str> = p.placements.iter().map(|pl| pl.node.as_str()).collect();
    assert_eq!(nodes, vec!["n2", "n2"]);
    assert!(p.evictions.iter().all(|e| e.preemptor == "d/h1" || e.preemptor == "d/h2"));
}

#[test]
fn largest_first_places_the_pod_the_queue_order_would_strand() {
    // Two GPU nodes with 2 free GPUs each. Queue order: two 1-GPU pods, then a 2-GPU pod.
    // Baseline spreads the 1-GPU pods (least allocated) and strands the 2-GPU pod; the greedy
    // places the 2-GPU pod first.
    let gpu = "nvidia.com/gpu";
    let state = cluster(
        (1..=2)
            .map(|i| {
                NodeBuilder::new(&format!("g{i}")).cpu(8000).memory(32 * GI).scalar(gpu, 2).obj()
            })
            .collect(),
        vec![],
    );
    let pending = vec![
        PodBuilder::new("d", "small-1").cpu(1000).memory(GI).scalar(gpu, 1).created(1).obj(),
        PodBuilder::new("d", "small-2").cpu(1000).memory(GI).scalar(gpu, 1).created(2).obj(),
        PodBuilder::new("d", "big").cpu(1000).memory(GI).scalar(gpu, 2).created(3).obj(),
    ];
    let b = baseline(&state, &pending, 1);
    let p = plan(&state, &pending);
    assert_eq!(b.placements.len(), 2);
    assert_eq!(p.placements.len(), 3);
    assert!(check(&state, &pending, &p).is_valid());
}

#[test]
fn a_traded_pod_leaves_the_plan_and_its_room_goes_to_more_pods() {
    // Two nodes with 4 CPUs. Queue order: two 4-CPU pods, then four 1-CPU pods with a quarter
    // of the memory each. The queue order fills both nodes with the large pods; the trade
    // gives one node to the four small pods: the same CPU and memory, three pods more.
    let state = cluster(
        (1..=2)
            .map(|i| NodeBuilder::new(&format!("n{i}")).cpu(4000).memory(16 * GI).obj())
            .collect(),
        vec![],
    );
    let mut pending = vec![
        PodBuilder::new("d", "big-1").cpu(4000).memory(4 * GI).created(1).obj(),
        PodBuilder::new("d", "big-2").cpu(4000).memory(4 * GI).created(2).obj(),
    ];
    for i in 1..=4 {
        pending.push(
            PodBuilder::new("d", &format!("small-{i}")).cpu(1000).memory(GI).created(2 + i).obj(),
        );
    }
    let options = |relocate| BatchOptions {
        solver: SolverChoice::Greedy,
        class_order: ClassOrder::Given,
        try_orders: false,
        relocate,
        ..BatchOptions::default()
    };
    let run = |relocate| {
        plan_greedy(state.clone(), &pending, &SchedulerConfig::default(), &options(relocate))
            .expect("default profile builds")
    };
    let without = run(false);
    assert_eq!(without.placements.len(), 2, "{:?}", without.placements);
    let p = run(true);
    let report = check(&state, &pending, &p);
    assert!(report.is_valid(), "{:#?}", report.violations);
    let placed: BTreeSet<&str> = p.placements.iter().map(|pl| pl.pod.as_str()).collect();
    assert_eq!(placed.len(), 5, "{:?}", p.placements);
    assert!((1..=4).all(|i| placed.contains(format!("d/small-{i}").as_str())), "{placed:?}");
    let left: Vec<&str> = p.unschedulable.iter().map(|u| u.pod.as_str()).collect();
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(left[0].starts_with("d/big-") && !placed.contains(left[0]), "{left:?}");
    assert_eq!(p.summary.placed, 5);
}

#[test]
fn plans_rank_by_pods_then_priority_then_fewer_evictions() {
    let mk = |placed: &[(i32, usize)], evicted: usize| {
        let mut p = Plan::default();
        for &(prio, n) in placed {
            p.summary.placed_by_priority.insert(prio, n);
            for i in 0..n {
                p.placements.push(Placement { pod: format!("d/{prio}-{i}"), node: "n".into() });
            }
        }
        p.evictions = (0..evicted)
            .map(|i| Eviction { pod: format!("d/v{i}"), node: "n".into(), preemptor: "d/x".into() })
            .collect();
        p
    };
    let cases: Vec<(&str, Plan, Plan)> = vec![
        ("more pods rank higher", mk(&[(0, 3)], 0), mk(&[(10, 2)], 0)),
        (
            "at equal totals, more high-priority pods",
            mk(&[(10, 2), (0, 1)], 0),
            mk(&[(10, 1), (0, 2)], 0),
        ),
        ("placing a higher priority beats placing none of it", mk(&[(10, 1)], 0), mk(&[(5, 1)], 0)),
        ("at equal placements, fewer evictions", mk(&[(0, 2)], 0), mk(&[(0, 2)], 1)),
    ];
    for (name, better, worse) in cases {
        assert!(plan_rank(&better) > plan_rank(&worse), "{name}");
    }
}

#[test]
fn edge_cases_give_plans_not_errors() {
    let no_nodes = ClusterState::default();
    let pods = vec![PodBuilder::new("d", "a").cpu(100).obj(), PodBuilder::new("d", "b").obj()];
    let p = plan(&no_nodes, &pods);
    assert!(p.placements.is_empty());
    assert_eq!(p.unschedulable.len(), 2, "a cluster without nodes leaves every pod out");
    assert!(p.unschedulable.iter().all(|u| u.message == NO_NODES_AVAILABLE));
    assert!(check(&no_nodes, &pods, &p).is_valid());

    let state = cluster(vec![NodeBuilder::new("n1").cpu(1000).obj()], vec![]);
    let empty = plan(&state, &[]);
    assert_eq!((empty.placements.len(), empty.unschedulable.len()), (0, 0));
}

#[test]
fn the_demo_plan_is_valid_and_places_at_least_as_many_pods_as_baseline() {
    let demo = demo();
    let b = baseline(&demo.state, &demo.pending, 0);
    let p = plan(&demo.state, &demo.pending);
    let report = check(&demo.state, &demo.pending, &p);
    assert!(report.is_valid(), "{:#?}", report.violations);
    assert!(p.placements.len() >= b.placements.len());
    assert_eq!(p.summary.placed, p.placements.len());
    assert_eq!(p.placements.len() + p.unschedulable.len(), demo.pending.len());
}

#[test]
fn the_greedy_alone_places_the_demo_gpu_pods_baseline_strands() {
    // The demo's free GPUs fit its GPU pods exactly; one at a time, the 1-GPU pods of the
    // high-priority tier fragment them and both 2-GPU train-resnet pods stay pending. The
    // greedy's relocation moves a 1-GPU pod next to another to free two GPUs on one node.
    let demo = demo();
    let options = BatchOptions { solver: SolverChoice::Greedy, ..Default::default() };
    let p = plan_greedy(demo.state.clone(), &demo.pending, &SchedulerConfig::default(), &options)
        .expect("default profile builds");
    let report = check(&demo.state, &demo.pending, &p);
    assert!(report.is_valid(), "{:#?}", report.violations);
    assert_eq!(p.summary.algorithm, "greedy");
    let b = baseline(&demo.state, &demo.pending, 0);
    let unplaced = |plan: &Plan| -> Vec<String> {
        let mut v: Vec<String> = plan.unschedulable.iter().map(|u| u.pod.clone()).collect();
        v.sort();
        v
    };
    assert_eq!(
        unplaced(&b),
        [
            "batch/arm-benchmark-9rrf7",
            "batch/genome-assembly-55x9f",
            "data/kafka-2",
            "ml/gpu-smoke-test-zxdkq",
            "ml/train-resnet-8z4h7",
            "ml/train-resnet-g66tp"
        ]
    );
    assert_eq!(
        unplaced(&p),
        [
            "batch/arm-benchmark-9rrf7",
            "batch/genome-assembly-55x9f",
            "data/kafka-2",
            "ml/gpu-smoke-test-zxdkq"
        ],
        "only the three pods that fit no node and kafka-2 (its claim is missing) are left"
    );
    let smoke = p.unschedulable.iter().find(|u| u.pod == "ml/gpu-smoke-test-zxdkq");
    assert!(
        smoke.is_some_and(|u| u.message.starts_with("0/24 nodes are available:")),
        "unschedulable pods carry kube-scheduler's message: {smoke:?}"
    );
}

#[test]
fn the_greedy_alone_beats_baseline_on_aggregate() {
    // Deterministic random instances, no fallback: every plan is valid, and over all of them
    // the greedy places more pods than the sequential scheduler and wins more instances than
    // it loses. (It does lose some: see `BatchOptions::ensure_baseline`.)
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let options = BatchOptions::default();
    let (mut worse, mut better, mut placed, mut placed_baseline) = (0, 0, 0, 0);
    for _ in 0..150 {
        let (state, pending) =
            random_instance().new_tree(&mut runner).expect("an instance").current();
        let p = plan_greedy(state.clone(), &pending, &SchedulerConfig::default(), &options)
            .expect("default profile builds");
        let report = check(&state, &pending, &p);
        assert!(report.is_valid(), "{:#?}", report.violations);
        let b = baseline(&state, &pending, 0);
        placed += p.placements.len();
        placed_baseline += b.placements.len();
        match p.placements.len().cmp(&b.placements.len()) {
            std::cmp::Ordering::Less => worse += 1,
            std::cmp::Ordering::Greater => better += 1,
            std::cmp::Ordering::Equal => {}
        }
    }
    assert!(placed > placed_baseline, "greedy {placed} vs baseline {placed_baseline}");
    assert!(better > worse, "greedy better on {better} instances, worse on {worse}");
}

/// A random fragmentation-prone instance: nodes of three shapes (some with GPUs, some
/// tainted), a few bound pods, and pending pods of heterogeneous sizes in a few priority tiers,
/// some with inter-pod rules (so the repair path runs) and some bound low-priority pods (so
/// preemption can happen).
fn random_instance() -> impl Strategy<Value = (ClusterState, Vec<Pod>)> {
    let node = (0u8..3, 0u8..6);
    let pod = (0u8..8, 0u8..4, 0i32..3, 0u8..14, 0u8..4);
    (
        prop::collection::vec(node, 2..9),
        prop::collection::vec(pod.clone(), 0..10),
        prop::collection::vec(pod, 1..40),
    )
        .prop_map(|(nodes, bound, pending)| {
            let shapes = [(4000, 8), (8000, 32), (16000, 64)];
            let zones = ["a", "b", "c"];
            let n = nodes.len();
            let nodes: Vec<_> = nodes
                .into_iter()
                .enumerate()
                .map(|(i, (shape, extra))| {
                    let (cpu, mem) = shapes[usize::from(shape)];
                    let mut b = NodeBuilder::new(&format!("n{i}"))
                        .cpu(cpu)
                        .memory(mem * GI)
                        .pods(20)
                        .label("zone", zones[i % 3]);
                    if extra == 0 {
                        b = b.scalar("nvidia.com/gpu", 4);
                    }
                    if extra == 1 {
                        b = b.taint("dedicated", "x", TaintEffect::NoSchedule);
                    }
                    b.obj()
                })
                .collect();
            // Heterogeneous sizes: (cpu m, memory Mi, gpus).
            let sizes = [
                (250, 512, 0),
                (500, 1024, 0),
                (1000, 4096, 0),
                (2000, 2048, 0),
                (3500, 6144, 0),
                (1500, 12288, 0),
                (1000, 2048, 1),
                (2000, 4096, 2),
            ];
            let apps = ["web", "db", "cache", "batch"];
            let make = |i: usize, prefix: &str, spec: (u8, u8, i32, u8, u8)| {
                let (size, app, prio, feature, _) = spec;
                let (cpu, mem, gpu) = sizes[usize::from(size)];
                let app = apps[usize::from(app)];
                let mut b = PodBuilder::new("d", &format!("{prefix}{i}"))
                    .cpu(cpu)
                    .memory(mem * MI)
                    .priority(prio * 10)
                    .created(i as i64)
                    .label("app", app);
                if gpu > 0 {
                    b = b.scalar("nvidia.com/gpu", gpu);
                }
                match feature {
                    0 => b.pod_anti_affinity(affinity_term(HOSTNAME_LABEL, &[("app", app)])),
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
                    6 => b.preemption_never(),
                    _ => b,
                }
            };
            let mut state = cluster(nodes, vec![]);
            for (i, spec) in bound.into_iter().enumerate() {
                // Bound pods are plain and low priority (victims for preemption).
                let target = (usize::from(spec.4) + i) % n;
                let pod =
                    make(i, "b", (spec.0, spec.1, 0, 99, 0)).node(&format!("n{target}")).obj();
                let node = &state.nodes[target];
                let gpu_free =
                    node.allocatable.get("nvidia.com/gpu") - node.requested.get("nvidia.com/gpu");
                if node.requested.milli_cpu + pod.requests.milli_cpu <= node.allocatable.milli_cpu
                    && node.requested.memory + pod.requests.memory <= node.allocatable.memory
                    && pod.requests.get("nvidia.com/gpu") <= gpu_free
                {
                    state.nodes[target].add_pod(Arc::new(pod));
                }
            }
            let pending =
                pending.into_iter().enumerate().map(|(i, s)| make(i, "p", s).obj()).collect();
            (state, pending)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// `--ensure-baseline --objective pods` guarantees the sequential scheduler's pod count;
    /// the solver alone is judged in aggregate (`the_greedy_alone_beats_baseline_on_aggregate`)
    /// and on the resources objective by `tests/all/plan_objective.rs`.
    #[test]
    fn random_plans_with_ensure_baseline_are_valid_and_place_at_least_as_many_pods_as_baseline(
        (state, pending) in random_instance(),
    ) {
        let options = BatchOptions {
            ensure_baseline: true,
            objective: Objective::Pods,
            ..Default::default()
        };
        let p = plan_greedy(state.clone(), &pending, &SchedulerConfig::default(), &options)
            .expect("default profile builds");
        let report = check(&state, &pending, &p);
        prop_assert!(report.is_valid(), "{:#?}", report.violations);
        let b = baseline(&state, &pending, 0);
        prop_assert!(
            p.placements.len() >= b.placements.len(),
            "plan {} < baseline {}\n{}",
            p.placements.len(),
            b.placements.len(),
            describe(&state, &pending, &p, &b)
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// The greedy rescores only the changed nodes whose bound (static part, NodeResourcesFit's
    /// tier-start score, the other planes' maximum) could win: the plan is the one rescoring
    /// every changed node gives.
    #[test]
    fn plans_with_rescoring_bounds_equal_plans_rescoring_every_changed_node(
        (state, pending) in random_instance(),
    ) {
        let bounded = plan(&state, &pending);
        super::BOUNDS.set(false);
        let every = plan(&state, &pending);
        super::BOUNDS.set(true);
        prop_assert_eq!(&bounded.placements, &every.placements);
        prop_assert_eq!(&bounded.unschedulable, &every.unschedulable);
    }
}

/// A compact description of an instance and two plans, for failure messages.
fn describe(state: &ClusterState, pending: &[Pod], p: &Plan, b: &Plan) -> String {
    let mut s = String::new();
    for n in &state.nodes {
        s += &format!(
            "node {} cpu {} mem {}Mi gpu {} taints {} zone {:?}\n",
            n.name,
            n.allocatable.milli_cpu,
            n.allocatable.memory / MI,
            n.allocatable.get("nvidia.com/gpu"),
            n.taints.len(),
            n.labels.get("zone")
        );
        for q in &n.pods {
            s += &format!(
                "   bound {} cpu {} mem {}Mi gpu {} prio {}\n",
                q.name,
                q.requests.milli_cpu,
                q.requests.memory / MI,
                q.requests.get("nvidia.com/gpu"),
                q.priority
            );
        }
    }
    for q in pending {
        s += &format!(
            "pending {} app {:?} cpu {} mem {}Mi gpu {} prio {} aff {} anti {:?} spread {} ports {} tol {} never {}\n",
            q.name,
            q.labels.get("app"),
            q.requests.milli_cpu,
            q.requests.memory / MI,
            q.requests.get("nvidia.com/gpu"),
            q.priority,
            q.pod_affinity.required.len(),
            q.pod_anti_affinity.required.iter().map(|t| t.topology_key.clone()).collect::<Vec<_>>(),
            q.topology_spread_constraints.len(),
            q.host_ports.len(),
            q.tolerations.len(),
            q.preemption_policy == crate::model::PreemptionPolicy::Never
        );
    }
    s += "plan:\n";
    for x in &p.placements {
        s += &format!("  {} -> {}\n", x.pod, x.node);
    }
    for x in &p.evictions {
        s += &format!("  evict {} for {}\n", x.pod, x.preemptor);
    }
    s += "baseline:\n";
    for x in &b.placements {
        s += &format!("  {} -> {}\n", x.pod, x.node);
    }
    for x in &b.evictions {
        s += &format!("  evict {} for {}\n", x.pod, x.preemptor);
    }
    s
}

#[test]
fn gangs_are_placed_all_or_nothing() {
    use crate::model::gang::GangConvention::{Coscheduling, Volcano};
    // Two 4-cpu nodes. (name, bound pods, pending pods, want placed pods, want unschedulable).
    type Case = (&'static str, Vec<Pod>, Vec<Pod>, Vec<&'static str>, Vec<&'static str>);
    let worker = |name: &str, cpu: i64, min: i32| {
        PodBuilder::new("ml", name).cpu(cpu).gang(Coscheduling, "train", min)
    };
    let cases: Vec<Case> = vec![
        (
            "a group that fits is placed whole",
            vec![],
            vec![worker("w0", 3000, 2).obj(), worker("w1", 3000, 2).obj()],
            vec!["ml/w0", "ml/w1"],
            vec![],
        ),
        (
            "a group that cannot reach minMember places none and leaves its room to others",
            vec![],
            vec![
                worker("w0", 3000, 3).obj(),
                worker("w1", 3000, 3).obj(),
                worker("w2", 3000, 3).obj(),
                PodBuilder::new("ml", "solo").cpu(3000).obj(),
            ],
            vec!["ml/solo"],
            vec!["ml/w0", "ml/w1", "ml/w2"],
        ),
        (
            "members already bound count toward minMember",
            vec![worker("w0", 3000, 2).node("n1").obj()],
            vec![worker("w1", 3000, 2).obj(), worker("w2", 3000, 2).obj()],
            vec!["ml/w1"],
            vec!["ml/w2"],
        ),
        (
            "a group with fewer pods than minMember is never placed",
            vec![],
            vec![PodBuilder::new("ml", "v0").cpu(100).gang(Volcano, "job", 2).obj()],
            vec![],
            vec!["ml/v0"],
        ),
    ];
    for (name, bound, pending, want_placed, want_unschedulable) in cases {
        let state = cluster(
            vec![
                NodeBuilder::new("n1").cpu(4000).memory(8 * GI).obj(),
                NodeBuilder::new("n2").cpu(4000).memory(8 * GI).obj(),
            ],
            bound,
        );
        let p = plan(&state, &pending);
        let report = check(&state, &pending, &p);
        assert!(report.is_valid(), "{name}: {:#?}", report.violations);
        let mut placed: Vec<&str> = p.placements.iter().map(|x| x.pod.as_str()).collect();
        placed.sort_unstable();
        assert_eq!(placed, want_placed, "{name}");
        let mut unschedulable: Vec<&str> = p.unschedulable.iter().map(|x| x.pod.as_str()).collect();
        unschedulable.sort_unstable();
        assert_eq!(unschedulable, want_unschedulable, "{name}");
        assert_eq!(p.summary.placed + p.summary.unschedulable, pending.len(), "{name}");
        // Pods of a group taken out carry the group's message; a pod of a placed group that
        // simply did not fit carries kube-scheduler's.
        let placed_group = name.starts_with("members already bound");
        for u in &p.unschedulable {
            let gang = u.message.starts_with("pod group ml/");
            assert_eq!(gang, !placed_group, "{name}: {}: {}", u.pod, u.message);
        }
    }
}

#[test]
fn objects_outside_the_matrices_range_degrade_and_the_summary_says_so() {
    const TI: i64 = 1 << 40;
    let small = |name: &str| {
        NodeBuilder::new(name).cpu(4000).memory(16 * GI).pods(110).label("zone", name).obj()
    };
    let web = |name: &str| PodBuilder::new("d", name).cpu(100).memory(100 * MI).label("app", "web");
    let huge_skew =
        spread_constraint(i32::MAX, "zone", UnsatisfiableAction::ScheduleAnyway, &[("app", "web")]);
    // (name, big node or none, pending, the widened resource and unit, pods on the exact path)
    type Case = (
        &'static str,
        Option<crate::model::Node>,
        Vec<Pod>,
        Option<(&'static str, &'static str)>,
        Vec<&'static str>,
    );
    let cases: Vec<Case> = vec![
        (
            "a node with 41 TiB of memory widens memory to 2 MiB units",
            Some(NodeBuilder::new("big").cpu(4000).memory(41 * TI).pods(110).obj()),
            vec![web("a").obj(), web("b").obj()],
            Some(("memory", "2 MiB")),
            vec![],
        ),
        (
            "a node with 42,950 CPUs widens cpu to 2-millicore units",
            Some(NodeBuilder::new("big").cpu(42_950_000).memory(16 * GI).pods(110).obj()),
            vec![web("a").obj(), web("b").obj()],
            Some(("cpu", "2 millicores")),
            vec![],
        ),
        (
            "a node with 42,949,673 pods widens pods to 2-pod units",
            Some(NodeBuilder::new("big").cpu(4000).memory(16 * GI).pods(42_949_673).obj()),
            vec![web("a").obj(), web("b").obj()],
            Some(("pods", "2 units")),
            vec![],
        ),
        (
            // Its spread score is the solver's soft terms (no maxSkew), not the matrix's.
            "a pod with maxSkew 2147483647 ScheduleAnyway is planned by the greedy",
            None,
            vec![web("a").obj(), web("skewed").spread(huge_skew.clone()).obj()],
            None,
            vec![],
        ),
    ];
    for (name, big, pending, widened, exact) in cases {
        let mut nodes = vec![small("n1"), small("n2")];
        nodes.extend(big);
        let state = cluster(nodes, vec![]);
        let plan = plan(&state, &pending);
        assert_eq!(plan.placements.len(), pending.len(), "{name}: every pod is placed");
        assert!(check(&state, &pending, &plan).is_valid(), "{name}: the plan is valid");
        let d = &plan.summary.degraded;
        match widened {
            Some((resource, unit)) => {
                assert_eq!(d.wider_units.len(), 1, "{name}: {d:?}");
                let w = &d.wider_units[0];
                assert_eq!(
                    (w.resource.as_str(), w.unit.as_str(), w.objects.clone()),
                    (resource, unit, vec!["node/big".to_string()]),
                    "{name}"
                );
            }
            None => assert!(d.wider_units.is_empty(), "{name}: {d:?}"),
        }
        let on_exact: Vec<&str> =
            d.exact_path.iter().flat_map(|e| e.pods.iter().map(String::as_str)).collect();
        assert_eq!(on_exact, exact, "{name}");
        for e in &d.exact_path {
            assert!(e.reason.contains("too large for 32-bit score arithmetic"), "{name}: {e:?}");
        }
        let json = serde_json::to_value(&plan.summary).expect("serializes");
        assert_eq!(json.get("degraded").is_some(), !d.is_empty(), "{name}: {json}");
    }
}

#[test]
fn a_plan_within_range_has_no_degraded_section() {
    let state = cluster(vec![NodeBuilder::new("n").cpu(4000).memory(16 * GI).obj()], vec![]);
    let pending = vec![PodBuilder::new("d", "p").cpu(100).obj()];
    let plan = plan(&state, &pending);
    assert!(plan.summary.degraded.is_empty());
    let json = serde_json::to_value(&plan.summary).expect("serializes");
    assert!(json.get("degraded").is_none(), "{json}");
}

#[test]
fn the_plan_says_which_strategy_made_it_and_how_many_pods_the_repair_placed() {
    let node = || NodeBuilder::new("n1").cpu(4000).memory(8 * GI).label("zone", "a").obj();
    // Plain pods that fit: the first strategy, largest first, is kept.
    let state = cluster(vec![node()], vec![]);
    let plain: Vec<Pod> =
        (0..3).map(|i| PodBuilder::new("d", &format!("p{i}")).cpu(500).obj()).collect();
    let p = plan(&state, &plain);
    assert_eq!((p.summary.strategy.as_str(), p.summary.repaired), ("greedy-largest-first", 0));
    // Pods with required pod affinity to each other: the greedy places them (the first one
    // anywhere), nothing is repaired.
    let affine: Vec<Pod> = (0..2)
        .map(|i| {
            PodBuilder::new("d", &format!("s{i}"))
                .cpu(100)
                .label("app", "s")
                .pod_affinity(affinity_term("zone", &[("app", "s")]))
                .obj()
        })
        .collect();
    let p = plan(&state, &affine);
    assert_eq!((p.placements.len(), p.summary.repaired), (2, 0), "{:?}", p.summary);
    assert_ne!(p.summary.strategy, SEQUENTIAL_PATH_STRATEGY);
    // The sequential scheduler's plan says so.
    assert_eq!(baseline(&state, &plain, 0).summary.strategy, "sequential");
    // Without batch preemption, a pod that needs a victim is placed by the repair step.
    let state = cluster(
        vec![node()],
        vec![PodBuilder::new("d", "low").cpu(3000).priority(1).node("n1").obj()],
    );
    let pending = vec![PodBuilder::new("d", "high").cpu(2000).priority(10).obj()];
    let options = BatchOptions { batch_preemption: false, ..Default::default() };
    let p = plan_greedy(state.clone(), &pending, &SchedulerConfig::default(), &options)
        .expect("default profile builds");
    assert_eq!(p.placements.len(), 1);
    assert_eq!(p.summary.repaired, 1, "{:?}", p.summary);
    assert!(!p.summary.strategy.is_empty());
}

#[test]
fn strategy_names_join_the_distinct_kept_strategies_in_tier_order() {
    assert_eq!(strategy_name(&[]), SEQUENTIAL_PATH_STRATEGY);
    assert_eq!(
        strategy_name(&["greedy-largest-first", "lp-guided", "greedy-largest-first"]),
        "greedy-largest-first+lp-guided"
    );
}

/// Pods of `plan` per value of `key` on their nodes.
fn per_label(state: &ClusterState, plan: &Plan, key: &str) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for p in &plan.placements {
        let node = state.nodes.iter().find(|n| n.name == p.node).expect("plan names a node");
        *out.entry(node.labels.get(key).cloned().unwrap_or_default()).or_insert(0) += 1;
    }
    out
}

/// Nodes `n0..n{count}` in zones `a`, `b`, `c` (three per zone); zone `a`'s nodes are twice as
/// large, so the resource scores alone would fill them first.
fn zoned_nodes(count: usize) -> Vec<crate::model::Node> {
    (0..count)
        .map(|i| {
            let zone = ["a", "b", "c"][(i / 3) % 3];
            let k = if zone == "a" { 2 } else { 1 };
            NodeBuilder::new(&format!("n{i}"))
                .cpu(8000 * k)
                .memory(16 * GI * k)
                .label(crate::plugins::podtopologyspread::LABEL_TOPOLOGY_ZONE, zone)
                .label(HOSTNAME_LABEL, &format!("n{i}"))
                .obj()
        })
        .collect()
}

#[test]
fn default_spreading_puts_a_deployments_replicas_evenly_over_zones_and_nodes() {
    let state = cluster(zoned_nodes(9), vec![]);
    let selector = crate::model::LabelSelector::from_match_labels([("app", "web")]);
    let web = |i: usize| {
        PodBuilder::new("d", &format!("web-{i}")).cpu(500).memory(512 * MI).label("app", "web")
    };
    let pending: Vec<Pod> =
        (0..9).map(|i| web(i).default_spread_selector(selector.clone()).obj()).collect();
    let p = plan(&state, &pending);
    assert!(check(&state, &pending, &p).is_valid());
    let zone = crate::plugins::podtopologyspread::LABEL_TOPOLOGY_ZONE;
    assert_eq!(per_label(&state, &p, zone).into_values().collect::<Vec<_>>(), vec![3, 3, 3]);
    assert!(per_label(&state, &p, HOSTNAME_LABEL).values().all(|&n| n == 1), "{p:?}");
    // Without a default selector (no Service or owner selects them) nothing spreads them.
    let loose: Vec<Pod> = (0..9).map(|i| web(i).obj()).collect();
    let p = plan(&state, &loose);
    assert!(per_label(&state, &p, zone).get("a").is_some_and(|&n| n > 3), "{p:?}");
}

#[test]
fn batch_preemption_spreads_a_deployments_replicas_over_zones() {
    // Nine full nodes, three per zone, each running one low-priority pod; zone a's are the
    // youngest (upstream's last victim criterion would take them first). Three high-priority
    // replicas of one Deployment (default spreading) preempt: one per zone.
    let zone = crate::plugins::podtopologyspread::LABEL_TOPOLOGY_ZONE;
    let nodes: Vec<_> = (0..9)
        .map(|i| {
            NodeBuilder::new(&format!("n{i}"))
                .cpu(2000)
                .memory(16 * GI)
                .label(zone, ["a", "b", "c"][i / 3])
                .label(HOSTNAME_LABEL, &format!("n{i}"))
                .obj()
        })
        .collect();
    let bound: Vec<Pod> = (0..9)
        .map(|i| {
            let started = if i < 3 { 900 + i as i64 } else { 100 + i as i64 };
            PodBuilder::new("b", &format!("low-{i}"))
                .cpu(2000)
                .priority(1)
                .started(started)
                .node(&format!("n{i}"))
                .obj()
        })
        .collect();
    let state = cluster(nodes, bound);
    let selector = crate::model::LabelSelector::from_match_labels([("app", "web")]);
    let pending: Vec<Pod> = (0..3)
        .map(|i| {
            PodBuilder::new("d", &format!("web-{i}"))
                .cpu(1500)
                .priority(100)
                .label("app", "web")
                .default_spread_selector(selector.clone())
                .obj()
        })
        .collect();
    let p = plan(&state, &pending);
    assert!(check(&state, &pending, &p).is_valid());
    assert_eq!(p.evictions.len(), 3, "{p:?}");
    assert_eq!(per_label(&state, &p, zone).into_values().collect::<Vec<_>>(), vec![1, 1, 1]);
    // Without default spreading the youngest victims decide: zone a takes all three.
    let loose: Vec<Pod> =
        pending.iter().map(|q| Pod { default_spread_selector: None, ..q.clone() }).collect();
    let p = plan(&state, &loose);
    assert_eq!(per_label(&state, &p, zone).get("a"), Some(&3), "{p:?}");
}

#[test]
fn default_spreading_counts_bound_replicas() {
    // Two replicas already in zone a: the next four go to b and c first.
    let bound = (0..2)
        .map(|i| {
            PodBuilder::new("d", &format!("old-{i}"))
                .cpu(500)
                .label("app", "web")
                .node(&format!("n{i}"))
                .obj()
        })
        .collect();
    let state = cluster(zoned_nodes(9), bound);
    let selector = crate::model::LabelSelector::from_match_labels([("app", "web")]);
    let pending: Vec<Pod> = (0..4)
        .map(|i| {
            PodBuilder::new("d", &format!("web-{i}"))
                .cpu(500)
                .label("app", "web")
                .default_spread_selector(selector.clone())
                .obj()
        })
        .collect();
    let p = plan(&state, &pending);
    let zone = crate::plugins::podtopologyspread::LABEL_TOPOLOGY_ZONE;
    let got = per_label(&state, &p, zone);
    assert_eq!((got.get("a"), got.get("b"), got.get("c")), (None, Some(&2), Some(&2)), "{p:?}");
}

#[test]
fn an_unplaced_replica_takes_a_better_served_deployments_node_in_its_emptiest_zone() {
    // Three one-node zones with room for two 1-CPU pods each. Deployment g (4 pending, queued
    // first, 2 replicas already in zone a) fills zones b and c; deployment t (3 pending, only
    // on zones a and c, replicas already 1, 2, 0 per zone) finds room for two in zone a. Its
    // third replica takes one of g's pods in zone c: t ends 3, 2, 1 instead of 4, 2, 0 and g
    // 2, 2, 1 instead of 2, 2, 2, with the same pods and CPU placed.
    let zone = crate::plugins::podtopologyspread::LABEL_TOPOLOGY_ZONE;
    let nodes = ["a", "b", "c"]
        .iter()
        .enumerate()
        .map(|(i, z)| {
            let mut b = NodeBuilder::new(&format!("n{i}"))
                .cpu(2000)
                .memory(16 * GI)
                .label(zone, z)
                .label(HOSTNAME_LABEL, &format!("n{i}"));
            if *z != "b" {
                b = b.label("pool", "t");
            }
            b.obj()
        })
        .collect();
    let old = |app: &str, i: usize, node: &str| {
        PodBuilder::new("d", &format!("old-{app}-{i}")).label("app", app).node(node).obj()
    };
    let bound = vec![
        old("g", 0, "n0"),
        old("g", 1, "n0"),
        old("t", 0, "n0"),
        old("t", 1, "n1"),
        old("t", 2, "n1"),
    ];
    let state = cluster(nodes, bound);
    let replica = |app: &str, i: i64| {
        PodBuilder::new("d", &format!("{app}-{i}"))
            .cpu(1000)
            .memory(GI)
            .label("app", app)
            .default_spread_selector(crate::model::LabelSelector::from_match_labels([("app", app)]))
            .created(i)
    };
    let mut pending: Vec<Pod> = (1..=4).map(|i| replica("g", i).obj()).collect();
    pending.extend((5..=7).map(|i| replica("t", i).node_selector("pool", "t").obj()));
    let run = |even_spread| {
        let options = BatchOptions {
            solver: SolverChoice::Greedy,
            class_order: ClassOrder::Given,
            try_orders: false,
            even_spread,
            ..BatchOptions::default()
        };
        plan_greedy(state.clone(), &pending, &SchedulerConfig::default(), &options)
            .expect("default profile builds")
    };
    let zones_of = |p: &Plan, app: &str| {
        let mut per = [0; 3];
        for pl in p.placements.iter().filter(|pl| pl.pod.starts_with(&format!("d/{app}-"))) {
            per[pl.node[1..].parse::<usize>().expect("node n<i>")] += 1;
        }
        per
    };
    let without = run(false);
    assert_eq!((zones_of(&without, "g"), zones_of(&without, "t")), ([0, 2, 2], [2, 0, 0]));
    let p = run(true);
    let report = check(&state, &pending, &p);
    assert!(report.is_valid(), "{:#?}", report.violations);
    assert_eq!((zones_of(&p, "g"), zones_of(&p, "t")), ([0, 2, 1], [2, 0, 1]), "{p:?}");
    assert_eq!(p.summary.placed, 6);
    let left: Vec<&str> = p.unschedulable.iter().map(|u| u.pod.as_str()).collect();
    assert!(left.len() == 1 && left[0].starts_with("d/g-"), "{left:?}");
}

#[test]
fn do_not_schedule_spread_is_enforced_by_the_greedy_as_pods_land() {
    // Zone a has room for many pods, zone b's one node for two: with maxSkew 1 the greedy
    // alternates and stops at 3 + 2, as kube-scheduler does.
    let mut nodes = zoned_nodes(6);
    nodes.retain(|n| n.name != "n4" && n.name != "n5");
    nodes[3] = NodeBuilder::new("n3")
        .cpu(1000)
        .memory(16 * GI)
        .label(crate::plugins::podtopologyspread::LABEL_TOPOLOGY_ZONE, "b")
        .label(HOSTNAME_LABEL, "n3")
        .obj();
    let state = cluster(nodes, vec![]);
    let zone = crate::plugins::podtopologyspread::LABEL_TOPOLOGY_ZONE;
    let pending: Vec<Pod> = (0..6)
        .map(|i| {
            PodBuilder::new("d", &format!("s{i}"))
                .cpu(500)
                .label("app", "s")
                .spread(spread_constraint(
                    1,
                    zone,
                    UnsatisfiableAction::DoNotSchedule,
                    &[("app", "s")],
                ))
                .obj()
        })
        .collect();
    let p = plan(&state, &pending);
    assert!(check(&state, &pending, &p).is_valid(), "{p:?}");
    let got = per_label(&state, &p, zone);
    assert_eq!((got.get("a"), got.get("b")), (Some(&3), Some(&2)), "{p:?}");
    assert_eq!(p.unschedulable.len(), 1);
    assert_eq!(p.placements.len(), baseline(&state, &pending, 0).placements.len());
    // The greedy placed them; the repair only reported the one that fits nowhere.
    assert_eq!(p.summary.repaired, 0);
    assert_ne!(p.summary.strategy, SEQUENTIAL_PATH_STRATEGY);
}

#[test]
fn required_pod_affinity_follows_the_first_pod_and_keeps_anti_affinity_to_bound_pods() {
    // n0 (zone a) holds a pod whose anti-affinity repels app=s on its node; zone b is larger.
    let guard = PodBuilder::new("d", "guard")
        .label("app", "guard")
        .pod_anti_affinity(affinity_term(HOSTNAME_LABEL, &[("app", "s")]))
        .node("n0")
        .obj();
    let state = cluster(zoned_nodes(6), vec![guard]);
    let zone = crate::plugins::podtopologyspread::LABEL_TOPOLOGY_ZONE;
    let pending: Vec<Pod> = (0..5)
        .map(|i| {
            PodBuilder::new("d", &format!("s{i}"))
                .cpu(500)
                .label("app", "s")
                .pod_affinity(affinity_term(zone, &[("app", "s")]))
                .obj()
        })
        .collect();
    let p = plan(&state, &pending);
    assert!(check(&state, &pending, &p).is_valid(), "{p:?}");
    assert_eq!(p.placements.len(), 5);
    assert_eq!(per_label(&state, &p, zone).len(), 1, "all in one zone: {p:?}");
    assert!(p.placements.iter().all(|pl| pl.node != "n0"), "{p:?}");
    assert_eq!(p.summary.repaired, 0);
}
