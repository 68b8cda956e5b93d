//! NodeAffinity: a filter for `spec.nodeSelector` and required node affinity (plus the profile's
//! `addedAffinity`), and a score for preferred node affinity.
//!
//! Input: the pod's node selector and node affinity, the node's name and labels, and
//! [`NodeAffinityArgs`]. Output:
//! - PreFilter: `Skip` when there is nothing to check; otherwise a [`NodeAffinityPreFilter`]
//!   whose `node_names` restricts the candidate nodes when every required term pins
//!   `metadata.name` with `In` (upstream's `PreFilterResult`: the framework intersects these
//!   sets over plugins and evaluates only those nodes); `UnschedulableAndUnresolvable` with
//!   `"pod affinity terms conflict"` when the pins exclude every node name.
//! - Filter: `UnschedulableAndUnresolvable` with
//!   `"node(s) didn't match scheduler-enforced node affinity"` (addedAffinity, checked first) or
//!   `"node(s) didn't match Pod's node affinity/selector"`.
//! - Score: the sum of the weights of the matching preferred terms of the pod and of
//!   addedAffinity; normalized with the default normalization (not reversed).
//!
//! Upstream (v1.35): `pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go` and
//! `staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go`
//! (`GetRequiredNodeAffinity`, `LazyErrorNodeSelector`, `PreferredSchedulingTerms`).
//! Term matching (empty term matches nothing, invalid term never matches) is
//! [`NodeSelectorTerm::matches`].

use std::collections::BTreeSet;

use crate::framework::args::NodeAffinityArgs;
use crate::framework::{Code, MAX_NODE_SCORE, Status, default_normalize_score};
use crate::model::{
    ClusterState, MatchOp, Node, NodeSelector, NodeSelectorTerm, Pod, PreferredSchedulingTerm,
};

/// The filter reason when the pod's node selector or required node affinity does not match.
pub const ERR_REASON_POD: &str = "node(s) didn't match Pod's node affinity/selector";

/// The filter reason when the profile's `addedAffinity` does not match.
pub const ERR_REASON_ENFORCED: &str = "node(s) didn't match scheduler-enforced node affinity";

/// The pre-filter reason when the `metadata.name` pins of the required terms exclude every node.
pub const ERR_REASON_CONFLICT: &str = "pod affinity terms conflict";

/// The field key `matchFields` may use.
const OBJECT_NAME_FIELD: &str = "metadata.name";

/// An invalid `addedAffinity` (upstream `New` fails the same way).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NodeAffinityArgsError {
    /// A required term of `addedAffinity` failed validation.
    #[error(
        "parsing addedAffinity.requiredDuringSchedulingIgnoredDuringExecution: term {index} is invalid"
    )]
    InvalidRequiredTerm {
        /// Index in `nodeSelectorTerms`.
        index: usize,
    },
    /// A preferred term of `addedAffinity` failed validation.
    #[error(
        "parsing addedAffinity.preferredDuringSchedulingIgnoredDuringExecution: term {index} is invalid"
    )]
    InvalidPreferredTerm {
        /// Index in `preferredDuringSchedulingIgnoredDuringExecution`.
        index: usize,
    },
}

/// The NodeAffinity plugin, configured by [`NodeAffinityArgs`].
#[derive(Debug, Clone, Default)]
pub struct NodeAffinity {
    /// `addedAffinity.requiredDuringSchedulingIgnoredDuringExecution`.
    added_node_selector: Option<NodeSelector>,
    /// `addedAffinity.preferredDuringSchedulingIgnoredDuringExecution` when non-empty.
    added_pref_sched_terms: Option<Vec<PreferredSchedulingTerm>>,
}

/// The pre-filter result: the node names the pod can possibly land on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeAffinityPreFilter {
    /// `Some(names)`: only these nodes can pass the filter (upstream `PreFilterResult.NodeNames`);
    /// `None`: every node is a candidate.
    pub node_names: Option<BTreeSet<String>>,
}

/// Per-pod state computed at PreScore.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodeAffinityPreScore {
    /// The pod's preferred terms that count (weight ≠ 0 and not empty), in spec order.
    pub preferred: Vec<PreferredSchedulingTerm>,
}

