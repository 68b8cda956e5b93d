//! Synthetic clusters of any size, built in memory, for benchmarking and testing matrix
//! evaluation (`benches/eval.rs`, `tests/all/cpu_parallel.rs`).
//!
//! Input: a number of pod classes and of nodes. Output: a [`ClusterState`] and one pending pod
//! per class, every pod in a class of its own, and a plugin mix that exercises every filter and
//! score of the default profile: nodes in 3 zones and racks of 20, 4 instance sizes, label
//! pools, `NoSchedule`, `PreferNoSchedule` and `NoExecute` taints, cordoned nodes, images and
//! two bound pods each (some with host ports or required anti-affinity); classes that vary their
//! requests, node selectors, required and preferred node affinity, tolerations, host ports,
//! images, topology spread constraints (`DoNotSchedule` and `ScheduleAnyway`) and pod
//! (anti-)affinity. Deterministic: the same sizes give the same cluster. No upstream
//! counterpart.

use crate::model::testing::{
    GI, MI, NodeBuilder, PodBuilder, affinity_term, cluster, node_term, spread_constraint,
};
use crate::model::{
    ClusterState, MatchOp, Pod, Requirement, TaintEffect, TolerationOperator, UnsatisfiableAction,
};

/// The zone label key.
pub const ZONE: &str = "topology.kubernetes.io/zone";
/// The rack label key (racks of 20 nodes).
pub const RACK: &str = "topology.example.com/rack";
/// The instance-type label key.
pub const INSTANCE_TYPE: &str = "node.kubernetes.io/instance-type";

const APPS: [&str; 5] = ["web", "db", "cache", "batch", "api"];
const APP_IMAGE: &str = "registry.example/app:1.0";
const ML_IMAGE: &str = "registry.example/ml:2.1";

/// A synthetic cluster and its pending pods (one per class).
#[derive(Debug, Clone)]
pub struct Synthetic {
    /// The nodes and their bound pods.
    pub state: ClusterState,
    /// One pending pod per class, each in a class of its own.
    pub pending: Vec<Pod>,
}

/// The name of node `i` (zero-padded, so that name order is index order).
pub fn node_name(i: usize) -> String {
    format!("node-{i:06}")
}

/// Node `i`: its size, labels, taints and images.
fn node(i: usize) -> crate::model::Node {
    node_of_kind(i, &node_name(i))
}

/// Node `name` with node `i`'s size, labels, taints and images.
fn node_of_kind(i: usize, name: &str) -> crate::model::Node {
    // Sizes interleave irregularly with zones, so that every zone has every size.
    let size = (i * 7 + i / 3) % 4;
    let mut b = NodeBuilder::new(name)
        .cpu([8_000, 16_000, 32_000, 64_000][size])
        .memory([32 * GI, 64 * GI, 128 * GI, 256 * GI][size])
        .ephemeral_storage(500 * GI)
        .pods(110)
        .label(ZONE, ["zone-a", "zone-b", "zone-c"][i % 3])
        .label(RACK, &format!("rack-{}", i / 20))
        .label(INSTANCE_TYPE, ["m5.2xlarge", "m5.4xlarge", "m5.8xlarge", "m5.16xlarge"][size])
        .label("pool", &format!("pool-{}", i % 6))
        .label("disk", if i.is_multiple_of(4) { "ssd" } else { "hdd" });
    if i.is_multiple_of(2) {
        b = b.image(&[APP_IMAGE], 300 * MI);
    }
    if i.is_multiple_of(3) {
        b = b.image(&[ML_IMAGE], 2 * GI);
    }
    if i.is_multiple_of(10) {
        b = b.taint("dedicated", "gpu", TaintEffect::NoSchedule).scalar("nvidia.com/gpu", 8);
    }
    if i.is_multiple_of(7) {
        b = b.taint("spot", "true", TaintEffect::PreferNoSchedule);
    }
    if i % 13 == 5 {
        b = b.taint("maintenance", "true", TaintEffect::NoExecute);
    }
    if i % 97 == 11 {
        b = b.unschedulable();
    }
    b.obj()
}

/// The two pods bound to node `i`.
fn bound(i: usize) -> [Pod; 2] {
    bound_of_kind(i, i)
}

/// The two pods of node `i` bound to node `at`.
fn bound_of_kind(i: usize, at: usize) -> [Pod; 2] {
    let name = node_name(at);
    std::array::from_fn(|j| {
        let mut b = PodBuilder::new("prod", &format!("running-{at}-{j}"))
            .cpu([250, 500, 1_000, 2_000][(i + 3 * j) % 4])
            .memory([512 * MI, GI, 2 * GI, 4 * GI][(i / 2 + j) % 4])
            // Zone a runs more databases than the others: spreading databases over zones
            // then rejects its nodes.
            .label(
                "app",
                if j == 1 && i.is_multiple_of(3) { "db" } else { APPS[(i + j) % APPS.len()] },
            )
            .image(APP_IMAGE)
            .node(&name);
        if j == 0 && i.is_multiple_of(11) {
            b = b.host_port("", "TCP", 8080);
        }
        if j == 1 && i.is_multiple_of(50) {
            b = b.pod_anti_affinity(affinity_term("kubernetes.io/hostname", &[("app", "batch")]));
        }
        b.obj()
    })
}

