//! Scheduling profiles: which plugins run at each extension point, in which order, with which
//! score weights and arguments.
//!
//! Input: a profile's plugin configuration ([`PluginsConfig`], already parsed from a
//! `KubeSchedulerConfiguration` by [`crate::framework::config`], or nothing for the defaults).
//! Output: a resolved [`Profile`], the list per extension point that the framework runtime runs.
//!
//! Resolution happens in two steps, exactly as kube-scheduler v1.35 does it:
//!
//! 1. [`merge_plugins`] merges the user's sets into the default sets
//!    (`pkg/scheduler/apis/config/v1/default_plugins.go`, `getDefaultPlugins` and `mergePlugins`);
//! 2. [`expand`] turns the merged configuration into one list per extension point: the
//!    specific sets first (`updatePluginList`), then the `multiPoint` plugins spread over every
//!    extension point each plugin implements, and the score weights
//!    (`pkg/scheduler/framework/runtime/framework.go`, `NewFramework`,
//!    `expandMultiPointPlugins`, `getScoreWeights`).
//!
//! Plugins that kube-scheduler v1.35 registers but kplace does not evaluate (volumes, dynamic
//! resources, scheduling gates, …) are accepted by name and kept in the lists, so that the
//! caller can say which checks were skipped ([`PluginName::evaluated`], [`Profile::unevaluated`]).

use std::fmt;
use std::str::FromStr;

use super::args::{
    DefaultPreemptionArgs, InterPodAffinityArgs, NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs, NodeResourcesFitArgs, PodTopologySpreadArgs,
};

/// The scheduler name of the default profile (upstream `v1.DefaultSchedulerName`).
pub const DEFAULT_SCHEDULER_NAME: &str = "default-scheduler";

/// The scheduler name kplace also answers to: pods with `spec.schedulerName: kplace` use the
/// profile of that name when one is configured, else the `default-scheduler` profile.
pub const KPLACE_SCHEDULER_NAME: &str = "kplace";

/// An extension point of the scheduling framework (a field of upstream `v1.Plugins`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ExtensionPoint {
    /// `preEnqueue`: gates a pod before it enters the active queue.
    PreEnqueue,
    /// `queueSort`: orders the pending pods.
    QueueSort,
    /// `preFilter`: per-pod state, or an early rejection.
    PreFilter,
    /// `filter`: per-node feasibility.
    Filter,
    /// `postFilter`: runs when no node fits (preemption).
    PostFilter,
    /// `preScore`: per-pod state for scoring.
    PreScore,
    /// `score`: per-node scores, weighted and summed.
    Score,
    /// `reserve`.
    Reserve,
    /// `permit`.
    Permit,
    /// `preBind`.
    PreBind,
    /// `bind`.
    Bind,
    /// `postBind`.
    PostBind,
}

impl ExtensionPoint {
    /// Every extension point, in the order the configuration API lists them.
    pub const ALL: [ExtensionPoint; 12] = [
        ExtensionPoint::PreEnqueue,
        ExtensionPoint::QueueSort,
        ExtensionPoint::PreFilter,
        ExtensionPoint::Filter,
        ExtensionPoint::PostFilter,
        ExtensionPoint::PreScore,
        ExtensionPoint::Score,
        ExtensionPoint::Reserve,
        ExtensionPoint::Permit,
        ExtensionPoint::PreBind,
        ExtensionPoint::Bind,
        ExtensionPoint::PostBind,
    ];

    /// The field name in `profiles[].plugins`, e.g. `preFilter`.
    pub fn field_name(self) -> &'static str {
        match self {
            ExtensionPoint::PreEnqueue => "preEnqueue",
            ExtensionPoint::QueueSort => "queueSort",
            ExtensionPoint::PreFilter => "preFilter",
            ExtensionPoint::Filter => "filter",
            ExtensionPoint::PostFilter => "postFilter",
            ExtensionPoint::PreScore => "preScore",
            ExtensionPoint::Score => "score",
            ExtensionPoint::Reserve => "reserve",
            ExtensionPoint::Permit => "permit",
            ExtensionPoint::PreBind => "preBind",
            ExtensionPoint::Bind => "bind",
            ExtensionPoint::PostBind => "postBind",
        }
    }
}

