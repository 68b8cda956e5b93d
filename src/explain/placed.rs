//! `kplace explain` for a pod that has a node: why a batch plan put it there (`--plan`), or why
//! a bound pod is where it is.
//!
//! Input: the cluster model, the pending pods, a configuration, the pod and where it is — a
//! [`Plan`] placement, or its binding in the snapshot. Output: a [`PlacedExplanation`]: the
//! pod's filter verdicts and per-plugin scores on its node and on every other node
//! ([`super::NodeExplanation`], the framework's numbers, as `explain` shows them for a pending
//! pod), the runner-up node, and for every node that would have scored higher the rule that
//! excluded it.
//!
//! The states (PreFilter, Filter and Score see the pod itself removed):
//!
//! * **Plan**: the pod's node is judged in the state *at its placement*: the snapshot with the
//!   plan's evictions applied and the placements listed before it (the plan lists placements
//!   in the order they are valid one after the other). The nodes that would be better are those
//!   scoring higher than the chosen node on the snapshot as it is (evictions applied, no
//!   placement). For each, the reason comes from the state at placement: the first filter that
//!   fails — capacity taken by earlier placements of the plan (NodeResourcesFit, with the pods
//!   the plan put there), a pod (anti-)affinity or host-port conflict, a spread constraint —
//!   or the score it fell to. A node still feasible and scoring at least as high is said to be:
//!   the batch solver places whole classes of pods against scores evaluated once per priority
//!   tier, so it need not take the best node of the moment.
//! * **Bound**: the snapshot with the pod taken out — what kube-scheduler would see if the pod
//!   came back now. The state it saw when it bound the pod is not in the snapshot.
//!
//! Upstream counterpart: the scheduler's per-node diagnosis and scores at `-v=10`
//! (`pkg/scheduler/schedule_one.go`).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use super::{ExplainError, FilterVerdict, NodeExplanation, ScoreLine, code_name};
use crate::framework::config::SchedulerConfig;
use crate::framework::runtime::{Framework, PreFilterOutcome};
use crate::framework::{Code, Status};
use crate::model::{ClusterState, Pod};
use crate::plan::Plan;

/// At most this many better nodes are explained (the `--node` one always is).
pub const MAX_ALTERNATIVES: usize = 10;

/// A node that would have been better, and what kept the pod off it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Alternative {
    /// Node name.
    pub node: String,
    /// Whether it was asked about (`--node`) rather than found scoring higher.
    pub asked: bool,
    /// Its total score on the snapshot as it is (`None`: infeasible there too).
    pub score_as_is: Option<i64>,
    /// Its verdicts and scores in the state the pod was judged in.
    pub cells: NodeExplanation,
    /// The rule that excluded it, in words.
    pub why: String,
}

/// Why a placed or bound pod is where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlacedExplanation {
    /// `namespace/name`.
    pub pod: String,
    /// The profile (scheduler name) that schedules it.
    pub scheduler_name: String,
    /// Its priority.
    pub priority: i32,
    /// `plan` or `bound`.
    pub source: String,
    /// The plan's `summary.strategy` (plans only).
    pub strategy: Option<String>,
    /// The node it is on.
    pub node: String,
    /// Its position among the plan's placements (0 = first; plans only).
    pub position: Option<usize>,
    /// The state its verdicts and scores are shown in.
    pub state: String,
    /// Feasible nodes in that state.
    pub feasible_nodes: usize,
    /// Its node's verdicts and scores.
    pub chosen: NodeExplanation,
    /// The feasible node with the highest total after its node, if any.
    pub runner_up: Option<NodeExplanation>,
    /// Nodes that scored higher than its node on the snapshot as it is (at most
    /// [`MAX_ALTERNATIVES`], highest first; the `--node` node always), with the reason.
    pub alternatives: Vec<Alternative>,
    /// The explanation in sentences.
    pub summary: Vec<String>,
}

