//! Batch preemption: one victim-minimizing pass that frees room for the pods the assignment
//! left unplaced, by evicting running pods of lower priority.
//!
//! Input: a [`PreemptProblem`] — each node's free capacity per resource (with every pod placed
//! so far already counted), the running pods that may be evicted ([`VictimSpec`]: node,
//! priority, requests, PodDisruptionBudgets, start time), each PodDisruptionBudget's
//! `disruptionsAllowed`, and the pods still unplaced as classes of interchangeable pods
//! ([`PreemptorSpec`]: count, priority, requests, `preemptionPolicy`) with a preemptor × node
//! eligibility matrix (the node passes every filter except resource fit, with the victims still
//! there). Output: a [`PreemptPlan`] — the placements in decision order, every eviction with
//! the placement (preemptor and node) it makes room for, how many evictions violate a
//! PodDisruptionBudget, and how many pods of each preemptor stay unplaced.
//!
//! Upstream (v1.35): `pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go`
//! (`SelectVictimsOnNode`, `filterPodsWithPDBViolation`, `PodEligibleToPreemptOthers`,
//! `isPreemptionAllowed`) and `pkg/scheduler/framework/preemption/preemption.go`
//! (`pickOneNodeForPreemption`), read at e4d77d92 / 008b3652 (the later main branch only adds
//! pod-group gates in front of the same logic); `pkg/scheduler/util/utils.go`
//! (`MoreImportantPod`, `GetEarliestPodStartTime`).
//!
//! # Algorithm
//!
//! 1. Preemptors are taken in priority order (highest first), equal priorities in the given
//!    order (the caller's queue order, as PrioritySort); the pods of one preemptor one at a time.
//! 2. For a pod of priority `p`, every eligible node is costed. A node where the pod fits in the
//!    free room (left over, or freed by an earlier eviction of this pass) costs nothing. Else, if
//!    the pod may preempt (`preemptionPolicy` is not `Never`), the victim set on the node is
//!    upstream's `SelectVictimsOnNode` over the pods still running there: remove every pod of
//!    priority `< p` (never `≥ p`); if the pod does not fit even then, the node is out; else
//!    reprieve (keep) as many as possible — first those whose eviction would violate a
//!    PodDisruptionBudget, then the others, each group most important first (higher priority,
//!    then earlier start time, then lower victim index) — keeping a pod whenever the preemptor
//!    still fits with it.
//! 3. The pod goes to the node of least cost, compared as upstream's `pickOneNodeForPreemption`
//!    ranks candidates — fewest PodDisruptionBudget violations; lowest priority of the most
//!    important victim; smallest sum of victim priorities (each shifted by `2^31`, so more
//!    victims never sum lower); fewest victims; latest start time of the earliest-started victim
//!    of the highest priority; then Go map order, i.e. arbitrarily — with one difference: when
//!    the preemptor names spread groups ([`PreemptorSpec::spread`]: the caller names its soft
//!    spread constraints, zones before nodes), the fewest of its workload's pods in the node's
//!    domains comes before the victims' start time. Upstream places one pod at a time and
//!    spreads a workload's replicas by its arbitrary pick among nodes whose victims differ
//!    only in age; a batch placing them all by start time would pile them wherever the
//!    youngest victims run. The disruption criteria (budgets, victim priorities, victim count)
//!    keep their precedence. Then the lowest node index. The victims are evicted, the pod
//!    takes its room, and only what is left over stays free for others.
//! 4. After the last preemptor, pods still unplaced (in practice only `preemptionPolicy: Never`
//!    pods: a pod that may preempt and found no node cannot fit later, since later pods only
//!    evict pods it could have evicted itself) take room left over on the nodes where this pass
//!    evicted pods, lowest node index first ([`PreemptPlan::leftover_start`]).
//!
//! PodDisruptionBudget budgets are shared by the whole batch: evicting two pods of one budget
//! uses two of its `disruptionsAllowed`, on whatever nodes they run. A violation is an eviction
//! that takes one of the victim's budgets below zero, counted in eviction order; the cost of a
//! node counts the violations its victims would cause given what the pass has already used.
//! Which victims are *reprieved first* (upstream's "violating" group) is decided, for every pod
//! of a preemptor, against the budgets left when that preemptor's turn began, as upstream
//! decides it against the budgets' status when the pod is scheduled.
//!
//! # Guarantees
//!
//! - A victim's priority is always below its preemptor's; a preemptor with
//!   `may_preempt == false` evicts nothing; no pod is evicted twice; every placement is on an
//!   eligible node, within [`PreemptorSpec::max_per_node`], and fits (every resource the pod
//!   requests) once its victims are gone, so no node ends below zero on a resource a placed pod
//!   requests.
//! - Each placement's victim set is minimal by inclusion: giving back any one victim would leave
//!   the pod without room on its node at that moment (the victim set is not necessarily the
//!   smallest possible one: reprieve is upstream's greedy, most important first).
//! - Each pod's node is the least-cost node above at that moment (exactly: the lazy heap below
//!   relies on costs only rising while a preemptor's pods are placed, which holds because a
//!   node's victim set changes only when that node changes, a budget used elsewhere can
//!   only add violations, and a pod placed in a domain only adds to its spread counts).
//! - Maximality: a pod left unplaced fits on no eligible node (within its per-node limit) even
//!   after evicting every pod of lower priority still running there (or, for a `Never` pod, in
//!   the free room) at the end of the pass.
//! - Each preemptor places as many pods as any plan could, given the evictions and placements
//!   of the preemptors before it (its pods are interchangeable, so every node holds the same
//!   number of them whatever the order). Across preemptors this is not a global optimum: an
//!   earlier preemptor may take, by the ranking above, a node that a later one needed and
//!   could not replace.
//! - Deterministic: the same problem always gives the same plan.
//!
//! # Cost
//!
//! Victims are indexed by node and sorted by importance once, with per-node suffix sums of
//! their requests, so the "does evicting every lower-priority pod make room" test costs
//! `O(log victims + resources)` per node. Per preemptor: `O(nodes × (log + resources))` plus
//! reprieve on the nodes that pass the test (`O(candidates × (resources + budgets per victim))`
//! each) to fill a min-heap of node costs; per pod: a heap pop (re-costed lazily when a budget
//! it counts was used since), and a re-cost of the one node it changed. Memory:
//! `O(nodes + victims × resources)`.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use crate::greedy::SolverError;