impl fmt::Display for ExtensionPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.field_name())
    }
}

/// A plugin registered in kube-scheduler v1.35's in-tree registry
/// (`pkg/scheduler/framework/plugins/registry.go`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PluginName {
    /// `PrioritySort` (queueSort).
    PrioritySort,
    /// `NodeUnschedulable`.
    NodeUnschedulable,
    /// `NodeName`.
    NodeName,
    /// `TaintToleration`.
    TaintToleration,
    /// `NodeAffinity`.
    NodeAffinity,
    /// `NodePorts`.
    NodePorts,
    /// `NodeResourcesFit`.
    NodeResourcesFit,
    /// `InterPodAffinity`.
    InterPodAffinity,
    /// `PodTopologySpread`.
    PodTopologySpread,
    /// `NodeResourcesBalancedAllocation`.
    NodeResourcesBalancedAllocation,
    /// `ImageLocality`.
    ImageLocality,
    /// `DefaultPreemption` (postFilter).
    DefaultPreemption,
    /// `DefaultBinder` (bind).
    DefaultBinder,
    /// `SchedulingGates` (preEnqueue) — not evaluated by kplace.
    SchedulingGates,
    /// `VolumeRestrictions` — not evaluated by kplace.
    VolumeRestrictions,
    /// `VolumeBinding` — not evaluated by kplace.
    VolumeBinding,
    /// `VolumeZone` — not evaluated by kplace.
    VolumeZone,
    /// `NodeVolumeLimits` (CSI volume limits) — not evaluated by kplace.
    NodeVolumeLimits,
    /// `DynamicResources` (DRA) — not evaluated by kplace.
    DynamicResources,
    /// `NodeDeclaredFeatures` (alpha in v1.35, not a default) — not evaluated by kplace.
    NodeDeclaredFeatures,
    /// `GangScheduling` (alpha in v1.35, not a default) — not evaluated by kplace.
    GangScheduling,
}

/// Why a plugin name was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PluginNameError {
    /// No plugin of that name exists in kube-scheduler v1.35.
    #[error("unknown plugin {name:?} (kube-scheduler v1.35 has: {known})")]
    Unknown {
        /// The name as written.
        name: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// The plugin existed in older releases and was removed.
    #[error(
        "plugin {name:?} was removed in kube-scheduler v1.32 and is invalid in \
         kubescheduler.config.k8s.io/v1; use NodeVolumeLimits instead"
    )]
    Removed {
        /// The name as written.
        name: String,
    },
}

/// Plugins upstream's validation lists as invalid in `kubescheduler.config.k8s.io/v1`
/// (`pkg/scheduler/apis/config/validation/validation.go`, `invalidPluginsByVersion`).
const REMOVED_PLUGINS: [&str; 4] = ["AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits"];

impl PluginName {
    /// Every plugin kplace accepts by name.
    pub const ALL: [PluginName; 21] = [
        PluginName::PrioritySort,
        PluginName::NodeUnschedulable,
        PluginName::NodeName,
        PluginName::TaintToleration,
        PluginName::NodeAffinity,
        PluginName::NodePorts,
        PluginName::NodeResourcesFit,
        PluginName::InterPodAffinity,
        PluginName::PodTopologySpread,
        PluginName::NodeResourcesBalancedAllocation,
        PluginName::ImageLocality,
        PluginName::DefaultPreemption,
        PluginName::DefaultBinder,
        PluginName::SchedulingGates,
        PluginName::VolumeRestrictions,
        PluginName::VolumeBinding,
        PluginName::VolumeZone,
        PluginName::NodeVolumeLimits,
        PluginName::DynamicResources,
        PluginName::NodeDeclaredFeatures,
        PluginName::GangScheduling,
    ];

