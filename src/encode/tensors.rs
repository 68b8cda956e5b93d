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

/// Raises the shift of every adaptive resource column until all its amounts fit (see
/// [`super::units`]). Fixed columns are left alone (their overflow is reported when encoding).
pub fn fit_adaptive_units(table: &mut ResourceTable, state: &ClusterState, classes: &PodClasses) {
    for unit in table.units.iter_mut().filter(|u| u.adaptive) {
        let name = unit.name.as_str();
        let capacities: Vec<i64> = state.nodes.iter().map(|n| n.allocatable.get(name)).collect();
        let mut groups: Vec<Vec<i64>> = state
            .nodes
            .iter()
            .map(|n| n.pods.iter().map(|p| p.requests.get(name)).collect())
            .collect();
        groups.extend(classes.classes.iter().map(|c| vec![c.signature.requests.get(name)]));
        match smallest_fitting_shift(unit.shift, &capacities, groups.iter().map(Vec::as_slice)) {
            Some(shift) => unit.shift = shift,
            None => {
                // Only a negative amount (or a sum beyond any shift) gets here: encode at the
                // largest shift so that the encoding step names the offender.
                unit.shift = MAX_SHIFT;
            }
        }
    }
}

struct Ctx<'a> {
    state: &'a ClusterState,
    classes: &'a PodClasses,
    dicts: &'a Dictionaries,
    pending: &'a [crate::model::Pod],
    /// The nodes' and bound pods' label pairs collected once, and where they went.
    shared: Option<(&'a NodeSide, &'a SharedIds)>,
}

fn amount_error(
    e: AmountError,
    subject: Subject,
    unit: &super::units::ResourceUnit,
    field: AmountField,
    value: i64,
) -> EncodeError {
    match e {
        AmountError::Negative => {
            EncodeError::Negative { subject, resource: unit.name.clone(), field, value }
        }
        AmountError::TooLarge { .. } => EncodeError::Overflow {
            subject,
            resource: unit.name.clone(),
            field,
            value,
            max: super::units::AMOUNT_MAX,
            unit: unit.unit_name(),
        },
    }
}

impl Tensors {
    /// Builds every array. `dicts.resources` must already have its adaptive shifts fitted
    /// ([`fit_adaptive_units`]).
    pub fn build(
        state: &ClusterState,
        pending: &[crate::model::Pod],
        classes: &PodClasses,
        dicts: &Dictionaries,
    ) -> Result<Self, EncodeError> {
        Self::build_inner(Ctx { state, classes, dicts, pending, shared: None })
    }

    /// [`Tensors::build`] with the nodes' and bound pods' label ids renumbered from `side`
    /// (what [`Dictionaries::build_shared`] returned with `dicts`).
    pub(crate) fn build_shared(
        side: &NodeSide,
        ids: &SharedIds,
        state: &ClusterState,
        pending: &[crate::model::Pod],
        classes: &PodClasses,
        dicts: &Dictionaries,
    ) -> Result<Self, EncodeError> {
        Self::build_inner(Ctx { state, classes, dicts, pending, shared: Some((side, ids)) })
    }

