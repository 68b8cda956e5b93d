//! Tests of the rebalancing objectives on constructed clusters (fragmented, zone-skewed,
//! violating), of the descheduler selections, of the waves, and a property test: every plan is
//! valid under `kplace check` wave by wave and keeps every budget at every eviction.

use std::collections::BTreeSet;
use std::sync::Arc;

use proptest::prelude::*;

use super::budget::Budget;
use super::evictor::EvictorOptions;
use super::violations::{Strategy as Deschedule, select};
use super::waves::{Step, assign_waves, check_moves, verify_waves};
use super::*;
use crate::framework::config::SchedulerConfig;
use crate::model::testing::{
    GI, NodeBuilder, PodBuilder, affinity_term, cluster, node_term, spread_constraint,
};
use crate::model::{
    ClusterState, MatchOp, OwnerRef, Pod, Requirement, TaintEffect, UnsatisfiableAction,
};
use crate::plan::Move;

const ZONE: &str = "topology.kubernetes.io/zone";
const HOST: &str = "kubernetes.io/hostname";

/// A running pod of ReplicaSet `rs` on `node` requesting `cpu` millicores and 256Mi.
fn rs_pod(name: &str, rs: &str, node: &str, cpu: i64) -> PodBuilder {
    PodBuilder::new("ns", name).node(node).cpu(cpu).memory(GI / 4).label("app", rs)
}

fn owned(b: PodBuilder, kind: &str, owner: &str) -> Pod {
    let mut p = b.obj();
    p.owner = Some(OwnerRef { kind: kind.into(), name: owner.into(), uid: format!("uid-{owner}") });
    p
}

fn rs(b: PodBuilder) -> Pod {
    let owner = b.clone().obj().labels.get("app").cloned().unwrap_or_else(|| "rs".into());
    owned(b, "ReplicaSet", &owner)
}

fn daemon(name: &str, node: &str) -> Pod {
    owned(
        PodBuilder::new("kube-system", name).node(node).cpu(50).memory(GI / 16),
        "DaemonSet",
        "ds",
    )
}

fn node(name: &str, cpu: i64, zone: &str) -> crate::model::Node {
    NodeBuilder::new(name).cpu(cpu).memory(16 * GI).pods(110).label(ZONE, zone).obj()
}

fn run(state: &ClusterState, budgets: &[Budget], options: RebalanceOptions) -> Rebalance {
    let r =
        rebalance(state, budgets, &SchedulerConfig::default(), &options).expect("rebalance runs");
    assert!(r.check.is_valid(), "check finds the waves valid: {:#?}", r.check);
    verify_waves(state, budgets, &r.plan.moves).expect("the waves keep every budget");
    if let Some(k) = options.max_moves {
        assert!(r.plan.moves.len() <= k, "at most {k} moves");
    }
    r
}

fn opts(objective: Objective) -> RebalanceOptions {
    RebalanceOptions { objective, ..RebalanceOptions::default() }
}

fn summary(r: &Rebalance) -> &crate::plan::RebalanceSummary {
    r.plan.summary.rebalance.as_ref().expect("a rebalance summary")
}

fn moved(r: &Rebalance) -> BTreeSet<String> {
    r.plan.moves.iter().map(|m| m.pod.clone()).collect()
}

/// Six 4-CPU nodes with one 1-CPU pod each, plus a DaemonSet pod on every node.
fn fragmented() -> ClusterState {
    let nodes: Vec<_> = (1..=6).map(|i| node(&format!("n{i}"), 4000, "a")).collect();
    let mut pods: Vec<Pod> =
        (1..=6).map(|i| rs(rs_pod(&format!("p{i}"), "web", &format!("n{i}"), 1000))).collect();
    pods.extend((1..=6).map(|i| daemon(&format!("ds-{i}"), &format!("n{i}"))));
    cluster(nodes, pods)
}

#[test]
fn pack_frees_four_of_six_nodes_of_a_fragmented_cluster() {
    let state = fragmented();
    let r = run(&state, &[], opts(Objective::Pack));
    let s = summary(&r);
    assert_eq!(s.nodes_in_use_before, 6);
    assert!(s.nodes_freed.len() >= 4, "{s:#?}");
    assert_eq!(s.nodes_in_use_after, 6 - s.nodes_freed.len());
    assert_eq!(r.plan.moves.len(), s.nodes_freed.len(), "one move per freed node");
    for m in &r.plan.moves {
        assert!(!m.pod.starts_with("kube-system/"), "node daemons never move: {m:?}");
    }
}

