//! InterPodAffinity: required and preferred pod affinity and anti-affinity.
//!
//! Input: the pod being scheduled, the [`ClusterState`] (every node with its pods, and namespace
//! labels for `namespaceSelector`) and [`InterPodAffinityArgs`]. Output: a per-pod
//! [`PreFilterState`] and per-node filter statuses ([`crate::framework::Status`]) with
//! upstream's reasons; a per-pod [`PreScoreState`], raw per-node scores and their normalization
//! to 0–100.
//!
//! Upstream (v1.35): `pkg/scheduler/framework/plugins/interpodaffinity/plugin.go`
//! (`mergeAffinityTermNamespacesIfNotEmpty`, `GetNamespaceLabelsSnapshot`), `filtering.go`,
//! `scoring.go`, and the processed term `fwk.AffinityTerm` (`Matches`, `newAffinityTerm`,
//! `getNamespacesFromPodAffinityTerm`) of `staging/src/k8s.io/kube-scheduler/framework` /
//! `pkg/scheduler/framework/types.go`.
//!
//! Namespace semantics of a term (mirrored exactly): the term applies to the pods whose
//! namespace is in `namespaces`, or whose namespace's labels match `namespaceSelector`; with
//! neither set, to the term owner's own namespace. An empty `namespaceSelector` matches every
//! namespace; an absent one matches none. For the *incoming* pod's terms upstream first expands
//! the selector into the namespaces it selects among the namespaces that exist in the snapshot
//! (so a pod in a namespace unknown to the snapshot is only matched through `namespaces` or an
//! empty selector); for *existing* pods' terms the selector is matched against the labels of
//! the incoming pod's namespace (empty when that namespace is not in the snapshot).

mod filtering;
mod scoring;

pub use filtering::{
    ERR_REASON_AFFINITY_RULES_NOT_MATCH, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH, PreFilterState, TopologyCounts,
};
pub use scoring::PreScoreState;

use std::collections::BTreeSet;

use crate::framework::args::InterPodAffinityArgs;
use crate::model::{
    ClusterState, LabelSelector, Labels, Pod, PodAffinityTerm, WeightedPodAffinityTerm,
};

/// The plugin's name in profiles and statuses.
pub const NAME: &str = "InterPodAffinity";

/// The InterPodAffinity plugin (filter and score), configured by its arguments.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InterPodAffinity {
    /// `InterPodAffinityArgs` (hard pod affinity weight, ignoring existing pods' preferences).
    pub args: InterPodAffinityArgs,
    /// PreFilter's counts, kept across cycles per node generation.
    filter_memo: filtering::FilterMemo,
    /// PreScore's summed weights, kept across cycles per node generation.
    score_memo: scoring::ScoreMemo,
}

impl InterPodAffinity {
    /// A plugin with these arguments.
    pub fn new(args: InterPodAffinityArgs) -> Self {
        InterPodAffinity { args, ..Default::default() }
    }
}

/// A pod affinity term processed for matching (upstream `fwk.AffinityTerm`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AffinityTerm {
    /// Namespaces the term applies to by name.
    pub namespaces: BTreeSet<String>,
    /// Namespaces the term applies to by labels: `None` is upstream's `labels.Nothing()`,
    /// `Some(empty)` is `labels.Everything()`.
    pub namespace_selector: Option<LabelSelector>,
    /// The pods the term selects (`None`: no pod).
    pub label_selector: Option<LabelSelector>,
    /// `topologyKey`.
    pub topology_key: String,
}

impl AffinityTerm {
    /// Processes `term` of a pod owned by `owner` (upstream `newAffinityTerm`): with neither
    /// `namespaces` nor `namespaceSelector`, the term applies to the owner's namespace.
    pub fn new(owner: &Pod, term: &PodAffinityTerm) -> Self {
        let namespaces = if term.namespaces.is_empty() && term.namespace_selector.is_none() {
            BTreeSet::from([owner.namespace.clone()])
        } else {
            term.namespaces.iter().cloned().collect()
        };
        AffinityTerm {
            namespaces,
            namespace_selector: term.namespace_selector.clone(),
            label_selector: term.label_selector.clone(),
            topology_key: term.topology_key.clone(),
        }
    }

    /// Processes a term of the *incoming* pod: like [`AffinityTerm::new`], then a non-empty
    /// namespace selector is expanded into the snapshot's namespaces it selects and dropped
    /// (upstream `mergeAffinityTermNamespacesIfNotEmpty`); an empty selector stays and keeps
    /// matching every namespace.
    pub fn new_incoming(owner: &Pod, term: &PodAffinityTerm, cluster: &ClusterState) -> Self {
        let mut at = AffinityTerm::new(owner, term);
        match &at.namespace_selector {
            Some(sel) if sel.is_empty() => {}
            Some(sel) => {
                for (ns, labels) in &cluster.namespace_labels {
                    if sel.matches(labels) {
                        at.namespaces.insert(ns.clone());
                    }
                }
                at.namespace_selector = None;
            }
            None => {}
        }
        at
    }