    fn build_inner(cx: Ctx<'_>) -> Result<Self, EncodeError> {
        let (state, classes, dicts) = (cx.state, cx.classes, cx.dicts);
        let n = state.nodes.len();
        let c = classes.len();
        let r = dicts.resources.len();
        check_u32("nodes", n)?;
        check_u32("pod classes", c)?;

        let mut t = Tensors {
            node_allocatable: Array2::zeros((n, r)),
            node_requested: Array2::zeros((n, r)),
            node_nonzero_requested: Array2::zeros((n, r)),
            node_flags: Array1::zeros(n),
            node_labels: Csr::default(),
            node_taints: Csr::default(),
            node_images: Csr::default(),
            node_used_ports: Csr::default(),
            node_domains: Array2::from_elem((n, dicts.topology_keys.len()), NONE),
            node_bound_pods: Csr::default(),
            bound_pod_node: Array1::zeros(0),
            bound_pod_namespace: Array1::zeros(0),
            bound_pod_priority: Array1::zeros(0),
            bound_pod_labels: Csr::default(),
            class_requests: Array2::zeros((c, r)),
            class_nonzero_requests: Array2::zeros((c, r)),
            class_flags: Array1::zeros(c),
            class_priority: Array1::zeros(c),
            class_size: Array1::zeros(c),
            class_namespace: Array1::zeros(c),
            class_node_name: Array1::from_elem(c, NONE),
            class_default_spread_selector: Array1::from_elem(c, NONE),
            class_labels: Csr::default(),
            class_tolerations: Csr::default(),
            class_tolerated_taints: Csr::default(),
            class_host_ports: Csr::default(),
            class_images: Csr::default(),
            class_node_selector: Csr::default(),
            class_required_terms: Csr::default(),
            class_preferred_terms: Csr::default(),
            class_preferred_weights: Vec::new(),
            class_spread: Csr::default(),
            class_affinity: Csr::default(),
            requirements: Vec::new(),
            requirement_sets: Vec::new(),
            node_terms: Csr::default(),
            node_term_flags: Vec::new(),
            selectors: Csr::default(),
            spread: Vec::new(),
            affinity: Vec::new(),
            affinity_namespaces: Csr::default(),
            taint_effects: dicts.taints.items().iter().map(|t| effect_code(t.effect)).collect(),
        };
        t.encode_node_resources(&cx)?;
        t.encode_node_lists(&cx)?;
        t.compile_requirements(&cx)?;
        t.encode_class_resources(&cx)?;
        t.encode_class_lists(&cx)?;
        Ok(t)
    }

    fn encode_node_resources(&mut self, cx: &Ctx<'_>) -> Result<(), EncodeError> {
        for (i, node) in cx.state.nodes.iter().enumerate() {
            let subject = || Subject::Node(node.name.clone());
            let mut exact = true;
            for (j, unit) in cx.dicts.resources.units.iter().enumerate() {
                let name = unit.name.as_str();
                let raw = node.allocatable.get(name);
                let alloc = encode_amount(raw, unit.shift, Rounding::Down)
                    .map_err(|e| amount_error(e, subject(), unit, AmountField::Allocatable, raw))?;
                let (requested, nonzero) = encode_node_usage_column(node, unit)?;
                exact &= alloc.exact && requested.exact && nonzero.exact;
                self.node_allocatable[[i, j]] = alloc.value;
                self.node_requested[[i, j]] = requested.value;
                self.node_nonzero_requested[[i, j]] = nonzero.value;
            }
            let mut flags = 0;
            if node.unschedulable {
                flags |= NODE_UNSCHEDULABLE;
            }
            if !exact {
                flags |= NODE_INEXACT_UNITS;
            }
            self.node_flags[i] = flags;
        }
        Ok(())
    }

    fn encode_node_lists(&mut self, cx: &Ctx<'_>) -> Result<(), EncodeError> {
        let d = cx.dicts;
        let mut bound_node = Vec::new();
        let mut bound_ns = Vec::new();
        let mut bound_prio = Vec::new();
        let mut bound_index = 0usize;
        for (i, node) in cx.state.nodes.iter().enumerate() {
            match cx.shared {
                // The map is increasing, so a renumbered row stays ascending.
                Some((side, ids)) => self.node_labels.push_row(
                    "node labels",
                    side.node_rows.row(i).iter().map(|&p| ids.node_pair[p as usize]),
                )?,
                None => self
                    .node_labels
                    .push_row("node labels", sorted_ids(label_ids(d, &node.labels)))?,
            }
            self.node_taints.push_row(
                "node taints",
                sorted_ids(node.taints.iter().filter_map(|t| d.taints.id(t))),
            )?;
            self.node_images.push_row(
                "node images",
                sorted_ids(
                    node.images
                        .iter()
                        .flat_map(|im| im.names.iter())
                        .filter_map(|n| d.images.id(n.as_str())),
                ),
            )?;
            self.node_used_ports.push_row(
                "node ports",
                sorted_ids(node.used_ports.iter().filter_map(|p| d.host_ports.id(p))),
            )?;
            match cx.shared {
                // A node has at most one pair of a key; its domain is that pair's place in
                // the key's range.
                Some((side, ids)) => {
                    let row = side.node_rows.row(i);
                    for (k, range) in ids.domain_ranges.iter().enumerate() {
                        let at = row.partition_point(|&p| p < range.start);
                        if let Some(&p) = row.get(at).filter(|&&p| p < range.end) {
                            self.node_domains[[i, k]] = p - range.start;
                        }
                    }
                }
                None => {
                    for (k, key) in d.topology_keys.items().iter().enumerate() {
                        if let (Some(value), Some(domains)) =
                            (node.labels.get(key), d.topology_domains.get(k))
                        {
                            self.node_domains[[i, k]] = domains.id(value.as_str()).unwrap_or(NONE);
                        }
                    }
                }
            }
            let first = bound_node.len();
            for pod in &node.pods {
                bound_node.push(i as u32);
                bound_ns.push(d.namespaces.id(pod.namespace.as_str()).unwrap_or(NONE));
                bound_prio.push(pod.priority);
                match cx.shared {
                    Some((side, ids)) => self.bound_pod_labels.push_row(
                        "bound pod labels",
                        side.pod_rows.row(bound_index).iter().map(|&p| ids.pod_pair[p as usize]),
                    )?,
                    None => self
                        .bound_pod_labels
                        .push_row("bound pod labels", sorted_ids(label_ids(d, &pod.labels)))?,
                }
                bound_index += 1;
            }
            let b = check_u32("bound pods", bound_node.len())?;
            self.node_bound_pods.push_row("bound pods", (first as u32)..b)?;
        }
        self.bound_pod_node = Array1::from_vec(bound_node);
        self.bound_pod_namespace = Array1::from_vec(bound_ns);
        self.bound_pod_priority = Array1::from_vec(bound_prio);
        Ok(())
    }

