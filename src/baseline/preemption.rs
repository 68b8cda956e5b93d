//! DefaultPreemption's PostFilter for the sequential `baseline` simulator: when a pod fits on no
//! node, find the node where evicting the fewest and least important lower-priority pods makes it
//! fit, exactly as kube-scheduler v1.35 chooses.
//!
//! Input: the unschedulable pod, the [`ClusterState`], the filter [`Diagnosis`] (which nodes
//! rejected the pod with `Unschedulable` and which with `UnschedulableAndUnresolvable`), the
//! plugin's [`DefaultPreemptionArgs`], a [`FilterOracle`] that re-runs the profile's PreFilter +
//! Filter with some pods removed from a node, the simulation clock and a seeded random source.
//! Output: a [`PreemptionOutcome`]: the nominated node with its victims, or the message upstream
//! stores in `Diagnosis.PostFilterMsg`.
//!
//! Upstream (v1.35): `pkg/scheduler/framework/preemption/preemption.go` (`Evaluator.Preempt`,
//! `findCandidates`, `DryRunPreemption`, `SelectCandidate`, `pickOneNodeForPreemption`),
//! `pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go` (`PostFilter`,
//! `PodEligibleToPreemptOthers`, `SelectVictimsOnNode`, `filterPodsWithPDBViolation`,
//! `calculateNumCandidates`, `GetOffsetAndNumCandidates`), `pkg/scheduler/util/utils.go`
//! (`MoreImportantPod`, `GetPodStartTime`, `GetEarliestPodStartTime`) and
//! `pkg/scheduler/framework/types.go` (`NodeToStatus.NodesForStatusCode`, `FitError.Error`). The
//! stored copies read were `default_preemption.go` at e4d77d92 and `preemption.go` at 00e6d951
//! (the v1.34/v1.35 shape, `NewEvaluator(..., enableAsyncPreemption)`); the later main branch
//! (008b3652) only adds pod-group (workload-aware preemption) gates in front of the same logic.
//!
//! Where upstream is not deterministic, this module picks one documented order:
//!
//! - Nodes are visited in `cluster.nodes` order (sorted by name). Upstream lists nodes in the
//!   snapshot's zone-interleaved order, or in Go map order when the absent-nodes status is not
//!   `Unschedulable`; the dry run runs in parallel and stops "soon" after enough candidates. Here
//!   the dry run is sequential and stops right after the candidate that completes the quota —
//!   upstream's behaviour with parallelism 1, which its own tests use.
//! - `pickOneNodeForPreemption` iterates a Go map, so a full tie goes to a random node upstream;
//!   here it goes to the first candidate in dry-run order (non-violating candidates first).
//! - `GetPodStartTime` returns `time.Now()` (read at every call) for a pod without
//!   `status.startTime`; here such pods start at the caller's `now`, so two of them tie.
//! - The random offset uses the caller's seeded generator through Go's `Rand.Int31n` algorithm
//!   ([`go_int31n`]); upstream draws from Go's global source.
//! - Victims are sorted with a port of Go's `sort.Slice` (pattern-defeating quicksort, not
//!   stable), so pods that tie under `MoreImportantPod` end in the order Go would leave them.
//! - The filters run through the [`FilterOracle`], which counts the pods nominated to the node
//!   (`RunFilterPluginsWithNominatedPods`) when the caller has nominations;
//!   `PodEligibleToPreemptOthers`' second rule (a pod whose nominated node still has victims
//!   terminating may not preempt again, [`NOT_ELIGIBLE_TERMINATING`]) is the caller's, which
//!   knows the nominations ([`ineligible`]). Extenders are not modelled.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::framework::args::DefaultPreemptionArgs;
use crate::framework::fit_error::{Diagnosis, FitError};
use crate::framework::{Code, Status};
use crate::model::{ClusterState, Pdb, Pod, PreemptionPolicy};

/// The plugin's name (upstream `names.DefaultPreemption`).
pub const PLUGIN_NAME: &str = "DefaultPreemption";

/// Prefix the plugin puts in front of every non-empty message (`"preemption: " + msg`).
pub const MESSAGE_PREFIX: &str = "preemption: ";

/// Reason of a node without lower-priority pods (`UnschedulableAndUnresolvable`).
pub const NO_VICTIMS_REASON: &str = "No preemption victims found for incoming pod";

/// Reason reported for every node the dry run did not evaluate.
pub const NOT_HELPFUL_REASON: &str = "Preemption is not helpful for scheduling";

/// Why a pod with `preemptionPolicy: Never` may not preempt.
pub const NOT_ELIGIBLE_NEVER: &str = "not eligible due to preemptionPolicy=Never.";

/// Why a pod whose nominated node still has a lower-priority pod terminating by preemption may
/// not preempt again (`PodEligibleToPreemptOthers`' second rule).
pub const NOT_ELIGIBLE_TERMINATING: &str =
    "not eligible due to a terminating pod on the nominated node.";

