//! The WGSL kernels of matrix evaluation, in dispatch order, with the buffer bound at each of
//! their bindings.
//!
//! Input: the files of `shaders/` (embedded at build time). Output: [`KERNELS`] and
//! [`kernel_source_with`]. No upstream counterpart: each kernel's header names the upstream plugin it
//! reproduces and its CPU twin in [`crate::eval::cpu`].
//!
//! A kernel's source is `shaders/types.wgsl` + `shaders/common.wgsl` + the libraries it uses
//! (`shaders/f64.wgsl`, the software binary64 of [`crate::eval::softf64`], followed in
//! [`Binary64::Native`] kernels by `shaders/f64_native.wgsl`) + its own file. Binding `i`
//! of every kernel is `bindings[i]` (binding 0 is always the per-tile `params` uniform); a test
//! parses every kernel with naga and checks that the WGSL variable at each binding has the
//! buffer's name.

/// `shaders/types.wgsl`: generated structs and constants (see [`super::types::wgsl_prelude`]).
pub const TYPES_WGSL: &str = include_str!("../../../shaders/types.wgsl");
/// `shaders/common.wgsl`: `params` and cell indexing.
pub const COMMON_WGSL: &str = include_str!("../../../shaders/common.wgsl");
/// `shaders/f64.wgsl`: software IEEE-754 binary64 and 64-bit integers on `vec2<u32>` (a library;
/// its Rust twin is [`crate::eval::softf64`]).
pub const F64_WGSL: &str = include_str!("../../../shaders/f64.wgsl");
/// `shaders/f64_native.wgsl`: native binary64 for the operations of [`F64_WGSL`] where it is
/// provably bit-identical (appended after [`F64_WGSL`] in [`Binary64::Native`] kernels).
pub const F64_NATIVE_WGSL: &str = include_str!("../../../shaders/f64_native.wgsl");
/// The functions of [`F64_WGSL`] that [`F64_NATIVE_WGSL`] defines again: their software
/// definitions are renamed `soft_<name>` in a native kernel (the native ones fall back to them).
pub const F64_NATIVE_FUNCTIONS: [&str; 11] = [
    "f64_add",
    "f64_sub",
    "f64_mul",
    "f64_from_u32",
    "f64_from_i32",
    "f64_from_i64",
    "f64_from_u64",
    "f64_to_i64",
    "u64_mul_u32",
    "u64_divmod",
    "i64_div",
];

/// How the kernels compute binary64 (and 64-bit integers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Binary64 {
    /// Everything in software on `vec2<u32>` ([`F64_WGSL`]): runs on every device.
    Software,
    /// The device's `f64`, `i64` and `u64` where they are provably identical
    /// ([`F64_NATIVE_WGSL`]), software elsewhere: needs `SHADER_F64` and `SHADER_INT64`.
    Native,
}

impl Binary64 {
    /// Both, software first.
    pub const ALL: [Binary64; 2] = [Binary64::Software, Binary64::Native];

    /// `software` or `native`.
    pub fn name(self) -> &'static str {
        match self {
            Binary64::Software => "software",
            Binary64::Native => "native",
        }
    }

    /// The device features the kernels need in this mode.
    pub fn features(self) -> wgpu::Features {
        match self {
            Binary64::Software => wgpu::Features::empty(),
            Binary64::Native => wgpu::Features::SHADER_F64 | wgpu::Features::SHADER_INT64,
        }
    }

    /// The binary64 library as a kernel of this mode includes it.
    pub fn library(self) -> Cow<'static, str> {
        match self {
            Binary64::Software => Cow::Borrowed(F64_WGSL),
            Binary64::Native => {
                let mut soft = F64_WGSL.to_string();
                for name in F64_NATIVE_FUNCTIONS {
                    soft = soft.replace(&format!("fn {name}("), &format!("fn soft_{name}("));
                }
                Cow::Owned(format!("{soft}\n{F64_NATIVE_WGSL}"))
            }
        }
    }
}

/// `shaders/f64_selftest.wgsl`: a kernel running every operation of [`F64_WGSL`] on input pairs
/// (the device test of the library).
pub const F64_SELFTEST_WGSL: &str = include_str!("../../../shaders/f64_selftest.wgsl");
/// `shaders/topology.wgsl`: lookups in the inter-pod count tables (a library; the kernels that
/// use it bind `node_domains` and `topo_entries`).
pub const TOPOLOGY_WGSL: &str = include_str!("../../../shaders/topology.wgsl");
/// Results per input of the self-test kernel.
pub const F64_SELFTEST_RESULTS: usize = 10;

