//! GPU-side structs: `#[repr(C)]` + [`bytemuck::Pod`] mirrors of the WGSL structs in
//! [`WGSL_TYPES`], and [`GpuBuffers`], the flat buffers a compute pass binds.
//!
//! Input: [`Tensors`], [`Dictionaries`], [`PodClasses`]. Output: [`GpuBuffers`]. No upstream
//! counterpart.
//!
//! Kept in sync with [`WGSL_TYPES`] (the WGSL declarations kernels include): a test lays the WGSL
//! structs out by the WGSL rules and compares every field offset and struct size with the Rust
//! ones. Layout rules respected (WGSL storage address space): `u32`/`i32` align 4, `vec4<u32>`
//! align 16; a struct's alignment is its largest member's, its size is rounded up to it. Every
//! struct here is padded by explicit `_pad` fields to a multiple of 16 bytes, so arrays of them
//! have the same stride in Rust and WGSL and the structs also satisfy the uniform rules.
//!
//! Buffers may be empty (e.g. no taints); wgpu cannot bind a zero-sized buffer, so the host code
//! that uploads them pads an empty buffer to one zeroed element (see [`nonempty`]).
//!
//! The first four resource columns (`cpu, memory, ephemeral-storage, pods`) are copied into
//! `GpuNode`/`GpuClass` as `vec4<u32>` for fast access; all columns are in the flat row-major
//! `N × R` / `C × R` buffers.

use bytemuck::{Pod, Zeroable};

use super::EncodeError;
use super::classes::PodClasses;
use super::dict::{CORE_RESOURCES, Dictionaries, check_u32};
use super::tensors::{Csr, NONE, Tensors};

/// Sizes of everything, for bounds in kernels (a uniform buffer).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Pod, Zeroable)]
#[allow(missing_docs)]
pub struct GpuDims {
    pub num_nodes: u32,
    pub num_classes: u32,
    pub num_resources: u32,
    pub num_topology_keys: u32,
    pub num_label_keys: u32,
    pub num_label_pairs: u32,
    pub num_taints: u32,
    pub num_images: u32,
    pub num_host_ports: u32,
    pub num_requirements: u32,
    pub num_node_terms: u32,
    pub num_selectors: u32,
    pub num_spread: u32,
    pub num_affinity: u32,
    pub num_namespaces: u32,
    pub num_bound_pods: u32,
}

/// One node. `*_start`/`*_count` index the node's rows of the CSR id buffers.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Pod, Zeroable)]
#[allow(missing_docs)]
pub struct GpuNode {
    /// cpu, memory, ephemeral-storage, pods allocatable (encoded units).
    pub allocatable: [u32; 4],
    /// cpu, memory, ephemeral-storage, pods requested (pods = pod count).
    pub requested: [u32; 4],
    /// Non-zero requested (cpu and memory with upstream's defaults).
    pub nonzero_requested: [u32; 4],
    pub flags: u32,
    pub label_start: u32,
    pub label_count: u32,
    pub taint_start: u32,
    pub taint_count: u32,
    pub image_start: u32,
    pub image_count: u32,
    pub port_start: u32,
    pub port_count: u32,
    pub bound_pod_start: u32,
    pub bound_pod_count: u32,
    pub _pad: u32,
}

/// One pod class.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Pod, Zeroable)]
#[allow(missing_docs)]
pub struct GpuClass {
    /// cpu, memory, ephemeral-storage, pods (= 1) requests.
    pub requests: [u32; 4],
    /// Non-zero requests.
    pub nonzero_requests: [u32; 4],
    pub flags: u32,
    pub priority: i32,
    pub size: u32,
    pub namespace_id: u32,
    pub label_start: u32,
    pub label_count: u32,
    pub tolerated_taint_start: u32,
    pub tolerated_taint_count: u32,
    pub port_start: u32,
    pub port_count: u32,
    pub image_start: u32,
    pub image_count: u32,
    pub selector_req_start: u32,
    pub selector_req_count: u32,
    pub required_term_start: u32,
    pub required_term_count: u32,
    pub preferred_term_start: u32,
    pub preferred_term_count: u32,
    pub spread_start: u32,
    pub spread_count: u32,
    pub affinity_start: u32,
    pub affinity_count: u32,
    pub default_spread_selector: u32,
    pub node_name: u32,
}