    fn compile_requirements(&mut self, cx: &Ctx<'_>) -> Result<(), EncodeError> {
        let d = cx.dicts;
        for (kind, req) in d.requirements.items() {
            let (mut flags, key, lo, hi, mut set) = match kind {
                RequirementKind::Label => compile_label(d, req),
                RequirementKind::Field => compile_field(cx.state, req),
            };
            let universe = match kind {
                RequirementKind::Label => (hi - lo) as usize,
                RequirementKind::Field => cx.state.nodes.len(),
            };
            // Store the smaller of the set and its complement.
            if set.len() * 2 > universe {
                let base = if *kind == RequirementKind::Label { lo } else { 0 };
                let all = base..base + universe as u32;
                set = complement(all, &set);
                flags ^= REQ_NEGATE;
            }
            let set_start = check_u32("requirement sets", self.requirement_sets.len())?;
            let set_count = check_u32("requirement sets", set.len())?;
            self.requirement_sets.extend(set);
            check_u32("requirement sets", self.requirement_sets.len())?;
            self.requirements.push(CompiledRequirement {
                flags,
                key,
                pair_lo: lo,
                pair_hi: hi,
                set_start,
                set_count,
            });
        }
        for term in d.node_terms.items() {
            let ids = term
                .match_expressions
                .iter()
                .map(|r| (RequirementKind::Label, r))
                .chain(term.match_fields.iter().map(|r| (RequirementKind::Field, r)))
                .filter_map(|(k, r)| d.requirements.id_by(|(k2, r2)| (k2, r2).cmp(&(&k, r))));
            self.node_terms.push_row("node term requirements", ids)?;
            let mut flags = 0;
            if term.never_matches() {
                flags |= TERM_NEVER_MATCHES;
            }
            if term.invalid {
                flags |= TERM_INVALID;
            }
            self.node_term_flags.push(flags);
        }
        for sel in d.selectors.items() {
            let ids = sel.requirements.iter().filter_map(|r| {
                d.requirements.id_by(|(k2, r2)| (k2, r2).cmp(&(&RequirementKind::Label, r)))
            });
            self.selectors.push_row("selector requirements", ids)?;
        }
        Ok(())
    }

