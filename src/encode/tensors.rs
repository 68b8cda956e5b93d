//! Dense arrays: the cluster and the pod classes as integer matrices and CSR lists, in the
//! [`units`](super::units) the kernels compute with.
//!
//! Input: the [`ClusterState`], the [`PodClasses`] and the [`Dictionaries`]. Output:
//! [`Tensors`]. No upstream counterpart; the semantics encoded are those of upstream's
//! `framework.NodeInfo`/`PodInfo` (v1.35), and the CPU twins here ([`Tensors::requirement_matches`],
//! [`Tensors::node_term_matches`], [`Tensors::selector_matches`]) define how a kernel reads them.
//!
//! # Layout
//!
//! `N` nodes (in [`ClusterState::nodes`] order, i.e. by name), `C` classes, `R` resource columns
//! (`cpu, memory, ephemeral-storage, pods`, then other resources by name — see
//! [`super::dict::ResourceTable`]), `K` topology keys. A *CSR* ([`Csr`]) is `offsets` (rows + 1
//! entries) and `ids`; row `i` is `ids[offsets[i]..offsets[i + 1]]`. `NONE` = `u32::MAX`.
//!
//! Nodes:
//! * `node_allocatable`, `node_requested`, `node_nonzero_requested`: `N × R` `u32`, row-major.
//!   Allocatable rounds down; requested is the sum of each pod's rounded-up request; the `pods`
//!   column of requested holds the number of pods on the node; non-zero requested differs from
//!   requested only in `cpu` and `memory` (upstream `NonZeroRequested`).
//! * `node_flags`: [`NODE_UNSCHEDULABLE`], [`NODE_INEXACT_UNITS`].
//! * `node_labels` (label-pair ids, ascending), `node_taints` (taint ids, ascending),
//!   `node_images` (image ids, ascending), `node_used_ports` (host-port ids, ascending): CSR.
//! * `node_domains`: `N × K` local topology-domain id per key, `NONE` when the node lacks the key.
//! * `node_bound_pods`: CSR over bound pods, which are numbered node by node; bound pod `b` has
//!   `bound_pod_node[b]`, `bound_pod_namespace[b]`, `bound_pod_priority[b]` and label-pair ids
//!   `bound_pod_labels` row `b`.
//!
//! Classes:
//! * `class_requests`, `class_nonzero_requests`: `C × R` `u32` (rounded up; `pods` column = 1).
//! * `class_flags` ([`CLASS_TOLERATES_UNSCHEDULABLE`] …), `class_priority` (`i32`),
//!   `class_size` (member count), `class_namespace` (namespace id), `class_node_name` (node index
//!   of `spec.nodeName`, `NONE` if absent or unknown; see [`CLASS_HAS_NODE_NAME`]),
//!   `class_default_spread_selector` (selector id or `NONE`).
//! * CSR per class: `class_labels` (pair ids), `class_tolerations` (toleration ids),
//!   `class_tolerated_taints` (ids of the taints some toleration of the class tolerates),
//!   `class_host_ports` (host-port ids), `class_images` (image ids, repeated per container),
//!   `class_node_selector` (requirement ids, ANDed), `class_required_terms` (node-term ids,
//!   ORed; only meaningful with [`CLASS_HAS_REQUIRED_NODE_AFFINITY`]), `class_preferred_terms`
//!   (node-term ids, weights in `class_preferred_weights` at the same positions),
//!   `class_spread` (spread-row ids), `class_affinity` (affinity-row ids).
//!
//! Shared tables:
//! * `requirements` + `requirement_sets`: see [`CompiledRequirement`].
//! * `node_terms` (CSR of requirement ids, ANDed) + `node_term_flags` ([`TERM_NEVER_MATCHES`],
//!   [`TERM_INVALID`]). An empty or invalid term never matches.
//! * `selectors` (CSR of requirement ids, ANDed): label selector id → requirements. An empty
//!   selector matches every pod; the id `NONE` (nil selector) matches none.
//! * `spread` ([`SpreadRow`]), `affinity` ([`AffinityRow`]) + `affinity_namespaces` (CSR of the
//!   namespace ids each affinity row selects, precomputed from `namespaces`,
//!   `namespaceSelector` and the pod's own namespace).
//! * `taint_effects`: effect code per taint id ([`EFFECT_NO_SCHEDULE`] …).

