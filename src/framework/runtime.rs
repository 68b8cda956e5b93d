//! The framework runtime: runs one pod through a profile's PreFilter, Filter, PreScore, Score and
//! NormalizeScore plugins, in the profile's order, with upstream's skip and failure rules.
//!
//! Input: a [`Profile`], the cluster and a pod; output: a [`CycleState`], per-node [`Status`]es
//! and weighted [`NodeScores`]. Counterpart: `pkg/scheduler/framework/runtime/framework.go`
//! (`RunPreFilterPlugins`, `RunFilterPlugins`, `RunPreScorePlugins`, `RunScorePlugins`), v1.35.
//! Plugins kplace does not evaluate (DRA, scheduling gates, the volume plugins' Filters) are
//! left out; the caller warns about them once. Of the volume plugins, VolumeRestrictions' and
//! VolumeBinding's PreFilters run (the claim checks of `plugins::volume_binding`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use thiserror::Error;

use super::config::SchedulerConfig;
use super::profile::{PluginName, Profile};
use super::status::{Code, MAX_NODE_SCORE, MIN_NODE_SCORE, Status};
use crate::framework::args::DefaultPreemptionArgs;
use crate::model::{ClusterState, Node, Pod};
use crate::plugins::image_locality::ImageLocality;
use crate::plugins::interpodaffinity::InterPodAffinity;
use crate::plugins::node_affinity::{NodeAffinity, NodeAffinityPreFilter};
use crate::plugins::node_name::NodeName;
use crate::plugins::node_ports::{NodePorts, NodePortsPreFilter};
use crate::plugins::node_unschedulable::NodeUnschedulable;
use crate::plugins::noderesources::fit::FitPreFilter;
use crate::plugins::noderesources::{BalancedAllocation, Fit};
use crate::plugins::podtopologyspread::PodTopologySpread;
use crate::plugins::taint_toleration::TaintToleration;
use crate::plugins::volume_binding::{VolumeBinding, VolumeRestrictions};

type IpaState = crate::plugins::interpodaffinity::PreFilterState;

/// DynamicResources' PostFilter reason for a pod without resource claims (upstream
/// `dynamicresources.go`, `PostFilter`).
pub const DRA_NO_CLAIMS: &str = "no new claims to deallocate";

/// DynamicResources' PostFilter error when its PreFilter never ran (an earlier PreFilter plugin
/// rejected the pod as `UnschedulableAndUnresolvable`): `CycleState.Read`'s `ErrNotFound`.
pub const DRA_STATE_NOT_FOUND: &str = "not found";
type PtsState = crate::plugins::podtopologyspread::PreFilterState;

/// A profile's plugin arguments were rejected when the plugins were built.
#[derive(Debug, Error)]
#[error(
    "profile {profile:?}: {}{message}",
    if plugin.is_empty() { String::new() } else { format!("plugin {plugin}: ") }
)]
pub struct FrameworkError {
    /// The profile's scheduler name.
    pub profile: String,
    /// The plugin (empty when the profile itself is missing).
    pub plugin: &'static str,
    /// What was wrong.
    pub message: String,
}

/// The per-pod state PreFilter plugins computed (upstream `CycleState`).
#[derive(Debug, Clone, Default)]
pub struct CycleState {
    skip_filter: BTreeSet<PluginName>,
    fit: Option<FitPreFilter>,
    ports: Option<NodePortsPreFilter>,
    node_affinity: Option<NodeAffinityPreFilter>,
    ipa: Option<IpaState>,
    pts: Option<PtsState>,
    node_names: Option<BTreeSet<String>>,
    plugins_with_nodes: BTreeSet<&'static str>,
}

impl CycleState {
    /// Whether the plugin's PreFilter returned `Skip`, so its Filter does not run.
    pub fn skips_filter(&self, plugin: PluginName) -> bool {
        self.skip_filter.contains(&plugin)
    }