/// The outcome of a pod that may not preempt, for `reason` (e.g. [`NOT_ELIGIBLE_TERMINATING`]).
pub fn ineligible(reason: &str) -> PreemptionOutcome {
    PreemptionOutcome::Ineligible { post_filter_msg: prefixed(reason) }
}

/// Error when the cluster has no node at all (`findCandidates`).
pub const NO_NODES_AVAILABLE: &str = "no nodes available";

/// Runs the profile's PreFilter + Filter for `pod` against node `node_idx` of the cluster as if
/// the pods in `removed` (all on that node) were gone. Implemented by the framework runtime.
///
/// The answer is read as upstream reads `RunFilterPluginsWithNominatedPods`: only
/// [`Code::Success`] means the pod fits (map a `Skip` to `Success`); a rejection's reasons are
/// reported in the preemption message when the pod does not fit even with every lower-priority
/// pod removed; [`Code::Error`] is an internal error.
pub trait FilterOracle {
    /// The filter verdict for `pod` on `node_idx` without the pods in `removed`.
    fn filter_without(&self, pod: &Pod, node_idx: usize, removed: &[Arc<Pod>]) -> Status;
}

/// The pods to evict from one node and how many of them violate a PodDisruptionBudget
/// (upstream `extenderv1.Victims`).
#[derive(Debug, Clone, PartialEq)]
pub struct Victims {
    /// Victims, most important first (as upstream orders them).
    pub pods: Vec<Arc<Pod>>,
    /// How many victims violate a PodDisruptionBudget.
    pub num_pdb_violations: i64,
}

/// A node where preemption lets the pod fit, with its victims (upstream `preemption.Candidate`).
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// Index of the node in `cluster.nodes`.
    pub node: usize,
    /// What must be evicted there.
    pub victims: Victims,
}

/// The result of the PostFilter for one pod.
#[derive(Debug, Clone, PartialEq)]
pub enum PreemptionOutcome {
    /// Preemption helps: evict `victims` from `node` and nominate the pod there (status
    /// `Success`, no PostFilter message).
    Preempted {
        /// Index of the nominated node in `cluster.nodes`.
        node: usize,
        /// Pods to evict, most important first.
        victims: Vec<Arc<Pod>>,
        /// How many victims violate a PodDisruptionBudget.
        num_pdb_violations: i64,
    },
    /// The pod may not preempt (status `Unschedulable`), e.g.
    /// `preemption: not eligible due to preemptionPolicy=Never.`
    Ineligible {
        /// The message upstream stores in `Diagnosis.PostFilterMsg`.
        post_filter_msg: String,
    },
    /// No node becomes feasible by preemption (status `Unschedulable`), e.g.
    /// `preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found
    /// for incoming pod.`
    NotPossible {
        /// The message upstream stores in `Diagnosis.PostFilterMsg`.
        post_filter_msg: String,
    },
    /// An internal error (status `Error`), e.g. `preemption: no nodes available`.
    Error {
        /// The message upstream stores in `Diagnosis.PostFilterMsg`.
        post_filter_msg: String,
    },
}

impl PreemptionOutcome {
    /// The message upstream stores in `Diagnosis.PostFilterMsg` (`None` after a preemption: the
    /// status is `Success` and its message empty).
    pub fn post_filter_msg(&self) -> Option<&str> {
        match self {
            PreemptionOutcome::Preempted { .. } => None,
            PreemptionOutcome::Ineligible { post_filter_msg }
            | PreemptionOutcome::NotPossible { post_filter_msg }
            | PreemptionOutcome::Error { post_filter_msg } => Some(post_filter_msg),
        }
    }

    /// The PostFilter status, as `RunPostFilterPlugins` returns it.
    pub fn status(&self) -> Status {
        let status = match self {
            PreemptionOutcome::Preempted { .. } => return Status::success(),
            PreemptionOutcome::Ineligible { post_filter_msg }
            | PreemptionOutcome::NotPossible { post_filter_msg } => {
                Status::unschedulable(post_filter_msg.clone())
            }
            PreemptionOutcome::Error { post_filter_msg } => Status::error(post_filter_msg.clone()),
        };
        status.with_plugin(PLUGIN_NAME)
    }
}

