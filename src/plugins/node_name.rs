//! NodeName: a filter that, when the pod names a node in `spec.nodeName`, rejects every other
//! node.
//!
//! Input: the pod's `spec.nodeName` and the node's name. Output: a filter [`Status`]
//! (`UnschedulableAndUnresolvable` with `"node(s) didn't match the requested node name"`).
//!
//! Upstream (v1.35): `pkg/scheduler/framework/plugins/nodename/node_name.go` (`Fits`: an empty
//! `nodeName` fits every node).

use crate::framework::{Code, Status};
use crate::model::{Node, Pod};

/// The filter reason when the pod asks for another node.
pub const ERR_REASON: &str = "node(s) didn't match the requested node name";

/// The NodeName plugin. It has no arguments.
#[derive(Debug, Clone, Copy, Default)]
pub struct NodeName;

/// Whether the pod may run on the node by name: it names no node, or names this one (upstream
/// `nodename.Fits`).
pub fn fits(pod: &Pod, node: &Node) -> bool {
    pod.node_name.as_deref().is_none_or(|n| n.is_empty() || n == node.name)
}

impl NodeName {
    /// The plugin name used in profiles and statuses.
    pub const NAME: &str = "NodeName";

    /// The plugin.
    pub fn new() -> Self {
        NodeName
    }

    /// Rejects the node if the pod's `spec.nodeName` names a different node.
    pub fn filter(&self, pod: &Pod, node: &Node) -> Status {
        if fits(pod, node) {
            Status::success()
        } else {
            Status::new(Code::UnschedulableAndUnresolvable, [ERR_REASON]).with_plugin(Self::NAME)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::testing::{NodeBuilder, PodBuilder};

    /// Cases from upstream `TestNodeName`.
    #[test]
    fn pods_naming_a_node_fit_only_that_node() {
        let rejected = Status::new(Code::UnschedulableAndUnresolvable, [ERR_REASON])
            .with_plugin(NodeName::NAME);
        let mut empty_name = PodBuilder::new("ns", "p").obj();
        empty_name.node_name = Some(String::new());
        let cases: Vec<(&str, Pod, Node, Status)> = vec![
            (
                "a pod naming no node fits any node",
                PodBuilder::new("ns", "p").obj(),
                NodeBuilder::new("foo").obj(),
                Status::success(),
            ),
            (
                "a pod with an empty node name fits any node",
                empty_name,
                NodeBuilder::new("foo").obj(),
                Status::success(),
            ),
            (
                "a pod naming the node fits it",
                PodBuilder::new("ns", "p").node("foo").obj(),
                NodeBuilder::new("foo").obj(),
                Status::success(),
            ),
            (
                "a pod naming another node is rejected",
                PodBuilder::new("ns", "p").node("bar").obj(),
                NodeBuilder::new("foo").obj(),
                rejected,
            ),
        ];
        let pl = NodeName::new();
        for (name, pod, node, want) in cases {
            assert_eq!(pl.filter(&pod, &node), want, "{name}");
        }
    }
}
