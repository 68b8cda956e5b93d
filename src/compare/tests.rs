//! Tests of the comparison figures: after-state, stranded capacity, differences, and a whole
//! comparison of `baseline` and `plan` on a small cluster.

use super::*;
use crate::framework::config::SchedulerConfig;
use crate::model::testing::{GI, NodeBuilder, PodBuilder, cluster};
use crate::plan::{Eviction, Placement};

fn node(name: &str, cpu: i64, mem_gi: i64) -> crate::model::Node {
    NodeBuilder::new(name).cpu(cpu).memory(mem_gi * GI).pods(10).obj()
}

fn pod(name: &str, cpu: i64, mem_gi: i64) -> Pod {
    PodBuilder::new("ns", name).cpu(cpu).memory(mem_gi * GI).obj()
}

fn plan(placements: &[(&str, &str)]) -> Plan {
    Plan {
        placements: placements
            .iter()
            .map(|(p, n)| Placement { pod: format!("ns/{p}"), node: (*n).to_string() })
            .collect(),
        ..Default::default()
    }
}

fn stranded_cpu(after: &ClusterState, pending: &[Pod], shapes_of: &[&Pod]) -> (i64, usize) {
    let columns = resource_columns(after, pending);
    let shapes =
        minimal_shapes(shapes_of.iter().map(|p| shape(p, &columns)).collect::<BTreeSet<_>>());
    let (by, nodes) = stranded(after, &columns, &shapes);
    (by.get(CPU).map_or(0, |s| s.stranded), nodes)
}

