//! Ordering moves into waves that PodDisruptionBudgets allow, and checking a plan's waves step by
//! step.
//!
//! A wave is carried out as the binder does it: every pod of the wave is evicted, then the
//! replacements are scheduled, and the next wave starts only when every replacement runs. The
//! moves were decided one after another (the *sequence*); [`assign_waves`] gives each move the
//! earliest wave such that
//!
//! 1. it comes after every earlier move (in sequence) *out of* its target node, so the room it
//!    was given is free before it arrives (also when evicted pods take time to terminate);
//! 2. it comes after every earlier move of a *related* pod ([`related`]: one's required pod
//!    affinity or `DoNotSchedule` spread selects the other; or its anti-affinity does and one of
//!    the two moves changes domain), so every inter-pod rule sees the pods it depends on where
//!    the sequence had them, and never sees one of them missing because it was evicted in the
//!    same wave;
//! 3. no budget has more of its pods in the wave than it allows at the start of a wave (with
//!    every earlier replacement running, as the disruption controller then counts it);
//! 4. the wave stays within the eviction limits ([`WaveLimits`]): in all, per source node and
//!    per namespace. descheduler applies its `maxNoOfPodsToEvictTotal`, `…PerNode` and
//!    `…PerNamespace` per descheduling cycle; a wave is kplace's cycle (evictions, then the
//!    replacements running before the next).
//!
//! With (1) each node holds, at the end of any wave, a subset of what it held at some point of
//! the sequence, so capacity, pod count and host ports hold at every wave boundary; with (2)
//! each placement sees its related pods as the sequence did. [`check_moves`] checks each wave
//! with `kplace check` (evictions first, then placements — exactly a wave), and
//! [`verify_waves`] replays the evictions one by one against the budgets, as the eviction API
//! would answer them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::budget::Budget;
use crate::check::{CheckReport, Violation, ViolationKind, check};
use crate::model::{ClusterState, LabelSelector, Pod, PodPhase, UnsatisfiableAction};
use crate::plan::{Move, Placement, Plan};

/// Why one pod's placement can depend on where another pod is.
#[derive(Debug, Clone, Copy)]
enum Link<'a> {
    /// A required pod anti-affinity term over this topology key: the other pod's absence never
    /// hurts (removing pods cannot create an anti-affinity violation).
    AntiAffinity(&'a str),
    /// A required pod affinity term: the other pod's absence can hurt.
    Affinity,
    /// A `DoNotSchedule` spread constraint: the other pod's absence can hurt.
    Spread,
}

/// The links from `x`'s required pod (anti-)affinity terms and `DoNotSchedule` spread
/// constraints that select `y` (namespaces are ignored for affinity terms, which only adds
/// links).
fn links<'a>(x: &'a Pod, y: &Pod) -> Vec<Link<'a>> {
    let matches = |s: &Option<LabelSelector>| s.as_ref().is_some_and(|s| s.matches(&y.labels));
    let mut out: Vec<Link<'a>> = x
        .pod_affinity
        .required
        .iter()
        .filter(|t| matches(&t.label_selector))
        .map(|_| Link::Affinity)
        .collect();
    out.extend(
        x.pod_anti_affinity
            .required
            .iter()
            .filter(|t| matches(&t.label_selector))
            .map(|t| Link::AntiAffinity(t.topology_key.as_str())),
    );
    if x.namespace == y.namespace {
        out.extend(
            x.topology_spread_constraints
                .iter()
                .filter(|c| {
                    c.when_unsatisfiable == UnsatisfiableAction::DoNotSchedule
                        && matches(&c.label_selector)
                })
                .map(|_| Link::Spread),
        );
    }
    out
}

/// The topology domain of node `n` for `key`.
fn domain<'s>(state: &'s ClusterState, n: usize, key: &str) -> Option<&'s String> {
    state.nodes.get(n).and_then(|node| node.labels.get(key))
}

/// Whether the placement of one moved pod can depend on where the other is, or on the other
/// being gone for a while (within a wave every pod is evicted before any replacement is
/// placed): a required pod affinity term or a `DoNotSchedule` spread constraint of either
/// selects the other; or a required anti-affinity term does and one of the two moves changes
/// what its pod counts for under it (its domain for the term's key). Only anti-affinity is
/// indifferent to a pod's absence, so only moves linked by nothing else and staying within their
/// domains are independent, whatever their order.
pub fn related(state: &ClusterState, a: &Step, b: &Step) -> bool {
    let changes = |s: &Step, key: &str| domain(state, s.from, key) != domain(state, s.to, key);
    links(&a.pod, &b.pod).into_iter().chain(links(&b.pod, &a.pod)).any(|link| match link {
        Link::AntiAffinity(key) => changes(a, key) || changes(b, key),
        Link::Affinity | Link::Spread => true,
    })
}

