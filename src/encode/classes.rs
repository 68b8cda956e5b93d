//! Equivalence classes of pending pods: pods with equal [`PodSignature`]s get the same verdict
//! and score from every filter and score plugin on every node, so the matrices have one row per
//! class instead of one per pod.
//!
//! Input: the pending pods, in queue order. Output: [`PodClasses`] — classes numbered in order
//! of first appearance, and each pod's class.
//!
//! Counterpart: upstream's pod signatures for opportunistic batching (KEP-5598,
//! `pkg/scheduler/framework/runtime/framework.go` `SignPod`,
//! `staging/src/k8s.io/kube-scheduler/framework/signers.go` and the plugins' `SignPod`, v1.35).
//!
//! # What the signature holds, and where it differs from upstream
//!
//! Upstream signs: `schedulerName`; the resource requests with overhead (NodeResourcesFit,
//! BalancedAllocation); `nodeSelector` and node affinity with requirement values and terms sorted
//! (NodeAffinity); tolerations sorted (TaintToleration); host ports (NodePorts); canonical image
//! names (ImageLocality); labels (InterPodAffinity); non-synthetic volumes (VolumeBinding); and
//! `nodeName`. It refuses to sign (no batching at all) pods with pod (anti-)affinity terms or
//! with explicit or default topology spread constraints.
//!
//! kplace must class *every* pod, so the signature also carries those parts. In detail:
//!
//! * **Added:** topology spread constraints and the default spread selector; pod affinity and
//!   anti-affinity terms (required and preferred); the namespace (upstream omits it, but affinity
//!   and spread terms of other pods — and the pod's own terms with no `namespaces` — select by
//!   namespace); priority and preemption policy (preemption and the solver read them); the
//!   non-zero requests (the scoring plugins read them).
//! * **Host ports:** kept as `(hostIP, protocol, port)` triples, since NodePorts compares all
//!   three; upstream signs only the port numbers.
//! * **Tolerations:** `tolerationSeconds` is dropped (no filter or score reads it; upstream keeps
//!   it); duplicates are merged (tolerations are "any of").
//! * **Volumes:** `has_pvc` and the claims the pod's volumes use (by name, in order), plus the
//!   pod's uid when it has a generic ephemeral volume (whose claim must be the pod's own):
//!   the claim checks of VolumeBinding's and VolumeRestrictions' PreFilters read exactly these.
//!   Pods of a StatefulSet, each with its own claim, are therefore classes of their own.
//! * **Normalization** (never merges pods that a plugin could tell apart): `In`/`NotIn` values
//!   sorted and de-duplicated; requirements within a term and required node terms sorted and
//!   de-duplicated (AND / OR of the same requirement is idempotent); preferred terms, spread
//!   constraints, affinity terms and images sorted but **not** de-duplicated (scores sum over
//!   them, so a duplicate counts twice); zero-valued scalar requests dropped (upstream skips
//!   them); `matchLabelKeys`/`mismatchLabelKeys` dropped (already merged into the selectors).
//! * **Excluded:** name, uid (but see volumes), annotations, owner, creation and start time, phase, `emptyDir` use.

use std::collections::HashMap;

use super::EncodeError;
use super::dict::check_u32;
use crate::model::{
    HostPort, InclusionPolicy, LabelSelector, Labels, MatchOp, NodeSelectorTerm, Pod,
    PodAffinityTerm, PodClaim, PreemptionPolicy, Requirement, Taint, TaintEffect, Toleration,
    TolerationOperator, TopologySpreadConstraint, UnsatisfiableAction,
};
use crate::resources::Resource;

/// A toleration as the filters see it (`tolerationSeconds` dropped).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TolerationShape {
    /// `key` (empty: every key, with `Exists`).
    pub key: String,
    /// Whether the operator is `Exists` (else `Equal`).
    pub exists: bool,
    /// `value`.
    pub value: String,
    /// `effect` (`None`: every effect).
    pub effect: Option<TaintEffect>,
}

impl TolerationShape {
    /// The shape of a toleration.
    pub fn of(t: &Toleration) -> Self {
        TolerationShape {
            key: t.key.clone(),
            exists: t.operator == TolerationOperator::Exists,
            value: t.value.clone(),
            effect: t.effect,
        }
    }

