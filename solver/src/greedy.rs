//! The greedy batch assignment: pod classes onto nodes, priority tier by priority tier.
//!
//! Input: a [`Problem`] — pod classes (how many pods, priority, integer requests per resource,
//! an optional "at most k of this class per node" limit), each node's free capacity per
//! resource, a class × node feasibility matrix and a class × node score matrix — plus an
//! optional [`Rescore`] callback for scores that depend on a node's usage. Output: an
//! [`Assignment`]: which node each placed pod of each class goes to, in decision order, and how
//! many pods of each class were left unplaced.
//!
//! Algorithm:
//! 1. Classes are ordered by priority (highest first); within a priority tier either in the
//!    given order ([`ClassOrder::Given`], the caller's queue order) or largest first
//!    ([`ClassOrder::LargestFirst`]: by dominant share of the batch's total free capacity, then
//!    the sum of shares, then the given order) — a first-fit-decreasing order that keeps small
//!    pods from fragmenting the room large ones need.
//! 2. Each class in turn places its pods one at a time on its best candidate: the feasible node
//!    with the highest score that still has room for one pod (every resource the class requests
//!    is at most the node's free amount; resources it does not request are not checked, as
//!    kube-scheduler's NodeResourcesFit) and has not reached the class's per-node limit. Ties
//!    go to the lowest node index, so the result is deterministic.
//! 3. A class of at most two pods picks each pod's node by one scan of its row (no heap, no
//!    allocation). Larger classes keep their candidates ([`Candidates`]) in max-heaps built once
//!    when the class starts (`O(nodes)`), with lazy invalidation: every change of a node bumps
//!    its version and logs it, stale heap entries are dropped when popped, and the nodes changed
//!    since the class's last pick are pushed again with their new score if they can still take
//!    a pod of the class. A node that fills is therefore never looked at again for that class,
//!    and no step rescans the nodes. The queue-order pass ([`ClassOrder::Given`]) keeps each
//!    such class's candidates from one of its pods to the next, so a pick costs the nodes
//!    changed since the class's last pick, not a scan of every node.
//! 4. Scores: the static matrix is used for every node whose usage has not changed during the
//!    solve; once a node received a pod, its score for the class being placed comes from
//!    [`Rescore::rescore`] with the node's current free capacity (when a callback is given;
//!    [`Rescore::placed`] hears of every placement first).
//!
//! 5. Conflicts ([`Problem::conflicts`]): two classes that may not share a domain of a topology
//!    (required anti-affinity, host ports). Each placement bars the classes it conflicts with
//!    from the node's domain (a count per `(class, topology, domain)`), and a barred node is
//!    skipped like a full one. This is exact for the pods of the solve; pods already on nodes
//!    are the caller's (its feasibility matrix).
//!
//! 6. Relocation ([`GreedyOptions::relocate`], on by default): for each class with pods left
//!    over, in class order, a node that is feasible for it but lacks room gets room by moving
//!    one pod of another class — placed by this solve, or one of the problem's movable
//!    [`Problem::initial`] pods — to that class's best other node that can take it (static scores rank both choices). This repeats, with a direct-placement pass after
//!    each round of moves, until no move helps. It only ever adds placements: the moved pod
//!    stays placed.
//!
//! 7. Trading (with relocation; `greedy/trade.rs`): a pod this solve placed gives its node to
//!    two or more unplaced pods of its tier that fit there instead and together request at
//!    least as much of every resource; its class keeps a pod placed and its workload's spread
//!    minimum stays.
//!
//! 8. Evening out ([`GreedyOptions::even_spread`], on by default; `greedy/polish.rs`): the
//!    counters only `ScheduleAnyway` terms read (a workload's replicas per zone and per node)
//!    are evened out by moving, or swapping between workloads, pods this solve placed, each
//!    step lowering their skew and raising none, or lowering their skew beyond `maxSkew` and
//!    raising none past its own `maxSkew` or 2; the pods placed stay the same.
//!
//! 9. Substituting ([`GreedyOptions::substitute`], with evening out; `greedy/substitute.rs`):
//!    an unplaced pod takes the node of a placed pod of a better-served workload of its tier,
//!    requesting no more, in its workload's one emptiest domain, where the sorted skews fall
//!    and none rises past one; or of two such pods together, requesting and worth no more,
//!    spending a pod that trading won. Evening out runs again after any substitution.
//!
//! 9a. Trading again ([`GreedyOptions::trade_again`]; `greedy/trade.rs`): with the
//!     workloads spread, unplaced pods smaller than a placed one take its room, the
//!     worst-served class first, where the given-up pod's workload can still reach the same
//!     skew over its bound pods; evening out runs again after any trade.
//!
//! 10. Filling (with evening out): the tie-break counters are evened out, and the room moves
//!     joined goes to the pods left over, first where no spread counter's maximum rises, then
//!     anywhere; evening out runs again after each, the tie-breaks last.
//!
//! Cost: `O(classes × nodes + pods × log nodes)` time for the greedy pass plus the callback's
//! calls (one per placement, and one per changed node whose bound could win when a class
//! picks), `O(classes × nodes)` memory; each relocation attempt costs
//! `O(classes × nodes)` for its targets, and each class's destinations for moved pods are
//! walked once per solve ([`State::destinations`]); there is at most one failed attempt per
//! class per round.

use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap};

use crate::lp::Guide;
use crate::objective::Objective;
use crate::topology::{InterPod, TopologyState};

/// One pod class: interchangeable pods with the same requests and feasibility.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClassSpec {
    /// How many pods of this class to place.
    pub count: u32,
    /// Their priority (higher is placed first).
    pub priority: i32,
    /// Requests per resource (`Problem::resources` entries, each ≥ 0).
    pub requests: Vec<i64>,
    /// At most this many pods of this class on one node (e.g. 1 for required anti-affinity of
    /// the class to itself on `kubernetes.io/hostname`); `None`: no limit.
    pub max_per_node: Option<u32>,
}

/// Two classes whose pods may not share a domain of a topology: required pod anti-affinity
/// (either class's term selects the other's pods; a class may conflict with itself) or, with the
/// topology that gives every node its own domain, conflicting host ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conflict {
    /// One class.
    pub a: usize,
    /// The other class (may equal `a`: at most one pod of the class per domain).
    pub b: usize,
    /// The topology (row of [`Problem::domains`]).
    pub topology: usize,
}

/// The domain value of a node that lacks a topology's label: such a node is in no domain, so no
/// conflict applies on it (as kube-scheduler's anti-affinity on a node without the key).
pub const NO_DOMAIN: u32 = u32::MAX;