use ndarray::{Array1, Array2};

use super::classes::{PodClasses, PodSignature, SigAffinityTerm, TolerationShape};
use super::dict::{
    Dictionaries, RequirementKind, ResourceTable, SharedIds, check_u32, node_selector_requirement,
};
use super::node_side::NodeSide;
use super::units::{
    Amount, AmountError, MAX_SHIFT, Rounding, encode_amount, encode_request_sum,
    smallest_fitting_shift,
};
use super::{AmountField, EncodeError, Subject};
use crate::model::{ClusterState, MatchOp, Requirement, Taint, TaintEffect};
use crate::resources::{CPU, MEMORY, PODS};

/// "No id": an absent key, selector, node or value.
pub const NONE: u32 = u32::MAX;

/// Node flag: `spec.unschedulable` (cordoned).
pub const NODE_UNSCHEDULABLE: u32 = 1 << 0;
/// Node flag: some amount of the node (or of a pod on it) was rounded when encoded.
pub const NODE_INEXACT_UNITS: u32 = 1 << 1;

/// Class flag: tolerates the `node.kubernetes.io/unschedulable:NoSchedule` taint (NodeUnschedulable).
pub const CLASS_TOLERATES_UNSCHEDULABLE: u32 = 1 << 0;
/// Class flag: `preemptionPolicy: Never`.
pub const CLASS_PREEMPT_NEVER: u32 = 1 << 1;
/// Class flag: has a `nodeSelector`.
pub const CLASS_HAS_NODE_SELECTOR: u32 = 1 << 2;
/// Class flag: has required node affinity (possibly with no terms, which matches no node).
pub const CLASS_HAS_REQUIRED_NODE_AFFINITY: u32 = 1 << 3;
/// Class flag: has `spec.nodeName` (then only `class_node_name` matches; `NONE` = no node).
pub const CLASS_HAS_NODE_NAME: u32 = 1 << 4;
/// Class flag: mounts a PersistentVolumeClaim.
pub const CLASS_HAS_PVC: u32 = 1 << 5;
/// Class flag: some request of the class was rounded when encoded.
pub const CLASS_INEXACT_UNITS: u32 = 1 << 6;

/// Requirement flag: matches the node index (`metadata.name`) instead of labels.
pub const REQ_FIELD: u32 = 1 << 0;
/// Requirement flag: the result when the object lacks the key.
pub const REQ_ABSENT_MATCHES: u32 = 1 << 1;
/// Requirement flag: the set lists the values that do *not* match.
pub const REQ_NEGATE: u32 = 1 << 2;

/// Node-term flag: the term never matches (no expressions and no fields, or invalid).
pub const TERM_NEVER_MATCHES: u32 = 1 << 0;
/// Node-term flag: the term failed validation (upstream errors on invalid preferred terms).
pub const TERM_INVALID: u32 = 1 << 1;

/// Spread flag: `whenUnsatisfiable: DoNotSchedule` (else ScheduleAnyway).
pub const SPREAD_DO_NOT_SCHEDULE: u32 = 1 << 0;
/// Spread flag: `nodeAffinityPolicy: Honor`.
pub const SPREAD_HONOR_NODE_AFFINITY: u32 = 1 << 1;
/// Spread flag: `nodeTaintsPolicy: Honor`.
pub const SPREAD_HONOR_NODE_TAINTS: u32 = 1 << 2;
/// Spread flag: `minDomains` is set.
pub const SPREAD_HAS_MIN_DOMAINS: u32 = 1 << 3;