    /// Whether this toleration tolerates the taint (upstream `Toleration.ToleratesTaint`,
    /// `staging/src/k8s.io/api/core/v1/toleration.go`): the effect must match unless empty, the
    /// key must match unless empty, and then `Exists` matches any value and `Equal` the same value.
    pub fn tolerates(&self, taint: &Taint) -> bool {
        if self.effect.is_some_and(|e| e != taint.effect) {
            return false;
        }
        if !self.key.is_empty() && self.key != taint.key {
            return false;
        }
        self.exists || self.value == taint.value
    }
}

/// A node selector term, normalized.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SigNodeTerm {
    /// `matchExpressions`, normalized, sorted and de-duplicated.
    pub match_expressions: Vec<Requirement>,
    /// `matchFields`, normalized, sorted and de-duplicated.
    pub match_fields: Vec<Requirement>,
    /// Whether the term failed validation (never matches).
    pub invalid: bool,
}

impl SigNodeTerm {
    /// The normalized form of a model term.
    pub fn of(t: &NodeSelectorTerm) -> Self {
        SigNodeTerm {
            match_expressions: normalize_requirements(&t.match_expressions),
            match_fields: normalize_requirements(&t.match_fields),
            invalid: t.invalid,
        }
    }

    /// Whether the term can never match (invalid, or no expressions and no fields).
    pub fn never_matches(&self) -> bool {
        self.invalid || (self.match_expressions.is_empty() && self.match_fields.is_empty())
    }
}

/// A topology spread constraint, normalized.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SigSpread {
    /// `topologyKey`.
    pub topology_key: String,
    /// `maxSkew`.
    pub max_skew: i32,
    /// `whenUnsatisfiable: DoNotSchedule` (else `ScheduleAnyway`).
    pub do_not_schedule: bool,
    /// `labelSelector`, normalized (`None`: matches no pod).
    pub selector: Option<LabelSelector>,
    /// `minDomains`.
    pub min_domains: Option<i32>,
    /// `nodeAffinityPolicy: Honor`.
    pub honor_node_affinity: bool,
    /// `nodeTaintsPolicy: Honor`.
    pub honor_node_taints: bool,
}

impl SigSpread {
    fn of(c: &TopologySpreadConstraint) -> Self {
        SigSpread {
            topology_key: c.topology_key.clone(),
            max_skew: c.max_skew,
            do_not_schedule: c.when_unsatisfiable == UnsatisfiableAction::DoNotSchedule,
            selector: c.label_selector.as_ref().map(normalize_selector),
            min_domains: c.min_domains,
            honor_node_affinity: c.node_affinity_policy == InclusionPolicy::Honor,
            honor_node_taints: c.node_taints_policy == InclusionPolicy::Honor,
        }
    }
}

/// A pod (anti-)affinity term, normalized.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SigAffinityTerm {
    /// `labelSelector`, normalized (`None`: matches no pod).
    pub selector: Option<LabelSelector>,
    /// `namespaces`, sorted and de-duplicated.
    pub namespaces: Vec<String>,
    /// `namespaceSelector`, normalized (`None`: absent).
    pub namespace_selector: Option<LabelSelector>,
    /// `topologyKey`.
    pub topology_key: String,
}

impl SigAffinityTerm {
    fn of(t: &PodAffinityTerm) -> Self {
        let mut namespaces = t.namespaces.clone();
        namespaces.sort();
        namespaces.dedup();
        SigAffinityTerm {
            selector: t.label_selector.as_ref().map(normalize_selector),
            namespaces,
            namespace_selector: t.namespace_selector.as_ref().map(normalize_selector),
            topology_key: t.topology_key.clone(),
        }
    }
}