/// One move as [`assign_waves`] needs it: the pod and its source and target node indices.
#[derive(Debug, Clone)]
pub struct Step {
    /// The pod (before the move).
    pub pod: Arc<Pod>,
    /// Source node.
    pub from: usize,
    /// Target node.
    pub to: usize,
}

/// The most evictions in one wave: in all, from one node, in one namespace (`None`: no limit;
/// a limit of 0 is taken as 1, so waves stay finite).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WaveLimits {
    /// `--max-evictions-per-wave`.
    pub per_wave: Option<usize>,
    /// `--max-no-of-pods-to-evict-per-node` (descheduler's `maxNoOfPodsToEvictPerNode`).
    pub per_node: Option<usize>,
    /// `--max-no-of-pods-to-evict-per-namespace` (descheduler's
    /// `maxNoOfPodsToEvictPerNamespace`).
    pub per_namespace: Option<usize>,
}

/// The wave (1, 2, …) of each step, in sequence order. `allowed[b]` is what budget `b` allows
/// at the start of every wave; a pod's budgets must each allow at least one (the caller only
/// moves such pods; a budget allowing none is treated as allowing one, so waves stay finite).
pub fn assign_waves(
    state: &ClusterState,
    steps: &[Step],
    budgets: &[Budget],
    allowed: &[i32],
) -> Vec<u32> {
    assign_waves_within(state, steps, budgets, allowed, &WaveLimits::default())
}

/// [`assign_waves`], with every wave also within `limits`.
pub fn assign_waves_within(
    state: &ClusterState,
    steps: &[Step],
    budgets: &[Budget],
    allowed: &[i32],
    limits: &WaveLimits,
) -> Vec<u32> {
    let mut waves: Vec<u32> = Vec::with_capacity(steps.len());
    let mut used: BTreeMap<(usize, u32), i32> = BTreeMap::new();
    let mut in_wave: BTreeMap<u32, usize> = BTreeMap::new();
    let mut per_node: BTreeMap<(usize, u32), usize> = BTreeMap::new();
    let mut per_namespace: BTreeMap<(&str, u32), usize> = BTreeMap::new();
    let full = |count: Option<&usize>, limit: Option<usize>| {
        limit.is_some_and(|l| count.copied().unwrap_or(0) >= l.max(1))
    };
    for (i, step) in steps.iter().enumerate() {
        let mut wave = 1u32;
        for (d, earlier) in steps.iter().enumerate().take(i) {
            if earlier.from == step.to || related(state, earlier, step) {
                wave = wave.max(waves.get(d).copied().unwrap_or(0) + 1);
            }
        }
        let mine: Vec<usize> =
            (0..budgets.len()).filter(|&b| budgets[b].selects(&step.pod)).collect();
        let ns = step.pod.namespace.as_str();
        while mine.iter().any(|&b| {
            used.get(&(b, wave)).copied().unwrap_or(0)
                >= allowed.get(b).copied().unwrap_or(0).max(1)
        }) || full(in_wave.get(&wave), limits.per_wave)
            || full(per_node.get(&(step.from, wave)), limits.per_node)
            || full(per_namespace.get(&(ns, wave)), limits.per_namespace)
        {
            wave += 1;
        }
        for b in mine {
            *used.entry((b, wave)).or_insert(0) += 1;
        }
        *in_wave.entry(wave).or_insert(0) += 1;
        *per_node.entry((step.from, wave)).or_insert(0) += 1;
        *per_namespace.entry((ns, wave)).or_insert(0) += 1;
        waves.push(wave);
    }
    waves
}

/// The moves grouped by wave, ascending; within a wave in plan order.
fn by_wave(moves: &[Move]) -> BTreeMap<u32, Vec<&Move>> {
    let mut out: BTreeMap<u32, Vec<&Move>> = BTreeMap::new();
    for m in moves {
        out.entry(m.wave).or_default().push(m);
    }
    out
}

/// Takes the pod `key` off node `from` of `state`.
fn take(state: &mut ClusterState, key: &str, from: &str) -> Option<Arc<Pod>> {
    let (namespace, name) = key.split_once('/')?;
    let n = state.node_index(from)?;
    state.nodes.get_mut(n)?.remove_pod(namespace, name)
}