/// The whole assignment problem, as plain arrays. Matrices are row-major.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Problem {
    /// Number of resources (columns of `free` and length of each class's `requests`).
    pub resources: usize,
    /// Number of nodes.
    pub nodes: usize,
    /// The pod classes, in the caller's queue order.
    pub classes: Vec<ClassSpec>,
    /// Free capacity, `nodes × resources` (may be negative on an overcommitted node).
    pub free: Vec<i64>,
    /// Whether a pod of the class may go on the node, `classes × nodes`.
    pub feasible: Vec<bool>,
    /// The score of the node for the class (higher is better), `classes × nodes`.
    pub score: Vec<i32>,
    /// Pods already on nodes (their usage is already in `free`) that the relocation step may
    /// move to another node where their class is feasible. They are not counted in
    /// [`ClassSpec::count`].
    pub initial: Vec<Placed>,
    /// Number of topologies (rows of `domains`).
    pub topologies: usize,
    /// Each node's domain per topology, `topologies × nodes` ([`NO_DOMAIN`]: no label).
    pub domains: Vec<u32>,
    /// Pairs of classes that may not share a domain. Pods that are already on nodes are not
    /// counted here (the caller's feasibility matrix has them); the solver enforces the
    /// conflicts between the pods it places. A class with a conflict is never moved by
    /// relocation.
    pub conflicts: Vec<Conflict>,
    /// Quotas from the LP stage ([`crate::lp::lp_guide`]): when set, a first pass places each
    /// class's pods only on node groups with quota left, then the usual pass places the rest.
    pub guide: Option<Guide>,
    /// Inter-pod rules over counts of matching pods per domain of [`Problem::domains`]
    /// (topology spread, required and preferred pod (anti-)affinity); see
    /// [`crate::topology`]. Domain ids must then be below `nodes`.
    pub inter_pod: InterPod,
    /// What the LP stage, the exact MIP and the choice among strategies maximize per tier
    /// ([`crate::objective`]).
    pub objective: Objective,
    /// The cluster's capacity per resource that [`Objective::Resources`] takes shares of
    /// (empty: the nodes' total free capacity).
    pub capacity: Vec<i64>,
    /// The pods in the caller's queue order, as their classes (one entry per pod; a class
    /// appears as often as it has pods): with [`ClassOrder::Given`] the greedy first places
    /// the pods one by one in this order, as kube-scheduler's queue would (empty: class by
    /// class in the order of [`Problem::classes`]).
    pub queue: Vec<usize>,
}

impl Problem {
    /// Checks the dimensions and that requests are not negative.
    pub fn validate(&self) -> Result<(), SolverError> {
        let dim = |what: &'static str, expected: Option<usize>, found: usize| match expected {
            Some(e) if e == found => Ok(()),
            Some(e) => Err(SolverError::Dimension { what, expected: e, found }),
            None => Err(SolverError::TooLarge { what }),
        };
        let cells = self.classes.len().checked_mul(self.nodes);
        dim("free capacity entries", self.nodes.checked_mul(self.resources), self.free.len())?;
        dim("feasibility entries", cells, self.feasible.len())?;
        dim("score entries", cells, self.score.len())?;
        if self.queue.iter().any(|&c| c >= self.classes.len()) {
            return Err(SolverError::TooLarge { what: "class of a queue entry" });
        }
        if let Some(p) =
            self.initial.iter().find(|p| p.class >= self.classes.len() || p.node >= self.nodes)
        {
            return Err(SolverError::InitialOutOfRange { class: p.class, node: p.node });
        }
        dim("domain entries", self.topologies.checked_mul(self.nodes), self.domains.len())?;
        if !self.capacity.is_empty() {
            dim("capacity entries", Some(self.resources), self.capacity.len())?;
        }
        if let Some(c) = self.conflicts.iter().find(|c| {
            c.a >= self.classes.len() || c.b >= self.classes.len() || c.topology >= self.topologies
        }) {
            return Err(SolverError::ConflictOutOfRange { a: c.a, b: c.b, topology: c.topology });
        }
        if !self.inter_pod.is_empty() {
            if self.domains.iter().any(|&d| d != NO_DOMAIN && d as usize >= self.nodes) {
                return Err(SolverError::TooLarge {
                    what: "domain id (at most the number of nodes)",
                });
            }
            self.inter_pod.validate(self.classes.len(), self.nodes, self.topologies)?;
        }
        if let Some(guide) = &self.guide {
            dim("nodes of the guide", Some(self.nodes), guide.group_of_node.len())?;
            dim("quota entries", self.classes.len().checked_mul(guide.groups), guide.quota.len())?;
            if guide.group_of_node.iter().any(|&g| g >= guide.groups) {
                return Err(SolverError::TooLarge { what: "group of a node" });
            }
        }
        for (c, class) in self.classes.iter().enumerate() {
            dim("requests of a class", Some(self.resources), class.requests.len())?;
            if let Some((r, &value)) = class.requests.iter().enumerate().find(|(_, v)| **v < 0) {
                return Err(SolverError::NegativeRequest { class: c, resource: r, value });
            }
        }
        Ok(())
    }

    /// The entries of `free` that belong to `node`.
    fn free_row(&self, node: usize) -> std::ops::Range<usize> {
        node * self.resources..(node + 1) * self.resources
    }
}

/// Invalid input to the solver.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SolverError {
    /// An array does not have the length the problem's dimensions call for.
    #[error("{what}: expected {expected}, found {found}")]
    Dimension {
        /// Which array.
        what: &'static str,
        /// The length the dimensions call for.
        expected: usize,
        /// The length given.
        found: usize,
    },
    /// The dimensions multiply beyond `usize`.
    #[error("{what}: the dimensions are too large")]
    TooLarge {
        /// Which array.
        what: &'static str,
    },
    /// An initial placement names a class or node that does not exist.
    #[error("initial placement of class {class} on node {node} is out of range")]
    InitialOutOfRange {
        /// The class.
        class: usize,
        /// The node.
        node: usize,
    },
    /// A conflict names a class or topology that does not exist.
    #[error("conflict between classes {a} and {b} in topology {topology} is out of range")]
    ConflictOutOfRange {
        /// One class.
        a: usize,
        /// The other class.
        b: usize,
        /// The topology.
        topology: usize,
    },
    /// An inter-pod counter or rule names a class, node, topology or counter that does not
    /// exist (or a spread rule has `maxSkew` 0).
    #[error("inter-pod {what} {index} is out of range")]
    InterPod {
        /// "counter" or "rule".
        what: &'static str,
        /// Its index.
        index: usize,
    },
    /// A class requests a negative amount.
    #[error("class {class} requests {value} of resource {resource}; requests must not be negative")]
    NegativeRequest {
        /// The class.
        class: usize,
        /// The resource.
        resource: usize,
        /// The amount.
        value: i64,
    },
}

/// Recomputes a class's score on a node whose usage changed during the solve (for instance
/// kube-scheduler's resource scores). Called only for nodes that received a pod.
pub trait Rescore {
    /// Told about every placement as it is made, before any rescoring of that node (a caller
    /// whose scores depend on more than free capacity keeps its own node state here).
    fn placed(&mut self, class: usize, node: usize) {
        let _ = (class, node);
    }

    /// Told when the relocation step takes a pod of `class` off `node` (to place it on another
    /// node, announced next with [`Rescore::placed`]).
    fn removed(&mut self, class: usize, node: usize) {
        let _ = (class, node);
    }

    /// Told when a trade or a substitution (`greedy/trade.rs`, `greedy/substitute.rs`) takes a
    /// pod of `class` off `node` for good: it is unplaced again, and no placement of its class
    /// follows for it. The default treats it as [`Rescore::removed`].
    fn dropped(&mut self, class: usize, node: usize) {
        self.removed(class, node);
    }

