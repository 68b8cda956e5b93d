//! Matrix evaluation: filter and score every pod class on every node at once, as pod-class ×
//! node matrices, on the CPU ([`cpu`]) or in WGSL compute shaders ([`gpu`]), with bit-identical
//! results.
//!
//! Input: a [`Profile`], the [`ClusterState`], the pending pods and their [`Encoded`] form (built
//! from the same state and pods). Output: a [`Matrix`]: for every `(class, node)` cell a word of
//! filter results (which checks failed, the first failure in profile order, feasibility), the
//! NodeResourcesFit reasons (a bitmask over resource columns), and raw, normalized and weighted
//! integer scores; per class the PreFilter and PreScore outcomes, the feasible-node count and the
//! best total. Upstream counterpart (v1.35): `pkg/scheduler/framework/runtime/framework.go`
//! (`RunPreFilterPlugins`, `RunFilterPlugins`, `RunScorePlugins`) applied to the representative
//! pod of each class, over every node; the plugins are those of [`crate::plugins`].
//!
//! [`columns`] is the incremental entry point: after pods land on some nodes, only those
//! nodes' usage-dependent cells are evaluated again. [`Evaluator`] is what the commands hold
//! (`--backend auto|gpu|cpu`): `plan` evaluates its tiers' matrices and column updates on it,
//! `baseline` its profiles' leading static filters
//! ([`crate::baseline::StaticFilters`]), `explain` the explained pod's row.
//!
//! # What is evaluated
//!
//! Every plugin kplace evaluates ([`PluginName::evaluated`]); [`NOT_YET_IN_MATRIX`] is empty.
//!
//! Filters: NodeUnschedulable, NodeName, TaintToleration, NodeAffinity (the profile's
//! `addedAffinity`, `nodeSelector`, required terms, and PreFilter's `metadata.name`
//! restriction and term conflict), NodePorts, NodeResourcesFit, PodTopologySpread
//! (`DoNotSchedule`, with `minDomains` and the node inclusion policies) and InterPodAffinity
//! (required affinity and anti-affinity, and existing pods' required anti-affinity). Scores:
//! TaintToleration, NodeAffinity (preferred terms and `addedAffinity`), NodeResourcesFit
//! (LeastAllocated, MostAllocated and RequestedToCapacityRatio — all integer arithmetic),
//! NodeResourcesBalancedAllocation, ImageLocality, PodTopologySpread (`ScheduleAnyway`, own or
//! default constraints) and InterPodAffinity (preferred terms, existing pods' terms). Where
//! upstream computes in `float64` (BalancedAllocation's fractions and standard deviation,
//! ImageLocality's spread, PodTopologySpread's weighted sums and rounding, InterPodAffinity's
//! normalization) the CPU uses native `f64` and the GPU the software binary64 of
//! `shaders/f64.wgsl` (Rust twin: [`softf64`], tested against native `f64`), both in upstream's
//! order of operations, so CPU, GPU and the framework agree bit for bit.
//!
//! The inter-pod plugins' per-domain counts come from the plugins' own PreFilter and PreScore
//! run on each class's representative ([`topology`]), dictionary coded by domain; the kernels
//! look a node's domain up. What depends on the feasible nodes (PodTopologySpread's ignored
//! nodes, the domains the scored nodes span, hence its weights; both plugins' row minima and
//! maxima) is computed per class row after feasibility, on the device for the GPU.
//!
//! # Units, and how the CPU matrix, the GPU and the exact framework relate
//!
//! Both matrix evaluators compute in the encoded units of [`crate::encode::units`] (MiB for
//! memory, …) from the same encoded arrays, with the same `u32`/`i32` operations (wrapping
//! where WGSL wraps), so a CPU matrix and a GPU matrix are equal bit for bit, always: that is
//! what `tests/all/gpu_parity.rs` checks.
//!
//! Against the exact per-pod framework (`Framework::filter` / `Framework::score` of
//! [`crate::framework::runtime`] on a class's representative pod), the matrix agrees exactly on
//! every cell whose node and class carry no `INEXACT_UNITS` flag (every amount a multiple of its
//! unit): there `floor(a·k / (b·k)) = floor(a / b)`. On other cells encoding is conservative (a
//! fit in encoded units is a fit in bytes) and a NodeResourcesFit score may differ by rounding;
//! every other check and score is independent of units. `tests/all/eval_framework.rs` checks both:
//! full equality (statuses, first failures, raw, normalized and total scores) on clusters whose
//! amounts are whole units (the demo fixture rounded to its units with
//! [`testing::round_to_units`], generated clusters), and, on the demo fixture as it is and on
//! generated clusters with inexact amounts, equality of every check's verdict and every raw
//! score except NodeResourcesFit's on flagged cells ([`testing::Agreement`]).
//!
//! Normalization (TaintToleration, NodeAffinity, PodTopologySpread) and PodTopologySpread's
//! weights run over *every* feasible node of a class row, as `Framework::score` does when given
//! all feasible nodes; kube-scheduler itself scores the nodes it sampled
//! (`percentageOfNodesToScore`), which the batch solver does not.
//!
//! # Cell layout
//!
//! Matrices are row-major `C × N` (`class * num_nodes + node`), classes in [`Encoded`] order,
//! nodes in [`ClusterState::nodes`] order. The filter word of a cell ([`Matrix::filter`]):
//!
//! | bits | meaning |
//! |---|---|
//! | 0–15 | the enabled checks that failed ([`CHECK_PREFILTER_REJECTED`] …, one bit each) |
//! | 16–23 | [`FIRST_FAILURE_SHIFT`]: 1 + the bit of the first failed check in profile order, 0 if none |
//! | 31 | [`CELL_FEASIBLE`]: every enabled check passed |
//!
//! Every enabled check is evaluated on every cell (upstream stops at the first failure; the
//! first failure is recorded separately), so a solver can tell "only resources are missing"
//! from "never fits". Within PodTopologySpread, whose constraints are checked in order and
//! whose two reasons belong to the first failing constraint, only that constraint's bit is set. The NodeResourcesFit word ([`Matrix::fit_insufficient`]) has bit `j` set
//! for each resource column `j` the node lacks (the `pods` column for "Too many pods") and
//! [`FIT_UNRESOLVABLE`] when some request exceeds the node's allocatable outright.

