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
//! 3. Candidates are a max-heap per class built once when the class starts (`O(nodes)`), with
//!    lazy invalidation: every placement on a node bumps that node's stamp, stale heap entries
//!    are dropped when popped, and the node is pushed again with its new score only if it can
//!    still take a pod of the class. A node that fills is therefore never looked at again for
//!    that class, and no step rescans the nodes.
//! 4. Scores: the static matrix is used for every node whose usage has not changed during the
//!    solve; once a node received a pod, its score for the class being placed comes from
//!    [`Rescore::rescore`] with the node's current free capacity (when a callback is given;
//!    [`Rescore::placed`] hears of every placement first).
//!
//! Cost: `O(classes × nodes + pods × log nodes)` time plus the callback's calls (one per
//! placement, and one per changed node when a class starts), `O(nodes)` extra memory per class.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

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
    pub score: Vec<i64>,
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

    /// The score of `class` on `node`, whose free capacity per resource is now `free`.
    fn rescore(&mut self, class: usize, node: usize, free: &[i64]) -> i64;
}

/// The order of classes within a priority tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClassOrder {
    /// The order of [`Problem::classes`] (the caller's queue order).
    Given,
    /// Largest first: by dominant share of the total free capacity, then by the sum of shares,
    /// then in the given order.
    #[default]
    LargestFirst,
}

/// Options of [`solve_greedy`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GreedyOptions {
    /// The order of classes within a priority tier.
    pub class_order: ClassOrder,
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
    mut rescore: Option<&mut dyn Rescore>,
) -> Result<Assignment, SolverError> {
    problem.validate()?;
    let n_nodes = problem.nodes;
    let mut free = problem.free.clone();
    let mut changed = vec![false; n_nodes];
    let order = class_order(problem, options.class_order);
    let mut out = Assignment {
        placements: Vec::new(),
        unplaced: problem.classes.iter().map(|c| c.count).collect(),
        class_order: order.clone(),
    };

    for &c in &order {
        let class = &problem.classes[c];
        if class.count == 0 {
            continue;
        }
        let req = class.requests.as_slice();
        let limit = class.max_per_node.unwrap_or(u32::MAX);
        if limit == 0 {
            continue;
        }
        let row = c * n_nodes;
        let mut per_node = vec![0u32; n_nodes];
        let mut stamp = vec![0u32; n_nodes];
        let statics = &problem.score[row..row + n_nodes];
        let score_of = |rescore: &mut Option<&mut dyn Rescore>,
                        node: usize,
                        free: &[i64],
                        changed: bool|
         -> i64 {
            match (rescore, changed) {
                (Some(r), true) => r.rescore(c, node, free),
                _ => statics[node],
            }
        };
        // Heap entries: (score, lowest index first, stamp when pushed).
        let mut candidates: Vec<(i64, Reverse<usize>, u32)> = Vec::new();
        for (node, &was_changed) in changed.iter().enumerate() {
            let range = problem.free_row(node);
            if problem.feasible[row + node] && fits(req, &free[range.clone()]) {
                candidates.push((
                    score_of(&mut rescore, node, &free[range], was_changed),
                    Reverse(node),
                    0,
                ));
            }
        }
        let mut heap = BinaryHeap::from(candidates);
        let mut remaining = class.count;
        while remaining > 0 {
            let Some((_, Reverse(node), st)) = heap.pop() else { break };
            if st != stamp[node] {
                continue; // Stale: the node took a pod since this entry was pushed.
            }
            let range = problem.free_row(node);
            if !fits(req, &free[range.clone()]) || per_node[node] >= limit {
                continue; // Defensive: entries are only pushed for nodes that fit.
            }
            for (f, &r) in free[range.clone()].iter_mut().zip(req) {
                *f = f.saturating_sub(r);
            }
            per_node[node] += 1;
            stamp[node] += 1;
            changed[node] = true;
            remaining -= 1;
            out.placements.push(Placed { class: c, node });
            if let Some(r) = rescore.as_mut() {
                r.placed(c, node);
            }
            if per_node[node] < limit && fits(req, &free[range.clone()]) {
                let s = score_of(&mut rescore, node, &free[range], true);
                heap.push((s, Reverse(node), stamp[node]));
            }
        }
        out.unplaced[c] = remaining;
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
