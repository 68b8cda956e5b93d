//! `kplace explain`: why a pod is pending, or why it landed where it did ([`placed`]: a pod a
//! batch plan placed, or a bound pod).
//!
//! Input: the cluster model, the pending pods, a configuration and one pod; output: an
//! [`Explanation`] with, for every node, each filter plugin's verdict and reasons and, for the
//! feasible nodes, each score plugin's raw, normalized and weighted score and the total. The
//! numbers are those kube-scheduler logs at `-v=10`.
//!
//! By default the pod is explained in the state the sequential scheduler (`baseline`) saw when
//! the pod's turn came: every pod ahead of it in the queue has been placed first. With `as_is`
//! it is explained against the snapshot as it is.
//!
//! Backends ([`explain_on`]): with an [`Evaluator`], the pods ahead are scheduled as `baseline`
//! schedules them on that backend ([`StaticFilters`]), and the pod's verdicts and scores come
//! from its matrix row ([`crate::eval`]) — unless some amount of the pod or of a node is not a
//! whole number of encoded units, where NodeResourcesFit's matrix cells could round; the
//! framework explains it then. Either way the explanation is the same; `evaluated_on` says
//! which was used.

pub mod placed;

pub use placed::{PlacedExplanation, explain_bound, explain_planned};

use serde::Serialize;

use crate::baseline::scheduler::{
    Baseline, BaselineOptions, CycleResult, StaticFilters, queue_order,
};
use crate::encode::tensors::{CLASS_INEXACT_UNITS, NODE_INEXACT_UNITS};
use crate::eval::{Check, EvalError, Evaluator};
use crate::framework::config::SchedulerConfig;
use crate::framework::fit_error::{Diagnosis, FitError};
use crate::framework::profile::PluginName;
use crate::framework::runtime::{
    CycleState, Framework, FrameworkError, NodeScores, PluginScore, PreFilterOutcome,
};
use crate::framework::{Code, Status};
use crate::model::{ClusterState, Pod};
use crate::progress::Progress;

