//! `kplace check`: the independent plan validator.
//!
//! Input: the cluster snapshot ([`ClusterState`]), the pending pods and a [`Plan`]. Output: a
//! [`CheckReport`] listing every hard constraint of the default kube-scheduler profile (v1.35)
//! that the plan breaks, and every bookkeeping error (unknown pods and nodes, pods placed twice
//! or missing, invalid evictions and moves).
//!
//! This module is the oracle the solvers are tested against, so it shares no code with them:
//! it never calls `crate::plugins` or the framework runtime, and its predicates ([`rules`]) are
//! written from upstream's definitions (`noderesources/fit.go`, `nodeunschedulable`,
//! `tainttoleration`, `nodeaffinity`, `nodeports`, `interpodaffinity/filtering.go`,
//! `podtopologyspread/filtering.go` and `common.go`, `defaultpreemption`; for gangs,
//! kubernetes-sigs/scheduler-plugins `pkg/coscheduling/core/core.go` and Volcano's gang
//! plugin), as plainly as possible rather than as fast as possible.
//!
//! # The replay, and exactly what is checked
//!
//! The plan is replayed on the snapshot: every eviction first, then the placements in plan order
//! (the plan's "scheduling order"). When placement `k` puts pod `P` on node `N`, let
//! `live(k)` be the snapshot's pods minus every victim, plus the placements before `k`, and
//! `ghosts(k)` the victims whose preemptor is placed *after* `k` (they still existed when a
//! sequential scheduler placed `P`). Then:
//!
//! * **Node checks** (state-free): `N` is not cordoned unless `P` tolerates
//!   `node.kubernetes.io/unschedulable:NoSchedule`; every `NoSchedule`/`NoExecute` taint of `N`
//!   is tolerated; `nodeSelector` and required node affinity match `N`.
//! * **Capacity** on `live(k)`: for cpu, memory, ephemeral-storage and every extended resource
//!   that `P` requests (> 0), `request ≤ allocatable − Σ requests of live pods on N`; and
//!   `pods on N + 1 ≤ allocatable pods`. Because requests only grow after the evictions, this is
//!   the same as checking the final state for every resource a placed pod asks for.
//! * **Host ports** on `live(k)`: none of `P`'s host ports conflicts with a port of a live pod
//!   on `N`. The conflict relation is symmetric, so over all placements this is the final-state
//!   rule "no conflicting pair of pods on a node, at least one of them placed by the plan".
//! * **Required pod anti-affinity, both directions**, on `live(k)`: no live pod in `N`'s domain
//!   (same value of the term's topology key) is selected by one of `P`'s anti-affinity terms,
//!   and no live pod with a required anti-affinity term selecting `P` has `N` in that term's
//!   domain. Over all placements this is exactly the final-state rule: no two pods of the final
//!   state, at least one placed by the plan, such that one's required anti-affinity selects the
//!   other within the term's topology domain.
//! * **Required pod affinity** on `live(k) ∪ ghosts(k)`, as upstream's filter: `N` has every
//!   term's topology key, and for every term some pod in `N`'s domain matches *all* of `P`'s
//!   terms — or no pod matching all terms exists at all and `P` matches its own terms (the first
//!   pod of a self-affine group).
//! * **Topology spread, `DoNotSchedule`** on `live(k) ∪ ghosts(k)`, as upstream's filter: `N`
//!   has the constraint's key; domains are the key's values over *eligible* nodes (nodes with
//!   every `DoNotSchedule` key of `P`, and — per `nodeAffinityPolicy`/`nodeTaintsPolicy` when
//!   `Honor` — matching `P`'s node selection / tolerating its hard taints); a domain counts the
//!   non-terminating pods of `P`'s namespace that the selector matches; the global minimum is
//!   0 when there are fewer domains than `minDomains` (default 1); and
//!   `count(N's domain) + (P matches the selector) − minimum ≤ maxSkew`.
//!
//! The counts behind the inter-pod rules are kept per constraint or term and moved by each
//! change of the replay (`check/spread.rs`, `check/terms.rs`; the bound pods' anti-affinity
//! terms per domain in [`Replay`]), so a plan of many such pods is not a scan of every node
//! and pod per placement.
//!
//! * **Gangs** (`crate::model::gang`), on the final state: for every group of pods (a pod's
//!   namespace and its [`crate::model::GangRef`]: convention and name), let `placed` be its
//!   pending members the plan places and `bound` its bound, non-terminal members the plan does
//!   not evict. Then `placed == 0` or `placed + bound >= minMember` (the largest `minMember`
//!   among the members), as coscheduling's Permit (`assigned + 1 >= minMember`) and Volcano's
//!   gang plugin (`JobInfo.ReadyTaskNum() >= MinAvailable`, set from `spec.minMember`) count. A group whose bound members alone
//!   fall below `minMember` through evictions, with no member placed, is not reported: neither
//!   scheduler's preemption protects gangs.
//!
//! Why spread and affinity are judged at the pod's turn and not on the final state: neither is
//! monotone. A final-state `maxSkew` holds only for pods that all carry the constraint — a later
//! pod that matches the selector but has no constraint (or an eviction in the emptiest domain)
//! legitimately skews the domains after a valid placement, and upstream never re-checks; an
//! affinity target may be evicted later, and the first pod of a self-affine group is only valid
//! because it came first. The rule above is what a sequential scheduler enforces, so a valid
//! sequential plan (such as `baseline`'s, whose victims are removed right before their
//! preemptor is placed) can never violate it. Conversely, when every placed pod that the
//! selector matches carries the same constraint and no counted pod is evicted, counts only grow
//! and the minimum never falls, so these checks imply the final-state rule
//! `count(d) − minimum ≤ maxSkew` for every domain `d` that received such a pod.
//!
//! Anti-affinity, ports and capacity are judged with every eviction already done (the binder
//! evicts before it binds); removing pods only helps them, so this never rejects a valid
//! sequential plan either.
//!
//! # Evictions
//!
//! A victim must be a pod bound to a node of the snapshot (not a pending pod), named on that
//! node, evicted once; its preemptor must be a pending pod placed by the plan on the victim's
//! node, with a strictly higher priority than the victim and a preemption policy other than
//! `Never`.
//!
//! # Moves (rebalancing plans)
//!
//! A plan with `moves` (`kplace rebalance`) is replayed further, after the evictions and
//! placements (the order `kplace bind` carries a plan out in): wave by wave, ascending, every
//! pod of a wave is taken off its `from` node, then each replacement is placed on its `to` node
//! in plan order and judged by every placement rule above, on the pods live at that moment (the
//! wave's other pods gone, the earlier replacements of the wave already in place). This is how a
//! wave is carried out: evict, then let the replacements schedule. A moved pod must be a running
//! pod of the snapshot, on `from`, not evicted by the plan, with a controlling owner that
//! recreates it elsewhere (not a DaemonSet, not its node); `to` must be a node of the snapshot;
//! and a pod moves at most once in a plan, since its replacement is a new pod with another name
//! (so never twice in one wave). A rebalancing plan (one with `moves` or `summary.rebalance`)
//! leaves pending pods alone: those it neither places nor lists as unschedulable are not
//! missing.
//!
//! # PodDisruptionBudgets
//!
//! With the snapshot's budgets ([`budgets`], the check's own reading of them), every wave of
//! moves may evict at most as many pods of a budget as it allows at the start of a wave, and no
//! moved pod may be selected by two budgets. Preemption victims are not judged by budgets:
//! kube-scheduler's preemption only prefers candidates that respect them.
//!
//! # Not checked
//!
//! Profile-specific settings (the checker judges the default profile: every filter enabled,
//! NodeResourcesFit without ignored resources, NodeAffinity without `addedAffinity`,
//! PodTopologySpread's system defaults, which are `ScheduleAnyway`), volumes, DRA, and
//! `spec.nodeName` (pending pods have none).

