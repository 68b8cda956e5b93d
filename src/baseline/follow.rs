//! `kplace baseline --follow PLAN`: replays another scheduler's decisions and checks each one
//! against the sequential simulator's.
//!
//! Input: the cluster model, the pending pods, the configuration and the followed plan document
//! (any scheduler's: kplace's own, or `../shared/upstream/kso`'s, whose unschedulable entries
//! carry the real kube-scheduler's messages). Output: the followed plan, re-summarized, with
//! `summary.follow` listing every divergence. Counterpart: none upstream; it is a conformance
//! tool, "where would kube-scheduler have done otherwise?" read the other way round.
//!
//! Pods are replayed in PrioritySort order (the order in which the followed scheduler first
//! attempted them when every pod was queued at the start, as kso does). For each pod kplace
//! decides on the current state ([`Baseline::decide_with`]) and the decision is compared:
//! - a placement agrees when kplace picks the same node, or when the followed node passes
//!   kplace's filters and, scored together with the feasible nodes kplace sampled, has the
//!   highest total (a tie, or a node outside kplace's sample that is at least as good);
//! - an unschedulable pod agrees when kplace finds no node either and words the same message,
//!   byte for byte (a followed entry without a message is compared on the outcome only);
//! - a preemption agrees when kplace preempts too and, on the followed node, would pick the
//!   same victims (victims already terminating excepted; the node may differ, as upstream
//!   breaks full ties between candidate nodes at random).
//!
//! Then the *followed* decision is applied (the pod bound where the followed plan put it), so
//! one disagreement never cascades into the pods after it. A preemptor is applied as upstream
//! carries it out: nominated to its node at its turn (the nomination reserves the room against
//! pods of equal or lower priority, [`Framework::filter_with_nominated`]) with its victims still
//! there, and bound — its victims gone — at its place in the followed plan's bind order
//! (`placements` are in bind order), i.e. once every pod bound before it is bound.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::scheduler::{Baseline, BaselineOptions, CycleResult, NO_NODES_AVAILABLE, queue_order};
use crate::framework::config::SchedulerConfig;
use crate::framework::runtime::{Framework, FrameworkError, PreFilterOutcome};
use crate::model::{ClusterState, Pod};
use crate::plan::{Eviction, Placement, Plan, Unschedulable};

/// What `--follow` found (`summary.follow`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct FollowReport {
    /// Pending pods whose followed decision was checked and applied.
    pub followed: usize,
    /// The decisions kplace would not have made, in replay order.
    pub divergences: Vec<Divergence>,
}

/// One followed decision kplace disagrees with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Divergence {
    /// `namespace/name`.
    pub pod: String,
    /// The followed decision (`node NAME`, `preempt A, B on NAME`, `unschedulable: MESSAGE`,
    /// `none`).
    pub theirs: String,
    /// kplace's decision in the same state, worded the same way.
    pub ours: String,
    /// Why they differ.
    pub why: String,
}

/// A followed plan's decision for one pod.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Theirs {
    Placed { node: String, victims: Vec<(String, String)> },
    Unschedulable { message: String },
    Evicting { victims: Vec<(String, String)>, message: String },
    None,
}

/// The followed plan, indexed by pod.
struct Followed<'a> {
    placed: BTreeMap<&'a str, &'a str>,
    unschedulable: BTreeMap<&'a str, &'a str>,
    /// Preemptor → its victims `(namespace/name, node)`, in the plan's order.
    victims: BTreeMap<&'a str, Vec<(String, String)>>,
    /// Every victim `(namespace/name, node)`, whichever preemptor it is attributed to.
    evicted: BTreeSet<(&'a str, &'a str)>,
}

impl<'a> Followed<'a> {
    fn new(plan: &'a Plan) -> Self {
        let mut victims: BTreeMap<&str, Vec<(String, String)>> = BTreeMap::new();
        for e in &plan.evictions {
            victims.entry(e.preemptor.as_str()).or_default().push((e.pod.clone(), e.node.clone()));
        }
        Followed {
            placed: plan.placements.iter().map(|p| (p.pod.as_str(), p.node.as_str())).collect(),
            unschedulable: plan
                .unschedulable
                .iter()
                .map(|u| (u.pod.as_str(), u.message.as_str()))
                .collect(),
            victims,
            evicted: plan.evictions.iter().map(|e| (e.pod.as_str(), e.node.as_str())).collect(),
        }
    }