#[test]
fn pack_never_moves_pods_onto_a_node_that_was_empty() {
    // Two half-full nodes and an empty one, larger, that MostAllocated would not prefer, and a
    // small empty one it would (most allocated after the pod lands): neither may receive pods.
    let mut nodes: Vec<_> = (1..=2).map(|i| node(&format!("n{i}"), 4000, "a")).collect();
    nodes.push(node("empty-small", 1500, "a"));
    nodes.push(node("empty-big", 64000, "a"));
    let mut pods: Vec<Pod> =
        vec![rs(rs_pod("p1", "web", "n1", 1000)), rs(rs_pod("p2", "web", "n2", 1000))];
    pods.extend((1..=2).map(|i| daemon(&format!("ds-{i}"), &format!("n{i}"))));
    pods.push(daemon("ds-3", "empty-small"));
    let state = cluster(nodes, pods);
    let r = run(&state, &[], opts(Objective::Pack));
    let s = summary(&r);
    for m in &r.plan.moves {
        assert!(m.to == "n1" || m.to == "n2", "a pod went to a node that was empty: {m:?}");
    }
    assert!(s.nodes_newly_used.is_empty(), "{s:#?}");
    assert_eq!(s.nodes_freed.len(), 1, "{s:#?}");
    assert_eq!(s.nodes_in_use_after, s.nodes_in_use_before - 1);
}

#[test]
fn waves_stay_within_the_eviction_limits() {
    // Twelve 1-CPU pods on six 8-CPU nodes, two per node, in two namespaces: pack moves them
    // all onto fewer nodes.
    let nodes: Vec<_> = (1..=6).map(|i| node(&format!("n{i}"), 8000, "a")).collect();
    let mut pods: Vec<Pod> = Vec::new();
    for i in 1..=6 {
        for j in 0..2 {
            let mut p = rs(rs_pod(&format!("p{i}-{j}"), "web", &format!("n{i}"), 1000));
            if j == 1 {
                p.namespace = "other".to_string();
            }
            pods.push(p);
        }
    }
    let state = cluster(nodes, pods);
    let free = run(&state, &[], opts(Objective::Pack));
    assert!(free.plan.moves.len() >= 6, "{:?}", free.plan.moves);
    let limits = [
        ("in all", WaveLimits { per_wave: Some(3), ..WaveLimits::default() }),
        ("per node", WaveLimits { per_node: Some(1), ..WaveLimits::default() }),
        ("per namespace", WaveLimits { per_namespace: Some(2), ..WaveLimits::default() }),
    ];
    for (name, limits) in limits {
        let r = run(&state, &[], RebalanceOptions { limits, ..opts(Objective::Pack) });
        assert_eq!(moved(&r), moved(&free), "{name}: the same moves, only in more waves");
        let mut in_wave: BTreeMap<u32, usize> = BTreeMap::new();
        let mut per_node: BTreeMap<(u32, &str), usize> = BTreeMap::new();
        let mut per_ns: BTreeMap<(u32, &str), usize> = BTreeMap::new();
        for m in &r.plan.moves {
            *in_wave.entry(m.wave).or_default() += 1;
            *per_node.entry((m.wave, m.from.as_str())).or_default() += 1;
            *per_ns.entry((m.wave, m.pod.split('/').next().unwrap())).or_default() += 1;
        }
        let most = |m: Vec<usize>| m.into_iter().max().unwrap_or(0);
        let (w, n, ns) = (
            most(in_wave.values().copied().collect()),
            most(per_node.values().copied().collect()),
            most(per_ns.values().copied().collect()),
        );
        assert!(w <= limits.per_wave.unwrap_or(usize::MAX), "{name}: {w} in a wave");
        assert!(n <= limits.per_node.unwrap_or(usize::MAX), "{name}: {n} from a node");
        assert!(ns <= limits.per_namespace.unwrap_or(usize::MAX), "{name}: {ns} in a namespace");
        assert!(r.check.is_valid(), "{name}: {:#?}", r.check);
    }
}