    /// The nodes PreFilter restricted the pod to, if any (upstream `PreFilterResult.NodeNames`).
    pub fn node_names(&self) -> Option<&BTreeSet<String>> {
        self.node_names.as_ref()
    }

    /// The plugins whose PreFilter restricted the nodes, sorted.
    pub fn pre_filter_restricting_plugins(&self) -> Vec<&'static str> {
        self.plugins_with_nodes.iter().copied().collect()
    }

    /// Adds `pod` (placed on `node`) to the inter-pod states, as upstream's
    /// `RunPreFilterExtensionAddPod` does for nominated pods.
    pub fn add_pod(&mut self, pod: &Pod, node: &Node) {
        if let Some(s) = self.ipa.as_mut() {
            s.add_pod(pod, node);
        }
        if let Some(s) = self.pts.as_mut() {
            s.add_pod(pod, node);
        }
    }

    /// Removes `victim` (which is on `node`) from the inter-pod states, as upstream's
    /// `RunPreFilterExtensionRemovePod` does during preemption.
    pub fn remove_pod(&mut self, victim: &Pod, node: &Node) {
        if let Some(s) = self.ipa.as_mut() {
            s.remove_pod(victim, node);
        }
        if let Some(s) = self.pts.as_mut() {
            s.remove_pod(victim, node);
        }
    }
}

/// The outcome of PreFilter.
#[derive(Debug)]
pub enum PreFilterOutcome {
    /// Filtering can go ahead with this state.
    Proceed(Box<CycleState>),
    /// A PreFilter plugin rejected the pod on every node.
    Rejected(Status),
}

/// One score plugin's contribution on one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginScore {
    /// The plugin.
    pub plugin: PluginName,
    /// The raw score from `Score`.
    pub raw: i64,
    /// The score after `NormalizeScore` (0–100).
    pub normalized: i64,
    /// The plugin's weight.
    pub weight: i64,
}

/// All plugins' scores on one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeScores {
    /// Node index in the cluster.
    pub node: usize,
    /// Per plugin, in the profile's score order.
    pub plugins: Vec<PluginScore>,
    /// Sum of `normalized × weight`.
    pub total: i64,
}

/// A profile's plugins, built and ready to run.
#[derive(Debug)]
pub struct Framework {
    profile: Profile,
    node_unschedulable: NodeUnschedulable,
    node_name: NodeName,
    taint: TaintToleration,
    node_affinity: NodeAffinity,
    ports: NodePorts,
    fit: Fit,
    ipa: InterPodAffinity,
    pts: PodTopologySpread,
    balanced: BalancedAllocation,
    image: ImageLocality,
}

