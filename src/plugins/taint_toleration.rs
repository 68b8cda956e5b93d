//! TaintToleration: a filter that rejects nodes with `NoSchedule`/`NoExecute` taints the pod does
//! not tolerate, and a score that prefers nodes with fewer untolerated `PreferNoSchedule` taints.
//!
//! Input: the pod's tolerations and the node's taints. Output: a filter [`Status`] and a raw score
//! (the count of intolerable `PreferNoSchedule` taints), normalized reversed so that the node with
//! the fewest such taints gets [`MAX_NODE_SCORE`].
//!
//! Upstream (v1.35): `pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go`, and
//! toleration matching from `staging/src/k8s.io/api/core/v1/toleration.go` (`ToleratesTaint`) and
//! `staging/src/k8s.io/component-helpers/scheduling/corev1/helpers.go`
//! (`TolerationsTolerateTaint`, `FindMatchingUntoleratedTaint`).
//!
//! v1.35 added the `Lt`/`Gt` toleration operators behind the alpha feature gate
//! `TaintTolerationComparisonOperators` (default **off**). With the gate off such a toleration
//! never matches, and the API server rejects pods that use them, so the model has no variant for
//! them and this module implements the default-gate behaviour only.
//!
//! The filter reason changed over time: v1.35 reports the constant
//! `"node(s) had untolerated taint(s)"` (no taint key or value) with
//! `UnschedulableAndUnresolvable`.

use crate::framework::{Code, MAX_NODE_SCORE, Status, default_normalize_score};
use crate::model::{ClusterState, Node, Pod, Taint, TaintEffect, Toleration, TolerationOperator};

/// The filter reason when a `NoSchedule` or `NoExecute` taint is not tolerated (v1.35).
pub const ERR_REASON_UNTOLERATED: &str = "node(s) had untolerated taint(s)";

/// Whether `toleration` tolerates `taint`, exactly as upstream's `Toleration.ToleratesTaint` with
/// the comparison-operator gate off:
///
/// 1. an empty toleration effect matches every effect, otherwise the effects must be equal;
/// 2. an empty toleration key matches every key, otherwise the keys must be equal;
/// 3. `Exists` matches every value; `Equal` (the default) requires equal values.
pub fn tolerates_taint(toleration: &Toleration, taint: &Taint) -> bool {
    if toleration.effect.is_some_and(|e| e != taint.effect) {
        return false;
    }
    if !toleration.key.is_empty() && toleration.key != taint.key {
        return false;
    }
    match toleration.operator {
        TolerationOperator::Equal => toleration.value == taint.value,
        TolerationOperator::Exists => true,
    }
}

/// Whether any of `tolerations` tolerates `taint` (upstream `TolerationsTolerateTaint`).
pub fn tolerations_tolerate_taint(tolerations: &[Toleration], taint: &Taint) -> bool {
    tolerations.iter().any(|t| tolerates_taint(t, taint))
}

/// The first taint, in the node's order, that passes `filter` and is tolerated by none of
/// `tolerations` (upstream `FindMatchingUntoleratedTaint`).
pub fn find_matching_untolerated_taint<'a>(
    taints: &'a [Taint],
    tolerations: &[Toleration],
    filter: impl Fn(&Taint) -> bool,
) -> Option<&'a Taint> {
    taints.iter().filter(|t| filter(t)).find(|t| !tolerations_tolerate_taint(tolerations, t))
}

/// Whether the taint is one the filter enforces (`NoSchedule` or `NoExecute`; upstream
/// `helper.DoNotScheduleTaintsFilterFunc`).
pub fn is_do_not_schedule_taint(taint: &Taint) -> bool {
    matches!(taint.effect, TaintEffect::NoSchedule | TaintEffect::NoExecute)
}

/// The TaintToleration plugin. It has no arguments.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaintToleration;

/// Per-pod state computed at PreScore: the tolerations that can tolerate a `PreferNoSchedule`
/// taint (effect `PreferNoSchedule` or empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaintTolerationPreScore {
    /// The pod's tolerations whose effect is empty or `PreferNoSchedule`, in spec order.
    pub tolerations_prefer_no_schedule: Vec<Toleration>,
}

impl TaintToleration {
    /// The plugin name used in profiles and statuses.
    pub const NAME: &str = "TaintToleration";

    /// The plugin.
    pub fn new() -> Self {
        TaintToleration
    }