pub mod budgets;
mod kept;
pub mod rules;
mod spread;
mod terms;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};

use self::rules::TermOwner;
use crate::model::{ClusterState, Node, Pod, PodAffinityTerm, PreemptionPolicy};
use crate::plan::Plan;
use crate::resources::{CPU, EPHEMERAL_STORAGE, MEMORY};

/// What kind of rule a violation breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ViolationKind {
    /// A placement or unschedulable entry names a pod that is not pending.
    UnknownPod,
    /// A placement names a node that is not in the snapshot.
    UnknownNode,
    /// A pod is placed more than once.
    DuplicatePlacement,
    /// A pod is listed as unschedulable more than once.
    DuplicateUnschedulable,
    /// A pod is both placed and listed as unschedulable.
    PlacedAndUnschedulable,
    /// A pending pod is neither placed nor listed as unschedulable.
    MissingPod,
    /// A resource request exceeds what is left of the node's allocatable.
    InsufficientResource,
    /// The node would hold more pods than it allows.
    TooManyPods,
    /// The node is cordoned and the pod does not tolerate it.
    NodeCordoned,
    /// The node has a `NoSchedule`/`NoExecute` taint the pod does not tolerate.
    UntoleratedTaint,
    /// The node does not match the pod's `nodeSelector`.
    NodeSelectorMismatch,
    /// The node does not match the pod's required node affinity.
    NodeAffinityMismatch,
    /// A host port of the pod is already used on the node.
    HostPortConflict,
    /// The pod's required pod affinity is not satisfied.
    PodAffinity,
    /// The pod's required pod anti-affinity is violated.
    PodAntiAffinity,
    /// A pod already on a node has a required anti-affinity that the placement violates.
    ExistingPodAntiAffinity,
    /// A `DoNotSchedule` topology spread constraint is violated.
    TopologySpread,
    /// An eviction names a pod that is not bound to a node of the snapshot.
    EvictionNotBound,
    /// An eviction names a node the victim is not on.
    EvictionWrongNode,
    /// A pod is evicted more than once.
    DuplicateEviction,
    /// The preemptor is not a pending pod placed by the plan on the victim's node.
    EvictionPreemptor,
    /// The victim's priority is not strictly lower than its preemptor's.
    EvictionPriority,
    /// The preemptor has `preemptionPolicy: Never`.
    EvictionPreemptionPolicy,
    /// A gang has some pending members placed, but fewer than its `minMember` with its bound
    /// members counted.
    Gang,
    /// A move names a running pod that is not on the move's `from` node.
    MoveWrongNode,
    /// A pod is moved more than once (its replacement is a new pod with another name).
    DuplicateMove,
    /// A moved pod has no controller that would create its replacement elsewhere (no
    /// controlling owner, or a DaemonSet or its node owns it).
    MoveNotReplaced,
    /// A wave evicts more pods of a PodDisruptionBudget than it allows, or moves a pod that
    /// several budgets select ([`budgets`]).
    DisruptionBudget,
}

