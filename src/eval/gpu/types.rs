//! GPU-side structs of matrix evaluation (`#[repr(C)]` + [`bytemuck::Pod`]) and the generated
//! WGSL prelude every kernel starts with: the encoder's structs ([`WGSL_TYPES`]), these structs
//! ([`EVAL_WGSL_TYPES`]) and every flag and code the kernels share with the Rust side.
//!
//! Input: [`Prepared`]. Output: the eval buffers and [`wgsl_prelude`]. No upstream counterpart.
//!
//! Kept in sync with `shaders/types.wgsl`: that file is exactly [`wgsl_prelude`] (a test
//! compares them; run the tests with `KPLACE_BLESS_SHADERS=1` to rewrite it), and a test lays
//! every WGSL struct out with naga and compares each field offset and struct size with the Rust
//! ones. Structs are padded to multiples of 16 bytes, like the encoder's.

use bytemuck::{Pod, Zeroable};

use crate::encode::dict::RESOURCE_PODS;
use crate::encode::gpu_types::{PORT_WILDCARD_IP, WGSL_TYPES};
use crate::encode::tensors::{
    CLASS_HAS_REQUIRED_NODE_AFFINITY, CLASS_TOLERATES_UNSCHEDULABLE, EFFECT_NO_EXECUTE,
    EFFECT_NO_SCHEDULE, EFFECT_PREFER_NO_SCHEDULE, NODE_UNSCHEDULABLE, NONE, REQ_ABSENT_MATCHES,
    REQ_FIELD, REQ_NEGATE, TERM_NEVER_MATCHES,
};
use crate::encode::units::MAX_NODE_SCORE;
use crate::eval::cpu::PTS_IGNORED;
use crate::eval::prep::{
    CLASS_FIT_REQUESTS_NOTHING, CLASS_HAS_NODE_NAME, CLASS_NODE_AFFINITY_SCORE_SKIP,
    CLASS_REJECTED, CLASS_RESTRICTED, FIT_COLUMN_CHECKED, FIT_KIND_NON_ZERO, FIT_KIND_OTHER,
    FIT_KIND_REQUESTED, FIT_KIND_SCALAR, NODE_ADDED_AFFINITY_FAILS, NUM_SCORE_PLANES, Prepared,
    STRATEGY_LEAST_ALLOCATED, STRATEGY_MOST_ALLOCATED, STRATEGY_REQUESTED_TO_CAPACITY_RATIO,
    ScorePlugin,
};
use crate::eval::topology::{
    DOMAIN_ABSENT, DOMAIN_MASK, IPA_AFFINITY_FALLBACK, IPA_FILTER, IPA_SCORE, PTS_FILTER,
    PTS_REQUIRE_ALL, PTS_SCORE, TERM_HOSTNAME, TERM_SELF_MATCH,
};
use crate::eval::{
    CELL_FEASIBLE, CHECK_INTER_POD_AFFINITY, CHECK_INTER_POD_ANTI_AFFINITY,
    CHECK_INTER_POD_EXISTING_ANTI_AFFINITY, CHECK_MASK, CHECK_NODE_AFFINITY_ENFORCED,
    CHECK_NODE_AFFINITY_POD, CHECK_NODE_NAME, CHECK_NODE_PORTS, CHECK_NODE_RESOURCES_FIT,
    CHECK_NODE_UNSCHEDULABLE, CHECK_POD_TOPOLOGY_SPREAD_LABEL, CHECK_POD_TOPOLOGY_SPREAD_SKEW,
    CHECK_PREFILTER_ABSENT, CHECK_PREFILTER_REJECTED, CHECK_TAINT_TOLERATION, FIRST_FAILURE_SHIFT,
    FIT_UNRESOLVABLE,
};

/// Threads per workgroup along the node axis (`@workgroup_size(64)` in every kernel).
pub const WORKGROUP_SIZE: u32 = 64;

/// The most checks `EvalParams::check_order` holds.
pub const MAX_CHECKS: usize = 16;