/// DefaultPreemption's PostFilter (upstream `DefaultPreemption.PostFilter` →
/// `Evaluator.Preempt`): decides whether evicting lower-priority pods lets `pod` fit, and where.
///
/// `diagnosis` is the pod's filter diagnosis; `now` is the simulation clock in seconds (the
/// start time of pods that have not started); `rng` draws the dry run's random offset.
pub fn preempt<R: rand::Rng + ?Sized>(
    pod: &Pod,
    cluster: &ClusterState,
    diagnosis: &Diagnosis,
    args: &DefaultPreemptionArgs,
    oracle: &dyn FilterOracle,
    now: i64,
    rng: &mut R,
) -> PreemptionOutcome {
    // 1) Ensure the preemptor is eligible to preempt other pods.
    if let Err(reason) = pod_eligible_to_preempt_others(pod) {
        return PreemptionOutcome::Ineligible { post_filter_msg: prefixed(reason) };
    }

    // 2) Find all preemption candidates.
    let num_all_nodes = cluster.nodes.len();
    if num_all_nodes == 0 {
        return PreemptionOutcome::Error { post_filter_msg: prefixed(NO_NODES_AVAILABLE) };
    }
    let potential = potential_nodes(cluster, diagnosis);
    let dry_run = if potential.is_empty() {
        DryRunResult::default()
    } else {
        let num_nodes = i32::try_from(potential.len()).unwrap_or(i32::MAX);
        let (offset, num_candidates) = get_offset_and_num_candidates(num_nodes, args, rng);
        dry_run_preemption(pod, cluster, &potential, oracle, offset, num_candidates, now)
    };
    if !dry_run.errors.is_empty() && dry_run.candidates.is_empty() {
        return PreemptionOutcome::Error { post_filter_msg: prefixed(&aggregate(&dry_run.errors)) };
    }

    // Return a FitError only when there are no candidates that fit the pod.
    if dry_run.candidates.is_empty() {
        let fit_error = FitError {
            num_all_nodes,
            diagnosis: Diagnosis {
                node_statuses: dry_run.node_statuses,
                absent_nodes_status: Some(Status::unresolvable(NOT_HELPFUL_REASON)),
                ..Diagnosis::default()
            },
        };
        return PreemptionOutcome::NotPossible { post_filter_msg: prefixed(&fit_error.message()) };
    }

    // 3) Extenders are not modelled. 4) Find the best candidate.
    match select_candidate(&dry_run.candidates, now) {
        Some(best) => PreemptionOutcome::Preempted {
            node: best.node,
            victims: best.victims.pods.clone(),
            num_pdb_violations: best.victims.num_pdb_violations,
        },
        // Unreachable with a non-empty candidate list; upstream's wording for the case.
        None => PreemptionOutcome::NotPossible {
            post_filter_msg: prefixed("no candidate node for preemption"),
        },
    }
}

/// [`preempt`]'s outcome when none of the `potential` nodes (those whose filter status is
/// `Unschedulable`) holds a pod of lower priority than `pod`: the dry run visits every one of
/// them, finds no victims, and the message counts them — without visiting any node. Draws the
/// same random offset as [`preempt`], so the generator stays in step.
pub fn preempt_without_victims<R: rand::Rng + ?Sized>(
    pod: &Pod,
    num_all_nodes: usize,
    potential: usize,
    args: &DefaultPreemptionArgs,
    rng: &mut R,
) -> PreemptionOutcome {
    if let Err(reason) = pod_eligible_to_preempt_others(pod) {
        return PreemptionOutcome::Ineligible { post_filter_msg: prefixed(reason) };
    }
    if num_all_nodes == 0 {
        return PreemptionOutcome::Error { post_filter_msg: prefixed(NO_NODES_AVAILABLE) };
    }
    let mut grouped_statuses = Vec::new();
    if potential > 0 {
        let num_nodes = i32::try_from(potential).unwrap_or(i32::MAX);
        let _ = get_offset_and_num_candidates(num_nodes, args, rng);
        grouped_statuses.push((Status::unresolvable(NO_VICTIMS_REASON), potential));
    }
    let fit_error = FitError {
        num_all_nodes,
        diagnosis: Diagnosis {
            grouped_statuses,
            absent_nodes_status: Some(Status::unresolvable(NOT_HELPFUL_REASON)),
            ..Diagnosis::default()
        },
    };
    PreemptionOutcome::NotPossible { post_filter_msg: prefixed(&fit_error.message()) }
}

/// Upstream `PodEligibleToPreemptOthers`: `Err(reason)` when the pod may not preempt.
///
/// The `preemptionPolicy: Never` rule; the "victims still terminating on the nominated node"
/// rule needs the nominations and is checked by the scheduler ([`NOT_ELIGIBLE_TERMINATING`]).
pub fn pod_eligible_to_preempt_others(pod: &Pod) -> Result<(), &'static str> {
    if pod.preemption_policy == PreemptionPolicy::Never {
        return Err(NOT_ELIGIBLE_NEVER);
    }
    Ok(())
}

/// Indices of the nodes whose status in `diagnosis` is `Unschedulable` — the only nodes where
/// removing pods may help (upstream `NodeToStatus.NodesForStatusCode(…, Unschedulable)`). A node
/// without an explicit status takes the absent-nodes status, which defaults to
/// `UnschedulableAndUnresolvable` when the diagnosis has none. In `cluster.nodes` order.
pub fn potential_nodes(cluster: &ClusterState, diagnosis: &Diagnosis) -> Vec<usize> {
    (0..cluster.nodes.len())
        .filter(|&i| diagnosis.status_of(i).is_some_and(|s| s.code == Code::Unschedulable))
        .collect()
}