/// Whether a preferred term takes part in scoring (upstream skips weight 0 and empty terms
/// before parsing them).
fn counts(term: &PreferredSchedulingTerm) -> bool {
    term.weight != 0
        && !(term.preference.match_expressions.is_empty()
            && term.preference.match_fields.is_empty())
}

/// The sum of the weights of the terms matching the node (upstream
/// `PreferredSchedulingTerms.Score`).
fn preferred_score(terms: &[PreferredSchedulingTerm], node: &Node) -> i64 {
    terms
        .iter()
        .filter(|t| t.preference.matches(&node.name, &node.labels))
        .map(|t| i64::from(t.weight))
        .sum()
}

/// Whether the pod's `spec.nodeSelector` and required node affinity both match the node
/// (upstream `RequiredNodeAffinity.Match`; parse errors count as no match).
pub fn required_node_affinity_matches(pod: &Pod, node: &Node) -> bool {
    let selector_ok = pod.node_selector.iter().all(|(k, v)| node.labels.get(k) == Some(v));
    selector_ok
        && pod.node_affinity.required.as_ref().is_none_or(|ns| ns.matches(&node.name, &node.labels))
}

/// The node names a term pins with `matchFields metadata.name In`, intersected over its
/// requirements; `None` when the term has no such requirement.
fn term_node_names(term: &NodeSelectorTerm) -> Option<BTreeSet<String>> {
    let mut names: Option<BTreeSet<String>> = None;
    for r in &term.match_fields {
        if r.key == OBJECT_NAME_FIELD && r.op == MatchOp::In {
            let s: BTreeSet<String> = r.values.iter().cloned().collect();
            names = Some(match names {
                None => s,
                Some(prev) => prev.intersection(&s).cloned().collect(),
            });
        }
    }
    names
}

impl NodeAffinity {
    /// The plugin name used in profiles and statuses.
    pub const NAME: &str = "NodeAffinity";

    /// The plugin with its arguments; fails like upstream's `New` when a non-empty term of
    /// `addedAffinity` is invalid.
    pub fn new(args: &NodeAffinityArgs) -> Result<Self, NodeAffinityArgsError> {
        let mut pl = NodeAffinity::default();
        let Some(added) = &args.added_affinity else { return Ok(pl) };
        if let Some(ns) = &added.required {
            for (index, term) in ns.terms.iter().enumerate() {
                let empty = term.match_expressions.is_empty() && term.match_fields.is_empty();
                if term.invalid && !empty {
                    return Err(NodeAffinityArgsError::InvalidRequiredTerm { index });
                }
            }
            pl.added_node_selector = Some(ns.clone());
        }
        if !added.preferred.is_empty() {
            let mut terms = Vec::new();
            for (index, term) in added.preferred.iter().enumerate() {
                if !counts(term) {
                    continue;
                }
                if term.preference.invalid {
                    return Err(NodeAffinityArgsError::InvalidPreferredTerm { index });
                }
                terms.push(term.clone());
            }
            pl.added_pref_sched_terms = Some(terms);
        }
        Ok(pl)
    }

    /// Skips pods with nothing to check; otherwise computes the node-name restriction of the
    /// required terms.
    pub fn pre_filter(
        &self,
        pod: &Pod,
        _cluster: &ClusterState,
    ) -> Result<NodeAffinityPreFilter, Status> {
        let required = pod.node_affinity.required.as_ref();
        if required.is_none() && self.added_node_selector.is_none() && pod.node_selector.is_empty()
        {
            return Err(Status::skip());
        }
        let Some(required) = required.filter(|r| !r.terms.is_empty()) else {
            return Ok(NodeAffinityPreFilter::default());
        };
        let mut node_names = BTreeSet::new();
        for term in &required.terms {
            // A term without a metadata.name pin admits every node: the terms are ORed.
            let Some(names) = term_node_names(term) else {
                return Ok(NodeAffinityPreFilter::default());
            };
            node_names.extend(names);
        }
        if node_names.is_empty() {
            return Err(Status::new(Code::UnschedulableAndUnresolvable, [ERR_REASON_CONFLICT])
                .with_plugin(Self::NAME));
        }
        Ok(NodeAffinityPreFilter { node_names: Some(node_names) })
    }

