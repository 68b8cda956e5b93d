//! What both matrix evaluators read besides the encoded arrays: the profile turned into check
//! and score plans, the per-class PreFilter/PreScore outcomes (computed once per class by the
//! plugins themselves, on the representative pod), and the per-node verdicts of the profile's
//! `addedAffinity` (the same for every class).
//!
//! Input: a [`Profile`], the [`ClusterState`], the pending pods and their [`Encoded`] form.
//! Output: [`Prepared`]. Upstream counterpart (v1.35): `RunPreFilterPlugins` /
//! `RunPreScorePlugins` in `pkg/scheduler/framework/runtime/framework.go`, and the plugins'
//! `New` argument validation. Everything here is O(classes + nodes + resources); the
//! classes × nodes work is in [`super::cpu`] and [`super::gpu`].

use std::collections::BTreeMap;

use crate::encode::EncodeError;
use crate::encode::Encoded;
use crate::encode::dict::{RESOURCE_CPU, RESOURCE_MEMORY, RESOURCE_PODS};
use crate::encode::tensors::{Csr, NONE};
use crate::framework::args::ScoringStrategyType;
use crate::framework::profile::{ExtensionPoint, PluginName, Profile};
use crate::framework::{Code, Status};
use crate::model::{ClusterState, Pod};
use crate::plugins::image_locality::normalized_image_name;
use crate::plugins::node_affinity::NodeAffinity;
use crate::plugins::noderesources::requested_to_capacity_ratio::scale_shape;
use crate::plugins::noderesources::resource_allocation::{
    is_extended_resource_name, is_scalar_resource_name,
};
use crate::plugins::noderesources::{BalancedAllocation, Fit};
use crate::plugins::volume_binding::claims_rejection;
use crate::resources::{CPU, EPHEMERAL_STORAGE, MEMORY, PODS};

use super::topology::{self, IPA_SCORE, PTS_SCORE, Topology};
use super::{Check, EvalError, MAX_FIT_COLUMNS, NOT_YET_IN_MATRIX};

/// Class flag: PreFilter rejected the class on every node.
pub const CLASS_REJECTED: u32 = 1 << 0;
/// Class flag: PreFilter restricted the class to the nodes of its restriction list.
pub const CLASS_RESTRICTED: u32 = 1 << 1;
/// Class flag: NodeAffinity's PreScore skips the class (no preferred terms anywhere); the same
/// as bit [`ScorePlugin::NodeAffinity`] of [`Prepared::class_score_skip`].
pub const CLASS_NODE_AFFINITY_SCORE_SKIP: u32 = 1 << 2;
/// Class flag: the class names a node (`spec.nodeName`, non-empty).
pub const CLASS_HAS_NODE_NAME: u32 = 1 << 3;
/// Class flag: the class requests no cpu, memory, ephemeral storage or scalar resource, so
/// NodeResourcesFit checks only the pod count.
pub const CLASS_FIT_REQUESTS_NOTHING: u32 = 1 << 4;

/// Node flag: the profile's `addedAffinity` required terms do not match the node.
pub const NODE_ADDED_AFFINITY_FAILS: u32 = 1 << 0;

/// Resource column flag: NodeResourcesFit's filter checks the column (cpu, memory,
/// ephemeral-storage, and scalar resources that are not ignored; never `pods`, which is
/// checked as a pod count).
pub const FIT_COLUMN_CHECKED: u32 = 1 << 0;

/// Fit score kind: CPU or memory, scored with the non-zero requests.
pub const FIT_KIND_NON_ZERO: u32 = 0;
/// Fit score kind: ephemeral storage, scored with the real requests.
pub const FIT_KIND_REQUESTED: u32 = 1;
/// Fit score kind: a scalar resource, left out for a class that does not request it.
pub const FIT_KIND_SCALAR: u32 = 2;
/// Fit score kind: another name: the pod's request counts as 0 (upstream
/// `calculatePodResourceRequest`), the node's amounts as they are.
pub const FIT_KIND_OTHER: u32 = 3;

/// Fit scoring strategy code: LeastAllocated.
pub const STRATEGY_LEAST_ALLOCATED: u32 = 0;
/// Fit scoring strategy code: MostAllocated.
pub const STRATEGY_MOST_ALLOCATED: u32 = 1;
/// Fit scoring strategy code: RequestedToCapacityRatio.
pub const STRATEGY_REQUESTED_TO_CAPACITY_RATIO: u32 = 2;