/// Affinity kind: required pod affinity.
pub const AFFINITY_REQUIRED: u32 = 0;
/// Affinity kind: required pod anti-affinity.
pub const ANTI_AFFINITY_REQUIRED: u32 = 1;
/// Affinity kind: preferred pod affinity.
pub const AFFINITY_PREFERRED: u32 = 2;
/// Affinity kind: preferred pod anti-affinity.
pub const ANTI_AFFINITY_PREFERRED: u32 = 3;
/// Affinity flag: the namespace selector is empty (every namespace, also ones not in the snapshot).
pub const AFFINITY_ALL_NAMESPACES: u32 = 1 << 0;

/// Taint effect code `NoSchedule`.
pub const EFFECT_NO_SCHEDULE: u32 = 0;
/// Taint effect code `PreferNoSchedule`.
pub const EFFECT_PREFER_NO_SCHEDULE: u32 = 1;
/// Taint effect code `NoExecute`.
pub const EFFECT_NO_EXECUTE: u32 = 2;

/// The taint NodeUnschedulable checks tolerations against.
pub const UNSCHEDULABLE_TAINT_KEY: &str = "node.kubernetes.io/unschedulable";

/// The effect code of a taint effect.
pub fn effect_code(e: TaintEffect) -> u32 {
    match e {
        TaintEffect::NoSchedule => EFFECT_NO_SCHEDULE,
        TaintEffect::PreferNoSchedule => EFFECT_PREFER_NO_SCHEDULE,
        TaintEffect::NoExecute => EFFECT_NO_EXECUTE,
    }
}

/// Compressed sparse rows of `u32` ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Csr {
    /// Row starts; `offsets.len()` = rows + 1, `offsets[0] = 0`.
    pub offsets: Vec<u32>,
    /// The ids of every row, concatenated.
    pub ids: Vec<u32>,
}

impl Default for Csr {
    fn default() -> Self {
        Csr { offsets: vec![0], ids: Vec::new() }
    }
}

impl Csr {
    /// Appends a row.
    pub fn push_row(
        &mut self,
        what: &'static str,
        ids: impl IntoIterator<Item = u32>,
    ) -> Result<(), EncodeError> {
        self.ids.extend(ids);
        let end = check_u32(what, self.ids.len())?;
        self.offsets.push(end);
        Ok(())
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// `(start, count)` of row `i` (`(0, 0)` out of range).
    pub fn range(&self, i: usize) -> (u32, u32) {
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&a), Some(&b)) => (a, b - a),
            _ => (0, 0),
        }
    }

    /// Row `i` (empty out of range).
    pub fn row(&self, i: usize) -> &[u32] {
        let (start, count) = self.range(i);
        self.ids.get(start as usize..(start + count) as usize).unwrap_or(&[])
    }
}

/// A selector requirement compiled against the label-pair dictionary (or the node list).
///
/// Label kind: let `p` be the object's label pair in `pair_lo..pair_hi` (the pairs of `key`; an
/// object has at most one). If there is none, the result is [`REQ_ABSENT_MATCHES`]. Otherwise it
/// is `(p ∈ set) XOR NEGATE`, where `set` is `requirement_sets[set_start..set_start + set_count]`
/// (ascending). Field kind ([`REQ_FIELD`], `metadata.name`): `(node index ∈ set) XOR NEGATE`.
/// `NEGATE` lets a set hold whichever of the matching/non-matching values is smaller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompiledRequirement {
    /// [`REQ_FIELD`], [`REQ_ABSENT_MATCHES`], [`REQ_NEGATE`].
    pub flags: u32,
    /// Label key id (`NONE` for fields).
    pub key: u32,
    /// First pair id of the key.
    pub pair_lo: u32,
    /// One past the last pair id of the key.
    pub pair_hi: u32,
    /// Start of the set in `requirement_sets`.
    pub set_start: u32,
    /// Length of the set.
    pub set_count: u32,
}

/// One topology spread constraint of a class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpreadRow {
    /// Topology key id.
    pub topology_key: u32,
    /// `maxSkew`.
    pub max_skew: i32,
    /// `minDomains` (0 when unset; see [`SPREAD_HAS_MIN_DOMAINS`]).
    pub min_domains: i32,
    /// [`SPREAD_DO_NOT_SCHEDULE`] …
    pub flags: u32,
    /// Selector id, `NONE` for a nil selector (matches no pod).
    pub selector: u32,
}

