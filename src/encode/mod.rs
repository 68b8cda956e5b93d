//! The encoder: turns the scheduling model into the dense, integer form that the filter and
//! score plugins evaluate as pod-class × node matrices, on the CPU and in WGSL kernels alike.
//!
//! Input: a [`ClusterState`] (nodes with their bound pods) and the pending pods, in queue order.
//! Output: [`Encoded`] — the pod [`classes`] (equivalence classes by scheduling signature), the
//! [`dict`]ionaries (every string as a dense `u32` id), the [`tensors`] (`ndarray` matrices and
//! CSR lists in encoded [`units`]) and the [`gpu_types`] buffers (`#[repr(C)]` structs matching
//! WGSL). Upstream counterparts (v1.35): the pod signatures of KEP-5598
//! (`pkg/scheduler/framework/runtime/framework.go` `SignPod`) for the classes, and
//! `framework.NodeInfo` / `framework.Resource` (`pkg/scheduler/framework/types.go`) for what is
//! encoded.
//!
//! Pipeline of [`encode`]:
//! 1. [`classes::classify`] groups the pending pods.
//! 2. [`dict::Dictionaries::build`] collects and sorts every dictionary.
//! 3. [`tensors::fit_adaptive_units`] picks the unit of each adaptive resource.
//! 4. [`tensors::Tensors::build`] encodes amounts (typed errors on overflow, never wrapping) and
//!    lays out lists and compiled selectors.
//! 5. [`gpu_types::GpuBuffers::build`] flattens them into GPU buffers.
//!
//! [`encode_with`] does the same for several groups of pending pods on one cluster state, with
//! the nodes' and bound pods' label pairs collected once ([`node_side`]).
//!
//! Architecture invariant: the output depends only on the *content* of the input — never on
//! `HashMap` iteration, map insertion order or the order of taints, images, ports or tolerations
//! on an object — so the same cluster and pending list always give byte-identical arrays. Node
//! order is the state's (sorted by name); class order is first appearance in the pending list.
//! The exact layout is documented in [`tensors`] and [`gpu_types`]; the units, their rounding
//! and the overflow bounds (with a worked example) in [`units`].

pub mod classes;
pub mod dict;
pub mod gpu_types;
pub mod node_side;
pub mod tensors;
pub mod units;

use std::fmt;

pub use classes::{PodClass, PodClasses, PodSignature};
pub use dict::Dictionaries;
pub use gpu_types::GpuBuffers;
pub use node_side::NodeSide;
pub use tensors::Tensors;

use crate::model::{ClusterState, Pod};

/// Whose amount failed to encode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// A node, by name.
    Node(String),
    /// A pod, by `namespace/name` (for a class, its representative).
    Pod(String),
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::Node(n) => write!(f, "node {n:?}"),
            Subject::Pod(p) => write!(f, "pod {p:?}"),
        }
    }
}

/// Which amount failed to encode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AmountField {
    /// A node's allocatable amount.
    Allocatable,
    /// The sum of the requests of a node's pods.
    Requested,
    /// The sum of the non-zero requests of a node's pods.
    NonZeroRequested,
    /// A pod's request.
    Request,
    /// A pod's non-zero request.
    NonZeroRequest,
}

impl fmt::Display for AmountField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AmountField::Allocatable => "allocatable",
            AmountField::Requested => "requested",
            AmountField::NonZeroRequested => "non-zero requested",
            AmountField::Request => "request",
            AmountField::NonZeroRequest => "non-zero request",
        })
    }
}

/// Why encoding failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// An amount does not fit the encoded range ([`units::AMOUNT_MAX`] units).
    #[error(
        "{subject}: {resource} {field} of {value} does not fit the encoded range (at most {max} {unit})"
    )]
    Overflow {
        /// The node or pod.
        subject: Subject,
        /// The resource name.
        resource: String,
        /// Which amount.
        field: AmountField,
        /// The raw amount (millicores, bytes or count).
        value: i64,
        /// The largest encodable amount, in `unit`s.
        max: u32,
        /// The resource's encoded unit.
        unit: String,
    },
    /// An amount is negative.
    #[error("{subject}: {resource} {field} is negative ({value})")]
    Negative {
        /// The node or pod.
        subject: Subject,
        /// The resource name.
        resource: String,
        /// Which amount.
        field: AmountField,
        /// The raw amount.
        value: i64,
    },
    /// More items than 32-bit ids can number.
    #[error("too many {what} for 32-bit ids ({count})")]
    TooMany {
        /// What was counted.
        what: &'static str,
        /// How many there were.
        count: usize,
    },
}

/// The result of [`encode`].
#[derive(Debug, Clone, PartialEq)]
pub struct Encoded {
    /// Equivalence classes of the pending pods.
    pub classes: PodClasses,
    /// Dictionaries (ids of strings) and resource units.
    pub dicts: Dictionaries,
    /// Dense arrays.
    pub tensors: Tensors,
    /// Flat GPU buffers.
    pub gpu: GpuBuffers,
}

/// Encodes a cluster and its pending pods. Deterministic; fails only on amounts outside the
/// encoded range, negative amounts, or more than `u32::MAX` of something.
pub fn encode(state: &ClusterState, pending: &[Pod]) -> Result<Encoded, EncodeError> {
    let classes = classes::classify(pending)?;
    let mut dicts = Dictionaries::build(state, pending, &classes)?;
    tensors::fit_adaptive_units(&mut dicts.resources, state, &classes);
    let tensors = Tensors::build(state, pending, &classes, &dicts)?;
    let gpu = GpuBuffers::build(&tensors, &dicts, &classes)?;
    Ok(Encoded { classes, dicts, tensors, gpu })
}

/// [`encode`] with the cluster's label pairs collected once in `side`, for several groups of
/// pending pods on one state; the result is the same. A `side` built for a state with other
/// nodes or bound pods is ignored (a fresh [`encode`]).
pub fn encode_with(
    side: &NodeSide,
    state: &ClusterState,
    pending: &[Pod],
) -> Result<Encoded, EncodeError> {
    if !side.fits(state) {
        return encode(state, pending);
    }
    let classes = classes::classify(pending)?;
    let (mut dicts, ids) = Dictionaries::build_shared(side, state, pending, &classes)?;
    tensors::fit_adaptive_units(&mut dicts.resources, state, &classes);
    let tensors = Tensors::build_shared(side, &ids, state, pending, &classes, &dicts)?;
    let gpu = GpuBuffers::build(&tensors, &dicts, &classes)?;
    Ok(Encoded { classes, dicts, tensors, gpu })
}

#[cfg(test)]
mod tests;
