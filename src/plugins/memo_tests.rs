//! The inter-pod plugins' maintained counts ([`super::node_memo`]) equal a fresh recount:
//! one plugin instance follows a random sequence of pods assumed onto and removed from random
//! nodes (and probes of diverging clones, as preemption's dry runs make), and after every step
//! its memoized PreFilter and PreScore states equal the ones computed by walking every pod.

use std::sync::Arc;

use proptest::prelude::*;

use super::interpodaffinity::InterPodAffinity;
use super::podtopologyspread::PodTopologySpread;
use crate::framework::args::{InterPodAffinityArgs, PodTopologySpreadArgs};
use crate::model::testing::{NodeBuilder, PodBuilder, affinity_term, cluster, spread_constraint};
use crate::model::{ClusterState, Pod, TaintEffect, UnsatisfiableAction};

const HOST: &str = "kubernetes.io/hostname";
const ZONE: &str = "zone";

/// A pod of kind `k` (labels, namespace and terms vary with it) named `name`.
fn pod(name: &str, k: u8) -> Pod {
    let app = ["a0", "a1", "a2"][usize::from(k % 3)];
    let ns = if k % 5 == 4 { "e" } else { "d" };
    let mut b = PodBuilder::new(ns, name).label("app", app);
    b = match k % 8 {
        1 => b.pod_anti_affinity(affinity_term(HOST, &[("app", app)])),
        2 => b.pod_affinity(affinity_term(ZONE, &[("app", "a2")])),
        3 => b.preferred_pod_affinity(7, affinity_term(ZONE, &[("app", "a1")])),
        4 => b.preferred_pod_anti_affinity(3, affinity_term(HOST, &[("app", "a0")])),
        5 => b.spread(spread_constraint(
            1,
            ZONE,
            UnsatisfiableAction::DoNotSchedule,
            &[("app", app)],
        )),
        6 => b
            .pod_anti_affinity(affinity_term(ZONE, &[("app", "a1")]))
            .preferred_pod_affinity(2, affinity_term(HOST, &[("app", app)])),
        7 => b.spread(spread_constraint(
            2,
            HOST,
            UnsatisfiableAction::DoNotSchedule,
            &[("app", "a0")],
        )),
        _ => b,
    };
    if k >= 16 {
        b = b.terminating();
    }
    b.obj()
}

/// `(zone or none, tainted)` per node.
fn nodes(specs: &[(u8, bool)]) -> ClusterState {
    let built = specs
        .iter()
        .enumerate()
        .map(|(i, &(zone, tainted))| {
            let name = format!("n{i}");
            let mut b = NodeBuilder::new(&name).label(HOST, &name);
            if zone < 3 {
                b = b.label(ZONE, &format!("z{zone}"));
            }
            if tainted {
                b = b.taint("t", "v", TaintEffect::NoSchedule);
            }
            b.obj()
        })
        .collect();
    let mut c = cluster(built, vec![]);
    c.namespace_labels.insert("d".into(), [("team".to_string(), "x".to_string())].into());
    c
}

/// One step: assume a pod of a kind onto a node, remove the n-th pod of the cluster, or probe
/// a clone with the n-th pod removed (the original is unchanged).
#[derive(Debug, Clone)]
enum Step {
    Assume(u8, prop::sample::Index),
    Remove(prop::sample::Index),
    ProbeClone(prop::sample::Index),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (0u8..24, any::<prop::sample::Index>()).prop_map(|(k, n)| Step::Assume(k, n)),
        2 => any::<prop::sample::Index>().prop_map(Step::Remove),
        1 => any::<prop::sample::Index>().prop_map(Step::ProbeClone),
    ]
}

/// The `(node, pod name)` of the `at`-th bound pod, if any.
fn nth_pod(c: &ClusterState, at: &prop::sample::Index) -> Option<(usize, Arc<Pod>)> {
    let all: Vec<(usize, Arc<Pod>)> = c
        .nodes
        .iter()
        .enumerate()
        .flat_map(|(i, n)| n.pods.iter().map(move |p| (i, Arc::clone(p))))
        .collect();
    (!all.is_empty()).then(|| all[at.index(all.len())].clone())
}

struct Plugins {
    ipa: InterPodAffinity,
    pts: PodTopologySpread,
}

/// Every probe pod's memoized states equal fresh ones on `c`.
fn agree(pl: &Plugins, c: &ClusterState, probes: &[Pod]) -> Result<(), TestCaseError> {
    for p in probes {
        prop_assert_eq!(pl.ipa.pre_filter(p, c), pl.ipa.pre_filter_fresh(p, c), "IPA PreFilter");
        prop_assert_eq!(pl.ipa.pre_score(p, c, &[]), pl.ipa.pre_score_fresh(p, c), "IPA PreScore");
        prop_assert_eq!(pl.pts.pre_filter(p, c), pl.pts.pre_filter_fresh(p, c), "PTS PreFilter");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn maintained_inter_pod_counts_equal_a_fresh_recount_after_every_assume(
        specs in prop::collection::vec((0u8..4, any::<bool>()), 1..7),
        steps in prop::collection::vec(step(), 1..40),
        hard_weight in prop_oneof![Just(1i32), Just(0)],
    ) {
        let mut c = nodes(&specs);
        let pl = Plugins {
            ipa: InterPodAffinity::new(InterPodAffinityArgs {
                hard_pod_affinity_weight: hard_weight,
                ..Default::default()
            }),
            pts: PodTopologySpread::new(PodTopologySpreadArgs::default()),
        };
        let probes: Vec<Pod> = (0..8).map(|k| pod(&format!("in{k}"), k)).collect();
        agree(&pl, &c, &probes)?;
        for (s, step) in steps.iter().enumerate() {
            match step {
                Step::Assume(kind, at) => {
                    let n = at.index(c.nodes.len());
                    let mut p = pod(&format!("p{s}"), *kind);
                    p.node_name = Some(c.nodes[n].name.clone());
                    c.nodes[n].add_pod(Arc::new(p));
                }
                Step::Remove(at) => {
                    if let Some((n, p)) = nth_pod(&c, at) {
                        c.nodes[n].remove_pod(&p.namespace, &p.name);
                    }
                }
                Step::ProbeClone(at) => {
                    let mut clone = c.clone();
                    if let Some((n, p)) = nth_pod(&clone, at) {
                        clone.nodes[n].remove_pod(&p.namespace, &p.name);
                    }
                    agree(&pl, &clone, &probes)?;
                }
            }
            agree(&pl, &c, &probes)?;
        }
    }
}