impl ViolationKind {
    /// The name used in reports (`insufficient_resource`).
    pub fn as_str(self) -> &'static str {
        match self {
            ViolationKind::UnknownPod => "unknown_pod",
            ViolationKind::UnknownNode => "unknown_node",
            ViolationKind::DuplicatePlacement => "duplicate_placement",
            ViolationKind::DuplicateUnschedulable => "duplicate_unschedulable",
            ViolationKind::PlacedAndUnschedulable => "placed_and_unschedulable",
            ViolationKind::MissingPod => "missing_pod",
            ViolationKind::InsufficientResource => "insufficient_resource",
            ViolationKind::TooManyPods => "too_many_pods",
            ViolationKind::NodeCordoned => "node_cordoned",
            ViolationKind::UntoleratedTaint => "untolerated_taint",
            ViolationKind::NodeSelectorMismatch => "node_selector_mismatch",
            ViolationKind::NodeAffinityMismatch => "node_affinity_mismatch",
            ViolationKind::HostPortConflict => "host_port_conflict",
            ViolationKind::PodAffinity => "pod_affinity",
            ViolationKind::PodAntiAffinity => "pod_anti_affinity",
            ViolationKind::ExistingPodAntiAffinity => "existing_pod_anti_affinity",
            ViolationKind::TopologySpread => "topology_spread",
            ViolationKind::EvictionNotBound => "eviction_not_bound",
            ViolationKind::EvictionWrongNode => "eviction_wrong_node",
            ViolationKind::DuplicateEviction => "duplicate_eviction",
            ViolationKind::EvictionPreemptor => "eviction_preemptor",
            ViolationKind::EvictionPriority => "eviction_priority",
            ViolationKind::EvictionPreemptionPolicy => "eviction_preemption_policy",
            ViolationKind::Gang => "gang",
            ViolationKind::MoveWrongNode => "move_wrong_node",
            ViolationKind::DuplicateMove => "duplicate_move",
            ViolationKind::MoveNotReplaced => "move_not_replaced",
            ViolationKind::DisruptionBudget => "disruption_budget",
        }
    }
}

impl fmt::Display for ViolationKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// The rule.
    pub kind: ViolationKind,
    /// `namespace/name` of the pod concerned (the placed pod, or the victim of an eviction).
    pub pod: String,
    /// The node concerned, when there is one.
    pub node: Option<String>,
    /// What is wrong, in words, lower-case.
    pub message: String,
}

/// The checker's verdict on a plan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckReport {
    /// Every violation, in the order the replay found them.
    pub violations: Vec<Violation>,
}

impl CheckReport {
    /// Whether the plan breaks no rule.
    pub fn is_valid(&self) -> bool {
        self.violations.is_empty()
    }

    /// Number of violations per kind.
    pub fn counts(&self) -> BTreeMap<ViolationKind, usize> {
        let mut out = BTreeMap::new();
        for v in &self.violations {
            *out.entry(v.kind).or_insert(0) += 1;
        }
        out
    }

    fn push(&mut self, kind: ViolationKind, pod: &str, node: Option<&str>, message: String) {
        self.violations.push(Violation {
            kind,
            pod: pod.to_string(),
            node: node.map(str::to_string),
            message,
        });
    }
}

/// A victim removed by the evictions whose preemptor is placed at replay turn `turn`.
#[derive(Debug, Clone, Copy)]
struct Ghost<'a> {
    pod: &'a Pod,
    node: usize,
    /// The preemptor's turn; the victim is still visible to inter-pod rules before it.
    turn: usize,
}

/// Live pods with one required anti-affinity term (see [`Replay::repelling_terms`]).
struct Repelling<'a> {
    namespace: &'a str,
    term: &'a PodAffinityTerm,
    /// The pods per value of the term's key.
    counts: BTreeMap<&'a str, i64>,
}