pub mod columns;
pub mod cpu;
pub mod gpu;
pub mod lean;
pub mod prep;
pub mod softf64;
pub mod synthetic;
pub mod testing;
pub mod topology;

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

pub use lean::{LeanMatrix, LeanPlane, OUT_OF_RANGE, narrow};
pub use prep::{FitSpec, NUM_SCORE_PLANES, NodeImage, Prepared, ScorePlugin};

use crate::encode::Encoded;
use crate::framework::profile::{ExtensionPoint, PluginName, Profile};
use crate::framework::{Code, MAX_NODE_SCORE, MIN_NODE_SCORE, Status};
use crate::model::{ClusterState, Pod};
use crate::plugins::interpodaffinity as ipa;
use crate::plugins::node_affinity::{ERR_REASON_ENFORCED, ERR_REASON_POD, NodeAffinity};
use crate::plugins::node_name::{ERR_REASON as NODE_NAME_REASON, NodeName};
use crate::plugins::node_ports::{ERR_REASON as NODE_PORTS_REASON, NodePorts};
use crate::plugins::node_unschedulable::{ERR_REASON_UNSCHEDULABLE, NodeUnschedulable};
use crate::plugins::noderesources::Fit;
use crate::plugins::noderesources::fit::{ERR_REASON_TOO_MANY_PODS, insufficient_reason};
use crate::plugins::podtopologyspread as pts;
use crate::plugins::taint_toleration::{ERR_REASON_UNTOLERATED, TaintToleration};

/// Check bit: a PreFilter plugin (NodeAffinity: "pod affinity terms conflict") rejected the
/// class on every node.
pub const CHECK_PREFILTER_REJECTED: u32 = 1 << 0;
/// Check bit: PreFilter restricted the class to named nodes (NodeAffinity's `metadata.name`
/// pins) and this node is not one of them.
pub const CHECK_PREFILTER_ABSENT: u32 = 1 << 1;
/// Check bit: NodeUnschedulable.
pub const CHECK_NODE_UNSCHEDULABLE: u32 = 1 << 2;
/// Check bit: NodeName.
pub const CHECK_NODE_NAME: u32 = 1 << 3;
/// Check bit: TaintToleration.
pub const CHECK_TAINT_TOLERATION: u32 = 1 << 4;
/// Check bit: NodeAffinity, the profile's `addedAffinity` (checked before the pod's own).
pub const CHECK_NODE_AFFINITY_ENFORCED: u32 = 1 << 5;
/// Check bit: NodeAffinity, the pod's `nodeSelector` and required node affinity.
pub const CHECK_NODE_AFFINITY_POD: u32 = 1 << 6;
/// Check bit: NodePorts.
pub const CHECK_NODE_PORTS: u32 = 1 << 7;
/// Check bit: NodeResourcesFit.
pub const CHECK_NODE_RESOURCES_FIT: u32 = 1 << 8;
/// Check bit: PodTopologySpread, the node lacks the key of the first failing constraint
/// (`UnschedulableAndUnresolvable`). A cell has at most one of the two PodTopologySpread bits:
/// the reason of the first failing constraint, as upstream reports it.
pub const CHECK_POD_TOPOLOGY_SPREAD_LABEL: u32 = 1 << 9;
/// Check bit: PodTopologySpread, the first failing constraint's skew exceeds `maxSkew`.
pub const CHECK_POD_TOPOLOGY_SPREAD_SKEW: u32 = 1 << 10;
/// Check bit: InterPodAffinity, the pod's required affinity is not satisfied
/// (`UnschedulableAndUnresolvable`).
pub const CHECK_INTER_POD_AFFINITY: u32 = 1 << 11;
/// Check bit: InterPodAffinity, the pod's required anti-affinity is not satisfied.
pub const CHECK_INTER_POD_ANTI_AFFINITY: u32 = 1 << 12;
/// Check bit: InterPodAffinity, an existing pod's required anti-affinity rejects the pod.
pub const CHECK_INTER_POD_EXISTING_ANTI_AFFINITY: u32 = 1 << 13;
/// Mask of the check bits of a cell's filter word.
pub const CHECK_MASK: u32 = 0xFFFF;
/// Shift of the first-failure field of a cell's filter word (1 + check bit index, 0 if none).
pub const FIRST_FAILURE_SHIFT: u32 = 16;
/// Mask of the first-failure field, after shifting.
pub const FIRST_FAILURE_MASK: u32 = 0xFF;
/// Cell bit: every enabled check passed.
pub const CELL_FEASIBLE: u32 = 1 << 31;
/// NodeResourcesFit word bit: some request exceeds the node's allocatable (preemption cannot
/// help; the status is `UnschedulableAndUnresolvable`).
pub const FIT_UNRESOLVABLE: u32 = 1 << 31;
/// The most resource columns the NodeResourcesFit word can name (bits 0–30).
pub const MAX_FIT_COLUMNS: usize = 31;