/// Upstream `calculateNumCandidates`: how many candidates the dry run must find among
/// `num_nodes` potential nodes — `num_nodes * minCandidateNodesPercentage / 100`, at least
/// `minCandidateNodesAbsolute`, at most `num_nodes` (int32 arithmetic, as upstream).
pub fn calculate_num_candidates(num_nodes: i32, args: &DefaultPreemptionArgs) -> i32 {
    let mut n = num_nodes.wrapping_mul(args.min_candidate_nodes_percentage) / 100;
    if n < args.min_candidate_nodes_absolute {
        n = args.min_candidate_nodes_absolute;
    }
    if n > num_nodes {
        n = num_nodes;
    }
    n
}

/// Upstream `GetOffsetAndNumCandidates`: a random offset in `[0, num_nodes)` where the dry run
/// starts, and the number of candidates to find.
pub fn get_offset_and_num_candidates<R: rand::Rng + ?Sized>(
    num_nodes: i32,
    args: &DefaultPreemptionArgs,
    rng: &mut R,
) -> (i32, i32) {
    (go_int31n(rng, num_nodes), calculate_num_candidates(num_nodes, args))
}

/// Go's `Rand.Int31n(n)` over `rng`: a uniform integer in `[0, n)`, drawn with Go's algorithm
/// (mask for powers of two, rejection sampling otherwise) from `Int31() = Int63() >> 32`, where
/// `Int63()` is the top 63 bits of `rng.next_u64()`. Returns 0 for `n <= 0` (Go panics).
pub fn go_int31n<R: rand::Rng + ?Sized>(rng: &mut R, n: i32) -> i32 {
    if n <= 0 {
        return 0;
    }
    // Int63 = next_u64 >> 1, Int31 = Int63 >> 32: the top 31 bits, always in [0, 2^31).
    let mut int31 = || i32::try_from(rng.next_u64() >> 33).unwrap_or(0);
    if n & (n - 1) == 0 {
        return int31() & (n - 1);
    }
    let n_u = n.unsigned_abs();
    let max = i32::try_from((1u32 << 31) - 1 - (1u32 << 31) % n_u).unwrap_or(i32::MAX);
    let mut v = int31();
    while v > max {
        v = int31();
    }
    v % n
}

/// What the dry run found (upstream `DryRunPreemption`'s three results).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DryRunResult {
    /// Candidates: those violating no PodDisruptionBudget first, then the others, each group in
    /// visiting order and capped at the requested number.
    pub candidates: Vec<Candidate>,
    /// Why each evaluated node that is not a candidate was rejected, by node index.
    pub node_statuses: BTreeMap<usize, Status>,
    /// Internal errors met on the way, in visiting order.
    pub errors: Vec<String>,
}

/// Upstream `DryRunPreemption`, run sequentially: visits `potential[(offset + i) % n]` for
/// `i = 0, 1, …`, selects victims on each node, and stops once at least one candidate violates
/// no PodDisruptionBudget and the two groups together hold `num_candidates` candidates. Each
/// group keeps at most `num_candidates` candidates; later ones are dropped, as upstream's
/// fixed-size candidate lists drop them.
pub fn dry_run_preemption(
    pod: &Pod,
    cluster: &ClusterState,
    potential: &[usize],
    oracle: &dyn FilterOracle,
    offset: i32,
    num_candidates: i32,
    now: i64,
) -> DryRunResult {
    let mut result = DryRunResult::default();
    let n = potential.len();
    if n == 0 {
        return result;
    }
    let cap = usize::try_from(num_candidates).unwrap_or(0);
    let start = usize::try_from(offset).unwrap_or(0);
    let mut non_violating: Vec<Candidate> = Vec::new();
    let mut violating: Vec<Candidate> = Vec::new();
    for i in 0..n {
        let Some(&node_idx) = potential.get((start + i) % n) else { continue };
        let status = match select_victims_on_node(pod, cluster, node_idx, oracle, now) {
            Ok(victims) if !victims.pods.is_empty() => {
                let list = if victims.num_pdb_violations == 0 {
                    &mut non_violating
                } else {
                    &mut violating
                };
                if list.len() < cap {
                    list.push(Candidate { node: node_idx, victims });
                }
                if !non_violating.is_empty() && non_violating.len() + violating.len() >= cap {
                    break;
                }
                continue;
            }
            Ok(_) => {
                let name = cluster.nodes.get(node_idx).map_or("", |node| node.name.as_str());
                Status::error(format!(
                    "expected at least one victim pod on node {}",
                    go_quote(name)
                ))
            }
            Err(status) => status,
        };
        if status.code == Code::Error {
            result.errors.push(status.to_string());
        }
        result.node_statuses.insert(node_idx, status);
    }
    result.candidates = non_violating;
    result.candidates.append(&mut violating);
    result
}