    /// The registry name, as written in configurations and status messages.
    pub fn as_str(self) -> &'static str {
        match self {
            PluginName::PrioritySort => "PrioritySort",
            PluginName::NodeUnschedulable => "NodeUnschedulable",
            PluginName::NodeName => "NodeName",
            PluginName::TaintToleration => "TaintToleration",
            PluginName::NodeAffinity => "NodeAffinity",
            PluginName::NodePorts => "NodePorts",
            PluginName::NodeResourcesFit => "NodeResourcesFit",
            PluginName::InterPodAffinity => "InterPodAffinity",
            PluginName::PodTopologySpread => "PodTopologySpread",
            PluginName::NodeResourcesBalancedAllocation => "NodeResourcesBalancedAllocation",
            PluginName::ImageLocality => "ImageLocality",
            PluginName::DefaultPreemption => "DefaultPreemption",
            PluginName::DefaultBinder => "DefaultBinder",
            PluginName::SchedulingGates => "SchedulingGates",
            PluginName::VolumeRestrictions => "VolumeRestrictions",
            PluginName::VolumeBinding => "VolumeBinding",
            PluginName::VolumeZone => "VolumeZone",
            PluginName::NodeVolumeLimits => "NodeVolumeLimits",
            PluginName::DynamicResources => "DynamicResources",
            PluginName::NodeDeclaredFeatures => "NodeDeclaredFeatures",
            PluginName::GangScheduling => "GangScheduling",
        }
    }

    /// Looks a plugin up by its registry name (case-sensitive, as upstream).
    pub fn parse(name: &str) -> Result<PluginName, PluginNameError> {
        if let Some(p) = PluginName::ALL.iter().find(|p| p.as_str() == name) {
            return Ok(*p);
        }
        if REMOVED_PLUGINS.contains(&name) {
            return Err(PluginNameError::Removed { name: name.to_string() });
        }
        let known: Vec<&str> = PluginName::ALL.iter().map(|p| p.as_str()).collect();
        Err(PluginNameError::Unknown { name: name.to_string(), known: known.join(", ") })
    }

    /// Whether kplace evaluates this plugin. Plugins that are not evaluated are still accepted
    /// and listed in the profile, so the caller can warn that their checks were skipped.
    pub fn evaluated(self) -> bool {
        match self {
            PluginName::PrioritySort
            | PluginName::NodeUnschedulable
            | PluginName::NodeName
            | PluginName::TaintToleration
            | PluginName::NodeAffinity
            | PluginName::NodePorts
            | PluginName::NodeResourcesFit
            | PluginName::InterPodAffinity
            | PluginName::PodTopologySpread
            | PluginName::NodeResourcesBalancedAllocation
            | PluginName::ImageLocality
            | PluginName::DefaultPreemption
            | PluginName::DefaultBinder => true,
            PluginName::SchedulingGates
            | PluginName::VolumeRestrictions
            | PluginName::VolumeBinding
            | PluginName::VolumeZone
            | PluginName::NodeVolumeLimits
            | PluginName::DynamicResources
            | PluginName::NodeDeclaredFeatures
            | PluginName::GangScheduling => false,
        }
    }

    /// The extension points the plugin implements in v1.35 (the interfaces its Go type
    /// satisfies, which decide where `multiPoint` expands it and where it may be enabled).
    pub fn extension_points(self) -> &'static [ExtensionPoint] {
        use ExtensionPoint::*;
        match self {
            PluginName::PrioritySort => &[QueueSort],
            PluginName::NodeUnschedulable | PluginName::NodeName => &[Filter],
            PluginName::TaintToleration => &[Filter, PreScore, Score],
            PluginName::NodeAffinity
            | PluginName::NodeResourcesFit
            | PluginName::PodTopologySpread
            | PluginName::InterPodAffinity => &[PreFilter, Filter, PreScore, Score],
            PluginName::NodePorts
            | PluginName::VolumeRestrictions
            | PluginName::VolumeZone
            | PluginName::NodeVolumeLimits
            | PluginName::NodeDeclaredFeatures => &[PreFilter, Filter],
            PluginName::NodeResourcesBalancedAllocation => &[PreScore, Score],
            PluginName::ImageLocality => &[Score],
            // DefaultPreemption gained PreEnqueue with asynchronous preemption (v1.34).
            PluginName::DefaultPreemption => &[PreEnqueue, PostFilter],
            PluginName::DefaultBinder => &[Bind],
            PluginName::SchedulingGates => &[PreEnqueue],
            // VolumeBinding implements Score in Go; its PreScore skips unless the
            // StorageCapacityScoring gate is on, but it is still listed with weight 1.
            PluginName::VolumeBinding => &[PreFilter, Filter, PreScore, Score, Reserve, PreBind],
            // DynamicResources: Score is the prioritized-list scoring added in v1.35.
            PluginName::DynamicResources => {
                &[PreEnqueue, PreFilter, Filter, PostFilter, Score, Reserve, PreBind]
            }
            // GangScheduling (alpha, Workload API): waits for the gang at PreEnqueue and Permit.
            PluginName::GangScheduling => &[PreEnqueue, Permit],
        }
    }

    /// Whether the plugin implements `ep`.
    pub fn implements(self, ep: ExtensionPoint) -> bool {
        self.extension_points().contains(&ep)
    }
}