/// The largest sum of absolute weights whose scores (≤ 100 each) fit `i32`.
pub const MAX_WEIGHT_SUM: i64 = i32::MAX as i64 / 100;

/// The number of score planes (one per [`ScorePlugin`]).
pub const NUM_SCORE_PLANES: usize = 7;

/// A score plugin the matrix evaluates; its discriminant is its plane index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ScorePlugin {
    /// TaintToleration: untolerated `PreferNoSchedule` taints, reversed default normalization.
    TaintToleration,
    /// NodeAffinity: weights of matching preferred terms, default normalization.
    NodeAffinity,
    /// NodeResourcesFit: the scoring strategy, no normalization.
    NodeResourcesFit,
    /// NodeResourcesBalancedAllocation: one minus the standard deviation of the utilizations
    /// (binary64), no normalization.
    BalancedAllocation,
    /// ImageLocality: sizes of the class's images on the node, scaled by their spread
    /// (binary64), no normalization.
    ImageLocality,
    /// PodTopologySpread: matching pods around the node weighted by `ln(domains + 2)`
    /// (binary64, rounded), reversed normalization over the nodes not ignored.
    PodTopologySpread,
    /// InterPodAffinity: summed weights of the node's topology domains, min/max normalization
    /// (binary64).
    InterPodAffinity,
}

impl ScorePlugin {
    /// Every score plugin, by plane index (the GPU's plane order).
    pub const ALL: [ScorePlugin; NUM_SCORE_PLANES] = [
        ScorePlugin::TaintToleration,
        ScorePlugin::NodeAffinity,
        ScorePlugin::NodeResourcesFit,
        ScorePlugin::BalancedAllocation,
        ScorePlugin::ImageLocality,
        ScorePlugin::PodTopologySpread,
        ScorePlugin::InterPodAffinity,
    ];

    /// The plugin's plane index.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The profile plugin.
    pub fn plugin(self) -> PluginName {
        match self {
            ScorePlugin::TaintToleration => PluginName::TaintToleration,
            ScorePlugin::NodeAffinity => PluginName::NodeAffinity,
            ScorePlugin::NodeResourcesFit => PluginName::NodeResourcesFit,
            ScorePlugin::BalancedAllocation => PluginName::NodeResourcesBalancedAllocation,
            ScorePlugin::ImageLocality => PluginName::ImageLocality,
            ScorePlugin::PodTopologySpread => PluginName::PodTopologySpread,
            ScorePlugin::InterPodAffinity => PluginName::InterPodAffinity,
        }
    }

    /// The plugin's bit in [`Prepared::class_score_skip`] and `EvalParams::score_mask`.
    pub fn bit(self) -> u32 {
        1 << self.index()
    }

    /// The matrix score plugin of a profile plugin.
    pub fn of(plugin: PluginName) -> Option<ScorePlugin> {
        ScorePlugin::ALL.into_iter().find(|s| s.plugin() == plugin)
    }
}

/// One resource NodeResourcesFit scores (`scoringStrategy.resources`), resolved to a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FitSpec {
    /// Resource column, or `NONE` when the resource never counts (no column, or `pods`).
    pub column: u32,
    /// [`FIT_KIND_NON_ZERO`] …
    pub kind: u32,
    /// Weight (1–100, validated).
    pub weight: i32,
}

/// One image name on a node, for ImageLocality.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeImage {
    /// The image name's id in [`Prepared::image_names`].
    pub image: u32,
    /// `sizeBytes` of the last `status.images` entry of the node listing the name.
    pub size: i64,
    /// The number of nodes of the cluster listing the name.
    pub num_nodes: u32,
}