/// Per-dispatch parameters (a uniform, one slot per node tile).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Pod, Zeroable)]
pub struct EvalParams {
    /// First node of the tile.
    pub tile_start: u32,
    /// Nodes in the tile.
    pub tile_len: u32,
    /// Row length of the tile's cell planes (a multiple of [`WORKGROUP_SIZE`]).
    pub tile_stride: u32,
    /// First class of the chunk.
    pub class_start: u32,
    /// Classes in the chunk.
    pub class_len: u32,
    /// Stride of the per-class planes (`row_max` holds three planes of it).
    pub class_stride: u32,
    /// Number of nodes.
    pub num_nodes: u32,
    /// Number of classes.
    pub num_classes: u32,
    /// Number of resource columns `R`.
    pub num_resources: u32,
    /// OR of the enabled checks' bits.
    pub enabled_checks: u32,
    /// Number of entries of `check_order`.
    pub num_checks: u32,
    /// NodeResourcesFit scoring strategy code.
    pub fit_strategy: u32,
    /// Number of scored resources.
    pub num_fit_specs: u32,
    /// Number of shape points.
    pub num_shape: u32,
    /// Bit `k`: score plane `k` is scored by the profile.
    pub score_mask: u32,
    /// Number of NodeResourcesBalancedAllocation resources.
    pub num_balanced_specs: u32,
    /// Number of topology key slots (columns of `node_domains`).
    pub num_topology_keys: u32,
    /// Always 0. Native binary64 XORs it into every result (`shaders/f64_native.wgsl`): a
    /// value the shader compiler cannot know, so it cannot fuse a product into a sum.
    pub fence: u32,
    /// Padding.
    pub _pad2: u32,
    /// Padding.
    pub _pad3: u32,
    /// Weights of the score planes, by plane index (unused slots 0).
    pub weights: [[i32; 4]; 2],
    /// Bit indices of the enabled checks in first-failure order.
    pub check_order: [[u32; 4]; 4],
}

/// Per class: PreFilter, PreScore and NodeName facts ([`Prepared`]).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Pod, Zeroable)]
pub struct EvalClass {
    /// `EVAL_CLASS_*` flags.
    pub flags: u32,
    /// Node index of `spec.nodeName`, or `NONE`.
    pub node_name: u32,
    /// Start of the class's PreFilter node list in `class_restrict_ids`.
    pub restrict_start: u32,
    /// Length of that list.
    pub restrict_count: u32,
    /// Bit `k`: the PreScore of score plane `k`'s plugin skips the class.
    pub score_skip: u32,
    /// Start of the class's container images in `class_image_ids`.
    pub image_start: u32,
    /// Number of containers (images).
    pub image_count: u32,
    /// Padding.
    pub _pad0: u32,
}

/// Per node: the profile's `addedAffinity`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Pod, Zeroable)]
pub struct EvalNode {
    /// `EVAL_NODE_*` flags.
    pub flags: u32,
    /// Weights of the matching preferred `addedAffinity` terms.
    pub added_score: i32,
    /// Start of the node's images in `node_images`.
    pub image_start: u32,
    /// Number of the node's images.
    pub image_count: u32,
}

/// Per class: the ranges of its inter-pod terms ([`crate::eval::topology::TopoClass`]).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Pod, Zeroable)]
pub struct EvalTopoClass {
    /// `PTS_*` flags.
    pub pts_flags: u32,
    /// First PodTopologySpread filter term.
    pub pts_filter_start: u32,
    /// Number of PodTopologySpread filter terms.
    pub pts_filter_count: u32,
    /// First PodTopologySpread scoring term.
    pub pts_score_start: u32,
    /// Number of PodTopologySpread scoring terms.
    pub pts_score_count: u32,
    /// `IPA_*` flags.
    pub ipa_flags: u32,
    /// First InterPodAffinity required affinity term.
    pub ipa_affinity_start: u32,
    /// Number of InterPodAffinity required affinity terms.
    pub ipa_affinity_count: u32,
    /// First InterPodAffinity required anti-affinity term.
    pub ipa_anti_start: u32,
    /// Number of InterPodAffinity required anti-affinity terms.
    pub ipa_anti_count: u32,
    /// First term of existing pods' anti-affinity.
    pub ipa_existing_start: u32,
    /// Number of terms of existing pods' anti-affinity.
    pub ipa_existing_count: u32,
    /// First InterPodAffinity scoring term.
    pub ipa_score_start: u32,
    /// Number of InterPodAffinity scoring terms.
    pub ipa_score_count: u32,
    /// Padding.
    pub _pad: [u32; 2],
}