#[test]
fn pack_stays_within_the_move_limit() {
    let state = fragmented();
    let r = run(&state, &[], RebalanceOptions { max_moves: Some(2), ..opts(Objective::Pack) });
    assert_eq!(r.plan.moves.len(), 2);
    assert_eq!(summary(&r).nodes_freed.len(), 2);
}

#[test]
fn pack_does_not_empty_a_node_with_a_pod_that_may_not_move() {
    let mut state = fragmented();
    // n1's only pod has no owner, n2's mounts an emptyDir: both stay, so both nodes stay in use
    // (they are the least loaded, so pack tries them first).
    state.nodes[0].remove_pod("ns", "p1");
    state.nodes[1].remove_pod("ns", "p2");
    let bare = PodBuilder::new("ns", "bare").node("n1").cpu(100).memory(GI / 8).obj();
    let mut local = rs(rs_pod("local", "web", "n2", 100));
    local.has_local_storage = true;
    for p in [bare, local] {
        let i = state.node_index(p.node_name.as_deref().unwrap()).unwrap();
        state.nodes[i].add_pod(Arc::new(p));
    }
    let r = run(&state, &[], opts(Objective::Pack));
    let s = summary(&r);
    assert!(
        !s.nodes_freed.contains(&"n1".to_string()) && !s.nodes_freed.contains(&"n2".to_string()),
        "{s:#?}"
    );
    assert!(!moved(&r).contains("ns/bare") && !moved(&r).contains("ns/local"));
    assert!(
        s.unmoved.iter().any(|u| u.pod == "ns/bare" && u.reason.contains("ownerRefs")),
        "{:#?}",
        s.unmoved
    );
    assert!(s.unmoved.iter().any(|u| u.pod == "ns/local" && u.reason.contains("local storage")));

    let with_flag = run(
        &state,
        &[],
        RebalanceOptions {
            evictor: EvictorOptions { evict_local_storage_pods: true, ..Default::default() },
            ..opts(Objective::Pack)
        },
    );
    assert!(
        with_flag.plan.moves.iter().any(|m| m.pod == "ns/local"),
        "--evict-local-storage-pods moves it"
    );
}

#[test]
fn a_pod_with_volume_claims_moves_only_within_its_zone() {
    // a1 (zone a) holds a PVC pod; b1 (zone b) has room, a2 (zone a) has room only when its
    // unmovable (bare) pod is small.
    let with_filler = |cpu: i64| {
        let mut db = rs(rs_pod("db", "db", "a1", 500));
        db.has_pvc = true;
        let filler = PodBuilder::new("ns", "filler").node("a2").cpu(cpu).memory(GI / 8).obj();
        // b1 is in use (pack never fills an empty node), by a pod that stays.
        let keep = PodBuilder::new("ns", "keep").node("b1").cpu(100).memory(GI / 8).obj();
        cluster(
            vec![node("a1", 4000, "a"), node("b1", 4000, "b"), node("a2", 4000, "a")],
            vec![db, filler, keep],
        )
    };
    let r = run(&with_filler(3900), &[], opts(Objective::Pack));
    assert!(r.plan.moves.is_empty(), "{:#?}", r.plan.moves);
    let u = &summary(&r).unmoved;
    assert!(u.iter().any(|u| u.pod == "ns/db" && u.reason.contains("another zone")), "{u:#?}");

    let r = run(&with_filler(100), &[], opts(Objective::Pack));
    let db = r.plan.moves.iter().find(|m| m.pod == "ns/db").expect("db moves");
    assert_eq!(db.to, "a2", "within zone a");
}

#[test]
fn pack_moves_a_budgeted_replica_set_one_pod_per_wave() {
    let state = fragmented();
    // Six replicas, five must stay healthy: one disruption at a time.
    let budgets = vec![Budget::new("ns", "web", &[("app", "web")], 5)];
    let r = run(&state, &budgets, opts(Objective::Pack));
    let waves: Vec<u32> = r.plan.moves.iter().map(|m| m.wave).collect();
    assert!(r.plan.moves.len() >= 4);
    assert_eq!(waves, (1..=waves.len() as u32).collect::<Vec<_>>(), "one move per wave, in order");
    let b = &summary(&r).budgets[0];
    assert_eq!((b.allowed, b.max_per_wave, b.moves), (1, 1, r.plan.moves.len()));
}

