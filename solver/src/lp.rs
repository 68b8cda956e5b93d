//! The LP stage: how many pods of each class should go to each group of alike nodes, from a
//! linear relaxation of the whole tier; and an exact MIP for small problems (quality tests and
//! a yardstick).
//!
//! Input: a [`Problem`] (the greedy's). Output: a [`Guide`] — nodes grouped by their
//! feasibility for every class to place (node pools: the same labels and taints give the same
//! column) and the order of magnitude of their free room, and per class × group a quota of pods — that
//! [`solve_greedy`](crate::solve_greedy) follows before its usual pass ([`Problem::guide`]).
//!
//! The relaxation, over variables `x[c,g] ≥ 0` (pods of class `c` on group `g`):
//!
//! - per class: `Σ_g x[c,g] ≤ count[c]`;
//! - per group and resource the class requests: `Σ_c req[c,r] · x[c,g] ≤ Σ_{n∈g} free[n,r]`
//!   (aggregate room: the relaxation forgets that pods cannot straddle nodes, which the
//!   greedy's placement and leftover pass repair);
//! - per cell: `x[c,g] ≤ Σ_{n∈g} fit(c,n)`, where `fit(c,n)` is how many pods of the class fit
//!   node `n` alone (free capacity and per-node limit): this keeps the fragmentation of each
//!   node's free room in the relaxation.
//!
//! Objectives, one LP each: priority tiers from the highest, each maximizing its own placed
//! value ([`crate::objective`]: pods weighted by their dominant share of the cluster, or pods)
//! with the tiers above held at their optimum (minus a rounding tolerance); then the total
//! score (each group's mean static score per class) with every tier held. Quotas are the
//! rounded-down values. Conflicts ([`Problem::conflicts`]) are not in the relaxation; the greedy
//! enforces them exactly while following the quotas. `DoNotSchedule` spread rules are: groups
//! never straddle a domain of a spread rule's topology, and each domain's final count is held
//! within `maxSkew` of the least eligible one (domain quotas; [`rules`]). The exact MIP takes
//! every hard inter-pod rule ([`rules::mip`]).
//!
//! The default LP backend is microlp's simplex (pure Rust); with the `highs` feature, HiGHS.
//! A simplex gives a vertex, whose values are mostly whole (an interior point method gives the
//! centre of the optimal face, where rounding down loses most of the pods). [`solve_exact`] uses microlp's branch and bound on per-node integer variables and is
//! meant for problems of a few nodes and classes.

use std::collections::BTreeMap;
use std::time::Duration;

use good_lp::{
    Expression, ProblemVariables, ResolutionError, Solution, SolverModel, Variable, WithTimeLimit,
    constraint, variable,
};

use crate::greedy::{Problem, SolverError};

mod rules;

/// Relative slack when a tier is held at its optimum in the next LPs.
const HOLD_TOLERANCE: f64 = 1e-6;

/// Added before rounding a value down: covers the interior point method's distance from the
/// bounds (a quota one too high is harmless: the greedy checks capacity exactly).
const ROUNDING_SLACK: f64 = 1e-3;

/// Nodes in groups, and per class × group how many pods the LP puts there.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Guide {
    /// Number of groups.
    pub groups: usize,
    /// The group of every node.
    pub group_of_node: Vec<usize>,
    /// Pods of each class to place on each group first, `classes × groups`.
    pub quota: Vec<u32>,
}

/// Limits of the LP stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LpOptions {
    /// Do not build an LP with more variables than this (the guide is then `None`).
    pub max_variables: usize,
}

impl Default for LpOptions {
    fn default() -> Self {
        LpOptions { max_variables: 200_000 }
    }
}

/// How an LP could not be solved (the caller then goes on without a guide).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LpError {
    /// The input was invalid.
    #[error(transparent)]
    Problem(#[from] SolverError),
    /// The LP backend failed (numerical trouble, or it found the relaxation infeasible, which
    /// cannot happen for a valid problem: all zeros is feasible).
    #[error("the LP backend failed: {0}")]
    Backend(String),
}

