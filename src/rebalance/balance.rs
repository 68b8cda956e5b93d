//! `balance`: even out utilization across nodes and zones by local search.
//!
//! The objective is the variance of per-node utilization plus the variance of per-zone
//! utilization (zone = `topology.kubernetes.io/zone`; a zone's utilization is its nodes' summed
//! requests over their summed allocatable), summed over cpu and memory. Utilizations are integer
//! parts per million, and the variances are compared as exact integers scaled by the squared
//! node and zone counts (`N·Σu² − (Σu)²`), so "improves" never depends on rounding.
//!
//! Each step ranks nodes by `u_cpu + u_memory`, takes the [`WINDOW`] most utilized, and scores
//! every move of a movable pod from one of them to any other node by the exact change of the
//! objective (O(1) per move: the sums of utilizations and of their squares are kept). Pods are
//! tried by their best improving move (ties by pod), at most [`TRIES`] per step; for each, its
//! replacement goes through the framework's PreFilter and Filter on every node, and its
//! improving moves are tried best first: the first to a feasible node that breaks no constraint
//! that held is made. The search stops when a step finds no such move (every move tried would
//! not strictly lower the objective, or is infeasible) or after `--max-moves` moves. The objective strictly decreases
//! at every move and each pod moves at most once, so the search ends.

use std::sync::Arc;

use super::evictor::is_node_daemon;
use super::pack::ppm;
use super::sim::Sim;
use crate::model::{ClusterState, Pod};
use crate::resources::{CPU, MEMORY};

/// How many of the most utilized nodes a step takes pods from.
pub const WINDOW: usize = 10;
/// How many pods (those with the best improving moves first) a step tries before giving up.
pub const TRIES: usize = 32;
/// The node label zones are read from.
pub const ZONE_LABEL: &str = "topology.kubernetes.io/zone";
const RESOURCES: [&str; 2] = [CPU, MEMORY];

/// Sums of utilizations (ppm) and of their squares over a set of values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Sums {
    count: i128,
    s1: i128,
    s2: i128,
}

impl Sums {
    fn add(&mut self, u: Option<i64>, sign: i128) {
        if let Some(u) = u {
            let u = i128::from(u);
            self.count += sign;
            self.s1 += sign * u;
            self.s2 += sign * u * u;
        }
    }

    /// `count·Σu² − (Σu)²`: the population variance times `count²`.
    fn scaled_variance(&self) -> i128 {
        self.count * self.s2 - self.s1 * self.s1
    }
}

/// The integer objective and what it is made of, kept up to date in O(1) per move.
#[derive(Debug, Clone)]
pub struct Objective {
    /// Per node: requested cpu and memory.
    requested: Vec<[i64; 2]>,
    /// Per node: allocatable cpu and memory.
    allocatable: Vec<[i64; 2]>,
    /// Per node: zone index.
    zone: Vec<Option<usize>>,
    /// Per zone: summed requested and allocatable.
    zone_requested: Vec<[i64; 2]>,
    zone_allocatable: Vec<[i64; 2]>,
    /// Per resource: sums over nodes and over zones.
    nodes: [Sums; 2],
    zones: [Sums; 2],
}

fn util(requested: i64, allocatable: i64) -> Option<i64> {
    (allocatable > 0).then(|| ppm(requested, allocatable))
}

impl Objective {
    /// The objective of `state`.
    pub fn new(state: &ClusterState) -> Self {
        let mut zones: Vec<String> = Vec::new();
        let mut zone = Vec::with_capacity(state.nodes.len());
        for n in &state.nodes {
            zone.push(n.labels.get(ZONE_LABEL).map(|z| match zones.iter().position(|x| x == z) {
                Some(i) => i,
                None => {
                    zones.push(z.clone());
                    zones.len() - 1
                }
            }));
        }
        let requested: Vec<[i64; 2]> =
            state.nodes.iter().map(|n| RESOURCES.map(|r| n.requested.get(r))).collect();
        let allocatable: Vec<[i64; 2]> =
            state.nodes.iter().map(|n| RESOURCES.map(|r| n.allocatable.get(r))).collect();
        let mut zone_requested = vec![[0i64; 2]; zones.len()];
        let mut zone_allocatable = vec![[0i64; 2]; zones.len()];
        for (i, z) in zone.iter().enumerate() {
            if let (Some(z), Some(req), Some(alloc)) = (z, requested.get(i), allocatable.get(i))
                && let (Some(zr), Some(za)) =
                    (zone_requested.get_mut(*z), zone_allocatable.get_mut(*z))
            {
                for r in 0..2 {
                    zr[r] += req[r];
                    za[r] += alloc[r];
                }
            }
        }
        let mut o = Objective {
            requested,
            allocatable,
            zone,
            zone_requested,
            zone_allocatable,
            nodes: [Sums::default(); 2],
            zones: [Sums::default(); 2],
        };
        for r in 0..2 {
            for n in 0..o.requested.len() {
                let u = o.node_util(n, r);
                o.nodes[r].add(u, 1);
            }
            for z in 0..o.zone_requested.len() {
                let u = o.zone_util(z, r);
                o.zones[r].add(u, 1);
            }
        }
        o
    }

    /// Utilization (ppm) of node `n` for resource `r`, `None` without allocatable.
    fn node_util(&self, n: usize, r: usize) -> Option<i64> {
        util(self.requested.get(n)?[r], self.allocatable.get(n)?[r])
    }

    /// Utilization (ppm) of zone `z` for resource `r`, `None` without allocatable.
    fn zone_util(&self, z: usize, r: usize) -> Option<i64> {
        util(self.zone_requested.get(z)?[r], self.zone_allocatable.get(z)?[r])
    }