/// One pod (anti-)affinity term of a class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AffinityRow {
    /// [`AFFINITY_REQUIRED`], [`ANTI_AFFINITY_REQUIRED`], [`AFFINITY_PREFERRED`],
    /// [`ANTI_AFFINITY_PREFERRED`].
    pub kind: u32,
    /// Weight (preferred terms; 0 for required ones).
    pub weight: i32,
    /// Topology key id.
    pub topology_key: u32,
    /// Selector id, `NONE` for a nil selector (matches no pod).
    pub selector: u32,
    /// [`AFFINITY_ALL_NAMESPACES`].
    pub flags: u32,
}

/// All dense arrays of one encoding (layout in the module doc).
#[derive(Debug, Clone, PartialEq)]
pub struct Tensors {
    /// `N × R` allocatable, rounded down.
    pub node_allocatable: Array2<u32>,
    /// `N × R` sum of the pods' rounded-up requests; the `pods` column is the pod count.
    pub node_requested: Array2<u32>,
    /// `N × R` like `node_requested`, with upstream's non-zero defaults in `cpu`/`memory`.
    pub node_nonzero_requested: Array2<u32>,
    /// Per node: [`NODE_UNSCHEDULABLE`], [`NODE_INEXACT_UNITS`].
    pub node_flags: Array1<u32>,
    /// Per node: label-pair ids, ascending.
    pub node_labels: Csr,
    /// Per node: taint ids, ascending.
    pub node_taints: Csr,
    /// Per node: image ids, ascending.
    pub node_images: Csr,
    /// Per node: host-port ids in use, ascending.
    pub node_used_ports: Csr,
    /// `N × K` local domain id per topology key, `NONE` when the node lacks the key.
    pub node_domains: Array2<u32>,
    /// Per node: its bound-pod ids (contiguous).
    pub node_bound_pods: Csr,
    /// Per bound pod: node index.
    pub bound_pod_node: Array1<u32>,
    /// Per bound pod: namespace id.
    pub bound_pod_namespace: Array1<u32>,
    /// Per bound pod: priority.
    pub bound_pod_priority: Array1<i32>,
    /// Per bound pod: label-pair ids, ascending.
    pub bound_pod_labels: Csr,

    /// `C × R` effective requests, rounded up; `pods` column = 1.
    pub class_requests: Array2<u32>,
    /// `C × R` non-zero requests (scoring), rounded up.
    pub class_nonzero_requests: Array2<u32>,
    /// Per class: [`CLASS_TOLERATES_UNSCHEDULABLE`] and the other `CLASS_*` flags.
    pub class_flags: Array1<u32>,
    /// Per class: priority.
    pub class_priority: Array1<i32>,
    /// Per class: number of member pods.
    pub class_size: Array1<u32>,
    /// Per class: namespace id.
    pub class_namespace: Array1<u32>,
    /// Per class: node index of `spec.nodeName`, `NONE` if absent or unknown.
    pub class_node_name: Array1<u32>,
    /// Per class: selector id of the default spread selector, or `NONE`.
    pub class_default_spread_selector: Array1<u32>,
    /// Per class: label-pair ids, ascending.
    pub class_labels: Csr,
    /// Per class: toleration ids.
    pub class_tolerations: Csr,
    /// Per class: ids of the taints some toleration tolerates (serves both the filter and the
    /// PreferNoSchedule score: a toleration with another effect never tolerates a PreferNoSchedule
    /// taint).
    pub class_tolerated_taints: Csr,
    /// Per class: wanted host-port ids.
    pub class_host_ports: Csr,
    /// Per class: image ids, one per container (repeats kept).
    pub class_images: Csr,
    /// Per class: requirement ids of `nodeSelector`, ANDed.
    pub class_node_selector: Csr,
    /// Per class: required node-term ids, ORed.
    pub class_required_terms: Csr,
    /// Per class: preferred node-term ids.
    pub class_preferred_terms: Csr,
    /// Weights aligned with `class_preferred_terms.ids`.
    pub class_preferred_weights: Vec<i32>,
    /// Per class: spread-row ids (contiguous).
    pub class_spread: Csr,
    /// Per class: affinity-row ids (contiguous).
    pub class_affinity: Csr,