impl From<ResolutionError> for LpError {
    fn from(e: ResolutionError) -> Self {
        LpError::Backend(e.to_string())
    }
}

/// Groups nodes by their feasibility for the classes that have pods to place, their domains
/// in the topologies of spread rules ([`rules::NodeNeeds::group_key`]) and the binary order of magnitude of their free capacity per resource (`⌊log2(free + 1)⌋`: an empty
/// large node, an empty small one and a nearly full one land in different groups, nodes of one
/// pool with similar room in one). Groups are numbered in the order of their first node.
fn group_nodes(problem: &Problem, needs: &rules::NodeNeeds) -> (usize, Vec<usize>) {
    let active: Vec<usize> =
        (0..problem.classes.len()).filter(|&c| problem.classes[c].count > 0).collect();
    // (feasibility column, free room magnitudes, spread domains) → group.
    type Key = (Vec<bool>, Vec<u32>, Vec<u32>);
    let mut ids: BTreeMap<Key, usize> = BTreeMap::new();
    let mut group_of_node = Vec::with_capacity(problem.nodes);
    for node in 0..problem.nodes {
        let column: Vec<bool> =
            active.iter().map(|&c| problem.feasible[c * problem.nodes + node]).collect();
        let free = &problem.free[node * problem.resources..(node + 1) * problem.resources];
        let magnitude: Vec<u32> =
            free.iter().map(|&f| 64 - (f.max(0) as u64).leading_zeros()).collect();
        let domains = needs.group_key(problem, node);
        let next = ids.len();
        group_of_node.push(*ids.entry((column, magnitude, domains)).or_insert(next));
    }
    (ids.len(), group_of_node)
}

/// How many pods of class `c` fit on `node` alone (by free capacity and the per-node limit).
fn fit_count(problem: &Problem, c: usize, node: usize) -> u64 {
    let class = &problem.classes[c];
    let free = &problem.free[node * problem.resources..(node + 1) * problem.resources];
    let mut n = u64::from(class.max_per_node.unwrap_or(class.count).min(class.count));
    for (&req, &f) in class.requests.iter().zip(free) {
        if req > 0 {
            n = n.min(u64::try_from(f.max(0) / req).unwrap_or(0));
        }
    }
    n
}

/// Solves one LP with the default backend: microlp's simplex (pure Rust), or HiGHS with the
/// `highs` feature. A simplex answer is a vertex of the polytope, so few values are fractional
/// and rounding down loses little (an interior point answer sits in the middle of the optimal
/// face, with every value fractional).
fn solve_lp(
    vars: ProblemVariables,
    objective: Expression,
    constraints: Vec<good_lp::Constraint>,
) -> Result<impl Solution, LpError> {
    #[cfg(feature = "highs")]
    let model = vars.maximise(objective).using(good_lp::solvers::highs::highs);
    #[cfg(not(feature = "highs"))]
    let model = vars.maximise(objective).using(good_lp::solvers::microlp::microlp);
    Ok(model.with_all(constraints).solve()?)
}

