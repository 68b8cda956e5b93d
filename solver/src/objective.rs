//! The objective of a solve: what makes one assignment better than another, and the choice of
//! the best among the greedy's strategies by it.
//!
//! Input: a [`Problem`] (its [`Problem::objective`] and [`Problem::capacity`]) and
//! assignments. Output: each class's value per pod ([`pod_values`]), an assignment's
//! [`Rank`] (ordered: a greater rank is a better assignment) and [`solve_best`].
//!
//! The rank, compared in this order:
//! 1. Priority tiers, highest first: a tier's value is the sum of its placed pods' values, so a
//!    higher tier is never given up for any gain in a lower one (kube-scheduler's PrioritySort
//!    serves higher priorities first).
//! 2. Within a tier, the pod value of [`Objective::Resources`] (the default) is the pod's
//!    *dominant share* of the cluster: the largest, over the resources it requests, of its
//!    request over the cluster's capacity of that resource, in units of 2⁻³² (at least 1). One
//!    pod of 8 CPUs is worth eight pods of 1 CPU; a pod that requests little is worth its
//!    share of the pod slots. [`Objective::Pods`] gives every pod the value 1.
//! 3. Queue order (resources only): with equal values, more pods of the class first in the
//!    problem's class order (the caller's PrioritySort queue), then of the next class, … — the
//!    assignment that serves the queue's head first, as kube-scheduler would.
//! 4. The total static score of the placements (the profile's score).
//!
//! The queue order's greedy (`greedy-queue`, kube-scheduler's order) is also a *floor* for
//! [`Objective::Resources`]: another strategy's assignment is kept over it only when it
//! [`covers`] it — per tier at least its pods and its requested amount of every resource, and
//! a pod of every class it serves — so that weighing pods by their share never trades away
//! pods, CPU, memory or a whole workload that the queue order would have placed.
//!
//! Upstream counterpart: none — kube-scheduler places one pod at a time and has no batch
//! objective; PrioritySort (`pkg/scheduler/framework/plugins/queuesort`) is the order the
//! tie-break follows.

use crate::greedy::{Assignment, ClassOrder, GreedyOptions, Placed, Problem, solve_greedy};
use crate::lp::{LpOptions, lp_guide};

/// What a solve maximizes within a priority tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Objective {
    /// Placed requested resources, each pod weighted by its dominant share of the cluster.
    #[default]
    Resources,
    /// Placed pods.
    Pods,
}

impl Objective {
    /// Its name on the command line and in documents.
    pub fn as_str(self) -> &'static str {
        match self {
            Objective::Resources => "resources",
            Objective::Pods => "pods",
        }
    }
}

/// The fixed-point unit of shares: a share of 1 (the whole cluster) is `SHARE_ONE`.
pub const SHARE_ONE: u64 = 1 << 32;

/// The dominant share of `requests` in `capacity` (same resources, same units), in units of
/// 1 / [`SHARE_ONE`]: the largest `request × SHARE_ONE / capacity` over the resources with a
/// positive capacity, at least 1. A resource requested beyond the capacity counts as the whole.
pub fn dominant_share(requests: &[i64], capacity: &[i64]) -> u64 {
    let mut best = 1u64;
    for (&req, &cap) in requests.iter().zip(capacity) {
        if req <= 0 || cap <= 0 {
            continue;
        }
        let share =
            (i128::from(req) * i128::from(SHARE_ONE) / i128::from(cap)).min(i128::from(SHARE_ONE));
        best = best.max(u64::try_from(share).unwrap_or(SHARE_ONE));
    }
    best
}

/// The capacity per resource the shares are taken of: [`Problem::capacity`], or when it is
/// empty the total free capacity of the nodes (negative amounts count as none).
pub fn capacity(problem: &Problem) -> Vec<i64> {
    if problem.capacity.len() == problem.resources {
        return problem.capacity.clone();
    }
    let mut total = vec![0i64; problem.resources];
    for (i, &f) in problem.free.iter().enumerate() {
        if let Some(t) = total.get_mut(i % problem.resources.max(1)) {
            *t = t.saturating_add(f.max(0));
        }
    }
    total
}

/// The value of one pod of each class under the problem's objective.
pub fn pod_values(problem: &Problem) -> Vec<u64> {
    match problem.objective {
        Objective::Pods => vec![1; problem.classes.len()],
        Objective::Resources => {
            let cap = capacity(problem);
            problem.classes.iter().map(|c| dominant_share(&c.requests, &cap)).collect()
        }
    }
}

/// How good an assignment is (see the module documentation); greater is better.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rank {
    /// `(priority, value of the tier's placed pods)`, highest priority first.
    pub tiers: Vec<(i32, u128)>,
    /// Pods placed per class in the problem's class order (empty for [`Objective::Pods`]).
    pub queue: Vec<u32>,
    /// The total static score of the placements.
    pub score: i64,
}

/// The value of each priority tier, highest first, of `placements`.
pub fn tier_values(problem: &Problem, placements: &[Placed]) -> Vec<(i32, u128)> {
    let values = pod_values(problem);
    let mut tiers: Vec<i32> = problem.classes.iter().map(|c| c.priority).collect();
    tiers.sort_unstable_by(|a, b| b.cmp(a));
    tiers.dedup();
    let mut out: Vec<(i32, u128)> = tiers.into_iter().map(|t| (t, 0)).collect();
    for p in placements {
        let prio = problem.classes[p.class].priority;
        if let Some(t) = out.iter_mut().find(|t| t.0 == prio) {
            t.1 += u128::from(values[p.class]);
        }
    }
    out
}

