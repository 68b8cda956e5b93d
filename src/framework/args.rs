//! Typed plugin arguments, with upstream's defaults.
//!
//! Counterpart: `pkg/scheduler/apis/config/types_pluginargs.go` and
//! `pkg/scheduler/apis/config/v1/defaults.go` (kubescheduler.config.k8s.io/v1, v1.35).
//! The config-file parser fills these; plugins read them.

use crate::model::{NodeAffinity, TopologySpreadConstraint};

/// A resource name with a weight (upstream `ResourceSpec`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceSpec {
    /// Resource name, e.g. `cpu`, `memory`, `nvidia.com/gpu`.
    pub name: String,
    /// Weight (≥ 1).
    pub weight: i64,
}

impl ResourceSpec {
    /// A resource spec.
    pub fn new(name: &str, weight: i64) -> Self {
        ResourceSpec { name: name.to_string(), weight }
    }
}

/// The default scored resources: cpu and memory, weight 1 each.
pub fn default_resource_specs() -> Vec<ResourceSpec> {
    vec![ResourceSpec::new("cpu", 1), ResourceSpec::new("memory", 1)]
}

/// `NodeResourcesFit` scoring strategy type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ScoringStrategyType {
    /// Prefer nodes with the most free resources (the default).
    #[default]
    LeastAllocated,
    /// Prefer nodes with the least free resources (bin packing).
    MostAllocated,
    /// Score by a piecewise-linear function of utilization.
    RequestedToCapacityRatio,
}

/// One point of a `RequestedToCapacityRatio` shape: utilization 0–100 → score 0–10.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UtilizationShapePoint {
    /// Utilization percentage, 0–100.
    pub utilization: i32,
    /// Score, 0–10 (scaled ×10 by the plugin).
    pub score: i32,
}

/// `NodeResourcesFitArgs.scoringStrategy`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScoringStrategy {
    /// The strategy.
    pub kind: ScoringStrategyType,
    /// Scored resources and their weights.
    pub resources: Vec<ResourceSpec>,
    /// The shape, for `RequestedToCapacityRatio`.
    pub shape: Vec<UtilizationShapePoint>,
}

impl Default for ScoringStrategy {
    fn default() -> Self {
        ScoringStrategy {
            kind: ScoringStrategyType::LeastAllocated,
            resources: default_resource_specs(),
            shape: Vec::new(),
        }
    }
}

/// `NodeResourcesFitArgs`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeResourcesFitArgs {
    /// Resources the filter ignores.
    pub ignored_resources: Vec<String>,
    /// Resource groups (the prefix before `/`) the filter ignores.
    pub ignored_resource_groups: Vec<String>,
    /// How nodes are scored.
    pub scoring_strategy: ScoringStrategy,
}

/// `NodeResourcesBalancedAllocationArgs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeResourcesBalancedAllocationArgs {
    /// Resources whose balance is scored.
    pub resources: Vec<ResourceSpec>,
}

impl Default for NodeResourcesBalancedAllocationArgs {
    fn default() -> Self {
        NodeResourcesBalancedAllocationArgs { resources: default_resource_specs() }
    }
}

/// `PodTopologySpreadArgs.defaultingType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SpreadDefaultingType {
    /// Built-in defaults: zone maxSkew 5 and hostname maxSkew 3, both ScheduleAnyway.
    #[default]
    System,
    /// `defaultConstraints` from the args (possibly none).
    List,
}

/// `PodTopologySpreadArgs`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PodTopologySpreadArgs {
    /// `defaultConstraints` (used with `List`); their `labelSelector` is always `None` here, the
    /// plugin fills in the pod's default selector.
    pub default_constraints: Vec<TopologySpreadConstraint>,
    /// `defaultingType`.
    pub defaulting_type: SpreadDefaultingType,
}

/// `InterPodAffinityArgs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterPodAffinityArgs {
    /// Weight of existing pods' *required* affinity terms when scoring (0–100, default 1).
    pub hard_pod_affinity_weight: i32,
    /// Ignore existing pods' preferred terms when scoring.
    pub ignore_preferred_terms_of_existing_pods: bool,
}

impl Default for InterPodAffinityArgs {
    fn default() -> Self {
        InterPodAffinityArgs {
            hard_pod_affinity_weight: 1,
            ignore_preferred_terms_of_existing_pods: false,
        }
    }
}

/// `NodeAffinityArgs`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodeAffinityArgs {
    /// `addedAffinity`: node affinity every pod of the profile must also satisfy.
    pub added_affinity: Option<NodeAffinity>,
}

/// `DefaultPreemptionArgs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DefaultPreemptionArgs {
    /// `minCandidateNodesPercentage` (default 10).
    pub min_candidate_nodes_percentage: i32,
    /// `minCandidateNodesAbsolute` (default 100).
    pub min_candidate_nodes_absolute: i32,
}

impl Default for DefaultPreemptionArgs {
    fn default() -> Self {
        DefaultPreemptionArgs {
            min_candidate_nodes_percentage: 10,
            min_candidate_nodes_absolute: 100,
        }
    }
}