impl fmt::Display for PluginName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PluginName {
    type Err = PluginNameError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PluginName::parse(s)
    }
}

/// The typed arguments of the plugins kplace evaluates, with upstream's defaults
/// (`pluginConfig[].args` after `SetDefaults_*` and validation).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PluginArgs {
    /// `NodeResourcesFitArgs`.
    pub node_resources_fit: NodeResourcesFitArgs,
    /// `NodeResourcesBalancedAllocationArgs`.
    pub balanced_allocation: NodeResourcesBalancedAllocationArgs,
    /// `PodTopologySpreadArgs`.
    pub pod_topology_spread: PodTopologySpreadArgs,
    /// `InterPodAffinityArgs`.
    pub inter_pod_affinity: InterPodAffinityArgs,
    /// `NodeAffinityArgs`.
    pub node_affinity: NodeAffinityArgs,
    /// `DefaultPreemptionArgs`.
    pub default_preemption: DefaultPreemptionArgs,
}

/// A resolved scheduling profile: what the framework runtime runs for pods whose
/// `spec.schedulerName` is [`Profile::scheduler_name`].
///
/// Every list is in execution order. Filters run in [`Profile::filter`] order and stop at the
/// first failure, so the order decides which reason a node reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// `schedulerName`.
    pub scheduler_name: String,
    /// The plugins of every extension point, in order, with score weights.
    pub plugins: ExpandedPlugins,
    /// `percentageOfNodesToScore` in effect for this profile: the profile's own value, else the
    /// configuration's, else `None` (upstream's default 0: the adaptive percentage).
    pub percentage_of_nodes_to_score: Option<i32>,
    /// Plugin arguments.
    pub args: PluginArgs,
}

impl Profile {
    /// kube-scheduler v1.35's default profile (`default-scheduler`, the default plugins,
    /// weights and arguments).
    pub fn default_profile() -> Profile {
        let expanded = expand(&default_plugins())
            .unwrap_or_else(|_| unreachable!("the built-in default plugins always expand"));
        Profile::from_expanded(DEFAULT_SCHEDULER_NAME, expanded, None, PluginArgs::default())
    }

    /// A profile from expanded plugin lists.
    pub fn from_expanded(
        scheduler_name: &str,
        expanded: ExpandedPlugins,
        percentage_of_nodes_to_score: Option<i32>,
        args: PluginArgs,
    ) -> Profile {
        Profile {
            scheduler_name: scheduler_name.to_string(),
            plugins: expanded,
            percentage_of_nodes_to_score,
            args,
        }
    }

    /// The plugins at an extension point, in order (for `score`, without the weights).
    pub fn plugins_at(&self, ep: ExtensionPoint) -> Vec<PluginName> {
        match ep {
            ExtensionPoint::PreEnqueue => self.plugins.pre_enqueue.clone(),
            ExtensionPoint::QueueSort => self.plugins.queue_sort.clone(),
            ExtensionPoint::PreFilter => self.plugins.pre_filter.clone(),
            ExtensionPoint::Filter => self.plugins.filter.clone(),
            ExtensionPoint::PostFilter => self.plugins.post_filter.clone(),
            ExtensionPoint::PreScore => self.plugins.pre_score.clone(),
            ExtensionPoint::Score => self.plugins.score.iter().map(|(p, _)| *p).collect(),
            ExtensionPoint::Reserve => self.plugins.reserve.clone(),
            ExtensionPoint::Permit => self.plugins.permit.clone(),
            ExtensionPoint::PreBind => self.plugins.pre_bind.clone(),
            ExtensionPoint::Bind => self.plugins.bind.clone(),
            ExtensionPoint::PostBind => self.plugins.post_bind.clone(),
        }
    }