    /// `u_cpu + u_memory` of node `n` (ppm), for ranking.
    pub fn heat(&self, n: usize) -> i64 {
        (0..2).filter_map(|r| self.node_util(n, r)).sum()
    }

    /// The objective: Σ over resources of `V_nodes·Z² + V_zones·N²` (both variances scaled by
    /// their squared counts, so the sum is `N²·Z²·(var_nodes + var_zones)`).
    pub fn value(&self) -> i128 {
        Self::combine(&self.nodes, &self.zones)
    }

    fn combine(nodes: &[Sums; 2], zones: &[Sums; 2]) -> i128 {
        (0..2)
            .map(|r| {
                let (n, z) = (nodes[r].count, zones[r].count.max(1));
                nodes[r].scaled_variance() * z * z + zones[r].scaled_variance() * n * n
            })
            .sum()
    }

    /// The sums after moving requests `req` from node `a` to node `b`.
    fn sums_after(&self, a: usize, b: usize, req: [i64; 2]) -> ([Sums; 2], [Sums; 2]) {
        let (mut nodes, mut zones) = (self.nodes, self.zones);
        let (za, zb) = (self.zone.get(a).copied().flatten(), self.zone.get(b).copied().flatten());
        for r in 0..2 {
            for (n, delta) in [(a, -req[r]), (b, req[r])] {
                let (Some(q), Some(al)) = (self.requested.get(n), self.allocatable.get(n)) else {
                    continue;
                };
                nodes[r].add(util(q[r], al[r]), -1);
                nodes[r].add(util(q[r] + delta, al[r]), 1);
            }
            if za != zb {
                for (z, delta) in [(za, -req[r]), (zb, req[r])] {
                    let Some(z) = z else { continue };
                    let (Some(q), Some(al)) =
                        (self.zone_requested.get(z), self.zone_allocatable.get(z))
                    else {
                        continue;
                    };
                    zones[r].add(util(q[r], al[r]), -1);
                    zones[r].add(util(q[r] + delta, al[r]), 1);
                }
            }
        }
        (nodes, zones)
    }

    /// The objective after moving `req` from `a` to `b`, in O(1), without changing `self`.
    pub fn value_after(&self, a: usize, b: usize, req: [i64; 2]) -> i128 {
        let (nodes, zones) = self.sums_after(a, b, req);
        Self::combine(&nodes, &zones)
    }

    /// Moves requests `req` from node `a` to node `b`.
    pub fn shift(&mut self, a: usize, b: usize, req: [i64; 2]) {
        let (nodes, zones) = self.sums_after(a, b, req);
        self.nodes = nodes;
        self.zones = zones;
        for r in 0..2 {
            if let Some(x) = self.requested.get_mut(a) {
                x[r] -= req[r];
            }
            if let Some(x) = self.requested.get_mut(b) {
                x[r] += req[r];
            }
            for (n, delta) in [(a, -req[r]), (b, req[r])] {
                if let Some(Some(z)) = self.zone.get(n).copied()
                    && let Some(zr) = self.zone_requested.get_mut(z)
                {
                    zr[r] += delta;
                }
            }
        }
    }
}

/// A pod of a hot node with its improving moves: (best change, pod key, pod, source node,
/// (change, target) best first).
type Candidate = (i128, String, Arc<Pod>, usize, Vec<(i128, usize)>);

fn requests(pod: &Pod) -> [i64; 2] {
    RESOURCES.map(|r| pod.requests.get(r))
}

/// Runs `balance` on the simulation, making at most `max_moves` moves in all.
pub fn balance(sim: &mut Sim<'_>, max_moves: usize) {
    let mut objective = Objective::new(&sim.state);
    let node_count = sim.state.nodes.len();
    while sim.moves.len() < max_moves {
        let current = objective.value();
        let mut ranked: Vec<(i64, usize)> =
            (0..node_count).map(|n| (objective.heat(n), n)).collect();
        ranked.sort();
        let hottest: Vec<usize> = ranked.iter().rev().take(WINDOW).map(|(_, n)| *n).collect();
        // Per movable pod of the hottest nodes: its improving targets, best first.
        let mut candidates: Vec<Candidate> = Vec::new();
        for &s in &hottest {
            let pods: Vec<Arc<Pod>> =
                sim.state.nodes.get(s).map_or_else(Vec::new, |n| n.pods.clone());
            for pod in pods {
                let req = requests(&pod);
                if req == [0, 0] || is_node_daemon(&pod) || sim.movable(&pod).is_err() {
                    continue;
                }
                let mut improving: Vec<(i128, usize)> = (0..node_count)
                    .filter(|&t| t != s)
                    .map(|t| (objective.value_after(s, t, req) - current, t))
                    .filter(|(delta, _)| *delta < 0)
                    .collect();
                if improving.is_empty() {
                    continue;
                }
                improving.sort();
                candidates.push((improving[0].0, pod.key(), pod, s, improving));
            }
        }
        candidates.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        let mut made = false;
        'pods: for (_, _, pod, s, improving) in candidates.into_iter().take(TRIES) {
            let feasible = sim.targets(&pod, s, &|_| false).nodes;
            for (_, t) in improving {
                if feasible.binary_search(&t).is_err() {
                    continue;
                }
                let checkpoint = sim.moves.len();
                if !sim.apply(&pod, s, t, "balance") {
                    continue;
                }
                if sim.commit_or_rollback(checkpoint).is_ok() {
                    objective.shift(s, t, requests(&pod));
                    made = true;
                    break 'pods;
                }
            }
        }
        if !made {
            break;
        }
    }
}