/// A buffer a kernel binds, named as the WGSL variable that binds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[allow(missing_docs)]
pub enum Buf {
    // The per-tile uniform.
    Params,
    // Encoded inputs (encode::GpuBuffers).
    Nodes,
    Classes,
    NodeAllocatable,
    NodeRequested,
    NodeNonzeroRequested,
    ClassRequests,
    ClassNonzeroRequests,
    NodeLabelIds,
    NodeTaintIds,
    NodePortIds,
    ClassToleratedTaintIds,
    ClassPortIds,
    ClassSelectorReqIds,
    ClassRequiredTermIds,
    ClassPreferredTerms,
    Requirements,
    RequirementSets,
    NodeTerms,
    NodeTermReqIds,
    TaintEffects,
    HostPorts,
    // Eval inputs (types::eval_buffers).
    EvalClasses,
    EvalNodes,
    ClassRestrictIds,
    FitColumns,
    FitSpecs,
    Shape,
    BalancedSpecs,
    ClassImageIds,
    NodeImages,
    EvalTopoClasses,
    TopoTerms,
    TopoEntries,
    NodeDomains,
    PtsWeightTable,
    // Scratch: PodTopologySpread's domain bitmaps (every class) and weights (every term).
    PtsDomainBits,
    PtsWeights,
    // Cell planes (one tile each).
    CellFilter,
    FitInsufficient,
    Total,
    // Score cell planes (one tile each, every score plane of the tile in one binding).
    Raw,
    Norm,
    // Per-class planes (one chunk each).
    RowMax,
    RowMin,
    FeasibleCount,
    BestTotal,
    PtsScored,
}

impl Buf {
    /// The WGSL variable name.
    pub fn name(self) -> &'static str {
        match self {
            Buf::Params => "params",
            Buf::Nodes => "nodes",
            Buf::Classes => "classes",
            Buf::NodeAllocatable => "node_allocatable",
            Buf::NodeRequested => "node_requested",
            Buf::NodeNonzeroRequested => "node_nonzero_requested",
            Buf::ClassRequests => "class_requests",
            Buf::ClassNonzeroRequests => "class_nonzero_requests",
            Buf::NodeLabelIds => "node_label_ids",
            Buf::NodeTaintIds => "node_taint_ids",
            Buf::NodePortIds => "node_port_ids",
            Buf::ClassToleratedTaintIds => "class_tolerated_taint_ids",
            Buf::ClassPortIds => "class_port_ids",
            Buf::ClassSelectorReqIds => "class_selector_req_ids",
            Buf::ClassRequiredTermIds => "class_required_term_ids",
            Buf::ClassPreferredTerms => "class_preferred_terms",
            Buf::Requirements => "requirements",
            Buf::RequirementSets => "requirement_sets",
            Buf::NodeTerms => "node_terms",
            Buf::NodeTermReqIds => "node_term_req_ids",
            Buf::TaintEffects => "taint_effects",
            Buf::HostPorts => "host_ports",
            Buf::EvalClasses => "eval_classes",
            Buf::EvalNodes => "eval_nodes",
            Buf::ClassRestrictIds => "class_restrict_ids",
            Buf::FitColumns => "fit_columns",
            Buf::FitSpecs => "fit_specs",
            Buf::Shape => "shape",
            Buf::BalancedSpecs => "balanced_specs",
            Buf::ClassImageIds => "class_image_ids",
            Buf::NodeImages => "node_images",
            Buf::EvalTopoClasses => "eval_topo_classes",
            Buf::TopoTerms => "topo_terms",
            Buf::TopoEntries => "topo_entries",
            Buf::NodeDomains => "node_domains",
            Buf::PtsWeightTable => "pts_weight_table",
            Buf::PtsDomainBits => "pts_domain_bits",
            Buf::PtsWeights => "pts_weights",
            Buf::PtsScored => "pts_scored",
            Buf::CellFilter => "cell_filter",
            Buf::FitInsufficient => "fit_insufficient",
            Buf::Total => "total",
            Buf::Raw => "raw",
            Buf::Norm => "norm",
            Buf::RowMax => "row_max",
            Buf::RowMin => "row_min",
            Buf::FeasibleCount => "feasible_count",
            Buf::BestTotal => "best_total",
        }
    }

    /// How many cell planes the buffer holds per tile (bound one tile at a time): 1 for the
    /// filter, fit and total planes, [`NUM_SCORE_PLANES`] for the raw and normalized scores,
    /// 0 for buffers that are not cell planes.
    pub fn cell_planes(self) -> u64 {
        match self {
            Buf::CellFilter | Buf::FitInsufficient | Buf::Total => 1,
            Buf::Raw | Buf::Norm => NUM_SCORE_PLANES as u64,
            _ => 0,
        }
    }

    /// How many per-class planes the buffer holds (one chunk each): [`NUM_SCORE_PLANES`] for
    /// the row maxima and minima, 1 for the feasible counts and best totals, 0 otherwise.
    pub fn class_planes(self) -> u64 {
        match self {
            Buf::RowMax | Buf::RowMin => NUM_SCORE_PLANES as u64,
            Buf::FeasibleCount | Buf::BestTotal | Buf::PtsScored => 1,
            _ => 0,
        }
    }
}