#[test]
fn a_budget_that_allows_no_disruption_keeps_its_pods_in_place() {
    let state = fragmented();
    let budgets = vec![Budget::new("ns", "web", &[("app", "web")], 6)];
    let r = run(&state, &budgets, opts(Objective::Pack));
    assert!(r.plan.moves.is_empty());
    assert!(summary(&r).unmovable.keys().any(|k| k.contains("pdb ns/web allows no disruption")));
}

/// Two zones of three 4-CPU nodes: zone a's nodes hold six 500m pods each, zone b's one.
fn zone_skewed() -> ClusterState {
    let mut nodes = Vec::new();
    let mut pods = Vec::new();
    for (zone, per_node) in [("a", 6), ("b", 1)] {
        for i in 1..=3 {
            let name = format!("{zone}{i}");
            nodes.push(node(&name, 4000, zone));
            for j in 0..per_node {
                pods.push(rs(rs_pod(&format!("{name}-p{j}"), "api", &name, 500)));
            }
        }
    }
    cluster(nodes, pods)
}

#[test]
fn balance_cuts_the_node_and_zone_standard_deviation_of_a_zone_skewed_cluster() {
    let state = zone_skewed();
    let r = run(&state, &[], opts(Objective::Balance));
    let s = summary(&r);
    // Before: nodes at 75% and 12.5% (stddev 0.3125), zones likewise.
    assert!((s.node_stddev_before["cpu"] - 0.3125).abs() < 1e-9, "{s:#?}");
    assert!((s.zone_stddev_before["cpu"] - 0.3125).abs() < 1e-9);
    // 21 pods on 6 nodes can at best be 3 or 4 per node (stddev 0.0625), 10 or 11 per zone.
    assert!(s.node_stddev_after["cpu"] <= 0.0625 + 1e-9, "{s:#?}");
    assert!(s.zone_stddev_after["cpu"] <= 0.0209, "{s:#?}");
    assert!(s.node_stddev_before["cpu"] - s.node_stddev_after["cpu"] >= 0.25);
}

#[test]
fn balance_makes_no_move_on_a_balanced_cluster() {
    let nodes: Vec<_> =
        (1..=4).map(|i| node(&format!("n{i}"), 4000, if i % 2 == 0 { "a" } else { "b" })).collect();
    let pods: Vec<Pod> =
        (1..=4).map(|i| rs(rs_pod(&format!("p{i}"), "web", &format!("n{i}"), 1000))).collect();
    let r = run(&cluster(nodes, pods), &[], opts(Objective::Balance));
    assert!(r.plan.moves.is_empty());
}

#[test]
fn balance_stops_at_the_move_limit() {
    let r = run(
        &zone_skewed(),
        &[],
        RebalanceOptions { max_moves: Some(3), ..opts(Objective::Balance) },
    );
    assert_eq!(r.plan.moves.len(), 3);
    let s = summary(&r);
    assert!(s.node_stddev_after["cpu"] < s.node_stddev_before["cpu"]);
}