/// The replayed cluster.
struct Replay<'a> {
    cluster: &'a ClusterState,
    /// Pods on each node: the snapshot's, minus victims, plus placements so far.
    live: Vec<Vec<&'a Pod>>,
    /// Sorted by turn once the evictions are read.
    ghosts: Vec<Ghost<'a>>,
    /// Every change of `live`, in order: `(node, pod, added)`.
    changes: Vec<(usize, &'a Pod, bool)>,
    /// The live pods with a required anti-affinity term, with their nodes, in `live`'s order
    /// (the few pods the existing-pod side of the rule reads).
    repelling: Vec<(usize, &'a Pod)>,
    /// The terms of `repelling` by owner namespace and term, with how many of those pods are
    /// in each domain of the term's key: the placed pod is compared with the terms of the
    /// groups present in its node's domains, not with every such pod. `None`: no index (every
    /// placement scans `repelling`).
    repelling_terms: Option<BTreeMap<String, Repelling<'a>>>,
    /// The spread rule's counts, kept as the replay goes.
    tallies: spread::Tallies,
    /// The pod (anti-)affinity rules' counts, kept as the replay goes.
    terms: terms::Tallies,
}

impl<'a> Replay<'a> {
    /// Every pod a sequential scheduler saw at turn `turn`, with its node: live pods and the
    /// victims of preemptors that come later.
    fn seen_at(&self, turn: usize) -> impl Iterator<Item = (usize, &'a Pod)> + '_ {
        let live =
            self.live.iter().enumerate().flat_map(|(n, pods)| pods.iter().map(move |p| (n, *p)));
        let ghosts = self.ghosts.iter().filter(move |g| g.turn > turn).map(|g| (g.node, g.pod));
        live.chain(ghosts)
    }

    /// What changed among the pods seen since a tally counted the first `changes` changes at
    /// turn `from`, up to the present at turn `to`: each later change of `live` as `(node,
    /// pod, 1)` or `(node, pod, -1)`, then, with `ghosts`, the victims whose preemptor's turn
    /// came in between (no longer seen: -1).
    fn seen_since(
        &self,
        changes: usize,
        from: usize,
        to: usize,
        ghosts: bool,
    ) -> impl Iterator<Item = (usize, &'a Pod, i64)> + '_ {
        let changed =
            self.changes[changes..].iter().map(|&(m, q, added)| (m, q, if added { 1 } else { -1 }));
        // The ghosts are sorted by their preemptor's turn.
        let gone = if ghosts {
            self.ghosts.partition_point(|g| g.turn <= from)
                ..self.ghosts.partition_point(|g| g.turn <= to)
        } else {
            0..0
        };
        changed.chain(self.ghosts[gone].iter().map(|g| (g.node, g.pod, -1)))
    }

    /// Adds `pod` to the live pods of node `n`.
    fn add(&mut self, n: usize, pod: &'a Pod) {
        if let Some(pods) = self.live.get_mut(n) {
            pods.push(pod);
            self.changes.push((n, pod, true));
            if !pod.pod_anti_affinity.required.is_empty() {
                // Kept in `live`'s order: by node, then as added.
                let at = self.repelling.partition_point(|&(m, _)| m <= n);
                self.repelling.insert(at, (n, pod));
                self.count_repelling(n, pod, 1);
            }
        }
    }

    /// Takes `pod` (this very pod) off the live pods of node `n`, where it is.
    fn remove(&mut self, n: usize, pod: &'a Pod) {
        if let Some(pods) = self.live.get_mut(n)
            && let Some(i) = pods.iter().position(|p| std::ptr::eq(*p, pod))
        {
            pods.remove(i);
            self.changes.push((n, pod, false));
            if !pod.pod_anti_affinity.required.is_empty() {
                self.repelling.retain(|&(m, q)| m != n || !std::ptr::eq(q, pod));
                self.count_repelling(n, pod, -1);
            }
        }
    }

    /// Counts `pod`'s anti-affinity terms on node `n` in [`Replay::repelling_terms`] (`by`: 1
    /// as it comes, -1 as it goes).
    fn count_repelling(&mut self, n: usize, pod: &'a Pod, by: i64) {
        let (Some(groups), Some(node)) = (self.repelling_terms.as_mut(), self.cluster.nodes.get(n))
        else {
            return;
        };
        for term in &pod.pod_anti_affinity.required {
            let Some(v) = node.labels.get(&term.topology_key) else { continue };
            let group =
                groups.entry(format!("{:?} {term:?}", pod.namespace)).or_insert_with(|| {
                    Repelling { namespace: &pod.namespace, term, counts: BTreeMap::new() }
                });
            *group.counts.entry(v.as_str()).or_insert(0) += by;
        }
    }

    /// Whether a live pod's required anti-affinity term may select `pod` in node `n`'s domain
    /// (always, without the index).
    fn may_be_repelled(&self, n: usize, pod: &Pod) -> bool {
        let (Some(groups), Some(node)) = (&self.repelling_terms, self.node(n)) else {
            return true;
        };
        groups.values().any(|g| {
            node.labels
                .get(&g.term.topology_key)
                .and_then(|v| g.counts.get(v.as_str()))
                .is_some_and(|&c| c > 0)
                && rules::term_selects(self.cluster, g.namespace, TermOwner::Existing, g.term, pod)
        })
    }

    fn live_pods(&self) -> impl Iterator<Item = (usize, &'a Pod)> + '_ {
        self.live.iter().enumerate().flat_map(|(n, pods)| pods.iter().map(move |p| (n, *p)))
    }

    fn node(&self, n: usize) -> Option<&'a Node> {
        self.cluster.nodes.get(n)
    }

    fn same_domain(&self, a: usize, b: usize, key: &str) -> bool {
        match (
            self.node(a).and_then(|n| n.labels.get(key)),
            self.node(b).and_then(|n| n.labels.get(key)),
        ) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        }
    }
}

/// Checks `plan` against the snapshot `cluster` and its `pending` pods. See the module
/// documentation for the exact rules. Never panics, whatever the plan says.
pub fn check(cluster: &ClusterState, pending: &[Pod], plan: &Plan) -> CheckReport {
    check_with(cluster, pending, plan, None)
}

/// [`check`] keeping at most `tallies` counts per inter-pod rule (`None`: the default; the
/// tests compare kept tallies with none).
fn check_with(
    cluster: &ClusterState,
    pending: &[Pod],
    plan: &Plan,
    tallies: Option<usize>,
) -> CheckReport {
    let mut report = CheckReport::default();

    let mut pending_by_key: BTreeMap<String, &Pod> = BTreeMap::new();
    for p in pending {
        pending_by_key.entry(p.key()).or_insert(p);
    }
    let mut bound_by_key: BTreeMap<String, (usize, &Pod)> = BTreeMap::new();
    for (n, node) in cluster.nodes.iter().enumerate() {
        for p in &node.pods {
            bound_by_key.entry(p.key()).or_insert((n, p.as_ref()));
        }
    }
    let node_by_name: BTreeMap<&str, usize> =
        cluster.nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();

    // Placements: bookkeeping first; `turns` are the placements the replay will apply.
    let mut turns: Vec<(&Pod, usize)> = Vec::new();
    let mut placed: BTreeMap<&str, (usize, usize)> = BTreeMap::new(); // key → (turn, node)
    for pl in &plan.placements {
        let Some(&pod) = pending_by_key.get(&pl.pod) else {
            let what = if bound_by_key.contains_key(&pl.pod) {
                "is already bound, not pending"
            } else {
                "is not a pending pod of the snapshot"
            };
            report.push(
                ViolationKind::UnknownPod,
                &pl.pod,
                Some(&pl.node),
                format!("placed pod {:?} {what}", pl.pod),
            );
            continue;
        };
        let Some(&node) = node_by_name.get(pl.node.as_str()) else {
            report.push(
                ViolationKind::UnknownNode,
                &pl.pod,
                Some(&pl.node),
                format!("node {:?} is not in the snapshot", pl.node),
            );
            continue;
        };
        if placed.contains_key(pl.pod.as_str()) {
            report.push(
                ViolationKind::DuplicatePlacement,
                &pl.pod,
                Some(&pl.node),
                "pod is placed more than once".to_string(),
            );
            continue;
        }
        placed.insert(pl.pod.as_str(), (turns.len(), node));
        turns.push((pod, node));
    }

    let mut unschedulable: BTreeSet<&str> = BTreeSet::new();
    for u in &plan.unschedulable {
        if !pending_by_key.contains_key(&u.pod) {
            report.push(
                ViolationKind::UnknownPod,
                &u.pod,
                None,
                format!("unschedulable pod {:?} is not a pending pod of the snapshot", u.pod),
            );
            continue;
        }
        if !unschedulable.insert(u.pod.as_str()) {
            report.push(
                ViolationKind::DuplicateUnschedulable,
                &u.pod,
                None,
                "pod is listed as unschedulable more than once".to_string(),
            );
            continue;
        }
        if let Some(&(_, node)) = placed.get(u.pod.as_str()) {
            report.push(
                ViolationKind::PlacedAndUnschedulable,
                &u.pod,
                cluster.nodes.get(node).map(|n| n.name.as_str()),
                "pod is both placed and listed as unschedulable".to_string(),
            );
        }
    }
    // A rebalancing plan moves running pods and leaves the pending ones alone.
    let rebalancing = !plan.moves.is_empty() || plan.summary.rebalance.is_some();
    for key in pending_by_key.keys().filter(|_| !rebalancing) {
        if !placed.contains_key(key.as_str()) && !unschedulable.contains(key.as_str()) {
            report.push(
                ViolationKind::MissingPod,
                key,
                None,
                "pending pod is neither placed nor listed as unschedulable".to_string(),
            );
        }
    }

    // Evictions.
    let mut replay = Replay {
        cluster,
        live: cluster.nodes.iter().map(|n| n.pods.iter().map(AsRef::as_ref).collect()).collect(),
        ghosts: Vec::new(),
        changes: Vec::new(),
        repelling: Vec::new(),
        repelling_terms: (tallies != Some(0)).then(BTreeMap::new),
        tallies: tallies.map_or_else(spread::Tallies::default, spread::Tallies::new),
        terms: tallies.map_or_else(terms::Tallies::default, terms::Tallies::new),
    };
    replay.repelling =
        replay.live_pods().filter(|(_, p)| !p.pod_anti_affinity.required.is_empty()).collect();
    for (m, q) in replay.repelling.clone() {
        replay.count_repelling(m, q, 1);
    }
    let mut evicted: BTreeSet<&str> = BTreeSet::new();
    for e in &plan.evictions {
        let Some(&(victim_node, victim)) = bound_by_key.get(&e.pod) else {
            let what = if pending_by_key.contains_key(&e.pod) {
                "is pending, not bound to a node"
            } else {
                "is not a pod of the snapshot"
            };
            report.push(
                ViolationKind::EvictionNotBound,
                &e.pod,
                Some(&e.node),
                format!("evicted pod {:?} {what}", e.pod),
            );
            continue;
        };
        if !evicted.insert(e.pod.as_str()) {
            report.push(
                ViolationKind::DuplicateEviction,
                &e.pod,
                Some(&e.node),
                "pod is evicted more than once".to_string(),
            );
            continue;
        }
        let victim_node_name = cluster.nodes.get(victim_node).map_or("", |n| n.name.as_str());
        // A plan from another tool may leave the node out: the victim's node is meant.
        if !e.node.is_empty() && e.node != victim_node_name {
            report.push(
                ViolationKind::EvictionWrongNode,
                &e.pod,
                Some(&e.node),
                format!("the victim runs on {victim_node_name:?}, not on {:?}", e.node),
            );
        }
        let preemptor_turn = if e.preemptor.is_empty() {
            unnamed_preemptor(victim, victim_node, &turns, &mut report, &e.pod, victim_node_name)
        } else {
            match (pending_by_key.get(&e.preemptor), placed.get(e.preemptor.as_str())) {
                (None, _) => {
                    report.push(
                        ViolationKind::EvictionPreemptor,
                        &e.pod,
                        Some(victim_node_name),
                        format!("preemptor {:?} is not a pending pod of the snapshot", e.preemptor),
                    );
                    None
                }
                (Some(preemptor), placement) => {
                    if victim.priority >= preemptor.priority {
                        report.push(
                            ViolationKind::EvictionPriority,
                            &e.pod,
                            Some(victim_node_name),
                            format!(
                                "victim priority {} is not lower than preemptor {:?} priority {}",
                                victim.priority, e.preemptor, preemptor.priority
                            ),
                        );
                    }
                    if preemptor.preemption_policy == PreemptionPolicy::Never {
                        report.push(
                            ViolationKind::EvictionPreemptionPolicy,
                            &e.pod,
                            Some(victim_node_name),
                            format!("preemptor {:?} has preemptionPolicy Never", e.preemptor),
                        );
                    }
                    match placement {
                        None => {
                            report.push(
                                ViolationKind::EvictionPreemptor,
                                &e.pod,
                                Some(victim_node_name),
                                format!("preemptor {:?} is not placed by the plan", e.preemptor),
                            );
                            None
                        }
                        Some(&(turn, node)) => {
                            if node != victim_node {
                                let name = cluster.nodes.get(node).map_or("", |n| n.name.as_str());
                                report.push(
                                ViolationKind::EvictionPreemptor,
                                &e.pod,
                                Some(victim_node_name),
                                format!(
                                    "preemptor {:?} is placed on {name:?}, not on the victim's node",
                                    e.preemptor
                                ),
                            );
                            }
                            Some(turn)
                        }
                    }
                }
            }
        };
        replay.remove(victim_node, victim);
        if let Some(turn) = preemptor_turn {
            replay.ghosts.push(Ghost { pod: victim, node: victim_node, turn });
        }
    }

    replay.ghosts.sort_by_key(|g| g.turn);

    // Placements, in order.
    for (turn, &(pod, node)) in turns.iter().enumerate() {
        check_placement(&replay, turn, pod, node, &mut report);
        replay.add(node, pod);
    }

    check_gangs(cluster, &pending_by_key, &placed, &evicted, &mut report);

    let lookup = Lookup { pending: &pending_by_key, bound: &bound_by_key, nodes: &node_by_name };
    check_moves(&mut replay, &lookup, &evicted, turns.len(), plan, &mut report);
    report
}

/// For an eviction whose plan names no preemptor (a plan from another tool): the first
/// placement on the victim's node that could have preempted it (strictly higher priority,
/// preemption allowed) stands for its preemptor, and its turn is returned; without one, the
/// eviction is reported.
fn unnamed_preemptor(
    victim: &Pod,
    victim_node: usize,
    turns: &[(&Pod, usize)],
    report: &mut CheckReport,
    key: &str,
    node_name: &str,
) -> Option<usize> {
    let turn = turns.iter().position(|(p, n)| {
        *n == victim_node
            && p.priority > victim.priority
            && p.preemption_policy != PreemptionPolicy::Never
    });
    if turn.is_none() {
        report.push(
            ViolationKind::EvictionPreemptor,
            key,
            Some(node_name),
            format!(
                "the eviction names no preemptor, and no pod the plan places on {node_name:?} \
                 may preempt it (priority above {}, preemption allowed)",
                victim.priority
            ),
        );
    }
    turn
}

/// The snapshot's pods and nodes by key and name.
struct Lookup<'m, 'a> {
    pending: &'m BTreeMap<String, &'a Pod>,
    /// Bound pods: (snapshot node, pod).
    bound: &'m BTreeMap<String, (usize, &'a Pod)>,
    nodes: &'m BTreeMap<&'a str, usize>,
}

/// Why a controller would not create `pod`'s replacement on another node, if it would not.
fn not_replaced(pod: &Pod) -> Option<&'static str> {
    match pod.owner.as_ref().map(|o| o.kind.as_str()) {
        None => Some("the pod has no controlling owner: nothing would create its replacement"),
        Some("DaemonSet") => Some("a DaemonSet recreates its pod on the same node"),
        Some("Node") => Some("a static pod belongs to its node"),
        Some(_) => None,
    }
}