    /// The score of `class` on `node`, whose free capacity per resource is now `free`.
    fn rescore(&mut self, class: usize, node: usize, free: &[i64]) -> i64;

    /// An upper bound of every score [`Rescore::rescore`] may return for `class` on `node`,
    /// whatever the node's usage: the greedy rescores a changed node only when this bound could
    /// beat the best node found so far (the default, `i64::MAX`, rescores every one).
    fn bound(&mut self, class: usize, node: usize) -> i64 {
        let _ = (class, node);
        i64::MAX
    }

    /// Class `class`'s score on every node, onto `out` (one per node): what
    /// [`Rescore::rescore`] returns on the nodes whose `version` is not 0 (changed during the
    /// solve; `free` is every node's free capacity, `width` entries a node), the matrix's score
    /// on the others. For a caller that computes a whole row faster than the changed nodes one
    /// by one (a kernel across the nodes): the greedy then scans the row instead of bounding
    /// the changed nodes. Returns false (the default) when it does not; `out` is then ignored.
    fn rescore_row(
        &mut self,
        class: usize,
        version: &[u64],
        free: &[i64],
        width: usize,
        out: &mut Vec<i64>,
    ) -> bool {
        let _ = (class, version, free, width, out);
        false
    }
}

/// The order of classes within a priority tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClassOrder {
    /// The order of [`Problem::classes`] (the caller's queue order), after a first pass that
    /// places the pods of [`Problem::queue`] one by one in its order.
    Given,
    /// Largest first: by dominant share of the total free capacity, then by the sum of shares,
    /// then in the given order.
    #[default]
    LargestFirst,
    /// Smallest first (the reverse size order, ties in the given order): when the tier does
    /// not fit, this places the most pods (small pods take the least room each).
    SmallestFirst,
}

/// Options of [`solve_greedy`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GreedyOptions {
    /// The order of classes within a priority tier.
    pub class_order: ClassOrder,
    /// After the greedy pass, place pods that found no room by moving one already placed pod
    /// of another class to a node that can take it (repeated while it helps); then trade a
    /// placed pod for several unplaced ones that request as much (`greedy/trade.rs`).
    pub relocate: bool,
    /// At the end, even out the counters only `ScheduleAnyway` terms read (replicas per zone
    /// and per node) by moving or swapping pods this solve placed (`greedy/polish.rs`); room
    /// the moves join goes to pods left over, and the counters are evened out again.
    pub even_spread: bool,
    /// With `even_spread`, then substitute unplaced pods for placed ones of better-served
    /// workloads where that evens the spread out, and even out again (`greedy/substitute.rs`).
    /// Unlike evening out, this changes which pods are placed, and may spend pods trading won
    /// (never below the tier's count before trading, never less of any resource).
    pub substitute: bool,
    /// With `relocate`, `even_spread` and `substitute`, then trade again: unplaced pods
    /// smaller than a placed one, of the worst-served classes first, take its room where its
    /// workload can still be spread as well (`greedy/trade.rs`), and even out again.
    pub trade_again: bool,
}

impl Default for GreedyOptions {
    fn default() -> Self {
        GreedyOptions {
            class_order: ClassOrder::default(),
            relocate: true,
            even_spread: true,
            substitute: true,
            trade_again: true,
        }
    }
}

/// One pod of a class placed on a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placed {
    /// The class.
    pub class: usize,
    /// The node.
    pub node: usize,
}

/// The solver's answer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Assignment {
    /// Placements in decision order (classes in [`Assignment::class_order`], the pods of a
    /// class one after the other).
    pub placements: Vec<Placed>,
    /// Pods of each class left unplaced.
    pub unplaced: Vec<u32>,
    /// The order the classes were placed in.
    pub class_order: Vec<usize>,
    /// Where each of [`Problem::initial`]'s pods ends up (same order; moved by relocation).
    pub initial: Vec<Placed>,
    /// Pods placed per priority when the greedy pass and relocation ended, before trading: the
    /// count no later step (trading, substituting) leaves a tier below.
    pub placed_before_trading: BTreeMap<i32, u32>,
}

/// Parts per million, the fixed-point unit of resource shares.
const SHARE_SCALE: i128 = 1_000_000;

/// The classes in placement order: priority tiers, highest first; within a tier per `order`.
pub fn class_order(problem: &Problem, order: ClassOrder) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..problem.classes.len()).collect();
    // Total free capacity per resource over all nodes (negative amounts count as none).
    let mut total = vec![0i128; problem.resources];
    for (i, &f) in problem.free.iter().enumerate() {
        if let Some(t) = total.get_mut(i % problem.resources.max(1)) {
            *t += i128::from(f.max(0));
        }
    }
    let shares: Vec<(i128, i128)> = problem
        .classes
        .iter()
        .map(|c| {
            let mut dominant = 0i128;
            let mut sum = 0i128;
            for (r, &req) in c.requests.iter().enumerate() {
                let t = total.get(r).copied().unwrap_or(0).max(1);
                let share = i128::from(req) * SHARE_SCALE / t;
                dominant = dominant.max(share);
                sum += share;
            }
            (dominant, sum)
        })
        .collect();
    idx.sort_by(|&a, &b| {
        let pa = problem.classes[a].priority;
        let pb = problem.classes[b].priority;
        let by_size = match order {
            ClassOrder::Given => Ordering::Equal,
            ClassOrder::LargestFirst => shares[b].cmp(&shares[a]),
            ClassOrder::SmallestFirst => shares[a].cmp(&shares[b]),
        };
        pb.cmp(&pa).then(by_size).then(a.cmp(&b))
    });
    idx
}

/// Whether a pod requesting `req` fits in `free`: every requested resource is available.
fn fits(req: &[i64], free: &[i64]) -> bool {
    req.iter().zip(free).all(|(&r, &f)| r == 0 || r <= f)
}

/// Places the pods of every class, priority tier by priority tier. See the module documentation.
/// Deterministic: the same problem and callback always give the same assignment.
pub fn solve_greedy(
    problem: &Problem,
    options: &GreedyOptions,
    rescore: Option<&mut dyn Rescore>,
) -> Result<Assignment, SolverError> {
    solve_with(problem, options, rescore, Tuning { scan_pods: SCAN_PODS, plain: false })
}

/// How [`solve_with`] finds its candidates; every setting gives the same assignment (tests
/// compare them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tuning {
    /// Classes with at most this many pods are placed by a scan of their row per pod instead
    /// of the per-class heaps.
    pub scan_pods: u32,
    /// Scans of every node where the solver otherwise keeps candidates across picks (the
    /// queue-order pass, relocation's destinations).
    pub plain: bool,
}

