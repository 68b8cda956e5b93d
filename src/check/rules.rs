//! The checker's own predicates: taints and tolerations, node selection, host ports, pod
//! affinity term matching. Written from upstream's definitions, independently of
//! `crate::plugins`, so that the checker can judge them.
//!
//! Upstream (v1.35): `k8s.io/api/core/v1/toleration.go` (`ToleratesTaint`),
//! `pkg/scheduler/framework/types.go` (`HostPortInfo.CheckConflict`, `AffinityTerm.Matches`),
//! `component-helpers/scheduling/corev1/nodeaffinity` (`GetRequiredNodeAffinity`),
//! `pkg/scheduler/framework/plugins/interpodaffinity/plugin.go`
//! (`mergeAffinityTermNamespacesIfNotEmpty`).

use crate::model::{
    ClusterState, HostPort, LabelSelector, Labels, Node, Pod, PodAffinityTerm, Taint, TaintEffect,
    Toleration, TolerationOperator,
};

/// The taint NodeUnschedulable checks cordoned nodes against.
pub const UNSCHEDULABLE_TAINT_KEY: &str = "node.kubernetes.io/unschedulable";

/// Whether one toleration tolerates one taint (upstream `Toleration.ToleratesTaint`): an empty
/// effect matches every effect, an empty key every key; `Exists` ignores the value, `Equal`
/// compares it.
pub fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    if toleration.effect.is_some_and(|e| e != taint.effect) {
        return false;
    }
    if !toleration.key.is_empty() && toleration.key != taint.key {
        return false;
    }
    match toleration.operator {
        TolerationOperator::Exists => true,
        TolerationOperator::Equal => toleration.value == taint.value,
    }
}

/// Whether any of the pod's tolerations tolerates `taint`.
pub fn pod_tolerates(pod: &Pod, taint: &Taint) -> bool {
    pod.tolerations.iter().any(|t| tolerates(t, taint))
}

/// The first `NoSchedule` or `NoExecute` taint of the node that the pod does not tolerate.
pub fn untolerated_hard_taint<'n>(pod: &Pod, node: &'n Node) -> Option<&'n Taint> {
    node.taints.iter().find(|t| {
        matches!(t.effect, TaintEffect::NoSchedule | TaintEffect::NoExecute)
            && !pod_tolerates(pod, t)
    })
}

/// Whether the node is cordoned and the pod does not tolerate
/// `node.kubernetes.io/unschedulable:NoSchedule` (upstream NodeUnschedulable).
pub fn blocked_by_cordon(pod: &Pod, node: &Node) -> bool {
    let taint = Taint {
        key: UNSCHEDULABLE_TAINT_KEY.to_string(),
        value: String::new(),
        effect: TaintEffect::NoSchedule,
    };
    node.unschedulable && !pod_tolerates(pod, &taint)
}

/// Whether every `nodeSelector` entry is a label of the node with that exact value.
pub fn node_selector_matches(pod: &Pod, node: &Node) -> bool {
    pod.node_selector.iter().all(|(k, v)| node.labels.get(k) == Some(v))
}

/// Whether the node satisfies the pod's required node affinity (absent: every node; present
/// with no terms: no node; else any term).
pub fn required_node_affinity_matches(pod: &Pod, node: &Node) -> bool {
    match &pod.node_affinity.required {
        None => true,
        Some(sel) => sel.terms.iter().any(|t| t.matches(&node.name, &node.labels)),
    }
}

/// `nodeSelector` and required node affinity together (upstream `GetRequiredNodeAffinity`).
pub fn required_node_selection_matches(pod: &Pod, node: &Node) -> bool {
    node_selector_matches(pod, node) && required_node_affinity_matches(pod, node)
}

/// A host port with upstream's defaults applied (empty IP: `0.0.0.0`; empty protocol: `TCP`).
fn sanitized(p: &HostPort) -> (&str, &str, i32) {
    let ip = if p.host_ip.is_empty() { "0.0.0.0" } else { p.host_ip.as_str() };
    let proto = if p.protocol.is_empty() { "TCP" } else { p.protocol.as_str() };
    (ip, proto, p.port)
}

/// Whether two host ports conflict (upstream `HostPortInfo.CheckConflict`, which is symmetric):
/// the same protocol and port, and the same IP or either of them `0.0.0.0`. Ports ≤ 0 never
/// conflict.
pub fn ports_conflict(a: &HostPort, b: &HostPort) -> bool {
    let (ip_a, proto_a, port_a) = sanitized(a);
    let (ip_b, proto_b, port_b) = sanitized(b);
    port_a > 0
        && port_a == port_b
        && proto_a == proto_b
        && (ip_a == "0.0.0.0" || ip_b == "0.0.0.0" || ip_a == ip_b)
}

/// A nil selector matches nothing, an empty one everything.
pub fn selector_matches(selector: Option<&LabelSelector>, labels: &Labels) -> bool {
    selector.is_some_and(|s| s.matches(labels))
}

/// Who owns the affinity term being matched, which decides how `namespaceSelector` is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TermOwner {
    /// The pod being placed: a non-empty namespace selector selects the namespaces of the
    /// snapshot whose labels match it (an unknown namespace is never selected by it); an empty
    /// one selects every namespace.
    Incoming,
    /// A pod already on a node: the selector is matched against the labels of the other pod's
    /// namespace (empty when the namespace is not in the snapshot).
    Existing,
}