    fn decision(&self, pod: &str) -> Theirs {
        let victims = self.victims.get(pod).cloned().unwrap_or_default();
        if let Some(node) = self.placed.get(pod) {
            return Theirs::Placed { node: node.to_string(), victims };
        }
        let message = self.unschedulable.get(pod).map(|m| m.to_string());
        if !victims.is_empty() {
            return Theirs::Evicting { victims, message: message.unwrap_or_default() };
        }
        match message {
            Some(message) => Theirs::Unschedulable { message },
            None => Theirs::None,
        }
    }
}

fn victims_text(victims: &[(String, String)]) -> String {
    let node = victims.first().map(|(_, n)| n.as_str()).unwrap_or("");
    let names: Vec<&str> = victims.iter().map(|(p, _)| p.as_str()).collect();
    format!("preempt {} on {node}", names.join(", "))
}

impl Theirs {
    fn describe(&self) -> String {
        match self {
            Theirs::Placed { node, victims } if victims.is_empty() => format!("node {node}"),
            Theirs::Placed { victims, .. } | Theirs::Evicting { victims, .. } => {
                victims_text(victims)
            }
            Theirs::Unschedulable { message } => format!("unschedulable: {message}"),
            Theirs::None => "none".to_string(),
        }
    }
}

fn describe_ours(result: &CycleResult, cluster: &ClusterState) -> String {
    match result {
        CycleResult::Scheduled(n) => format!("node {}", cluster.nodes[*n].name),
        CycleResult::Preempted(n, victims) if victims.is_empty() => {
            format!("nominated to {} (its victims already terminating)", cluster.nodes[*n].name)
        }
        CycleResult::Preempted(n, victims) => {
            let v: Vec<(String, String)> =
                victims.iter().map(|p| (p.key(), cluster.nodes[*n].name.clone())).collect();
            victims_text(&v)
        }
        CycleResult::Unschedulable(e) => format!("unschedulable: {}", e.message()),
        CycleResult::NoNodes => format!("unschedulable: {NO_NODES_AVAILABLE}"),
        CycleResult::Error(m) => format!("error: {m}"),
    }
}

/// Why kplace disagrees with placing `pod` on node `n` when it chose otherwise; `None` when the
/// followed node is as good as kplace's choice (a tie, or a node outside kplace's sample that
/// scores at least as high together with it).
fn placement_disagreement(
    sched: &Baseline,
    fw: &Framework,
    pod: &Pod,
    n: usize,
    ours: &CycleResult,
) -> Option<String> {
    let cluster = &sched.cluster;
    let name = &cluster.nodes[n].name;
    let state = match fw.pre_filter(pod, cluster) {
        PreFilterOutcome::Proceed(state) => state,
        PreFilterOutcome::Rejected(status) => {
            return Some(format!("kplace's PreFilter rejects the pod: {status}"));
        }
    };
    if state.node_names().is_some_and(|names| !names.contains(name)) {
        return Some(format!("node {name} is outside the nodes PreFilter allows"));
    }
    let status = fw.filter(&state, pod, &cluster.nodes[n]);
    if !status.is_success() {
        return Some(format!("node {name} fails kplace's filters: {status}"));
    }
    let CycleResult::Scheduled(m) = ours else {
        return Some(format!("node {name} is feasible, yet kplace did not place the pod there"));
    };
    let mut set: Vec<usize> = sched.last_feasible().to_vec();
    if !set.contains(&n) {
        set.push(n);
    }
    let totals = match fw.score_totals(pod, cluster, &set) {
        Ok(t) => t,
        Err(status) => return Some(format!("scoring failed: {status}")),
    };
    let best = totals.iter().copied().max().unwrap_or(0);
    let theirs = set.iter().position(|&i| i == n).map(|i| totals[i]).unwrap_or(0);
    if theirs == best {
        return None;
    }
    let mine = set.iter().position(|&i| i == *m).map(|i| totals[i]).unwrap_or(best);
    Some(format!(
        "kplace scores node {} higher ({mine}) than node {name} ({theirs})",
        cluster.nodes[*m].name
    ))
}