/// A range into an id buffer with flags: node terms (requirement ids, `TERM_*` flags) and label
/// selectors (requirement ids).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Pod, Zeroable)]
#[allow(missing_docs)]
pub struct GpuRange {
    pub start: u32,
    pub count: u32,
    pub flags: u32,
    pub _pad: u32,
}

/// A compiled requirement ([`super::tensors::CompiledRequirement`]).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Pod, Zeroable)]
#[allow(missing_docs)]
pub struct GpuRequirement {
    pub flags: u32,
    pub key: u32,
    pub pair_lo: u32,
    pub pair_hi: u32,
    pub set_start: u32,
    pub set_count: u32,
    pub _pad: [u32; 2],
}

/// A preferred node term of a class and its weight.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Pod, Zeroable)]
#[allow(missing_docs)]
pub struct GpuWeightedTerm {
    pub term: u32,
    pub weight: i32,
    pub _pad: [u32; 2],
}

/// A topology spread constraint ([`super::tensors::SpreadRow`]).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Pod, Zeroable)]
#[allow(missing_docs)]
pub struct GpuSpread {
    pub topology_key: u32,
    pub max_skew: i32,
    pub min_domains: i32,
    pub flags: u32,
    pub selector: u32,
    pub _pad: [u32; 3],
}

/// A pod (anti-)affinity term ([`super::tensors::AffinityRow`]) with its namespace-id range.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Pod, Zeroable)]
#[allow(missing_docs)]
pub struct GpuAffinity {
    pub kind: u32,
    pub weight: i32,
    pub topology_key: u32,
    pub selector: u32,
    pub namespace_start: u32,
    pub namespace_count: u32,
    pub flags: u32,
    pub _pad: u32,
}

/// A host port: conflicts with another when protocol and port are equal and either IP is the
/// wildcard `0.0.0.0` ([`PORT_WILDCARD_IP`]) or the IPs are equal (upstream `HostPortInfo`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Pod, Zeroable)]
#[allow(missing_docs)]
pub struct GpuHostPort {
    pub port: u32,
    pub protocol: u32,
    pub ip: u32,
    pub flags: u32,
}

/// Host-port flag: the IP is `0.0.0.0`.
pub const PORT_WILDCARD_IP: u32 = 1 << 0;

/// An image: size in bytes as two words, and how many nodes have it.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Pod, Zeroable)]
#[allow(missing_docs)]
pub struct GpuImage {
    pub size_lo: u32,
    pub size_hi: u32,
    pub num_nodes: u32,
    pub _pad: u32,
}

/// A pod bound to a node.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Pod, Zeroable)]
#[allow(missing_docs)]
pub struct GpuBoundPod {
    pub node: u32,
    pub namespace_id: u32,
    pub priority: i32,
    pub label_start: u32,
    pub label_count: u32,
    pub _pad: [u32; 3],
}

const _: () = assert!(size_of::<GpuDims>() == 64);
const _: () = assert!(size_of::<GpuNode>() == 96);
const _: () = assert!(size_of::<GpuClass>() == 128);
const _: () = assert!(size_of::<GpuRange>() == 16);
const _: () = assert!(size_of::<GpuRequirement>() == 32);
const _: () = assert!(size_of::<GpuWeightedTerm>() == 16);
const _: () = assert!(size_of::<GpuSpread>() == 32);
const _: () = assert!(size_of::<GpuAffinity>() == 32);
const _: () = assert!(size_of::<GpuHostPort>() == 16);
const _: () = assert!(size_of::<GpuImage>() == 16);
const _: () = assert!(size_of::<GpuBoundPod>() == 32);
const _: () = assert!(std::mem::offset_of!(GpuNode, requested) == 16);
const _: () = assert!(std::mem::offset_of!(GpuNode, nonzero_requested) == 32);
const _: () = assert!(std::mem::offset_of!(GpuNode, flags) == 48);
const _: () = assert!(std::mem::offset_of!(GpuClass, nonzero_requests) == 16);
const _: () = assert!(std::mem::offset_of!(GpuClass, flags) == 32);
const _: () = assert!(std::mem::offset_of!(GpuClass, node_name) == 124);