/// One inter-pod term ([`crate::eval::topology::TopoTerm`]).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Pod, Zeroable)]
pub struct EvalTopoTerm {
    /// Topology key slot.
    pub key: u32,
    /// First entry in `topo_entries`.
    pub entry_start: u32,
    /// Number of entries.
    pub entry_count: u32,
    /// `TERM_*` flags.
    pub flags: u32,
    /// `maxSkew` (filter) or `maxSkew − 1` (score).
    pub skew: i32,
    /// The global minimum (filter).
    pub min_match: i32,
    /// First word of the domain bitmap (score).
    pub bitmap_start: u32,
    /// Words of the domain bitmap (score).
    pub bitmap_words: u32,
}

/// One image name a node lists ([`crate::eval::NodeImage`]).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Pod, Zeroable)]
pub struct EvalNodeImage {
    /// Image name id.
    pub image: u32,
    /// Low 32 bits of the size in bytes (`i64`).
    pub size_lo: u32,
    /// High 32 bits of the size.
    pub size_hi: u32,
    /// Number of nodes listing the name.
    pub num_nodes: u32,
}

/// One resource NodeResourcesFit scores.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Pod, Zeroable)]
pub struct EvalFitSpec {
    /// Resource column, or `NONE`.
    pub column: u32,
    /// `FIT_KIND_*`.
    pub kind: u32,
    /// Weight.
    pub weight: i32,
    /// Padding.
    pub _pad: u32,
}

/// One point of RequestedToCapacityRatio's scaled shape.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Pod, Zeroable)]
pub struct EvalShapePoint {
    /// Utilization, 0–100.
    pub utilization: i32,
    /// Score, 0–100.
    pub score: i32,
    /// Padding.
    pub _pad0: u32,
    /// Padding.
    pub _pad1: u32,
}

const _: () = assert!(size_of::<EvalParams>() == 176);
const _: () = assert!(size_of::<EvalClass>() == 32);
const _: () = assert!(size_of::<EvalNode>() == 16);
const _: () = assert!(size_of::<EvalNodeImage>() == 16);
const _: () = assert!(size_of::<EvalTopoClass>() == 64);
const _: () = assert!(size_of::<EvalTopoTerm>() == 32);
const _: () = assert!(size_of::<EvalFitSpec>() == 16);
const _: () = assert!(size_of::<EvalShapePoint>() == 16);

/// The WGSL declarations of the structs above.
pub const EVAL_WGSL_TYPES: &str = r"struct EvalParams {
    tile_start: u32,
    tile_len: u32,
    tile_stride: u32,
    class_start: u32,
    class_len: u32,
    class_stride: u32,
    num_nodes: u32,
    num_classes: u32,
    num_resources: u32,
    enabled_checks: u32,
    num_checks: u32,
    fit_strategy: u32,
    num_fit_specs: u32,
    num_shape: u32,
    score_mask: u32,
    num_balanced_specs: u32,
    num_topology_keys: u32,
    fence: u32,
    _pad2: u32,
    _pad3: u32,
    weights: array<vec4<i32>, 2>,
    check_order: array<vec4<u32>, 4>,
}

struct EvalClass {
    flags: u32,
    node_name: u32,
    restrict_start: u32,
    restrict_count: u32,
    score_skip: u32,
    image_start: u32,
    image_count: u32,
    _pad0: u32,
}

struct EvalNode {
    flags: u32,
    added_score: i32,
    image_start: u32,
    image_count: u32,
}

struct EvalNodeImage {
    image: u32,
    size_lo: u32,
    size_hi: u32,
    num_nodes: u32,
}

struct EvalTopoClass {
    pts_flags: u32,
    pts_filter_start: u32,
    pts_filter_count: u32,
    pts_score_start: u32,
    pts_score_count: u32,
    ipa_flags: u32,
    ipa_affinity_start: u32,
    ipa_affinity_count: u32,
    ipa_anti_start: u32,
    ipa_anti_count: u32,
    ipa_existing_start: u32,
    ipa_existing_count: u32,
    ipa_score_start: u32,
    ipa_score_count: u32,
    _pad: array<u32, 2>,
}

struct EvalTopoTerm {
    key: u32,
    entry_start: u32,
    entry_count: u32,
    flags: u32,
    skew: i32,
    min_match: i32,
    bitmap_start: u32,
    bitmap_words: u32,
}