/// The moves of a rebalancing plan, replayed after the evictions and placements, wave by wave
/// (ascending; within a wave in plan order): every pod of the wave is taken off its `from`
/// node, then each replacement is placed on its `to` node as a placement is (every rule of
/// [`check_placement`], on the pods live at that moment). Bookkeeping: a moved pod is a running
/// pod of the snapshot, not evicted, on `from`, moved at most once, with a controller that
/// recreates it elsewhere; `to` is a node of the snapshot. Violations of a move's placement
/// carry its wave in their message.
fn check_moves<'a>(
    replay: &mut Replay<'a>,
    lookup: &Lookup<'_, 'a>,
    evicted: &BTreeSet<&str>,
    first_turn: usize,
    plan: &'a Plan,
    report: &mut CheckReport,
) {
    let mut waves: BTreeMap<u32, Vec<&'a crate::plan::Move>> = BTreeMap::new();
    for m in &plan.moves {
        waves.entry(m.wave).or_default().push(m);
    }
    let mut moved: BTreeSet<&str> = BTreeSet::new();
    let mut turn = first_turn;
    for (wave, moves) in waves {
        let mut landing: Vec<(&'a Pod, usize, &'a crate::plan::Move)> = Vec::new();
        for m in moves {
            let at = Some(m.from.as_str());
            let Some(&(from, pod)) = lookup.bound.get(&m.pod) else {
                let what = if lookup.pending.contains_key(&m.pod) {
                    "is pending, not running on a node"
                } else {
                    "is not a pod of the snapshot"
                };
                let message = format!("wave {wave}: moved pod {:?} {what}", m.pod);
                report.push(ViolationKind::UnknownPod, &m.pod, at, message);
                continue;
            };
            if !moved.insert(m.pod.as_str()) {
                let message = format!(
                    "wave {wave}: the pod is moved more than once (its replacement is a new pod)"
                );
                report.push(ViolationKind::DuplicateMove, &m.pod, at, message);
                continue;
            }
            if evicted.contains(m.pod.as_str()) {
                let message = format!("wave {wave}: moved pod {:?} is evicted by the plan", m.pod);
                report.push(ViolationKind::UnknownPod, &m.pod, at, message);
                continue;
            }
            let runs_on = replay.node(from).map_or("", |n| n.name.as_str());
            if runs_on != m.from {
                let message =
                    format!("wave {wave}: the pod runs on {runs_on:?}, not on {:?}", m.from);
                report.push(ViolationKind::MoveWrongNode, &m.pod, at, message);
                continue;
            }
            let Some(&to) = lookup.nodes.get(m.to.as_str()) else {
                let message = format!("wave {wave}: node {:?} is not in the snapshot", m.to);
                report.push(ViolationKind::UnknownNode, &m.pod, Some(m.to.as_str()), message);
                continue;
            };
            if let Some(why) = not_replaced(pod) {
                report.push(
                    ViolationKind::MoveNotReplaced,
                    &m.pod,
                    at,
                    format!("wave {wave}: {why}"),
                );
                continue;
            }
            replay.remove(from, pod);
            landing.push((pod, to, m));
        }
        for (pod, to, m) in landing {
            let first = report.violations.len();
            check_placement(replay, turn, pod, to, report);
            for v in report.violations.iter_mut().skip(first) {
                v.message = format!("wave {wave}: move from {:?}: {}", m.from, v.message);
            }
            replay.add(to, pod);
            turn += 1;
        }
    }
}