    fn encode_class_resources(&mut self, cx: &Ctx<'_>) -> Result<(), EncodeError> {
        for (ci, class) in cx.classes.classes.iter().enumerate() {
            let sig = &class.signature;
            let pod_key = cx.pending.get(class.representative).map(|p| p.key()).unwrap_or_default();
            let mut exact = true;
            for (j, unit) in cx.dicts.resources.units.iter().enumerate() {
                let name = unit.name.as_str();
                let (req, nz) = match name {
                    PODS => (1, 1),
                    CPU => (sig.requests.milli_cpu, sig.non_zero_milli_cpu),
                    MEMORY => (sig.requests.memory, sig.non_zero_memory),
                    _ => {
                        let v = sig.requests.get(name);
                        (v, v)
                    }
                };
                let enc = |raw: i64, field| {
                    encode_amount(raw, unit.shift, Rounding::Up).map_err(|e| {
                        amount_error(e, Subject::Pod(pod_key.clone()), unit, field, raw)
                    })
                };
                let a: Amount = enc(req, AmountField::Request)?;
                let b: Amount = enc(nz, AmountField::NonZeroRequest)?;
                exact &= a.exact && b.exact;
                self.class_requests[[ci, j]] = a.value;
                self.class_nonzero_requests[[ci, j]] = b.value;
            }
            if !exact {
                self.class_flags[ci] |= CLASS_INEXACT_UNITS;
            }
        }
        Ok(())
    }