struct EvalFitSpec {
    column: u32,
    kind: u32,
    weight: i32,
    _pad: u32,
}

struct EvalShapePoint {
    utilization: i32,
    score: i32,
    _pad0: u32,
    _pad1: u32,
}
";

/// The WGSL name of a score plane's index constant.
pub fn plane_constant(plugin: ScorePlugin) -> &'static str {
    match plugin {
        ScorePlugin::TaintToleration => "PLANE_TAINT_TOLERATION",
        ScorePlugin::NodeAffinity => "PLANE_NODE_AFFINITY",
        ScorePlugin::NodeResourcesFit => "PLANE_NODE_RESOURCES_FIT",
        ScorePlugin::BalancedAllocation => "PLANE_BALANCED_ALLOCATION",
        ScorePlugin::ImageLocality => "PLANE_IMAGE_LOCALITY",
        ScorePlugin::PodTopologySpread => "PLANE_POD_TOPOLOGY_SPREAD",
        ScorePlugin::InterPodAffinity => "PLANE_INTER_POD_AFFINITY",
    }
}

/// Every constant the kernels share with Rust, as `(WGSL name, value)`; all are `u32`.
pub fn wgsl_constants() -> Vec<(&'static str, u32)> {
    let mut out = vec![
        ("NONE", NONE),
        ("WORKGROUP_SIZE", WORKGROUP_SIZE),
        ("MAX_NODE_SCORE", MAX_NODE_SCORE),
        ("RESOURCE_PODS", RESOURCE_PODS as u32),
        ("NODE_UNSCHEDULABLE", NODE_UNSCHEDULABLE),
        ("CLASS_TOLERATES_UNSCHEDULABLE", CLASS_TOLERATES_UNSCHEDULABLE),
        ("CLASS_HAS_REQUIRED_NODE_AFFINITY", CLASS_HAS_REQUIRED_NODE_AFFINITY),
        ("REQ_FIELD", REQ_FIELD),
        ("REQ_ABSENT_MATCHES", REQ_ABSENT_MATCHES),
        ("REQ_NEGATE", REQ_NEGATE),
        ("TERM_NEVER_MATCHES", TERM_NEVER_MATCHES),
        ("EFFECT_NO_SCHEDULE", EFFECT_NO_SCHEDULE),
        ("EFFECT_PREFER_NO_SCHEDULE", EFFECT_PREFER_NO_SCHEDULE),
        ("EFFECT_NO_EXECUTE", EFFECT_NO_EXECUTE),
        ("PORT_WILDCARD_IP", PORT_WILDCARD_IP),
        ("CHECK_PREFILTER_REJECTED", CHECK_PREFILTER_REJECTED),
        ("CHECK_PREFILTER_ABSENT", CHECK_PREFILTER_ABSENT),
        ("CHECK_NODE_UNSCHEDULABLE", CHECK_NODE_UNSCHEDULABLE),
        ("CHECK_NODE_NAME", CHECK_NODE_NAME),
        ("CHECK_TAINT_TOLERATION", CHECK_TAINT_TOLERATION),
        ("CHECK_NODE_AFFINITY_ENFORCED", CHECK_NODE_AFFINITY_ENFORCED),
        ("CHECK_NODE_AFFINITY_POD", CHECK_NODE_AFFINITY_POD),
        ("CHECK_NODE_PORTS", CHECK_NODE_PORTS),
        ("CHECK_NODE_RESOURCES_FIT", CHECK_NODE_RESOURCES_FIT),
        ("CHECK_MASK", CHECK_MASK),
        ("FIRST_FAILURE_SHIFT", FIRST_FAILURE_SHIFT),
        ("CELL_FEASIBLE", CELL_FEASIBLE),
        ("FIT_UNRESOLVABLE", FIT_UNRESOLVABLE),
        ("EVAL_CLASS_REJECTED", CLASS_REJECTED),
        ("EVAL_CLASS_RESTRICTED", CLASS_RESTRICTED),
        ("EVAL_CLASS_NODE_AFFINITY_SCORE_SKIP", CLASS_NODE_AFFINITY_SCORE_SKIP),
        ("EVAL_CLASS_HAS_NODE_NAME", CLASS_HAS_NODE_NAME),
        ("EVAL_CLASS_FIT_REQUESTS_NOTHING", CLASS_FIT_REQUESTS_NOTHING),
        ("EVAL_NODE_ADDED_AFFINITY_FAILS", NODE_ADDED_AFFINITY_FAILS),
        ("FIT_COLUMN_CHECKED", FIT_COLUMN_CHECKED),
        ("FIT_KIND_NON_ZERO", FIT_KIND_NON_ZERO),
        ("FIT_KIND_REQUESTED", FIT_KIND_REQUESTED),
        ("FIT_KIND_SCALAR", FIT_KIND_SCALAR),
        ("FIT_KIND_OTHER", FIT_KIND_OTHER),
        ("STRATEGY_LEAST_ALLOCATED", STRATEGY_LEAST_ALLOCATED),
        ("STRATEGY_MOST_ALLOCATED", STRATEGY_MOST_ALLOCATED),
        ("STRATEGY_REQUESTED_TO_CAPACITY_RATIO", STRATEGY_REQUESTED_TO_CAPACITY_RATIO),
        ("NUM_SCORE_PLANES", NUM_SCORE_PLANES as u32),
        ("CHECK_POD_TOPOLOGY_SPREAD_LABEL", CHECK_POD_TOPOLOGY_SPREAD_LABEL),
        ("CHECK_POD_TOPOLOGY_SPREAD_SKEW", CHECK_POD_TOPOLOGY_SPREAD_SKEW),
        ("DOMAIN_ABSENT", DOMAIN_ABSENT),
        ("DOMAIN_MASK", DOMAIN_MASK),
        ("PTS_FILTER", PTS_FILTER),
        ("PTS_SCORE", PTS_SCORE),
        ("PTS_REQUIRE_ALL", PTS_REQUIRE_ALL),
        ("TERM_HOSTNAME", TERM_HOSTNAME),
        ("TERM_SELF_MATCH", TERM_SELF_MATCH),
        ("PTS_IGNORED_BITS", PTS_IGNORED as u32),
        ("CHECK_INTER_POD_AFFINITY", CHECK_INTER_POD_AFFINITY),
        ("CHECK_INTER_POD_ANTI_AFFINITY", CHECK_INTER_POD_ANTI_AFFINITY),
        ("CHECK_INTER_POD_EXISTING_ANTI_AFFINITY", CHECK_INTER_POD_EXISTING_ANTI_AFFINITY),
        ("IPA_FILTER", IPA_FILTER),
        ("IPA_AFFINITY_FALLBACK", IPA_AFFINITY_FALLBACK),
        ("IPA_SCORE", IPA_SCORE),
    ];
    out.extend(ScorePlugin::ALL.iter().map(|&p| (plane_constant(p), p.index() as u32)));
    out
}