/// Compares kplace's decision with the followed one; `Some(why)` when they differ.
fn compare(
    sched: &Baseline,
    fw: &Framework,
    pod: &Pod,
    ours: &CycleResult,
    theirs: &Theirs,
    node_index: &BTreeMap<&str, usize>,
) -> Option<String> {
    match (theirs, ours) {
        (Theirs::None, _) => Some("the followed plan does not decide this pod".to_string()),
        (Theirs::Placed { node, victims }, _) if victims.is_empty() => {
            let Some(&n) = node_index.get(node.as_str()) else {
                return Some(format!("node {node} is not in the snapshot"));
            };
            match ours {
                CycleResult::Scheduled(m) if *m == n => None,
                _ => placement_disagreement(sched, fw, pod, n, ours),
            }
        }
        (
            Theirs::Placed { victims, .. } | Theirs::Evicting { victims, .. },
            CycleResult::Preempted(m, ours_victims),
        ) if !victims.is_empty() => {
            // The victims kplace would pick on the followed node must be the followed ones (the
            // node itself may differ: a full tie between candidates goes to a random node).
            let node = victims[0].1.as_str();
            let Some(&n) = node_index.get(node) else {
                return Some(format!("node {node} is not in the snapshot"));
            };
            // Victims already terminating (an earlier preemptor's) are not evicted again;
            // kso attributes a victim to the last preemptor that picked it.
            let theirs_set: BTreeSet<&str> = victims
                .iter()
                .filter(|(p, _)| {
                    let (ns, name) = p.split_once('/').unwrap_or(("", p));
                    !sched.is_terminating(n, ns, name)
                })
                .map(|(p, _)| p.as_str())
                .collect();
            let ours_keys: Vec<String> = if *m == n {
                ours_victims.iter().map(|p| p.key()).collect()
            } else {
                match sched.victims_on(fw, pod, n) {
                    Ok(v) => v.iter().map(|p| p.key()).collect(),
                    Err(status) => {
                        return Some(format!(
                            "kplace preempts on node {}; on node {node}: {status}",
                            sched.cluster.nodes[*m].name
                        ));
                    }
                }
            };
            let ours_set: BTreeSet<&str> = ours_keys.iter().map(String::as_str).collect();
            (theirs_set != ours_set).then(|| {
                if *m == n {
                    "kplace picks other victims on the same node".to_string()
                } else {
                    format!(
                        "kplace preempts on node {} and would pick other victims on node {node}",
                        sched.cluster.nodes[*m].name
                    )
                }
            })
        }
        (Theirs::Placed { .. } | Theirs::Evicting { .. }, _) => {
            Some("the followed scheduler preempts where kplace does not".to_string())
        }
        (
            Theirs::Unschedulable { message },
            CycleResult::Unschedulable(_) | CycleResult::NoNodes,
        ) => {
            let mine = match ours {
                CycleResult::Unschedulable(e) => e.message(),
                _ => NO_NODES_AVAILABLE.to_string(),
            };
            (!message.is_empty() && *message != mine).then(|| "the messages differ".to_string())
        }
        (Theirs::Unschedulable { .. }, _) => {
            Some("kplace places the pod where the followed scheduler found no node".to_string())
        }
    }
}