    fn encode_class_lists(&mut self, cx: &Ctx<'_>) -> Result<(), EncodeError> {
        let d = cx.dicts;
        let unschedulable_taint = Taint {
            key: UNSCHEDULABLE_TAINT_KEY.to_string(),
            value: String::new(),
            effect: TaintEffect::NoSchedule,
        };
        for (ci, class) in cx.classes.classes.iter().enumerate() {
            let sig: &PodSignature = &class.signature;
            let mut flags = self.class_flags[ci];
            let tolerates =
                |t: &Taint| sig.tolerations.iter().any(|tol: &TolerationShape| tol.tolerates(t));
            if tolerates(&unschedulable_taint) {
                flags |= CLASS_TOLERATES_UNSCHEDULABLE;
            }
            if sig.preempt_never {
                flags |= CLASS_PREEMPT_NEVER;
            }
            if !sig.node_selector.is_empty() {
                flags |= CLASS_HAS_NODE_SELECTOR;
            }
            if sig.required_node_affinity.is_some() {
                flags |= CLASS_HAS_REQUIRED_NODE_AFFINITY;
            }
            if let Some(name) = &sig.node_name {
                flags |= CLASS_HAS_NODE_NAME;
                self.class_node_name[ci] = cx.state.node_index(name).map_or(NONE, |i| i as u32);
            }
            if sig.has_pvc {
                flags |= CLASS_HAS_PVC;
            }
            self.class_flags[ci] = flags;
            self.class_priority[ci] = sig.priority;
            self.class_size[ci] = check_u32("class members", class.members.len())?;
            let own_ns = d.namespaces.id(sig.namespace.as_str()).unwrap_or(NONE);
            self.class_namespace[ci] = own_ns;
            self.class_default_spread_selector[ci] = sig
                .default_spread_selector
                .as_ref()
                .and_then(|s| d.selectors.id(s))
                .unwrap_or(NONE);

            self.class_labels.push_row("class labels", sorted_ids(label_ids(d, &sig.labels)))?;
            self.class_tolerations.push_row(
                "class tolerations",
                sig.tolerations.iter().filter_map(|t| d.tolerations.id(t)),
            )?;
            let tolerated = d
                .taints
                .items()
                .iter()
                .enumerate()
                .filter(|(_, t)| tolerates(t))
                .map(|(i, _)| i as u32);
            self.class_tolerated_taints.push_row("tolerated taints", tolerated)?;
            self.class_host_ports.push_row(
                "class ports",
                sig.host_ports.iter().filter_map(|p| d.host_ports.id(p)),
            )?;
            self.class_images.push_row(
                "class images",
                sig.images.iter().filter_map(|im| d.images.id(im.as_str())),
            )?;
            self.class_node_selector.push_row(
                "class node selector",
                sorted_ids(sig.node_selector.iter().filter_map(|(k, v)| {
                    let r = node_selector_requirement(k, v);
                    d.requirements.id_by(|(k2, r2)| (k2, r2).cmp(&(&RequirementKind::Label, &r)))
                })),
            )?;
            let required =
                sig.required_node_affinity.iter().flatten().filter_map(|t| d.node_terms.id(t));
            self.class_required_terms.push_row("required node terms", required)?;
            let mut weights = Vec::new();
            let preferred: Vec<u32> = sig
                .preferred_node_affinity
                .iter()
                .filter_map(|(w, t)| {
                    let id = d.node_terms.id(t)?;
                    weights.push(*w);
                    Some(id)
                })
                .collect();
            self.class_preferred_terms.push_row("preferred node terms", preferred)?;
            self.class_preferred_weights.extend(weights);

            let first = self.spread.len();
            for s in &sig.spread_constraints {
                let mut f = 0;
                if s.do_not_schedule {
                    f |= SPREAD_DO_NOT_SCHEDULE;
                }
                if s.honor_node_affinity {
                    f |= SPREAD_HONOR_NODE_AFFINITY;
                }
                if s.honor_node_taints {
                    f |= SPREAD_HONOR_NODE_TAINTS;
                }
                if s.min_domains.is_some() {
                    f |= SPREAD_HAS_MIN_DOMAINS;
                }
                self.spread.push(SpreadRow {
                    topology_key: d.topology_keys.id(s.topology_key.as_str()).unwrap_or(NONE),
                    max_skew: s.max_skew,
                    min_domains: s.min_domains.unwrap_or(0),
                    flags: f,
                    selector: s.selector.as_ref().and_then(|x| d.selectors.id(x)).unwrap_or(NONE),
                });
            }
            let end = check_u32("spread constraints", self.spread.len())?;
            self.class_spread.push_row("spread constraints", (first as u32)..end)?;

            let first = self.affinity.len();
            let rows = sig
                .pod_affinity_required
                .iter()
                .map(|t| (AFFINITY_REQUIRED, 0, t))
                .chain(
                    sig.pod_anti_affinity_required.iter().map(|t| (ANTI_AFFINITY_REQUIRED, 0, t)),
                )
                .chain(sig.pod_affinity_preferred.iter().map(|(w, t)| (AFFINITY_PREFERRED, *w, t)))
                .chain(
                    sig.pod_anti_affinity_preferred
                        .iter()
                        .map(|(w, t)| (ANTI_AFFINITY_PREFERRED, *w, t)),
                );
            for (kind, weight, term) in rows {
                let (ns, all) = term_namespaces(cx, term, &sig.namespace);
                self.affinity_namespaces.push_row("affinity namespaces", ns)?;
                self.affinity.push(AffinityRow {
                    kind,
                    weight,
                    topology_key: d.topology_keys.id(term.topology_key.as_str()).unwrap_or(NONE),
                    selector: term
                        .selector
                        .as_ref()
                        .and_then(|x| d.selectors.id(x))
                        .unwrap_or(NONE),
                    flags: if all { AFFINITY_ALL_NAMESPACES } else { 0 },
                });
            }
            let end = check_u32("affinity terms", self.affinity.len())?;
            self.class_affinity.push_row("affinity terms", (first as u32)..end)?;
        }
        Ok(())
    }

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

/// A node's usage of one resource column in encoded units: `(requested, non-zero requested)`,
/// as [`Tensors::node_requested`] and [`Tensors::node_nonzero_requested`] hold it (the pod count
/// for `pods`; every pod's request rounded up, then summed).
pub fn encode_node_usage_column(
    node: &crate::model::Node,
    unit: &super::units::ResourceUnit,
) -> Result<(Amount, Amount), EncodeError> {
    let name = unit.name.as_str();
    let requested = if name == PODS {
        let count = i64::try_from(node.pods.len()).unwrap_or(i64::MAX);
        encode_amount(count, 0, Rounding::Up).map_err(|e| {
            amount_error(e, Subject::Node(node.name.clone()), unit, AmountField::Requested, count)
        })?
    } else {
        sum_requests(node, unit, |p| p.requests.get(name), AmountField::Requested)?
    };
    let nonzero = match name {
        CPU => sum_requests(
            node,
            unit,
            |p| p.non_zero_requests.milli_cpu,
            AmountField::NonZeroRequested,
        )?,
        MEMORY => {
            sum_requests(node, unit, |p| p.non_zero_requests.memory, AmountField::NonZeroRequested)?
        }
        _ => requested,
    };
    Ok((requested, nonzero))
}

fn sum_requests(
    node: &crate::model::Node,
    unit: &super::units::ResourceUnit,
    get: impl Fn(&crate::model::Pod) -> i64,
    field: AmountField,
) -> Result<Amount, EncodeError> {
    for pod in &node.pods {
        let raw = get(pod);
        if let Err(e) = encode_amount(raw, unit.shift, Rounding::Up) {
            let f = if field == AmountField::Requested {
                AmountField::Request
            } else {
                AmountField::NonZeroRequest
            };
            return Err(amount_error(e, Subject::Pod(pod.key()), unit, f, raw));
        }
    }
    encode_request_sum(node.pods.iter().map(|p| get(p)), unit.shift).map_err(|e| {
        let total = node.pods.iter().fold(0i64, |acc, p| acc.saturating_add(get(p)));
        amount_error(e, Subject::Node(node.name.clone()), unit, field, total)
    })
}

fn label_ids<'a>(
    d: &'a Dictionaries,
    labels: &'a crate::model::Labels,
) -> impl Iterator<Item = u32> + 'a {
    labels.iter().filter_map(|(k, v)| d.label_pairs.id(k, v))
}