/// [`solve_greedy`] with the candidate search set by `tuning`.
pub(crate) fn solve_with(
    problem: &Problem,
    options: &GreedyOptions,
    rescore: Option<&mut dyn Rescore>,
    tuning: Tuning,
) -> Result<Assignment, SolverError> {
    problem.validate()?;
    let order = class_order(problem, options.class_order);
    let mut count = vec![0u32; problem.classes.len() * problem.nodes];
    for p in &problem.initial {
        count[p.class * problem.nodes + p.node] += 1;
    }
    let mut touching: Vec<Vec<(usize, usize)>> = vec![Vec::new(); problem.classes.len()];
    for c in &problem.conflicts {
        touching[c.a].push((c.topology, c.b));
        if c.a != c.b {
            touching[c.b].push((c.topology, c.a));
        }
    }
    for t in &mut touching {
        t.sort_unstable();
        t.dedup();
    }
    let mut state = State {
        problem,
        quota_left: problem.guide.as_ref().map(|g| g.quota.clone()),
        touching,
        blocked: HashMap::new(),
        free: problem.free.clone(),
        count,
        placements: Vec::new(),
        initial: problem.initial.clone(),
        unplaced: problem.classes.iter().map(|c| c.count).collect(),
        rescore,
        ranked: vec![None; problem.classes.len()],
        ranked_cells: 0,
        topo: TopologyState::new(
            &problem.inter_pod,
            problem.classes.len(),
            problem.nodes,
            problem.topologies,
            &problem.domains,
        ),
        scan_pods: tuning.scan_pods,
        deferred: Vec::new(),
        row_scores: Vec::new(),
        changed_scratch: Vec::new(),
        version: vec![0; problem.nodes],
        score_cache: vec![None; problem.classes.len()],
        cache_cells: 0,
        changes: Vec::new(),
        dest_scan: vec![None; problem.classes.len()],
        plain: tuning.plain,
        kept: (0..problem.classes.len()).map(|_| None).collect(),
        offered: vec![0; problem.nodes],
        offer_epoch: 0,
    };
    if state.quota_left.is_some() {
        for &c in &order {
            state.place_class(c);
        }
        state.quota_left = None;
    }
    if options.class_order == ClassOrder::Given {
        // Pod by pod in the queue's order, each on its best node now (priority tiers first,
        // as the queue's own order has them).
        let mut queue: Vec<usize> = problem.queue.clone();
        queue.sort_by_key(|&c| Reverse(problem.classes[c].priority));
        // A class with more pods than a scan suits keeps its candidates from pick to pick
        // (while KEPT_CELLS allows), so a pick costs the nodes changed since its last one.
        let mut queued = vec![0u32; problem.classes.len()];
        for &c in &queue {
            queued[c] = queued[c].saturating_add(1);
        }
        let mut cells = 0usize;
        let keeps: Vec<bool> = queued
            .iter()
            .map(|&q| {
                let keep = !state.plain && q > state.scan_pods && cells < KEPT_CELLS;
                cells += if keep { problem.nodes } else { 0 };
                keep
            })
            .collect();
        for c in queue {
            if state.unplaced[c] == 0 {
                continue;
            }
            let node = if keeps[c] {
                let mut cands = state.kept_or_new(c);
                let node = state.pick(c, &mut cands);
                state.kept[c] = Some(cands);
                node
            } else {
                state.best_direct(c)
            };
            if let Some(node) = node {
                state.place(c, node);
                if state.unplaced[c] == 0 {
                    state.kept[c] = None;
                }
            }
        }
    }
    for &c in &order {
        state.place_class(c);
    }
    // Relocation frees room, which kept candidates do not expect.
    state.kept.iter_mut().for_each(|k| *k = None);
    if options.relocate {
        loop {
            let mut progress = false;
            for &c in &order {
                while state.unplaced[c] > 0 && state.relocate_one(c) {
                    progress = true;
                }
            }
            if !progress {
                break;
            }
            // A move may have left room a pod of another class can use directly (within its
            // `ScheduleAnyway` skew, as relocation's own pods).
            state.place_direct(&order, Fill::WithinSkew);
        }
    }
    let mut placed_before_trading: BTreeMap<i32, u32> = BTreeMap::new();
    for p in &state.placements {
        *placed_before_trading.entry(problem.classes[p.class].priority).or_default() += 1;
    }
    let won = if options.relocate {
        state.trade_for_more(&order, Taking::InOrder)
    } else {
        BTreeMap::new()
    };
    if options.even_spread {
        state.even_spread(false);
        if options.substitute && state.substitute_for_spread(&order, won) {
            state.even_spread(false);
        }
        // With the workloads spread, the pods left over that are smaller than placed ones
        // take their room, the worst served first, and the others are evened out again.
        if options.relocate
            && options.substitute
            && options.trade_again
            && !state.trade_for_more(&order, Taking::SmallerWorstServed).is_empty()
        {
            state.even_spread(false);
        }
        // Moves for the tie-breaks may join free room: the pods left over take it where no
        // spread counter's maximum rises, and the others are evened out again.
        if state.even_spread(true) && state.place_direct(&order, Fill::KeepMaxima) {
            state.even_spread(false);
        }
        // Room the moves joined that is left goes to the pods left over, wherever it is (the
        // caller's later stages would place them there, blind to spread); evening out then
        // spreads them, the tie-breaks last.
        if state.place_direct(&order, Fill::Anywhere) {
            state.even_spread(false);
            state.even_spread(true);
        }
    }
    Ok(Assignment {
        placements: state.placements,
        unplaced: state.unplaced,
        class_order: order,
        initial: state.initial,
        placed_before_trading,
    })
}

/// Where [`State::place_direct`] may put a pod left over on its best node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fill {
    /// Where the node keeps the class's `ScheduleAnyway` skews within their `maxSkew`.
    WithinSkew,
    /// As `WithinSkew`, and where no spread counter's maximum rises.
    KeepMaxima,
    /// On any node with room (hard rules hold, as for every placement).
    Anywhere,
}

/// The solver's working state.
struct State<'p, 'r> {
    problem: &'p Problem,
    /// During the guided first pass, the quota left per class × node group.
    quota_left: Option<Vec<u32>>,
    /// Per class, its conflicts as `(topology, other class)`, sorted.
    touching: Vec<Vec<(usize, usize)>>,
    /// `(class, topology, domain)` → pods placed by this solve that bar the class from the
    /// domain. Only looked up, never iterated, so its order cannot reach the result.
    blocked: HashMap<(usize, usize, u32), u32>,
    /// Free capacity, `nodes × resources`.
    free: Vec<i64>,
    /// Pods of each class on each node, `classes × nodes`.
    count: Vec<u32>,
    placements: Vec<Placed>,
    /// Where the problem's initial pods are now.
    initial: Vec<Placed>,
    unplaced: Vec<u32>,
    rescore: Option<&'r mut dyn Rescore>,
    /// Per class, every node by the class's static score (best first, ties by lowest index),
    /// computed on first use by a relocation; `ranked_cells` counts the cached entries.
    ranked: Vec<Option<Vec<usize>>>,
    ranked_cells: usize,
    /// Counts of matching pods per domain and the inter-pod rules over them.
    topo: TopologyState,
    /// Classes with at most this many pods left pick nodes by a scan ([`SCAN_PODS`]).
    scan_pods: u32,
    /// Scratch of [`State::best_direct`]: changed nodes as `(bound, node, soft score)`.
    deferred: Vec<(i64, Reverse<usize>, i64)>,
    /// Scratch of [`State::best_direct`]: a row's scores ([`Rescore::rescore_row`]).
    row_scores: Vec<i64>,
    /// Scratch of [`State::best_direct`]: the feasible changed nodes of the class's row.
    changed_scratch: Vec<usize>,
    /// How many times each node's usage changed during the solve.
    version: Vec<u64>,
    /// Per class of more than one pod, the callback's score of each changed node as
    /// `(node version, score)` ([`NO_VERSION`]: none yet), while [`SCORE_CACHE_CELLS`] allows:
    /// a class placed pod by pod rescores only the nodes changed since its last pick.
    score_cache: Vec<Option<Vec<(u64, i64)>>>,
    /// Entries of `score_cache` allocated.
    cache_cells: usize,
    /// Every node whose usage changed, once per change, in order.
    changes: Vec<usize>,
    /// Per class, where [`State::destinations`] stands in its ranking.
    dest_scan: Vec<Option<DestScan>>,
    /// Tests: scans of every node instead of the kept candidates ([`Tuning::plain`]).
    plain: bool,
    /// Per class, the candidates the queue-order pass keeps between its picks.
    kept: Vec<Option<Candidates>>,
    /// Scratch of [`State::pick`]: the pass in which each node was last offered.
    offered: Vec<u64>,
    offer_epoch: u64,
}