/// A running pod that may be evicted.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VictimSpec {
    /// The node it runs on (its usage is part of that node's [`PreemptProblem::free`]).
    pub node: usize,
    /// Its priority: it can only be evicted for a preemptor of strictly higher priority.
    pub priority: i32,
    /// Requests per resource (`PreemptProblem::resources` entries, each ≥ 0): the room its
    /// eviction frees.
    pub requests: Vec<i64>,
    /// The PodDisruptionBudgets that select it (indices into
    /// [`PreemptProblem::pdb_allowed`], distinct), leaving out any budget that lists it in
    /// `status.disruptedPods` (upstream does not count those).
    pub pdbs: Vec<usize>,
    /// Its start time (e.g. seconds since the epoch; the caller's clock for a pod that has not
    /// started, as upstream's `GetPodStartTime`). Among equal priorities an earlier start is
    /// more important.
    pub start_time: i64,
}

/// A class of interchangeable pods still unplaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreemptorSpec {
    /// How many pods of this class to place.
    pub count: u32,
    /// Their priority (higher goes first, and only lower-priority pods can be evicted for them).
    pub priority: i32,
    /// Requests per resource (`PreemptProblem::resources` entries, each ≥ 0). Only resources
    /// with a non-zero request are checked, as NodeResourcesFit.
    pub requests: Vec<i64>,
    /// `false` for `preemptionPolicy: Never`: these pods never evict; they only take free room.
    pub may_preempt: bool,
    /// At most this many pods of this class placed by this pass on one node (pods of the class
    /// already running are the caller's: reflect them here or in the eligibility); `None`: no
    /// limit.
    pub max_per_node: Option<u32>,
    /// The spread groups ([`PreemptProblem::spread`]) its pods count in, most significant
    /// first (at most [`SPREAD_LEVELS`] are read): between nodes whose victims cost the same
    /// but for their start time, the one whose domains hold the fewest pods of these groups
    /// wins (see the module documentation). Empty: upstream's ranking, then the lowest node
    /// index.
    pub spread: Vec<usize>,
}

