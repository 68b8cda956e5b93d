//! PodTopologySpread: spreading matching pods evenly over topology domains.
//!
//! Input: the pod being scheduled (its `topologySpreadConstraints`, else the default
//! constraints of [`PodTopologySpreadArgs`] with the pod's `default_spread_selector`), the
//! whole [`ClusterState`](crate::model::ClusterState) and, for scoring, the feasible nodes.
//! Output: a per-pod [`PreFilterState`] and per-node filter statuses
//! ([`crate::framework::Status`]) for `DoNotSchedule` constraints; a
//! per-pod [`PreScoreState`], raw per-node scores and their normalization to 0–100 for
//! `ScheduleAnyway` constraints.
//!
//! Upstream (v1.35): `pkg/scheduler/framework/plugins/podtopologyspread/plugin.go`,
//! `common.go`, `filtering.go`, `scoring.go`.
//!
//! One deliberate difference: upstream keeps the global minimum of each constraint in two
//! "critical paths", which AddPod can leave stale (and which depend on Go's map order). Here
//! the minimum is recomputed exactly after every AddPod/RemovePod — the value upstream intends
//! and that a fresh PreFilter yields; PreFilter itself and RemovePod agree with upstream.

mod common;
pub(crate) use common::{IncomingPod, count_pods_match_selector, match_node_inclusion_policies};
mod count_cache;
mod filtering;
mod scoring;

pub use common::{Constraint, LABEL_HOSTNAME, LABEL_TOPOLOGY_ZONE, system_default_constraints};
pub use filtering::PreFilterState;
pub use scoring::{PreScoreState, go_math_log, score_for_count, topology_normalizing_weight};

use crate::framework::args::{PodTopologySpreadArgs, SpreadDefaultingType};
use crate::model::{Pod, UnsatisfiableAction};

/// The plugin's name in profiles and statuses.
pub const NAME: &str = "PodTopologySpread";
/// Reason when placing the pod would exceed a constraint's `maxSkew` (`Unschedulable`).
pub const ERR_REASON_CONSTRAINTS_NOT_MATCH: &str =
    "node(s) didn't match pod topology spread constraints";
/// Reason when the node lacks a constraint's topology key (`UnschedulableAndUnresolvable`).
pub const ERR_REASON_NODE_LABEL_NOT_MATCH: &str =
    "node(s) didn't match pod topology spread constraints (missing required label)";

/// The PodTopologySpread plugin (filter and score), configured by its arguments.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PodTopologySpread {
    /// `PodTopologySpreadArgs` (default constraints and how they are chosen).
    pub args: PodTopologySpreadArgs,
    /// PreScore's matching-pod counts, kept across cycles per node generation.
    counts: count_cache::CountCache,
    /// PreFilter's matching-pod counts, kept across cycles per node generation.
    filter_memo: filtering::FilterMemo,
}

impl PodTopologySpread {
    /// A plugin with these arguments.
    pub fn new(args: PodTopologySpreadArgs) -> Self {
        PodTopologySpread { args, ..Default::default() }
    }

    /// Whether the built-in default constraints are in use (upstream `systemDefaulted`).
    pub fn system_defaulted(&self) -> bool {
        self.args.defaulting_type == SpreadDefaultingType::System
    }

    /// The constraints of `pod` for `action` (upstream `getConstraints` and the first part of
    /// `initPreScoreState`): the pod's own constraints if it has any (of either action),
    /// otherwise the default constraints with the pod's default selector.
    pub fn constraints(&self, pod: &Pod, action: UnsatisfiableAction) -> Vec<Constraint> {
        if !pod.topology_spread_constraints.is_empty() {
            return common::filter_constraints(&pod.topology_spread_constraints, action);
        }
        match self.args.defaulting_type {
            SpreadDefaultingType::System => {
                common::build_default_constraints(&system_default_constraints(), pod, action)
            }
            SpreadDefaultingType::List => {
                common::build_default_constraints(&self.args.default_constraints, pod, action)
            }
        }
    }
}