    /// Whether `pod` is selected by the term, given the labels of `pod`'s namespace as the
    /// caller knows them (upstream `AffinityTerm.Matches`; upstream passes nil labels for the
    /// incoming pod's merged terms, which is an empty map here).
    pub fn matches(&self, pod: &Pod, ns_labels: &Labels) -> bool {
        let ns_selected = self.namespaces.contains(&pod.namespace)
            || self.namespace_selector.as_ref().is_some_and(|s| s.matches(ns_labels));
        ns_selected && selector_matches(&self.label_selector, &pod.labels)
    }
}

/// A processed preferred term with its weight (upstream `fwk.WeightedAffinityTerm`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WeightedAffinityTerm {
    /// Weight in 1..=100.
    pub weight: i32,
    /// The term.
    pub term: AffinityTerm,
}

/// Whether an existing pod's term (owned by a pod in `owner_namespace`) selects `pod`, whose
/// namespace has `ns_labels`. Same result as `AffinityTerm::new(owner, term).matches(pod,
/// ns_labels)` without allocating.
pub(crate) fn existing_term_matches(
    owner_namespace: &str,
    term: &PodAffinityTerm,
    pod: &Pod,
    ns_labels: &Labels,
) -> bool {
    let ns_selected = if term.namespaces.is_empty() && term.namespace_selector.is_none() {
        pod.namespace == owner_namespace
    } else {
        term.namespaces.contains(&pod.namespace)
            || term.namespace_selector.as_ref().is_some_and(|s| s.matches(ns_labels))
    };
    ns_selected && selector_matches(&term.label_selector, &pod.labels)
}

/// A nil selector (`None`) matches nothing; an empty one everything.
pub(crate) fn selector_matches(selector: &Option<LabelSelector>, labels: &Labels) -> bool {
    selector.as_ref().is_some_and(|s| s.matches(labels))
}

/// The incoming pod's terms, processed and namespace-merged.
pub(crate) fn incoming_terms(
    pod: &Pod,
    terms: &[PodAffinityTerm],
    cluster: &ClusterState,
) -> Vec<AffinityTerm> {
    terms.iter().map(|t| AffinityTerm::new_incoming(pod, t, cluster)).collect()
}

/// The incoming pod's weighted terms, processed and namespace-merged.
pub(crate) fn incoming_weighted_terms(
    pod: &Pod,
    terms: &[WeightedPodAffinityTerm],
    cluster: &ClusterState,
) -> Vec<WeightedAffinityTerm> {
    terms
        .iter()
        .map(|t| WeightedAffinityTerm {
            weight: t.weight,
            term: AffinityTerm::new_incoming(pod, &t.term, cluster),
        })
        .collect()
}

