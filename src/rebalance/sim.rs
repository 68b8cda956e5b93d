//! The evolving cluster of a rebalancing run: which pods may move, where a pod may go (the
//! framework's PreFilter and Filter on the current state, with the pod taken off its node, as
//! kube-scheduler would see its replacement), and the moves made so far, with undo.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::balance::ZONE_LABEL;
use super::budget::Budget;
use super::evictor::{self, EvictorOptions};
use super::violations::ConstraintState;
use crate::framework::config::SchedulerConfig;
use crate::framework::runtime::{Framework, FrameworkError, PreFilterOutcome};
use crate::model::{ClusterState, Pod, PodPhase};

/// One move: `pod` (as it runs before the move) from node `from` to node `to`.
#[derive(Debug, Clone)]
pub struct SimMove {
    /// The pod before the move.
    pub pod: Arc<Pod>,
    /// Source node index.
    pub from: usize,
    /// Target node index.
    pub to: usize,
    /// Why it moves.
    pub reason: String,
}

/// Where a pod may go, and why the other nodes were rejected.
#[derive(Debug, Clone, Default)]
pub struct Targets {
    /// Feasible node indices, ascending.
    pub nodes: Vec<usize>,
    /// Filter reason → number of nodes.
    pub reasons: BTreeMap<String, usize>,
}

impl Targets {
    /// The reasons as kube-scheduler words them (`2 Insufficient cpu, 1 node(s) …`).
    pub fn message(&self) -> String {
        let mut parts: Vec<String> = self.reasons.iter().map(|(r, n)| format!("{n} {r}")).collect();
        parts.sort();
        if parts.is_empty() { "no other node".to_string() } else { parts.join(", ") }
    }
}

/// The simulation.
#[derive(Debug)]
pub struct Sim<'a> {
    /// The cluster with every move so far applied.
    pub state: ClusterState,
    /// Moves in the order they were decided.
    pub moves: Vec<SimMove>,
    /// Keys of moved pods.
    pub moved: BTreeSet<String>,
    /// The budgets.
    pub budgets: &'a [Budget],
    /// Disruptions each budget allows at the start (and, replacements running, at every wave).
    pub allowed: Vec<i32>,
    /// The constraint state of `state` when the last group of moves was committed.
    pub constraints: ConstraintState,
    frameworks: BTreeMap<String, Option<Framework>>,
    evictor: EvictorOptions,
}

impl<'a> Sim<'a> {
    /// A simulation of `state`, with the frameworks of every scheduler name its pods carry.
    pub fn new(
        state: ClusterState,
        config: &SchedulerConfig,
        budgets: &'a [Budget],
        evictor: EvictorOptions,
    ) -> Result<Self, FrameworkError> {
        let names: BTreeSet<&str> =
            state.nodes.iter().flat_map(|n| &n.pods).map(|p| p.scheduler_name.as_str()).collect();
        let mut frameworks = BTreeMap::new();
        for name in names {
            let fw = match config.profile_for(name) {
                Some(profile) => Some(Framework::new(profile)?),
                None => None,
            };
            frameworks.insert(name.to_string(), fw);
        }
        let allowed = budgets.iter().map(|b| b.allowed(&state)).collect();
        let constraints = ConstraintState::of(&state);
        Ok(Sim {
            state,
            moves: Vec::new(),
            moved: BTreeSet::new(),
            budgets,
            allowed,
            constraints,
            frameworks,
            evictor,
        })
    }

    /// Whether descheduler's DefaultEvictor would evict the pod.
    pub fn evictable(&self, pod: &Pod) -> bool {
        evictor::filter(pod, &self.evictor).is_ok()
    }

    /// `Ok` when the pod may be moved: evictable, replaced by a controller that kplace can
    /// steer (not a DaemonSet), not moved already, selected by at most one budget that allows a
    /// disruption, scheduled by a profile of the configuration. Else why not.
    pub fn movable(&self, pod: &Pod) -> Result<(), String> {
        if self.moved.contains(&pod.key()) {
            return Err("already moved by this plan".to_string());
        }
        self.movable_at_start(pod)
    }

    /// [`Sim::movable`] before any move was made.
    pub fn movable_at_start(&self, pod: &Pod) -> Result<(), String> {
        if let Err(reasons) = evictor::filter(pod, &self.evictor) {
            return Err(reasons.join("; "));
        }
        if evictor::is_node_daemon(pod) {
            return Err("node daemon pods are recreated where their controller puts them".into());
        }
        if pod.owner.is_none() {
            return Err("no controller would create a replacement".to_string());
        }
        let selecting: Vec<usize> =
            (0..self.budgets.len()).filter(|&b| self.budgets[b].selects(pod)).collect();
        if selecting.len() > 1 {
            return Err(
                "selected by more than one PodDisruptionBudget, which the eviction API refuses"
                    .into(),
            );
        }
        if let Some(&b) = selecting.first()
            && self.allowed.get(b).copied().unwrap_or(0) < 1
        {
            return Err(format!("pdb {} allows no disruption", self.budgets[b].key()));
        }
        match self.frameworks.get(&pod.scheduler_name) {
            Some(Some(_)) => Ok(()),
            _ => Err(format!(
                "scheduler {:?} has no profile in the configuration",
                pod.scheduler_name
            )),
        }
    }

