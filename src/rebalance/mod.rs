//! `kplace rebalance`: offline rebalancing plans — which running pods to move, where, and in
//! which order — for three objectives.
//!
//! Input: the cluster model ([`ClusterState`], bound pods only; pending pods are left alone),
//! the PodDisruptionBudgets ([`budget::budgets`]), the scheduler configuration and
//! [`RebalanceOptions`]. Output: a [`Rebalance`] whose plan document has `moves`
//! (`{pod, from, to, wave}`) and `summary.rebalance` (before/after figures).
//!
//! - [`Objective::Pack`] ([`pack`]): empty as many nodes as possible, least-loaded first.
//! - [`Objective::Balance`] ([`balance`]): lower the variance of node and zone utilization.
//! - [`Objective::Fix`] ([`fix`]): move exactly the pods descheduler's `RemovePodsViolating*`
//!   strategies select ([`violations`]), each to a node where it is valid.
//!
//! Rules every plan keeps:
//!
//! - **Valid.** A move's replacement must pass kube-scheduler's PreFilter and Filter (the
//!   configured profile of the pod's `schedulerName`) on the state the earlier moves leave; moves
//!   only use free room — no pod is evicted to make room, so no move displaces a pod of any
//!   priority. Each wave is then checked by `kplace check` ([`waves::check_moves`]), and
//!   [`Rebalance::check`] carries the verdict; a plan also breaks no constraint that held before
//!   ([`violations::ConstraintState`]).
//! - **At most `--max-moves` moves**, each pod at most once; each wave within
//!   `--max-evictions-per-wave` and descheduler's per-node and per-namespace limits
//!   ([`WaveLimits`]).
//! - **PodDisruptionBudgets hold at every step.** Moves are grouped into ordered waves
//!   ([`waves::assign_waves`]) so that within a wave no budget has more pods evicted than it
//!   allows (computed as the disruption controller computes it, assuming every replacement of
//!   the previous waves runs again); pods selected by several budgets, or by one that allows no
//!   disruption, do not move. [`waves::verify_waves`] replays the evictions one by one.
//! - **Who may move**: descheduler's DefaultEvictor ([`evictor`]) with the flags named after
//!   its arguments; in addition, a pod moves only when a controller will create its replacement
//!   (it has a controlling owner that is not a DaemonSet) and its scheduler has a profile. kplace
//!   does not evaluate volume plugins, so a pod with PersistentVolumeClaims moves only within its
//!   zone (`topology.kubernetes.io/zone`).
//!
//! Applying a plan: `kplace bind --plan` evicts wave by wave and waits for each wave's
//! replacements (same controlling owner, new pod) to be bound and running before the next. A
//! replacement whose `schedulerName` kplace serves is bound to the planned node (steering);
//! otherwise kube-scheduler schedules it, and may well choose another node: its Filter
//! guarantees that node is valid, and its score plugins (LeastAllocated by default) tend to
//! undo `pack`. The binder then reports the move as `elsewhere` and stops before the next wave,
//! whose room assumptions no longer hold; the cluster stays valid and within its budgets, and a
//! new plan from a fresh snapshot continues from there. See `src/bind/waves.rs`.

pub mod balance;
pub mod budget;
pub mod evictor;
pub mod fix;
pub mod pack;
pub mod report;
pub mod sim;
pub mod violations;
pub mod waves;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use thiserror::Error;

use self::budget::Budget;
use self::evictor::{EvictorOptions, is_node_daemon};
use self::sim::Sim;
use self::violations::{Selected, select};
pub use self::waves::WaveLimits;
use self::waves::{Step, assign_waves_within, check_moves, verify_waves};
use crate::check::CheckReport;
use crate::framework::config::SchedulerConfig;
use crate::framework::runtime::FrameworkError;
use crate::model::ClusterState;
use crate::plan::{BudgetUse, Move, Plan, RebalanceSummary, Unmoved, summarize};
use crate::resources::{CPU, MEMORY};

/// What a rebalancing plan optimizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Objective {
    /// Empty as many nodes as possible, least-loaded first.
    Pack,
    /// Even out utilization across nodes and zones.
    Balance,
    /// Move the pods that violate their constraints now.
    Fix,
}