/// Replays `theirs` on `cluster`, checking each decision against the sequential simulator's.
/// See the module documentation.
pub fn run_follow(
    cluster: ClusterState,
    pending: &[Pod],
    config: &SchedulerConfig,
    options: BaselineOptions,
    theirs: &Plan,
) -> Result<Plan, FrameworkError> {
    let mut frameworks: BTreeMap<&str, Framework> = BTreeMap::new();
    for pod in pending {
        if !frameworks.contains_key(pod.scheduler_name.as_str()) {
            frameworks.insert(
                &pod.scheduler_name,
                Framework::for_scheduler(config, &pod.scheduler_name)?,
            );
        }
    }
    let followed = Followed::new(theirs);
    let node_index: BTreeMap<String, usize> =
        cluster.nodes.iter().enumerate().map(|(i, n)| (n.name.clone(), i)).collect();
    let node_index_ref: BTreeMap<&str, usize> =
        node_index.iter().map(|(k, &v)| (k.as_str(), v)).collect();
    let mut sched = Baseline::with_deferred_preemption(cluster, options);
    let mut plan = Plan::default();
    let mut report = FollowReport::default();
    let pending_keys: BTreeSet<String> = pending.iter().map(Pod::key).collect();
    let mut binds = BindOrder::new(theirs, &pending_keys);
    for i in queue_order(pending) {
        let pod = &pending[i];
        let key = pod.key();
        let fw = &frameworks[pod.scheduler_name.as_str()];
        let ours = sched.decide_with(fw, pod, None);
        let theirs_decision = followed.decision(&key);
        // A pod kplace finds no node for, which the followed scheduler bound only after pods
        // it bound later in the queue, or on a node where victims are still terminating: its
        // first attempt failed there too and a retry (after a binding or a victim's deletion)
        // placed it. It is checked again at its bind turn.
        let retried = match &theirs_decision {
            Theirs::Placed { node, victims } if victims.is_empty() => {
                matches!(ours, CycleResult::Unschedulable(_) | CycleResult::NoNodes)
                    && (binds.later_than_next(&key)
                        || node_index_ref
                            .get(node.as_str())
                            .is_some_and(|&n| sched.has_terminating_victims_on(n)))
            }
            _ => false,
        };
        // A preemptor whose victims are all terminating already (evicted by earlier
        // preemptors) evicts no one: it is nominated, and bound on a retry once they are gone.
        let nominated_only = match (&theirs_decision, &ours) {
            (Theirs::Placed { node, victims }, CycleResult::Preempted(m, ours_victims)) => {
                victims.is_empty()
                    && ours_victims.is_empty()
                    && node_index_ref.get(node.as_str()) == Some(m)
            }
            _ => false,
        };
        if let (true, CycleResult::Preempted(m, _)) = (nominated_only, &ours) {
            sched.nominate(*m, pod);
        }
        // A preemption kplace does not make at the pod's first attempt: the followed
        // scheduler's first attempt failed too and a retry (after the first pass) preempted,
        // e.g. a pod bound meanwhile. It is checked again at the preemptor's bind turn.
        if let Theirs::Placed { node, victims } = &theirs_decision
            && !victims.is_empty()
            && matches!(ours, CycleResult::Unschedulable(_) | CycleResult::NoNodes)
        {
            binds.defer(Deferred {
                pod: i,
                key,
                node: node.clone(),
                victims: victims.clone(),
                retry: true,
            });
            report.followed += 1;
            continue;
        }
        // A preemptor whose victims the followed plan attributes to a later preemptor on the
        // same node (kso records the last preemptor that picked a victim): it preempted them,
        // was nominated, and bound on a retry.
        let misattributed = match (&theirs_decision, &ours) {
            (Theirs::Placed { node, victims }, CycleResult::Preempted(m, ours_victims)) => {
                victims.is_empty()
                    && !ours_victims.is_empty()
                    && node_index_ref.get(node.as_str()) == Some(m)
                    && ours_victims
                        .iter()
                        .all(|v| followed.evicted.contains(&(v.key().as_str(), node.as_str())))
            }
            _ => false,
        };
        if let (true, CycleResult::Preempted(m, ours_victims)) = (misattributed, &ours) {
            sched.preempt(pod, *m, ours_victims);
        }
        if retried || nominated_only || misattributed {
            if let Theirs::Placed { node, .. } = theirs_decision {
                binds.defer(Deferred { pod: i, key, node, victims: Vec::new(), retry: true });
            }
            report.followed += 1;
            continue;
        }
        let mut why = compare(&sched, fw, pod, &ours, &theirs_decision, &node_index_ref);
        if why.is_some()
            && sched.has_terminating_victims()
            && matches!(&theirs_decision, Theirs::Placed { victims, .. } if victims.is_empty())
        {
            // The followed scheduler may not have seen the victims' deletion yet.
            sched.set_victims_terminating(false);
            if compare(&sched, fw, pod, &ours, &theirs_decision, &node_index_ref).is_none() {
                why = None;
            }
            sched.set_victims_terminating(true);
        }
        if let Some(why) = why {
            report.divergences.push(Divergence {
                pod: key.clone(),
                theirs: theirs_decision.describe(),
                ours: describe_ours(&ours, &sched.cluster),
                why,
            });
        }
        // Apply the followed decision (kplace's own when the followed plan has none).
        match theirs_decision {
            Theirs::Placed { node, victims } if victims.is_empty() => {
                if let Some(&n) = node_index_ref.get(node.as_str()) {
                    sched.assume(pod, n);
                }
                plan.placements.push(Placement { pod: key.clone(), node });
                binds.applied(&key);
            }
            Theirs::Placed { node, victims } => {
                // Upstream nominates the preemptor and binds it once its victims are gone;
                // meanwhile the pods it binds before the preemptor see the victims still
                // there and the nomination reserving the room.
                apply_victims(&mut sched, &victims, &key, &node_index_ref, &mut plan);
                if let Some(&n) = node_index_ref.get(node.as_str()) {
                    sched.nominate(n, pod);
                }
                binds.defer(Deferred { pod: i, key: key.clone(), node, victims, retry: false });
            }
            Theirs::Evicting { victims, message } => {
                // Nominated, never bound: the victims terminate, the nomination stays.
                apply_victims(&mut sched, &victims, &key, &node_index_ref, &mut plan);
                if let Some(&n) =
                    victims.first().and_then(|(_, node)| node_index_ref.get(node.as_str()))
                {
                    sched.nominate(n, pod);
                }
                plan.unschedulable.push(Unschedulable {
                    pod: key,
                    message,
                    reasons: BTreeMap::new(),
                });
            }
            Theirs::Unschedulable { message } => {
                let reasons = match &ours {
                    CycleResult::Unschedulable(e) => e.reasons(),
                    _ => BTreeMap::new(),
                };
                plan.unschedulable.push(Unschedulable { pod: key, message, reasons });
            }
            Theirs::None => {
                apply_ours(&mut sched, pod, ours, &mut plan);
                continue;
            }
        }
        report.followed += 1;
    }
    // Retries and preemptors bind after every pod's first attempt: the queue holds every
    // pending pod at the start, a failed pod is retried only once the active queue is empty,
    // and victims terminate for longer than the first pass takes.
    for d in binds.rest() {
        settle(&mut sched, &frameworks, pending, d, &node_index_ref, &mut plan, &mut report);
    }
    let decided =
        theirs.placements.iter().map(|p| &p.pod).chain(theirs.unschedulable.iter().map(|u| &u.pod));
    let unknown: BTreeSet<&String> = decided.filter(|k| !pending_keys.contains(*k)).collect();
    for pod in unknown {
        report.divergences.push(Divergence {
            pod: pod.clone(),
            theirs: followed.decision(pod).describe(),
            ours: "none".to_string(),
            why: "not a pending pod of the snapshot".to_string(),
        });
    }
    plan.summary = crate::plan::summarize(&plan, &sched.cluster, pending);
    plan.summary.algorithm = "baseline (follow)".to_string();
    plan.summary.backend = "cpu".to_string();
    plan.summary.follow = Some(report);
    Ok(plan)
}