/// Everything besides the encoded arrays that both evaluators read.
#[derive(Debug, Clone)]
pub struct Prepared<'a> {
    /// The encoding.
    pub enc: &'a Encoded,
    /// Number of nodes.
    pub num_nodes: usize,
    /// Number of classes.
    pub num_classes: usize,
    /// Resource column names.
    pub resource_names: Vec<String>,
    /// The enabled checks in first-failure order.
    pub check_order: Vec<Check>,
    /// OR of the enabled checks' bits.
    pub enabled_checks: u32,
    /// Evaluated score plugins with their weights, in the profile's score order.
    pub scores: Vec<(ScorePlugin, i64)>,
    /// Per resource column: [`FIT_COLUMN_CHECKED`].
    pub fit_columns: Vec<u32>,
    /// [`STRATEGY_LEAST_ALLOCATED`] …
    pub fit_strategy: u32,
    /// The scored resources.
    pub fit_specs: Vec<FitSpec>,
    /// RequestedToCapacityRatio's scaled shape, `(utilization, score)`.
    pub shape: Vec<(i32, i32)>,
    /// NodeResourcesBalancedAllocation's resources (weights unused: always 1), resolved like
    /// [`Prepared::fit_specs`] with the real requests (`FIT_KIND_REQUESTED` for cpu and memory).
    pub balanced_specs: Vec<FitSpec>,
    /// Per class: `CLASS_*` flags of this module.
    pub class_flags: Vec<u32>,
    /// Per class: node index of `spec.nodeName` (`NONE`: unknown node or none).
    pub class_node_name: Vec<u32>,
    /// Per class: the node indices PreFilter restricted it to, ascending (with
    /// [`CLASS_RESTRICTED`]).
    pub class_restrict: Csr,
    /// Per class: the PreFilter rejection.
    pub pre_filter_rejections: Vec<Option<Status>>,
    /// Per class: NodeAffinity's PreScore error.
    pub pre_score_errors: Vec<Option<Status>>,
    /// Per class: bit [`ScorePlugin::bit`] set when that plugin's PreScore returns `Skip` for
    /// the class (it then contributes nothing to the class's scores).
    pub class_score_skip: Vec<u32>,
    /// Per node: [`NODE_ADDED_AFFINITY_FAILS`].
    pub node_flags: Vec<u32>,
    /// Per node: the weights of `addedAffinity`'s matching preferred terms.
    pub node_added_score: Vec<i32>,
    /// ImageLocality: every image name some node lists, sorted (ids are positions).
    pub image_names: Vec<String>,
    /// ImageLocality, per class: the image id of each container (init and app, duplicates
    /// kept, names normalized as upstream), `NONE` for an image no node lists; the row length
    /// is the number of containers.
    pub class_images: Csr,
    /// ImageLocality: every node's images, ascending by id, node after node.
    pub node_images: Vec<NodeImage>,
    /// ImageLocality, per node: `(start, count)` of its images in [`Prepared::node_images`].
    pub node_image_ranges: Vec<(u32, u32)>,
    /// PodTopologySpread's (and InterPodAffinity's) per-domain count tables.
    pub topology: Topology,
    /// Enabled plugins the matrix does not evaluate.
    pub not_evaluated: Vec<(PluginName, ExtensionPoint)>,
}

fn args_error(plugin: &'static str, e: impl std::fmt::Display) -> EvalError {
    EvalError::Args { plugin, message: e.to_string() }
}

fn weight_sum_check(what: impl Into<String>, sum: i64) -> Result<(), EvalError> {
    if sum > MAX_WEIGHT_SUM {
        return Err(EvalError::WeightsTooLarge {
            what: what.into(),
            value: sum,
            max: MAX_WEIGHT_SUM,
        });
    }
    Ok(())
}

impl<'a> Prepared<'a> {
    /// Prepares `profile` for `enc`, which must encode `state` and `pending`.
    pub fn new(
        profile: &Profile,
        state: &ClusterState,
        pending: &[Pod],
        enc: &'a Encoded,
    ) -> Result<Prepared<'a>, EvalError> {
        let num_nodes = state.nodes.len();
        let num_classes = enc.classes.len();
        if enc.tensors.node_allocatable.nrows() != num_nodes {
            return Err(EvalError::Mismatch(format!(
                "{} encoded nodes, {num_nodes} in the cluster",
                enc.tensors.node_allocatable.nrows()
            )));
        }
        if let Some(c) = enc.classes.classes.iter().find(|c| c.representative >= pending.len()) {
            return Err(EvalError::Mismatch(format!(
                "class representative {} of {} pending pods",
                c.representative,
                pending.len()
            )));
        }
        let resource_names: Vec<String> = enc.dicts.resources.names().map(str::to_string).collect();
        if resource_names.len() > MAX_FIT_COLUMNS {
            return Err(EvalError::TooManyResources { count: resource_names.len() });
        }

        let args = &profile.args;
        let node_affinity = NodeAffinity::new(&args.node_affinity)
            .map_err(|e| args_error(NodeAffinity::NAME, e))?;
        Fit::new(&args.node_resources_fit).map_err(|e| args_error(Fit::NAME, e))?;
        let balanced = BalancedAllocation::new(&args.balanced_allocation)
            .map_err(|e| args_error(BalancedAllocation::NAME, e))?;

