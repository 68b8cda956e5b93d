//! NodeUnschedulable: a filter that rejects cordoned nodes (`spec.unschedulable: true`) unless
//! the pod tolerates the `node.kubernetes.io/unschedulable:NoSchedule` taint.
//!
//! Input: the pod's tolerations and the node's `unschedulable` flag. Output: a filter [`Status`]
//! (`UnschedulableAndUnresolvable` with `"node(s) were unschedulable"`, so preemption never
//! targets a cordoned node).
//!
//! Upstream (v1.35): `pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go`.
//! The toleration is checked against a taint with the key, an empty value and effect
//! `NoSchedule`, with upstream's `TolerationsTolerateTaint`.

use crate::framework::{Code, Status};
use crate::model::{Node, Pod, Taint, TaintEffect};
use crate::plugins::taint_toleration::tolerations_tolerate_taint;

/// The taint key a pod must tolerate to be placed on a cordoned node.
pub const TAINT_NODE_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";

/// The filter reason for a cordoned node.
pub const ERR_REASON_UNSCHEDULABLE: &str = "node(s) were unschedulable";

/// The NodeUnschedulable plugin. It has no arguments.
#[derive(Debug, Clone, Copy, Default)]
pub struct NodeUnschedulable;

impl NodeUnschedulable {
    /// The plugin name used in profiles and statuses.
    pub const NAME: &str = "NodeUnschedulable";

    /// The plugin.
    pub fn new() -> Self {
        NodeUnschedulable
    }

    /// Rejects a cordoned node unless the pod tolerates `node.kubernetes.io/unschedulable:NoSchedule`.
    pub fn filter(&self, pod: &Pod, node: &Node) -> Status {
        if !node.unschedulable {
            return Status::success();
        }
        let taint = Taint {
            key: TAINT_NODE_UNSCHEDULABLE.to_string(),
            value: String::new(),
            effect: TaintEffect::NoSchedule,
        };
        if tolerations_tolerate_taint(&pod.tolerations, &taint) {
            return Status::success();
        }
        Status::new(Code::UnschedulableAndUnresolvable, [ERR_REASON_UNSCHEDULABLE])
            .with_plugin(Self::NAME)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TolerationOperator::{Equal, Exists};
    use crate::model::testing::{NodeBuilder, PodBuilder};

    /// Cases from upstream `TestNodeUnschedulable`, plus toleration variants.
    #[test]
    fn cordoned_nodes_reject_pods_that_do_not_tolerate_the_unschedulable_taint() {
        let rejected = Status::new(Code::UnschedulableAndUnresolvable, [ERR_REASON_UNSCHEDULABLE])
            .with_plugin(NodeUnschedulable::NAME);
        let cordoned = NodeBuilder::new("n").unschedulable().obj();
        let normal = NodeBuilder::new("n").obj();
        let cases: Vec<(&str, Pod, &Node, Status)> = vec![
            (
                "a pod without tolerations is rejected by a cordoned node",
                PodBuilder::new("ns", "p").obj(),
                &cordoned,
                rejected.clone(),
            ),
            (
                "a pod without tolerations fits a schedulable node",
                PodBuilder::new("ns", "p").obj(),
                &normal,
                Status::success(),
            ),
            (
                "a pod tolerating the unschedulable NoSchedule taint fits a cordoned node",
                PodBuilder::new("ns", "p")
                    .toleration(TAINT_NODE_UNSCHEDULABLE, Exists, "", Some(TaintEffect::NoSchedule))
                    .obj(),
                &cordoned,
                Status::success(),
            ),
            (
                "an Equal toleration with an empty value tolerates the unschedulable taint",
                PodBuilder::new("ns", "p")
                    .toleration(TAINT_NODE_UNSCHEDULABLE, Equal, "", Some(TaintEffect::NoSchedule))
                    .obj(),
                &cordoned,
                Status::success(),
            ),
            (
                "an Equal toleration with a non-empty value does not tolerate the unschedulable taint",
                PodBuilder::new("ns", "p")
                    .toleration(
                        TAINT_NODE_UNSCHEDULABLE,
                        Equal,
                        "true",
                        Some(TaintEffect::NoSchedule),
                    )
                    .obj(),
                &cordoned,
                rejected.clone(),
            ),
            (
                "a toleration of every taint (empty key, Exists) lets the pod onto a cordoned node",
                PodBuilder::new("ns", "p").toleration("", Exists, "", None).obj(),
                &cordoned,
                Status::success(),
            ),
            (
                "a NoExecute toleration for the unschedulable key does not tolerate its NoSchedule taint",
                PodBuilder::new("ns", "p")
                    .toleration(TAINT_NODE_UNSCHEDULABLE, Exists, "", Some(TaintEffect::NoExecute))
                    .obj(),
                &cordoned,
                rejected.clone(),
            ),
        ];
        let pl = NodeUnschedulable::new();
        for (name, pod, node, want) in cases {
            assert_eq!(pl.filter(&pod, node), want, "{name}");
        }
    }
}