/// A preemptor of the followed plan waiting for its turn in the followed bind order.
#[derive(Debug)]
struct Deferred {
    /// Index in `pending`.
    pod: usize,
    key: String,
    node: String,
    victims: Vec<(String, String)>,
    /// A pod the followed scheduler placed on a retry (checked again at its bind turn).
    retry: bool,
}

/// The followed plan's bind order (`placements`), as far as the replay has applied it: a
/// preemptor binds once every pending pod the followed scheduler bound before it is bound.
struct BindOrder {
    position: BTreeMap<String, usize>,
    applied: Vec<bool>,
    next: usize,
    deferred: Vec<(usize, Deferred)>,
}

impl BindOrder {
    fn new(theirs: &Plan, pending: &BTreeSet<String>) -> Self {
        let position =
            theirs.placements.iter().enumerate().map(|(i, p)| (p.pod.clone(), i)).collect();
        // Placements of pods the snapshot does not have pending never come: count them bound.
        let applied = theirs.placements.iter().map(|p| !pending.contains(&p.pod)).collect();
        let mut order = BindOrder { position, applied, next: 0, deferred: Vec::new() };
        order.advance();
        order
    }

    fn advance(&mut self) {
        while self.next < self.applied.len() && self.applied[self.next] {
            self.next += 1;
        }
    }