impl Framework {
    /// Builds the plugins of `profile` with its arguments.
    pub fn new(profile: &Profile) -> Result<Framework, FrameworkError> {
        let err = |plugin: &'static str, message: String| FrameworkError {
            profile: profile.scheduler_name.clone(),
            plugin,
            message,
        };
        let a = &profile.args;
        Ok(Framework {
            profile: profile.clone(),
            node_unschedulable: NodeUnschedulable::new(),
            node_name: NodeName::new(),
            taint: TaintToleration::new(),
            node_affinity: NodeAffinity::new(&a.node_affinity)
                .map_err(|e| err(NodeAffinity::NAME, e.to_string()))?,
            ports: NodePorts::new(),
            fit: Fit::new(&a.node_resources_fit).map_err(|e| err(Fit::NAME, e.to_string()))?,
            ipa: InterPodAffinity::new(a.inter_pod_affinity.clone()),
            pts: PodTopologySpread::new(a.pod_topology_spread.clone()),
            balanced: BalancedAllocation::new(&a.balanced_allocation)
                .map_err(|e| err(BalancedAllocation::NAME, e.to_string()))?,
            image: ImageLocality::new(),
        })
    }

    /// The framework for pods with `spec.schedulerName == scheduler_name` under `config`
    /// (falling back to the default profile for `kplace`).
    pub fn for_scheduler(
        config: &SchedulerConfig,
        scheduler_name: &str,
    ) -> Result<Framework, FrameworkError> {
        let profile = config.profile_for(scheduler_name).ok_or_else(|| FrameworkError {
            profile: scheduler_name.to_string(),
            plugin: "",
            message: format!(
                "no profile serves scheduler name {scheduler_name:?} (served: {})",
                config.served_scheduler_names().join(", ")
            ),
        })?;
        Framework::new(profile)
    }

    /// The profile.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// The profile's `percentageOfNodesToScore`.
    pub fn percentage_of_nodes_to_score(&self) -> Option<i32> {
        self.profile.percentage_of_nodes_to_score
    }

    /// Whether any score plugin is enabled (upstream `HasScorePlugins`, which counts plugins
    /// kplace does not evaluate, such as VolumeBinding, too).
    pub fn has_score_plugins(&self) -> bool {
        !self.profile.plugins.score.is_empty()
    }

    /// Whether DefaultPreemption runs as PostFilter.
    pub fn preemption_enabled(&self) -> bool {
        self.profile.preemption_enabled()
    }

    /// The message `RunPostFilterPlugins` leaves in `Diagnosis.PostFilterMsg` when no PostFilter
    /// plugin succeeded, given DefaultPreemption's status (`None` when it did not run). Plugins
    /// run in the profile's order: DynamicResources rejects every pod without resource claims
    /// (all pods kplace models) with "no new claims to deallocate"; DefaultPreemption's status
    /// is an Unschedulable message or an Error. Unschedulable reasons are joined with ", "; an
    /// Error stops the loop and its message stands alone. `None` when no plugin left a reason.
    pub fn post_filter_msg(&self, preemption: Option<&Status>) -> Option<String> {
        self.post_filter_msg_after(preemption, false)
    }

    /// [`Framework::post_filter_msg`] after a PreFilter rejection: when DynamicResources'
    /// PreFilter did not run (`dra_state_missing`, see
    /// [`Framework::pre_filter_rejection_skips_dra`]), its PostFilter finds no state and errs
    /// with [`DRA_STATE_NOT_FOUND`], which stands alone.
    pub fn post_filter_msg_after(
        &self,
        preemption: Option<&Status>,
        dra_state_missing: bool,
    ) -> Option<String> {
        let mut reasons: Vec<&str> = Vec::new();
        for plugin in self.profile.plugins.post_filter.iter() {
            match plugin {
                PluginName::DynamicResources if dra_state_missing => {
                    return Some(DRA_STATE_NOT_FOUND.to_string());
                }
                PluginName::DynamicResources => reasons.push(DRA_NO_CLAIMS),
                PluginName::DefaultPreemption => match preemption {
                    Some(s) if s.code == Code::Error => return Some(s.reasons.join(", ")),
                    Some(s) => reasons
                        .extend(s.reasons.iter().map(String::as_str).filter(|r| !r.is_empty())),
                    None => {}
                },
                _ => {}
            }
        }
        (!reasons.is_empty()).then(|| reasons.join(", "))
    }

    /// Whether a PreFilter rejection with `status` ended PreFilter before DynamicResources'
    /// PreFilter wrote its state (upstream `RunPreFilterPlugins` returns at the first
    /// `UnschedulableAndUnresolvable`; an `Unschedulable` one is returned after every plugin
    /// ran). A rejection without a plugin (the node-name restrictions left no node) comes from
    /// NodeAffinity, before DynamicResources in the default order.
    pub fn pre_filter_rejection_skips_dra(&self, status: &Status) -> bool {
        let order = &self.profile.plugins.pre_filter;
        let Some(dra) = order.iter().position(|p| *p == PluginName::DynamicResources) else {
            return true;
        };
        if status.code == Code::Unschedulable {
            return false;
        }
        match status.plugin.and_then(|name| order.iter().position(|p| p.as_str() == name)) {
            Some(at) => at < dra,
            None => true,
        }
    }

    /// Whether DefaultPreemption runs after a PreFilter rejection with `status`: not when
    /// DynamicResources' PostFilter, earlier in the profile, errs for want of its PreFilter
    /// state (the error ends the PostFilter plugins).
    pub fn preemption_runs_after_pre_filter(&self, status: &Status) -> bool {
        if !self.preemption_enabled() || !self.pre_filter_rejection_skips_dra(status) {
            return self.preemption_enabled();
        }
        let post = &self.profile.plugins.post_filter;
        let at = |p: PluginName| post.iter().position(|q| *q == p);
        match (at(PluginName::DynamicResources), at(PluginName::DefaultPreemption)) {
            (Some(dra), Some(dp)) => dp < dra,
            _ => true,
        }
    }

    /// DefaultPreemption's arguments.
    pub fn preemption_args(&self) -> DefaultPreemptionArgs {
        self.profile.args.default_preemption
    }

    /// Runs the PreFilter plugins in order (upstream `RunPreFilterPlugins`): a `Skip` skips that
    /// plugin's Filter; `UnschedulableAndUnresolvable` stops at once; `Unschedulable` is kept and
    /// returned after the remaining plugins ran; node-name restrictions are intersected.
    pub fn pre_filter(&self, pod: &Pod, cluster: &ClusterState) -> PreFilterOutcome {
        let mut state = CycleState::default();
        let mut rejected: Option<Status> = None;
        let mut order: Vec<PluginName> = self.profile.plugins.pre_filter.clone();
        // A filter plugin whose PreFilter is disabled still needs its state: compute it last.
        for p in &self.profile.plugins.filter {
            if !order.contains(p) {
                order.push(*p);
            }
        }
        for plugin in order {
            let result: Result<Option<BTreeSet<String>>, Status> = match plugin {
                PluginName::NodeResourcesFit => {
                    self.fit.pre_filter(pod, cluster).map(|s| state.fit = Some(s)).map(|()| None)
                }
                PluginName::NodePorts => self
                    .ports
                    .pre_filter(pod, cluster)
                    .map(|s| state.ports = Some(s))
                    .map(|()| None),
                PluginName::NodeAffinity => self.node_affinity.pre_filter(pod, cluster).map(|s| {
                    let names = s.node_names.clone();
                    state.node_affinity = Some(s);
                    names
                }),
                PluginName::InterPodAffinity => {
                    self.ipa.pre_filter(pod, cluster).map(|s| state.ipa = Some(s)).map(|()| None)
                }
                PluginName::PodTopologySpread => {
                    self.pts.pre_filter(pod, cluster).map(|s| state.pts = Some(s)).map(|()| None)
                }
                // Only as PreFilter plugins: their Filters are not modelled and need no state.
                PluginName::VolumeRestrictions
                    if self.profile.plugins.pre_filter.contains(&plugin) =>
                {
                    VolumeRestrictions::new().pre_filter(pod, cluster).map(|()| None)
                }
                PluginName::VolumeBinding if self.profile.plugins.pre_filter.contains(&plugin) => {
                    VolumeBinding::new().pre_filter(pod, cluster).map(|()| None)
                }
                _ => continue,
            };
            match result {
                Err(status) if status.code == Code::Skip => {
                    state.skip_filter.insert(plugin);
                }
                Err(status) => {
                    let status = status.with_plugin(plugin.as_str());
                    match status.code {
                        Code::Unschedulable => rejected = Some(status),
                        // Unresolvable (and errors) end PreFilter at once.
                        _ => return PreFilterOutcome::Rejected(status),
                    }
                }
                Ok(Some(names)) => {
                    state.plugins_with_nodes.insert(plugin.as_str());
                    let merged = match state.node_names.take() {
                        None => names,
                        Some(prev) => prev.intersection(&names).cloned().collect(),
                    };
                    let empty = merged.is_empty();
                    state.node_names = Some(merged);
                    if empty {
                        let plugins: Vec<&str> = state.plugins_with_nodes.iter().copied().collect();
                        let msg = if plugins.len() == 1 {
                            format!("node(s) didn't satisfy plugin {}", plugins[0])
                        } else {
                            format!(
                                "node(s) didn't satisfy plugin(s) [{}] simultaneously",
                                plugins.join(" ")
                            )
                        };
                        return PreFilterOutcome::Rejected(Status::unresolvable(msg));
                    }
                }
                Ok(None) => {}
            }
        }
        match rejected {
            Some(status) => PreFilterOutcome::Rejected(status),
            None => PreFilterOutcome::Proceed(Box::new(state)),
        }
    }

    fn run_filter(&self, plugin: PluginName, state: &CycleState, pod: &Pod, node: &Node) -> Status {
        let missing = || Status::error(format!("{}: no PreFilter state", plugin.as_str()));
        match plugin {
            PluginName::NodeUnschedulable => self.node_unschedulable.filter(pod, node),
            PluginName::NodeName => self.node_name.filter(pod, node),
            PluginName::TaintToleration => self.taint.filter(pod, node),
            PluginName::NodeAffinity => self.node_affinity.filter(pod, node),
            PluginName::NodePorts => match &state.ports {
                Some(s) => self.ports.filter(s, pod, node),
                None => missing(),
            },
            PluginName::NodeResourcesFit => match &state.fit {
                Some(s) => self.fit.filter(s, pod, node),
                None => missing(),
            },
            PluginName::InterPodAffinity => match &state.ipa {
                Some(s) => self.ipa.filter(s, pod, node),
                None => missing(),
            },
            PluginName::PodTopologySpread => match &state.pts {
                Some(s) => self.pts.filter(s, pod, node),
                None => missing(),
            },
            _ => Status::success(),
        }
    }

    /// Runs the Filter plugins in order and returns the first failure (upstream
    /// `RunFilterPlugins`), tagged with its plugin; success when every plugin passes.
    pub fn filter(&self, state: &CycleState, pod: &Pod, node: &Node) -> Status {
        for &plugin in &self.profile.plugins.filter {
            if !plugin.evaluated() || state.skip_filter.contains(&plugin) {
                continue;
            }
            let status = self.run_filter(plugin, state, pod, node);
            if !status.is_success() {
                return status.with_plugin(plugin.as_str());
            }
        }
        Status::success()
    }

    /// Whether [`Framework::filter`] succeeds on the node, without building statuses for the
    /// plugins that can say so cheaply (NodeResourcesFit).
    pub fn passes(&self, state: &CycleState, pod: &Pod, node: &Node) -> bool {
        for &plugin in &self.profile.plugins.filter {
            if !plugin.evaluated() || state.skip_filter.contains(&plugin) {
                continue;
            }
            let passes = match (plugin, &state.fit) {
                (PluginName::NodeResourcesFit, Some(fit)) => self.fit.passes(fit, node),
                _ => self.run_filter(plugin, state, pod, node).is_success(),
            };
            if !passes {
                return false;
            }
        }
        true
    }

    /// [`Framework::filter`] with the pods nominated to the node (upstream
    /// `RunFilterPluginsWithNominatedPods`): the nominated pods of equal or higher priority
    /// than `pod` are added to the node and to the PreFilter state first; if the pod passes
    /// with them, it must also pass without them (affinity may need them absent).
    pub fn filter_with_nominated(
        &self,
        state: &CycleState,
        pod: &Pod,
        node: &Node,
        nominated: &[Arc<Pod>],
    ) -> Status {
        let ahead: Vec<&Arc<Pod>> = nominated
            .iter()
            .filter(|p| {
                p.priority >= pod.priority && !(p.namespace == pod.namespace && p.name == pod.name)
            })
            .collect();
        if ahead.is_empty() {
            return self.filter(state, pod, node);
        }
        let mut with = node.clone();
        let mut with_state = state.clone();
        for p in ahead {
            with.add_pod(Arc::clone(p));
            with_state.add_pod(p, &with);
        }
        let status = self.filter(&with_state, pod, &with);
        if !status.is_success() {
            return status;
        }
        self.filter(state, pod, node)
    }

    /// Runs every Filter plugin on the node, without stopping at the first failure (for
    /// `explain`). Skipped plugins report `Skip`.
    pub fn filter_each(
        &self,
        state: &CycleState,
        pod: &Pod,
        node: &Node,
    ) -> Vec<(PluginName, Status)> {
        self.profile
            .plugins
            .filter
            .iter()
            .filter(|p| p.evaluated())
            .map(|&plugin| {
                let status = if state.skip_filter.contains(&plugin) {
                    Status::skip()
                } else {
                    self.run_filter(plugin, state, pod, node)
                };
                (plugin, status.with_plugin(plugin.as_str()))
            })
            .collect()
    }

    /// Runs PreScore, Score and NormalizeScore over the feasible nodes and weights the scores
    /// (upstream `RunPreScorePlugins` + `RunScorePlugins`). An `Err` is a scheduler error (a
    /// plugin failed or produced a score outside 0–100), not an unschedulable outcome.
    pub fn score(
        &self,
        pod: &Pod,
        cluster: &ClusterState,
        feasible: &[usize],
    ) -> Result<Vec<NodeScores>, Status> {
        let mut out: Vec<NodeScores> = feasible
            .iter()
            .map(|&node| NodeScores {
                node,
                plugins: Vec::with_capacity(self.profile.plugins.score.len()),
                total: 0,
            })
            .collect();
        self.score_each(pod, cluster, feasible, |i, score| {
            let ns = &mut out[i];
            ns.total += score.normalized * score.weight;
            ns.plugins.push(score);
        })?;
        Ok(out)
    }

    /// [`Framework::score`]'s totals only, aligned with `feasible` (what the scheduler ranks
    /// nodes by), without the per-plugin breakdown.
    pub fn score_totals(
        &self,
        pod: &Pod,
        cluster: &ClusterState,
        feasible: &[usize],
    ) -> Result<Vec<i64>, Status> {
        let mut totals = vec![0; feasible.len()];
        self.score_each(pod, cluster, feasible, |i, score| {
            totals[i] += score.normalized * score.weight;
        })?;
        Ok(totals)
    }

    /// Runs PreScore, Score and NormalizeScore of every scoring plugin and hands each node's
    /// (position in `feasible`) score to `each`, plugin by plugin.
    fn score_each(
        &self,
        pod: &Pod,
        cluster: &ClusterState,
        feasible: &[usize],
        mut each: impl FnMut(usize, PluginScore),
    ) -> Result<(), Status> {
        let nodes: Vec<&Node> = feasible.iter().map(|&i| &cluster.nodes[i]).collect();
        for &(plugin, weight) in &self.profile.plugins.score {
            if !plugin.evaluated() {
                continue;
            }
            let raw = match self.score_plugin(plugin, pod, cluster, feasible, &nodes)? {
                Some(raw) => raw,
                None => continue, // PreScore said Skip.
            };
            let (raw, normalized) = raw;
            for (i, &n) in normalized.iter().enumerate() {
                if !(MIN_NODE_SCORE..=MAX_NODE_SCORE).contains(&n) {
                    return Err(Status::error(format!(
                        "plugin {:?} returns an invalid score {n}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
                        plugin.as_str()
                    )));
                }
                each(i, PluginScore { plugin, raw: raw[i], normalized: n, weight });
            }
        }
        Ok(())
    }

    /// One plugin's raw and normalized scores over `feasible` (`nodes` are those nodes); `None`
    /// when PreScore skipped. Every scoring plugin computes its state in PreScore, so kplace
    /// runs PreScore for a scored plugin even if a profile disabled it there (upstream would
    /// fail such a cycle).
    #[allow(clippy::type_complexity)]
    fn score_plugin(
        &self,
        plugin: PluginName,
        pod: &Pod,
        cluster: &ClusterState,
        feasible: &[usize],
        nodes: &[&Node],
    ) -> Result<Option<(Vec<i64>, Vec<i64>)>, Status> {
        // A PreScore result of Skip skips Score; an error fails the cycle.
        fn pre<T>(r: Result<T, Status>, plugin: PluginName) -> Result<Option<T>, Status> {
            match r {
                Ok(s) => Ok(Some(s)),
                Err(s) if s.code == Code::Skip => Ok(None),
                Err(s) => Err(s.with_plugin(plugin.as_str())),
            }
        }
        let raw_and_norm = match plugin {
            PluginName::TaintToleration => {
                let Some(s) = pre(self.taint.pre_score(pod, cluster, feasible), plugin)? else {
                    return Ok(None);
                };
                let raw: Vec<i64> = nodes.iter().map(|n| self.taint.score(&s, pod, n)).collect();
                let mut norm = raw.clone();
                self.taint.normalize_score(&s, &mut norm);
                (raw, norm)
            }
            PluginName::NodeAffinity => {
                let Some(s) = pre(self.node_affinity.pre_score(pod, cluster, feasible), plugin)?
                else {
                    return Ok(None);
                };
                let raw: Vec<i64> =
                    nodes.iter().map(|n| self.node_affinity.score(&s, pod, n)).collect();
                let mut norm = raw.clone();
                self.node_affinity.normalize_score(&s, &mut norm);
                (raw, norm)
            }
            PluginName::NodeResourcesFit => {
                let Some(s) = pre(self.fit.pre_score(pod, cluster, feasible), plugin)? else {
                    return Ok(None);
                };
                let raw: Vec<i64> = nodes.iter().map(|n| self.fit.score(&s, pod, n)).collect();
                (raw.clone(), raw)
            }
            PluginName::NodeResourcesBalancedAllocation => {
                let Some(s) = pre(self.balanced.pre_score(pod, cluster, feasible), plugin)? else {
                    return Ok(None);
                };
                let raw: Vec<i64> = nodes.iter().map(|n| self.balanced.score(&s, pod, n)).collect();
                (raw.clone(), raw)
            }
            PluginName::ImageLocality => {
                let Some(s) = pre(self.image.pre_score(pod, cluster, feasible), plugin)? else {
                    return Ok(None);
                };
                let raw: Vec<i64> = nodes.iter().map(|n| self.image.score(&s, pod, n)).collect();
                (raw.clone(), raw)
            }
            PluginName::InterPodAffinity => {
                let Some(s) = pre(self.ipa.pre_score(pod, cluster, feasible), plugin)? else {
                    return Ok(None);
                };
                let raw: Vec<i64> = nodes.iter().map(|n| self.ipa.score(&s, pod, n)).collect();
                let mut norm = raw.clone();
                self.ipa.normalize_score(&s, &mut norm);
                (raw, norm)
            }
            PluginName::PodTopologySpread => {
                let Some(s) = pre(self.pts.pre_score(pod, cluster, feasible), plugin)? else {
                    return Ok(None);
                };
                let raw: Vec<i64> = nodes.iter().map(|n| self.pts.score(&s, pod, n)).collect();
                let mut norm = raw.clone();
                self.pts.normalize_score(&s, &mut norm);
                (raw, norm)
            }
            _ => return Ok(None),
        };
        Ok(Some(raw_and_norm))
    }

    /// A filter oracle for preemption: PreFilter and Filter of `pod` with pods removed from a
    /// node, updating the inter-pod state incrementally as upstream's `RemovePod` extensions do.
    pub fn oracle<'a>(&'a self, pod: &'a Pod, cluster: &'a ClusterState) -> Oracle<'a> {
        let state = match self.pre_filter(pod, cluster) {
            PreFilterOutcome::Proceed(s) => Some(*s),
            PreFilterOutcome::Rejected(_) => None,
        };
        Oracle { fw: self, cluster, state, nominated: None }
    }
}