/// Everything any filter or score plugin (and preemption) reads from a pending pod, normalized
/// so that equal signatures mean interchangeable pods. See the module doc.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PodSignature {
    /// `spec.schedulerName`.
    pub scheduler_name: String,
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.labels`.
    pub labels: Labels,
    /// Resolved priority.
    pub priority: i32,
    /// `preemptionPolicy: Never`.
    pub preempt_never: bool,
    /// Effective requests, zero-valued scalars dropped.
    pub requests: Resource,
    /// Non-zero CPU request (millicores).
    pub non_zero_milli_cpu: i64,
    /// Non-zero memory request (bytes).
    pub non_zero_memory: i64,
    /// `spec.nodeName` (normally absent for pending pods).
    pub node_name: Option<String>,
    /// `spec.nodeSelector`.
    pub node_selector: Labels,
    /// Required node affinity terms, sorted and de-duplicated (`None`: no required affinity).
    pub required_node_affinity: Option<Vec<SigNodeTerm>>,
    /// Preferred node affinity `(weight, term)`, sorted.
    pub preferred_node_affinity: Vec<(i32, SigNodeTerm)>,
    /// Tolerations, sorted and de-duplicated.
    pub tolerations: Vec<TolerationShape>,
    /// Host ports, sorted and de-duplicated.
    pub host_ports: Vec<HostPort>,
    /// Topology spread constraints, sorted.
    pub spread_constraints: Vec<SigSpread>,
    /// The default spread selector, normalized.
    pub default_spread_selector: Option<LabelSelector>,
    /// Required pod affinity terms, sorted.
    pub pod_affinity_required: Vec<SigAffinityTerm>,
    /// Preferred pod affinity `(weight, term)`, sorted.
    pub pod_affinity_preferred: Vec<(i32, SigAffinityTerm)>,
    /// Required pod anti-affinity terms, sorted.
    pub pod_anti_affinity_required: Vec<SigAffinityTerm>,
    /// Preferred pod anti-affinity `(weight, term)`, sorted.
    pub pod_anti_affinity_preferred: Vec<(i32, SigAffinityTerm)>,
    /// Container images (normalized names), sorted, duplicates kept.
    pub images: Vec<String>,
    /// Whether the pod mounts a PersistentVolumeClaim.
    pub has_pvc: bool,
    /// The claims of the pod's volumes, in order (VolumeBinding's and VolumeRestrictions'
    /// PreFilters read them by name).
    pub claims: Vec<PodClaim>,
    /// The pod's uid when it has a generic ephemeral volume (its claim must be controlled by
    /// the pod), else empty.
    pub claim_owner_uid: String,
}

impl PodSignature {
    /// The signature of a pod.
    pub fn of(pod: &Pod) -> Self {
        let mut requests = pod.requests.clone();
        requests.scalar.retain(|_, v| *v != 0);

        let required_node_affinity = pod.node_affinity.required.as_ref().map(|ns| {
            let mut terms: Vec<SigNodeTerm> = ns.terms.iter().map(SigNodeTerm::of).collect();
            terms.sort();
            terms.dedup();
            terms
        });
        let mut preferred_node_affinity: Vec<(i32, SigNodeTerm)> = pod
            .node_affinity
            .preferred
            .iter()
            .map(|p| (p.weight, SigNodeTerm::of(&p.preference)))
            .collect();
        preferred_node_affinity.sort();

        let mut tolerations: Vec<TolerationShape> =
            pod.tolerations.iter().map(TolerationShape::of).collect();
        tolerations.sort();
        tolerations.dedup();

        let mut host_ports = pod.host_ports.clone();
        host_ports.sort();
        host_ports.dedup();

        let mut spread_constraints: Vec<SigSpread> =
            pod.topology_spread_constraints.iter().map(SigSpread::of).collect();
        spread_constraints.sort();

        let required = |terms: &[PodAffinityTerm]| {
            let mut v: Vec<SigAffinityTerm> = terms.iter().map(SigAffinityTerm::of).collect();
            v.sort();
            v
        };
        let preferred = |terms: &[crate::model::WeightedPodAffinityTerm]| {
            let mut v: Vec<(i32, SigAffinityTerm)> =
                terms.iter().map(|t| (t.weight, SigAffinityTerm::of(&t.term))).collect();
            v.sort();
            v
        };

        let mut images = pod.images.clone();
        images.sort();

        PodSignature {
            scheduler_name: pod.scheduler_name.clone(),
            namespace: pod.namespace.clone(),
            labels: pod.labels.clone(),
            priority: pod.priority,
            preempt_never: pod.preemption_policy == PreemptionPolicy::Never,
            requests,
            non_zero_milli_cpu: pod.non_zero_requests.milli_cpu,
            non_zero_memory: pod.non_zero_requests.memory,
            node_name: pod.node_name.clone(),
            node_selector: pod.node_selector.clone(),
            required_node_affinity,
            preferred_node_affinity,
            tolerations,
            host_ports,
            spread_constraints,
            default_spread_selector: pod.default_spread_selector.as_ref().map(normalize_selector),
            pod_affinity_required: required(&pod.pod_affinity.required),
            pod_affinity_preferred: preferred(&pod.pod_affinity.preferred),
            pod_anti_affinity_required: required(&pod.pod_anti_affinity.required),
            pod_anti_affinity_preferred: preferred(&pod.pod_anti_affinity.preferred),
            images,
            has_pvc: pod.has_pvc,
            claims: pod.claims.clone(),
            claim_owner_uid: if pod.claims.iter().any(|c| c.ephemeral) {
                pod.uid.clone()
            } else {
                String::new()
            },
        }
    }
}

/// Sorts and de-duplicates the values of `In`/`NotIn` (set semantics); other operators keep
/// their values as given (`Gt`/`Lt` require exactly one value, so de-duplicating could change
/// the verdict).
pub fn normalize_requirement(r: &Requirement) -> Requirement {
    let mut r = r.clone();
    if matches!(r.op, MatchOp::In | MatchOp::NotIn) {
        r.values.sort();
        r.values.dedup();
    }
    r
}

fn normalize_requirements(rs: &[Requirement]) -> Vec<Requirement> {
    let mut v: Vec<Requirement> = rs.iter().map(normalize_requirement).collect();
    v.sort();
    v.dedup();
    v
}

/// A label selector with normalized requirements, sorted and de-duplicated.
pub fn normalize_selector(s: &LabelSelector) -> LabelSelector {
    LabelSelector { requirements: normalize_requirements(&s.requirements) }
}

/// One equivalence class.
#[derive(Debug, Clone, PartialEq)]
pub struct PodClass {
    /// Index (in the pending list) of the first pod of the class.
    pub representative: usize,
    /// Indices of every pod of the class, ascending.
    pub members: Vec<usize>,
    /// The shared signature.
    pub signature: PodSignature,
}

/// Pending pods grouped into classes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PodClasses {
    /// Classes, numbered in order of first appearance in the pending list.
    pub classes: Vec<PodClass>,
    /// Class index of each pending pod.
    pub pod_class: Vec<u32>,
}

impl PodClasses {
    /// Number of classes.
    pub fn len(&self) -> usize {
        self.classes.len()
    }

    /// Whether there are no classes (no pending pods).
    pub fn is_empty(&self) -> bool {
        self.classes.is_empty()
    }
}

/// Groups pending pods by signature. Deterministic: classes are numbered in order of first
/// appearance (the hash map is only used for lookups, never iterated).
pub fn classify(pending: &[Pod]) -> Result<PodClasses, EncodeError> {
    check_u32("pending pods", pending.len())?;
    let mut index: HashMap<PodSignature, u32> = HashMap::new();
    let mut classes: Vec<PodClass> = Vec::new();
    let mut pod_class = Vec::with_capacity(pending.len());
    for (i, pod) in pending.iter().enumerate() {
        let sig = PodSignature::of(pod);
        let id = match index.get(&sig) {
            Some(&id) => id,
            None => {
                let id = check_u32("pod classes", classes.len())?;
                index.insert(sig.clone(), id);
                classes.push(PodClass { representative: i, members: Vec::new(), signature: sig });
                id
            }
        };
        if let Some(class) = classes.get_mut(id as usize) {
            class.members.push(i);
        }
        pod_class.push(id);
    }
    Ok(PodClasses { classes, pod_class })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::testing::{PodBuilder, affinity_term, node_term, spread_constraint};
    use crate::model::{TaintEffect, TolerationOperator as Op};

    fn base(name: &str) -> PodBuilder {
        PodBuilder::new("default", name).cpu(500).memory(256 << 20).label("app", "web").toleration(
            "gpu",
            Op::Exists,
            "",
            Some(TaintEffect::NoSchedule),
        )
    }

    #[test]
    fn pods_share_a_class_exactly_when_plugins_cannot_tell_them_apart() {
        let cases: Vec<(&str, Pod, bool)> = vec![
            ("pods differing only in name share a class", base("b").obj(), true),
            (
                "pods differing only in annotations, uid and timestamps share a class",
                base("b").annotation("note", "x").created(99).started(100).obj(),
                true,
            ),
            (
                "tolerations in another order share a class",
                PodBuilder::new("default", "b")
                    .cpu(500)
                    .memory(256 << 20)
                    .label("app", "web")
                    .toleration("gpu", Op::Exists, "", Some(TaintEffect::NoSchedule))
                    .toleration("gpu", Op::Exists, "", Some(TaintEffect::NoSchedule))
                    .obj(),
                true,
            ),
            ("a different label makes a new class", base("b").label("tier", "1").obj(), false),
            (
                "a different namespace makes a new class",
                {
                    let mut p = base("b").obj();
                    p.namespace = "other".into();
                    p
                },
                false,
            ),
            (
                "a different toleration makes a new class",
                base("b").toleration("spot", Op::Exists, "", None).obj(),
                false,
            ),
            ("a different CPU request makes a new class", base("b").cpu(501).obj(), false),
            (
                "a different scalar request makes a new class",
                base("b").scalar("nvidia.com/gpu", 1).obj(),
                false,
            ),
            (
                "a zero scalar request is the same as none",
                base("b").scalar("nvidia.com/gpu", 0).obj(),
                true,
            ),
            ("a different priority makes a new class", base("b").priority(10).obj(), false),
            ("preemptionPolicy Never makes a new class", base("b").preemption_never().obj(), false),
            ("a different scheduler makes a new class", base("b").scheduler("other").obj(), false),
            (
                "a node selector makes a new class",
                base("b").node_selector("disk", "ssd").obj(),
                false,
            ),
            ("a host port makes a new class", base("b").host_port("", "TCP", 80).obj(), false),
            ("an image makes a new class", base("b").image("nginx:1").obj(), false),
            (
                "a spread constraint makes a new class",
                base("b")
                    .spread(spread_constraint(
                        1,
                        "zone",
                        UnsatisfiableAction::DoNotSchedule,
                        &[("app", "web")],
                    ))
                    .obj(),
                false,
            ),
            (
                "an anti-affinity term makes a new class",
                base("b")
                    .pod_anti_affinity(affinity_term("kubernetes.io/hostname", &[("app", "web")]))
                    .obj(),
                false,
            ),
        ];
        let a = base("a").obj();
        for (name, b, same) in cases {
            let classes = classify(&[a.clone(), b]).unwrap();
            assert_eq!(classes.len() == 1, same, "{name}");
            assert_eq!(classes.pod_class, if same { vec![0, 0] } else { vec![0, 1] }, "{name}");
        }
    }

    #[test]
    fn normalization_merges_only_equivalent_spellings() {
        let t = |vals: &[&str]| node_term(vec![Requirement::new("zone", MatchOp::In, vals)]);
        let other = node_term(vec![Requirement::new("disk", MatchOp::Exists, &[])]);
        let cases: Vec<(&str, Pod, Pod, bool)> = vec![
            (
                "In values in another order share a class",
                PodBuilder::new("d", "a").required_node_affinity(vec![t(&["a", "b"])]).obj(),
                PodBuilder::new("d", "b").required_node_affinity(vec![t(&["b", "a", "b"])]).obj(),
                true,
            ),
            (
                "required node terms in another order share a class",
                PodBuilder::new("d", "a")
                    .required_node_affinity(vec![t(&["a"]), other.clone()])
                    .obj(),
                PodBuilder::new("d", "b")
                    .required_node_affinity(vec![other.clone(), t(&["a"])])
                    .obj(),
                true,
            ),
            (
                "an empty required node affinity differs from none",
                PodBuilder::new("d", "a").required_node_affinity(vec![]).obj(),
                PodBuilder::new("d", "b").obj(),
                false,
            ),
            (
                "a repeated preferred term is not merged, since its weight counts twice",
                PodBuilder::new("d", "a").preferred_node_affinity(5, t(&["a"])).obj(),
                PodBuilder::new("d", "b")
                    .preferred_node_affinity(5, t(&["a"]))
                    .preferred_node_affinity(5, t(&["a"]))
                    .obj(),
                false,
            ),
            (
                "preferred terms in another order share a class",
                PodBuilder::new("d", "a")
                    .preferred_node_affinity(5, t(&["a"]))
                    .preferred_node_affinity(3, other.clone())
                    .obj(),
                PodBuilder::new("d", "b")
                    .preferred_node_affinity(3, other.clone())
                    .preferred_node_affinity(5, t(&["a"]))
                    .obj(),
                true,
            ),
            (
                "Gt with a repeated value is kept as written (it never matches)",
                PodBuilder::new("d", "a")
                    .required_node_affinity(vec![node_term(vec![Requirement::new(
                        "cpu",
                        MatchOp::Gt,
                        &["1"],
                    )])])
                    .obj(),
                PodBuilder::new("d", "b")
                    .required_node_affinity(vec![node_term(vec![Requirement::new(
                        "cpu",
                        MatchOp::Gt,
                        &["1", "1"],
                    )])])
                    .obj(),
                false,
            ),
            (
                "a repeated image counts twice",
                PodBuilder::new("d", "a").image("x").obj(),
                PodBuilder::new("d", "b").image("x").image("x").obj(),
                false,
            ),
            (
                "images in another order share a class",
                PodBuilder::new("d", "a").image("x").image("y").obj(),
                PodBuilder::new("d", "b").image("y").image("x").obj(),
                true,
            ),
        ];
        for (name, a, b, same) in cases {
            assert_eq!(PodSignature::of(&a) == PodSignature::of(&b), same, "{name}");
        }
    }

    #[test]
    fn classes_are_numbered_in_order_of_first_appearance() {
        let pods = vec![
            PodBuilder::new("d", "p0").cpu(2).obj(),
            PodBuilder::new("d", "p1").cpu(1).obj(),
            PodBuilder::new("d", "p2").cpu(2).obj(),
            PodBuilder::new("d", "p3").cpu(3).obj(),
            PodBuilder::new("d", "p4").cpu(1).obj(),
        ];
        let c = classify(&pods).unwrap();
        assert_eq!(c.pod_class, vec![0, 1, 0, 2, 1]);
        let reps: Vec<usize> = c.classes.iter().map(|k| k.representative).collect();
        assert_eq!(reps, vec![0, 1, 3]);
        let members: Vec<Vec<usize>> = c.classes.iter().map(|k| k.members.clone()).collect();
        assert_eq!(members, vec![vec![0, 2], vec![1, 4], vec![3]]);
        assert!(classify(&[]).unwrap().is_empty(), "no pending pods, no classes");
    }

    #[test]
    fn toleration_matching_follows_upstream() {
        let taint = |k: &str, v: &str, e| Taint { key: k.into(), value: v.into(), effect: e };
        let tol = |k: &str, exists, v: &str, e| TolerationShape {
            key: k.into(),
            exists,
            value: v.into(),
            effect: e,
        };
        use TaintEffect::*;
        let cases = [
            (
                "Equal with the same key, value and effect tolerates",
                tol("k", false, "v", Some(NoSchedule)),
                taint("k", "v", NoSchedule),
                true,
            ),
            (
                "Equal with another value does not tolerate",
                tol("k", false, "w", Some(NoSchedule)),
                taint("k", "v", NoSchedule),
                false,
            ),
            (
                "Exists ignores the value",
                tol("k", true, "", Some(NoSchedule)),
                taint("k", "v", NoSchedule),
                true,
            ),
            (
                "an empty effect matches every effect",
                tol("k", true, "", None),
                taint("k", "v", NoExecute),
                true,
            ),
            (
                "another effect does not tolerate",
                tol("k", true, "", Some(NoSchedule)),
                taint("k", "v", PreferNoSchedule),
                false,
            ),
            (
                "an empty key with Exists tolerates every taint",
                tol("", true, "", None),
                taint("any", "x", NoExecute),
                true,
            ),
            (
                "another key does not tolerate",
                tol("j", true, "", None),
                taint("k", "", NoSchedule),
                false,
            ),
            (
                "an empty key with Equal compares values only (as upstream)",
                tol("", false, "x", None),
                taint("any", "x", NoSchedule),
                true,
            ),
        ];
        for (name, t, taint, want) in cases {
            assert_eq!(t.tolerates(&taint), want, "{name}");
        }
    }
}