/// The LP guide for `problem` (see the module documentation), or `None` when there is nothing
/// to place or the LP would exceed `options.max_variables`.
pub fn lp_guide(problem: &Problem, options: &LpOptions) -> Result<Option<Guide>, LpError> {
    problem.validate()?;
    let n_classes = problem.classes.len();
    let needs = rules::NodeNeeds::new(problem);
    let (groups, group_of_node) = group_nodes(problem, &needs);
    let mut size = vec![0usize; groups];
    // Aggregate free capacity per group and resource (negative amounts count as none).
    let mut room = vec![0i64; groups * problem.resources];
    for (node, &g) in group_of_node.iter().enumerate() {
        size[g] += 1;
        for r in 0..problem.resources {
            let f = problem.free[node * problem.resources + r].max(0);
            room[g * problem.resources + r] = room[g * problem.resources + r].saturating_add(f);
        }
    }
    // Variables where the class has pods and at least one pod fits a node of the group; each
    // bounded by how many fit on the group's nodes one class at a time.
    let mut cells: Vec<(usize, usize)> = Vec::new();
    let mut cap = vec![0u64; n_classes * groups];
    for (c, class) in problem.classes.iter().enumerate() {
        if class.count == 0 {
            continue;
        }
        for (node, &g) in group_of_node.iter().enumerate() {
            if problem.feasible[c * problem.nodes + node] && needs.has_keys(problem, c, node) {
                cap[c * groups + g] += fit_count(problem, c, node);
            }
        }
        for g in 0..groups {
            if cap[c * groups + g] > 0 {
                cells.push((c, g));
            }
        }
    }
    if cells.is_empty() || cells.len() > options.max_variables {
        return Ok(None);
    }
    // Mean static score per cell.
    let mut score_sum = vec![0i64; n_classes * groups];
    for (node, &g) in group_of_node.iter().enumerate() {
        for (c, class) in problem.classes.iter().enumerate() {
            if class.count > 0 {
                score_sum[c * groups + g] += i64::from(problem.score[c * problem.nodes + node]);
            }
        }
    }
    let mean_score = |c: usize, g: usize| score_sum[c * groups + g] as f64 / size[g] as f64;

    // The constraints every LP shares.
    let build = |vars: &mut ProblemVariables| -> (Vec<Variable>, Vec<good_lp::Constraint>) {
        let x: Vec<Variable> = cells
            .iter()
            .map(|&(c, g)| {
                let upper = cap[c * groups + g].min(u64::from(problem.classes[c].count));
                vars.add(variable().min(0.0).max(upper as f64))
            })
            .collect();
        let mut constraints = Vec::new();
        let mut per_class: Vec<Expression> = vec![Expression::from(0.0); n_classes];
        let mut per_group: Vec<Vec<Expression>> =
            vec![vec![Expression::from(0.0); problem.resources]; groups];
        let mut used = vec![vec![false; problem.resources]; groups];
        for (k, &(c, g)) in cells.iter().enumerate() {
            per_class[c] += x[k];
            for (r, &req) in problem.classes[c].requests.iter().enumerate() {
                if req > 0 {
                    per_group[g][r] += (req as f64) * x[k];
                    used[g][r] = true;
                }
            }
        }
        for (c, expr) in per_class.into_iter().enumerate() {
            if problem.classes[c].count > 0 {
                constraints.push(constraint!(expr <= f64::from(problem.classes[c].count)));
            }
        }
        for (g, exprs) in per_group.into_iter().enumerate() {
            for (r, expr) in exprs.into_iter().enumerate() {
                if used[g][r] {
                    let total = room[g * problem.resources + r];
                    constraints.push(constraint!(expr <= total as f64));
                }
            }
        }
        constraints.extend(rules::spread_lp(problem, &group_of_node, &cells, &x, vars));
        (x, constraints)
    };

    // Tiers, highest priority first.
    let mut tiers: Vec<i32> = cells.iter().map(|&(c, _)| problem.classes[c].priority).collect();
    tiers.sort_unstable_by(|a, b| b.cmp(a));
    tiers.dedup();
    // Pod values relative to the largest (coefficients in (0, 1] keep the simplex well scaled).
    let weights = relative_values(problem);
    let tier_sum = |x: &[Variable], tier: i32| -> Expression {
        let mut e = Expression::from(0.0);
        for (k, &(c, _)) in cells.iter().enumerate() {
            if problem.classes[c].priority == tier {
                e += weights[c] * x[k];
            }
        }
        e
    };
    let mut held: Vec<(i32, f64)> = Vec::new();
    for &tier in &tiers {
        let mut vars = ProblemVariables::new();
        let (x, mut constraints) = build(&mut vars);
        for &(t, best) in &held {
            constraints.push(constraint!(tier_sum(&x, t) >= best));
        }
        let objective = tier_sum(&x, tier);
        let solution = solve_lp(vars, objective.clone(), constraints)?;
        let value = solution.eval(&objective);
        // Hold the tier at its optimum, less a tolerance so that the interior point method's
        // noise cannot make the next LP infeasible.
        held.push((tier, (value - HOLD_TOLERANCE * value.max(1.0)).max(0.0)));
    }
    let mut vars = ProblemVariables::new();
    let (x, mut constraints) = build(&mut vars);
    for &(t, best) in &held {
        constraints.push(constraint!(tier_sum(&x, t) >= best));
    }
    let mut objective = Expression::from(0.0);
    for (k, &(c, g)) in cells.iter().enumerate() {
        // A small bonus per pod keeps placed pods preferred where scores are all zero.
        objective += (mean_score(c, g) + 1.0) * x[k];
    }
    let solution = solve_lp(vars, objective, constraints)?;
    let mut quota = vec![0u32; n_classes * groups];
    for (k, &(c, g)) in cells.iter().enumerate() {
        let v = solution.value(x[k]);
        // Interior point values sit a hair inside the bounds: 2.9999 means 3.
        let rounded = (v + ROUNDING_SLACK).floor().max(0.0);
        quota[c * groups + g] =
            if rounded >= f64::from(u32::MAX) { u32::MAX } else { rounded as u32 };
    }
    Ok(Some(Guide { groups, group_of_node, quota }))
}