    /// Whether `DefaultPreemption` runs at `postFilter`.
    pub fn preemption_enabled(&self) -> bool {
        self.plugins.post_filter.contains(&PluginName::DefaultPreemption)
    }

    /// The weight of a score plugin, or `None` when it does not score in this profile.
    pub fn score_weight(&self, plugin: PluginName) -> Option<i64> {
        self.plugins.score.iter().find(|(p, _)| *p == plugin).map(|(_, w)| *w)
    }

    /// Whether `plugin` runs at `ep`.
    pub fn runs(&self, plugin: PluginName, ep: ExtensionPoint) -> bool {
        self.plugins_at(ep).contains(&plugin)
    }

    /// The enabled plugins kplace does not evaluate, each once, with the first extension point
    /// (in [`ExtensionPoint::ALL`] order) where it is enabled.
    pub fn unevaluated(&self) -> Vec<(PluginName, ExtensionPoint)> {
        let mut out: Vec<(PluginName, ExtensionPoint)> = Vec::new();
        for ep in ExtensionPoint::ALL {
            for p in self.plugins_at(ep) {
                if !p.evaluated() && !out.iter().any(|(q, _)| *q == p) {
                    out.push((p, ep));
                }
            }
        }
        out
    }
}

/// One entry of `enabled`: a plugin, its optional weight, and where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnabledPlugin {
    /// The plugin.
    pub name: PluginName,
    /// `weight` as written (`None` when absent; 0 and `None` both mean 1 for score plugins).
    pub weight: Option<i32>,
    /// The field path of the entry relative to `plugins` (e.g. `score.enabled[1]`), or `None`
    /// for a built-in default.
    pub origin: Option<String>,
}

impl EnabledPlugin {
    /// A built-in default entry.
    pub fn default_entry(name: PluginName, weight: Option<i32>) -> Self {
        EnabledPlugin { name, weight, origin: None }
    }
}

/// `enabled` / `disabled` of one extension point (upstream `v1.PluginSet`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PluginSet {
    /// `enabled`, in order.
    pub enabled: Vec<EnabledPlugin>,
    /// `disabled` names as written; `*` disables every default. Unknown names are kept: upstream
    /// ignores them.
    pub disabled: Vec<String>,
}

impl PluginSet {
    fn is_disabled(&self, name: &str) -> bool {
        self.disabled.iter().any(|d| d == name)
    }
}

/// A profile's `plugins` (upstream `v1.Plugins`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PluginsConfig {
    /// `multiPoint`.
    pub multi_point: PluginSet,
    /// `preEnqueue`.
    pub pre_enqueue: PluginSet,
    /// `queueSort`.
    pub queue_sort: PluginSet,
    /// `preFilter`.
    pub pre_filter: PluginSet,
    /// `filter`.
    pub filter: PluginSet,
    /// `postFilter`.
    pub post_filter: PluginSet,
    /// `preScore`.
    pub pre_score: PluginSet,
    /// `score`.
    pub score: PluginSet,
    /// `reserve`.
    pub reserve: PluginSet,
    /// `permit`.
    pub permit: PluginSet,
    /// `preBind`.
    pub pre_bind: PluginSet,
    /// `bind`.
    pub bind: PluginSet,
    /// `postBind`.
    pub post_bind: PluginSet,
}

impl PluginsConfig {
    /// The set of one extension point.
    pub fn get(&self, ep: ExtensionPoint) -> &PluginSet {
        match ep {
            ExtensionPoint::PreEnqueue => &self.pre_enqueue,
            ExtensionPoint::QueueSort => &self.queue_sort,
            ExtensionPoint::PreFilter => &self.pre_filter,
            ExtensionPoint::Filter => &self.filter,
            ExtensionPoint::PostFilter => &self.post_filter,
            ExtensionPoint::PreScore => &self.pre_score,
            ExtensionPoint::Score => &self.score,
            ExtensionPoint::Reserve => &self.reserve,
            ExtensionPoint::Permit => &self.permit,
            ExtensionPoint::PreBind => &self.pre_bind,
            ExtensionPoint::Bind => &self.bind,
            ExtensionPoint::PostBind => &self.post_bind,
        }
    }

