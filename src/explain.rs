//! `kplace explain`: why a pod is pending, or why it landed where it did.
//!
//! Input: the cluster model, the pending pods, a configuration and one pod; output: an
//! [`Explanation`] with, for every node, each filter plugin's verdict and reasons and, for the
//! feasible nodes, each score plugin's raw, normalized and weighted score and the total. The
//! numbers are those kube-scheduler logs at `-v=10`.
//!
//! By default the pod is explained in the state the sequential scheduler (`baseline`) saw when
//! the pod's turn came: every pod ahead of it in the queue has been placed first. With `as_is`
//! it is explained against the snapshot as it is.

use serde::Serialize;

use crate::baseline::scheduler::{Baseline, BaselineOptions, CycleResult, queue_order};
use crate::framework::config::SchedulerConfig;
use crate::framework::fit_error::{Diagnosis, FitError};
use crate::framework::runtime::{Framework, FrameworkError, PreFilterOutcome};
use crate::framework::{Code, Status};
use crate::model::{ClusterState, Pod};
use crate::progress::Progress;

/// Why `explain` could not run.
#[derive(Debug, thiserror::Error)]
pub enum ExplainError {
    /// No pending pod has that key.
    #[error("pod {0:?} is not a pending pod kplace schedules (expected namespace/name)")]
    UnknownPod(String),
    /// `--node` names no node.
    #[error("node {0:?} is not in the snapshot")]
    UnknownNode(String),
    /// The profile could not be built.
    #[error(transparent)]
    Framework(#[from] FrameworkError),
}

/// One filter plugin's verdict on one node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FilterVerdict {
    /// Plugin name.
    pub plugin: String,
    /// `Success`, `Unschedulable`, `UnschedulableAndUnresolvable`, `Skip` or `Error`.
    pub code: String,
    /// Upstream's reasons.
    pub reasons: Vec<String>,
}

/// One score plugin's score on one node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScoreLine {
    /// Plugin name.
    pub plugin: String,
    /// Raw score from `Score`.
    pub raw: i64,
    /// After `NormalizeScore` (0–100).
    pub normalized: i64,
    /// Weight in the profile.
    pub weight: i64,
    /// `normalized × weight`.
    pub weighted: i64,
}

/// One node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeExplanation {
    /// Node name.
    pub node: String,
    /// Whether every filter passed.
    pub feasible: bool,
    /// Every filter plugin's verdict, in profile order.
    pub filters: Vec<FilterVerdict>,
    /// Score plugins (feasible nodes only), in profile order.
    pub scores: Vec<ScoreLine>,
    /// Total weighted score (feasible nodes only).
    pub total: Option<i64>,
}

/// The whole explanation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Explanation {
    /// `namespace/name`.
    pub pod: String,
    /// The profile (scheduler name) that schedules it.
    pub scheduler_name: String,
    /// Its priority.
    pub priority: i32,
    /// Position in the scheduling queue (0 = first).
    pub queue_position: usize,
    /// Which state the nodes are shown in.
    pub state: String,
    /// The PreFilter rejection, if PreFilter rejected the pod.
    pub pre_filter_rejection: Option<String>,
    /// Nodes, in name order (only `--node`'s when given).
    pub nodes: Vec<NodeExplanation>,
    /// Feasible nodes with the highest total score (ties are broken at random by the scheduler).
    pub best_nodes: Vec<String>,
    /// The FitError message when no node is feasible.
    pub message: Option<String>,
    /// What `baseline` decided for this pod in that state (with its node sampling and tie-break).
    pub baseline_decision: Option<String>,
}

fn code_name(code: Code) -> &'static str {
    match code {
        Code::Success => "Success",
        Code::Error => "Error",
        Code::Unschedulable => "Unschedulable",
        Code::UnschedulableAndUnresolvable => "UnschedulableAndUnresolvable",
        Code::Skip => "Skip",
    }
}

/// Options of `explain`.
#[derive(Debug, Clone, Default)]
pub struct ExplainOptions {
    /// Only this node.
    pub node: Option<String>,
    /// Explain against the snapshot as it is, not after the pods ahead in the queue.
    pub as_is: bool,
    /// Baseline options (seed, sampling) used to reach the pod's turn.
    pub baseline: BaselineOptions,
}

/// Explains pod `key` (`namespace/name`).
pub fn explain(
    cluster: ClusterState,
    pending: &[Pod],
    config: &SchedulerConfig,
    key: &str,
    options: &ExplainOptions,
) -> Result<Explanation, ExplainError> {
    explain_with_progress(cluster, pending, config, key, options, &Progress::hidden())
}