/// The text of `shaders/types.wgsl`: the encoder's structs, the eval structs and the shared
/// constants.
pub fn wgsl_prelude() -> String {
    let mut out = String::from(
        "// GENERATED from kplace's Rust sources (src/eval/gpu/types.rs, wgsl_prelude); do not\n\
         // edit. `KPLACE_BLESS_SHADERS=1 cargo test --lib eval::gpu` rewrites it.\n\n",
    );
    out.push_str(WGSL_TYPES);
    out.push('\n');
    out.push_str(EVAL_WGSL_TYPES);
    out.push('\n');
    for (name, value) in wgsl_constants() {
        out.push_str(&format!("const {name}: u32 = {value}u;\n"));
    }
    out
}

/// The eval buffers of a [`Prepared`] (everything the kernels read besides the encoder's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalBuffers {
    /// Per class.
    pub classes: Vec<EvalClass>,
    /// The classes' PreFilter node lists, concatenated.
    pub restrict_ids: Vec<u32>,
    /// Per node.
    pub nodes: Vec<EvalNode>,
    /// Per resource column: NodeResourcesFit filter flags.
    pub fit_columns: Vec<u32>,
    /// The scored resources.
    pub fit_specs: Vec<EvalFitSpec>,
    /// RequestedToCapacityRatio's shape.
    pub shape: Vec<EvalShapePoint>,
    /// NodeResourcesBalancedAllocation's resources.
    pub balanced_specs: Vec<EvalFitSpec>,
    /// ImageLocality: the classes' container image ids, concatenated.
    pub class_image_ids: Vec<u32>,
    /// ImageLocality: the nodes' images, concatenated.
    pub node_images: Vec<EvalNodeImage>,
    /// Per class: inter-pod term ranges.
    pub topo_classes: Vec<EvalTopoClass>,
    /// Inter-pod terms.
    pub topo_terms: Vec<EvalTopoTerm>,
    /// `(domain or node index, count as i32 bits)` entries of the terms.
    pub topo_entries: Vec<[u32; 2]>,
    /// `N × K` domain ids.
    pub node_domains: Vec<u32>,
    /// PodTopologySpread's weight per domain count, as binary64 bits `[low, high]`.
    pub pts_weight_table: Vec<[u32; 2]>,
}