/// Each class's pod value ([`crate::objective::pod_values`]) over the largest one.
fn relative_values(problem: &Problem) -> Vec<f64> {
    let values = crate::objective::pod_values(problem);
    let top = values.iter().copied().max().unwrap_or(1).max(1) as f64;
    values.iter().map(|&v| v as f64 / top).collect()
}

/// The exact optimum of `problem` by branch and bound over per-node integer variables: the
/// value placed per priority tier under the problem's objective (highest priority first, each
/// maximized with the tiers above held at their optimum; [`crate::objective::tier_values`]'s
/// units: pods, or the sum of dominant shares), honouring capacity, feasibility, per-node limits,
/// conflicts (for each conflict, domain and class pair, at most one of the two classes in the
/// domain, or at most one pod when the class conflicts with itself) and the hard inter-pod
/// rules on the final counts ([`rules`]: a relaxation of their pod-by-pod form). Initial pods
/// stay where they are. `None` when the time limit ran out before an optimum was proven.
///
/// Meant for problems of a few nodes and classes (quality tests): the MIP has
/// `classes × nodes` integer variables plus one indicator per class and conflicting domain.
pub fn solve_exact(
    problem: &Problem,
    time_limit: Duration,
) -> Result<Option<Vec<(i32, u128)>>, LpError> {
    problem.validate()?;
    let n = problem.nodes;
    let values = crate::objective::pod_values(problem);
    let weights = relative_values(problem);
    // Holding a tier at its optimum less half the smallest pod weight keeps it exact.
    let slack = weights.iter().copied().fold(1.0f64, f64::min) / 2.0;
    let mut tiers: Vec<i32> = problem.classes.iter().map(|c| c.priority).collect();
    tiers.sort_unstable_by(|a, b| b.cmp(a));
    tiers.dedup();
    let needs = rules::NodeNeeds::new(problem);
    let mut held: Vec<(i32, f64)> = Vec::new();
    let mut out = Vec::new();
    for &tier in &tiers {
        let mut vars = ProblemVariables::new();
        let mut x: Vec<Option<Variable>> = Vec::with_capacity(problem.classes.len() * n);
        for (c, class) in problem.classes.iter().enumerate() {
            for node in 0..n {
                if class.count > 0
                    && problem.feasible[c * n + node]
                    && needs.has_keys(problem, c, node)
                {
                    let upper = class.max_per_node.unwrap_or(class.count).min(class.count);
                    x.push(Some(vars.add(variable().integer().min(0).max(upper))));
                } else {
                    x.push(None);
                }
            }
        }
        let mut constraints = Vec::new();
        let sum_of = |pred: &dyn Fn(usize, usize) -> bool| -> Expression {
            let mut e = Expression::from(0.0);
            for (i, v) in x.iter().enumerate() {
                if let Some(v) = v
                    && pred(i / n, i % n)
                {
                    e += *v;
                }
            }
            e
        };
        for (c, class) in problem.classes.iter().enumerate() {
            constraints.push(constraint!(sum_of(&|cc, _| cc == c) <= f64::from(class.count)));
        }
        for node in 0..n {
            for r in 0..problem.resources {
                let mut e = Expression::from(0.0);
                let mut any = false;
                for (c, class) in problem.classes.iter().enumerate() {
                    if let Some(v) = x[c * n + node]
                        && class.requests[r] > 0
                    {
                        e += (class.requests[r] as f64) * v;
                        any = true;
                    }
                }
                if any {
                    let free = problem.free[node * problem.resources + r].max(0);
                    constraints.push(constraint!(e <= free as f64));
                }
            }
        }
        // Conflicts: per (conflict, domain), binary y_a, y_b with x ≤ count·y, y_a + y_b ≤ 1;
        // a class with itself: at most one pod in the domain.
        for conflict in &problem.conflicts {
            let mut domains: Vec<u32> = (0..n)
                .map(|node| problem.domains[conflict.topology * n + node])
                .filter(|&d| d != crate::greedy::NO_DOMAIN)
                .collect();
            domains.sort_unstable();
            domains.dedup();
            for d in domains {
                let in_domain = |node: usize| problem.domains[conflict.topology * n + node] == d;
                if conflict.a == conflict.b {
                    let a = conflict.a;
                    constraints
                        .push(constraint!(sum_of(&|cc, node| cc == a && in_domain(node)) <= 1.0));
                } else {
                    let ya = vars.add(variable().binary());
                    let yb = vars.add(variable().binary());
                    for (class, y) in [(conflict.a, ya), (conflict.b, yb)] {
                        let big = f64::from(problem.classes[class].count);
                        constraints.push(constraint!(
                            sum_of(&|cc, node| cc == class && in_domain(node)) <= big * y
                        ));
                    }
                    constraints.push(constraint!(ya + yb <= 1.0));
                }
            }
        }
        constraints.extend(rules::mip(problem, &x, &mut vars));
        let weighted = |pred: &dyn Fn(usize) -> bool| -> Expression {
            let mut e = Expression::from(0.0);
            for (i, v) in x.iter().enumerate() {
                if let Some(v) = v
                    && pred(i / n)
                {
                    e += weights[i / n] * *v;
                }
            }
            e
        };
        for &(t, best) in &held {
            let prio = |cc: usize| problem.classes[cc].priority == t;
            constraints.push(constraint!(weighted(&prio) >= best));
        }
        let objective = weighted(&|cc| problem.classes[cc].priority == tier);
        let model = vars
            .maximise(objective.clone())
            .using(good_lp::solvers::microlp::microlp)
            .with_time_limit(time_limit.as_secs_f64());
        let solution = match model.with_all(constraints).solve() {
            Ok(s) => s,
            Err(ResolutionError::Other(_)) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        if !matches!(solution.status(), good_lp::SolutionStatus::Optimal) {
            return Ok(None);
        }
        let mut value = 0u128;
        let mut relative = 0.0f64;
        for (i, v) in x.iter().enumerate() {
            if let Some(v) = v
                && problem.classes[i / n].priority == tier
            {
                let pods = solution.value(*v).round().max(0.0);
                value += pods as u128 * u128::from(values[i / n]);
                relative += pods * weights[i / n];
            }
        }
        held.push((tier, relative - slack));
        out.push((tier, value));
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests;