/// Every node's verdicts and (feasible nodes) scores of `pod` on `cluster`, in node order, and
/// the PreFilter rejection if any.
fn evaluate(
    fw: &Framework,
    pod: &Pod,
    cluster: &ClusterState,
) -> (Vec<NodeExplanation>, Option<String>) {
    let mut out: Vec<NodeExplanation> = cluster
        .nodes
        .iter()
        .map(|n| NodeExplanation {
            node: n.name.clone(),
            feasible: false,
            filters: Vec::new(),
            scores: Vec::new(),
            total: None,
        })
        .collect();
    let state = match fw.pre_filter(pod, cluster) {
        PreFilterOutcome::Rejected(status) => {
            let msg = format!("{}: {}", status.plugin.unwrap_or(""), status.reasons.join(", "));
            return (out, Some(msg));
        }
        PreFilterOutcome::Proceed(state) => state,
    };
    let mut feasible = Vec::new();
    for (i, node) in cluster.nodes.iter().enumerate() {
        let verdicts: Vec<(&str, Status)> = if state
            .node_names()
            .is_some_and(|names| !names.contains(&node.name))
        {
            let plugins = state.pre_filter_restricting_plugins().join(" ");
            vec![(
                "PreFilter",
                Status::unresolvable(format!("node(s) didn't satisfy plugin(s) [{plugins}]")),
            )]
        } else {
            fw.filter_each(&state, pod, node).into_iter().map(|(p, s)| (p.as_str(), s)).collect()
        };
        let ok = verdicts.iter().all(|(_, s)| !(s.is_rejected() || s.code == Code::Error));
        if ok {
            feasible.push(i);
        }
        out[i].feasible = ok;
        out[i].filters = verdicts
            .into_iter()
            .map(|(p, s)| FilterVerdict {
                plugin: p.to_string(),
                code: code_name(s.code).to_string(),
                reasons: s.reasons,
            })
            .collect();
    }
    if let Ok(scores) = fw.score(pod, cluster, &feasible) {
        for s in scores {
            let n = &mut out[s.node];
            n.total = Some(s.total);
            n.scores = ScoreLine::all(&s.plugins);
        }
    }
    (out, None)
}

/// The first failing filter of a node, as (plugin, reasons).
fn first_failure(n: &NodeExplanation) -> Option<(&str, String)> {
    n.filters
        .iter()
        .find(|f| f.code != "Success" && f.code != "Skip")
        .map(|f| (f.plugin.as_str(), f.reasons.join(", ")))
}

/// The pods in `names` listed, at most 5, with how many more.
fn list(names: &[String]) -> String {
    let mut s = names.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
    if names.len() > 5 {
        s.push_str(&format!(" and {} more", names.len() - 5));
    }
    s
}

/// Why `alt` was not taken over `chosen` (see the module docs). `earlier` are the plan's
/// placements on `alt` before the pod (empty for a bound pod).
fn why(alt: &NodeExplanation, chosen: &NodeExplanation, earlier: &[String], plan: bool) -> String {
    let by = if plan { " by earlier placements of the plan" } else { "" };
    let who = if earlier.is_empty() {
        String::new()
    } else {
        format!(" ({} pod(s) placed there before it: {})", earlier.len(), list(earlier))
    };
    if let Some((plugin, reasons)) = first_failure(alt) {
        let rule = match plugin {
            "NodeResourcesFit" => format!("capacity taken{by}{who}"),
            "InterPodAffinity" => format!("pod (anti-)affinity conflict{who}"),
            "NodePorts" => format!("host port conflict{who}"),
            "PodTopologySpread" => format!("topology spread constraint (maxSkew){who}"),
            "PreFilter" => "excluded by PreFilter".to_string(),
            _ => "not feasible".to_string(),
        };
        return format!("{rule}: {plugin}: {reasons}");
    }
    match (alt.total, chosen.total) {
        (Some(a), Some(c)) if a < c => {
            format!("feasible, but scored {a} against {c} for the chosen node{who}")
        }
        (Some(a), Some(c)) if a == c => {
            format!("feasible and tied with the chosen node at {a}: either was as good")
        }
        (Some(a), Some(c)) => format!(
            "feasible and scored {a} against {c} for the chosen node: {}",
            if plan {
                "the batch solver places whole classes against scores evaluated once per \
                 priority tier (and may move pods to make room), so it need not take the \
                 best-scoring node of the moment"
            } else {
                "the cluster has changed since the pod was bound"
            }
        ),
        _ => "not scored".to_string(),
    }
}