        // Checks, in the order the framework reports them: PreFilter first, then the filters.
        let na_pre_filter = profile.plugins.pre_filter.contains(&PluginName::NodeAffinity)
            || profile.plugins.filter.contains(&PluginName::NodeAffinity);
        // VolumeRestrictions' and VolumeBinding's PreFilters reject classes whose claims fail.
        let claims_pre_filter = profile
            .plugins
            .pre_filter
            .iter()
            .any(|p| matches!(p, PluginName::VolumeBinding | PluginName::VolumeRestrictions));
        let mut check_order = Vec::new();
        if na_pre_filter || claims_pre_filter {
            check_order.push(Check::PreFilterRejected);
        }
        if na_pre_filter {
            check_order.push(Check::PreFilterAbsent);
        }
        for &p in &profile.plugins.filter {
            for &c in Check::of_plugin(p) {
                if !check_order.contains(&c) {
                    check_order.push(c);
                }
            }
        }
        let enabled_checks = check_order.iter().fold(0, |m, c| m | c.bit());

        // Scores.
        let mut scores: Vec<(ScorePlugin, i64)> = Vec::new();
        for &(p, w) in &profile.plugins.score {
            if let Some(s) = ScorePlugin::of(p)
                && !scores.iter().any(|(q, _)| *q == s)
            {
                scores.push((s, w));
            }
        }
        weight_sum_check("score plugin weights", scores.iter().map(|(_, w)| w.abs()).sum())?;

        let not_evaluated = not_evaluated(profile);

        // NodeResourcesFit.
        let fit_args = &args.node_resources_fit;
        let fit_columns = resource_names
            .iter()
            .map(|name| {
                let checked = match name.as_str() {
                    CPU | MEMORY | EPHEMERAL_STORAGE => true,
                    PODS => false,
                    n if !is_scalar_resource_name(n) => false,
                    n if is_extended_resource_name(n) => {
                        let group = n.split('/').next().unwrap_or_default();
                        !fit_args.ignored_resources.iter().any(|r| r == n)
                            && !fit_args.ignored_resource_groups.iter().any(|g| g == group)
                    }
                    _ => true,
                };
                if checked { FIT_COLUMN_CHECKED } else { 0 }
            })
            .collect();
        let strategy = &fit_args.scoring_strategy;
        let fit_strategy = match strategy.kind {
            ScoringStrategyType::LeastAllocated => STRATEGY_LEAST_ALLOCATED,
            ScoringStrategyType::MostAllocated => STRATEGY_MOST_ALLOCATED,
            ScoringStrategyType::RequestedToCapacityRatio => STRATEGY_REQUESTED_TO_CAPACITY_RATIO,
        };
        let fit_specs = strategy
            .resources
            .iter()
            .map(|r| resolve_spec(enc, &r.name, r.weight, false))
            .collect();
        let balanced_specs = args
            .balanced_allocation
            .resources
            .iter()
            .map(|r| resolve_spec(enc, &r.name, r.weight, true))
            .collect();
        let shape = scale_shape(&strategy.shape)
            .iter()
            .map(|p| {
                (i32::try_from(p.utilization).unwrap_or(0), i32::try_from(p.score).unwrap_or(0))
            })
            .collect();
        debug_assert_eq!(RESOURCE_CPU, 0);
        debug_assert_eq!(RESOURCE_MEMORY, 1);
        debug_assert_eq!(RESOURCE_PODS, 3);

        // addedAffinity, per node.
        let added = args.node_affinity.added_affinity.as_ref();
        let mut node_flags = vec![0u32; num_nodes];
        let mut node_added_score = vec![0i32; num_nodes];
        let added_preferred = added.map(|a| a.preferred.as_slice()).unwrap_or_default();
        weight_sum_check(
            "addedAffinity preferred weights",
            added_preferred.iter().map(|t| i64::from(t.weight).abs()).sum(),
        )?;
        for (i, node) in state.nodes.iter().enumerate() {
            if let Some(required) = added.and_then(|a| a.required.as_ref())
                && !required.matches(&node.name, &node.labels)
            {
                node_flags[i] |= NODE_ADDED_AFFINITY_FAILS;
            }
            // Terms with weight 0 add nothing and empty or invalid terms never match, so
            // summing every matching term equals upstream's sum over the counted ones.
            node_added_score[i] = added_preferred
                .iter()
                .filter(|t| t.preference.matches(&node.name, &node.labels))
                .map(|t| t.weight)
                .fold(0i32, i32::wrapping_add);
        }