/// What the gang rule counts for one group.
#[derive(Debug, Default)]
struct GangTally<'a> {
    min_member: i32,
    /// Pending members the plan places: (replay turn, pod key, node).
    placed: Vec<(usize, &'a str, usize)>,
    /// Pending members.
    pending: usize,
    /// Bound members (not terminal) the plan does not evict.
    bound: i64,
}

/// The gang rule: for every group, the pending members placed plus the bound members that
/// survive the evictions reach `minMember`, or no pending member is placed. One violation per
/// broken group, on its first placed member.
fn check_gangs(
    cluster: &ClusterState,
    pending_by_key: &BTreeMap<String, &Pod>,
    placed: &BTreeMap<&str, (usize, usize)>,
    evicted: &BTreeSet<&str>,
    report: &mut CheckReport,
) {
    // (convention, namespace, name) → tally. The group of a pod is its namespace and its
    // `GangRef`; the largest `minMember` among the members applies.
    type Key<'a> = (crate::model::GangConvention, &'a str, &'a str);
    fn tally<'t, 'a>(
        tallies: &'t mut BTreeMap<Key<'a>, GangTally<'a>>,
        pod: &'a Pod,
    ) -> Option<&'t mut GangTally<'a>> {
        let g = pod.gang.as_ref()?;
        let t = tallies.entry((g.convention, pod.namespace.as_str(), g.name.as_str())).or_default();
        t.min_member = t.min_member.max(g.min_member);
        Some(t)
    }
    let mut tallies: BTreeMap<Key<'_>, GangTally<'_>> = BTreeMap::new();
    for node in &cluster.nodes {
        for pod in node.pods.iter().filter(|p| !p.is_terminal()) {
            let survives = !evicted.contains(pod.key().as_str());
            if let Some(t) = tally(&mut tallies, pod)
                && survives
            {
                t.bound += 1;
            }
        }
    }
    for (key, pod) in pending_by_key {
        if let Some(t) = tally(&mut tallies, pod) {
            t.pending += 1;
            if let Some(&(turn, node)) = placed.get(key.as_str()) {
                t.placed.push((turn, key.as_str(), node));
            }
        }
    }
    for ((convention, namespace, name), t) in &tallies {
        let placed_count = t.placed.len() as i64;
        let total = placed_count + t.bound;
        if placed_count == 0 || total >= i64::from(t.min_member) {
            continue;
        }
        let Some(&(_, first, node)) = t.placed.iter().min() else { continue };
        report.push(
            ViolationKind::Gang,
            first,
            cluster.nodes.get(node).map(|n| n.name.as_str()),
            format!(
                "gang {namespace}/{name} ({convention}): {placed_count} of its {} pending pods \
                 placed + {} bound = {total}, below minMember {}; all or nothing",
                t.pending, t.bound, t.min_member
            ),
        );
    }
}