    /// Rejects the node (`UnschedulableAndUnresolvable`) if it has a `NoSchedule` or `NoExecute`
    /// taint that none of the pod's tolerations tolerates.
    pub fn filter(&self, pod: &Pod, node: &Node) -> Status {
        match find_matching_untolerated_taint(
            &node.taints,
            &pod.tolerations,
            is_do_not_schedule_taint,
        ) {
            None => Status::success(),
            Some(_) => Status::new(Code::UnschedulableAndUnresolvable, [ERR_REASON_UNTOLERATED])
                .with_plugin(Self::NAME),
        }
    }

    /// Collects the tolerations relevant to `PreferNoSchedule` taints. Never fails or skips.
    pub fn pre_score(
        &self,
        pod: &Pod,
        _cluster: &ClusterState,
        _feasible: &[usize],
    ) -> Result<TaintTolerationPreScore, Status> {
        let tolerations_prefer_no_schedule = pod
            .tolerations
            .iter()
            .filter(|t| t.effect.is_none_or(|e| e == TaintEffect::PreferNoSchedule))
            .cloned()
            .collect();
        Ok(TaintTolerationPreScore { tolerations_prefer_no_schedule })
    }

    /// The raw score: how many of the node's `PreferNoSchedule` taints the pod does not tolerate.
    pub fn score(&self, state: &TaintTolerationPreScore, _pod: &Pod, node: &Node) -> i64 {
        node.taints
            .iter()
            .filter(|t| t.effect == TaintEffect::PreferNoSchedule)
            .filter(|t| !tolerations_tolerate_taint(&state.tolerations_prefer_no_schedule, t))
            .count() as i64
    }