/// One compute kernel: `fn main` of `shaders/<name>.wgsl`, `@workgroup_size(64)`.
#[derive(Debug, Clone, Copy)]
pub struct Kernel {
    /// The file stem.
    pub name: &'static str,
    /// The file's text.
    pub body: &'static str,
    /// The libraries prepended to the body (e.g. [`F64_WGSL`]).
    pub libs: &'static [&'static str],
    /// Dispatched once per class chunk, one workgroup per class (`gid.y` the class within the
    /// chunk), instead of once per tile over its cells.
    pub per_class: bool,
    /// The buffer at each binding of group 0.
    pub bindings: &'static [Buf],
}

use std::borrow::Cow;

use crate::eval::NUM_SCORE_PLANES;
use Buf::*;

/// Every kernel, in dispatch order: the filter and raw-score kernels (one per plugin), then
/// feasibility, then normalization.
pub const KERNELS: [Kernel; 15] = [
    Kernel {
        name: "node_unschedulable",
        libs: &[],
        per_class: false,
        body: include_str!("../../../shaders/node_unschedulable.wgsl"),
        bindings: &[Params, Nodes, Classes, CellFilter],
    },
    Kernel {
        name: "node_name",
        libs: &[],
        per_class: false,
        body: include_str!("../../../shaders/node_name.wgsl"),
        bindings: &[Params, EvalClasses, CellFilter],
    },
    Kernel {
        name: "taint_toleration",
        libs: &[],
        per_class: false,
        body: include_str!("../../../shaders/taint_toleration.wgsl"),
        bindings: &[
            Params,
            Nodes,
            Classes,
            NodeTaintIds,
            ClassToleratedTaintIds,
            TaintEffects,
            CellFilter,
            Raw,
        ],
    },
    Kernel {
        name: "node_affinity",
        libs: &[],
        per_class: false,
        body: include_str!("../../../shaders/node_affinity.wgsl"),
        bindings: &[
            Params,
            Nodes,
            EvalNodes,
            EvalClasses,
            ClassRestrictIds,
            Classes,
            NodeLabelIds,
            Requirements,
            RequirementSets,
            NodeTerms,
            NodeTermReqIds,
            ClassSelectorReqIds,
            ClassRequiredTermIds,
            ClassPreferredTerms,
            CellFilter,
            Raw,
        ],
    },
    Kernel {
        name: "node_ports",
        libs: &[],
        per_class: false,
        body: include_str!("../../../shaders/node_ports.wgsl"),
        bindings: &[Params, Nodes, Classes, NodePortIds, ClassPortIds, HostPorts, CellFilter],
    },
    Kernel {
        name: "node_resources_fit",
        libs: &[],
        per_class: false,
        body: include_str!("../../../shaders/node_resources_fit.wgsl"),
        bindings: &[
            Params,
            EvalClasses,
            NodeAllocatable,
            NodeRequested,
            NodeNonzeroRequested,
            ClassRequests,
            ClassNonzeroRequests,
            FitColumns,
            FitSpecs,
            Shape,
            CellFilter,
            FitInsufficient,
            Raw,
        ],
    },
    Kernel {
        name: "balanced_allocation",
        libs: &[F64_WGSL],
        per_class: false,
        body: include_str!("../../../shaders/balanced_allocation.wgsl"),
        bindings: &[Params, NodeAllocatable, NodeRequested, ClassRequests, BalancedSpecs, Raw],
    },
    Kernel {
        name: "image_locality",
        libs: &[F64_WGSL],
        per_class: false,
        body: include_str!("../../../shaders/image_locality.wgsl"),
        bindings: &[Params, EvalClasses, EvalNodes, ClassImageIds, NodeImages, Raw],
    },
    Kernel {
        name: "inter_pod_affinity",
        libs: &[TOPOLOGY_WGSL],
        per_class: false,
        body: include_str!("../../../shaders/inter_pod_affinity.wgsl"),
        bindings: &[Params, EvalTopoClasses, TopoTerms, TopoEntries, NodeDomains, CellFilter, Raw],
    },
    Kernel {
        name: "pod_topology_spread",
        libs: &[TOPOLOGY_WGSL],
        per_class: false,
        body: include_str!("../../../shaders/pod_topology_spread.wgsl"),
        bindings: &[Params, EvalTopoClasses, TopoTerms, TopoEntries, NodeDomains, CellFilter],
    },
    Kernel {
        name: "feasibility",
        libs: &[],
        per_class: false,
        body: include_str!("../../../shaders/feasibility.wgsl"),
        bindings: &[Params, CellFilter, Raw, RowMax, RowMin, FeasibleCount],
    },
    Kernel {
        name: "pod_topology_spread_domains",
        libs: &[],
        per_class: false,
        body: include_str!("../../../shaders/pod_topology_spread_domains.wgsl"),
        bindings: &[
            Params,
            EvalTopoClasses,
            TopoTerms,
            NodeDomains,
            CellFilter,
            PtsScored,
            PtsDomainBits,
        ],
    },
    Kernel {
        name: "pod_topology_spread_weights",
        libs: &[],
        per_class: true,
        body: include_str!("../../../shaders/pod_topology_spread_weights.wgsl"),
        bindings: &[
            Params,
            EvalTopoClasses,
            TopoTerms,
            PtsScored,
            PtsDomainBits,
            PtsWeightTable,
            PtsWeights,
        ],
    },
    Kernel {
        name: "pod_topology_spread_score",
        libs: &[F64_WGSL, TOPOLOGY_WGSL],
        per_class: false,
        body: include_str!("../../../shaders/pod_topology_spread_score.wgsl"),
        bindings: &[
            Params,
            EvalTopoClasses,
            TopoTerms,
            TopoEntries,
            NodeDomains,
            CellFilter,
            PtsWeights,
            Raw,
            RowMax,
            RowMin,
        ],
    },
    Kernel {
        name: "normalize_score",
        libs: &[F64_WGSL],
        per_class: false,
        body: include_str!("../../../shaders/normalize_score.wgsl"),
        bindings: &[Params, EvalClasses, CellFilter, Raw, RowMax, RowMin, Norm, Total, BestTotal],
    },
];