/// Plugins kplace evaluates on the CPU (framework runtime) but not as matrices: none since the
/// `float64` plugins and the inter-pod plugins joined the matrix. Kept (empty) so that callers
/// and [`Matrix::not_evaluated`] keep their meaning should a plugin be added to kplace first.
pub const NOT_YET_IN_MATRIX: [PluginName; 0] = [];

/// One filter check, in the order of its bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Check {
    /// [`CHECK_PREFILTER_REJECTED`].
    PreFilterRejected,
    /// [`CHECK_PREFILTER_ABSENT`].
    PreFilterAbsent,
    /// [`CHECK_NODE_UNSCHEDULABLE`].
    NodeUnschedulable,
    /// [`CHECK_NODE_NAME`].
    NodeName,
    /// [`CHECK_TAINT_TOLERATION`].
    TaintToleration,
    /// [`CHECK_NODE_AFFINITY_ENFORCED`].
    NodeAffinityEnforced,
    /// [`CHECK_NODE_AFFINITY_POD`].
    NodeAffinityPod,
    /// [`CHECK_NODE_PORTS`].
    NodePorts,
    /// [`CHECK_NODE_RESOURCES_FIT`].
    NodeResourcesFit,
    /// [`CHECK_POD_TOPOLOGY_SPREAD_LABEL`].
    PodTopologySpreadLabel,
    /// [`CHECK_POD_TOPOLOGY_SPREAD_SKEW`].
    PodTopologySpreadSkew,
    /// [`CHECK_INTER_POD_AFFINITY`].
    InterPodAffinity,
    /// [`CHECK_INTER_POD_ANTI_AFFINITY`].
    InterPodAntiAffinity,
    /// [`CHECK_INTER_POD_EXISTING_ANTI_AFFINITY`].
    InterPodExistingAntiAffinity,
}

impl Check {
    /// Every check, by bit index.
    pub const ALL: [Check; 14] = [
        Check::PreFilterRejected,
        Check::PreFilterAbsent,
        Check::NodeUnschedulable,
        Check::NodeName,
        Check::TaintToleration,
        Check::NodeAffinityEnforced,
        Check::NodeAffinityPod,
        Check::NodePorts,
        Check::NodeResourcesFit,
        Check::PodTopologySpreadLabel,
        Check::PodTopologySpreadSkew,
        Check::InterPodAffinity,
        Check::InterPodAntiAffinity,
        Check::InterPodExistingAntiAffinity,
    ];

    /// The bit index of the check in a cell's filter word.
    pub fn index(self) -> u32 {
        self as u32
    }

    /// The check's bit.
    pub fn bit(self) -> u32 {
        1 << self.index()
    }

    /// The check with this bit index.
    pub fn from_index(index: u32) -> Option<Check> {
        Check::ALL.get(index as usize).copied()
    }

    /// The checks a filter plugin performs, in its own order; empty for plugins the matrix does
    /// not evaluate as filters.
    pub fn of_plugin(plugin: PluginName) -> &'static [Check] {
        match plugin {
            PluginName::NodeUnschedulable => &[Check::NodeUnschedulable],
            PluginName::NodeName => &[Check::NodeName],
            PluginName::TaintToleration => &[Check::TaintToleration],
            PluginName::NodeAffinity => &[Check::NodeAffinityEnforced, Check::NodeAffinityPod],
            PluginName::NodePorts => &[Check::NodePorts],
            PluginName::NodeResourcesFit => &[Check::NodeResourcesFit],
            PluginName::PodTopologySpread => {
                &[Check::PodTopologySpreadLabel, Check::PodTopologySpreadSkew]
            }
            PluginName::InterPodAffinity => &[
                Check::InterPodAffinity,
                Check::InterPodAntiAffinity,
                Check::InterPodExistingAntiAffinity,
            ],
            _ => &[],
        }
    }
}