/// Whether `pod` matches *every* term; false when there are none (upstream
/// `podMatchesAllAffinityTerms`, used with the incoming pod's merged terms, hence no namespace
/// labels).
pub(crate) fn pod_matches_all_terms(terms: &[AffinityTerm], pod: &Pod) -> bool {
    static NO_LABELS: Labels = Labels::new();
    !terms.is_empty() && terms.iter().all(|t| t.matches(pod, &NO_LABELS))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::testing::{PodBuilder, affinity_term};

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs.iter().map(|(k, v)| ((*k).to_string(), (*v).to_string())).collect()
    }

    fn cluster_with_namespaces(ns: &[(&str, &[(&str, &str)])]) -> ClusterState {
        let mut c = ClusterState::default();
        for (name, l) in ns {
            c.namespace_labels.insert((*name).to_string(), labels(l));
        }
        c
    }

    #[test]
    fn term_namespaces_follow_upstream_semantics() {
        let cluster = cluster_with_namespaces(&[
            ("ns1", &[("team", "a")]),
            ("ns2", &[("team", "b")]),
            ("ns3", &[]),
        ]);
        let owner = PodBuilder::new("ns1", "owner").obj();
        let base = affinity_term("zone", &[("app", "web")]);
        let with_namespaces = |ns: &[&str]| PodAffinityTerm {
            namespaces: ns.iter().map(|n| (*n).to_string()).collect(),
            ..base.clone()
        };
        let with_selector = |ns: &[&str], sel: Option<LabelSelector>| PodAffinityTerm {
            namespace_selector: sel,
            ..with_namespaces(ns)
        };
        let team_a = Some(LabelSelector::from_match_labels([("team", "a")]));
        let team_b = Some(LabelSelector::from_match_labels([("team", "b")]));
        // (case, term, namespace of the candidate pod, whether it is selected)
        let cases: Vec<(&str, PodAffinityTerm, &str, bool)> = vec![
            (
                "a term with neither namespaces nor selector selects its owner's namespace",
                base.clone(),
                "ns1",
                true,
            ),
            (
                "a term with neither namespaces nor selector ignores other namespaces",
                base.clone(),
                "ns2",
                false,
            ),
            (
                "a term listing namespaces selects a listed one",
                with_namespaces(&["ns2"]),
                "ns2",
                true,
            ),
            (
                "a term listing namespaces ignores its owner's unlisted namespace",
                with_namespaces(&["ns2"]),
                "ns1",
                false,
            ),
            (
                "an empty namespace selector selects every namespace",
                with_selector(&[], Some(LabelSelector::default())),
                "ns3",
                true,
            ),
            (
                "an empty namespace selector selects namespaces unknown to the snapshot",
                with_selector(&[], Some(LabelSelector::default())),
                "elsewhere",
                true,
            ),
            (
                "a namespace selector selects namespaces with matching labels",
                with_selector(&[], team_b.clone()),
                "ns2",
                true,
            ),
            (
                "a namespace selector does not select its owner's namespace by default",
                with_selector(&[], team_b.clone()),
                "ns1",
                false,
            ),
            (
                "namespaces and a selector are unioned: the listed namespace",
                with_selector(&["ns3"], team_a.clone()),
                "ns3",
                true,
            ),
            (
                "namespaces and a selector are unioned: the selected namespace",
                with_selector(&["ns3"], team_a.clone()),
                "ns1",
                true,
            ),
            (
                "namespaces and a selector are unioned: neither",
                with_selector(&["ns3"], team_a),
                "ns2",
                false,
            ),
        ];
        for (name, term, ns, want) in cases {
            let pod = PodBuilder::new(ns, "p").label("app", "web").obj();
            let ns_labels = cluster.namespace_labels(ns).clone();
            // Existing pods' terms: matched against the candidate's namespace labels.
            let processed = AffinityTerm::new(&owner, &term);
            assert_eq!(processed.matches(&pod, &ns_labels), want, "existing term: {name}");
            assert_eq!(
                existing_term_matches(&owner.namespace, &term, &pod, &ns_labels),
                want,
                "non-allocating existing term: {name}"
            );
            // The incoming pod's terms: the selector is expanded over the snapshot's
            // namespaces and matched with no labels; every namespace above is in the
            // snapshot (or the selector is empty), so the verdict is the same.
            let incoming = AffinityTerm::new_incoming(&owner, &term, &cluster);
            assert_eq!(incoming.matches(&pod, &Labels::new()), want, "incoming term: {name}");
        }
    }

    #[test]
    fn an_incoming_term_selector_only_selects_namespaces_in_the_snapshot() {
        // `team DoesNotExist` matches the empty labels of a namespace the snapshot does not
        // know. Upstream lists namespaces to expand the incoming pod's selector, so the
        // unknown namespace is not selected; an existing pod's term, matched against the
        // (empty) labels of the incoming pod's namespace, does select it.
        let cluster = cluster_with_namespaces(&[("ns1", &[("team", "a")])]);
        let owner = PodBuilder::new("ns1", "owner").obj();
        let pod = PodBuilder::new("unknown", "p").label("app", "web").obj();
        let mut term = affinity_term("zone", &[("app", "web")]);
        let mut sel = LabelSelector::default();
        sel.requirements.push(crate::model::Requirement::new(
            "team",
            crate::model::MatchOp::DoesNotExist,
            &[],
        ));
        term.namespace_selector = Some(sel);
        let incoming = AffinityTerm::new_incoming(&owner, &term, &cluster);
        assert!(incoming.namespace_selector.is_none());
        assert!(!incoming.matches(&pod, &Labels::new()));
        assert!(existing_term_matches("ns1", &term, &pod, cluster.namespace_labels("unknown")));
    }

    #[test]
    fn a_nil_label_selector_selects_no_pod_and_an_empty_one_every_pod() {
        let owner = PodBuilder::new("ns", "owner").obj();
        let pod = PodBuilder::new("ns", "p").label("app", "web").obj();
        let mut term = affinity_term("zone", &[]);
        term.label_selector = None;
        assert!(!AffinityTerm::new(&owner, &term).matches(&pod, &Labels::new()));
        term.label_selector = Some(LabelSelector::default());
        assert!(AffinityTerm::new(&owner, &term).matches(&pod, &Labels::new()));
    }

    #[test]
    fn a_pod_matches_all_terms_only_when_there_are_terms() {
        let pod = PodBuilder::new("ns", "p").label("app", "web").obj();
        let cluster = ClusterState::default();
        assert!(!pod_matches_all_terms(&[], &pod));
        let terms = incoming_terms(&pod, &[affinity_term("zone", &[("app", "web")])], &cluster);
        assert!(pod_matches_all_terms(&terms, &pod));
        let terms = incoming_terms(
            &pod,
            &[affinity_term("zone", &[("app", "web")]), affinity_term("zone", &[("app", "db")])],
            &cluster,
        );
        assert!(!pod_matches_all_terms(&terms, &pod));
    }
}