    /// Rejects the node when addedAffinity, or the pod's node selector and required affinity,
    /// do not match it.
    pub fn filter(&self, pod: &Pod, node: &Node) -> Status {
        if let Some(added) = &self.added_node_selector
            && !added.matches(&node.name, &node.labels)
        {
            return Status::new(Code::UnschedulableAndUnresolvable, [ERR_REASON_ENFORCED])
                .with_plugin(Self::NAME);
        }
        if !required_node_affinity_matches(pod, node) {
            return Status::new(Code::UnschedulableAndUnresolvable, [ERR_REASON_POD])
                .with_plugin(Self::NAME);
        }
        Status::success()
    }

    /// Collects the pod's preferred terms. `Skip` when neither the pod nor addedAffinity has
    /// preferred terms; `Error` when a counted preferred term of the pod is invalid (upstream
    /// fails PreScore on the parse error).
    pub fn pre_score(
        &self,
        pod: &Pod,
        _cluster: &ClusterState,
        _feasible: &[usize],
    ) -> Result<NodeAffinityPreScore, Status> {
        let pod_preferred = &pod.node_affinity.preferred;
        if pod_preferred.is_empty() && self.added_pref_sched_terms.is_none() {
            return Err(Status::skip());
        }
        let mut preferred = Vec::new();
        for (index, term) in pod_preferred.iter().enumerate() {
            if !counts(term) {
                continue;
            }
            if term.preference.invalid {
                return Err(Status::error(format!(
                    "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[{index}]: invalid term"
                ))
                .with_plugin(Self::NAME));
            }
            preferred.push(term.clone());
        }
        Ok(NodeAffinityPreScore { preferred })
    }

    /// The sum of the weights of the matching preferred terms (addedAffinity's and the pod's).
    pub fn score(&self, state: &NodeAffinityPreScore, _pod: &Pod, node: &Node) -> i64 {
        let added = self.added_pref_sched_terms.as_deref().map_or(0, |t| preferred_score(t, node));
        added + preferred_score(&state.preferred, node)
    }