fn sorted_ids(ids: impl IntoIterator<Item = u32>) -> Vec<u32> {
    let mut v: Vec<u32> = ids.into_iter().collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn complement(all: std::ops::Range<u32>, set: &[u32]) -> Vec<u32> {
    all.filter(|x| set.binary_search(x).is_err()).collect()
}

/// `(flags, key, pair_lo, pair_hi, matching pair ids)` of a label requirement.
fn compile_label(d: &Dictionaries, req: &Requirement) -> (u32, u32, u32, u32, Vec<u32>) {
    let key = d.label_keys.id(req.key.as_str()).unwrap_or(NONE);
    let range = if key == NONE { 0..0 } else { d.label_pairs.key_range(key) };
    let mut flags = 0;
    if req.matches_value(None) {
        flags |= REQ_ABSENT_MATCHES;
    }
    let matching: Vec<u32> = match req.op {
        // Direct lookups for the set operators; a scan for the rest.
        MatchOp::In => sorted_ids(req.values.iter().filter_map(|v| d.label_pairs.id(&req.key, v))),
        MatchOp::NotIn => {
            flags |= REQ_NEGATE;
            sorted_ids(req.values.iter().filter_map(|v| d.label_pairs.id(&req.key, v)))
        }
        _ => range
            .clone()
            .filter(|&p| {
                d.label_pairs.pairs.get(p).is_some_and(|(_, v)| req.matches_value(Some(v)))
            })
            .collect(),
    };
    (flags, key, range.start, range.end, matching)
}

/// `(flags, NONE, 0, 0, node indices)` of a field requirement (`metadata.name`).
fn compile_field(state: &ClusterState, req: &Requirement) -> (u32, u32, u32, u32, Vec<u32>) {
    let mut flags = REQ_FIELD;
    let is_name = req.key == "metadata.name";
    let set = match req.op {
        MatchOp::In if is_name => {
            sorted_ids(req.values.iter().filter_map(|v| state.node_index(v)).map(|i| i as u32))
        }
        MatchOp::NotIn if is_name => {
            flags |= REQ_NEGATE;
            sorted_ids(req.values.iter().filter_map(|v| state.node_index(v)).map(|i| i as u32))
        }
        _ if !is_name => Vec::new(),
        _ => state
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| req.matches_value(Some(&n.name)))
            .map(|(i, _)| i as u32)
            .collect(),
    };
    (flags, NONE, 0, 0, set)
}

/// Namespace ids an affinity term selects (upstream `getNamespacesFromPodAffinityTerm` plus the
/// namespace selector evaluated on every known namespace), and whether the selector is empty.
fn term_namespaces(cx: &Ctx<'_>, term: &SigAffinityTerm, own: &str) -> (Vec<u32>, bool) {
    let d = cx.dicts;
    if term.namespaces.is_empty() && term.namespace_selector.is_none() {
        return (d.namespaces.id(own).into_iter().collect(), false);
    }
    let mut ids: Vec<u32> =
        term.namespaces.iter().filter_map(|n| d.namespaces.id(n.as_str())).collect();
    let mut all = false;
    if let Some(sel) = &term.namespace_selector {
        all = sel.is_empty();
        for (i, ns) in d.namespaces.items().iter().enumerate() {
            if sel.matches(cx.state.namespace_labels(ns)) {
                ids.push(i as u32);
            }
        }
    }
    (sorted_ids(ids), all)
}

#[cfg(test)]
mod tests;
