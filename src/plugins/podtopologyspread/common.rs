//! Shared pieces of PodTopologySpread: the processed constraint, which constraints apply to a
//! pod, node inclusion policies, and counting matching pods.
//!
//! Upstream: `pkg/scheduler/framework/plugins/podtopologyspread/common.go` and `plugin.go`
//! (`systemDefaultConstraints`, `getConstraints`), v1.35.

use crate::plugins::taint_toleration::{find_matching_untolerated_taint, is_do_not_schedule_taint};
use std::sync::Arc;

use crate::model::{
    InclusionPolicy, LabelSelector, Labels, Node, NodeSelector, Pod, Toleration,
    TopologySpreadConstraint, UnsatisfiableAction,
};

/// `kubernetes.io/hostname`: spreading over it is counted per node during Score.
pub const LABEL_HOSTNAME: &str = "kubernetes.io/hostname";
/// `topology.kubernetes.io/zone`.
pub const LABEL_TOPOLOGY_ZONE: &str = "topology.kubernetes.io/zone";

/// A topology spread constraint as the plugin uses it (upstream `topologySpreadConstraint`):
/// defaults applied and the selector fixed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Constraint {
    /// `maxSkew`.
    pub max_skew: i32,
    /// `topologyKey`.
    pub topology_key: String,
    /// The pods counted (`None`: upstream's `labels.Nothing()`).
    pub selector: Option<LabelSelector>,
    /// `minDomains`, 1 when absent.
    pub min_domains: i32,
    /// `nodeAffinityPolicy`.
    pub node_affinity_policy: InclusionPolicy,
    /// `nodeTaintsPolicy`.
    pub node_taints_policy: InclusionPolicy,
}

impl Constraint {
    /// Whether the constraint's selector matches these labels (a nil selector never does).
    pub fn selects(&self, labels: &Labels) -> bool {
        self.selector.as_ref().is_some_and(|s| s.matches(labels))
    }
}

/// Upstream's `systemDefaultConstraints`, in upstream's order (hostname, then zone).
pub fn system_default_constraints() -> Vec<TopologySpreadConstraint> {
    let soft = |key: &str, max_skew| TopologySpreadConstraint {
        max_skew,
        topology_key: key.to_string(),
        when_unsatisfiable: UnsatisfiableAction::ScheduleAnyway,
        label_selector: None,
        min_domains: None,
        node_affinity_policy: InclusionPolicy::Honor,
        node_taints_policy: InclusionPolicy::Ignore,
        match_label_keys: Vec::new(),
    };
    vec![soft(LABEL_HOSTNAME, 3), soft(LABEL_TOPOLOGY_ZONE, 5)]
}

/// The constraints with `whenUnsatisfiable == action`, processed (upstream
/// `filterTopologySpreadConstraints`; `matchLabelKeys` are already in the selectors).
pub(crate) fn filter_constraints(
    specs: &[TopologySpreadConstraint],
    action: UnsatisfiableAction,
) -> Vec<Constraint> {
    specs
        .iter()
        .filter(|c| c.when_unsatisfiable == action)
        .map(|c| Constraint {
            max_skew: c.max_skew,
            topology_key: c.topology_key.clone(),
            selector: c.label_selector.clone(),
            min_domains: c.min_domains.unwrap_or(1),
            node_affinity_policy: c.node_affinity_policy,
            node_taints_policy: c.node_taints_policy,
        })
        .collect()
}

/// Upstream `buildDefaultConstraints`: the default constraints for `action`, all with the
/// pod's default selector; none when the pod has no (or an empty) default selector.
pub(crate) fn build_default_constraints(
    defaults: &[TopologySpreadConstraint],
    pod: &Pod,
    action: UnsatisfiableAction,
) -> Vec<Constraint> {
    let mut constraints = filter_constraints(defaults, action);
    if constraints.is_empty() {
        return constraints;
    }
    let Some(selector) = pod.default_spread_selector.as_ref().filter(|s| !s.is_empty()) else {
        return Vec::new();
    };
    for c in &mut constraints {
        c.selector = Some(selector.clone());
    }
    constraints
}

/// Upstream `nodeLabelsMatchSpreadConstraints`: whether the node has every constraint's key.
pub(crate) fn node_labels_match_spread_constraints(
    labels: &Labels,
    constraints: &[Constraint],
) -> bool {
    constraints.iter().all(|c| labels.contains_key(&c.topology_key))
}