/// Where [`State::destinations`] of a class stands: every node before `pos` in the class's
/// static ranking that can take a pod of it is in `takers`, apart from nodes changed since
/// entry `seen` of [`State::changes`].
#[derive(Clone)]
struct DestScan {
    pos: usize,
    seen: usize,
    /// `(Reverse(static score), node)`: ranking order.
    takers: BTreeSet<(Reverse<i64>, usize)>,
}

/// The queue-order pass keeps candidates for classes while their nodes add up to at most
/// this (a heap entry is 32 bytes).
const KEPT_CELLS: usize = 1 << 23;

/// The most `(class, node)` entries of rescored scores a solve keeps (16 bytes each).
const SCORE_CACHE_CELLS: usize = 1 << 23;

/// A score cache entry not filled yet.
const NO_VERSION: u64 = u64::MAX;

/// A class's candidate nodes, kept across its picks ([`State::pick`]): per bucket, a heap of
/// nodes by their own score. A placement changes only its own node's score, room and
/// node-local verdicts (the node is offered again at the next pick, from [`State::changes`]),
/// and its domains' shared verdicts and soft scores, which a bucket reads once per pick for
/// all its nodes; a node a node-local spread rule refuses is parked and offered again when a
/// spread minimum changes. So a pick chooses what a scan of every node would, in
/// `O(buckets + log nodes)` plus the nodes changed since the class's last pick.
struct Candidates {
    /// The class's topologies that are not node-local ([`TopologyState::shared_topologies`]).
    shared: Vec<usize>,
    /// Domains in `shared` → bucket.
    bucket_of: BTreeMap<Vec<u32>, u32>,
    /// Each node's bucket ([`NO_BUCKET`]: not worked out yet).
    node_bucket: Vec<u32>,
    buckets: Vec<Bucket>,
    /// [`TopologyState::generation`] when the parked nodes were last offered.
    generation: u64,
    /// Entries of [`State::changes`] already offered.
    seen: usize,
}

/// A node whose bucket is not worked out yet.
const NO_BUCKET: u32 = u32::MAX;

/// Nodes of one class that share their domains in every topology of the class's inter-pod
/// rules that is not node-local: the rules give them the same verdict and soft score.
struct Bucket {
    /// A node of the bucket, to read the shared verdict and score from.
    rep: usize,
    /// `(node score or its bound, lowest index first, node version when pushed, whether the
    /// first is the score)`.
    heap: BinaryHeap<(i64, Reverse<usize>, u64, bool)>,
    /// Nodes a node-local spread rule refused, tried again when a minimum changes.
    parked: Vec<usize>,
}

/// Classes with at most this many pods to place pick each node by a scan of their row instead
/// of building a heap over every node (a heap costs `O(nodes)` to build and allocates; a scan
/// per pod is as cheap for a few pods, and most classes of a heterogeneous batch have one).
const SCAN_PODS: u32 = 2;

/// The most `classes × nodes` entries of static rankings [`State`] keeps (beyond it a
/// relocation sorts the nodes afresh).
const RANKED_CELLS: usize = 1 << 24;

impl State<'_, '_> {
    fn req(&self, c: usize) -> &[i64] {
        &self.problem.classes[c].requests
    }

    fn limit(&self, c: usize) -> u32 {
        self.problem.classes[c].max_per_node.unwrap_or(u32::MAX)
    }

    fn free_of(&self, node: usize) -> &[i64] {
        &self.free[self.problem.free_row(node)]
    }

    fn cell(&self, c: usize, node: usize) -> usize {
        c * self.problem.nodes + node
    }

    /// Whether a pod of class `c` may go on `node` now: feasible, under the limit, room left,
    /// no conflict, quota left, and every inter-pod rule allows it.
    fn can_take(&self, c: usize, node: usize) -> bool {
        self.can_take_base(c, node) && self.topo.allows(c, node)
    }

    /// [`State::can_take`] without the inter-pod rules: once false for a node during a class's
    /// placement, it stays false until the node changes.
    fn can_take_base(&self, c: usize, node: usize) -> bool {
        let cell = self.cell(c, node);
        self.problem.feasible[cell]
            && self.count[cell] < self.limit(c)
            && fits(self.req(c), self.free_of(node))
            && !self.is_blocked(c, node)
            && self.quota_allows(c, node)
    }

    /// The quota cell of class `c` on `node`'s group, during the guided pass.
    fn quota_cell(&self, c: usize, node: usize) -> Option<usize> {
        let guide = self.problem.guide.as_ref()?;
        self.quota_left.as_ref()?;
        Some(c * guide.groups + guide.group_of_node[node])
    }

    /// Whether the guided pass (if running) leaves class `c` quota on `node`'s group.
    fn quota_allows(&self, c: usize, node: usize) -> bool {
        match (self.quota_cell(c, node), &self.quota_left) {
            (Some(cell), Some(q)) => q[cell] > 0,
            _ => true,
        }
    }

    /// The domain of `node` in topology `t`.
    fn domain(&self, t: usize, node: usize) -> u32 {
        self.problem.domains[t * self.problem.nodes + node]
    }

    /// Whether a pod placed by this solve bars class `c` from `node` (a conflict).
    fn is_blocked(&self, c: usize, node: usize) -> bool {
        if self.blocked.is_empty() {
            return false;
        }
        let mut last = usize::MAX;
        for &(t, _) in &self.touching[c] {
            if t == last {
                continue;
            }
            last = t;
            let d = self.domain(t, node);
            if d != NO_DOMAIN && self.blocked.get(&(c, t, d)).is_some_and(|&k| k > 0) {
                return true;
            }
        }
        false
    }

    /// Records that a pod of class `c` is now on `node` (or no longer, with `add` false): the
    /// classes it conflicts with are barred from (or freed in) the node's domains.
    fn mark_conflicts(&mut self, c: usize, node: usize, add: bool) {
        for i in 0..self.touching[c].len() {
            let (t, other) = self.touching[c][i];
            let d = self.domain(t, node);
            if d == NO_DOMAIN {
                continue;
            }
            let k = self.blocked.entry((other, t, d)).or_insert(0);
            *k = if add { *k + 1 } else { k.saturating_sub(1) };
        }
    }