    fn applied(&mut self, pod: &str) {
        if let Some(&i) = self.position.get(pod) {
            self.applied[i] = true;
            self.advance();
        }
    }

    /// Whether the followed scheduler bound `pod` after a pod the replay has not bound yet.
    fn later_than_next(&self, pod: &str) -> bool {
        self.position.get(pod).is_some_and(|&p| p > self.next)
    }

    fn defer(&mut self, d: Deferred) {
        let pos = self.position.get(&d.key).copied().unwrap_or(usize::MAX);
        self.deferred.push((pos, d));
    }

    /// The preemptors still waiting, in the followed bind order.
    fn rest(&mut self) -> Vec<Deferred> {
        self.deferred.sort_by_key(|(pos, _)| *pos);
        self.deferred.drain(..).map(|(_, d)| d).collect()
    }
}

/// Carries out a deferred bind: a retried pod is decided again on the state at its bind turn
/// and checked like any placement; a preemptor's victims leave first.
fn settle(
    sched: &mut Baseline,
    frameworks: &BTreeMap<&str, Framework>,
    pending: &[Pod],
    d: Deferred,
    node_index: &BTreeMap<&str, usize>,
    plan: &mut Plan,
    report: &mut FollowReport,
) {
    let pod = &pending[d.pod];
    if d.retry {
        // Retried after a victim's deletion: the victims on its node are gone by then (all
        // of them: they were evicted in one pass and terminate after the same grace period).
        if node_index.get(d.node.as_str()).is_some_and(|&n| sched.has_terminating_victims_on(n)) {
            sched.terminate_victims();
        }
        let fw = &frameworks[pod.scheduler_name.as_str()];
        let ours = sched.decide_with(fw, pod, None);
        let theirs = Theirs::Placed { node: d.node.clone(), victims: d.victims.clone() };
        if let Some(why) = compare(sched, fw, pod, &ours, &theirs, node_index) {
            report.divergences.push(Divergence {
                pod: d.key.clone(),
                theirs: format!("{} (after a retry)", theirs.describe()),
                ours: describe_ours(&ours, &sched.cluster),
                why,
            });
        }
        for (victim, node) in &d.victims {
            plan.evictions.push(Eviction {
                pod: victim.clone(),
                node: node.clone(),
                preemptor: d.key.clone(),
            });
        }
    }
    bind_preemptor(sched, pod, d, node_index, plan);
}

/// Binds a deferred preemptor: its victims leave, its nomination ends, it runs on its node.
fn bind_preemptor(
    sched: &mut Baseline,
    pod: &Pod,
    d: Deferred,
    node_index: &BTreeMap<&str, usize>,
    plan: &mut Plan,
) {
    for (victim, node) in &d.victims {
        if let (Some(&n), Some((ns, name))) =
            (node_index.get(node.as_str()), victim.split_once('/'))
        {
            sched.remove_victim(n, ns, name);
        }
    }
    sched.clear_nomination(&pod.namespace, &pod.name);
    if let Some(&n) = node_index.get(d.node.as_str()) {
        sched.assume(pod, n);
    }
    plan.placements.push(Placement { pod: d.key, node: d.node });
}

/// Evicts the followed plan's victims of one preemptor ([`Baseline::evict`]): they terminate
/// (still on their node, marked terminating) until the preemptor binds or a retried pod needs
/// their room, or leave at once, as the options say.
fn apply_victims(
    sched: &mut Baseline,
    victims: &[(String, String)],
    preemptor: &str,
    node_index: &BTreeMap<&str, usize>,
    plan: &mut Plan,
) {
    for (victim, node) in victims {
        if let (Some(&n), Some((ns, name))) =
            (node_index.get(node.as_str()), victim.split_once('/'))
        {
            sched.evict(n, ns, name);
        }
        plan.evictions.push(Eviction {
            pod: victim.clone(),
            node: node.clone(),
            preemptor: preemptor.to_string(),
        });
    }
}