/// The WGSL declarations of these structs (kept in sync with the Rust ones; see the module doc).
pub const WGSL_TYPES: &str = r"// Generated by hand from kplace src/encode/gpu_types.rs; kept in sync by its tests.
struct GpuDims {
    num_nodes: u32,
    num_classes: u32,
    num_resources: u32,
    num_topology_keys: u32,
    num_label_keys: u32,
    num_label_pairs: u32,
    num_taints: u32,
    num_images: u32,
    num_host_ports: u32,
    num_requirements: u32,
    num_node_terms: u32,
    num_selectors: u32,
    num_spread: u32,
    num_affinity: u32,
    num_namespaces: u32,
    num_bound_pods: u32,
}

struct GpuNode {
    allocatable: vec4<u32>,
    requested: vec4<u32>,
    nonzero_requested: vec4<u32>,
    flags: u32,
    label_start: u32,
    label_count: u32,
    taint_start: u32,
    taint_count: u32,
    image_start: u32,
    image_count: u32,
    port_start: u32,
    port_count: u32,
    bound_pod_start: u32,
    bound_pod_count: u32,
    _pad: u32,
}

struct GpuClass {
    requests: vec4<u32>,
    nonzero_requests: vec4<u32>,
    flags: u32,
    priority: i32,
    size: u32,
    namespace_id: u32,
    label_start: u32,
    label_count: u32,
    tolerated_taint_start: u32,
    tolerated_taint_count: u32,
    port_start: u32,
    port_count: u32,
    image_start: u32,
    image_count: u32,
    selector_req_start: u32,
    selector_req_count: u32,
    required_term_start: u32,
    required_term_count: u32,
    preferred_term_start: u32,
    preferred_term_count: u32,
    spread_start: u32,
    spread_count: u32,
    affinity_start: u32,
    affinity_count: u32,
    default_spread_selector: u32,
    node_name: u32,
}

struct GpuRange {
    start: u32,
    count: u32,
    flags: u32,
    _pad: u32,
}

struct GpuRequirement {
    flags: u32,
    key: u32,
    pair_lo: u32,
    pair_hi: u32,
    set_start: u32,
    set_count: u32,
    _pad0: u32,
    _pad1: u32,
}

struct GpuWeightedTerm {
    term: u32,
    weight: i32,
    _pad0: u32,
    _pad1: u32,
}

