//! The hard inter-pod rules ([`crate::topology::Rule`]) in the LP stage and in the exact MIP,
//! as constraints on the final counts per domain.
//!
//! Input: a [`Problem`] and the LP's or MIP's variables. Output: linear constraints (and the
//! binary indicators they need). Upstream's rules are checked pod by pod as pods land
//! ([`crate::topology::TopologyState::allows`]); here they are stated on the counts once every
//! pod has landed, in the form any order of placement satisfies — a relaxation: every
//! sequential outcome meets them, and an assignment that meets them may need an order the
//! greedy does not take (the exact MIP is then an upper bound of what a sequential placement
//! can reach):
//!
//! - `DoNotSchedule` spread of class `c` over counter `K` (`maxSkew` `s`): `c` never goes where
//!   the topology's key is missing; with `n_d` the final count of `K` in domain `d` and `μ` at
//!   most every eligible domain's count (0 with fewer eligible domains than `minDomains`), every
//!   domain that receives a pod of `c` ends with `n_d ≤ μ + s` (the last pod of `c` placed
//!   there saw at most that count, with its own pod when `c` is counted, and a minimum no
//!   larger than the final one).
//! - Required affinity of `c` (one counter per term): `c` never goes where a term's key is
//!   missing; in each term's topology a domain receives pods of `c` only if it ends with a
//!   matching pod other than `c`'s (bound before, or of another class) or is the one domain
//!   of upstream's first-pod rule (`c` matches its own terms and nothing matched anywhere).
//! - Required anti-affinity of `c` over counter `K`: no pod of `c` in a domain where `K`
//!   counted a pod before the solve; when `c`'s own pods count in `K`, at most one of them on
//!   counted nodes per domain (other classes' pods may land after `c`'s).
//!
//! The LP ([`spread_lp`]) takes the spread rules only (the domain quotas that guide the greedy);
//! the MIP ([`mip`]) takes all three.

use std::collections::BTreeMap;

use good_lp::{Expression, ProblemVariables, Variable, constraint, variable};

use crate::greedy::{NO_DOMAIN, Problem};
use crate::topology::Rule;

/// The domain of `node` in topology `t`.
fn domain(problem: &Problem, t: usize, node: usize) -> u32 {
    problem.domains[t * problem.nodes + node]
}

/// Whether pods on `node` count in counter `k` (eligible and with the key), as the greedy's
/// [`crate::topology::TopologyState`] counts them.
fn counts_on(problem: &Problem, k: usize, node: usize) -> bool {
    let c = &problem.inter_pod.counters[k];
    c.eligible.get(node).copied().unwrap_or(c.eligible.is_empty())
        && domain(problem, c.topology, node) != NO_DOMAIN
}

/// Counter `k`'s count in domain `d` before the solve.
fn initial(problem: &Problem, k: usize, d: u32) -> f64 {
    f64::from(problem.inter_pod.counters[k].initial.get(d as usize).copied().unwrap_or(0))
}

/// The hard spread rules of classes with pods to place: `(class, counter, maxSkew, minDomains)`.
fn spread_rules(problem: &Problem) -> Vec<(usize, usize, u32, u32)> {
    problem
        .inter_pod
        .rules
        .iter()
        .filter_map(|r| match *r {
            Rule::Spread { class, counter, max_skew, min_domains }
                if problem.classes[class].count > 0 =>
            {
                Some((class, counter, max_skew, min_domains))
            }
            _ => None,
        })
        .collect()
}

/// What the rules ask of a node, worked out once per problem: per class, the topologies whose
/// key its spread and affinity rules need; the counters of the spread rules of classes with
/// pods, whose domains and eligibility the LP's node groups must not mix (see [`spread_lp`]).
pub(super) struct NodeNeeds {
    keys: Vec<Vec<usize>>,
    spread_counters: Vec<usize>,
}

impl NodeNeeds {
    pub(super) fn new(problem: &Problem) -> NodeNeeds {
        let counters = &problem.inter_pod.counters;
        let mut keys = vec![Vec::new(); problem.classes.len()];
        for rule in &problem.inter_pod.rules {
            match rule {
                Rule::Spread { class, counter, .. } => {
                    keys[*class].push(counters[*counter].topology)
                }
                Rule::Affinity { class, counters: ks, .. } => {
                    keys[*class].extend(ks.iter().map(|&k| counters[k].topology));
                }
                _ => {}
            }
        }
        for k in &mut keys {
            k.sort_unstable();
            k.dedup();
        }
        let spread_counters = spread_rules(problem).into_iter().map(|(_, k, _, _)| k).collect();
        NodeNeeds { keys, spread_counters }
    }

