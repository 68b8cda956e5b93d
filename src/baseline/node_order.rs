//! The order in which kube-scheduler lists nodes: round-robin over zones.
//!
//! Counterpart: `pkg/scheduler/backend/cache/node_tree.go` (`nodeTree.list`) and
//! `k8s.io/component-helpers/node/topology` (`GetZoneKey`), v1.35. The scheduler's snapshot
//! lists nodes by taking the first node of every zone, then the second of every zone, and so on;
//! zones and the nodes within a zone keep the order in which they were added (here: node name
//! order, as an informer's initial list returns them).

use crate::model::Node;

const ZONE: &str = "topology.kubernetes.io/zone";
const REGION: &str = "topology.kubernetes.io/region";
const BETA_ZONE: &str = "failure-domain.beta.kubernetes.io/zone";
const BETA_REGION: &str = "failure-domain.beta.kubernetes.io/region";

/// Upstream's zone key: `region + ":\x00:" + zone`, empty when the node has neither label.
pub fn zone_key(node: &Node) -> String {
    let get = |a: &str, b: &str| {
        node.labels.get(a).or_else(|| node.labels.get(b)).cloned().unwrap_or_default()
    };
    let zone = get(ZONE, BETA_ZONE);
    let region = get(REGION, BETA_REGION);
    if zone.is_empty() && region.is_empty() {
        return String::new();
    }
    format!("{region}:\x00:{zone}")
}

/// Indices of `nodes` (which are sorted by name) in the scheduler's listing order.
pub fn scheduler_node_order(nodes: &[Node]) -> Vec<usize> {
    let mut zones: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, node) in nodes.iter().enumerate() {
        let key = zone_key(node);
        match zones.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(i),
            None => zones.push((key, vec![i])),
        }
    }
    let mut order = Vec::with_capacity(nodes.len());
    let longest = zones.iter().map(|(_, m)| m.len()).max().unwrap_or(0);
    for round in 0..longest {
        for (_, members) in &zones {
            if let Some(&i) = members.get(round) {
                order.push(i);
            }
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::testing::NodeBuilder;

    #[test]
    fn nodes_are_listed_round_robin_across_zones_in_order_of_first_appearance() {
        let nodes = vec![
            NodeBuilder::new("a1").label(ZONE, "z1").obj(),
            NodeBuilder::new("a2").label(ZONE, "z1").obj(),
            NodeBuilder::new("a3").label(ZONE, "z1").obj(),
            NodeBuilder::new("b1").label(ZONE, "z2").obj(),
            NodeBuilder::new("c1").obj(),
        ];
        let names: Vec<&str> =
            scheduler_node_order(&nodes).into_iter().map(|i| nodes[i].name.as_str()).collect();
        assert_eq!(names, ["a1", "b1", "c1", "a2", "a3"]);
    }

    #[test]
    fn zone_key_joins_region_and_zone_like_upstream() {
        let n = NodeBuilder::new("n").label(REGION, "r").label(ZONE, "z").obj();
        assert_eq!(zone_key(&n), "r:\x00:z");
        assert_eq!(zone_key(&NodeBuilder::new("m").obj()), "");
    }
}