/// Puts the replacement of `pod` on node `to` of `state`.
fn land(state: &mut ClusterState, pod: &Pod, to: &str) -> bool {
    let Some(n) = state.node_index(to) else { return false };
    let mut replacement = pod.clone();
    replacement.node_name = Some(to.to_string());
    match state.nodes.get_mut(n) {
        Some(node) => {
            node.add_pod(Arc::new(replacement));
            true
        }
        None => false,
    }
}

/// Replays the moves wave by wave from `initial`, one eviction at a time, as the eviction API
/// answers them: every budget selecting the pod must allow a disruption on the state at that
/// moment (pods evicted earlier in the wave are gone; replacements of earlier waves run), and a
/// pod may be selected by at most one budget. Also checks that each pod moves at most once and
/// runs on its `from` node. `Err` names the first eviction that would be refused.
pub fn verify_waves(
    initial: &ClusterState,
    budgets: &[Budget],
    moves: &[Move],
) -> Result<(), String> {
    let mut state = initial.clone();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for (wave, list) in by_wave(moves) {
        let mut landing: Vec<(Arc<Pod>, &str)> = Vec::new();
        for m in list {
            if !seen.insert(m.pod.as_str()) {
                return Err(format!("wave {wave}: {} moves a second time", m.pod));
            }
            let Some((namespace, name)) = m.pod.split_once('/') else {
                return Err(format!("wave {wave}: {:?} is not a namespace/name key", m.pod));
            };
            let pod = state
                .node_index(&m.from)
                .and_then(|n| state.nodes.get(n))
                .and_then(|n| n.pods.iter().find(|p| p.namespace == namespace && p.name == name))
                .cloned()
                .ok_or_else(|| format!("wave {wave}: {} does not run on {}", m.pod, m.from))?;
            let selecting: Vec<&Budget> = budgets.iter().filter(|b| b.selects(&pod)).collect();
            if selecting.len() > 1 {
                return Err(format!("wave {wave}: {} is selected by more than one budget", m.pod));
            }
            for b in selecting {
                let allowed = b.allowed(&state);
                if allowed < 1 {
                    return Err(format!(
                        "wave {wave}: evicting {} would be refused: pdb {} allows {allowed} disruptions",
                        m.pod,
                        b.key()
                    ));
                }
            }
            take(&mut state, &m.pod, &m.from);
            landing.push((pod, m.to.as_str()));
        }
        for (pod, to) in landing {
            if !land(&mut state, &pod, to) {
                return Err(format!(
                    "wave {wave}: node {to:?} of {} is not in the cluster",
                    pod.key()
                ));
            }
        }
    }
    Ok(())
}

/// Checks the moves with `kplace check`, one wave at a time: on the state the earlier waves left,
/// the wave's pods are taken off their nodes and placed again as pending pods, in plan order —
/// the replay `check` performs (evictions first, then placements) is exactly how a wave is
/// carried out. Returns every violation of every wave.
pub fn check_moves(initial: &ClusterState, moves: &[Move]) -> CheckReport {
    let mut report = CheckReport::default();
    let mut state = initial.clone();
    for (wave, list) in by_wave(moves) {
        let mut pending: Vec<Pod> = Vec::new();
        let mut plan = Plan::default();
        let mut landing: Vec<(Arc<Pod>, &str)> = Vec::new();
        for m in list {
            let Some(pod) = take(&mut state, &m.pod, &m.from) else {
                report.violations.push(Violation {
                    kind: ViolationKind::UnknownPod,
                    pod: m.pod.clone(),
                    node: Some(m.from.clone()),
                    message: format!("wave {wave}: the pod does not run on {}", m.from),
                });
                continue;
            };
            let mut p = (*pod).clone();
            p.node_name = None;
            p.phase = PodPhase::Pending;
            pending.push(p);
            plan.placements.push(Placement { pod: m.pod.clone(), node: m.to.clone() });
            landing.push((pod, m.to.as_str()));
        }
        let wave_report = check(&state, &pending, &plan);
        report.violations.extend(wave_report.violations.into_iter().map(|mut v| {
            v.message = format!("wave {wave}: {}", v.message);
            v
        }));
        for (pod, to) in landing {
            land(&mut state, &pod, to);
        }
    }
    report
}

/// The state after every move.
pub fn apply_moves(initial: &ClusterState, moves: &[Move]) -> ClusterState {
    let mut state = initial.clone();
    for list in by_wave(moves).values() {
        let mut landing = Vec::new();
        for m in list {
            if let Some(pod) = take(&mut state, &m.pod, &m.from) {
                landing.push((pod, m.to.as_str()));
            }
        }
        for (pod, to) in landing {
            land(&mut state, &pod, to);
        }
    }
    state
}