/// What [`explain_in`] finds (the fields of [`PlacedExplanation`] it fills).
struct Judged {
    chosen: NodeExplanation,
    runner_up: Option<NodeExplanation>,
    alternatives: Vec<Alternative>,
    feasible: usize,
    summary: Vec<String>,
}

/// Explains a pod already on `node`: `at` is the state to judge it in (without the pod),
/// `as_is` the state "better" is judged in, `earlier` the plan's placements per node before
/// the pod.
#[allow(clippy::too_many_arguments)]
fn explain_in(
    fw: &Framework,
    pod: &Pod,
    node: &str,
    at: &ClusterState,
    as_is: &ClusterState,
    earlier: &BTreeMap<String, Vec<String>>,
    wanted: Option<&str>,
    plan: bool,
) -> Result<Judged, ExplainError> {
    let n = at.node_index(node).ok_or_else(|| ExplainError::UnknownNode(node.to_string()))?;
    if let Some(w) = wanted
        && at.node_index(w).is_none()
    {
        return Err(ExplainError::UnknownNode(w.to_string()));
    }
    let (cells, rejected) = evaluate(fw, pod, at);
    let (before, _) = evaluate(fw, pod, as_is);
    let chosen = cells[n].clone();
    let mut summary = Vec::new();
    if let Some(r) = rejected {
        summary.push(format!("PreFilter rejects the pod in this state: {r}"));
    }
    let feasible = cells.iter().filter(|c| c.feasible).count();
    if !chosen.feasible {
        let (plugin, reasons) = first_failure(&chosen).unwrap_or(("?", String::new()));
        summary.push(format!(
            "{node} does not pass {plugin} in this state ({reasons}); the plan does not hold here"
        ));
    }
    let runner_up = cells
        .iter()
        .enumerate()
        .filter(|(i, c)| *i != n && c.feasible)
        .max_by(|(i, a), (j, b)| a.total.cmp(&b.total).then_with(|| j.cmp(i)))
        .map(|(_, c)| c.clone());
    // Better nodes: higher than the chosen node on the snapshot as it is.
    let chosen_before = before[n].total;
    let mut better: Vec<usize> = (0..cells.len())
        .filter(|&i| i != n && before[i].total.is_some() && before[i].total > chosen_before)
        .collect();
    better.sort_by(|&a, &b| before[b].total.cmp(&before[a].total).then_with(|| a.cmp(&b)));
    better.truncate(MAX_ALTERNATIVES);
    if let Some(w) = wanted.and_then(|w| at.node_index(w))
        && w != n
        && !better.contains(&w)
    {
        better.push(w);
    }
    let empty = Vec::new();
    let alternatives: Vec<Alternative> = better
        .into_iter()
        .map(|i| {
            let name = &cells[i].node;
            Alternative {
                node: name.clone(),
                asked: wanted == Some(name.as_str()),
                score_as_is: before[i].total,
                cells: cells[i].clone(),
                why: why(&cells[i], &chosen, earlier.get(name).unwrap_or(&empty), plan),
            }
        })
        .collect();
    if let Some(t) = chosen.total {
        summary.push(format!("{node} is feasible and scores {t}"));
    }
    match &runner_up {
        Some(r) => summary.push(format!(
            "runner-up: {} scoring {}",
            r.node,
            r.total.map_or("-".to_string(), |t| t.to_string())
        )),
        None => summary.push("no other node is feasible in this state".to_string()),
    }
    let higher: Vec<&Alternative> =
        alternatives.iter().filter(|a| a.score_as_is > chosen_before).collect();
    if !higher.is_empty() {
        summary.push(format!(
            "{} node(s) scored higher on the snapshot as it is; {} of them are excluded in this \
             state",
            higher.len(),
            higher.iter().filter(|a| !a.cells.feasible).count()
        ));
    }
    for a in alternatives.iter().filter(|a| a.asked) {
        summary.push(format!("{}: {}", a.node, a.why));
    }
    Ok(Judged { chosen, runner_up, alternatives, feasible, summary })
}