/// How many of a preemptor's spread groups weigh its nodes ([`PreemptorSpec::spread`]).
pub const SPREAD_LEVELS: usize = 2;

/// Most domains of a preemptor's first spread group for which [`solve_preemption`] keeps a heap
/// of nodes per domain (zones, racks); a group of more (nodes) shares one heap.
const MAX_PARTITIONS: usize = 64;

/// The node of no domain in a [`PreemptSpread`].
pub const NO_SPREAD_DOMAIN: u32 = u32::MAX;

/// Pods of one workload counted per topology domain (its soft spread constraint's selector,
/// over one topology key), for choosing between nodes whose victims cost the same.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PreemptSpread {
    /// Per node, its domain ([`NO_SPREAD_DOMAIN`]: the node does not count for the
    /// constraint; it loses every tie).
    pub domain: Vec<u32>,
    /// Per domain, the pods counted there now (a domain beyond the end counts 0). The pass
    /// adds each pod it places; it does not take evicted victims off.
    pub counts: Vec<u32>,
}

impl PreemptSpread {
    /// The domain of `node`, or `None` when it counts for no domain.
    fn domain_of(&self, node: usize) -> Option<usize> {
        self.domain.get(node).filter(|&&d| d != NO_SPREAD_DOMAIN).map(|&d| d as usize)
    }
}

/// The preemption problem, as plain arrays. Matrices are row-major.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PreemptProblem {
    /// Number of resources (columns of `free`, length of every `requests`).
    pub resources: usize,
    /// Number of nodes.
    pub nodes: usize,
    /// Free capacity now, `nodes × resources`, counting every pod running or placed so far
    /// (the victims included). May be negative on an overcommitted node.
    pub free: Vec<i64>,
    /// The pods that may be evicted.
    pub victims: Vec<VictimSpec>,
    /// `status.disruptionsAllowed` of each PodDisruptionBudget.
    pub pdb_allowed: Vec<u32>,
    /// The unplaced pods, in the caller's queue order.
    pub preemptors: Vec<PreemptorSpec>,
    /// Spread groups the preemptors name ([`PreemptorSpec::spread`]).
    pub spread: Vec<PreemptSpread>,
    /// Whether a pod of the preemptor may go on the node if it had the room,
    /// `preemptors × nodes`: the node passes every filter except resource fit (upstream only
    /// tries nodes whose rejection was `Unschedulable`, never `UnschedulableAndUnresolvable`).
    /// Judge those filters with the victims still in place: the reprieve here weighs resources
    /// only, so a node that passes a non-resource filter only once some victim is gone (its
    /// host port, its anti-affinity) must be left out, or that victim might be kept.
    pub eligible: Vec<bool>,
}

/// Invalid input to [`solve_preemption`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PreemptError {
    /// A dimension or preemptor request is wrong (the preemptor's index is reported as the
    /// class).
    #[error(transparent)]
    Problem(#[from] SolverError),
    /// A victim names a node that does not exist.
    #[error("victim {victim} is on node {node}, which does not exist")]
    VictimNode {
        /// The victim.
        victim: usize,
        /// The node it names.
        node: usize,
    },
    /// A victim names a PodDisruptionBudget that does not exist.
    #[error("victim {victim} names disruption budget {pdb}, which does not exist")]
    VictimPdb {
        /// The victim.
        victim: usize,
        /// The budget it names.
        pdb: usize,
    },
    /// A preemptor names a spread group that does not exist.
    #[error("preemptor {preemptor} names spread group {group}, which does not exist")]
    SpreadGroup {
        /// The preemptor.
        preemptor: usize,
        /// The group it names.
        group: usize,
    },
    /// A victim requests a negative amount.
    #[error(
        "victim {victim} requests {value} of resource {resource}; requests must not be negative"
    )]
    NegativeVictimRequest {
        /// The victim.
        victim: usize,
        /// The resource.
        resource: usize,
        /// The amount.
        value: i64,
    },
}