/// How to evaluate: on the GPU when one is available, on the GPU only, or on the CPU only
/// (the CLI's `--backend auto|gpu|cpu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// A hardware GPU if there is one, else the CPU (with a one-line notice); never a
    /// software adapter (lavapipe), which is slower than the CPU evaluator.
    #[default]
    Auto,
    /// The GPU, a software adapter when there is no hardware; no adapter is an error.
    Gpu,
    /// The CPU; wgpu is never touched.
    Cpu,
}

impl Backend {
    /// The name as the CLI spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Gpu => "gpu",
            Backend::Cpu => "cpu",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A backend name that is not `auto`, `gpu` or `cpu`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown backend {0:?} (expected auto, gpu or cpu)")]
pub struct BackendParseError(pub String);

impl FromStr for Backend {
    type Err = BackendParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(Backend::Auto),
            "gpu" => Ok(Backend::Gpu),
            "cpu" => Ok(Backend::Cpu),
            other => Err(BackendParseError(other.to_string())),
        }
    }
}

/// Why evaluation failed (never because a pod does not fit: that is a cell of the matrix).
#[derive(Debug, Error)]
pub enum EvalError {
    /// A plugin's arguments in the profile are invalid (as `Framework::new` would report).
    #[error("plugin {plugin}: {message}")]
    Args {
        /// The plugin.
        plugin: &'static str,
        /// What was wrong.
        message: String,
    },
    /// The encoding does not belong to the given cluster and pending pods.
    #[error("the encoding does not match the cluster: {0}")]
    Mismatch(String),
    /// More resource columns than the NodeResourcesFit word can name.
    #[error("{count} resource columns; matrix evaluation supports at most {MAX_FIT_COLUMNS}")]
    TooManyResources {
        /// Number of columns.
        count: usize,
    },
    /// The GPU backend failed.
    #[error(transparent)]
    Gpu(#[from] gpu::GpuError),
    /// A per-class list outgrew 32-bit ids.
    #[error(transparent)]
    Encode(#[from] crate::encode::EncodeError),
    /// Weights so large that 32-bit score arithmetic could overflow.
    #[error("{what} too large for 32-bit score arithmetic ({value}; at most {max})")]
    WeightsTooLarge {
        /// Which weights.
        what: String,
        /// The sum of absolute weights.
        value: i64,
        /// The largest allowed sum.
        max: i64,
    },
}

/// One score plugin's planes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScorePlane {
    /// The plugin.
    pub plugin: PluginName,
    /// Its weight in the profile.
    pub weight: i64,
    /// Per class: PreScore returned `Skip` (the plugin contributes nothing to that class).
    pub skipped: Vec<bool>,
    /// Per class: the largest raw score over the feasible nodes (`i32::MIN` when none). For
    /// PodTopologySpread: over the feasible nodes it does not ignore, and at least 0 (upstream
    /// starts its maximum at 0).
    pub row_max: Vec<i32>,
    /// Per class: the smallest raw score over the feasible nodes (`i32::MAX` when none); for
    /// PodTopologySpread over the feasible nodes it does not ignore.
    pub row_min: Vec<i32>,
    /// `C × N` raw scores (every cell, feasible or not).
    pub raw: Vec<i32>,
    /// `C × N` normalized scores (feasible cells of classes not skipped; 0 elsewhere).
    pub normalized: Vec<i32>,
}

/// The result of evaluating a profile over every pod class and node (layout in the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matrix {
    /// Number of classes `C` (rows).
    pub num_classes: usize,
    /// Number of nodes `N` (columns).
    pub num_nodes: usize,
    /// Resource column names (for the NodeResourcesFit reasons).
    pub resource_names: Vec<String>,
    /// The enabled checks, in first-failure order.
    pub check_order: Vec<Check>,
    /// Per class: the PreFilter rejection, if any (then every cell has
    /// [`CHECK_PREFILTER_REJECTED`]).
    pub pre_filter_rejections: Vec<Option<Status>>,
    /// Per class: the scheduler error scoring would end with (a PreScore error, or a
    /// normalized score outside 0–100), if any; the class's totals are then meaningless.
    pub score_errors: Vec<Option<Status>>,
    /// `C × N` filter words.
    pub filter: Vec<u32>,
    /// `C × N` NodeResourcesFit words.
    pub fit_insufficient: Vec<u32>,
    /// The evaluated score plugins, in the profile's score order.
    pub scores: Vec<ScorePlane>,
    /// `C × N` weighted sums of the normalized scores (feasible cells; 0 elsewhere).
    pub total: Vec<i32>,
    /// Per class: number of feasible nodes.
    pub feasible_count: Vec<u32>,
    /// Per class: the best total over the feasible nodes (`i32::MIN` when none).
    pub best_total: Vec<i32>,
    /// Enabled plugins kplace evaluates elsewhere but this matrix does not
    /// ([`NOT_YET_IN_MATRIX`]), each with the first extension point where it is enabled.
    pub not_evaluated: Vec<(PluginName, ExtensionPoint)>,
}