/// The rank of `assignment` (an answer to `problem`).
pub fn rank(problem: &Problem, assignment: &Assignment) -> Rank {
    let queue = match problem.objective {
        Objective::Pods => Vec::new(),
        Objective::Resources => problem
            .classes
            .iter()
            .zip(&assignment.unplaced)
            .map(|(c, &u)| c.count.saturating_sub(u))
            .collect(),
    };
    let score = assignment
        .placements
        .iter()
        .map(|p| problem.score.get(p.class * problem.nodes + p.node).map_or(0, |&s| i64::from(s)))
        .fold(0i64, i64::saturating_add);
    Rank { tiers: tier_values(problem, &assignment.placements), queue, score }
}

/// Pods placed per class.
pub fn placed(problem: &Problem, assignment: &Assignment) -> Vec<u32> {
    problem
        .classes
        .iter()
        .zip(&assignment.unplaced)
        .map(|(c, &u)| c.count.saturating_sub(u))
        .collect()
}

/// Whether `placed` (pods per class) covers `floor` (see the module documentation): in every
/// priority tier at least as many pods and as much of every resource requested, and at least
/// one pod of every class of which `floor` places one.
pub fn covers(problem: &Problem, placed: &[u32], floor: &[u32]) -> bool {
    let mut tiers: Vec<i32> = problem.classes.iter().map(|c| c.priority).collect();
    tiers.sort_unstable();
    tiers.dedup();
    let served = placed.iter().zip(floor).all(|(&p, &f)| f == 0 || p > 0);
    served
        && tiers.iter().all(|&t| {
            let sum = |counts: &[u32], r: Option<usize>| -> i128 {
                problem
                    .classes
                    .iter()
                    .zip(counts)
                    .filter(|(c, _)| c.priority == t)
                    .map(|(c, &n)| {
                        let per_pod = r.map_or(1, |r| c.requests.get(r).copied().unwrap_or(0));
                        i128::from(n) * i128::from(per_pod)
                    })
                    .sum()
            };
            sum(placed, None) >= sum(floor, None)
                && (0..problem.resources).all(|r| sum(placed, Some(r)) >= sum(floor, Some(r)))
        })
}

/// One way to run the greedy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Plain, with this class order.
    Order(ClassOrder),
    /// Following the LP stage's quotas first (largest first).
    LpGuided,
}

impl Strategy {
    /// Its name in `summary.strategy`.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Order(ClassOrder::LargestFirst) => "greedy-largest-first",
            Strategy::Order(ClassOrder::SmallestFirst) => "greedy-smallest-first",
            Strategy::Order(ClassOrder::Given) => "greedy-queue",
            Strategy::LpGuided => "lp-guided",
        }
    }
}

/// The strategies [`solve_best`] tries, in order: largest first (packs best when everything
/// fits, and favours the pods worth most under [`Objective::Resources`]), the queue order
/// (kube-scheduler's PrioritySort order, the floor), smallest first (the most pods when a tier
/// does not fit) and LP-guided. Later ones run only when the first leaves pods over.
pub const STRATEGIES: [Strategy; 4] = [
    Strategy::Order(ClassOrder::LargestFirst),
    Strategy::Order(ClassOrder::Given),
    Strategy::Order(ClassOrder::SmallestFirst),
    Strategy::LpGuided,
];

/// The best assignment of [`STRATEGIES`] (with relocation), and its strategy: the first one
/// when it places every pod, else by [`Objective::Resources`] those that [`covers`] the queue
/// order's first, then the greatest [`rank`], ties to the earlier strategy. A failed or empty
/// LP skips the LP-guided strategy.
pub fn solve_best(problem: &Problem) -> Result<(Assignment, Strategy), crate::SolverError> {
    let mut best: Option<((bool, Rank), Assignment, Strategy)> = None;
    let mut floor: Option<Vec<u32>> = None;
    for strategy in STRATEGIES {
        let assignment = match strategy {
            Strategy::Order(order) => {
                let options = GreedyOptions {
                    class_order: order,
                    relocate: true,
                    even_spread: true,
                    substitute: true,
                    trade_again: true,
                };
                solve_greedy(problem, &options, None)?
            }
            Strategy::LpGuided => match lp_guide(problem, &LpOptions::default()) {
                Ok(Some(guide)) => {
                    let guided = Problem { guide: Some(guide), ..problem.clone() };
                    solve_greedy(&guided, &GreedyOptions::default(), None)?
                }
                _ => continue,
            },
        };
        let done = assignment.unplaced.iter().all(|&u| u == 0);
        let counts = placed(problem, &assignment);
        if strategy == Strategy::Order(ClassOrder::Given)
            && problem.objective == Objective::Resources
        {
            if let Some(b) = best.as_mut() {
                b.0.0 = covers(problem, &placed(problem, &b.1), &counts);
            }
            floor = Some(counts.clone());
        }
        let admissible = floor.as_ref().is_none_or(|f| covers(problem, &counts, f));
        let key = (admissible, rank(problem, &assignment));
        if best.as_ref().is_none_or(|b| key > b.0) {
            best = Some((key, assignment, strategy));
        }
        if done {
            break;
        }
    }
    match best {
        Some((_, assignment, strategy)) => Ok((assignment, strategy)),
        // Unreachable: the first strategy is a plain order, which always gives an answer.
        None => Ok((solve_greedy(problem, &GreedyOptions::default(), None)?, STRATEGIES[0])),
    }
}

#[cfg(test)]
mod tests;
