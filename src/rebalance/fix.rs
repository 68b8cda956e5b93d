//! `fix`: move exactly the pods descheduler's `RemovePodsViolating*` strategies select now, each
//! to a node where it is valid.
//!
//! The selection is [`super::violations::select`] on the snapshot, with the DefaultEvictor of
//! the command's flags. Selected pods are handled in selection order: a pod that may not move
//! (budget, controller, scheduler; see [`Sim::movable`]) or that fits no other node (framework
//! PreFilter and Filter on the evolving state) is reported as unfixable and stays. Otherwise its
//! replacement goes to the feasible node the framework scores highest (kube-scheduler's own
//! ranking; ties to the first node by name), or the next best when that move would break a
//! constraint that held ([`super::violations::ConstraintState`]). Nothing else moves.

use std::sync::Arc;

use super::sim::Sim;
use super::violations::{Selected, select};
use crate::model::Pod;
use crate::plan::Unmoved;

/// How many of a pod's best nodes are tried when the best ones would break a constraint.
const TRIES: usize = 8;

/// Runs `fix`: returns the selected pods; moves those that can move (at most `max_moves` moves
/// in all) and records the others in `unmoved`.
pub fn fix(sim: &mut Sim<'_>, max_moves: usize, unmoved: &mut Vec<Unmoved>) -> Vec<Selected> {
    let selected = {
        let evictable = |p: &Pod| sim.evictable(p);
        select(&sim.state, &evictable)
    };
    for s in &selected {
        let node_name = sim.state.nodes.get(s.node).map(|n| n.name.clone()).unwrap_or_default();
        let mut stay = |reason: String| {
            unmoved.push(Unmoved { pod: s.pod.clone(), node: node_name.clone(), reason });
        };
        let Some(pod) = sim
            .state
            .nodes
            .get(s.node)
            .and_then(|n| n.pods.iter().find(|p| p.key() == s.pod))
            .map(Arc::clone)
        else {
            stay("no longer on its node".to_string());
            continue;
        };
        if sim.moves.len() >= max_moves {
            stay(format!("{}: not moved, --max-moves reached", s.strategy.as_str()));
            continue;
        }
        if let Err(reason) = sim.movable(&pod) {
            stay(format!("{}: unfixable: {reason}", s.strategy.as_str()));
            continue;
        }
        let targets = sim.targets(&pod, s.node, &|_| false);
        if targets.nodes.is_empty() {
            stay(format!(
                "{}: unfixable: no node is valid for it ({})",
                s.strategy.as_str(),
                targets.message()
            ));
            continue;
        }
        let mut ranked = sim
            .scores(&pod, s.node, &targets.nodes)
            .unwrap_or_else(|| targets.nodes.iter().map(|&n| (n, 0)).collect());
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut last_error = String::new();
        let mut done = false;
        for (to, _) in ranked.into_iter().take(TRIES) {
            let checkpoint = sim.moves.len();
            if !sim.apply(&pod, s.node, to, s.strategy.as_str()) {
                continue;
            }
            match sim.commit_or_rollback(checkpoint) {
                Ok(()) => {
                    done = true;
                    break;
                }
                Err(e) => last_error = e,
            }
        }
        if !done {
            stay(format!(
                "{}: unfixable: every valid node would break a constraint ({last_error})",
                s.strategy.as_str()
            ));
        }
    }
    selected
}