/// The eval buffers of a [`Prepared`].
pub fn eval_buffers(p: &Prepared<'_>) -> EvalBuffers {
    let classes = (0..p.num_classes)
        .map(|c| {
            let (restrict_start, restrict_count) = p.class_restrict.range(c);
            let (image_start, image_count) = p.class_images.range(c);
            EvalClass {
                flags: p.class_flags[c],
                node_name: p.class_node_name[c],
                restrict_start,
                restrict_count,
                score_skip: p.class_score_skip[c],
                image_start,
                image_count,
                _pad0: 0,
            }
        })
        .collect();
    let nodes = (0..p.num_nodes)
        .map(|n| {
            let (image_start, image_count) = p.node_image_ranges.get(n).copied().unwrap_or((0, 0));
            EvalNode {
                flags: p.node_flags[n],
                added_score: p.node_added_score[n],
                image_start,
                image_count,
            }
        })
        .collect();
    let spec = |s: &crate::eval::FitSpec| EvalFitSpec {
        column: s.column,
        kind: s.kind,
        weight: s.weight,
        _pad: 0,
    };
    let fit_specs = p.fit_specs.iter().map(spec).collect();
    let balanced_specs = p.balanced_specs.iter().map(spec).collect();
    let shape = p
        .shape
        .iter()
        .map(|&(utilization, score)| EvalShapePoint { utilization, score, _pad0: 0, _pad1: 0 })
        .collect();
    EvalBuffers {
        classes,
        restrict_ids: p.class_restrict.ids.clone(),
        nodes,
        fit_columns: p.fit_columns.clone(),
        fit_specs,
        shape,
        balanced_specs,
        topo_classes: p
            .topology
            .classes
            .iter()
            .map(|c| EvalTopoClass {
                pts_flags: c.pts_flags,
                pts_filter_start: c.pts_filter.0,
                pts_filter_count: c.pts_filter.1,
                pts_score_start: c.pts_score.0,
                pts_score_count: c.pts_score.1,
                ipa_flags: c.ipa_flags,
                ipa_affinity_start: c.ipa_affinity.0,
                ipa_affinity_count: c.ipa_affinity.1,
                ipa_anti_start: c.ipa_anti_affinity.0,
                ipa_anti_count: c.ipa_anti_affinity.1,
                ipa_existing_start: c.ipa_existing.0,
                ipa_existing_count: c.ipa_existing.1,
                ipa_score_start: c.ipa_score.0,
                ipa_score_count: c.ipa_score.1,
                _pad: [0; 2],
            })
            .collect(),
        topo_terms: p
            .topology
            .terms
            .iter()
            .map(|t| EvalTopoTerm {
                key: t.key,
                entry_start: t.entry_start,
                entry_count: t.entry_count,
                flags: t.flags,
                skew: t.skew,
                min_match: t.min_match,
                bitmap_start: t.bitmap_start,
                bitmap_words: t.bitmap_words,
            })
            .collect(),
        topo_entries: p.topology.entries.iter().map(|&(d, v)| [d, v as u32]).collect(),
        node_domains: p.topology.node_domains.clone(),
        pts_weight_table: p
            .topology
            .pts_weight_table
            .iter()
            .map(|&w| [w as u32, (w >> 32) as u32])
            .collect(),
        class_image_ids: p.class_images.ids.clone(),
        node_images: p
            .node_images
            .iter()
            .map(|e| EvalNodeImage {
                image: e.image,
                size_lo: e.size as u32,
                size_hi: (e.size >> 32) as u32,
                num_nodes: e.num_nodes,
            })
            .collect(),
    }
}