/// See [`Framework::oracle`].
#[derive(Debug)]
pub struct Oracle<'a> {
    fw: &'a Framework,
    cluster: &'a ClusterState,
    state: Option<CycleState>,
    nominated: Option<&'a BTreeMap<usize, Vec<Arc<Pod>>>>,
}

impl<'a> Oracle<'a> {
    /// Runs the filters with the pods nominated to each node (by node index) counted, as
    /// upstream's `SelectVictimsOnNode` does (`RunFilterPluginsWithNominatedPods`).
    pub fn with_nominated(mut self, nominated: &'a BTreeMap<usize, Vec<Arc<Pod>>>) -> Self {
        self.nominated = Some(nominated);
        self
    }
}

impl crate::baseline::preemption::FilterOracle for Oracle<'_> {
    fn filter_without(&self, pod: &Pod, node_idx: usize, removed: &[Arc<Pod>]) -> Status {
        let Some(base) = &self.state else {
            return Status::unresolvable("PreFilter rejected the pod");
        };
        let Some(original) = self.cluster.nodes.get(node_idx) else {
            return Status::error(format!("no node at index {node_idx}"));
        };
        let mut node = original.clone();
        let mut state = base.clone();
        for victim in removed {
            if node.remove_pod(&victim.namespace, &victim.name).is_some() {
                state.remove_pod(victim, original);
            }
        }
        if let Some(names) = state.node_names()
            && !names.contains(&node.name)
        {
            return Status::unresolvable("node(s) didn't satisfy plugin(s)");
        }
        match self.nominated.and_then(|m| m.get(&node_idx)) {
            Some(pods) => self.fw.filter_with_nominated(&state, pod, &node, pods),
            None => self.fw.filter(&state, pod, &node),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_post_filter(plugins: Vec<PluginName>) -> Framework {
        let mut profile = Profile::default_profile();
        profile.plugins.post_filter = plugins;
        Framework::new(&profile).unwrap()
    }

    #[test]
    fn post_filter_message_joins_the_reasons_of_the_profiles_post_filter_plugins() {
        use PluginName::{DefaultPreemption as Dp, DynamicResources as Dra};
        let preempt =
            "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.";
        let unschedulable = Status::unschedulable(preempt);
        let error = Status::error("preemption: boom");
        type Case<'a> = (&'a str, Vec<PluginName>, Option<&'a Status>, Option<String>);
        let cases: [Case; 6] = [
            (
                "the default profile puts DynamicResources' reason before preemption's",
                vec![Dra, Dp],
                Some(&unschedulable),
                Some(format!("{DRA_NO_CLAIMS}, {preempt}")),
            ),
            (
                "an error from preemption stands alone",
                vec![Dra, Dp],
                Some(&error),
                Some("preemption: boom".to_string()),
            ),
            (
                "without DefaultPreemption only DynamicResources speaks",
                vec![Dra],
                None,
                Some(DRA_NO_CLAIMS.to_string()),
            ),
            (
                "without DynamicResources only preemption speaks",
                vec![Dp],
                Some(&unschedulable),
                Some(preempt.to_string()),
            ),
            ("no PostFilter plugin leaves no message", vec![], None, None),
            (
                "plugins speak in the profile's order",
                vec![Dp, Dra],
                Some(&unschedulable),
                Some(format!("{preempt}, {DRA_NO_CLAIMS}")),
            ),
        ];
        for (name, plugins, preemption, want) in cases {
            let fw = with_post_filter(plugins);
            assert_eq!(fw.post_filter_msg(preemption), want, "{name}");
        }
    }
}