    /// The score of `c` on `node` with the soft inter-pod terms.
    fn total_score(&mut self, c: usize, node: usize) -> i64 {
        self.score(c, node).saturating_add(self.topo.soft(c, node))
    }

    /// The score of `c` on `node` with only the node-local soft terms (a bucket adds the rest).
    fn node_score(&mut self, c: usize, node: usize) -> i64 {
        self.score(c, node).saturating_add(self.topo.soft_local(c, node, true))
    }

    /// Whether `node`'s usage changed during the solve.
    fn changed(&self, node: usize) -> bool {
        self.version[node] != 0
    }

    /// The score of `c` on `node`: static until the node changed, then the callback's (kept
    /// per class of more than one pod until the node changes again).
    fn score(&mut self, c: usize, node: usize) -> i64 {
        if !self.changed(node) {
            return i64::from(self.problem.score[self.cell(c, node)]);
        }
        if let Some(score) = self.cached(c, node) {
            return score;
        }
        let range = self.problem.free_row(node);
        let Some(r) = self.rescore.as_mut() else {
            return i64::from(self.problem.score[self.cell(c, node)]);
        };
        let score = r.rescore(c, node, &self.free[range]);
        let nodes = self.problem.nodes;
        if self.score_cache[c].is_none()
            && self.unplaced[c] > 1
            && self.cache_cells + nodes <= SCORE_CACHE_CELLS
        {
            self.score_cache[c] = Some(vec![(NO_VERSION, 0); nodes]);
            self.cache_cells += nodes;
        }
        if let Some(cache) = self.score_cache[c].as_mut() {
            cache[node] = (self.version[node], score);
        }
        score
    }

    /// Adds one pod of class `c` to `node`'s usage, or takes one away.
    fn adjust(&mut self, c: usize, node: usize, add: bool) {
        let range = self.problem.free_row(node);
        let req = &self.problem.classes[c].requests;
        for (f, &r) in self.free[range].iter_mut().zip(req) {
            *f = if add { f.saturating_sub(r) } else { f.saturating_add(r) };
        }
        let cell = self.cell(c, node);
        self.count[cell] =
            if add { self.count[cell] + 1 } else { self.count[cell].saturating_sub(1) };
        self.version[node] += 1;
        self.changes.push(node);
        if !self.touching[c].is_empty() {
            self.mark_conflicts(c, node, add);
        }
        self.topo.update(c, node, add);
    }

    /// Places pods left over, class by class in `order`, each on its best node while `fill`
    /// allows it there. Returns whether any was placed.
    fn place_direct(&mut self, order: &[usize], fill: Fill) -> bool {
        let mut placed = false;
        for &c in order {
            while self.unplaced[c] > 0 {
                let Some(node) = self.best_direct(c) else { break };
                let allowed = match fill {
                    Fill::Anywhere => true,
                    Fill::WithinSkew => self.topo.soft_spread_allows(c, node),
                    Fill::KeepMaxima => {
                        self.topo.soft_spread_allows(c, node)
                            && self
                                .topo
                                .counters_of(c)
                                .iter()
                                .all(|&k| self.topo.addition_keeps_maximum(k, node))
                    }
                };
                if !allowed {
                    break;
                }
                self.place(c, node);
                placed = true;
            }
        }
        placed
    }

    /// Places one pod of class `c` on `node`.
    fn place(&mut self, c: usize, node: usize) {
        if let Some(cell) = self.quota_cell(c, node)
            && let Some(q) = self.quota_left.as_mut()
        {
            q[cell] = q[cell].saturating_sub(1);
        }
        self.adjust(c, node, true);
        self.unplaced[c] = self.unplaced[c].saturating_sub(1);
        self.placements.push(Placed { class: c, node });
        if let Some(r) = self.rescore.as_mut() {
            r.placed(c, node);
        }
    }

    /// Places the pods of class `c` one by one on its best candidate: for a class of a few
    /// pods a scan of its row per pod ([`State::best_direct`]), else its [`Candidates`] (kept
    /// from the queue-order pass, or built now). Both give the same placements.
    fn place_class(&mut self, c: usize) {
        if self.unplaced[c] == 0 || self.limit(c) == 0 {
            return;
        }
        if self.unplaced[c] <= self.scan_pods {
            while self.unplaced[c] > 0 {
                match self.best_direct(c) {
                    Some(node) => self.place(c, node),
                    None => break,
                }
            }
            return;
        }
        let mut cands = self.kept_or_new(c);
        while self.unplaced[c] > 0 {
            match self.pick(c, &mut cands) {
                Some(node) => self.place(c, node),
                None => break,
            }
        }
    }

    /// Class `c`'s candidates kept by the queue-order pass, else new ones.
    fn kept_or_new(&mut self, c: usize) -> Candidates {
        match self.kept[c].take() {
            Some(k) => k,
            None => self.candidates(c),
        }
    }

    /// Class `c`'s candidates: every node that can take a pod of it now, by bucket.
    fn candidates(&mut self, c: usize) -> Candidates {
        let n_nodes = self.problem.nodes;
        let mut cands = Candidates {
            shared: self.topo.shared_topologies(c),
            bucket_of: BTreeMap::new(),
            node_bucket: vec![NO_BUCKET; n_nodes],
            buckets: Vec::new(),
            generation: self.topo.generation(),
            seen: self.changes.len(),
        };
        for node in 0..n_nodes {
            self.offer(c, &mut cands, node);
        }
        cands
    }

    /// Adds `node` to class `c`'s candidates if it can take a pod of it (parked when a
    /// node-local rule refuses it): with its score, or with its bound while the node's rescored
    /// score is not known yet (resolved when it reaches the top, [`State::pick`]).
    fn offer(&mut self, c: usize, cands: &mut Candidates, node: usize) {
        if !self.can_take_base(c, node) {
            return;
        }
        let mut b = cands.node_bucket[node];
        if b == NO_BUCKET {
            let sig: Vec<u32> =
                cands.shared.iter().map(|&t| self.topo.domain_of(t, node)).collect();
            let buckets = &mut cands.buckets;
            b = *cands.bucket_of.entry(sig).or_insert_with(|| {
                buckets.push(Bucket { rep: node, heap: BinaryHeap::new(), parked: Vec::new() });
                (buckets.len() - 1) as u32
            });
            cands.node_bucket[node] = b;
        }
        let bucket = &mut cands.buckets[b as usize];
        if !self.topo.allows_local(c, node, true) {
            bucket.parked.push(node);
            return;
        }
        let version = self.version[node];
        let entry =
            if self.changed(node) && self.rescore.is_some() && self.cached(c, node).is_none() {
                let local = self.topo.soft_local(c, node, true);
                (self.rescore_bound(c, node).saturating_add(local), Reverse(node), version, false)
            } else {
                (self.node_score(c, node), Reverse(node), version, true)
            };
        bucket.heap.push(entry);
    }