        // ImageLocality: the node side (independent of the classes).
        let (image_names, node_images, node_image_ranges) = node_image_table(state)?;
        let mut class_images = Csr::default();

        // Per class: PreFilter and PreScore of NodeAffinity on the representative pod.
        let na_scores = scores.iter().any(|(s, _)| *s == ScorePlugin::NodeAffinity);
        let mut class_score_skip = vec![0u32; num_classes];
        let mut class_flags = vec![0u32; num_classes];
        let mut class_node_name = vec![NONE; num_classes];
        let mut class_restrict = Csr::default();
        let mut pre_filter_rejections = vec![None; num_classes];
        let mut pre_score_errors = vec![None; num_classes];
        for (ci, class) in enc.classes.classes.iter().enumerate() {
            let sig = &class.signature;
            let Some(pod) = pending.get(class.representative) else {
                return Err(EvalError::Mismatch(format!("class {ci} has no representative")));
            };
            let mut flags = 0;
            let mut restrict: Vec<u32> = Vec::new();
            if na_pre_filter {
                match node_affinity.pre_filter(pod, state) {
                    Ok(s) => {
                        if let Some(names) = s.node_names {
                            flags |= CLASS_RESTRICTED;
                            restrict = names
                                .iter()
                                .filter_map(|n| state.node_index(n))
                                .map(|i| i as u32)
                                .collect();
                            restrict.sort_unstable();
                        }
                    }
                    Err(status) if status.code == Code::Skip => {}
                    Err(status) => {
                        flags |= CLASS_REJECTED;
                        pre_filter_rejections[ci] = Some(status.with_plugin(NodeAffinity::NAME));
                    }
                }
            }
            // The claim checks run after NodeAffinity's PreFilter (the default order; both
            // reject as `UnschedulableAndUnresolvable`, which ends PreFilter at once).
            if flags & CLASS_REJECTED == 0
                && let Some(status) = claims_rejection(&profile.plugins.pre_filter, pod, state)
            {
                flags |= CLASS_REJECTED;
                pre_filter_rejections[ci] = Some(status);
            }
            class_restrict.push_row("restricted nodes", restrict)?;
            if na_scores {
                match node_affinity.pre_score(pod, state, &[]) {
                    Ok(_) => {}
                    Err(status) if status.code == Code::Skip => {
                        flags |= CLASS_NODE_AFFINITY_SCORE_SKIP;
                        class_score_skip[ci] |= ScorePlugin::NodeAffinity.bit();
                    }
                    Err(status) => {
                        pre_score_errors[ci] = Some(status.with_plugin(NodeAffinity::NAME));
                    }
                }
            }
            weight_sum_check(
                format!("preferred node affinity weights of pod {}", pod.key()),
                sig.preferred_node_affinity.iter().map(|(w, _)| i64::from(*w).abs()).sum::<i64>()
                    + added_preferred.iter().map(|t| i64::from(t.weight).abs()).sum::<i64>(),
            )?;
            if sig.node_name.as_deref().is_some_and(|n| !n.is_empty()) {
                flags |= CLASS_HAS_NODE_NAME;
                class_node_name[ci] = enc.tensors.class_node_name.get(ci).copied().unwrap_or(NONE);
            }
            let r = &sig.requests;
            let requests_scalar =
                r.scalar.iter().any(|(name, v)| *v != 0 && is_scalar_resource_name(name));
            if r.milli_cpu == 0 && r.memory == 0 && r.ephemeral_storage == 0 && !requests_scalar {
                flags |= CLASS_FIT_REQUESTS_NOTHING;
            }
            class_flags[ci] = flags;
            class_images.push_row(
                "container images",
                pod.images.iter().map(|name| {
                    let name = normalized_image_name(name);
                    image_names.binary_search(&name).map_or(NONE, |i| i as u32)
                }),
            )?;
            // BalancedAllocation skips best-effort pods (it never fails).
            if balanced.pre_score(pod, state, &[]).is_err() {
                class_score_skip[ci] |= ScorePlugin::BalancedAllocation.bit();
            }
        }

        let reps: Vec<&Pod> =
            enc.classes.classes.iter().filter_map(|c| pending.get(c.representative)).collect();
        let topology = topology::prepare(profile, state, &reps)?;
        for (ci, class) in topology.classes.iter().enumerate() {
            if class.pts_flags & PTS_SCORE == 0 {
                class_score_skip[ci] |= ScorePlugin::PodTopologySpread.bit();
            }
            if class.ipa_flags & IPA_SCORE == 0 {
                class_score_skip[ci] |= ScorePlugin::InterPodAffinity.bit();
            }
        }