    /// The set of one extension point, mutably.
    pub fn get_mut(&mut self, ep: ExtensionPoint) -> &mut PluginSet {
        match ep {
            ExtensionPoint::PreEnqueue => &mut self.pre_enqueue,
            ExtensionPoint::QueueSort => &mut self.queue_sort,
            ExtensionPoint::PreFilter => &mut self.pre_filter,
            ExtensionPoint::Filter => &mut self.filter,
            ExtensionPoint::PostFilter => &mut self.post_filter,
            ExtensionPoint::PreScore => &mut self.pre_score,
            ExtensionPoint::Score => &mut self.score,
            ExtensionPoint::Reserve => &mut self.reserve,
            ExtensionPoint::Permit => &mut self.permit,
            ExtensionPoint::PreBind => &mut self.pre_bind,
            ExtensionPoint::Bind => &mut self.bind,
            ExtensionPoint::PostBind => &mut self.post_bind,
        }
    }
}

/// kube-scheduler v1.35's default `multiPoint` list with its weights, in order, with the
/// feature gates at their v1.35 defaults (`getDefaultPlugins` + `applyFeatureGates`:
/// `DynamicResourceAllocation` is GA, so `DynamicResources` sits before `DefaultPreemption`;
/// `NodeDeclaredFeatures` and `GangScheduling` are alpha and off). The in-tree volume limit
/// plugins (`EBSLimits`, `GCEPDLimits`, `AzureDiskLimits`) left this list in v1.31.
///
/// `DynamicResources` is listed without a weight, so it scores with weight 1 (its score is the
/// prioritized-list ranking added in v1.35). The newest upstream sources give it weight 2 in
/// this list; which release made that change could not be confirmed from the stored sources.
/// kplace does not evaluate the plugin, so the weight only shows in listings.
pub const DEFAULT_MULTI_POINT: [(PluginName, Option<i32>); 19] = [
    (PluginName::SchedulingGates, None),
    (PluginName::PrioritySort, None),
    (PluginName::NodeUnschedulable, None),
    (PluginName::NodeName, None),
    (PluginName::TaintToleration, Some(3)),
    (PluginName::NodeAffinity, Some(2)),
    (PluginName::NodePorts, None),
    (PluginName::NodeResourcesFit, Some(1)),
    (PluginName::VolumeRestrictions, None),
    (PluginName::NodeVolumeLimits, None),
    (PluginName::VolumeBinding, None),
    (PluginName::VolumeZone, None),
    (PluginName::PodTopologySpread, Some(2)),
    (PluginName::InterPodAffinity, Some(2)),
    (PluginName::DynamicResources, None),
    (PluginName::DefaultPreemption, None),
    (PluginName::NodeResourcesBalancedAllocation, Some(1)),
    (PluginName::ImageLocality, Some(1)),
    (PluginName::DefaultBinder, None),
];

/// The default plugin configuration: [`DEFAULT_MULTI_POINT`] and nothing else.
pub fn default_plugins() -> PluginsConfig {
    PluginsConfig {
        multi_point: PluginSet {
            enabled: DEFAULT_MULTI_POINT
                .iter()
                .map(|(p, w)| EnabledPlugin::default_entry(*p, *w))
                .collect(),
            disabled: Vec::new(),
        },
        ..PluginsConfig::default()
    }
}

/// Merges a profile's configured plugins into the defaults, per extension point (upstream
/// `mergePlugins` / `mergePluginSet`):
///
/// - `disabled` is the custom list followed by the default's; `*` drops every default;
/// - each remaining default keeps its place, but a custom entry of the same name replaces it
///   whole (its weight included, even when the custom entry has none);
/// - the custom entries that replaced nothing follow, in their order (duplicates included; the
///   expansion rejects them).
pub fn merge_plugins(defaults: &PluginsConfig, custom: &PluginsConfig) -> PluginsConfig {
    let mut out = PluginsConfig {
        multi_point: merge_plugin_set(&defaults.multi_point, &custom.multi_point),
        ..PluginsConfig::default()
    };
    for ep in ExtensionPoint::ALL {
        *out.get_mut(ep) = merge_plugin_set(defaults.get(ep), custom.get(ep));
    }
    out
}

