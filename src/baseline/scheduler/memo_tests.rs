use proptest::prelude::*;

use super::*;
use crate::model::testing::{GI, NodeBuilder, PodBuilder, affinity_term, cluster};
use crate::model::{TaintEffect, TolerationOperator};

/// Pod shapes `(millicores, GiB)`: few, so that signatures repeat.
const SHAPES: [(i64, i64); 4] = [(500, 1), (1500, 2), (3000, 6), (6000, 12)];
const PRIORITIES: [i32; 3] = [0, 10, 100];

/// `(pod shape, priority, variant)` where variant 0 is plain, 1 never preempts, 2 tolerates
/// the taint, 3 has required anti-affinity (not node-local), 4 is selected by node label.
type PodSpec = (usize, usize, u8);

fn make_pod(name: &str, (shape, prio, variant): PodSpec) -> PodBuilder {
    let (cpu, gib) = SHAPES[shape];
    let mut b = PodBuilder::new("d", name)
        .cpu(cpu)
        .memory(gib * GI)
        .priority(PRIORITIES[prio])
        .label("app", &format!("a{shape}"));
    b = match variant {
        1 => b.preemption_never(),
        2 => b.toleration("dedicated", TolerationOperator::Equal, "batch", None),
        3 => b.pod_anti_affinity(affinity_term("kubernetes.io/hostname", &[("app", "a3")])),
        4 => b.node_selector("disk", "ssd"),
        _ => b,
    };
    b
}

fn instance() -> impl Strategy<Value = (ClusterState, Vec<Pod>)> {
    let node = (0usize..3, 0usize..3, any::<bool>(), 0u8..8);
    let pod = (0usize..4, 0usize..3, prop_oneof![6 => Just(0u8), 1 => 1u8..5]);
    (
        prop::collection::vec(node, 2..9),
        prop::collection::vec((pod.clone(), any::<prop::sample::Index>()), 0..24),
        prop::collection::vec(pod, 4..48),
    )
        .prop_map(|(nodes, bound, pending)| {
            let names: Vec<String> = (0..nodes.len()).map(|i| format!("n{i}")).collect();
            let built = nodes
                .iter()
                .enumerate()
                .map(|(i, &(cpu, mem, ssd, extra))| {
                    let mut b = NodeBuilder::new(&names[i])
                        .cpu([4000, 8000, 16000][cpu])
                        .memory([8, 16, 32][mem] * GI)
                        .pods(if extra == 0 { 3 } else { 110 })
                        .label("kubernetes.io/hostname", &names[i])
                        .label("disk", if ssd { "ssd" } else { "hdd" });
                    if extra == 1 {
                        b = b.taint("dedicated", "batch", TaintEffect::NoSchedule);
                    }
                    if extra == 2 {
                        b = b.unschedulable();
                    }
                    b.obj()
                })
                .collect();
            // Bound pods go where they fit (else they are left out).
            let mut state = cluster(built, vec![]);
            for (k, (spec, at)) in bound.into_iter().enumerate() {
                let pod = make_pod(&format!("b{k}"), spec).started(100 + k as i64).obj();
                let i = at.index(state.nodes.len());
                let node = &state.nodes[i];
                if node.requested.milli_cpu + pod.requests.milli_cpu <= node.allocatable.milli_cpu
                    && node.requested.memory + pod.requests.memory <= node.allocatable.memory
                {
                    let mut pod = pod;
                    pod.node_name = Some(node.name.clone());
                    state.nodes[i].add_pod(Arc::new(pod));
                }
            }
            let pending = pending
                .into_iter()
                .enumerate()
                .map(|(k, spec)| make_pod(&format!("p{k:02}"), spec).created(k as i64).obj())
                .collect();
            (state, pending)
        })
}

/// Every cycle's outcome, as text (node names, victims, the full message and reasons).
fn outcomes(state: &ClusterState, pending: &[Pod], memoize: bool) -> Vec<String> {
    let config = SchedulerConfig::default();
    let frameworks = frameworks_for(&config, pending).expect("default profile builds");
    let mut sched = Baseline::new(state.clone(), BaselineOptions { seed: 7, ..Default::default() });
    sched.memoize = memoize;
    let mut out = Vec::new();
    for i in queue_order(pending) {
        let pod = &pending[i];
        let fw = &frameworks[&pod.scheduler_name];
        let line = match sched.schedule_one(fw, pod) {
            CycleResult::Scheduled(n) => {
                format!("{} → {}", pod.name, sched.cluster.nodes[n].name)
            }
            CycleResult::Preempted(n, victims) => {
                let v: Vec<String> = victims.iter().map(|v| v.name.clone()).collect();
                format!("{} → {} evicting {v:?}", pod.name, sched.cluster.nodes[n].name)
            }
            CycleResult::Unschedulable(err) => {
                format!("{}: {} {:?}", pod.name, err.message(), err.reasons())
            }
            CycleResult::NoNodes => format!("{}: no nodes", pod.name),
            CycleResult::Error(e) => format!("{}: error {e}", pod.name),
        };
        out.push(line);
    }
    out
}

#[test]
fn a_repeated_infeasible_pod_reuses_the_verdicts_and_the_message_stays_upstreams() {
    // Two nodes whose pods leave too little room: the second identical pod hits the memo.
    let state = cluster(
        vec![
            NodeBuilder::new("a").cpu(2000).memory(4 * GI).obj(),
            NodeBuilder::new("b").cpu(2000).memory(2 * GI).obj(),
        ],
        vec![
            PodBuilder::new("d", "x").cpu(1000).memory(GI).node("a").obj(),
            PodBuilder::new("d", "y").cpu(100).memory(GI).node("b").obj(),
        ],
    );
    let big = |name: &str| PodBuilder::new("d", name).cpu(1500).memory(2 * GI).obj();
    let pending = vec![big("p1"), big("p2")];
    let want = "0/2 nodes are available: 1 Insufficient cpu, 1 Insufficient memory. \
                    no new claims to deallocate, preemption: 0/2 nodes are available: 2 No preemption victims found for \
                    incoming pod.";
    let with = outcomes(&state, &pending, true);
    assert_eq!(with, outcomes(&state, &pending, false));
    for line in &with {
        assert!(line.contains(want), "{line}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn runs_with_and_without_the_memo_agree_cycle_by_cycle((state, pending) in instance()) {
        prop_assert_eq!(outcomes(&state, &pending, true), outcomes(&state, &pending, false));
    }

    #[test]
    fn the_cheap_filter_and_score_entry_points_agree_with_the_full_ones(
        (state, pending) in instance(),
    ) {
        let fw = Framework::for_scheduler(&SchedulerConfig::default(), "default-scheduler")
            .expect("default profile builds");
        for pod in &pending {
            let PreFilterOutcome::Proceed(cycle) = fw.pre_filter(pod, &state) else {
                continue;
            };
            let mut feasible = Vec::new();
            for (n, node) in state.nodes.iter().enumerate() {
                let passes = fw.passes(&cycle, pod, node);
                prop_assert_eq!(passes, fw.filter(&cycle, pod, node).is_success());
                if passes {
                    feasible.push(n);
                }
            }
            let totals = fw.score_totals(pod, &state, &feasible).expect("scores");
            let full: Vec<i64> = fw
                .score(pod, &state, &feasible)
                .expect("scores")
                .iter()
                .map(|s| s.total)
                .collect();
            prop_assert_eq!(totals, full);
        }
    }
}
