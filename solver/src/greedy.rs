//! The greedy batch assignment: pod classes onto nodes, priority tier by priority tier.
//!
//! Input: a [`Problem`] (`greedy/problem.rs`) — pod classes (how many pods, priority, integer
//! requests per resource, an optional "at most k of this class per node" limit), each node's free
//! capacity per resource, a class × node feasibility matrix and a class × node score matrix — plus
//! an optional [`Rescore`] callback for scores that depend on a node's usage. Output: an
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
//!    allocation; `greedy/candidates.rs`). Larger classes keep their candidates ([`Candidates`]) in
//!    max-heaps built once when the class starts (`O(nodes)`), with lazy invalidation: every change
//!    of a node bumps its version and logs it, stale heap entries are dropped when popped, and the
//!    nodes changed since the class's last pick are pushed again with their new score if they can
//!    still take a pod of the class. A node that fills is therefore never looked at again for that
//!    class, and no step rescans the nodes. The queue-order pass ([`ClassOrder::Given`]) keeps each
//!    such class's candidates from one of its pods to the next, so a pick costs the nodes changed
//!    since the class's last pick, not a scan of every node.
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
//! 6. Relocation ([`GreedyOptions::relocate`], on by default; `greedy/relocate.rs`): for each class
//!    with pods left over, in class order, a node that is feasible for it but lacks room gets room
//!    by moving one pod of another class — placed by this solve, or one of the problem's movable
//!    [`Problem::initial`] pods — to that class's best other node that can take it (static scores
//!    rank both choices). This repeats, with a direct-placement pass after each round of moves,
//!    until no move helps. It only ever adds placements: the moved pod stays placed.
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
use std::collections::{BTreeMap, HashMap};

use crate::topology::TopologyState;

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

/// The queue-order pass keeps candidates for classes while their nodes add up to at most
/// this (a heap entry is 32 bytes).
const KEPT_CELLS: usize = 1 << 23;

/// The most `(class, node)` entries of rescored scores a solve keeps (16 bytes each).
const SCORE_CACHE_CELLS: usize = 1 << 23;

/// A score cache entry not filled yet.
const NO_VERSION: u64 = u64::MAX;

/// Classes with at most this many pods to place pick each node by a scan of their row instead
/// of building a heap over every node (a heap costs `O(nodes)` to build and allocates; a scan
/// per pod is as cheap for a few pods, and most classes of a heterogeneous batch have one).
const SCAN_PODS: u32 = 2;

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
}

mod candidates;
use candidates::Candidates;
mod polish;
mod problem;
pub use problem::{ClassSpec, Conflict, NO_DOMAIN, Problem, Rescore, SolverError};
mod relocate;
#[cfg(test)]
pub(crate) use polish::SHARED_SKEW;
use relocate::DestScan;
mod substitute;
#[cfg(test)]
pub(crate) mod tests;
mod trade;
use trade::Taking;