/// Upstream `SelectVictimsOnNode`: the minimal set of lower-priority pods to evict from node
/// `node_idx` so that `pod` fits, or the status explaining why it cannot fit there.
///
/// Removes every pod of lower priority, checks the pod fits, then tries to keep ("reprieve")
/// them one by one — first those whose eviction would violate a PodDisruptionBudget, then the
/// others, each group most important first ([`more_important_pod`]) — keeping a pod whenever the
/// pod still fits with it. `Ok` with no victims means the pod fits without evicting anyone.
pub fn select_victims_on_node(
    pod: &Pod,
    cluster: &ClusterState,
    node_idx: usize,
    oracle: &dyn FilterOracle,
    now: i64,
) -> Result<Victims, Status> {
    let Some(node) = cluster.nodes.get(node_idx) else {
        return Err(Status::error(format!("node index {node_idx} is not in the cluster")));
    };
    // As the first step, remove all pods eligible for preemption from the node and check if the
    // given pod can be scheduled without them present.
    let mut potential: Vec<Arc<Pod>> =
        node.pods.iter().filter(|p| p.priority < pod.priority).cloned().collect();
    if potential.is_empty() {
        return Err(Status::unresolvable(NO_VICTIMS_REASON));
    }
    let status = oracle.filter_without(pod, node_idx, &potential);
    if !status.is_success() {
        return Err(status);
    }

    // Sort by descending importance, which ensures reprieve of higher importance pods first.
    go_sort::sort_slice(&mut potential, |a, b| more_important_pod(a, b, now));
    let (violating, non_violating) = filter_pods_with_pdb_violation(&potential, &cluster.pdbs);

    // Pods currently absent from the node: every potential victim not reprieved so far.
    let mut removed: Vec<Arc<Pod>> = potential;
    let mut victims: Vec<Arc<Pod>> = Vec::new();
    let mut num_violating: i64 = 0;
    let mut reprieve = |candidate: &Arc<Pod>, victims: &mut Vec<Arc<Pod>>| -> bool {
        removed.retain(|p| !Arc::ptr_eq(p, candidate));
        let fits = oracle.filter_without(pod, node_idx, &removed).is_success();
        if !fits {
            removed.push(Arc::clone(candidate));
            victims.push(Arc::clone(candidate));
        }
        fits
    };
    for p in &violating {
        if !reprieve(p, &mut victims) {
            num_violating += 1;
        }
    }
    for p in &non_violating {
        reprieve(p, &mut victims);
    }

    // Keep the victims ordered from the most to the least important.
    if !violating.is_empty() && !non_violating.is_empty() {
        go_sort::sort_slice(&mut victims, |a, b| more_important_pod(a, b, now));
    }
    Ok(Victims { pods: victims, num_pdb_violations: num_violating })
}

/// Upstream `filterPodsWithPDBViolation`: splits `pods` (in order) into those whose eviction
/// would violate a PodDisruptionBudget and the others.
///
/// Each budget's `disruptionsAllowed` is decremented for every pod it selects, in order; a pod
/// violates once some selecting budget goes below zero. A budget selects a pod in its namespace
/// whose labels match its selector, unless the pod is listed in its `disruptedPods`; a budget
/// with a missing or empty selector selects nothing, and a pod without labels is never selected.
pub fn filter_pods_with_pdb_violation(
    pods: &[Arc<Pod>],
    pdbs: &[Pdb],
) -> (Vec<Arc<Pod>>, Vec<Arc<Pod>>) {
    let mut allowed: Vec<i32> = pdbs.iter().map(|pdb| pdb.disruptions_allowed).collect();
    let mut violating = Vec::new();
    let mut non_violating = Vec::new();
    for pod in pods {
        let mut violated = false;
        if !pod.labels.is_empty() {
            for (pdb, left) in pdbs.iter().zip(allowed.iter_mut()) {
                if pdb.namespace != pod.namespace {
                    continue;
                }
                let Some(selector) = pdb.selector.as_ref() else { continue };
                if selector.is_empty() || !selector.matches(&pod.labels) {
                    continue;
                }
                // Already being disrupted: processed by the API server, not a violation.
                if pdb.disrupted_pods.iter().any(|name| *name == pod.name) {
                    continue;
                }
                *left = left.wrapping_sub(1);
                if *left < 0 {
                    violated = true;
                }
            }
        }
        if violated {
            violating.push(Arc::clone(pod));
        } else {
            non_violating.push(Arc::clone(pod));
        }
    }
    (violating, non_violating)
}

/// Upstream `util.GetPodStartTime`: `status.startTime`, or `now` for a pod that has not started.
pub fn pod_start_time(pod: &Pod, now: i64) -> i64 {
    pod.start_time.unwrap_or(now)
}