impl PreemptProblem {
    /// Checks the dimensions, the indices victims name, and that requests are not negative.
    pub fn validate(&self) -> Result<(), PreemptError> {
        let dim = |what: &'static str, expected: Option<usize>, found: usize| match expected {
            Some(e) if e == found => Ok(()),
            Some(e) => Err(SolverError::Dimension { what, expected: e, found }),
            None => Err(SolverError::TooLarge { what }),
        };
        dim("free capacity entries", self.nodes.checked_mul(self.resources), self.free.len())?;
        dim(
            "eligibility entries",
            self.preemptors.len().checked_mul(self.nodes),
            self.eligible.len(),
        )?;
        for group in &self.spread {
            dim("spread domains", Some(self.nodes), group.domain.len())?;
        }
        for (c, pre) in self.preemptors.iter().enumerate() {
            dim("requests of a preemptor", Some(self.resources), pre.requests.len())?;
            if let Some(&g) = pre.spread.iter().find(|&&g| g >= self.spread.len()) {
                return Err(PreemptError::SpreadGroup { preemptor: c, group: g });
            }
            if let Some((r, &value)) = pre.requests.iter().enumerate().find(|(_, v)| **v < 0) {
                return Err(SolverError::NegativeRequest { class: c, resource: r, value }.into());
            }
        }
        for (v, victim) in self.victims.iter().enumerate() {
            dim("requests of a victim", Some(self.resources), victim.requests.len())?;
            if victim.node >= self.nodes {
                return Err(PreemptError::VictimNode { victim: v, node: victim.node });
            }
            if let Some(&pdb) = victim.pdbs.iter().find(|&&q| q >= self.pdb_allowed.len()) {
                return Err(PreemptError::VictimPdb { victim: v, pdb });
            }
            if let Some((r, &value)) = victim.requests.iter().enumerate().find(|(_, v)| **v < 0) {
                return Err(PreemptError::NegativeVictimRequest { victim: v, resource: r, value });
            }
        }
        Ok(())
    }
}

/// One pod of a preemptor placed on a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreemptPlacement {
    /// The preemptor (index into [`PreemptProblem::preemptors`]).
    pub preemptor: usize,
    /// The node.
    pub node: usize,
}

/// One victim evicted to make room for one placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Eviction {
    /// The victim (index into [`PreemptProblem::victims`]).
    pub victim: usize,
    /// The preemptor it makes room for.
    pub preemptor: usize,
    /// The node (the victim's, and the placement's).
    pub node: usize,
    /// The placement it makes room for (index into [`PreemptPlan::placements`]).
    pub placement: usize,
    /// Whether this eviction takes one of the victim's disruption budgets below zero (counted
    /// over the whole plan, in eviction order).
    pub violates_pdb: bool,
}

/// The answer of [`solve_preemption`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PreemptPlan {
    /// Placements in decision order.
    pub placements: Vec<PreemptPlacement>,
    /// Evictions in decision order: each placement's victims together, most important first,
    /// each naming its placement.
    pub evictions: Vec<Eviction>,
    /// How many evictions violate a PodDisruptionBudget.
    pub pdb_violations: usize,
    /// Pods of each preemptor left unplaced.
    pub unplaced: Vec<u32>,
    /// The order the preemptors took their turns in.
    pub order: Vec<usize>,
    /// Placements from this index on were made after every turn, in room left over on nodes
    /// where the pass evicted pods (step 4 of the module documentation); they evict nothing.
    pub leftover_start: usize,
}

/// The preemptors in turn order: highest priority first, then the given order.
pub fn preemptor_order(problem: &PreemptProblem) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..problem.preemptors.len()).collect();
    idx.sort_by_key(|&c| (Reverse(problem.preemptors[c].priority), c));
    idx
}

/// Plans evictions and placements for the preemptors. See the module documentation.
pub fn solve_preemption(problem: &PreemptProblem) -> Result<PreemptPlan, PreemptError> {
    problem.validate()?;
    let order = preemptor_order(problem);
    let mut state = State::new(problem);
    for &c in &order {
        state.turn(c);
    }
    let leftover_start = state.placements.len();
    let emptied: Vec<usize> = (0..problem.nodes).filter(|&n| state.emptied[n]).collect();
    if !emptied.is_empty() {
        for &c in &order {
            state.leftover(c, &emptied);
        }
    }
    Ok(PreemptPlan {
        placements: state.placements,
        evictions: state.evictions,
        pdb_violations: state.pdb_violations,
        unplaced: state.unplaced,
        order,
        leftover_start,
    })
}