/// A cluster with one pod violating each strategy (two for spread), and bystanders.
fn violating() -> ClusterState {
    let mut nodes = vec![
        node("a1", 8000, "a"),
        node("a2", 8000, "a"),
        node("b1", 8000, "b"),
        NodeBuilder::new("b2")
            .cpu(8000)
            .memory(16 * GI)
            .pods(110)
            .label(ZONE, "b")
            .label("disktype", "ssd")
            .obj(),
        NodeBuilder::new("t1")
            .cpu(8000)
            .memory(16 * GI)
            .pods(110)
            .label(ZONE, "b")
            .taint("dedicated", "infra", TaintEffect::NoSchedule)
            .obj(),
    ];
    nodes.sort_by(|a, b| a.name.cmp(&b.name));
    let ssd = node_term(vec![Requirement::new("disktype", MatchOp::In, &["ssd"])]);
    let anti = affinity_term(HOST, &[("app", "x")]);
    let spread = spread_constraint(1, ZONE, UnsatisfiableAction::DoNotSchedule, &[("app", "s")]);
    let mut pods = vec![
        // Taint: runs on t1 without a toleration.
        rs(rs_pod("tainted", "t", "t1", 100)),
        // Node affinity: needs an ssd node, runs on a1.
        rs(rs_pod("needs-ssd", "d", "a1", 100).required_node_affinity(vec![ssd])),
        // Anti-affinity: x1 and x2 share a2.
        rs(rs_pod("x1", "x", "a2", 100).pod_anti_affinity(anti.clone())),
        rs(rs_pod("x2", "x", "a2", 100).pod_anti_affinity(anti)),
        // A bystander that must not move.
        rs(rs_pod("quiet", "q", "a1", 100)),
    ];
    // Spread: four of app=s in zone a, none in zone b.
    for (i, n) in ["a1", "a1", "a2", "a2"].iter().enumerate() {
        pods.push(rs(rs_pod(&format!("s{i}"), "s", n, 100).spread(spread.clone())));
    }
    cluster(nodes, pods)
}

#[test]
fn the_descheduler_strategies_select_the_violating_pods() {
    let state = violating();
    let selected =
        select(&state, &|p: &Pod| super::evictor::filter(p, &EvictorOptions::default()).is_ok());
    let got: Vec<(String, Deschedule)> =
        selected.iter().map(|s| (s.pod.clone(), s.strategy)).collect();
    let mut spread: Vec<&str> = got
        .iter()
        .filter(|(_, s)| *s == Deschedule::TopologySpreadConstraint)
        .map(|(p, _)| p.as_str())
        .collect();
    spread.sort();
    assert_eq!(
        got.iter()
            .filter(|(_, s)| *s != Deschedule::TopologySpreadConstraint)
            .cloned()
            .collect::<Vec<_>>(),
        vec![
            ("ns/needs-ssd".to_string(), Deschedule::NodeAffinity),
            ("ns/tainted".to_string(), Deschedule::NodeTaints),
            // Equal priorities: the first by name goes, and x2 no longer violates.
            ("ns/x1".to_string(), Deschedule::InterPodAntiAffinity),
        ]
    );
    // Domains a:4, b:0, average 2: balanceDomains moves min(⌈4−2⌉, ⌈2−0⌉, ⌈(4−1)/2⌉) = 2.
    assert_eq!(spread.len(), 2, "{got:?}");
}

#[test]
fn fix_moves_exactly_the_violating_pods_to_valid_nodes() {
    let state = violating();
    let r = run(&state, &[], opts(Objective::Fix));
    let s = summary(&r);
    let selected: BTreeSet<String> =
        select(&state, &|p: &Pod| super::evictor::filter(p, &EvictorOptions::default()).is_ok())
            .into_iter()
            .map(|s| s.pod)
            .collect();
    assert_eq!(moved(&r), selected, "fix moves exactly the selected pods");
    assert_eq!(s.violations_fixed, 5, "{s:#?}");
    assert!(s.violations_after.is_empty(), "nothing is selected afterwards: {s:#?}");
    let to = |pod: &str| r.plan.moves.iter().find(|m| m.pod == pod).map(|m| m.to.as_str());
    assert_eq!(to("ns/needs-ssd"), Some("b2"));
    assert_ne!(to("ns/tainted"), Some("t1"));
    for m in &r.plan.moves {
        assert!(!m.reason.is_empty(), "fix moves say which strategy selected them");
    }
}