impl Objective {
    /// `pack`, `balance` or `fix`.
    pub fn as_str(self) -> &'static str {
        match self {
            Objective::Pack => "pack",
            Objective::Balance => "balance",
            Objective::Fix => "fix",
        }
    }
}

impl fmt::Display for Objective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How to rebalance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RebalanceOptions {
    /// The objective.
    pub objective: Objective,
    /// The most moves (`None`: no limit).
    pub max_moves: Option<usize>,
    /// Who may be evicted.
    pub evictor: EvictorOptions,
    /// The most evictions per wave: in all, per node, per namespace.
    pub limits: WaveLimits,
}

impl Default for RebalanceOptions {
    fn default() -> Self {
        RebalanceOptions {
            objective: Objective::Balance,
            max_moves: None,
            evictor: EvictorOptions::default(),
            limits: WaveLimits::default(),
        }
    }
}

/// Errors that stop a rebalancing run.
#[derive(Debug, Error)]
pub enum RebalanceError {
    /// A profile's plugins could not be built.
    #[error(transparent)]
    Framework(#[from] FrameworkError),
    /// The plan broke a budget when its evictions were replayed (a bug in the wave order).
    #[error("internal error: the waves break a PodDisruptionBudget: {0}")]
    Budget(String),
}

/// A rebalancing plan with the states around it.
#[derive(Debug, Clone)]
pub struct Rebalance {
    /// The plan document (`moves`, `summary.rebalance`).
    pub plan: Plan,
    /// The cluster before.
    pub before: ClusterState,
    /// The cluster after every move.
    pub after: ClusterState,
    /// `kplace check`'s verdict on the waves.
    pub check: CheckReport,
}

/// Nodes running a pod that is not a node daemon.
pub fn nodes_in_use(state: &ClusterState) -> BTreeSet<String> {
    state
        .nodes
        .iter()
        .filter(|n| n.pods.iter().any(|p| !is_node_daemon(p)))
        .map(|n| n.name.clone())
        .collect()
}

/// Population standard deviation of per-zone utilization (`topology.kubernetes.io/zone`) for
/// cpu and memory, over zones with allocatable.
pub fn zone_stddev(state: &ClusterState) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for r in [CPU, MEMORY] {
        let mut zones: BTreeMap<&str, (i64, i64)> = BTreeMap::new();
        for n in &state.nodes {
            if let Some(z) = n.labels.get(balance::ZONE_LABEL) {
                let e = zones.entry(z.as_str()).or_insert((0, 0));
                e.0 += n.requested.get(r);
                e.1 += n.allocatable.get(r);
            }
        }
        let ratios: Vec<f64> =
            zones.values().filter(|(_, a)| *a > 0).map(|(q, a)| *q as f64 / *a as f64).collect();
        if ratios.is_empty() {
            continue;
        }
        let len = ratios.len() as f64;
        let mean = ratios.iter().sum::<f64>() / len;
        let var = ratios.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / len;
        out.insert(r.to_string(), var.sqrt());
    }
    out
}

fn node_stddev(state: &ClusterState) -> BTreeMap<String, f64> {
    summarize(&Plan::default(), state, &[])
        .utilization
        .into_iter()
        .map(|(k, u)| (k, u.stddev))
        .collect()
}