    /// The part of `node`'s LP group key the spread rules make: per spread rule, the node's
    /// domain in its topology and whether its pods count.
    pub(super) fn group_key(&self, problem: &Problem, node: usize) -> Vec<u32> {
        let mut key = Vec::with_capacity(2 * self.spread_counters.len());
        for &k in &self.spread_counters {
            key.push(domain(problem, problem.inter_pod.counters[k].topology, node));
            key.push(u32::from(counts_on(problem, k, node)));
        }
        key
    }

    /// Whether the hard rules of class `c` let it on `node` at all: a spread or affinity rule
    /// needs the node to have its topology's key.
    pub(super) fn has_keys(&self, problem: &Problem, c: usize, node: usize) -> bool {
        self.keys[c].iter().all(|&t| domain(problem, t, node) != NO_DOMAIN)
    }
}

/// The spread rules as constraints of the LP over node groups (`group_of_node`, which
/// [`NodeNeeds::group_key`] keeps within one domain and one side of every counter's eligibility) and its
/// variables `x` of `cells` (class, group).
pub(super) fn spread_lp(
    problem: &Problem,
    group_of_node: &[usize],
    cells: &[(usize, usize)],
    x: &[Variable],
    vars: &mut ProblemVariables,
) -> Vec<good_lp::Constraint> {
    let mut out = Vec::new();
    let groups = group_of_node.iter().copied().max().map_or(0, |g| g + 1);
    // A node of every group: its domains and eligibility are the group's.
    let mut first = vec![usize::MAX; groups];
    for (node, &g) in group_of_node.iter().enumerate().rev() {
        first[g] = node;
    }
    for (c, k, max_skew, min_domains) in spread_rules(problem) {
        let counter = &problem.inter_pod.counters[k];
        let t = counter.topology;
        let members: Vec<bool> =
            (0..problem.classes.len()).map(|m| counter.members.contains(&m)).collect();
        // Final count per domain: before the solve, plus the members' pods on counted groups.
        let mut count: BTreeMap<u32, Expression> = BTreeMap::new();
        let mut eligible: BTreeMap<u32, bool> = BTreeMap::new();
        let mut receives: BTreeMap<u32, bool> = BTreeMap::new();
        for node in 0..problem.nodes {
            let d = domain(problem, t, node);
            if d != NO_DOMAIN && counts_on(problem, k, node) {
                eligible.insert(d, true);
            }
        }
        for (i, &(m, g)) in cells.iter().enumerate() {
            let d = domain(problem, t, first[g]);
            if d == NO_DOMAIN {
                continue;
            }
            if m == c {
                receives.insert(d, true);
            }
            if members[m] && counts_on(problem, k, first[g]) {
                *count.entry(d).or_insert_with(|| Expression::from(0.0)) += x[i];
            }
        }
        let total = |d: u32, count: &BTreeMap<u32, Expression>| -> Expression {
            count.get(&d).cloned().unwrap_or_else(|| Expression::from(0.0)) + initial(problem, k, d)
        };
        let min = vars.add(variable().min(0.0));
        if (eligible.len() as u64) < u64::from(min_domains) {
            out.push(constraint!(min <= 0.0));
        } else {
            for &d in eligible.keys() {
                out.push(constraint!(min <= total(d, &count)));
            }
        }
        for &d in receives.keys() {
            out.push(constraint!(total(d, &count) <= min + f64::from(max_skew)));
        }
    }
    out
}