/// Why the batch plan `plan` put pod `key` where it did (see the module docs). `node`: also
/// explain this node (e.g. where `baseline` put the pod).
pub fn explain_planned(
    cluster: &ClusterState,
    pending: &[Pod],
    config: &SchedulerConfig,
    plan: &Plan,
    key: &str,
    node: Option<&str>,
) -> Result<PlacedExplanation, ExplainError> {
    let pod = pending
        .iter()
        .find(|p| p.key() == key)
        .ok_or_else(|| ExplainError::UnknownPod(key.to_string()))?;
    let position = plan
        .placements
        .iter()
        .position(|p| p.pod == key)
        .ok_or_else(|| ExplainError::NotInPlan(key.to_string()))?;
    let fw = Framework::for_scheduler(config, &pod.scheduler_name)?;
    let by_key: BTreeMap<String, &Pod> = pending.iter().map(|p| (p.key(), p)).collect();
    let mut as_is = cluster.clone();
    for e in &plan.evictions {
        if let Some(n) = as_is.node_index(&e.node)
            && let Some((ns, name)) = e.pod.split_once('/')
        {
            as_is.nodes[n].remove_pod(ns, name);
        }
    }
    let mut at = as_is.clone();
    let mut earlier: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for p in &plan.placements[..position] {
        let (Some(n), Some(q)) = (at.node_index(&p.node), by_key.get(&p.pod)) else { continue };
        let mut q = (*q).clone();
        q.node_name = Some(p.node.clone());
        at.nodes[n].add_pod(Arc::new(q));
        earlier.entry(p.node.clone()).or_default().push(p.pod.clone());
    }
    let chosen_node = plan.placements[position].node.clone();
    let Judged { chosen, runner_up, alternatives, feasible: feasible_nodes, mut summary } =
        explain_in(&fw, pod, &chosen_node, &at, &as_is, &earlier, node, true)?;
    summary.insert(
        0,
        format!(
            "the plan ({}) places {key} on {chosen_node}, placement {} of {}",
            if plan.summary.strategy.is_empty() {
                "strategy not recorded"
            } else {
                &plan.summary.strategy
            },
            position + 1,
            plan.placements.len()
        ),
    );
    Ok(PlacedExplanation {
        pod: key.to_string(),
        scheduler_name: pod.scheduler_name.clone(),
        priority: pod.priority,
        source: "plan".to_string(),
        strategy: Some(plan.summary.strategy.clone()),
        node: chosen_node,
        position: Some(position),
        state: format!(
            "the snapshot with the plan's {} eviction(s) and the {position} placement(s) listed before it",
            plan.evictions.len()
        ),
        feasible_nodes,
        chosen,
        runner_up,
        alternatives,
        summary,
    })
}

/// Why the bound pod `key` is where it is: its node judged on the snapshot without it (see the
/// module docs). `None` when no bound pod has that key.
pub fn explain_bound(
    cluster: &ClusterState,
    config: &SchedulerConfig,
    key: &str,
    node: Option<&str>,
) -> Result<Option<PlacedExplanation>, ExplainError> {
    let Some((n, pod)) =
        cluster.nodes.iter().enumerate().find_map(|(i, nd)| {
            nd.pods.iter().find(|p| p.key() == key).map(|p| (i, Arc::clone(p)))
        })
    else {
        return Ok(None);
    };
    let fw = Framework::for_scheduler(config, &pod.scheduler_name)?;
    let mut without = cluster.clone();
    without.nodes[n].remove_pod(&pod.namespace, &pod.name);
    let node_name = cluster.nodes[n].name.clone();
    let Judged { chosen, runner_up, alternatives, feasible: feasible_nodes, mut summary } =
        explain_in(&fw, &pod, &node_name, &without, &without, &BTreeMap::new(), node, false)?;
    summary.insert(0, format!("{key} is bound to {node_name} in the snapshot"));
    Ok(Some(PlacedExplanation {
        pod: key.to_string(),
        scheduler_name: pod.scheduler_name.clone(),
        priority: pod.priority,
        source: "bound".to_string(),
        strategy: None,
        node: node_name,
        position: None,
        state: "the snapshot with the pod removed (the state it was bound in is not in the \
                snapshot)"
            .to_string(),
        feasible_nodes,
        chosen,
        runner_up,
        alternatives,
        summary,
    }))
}