/// Whether a pod requesting `req` fits in `free`: every requested resource is available.
fn fits(req: &[i64], free: &[i64]) -> bool {
    req.iter().zip(free).all(|(&r, &f)| r == 0 || r <= f)
}

/// The cost of placing a pod on a node, compared lexicographically (smaller is better), in
/// upstream's `pickOneNodeForPreemption` order with the spread groups before the victims'
/// start time and the node index as the last tie-break (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Cost {
    /// Evictions that would take a disruption budget below zero.
    violations: usize,
    /// Priority of the most important victim (`i64::MIN` without victims).
    highest: i64,
    /// Sum of the victims' priorities, each plus `2^31`.
    sum: i64,
    /// Number of victims.
    count: usize,
    /// Pods of the preemptor's spread groups in the node's domains, most significant group
    /// first ([`PreemptorSpec::spread`]; `u32::MAX` outside every domain).
    spread: [u32; SPREAD_LEVELS],
    /// Earliest start time among the victims of the highest priority; later is better.
    earliest: Reverse<i64>,
    /// The node.
    node: usize,
}

/// A node's victim set for the pod being placed, and its cost.
#[derive(Debug, Clone)]
struct NodePlan {
    /// Victims, most important first.
    victims: Vec<usize>,
    cost: Cost,
}

/// The pass's working state.
struct State<'p> {
    p: &'p PreemptProblem,
    /// Free capacity, `nodes × resources`.
    free: Vec<i64>,
    /// Victims still running on each node, most important first.
    on_node: Vec<Vec<usize>>,
    /// Per node, `(len + 1) × resources`: row `i` sums the requests of `on_node[node][i..]`.
    suffix: Vec<Vec<i64>>,
    /// Disruptions each budget still allows (below zero once violated).
    budget: Vec<i64>,
    /// Per node, bumped whenever the node's free room or victims change.
    stamp: Vec<u32>,
    /// Nodes where this pass evicted pods.
    emptied: Vec<bool>,
    /// Scratch: uses of each budget while costing one node (zero between uses).
    uses: Vec<i64>,
    /// The spread groups, with the pods this pass placed counted.
    spread: Vec<PreemptSpread>,
    placements: Vec<PreemptPlacement>,
    /// The placements each preemptor made in its turn.
    turns: Vec<std::ops::Range<usize>>,
    evictions: Vec<Eviction>,
    pdb_violations: usize,
    unplaced: Vec<u32>,
}

impl<'p> State<'p> {
    fn new(p: &'p PreemptProblem) -> Self {
        let mut on_node: Vec<Vec<usize>> = vec![Vec::new(); p.nodes];
        for (v, victim) in p.victims.iter().enumerate() {
            on_node[victim.node].push(v);
        }
        let mut state = State {
            p,
            free: p.free.clone(),
            on_node,
            suffix: vec![Vec::new(); p.nodes],
            budget: p.pdb_allowed.iter().map(|&a| i64::from(a)).collect(),
            stamp: vec![0; p.nodes],
            emptied: vec![false; p.nodes],
            uses: vec![0; p.pdb_allowed.len()],
            spread: p.spread.clone(),
            placements: Vec::new(),
            turns: vec![0..0; p.preemptors.len()],
            evictions: Vec::new(),
            pdb_violations: 0,
            unplaced: p.preemptors.iter().map(|c| c.count).collect(),
        };
        for node in 0..p.nodes {
            let victims = &p.victims;
            state.on_node[node]
                .sort_by_key(|&v| (Reverse(victims[v].priority), victims[v].start_time, v));
            state.rebuild_suffix(node);
        }
        state
    }

    fn free_of(&self, node: usize) -> &[i64] {
        &self.free[node * self.p.resources..(node + 1) * self.p.resources]
    }

    fn limit(&self, c: usize) -> u32 {
        self.p.preemptors[c].max_per_node.unwrap_or(u32::MAX)
    }

    fn eligible(&self, c: usize, node: usize) -> bool {
        self.p.eligible[c * self.p.nodes + node]
    }