struct GpuSpread {
    topology_key: u32,
    max_skew: i32,
    min_domains: i32,
    flags: u32,
    selector: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

struct GpuAffinity {
    kind: u32,
    weight: i32,
    topology_key: u32,
    selector: u32,
    namespace_start: u32,
    namespace_count: u32,
    flags: u32,
    _pad: u32,
}

struct GpuHostPort {
    port: u32,
    protocol: u32,
    ip: u32,
    flags: u32,
}

struct GpuImage {
    size_lo: u32,
    size_hi: u32,
    num_nodes: u32,
    _pad: u32,
}

struct GpuBoundPod {
    node: u32,
    namespace_id: u32,
    priority: i32,
    label_start: u32,
    label_count: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}
";

/// Everything a compute pass binds, flat. Resource matrices are row-major (`N × R`, `C × R`);
/// `node_domains` is `N × K`. Id buffers are the `ids` of the matching [`Tensors`] CSRs; the
/// structs hold `start`/`count` into them.
#[derive(Debug, Clone, PartialEq, Default)]
#[allow(missing_docs)]
pub struct GpuBuffers {
    pub dims: GpuDims,
    pub nodes: Vec<GpuNode>,
    pub classes: Vec<GpuClass>,
    pub node_allocatable: Vec<u32>,
    pub node_requested: Vec<u32>,
    pub node_nonzero_requested: Vec<u32>,
    pub class_requests: Vec<u32>,
    pub class_nonzero_requests: Vec<u32>,
    pub node_domains: Vec<u32>,
    /// Number of domains of each topology key.
    pub domain_counts: Vec<u32>,
    pub node_label_ids: Vec<u32>,
    pub node_taint_ids: Vec<u32>,
    pub node_image_ids: Vec<u32>,
    pub node_port_ids: Vec<u32>,
    pub bound_pods: Vec<GpuBoundPod>,
    pub bound_pod_label_ids: Vec<u32>,
    pub class_label_ids: Vec<u32>,
    pub class_tolerated_taint_ids: Vec<u32>,
    pub class_port_ids: Vec<u32>,
    pub class_image_ids: Vec<u32>,
    pub class_selector_req_ids: Vec<u32>,
    pub class_required_term_ids: Vec<u32>,
    pub class_preferred_terms: Vec<GpuWeightedTerm>,
    pub requirements: Vec<GpuRequirement>,
    pub requirement_sets: Vec<u32>,
    pub node_terms: Vec<GpuRange>,
    pub node_term_req_ids: Vec<u32>,
    pub selectors: Vec<GpuRange>,
    pub selector_req_ids: Vec<u32>,
    pub spread: Vec<GpuSpread>,
    pub affinity: Vec<GpuAffinity>,
    pub affinity_namespace_ids: Vec<u32>,
    pub taint_effects: Vec<u32>,
    pub host_ports: Vec<GpuHostPort>,
    pub images: Vec<GpuImage>,
}

/// A buffer's contents, or one zeroed element when it is empty (wgpu refuses zero-sized bindings).
pub fn nonempty<T: Pod>(v: &[T]) -> Vec<T> {
    if v.is_empty() { vec![T::zeroed()] } else { v.to_vec() }
}

fn core4(row: ndarray::ArrayView1<'_, u32>) -> [u32; 4] {
    let mut out = [0u32; 4];
    for (o, v) in out.iter_mut().zip(row.iter().take(CORE_RESOURCES)) {
        *o = *v;
    }
    out
}

fn flat(a: &ndarray::Array2<u32>) -> Vec<u32> {
    // Standard (row-major) layout is guaranteed for arrays built by `Array2::zeros`; iterate
    // logically anyway so any layout flattens row by row.
    a.iter().copied().collect()
}

fn range(csr: &Csr, i: usize) -> (u32, u32) {
    csr.range(i)
}

impl GpuBuffers {
    /// Flattens the tensors into GPU buffers.
    pub fn build(t: &Tensors, d: &Dictionaries, classes: &PodClasses) -> Result<Self, EncodeError> {
        let n = t.node_allocatable.nrows();
        let c = t.class_requests.nrows();
        let dims = GpuDims {
            num_nodes: check_u32("nodes", n)?,
            num_classes: check_u32("pod classes", c)?,
            num_resources: check_u32("resources", d.resources.len())?,
            num_topology_keys: check_u32("topology keys", d.topology_keys.len())?,
            num_label_keys: check_u32("label keys", d.label_keys.len())?,
            num_label_pairs: check_u32("label pairs", d.label_pairs.pairs.len())?,
            num_taints: check_u32("taints", d.taints.len())?,
            num_images: check_u32("images", d.images.len())?,
            num_host_ports: check_u32("host ports", d.host_ports.len())?,
            num_requirements: check_u32("requirements", t.requirements.len())?,
            num_node_terms: check_u32("node terms", t.node_term_flags.len())?,
            num_selectors: check_u32("selectors", t.selectors.rows())?,
            num_spread: check_u32("spread constraints", t.spread.len())?,
            num_affinity: check_u32("affinity terms", t.affinity.len())?,
            num_namespaces: check_u32("namespaces", d.namespaces.len())?,
            num_bound_pods: check_u32("bound pods", t.bound_pod_node.len())?,
        };

        let nodes = (0..n)
            .map(|i| {
                let (label_start, label_count) = range(&t.node_labels, i);
                let (taint_start, taint_count) = range(&t.node_taints, i);
                let (image_start, image_count) = range(&t.node_images, i);
                let (port_start, port_count) = range(&t.node_used_ports, i);
                let (bound_pod_start, bound_pod_count) = range(&t.node_bound_pods, i);
                GpuNode {
                    allocatable: core4(t.node_allocatable.row(i)),
                    requested: core4(t.node_requested.row(i)),
                    nonzero_requested: core4(t.node_nonzero_requested.row(i)),
                    flags: t.node_flags[i],
                    label_start,
                    label_count,
                    taint_start,
                    taint_count,
                    image_start,
                    image_count,
                    port_start,
                    port_count,
                    bound_pod_start,
                    bound_pod_count,
                    _pad: 0,
                }
            })
            .collect();

        let classes_out = (0..c)
            .map(|i| {
                let (label_start, label_count) = range(&t.class_labels, i);
                let (tolerated_taint_start, tolerated_taint_count) =
                    range(&t.class_tolerated_taints, i);
                let (port_start, port_count) = range(&t.class_host_ports, i);
                let (image_start, image_count) = range(&t.class_images, i);
                let (selector_req_start, selector_req_count) = range(&t.class_node_selector, i);
                let (required_term_start, required_term_count) = range(&t.class_required_terms, i);
                let (preferred_term_start, preferred_term_count) =
                    range(&t.class_preferred_terms, i);
                let (spread_start, spread_count) = range(&t.class_spread, i);
                let (affinity_start, affinity_count) = range(&t.class_affinity, i);
                GpuClass {
                    requests: core4(t.class_requests.row(i)),
                    nonzero_requests: core4(t.class_nonzero_requests.row(i)),
                    flags: t.class_flags[i],
                    priority: t.class_priority[i],
                    size: t.class_size[i],
                    namespace_id: t.class_namespace[i],
                    label_start,
                    label_count,
                    tolerated_taint_start,
                    tolerated_taint_count,
                    port_start,
                    port_count,
                    image_start,
                    image_count,
                    selector_req_start,
                    selector_req_count,
                    required_term_start,
                    required_term_count,
                    preferred_term_start,
                    preferred_term_count,
                    spread_start,
                    spread_count,
                    affinity_start,
                    affinity_count,
                    default_spread_selector: t.class_default_spread_selector[i],
                    node_name: t.class_node_name[i],
                }
            })
            .collect();
        debug_assert_eq!(c, classes.len());

        let bound_pods = (0..t.bound_pod_node.len())
            .map(|b| {
                let (label_start, label_count) = range(&t.bound_pod_labels, b);
                GpuBoundPod {
                    node: t.bound_pod_node[b],
                    namespace_id: t.bound_pod_namespace[b],
                    priority: t.bound_pod_priority[b],
                    label_start,
                    label_count,
                    _pad: [0; 3],
                }
            })
            .collect();

        let class_preferred_terms = t
            .class_preferred_terms
            .ids
            .iter()
            .zip(&t.class_preferred_weights)
            .map(|(&term, &weight)| GpuWeightedTerm { term, weight, _pad: [0; 2] })
            .collect();

        let requirements = t
            .requirements
            .iter()
            .map(|r| GpuRequirement {
                flags: r.flags,
                key: r.key,
                pair_lo: r.pair_lo,
                pair_hi: r.pair_hi,
                set_start: r.set_start,
                set_count: r.set_count,
                _pad: [0; 2],
            })
            .collect();
        let node_terms = (0..t.node_terms.rows())
            .map(|i| {
                let (start, count) = t.node_terms.range(i);
                GpuRange {
                    start,
                    count,
                    flags: t.node_term_flags.get(i).copied().unwrap_or(0),
                    _pad: 0,
                }
            })
            .collect();
        let selectors = (0..t.selectors.rows())
            .map(|i| {
                let (start, count) = t.selectors.range(i);
                GpuRange { start, count, flags: 0, _pad: 0 }
            })
            .collect();
        let spread = t
            .spread
            .iter()
            .map(|s| GpuSpread {
                topology_key: s.topology_key,
                max_skew: s.max_skew,
                min_domains: s.min_domains,
                flags: s.flags,
                selector: s.selector,
                _pad: [0; 3],
            })
            .collect();
        let affinity = t
            .affinity
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let (namespace_start, namespace_count) = t.affinity_namespaces.range(i);
                GpuAffinity {
                    kind: a.kind,
                    weight: a.weight,
                    topology_key: a.topology_key,
                    selector: a.selector,
                    namespace_start,
                    namespace_count,
                    flags: a.flags,
                    _pad: 0,
                }
            })
            .collect();
        let host_ports = d
            .host_ports
            .items()
            .iter()
            .map(|p| GpuHostPort {
                port: u32::try_from(p.port).unwrap_or(0),
                protocol: d.protocols.id(p.protocol.as_str()).unwrap_or(NONE),
                ip: d.host_ips.id(p.host_ip.as_str()).unwrap_or(NONE),
                flags: if p.host_ip == "0.0.0.0" { PORT_WILDCARD_IP } else { 0 },
            })
            .collect();
        let images = d
            .image_info
            .iter()
            .map(|im| {
                let size = u64::try_from(im.size_bytes).unwrap_or(0);
                GpuImage {
                    size_lo: size as u32,
                    size_hi: (size >> 32) as u32,
                    num_nodes: im.num_nodes,
                    _pad: 0,
                }
            })
            .collect();
        let domain_counts = d
            .domain_offsets
            .windows(2)
            .map(|w| w.get(1).copied().unwrap_or(0) - w.first().copied().unwrap_or(0))
            .collect();

