//! The NodeResources plugins: NodeResourcesFit (filter and score) and
//! NodeResourcesBalancedAllocation (score).
//!
//! Input: the pod's effective requests ([`crate::model::Pod::requests`], and
//! [`crate::model::Pod::non_zero_requests`] for scoring), the node's allocatable and requested
//! amounts, and the typed arguments of [`crate::framework::args`]. Output: filter statuses with
//! upstream's `Insufficient <resource>` reasons, and integer scores in `[0, 100]`.
//!
//! Upstream (v1.35): `pkg/scheduler/framework/plugins/noderesources/` — `fit.go`,
//! `resource_allocation.go`, `least_allocated.go`, `most_allocated.go`,
//! `requested_to_capacity_ratio.go`, `balanced_allocation.go`, and
//! `pkg/scheduler/framework/plugins/helper/shape_score.go`; argument validation from
//! `pkg/scheduler/apis/config/validation/validation_pluginargs.go`.

pub mod balanced_allocation;
pub mod fit;
pub mod least_allocated;
pub mod most_allocated;
pub mod requested_to_capacity_ratio;
pub mod resource_allocation;

pub use balanced_allocation::BalancedAllocation;
pub use fit::{Fit, InsufficientResource};

/// Invalid NodeResources arguments (upstream's `ValidateNodeResourcesFitArgs` and
/// `ValidateNodeResourcesBalancedAllocationArgs` reject the same inputs).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NodeResourcesArgsError {
    /// The scored resource list is empty (upstream fails every Score with
    /// "resources not found"; kplace refuses the configuration instead).
    #[error("no resources to score")]
    NoResources,
    /// A NodeResourcesFit scoring weight is outside `(0, 100]`.
    #[error("resource weight of {name:?} not in valid range (0, 100], got {weight}")]
    WeightOutOfRange {
        /// Resource name.
        name: String,
        /// The weight given.
        weight: i64,
    },
    /// A NodeResourcesBalancedAllocation weight is not 1.
    #[error("resource weight of {name:?} must be 1, got {weight}")]
    BalancedWeightNotOne {
        /// Resource name.
        name: String,
        /// The weight given.
        weight: i64,
    },
    /// A resource is listed twice in NodeResourcesBalancedAllocation.
    #[error("duplicate resource {name:?}")]
    DuplicateResource {
        /// Resource name.
        name: String,
    },
    /// The RequestedToCapacityRatio shape has no point.
    #[error("requestedToCapacityRatio.shape: at least one point must be specified")]
    EmptyShape,
    /// Shape utilizations are not strictly increasing.
    #[error(
        "requestedToCapacityRatio.shape[{index}].utilization: values must be sorted in increasing order"
    )]
    ShapeNotIncreasing {
        /// Index of the first point out of order.
        index: usize,
    },
    /// A shape utilization is outside `[0, 100]`.
    #[error(
        "requestedToCapacityRatio.shape[{index}].utilization: {utilization} not in valid range [0, 100]"
    )]
    UtilizationOutOfRange {
        /// Index of the point.
        index: usize,
        /// The utilization given.
        utilization: i32,
    },
    /// A shape score is outside `[0, 10]`.
    #[error("requestedToCapacityRatio.shape[{index}].score: {score} not in valid range [0, 10]")]
    ShapeScoreOutOfRange {
        /// Index of the point.
        index: usize,
        /// The score given.
        score: i32,
    },
    /// An ignored resource group contains a `/`.
    #[error("ignoredResourceGroups[{index}]: {group:?} must not contain \"/\"")]
    InvalidResourceGroup {
        /// Index in `ignoredResourceGroups`.
        index: usize,
        /// The group given.
        group: String,
    },
}