/// Why `explain` could not run.
#[derive(Debug, thiserror::Error)]
pub enum ExplainError {
    /// No pending pod has that key.
    #[error("pod {0:?} is not a pending pod kplace schedules (expected namespace/name)")]
    UnknownPod(String),
    /// The plan does not place the pod.
    #[error("pod {0:?} is not among the plan's placements")]
    NotInPlan(String),
    /// `--node` names no node.
    #[error("node {0:?} is not in the snapshot")]
    UnknownNode(String),
    /// The profile could not be built.
    #[error(transparent)]
    Framework(#[from] FrameworkError),
    /// The matrix row could not be evaluated (e.g. the GPU failed).
    #[error("evaluation: {0}")]
    Eval(#[from] EvalError),
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

impl ScoreLine {
    /// The lines of one node's per-plugin scores, in the profile's score order.
    pub fn all(plugins: &[crate::framework::runtime::PluginScore]) -> Vec<ScoreLine> {
        plugins
            .iter()
            .map(|p| ScoreLine {
                plugin: p.plugin.as_str().to_string(),
                raw: p.raw,
                normalized: p.normalized,
                weight: p.weight,
                weighted: p.normalized * p.weight,
            })
            .collect()
    }
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
    /// Where the pod's verdicts and scores were evaluated: `matrix (<backend>)` or
    /// `framework (cpu)` (with why, when a matrix was asked for).
    pub evaluated_on: String,
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

/// The pod's filter verdicts on every node and its scores on the feasible ones, from a matrix
/// row evaluated on `evaluator` (the framework's numbers, as [`crate::eval`] proves them
/// equal): per node, each evaluated filter plugin's status in profile order (`Skip` where its
/// PreFilter skipped); scores as `Framework::score` gives them over every feasible node (`Err`
/// when scoring fails). `None` when the matrix cannot be exact here: some amount of the pod or
/// of a node is not a whole number of encoded units (NodeResourcesFit would round).
#[allow(clippy::type_complexity)]
fn matrix_row(
    fw: &Framework,
    pod: &Pod,
    cluster: &ClusterState,
    state: &CycleState,
    evaluator: &mut Evaluator,
) -> Result<Option<(Vec<Vec<(&'static str, Status)>>, Result<Vec<NodeScores>, ()>)>, ExplainError> {
    let pods = std::slice::from_ref(pod);
    let enc = crate::encode::encode(cluster, pods).map_err(EvalError::from)?;
    let t = &enc.tensors;
    let inexact = t.node_flags.iter().any(|f| f & NODE_INEXACT_UNITS != 0)
        || t.class_flags.iter().any(|f| f & CLASS_INEXACT_UNITS != 0);
    if inexact {
        return Ok(None);
    }
    let m = evaluator.evaluate(fw.profile(), cluster, pods, &enc)?;
    let c = 0;
    let filters: Vec<PluginName> =
        fw.profile().plugins.filter.iter().copied().filter(|p| p.evaluated()).collect();
    let verdicts = (0..m.num_nodes)
        .map(|n| {
            let word = m.filter[m.cell(c, n)];
            filters
                .iter()
                .map(|&plugin| {
                    let status = if state.skips_filter(plugin) {
                        Status::skip()
                    } else {
                        let own = Check::of_plugin(plugin);
                        match m
                            .check_order
                            .iter()
                            .find(|check| own.contains(check) && word & check.bit() != 0)
                        {
                            Some(&check) => m.check_status(c, n, check),
                            None => Status::success(),
                        }
                    };
                    (plugin.as_str(), status)
                })
                .collect()
        })
        .collect();
    let scores = if m.score_errors[c].is_some() {
        Err(())
    } else {
        Ok((0..m.num_nodes)
            .filter(|&n| m.feasible(c, n))
            .map(|n| {
                let cell = m.cell(c, n);
                let plugins: Vec<PluginScore> = m
                    .scores
                    .iter()
                    .filter(|plane| !plane.skipped[c])
                    .map(|plane| PluginScore {
                        plugin: plane.plugin,
                        raw: i64::from(plane.raw[cell]),
                        normalized: i64::from(plane.normalized[cell]),
                        weight: plane.weight,
                    })
                    .collect();
                NodeScores { node: n, total: i64::from(m.total[cell]), plugins }
            })
            .collect())
    };
    Ok(Some((verdicts, scores)))
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
    explain_on(cluster, pending, config, key, options, progress, None)
}

/// [`explain_with_progress`] with the pod's verdicts and scores taken from a matrix row
/// evaluated on `evaluator` (CPU or GPU) when one is given and the amounts allow an exact
/// matrix; the explanation is the same (`evaluated_on` says which was used).
pub fn explain_on(
    cluster: ClusterState,
    pending: &[Pod],
    config: &SchedulerConfig,
    key: &str,
    options: &ExplainOptions,
    progress: &Progress,
    evaluator: Option<&mut Evaluator>,
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
    let mut evaluator = evaluator;
    let fw_for = |name: &str| -> Result<Framework, FrameworkError> {
        Framework::for_scheduler(config, name)
    };
    let mut placed_before = 0;
    let mut sched = Baseline::new(cluster, options.baseline.clone());
    if !options.as_is {
        let ahead: Vec<usize> = order.iter().take(queue_position).copied().collect();
        let mut frameworks = std::collections::BTreeMap::<String, Framework>::new();
        for &i in &ahead {
            let name = &pending[i].scheduler_name;
            if !frameworks.contains_key(name) {
                frameworks.insert(name.clone(), fw_for(name)?);
            }
        }
        // The pods ahead are scheduled as `baseline` on the same backend schedules them.
        let statics = match evaluator.as_deref_mut() {
            Some(e) => StaticFilters::evaluate(&sched.cluster, pending, &frameworks, e)?,
            None => StaticFilters::default(),
        };
        let task = progress.bar("explain: pods ahead", queue_position as u64);
        for &i in &ahead {
            task.inc(1);
            let p = &pending[i];
            let fw = &frameworks[&p.scheduler_name];
            if let CycleResult::Scheduled(_) | CycleResult::Preempted(..) =
                sched.schedule_one_with(fw, p, statics.row(i))
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
        evaluated_on: "framework (cpu)".to_string(),
    };
    let wanted = |name: &str| options.node.as_deref().is_none_or(|n| n == name);
    match fw.pre_filter(pod, cluster) {
        PreFilterOutcome::Rejected(status) => {
            let msg = status.reasons.join(", ");
            out.pre_filter_rejection = Some(format!("{}: {msg}", status.plugin.unwrap_or("")));
            // Without DefaultPreemption (DynamicResources' PostFilter errs first when its
            // PreFilter never ran), the PostFilter part is known without a preemption run.
            let post_filter_msg = (!fw.preemption_runs_after_pre_filter(&status)).then(|| {
                fw.post_filter_msg_after(None, fw.pre_filter_rejection_skips_dra(&status))
            });
            let d = Diagnosis {
                pre_filter_msg: Some(msg),
                post_filter_msg: post_filter_msg.flatten(),
                ..Default::default()
            };
            out.message =
                Some(FitError { num_all_nodes: cluster.nodes.len(), diagnosis: d }.message());
        }
        PreFilterOutcome::Proceed(state) => {
            let (rows, evaluated_on) = match evaluator {
                Some(evaluator) => match matrix_row(&fw, pod, cluster, &state, evaluator)? {
                    Some(rows) => (Some(rows), format!("matrix ({})", evaluator.describe())),
                    None => (
                        None,
                        "framework (cpu): some amounts are not whole encoded units".to_string(),
                    ),
                },
                None => (None, "framework (cpu)".to_string()),
            };
            out.evaluated_on = evaluated_on;
            let (mut matrix_verdicts, matrix_scores) = match rows {
                Some((v, s)) => (Some(v), Some(s)),
                None => (None, None),
            };
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
                } else if let Some(rows) = matrix_verdicts.as_mut() {
                    std::mem::take(&mut rows[i])
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
            } else if let Some(Ok(scores)) = matrix_scores
                .map(|s| {
                    s.map(|all| all.into_iter().filter(|s| feasible.contains(&s.node)).collect())
                })
                .or_else(|| Some(fw.score(pod, cluster, &feasible).map_err(|_| ())))
            {
                let best = scores.iter().map(|s| s.total).max().unwrap_or(0);
                for s in &scores {
                    let name = &cluster.nodes[s.node].name;
                    if s.total == best {
                        out.best_nodes.push(name.clone());
                    }
                    if let Some(n) = out.nodes.iter_mut().find(|n| &n.node == name) {
                        n.total = Some(s.total);
                        n.scores = ScoreLine::all(&s.plugins);
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