/// Every rule for placing `pod` on node `n` at replay turn `turn`.
fn check_placement(
    replay: &Replay<'_>,
    turn: usize,
    pod: &Pod,
    n: usize,
    report: &mut CheckReport,
) {
    let Some(node) = replay.node(n) else { return };
    let key = pod.key();
    let node_name = Some(node.name.as_str());
    let mut push = |kind, message: String| report.push(kind, &key, node_name, message);

    // Node checks.
    if rules::blocked_by_cordon(pod, node) {
        push(ViolationKind::NodeCordoned, "node is cordoned (spec.unschedulable)".to_string());
    }
    if let Some(t) = rules::untolerated_hard_taint(pod, node) {
        push(
            ViolationKind::UntoleratedTaint,
            format!("untolerated taint {}={}:{}", t.key, t.value, t.effect.as_str()),
        );
    }
    if !rules::node_selector_matches(pod, node) {
        push(ViolationKind::NodeSelectorMismatch, "node does not match nodeSelector".to_string());
    }
    if !rules::required_node_affinity_matches(pod, node) {
        push(
            ViolationKind::NodeAffinityMismatch,
            "node does not match required node affinity".to_string(),
        );
    }

    // Capacity on the live pods of the node.
    let on_node: &[&Pod] = replay.live.get(n).map_or(&[], Vec::as_slice);
    let allowed = node.allocatable.allowed_pod_number;
    if on_node.len() as i64 + 1 > allowed {
        push(
            ViolationKind::TooManyPods,
            format!(
                "node would hold {} pod{}, it allows {allowed}",
                on_node.len() + 1,
                if on_node.is_empty() { "" } else { "s" }
            ),
        );
    }
    let mut names: Vec<&str> = vec![CPU, MEMORY, EPHEMERAL_STORAGE];
    names.extend(pod.requests.scalar.keys().map(String::as_str));
    for name in names {
        let request = pod.requests.get(name);
        if request <= 0 {
            continue;
        }
        let used: i64 = on_node.iter().map(|p| p.requests.get(name)).sum();
        let alloc = node.allocatable.get(name);
        if request > alloc - used {
            push(
                ViolationKind::InsufficientResource,
                format!(
                    "insufficient {name}: requests {request}, {} of {alloc} left",
                    alloc - used
                ),
            );
        }
    }

    // Host ports.
    for want in &pod.host_ports {
        if let Some(other) = on_node
            .iter()
            .find(|p| p.host_ports.iter().any(|used| rules::ports_conflict(want, used)))
        {
            push(
                ViolationKind::HostPortConflict,
                format!(
                    "host port {}/{} on {} is used by {}",
                    want.port,
                    want.protocol,
                    want.host_ip,
                    other.key()
                ),
            );
        }
    }

    // Required anti-affinity, both ways, on live pods.
    for term in &pod.pod_anti_affinity.required {
        let Some(value) = node.labels.get(&term.topology_key) else { continue };
        let selects = |q: &Pod| {
            rules::term_selects(replay.cluster, &pod.namespace, TermOwner::Incoming, term, q)
        };
        let counted = terms::Term {
            signature: format!("anti {:?} {term:?}", pod.namespace),
            keys: &[&term.topology_key],
            ghosts: false,
            selects: &selects,
        };
        let in_domain = terms::counts_at(replay, turn, &counted, &[value])[0].0 > 0;
        // The pod to name: the first in the live pods' order.
        if in_domain
            && let Some((_, other)) = replay
                .live_pods()
                .find(|&(m, q)| replay.same_domain(n, m, &term.topology_key) && selects(q))
        {
            push(
                ViolationKind::PodAntiAffinity,
                format!(
                    "anti-affinity term on {:?} selects {} in the same domain",
                    term.topology_key,
                    other.key()
                ),
            );
        }
    }
    let repelling: &[(usize, &Pod)] =
        if replay.may_be_repelled(n, pod) { &replay.repelling } else { &[] };
    for &(m, q) in repelling {
        for term in &q.pod_anti_affinity.required {
            if replay.same_domain(n, m, &term.topology_key)
                && rules::term_selects(replay.cluster, &q.namespace, TermOwner::Existing, term, pod)
            {
                push(
                    ViolationKind::ExistingPodAntiAffinity,
                    format!(
                        "{}'s anti-affinity term on {:?} selects this pod in the same domain",
                        q.key(),
                        term.topology_key
                    ),
                );
            }
        }
    }

    if let Some(message) = affinity_violation(replay, turn, pod, n) {
        push(ViolationKind::PodAffinity, message);
    }
    for message in spread::spread_violations(replay, turn, pod, n) {
        push(ViolationKind::TopologySpread, message);
    }
}