/// [`explain`], reporting the pods scheduled ahead of the target as steps of a `progress` bar.
pub fn explain_with_progress(
    cluster: ClusterState,
    pending: &[Pod],
    config: &SchedulerConfig,
    key: &str,
    options: &ExplainOptions,
    progress: &Progress,
) -> Result<Explanation, ExplainError> {
    let target = pending
        .iter()
        .position(|p| p.key() == key)
        .ok_or_else(|| ExplainError::UnknownPod(key.to_string()))?;
    if let Some(n) = &options.node
        && cluster.node_index(n).is_none()
    {
        return Err(ExplainError::UnknownNode(n.clone()));
    }
    let order = queue_order(pending);
    let queue_position = order.iter().position(|&i| i == target).unwrap_or(0);
    let mut sched = Baseline::new(cluster, options.baseline.clone());
    let mut frameworks = std::collections::BTreeMap::<String, Framework>::new();
    let fw_for = |name: &str| -> Result<Framework, FrameworkError> {
        Framework::for_scheduler(config, name)
    };
    let mut placed_before = 0;
    if !options.as_is {
        let task = progress.bar("explain: pods ahead", queue_position as u64);
        for &i in order.iter().take(queue_position) {
            task.inc(1);
            let p = &pending[i];
            if !frameworks.contains_key(&p.scheduler_name) {
                frameworks.insert(p.scheduler_name.clone(), fw_for(&p.scheduler_name)?);
            }
            let fw = &frameworks[&p.scheduler_name];
            if let CycleResult::Scheduled(_) | CycleResult::Preempted(..) =
                sched.schedule_one(fw, p)
            {
                placed_before += 1;
            }
        }
    }
    let pod = &pending[target];
    let fw = fw_for(&pod.scheduler_name)?;
    let state_desc = if options.as_is {
        "the snapshot as it is".to_string()
    } else {
        format!(
            "after baseline scheduled the {queue_position} pod(s) ahead in the queue ({placed_before} placed)"
        )
    };

    let cluster = &sched.cluster;
    let mut out = Explanation {
        pod: pod.key(),
        scheduler_name: pod.scheduler_name.clone(),
        priority: pod.priority,
        queue_position,
        state: state_desc,
        pre_filter_rejection: None,
        nodes: Vec::new(),
        best_nodes: Vec::new(),
        message: None,
        baseline_decision: None,
    };
    let wanted = |name: &str| options.node.as_deref().is_none_or(|n| n == name);
    match fw.pre_filter(pod, cluster) {
        PreFilterOutcome::Rejected(status) => {
            let msg = status.reasons.join(", ");
            out.pre_filter_rejection = Some(format!("{}: {msg}", status.plugin.unwrap_or("")));
            let d = Diagnosis { pre_filter_msg: Some(msg), ..Default::default() };
            out.message =
                Some(FitError { num_all_nodes: cluster.nodes.len(), diagnosis: d }.message());
        }
        PreFilterOutcome::Proceed(state) => {
            let mut feasible = Vec::new();
            let mut diagnosis = Diagnosis::default();
            for (i, node) in cluster.nodes.iter().enumerate() {
                let restricted =
                    state.node_names().is_some_and(|names| !names.contains(&node.name));
                let verdicts = if restricted {
                    let plugins = state.pre_filter_restricting_plugins().join(" ");
                    vec![(
                        "PreFilter",
                        Status::unresolvable(format!(
                            "node(s) didn't satisfy plugin(s) [{plugins}]"
                        )),
                    )]
                } else {
                    fw.filter_each(&state, pod, node)
                        .into_iter()
                        .map(|(p, s)| (p.as_str(), s))
                        .collect()
                };
                let first_failure =
                    verdicts.iter().find(|(_, s)| s.is_rejected() || s.code == Code::Error);
                match first_failure {
                    None => feasible.push(i),
                    Some((_, s)) => {
                        diagnosis.node_statuses.insert(i, s.clone());
                    }
                }
                if wanted(&node.name) {
                    out.nodes.push(NodeExplanation {
                        node: node.name.clone(),
                        feasible: first_failure.is_none(),
                        filters: verdicts
                            .into_iter()
                            .map(|(p, s)| FilterVerdict {
                                plugin: p.to_string(),
                                code: code_name(s.code).to_string(),
                                reasons: s.reasons,
                            })
                            .collect(),
                        scores: Vec::new(),
                        total: None,
                    });
                }
            }
            if feasible.is_empty() {
                out.message =
                    Some(FitError { num_all_nodes: cluster.nodes.len(), diagnosis }.message());
            } else if let Ok(scores) = fw.score(pod, cluster, &feasible) {
                let best = scores.iter().map(|s| s.total).max().unwrap_or(0);
                for s in &scores {
                    let name = &cluster.nodes[s.node].name;
                    if s.total == best {
                        out.best_nodes.push(name.clone());
                    }
                    if let Some(n) = out.nodes.iter_mut().find(|n| &n.node == name) {
                        n.total = Some(s.total);
                        n.scores = s
                            .plugins
                            .iter()
                            .map(|p| ScoreLine {
                                plugin: p.plugin.as_str().to_string(),
                                raw: p.raw,
                                normalized: p.normalized,
                                weight: p.weight,
                                weighted: p.normalized * p.weight,
                            })
                            .collect();
                    }
                }
            }
        }
    }
    out.baseline_decision = Some(match sched.schedule_one(&fw, pod) {
        CycleResult::Scheduled(n) => format!("placed on {}", sched.cluster.nodes[n].name),
        CycleResult::Preempted(n, victims) => format!(
            "placed on {} after preempting {}",
            sched.cluster.nodes[n].name,
            victims.iter().map(|v| v.key()).collect::<Vec<_>>().join(", ")
        ),
        CycleResult::Unschedulable(e) => format!("unschedulable: {}", e.message()),
        CycleResult::NoNodes => "unschedulable: no nodes available to schedule pods".to_string(),
        CycleResult::Error(e) => format!("scheduler error: {e}"),
    });
    Ok(out)
}