    /// Compiled requirements, by requirement id.
    pub requirements: Vec<CompiledRequirement>,
    /// The sets of all compiled requirements, concatenated.
    pub requirement_sets: Vec<u32>,
    /// Per node term: requirement ids, ANDed.
    pub node_terms: Csr,
    /// Per node term: [`TERM_NEVER_MATCHES`], [`TERM_INVALID`].
    pub node_term_flags: Vec<u32>,
    /// Per label selector: requirement ids, ANDed.
    pub selectors: Csr,
    /// Spread rows.
    pub spread: Vec<SpreadRow>,
    /// Affinity rows.
    pub affinity: Vec<AffinityRow>,
    /// Per affinity row: namespace ids it selects, ascending.
    pub affinity_namespaces: Csr,
    /// Per taint id: effect code.
    pub taint_effects: Vec<u32>,
}

impl Tensors {
    /// CPU twin of the requirement test a kernel performs: whether requirement `req` holds for an
    /// object with these label-pair ids (ascending) and, for field requirements, this node index.
    pub fn requirement_matches(&self, req: u32, labels: &[u32], node: Option<u32>) -> bool {
        let Some(r) = self.requirements.get(req as usize) else { return false };
        let set = self
            .requirement_sets
            .get(r.set_start as usize..(r.set_start + r.set_count) as usize)
            .unwrap_or(&[]);
        let negate = r.flags & REQ_NEGATE != 0;
        if r.flags & REQ_FIELD != 0 {
            return node.is_some_and(|n| set.binary_search(&n).is_ok() != negate);
        }
        let i = labels.partition_point(|&p| p < r.pair_lo);
        match labels.get(i) {
            Some(&p) if p < r.pair_hi => set.binary_search(&p).is_ok() != negate,
            _ => r.flags & REQ_ABSENT_MATCHES != 0,
        }
    }

    /// CPU twin: whether node term `term` matches node `node`.
    pub fn node_term_matches(&self, term: u32, node: usize) -> bool {
        if self.node_term_flags.get(term as usize).is_none_or(|f| f & TERM_NEVER_MATCHES != 0) {
            return false;
        }
        let labels = self.node_labels.row(node);
        self.node_terms
            .row(term as usize)
            .iter()
            .all(|&r| self.requirement_matches(r, labels, Some(node as u32)))
    }

    /// CPU twin: whether label selector `selector` (`NONE`: nil, matches nothing) matches an
    /// object with these label-pair ids.
    pub fn selector_matches(&self, selector: u32, labels: &[u32]) -> bool {
        if selector == NONE || selector as usize >= self.selectors.rows() {
            return false;
        }
        self.selectors
            .row(selector as usize)
            .iter()
            .all(|&r| self.requirement_matches(r, labels, None))
    }

    /// CPU twin of upstream `RequiredNodeAffinity.Match`: `nodeSelector` AND (any required term).
    pub fn class_required_node_affinity_matches(&self, class: usize, node: usize) -> bool {
        let labels = self.node_labels.row(node);
        let selector_ok = self
            .class_node_selector
            .row(class)
            .iter()
            .all(|&r| self.requirement_matches(r, labels, Some(node as u32)));
        let has_required =
            self.class_flags.get(class).is_some_and(|f| f & CLASS_HAS_REQUIRED_NODE_AFFINITY != 0);
        selector_ok
            && (!has_required
                || self
                    .class_required_terms
                    .row(class)
                    .iter()
                    .any(|&t| self.node_term_matches(t, node)))
    }
}

mod build;

pub use build::{encode_node_usage_column, fit_adaptive_units};

#[cfg(test)]
mod tests;