/// Applies kplace's own decision (for a pod the followed plan leaves undecided).
fn apply_ours(sched: &mut Baseline, pod: &Pod, ours: CycleResult, plan: &mut Plan) {
    let key = pod.key();
    match ours {
        CycleResult::Scheduled(n) => {
            sched.assume(pod, n);
            plan.placements.push(Placement { pod: key, node: sched.cluster.nodes[n].name.clone() });
        }
        CycleResult::Preempted(n, victims) => {
            let node = sched.cluster.nodes[n].name.clone();
            for v in victims {
                sched.remove_victim(n, &v.namespace, &v.name);
                plan.evictions.push(Eviction {
                    pod: v.key(),
                    node: node.clone(),
                    preemptor: key.clone(),
                });
            }
            sched.assume(pod, n);
            plan.placements.push(Placement { pod: key, node });
        }
        CycleResult::Unschedulable(e) => {
            plan.unschedulable.push(Unschedulable {
                pod: key,
                message: e.message(),
                reasons: e.reasons(),
            });
        }
        CycleResult::NoNodes => plan.unschedulable.push(Unschedulable {
            pod: key,
            message: NO_NODES_AVAILABLE.to_string(),
            reasons: BTreeMap::new(),
        }),
        CycleResult::Error(message) => {
            plan.unschedulable.push(Unschedulable { pod: key, message, reasons: BTreeMap::new() });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::run_baseline;
    use crate::model::testing::{GI, NodeBuilder, PodBuilder, cluster};

    fn state() -> (ClusterState, Vec<Pod>) {
        let state = cluster(
            vec![
                NodeBuilder::new("big").cpu(8000).memory(16 * GI).obj(),
                NodeBuilder::new("small").cpu(2000).memory(4 * GI).obj(),
            ],
            vec![PodBuilder::new("d", "busy").cpu(1500).memory(GI).node("small").obj()],
        );
        let pending = vec![
            PodBuilder::new("d", "a").cpu(500).memory(GI).created(1).obj(),
            PodBuilder::new("d", "huge").cpu(9000).memory(GI).created(2).obj(),
        ];
        (state, pending)
    }

    fn follow(theirs: &Plan) -> FollowReport {
        let (state, pending) = state();
        let plan = run_follow(
            state,
            &pending,
            &SchedulerConfig::default(),
            BaselineOptions::default(),
            theirs,
        )
        .unwrap();
        plan.summary.follow.unwrap()
    }

    #[test]
    fn following_kplaces_own_plan_finds_no_divergence() {
        let (state, pending) = state();
        let own =
            run_baseline(state, &pending, &SchedulerConfig::default(), BaselineOptions::default())
                .unwrap();
        let report = follow(&own);
        assert_eq!(report.followed, 2);
        assert_eq!(report.divergences, vec![]);
    }

    #[test]
    fn a_worse_node_a_wrong_message_and_an_unknown_pod_are_divergences() {
        let (state, pending) = state();
        let mut theirs =
            run_baseline(state, &pending, &SchedulerConfig::default(), BaselineOptions::default())
                .unwrap();
        assert_eq!(theirs.placements[0].node, "big", "LeastAllocated prefers the empty node");
        theirs.placements[0].node = "small".to_string();
        theirs.unschedulable[0].message = "0/2 nodes are available: something else.".to_string();
        theirs.placements.push(Placement { pod: "d/ghost".to_string(), node: "big".to_string() });
        let whys: Vec<(String, String)> =
            follow(&theirs).divergences.into_iter().map(|d| (d.pod, d.why)).collect();
        assert_eq!(whys.len(), 3, "{whys:?}");
        assert_eq!(whys[0].0, "d/a");
        assert!(whys[0].1.starts_with("kplace scores node big higher"), "{}", whys[0].1);
        assert_eq!(whys[1], ("d/huge".to_string(), "the messages differ".to_string()));
        assert_eq!(
            whys[2],
            ("d/ghost".to_string(), "not a pending pod of the snapshot".to_string())
        );
    }

    #[test]
    fn a_pod_the_followed_plan_leaves_out_is_a_divergence_and_placed_by_kplace() {
        let mut theirs = Plan::default();
        theirs.unschedulable.push(Unschedulable {
            pod: "d/huge".to_string(),
            message: String::new(),
            reasons: BTreeMap::new(),
        });
        let report = follow(&theirs);
        assert_eq!(report.followed, 1, "an entry without a message is compared on the outcome");
        assert_eq!(report.divergences.len(), 1);
        assert_eq!(report.divergences[0].pod, "d/a");
        assert_eq!(report.divergences[0].theirs, "none");
    }
}