fn merge_plugin_set(default: &PluginSet, custom: &PluginSet) -> PluginSet {
    let mut disabled: Vec<String> = custom.disabled.clone();
    disabled.extend(default.disabled.iter().cloned());
    let mut replaced = vec![false; custom.enabled.len()];
    let mut enabled = Vec::new();
    if !disabled.iter().any(|d| d == "*") {
        for d in &default.enabled {
            if disabled.iter().any(|x| x == d.name.as_str()) {
                continue;
            }
            // Upstream indexes the custom entries by name in a map, so the last one wins.
            match custom.enabled.iter().rposition(|c| c.name == d.name) {
                Some(i) => {
                    if let (Some(flag), Some(c)) = (replaced.get_mut(i), custom.enabled.get(i)) {
                        *flag = true;
                        enabled.push(c.clone());
                    }
                }
                None => enabled.push(d.clone()),
            }
        }
    }
    for (c, was_replaced) in custom.enabled.iter().zip(&replaced) {
        if !was_replaced {
            enabled.push(c.clone());
        }
    }
    PluginSet { enabled, disabled }
}

/// A configuration error found while resolving plugins, with the field path relative to the
/// profile's `plugins`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct PluginError {
    /// Field path relative to `profiles[i].plugins`, e.g. `filter.enabled[0]`.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

/// The plugins of every extension point after `multiPoint` expansion, with score weights.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExpandedPlugins {
    /// `preEnqueue`.
    pub pre_enqueue: Vec<PluginName>,
    /// `queueSort`.
    pub queue_sort: Vec<PluginName>,
    /// `preFilter`.
    pub pre_filter: Vec<PluginName>,
    /// `filter`.
    pub filter: Vec<PluginName>,
    /// `postFilter`.
    pub post_filter: Vec<PluginName>,
    /// `preScore`.
    pub pre_score: Vec<PluginName>,
    /// `score` with weights.
    pub score: Vec<(PluginName, i64)>,
    /// `reserve`.
    pub reserve: Vec<PluginName>,
    /// `permit`.
    pub permit: Vec<PluginName>,
    /// `preBind`.
    pub pre_bind: Vec<PluginName>,
    /// `bind`.
    pub bind: Vec<PluginName>,
    /// `postBind`.
    pub post_bind: Vec<PluginName>,
}