/// Upstream `util.MoreImportantPod`: higher priority first; on equal priority the pod that
/// started earlier is more important.
pub fn more_important_pod(p1: &Pod, p2: &Pod, now: i64) -> bool {
    if p1.priority != p2.priority {
        return p1.priority > p2.priority;
    }
    pod_start_time(p1, now) < pod_start_time(p2, now)
}

/// Upstream `util.GetEarliestPodStartTime`: the earliest start time among the victims of the
/// highest priority (`None` when there are no victims).
pub fn earliest_pod_start_time(victims: &[Arc<Pod>], now: i64) -> Option<i64> {
    let first = victims.first()?;
    let mut earliest = pod_start_time(first, now);
    let mut max_priority = first.priority;
    for pod in victims {
        if pod.priority == max_priority {
            earliest = earliest.min(pod_start_time(pod, now));
        } else if pod.priority > max_priority {
            max_priority = pod.priority;
            earliest = pod_start_time(pod, now);
        }
    }
    Some(earliest)
}

/// Upstream `Evaluator.SelectCandidate`: the candidate to nominate (`None` when there is none).
pub fn select_candidate(candidates: &[Candidate], now: i64) -> Option<&Candidate> {
    if candidates.len() <= 1 {
        return candidates.first();
    }
    pick_one_node_for_preemption(candidates, now).and_then(|i| candidates.get(i))
}

/// Upstream `pickOneNodeForPreemption` with the default score functions: the index in
/// `candidates` of the best node. Each criterion keeps the best-scoring candidates and the next
/// one breaks ties among them:
///
/// 1. fewest PodDisruptionBudget violations;
/// 2. lowest priority of the most important victim;
/// 3. smallest sum of victim priorities, each shifted by `MaxInt32 + 1` so that more victims
///    never sum lower;
/// 4. fewest victims;
/// 5. latest start time of the earliest-started victim of the highest priority;
/// 6. the first remaining candidate (upstream: the first in Go map order, i.e. random).
///
/// Victims must be ordered most important first, as [`select_victims_on_node`] returns them.
pub fn pick_one_node_for_preemption(candidates: &[Candidate], now: i64) -> Option<usize> {
    if candidates.is_empty() {
        return None;
    }
    let score_funcs: [&dyn Fn(&Victims) -> i64; 5] = [
        // A node with a minimum number of PDB violations is preferable.
        &|v| v.num_pdb_violations.wrapping_neg(),
        // A node with a minimum highest priority victim is preferable.
        &|v| v.pods.first().map_or(0, |p| -i64::from(p.priority)),
        // A node with the smallest sum of (shifted) priorities is preferable.
        &|v| {
            let sum = v.pods.iter().fold(0i64, |acc, p| {
                acc.wrapping_add(i64::from(p.priority) + i64::from(i32::MAX) + 1)
            });
            sum.wrapping_neg()
        },
        // A node with the minimum number of victims is preferable.
        &|v| -i64::try_from(v.pods.len()).unwrap_or(i64::MAX),
        // A node with the latest start time of all highest priority victims is preferable.
        &|v| earliest_pod_start_time(&v.pods, now).unwrap_or(i64::MIN),
    ];
    let mut remaining: Vec<usize> = (0..candidates.len()).collect();
    for score in score_funcs {
        let mut selected: Vec<usize> = Vec::new();
        let mut max_score = i64::MIN;
        for &i in &remaining {
            let Some(candidate) = candidates.get(i) else { continue };
            let s = score(&candidate.victims);
            if s > max_score {
                max_score = s;
                selected.clear();
            }
            if s == max_score {
                selected.push(i);
            }
        }
        if selected.len() == 1 {
            return selected.first().copied();
        }
        remaining = selected;
    }
    remaining.first().copied()
}

/// `"preemption: " + msg`, as `DefaultPreemption.PostFilter` wraps every non-empty message.
fn prefixed(msg: &str) -> String {
    format!("{MESSAGE_PREFIX}{msg}")
}

/// The message of Go's `utilerrors.NewAggregate(errs).Error()`: the single message, or the
/// distinct messages joined by `, ` in brackets.
fn aggregate(errors: &[String]) -> String {
    if let [only] = errors {
        return only.clone();
    }
    let mut seen = BTreeSet::new();
    let mut distinct: Vec<&str> = Vec::new();
    for e in errors {
        if seen.insert(e.as_str()) {
            distinct.push(e);
        }
    }
    if distinct.len() == 1 {
        return distinct.concat();
    }
    format!("[{}]", distinct.join(", "))
}

/// Go's `%q` for a node name (a DNS subdomain, so only `"` and `\` need escaping).
fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// A port of Go's `sort.Slice` (`pdqsort_func` in `src/sort/zsortfunc.go`, Go 1.24+): the same
/// comparisons and swaps in the same order, so elements that tie end where Go leaves them.
mod go_sort {
    /// The xorshift shifts of `breakPatterns` since Go 1.24 (golang/go#70144 corrected them);
    /// kube-scheduler v1.35 is built with Go 1.25.
    pub(super) const XORSHIFT_SHIFTS: (u32, u32, u32) = (13, 7, 17);

