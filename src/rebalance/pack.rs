//! `pack`: empty as many nodes as possible, least-loaded first (for scale-down).
//!
//! Nodes are tried in ascending load (the larger of their cpu and memory requested/allocatable
//! ratios, in parts per million; then fewer pods; then name). A node is emptied when every pod on
//! it that is not a node daemon (DaemonSet, mirror or static pod — they go away with the node)
//! can move: each, largest request first, goes to the feasible node (framework PreFilter and
//! Filter on the evolving state) that is most allocated after it lands (upstream
//! NodeResourcesFit `MostAllocated`: `requested × 100 / allocatable` per resource, cpu and memory
//! weighted equally), ties to the first node by name. Targets are neither the node itself, nor a
//! node already emptied, nor a node that ran no such pod at the start (packing onto it would
//! put one more node in use). The node's moves are committed only when all of its pods found a node,
//! the moves stay within `--max-moves`, and they break no constraint that held
//! ([`super::violations::ConstraintState`]); otherwise they are undone. A node that received pods
//! is not emptied later (each pod moves at most once), and a node with a pod that may not move
//! is not emptied.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::evictor::is_node_daemon;
use super::sim::Sim;
use crate::model::{Node, Pod};
use crate::plan::Unmoved;
use crate::resources::{CPU, MEMORY};

/// The larger of the cpu and memory requested/allocatable ratios, in parts per million.
pub fn load_ppm(node: &Node) -> i64 {
    [CPU, MEMORY]
        .iter()
        .map(|r| {
            let alloc = node.allocatable.get(r);
            if alloc <= 0 { 0 } else { ppm(node.requested.get(r), alloc) }
        })
        .max()
        .unwrap_or(0)
}

/// `value × 10⁶ / total` in integers (truncated), saturating.
pub fn ppm(value: i64, total: i64) -> i64 {
    if total <= 0 {
        return 0;
    }
    let q = i128::from(value) * 1_000_000 / i128::from(total);
    i64::try_from(q).unwrap_or(i64::MAX)
}

/// MostAllocated score of `node` once `pod` is on it: the mean over cpu and memory (those the
/// node has) of `requested × 100 / allocatable`.
fn most_allocated(node: &Node, pod: &Pod) -> i64 {
    let mut sum = 0i64;
    let mut count = 0i64;
    for r in [CPU, MEMORY] {
        let alloc = node.allocatable.get(r);
        if alloc <= 0 {
            continue;
        }
        let requested = node.requested.get(r).saturating_add(pod.requests.get(r));
        let q = i128::from(requested) * 100 / i128::from(alloc);
        sum = sum.saturating_add(i64::try_from(q).unwrap_or(i64::MAX));
        count += 1;
    }
    if count == 0 { 0 } else { sum / count }
}

/// Runs `pack` on the simulation, making at most `max_moves` moves in all. Records in `unmoved`
/// why nodes that had pods to move were not emptied.
pub fn pack(sim: &mut Sim<'_>, max_moves: usize, unmoved: &mut Vec<Unmoved>) {
    let mut order: Vec<(i64, usize, usize)> = sim
        .state
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (load_ppm(n), n.pods.iter().filter(|p| !is_node_daemon(p)).count(), i))
        .collect();
    order.sort();
    // Nodes with nothing to empty stay empty: packing onto them would use one more node.
    let empty: BTreeSet<usize> = order.iter().filter(|o| o.1 == 0).map(|o| o.2).collect();
    let mut emptied: BTreeSet<usize> = BTreeSet::new();
    let mut receivers: BTreeSet<usize> = BTreeSet::new();
    for (_, count, n) in order {
        if count == 0 || receivers.contains(&n) {
            continue;
        }
        let Some(node) = sim.state.nodes.get(n) else { continue };
        let node_name = node.name.clone();
        let mut pods: Vec<Arc<Pod>> =
            node.pods.iter().filter(|p| !is_node_daemon(p)).cloned().collect();
        if let Some((pod, reason)) =
            pods.iter().find_map(|p| sim.movable(p).err().map(|r| (p.key(), r)))
        {
            unmoved.push(Unmoved {
                pod,
                node: node_name,
                reason: format!("stays, so its node is not emptied: {reason}"),
            });
            continue;
        }
        let left = max_moves.saturating_sub(sim.moves.len());
        if pods.len() > left {
            unmoved.push(Unmoved {
                pod: String::new(),
                node: node_name,
                reason: format!(
                    "emptying the node needs {} move{}, {left} left under --max-moves",
                    pods.len(),
                    if pods.len() == 1 { "" } else { "s" }
                ),
            });
            continue;
        }
        pods.sort_by(|a, b| {
            (b.requests.milli_cpu, b.requests.memory, a.key()).cmp(&(
                a.requests.milli_cpu,
                a.requests.memory,
                b.key(),
            ))
        });
        let checkpoint = sim.moves.len();
        let mut failed: Option<Unmoved> = None;
        let mut used: BTreeSet<usize> = BTreeSet::new();
        for pod in &pods {
            let targets = sim.targets(pod, n, &|m| emptied.contains(&m) || empty.contains(&m));
            let best = targets
                .nodes
                .iter()
                .copied()
                .filter_map(|m| sim.state.nodes.get(m).map(|t| (most_allocated(t, pod), m)))
                .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
            match best {
                Some((_, m)) if sim.apply(pod, n, m, "pack") => {
                    used.insert(m);
                }
                _ => {
                    failed = Some(Unmoved {
                        pod: pod.key(),
                        node: node_name.clone(),
                        reason: format!(
                            "fits no other node in use ({}), so its node is not emptied",
                            targets.message()
                        ),
                    });
                    break;
                }
            }
        }
        if let Some(u) = failed {
            sim.rollback(checkpoint);
            unmoved.push(u);
            continue;
        }
        match sim.commit_or_rollback(checkpoint) {
            Ok(()) => {
                emptied.insert(n);
                receivers.extend(used);
            }
            Err(why) => unmoved.push(Unmoved {
                pod: String::new(),
                node: node_name,
                reason: format!("emptying the node would break a constraint: {why}"),
            }),
        }
    }
}