    /// The pods of `c`'s spread groups in `node`'s domains now (their part of [`Cost`]).
    fn spread_at(&self, c: usize, node: usize) -> [u32; SPREAD_LEVELS] {
        let mut out = [0; SPREAD_LEVELS];
        for (slot, &g) in out.iter_mut().zip(&self.p.preemptors[c].spread) {
            let group = &self.spread[g];
            *slot = group
                .domain_of(node)
                .map_or(u32::MAX, |d| group.counts.get(d).copied().unwrap_or(0));
        }
        out
    }

    /// Recomputes the suffix sums of `node`'s running victims.
    fn rebuild_suffix(&mut self, node: usize) {
        let r = self.p.resources;
        let list = &self.on_node[node];
        let mut sums = vec![0i64; (list.len() + 1) * r];
        for (i, &v) in list.iter().enumerate().rev() {
            let req = &self.p.victims[v].requests;
            for k in 0..r {
                sums[i * r + k] = sums[(i + 1) * r + k].saturating_add(req[k]);
            }
        }
        self.suffix[node] = sums;
    }

    /// Whether evicting each of `victims`, in order, would take one of its budgets below zero
    /// when the budgets start at `base` (each victim uses one of each of its budgets): tells
    /// `on_each` the verdict for every position, and returns how many would.
    fn count_violations(
        &mut self,
        victims: &[usize],
        base: &[i64],
        mut on_each: impl FnMut(usize, bool),
    ) -> usize {
        let mut count = 0;
        for (i, &v) in victims.iter().enumerate() {
            let mut bad = false;
            for &q in &self.p.victims[v].pdbs {
                self.uses[q] += 1;
                if self.uses[q] > base[q] {
                    bad = true;
                }
            }
            count += usize::from(bad);
            on_each(i, bad);
        }
        for &v in victims {
            for &q in &self.p.victims[v].pdbs {
                self.uses[q] = 0;
            }
        }
        count
    }

    /// Budget violations that evicting `victims` (most important first) would cause now.
    fn violations_now(&mut self, victims: &[usize]) -> usize {
        let budget = std::mem::take(&mut self.budget);
        let n = self.count_violations(victims, &budget, |_, _| {});
        self.budget = budget;
        n
    }

    /// The victim set and cost of placing one pod of `c` on `node` now, or `None` when the pod
    /// cannot fit there even after evicting every pod of lower priority (or, for a pod that may
    /// not preempt, does not fit in the free room). `labels` are the budgets that decide which
    /// victims are reprieved first.
    fn evaluate(&mut self, c: usize, node: usize, labels: &[i64]) -> Option<NodePlan> {
        let p = self.p;
        let pre = &p.preemptors[c];
        let req = &pre.requests;
        let free = self.free_of(node);
        if fits(req, free) {
            let cost = Cost {
                violations: 0,
                highest: i64::MIN,
                sum: 0,
                count: 0,
                earliest: Reverse(i64::MAX),
                spread: self.spread_at(c, node),
                node,
            };
            return Some(NodePlan { victims: Vec::new(), cost });
        }
        if !pre.may_preempt {
            return None;
        }
        let list = &self.on_node[node];
        // Most important first: the pods of priority below the preemptor's are a suffix.
        let k = list.partition_point(|&v| p.victims[v].priority >= pre.priority);
        if k == list.len() {
            return None;
        }
        let r = p.resources;
        let mut avail: Vec<i64> = free
            .iter()
            .zip(&self.suffix[node][k * r..(k + 1) * r])
            .map(|(&f, &s)| f.saturating_add(s))
            .collect();
        if !fits(req, &avail) {
            return None;
        }
        let candidates: Vec<usize> = list[k..].to_vec();
        // Upstream's filterPodsWithPDBViolation over the candidates, most important first.
        let mut violating = Vec::new();
        let mut others = Vec::new();
        self.count_violations(&candidates, labels, |i, bad| {
            if bad { violating.push(i) } else { others.push(i) }
        });
        // Reprieve: keep a candidate whenever the pod still fits with it.
        let mut evicted: Vec<usize> = Vec::new();
        for i in violating.into_iter().chain(others) {
            let vreq = &p.victims[candidates[i]].requests;
            let keep = req
                .iter()
                .zip(&avail)
                .zip(vreq)
                .all(|((&q, &a), &v)| q == 0 || q <= a.saturating_sub(v));
            if keep {
                for (a, &v) in avail.iter_mut().zip(vreq) {
                    *a = a.saturating_sub(v);
                }
            } else {
                evicted.push(i);
            }
        }
        evicted.sort_unstable();
        let victims: Vec<usize> = evicted.into_iter().map(|i| candidates[i]).collect();
        let first = victims.first().map(|&v| &p.victims[v])?;
        let highest = first.priority;
        let mut sum = 0i64;
        let mut earliest = i64::MAX;
        for &v in &victims {
            let victim = &p.victims[v];
            sum = sum.saturating_add(i64::from(victim.priority) + i64::from(i32::MAX) + 1);
            if victim.priority == highest {
                earliest = earliest.min(victim.start_time);
            }
        }
        let cost = Cost {
            violations: self.violations_now(&victims),
            highest: i64::from(highest),
            sum,
            count: victims.len(),
            earliest: Reverse(earliest),
            spread: self.spread_at(c, node),
            node,
        };
        Some(NodePlan { victims, cost })
    }