/// Upstream's required pod affinity filter for `pod` on node `n`, over the pods seen at `turn`.
fn affinity_violation(replay: &Replay<'_>, turn: usize, pod: &Pod, n: usize) -> Option<String> {
    let required = &pod.pod_affinity.required;
    if required.is_empty() {
        return None;
    }
    let node = replay.node(n)?;
    if let Some(t) = required.iter().find(|t| !node.labels.contains_key(&t.topology_key)) {
        return Some(format!("node has no {:?} label for an affinity term", t.topology_key));
    }
    let matches_all = |q: &Pod| {
        required
            .iter()
            .all(|t| rules::term_selects(replay.cluster, &pod.namespace, TermOwner::Incoming, t, q))
    };
    // Per term: whether some pod matching every term is in n's domain; and whether any pod
    // matching every term sits on a node with one of the terms' keys.
    let keys: Vec<&str> = required.iter().map(|t| t.topology_key.as_str()).collect();
    let values: Vec<&str> =
        keys.iter().map(|k| node.labels.get(*k).map_or("", String::as_str)).collect();
    let counted = terms::Term {
        signature: format!("affinity {:?} {required:?}", pod.namespace),
        keys: &keys,
        ghosts: true,
        selects: &matches_all,
    };
    let counts = terms::counts_at(replay, turn, &counted, &values);
    let satisfied: Vec<bool> = counts.iter().map(|&(here, _)| here > 0).collect();
    let any_counted = counts.iter().any(|&(_, total)| total > 0);
    if satisfied.iter().all(|s| *s) {
        return None;
    }
    if !any_counted && matches_all(pod) {
        return None; // The first pod of a group with affinity to itself.
    }
    let missing: Vec<&str> = required
        .iter()
        .zip(&satisfied)
        .filter(|(_, s)| !**s)
        .map(|(t, _)| t.topology_key.as_str())
        .collect();
    Some(format!("no pod matching the affinity terms in the node's {missing:?} domain"))
}

#[cfg(test)]
mod tests;