#[test]
fn fix_reports_a_violating_pod_with_no_valid_node_as_unfixable() {
    let mut state = violating();
    // A pod needing a label no node has, on a node that lacks it.
    let nowhere = node_term(vec![Requirement::new("gpu", MatchOp::In, &["h100"])]);
    let p = rs(rs_pod("needs-gpu", "g", "a1", 100).required_node_affinity(vec![nowhere]));
    let i = state.node_index("a1").unwrap();
    state.nodes[i].add_pod(Arc::new(p));
    let r = run(&state, &[], opts(Objective::Fix));
    assert!(!moved(&r).contains("ns/needs-gpu"));
    // descheduler's NodeFit gate leaves it unselected: it fits no node at all.
    let selected =
        select(&state, &|p: &Pod| super::evictor::filter(p, &EvictorOptions::default()).is_ok());
    assert!(!selected.iter().any(|s| s.pod == "ns/needs-gpu"));

    // A taint violator that is too big for every other node is selected but unfixable.
    // A taint violator whose nodeSelector only the tainted node matches is selected (the taint
    // strategy has no fit gate) but unfixable.
    let mut state = violating();
    let i = state.node_index("t1").unwrap();
    state.nodes[i].labels.insert("pool".into(), "infra".into());
    let pinned = rs(rs_pod("pinned", "pinned", "t1", 100).node_selector("pool", "infra"));
    state.nodes[i].add_pod(Arc::new(pinned));
    let r = run(&state, &[], opts(Objective::Fix));
    assert!(!moved(&r).contains("ns/pinned"));
    let u = summary(&r).unmoved.iter().find(|u| u.pod == "ns/pinned").expect("reported");
    assert!(u.reason.contains("unfixable") && u.reason.contains("node affinity/selector"), "{u:?}");
}

#[test]
fn waves_order_a_move_after_the_move_that_frees_its_room_and_after_related_moves_that_change_domains()
 {
    let a = Arc::new(rs(rs_pod("a", "a", "n1", 100)));
    let b = Arc::new(rs(rs_pod("b", "b", "n2", 100)));
    let c = Arc::new(rs(rs_pod("c", "c", "n3", 100)));
    let anti = Arc::new(rs(
        rs_pod("d", "d", "n4", 100).pod_anti_affinity(affinity_term(HOST, &[("app", "c")]))
    ));
    let steps = vec![
        Step { pod: a.clone(), from: 0, to: 4 },
        // Into n1, which a leaves: after a.
        Step { pod: b, from: 1, to: 0 },
        // Unrelated, elsewhere: wave 1.
        Step { pod: c, from: 2, to: 5 },
        // d's anti-affinity selects c: after c.
        Step { pod: anti, from: 3, to: 6 },
    ];
    let nodes: Vec<_> =
        (1..=7).map(|i| node(&format!("n{i}"), 4000, if i <= 4 { "a" } else { "b" })).collect();
    let state = cluster(nodes, vec![]);
    assert_eq!(assign_waves(&state, &steps, &[], &[]), vec![1, 2, 1, 2]);
    // A budget allowing one disruption over a and c splits them.
    let budget = Budget { selector: None, ..Budget::new("ns", "ac", &[], 0) };
    let mut with = budget.clone();
    with.selector = Some(crate::model::LabelSelector {
        requirements: vec![Requirement::new("app", MatchOp::In, &["a", "c"])],
    });
    assert_eq!(assign_waves(&state, &steps, &[with], &[1]), vec![1, 2, 2, 3]);

    // Zone anti-affinity between two pods whose moves stay in their zones: independent.
    let zone_anti = |name: &str, n: &str| {
        Arc::new(rs(
            rs_pod(name, "z", n, 100).pod_anti_affinity(affinity_term(ZONE, &[("app", "z")]))
        ))
    };
    let within = vec![
        Step { pod: zone_anti("z1", "n1"), from: 0, to: 1 },
        Step { pod: zone_anti("z2", "n5"), from: 4, to: 5 },
    ];
    assert_eq!(assign_waves(&state, &within, &[], &[]), vec![1, 1]);
    // The same pods moving across zones: ordered.
    let across = vec![
        Step { pod: zone_anti("z1", "n1"), from: 0, to: 4 },
        Step { pod: zone_anti("z2", "n6"), from: 5, to: 1 },
    ];
    assert_eq!(assign_waves(&state, &across, &[], &[]), vec![1, 2]);
}