    /// Sorts `data` ascending by `less`, exactly as Go's `sort.Slice(data, less)`.
    pub(super) fn sort_slice<T>(data: &mut [T], less: impl Fn(&T, &T) -> bool) {
        sort_slice_with_shifts(data, &less, XORSHIFT_SHIFTS);
    }

    /// [`sort_slice`] with the xorshift shifts of a given Go release.
    pub(super) fn sort_slice_with_shifts<T, F: Fn(&T, &T) -> bool>(
        data: &mut [T],
        less: &F,
        shifts: (u32, u32, u32),
    ) {
        let n = data.len();
        // bits.Len(uint(n)).
        let limit = usize::BITS - n.leading_zeros();
        let Ok(b) = isize::try_from(n) else { return };
        let mut sorter = Sorter { data, less, shifts };
        sorter.pdqsort(0, b, limit);
    }

    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Hint {
        Unknown,
        Increasing,
        Decreasing,
    }

    struct Sorter<'a, T, F> {
        data: &'a mut [T],
        less: &'a F,
        shifts: (u32, u32, u32),
    }

    impl<T, F: Fn(&T, &T) -> bool> Sorter<'_, T, F> {
        // Indices stay within [0, len) by construction of the algorithm (Go's own bounds).
        fn less(&self, i: isize, j: isize) -> bool {
            match (self.data.get(i as usize), self.data.get(j as usize)) {
                (Some(x), Some(y)) => (self.less)(x, y),
                _ => false,
            }
        }

        fn swap(&mut self, i: isize, j: isize) {
            let len = self.data.len() as isize;
            if (0..len).contains(&i) && (0..len).contains(&j) {
                self.data.swap(i as usize, j as usize);
            }
        }

        fn insertion_sort(&mut self, a: isize, b: isize) {
            for i in a + 1..b {
                let mut j = i;
                while j > a && self.less(j, j - 1) {
                    self.swap(j, j - 1);
                    j -= 1;
                }
            }
        }

        fn sift_down(&mut self, lo: isize, hi: isize, first: isize) {
            let mut root = lo;
            loop {
                let mut child = 2 * root + 1;
                if child >= hi {
                    return;
                }
                if child + 1 < hi && self.less(first + child, first + child + 1) {
                    child += 1;
                }
                if !self.less(first + root, first + child) {
                    return;
                }
                self.swap(first + root, first + child);
                root = child;
            }
        }

        fn heap_sort(&mut self, a: isize, b: isize) {
            let first = a;
            let lo = 0;
            let hi = b - a;
            let mut i = (hi - 1) / 2;
            while i >= 0 {
                self.sift_down(i, hi, first);
                i -= 1;
            }
            let mut i = hi - 1;
            while i >= 0 {
                self.swap(first, first + i);
                self.sift_down(lo, i, first);
                i -= 1;
            }
        }

        fn pdqsort(&mut self, mut a: isize, mut b: isize, mut limit: u32) {
            const MAX_INSERTION: isize = 12;
            let mut was_balanced = true;
            let mut was_partitioned = true;
            loop {
                let length = b - a;
                if length <= MAX_INSERTION {
                    self.insertion_sort(a, b);
                    return;
                }
                // Fall back to heapsort if too many bad choices were made.
                if limit == 0 {
                    self.heap_sort(a, b);
                    return;
                }
                // If the last partitioning was imbalanced, break patterns.
                if !was_balanced {
                    self.break_patterns(a, b);
                    limit -= 1;
                }
                let (mut pivot, mut hint) = self.choose_pivot(a, b);
                if hint == Hint::Decreasing {
                    self.reverse_range(a, b);
                    pivot = (b - 1) - (pivot - a);
                    hint = Hint::Increasing;
                }
                // The slice is likely already sorted.
                if was_balanced
                    && was_partitioned
                    && hint == Hint::Increasing
                    && self.partial_insertion_sort(a, b)
                {
                    return;
                }
                // Probably many duplicates: put the elements equal to the pivot first.
                if a > 0 && !self.less(a - 1, pivot) {
                    a = self.partition_equal(a, b, pivot);
                    continue;
                }
                let (mid, already_partitioned) = self.partition(a, b, pivot);
                was_partitioned = already_partitioned;
                let (left_len, right_len) = (mid - a, b - mid);
                let balance_threshold = length / 8;
                if left_len < right_len {
                    was_balanced = left_len >= balance_threshold;
                    self.pdqsort(a, mid, limit);
                    a = mid + 1;
                } else {
                    was_balanced = right_len >= balance_threshold;
                    self.pdqsort(mid + 1, b, limit);
                    b = mid;
                }
            }
        }

        fn partition(&mut self, a: isize, b: isize, pivot: isize) -> (isize, bool) {
            self.swap(a, pivot);
            let (mut i, mut j) = (a + 1, b - 1);
            while i <= j && self.less(i, a) {
                i += 1;
            }
            while i <= j && !self.less(j, a) {
                j -= 1;
            }
            if i > j {
                self.swap(j, a);
                return (j, true);
            }
            self.swap(i, j);
            i += 1;
            j -= 1;
            loop {
                while i <= j && self.less(i, a) {
                    i += 1;
                }
                while i <= j && !self.less(j, a) {
                    j -= 1;
                }
                if i > j {
                    break;
                }
                self.swap(i, j);
                i += 1;
                j -= 1;
            }
            self.swap(j, a);
            (j, false)
        }

        fn partition_equal(&mut self, a: isize, b: isize, pivot: isize) -> isize {
            self.swap(a, pivot);
            let (mut i, mut j) = (a + 1, b - 1);
            loop {
                while i <= j && !self.less(a, i) {
                    i += 1;
                }
                while i <= j && self.less(a, j) {
                    j -= 1;
                }
                if i > j {
                    break;
                }
                self.swap(i, j);
                i += 1;
                j -= 1;
            }
            i
        }

        fn partial_insertion_sort(&mut self, a: isize, b: isize) -> bool {
            const MAX_STEPS: usize = 5;
            const SHORTEST_SHIFTING: isize = 50;
            let mut i = a + 1;
            for _ in 0..MAX_STEPS {
                while i < b && !self.less(i, i - 1) {
                    i += 1;
                }
                if i == b {
                    return true;
                }
                if b - a < SHORTEST_SHIFTING {
                    return false;
                }
                self.swap(i, i - 1);
                // Shift the smaller one to the left (Go stops at index 1, not at a + 1).
                if i - a >= 2 {
                    let mut j = i - 1;
                    while j >= 1 {
                        if !self.less(j, j - 1) {
                            break;
                        }
                        self.swap(j, j - 1);
                        j -= 1;
                    }
                }
                // Shift the greater one to the right.
                if b - i >= 2 {
                    let mut j = i + 1;
                    while j < b {
                        if !self.less(j, j - 1) {
                            break;
                        }
                        self.swap(j, j - 1);
                        j += 1;
                    }
                }
            }
            false
        }

        fn break_patterns(&mut self, a: isize, b: isize) {
            let length = b - a;
            if length >= 8 {
                let (s1, s2, s3) = self.shifts;
                let mut random = length as u64;
                // nextPowerOfTwo(length) = 1 << bits.Len(uint(length)).
                let modulus = 1u64 << (u64::BITS - (length as u64).leading_zeros());
                let mut idx = a + (length / 4) * 2 - 1;
                while idx <= a + (length / 4) * 2 + 1 {
                    random ^= random << s1;
                    random ^= random >> s2;
                    random ^= random << s3;
                    let mut other = (random & (modulus - 1)) as isize;
                    if other >= length {
                        other -= length;
                    }
                    self.swap(idx, a + other);
                    idx += 1;
                }
            }
        }

        fn choose_pivot(&mut self, a: isize, b: isize) -> (isize, Hint) {
            const SHORTEST_NINTHER: isize = 50;
            const MAX_SWAPS: usize = 4 * 3;
            let l = b - a;
            let mut swaps = 0usize;
            let mut i = a + l / 4;
            let mut j = a + l / 4 * 2;
            let mut k = a + l / 4 * 3;
            if l >= 8 {
                if l >= SHORTEST_NINTHER {
                    // Tukey's ninther.
                    i = self.median(i - 1, i, i + 1, &mut swaps);
                    j = self.median(j - 1, j, j + 1, &mut swaps);
                    k = self.median(k - 1, k, k + 1, &mut swaps);
                }
                j = self.median(i, j, k, &mut swaps);
            }
            match swaps {
                0 => (j, Hint::Increasing),
                MAX_SWAPS => (j, Hint::Decreasing),
                _ => (j, Hint::Unknown),
            }
        }

        fn order2(&self, a: isize, b: isize, swaps: &mut usize) -> (isize, isize) {
            if self.less(b, a) {
                *swaps += 1;
                return (b, a);
            }
            (a, b)
        }

        fn median(&self, a: isize, b: isize, c: isize, swaps: &mut usize) -> isize {
            let (a, b) = self.order2(a, b, swaps);
            let (b, _c) = self.order2(b, c, swaps);
            let (_a, b) = self.order2(a, b, swaps);
            b
        }

        fn reverse_range(&mut self, a: isize, b: isize) {
            let (mut i, mut j) = (a, b - 1);
            while i < j {
                self.swap(i, j);
                i += 1;
                j -= 1;
            }
        }
    }
}

#[cfg(test)]
mod tests;