/// Computes a rebalancing plan for `state`. See the module documentation.
pub fn rebalance(
    state: &ClusterState,
    budgets: &[Budget],
    config: &SchedulerConfig,
    options: &RebalanceOptions,
) -> Result<Rebalance, RebalanceError> {
    let max_moves = options.max_moves.unwrap_or(usize::MAX);
    let mut sim = Sim::new(state.clone(), config, budgets, options.evictor)?;
    let evictable = |p: &crate::model::Pod| sim.evictable(p);
    let selected_before: Vec<Selected> = select(state, &evictable);
    let mut unmoved: Vec<Unmoved> = Vec::new();
    let mut fixed_selection: Vec<Selected> = Vec::new();
    match options.objective {
        Objective::Pack => pack::pack(&mut sim, max_moves, &mut unmoved),
        Objective::Balance => balance::balance(&mut sim, max_moves),
        Objective::Fix => fixed_selection = fix::fix(&mut sim, max_moves, &mut unmoved),
    }

    // Waves.
    let steps: Vec<Step> =
        sim.moves.iter().map(|m| Step { pod: m.pod.clone(), from: m.from, to: m.to }).collect();
    let waves = assign_waves_within(state, &steps, budgets, &sim.allowed, &options.limits);
    let name = |n: usize| state.nodes.get(n).map(|n| n.name.clone()).unwrap_or_default();
    let mut order: Vec<usize> = (0..sim.moves.len()).collect();
    order.sort_by_key(|&i| (waves.get(i).copied().unwrap_or(0), i));
    let moves: Vec<Move> = order
        .iter()
        .filter_map(|&i| {
            let m = sim.moves.get(i)?;
            Some(Move {
                pod: m.pod.key(),
                from: name(m.from),
                to: name(m.to),
                wave: waves.get(i).copied().unwrap_or(0),
                reason: if options.objective == Objective::Fix {
                    m.reason.clone()
                } else {
                    String::new()
                },
            })
        })
        .collect();
    verify_waves(state, budgets, &moves).map_err(RebalanceError::Budget)?;
    let check = check_moves(state, &moves);
    let after = sim.state.clone();

    // Summary.
    let selected_after: Vec<Selected> = {
        let evictable = |p: &crate::model::Pod| sim.evictable(p);
        select(&after, &evictable)
    };
    let after_keys: BTreeSet<&str> = selected_after.iter().map(|s| s.pod.as_str()).collect();
    let violations_fixed = match options.objective {
        Objective::Fix => fixed_selection
            .iter()
            .filter(|s| sim.moved.contains(&s.pod) && !after_keys.contains(s.pod.as_str()))
            .count(),
        _ => selected_before.iter().filter(|s| !after_keys.contains(s.pod.as_str())).count(),
    };
    let before_use = nodes_in_use(state);
    let after_use = nodes_in_use(&after);
    let mut unmovable: BTreeMap<String, usize> = BTreeMap::new();
    for p in state.nodes.iter().flat_map(|n| &n.pods) {
        if let Err(reason) = sim.movable_at_start(p) {
            *unmovable.entry(reason).or_insert(0) += 1;
        }
    }
    let mut budget_uses = Vec::new();
    for (b, budget) in budgets.iter().enumerate() {
        let mut per_wave: BTreeMap<u32, usize> = BTreeMap::new();
        for (i, m) in sim.moves.iter().enumerate() {
            if budget.selects(&m.pod) {
                *per_wave.entry(waves.get(i).copied().unwrap_or(0)).or_insert(0) += 1;
            }
        }
        if per_wave.is_empty() {
            continue;
        }
        budget_uses.push(BudgetUse {
            pdb: budget.key(),
            allowed: sim.allowed.get(b).copied().unwrap_or(0),
            source: budget.source.as_str().to_string(),
            moves: per_wave.values().sum(),
            max_per_wave: per_wave.values().copied().max().unwrap_or(0),
        });
    }
    let summary = RebalanceSummary {
        objective: options.objective.as_str().to_string(),
        moves: moves.len(),
        waves: moves.iter().map(|m| m.wave).max().unwrap_or(0) as usize,
        max_moves: options.max_moves,
        nodes_in_use_before: before_use.len(),
        nodes_in_use_after: after_use.len(),
        nodes_freed: before_use.difference(&after_use).cloned().collect(),
        nodes_newly_used: after_use.difference(&before_use).cloned().collect(),
        node_stddev_before: node_stddev(state),
        node_stddev_after: node_stddev(&after),
        zone_stddev_before: zone_stddev(state),
        zone_stddev_after: zone_stddev(&after),
        violations_before: violations::counts(&selected_before),
        violations_after: violations::counts(&selected_after),
        violations_fixed,
        unmoved,
        unmovable,
        budgets: budget_uses,
        check_valid: check.is_valid(),
        check_violations: check
            .counts()
            .into_iter()
            .map(|(k, n)| (k.as_str().to_string(), n))
            .collect(),
    };
    let mut plan = Plan { moves, ..Plan::default() };
    plan.summary = summarize(&plan, &after, &[]);
    plan.summary.algorithm = format!("rebalance-{}", options.objective);
    plan.summary.strategy = plan.summary.algorithm.clone();
    plan.summary.backend = "cpu".to_string();
    plan.summary.rebalance = Some(summary);
    Ok(Rebalance { plan, before: state.clone(), after, check })
}