    /// Class `c`'s rescored score on `node` when it is cached for the node's current version.
    fn cached(&self, c: usize, node: usize) -> Option<i64> {
        let (version, score) = *self.score_cache.get(c)?.as_ref()?.get(node)?;
        (version == self.version[node]).then_some(score)
    }

    /// Class `c`'s best candidate now (highest score, lowest index), as [`State::best_direct`]
    /// finds it: the nodes changed since the last pick are offered again, parked nodes
    /// retried when a spread minimum changed, then each bucket's top is checked and its
    /// shared soft score added. Stale entries (the node changed since) are dropped; a node
    /// that can no longer take a pod of the class is dropped too (nothing frees room while
    /// candidates are kept: relocation and the end of quotas drop them).
    fn pick(&mut self, c: usize, cands: &mut Candidates) -> Option<usize> {
        let logged = self.changes.len();
        if cands.seen < logged {
            self.offer_epoch += 1;
            for i in cands.seen..logged {
                let node = self.changes[i];
                if self.offered[node] != self.offer_epoch {
                    self.offered[node] = self.offer_epoch;
                    self.offer(c, cands, node);
                }
            }
            cands.seen = logged;
        }
        if self.topo.generation() != cands.generation {
            cands.generation = self.topo.generation();
            for b in 0..cands.buckets.len() {
                for node in std::mem::take(&mut cands.buckets[b].parked) {
                    self.offer(c, cands, node);
                }
            }
        }
        let mut best: Option<((i64, Reverse<usize>), usize)> = None;
        for b in 0..cands.buckets.len() {
            let rep = cands.buckets[b].rep;
            if !self.topo.allows_local(c, rep, false) {
                continue;
            }
            let top = loop {
                let bucket = &mut cands.buckets[b];
                let Some(&(s, Reverse(node), version, exact)) = bucket.heap.peek() else {
                    break None;
                };
                if version != self.version[node] || !self.can_take_base(c, node) {
                    bucket.heap.pop(); // Stale, or the node can no longer take one.
                    continue;
                }
                if !self.topo.allows_local(c, node, true) {
                    bucket.heap.pop();
                    bucket.parked.push(node);
                    continue;
                }
                if !exact {
                    bucket.heap.pop();
                    let s = self.node_score(c, node);
                    cands.buckets[b].heap.push((s, Reverse(node), version, true));
                    continue;
                }
                break Some((s, node));
            };
            let Some((s, node)) = top else { continue };
            let key = (s.saturating_add(self.topo.soft_local(c, rep, false)), Reverse(node));
            if best.is_none_or(|(k, _)| key > k) {
                best = Some((key, b));
            }
        }
        best.map(|((_, Reverse(node)), _)| node)
    }

    /// The best node that can take a pod of class `c` now (highest score, lowest index).
    ///
    /// With a callback that scores whole rows ([`Rescore::rescore_row`]), a scan of the row.
    /// Otherwise nodes whose usage has not changed score from the matrix, and a changed node
    /// is rescored only if its [`Rescore::bound`] could beat the best found so far, highest
    /// bound first. Each node is compared by its score before the (dearer) checks of whether
    /// it can take the pod: the best of a set does not depend on the order its members are
    /// filtered in. Since a bound is at least the node's score and keys are unique per node,
    /// every way gives the node a rescoring of every node gives (property tests compare them).
    fn best_direct(&mut self, c: usize) -> Option<usize> {
        let mut best: Option<(i64, Reverse<usize>)> = None;
        let n_nodes = self.problem.nodes;
        let row = c * n_nodes..(c + 1) * n_nodes;
        let mut scores = std::mem::take(&mut self.row_scores);
        scores.clear();
        let by_row = self.rescore.as_mut().is_some_and(|r| {
            r.rescore_row(c, &self.version, &self.free, self.problem.resources, &mut scores)
        }) && scores.len() == n_nodes;
        if by_row {
            let soft = self.topo.has_rules(c);
            for (node, &feasible) in self.problem.feasible[row].iter().enumerate() {
                if !feasible {
                    continue;
                }
                let s = if soft { self.topo.soft(c, node) } else { 0 };
                let key = (scores[node].saturating_add(s), Reverse(node));
                if best.is_none_or(|b| key > b) && self.can_take(c, node) {
                    best = Some(key);
                }
            }
            self.row_scores = scores;
            return best.map(|(_, Reverse(n))| n);
        }
        self.row_scores = scores;
        let bounded = self.rescore.is_some();
        let mut changed = std::mem::take(&mut self.changed_scratch);
        changed.clear();
        // The unchanged nodes first; changed nodes wait for the best of them.
        for (node, &feasible) in self.problem.feasible[row].iter().enumerate() {
            if !feasible {
                continue;
            }
            if bounded && self.changed(node) {
                changed.push(node);
                continue;
            }
            let key = (self.total_score(c, node), Reverse(node));
            if best.is_none_or(|b| key > b) && self.can_take(c, node) {
                best = Some(key);
            }
        }
        // The changed nodes whose bound could beat that best, rescored highest bound first
        // until none can beat the best.
        let mut deferred = std::mem::take(&mut self.deferred);
        deferred.clear();
        for &node in &changed {
            let soft = self.topo.soft(c, node);
            let bound = self.rescore_bound(c, node).saturating_add(soft);
            if best.is_none_or(|b| (bound, Reverse(node)) > b) && self.can_take(c, node) {
                deferred.push((bound, Reverse(node), soft));
            }
        }
        self.changed_scratch = changed;
        let mut heap = BinaryHeap::from(deferred);
        while let Some((bound, Reverse(node), soft)) = heap.pop() {
            if best.is_some_and(|b| (bound, Reverse(node)) <= b) {
                break;
            }
            let key = (self.score(c, node).saturating_add(soft), Reverse(node));
            if best.is_none_or(|b| key > b) {
                best = Some(key);
            }
        }
        self.deferred = heap.into_vec();
        best.map(|(_, Reverse(n))| n)
    }

    /// An upper bound of [`State::score`] of `c` on `node`, whatever the node's usage.
    fn rescore_bound(&mut self, c: usize, node: usize) -> i64 {
        match self.rescore.as_mut() {
            Some(r) if self.version[node] != 0 => r.bound(c, node),
            _ => i64::from(self.problem.score[self.cell(c, node)]),
        }
    }