/// The most storage buffers any kernel binds (what the device must allow per shader stage).
pub fn max_storage_buffers() -> u32 {
    KERNELS.iter().map(|k| k.bindings.len() as u32 - 1).max().unwrap_or(0)
}

/// The full WGSL source of a kernel with software binary64: types, common, libraries, body.
pub fn kernel_source(kernel: &Kernel) -> String {
    kernel_source_with(kernel, Binary64::Software)
}

/// The full WGSL source of a kernel whose binary64 is `binary64`'s.
pub fn kernel_source_with(kernel: &Kernel, binary64: Binary64) -> String {
    let mut out = format!("{TYPES_WGSL}\n{COMMON_WGSL}\n");
    for lib in kernel.libs {
        if *lib == F64_WGSL {
            out.push_str(&binary64.library());
        } else {
            out.push_str(lib);
        }
        out.push('\n');
    }
    out.push_str(kernel.body);
    out
}

/// The full WGSL source of the binary64 self-test kernel (software binary64).
pub fn f64_selftest_source() -> String {
    f64_selftest_source_with(Binary64::Software)
}

/// The full WGSL source of the binary64 self-test kernel in `binary64`'s mode. A native one
/// binds at 2 a uniform `vec4<u32>` of zeros: the fence of [`F64_NATIVE_WGSL`].
pub fn f64_selftest_source_with(binary64: Binary64) -> String {
    let fence = match binary64 {
        Binary64::Software => "",
        Binary64::Native => {
            "@group(0) @binding(2) var<uniform> f64_fence_word: vec4<u32>;\n\
             fn f64_fence() -> u32 {\n    return f64_fence_word.x;\n}\n"
        }
    };
    format!("{fence}{}\n{F64_SELFTEST_WGSL}", binary64.library())
}