    /// The pod as its replacement reaches the scheduler: unbound and pending.
    fn replacement_pending(pod: &Pod) -> Pod {
        let mut p = pod.clone();
        p.node_name = None;
        p.phase = PodPhase::Pending;
        p.start_time = None;
        p
    }

    /// Runs `f` with the pod taken off node `from` (its replacement pending), then puts it back.
    fn without<T>(
        &mut self,
        pod: &Arc<Pod>,
        from: usize,
        f: impl FnOnce(&ClusterState, &Framework, &Pod) -> T,
    ) -> Option<T> {
        let fw = self.frameworks.get(&pod.scheduler_name)?.as_ref()?;
        let node = self.state.nodes.get_mut(from)?;
        let removed = node.remove_pod(&pod.namespace, &pod.name)?;
        let pending = Self::replacement_pending(pod);
        let out = f(&self.state, fw, &pending);
        if let Some(node) = self.state.nodes.get_mut(from) {
            node.add_pod(removed);
        }
        Some(out)
    }

    /// Every node other than `from` (and those `exclude` rules out) where the pod's replacement
    /// passes PreFilter and Filter. kplace does not evaluate volume plugins, so a pod with
    /// PersistentVolumeClaims only goes to nodes of its own zone (`topology.kubernetes.io/zone`),
    /// where zonal volumes can follow it.
    pub fn targets(
        &mut self,
        pod: &Arc<Pod>,
        from: usize,
        exclude: &dyn Fn(usize) -> bool,
    ) -> Targets {
        self.without(pod, from, |state, fw, pending| {
            let mut out = Targets::default();
            let cs = match fw.pre_filter(pending, state) {
                PreFilterOutcome::Proceed(cs) => cs,
                PreFilterOutcome::Rejected(status) => {
                    out.reasons.insert(status.to_string(), state.nodes.len().saturating_sub(1));
                    return out;
                }
            };
            let zone = |n: usize| state.nodes.get(n).and_then(|node| node.labels.get(ZONE_LABEL));
            for (n, node) in state.nodes.iter().enumerate() {
                if n == from || exclude(n) {
                    continue;
                }
                if pending.has_pvc && zone(n) != zone(from) {
                    *out.reasons
                        .entry("node(s) in another zone than the pod's volumes".to_string())
                        .or_insert(0) += 1;
                    continue;
                }
                if let Some(names) = cs.node_names()
                    && !names.contains(&node.name)
                {
                    *out.reasons
                        .entry("node(s) didn't satisfy plugin(s)".to_string())
                        .or_insert(0) += 1;
                    continue;
                }
                let status = fw.filter(&cs, pending, node);
                if status.is_success() {
                    out.nodes.push(n);
                } else {
                    for r in &status.reasons {
                        *out.reasons.entry(r.clone()).or_insert(0) += 1;
                    }
                }
            }
            out
        })
        .unwrap_or_default()
    }

    /// The framework's weighted total score of each of `feasible` for the pod's replacement
    /// (what kube-scheduler would rank them by), or `None` when scoring fails.
    pub fn scores(
        &mut self,
        pod: &Arc<Pod>,
        from: usize,
        feasible: &[usize],
    ) -> Option<Vec<(usize, i64)>> {
        self.without(pod, from, |state, fw, pending| {
            fw.score(pending, state, feasible)
                .ok()
                .map(|s| s.iter().map(|n| (n.node, n.total)).collect())
        })
        .flatten()
    }

    /// Applies a move: the pod leaves `from`, its replacement runs on `to`.
    pub fn apply(&mut self, pod: &Arc<Pod>, from: usize, to: usize, reason: &str) -> bool {
        let Some(to_name) = self.state.nodes.get(to).map(|n| n.name.clone()) else { return false };
        let Some(removed) =
            self.state.nodes.get_mut(from).and_then(|n| n.remove_pod(&pod.namespace, &pod.name))
        else {
            return false;
        };
        let mut replacement = (*removed).clone();
        replacement.node_name = Some(to_name);
        if let Some(node) = self.state.nodes.get_mut(to) {
            node.add_pod(Arc::new(replacement));
        }
        self.moved.insert(pod.key());
        self.moves.push(SimMove { pod: removed, from, to, reason: reason.to_string() });
        true
    }

    /// Undoes the last move.
    pub fn undo(&mut self) {
        let Some(m) = self.moves.pop() else { return };
        if let Some(node) = self.state.nodes.get_mut(m.to) {
            node.remove_pod(&m.pod.namespace, &m.pod.name);
        }
        if let Some(node) = self.state.nodes.get_mut(m.from) {
            node.add_pod(Arc::clone(&m.pod));
        }
        self.moved.remove(&m.pod.key());
    }

    /// Undoes moves until `len` are left.
    pub fn rollback(&mut self, len: usize) {
        while self.moves.len() > len {
            self.undo();
        }
    }

    /// Commits the moves since the last commit if they break no constraint that held; else
    /// rolls them back to `checkpoint` and says what they would break.
    pub fn commit_or_rollback(&mut self, checkpoint: usize) -> Result<(), String> {
        let now = ConstraintState::of(&self.state);
        match now.no_worse_than(&self.constraints) {
            Ok(()) => {
                self.constraints = now;
                Ok(())
            }
            Err(e) => {
                self.rollback(checkpoint);
                Err(e)
            }
        }
    }
}