        Ok(Prepared {
            enc,
            num_nodes,
            num_classes,
            resource_names,
            check_order,
            enabled_checks,
            scores,
            fit_columns,
            fit_strategy,
            fit_specs,
            shape,
            balanced_specs,
            class_flags,
            class_node_name,
            class_restrict,
            pre_filter_rejections,
            pre_score_errors,
            class_score_skip,
            node_flags,
            node_added_score,
            image_names,
            class_images,
            node_images,
            node_image_ranges,
            topology,
            not_evaluated,
        })
    }

    /// The weight of a score plugin in the profile, or `None` when it does not score.
    pub fn weight(&self, plugin: ScorePlugin) -> Option<i64> {
        self.scores.iter().find(|(p, _)| *p == plugin).map(|(_, w)| *w)
    }
}

/// ImageLocality's node side (upstream `createImageExistenceMap` and `getNodeImageStates`):
/// the sorted names some node lists, and per node its names with the size of the last entry
/// listing each and the number of nodes listing it.
/// What [`node_image_table`] returns: names, node images, per-node ranges.
type NodeImageTable = (Vec<String>, Vec<NodeImage>, Vec<(u32, u32)>);

fn node_image_table(state: &ClusterState) -> Result<NodeImageTable, EvalError> {
    let mut spread: BTreeMap<&str, u32> = BTreeMap::new();
    let mut per_node: Vec<BTreeMap<&str, i64>> = Vec::with_capacity(state.nodes.len());
    for node in &state.nodes {
        let mut sizes: BTreeMap<&str, i64> = BTreeMap::new();
        for image in &node.images {
            for name in &image.names {
                // The last entry listing a name wins.
                sizes.insert(name.as_str(), image.size_bytes);
            }
        }
        for name in sizes.keys() {
            *spread.entry(name).or_insert(0) += 1;
        }
        per_node.push(sizes);
    }
    let names: Vec<String> = spread.keys().map(|n| (*n).to_string()).collect();
    let mut images = Vec::new();
    let mut ranges = Vec::with_capacity(per_node.len());
    for sizes in &per_node {
        let start = u32::try_from(images.len())
            .map_err(|_| EncodeError::TooMany { what: "node images", count: images.len() })?;
        for (name, &size) in sizes {
            let image = names.binary_search_by(|n| n.as_str().cmp(name)).map_or(NONE, |i| i as u32);
            let num_nodes = spread.get(name).copied().unwrap_or(0);
            images.push(NodeImage { image, size, num_nodes });
        }
        ranges.push((start, sizes.len() as u32));
    }
    Ok((names, images, ranges))
}

/// A scored resource resolved to a column: cpu and memory use the non-zero requests for
/// NodeResourcesFit and the real ones for BalancedAllocation (`use_requested`); `pods` is never
/// a scored amount (upstream finds it in no resource map); scalar resources the pod does not
/// request are left out by the evaluators.
fn resolve_spec(enc: &Encoded, name: &str, weight: i64, use_requested: bool) -> FitSpec {
    let column = enc.dicts.resources.column(name).map_or(NONE, |c| c as u32);
    let (column, kind) = match name {
        CPU | MEMORY if use_requested => (column, FIT_KIND_REQUESTED),
        CPU | MEMORY => (column, FIT_KIND_NON_ZERO),
        EPHEMERAL_STORAGE => (column, FIT_KIND_REQUESTED),
        PODS => (NONE, FIT_KIND_OTHER),
        n if is_scalar_resource_name(n) => (column, FIT_KIND_SCALAR),
        _ => (column, FIT_KIND_OTHER),
    };
    // The plugins validated 1 ≤ weight ≤ 100.
    FitSpec { column, kind, weight: i32::try_from(weight).unwrap_or(0) }
}

/// The enabled plugins of [`NOT_YET_IN_MATRIX`], each with its first extension point.
fn not_evaluated(profile: &Profile) -> Vec<(PluginName, ExtensionPoint)> {
    let mut out: Vec<(PluginName, ExtensionPoint)> = Vec::new();
    for ep in [
        ExtensionPoint::PreFilter,
        ExtensionPoint::Filter,
        ExtensionPoint::PreScore,
        ExtensionPoint::Score,
    ] {
        for p in profile.plugins_at(ep) {
            if NOT_YET_IN_MATRIX.contains(&p) && !out.iter().any(|(q, _)| *q == p) {
                out.push((p, ep));
            }
        }
    }
    out
}