#[test]
fn verify_waves_refuses_waves_that_disrupt_more_than_a_budget_allows() {
    let state = fragmented();
    let budgets = vec![Budget::new("ns", "web", &[("app", "web")], 5)];
    let mv = |pod: &str, from: &str, to: &str, wave: u32| Move {
        pod: pod.into(),
        from: from.into(),
        to: to.into(),
        wave,
        reason: String::new(),
    };
    let ok = vec![mv("ns/p1", "n1", "n2", 1), mv("ns/p3", "n3", "n2", 2)];
    assert_eq!(verify_waves(&state, &budgets, &ok), Ok(()));
    let bad = vec![mv("ns/p1", "n1", "n2", 1), mv("ns/p3", "n3", "n2", 1)];
    let err = verify_waves(&state, &budgets, &bad).unwrap_err();
    assert!(err.contains("ns/p3") && err.contains("pdb ns/web"), "{err}");
    let twice = vec![mv("ns/p1", "n1", "n2", 1), mv("ns/p1", "n2", "n3", 2)];
    assert!(verify_waves(&state, &budgets, &twice).unwrap_err().contains("second time"));
}

#[test]
fn check_moves_catches_a_move_onto_a_full_node() {
    let state = fragmented();
    let mut big = state.clone();
    let i = big.node_index("n2").unwrap();
    big.nodes[i].add_pod(Arc::new(rs(rs_pod("filler", "f", "n2", 2500))));
    let moves = vec![Move {
        pod: "ns/p1".into(),
        from: "n1".into(),
        to: "n2".into(),
        wave: 1,
        reason: String::new(),
    }];
    let report = check_moves(&big, &moves);
    assert!(!report.is_valid());
    assert!(check_moves(&state, &moves).is_valid());
}

#[test]
fn the_constraint_state_sees_required_pod_affinity_that_no_longer_holds() {
    use super::violations::ConstraintState;
    let follower = |node: &str| {
        rs(rs_pod("f", "f", node, 100).pod_affinity(affinity_term(ZONE, &[("app", "leader")])))
    };
    let leader = |node: &str| rs(rs_pod("l", "leader", node, 100));
    let self_affine =
        rs(rs_pod("s", "self", "a1", 100).pod_affinity(affinity_term(ZONE, &[("app", "self")])));
    let nodes = || vec![node("a1", 4000, "a"), node("a2", 4000, "a"), node("b1", 4000, "b")];
    let cases = [
        (
            "a follower with its leader in the zone holds",
            cluster(nodes(), vec![follower("a1"), leader("a2")]),
            false,
        ),
        (
            "a follower whose leader is in another zone does not",
            cluster(nodes(), vec![follower("a1"), leader("b1")]),
            true,
        ),
        ("the first pod of a self-affine group holds", cluster(nodes(), vec![self_affine]), false),
    ];
    for (name, state, violated) in cases {
        let cs = ConstraintState::of(&state);
        assert_eq!(
            cs.pods.iter().any(|(what, _)| *what == "pod_affinity"),
            violated,
            "{name}: {cs:?}"
        );
    }
}

#[test]
fn the_summary_counts_nodes_in_use_without_node_daemons() {
    let state = fragmented();
    assert_eq!(nodes_in_use(&state).len(), 6);
    let mut only_daemons = state.clone();
    only_daemons.nodes[0].remove_pod("ns", "p1");
    assert_eq!(nodes_in_use(&only_daemons).len(), 5);
}

// --- property test -------------------------------------------------------------------------