/// Upstream `countPodsMatchSelector`: pods in `namespace`, not terminating, matched by the
/// selector. An *empty* selector counts nothing (upstream checks `selector.Empty()` first),
/// and a nil one matches nothing.
pub(crate) fn count_pods_match_selector(
    pods: &[Arc<Pod>],
    selector: &Option<LabelSelector>,
    namespace: &str,
) -> i64 {
    let Some(selector) = selector.as_ref().filter(|s| !s.is_empty()) else { return 0 };
    pods.iter()
        .filter(|p| !p.terminating && p.namespace == namespace && selector.matches(&p.labels))
        .count() as i64
}

/// What the node inclusion policies and AddPod/RemovePod read of the incoming pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IncomingPod {
    /// `metadata.namespace`.
    pub(crate) namespace: String,
    /// `spec.nodeSelector`.
    node_selector: Labels,
    /// `spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`.
    required_node_affinity: Option<NodeSelector>,
    /// `spec.tolerations`.
    tolerations: Vec<Toleration>,
}

impl IncomingPod {
    pub(crate) fn new(pod: &Pod) -> Self {
        IncomingPod {
            namespace: pod.namespace.clone(),
            node_selector: pod.node_selector.clone(),
            required_node_affinity: pod.node_affinity.required.clone(),
            tolerations: pod.tolerations.clone(),
        }
    }

    /// Upstream `nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)`: the node selector's
    /// labels all present with equal values, and any required term matching.
    fn matches_required_node_affinity(&self, node: &Node) -> bool {
        self.node_selector.iter().all(|(k, v)| node.labels.get(k) == Some(v))
            && self
                .required_node_affinity
                .as_ref()
                .is_none_or(|s| s.matches(&node.name, &node.labels))
    }

    /// Whether the pod tolerates every NoSchedule/NoExecute taint of the node (upstream
    /// `FindMatchingUntoleratedTaint` with the do-not-schedule filter).
    fn tolerates_node_taints(&self, node: &Node) -> bool {
        find_matching_untolerated_taint(&node.taints, &self.tolerations, is_do_not_schedule_taint)
            .is_none()
    }
}