    /// Evicts `victims` from `node` and places one pod of `c` there.
    fn apply(&mut self, c: usize, node: usize, victims: &[usize]) {
        let p = self.p;
        let placement = self.placements.len();
        let r = p.resources;
        for &v in victims {
            let victim = &p.victims[v];
            let mut bad = false;
            for &q in &victim.pdbs {
                self.budget[q] -= 1;
                if self.budget[q] < 0 {
                    bad = true;
                }
            }
            self.pdb_violations += usize::from(bad);
            for (f, &req) in self.free[node * r..(node + 1) * r].iter_mut().zip(&victim.requests) {
                *f = f.saturating_add(req);
            }
            self.evictions.push(Eviction {
                victim: v,
                preemptor: c,
                node,
                placement,
                violates_pdb: bad,
            });
        }
        let req = &p.preemptors[c].requests;
        for (f, &q) in self.free[node * r..(node + 1) * r].iter_mut().zip(req) {
            *f = f.saturating_sub(q);
        }
        self.placements.push(PreemptPlacement { preemptor: c, node });
        self.unplaced[c] = self.unplaced[c].saturating_sub(1);
        for &g in &p.preemptors[c].spread {
            let group = &mut self.spread[g];
            if let Some(d) = group.domain_of(node) {
                if group.counts.len() <= d {
                    group.counts.resize(d + 1, 0);
                }
                group.counts[d] = group.counts[d].saturating_add(1);
            }
        }
        self.stamp[node] = self.stamp[node].wrapping_add(1);
        if !victims.is_empty() {
            // The victims are a subsequence of the node's list, in the same order.
            let mut gone = victims.iter().peekable();
            self.on_node[node].retain(|v| {
                let evicted = gone.peek() == Some(&v);
                if evicted {
                    gone.next();
                }
                !evicted
            });
            self.rebuild_suffix(node);
            self.emptied[node] = true;
        }
    }

    /// Preemptor `c`'s turn: places its pods and records which placements they are.
    fn turn(&mut self, c: usize) {
        let start = self.placements.len();
        self.place_turn(c);
        self.turns[c] = start..self.placements.len();
    }