/// A random cluster: 3–6 nodes in two zones (the first one sometimes tainted `NoSchedule`
/// after its pods landed), pods of a few ReplicaSets (some with required anti-affinity on
/// hostname or zone, required affinity on zone, or a zone spread constraint — some with a node
/// selector the constraint honors), some bare or emptyDir pods, a few DaemonSet pods; and
/// budgets allowing 1–2 disruptions per ReplicaSet.
fn arb_cluster() -> impl Strategy<Value = (ClusterState, Vec<Budget>)> {
    (
        3usize..=6,
        prop::collection::vec((0usize..6, 0usize..4, 100i64..=1500, 0u8..10), 4..20),
        0u8..4,
        any::<bool>(),
    )
        .prop_map(|(n, pods, budgeted, taint)| {
            let nodes: Vec<_> = (0..n)
                .map(|i| node(&format!("n{i}"), 4000, if i % 2 == 0 { "a" } else { "b" }))
                .collect();
            let mut state = cluster(nodes, vec![]);
            for (k, (on, set, cpu, kind)) in pods.into_iter().enumerate() {
                let on = on % n;
                let name = format!("n{on}");
                let app = format!("rs{set}");
                let mut b = rs_pod(&format!("p{k}"), &app, &name, cpu);
                if set == 1 {
                    b = b.pod_anti_affinity(affinity_term(HOST, &[("app", "rs1")]));
                }
                if set == 2 {
                    let skew = if kind % 2 == 0 { 1 } else { 2 };
                    b = b.spread(spread_constraint(
                        skew,
                        ZONE,
                        UnsatisfiableAction::DoNotSchedule,
                        &[("app", "rs2")],
                    ));
                    if kind == 3 {
                        // Honored node selection: only zone-b nodes count for this pod.
                        b = b.node_selector(ZONE, "b");
                    }
                }
                if set == 3 && kind >= 4 {
                    b = b.pod_anti_affinity(affinity_term(ZONE, &[("app", "rs3")]));
                }
                if set == 0 && kind == 5 {
                    b = b.pod_affinity(affinity_term(ZONE, &[("app", "rs0")]));
                }
                let mut pod = match kind {
                    0 => b.obj(),
                    1 => owned(b, "DaemonSet", "ds"),
                    _ => rs(b),
                };
                pod.has_local_storage = kind == 2;
                let i = state.node_index(&name).unwrap();
                // Keep the snapshot itself within capacity.
                if state.nodes[i].requested.milli_cpu + pod.requests.milli_cpu <= 4000 {
                    state.nodes[i].add_pod(Arc::new(pod));
                }
            }
            if taint {
                state.nodes[0].taints.push(crate::model::Taint {
                    key: "maintenance".into(),
                    value: String::new(),
                    effect: TaintEffect::NoSchedule,
                });
            }
            let budgets = (0..budgeted)
                .map(|s| {
                    let app = format!("rs{s}");
                    let count = state
                        .nodes
                        .iter()
                        .flat_map(|n| &n.pods)
                        .filter(|p| p.labels.get("app") == Some(&app))
                        .count();
                    Budget::new(
                        "ns",
                        &app,
                        &[("app", app.as_str())],
                        count as i32 - 1 - i32::from(s % 2),
                    )
                })
                .collect();
            (state, budgets)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_plan_is_valid_wave_by_wave_and_keeps_every_budget(
        (state, budgets) in arb_cluster(),
        objective in prop_oneof![Just(Objective::Pack), Just(Objective::Balance), Just(Objective::Fix)],
        k in prop::option::of(0usize..8),
    ) {
        let options = RebalanceOptions { objective, max_moves: k, ..RebalanceOptions::default() };
        let r = rebalance(&state, &budgets, &SchedulerConfig::default(), &options).unwrap();
        prop_assert!(r.check.is_valid(), "{:#?}\n{:#?}", r.check, r.plan.moves);
        prop_assert_eq!(verify_waves(&state, &budgets, &r.plan.moves), Ok(()));
        prop_assert!(r.plan.moves.len() <= k.unwrap_or(usize::MAX));
        let keys: BTreeSet<&str> = r.plan.moves.iter().map(|m| m.pod.as_str()).collect();
        prop_assert_eq!(keys.len(), r.plan.moves.len(), "each pod moves at most once");
        for m in &r.plan.moves {
            let pod = state.nodes.iter().flat_map(|n| &n.pods).find(|p| p.key() == m.pod).unwrap();
            prop_assert!(pod.owner.as_ref().is_some_and(|o| o.kind == "ReplicaSet"), "{:?}", m);
            prop_assert!(!pod.has_local_storage, "{:?}", m);
        }
        // The summary adds up; pack never puts a node in use that was not.
        let s = r.plan.summary.rebalance.as_ref().unwrap();
        prop_assert_eq!(
            s.nodes_in_use_before + s.nodes_newly_used.len() - s.nodes_freed.len(),
            s.nodes_in_use_after
        );
        if objective == Objective::Pack {
            prop_assert!(s.nodes_newly_used.is_empty(), "{:?}", s.nodes_newly_used);
        }
        // The state after the moves breaks nothing that held before.
        let before = super::violations::ConstraintState::of(&state);
        prop_assert_eq!(super::violations::ConstraintState::of(&r.after).no_worse_than(&before), Ok(()));
    }
}