impl Matrix {
    /// The index of cell `(class, node)`.
    pub fn cell(&self, class: usize, node: usize) -> usize {
        class * self.num_nodes + node
    }

    /// Whether the class fits the node (every enabled check passed).
    pub fn feasible(&self, class: usize, node: usize) -> bool {
        self.filter.get(self.cell(class, node)).is_some_and(|w| w & CELL_FEASIBLE != 0)
    }

    /// The first failed check in profile order, if any.
    pub fn first_failure(&self, class: usize, node: usize) -> Option<Check> {
        let w = self.filter.get(self.cell(class, node)).copied().unwrap_or(0);
        let code = (w >> FIRST_FAILURE_SHIFT) & FIRST_FAILURE_MASK;
        code.checked_sub(1).and_then(Check::from_index)
    }

    /// The feasible nodes of a class, ascending.
    pub fn feasible_nodes(&self, class: usize) -> Vec<usize> {
        (0..self.num_nodes).filter(|&n| self.feasible(class, n)).collect()
    }

    /// The score plane of a plugin, if the profile scores with it.
    pub fn plane(&self, plugin: PluginName) -> Option<&ScorePlane> {
        self.scores.iter().find(|p| p.plugin == plugin)
    }

    /// The status the framework runtime gives the cell: success, the first failing filter's
    /// status with upstream's reasons (as `Framework::filter` returns it), or, for a node
    /// PreFilter excluded, the status the scheduler records for nodes it never filtered.
    pub fn filter_status(&self, class: usize, node: usize) -> Status {
        match self.first_failure(class, node) {
            None => Status::success(),
            Some(check) => self.check_status(class, node, check),
        }
    }