/// Expands a merged plugin configuration into one list per extension point, as upstream's
/// `NewFramework` does:
///
/// 1. each extension point's `enabled` list is taken as is; a plugin that does not implement the
///    extension point, or appears twice, is an error (`updatePluginList`);
/// 2. unless that extension point disables `*`, every `multiPoint` plugin implementing it is
///    added, except those it disables; a plugin already in the specific list stays there
///    ("explicitly re-configured"), and a plugin twice in `multiPoint` is an error;
///    the order is: re-configured plugins (in the specific list's order), then the `multiPoint`
///    plugins, then the rest of the specific list (`expandMultiPointPlugins`);
/// 3. exactly one `queueSort` and at least one `bind` plugin are required;
/// 4. a score plugin's weight comes from the first entry naming it in `score.enabled` followed
///    by `multiPoint.enabled`; an absent or zero weight is 1 (`getScoreWeights`).
///
/// Every error is returned, not only the first.
pub fn expand(plugins: &PluginsConfig) -> Result<ExpandedPlugins, Vec<PluginError>> {
    let mut errors: Vec<PluginError> = Vec::new();
    let mut lists: Vec<(ExtensionPoint, Vec<PluginName>)> = Vec::new();
    for ep in ExtensionPoint::ALL {
        lists.push((ep, expand_one(plugins, ep, &mut errors)));
    }
    let list = |ep: ExtensionPoint| -> Vec<PluginName> {
        lists.iter().find(|(e, _)| *e == ep).map(|(_, l)| l.clone()).unwrap_or_default()
    };

    let queue_sort = list(ExtensionPoint::QueueSort);
    if queue_sort.len() != 1 {
        errors.push(PluginError {
            field: "queueSort".to_string(),
            message: format!("exactly one queue sort plugin is required, got {}", queue_sort.len()),
        });
    }
    let bind = list(ExtensionPoint::Bind);
    if bind.is_empty() {
        errors.push(PluginError {
            field: "bind".to_string(),
            message: "at least one bind plugin is required".to_string(),
        });
    }

    let mut weights: Vec<(PluginName, i64)> = Vec::new();
    for p in plugins.score.enabled.iter().chain(&plugins.multi_point.enabled) {
        if !p.name.implements(ExtensionPoint::Score) || weights.iter().any(|(q, _)| *q == p.name) {
            continue;
        }
        let w = i64::from(p.weight.unwrap_or(0));
        weights.push((p.name, if w == 0 { 1 } else { w }));
    }
    let mut score = Vec::new();
    for p in list(ExtensionPoint::Score) {
        match weights.iter().find(|(q, _)| *q == p) {
            Some((_, w)) => score.push((p, *w)),
            None => errors.push(PluginError {
                field: "score".to_string(),
                message: format!("score plugin {:?} is not configured with a weight", p.as_str()),
            }),
        }
    }

    // The same mistake can surface at several extension points; report it once.
    let mut unique: Vec<PluginError> = Vec::new();
    for e in errors {
        if !unique.contains(&e) {
            unique.push(e);
        }
    }
    if !unique.is_empty() {
        return Err(unique);
    }
    Ok(ExpandedPlugins {
        pre_enqueue: list(ExtensionPoint::PreEnqueue),
        queue_sort,
        pre_filter: list(ExtensionPoint::PreFilter),
        filter: list(ExtensionPoint::Filter),
        post_filter: list(ExtensionPoint::PostFilter),
        pre_score: list(ExtensionPoint::PreScore),
        score,
        reserve: list(ExtensionPoint::Reserve),
        permit: list(ExtensionPoint::Permit),
        pre_bind: list(ExtensionPoint::PreBind),
        bind,
        post_bind: list(ExtensionPoint::PostBind),
    })
}

fn expand_one(
    plugins: &PluginsConfig,
    ep: ExtensionPoint,
    errors: &mut Vec<PluginError>,
) -> Vec<PluginName> {
    let set = plugins.get(ep);
    let mut specific: Vec<PluginName> = Vec::new();
    for (i, p) in set.enabled.iter().enumerate() {
        let field = p.origin.clone().unwrap_or_else(|| format!("{ep}.enabled[{i}]"));
        if !p.name.implements(ep) {
            errors.push(PluginError {
                field,
                message: format!(
                    "plugin {:?} does not implement the {ep} extension point",
                    p.name.as_str()
                ),
            });
        } else if specific.contains(&p.name) {
            errors.push(PluginError {
                field,
                message: format!("plugin {:?} is enabled twice at {ep}", p.name.as_str()),
            });
        } else {
            specific.push(p.name);
        }
    }
    if plugins.multi_point.enabled.is_empty() || set.is_disabled("*") {
        return specific;
    }

    let mut overridden: Vec<PluginName> = Vec::new();
    let mut from_multi_point: Vec<PluginName> = Vec::new();
    for (i, p) in plugins.multi_point.enabled.iter().enumerate() {
        if !p.name.implements(ep) || set.is_disabled(p.name.as_str()) {
            continue;
        }
        if specific.contains(&p.name) {
            overridden.push(p.name);
        } else if from_multi_point.contains(&p.name) {
            errors.push(PluginError {
                field: p.origin.clone().unwrap_or_else(|| format!("multiPoint.enabled[{i}]")),
                message: format!("plugin {:?} is enabled twice in multiPoint", p.name.as_str()),
            });
        } else {
            from_multi_point.push(p.name);
        }
    }
    let mut out: Vec<PluginName> =
        specific.iter().copied().filter(|p| overridden.contains(p)).collect();
    out.extend(from_multi_point);
    out.extend(specific.iter().copied().filter(|p| !overridden.contains(p)));
    out
}

#[cfg(test)]
mod tests;