    /// Places the pods of preemptor `c` one by one on their least-cost node (lazy min-heaps).
    ///
    /// A pod placed in a domain of `c`'s first spread group raises the cost of every node of
    /// that domain at once. So when that group has at most [`MAX_PARTITIONS`] domains, each
    /// domain (and the nodes outside every domain) gets its own heap, keyed without that
    /// count, and the pod goes to the least of the heaps' tops with their domain's count now;
    /// otherwise one heap holds every node.
    fn place_turn(&mut self, c: usize) {
        let limit = self.limit(c);
        if self.unplaced[c] == 0 || limit == 0 {
            return;
        }
        let n_nodes = self.p.nodes;
        let labels = self.budget.clone();
        // Per node, its heap; and how many heaps.
        let (part, parts) = self.partitions(c);
        let partitioned = parts > 1;
        // The cost a heap keys a node by: without the first spread count when partitioned.
        let keyed = |mut cost: Cost| {
            if partitioned {
                cost.spread[0] = 0;
            }
            cost
        };
        let mut plans: Vec<Option<NodePlan>> = vec![None; n_nodes];
        let mut heaps: Vec<BinaryHeap<Reverse<(Cost, u32)>>> = vec![BinaryHeap::new(); parts];
        for (node, slot) in plans.iter_mut().enumerate() {
            if !self.eligible(c, node) {
                continue;
            }
            if let Some(mut plan) = self.evaluate(c, node, &labels) {
                plan.cost = keyed(plan.cost);
                heaps[part[node]].push(Reverse((plan.cost, self.stamp[node])));
                *slot = Some(plan);
            }
        }
        let mut here: BTreeMap<usize, u32> = BTreeMap::new();
        while self.unplaced[c] > 0 {
            // Each heap's least node that is up to date, with its cost now; the least of them.
            let mut best: Option<(Cost, usize)> = None;
            for (k, heap) in heaps.iter_mut().enumerate() {
                while let Some(&Reverse((cost, stamp))) = heap.peek() {
                    let node = cost.node;
                    let Some(plan) = plans[node].as_mut().filter(|_| stamp == self.stamp[node])
                    else {
                        heap.pop(); // Stale: the node changed, and was costed again then.
                        continue;
                    };
                    // Only budgets used and pods placed on other nodes can have changed this
                    // node's cost, and only upwards: cost it again and wait for its turn if
                    // it did.
                    let now = self.violations_now(&plan.victims);
                    let spread = self.spread_at(c, node);
                    let mut fresh = plan.cost;
                    fresh.violations = now;
                    fresh.spread = spread;
                    let fresh = keyed(fresh);
                    if fresh != plan.cost {
                        plan.cost = fresh;
                        heap.pop();
                        heap.push(Reverse((fresh, stamp)));
                        continue;
                    }
                    let mut real = cost;
                    real.spread[0] = spread[0];
                    if best.is_none_or(|(b, _)| real < b) {
                        best = Some((real, k));
                    }
                    break;
                }
            }
            let Some((cost, k)) = best else { break };
            heaps[k].pop();
            let node = cost.node;
            let Some(plan) = plans[node].take() else { break };
            self.apply(c, node, &plan.victims);
            let count = here.entry(node).or_insert(0);
            *count += 1;
            if *count < limit
                && let Some(mut plan) = self.evaluate(c, node, &labels)
            {
                plan.cost = keyed(plan.cost);
                heaps[part[node]].push(Reverse((plan.cost, self.stamp[node])));
                plans[node] = Some(plan);
            }
        }
    }

    /// The heap of each node for [`State::place_turn`] and how many heaps: one per domain of
    /// `c`'s first spread group and one for the nodes outside them, when that group has at
    /// most [`MAX_PARTITIONS`] domains; else one.
    fn partitions(&self, c: usize) -> (Vec<usize>, usize) {
        let n = self.p.nodes;
        let Some(group) = self.p.preemptors[c].spread.first().map(|&g| &self.spread[g]) else {
            return (vec![0; n], 1);
        };
        // Heap ids in order of first appearance; `None` (outside every domain) is one of them.
        let mut ids: BTreeMap<Option<usize>, usize> = BTreeMap::new();
        let mut part = Vec::with_capacity(n);
        for node in 0..n {
            let next = ids.len();
            part.push(*ids.entry(group.domain_of(node)).or_insert(next));
            if ids.len() > MAX_PARTITIONS {
                return (vec![0; n], 1);
            }
        }
        (part, ids.len())
    }

    /// Places pods of `c` still unplaced in room left over on the nodes listed in `emptied`
    /// (where this pass evicted pods), lowest index first.
    fn leftover(&mut self, c: usize, emptied: &[usize]) {
        if self.unplaced[c] == 0 {
            return;
        }
        let limit = self.limit(c);
        let mut here: BTreeMap<usize, u32> = BTreeMap::new();
        if let Some(range) = self.turns.get(c).cloned() {
            for pl in self.placements.get(range).unwrap_or_default() {
                *here.entry(pl.node).or_insert(0) += 1;
            }
        }
        for &node in emptied {
            if !self.eligible(c, node) {
                continue;
            }
            let req = &self.p.preemptors[c].requests;
            while self.unplaced[c] > 0
                && here.get(&node).copied().unwrap_or(0) < limit
                && fits(req, self.free_of(node))
            {
                self.apply(c, node, &[]);
                *here.entry(node).or_insert(0) += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests;
