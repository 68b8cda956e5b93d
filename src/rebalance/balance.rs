//! `balance`: even out utilization across nodes and zones by local search.
//!
//! The objective is the variance of per-node utilization plus the variance of per-zone
//! utilization (zone = `topology.kubernetes.io/zone`; a zone's utilization is its nodes' summed
//! requests over their summed allocatable), summed over cpu and memory. Utilizations are integer
//! parts per million, and the variances are compared as exact integers scaled by the squared
//! node and zone counts (`N·Σu² − (Σu)²`), so "improves" never depends on rounding.
//!
//! Each step ranks nodes by `u_cpu + u_memory`, takes the [`WINDOW`] most and least utilized,
//! and scores every move of a movable pod from one of the former to one of the latter by the
//! exact change of the objective. Improving moves are tried best first (ties by pod, then node
//! name), at most [`TRIES`] per step: the first whose replacement passes the framework's
//! PreFilter and Filter on the target and that breaks no constraint that held is made. The
//! search stops when a step finds no such move (every move tried would not strictly lower the
//! objective, or is infeasible) or after `--max-moves` moves. The objective strictly decreases
//! at every move and each pod moves at most once, so the search ends.

use std::sync::Arc;

use super::evictor::is_node_daemon;
use super::pack::ppm;
use super::sim::Sim;
use crate::model::{ClusterState, Pod};
use crate::resources::{CPU, MEMORY};

/// How many of the most and of the least utilized nodes a step considers.
pub const WINDOW: usize = 10;
/// How many improving moves a step tries before giving up.
pub const TRIES: usize = 64;
/// The node label zones are read from.
pub const ZONE_LABEL: &str = "topology.kubernetes.io/zone";
const RESOURCES: [&str; 2] = [CPU, MEMORY];

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
}

/// `count·Σu² − (Σu)²` over the values, in `i128` (the population variance times `count²`).
fn scaled_variance(values: impl Iterator<Item = i64>) -> (i128, i128) {
    let (mut n, mut s1, mut s2) = (0i128, 0i128, 0i128);
    for u in values {
        let u = i128::from(u);
        n += 1;
        s1 += u;
        s2 += u * u;
    }
    (n * s2 - s1 * s1, n)
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
        Objective { requested, allocatable, zone, zone_requested, zone_allocatable }
    }

    /// Utilization (ppm) of node `n` for resource `r`, `None` without allocatable.
    fn node_util(&self, n: usize, r: usize) -> Option<i64> {
        let alloc = self.allocatable.get(n)?[r];
        (alloc > 0).then(|| ppm(self.requested.get(n).map_or(0, |q| q[r]), alloc))
    }

    /// `u_cpu + u_memory` of node `n` (ppm), for ranking.
    pub fn heat(&self, n: usize) -> i64 {
        (0..2).filter_map(|r| self.node_util(n, r)).sum()
    }

    /// The objective: Σ over resources of `V_nodes·Z² + V_zones·N²` (both variances scaled by
    /// their squared counts, so the sum is `N²·Z²·(var_nodes + var_zones)`).
    pub fn value(&self) -> i128 {
        let mut total = 0i128;
        for r in 0..2 {
            let (v_nodes, n) =
                scaled_variance((0..self.requested.len()).filter_map(|i| self.node_util(i, r)));
            let (v_zones, z) = scaled_variance((0..self.zone_requested.len()).filter_map(|z| {
                let alloc = self.zone_allocatable.get(z)?[r];
                (alloc > 0).then(|| ppm(self.zone_requested.get(z).map_or(0, |q| q[r]), alloc))
            }));
            total += v_nodes * z.max(1) * z.max(1) + v_zones * n * n;
        }
        total
    }

    /// Moves requests `req` from node `a` to node `b` (negated to undo).
    pub fn shift(&mut self, a: usize, b: usize, req: [i64; 2]) {
        for r in 0..2 {
            if let Some(x) = self.requested.get_mut(a) {
                x[r] -= req[r];
            }
            if let Some(x) = self.requested.get_mut(b) {
                x[r] += req[r];
            }
            if let Some(Some(z)) =
                self.zone.get(a).copied().map(|z| z.and_then(|z| self.zone_requested.get_mut(z)))
            {
                z[r] -= req[r];
            }
            if let Some(Some(z)) =
                self.zone.get(b).copied().map(|z| z.and_then(|z| self.zone_requested.get_mut(z)))
            {
                z[r] += req[r];
            }
        }
    }

    /// The objective after moving `req` from `a` to `b`, without changing `self`.
    pub fn value_after(&mut self, a: usize, b: usize, req: [i64; 2]) -> i128 {
        self.shift(a, b, req);
        let v = self.value();
        self.shift(b, a, req);
        v
    }
}

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
        let coldest: Vec<usize> = ranked.iter().take(WINDOW).map(|(_, n)| *n).collect();
        let hottest: Vec<usize> = ranked.iter().rev().take(WINDOW).map(|(_, n)| *n).collect();
        let mut candidates: Vec<(i128, String, usize, Arc<Pod>, usize)> = Vec::new();
        for &s in &hottest {
            let pods: Vec<Arc<Pod>> =
                sim.state.nodes.get(s).map_or_else(Vec::new, |n| n.pods.clone());
            for pod in pods {
                let req = requests(&pod);
                if req == [0, 0] || is_node_daemon(&pod) || sim.movable(&pod).is_err() {
                    continue;
                }
                for &t in &coldest {
                    if t == s {
                        continue;
                    }
                    let after = objective.value_after(s, t, req);
                    if after < current {
                        candidates.push((after - current, pod.key(), t, Arc::clone(&pod), s));
                    }
                }
            }
        }
        candidates.sort_by(|a, b| (a.0, &a.1, a.2).cmp(&(b.0, &b.1, b.2)));
        let mut made = false;
        for (_, _, t, pod, s) in candidates.into_iter().take(TRIES) {
            if !sim.fits(&pod, s, t) {
                continue;
            }
            let checkpoint = sim.moves.len();
            if !sim.apply(&pod, s, t, "balance") {
                continue;
            }
            if sim.commit_or_rollback(checkpoint).is_ok() {
                objective.shift(s, t, requests(&pod));
                made = true;
                break;
            }
        }
        if !made {
            break;
        }
    }
}