    /// Reversed default normalization: the fewest intolerable taints score [`MAX_NODE_SCORE`].
    pub fn normalize_score(&self, _state: &TaintTolerationPreScore, scores: &mut [i64]) {
        default_normalize_score(MAX_NODE_SCORE, true, scores);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::testing::{NodeBuilder, PodBuilder, cluster};

    fn taint(key: &str, value: &str, effect: TaintEffect) -> Taint {
        Taint { key: key.to_string(), value: value.to_string(), effect }
    }

    fn toleration(
        key: &str,
        operator: TolerationOperator,
        value: &str,
        effect: Option<TaintEffect>,
    ) -> Toleration {
        Toleration {
            key: key.to_string(),
            operator,
            value: value.to_string(),
            effect,
            toleration_seconds: None,
        }
    }

    #[test]
    fn toleration_matching_follows_upstream_rules() {
        use TaintEffect::*;
        use TolerationOperator::*;
        let cases: &[(&str, Toleration, Taint, bool)] = &[
            (
                "an Equal toleration with the same key, value and effect tolerates the taint",
                toleration("foo", Equal, "bar", Some(NoSchedule)),
                taint("foo", "bar", NoSchedule),
                true,
            ),
            (
                "an Equal toleration with another value does not tolerate the taint",
                toleration("foo", Equal, "baz", Some(NoSchedule)),
                taint("foo", "bar", NoSchedule),
                false,
            ),
            (
                "an Exists toleration tolerates any value of its key",
                toleration("foo", Exists, "", Some(NoSchedule)),
                taint("foo", "anything", NoSchedule),
                true,
            ),
            (
                "an empty key with Exists tolerates every taint",
                toleration("", Exists, "", None),
                taint("any", "thing", NoExecute),
                true,
            ),
            (
                "an empty key with Equal only tolerates taints with the same value",
                toleration("", Equal, "bar", None),
                taint("any", "bar", NoExecute),
                true,
            ),
            (
                "an empty effect tolerates every effect",
                toleration("foo", Equal, "bar", None),
                taint("foo", "bar", PreferNoSchedule),
                true,
            ),
            (
                "a different effect does not tolerate the taint",
                toleration("foo", Equal, "bar", Some(NoExecute)),
                taint("foo", "bar", NoSchedule),
                false,
            ),
            (
                "a different key does not tolerate the taint",
                toleration("foo", Exists, "", None),
                taint("other", "bar", NoSchedule),
                false,
            ),
            (
                "an Equal toleration with an empty value tolerates a taint with an empty value",
                toleration("foo", Equal, "", Some(NoSchedule)),
                taint("foo", "", NoSchedule),
                true,
            ),
        ];
        for (name, tol, t, want) in cases {
            assert_eq!(tolerates_taint(tol, t), *want, "{name}");
        }
    }

    /// Cases from upstream `TestTaintTolerationFilter`.
    #[test]
    fn filter_rejects_untolerated_no_schedule_and_no_execute_taints() {
        use TaintEffect::*;
        use TolerationOperator::*;
        let rejected = Status::new(Code::UnschedulableAndUnresolvable, [ERR_REASON_UNTOLERATED])
            .with_plugin(TaintToleration::NAME);
        let cases: Vec<(&str, Pod, Node, Status)> = vec![
            (
                "a pod with no tolerations is rejected by a node with a NoSchedule taint",
                PodBuilder::new("ns", "p").obj(),
                NodeBuilder::new("n").taint("dedicated", "user1", NoSchedule).obj(),
                rejected.clone(),
            ),
            (
                "a pod tolerating the node's NoSchedule taint fits",
                PodBuilder::new("ns", "p")
                    .toleration("dedicated", Equal, "user1", Some(NoSchedule))
                    .obj(),
                NodeBuilder::new("n").taint("dedicated", "user1", NoSchedule).obj(),
                Status::success(),
            ),
            (
                "a pod whose toleration value differs from the taint's is rejected",
                PodBuilder::new("ns", "p")
                    .toleration("dedicated", Equal, "user2", Some(NoSchedule))
                    .obj(),
                NodeBuilder::new("n").taint("dedicated", "user1", NoSchedule).obj(),
                rejected.clone(),
            ),
            (
                "a pod with an Exists toleration for the key fits whatever the taint's value",
                PodBuilder::new("ns", "p").toleration("foo", Exists, "", Some(NoSchedule)).obj(),
                NodeBuilder::new("n").taint("foo", "bar", NoSchedule).obj(),
                Status::success(),
            ),
            (
                "a pod tolerating only some of the node's NoSchedule taints is rejected",
                PodBuilder::new("ns", "p")
                    .toleration("dedicated", Equal, "user2", Some(NoSchedule))
                    .toleration("foo", Exists, "", Some(NoSchedule))
                    .obj(),
                NodeBuilder::new("n")
                    .taint("dedicated", "user2", NoSchedule)
                    .taint("foo", "bar", NoSchedule)
                    .taint("other", "x", NoSchedule)
                    .obj(),
                rejected.clone(),
            ),
            (
                "a pod tolerating all of the node's taints fits",
                PodBuilder::new("ns", "p")
                    .toleration("dedicated", Equal, "user2", Some(NoSchedule))
                    .toleration("foo", Exists, "", Some(NoSchedule))
                    .obj(),
                NodeBuilder::new("n")
                    .taint("dedicated", "user2", NoSchedule)
                    .taint("foo", "bar", NoSchedule)
                    .obj(),
                Status::success(),
            ),
            (
                "a toleration with PreferNoSchedule effect does not tolerate a NoSchedule taint",
                PodBuilder::new("ns", "p")
                    .toleration("foo", Equal, "bar", Some(PreferNoSchedule))
                    .obj(),
                NodeBuilder::new("n").taint("foo", "bar", NoSchedule).obj(),
                rejected.clone(),
            ),
            (
                "a toleration with no effect tolerates a NoSchedule taint of the same key and value",
                PodBuilder::new("ns", "p").toleration("foo", Equal, "bar", None).obj(),
                NodeBuilder::new("n").taint("foo", "bar", NoSchedule).obj(),
                Status::success(),
            ),
            (
                "a pod with no tolerations fits a node that only has a PreferNoSchedule taint",
                PodBuilder::new("ns", "p").obj(),
                NodeBuilder::new("n").taint("foo", "bar", PreferNoSchedule).obj(),
                Status::success(),
            ),
            (
                "a pod with no tolerations is rejected by a node with a NoExecute taint",
                PodBuilder::new("ns", "p").obj(),
                NodeBuilder::new("n").taint("node.kubernetes.io/not-ready", "", NoExecute).obj(),
                rejected.clone(),
            ),
            (
                "a pod tolerating everything fits a node with NoSchedule and NoExecute taints",
                PodBuilder::new("ns", "p").toleration("", Exists, "", None).obj(),
                NodeBuilder::new("n").taint("a", "1", NoSchedule).taint("b", "2", NoExecute).obj(),
                Status::success(),
            ),
        ];
        let pl = TaintToleration::new();
        for (name, pod, node, want) in cases {
            assert_eq!(pl.filter(&pod, &node), want, "{name}");
        }
    }

    /// Cases from upstream `TestTaintTolerationScore`.
    #[test]
    fn score_counts_intolerable_prefer_no_schedule_taints_and_normalizes_reversed() {
        use TaintEffect::*;
        use TolerationOperator::*;
        struct Case {
            name: &'static str,
            pod: Pod,
            nodes: Vec<Node>,
            raw: Vec<i64>,
            normalized: Vec<i64>,
        }
        let cases = vec![
            Case {
                // node1 has the tolerated taint: 0 intolerable; node2 has no taint: 0.
                // All zero, reversed: everyone gets 100.
                name: "a node whose PreferNoSchedule taint is tolerated scores as well as an untainted node",
                pod: PodBuilder::new("ns", "p")
                    .toleration("foo", Equal, "bar", Some(PreferNoSchedule))
                    .obj(),
                nodes: vec![
                    NodeBuilder::new("n1").taint("foo", "bar", PreferNoSchedule).obj(),
                    NodeBuilder::new("n2").obj(),
                ],
                raw: vec![0, 0],
                normalized: vec![100, 100],
            },
            Case {
                // Intolerable counts: n1 0, n2 1, n3 2. max = 2.
                // n1: 100 - 100*0/2 = 100; n2: 100 - 100*1/2 = 50; n3: 100 - 100*2/2 = 0.
                name: "the more intolerable PreferNoSchedule taints a node has the lower it scores",
                pod: PodBuilder::new("ns", "p")
                    .toleration("cpu-type", Equal, "arm64", Some(PreferNoSchedule))
                    .toleration("disk-type", Equal, "ssd", Some(PreferNoSchedule))
                    .obj(),
                nodes: vec![
                    NodeBuilder::new("n1").obj(),
                    NodeBuilder::new("n2").taint("cpu-type", "x86", PreferNoSchedule).obj(),
                    NodeBuilder::new("n3")
                        .taint("cpu-type", "x86", PreferNoSchedule)
                        .taint("disk-type", "hdd", PreferNoSchedule)
                        .obj(),
                ],
                raw: vec![0, 1, 2],
                normalized: vec![100, 50, 0],
            },
            Case {
                // NoSchedule taints are not counted: n1 0, n2 0 (NoSchedule), n3 1.
                // max = 1: n1 100, n2 100, n3 0.
                name: "only PreferNoSchedule taints count for the score",
                pod: PodBuilder::new("ns", "p")
                    .toleration("cpu-type", Equal, "arm64", Some(NoSchedule))
                    .toleration("disk-type", Equal, "ssd", Some(NoSchedule))
                    .obj(),
                nodes: vec![
                    NodeBuilder::new("n1").obj(),
                    NodeBuilder::new("n2").taint("cpu-type", "x86", NoSchedule).obj(),
                    NodeBuilder::new("n3").taint("cpu-type", "x86", PreferNoSchedule).obj(),
                ],
                raw: vec![0, 0, 1],
                normalized: vec![100, 100, 0],
            },
            Case {
                // The NoSchedule toleration is not kept at PreScore, so it cannot tolerate the
                // PreferNoSchedule taint: n1 1, n2 0 → n1 100 - 100 = 0, n2 100.
                name: "a NoSchedule toleration does not tolerate a PreferNoSchedule taint when scoring",
                pod: PodBuilder::new("ns", "p")
                    .toleration("foo", Equal, "bar", Some(NoSchedule))
                    .obj(),
                nodes: vec![
                    NodeBuilder::new("n1").taint("foo", "bar", PreferNoSchedule).obj(),
                    NodeBuilder::new("n2").obj(),
                ],
                raw: vec![1, 0],
                normalized: vec![0, 100],
            },
            Case {
                // Empty-effect tolerations are kept: n1 0 intolerable → all 100.
                name: "a toleration with no effect tolerates a PreferNoSchedule taint when scoring",
                pod: PodBuilder::new("ns", "p").toleration("foo", Exists, "", None).obj(),
                nodes: vec![NodeBuilder::new("n1").taint("foo", "bar", PreferNoSchedule).obj()],
                raw: vec![0],
                normalized: vec![100],
            },
        ];
        let pl = TaintToleration::new();
        for c in cases {
            let cl = cluster(c.nodes.clone(), vec![]);
            let feasible: Vec<usize> = (0..cl.nodes.len()).collect();
            let state = pl.pre_score(&c.pod, &cl, &feasible).expect("pre_score never fails");
            let mut scores: Vec<i64> =
                cl.nodes.iter().map(|n| pl.score(&state, &c.pod, n)).collect();
            assert_eq!(scores, c.raw, "{}: raw", c.name);
            pl.normalize_score(&state, &mut scores);
            assert_eq!(scores, c.normalized, "{}: normalized", c.name);
        }
    }

    #[test]
    fn find_matching_untolerated_taint_returns_the_first_in_node_order() {
        let taints = vec![
            taint("a", "1", TaintEffect::PreferNoSchedule),
            taint("b", "2", TaintEffect::NoSchedule),
            taint("c", "3", TaintEffect::NoExecute),
        ];
        let found = find_matching_untolerated_taint(&taints, &[], is_do_not_schedule_taint);
        assert_eq!(found.map(|t| t.key.as_str()), Some("b"));
    }
}