    /// Default normalization: the best node scores [`MAX_NODE_SCORE`].
    pub fn normalize_score(&self, _state: &NodeAffinityPreScore, scores: &mut [i64]) {
        default_normalize_score(MAX_NODE_SCORE, false, scores);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::testing::{NodeBuilder, PodBuilder, cluster, node_term};
    use crate::model::{NodeAffinity as ModelNodeAffinity, Requirement};

    /// The node-name restriction expected from PreFilter, or the code of its status.
    type PreFilterWant = Result<Option<BTreeSet<String>>, Code>;

    fn req(key: &str, op: MatchOp, values: &[&str]) -> Requirement {
        Requirement::new(key, op, values)
    }

    fn field_term(op: MatchOp, values: &[&str]) -> NodeSelectorTerm {
        NodeSelectorTerm {
            match_fields: vec![req(OBJECT_NAME_FIELD, op, values)],
            ..Default::default()
        }
    }

    fn rejected_pod() -> Status {
        Status::new(Code::UnschedulableAndUnresolvable, [ERR_REASON_POD])
            .with_plugin(NodeAffinity::NAME)
    }

    fn rejected_enforced() -> Status {
        Status::new(Code::UnschedulableAndUnresolvable, [ERR_REASON_ENFORCED])
            .with_plugin(NodeAffinity::NAME)
    }

    /// Cases from upstream `TestNodeAffinity`.
    #[test]
    fn filter_matches_node_selector_and_required_affinity() {
        let zone_a = NodeBuilder::new("n1").label("foo", "bar").label("zone", "a").obj();
        let cases: Vec<(&str, Pod, &Node, Status)> = vec![
            (
                "a pod with no selector and no affinity fits",
                PodBuilder::new("ns", "p").obj(),
                &zone_a,
                Status::success(),
            ),
            (
                "a pod whose node selector label is missing on the node is rejected",
                PodBuilder::new("ns", "p").node_selector("foo", "baz").obj(),
                &zone_a,
                rejected_pod(),
            ),
            (
                "a pod whose node selector matches the node fits",
                PodBuilder::new("ns", "p").node_selector("foo", "bar").obj(),
                &zone_a,
                Status::success(),
            ),
            (
                "a pod with an In expression matching the node's label fits",
                PodBuilder::new("ns", "p")
                    .required_node_affinity(vec![node_term(vec![req(
                        "foo",
                        MatchOp::In,
                        &["value1", "bar"],
                    )])])
                    .obj(),
                &zone_a,
                Status::success(),
            ),
            (
                "a pod with a NotIn expression listing the node's label value is rejected",
                PodBuilder::new("ns", "p")
                    .required_node_affinity(vec![node_term(vec![req(
                        "foo",
                        MatchOp::NotIn,
                        &["bar"],
                    )])])
                    .obj(),
                &zone_a,
                rejected_pod(),
            ),
            (
                "a pod with an empty list of required terms matches no node",
                PodBuilder::new("ns", "p").required_node_affinity(vec![]).obj(),
                &zone_a,
                rejected_pod(),
            ),
            (
                "a pod with one empty required term matches no node",
                PodBuilder::new("ns", "p")
                    .required_node_affinity(vec![NodeSelectorTerm::default()])
                    .obj(),
                &zone_a,
                rejected_pod(),
            ),
            (
                "terms are ORed: one matching term is enough",
                PodBuilder::new("ns", "p")
                    .required_node_affinity(vec![
                        node_term(vec![req("foo", MatchOp::In, &["nope"])]),
                        node_term(vec![req("zone", MatchOp::Exists, &[])]),
                    ])
                    .obj(),
                &zone_a,
                Status::success(),
            ),
            (
                "expressions within a term are ANDed",
                PodBuilder::new("ns", "p")
                    .required_node_affinity(vec![node_term(vec![
                        req("foo", MatchOp::In, &["bar"]),
                        req("zone", MatchOp::In, &["b"]),
                    ])])
                    .obj(),
                &zone_a,
                rejected_pod(),
            ),
            (
                "both the node selector and the required affinity must match",
                PodBuilder::new("ns", "p")
                    .node_selector("foo", "bar")
                    .required_node_affinity(vec![node_term(vec![req("zone", MatchOp::In, &["b"])])])
                    .obj(),
                &zone_a,
                rejected_pod(),
            ),
            (
                "a matchFields metadata.name In term matches the named node",
                PodBuilder::new("ns", "p")
                    .required_node_affinity(vec![field_term(MatchOp::In, &["n1"])])
                    .obj(),
                &zone_a,
                Status::success(),
            ),
            (
                "a matchFields metadata.name In term rejects other nodes",
                PodBuilder::new("ns", "p")
                    .required_node_affinity(vec![field_term(MatchOp::In, &["n2"])])
                    .obj(),
                &zone_a,
                rejected_pod(),
            ),
            (
                "a term with matchFields and matchExpressions needs both to match",
                PodBuilder::new("ns", "p")
                    .required_node_affinity(vec![NodeSelectorTerm {
                        match_expressions: vec![req("foo", MatchOp::In, &["nope"])],
                        match_fields: vec![req(OBJECT_NAME_FIELD, MatchOp::In, &["n1"])],
                        invalid: false,
                    }])
                    .obj(),
                &zone_a,
                rejected_pod(),
            ),
            (
                "an invalid term never matches",
                PodBuilder::new("ns", "p")
                    .required_node_affinity(vec![NodeSelectorTerm {
                        match_expressions: vec![req("foo", MatchOp::Exists, &[])],
                        invalid: true,
                        ..Default::default()
                    }])
                    .obj(),
                &zone_a,
                rejected_pod(),
            ),
        ];
        let pl = NodeAffinity::new(&NodeAffinityArgs::default()).expect("valid args");
        for (name, pod, node, want) in cases {
            assert_eq!(pl.filter(&pod, node), want, "{name}");
        }
    }

    #[test]
    fn added_affinity_is_enforced_before_the_pods_own_affinity() {
        let args = NodeAffinityArgs {
            added_affinity: Some(ModelNodeAffinity {
                required: Some(NodeSelector {
                    terms: vec![node_term(vec![req("foo", MatchOp::In, &["bar"])])],
                }),
                preferred: vec![],
            }),
        };
        let pl = NodeAffinity::new(&args).expect("valid args");
        let matching = NodeBuilder::new("n1").label("foo", "bar").obj();
        let other = NodeBuilder::new("n2").label("foo", "baz").obj();
        let cases: Vec<(&str, Pod, &Node, Status)> = vec![
            (
                "a node matching addedAffinity and a pod without affinity fit",
                PodBuilder::new("ns", "p").obj(),
                &matching,
                Status::success(),
            ),
            (
                "a node not matching addedAffinity is rejected with the enforced reason",
                PodBuilder::new("ns", "p").obj(),
                &other,
                rejected_enforced(),
            ),
            (
                "addedAffinity is reported even when the pod's affinity also fails",
                PodBuilder::new("ns", "p").node_selector("x", "y").obj(),
                &other,
                rejected_enforced(),
            ),
            (
                "a node matching addedAffinity but not the pod's selector gets the pod reason",
                PodBuilder::new("ns", "p").node_selector("x", "y").obj(),
                &matching,
                rejected_pod(),
            ),
        ];
        for (name, pod, node, want) in cases {
            assert_eq!(pl.filter(&pod, node), want, "{name}");
        }
        // With addedAffinity the plugin never skips PreFilter, even for a plain pod.
        let cl = cluster(vec![matching.clone()], vec![]);
        assert!(pl.pre_filter(&PodBuilder::new("ns", "p").obj(), &cl).is_ok());
    }

    #[test]
    fn invalid_added_affinity_is_an_argument_error() {
        let args = NodeAffinityArgs {
            added_affinity: Some(ModelNodeAffinity {
                required: Some(NodeSelector {
                    terms: vec![NodeSelectorTerm {
                        match_expressions: vec![req("foo", MatchOp::Exists, &[])],
                        invalid: true,
                        ..Default::default()
                    }],
                }),
                preferred: vec![],
            }),
        };
        assert_eq!(
            NodeAffinity::new(&args).err(),
            Some(NodeAffinityArgsError::InvalidRequiredTerm { index: 0 })
        );
    }

    /// Cases from upstream `TestNodeAffinity` (PreFilter results).
    #[test]
    fn pre_filter_restricts_node_names_only_when_every_term_pins_metadata_name() {
        let names = |v: &[&str]| -> Option<BTreeSet<String>> {
            Some(v.iter().map(|s| (*s).to_string()).collect())
        };
        let cases: Vec<(&str, Pod, PreFilterWant)> = vec![
            (
                "a pod with nothing to check skips the plugin",
                PodBuilder::new("ns", "p").obj(),
                Err(Code::Skip),
            ),
            (
                "a pod with only a node selector gets no node-name restriction",
                PodBuilder::new("ns", "p").node_selector("foo", "bar").obj(),
                Ok(None),
            ),
            (
                "a single term pinning one node name restricts to that node",
                PodBuilder::new("ns", "p")
                    .required_node_affinity(vec![field_term(MatchOp::In, &["node1"])])
                    .obj(),
                Ok(names(&["node1"])),
            ),
            (
                "two terms pinning names restrict to the union of the names",
                PodBuilder::new("ns", "p")
                    .required_node_affinity(vec![
                        field_term(MatchOp::In, &["node1"]),
                        field_term(MatchOp::In, &["node2"]),
                    ])
                    .obj(),
                Ok(names(&["node1", "node2"])),
            ),
            (
                "requirements within a term intersect their names",
                PodBuilder::new("ns", "p")
                    .required_node_affinity(vec![NodeSelectorTerm {
                        match_fields: vec![
                            req(OBJECT_NAME_FIELD, MatchOp::In, &["node1", "node2"]),
                            req(OBJECT_NAME_FIELD, MatchOp::In, &["node2", "node3"]),
                        ],
                        ..Default::default()
                    }])
                    .obj(),
                Ok(names(&["node2"])),
            ),
            (
                "a term without a name pin lifts the restriction of the others",
                PodBuilder::new("ns", "p")
                    .required_node_affinity(vec![
                        field_term(MatchOp::In, &["node1"]),
                        node_term(vec![req("foo", MatchOp::Exists, &[])]),
                    ])
                    .obj(),
                Ok(None),
            ),
            (
                "a NotIn name requirement is not a pin",
                PodBuilder::new("ns", "p")
                    .required_node_affinity(vec![field_term(MatchOp::NotIn, &["node1"])])
                    .obj(),
                Ok(None),
            ),
            (
                "pins that intersect to nothing are a conflict",
                PodBuilder::new("ns", "p")
                    .required_node_affinity(vec![NodeSelectorTerm {
                        match_fields: vec![
                            req(OBJECT_NAME_FIELD, MatchOp::In, &["node1"]),
                            req(OBJECT_NAME_FIELD, MatchOp::In, &["node2"]),
                        ],
                        ..Default::default()
                    }])
                    .obj(),
                Err(Code::UnschedulableAndUnresolvable),
            ),
        ];
        let pl = NodeAffinity::new(&NodeAffinityArgs::default()).expect("valid args");
        let cl = cluster(vec![NodeBuilder::new("node1").obj()], vec![]);
        for (name, pod, want) in cases {
            let got = pl.pre_filter(&pod, &cl).map(|r| r.node_names).map_err(|s| s.code);
            assert_eq!(got, want, "{name}");
        }
        let conflict = PodBuilder::new("ns", "p")
            .required_node_affinity(vec![NodeSelectorTerm {
                match_fields: vec![
                    req(OBJECT_NAME_FIELD, MatchOp::In, &["node1"]),
                    req(OBJECT_NAME_FIELD, MatchOp::In, &["node2"]),
                ],
                ..Default::default()
            }])
            .obj();
        assert_eq!(
            pl.pre_filter(&conflict, &cl).err().map(|s| s.reasons),
            Some(vec![ERR_REASON_CONFLICT.to_string()])
        );
    }

    /// Cases from upstream `TestNodeAffinityPriority`.
    #[test]
    fn score_sums_matching_preferred_weights_and_normalizes_to_the_best_node() {
        let label1 = |n: &str| NodeBuilder::new(n).label("foo", "bar").obj();
        let label2 = |n: &str| NodeBuilder::new(n).label("key", "value").obj();
        let label3 = |n: &str| {
            NodeBuilder::new(n).label("foo", "bar").label("key", "value").label("az", "az1").obj()
        };
        let affinity1 = |b: PodBuilder| {
            b.preferred_node_affinity(2, node_term(vec![req("foo", MatchOp::In, &["bar"])]))
        };
        let affinity2 = |b: PodBuilder| {
            b.preferred_node_affinity(2, node_term(vec![req("foo", MatchOp::In, &["bar"])]))
                .preferred_node_affinity(
                    4,
                    node_term(vec![
                        req("key", MatchOp::In, &["value"]),
                        req("az", MatchOp::In, &["az1"]),
                    ]),
                )
                .preferred_node_affinity(
                    5,
                    node_term(vec![
                        req("foo", MatchOp::In, &["bar"]),
                        req("key", MatchOp::In, &["value"]),
                        req("az", MatchOp::In, &["az1"]),
                    ]),
                )
        };
        struct Case {
            name: &'static str,
            pod: Pod,
            nodes: Vec<Node>,
            added: Option<ModelNodeAffinity>,
            raw: Vec<i64>,
            normalized: Vec<i64>,
        }
        let cases = vec![
            Case {
                // No preferred terms: every node scores 0; normalization of all zeros keeps 0.
                name: "all nodes score zero when the pod's preferred terms match no node",
                pod: affinity1(PodBuilder::new("ns", "p")).obj(),
                nodes: vec![label2("n1"), label2("n2"), label2("n3")],
                added: None,
                raw: vec![0, 0, 0],
                normalized: vec![0, 0, 0],
            },
            Case {
                // n1 matches the weight-2 term: raw 2 → 100*2/2 = 100; others 0.
                name: "only the node matching the preferred term scores",
                pod: affinity1(PodBuilder::new("ns", "p")).obj(),
                nodes: vec![label1("n1"), label2("n2"), label2("n3")],
                added: None,
                raw: vec![2, 0, 0],
                normalized: vec![100, 0, 0],
            },
            Case {
                // n1 (foo=bar): 2. n2 (key=value only): 0. n3 (all labels): 2 + 4 + 5 = 11.
                // Normalized: n1 100*2/11 = 18, n2 0, n3 100.
                name: "weights of every matching preferred term add up",
                pod: affinity2(PodBuilder::new("ns", "p")).obj(),
                nodes: vec![label1("n1"), label2("n2"), label3("n3")],
                added: None,
                raw: vec![2, 0, 11],
                normalized: vec![18, 0, 100],
            },
            Case {
                // addedAffinity prefers key=value with weight 3.
                // n1: pod 2 + added 0 = 2. n2: 0 + 3 = 3. n3: 11 + 3 = 14.
                // Normalized: 100*2/14 = 14, 100*3/14 = 21, 100.
                name: "addedAffinity preferred terms add to the pod's",
                pod: affinity2(PodBuilder::new("ns", "p")).obj(),
                nodes: vec![label1("n1"), label2("n2"), label3("n3")],
                added: Some(ModelNodeAffinity {
                    required: None,
                    preferred: vec![PreferredSchedulingTerm {
                        weight: 3,
                        preference: node_term(vec![req("key", MatchOp::In, &["value"])]),
                    }],
                }),
                raw: vec![2, 3, 14],
                normalized: vec![14, 21, 100],
            },
            Case {
                // A pod without preferences is scored by addedAffinity alone: n2 3 → 100.
                name: "addedAffinity preferred terms score pods without preferences",
                pod: PodBuilder::new("ns", "p").obj(),
                nodes: vec![label1("n1"), label2("n2")],
                added: Some(ModelNodeAffinity {
                    required: None,
                    preferred: vec![PreferredSchedulingTerm {
                        weight: 3,
                        preference: node_term(vec![req("key", MatchOp::In, &["value"])]),
                    }],
                }),
                raw: vec![0, 3],
                normalized: vec![0, 100],
            },
            Case {
                // The weight-0 term is skipped; the empty term matches nothing. n1 scores 0.
                name: "zero-weight and empty preferred terms never score",
                pod: PodBuilder::new("ns", "p")
                    .preferred_node_affinity(0, node_term(vec![req("foo", MatchOp::In, &["bar"])]))
                    .preferred_node_affinity(7, NodeSelectorTerm::default())
                    .obj(),
                nodes: vec![label1("n1")],
                added: None,
                raw: vec![0],
                normalized: vec![0],
            },
        ];
        for c in cases {
            let pl = NodeAffinity::new(&NodeAffinityArgs { added_affinity: c.added.clone() })
                .expect("valid args");
            let cl = cluster(c.nodes.clone(), vec![]);
            let feasible: Vec<usize> = (0..cl.nodes.len()).collect();
            let state = pl.pre_score(&c.pod, &cl, &feasible).expect("pod has preferences");
            let mut scores: Vec<i64> =
                cl.nodes.iter().map(|n| pl.score(&state, &c.pod, n)).collect();
            assert_eq!(scores, c.raw, "{}: raw", c.name);
            pl.normalize_score(&state, &mut scores);
            assert_eq!(scores, c.normalized, "{}: normalized", c.name);
        }
    }

    #[test]
    fn pre_score_skips_pods_without_preferences_and_errors_on_invalid_terms() {
        let pl = NodeAffinity::new(&NodeAffinityArgs::default()).expect("valid args");
        let cl = cluster(vec![NodeBuilder::new("n1").obj()], vec![]);
        let plain = PodBuilder::new("ns", "p").obj();
        assert_eq!(pl.pre_score(&plain, &cl, &[0]).err().map(|s| s.code), Some(Code::Skip));
        let invalid = PodBuilder::new("ns", "p")
            .preferred_node_affinity(
                1,
                NodeSelectorTerm {
                    match_expressions: vec![req("foo", MatchOp::Exists, &[])],
                    invalid: true,
                    ..Default::default()
                },
            )
            .obj();
        assert_eq!(pl.pre_score(&invalid, &cl, &[0]).err().map(|s| s.code), Some(Code::Error));
    }
}