/// Whether `term`, owned by a pod in `owner_namespace`, selects `pod`.
pub fn term_selects(
    cluster: &ClusterState,
    owner_namespace: &str,
    owner: TermOwner,
    term: &PodAffinityTerm,
    pod: &Pod,
) -> bool {
    let namespace_ok = if term.namespaces.is_empty() && term.namespace_selector.is_none() {
        pod.namespace == owner_namespace
    } else if term.namespaces.contains(&pod.namespace) {
        true
    } else {
        match (&term.namespace_selector, owner) {
            (None, _) => false,
            (Some(sel), _) if sel.is_empty() => true,
            (Some(sel), TermOwner::Incoming) => {
                cluster.namespace_labels.get(&pod.namespace).is_some_and(|l| sel.matches(l))
            }
            (Some(sel), TermOwner::Existing) => {
                sel.matches(cluster.namespace_labels(&pod.namespace))
            }
        }
    };
    namespace_ok && selector_matches(term.label_selector.as_ref(), &pod.labels)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TolerationOperator as Op;
    use crate::model::testing::{NodeBuilder, PodBuilder, affinity_term};

    fn taint(key: &str, value: &str, effect: TaintEffect) -> Taint {
        Taint { key: key.into(), value: value.into(), effect }
    }

    #[test]
    fn tolerations_match_taints_as_upstream() {
        let t = taint("gpu", "present", TaintEffect::NoSchedule);
        let cases: &[(&str, Pod, bool)] = &[
            (
                "an Exists toleration with the key and no effect tolerates",
                PodBuilder::new("d", "p").toleration("gpu", Op::Exists, "", None).obj(),
                true,
            ),
            (
                "an empty key with Exists tolerates every taint",
                PodBuilder::new("d", "p").toleration("", Op::Exists, "", None).obj(),
                true,
            ),
            (
                "an Equal toleration with another value does not tolerate",
                PodBuilder::new("d", "p").toleration("gpu", Op::Equal, "absent", None).obj(),
                false,
            ),
            (
                "an Equal toleration with the same value tolerates",
                PodBuilder::new("d", "p")
                    .toleration("gpu", Op::Equal, "present", Some(TaintEffect::NoSchedule))
                    .obj(),
                true,
            ),
            (
                "a toleration for another effect does not tolerate",
                PodBuilder::new("d", "p")
                    .toleration("gpu", Op::Exists, "", Some(TaintEffect::NoExecute))
                    .obj(),
                false,
            ),
            ("no toleration does not tolerate", PodBuilder::new("d", "p").obj(), false),
        ];
        for (name, pod, want) in cases {
            assert_eq!(pod_tolerates(pod, &t), *want, "{name}");
        }
    }

    #[test]
    fn prefer_no_schedule_taints_are_not_hard() {
        let node = NodeBuilder::new("n").taint("a", "b", TaintEffect::PreferNoSchedule).obj();
        assert!(untolerated_hard_taint(&PodBuilder::new("d", "p").obj(), &node).is_none());
    }

    #[test]
    fn host_ports_conflict_as_upstream() {
        let hp = |ip: &str, proto: &str, port: i32| HostPort {
            host_ip: ip.into(),
            protocol: proto.into(),
            port,
        };
        let cases: &[(&str, HostPort, HostPort, bool)] = &[
            ("the same port on 0.0.0.0 conflicts", hp("", "", 80), hp("0.0.0.0", "TCP", 80), true),
            (
                "0.0.0.0 conflicts with a specific IP",
                hp("0.0.0.0", "TCP", 80),
                hp("10.0.0.1", "TCP", 80),
                true,
            ),
            (
                "two different specific IPs do not conflict",
                hp("10.0.0.1", "TCP", 80),
                hp("10.0.0.2", "TCP", 80),
                false,
            ),
            ("another protocol does not conflict", hp("", "UDP", 80), hp("", "TCP", 80), false),
            ("another port does not conflict", hp("", "TCP", 81), hp("", "TCP", 80), false),
        ];
        for (name, a, b, want) in cases {
            assert_eq!(ports_conflict(a, b), *want, "{name}");
            assert_eq!(ports_conflict(b, a), *want, "{name} (reversed)");
        }
    }

    #[test]
    fn a_term_without_namespaces_selects_its_owners_namespace_only() {
        let cluster = ClusterState::default();
        let term = affinity_term("zone", &[("app", "x")]);
        let same = PodBuilder::new("a", "p").label("app", "x").obj();
        let other = PodBuilder::new("b", "p").label("app", "x").obj();
        assert!(term_selects(&cluster, "a", TermOwner::Incoming, &term, &same));
        assert!(!term_selects(&cluster, "a", TermOwner::Incoming, &term, &other));
    }

    #[test]
    fn a_namespace_selector_of_an_incoming_pod_only_selects_known_namespaces() {
        let mut cluster = ClusterState::default();
        cluster.namespace_labels.insert("b".into(), Labels::new());
        let mut term = affinity_term("zone", &[("app", "x")]);
        // `team NotIn [red]` matches empty labels.
        term.namespace_selector = Some(LabelSelector {
            requirements: vec![crate::model::Requirement::new(
                "team",
                crate::model::MatchOp::NotIn,
                &["red"],
            )],
        });
        let known = PodBuilder::new("b", "p").label("app", "x").obj();
        let unknown = PodBuilder::new("c", "p").label("app", "x").obj();
        assert!(term_selects(&cluster, "a", TermOwner::Incoming, &term, &known));
        assert!(!term_selects(&cluster, "a", TermOwner::Incoming, &term, &unknown));
        assert!(term_selects(&cluster, "a", TermOwner::Existing, &term, &unknown));
    }
}