/// Every hard inter-pod rule as constraints of the exact MIP over per-node variables `x`
/// (`classes × nodes`, `None` where the class may not go: the caller leaves out the nodes
/// [`NodeNeeds::has_keys`] refuses).
pub(super) fn mip(
    problem: &Problem,
    x: &[Option<Variable>],
    vars: &mut ProblemVariables,
) -> Vec<good_lp::Constraint> {
    let n = problem.nodes;
    let mut out = Vec::new();
    let var = |c: usize, node: usize| x[c * n + node];
    // Σ of class `m`'s pods over the nodes `which` picks.
    let sum = |m: usize, which: &dyn Fn(usize) -> bool| -> Expression {
        let mut e = Expression::from(0.0);
        for node in (0..n).filter(|&node| which(node)) {
            if let Some(v) = var(m, node) {
                e += v;
            }
        }
        e
    };
    // The domains of topology `t` that some node has.
    let domains_of = |t: usize| -> Vec<u32> {
        let mut ds: Vec<u32> =
            (0..n).map(|node| domain(problem, t, node)).filter(|&d| d != NO_DOMAIN).collect();
        ds.sort_unstable();
        ds.dedup();
        ds
    };
    for rule in &problem.inter_pod.rules {
        match rule {
            Rule::Spread { class, counter, max_skew, min_domains } => {
                let (c, k) = (*class, *counter);
                let counted = &problem.inter_pod.counters[k];
                let t = counted.topology;
                let count = |d: u32| -> Expression {
                    let mut e = Expression::from(initial(problem, k, d));
                    for &m in &counted.members {
                        e += sum(m, &|node| {
                            domain(problem, t, node) == d && counts_on(problem, k, node)
                        });
                    }
                    e
                };
                let eligible: Vec<u32> = domains_of(t)
                    .into_iter()
                    .filter(|&d| {
                        (0..n).any(|node| {
                            domain(problem, t, node) == d && counts_on(problem, k, node)
                        })
                    })
                    .collect();
                let min = vars.add(variable().min(0.0));
                if (eligible.len() as u64) < u64::from(*min_domains) {
                    out.push(constraint!(min <= 0.0));
                } else {
                    for &d in &eligible {
                        out.push(constraint!(min <= count(d)));
                    }
                }
                // A domain that receives a pod of `c` (indicator `y`) ends within the skew; the
                // big constant covers every count a domain can reach.
                let big = f64::from(problem.classes.iter().map(|c| c.count).sum::<u32>())
                    + counted.initial.iter().map(|&v| f64::from(v)).sum::<f64>()
                    + 1.0;
                let own = f64::from(problem.classes[c].count);
                for d in domains_of(t) {
                    let y = vars.add(variable().binary());
                    out.push(constraint!(sum(c, &|node| domain(problem, t, node) == d) <= own * y));
                    out.push(constraint!(count(d) <= min + f64::from(*max_skew) + big * (1 - y)));
                }
            }
            Rule::Affinity { class, counters, self_match } => {
                let c = *class;
                let own = f64::from(problem.classes[c].count);
                for &k in counters {
                    let counted = &problem.inter_pod.counters[k];
                    let t = counted.topology;
                    let first_pod = *self_match && counted.initial.iter().all(|&v| v == 0);
                    let mut firsts = Expression::from(0.0);
                    for d in domains_of(t) {
                        let mut support = Expression::from(initial(problem, k, d));
                        for &m in counted.members.iter().filter(|&&m| m != c) {
                            support += sum(m, &|node| {
                                domain(problem, t, node) == d && counts_on(problem, k, node)
                            });
                        }
                        if first_pod {
                            let w = vars.add(variable().binary());
                            support += w;
                            firsts += w;
                        }
                        let placed = sum(c, &|node| domain(problem, t, node) == d);
                        out.push(constraint!(placed <= own * support));
                    }
                    if first_pod {
                        out.push(constraint!(firsts <= 1.0));
                    }
                }
            }
            Rule::AntiAffinity { class, counter } => {
                let (c, k) = (*class, *counter);
                let counted = &problem.inter_pod.counters[k];
                let t = counted.topology;
                for d in domains_of(t) {
                    if initial(problem, k, d) > 0.0 {
                        let placed = sum(c, &|node| domain(problem, t, node) == d);
                        out.push(constraint!(placed <= 0.0));
                    } else if counted.members.contains(&c) {
                        let placed = sum(c, &|node| {
                            domain(problem, t, node) == d && counts_on(problem, k, node)
                        });
                        out.push(constraint!(placed <= 1.0));
                    }
                }
            }
            Rule::Soft { .. } => {}
        }
    }
    out
}