#[test]
fn stranded_capacity_cases() {
    struct Case {
        name: &'static str,
        /// Nodes as (name, cpu, memory GiB).
        nodes: Vec<(&'static str, i64, i64)>,
        /// Bound pods as (name, cpu, memory GiB, node).
        bound: Vec<(&'static str, i64, i64, &'static str)>,
        /// Reference shapes as (cpu, memory GiB).
        shapes: Vec<(i64, i64)>,
        want_cpu: i64,
        want_nodes: usize,
    }
    let cases = vec![
        Case {
            name: "free cpu on a node whose memory is full is stranded for a pod that needs memory",
            nodes: vec![("a", 4000, 8), ("b", 4000, 8)],
            bound: vec![("x", 1000, 8, "a")],
            shapes: vec![(500, 1)],
            want_cpu: 3000,
            want_nodes: 1,
        },
        Case {
            name: "a node where the reference shape fits strands nothing",
            nodes: vec![("a", 4000, 8)],
            bound: vec![("x", 1000, 4, "a")],
            shapes: vec![(500, 1)],
            want_cpu: 0,
            want_nodes: 0,
        },
        Case {
            name: "free capacity smaller than the smallest shape is stranded",
            nodes: vec![("a", 4000, 8), ("b", 4000, 8)],
            bound: vec![("x", 3800, 2, "a")],
            shapes: vec![(500, 1), (1000, 1)],
            want_cpu: 200,
            want_nodes: 1,
        },
        Case {
            name: "one fitting shape among several is enough to keep a node's capacity usable",
            nodes: vec![("a", 4000, 8)],
            bound: vec![("x", 3000, 2, "a")],
            shapes: vec![(2000, 1), (1000, 1)],
            want_cpu: 0,
            want_nodes: 0,
        },
        Case {
            name: "without reference shapes nothing is stranded",
            nodes: vec![("a", 4000, 8)],
            bound: vec![("x", 3900, 8, "a")],
            shapes: vec![],
            want_cpu: 0,
            want_nodes: 0,
        },
    ];
    for c in cases {
        let nodes = c.nodes.iter().map(|(n, cpu, mem)| node(n, *cpu, *mem)).collect();
        let bound = c
            .bound
            .iter()
            .map(|(p, cpu, mem, n)| {
                PodBuilder::new("ns", p).cpu(*cpu).memory(mem * GI).node(n).obj()
            })
            .collect();
        let state = cluster(nodes, bound);
        let shapes: Vec<Pod> = c
            .shapes
            .iter()
            .enumerate()
            .map(|(i, (cpu, m))| pod(&format!("s{i}"), *cpu, *m))
            .collect();
        let refs: Vec<&Pod> = shapes.iter().collect();
        let (cpu, nodes) = stranded_cpu(&state, &shapes, &refs);
        assert_eq!(cpu, c.want_cpu, "{}", c.name);
        assert_eq!(nodes, c.want_nodes, "{}", c.name);
    }
}

#[test]
fn a_node_at_its_pod_limit_strands_all_its_free_resources() {
    let n = NodeBuilder::new("a").cpu(4000).memory(8 * GI).pods(1).obj();
    let state = cluster(vec![n], vec![PodBuilder::new("ns", "x").cpu(100).node("a").obj()]);
    let p = pod("p", 100, 1);
    let (cpu, nodes) = stranded_cpu(&state, std::slice::from_ref(&p), &[&p]);
    assert_eq!((cpu, nodes), (3900, 1));
}

#[test]
fn shapes_covered_by_a_smaller_shape_are_dropped() {
    let set: BTreeSet<Vec<i64>> =
        [vec![1, 2, 1], vec![2, 2, 1], vec![1, 1, 1], vec![3, 0, 1]].into_iter().collect();
    assert_eq!(minimal_shapes(set), vec![vec![1, 1, 1], vec![3, 0, 1]]);
}

#[test]
fn applying_a_plan_removes_victims_and_adds_placed_pods() {
    let state = cluster(
        vec![node("a", 4000, 8), node("b", 4000, 8)],
        vec![PodBuilder::new("ns", "victim").cpu(3000).node("a").obj()],
    );
    let pending = vec![pod("p", 2000, 1), pod("q", 1000, 1)];
    let mut p = plan(&[("p", "a"), ("q", "b"), ("ghost", "b")]);
    p.evictions.push(Eviction {
        pod: "ns/victim".into(),
        node: "a".into(),
        preemptor: "ns/p".into(),
    });
    let after = apply_plan(&state, &pending, &p);
    assert_eq!(after.nodes[0].requested.milli_cpu, 2000, "victim out, p in");
    assert_eq!(after.nodes[1].requested.milli_cpu, 1000, "q in; the unknown pod is skipped");
    assert_eq!(after.nodes[0].pods[0].node_name.as_deref(), Some("a"));
}

#[test]
fn differences_count_each_pod_once_and_list_nodes_by_largest_delta() {
    let state = cluster(vec![node("a", 4000, 8), node("b", 4000, 8), node("c", 4000, 8)], vec![]);
    let pending: Vec<Pod> = ["p", "q", "r", "s", "t"].iter().map(|n| pod(n, 100, 1)).collect();
    let baseline = plan(&[("p", "a"), ("q", "a"), ("r", "b"), ("s", "c")]);
    let planned = plan(&[("p", "a"), ("q", "b"), ("r", "b"), ("t", "b")]);
    let d = differences(&state, &pending, &baseline, &planned);
    assert_eq!(
        (d.same_node, d.different_node, d.only_baseline, d.only_plan, d.neither),
        (2, 1, 1, 1, 0)
    );
    let listed: Vec<&str> = d.pods.iter().map(|p| p.pod.as_str()).collect();
    assert_eq!(listed, ["ns/q", "ns/s", "ns/t"]);
    // a: 2 → 1, b: 1 → 3, c: 1 → 0.
    let deltas: Vec<(&str, i64)> =
        d.node_deltas.iter().map(|x| (x.node.as_str(), x.delta)).collect();
    assert_eq!(deltas, [("b", 2), ("a", -1), ("c", -1)]);
    assert_eq!(d.nodes_changed, 3);
}

#[test]
fn comparing_baseline_and_plan_on_a_small_cluster_gives_valid_consistent_figures() {
    let state = cluster(vec![node("a", 4000, 8), node("b", 2000, 8)], vec![]);
    let pending: Vec<Pod> = (0..5).map(|i| pod(&format!("p{i}"), 1000, 1)).collect();
    let config = SchedulerConfig::default();
    let b = crate::baseline::run_baseline(state.clone(), &pending, &config, Default::default())
        .expect("baseline runs");
    let p = crate::batch::plan_greedy(state.clone(), &pending, &config, &Default::default())
        .expect("plan runs");
    let c = compare(
        &state,
        &pending,
        &Decided { plan: b, wall_ms: 1.0 },
        &Decided { plan: p, wall_ms: 1.0 },
        &[],
        &config,
        SnapshotInfo::default(),
        Settings::default(),
        &Progress::hidden(),
    );
    assert!(c.valid);
    assert_eq!(c.schema_version, SCHEMA_VERSION);
    assert_eq!((c.snapshot.nodes, c.snapshot.pending_pods), (2, 5));
    for side in [&c.baseline, &c.plan] {
        assert_eq!(side.violations, 0);
        assert_eq!(side.placed + side.unschedulable, 5);
        assert_eq!(side.placed, 5, "6 cores of room for 5 one-core pods");
        let cpu = &side.utilization[CPU];
        assert_eq!(cpu.requested, 5000);
        assert!(cpu.max <= 1.0 && cpu.mean > 0.0);
        // All placed: judged against the pending shape (1 core); 1 core left somewhere fits it.
        assert_eq!(side.stranded_reference, StrandedReference::Pending);
        assert_eq!(side.stranded[CPU].stranded, 0);
    }
    assert_eq!(c.nodes.names, ["a", "b"]);
    assert_eq!(c.nodes.resources[0], CPU);
    assert_eq!(c.nodes.baseline_placed.iter().sum::<usize>(), 5);
    let d = &c.differences;
    assert_eq!(d.same_node + d.different_node + d.only_baseline + d.only_plan + d.neither, 5);
}

#[test]
fn an_invalid_plan_is_reported_with_its_violations() {
    let state = cluster(vec![node("a", 1000, 8)], vec![]);
    let pending = vec![pod("p", 800, 1), pod("q", 800, 1)];
    let bad = plan(&[("p", "a"), ("q", "a")]);
    let (side, _) = measure(
        &state,
        &pending,
        &Decided { plan: bad, wall_ms: 0.0 },
        &SchedulerConfig::default(),
        &Progress::hidden(),
    );
    assert!(side.violations > 0);
    assert_eq!(side.violations_by_kind.get("insufficient_resource"), Some(&1));
    assert_eq!(side.violation_list.len(), side.violations);
}

#[test]
fn the_report_draws_one_bar_per_node_and_plan_and_one_heatmap_cell_per_node_and_resource() {
    let state = cluster(vec![node("a", 4000, 8), node("b<&>", 2000, 8)], vec![]);
    let pending: Vec<Pod> = (0..3).map(|i| pod(&format!("p{i}"), 1000, 1)).collect();
    let p = plan(&[("p0", "a"), ("p1", "b<&>"), ("p2", "a")]);
    let q = plan(&[("p0", "a"), ("p1", "a"), ("p2", "a")]);
    let c = compare(
        &state,
        &pending,
        &Decided { plan: p, wall_ms: 0.0 },
        &Decided { plan: q, wall_ms: 0.0 },
        &[],
        &SchedulerConfig::default(),
        SnapshotInfo { paths: vec!["<script>".into()], ..Default::default() },
        Settings::default(),
        &Progress::hidden(),
    );
    let html = report::render_html(&c);
    assert!(!html.contains("<script"), "text is escaped");
    assert!(html.contains("b&lt;&amp;&gt;"));
    let util = html.split("<svg id=\"util-cpu\"").nth(1).and_then(|s| s.split("</svg>").next());
    let util = util.expect("a cpu utilization chart");
    assert_eq!(util.matches("class=\"bar baseline\"").count(), 2);
    assert_eq!(util.matches("class=\"bar plan\"").count(), 2);
    let heat = html.split("<svg id=\"heatmap-plan\"").nth(1).and_then(|s| s.split("</svg>").next());
    let heat = heat.expect("a heatmap of the plan");
    assert_eq!(heat.matches("class=\"cell\"").count(), 2 * c.nodes.resources.len());
    let deltas =
        html.split("<svg id=\"node-deltas\"").nth(1).and_then(|s| s.split("</svg>").next());
    assert_eq!(deltas.expect("a delta chart").matches("class=\"bar delta").count(), 2);
    assert!(html.contains("id=\"pod-differences\""));
}

#[test]
fn baseline_and_plan_report_every_pending_pod_once_on_their_progress_bars() {
    use crate::model::testing::affinity_term;
    let state = cluster(vec![node("a", 4000, 8), node("b", 4000, 8)], vec![]);
    let mut pending: Vec<Pod> = Vec::new();
    for i in 0..3 {
        pending.push(PodBuilder::new("ns", &format!("high{i}")).cpu(1000).priority(10).obj());
    }
    for i in 0..2 {
        pending.push(PodBuilder::new("ns", &format!("low{i}")).cpu(500).obj());
    }
    pending.push(PodBuilder::new("ns", "huge").cpu(64_000).obj());
    pending.push(
        // Required pod affinity: placed by the exact sequential path.
        PodBuilder::new("ns", "affine")
            .cpu(100)
            .label("app", "x")
            .pod_affinity(affinity_term("kubernetes.io/hostname", &[("app", "x")]))
            .obj(),
    );
    let config = SchedulerConfig::default();
    let n = pending.len() as u64;

    let progress = Progress::recording();
    crate::baseline::run_baseline_with_progress(
        state.clone(),
        &pending,
        &config,
        Default::default(),
        &progress,
    )
    .expect("baseline runs");
    let done = progress.finished();
    assert_eq!(done.len(), 1);
    assert_eq!((done[0].position, done[0].total), (n, Some(n)), "{done:?}");

    for fallback in [false, true] {
        let progress = Progress::recording();
        let options =
            crate::batch::BatchOptions { ensure_baseline: fallback, ..Default::default() };
        let plan = crate::batch::plan_greedy_with_progress(
            state.clone(),
            &pending,
            &config,
            &options,
            &progress,
        )
        .expect("plan runs");
        assert_eq!(plan.placements.len() + plan.unschedulable.len(), pending.len());
        let done = progress.finished();
        // The plan's own bar, then (with the fallback) the sequential run's.
        assert_eq!(done.len(), if fallback { 2 } else { 1 }, "{done:?}");
        for d in &done {
            assert_eq!((d.position, d.total), (n, Some(n)), "fallback {fallback}: {done:?}");
        }
    }
}

/// A pod of ReplicaSet `rs` (label `app=rs`), one core.
fn replica(name: &str, rs: &str) -> Pod {
    let mut p = PodBuilder::new("ns", name).cpu(1000).memory(GI).label("app", rs).obj();
    p.owner = Some(crate::model::OwnerRef {
        kind: "ReplicaSet".into(),
        name: rs.into(),
        uid: String::new(),
    });
    p
}

fn zoned(name: &str, zone: &str) -> crate::model::Node {
    NodeBuilder::new(name)
        .cpu(8000)
        .memory(16 * GI)
        .pods(10)
        .label("topology.kubernetes.io/zone", zone)
        .label("kubernetes.io/hostname", name)
        .obj()
}

#[test]
fn workload_rows_count_placed_pods_and_skew_over_eligible_domains_only() {
    use crate::model::TaintEffect;
    use workloads::{HOSTNAME_LABEL, Workloads, ZONE_LABEL, rows};
    // Zones a (2 nodes), b (1 node), c (1 node, tainted: not eligible for the replicas).
    let mut tainted = zoned("c1", "c");
    tainted.taints =
        NodeBuilder::new("x").taint("gpu", "true", TaintEffect::NoSchedule).obj().taints;
    let bound = {
        let mut p = replica("r0", "web");
        p.node_name = Some("a1".into());
        p
    };
    let state =
        cluster(vec![zoned("a1", "a"), zoned("a2", "a"), zoned("b1", "b"), tainted], vec![bound]);
    let mut bare = PodBuilder::new("ns", "solo").cpu(500).obj();
    bare.owner = None;
    let pending = vec![replica("r1", "web"), replica("r2", "web"), replica("r3", "web"), bare];
    // Baseline: r1 a2, r2 b1, r3 unplaced, solo a1. Plan: r1, r2, r3 all on a1.
    let baseline = plan(&[("r1", "a2"), ("r2", "b1"), ("solo", "a1")]);
    let piled = plan(&[("r1", "a1"), ("r2", "a1"), ("r3", "a1")]);
    let (ba, pa) = (apply_plan(&state, &pending, &baseline), apply_plan(&state, &pending, &piled));
    let w = Workloads::new(&state, &pending);
    let rows = rows(&w, &w.sides(&baseline, &ba), &w.sides(&piled, &pa));
    let owners: Vec<&str> = rows.iter().map(|r| r.owner.as_str()).collect();
    assert_eq!(owners, ["ReplicaSet ns/web", "Pod ns/solo"], "the most different first");
    let web = &rows[0];
    assert_eq!((web.baseline.placed, web.baseline.unplaced), (2, 1));
    assert_eq!((web.plan.placed, web.plan.unplaced), (3, 0));
    assert_eq!(web.plan.cpu_placed_m, 3000);
    assert_eq!(web.plan.memory_placed_bytes, 3 * GI);
    // Baseline: a has r0 + r1 = 2, b has r2 = 1 → zone skew 1 (zone c is not eligible);
    // nodes a1 1, a2 1, b1 1 → node skew 0.
    assert_eq!(web.baseline.skew[ZONE_LABEL], 1);
    assert_eq!(web.baseline.skew[HOSTNAME_LABEL], 0);
    assert_eq!(web.baseline.max_per_node, 1);
    // Plan: a 4, b 0 → 4; a1 4, a2 0 → node skew 4; four on one node.
    assert_eq!(web.plan.skew[ZONE_LABEL], 4);
    assert_eq!(web.plan.skew[HOSTNAME_LABEL], 4);
    assert_eq!(web.plan.max_per_node, 4);
    let solo = &rows[1];
    assert_eq!((solo.baseline.placed, solo.plan.placed, solo.plan.unplaced), (1, 0, 1));
    assert_eq!(verdict::starved(&rows), (0, 1));
}

#[test]
fn a_workload_is_more_skewed_beyond_its_own_max_skew_only_past_its_own_constraint() {
    use workloads::{HOSTNAME_LABEL, MoreSkewed, OwnerRow, WorkloadSide, ZONE_LABEL};
    let side = |zone: i64, node: i64| WorkloadSide {
        skew: [(ZONE_LABEL.to_string(), zone), (HOSTNAME_LABEL.to_string(), node)].into(),
        ..Default::default()
    };
    struct Case {
        name: &'static str,
        /// Zone and node skew under baseline, then under the plan.
        baseline: (i64, i64),
        plan: (i64, i64),
        /// The workload's own zone `maxSkew`.
        own: Option<i64>,
        more_skewed: bool,
        beyond: bool,
    }
    let case = |name, baseline, plan, own, more_skewed, beyond| Case {
        name,
        baseline,
        plan,
        own,
        more_skewed,
        beyond,
    };
    let cases = [
        case("as skewed as under baseline is not more skewed", (1, 1), (1, 1), None, false, false),
        case("less skewed is not more skewed", (3, 2), (1, 1), None, false, false),
        case(
            "more skewed without a constraint of its own is beyond",
            (0, 1),
            (1, 1),
            None,
            true,
            true,
        ),
        case(
            "more skewed within its own maxSkew is not beyond",
            (0, 1),
            (1, 1),
            Some(1),
            true,
            false,
        ),
        case("more skewed past its own maxSkew is beyond it", (0, 1), (2, 1), Some(1), true, true),
        case("a zone constraint does not cover the node skew", (0, 0), (1, 2), Some(1), true, true),
    ];
    let mut rows = Vec::new();
    for c in cases {
        let row = OwnerRow {
            owner: c.name.into(),
            baseline: side(c.baseline.0, c.baseline.1),
            plan: side(c.plan.0, c.plan.1),
            max_skew: c.own.map(|m| (ZONE_LABEL.to_string(), m)).into_iter().collect(),
        };
        assert_eq!(row.more_skewed(), c.more_skewed, "{}", c.name);
        assert_eq!(row.more_skewed_beyond_max_skew(), c.beyond, "{}", c.name);
        rows.push(row);
    }
    assert_eq!(MoreSkewed::of(&rows), MoreSkewed { workloads: 4, beyond_max_skew: 3 });
}

#[test]
fn a_workloads_own_max_skew_comes_from_its_constraints_that_select_it() {
    use crate::model::UnsatisfiableAction::{DoNotSchedule, ScheduleAnyway};
    use crate::model::testing::spread_constraint;
    use workloads::{HOSTNAME_LABEL, Workloads, ZONE_LABEL, rows};
    let state = cluster(vec![zoned("a1", "a"), zoned("b1", "b")], vec![]);
    let mut web = replica("r1", "web");
    web.topology_spread_constraints = vec![
        spread_constraint(3, ZONE_LABEL, ScheduleAnyway, &[("app", "web")]),
        spread_constraint(2, ZONE_LABEL, DoNotSchedule, &[("app", "web")]),
        // Another workload's pods: not this one's own spread.
        spread_constraint(1, HOSTNAME_LABEL, DoNotSchedule, &[("app", "db")]),
    ];
    let pending = vec![web];
    let none = plan(&[]);
    let after = apply_plan(&state, &pending, &none);
    let w = Workloads::new(&state, &pending);
    let rows = rows(&w, &w.sides(&none, &after), &w.sides(&none, &after));
    assert_eq!(rows[0].max_skew, [(ZONE_LABEL.to_string(), 2)].into());
}

#[test]
fn soft_rules_count_spread_kept_and_preferred_weight_satisfied() {
    use crate::model::UnsatisfiableAction;
    use crate::model::testing::{affinity_term, spread_constraint};
    let state = cluster(vec![zoned("a1", "a"), zoned("b1", "b"), zoned("c1", "c")], vec![]);
    let spread = |name: &str| {
        let mut p = replica(name, "web");
        p.topology_spread_constraints = vec![spread_constraint(
            1,
            "topology.kubernetes.io/zone",
            UnsatisfiableAction::ScheduleAnyway,
            &[("app", "web")],
        )];
        p
    };
    let apart = |name: &str| {
        PodBuilder::new("ns", name)
            .cpu(100)
            .label("app", "db")
            .preferred_pod_anti_affinity(
                10,
                affinity_term("kubernetes.io/hostname", &[("app", "db")]),
            )
            .obj()
    };
    let pending = vec![spread("w1"), spread("w2"), spread("w3"), apart("d1"), apart("d2")];
    let config = SchedulerConfig::default();
    // Even: one web per zone, the dbs on different nodes.
    let even = plan(&[("w1", "a1"), ("w2", "b1"), ("w3", "c1"), ("d1", "a1"), ("d2", "b1")]);
    let after = apply_plan(&state, &pending, &even);
    let s = soft::soft_rules(&after, &pending, &even, &config);
    assert_eq!((s.spread_pods, s.spread_pods_within_max_skew), (3, 3));
    assert_eq!((s.preferred_weight, s.preferred_weight_satisfied), (20, 20));
    assert!(s.score_total.is_some_and(|t| t > 0));
    // Piled: every web in zone a (3 − 0 > 1 for each), both dbs on a1.
    let piled = plan(&[("w1", "a1"), ("w2", "a1"), ("w3", "a1"), ("d1", "a1"), ("d2", "a1")]);
    let after = apply_plan(&state, &pending, &piled);
    let t = soft::soft_rules(&after, &pending, &piled, &config);
    assert_eq!((t.spread_pods, t.spread_pods_within_max_skew), (3, 0));
    assert_eq!((t.preferred_weight, t.preferred_weight_satisfied), (20, 0));
    assert!(t.score_total < s.score_total, "the profile scores the piled state lower");
}

#[test]
fn stranded_capacity_uses_the_same_reference_shapes_for_both_plans() {
    // One 2-core pod unplaced by one plan, placed by the other: the reference is every
    // pending shape either way, so a node with 1 core free is stranded under both.
    let state = cluster(vec![node("a", 3000, 8), node("b", 1000, 8)], vec![]);
    let pending = vec![pod("big", 2000, 1), pod("small", 1000, 1)];
    let columns = resource_columns(&state, &pending);
    let shapes = reference_shapes(&pending, &columns);
    assert_eq!(shapes.len(), 1, "the 1-core shape covers the 2-core one");
    let config = SchedulerConfig::default();
    let measure_plan = |p: Plan| {
        measure(&state, &pending, &Decided { plan: p, wall_ms: 0.0 }, &config, &Progress::hidden())
            .0
    };
    let one = measure_plan(plan(&[("big", "a"), ("small", "a")]));
    let other = measure_plan(plan(&[("small", "b")]));
    assert_eq!(one.stranded_reference, StrandedReference::Pending);
    assert_eq!(other.stranded_reference, StrandedReference::Pending);
    // One plan: a has 0 free, b 1 core free (fits the 1-core shape) → nothing stranded.
    assert_eq!(one.stranded[CPU].stranded, 0);
    // The other: a 3 cores free, b 0 → nothing stranded, though `big` is unplaced (the old
    // definition counted every free core as stranded here).
    assert_eq!(other.stranded[CPU].stranded, 0);
    assert_eq!(other.stranded[CPU].free, 3000);
}

#[test]
fn a_baseline_that_breaks_a_rule_is_reported_but_the_comparison_stays_valid() {
    let state = cluster(vec![node("a", 1000, 8)], vec![]);
    let pending = vec![pod("p", 800, 1), pod("q", 800, 1)];
    let mut good = plan(&[("p", "a")]);
    good.unschedulable.push(crate::plan::Unschedulable {
        pod: "ns/q".into(),
        message: "0/1 nodes are available: 1 Insufficient cpu.".into(),
        reasons: [("Insufficient cpu".to_string(), 1)].into(),
    });
    let c = compare(
        &state,
        &pending,
        &Decided { plan: plan(&[("p", "a"), ("q", "a")]), wall_ms: 0.0 },
        &Decided { plan: good, wall_ms: 0.0 },
        &[],
        &SchedulerConfig::default(),
        SnapshotInfo::default(),
        Settings::default(),
        &Progress::hidden(),
    );
    assert!(c.baseline.violations > 0);
    assert_eq!(c.plan.violations, 0);
    assert!(c.valid, "only the plan's violations make the comparison invalid (exit code 3)");
    assert!(c.verdict.line.contains("baseline breaks 1 hard rule(s)"), "{}", c.verdict.line);
    assert_eq!(c.verdict.baseline_violations, 1);
}