/// The pending pod of class `c`.
fn class_pod(c: usize) -> Pod {
    let app = APPS[c % APPS.len()];
    let mut b = PodBuilder::new(["prod", "staging"][c % 2], &format!("pending-{c}"))
        .cpu(100 + (c % 40) as i64 * 50)
        .memory((128 + ((c / 40) % 32) as i64 * 64) * MI)
        .label("app", app)
        .label("class", &format!("c{c}"))
        .priority([0, 1_000][(c / 2) % 2])
        .image(if c % 3 == 2 { ML_IMAGE } else { APP_IMAGE });
    if c.is_multiple_of(3) {
        b = b.node_selector("disk", "ssd");
    }
    if c % 8 == 5 {
        b = b.required_node_affinity(vec![node_term(vec![Requirement::new(
            "pool",
            MatchOp::In,
            &["pool-1", "pool-2", "pool-3"],
        )])]);
    }
    if c % 7 == 3 {
        b = b.preferred_node_affinity(
            20,
            node_term(vec![Requirement::new(INSTANCE_TYPE, MatchOp::In, &["m5.16xlarge"])]),
        );
    }
    if c.is_multiple_of(4) {
        b = b.toleration(
            "spot",
            TolerationOperator::Exists,
            "",
            Some(TaintEffect::PreferNoSchedule),
        );
    }
    if c.is_multiple_of(10) {
        b = b
            .toleration(
                "dedicated",
                TolerationOperator::Equal,
                "gpu",
                Some(TaintEffect::NoSchedule),
            )
            .scalar("nvidia.com/gpu", 1);
    }
    if c % 13 == 1 {
        b = b.toleration("maintenance", TolerationOperator::Exists, "", None);
    }
    if c.is_multiple_of(17) {
        b = b.host_port("", "TCP", 8080);
    }
    if c % 5 == 1 {
        b = b.spread(spread_constraint(
            1,
            ZONE,
            UnsatisfiableAction::DoNotSchedule,
            &[("app", "db")],
        ));
    }
    if c % 9 == 4 {
        b = b.spread(spread_constraint(
            2,
            RACK,
            UnsatisfiableAction::ScheduleAnyway,
            &[("app", "web")],
        ));
    }
    if c % 6 == 2 {
        b = b.pod_anti_affinity(affinity_term("kubernetes.io/hostname", &[("app", "cache")]));
    }
    if c % 11 == 7 {
        b = b.preferred_pod_affinity(50, affinity_term(ZONE, &[("app", "db")]));
    }
    if c % 19 == 3 {
        b = b.preferred_pod_anti_affinity(30, affinity_term(RACK, &[("app", app)]));
    }
    b.obj()
}

/// A cluster of `nodes` nodes (two bound pods each) and `classes` pending pods, each in a
/// class of its own.
pub fn cluster_of(classes: usize, nodes: usize) -> Synthetic {
    let node_objs: Vec<_> = (0..nodes).map(node).collect();
    let bound_pods: Vec<Pod> = (0..nodes).flat_map(bound).collect();
    Synthetic {
        state: cluster(node_objs, bound_pods),
        pending: (0..classes).map(class_pod).collect(),
    }
}

/// [`cluster_of`] with `kinds` distinct nodes repeated, as the many equal nodes of node pools:
/// node `i` has node `i % kinds`'s size, labels, taints, images and bound pods under its own
/// name (and `kubernetes.io/hostname`).
pub fn cluster_of_kinds(classes: usize, nodes: usize, kinds: usize) -> Synthetic {
    let kinds = kinds.max(1);
    let node_objs: Vec<_> = (0..nodes).map(|i| node_of_kind(i % kinds, &node_name(i))).collect();
    let bound_pods: Vec<Pod> = (0..nodes).flat_map(|i| bound_of_kind(i % kinds, i)).collect();
    Synthetic {
        state: cluster(node_objs, bound_pods),
        pending: (0..classes).map(class_pod).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::classes::classify;

    #[test]
    fn every_pending_pod_is_a_class_of_its_own() {
        let s = cluster_of(300, 40);
        let classes = classify(&s.pending).expect("classifies");
        assert_eq!(classes.len(), 300);
        assert_eq!(s.state.nodes.len(), 40);
        assert_eq!(s.state.nodes.iter().map(|n| n.pods.len()).sum::<usize>(), 80);
    }

    #[test]
    fn the_same_sizes_give_the_same_cluster() {
        let (a, b) = (cluster_of(30, 25), cluster_of(30, 25));
        assert_eq!(a.pending, b.pending);
        assert_eq!(a.state.nodes.len(), b.state.nodes.len());
        for (x, y) in a.state.nodes.iter().zip(&b.state.nodes) {
            assert_eq!((&x.name, &x.labels, &x.taints), (&y.name, &y.labels, &y.taints));
        }
    }
}