/// Upstream `topologySpreadConstraint.matchNodeInclusionPolicies`: whether the node's pods
/// count toward the constraint's domains.
pub(crate) fn match_node_inclusion_policies(
    c: &Constraint,
    incoming: &IncomingPod,
    node: &Node,
) -> bool {
    if c.node_affinity_policy == InclusionPolicy::Honor
        && !incoming.matches_required_node_affinity(node)
    {
        return false;
    }
    if c.node_taints_policy == InclusionPolicy::Honor && !incoming.tolerates_node_taints(node) {
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::testing::{NodeBuilder, PodBuilder, node_term, spread_constraint};
    use crate::model::{MatchOp, Requirement, TaintEffect, TolerationOperator};

    fn honor_both(c: &mut Constraint) {
        c.node_affinity_policy = InclusionPolicy::Honor;
        c.node_taints_policy = InclusionPolicy::Honor;
    }

    #[test]
    fn node_inclusion_policies_follow_upstream() {
        let base = filter_constraints(
            &[spread_constraint(1, "zone", UnsatisfiableAction::DoNotSchedule, &[("foo", "")])],
            UnsatisfiableAction::DoNotSchedule,
        )
        .remove(0);
        let mut honor = base.clone();
        honor_both(&mut honor);
        let mut ignore = base.clone();
        ignore.node_affinity_policy = InclusionPolicy::Ignore;
        ignore.node_taints_policy = InclusionPolicy::Ignore;
        let tainted =
            NodeBuilder::new("n").label("zone", "z").taint("k", "v", TaintEffect::NoSchedule);
        let cases: Vec<(&str, &Constraint, Pod, Node, bool)> = vec![
            (
                "a node matching the pod's node selector is included",
                &honor,
                PodBuilder::new("ns", "p").node_selector("disk", "ssd").obj(),
                NodeBuilder::new("n").label("disk", "ssd").obj(),
                true,
            ),
            (
                "a node not matching the pod's node selector is excluded under Honor",
                &honor,
                PodBuilder::new("ns", "p").node_selector("disk", "ssd").obj(),
                NodeBuilder::new("n").label("disk", "hdd").obj(),
                false,
            ),
            (
                "a node not matching the pod's node selector is included under Ignore",
                &ignore,
                PodBuilder::new("ns", "p").node_selector("disk", "ssd").obj(),
                NodeBuilder::new("n").label("disk", "hdd").obj(),
                true,
            ),
            (
                "a node failing the pod's required node affinity is excluded under Honor",
                &honor,
                PodBuilder::new("ns", "p")
                    .required_node_affinity(vec![node_term(vec![Requirement::new(
                        "zone",
                        MatchOp::In,
                        &["a"],
                    )])])
                    .obj(),
                NodeBuilder::new("n").label("zone", "b").obj(),
                false,
            ),
            (
                "the default nodeTaintsPolicy (Ignore) includes a tainted node",
                &base,
                PodBuilder::new("ns", "p").obj(),
                tainted.clone().obj(),
                true,
            ),
            (
                "an untolerated NoSchedule taint excludes the node under Honor",
                &honor,
                PodBuilder::new("ns", "p").obj(),
                tainted.clone().obj(),
                false,
            ),
            (
                "a toleration for the NoSchedule taint keeps the node under Honor",
                &honor,
                PodBuilder::new("ns", "p")
                    .toleration("k", TolerationOperator::Equal, "v", Some(TaintEffect::NoSchedule))
                    .obj(),
                tainted.clone().obj(),
                true,
            ),
            (
                "a toleration with the wrong value does not tolerate the taint",
                &honor,
                PodBuilder::new("ns", "p")
                    .toleration("k", TolerationOperator::Equal, "x", None)
                    .obj(),
                tainted.clone().obj(),
                false,
            ),
            (
                "an Exists toleration with an empty key tolerates every taint",
                &honor,
                PodBuilder::new("ns", "p")
                    .toleration("", TolerationOperator::Exists, "", None)
                    .obj(),
                tainted.clone().obj(),
                true,
            ),
            (
                "a toleration for another effect does not tolerate the taint",
                &honor,
                PodBuilder::new("ns", "p")
                    .toleration("k", TolerationOperator::Exists, "", Some(TaintEffect::NoExecute))
                    .obj(),
                tainted.obj(),
                false,
            ),
            (
                "a PreferNoSchedule taint never excludes a node",
                &honor,
                PodBuilder::new("ns", "p").obj(),
                NodeBuilder::new("n").taint("k", "v", TaintEffect::PreferNoSchedule).obj(),
                true,
            ),
            (
                "an untolerated NoExecute taint excludes the node under Honor",
                &honor,
                PodBuilder::new("ns", "p").obj(),
                NodeBuilder::new("n").taint("k", "v", TaintEffect::NoExecute).obj(),
                false,
            ),
        ];
        for (name, c, pod, node, want) in cases {
            assert_eq!(
                match_node_inclusion_policies(c, &IncomingPod::new(&pod), &node),
                want,
                "{name}"
            );
        }
    }

    #[test]
    fn counting_skips_terminating_pods_other_namespaces_and_empty_selectors() {
        let pods: Vec<Arc<Pod>> = vec![
            Arc::new(PodBuilder::new("ns", "a").label("foo", "").obj()),
            Arc::new(PodBuilder::new("other", "b").label("foo", "").obj()),
            Arc::new(PodBuilder::new("ns", "c").label("foo", "").terminating().obj()),
            Arc::new(PodBuilder::new("ns", "d").label("bar", "").obj()),
        ];
        let foo = Some(LabelSelector::from_match_labels([("foo", "")]));
        assert_eq!(count_pods_match_selector(&pods, &foo, "ns"), 1);
        assert_eq!(count_pods_match_selector(&pods, &Some(LabelSelector::default()), "ns"), 0);
        assert_eq!(count_pods_match_selector(&pods, &None, "ns"), 0);
    }

    #[test]
    fn default_constraints_take_the_pods_default_selector() {
        let sel = LabelSelector::from_match_labels([("app", "web")]);
        let with_sel = PodBuilder::new("ns", "p").default_spread_selector(sel.clone()).obj();
        let without = PodBuilder::new("ns", "p").obj();
        let empty =
            PodBuilder::new("ns", "p").default_spread_selector(LabelSelector::default()).obj();
        let defaults = system_default_constraints();
        let got =
            build_default_constraints(&defaults, &with_sel, UnsatisfiableAction::ScheduleAnyway);
        assert_eq!(
            got.iter().map(|c| (c.topology_key.as_str(), c.max_skew)).collect::<Vec<_>>(),
            vec![(LABEL_HOSTNAME, 3), (LABEL_TOPOLOGY_ZONE, 5)]
        );
        assert!(got.iter().all(|c| c.selector.as_ref() == Some(&sel) && c.min_domains == 1));
        assert!(
            build_default_constraints(&defaults, &with_sel, UnsatisfiableAction::DoNotSchedule)
                .is_empty()
        );
        assert!(
            build_default_constraints(&defaults, &without, UnsatisfiableAction::ScheduleAnyway)
                .is_empty()
        );
        assert!(
            build_default_constraints(&defaults, &empty, UnsatisfiableAction::ScheduleAnyway)
                .is_empty()
        );
    }
}