        Ok(GpuBuffers {
            dims,
            nodes,
            classes: classes_out,
            node_allocatable: flat(&t.node_allocatable),
            node_requested: flat(&t.node_requested),
            node_nonzero_requested: flat(&t.node_nonzero_requested),
            class_requests: flat(&t.class_requests),
            class_nonzero_requests: flat(&t.class_nonzero_requests),
            node_domains: flat(&t.node_domains),
            domain_counts,
            node_label_ids: t.node_labels.ids.clone(),
            node_taint_ids: t.node_taints.ids.clone(),
            node_image_ids: t.node_images.ids.clone(),
            node_port_ids: t.node_used_ports.ids.clone(),
            bound_pods,
            bound_pod_label_ids: t.bound_pod_labels.ids.clone(),
            class_label_ids: t.class_labels.ids.clone(),
            class_tolerated_taint_ids: t.class_tolerated_taints.ids.clone(),
            class_port_ids: t.class_host_ports.ids.clone(),
            class_image_ids: t.class_images.ids.clone(),
            class_selector_req_ids: t.class_node_selector.ids.clone(),
            class_required_term_ids: t.class_required_terms.ids.clone(),
            class_preferred_terms,
            requirements,
            requirement_sets: t.requirement_sets.clone(),
            node_terms,
            node_term_req_ids: t.node_terms.ids.clone(),
            selectors,
            selector_req_ids: t.selectors.ids.clone(),
            spread,
            affinity,
            affinity_namespace_ids: t.affinity_namespaces.ids.clone(),
            taint_effects: t.taint_effects.clone(),
            host_ports,
            images,
        })
    }

    /// Every buffer as `(name, bytes)`, in a fixed order (for uploads, hashing and tests).
    pub fn byte_views(&self) -> Vec<(&'static str, &[u8])> {
        use bytemuck::{bytes_of, cast_slice};
        vec![
            ("dims", bytes_of(&self.dims)),
            ("nodes", cast_slice(&self.nodes)),
            ("classes", cast_slice(&self.classes)),
            ("node_allocatable", cast_slice(&self.node_allocatable)),
            ("node_requested", cast_slice(&self.node_requested)),
            ("node_nonzero_requested", cast_slice(&self.node_nonzero_requested)),
            ("class_requests", cast_slice(&self.class_requests)),
            ("class_nonzero_requests", cast_slice(&self.class_nonzero_requests)),
            ("node_domains", cast_slice(&self.node_domains)),
            ("domain_counts", cast_slice(&self.domain_counts)),
            ("node_label_ids", cast_slice(&self.node_label_ids)),
            ("node_taint_ids", cast_slice(&self.node_taint_ids)),
            ("node_image_ids", cast_slice(&self.node_image_ids)),
            ("node_port_ids", cast_slice(&self.node_port_ids)),
            ("bound_pods", cast_slice(&self.bound_pods)),
            ("bound_pod_label_ids", cast_slice(&self.bound_pod_label_ids)),
            ("class_label_ids", cast_slice(&self.class_label_ids)),
            ("class_tolerated_taint_ids", cast_slice(&self.class_tolerated_taint_ids)),
            ("class_port_ids", cast_slice(&self.class_port_ids)),
            ("class_image_ids", cast_slice(&self.class_image_ids)),
            ("class_selector_req_ids", cast_slice(&self.class_selector_req_ids)),
            ("class_required_term_ids", cast_slice(&self.class_required_term_ids)),
            ("class_preferred_terms", cast_slice(&self.class_preferred_terms)),
            ("requirements", cast_slice(&self.requirements)),
            ("requirement_sets", cast_slice(&self.requirement_sets)),
            ("node_terms", cast_slice(&self.node_terms)),
            ("node_term_req_ids", cast_slice(&self.node_term_req_ids)),
            ("selectors", cast_slice(&self.selectors)),
            ("selector_req_ids", cast_slice(&self.selector_req_ids)),
            ("spread", cast_slice(&self.spread)),
            ("affinity", cast_slice(&self.affinity)),
            ("affinity_namespace_ids", cast_slice(&self.affinity_namespace_ids)),
            ("taint_effects", cast_slice(&self.taint_effects)),
            ("host_ports", cast_slice(&self.host_ports)),
            ("images", cast_slice(&self.images)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use std::mem::offset_of;

    use super::*;
    use crate::encode::encode;
    use crate::model::testing::{GI, NodeBuilder, PodBuilder, cluster};

    /// `(struct, size, [(field, offset)])` of every Rust struct, from the compiler.
    /// `(struct, size, [(field, offset)])`.
    type Layout<N> = (N, usize, Vec<(N, usize)>);

    fn rust_layouts() -> Vec<Layout<&'static str>> {
        macro_rules! layout {
            ($t:ident { $($f:ident),* $(,)? }) => {
                (stringify!($t), size_of::<$t>(), vec![$((stringify!($f), offset_of!($t, $f))),*])
            };
        }
        vec![
            layout!(GpuDims {
                num_nodes,
                num_classes,
                num_resources,
                num_topology_keys,
                num_label_keys,
                num_label_pairs,
                num_taints,
                num_images,
                num_host_ports,
                num_requirements,
                num_node_terms,
                num_selectors,
                num_spread,
                num_affinity,
                num_namespaces,
                num_bound_pods
            }),
            layout!(GpuNode {
                allocatable,
                requested,
                nonzero_requested,
                flags,
                label_start,
                label_count,
                taint_start,
                taint_count,
                image_start,
                image_count,
                port_start,
                port_count,
                bound_pod_start,
                bound_pod_count,
                _pad
            }),
            layout!(GpuClass {
                requests,
                nonzero_requests,
                flags,
                priority,
                size,
                namespace_id,
                label_start,
                label_count,
                tolerated_taint_start,
                tolerated_taint_count,
                port_start,
                port_count,
                image_start,
                image_count,
                selector_req_start,
                selector_req_count,
                required_term_start,
                required_term_count,
                preferred_term_start,
                preferred_term_count,
                spread_start,
                spread_count,
                affinity_start,
                affinity_count,
                default_spread_selector,
                node_name
            }),
            layout!(GpuRange { start, count, flags, _pad }),
            layout!(GpuRequirement { flags, key, pair_lo, pair_hi, set_start, set_count }),
            layout!(GpuWeightedTerm { term, weight }),
            layout!(GpuSpread { topology_key, max_skew, min_domains, flags, selector }),
            layout!(GpuAffinity {
                kind,
                weight,
                topology_key,
                selector,
                namespace_start,
                namespace_count,
                flags,
                _pad
            }),
            layout!(GpuHostPort { port, protocol, ip, flags }),
            layout!(GpuImage { size_lo, size_hi, num_nodes, _pad }),
            layout!(GpuBoundPod { node, namespace_id, priority, label_start, label_count }),
        ]
    }

    /// Lays out the structs of a WGSL source by the WGSL rules for the types used here.
    fn wgsl_layouts(src: &str) -> Vec<Layout<String>> {
        let mut out = Vec::new();
        let mut rest = src;
        while let Some(pos) = rest.find("struct ") {
            rest = &rest[pos + "struct ".len()..];
            let name_end = rest.find('{').expect("struct body");
            let name = rest[..name_end].trim().to_string();
            let body_end = rest.find('}').expect("struct end");
            let body = &rest[name_end + 1..body_end];
            let (mut offset, mut align, mut fields) = (0usize, 4usize, Vec::new());
            for field in body.split(',').map(str::trim).filter(|f| !f.is_empty()) {
                let (fname, ty) = field.split_once(':').expect("field: type");
                let (size, a) = match ty.trim() {
                    "u32" | "i32" => (4, 4),
                    "vec4<u32>" | "vec4<i32>" => (16, 16),
                    other => panic!("unsupported WGSL type {other}"),
                };
                offset = offset.div_ceil(a) * a;
                fields.push((fname.trim().to_string(), offset));
                offset += size;
                align = align.max(a);
            }
            out.push((name, offset.div_ceil(align) * align, fields));
            rest = &rest[body_end..];
        }
        out
    }

    #[test]
    fn wgsl_structs_have_the_rust_layout() {
        let wgsl = wgsl_layouts(WGSL_TYPES);
        let rust = rust_layouts();
        assert_eq!(wgsl.len(), rust.len(), "every Rust struct has a WGSL twin");
        for (name, size, fields) in rust {
            let (_, wsize, wfields) = wgsl
                .iter()
                .find(|(n, _, _)| n == name)
                .unwrap_or_else(|| panic!("{name} missing in WGSL"));
            assert_eq!(*wsize, size, "{name}: size");
            assert_eq!(size % 16, 0, "{name}: size is a multiple of 16 bytes");
            for (field, offset) in fields {
                let w = wfields
                    .iter()
                    .find(|(f, _)| f == field)
                    .unwrap_or_else(|| panic!("{name}.{field} missing"));
                assert_eq!(w.1, offset, "{name}.{field}: offset");
            }
        }
    }

    #[test]
    fn wgsl_field_names_avoid_reserved_words() {
        // A subset of WGSL's reserved words that could plausibly name a field here.
        const RESERVED: &[&str] = &[
            "namespace",
            "type",
            "set",
            "filter",
            "match",
            "mod",
            "module",
            "self",
            "super",
            "target",
            "use",
            "where",
            "with",
            "resource",
            "meta",
            "priv",
            "pub",
            "ref",
            "static",
            "std",
            "new",
            "null",
            "of",
            "layout",
            "shared",
            "export",
            "import",
            "enum",
            "class",
        ];
        for (name, _, fields) in wgsl_layouts(WGSL_TYPES) {
            for (field, _) in fields {
                assert!(
                    !RESERVED.contains(&field.as_str()),
                    "{name}.{field} is a WGSL reserved word"
                );
                assert!(
                    !field.starts_with("__"),
                    "{name}.{field}: identifiers starting with __ are reserved"
                );
            }
        }
    }

    #[test]
    fn struct_sizes_and_key_offsets_are_as_documented() {
        let cases: &[(&str, usize, usize)] = &[
            ("GpuDims", size_of::<GpuDims>(), 64),
            ("GpuNode", size_of::<GpuNode>(), 96),
            ("GpuClass", size_of::<GpuClass>(), 128),
            ("GpuRequirement", size_of::<GpuRequirement>(), 32),
            ("GpuNode.flags", offset_of!(GpuNode, flags), 48),
            ("GpuNode.bound_pod_count", offset_of!(GpuNode, bound_pod_count), 88),
            ("GpuClass.priority", offset_of!(GpuClass, priority), 36),
            ("GpuClass.affinity_count", offset_of!(GpuClass, affinity_count), 116),
            ("GpuSpread.selector", offset_of!(GpuSpread, selector), 16),
        ];
        for (name, got, want) in cases {
            assert_eq!(got, want, "{name}");
        }
        for align in [align_of::<GpuNode>(), align_of::<GpuClass>(), align_of::<GpuDims>()] {
            assert!(align <= 16, "Rust alignment never exceeds WGSL's");
        }
    }

    #[test]
    fn gpu_buffers_mirror_the_tensors() {
        let state = cluster(
            vec![
                NodeBuilder::new("a").cpu(4000).memory(8 * GI).label("zone", "z1").obj(),
                NodeBuilder::new("b").obj(),
            ],
            vec![PodBuilder::new("d", "x").cpu(100).node("a").obj()],
        );
        let pending =
            vec![PodBuilder::new("d", "p").cpu(250).memory(GI).host_port("", "TCP", 8080).obj()];
        let enc = encode(&state, &pending).unwrap();
        let g = &enc.gpu;
        assert_eq!(g.nodes[0].allocatable, [4000, 8192, 0, 110]);
        assert_eq!(g.nodes[0].requested, [100, 0, 0, 1]);
        assert_eq!(g.nodes[0].bound_pod_count, 1);
        assert_eq!(g.classes[0].requests, [250, 1024, 0, 1]);
        assert_eq!(g.node_allocatable.len(), 2 * enc.dicts.resources.len());
        assert_eq!(&g.node_allocatable[..4], &[4000, 8192, 0, 110]);
        assert_eq!(g.dims.num_nodes, 2);
        assert_eq!(
            g.host_ports,
            vec![GpuHostPort { port: 8080, protocol: 0, ip: 0, flags: PORT_WILDCARD_IP }]
        );
        let (start, count) = (g.nodes[0].label_start as usize, g.nodes[0].label_count as usize);
        assert_eq!(&g.node_label_ids[start..start + count], enc.tensors.node_labels.row(0));
        assert_eq!(nonempty::<u32>(&[]), vec![0]);
    }
}