    /// The status of one failed check of a cell, with upstream's code and reasons.
    pub fn check_status(&self, class: usize, node: usize, check: Check) -> Status {
        let unresolvable =
            |plugin: &'static str, reason: &str| Status::unresolvable(reason).with_plugin(plugin);
        match check {
            Check::PreFilterRejected => self
                .pre_filter_rejections
                .get(class)
                .cloned()
                .flatten()
                .unwrap_or_else(|| Status::unresolvable("rejected at PreFilter")),
            Check::PreFilterAbsent => Status::unresolvable(format!(
                "node(s) didn't satisfy plugin(s) [{}]",
                NodeAffinity::NAME
            )),
            Check::NodeUnschedulable => {
                unresolvable(NodeUnschedulable::NAME, ERR_REASON_UNSCHEDULABLE)
            }
            Check::NodeName => unresolvable(NodeName::NAME, NODE_NAME_REASON),
            Check::TaintToleration => unresolvable(TaintToleration::NAME, ERR_REASON_UNTOLERATED),
            Check::NodeAffinityEnforced => unresolvable(NodeAffinity::NAME, ERR_REASON_ENFORCED),
            Check::NodeAffinityPod => unresolvable(NodeAffinity::NAME, ERR_REASON_POD),
            Check::NodePorts => {
                Status::unschedulable(NODE_PORTS_REASON).with_plugin(NodePorts::NAME)
            }
            Check::NodeResourcesFit => {
                let word = self.fit_insufficient.get(self.cell(class, node)).copied().unwrap_or(0);
                self.fit_status(word)
            }
            Check::PodTopologySpreadLabel => {
                unresolvable(pts::NAME, pts::ERR_REASON_NODE_LABEL_NOT_MATCH)
            }
            Check::PodTopologySpreadSkew => {
                Status::unschedulable(pts::ERR_REASON_CONSTRAINTS_NOT_MATCH).with_plugin(pts::NAME)
            }
            Check::InterPodAffinity => {
                unresolvable(ipa::NAME, ipa::ERR_REASON_AFFINITY_RULES_NOT_MATCH)
            }
            Check::InterPodAntiAffinity => {
                Status::unschedulable(ipa::ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
                    .with_plugin(ipa::NAME)
            }
            Check::InterPodExistingAntiAffinity => {
                Status::unschedulable(ipa::ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
                    .with_plugin(ipa::NAME)
            }
        }
    }

    /// The NodeResourcesFit status of a word: one reason per set column, pods first, then the
    /// columns in order (upstream's order: pods, cpu, memory, ephemeral-storage, scalars by name).
    pub fn fit_status(&self, word: u32) -> Status {
        let pods = crate::encode::dict::RESOURCE_PODS;
        let mut reasons = Vec::new();
        if word & (1 << pods) != 0 {
            reasons.push(ERR_REASON_TOO_MANY_PODS.to_string());
        }
        for (j, name) in self.resource_names.iter().enumerate().take(MAX_FIT_COLUMNS) {
            if j != pods && word & (1 << j) != 0 {
                reasons.push(insufficient_reason(name));
            }
        }
        let code = if word & FIT_UNRESOLVABLE != 0 {
            Code::UnschedulableAndUnresolvable
        } else {
            Code::Unschedulable
        };
        Status::new(code, reasons).with_plugin(Fit::NAME)
    }

    /// The first cell where two matrices differ, described, for test failures; `None` when
    /// they are equal.
    pub fn first_difference(&self, other: &Matrix) -> Option<String> {
        if self == other {
            return None;
        }
        let shape = |m: &Matrix| (m.num_classes, m.num_nodes, m.scores.len());
        if shape(self) != shape(other) {
            return Some(format!("shapes differ: {:?} vs {:?}", shape(self), shape(other)));
        }
        let cells = |name: &str, a: &[u32], b: &[u32]| {
            a.iter().zip(b).position(|(x, y)| x != y).map(|i| {
                let (c, n) = (i / self.num_nodes.max(1), i % self.num_nodes.max(1));
                format!("{name} at class {c}, node {n}: {:#x} vs {:#x}", a[i], b[i])
            })
        };
        let signed = |v: &[i32]| v.iter().map(|&x| x as u32).collect::<Vec<_>>();
        if let Some(d) = cells("filter", &self.filter, &other.filter) {
            return Some(d);
        }
        if let Some(d) = cells("fit_insufficient", &self.fit_insufficient, &other.fit_insufficient)
        {
            return Some(d);
        }
        for (a, b) in self.scores.iter().zip(&other.scores) {
            let name = a.plugin.as_str();
            if let Some(d) = cells(&format!("{name} raw"), &signed(&a.raw), &signed(&b.raw)) {
                return Some(d);
            }
            if let Some(d) =
                cells(&format!("{name} normalized"), &signed(&a.normalized), &signed(&b.normalized))
            {
                return Some(d);
            }
            if a.row_max != b.row_max {
                return Some(format!("{name} row maxima: {:?} vs {:?}", a.row_max, b.row_max));
            }
            if a.row_min != b.row_min {
                return Some(format!("{name} row minima: {:?} vs {:?}", a.row_min, b.row_min));
            }
        }
        if let Some(d) = cells("total", &signed(&self.total), &signed(&other.total)) {
            return Some(d);
        }
        Some("per-class results differ (counts, best totals, statuses or plugin lists)".into())
    }
}

/// A chosen evaluator: the CPU, or a GPU context that lives as long as it does.
#[derive(Debug)]
pub enum Evaluator {
    /// The CPU matrix evaluator, on every core ([`cpu::evaluate_parallel`] on rayon's global
    /// pool; `RAYON_NUM_THREADS=1` forces one thread). The matrix is the same on any number of
    /// threads.
    Cpu,
    /// The GPU evaluator.
    Gpu(Box<gpu::GpuContext>),
}

/// The evaluator [`Evaluator::select`] chose, and the one-line notice to show when `auto` fell
/// back to the CPU.
#[derive(Debug)]
pub struct Selected {
    /// The evaluator.
    pub evaluator: Evaluator,
    /// Set when `auto` found no usable GPU (e.g. "no GPU adapter found; evaluating on the CPU").
    pub notice: Option<String>,
}

impl Evaluator {
    /// Chooses an evaluator for `--backend`: `cpu` never touches wgpu; `gpu` takes any adapter
    /// (lavapipe included) and fails without one; `auto` uses a hardware GPU when it can and
    /// falls back to the CPU with a notice.
    pub fn select(backend: Backend) -> Result<Selected, EvalError> {
        match backend {
            Backend::Cpu => Ok(Selected { evaluator: Evaluator::Cpu, notice: None }),
            Backend::Gpu => {
                let ctx = gpu::GpuContext::new(&gpu::GpuOptions::default())?;
                Ok(Selected { evaluator: Evaluator::Gpu(Box::new(ctx)), notice: None })
            }
            Backend::Auto => match gpu::GpuContext::new_hardware(&gpu::GpuOptions::default()) {
                Ok(ctx) => Ok(Selected { evaluator: Evaluator::Gpu(Box::new(ctx)), notice: None }),
                Err(e) => Ok(Selected {
                    evaluator: Evaluator::Cpu,
                    notice: Some(format!("{e}; evaluating on the CPU")),
                }),
            },
        }
    }

    /// A short description: `cpu`, or `gpu (<adapter>, <backend>)`.
    pub fn describe(&self) -> String {
        match self {
            Evaluator::Cpu => "cpu".to_string(),
            Evaluator::Gpu(ctx) => {
                format!("gpu ({}, binary64 {})", ctx.adapter_description(), ctx.binary64().name())
            }
        }
    }

    /// Evaluates `profile` over every class of `enc` and every node of `state`.
    pub fn evaluate(
        &mut self,
        profile: &Profile,
        state: &ClusterState,
        pending: &[Pod],
        enc: &Encoded,
    ) -> Result<Matrix, EvalError> {
        let prepared = Prepared::new(profile, state, pending, enc)?;
        self.evaluate_prepared(&prepared)
    }

    /// Evaluates a prepared profile (see [`Prepared::new`]).
    pub fn evaluate_prepared(&mut self, prepared: &Prepared<'_>) -> Result<Matrix, EvalError> {
        match self {
            Evaluator::Cpu => Ok(cpu::evaluate_parallel(prepared, 0)),
            Evaluator::Gpu(ctx) => Ok(ctx.evaluate(prepared)?),
        }
    }

    /// Evaluates a prepared profile into the lean form the batch planner reads, keeping the
    /// normalized planes of `keep`'s plugins: on the CPU without ever building the full matrix
    /// ([`cpu::evaluate_lean`]); on the GPU reading back only the planes the lean form holds
    /// ([`gpu::GpuContext::evaluate_lean`]).
    pub fn evaluate_lean(
        &mut self,
        prepared: &Prepared<'_>,
        keep: &[PluginName],
    ) -> Result<LeanMatrix, EvalError> {
        let mut out = LeanMatrix::default();
        self.evaluate_lean_into(prepared, keep, &mut out)?;
        Ok(out)
    }

    /// [`Evaluator::evaluate_lean`] into `out`: on the CPU reusing its arrays
    /// ([`cpu::evaluate_lean_into`]); on the GPU replacing them. `out` is left as it was on an
    /// error.
    pub fn evaluate_lean_into(
        &mut self,
        prepared: &Prepared<'_>,
        keep: &[PluginName],
        out: &mut LeanMatrix,
    ) -> Result<(), EvalError> {
        match self {
            Evaluator::Cpu => cpu::evaluate_lean_into(prepared, keep, 0, out),
            Evaluator::Gpu(ctx) => *out = ctx.evaluate_lean(prepared, keep)?,
        }
        Ok(())
    }

    /// The incremental entry point ([`columns`]): the usage-dependent cells of the nodes of
    /// `usage`, after their usage changed, for every class of `prepared`. On the GPU backend,
    /// updates smaller than [`columns::GPU_MIN_UPDATE_CELLS`] cells run on the CPU twin (a
    /// dispatch costs more than the work; the results are the same bit for bit).
    pub fn resource_columns(
        &mut self,
        prepared: &Prepared<'_>,
        usage: &columns::NodeUsage,
    ) -> Result<columns::ResourceColumns, EvalError> {
        usage.validate(prepared)?;
        match self {
            Evaluator::Gpu(ctx)
                if prepared.num_classes * usage.nodes.len() >= columns::GPU_MIN_UPDATE_CELLS =>
            {
                Ok(ctx.resource_columns(prepared, usage)?)
            }
            _ => columns::evaluate_cpu(prepared, usage),
        }
    }
}

/// Evaluates `profile` on the CPU over every class of `enc` and every node of `state`.
pub fn evaluate_cpu(
    profile: &Profile,
    state: &ClusterState,
    pending: &[Pod],
    enc: &Encoded,
) -> Result<Matrix, EvalError> {
    let prepared = Prepared::new(profile, state, pending, enc)?;
    Ok(cpu::evaluate(&prepared))
}

/// One `Vec` per score plane, indexed by [`ScorePlugin::index`].
pub(crate) type Planes<T> = [Vec<T>; NUM_SCORE_PLANES];

/// The cell results both evaluators produce, before they become a [`Matrix`] (score planes
/// indexed by [`ScorePlugin::index`]).
#[derive(Debug, Clone)]
pub(crate) struct RawResults {
    pub filter: Vec<u32>,
    pub fit_insufficient: Vec<u32>,
    pub raw: Planes<i32>,
    pub normalized: Planes<i32>,
    pub total: Vec<i32>,
    pub row_max: Planes<i32>,
    pub row_min: Planes<i32>,
    pub feasible_count: Vec<u32>,
    pub best_total: Vec<i32>,
    /// Per class and plane, the first normalized score outside 0–100 of a feasible cell, when
    /// the evaluator found them (the CPU's row evaluator); `None`: [`RawResults::into_matrix`]
    /// scans the planes.
    pub out_of_range: Option<Vec<[Option<i32>; NUM_SCORE_PLANES]>>,
}

impl RawResults {
    /// Zeroed cells; maxima at `i32::MIN` (PodTopologySpread's at 0, where upstream starts
    /// its maximum), minima at `i32::MAX`.
    pub fn new(classes: usize, cells: usize) -> Self {
        Self::with_raw(classes, cells, cells)
    }

    /// As [`RawResults::new`] without the raw planes and NodeResourcesFit's reason words (empty):
    /// for an evaluator that never fills them (the GPU's lean readback).
    pub fn without_raw(classes: usize, cells: usize) -> Self {
        Self::with_raw(classes, cells, 0)
    }

    fn with_raw(classes: usize, cells: usize, raw_cells: usize) -> Self {
        let pts = ScorePlugin::PodTopologySpread.index();
        RawResults {
            filter: vec![0; cells],
            fit_insufficient: vec![0; raw_cells],
            raw: std::array::from_fn(|_| vec![0; raw_cells]),
            normalized: std::array::from_fn(|_| vec![0; cells]),
            total: vec![0; cells],
            row_max: std::array::from_fn(|k| vec![if k == pts { 0 } else { i32::MIN }; classes]),
            row_min: std::array::from_fn(|_| vec![i32::MAX; classes]),
            feasible_count: vec![0; classes],
            best_total: vec![i32::MIN; classes],
            out_of_range: None,
        }
    }

    /// The matrix: the planes of the plugins the profile scores with, per-class statuses.
    pub fn into_matrix(mut self, p: &Prepared<'_>) -> Matrix {
        let scores: Vec<ScorePlane> = p
            .scores
            .iter()
            .map(|&(plugin, weight)| {
                let k = plugin.index();
                let skipped =
                    (0..p.num_classes).map(|c| p.class_score_skip[c] & plugin.bit() != 0).collect();
                ScorePlane {
                    plugin: plugin.plugin(),
                    weight,
                    skipped,
                    row_max: std::mem::take(&mut self.row_max[k]),
                    row_min: std::mem::take(&mut self.row_min[k]),
                    raw: std::mem::take(&mut self.raw[k]),
                    normalized: std::mem::take(&mut self.normalized[k]),
                }
            })
            .collect();
        let mut m = Matrix {
            num_classes: p.num_classes,
            num_nodes: p.num_nodes,
            resource_names: p.resource_names.clone(),
            check_order: p.check_order.clone(),
            pre_filter_rejections: p.pre_filter_rejections.clone(),
            score_errors: Vec::new(),
            filter: self.filter,
            fit_insufficient: self.fit_insufficient,
            scores,
            total: self.total,
            feasible_count: self.feasible_count,
            best_total: self.best_total,
            not_evaluated: p.not_evaluated.clone(),
        };
        let found = self.out_of_range.as_deref();
        m.score_errors = (0..p.num_classes)
            .map(|c| score_error(p, &m, c, found.and_then(|f| f.get(c))))
            .collect();
        m
    }
}

/// The error `Framework::score` ends with for a class, if any: NodeAffinity's PreScore error,
/// or the first normalized score outside 0–100, in the profile's score order.
/// `found`: the first out-of-range score per plane, when the evaluator recorded them (else the
/// planes are scanned).
fn score_error(
    p: &Prepared<'_>,
    m: &Matrix,
    c: usize,
    found: Option<&[Option<i32>; NUM_SCORE_PLANES]>,
) -> Option<Status> {
    let planes = m.scores.iter().map(|s| (s.plugin, s.skipped.get(c).copied().unwrap_or(false)));
    score_error_of(p, c, planes, |i, plugin| {
        if let Some(found) = found {
            return ScorePlugin::of(plugin).and_then(|k| found[k.index()]);
        }
        let plane = &m.scores[i];
        (0..m.num_nodes).map(|n| m.cell(c, n)).find_map(|cell| {
            let v = plane.normalized[cell];
            let bad = !(MIN_NODE_SCORE..=MAX_NODE_SCORE).contains(&i64::from(v));
            (m.filter[cell] & CELL_FEASIBLE != 0 && bad).then_some(v)
        })
    })
}

/// [`score_error`] over the planes `(plugin, skipped for the class)` in score order;
/// `first_bad(plane position, plugin)`: the plane's first normalized score outside 0–100 on a
/// feasible node of the class.
pub(crate) fn score_error_of(
    p: &Prepared<'_>,
    c: usize,
    planes: impl Iterator<Item = (PluginName, bool)>,
    mut first_bad: impl FnMut(usize, PluginName) -> Option<i32>,
) -> Option<Status> {
    for (i, (plugin, skipped)) in planes.enumerate() {
        if plugin == PluginName::NodeAffinity
            && let Some(e) = p.pre_score_errors.get(c).cloned().flatten()
        {
            return Some(e);
        }
        if skipped {
            continue;
        }
        if let Some(v) = first_bad(i, plugin) {
            return Some(Status::error(format!(
                "plugin {:?} returns an invalid score {v}, it should in the range of \
                 [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
                plugin.as_str()
            )));
        }
    }
    None
}

#[cfg(test)]
mod tests;