    /// One relocation for an unplaced pod of class `c`: on a node where it lacks room, move one
    /// pod of another class placed by this solve to a node that can take it, if that makes
    /// room. Targets are tried by static score (highest first); the moved pod goes to its
    /// class's best other node by static score. Both keep their classes' `ScheduleAnyway`
    /// terms within `maxSkew` (a pod the queue could not place is not worth a crowded zone).
    /// Returns whether a pod of `c` was placed.
    fn relocate_one(&mut self, c: usize) -> bool {
        if self.topo.has_hard_rules(c) {
            return false;
        }
        let n_classes = self.problem.classes.len();
        let movable: Vec<bool> = (0..n_classes).map(|c2| c2 != c && self.movable(c2)).collect();
        // The two best destinations of each class by static score, for the moved pod, worked
        // out when first needed (nothing changes before the move that ends the call).
        let mut dest: Vec<Option<[Option<usize>; 2]>> = vec![None; n_classes];
        let ranked = self.ranked_nodes(c);
        let mut placed = false;
        'targets: for &n in &ranked {
            let cell = self.cell(c, n);
            if !self.problem.feasible[cell]
                || self.count[cell] >= self.limit(c)
                || self.is_blocked(c, n)
                || !self.topo.soft_spread_allows(c, n)
            {
                continue;
            }
            for c2 in 0..n_classes {
                if !movable[c2] || self.count[self.cell(c2, n)] == 0 {
                    continue;
                }
                let d = match dest[c2] {
                    Some(d) => d,
                    None => *dest[c2].insert(self.destinations(c2)),
                };
                let to = match d {
                    [Some(a), _] if a != n => a,
                    [_, Some(b)] if b != n => b,
                    _ => continue,
                };
                if !self.room_after(c, n, c2) || !self.move_keeps_soft_spread(c, n, c2, to) {
                    continue;
                }
                self.move_pod(c2, n, to);
                self.place(c, n);
                placed = true;
                break 'targets;
            }
        }
        self.keep_ranked(c, ranked);
        placed
    }

    /// Whether pods of class `c` placed by this solve may move (relocation, evening out): the
    /// class has no conflict and no hard inter-pod rule, and counts in no counter a hard rule
    /// reads, so no hard decision depends on where its pods are.
    fn movable(&self, c: usize) -> bool {
        self.touching[c].is_empty()
            && !self.topo.has_hard_rules(c)
            && !self.topo.counted_by_hard_rule(c)
    }

    /// Whether a pod of class `c` fits on `node` once a pod of class `leaving` has left it
    /// (every resource `c` requests).
    fn room_after(&self, c: usize, node: usize, leaving: usize) -> bool {
        self.fits_after(node, &[c], &[leaving])
    }

    /// Whether pods of the classes `coming` fit on `node` together once pods of the classes
    /// `leaving` have left it: every resource they request, summed, within the node's free
    /// amount plus what the leaving pods free.
    fn fits_after(&self, node: usize, coming: &[usize], leaving: &[usize]) -> bool {
        let free = self.free_of(node);
        (0..self.problem.resources).all(|r| {
            let want: i64 = coming.iter().map(|&c| self.req(c)[r]).sum();
            let freed = leaving.iter().fold(free[r], |f, &l| f.saturating_add(self.req(l)[r]));
            want == 0 || want <= freed
        })
    }

    /// Whether moving a pod of class `c2` from `n` to `to` keeps `c2`'s `ScheduleAnyway` terms
    /// within `maxSkew` on `to`, and `c`'s on `n` once the move is done (the counts are moved
    /// for the check and moved back).
    fn move_keeps_soft_spread(&mut self, c: usize, n: usize, c2: usize, to: usize) -> bool {
        if !self.topo.has_soft_spread(c) && !self.topo.has_soft_spread(c2) {
            return true;
        }
        self.topo.update(c2, n, false);
        let mut ok = self.topo.soft_spread_allows(c2, to);
        self.topo.update(c2, to, true);
        ok = ok && self.topo.soft_spread_allows(c, n);
        self.topo.update(c2, to, false);
        self.topo.update(c2, n, true);
        ok
    }

    /// The first two nodes of class `c`'s static ranking that can take a pod of it now (a class
    /// without conflicts or hard inter-pod rules, whose verdict on a node changes only with that
    /// node). Kept across calls ([`DestScan`]): the ranking is walked once per solve, and
    /// only the nodes changed since the last call are looked at again.
    fn destinations(&mut self, c: usize) -> [Option<usize>; 2] {
        let ranked = self.ranked_nodes(c);
        if self.plain {
            let mut takers = ranked.iter().copied().filter(|&n| self.can_take(c, n));
            let d = [takers.next(), takers.next()];
            self.keep_ranked(c, ranked);
            return d;
        }
        let logged = self.changes.len();
        let mut scan = self.dest_scan[c].take().unwrap_or(DestScan {
            pos: 0,
            seen: logged,
            takers: BTreeSet::new(),
        });
        let key = |n: usize| (Reverse(i64::from(self.problem.score[self.cell(c, n)])), n);
        for &n in &self.changes[scan.seen..] {
            if ranked.get(scan.pos).is_some_and(|&p| key(n) >= key(p)) {
                continue; // Not walked yet.
            }
            if self.can_take(c, n) {
                scan.takers.insert(key(n));
            } else {
                scan.takers.remove(&key(n));
            }
        }
        scan.seen = logged;
        while scan.takers.len() < 2 && scan.pos < ranked.len() {
            let n = ranked[scan.pos];
            if self.can_take(c, n) {
                scan.takers.insert(key(n));
            }
            scan.pos += 1;
        }
        let mut first = scan.takers.iter().map(|&(_, n)| n);
        let d = [first.next(), first.next()];
        self.dest_scan[c] = Some(scan);
        self.keep_ranked(c, ranked);
        d
    }

    /// Every node by class `c`'s static score, best first, ties by lowest index: the cached
    /// ranking (taken out of the cache; give it back with [`State::keep_ranked`]) or a fresh
    /// sort.
    fn ranked_nodes(&mut self, c: usize) -> Vec<usize> {
        if let Some(ranked) = self.ranked[c].take() {
            self.ranked_cells -= ranked.len();
            return ranked;
        }
        let mut ranked: Vec<usize> = (0..self.problem.nodes).collect();
        ranked.sort_by_key(|&n| (Reverse(self.problem.score[self.cell(c, n)]), n));
        ranked
    }

    /// Caches class `c`'s ranking from [`State::ranked_nodes`] while the cache has room.
    fn keep_ranked(&mut self, c: usize, ranked: Vec<usize>) {
        if self.ranked[c].is_none() && self.ranked_cells + ranked.len() <= RANKED_CELLS {
            self.ranked_cells += ranked.len();
            self.ranked[c] = Some(ranked);
        }
    }

    /// Moves one pod of class `c` from `from` to `to`: the latest such placement of this
    /// solve, else an initial pod.
    fn move_pod(&mut self, c: usize, from: usize, to: usize) {
        let is_it = |p: &Placed| p.class == c && p.node == from;
        if let Some(i) = self.placements.iter().rposition(is_it) {
            self.move_placed(i, to);
            return;
        }
        self.adjust(c, from, false);
        self.adjust(c, to, true);
        if let Some(p) = self.initial.iter_mut().rev().find(|p| is_it(p)) {
            p.node = to;
        }
        if let Some(r) = self.rescore.as_mut() {
            r.removed(c, from);
            r.placed(c, to);
        }
    }

    /// Moves placement `i` of this solve to `to`.
    fn move_placed(&mut self, i: usize, to: usize) {
        let Placed { class: c, node: from } = self.placements[i];
        self.adjust(c, from, false);
        self.adjust(c, to, true);
        self.placements[i].node = to;
        if let Some(r) = self.rescore.as_mut() {
            r.removed(c, from);
            r.placed(c, to);
        }
    }
}

mod polish;
#[cfg(test)]
pub(crate) use polish::SHARED_SKEW;
mod substitute;
#[cfg(test)]
pub(crate) mod tests;
mod trade;
use trade::Taking;
