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
mod tests {
    use std::collections::BTreeSet;
    use std::convert::Infallible;

    use super::*;
    use crate::model::testing::{NodeBuilder, PodBuilder, cluster};
    use crate::model::{LabelSelector, MatchOp, Node, PodAffinityTerm, Requirement};

    /// The simulation clock used by the tests (seconds).
    const NOW: i64 = 1_000_000;

    // Upstream's test priorities.
    const NEG: i32 = -100;
    const LOW: i32 = 0;
    const MID: i32 = 100;
    const HIGH: i32 = 1000;
    const VERY_HIGH: i32 = 10000;

    // Upstream's test requests: (millicores, bytes of memory).
    const NONE: (i64, i64) = (0, 0);
    const SMALL: (i64, i64) = (100, 100);
    const MEDIUM: (i64, i64) = (200, 200);
    const LARGE: (i64, i64) = (300, 300);
    const VERY_LARGE: (i64, i64) = (500, 500);

    /// A pod in namespace `default` with a priority and requests.
    fn pod(name: &str, priority: i32, res: (i64, i64)) -> PodBuilder {
        PodBuilder::new("default", name).priority(priority).cpu(res.0).memory(res.1)
    }

    /// A node with the given allocatable CPU and memory (and 110 pods).
    fn node(name: &str, res: (i64, i64)) -> NodeBuilder {
        NodeBuilder::new(name).cpu(res.0).memory(res.1)
    }

    /// Upstream's `onePodRes` node: room for one pod, no CPU or memory.
    fn one_pod_node(name: &str) -> Node {
        NodeBuilder::new(name).pods(1).obj()
    }

    fn pdb(name: &str, labels: &[(&str, &str)], allowed: i32, disrupted: &[&str]) -> Pdb {
        Pdb {
            namespace: "default".to_string(),
            name: name.to_string(),
            selector: Some(LabelSelector::from_match_labels(labels.iter().copied())),
            disruptions_allowed: allowed,
            disrupted_pods: disrupted.iter().map(|s| (*s).to_string()).collect(),
        }
    }

    /// A required anti-affinity term against pods having label `key` (upstream
    /// `PodAntiAffinityExists(key, "hostname", …)`).
    fn anti_affinity_exists(key: &str) -> PodAffinityTerm {
        PodAffinityTerm {
            label_selector: Some(LabelSelector {
                requirements: vec![Requirement::new(key, MatchOp::Exists, &[])],
            }),
            namespaces: Vec::new(),
            namespace_selector: None,
            topology_key: "kubernetes.io/hostname".to_string(),
            match_label_keys: Vec::new(),
            mismatch_label_keys: Vec::new(),
        }
    }

    /// The filters of the tests: NodeResourcesFit's pod-count, CPU and memory checks (with
    /// upstream's reasons), optionally existing pods' required anti-affinity against the
    /// incoming pod on the same node, and nodes that answer an internal error (upstream's
    /// `TestPlugin` on nodes labelled `error=true`).
    struct TestOracle<'a> {
        cluster: &'a ClusterState,
        anti_affinity: bool,
        error_nodes: BTreeSet<usize>,
    }

    impl<'a> TestOracle<'a> {
        fn resources(cluster: &'a ClusterState) -> Self {
            TestOracle { cluster, anti_affinity: false, error_nodes: BTreeSet::new() }
        }
    }

    impl FilterOracle for TestOracle<'_> {
        fn filter_without(&self, pod: &Pod, node_idx: usize, removed: &[Arc<Pod>]) -> Status {
            if self.error_nodes.contains(&node_idx) {
                return Status::error(format!(
                    "running RemovePod on PreFilter plugin \"test-plugin\": failed to remove pod: {}",
                    pod.name
                ));
            }
            let Some(node) = self.cluster.nodes.get(node_idx) else {
                return Status::error("no such node");
            };
            let remaining: Vec<&Arc<Pod>> =
                node.pods.iter().filter(|p| !removed.iter().any(|r| Arc::ptr_eq(p, r))).collect();
            if self.anti_affinity
                && remaining.iter().any(|p| {
                    p.pod_anti_affinity.required.iter().any(|term| {
                        term.label_selector.as_ref().is_some_and(|s| s.matches(&pod.labels))
                    })
                })
            {
                return Status::unschedulable("node(s) didn't match pod anti-affinity rules");
            }
            let mut reasons = Vec::new();
            let count = i64::try_from(remaining.len()).unwrap_or(i64::MAX);
            if count + 1 > node.allocatable.allowed_pod_number {
                reasons.push("Too many pods");
            }
            let cpu: i64 = remaining.iter().map(|p| p.requests.milli_cpu).sum();
            let memory: i64 = remaining.iter().map(|p| p.requests.memory).sum();
            if pod.requests.milli_cpu > 0
                && pod.requests.milli_cpu > node.allocatable.milli_cpu - cpu
            {
                reasons.push("Insufficient cpu");
            }
            if pod.requests.memory > 0 && pod.requests.memory > node.allocatable.memory - memory {
                reasons.push("Insufficient memory");
            }
            if reasons.is_empty() {
                Status::success()
            } else {
                Status::new(Code::Unschedulable, reasons)
            }
        }
    }

    /// A generator replaying fixed 64-bit draws (cycling), to pin the dry run's offset.
    struct ScriptedRng {
        draws: Vec<u64>,
        next: usize,
    }

    impl rand::TryRng for ScriptedRng {
        type Error = Infallible;

        fn try_next_u32(&mut self) -> Result<u32, Infallible> {
            Ok((self.try_next_u64()? >> 32) as u32)
        }

        fn try_next_u64(&mut self) -> Result<u64, Infallible> {
            let v = if self.draws.is_empty() {
                0
            } else {
                self.draws.get(self.next % self.draws.len()).copied().unwrap_or(0)
            };
            self.next += 1;
            Ok(v)
        }

        fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
            dst.fill(0);
            Ok(())
        }
    }

    /// 64-bit draws whose `Int31()` values are `values`.
    fn int31_draws(values: &[u64]) -> ScriptedRng {
        ScriptedRng { draws: values.iter().map(|v| v << 33).collect(), next: 0 }
    }

    /// A generator whose first `Int31n(n)` is `offset` for any `n > offset`.
    fn offset_rng(offset: u64) -> ScriptedRng {
        int31_draws(&[offset])
    }

    fn status_without_reasons(code: Code) -> Status {
        Status::new(code, std::iter::empty::<String>())
    }

    /// A diagnosis with explicit statuses by node index and an absent-nodes status.
    fn diagnosis(explicit: &[(usize, Code)], absent: Option<Code>) -> Diagnosis {
        let mut d = Diagnosis::default();
        for &(i, code) in explicit {
            d.node_statuses.insert(i, status_without_reasons(code));
        }
        d.absent_nodes_status = absent.map(status_without_reasons);
        d
    }

    /// Every node of a `n`-node cluster rejected the pod as `Unschedulable`.
    fn all_unschedulable(n: usize) -> Diagnosis {
        let explicit: Vec<(usize, Code)> = (0..n).map(|i| (i, Code::Unschedulable)).collect();
        diagnosis(&explicit, None)
    }

    fn names(pods: &[Arc<Pod>]) -> Vec<String> {
        pods.iter().map(|p| p.name.clone()).collect()
    }

    /// One line describing an outcome, for table comparisons.
    fn summary(outcome: &PreemptionOutcome, cluster: &ClusterState) -> String {
        match outcome {
            PreemptionOutcome::Preempted { node, victims, num_pdb_violations } => {
                let node = cluster.nodes.get(*node).map_or("?", |n| n.name.as_str());
                format!(
                    "preempted on {node}: {} ({num_pdb_violations} PDB violations)",
                    names(victims).join(",")
                )
            }
            PreemptionOutcome::Ineligible { post_filter_msg } => {
                format!("ineligible: {post_filter_msg}")
            }
            PreemptionOutcome::NotPossible { post_filter_msg } => {
                format!("not possible: {post_filter_msg}")
            }
            PreemptionOutcome::Error { post_filter_msg } => format!("error: {post_filter_msg}"),
        }
    }

    struct PreemptCase {
        name: &'static str,
        pod: Pod,
        pods: Vec<Pod>,
        nodes: Vec<Node>,
        pdbs: Vec<Pdb>,
        diagnosis: Option<Diagnosis>,
        args: DefaultPreemptionArgs,
        error_nodes: Vec<usize>,
        offset: u64,
        want: &'static str,
    }

    impl Default for PreemptCase {
        fn default() -> Self {
            PreemptCase {
                name: "",
                pod: pod("p", HIGH, NONE).obj(),
                pods: Vec::new(),
                nodes: Vec::new(),
                pdbs: Vec::new(),
                diagnosis: None,
                args: DefaultPreemptionArgs::default(),
                error_nodes: Vec::new(),
                offset: 0,
                want: "",
            }
        }
    }

    /// Nodes `node1..=noden` with upstream's `veryLargeRes` capacity.
    fn very_large_nodes(n: usize) -> Vec<Node> {
        (1..=n).map(|i| node(&format!("node{i}"), VERY_LARGE).obj()).collect()
    }

    #[test]
    fn preempt_reproduces_upstream_outcomes_and_messages() {
        let non_violating = ("test.kubernetes.io/is-violating-pdb", "non-violating");
        let violating = ("test.kubernetes.io/is-violating-pdb", "violating");
        let node_res = (200, 400);
        let cases = vec![
            PreemptCase {
                name: "a pod with preemptionPolicy Never is not eligible",
                pod: pod("p", HIGH, NONE).preemption_never().obj(),
                pods: vec![pod("p1", LOW, NONE).node("node1").obj()],
                nodes: vec![one_pod_node("node1")],
                want: "ineligible: preemption: not eligible due to preemptionPolicy=Never.",
                ..Default::default()
            },
            PreemptCase {
                name: "a pod with higher priority can be made schedulable",
                pods: vec![pod("p1", LOW, NONE).node("node1").obj()],
                nodes: vec![one_pod_node("node1")],
                want: "preempted on node1: p1 (0 PDB violations)",
                ..Default::default()
            },
            PreemptCase {
                name: "a pod with tied priority is still unschedulable",
                pod: pod("p", LOW, NONE).obj(),
                pods: vec![pod("p1", LOW, NONE).node("node1").obj()],
                nodes: vec![one_pod_node("node1")],
                want: "not possible: preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
                ..Default::default()
            },
            PreemptCase {
                name: "preemption respects a node's UnschedulableAndUnresolvable status",
                pods: vec![pod("p1", LOW, NONE).node("node1").obj()],
                nodes: vec![one_pod_node("node1")],
                diagnosis: Some(diagnosis(&[(0, Code::UnschedulableAndUnresolvable)], None)),
                want: "not possible: preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
                ..Default::default()
            },
            PreemptCase {
                name: "a node absent from the diagnosis counts as UnschedulableAndUnresolvable",
                pods: vec![pod("p1", LOW, NONE).node("node1").obj()],
                nodes: vec![one_pod_node("node1")],
                diagnosis: Some(Diagnosis::default()),
                want: "not possible: preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
                ..Default::default()
            },
            PreemptCase {
                name: "absent nodes with an Unschedulable absent-nodes status are candidates",
                pods: vec![pod("p1", LOW, NONE).node("node1").obj()],
                nodes: vec![one_pod_node("node1")],
                diagnosis: Some(diagnosis(&[], Some(Code::Unschedulable))),
                want: "preempted on node1: p1 (0 PDB violations)",
                ..Default::default()
            },
            PreemptCase {
                name: "pod can be made schedulable on one node",
                pod: pod("p", MID, NONE).obj(),
                pods: vec![
                    pod("p1", HIGH, NONE).node("node1").obj(),
                    pod("p2", LOW, NONE).node("node2").obj(),
                ],
                nodes: vec![one_pod_node("node1"), one_pod_node("node2")],
                want: "preempted on node2: p2 (0 PDB violations)",
                ..Default::default()
            },
            PreemptCase {
                name: "with equal PDB violations the node with the lower highest-priority victim is picked",
                pod: pod("p", VERY_HIGH, NONE).obj(),
                pods: vec![
                    pod("p1", HIGH, NONE)
                        .label(non_violating.0, non_violating.1)
                        .node("node1")
                        .obj(),
                    pod("p2", LOW, NONE).label(violating.0, violating.1).node("node1").obj(),
                    pod("p3", MID, NONE).label(violating.0, violating.1).node("node2").obj(),
                ],
                nodes: vec![one_pod_node("node1"), one_pod_node("node2")],
                pdbs: vec![
                    pdb("violating-pdb", &[violating], 0, &[]),
                    pdb("non-violating-pdb", &[non_violating], i32::MAX, &[]),
                ],
                want: "preempted on node2: p3 (1 PDB violations)",
                ..Default::default()
            },
            PreemptCase {
                name: "no candidate when removing the lower-priority pods leaves too little cpu",
                pod: pod("p", HIGH, LARGE).obj(),
                pods: vec![
                    pod("p1", LOW, NONE).node("node1").obj(),
                    pod("p2", LOW, NONE).node("node2").obj(),
                ],
                nodes: vec![node("node1", node_res).obj(), node("node2", node_res).obj()],
                want: "not possible: preemption: 0/2 nodes are available: 2 Insufficient cpu.",
                ..Default::default()
            },
            PreemptCase {
                name: "no candidate with mixed reasons: no lower-priority pod and too little cpu",
                pod: pod("p", HIGH, LARGE).obj(),
                pods: vec![
                    pod("p1", HIGH, NONE).node("node1").obj(),
                    pod("p2", LOW, NONE).node("node2").obj(),
                    pod("p3", HIGH, NONE).node("node3").obj(),
                ],
                nodes: vec![
                    one_pod_node("node1"),
                    node("node2", node_res).obj(),
                    one_pod_node("node3"),
                ],
                want: "not possible: preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found for incoming pod.",
                ..Default::default()
            },
            PreemptCase {
                name: "nodes not evaluated by the dry run count as not helpful",
                pod: pod("p", HIGH, LARGE).obj(),
                pods: vec![
                    pod("p1", LOW, NONE).node("node1").obj(),
                    pod("p2", LOW, NONE).node("node2").obj(),
                ],
                nodes: (1..=4).map(|i| node(&format!("node{i}"), node_res).obj()).collect(),
                diagnosis: Some(diagnosis(
                    &[
                        (0, Code::Unschedulable),
                        (1, Code::Unschedulable),
                        (3, Code::UnschedulableAndUnresolvable),
                    ],
                    None,
                )),
                want: "not possible: preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for scheduling.",
                ..Default::default()
            },
            PreemptCase {
                name: "an internal error on the only node is reported as an error",
                pod: pod("p", HIGH, LARGE).obj(),
                pods: vec![pod("p1", LOW, NONE).node("node1").obj()],
                nodes: vec![node("node1", LARGE).obj()],
                error_nodes: vec![0],
                want: "error: preemption: running RemovePod on PreFilter plugin \"test-plugin\": failed to remove pod: p",
                ..Default::default()
            },
            PreemptCase {
                name: "an internal error on one node does not prevent preemption on another",
                pod: pod("p", HIGH, LARGE).obj(),
                pods: vec![
                    pod("p1", LOW, NONE).node("node1").obj(),
                    pod("p2", LOW, MEDIUM).node("node2").obj(),
                ],
                nodes: vec![node("node1", LARGE).obj(), node("node2", LARGE).obj()],
                error_nodes: vec![0],
                want: "preempted on node2: p2 (0 PDB violations)",
                ..Default::default()
            },
            PreemptCase {
                name: "a node where the pod fits without evicting anyone is an internal error",
                pod: pod("p", HIGH, SMALL).obj(),
                pods: vec![pod("p1", LOW, SMALL).node("node1").obj()],
                nodes: vec![node("node1", (1000, 1000)).obj()],
                want: "error: preemption: expected at least one victim pod on node \"node1\"",
                ..Default::default()
            },
            PreemptCase {
                name: "distinct internal errors are aggregated in brackets in visiting order",
                pod: pod("p", HIGH, SMALL).obj(),
                pods: vec![
                    pod("p1", LOW, SMALL).node("node1").obj(),
                    pod("p2", LOW, SMALL).node("node2").obj(),
                ],
                nodes: vec![node("node1", (1000, 1000)).obj(), node("node2", LARGE).obj()],
                error_nodes: vec![1],
                want: "error: preemption: [expected at least one victim pod on node \"node1\", running RemovePod on PreFilter plugin \"test-plugin\": failed to remove pod: p]",
                ..Default::default()
            },
            PreemptCase {
                name: "a cluster without nodes is an internal error",
                want: "error: preemption: no nodes available",
                diagnosis: Some(Diagnosis::default()),
                ..Default::default()
            },
            PreemptCase {
                name: "an UnschedulableAndUnresolvable node is not a candidate even with cheaper victims",
                pod: pod("p", HIGH, NONE).obj(),
                pods: vec![
                    pod("p1", NEG, NONE).node("node1").obj(),
                    pod("p2", MID, NONE).node("node2").obj(),
                ],
                nodes: vec![one_pod_node("node1"), one_pod_node("node2")],
                diagnosis: Some(diagnosis(
                    &[(0, Code::UnschedulableAndUnresolvable), (1, Code::Unschedulable)],
                    None,
                )),
                want: "preempted on node2: p2 (0 PDB violations)",
                ..Default::default()
            },
            // Upstream TestSelectBestCandidate.
            PreemptCase {
                name: "the node with the lowest highest-priority victim is picked",
                pod: pod("p", HIGH, VERY_LARGE).obj(),
                pods: vec![
                    pod("p1.1", MID, MEDIUM).node("node1").started(0).obj(),
                    pod("p1.2", MID, LARGE).node("node1").started(0).obj(),
                    pod("p2.1", MID, MEDIUM).node("node2").started(0).obj(),
                    pod("p2.2", LOW, MEDIUM).node("node2").started(0).obj(),
                    pod("p3.1", LOW, MEDIUM).node("node3").started(0).obj(),
                    pod("p3.2", LOW, MEDIUM).node("node3").started(0).obj(),
                ],
                nodes: very_large_nodes(3),
                want: "preempted on node3: p3.1,p3.2 (0 PDB violations)",
                ..Default::default()
            },
            PreemptCase {
                name: "when highest priorities are the same the smallest sum of priorities is picked",
                pod: pod("p", HIGH, VERY_LARGE).obj(),
                pods: vec![
                    pod("p1.1", MID, MEDIUM).node("node1").started(0).obj(),
                    pod("p1.2", MID, LARGE).node("node1").started(0).obj(),
                    pod("p2.1", MID, LARGE).node("node2").started(0).obj(),
                    pod("p2.2", LOW, MEDIUM).node("node2").started(0).obj(),
                    pod("p3.1", MID, MEDIUM).node("node3").started(0).obj(),
                    pod("p3.2", MID, MEDIUM).node("node3").started(0).obj(),
                ],
                nodes: very_large_nodes(3),
                want: "preempted on node2: p2.1,p2.2 (0 PDB violations)",
                ..Default::default()
            },
            PreemptCase {
                name: "when highest priority and sum are the same the fewest pods are picked",
                pod: pod("p", HIGH, VERY_LARGE).obj(),
                pods: vec![
                    pod("p1.1", MID, SMALL).node("node1").started(0).obj(),
                    pod("p1.2", NEG, SMALL).node("node1").started(0).obj(),
                    pod("p1.3", MID, SMALL).node("node1").started(0).obj(),
                    pod("p1.4", NEG, SMALL).node("node1").started(0).obj(),
                    pod("p2.1", MID, LARGE).node("node2").started(0).obj(),
                    pod("p2.2", NEG, MEDIUM).node("node2").started(0).obj(),
                    pod("p3.1", MID, MEDIUM).node("node3").started(0).obj(),
                    pod("p3.2", NEG, SMALL).node("node3").started(0).obj(),
                    pod("p3.3", LOW, SMALL).node("node3").started(0).obj(),
                ],
                nodes: very_large_nodes(3),
                want: "preempted on node2: p2.1,p2.2 (0 PDB violations)",
                ..Default::default()
            },
            PreemptCase {
                name: "the sum of priorities shifted by MaxInt32+1 is considered",
                pod: pod("p", HIGH, VERY_LARGE).obj(),
                pods: vec![
                    pod("p1.1", MID, SMALL).node("node1").started(0).obj(),
                    pod("p1.2", NEG, SMALL).node("node1").started(0).obj(),
                    pod("p1.3", NEG, SMALL).node("node1").started(0).obj(),
                    pod("p2.1", MID, LARGE).node("node2").started(0).obj(),
                    pod("p2.2", NEG, MEDIUM).node("node2").started(0).obj(),
                    pod("p3.1", MID, MEDIUM).node("node3").started(0).obj(),
                    pod("p3.2", NEG, SMALL).node("node3").started(0).obj(),
                    pod("p3.3", LOW, SMALL).node("node3").started(0).obj(),
                ],
                nodes: very_large_nodes(3),
                want: "preempted on node2: p2.1,p2.2 (0 PDB violations)",
                ..Default::default()
            },
            PreemptCase {
                name: "non-overlapping lowest highest priority, sum of priorities and number of pods",
                pod: pod("p", VERY_HIGH, VERY_LARGE).obj(),
                pods: vec![
                    pod("p1.1", MID, SMALL).node("node1").started(0).obj(),
                    pod("p1.2", LOW, SMALL).node("node1").started(0).obj(),
                    pod("p1.3", LOW, SMALL).node("node1").started(0).obj(),
                    pod("p2.1", HIGH, LARGE).node("node2").started(0).obj(),
                    pod("p3.1", MID, MEDIUM).node("node3").started(0).obj(),
                    pod("p3.2", LOW, SMALL).node("node3").started(0).obj(),
                    pod("p3.3", LOW, SMALL).node("node3").started(0).obj(),
                    pod("p3.4", LOW, MEDIUM).node("node3").started(0).obj(),
                    pod("p4.1", MID, MEDIUM).node("node4").started(0).obj(),
                    pod("p4.2", MID, SMALL).node("node4").started(0).obj(),
                    pod("p4.3", MID, SMALL).node("node4").started(0).obj(),
                    pod("p4.4", NEG, SMALL).node("node4").started(0).obj(),
                ],
                nodes: very_large_nodes(4),
                want: "preempted on node1: p1.1,p1.2,p1.3 (0 PDB violations)",
                ..Default::default()
            },
            PreemptCase {
                name: "same priority and number of victims: the node whose victims started last is picked",
                pod: pod("p", HIGH, VERY_LARGE).obj(),
                pods: vec![
                    pod("p1.1", MID, MEDIUM).node("node1").started(2).obj(),
                    pod("p1.2", MID, MEDIUM).node("node1").started(2).obj(),
                    pod("p2.1", MID, MEDIUM).node("node2").started(3).obj(),
                    pod("p2.2", MID, MEDIUM).node("node2").started(3).obj(),
                    pod("p3.1", MID, MEDIUM).node("node3").started(1).obj(),
                    pod("p3.2", MID, MEDIUM).node("node3").started(1).obj(),
                ],
                nodes: very_large_nodes(3),
                want: "preempted on node2: p2.1,p2.2 (0 PDB violations)",
                ..Default::default()
            },
            PreemptCase {
                name: "same priority and number of victims: the latest earliest start time wins",
                pod: pod("p", HIGH, VERY_LARGE).obj(),
                pods: vec![
                    pod("p1.1", MID, MEDIUM).node("node1").started(4).obj(),
                    pod("p1.2", MID, MEDIUM).node("node1").started(2).obj(),
                    pod("p2.1", MID, MEDIUM).node("node2").started(5).obj(),
                    pod("p2.2", MID, MEDIUM).node("node2").started(1).obj(),
                    pod("p3.1", MID, MEDIUM).node("node3").started(3).obj(),
                    pod("p3.2", MID, MEDIUM).node("node3").started(6).obj(),
                ],
                nodes: very_large_nodes(3),
                want: "preempted on node3: p3.1,p3.2 (0 PDB violations)",
                ..Default::default()
            },
            PreemptCase {
                name: "different priorities: only the start times of the most important victims count",
                pod: pod("p", HIGH, VERY_LARGE).obj(),
                pods: vec![
                    pod("p1.1", LOW, MEDIUM).node("node1").started(4).obj(),
                    pod("p1.2", MID, MEDIUM).node("node1").started(2).obj(),
                    pod("p2.1", MID, MEDIUM).node("node2").started(6).obj(),
                    pod("p2.2", LOW, MEDIUM).node("node2").started(1).obj(),
                    pod("p3.1", LOW, MEDIUM).node("node3").started(3).obj(),
                    pod("p3.2", MID, MEDIUM).node("node3").started(5).obj(),
                ],
                nodes: very_large_nodes(3),
                want: "preempted on node2: p2.1,p2.2 (0 PDB violations)",
                ..Default::default()
            },
            PreemptCase {
                name: "a full tie goes to the first node visited from offset zero",
                pod: pod("p", HIGH, LARGE).obj(),
                pods: vec![
                    pod("p1", MID, LARGE).node("node1").started(0).obj(),
                    pod("p2", MID, LARGE).node("node2").started(0).obj(),
                ],
                nodes: very_large_nodes(2),
                want: "preempted on node1: p1 (0 PDB violations)",
                ..Default::default()
            },
            PreemptCase {
                name: "a full tie goes to the first node visited from offset one",
                pod: pod("p", HIGH, LARGE).obj(),
                pods: vec![
                    pod("p1", MID, LARGE).node("node1").started(0).obj(),
                    pod("p2", MID, LARGE).node("node2").started(0).obj(),
                ],
                nodes: very_large_nodes(2),
                offset: 1,
                want: "preempted on node2: p2 (0 PDB violations)",
                ..Default::default()
            },
            PreemptCase {
                name: "a node violating no PodDisruptionBudget beats one with cheaper victims",
                pod: pod("p", HIGH, LARGE).obj(),
                pods: vec![
                    pod("p1", NEG, LARGE).label("app", "foo").node("node1").obj(),
                    pod("p2", MID, LARGE).node("node2").obj(),
                ],
                nodes: very_large_nodes(2),
                pdbs: vec![pdb("foo", &[("app", "foo")], 0, &[])],
                want: "preempted on node2: p2 (0 PDB violations)",
                ..Default::default()
            },
        ];
        for case in cases {
            let state = ClusterState { pdbs: case.pdbs, ..cluster(case.nodes, case.pods) };
            let diagnosis = case.diagnosis.unwrap_or_else(|| all_unschedulable(state.nodes.len()));
            let oracle = TestOracle {
                cluster: &state,
                anti_affinity: false,
                error_nodes: case.error_nodes.into_iter().collect(),
            };
            let mut rng = offset_rng(case.offset);
            let outcome =
                preempt(&case.pod, &state, &diagnosis, &case.args, &oracle, NOW, &mut rng);
            assert_eq!(summary(&outcome, &state), case.want, "{}", case.name);
        }
    }

    struct VictimCase {
        name: &'static str,
        pod: Pod,
        /// Pods on `node1` (capacity 500m CPU, 500 bytes).
        pods: Vec<Pod>,
        pdbs: Vec<Pdb>,
        anti_affinity: bool,
        /// Victims in order and PDB violations, or the rejection as `Code: reasons`.
        want: Result<(Vec<&'static str>, i64), &'static str>,
    }

    #[test]
    fn select_victims_on_node_removes_all_then_reprieves_in_upstream_order() {
        let foo = ("app", "foo");
        let cases = vec![
            VictimCase {
                name: "a node without lower-priority pods has no victims",
                pod: pod("p", MID, SMALL).obj(),
                pods: vec![pod("p1", MID, SMALL).obj(), pod("p2", HIGH, SMALL).obj()],
                pdbs: vec![],
                anti_affinity: false,
                want: Err(
                    "UnschedulableAndUnresolvable: No preemption victims found for incoming pod",
                ),
            },
            VictimCase {
                name: "the filter's rejection is returned when removing every lower-priority pod is not enough",
                pod: pod("p", MID, LARGE).obj(),
                pods: vec![pod("p1", LOW, SMALL).obj(), pod("p2", HIGH, LARGE).obj()],
                pdbs: vec![],
                anti_affinity: false,
                want: Err("Unschedulable: Insufficient cpu, Insufficient memory"),
            },
            VictimCase {
                name: "medium priority pod is preempted, but lower priority one stays as it is small",
                pod: pod("p", HIGH, LARGE).obj(),
                pods: vec![pod("p1.1", LOW, SMALL).obj(), pod("p1.2", MID, LARGE).obj()],
                pdbs: vec![],
                anti_affinity: false,
                want: Ok((vec!["p1.2"], 0)),
            },
            VictimCase {
                name: "mixed priority pods are preempted and the more important one is reprieved",
                pod: pod("p", HIGH, LARGE).obj(),
                pods: vec![
                    pod("p1.1", MID, SMALL).obj(),
                    pod("p1.2", LOW, SMALL).obj(),
                    pod("p1.3", MID, MEDIUM).obj(),
                    pod("p1.4", HIGH, SMALL).obj(),
                ],
                pdbs: vec![],
                anti_affinity: false,
                want: Ok((vec!["p1.3", "p1.2"], 0)),
            },
            VictimCase {
                name: "among equal priorities the pod that started later is preempted",
                pod: pod("p", HIGH, LARGE).obj(),
                pods: vec![
                    pod("p1.1", LOW, SMALL).started(5).obj(),
                    pod("p1.2", LOW, SMALL).started(4).obj(),
                    pod("p1.3", MID, MEDIUM).started(3).obj(),
                    pod("p1.4", HIGH, SMALL).started(2).obj(),
                ],
                pdbs: vec![],
                anti_affinity: false,
                want: Ok((vec!["p1.3", "p1.1"], 0)),
            },
            VictimCase {
                name: "a pod with anti-affinity to the preemptor is preempted",
                pod: pod("p", HIGH, SMALL).label("foo", "").obj(),
                pods: vec![
                    pod("p1.1", LOW, SMALL)
                        .label("foo", "")
                        .pod_anti_affinity(anti_affinity_exists("foo"))
                        .obj(),
                    pod("p1.2", MID, SMALL).obj(),
                    pod("p1.3", HIGH, SMALL).obj(),
                ],
                pdbs: vec![],
                anti_affinity: true,
                want: Ok((vec!["p1.1"], 0)),
            },
            VictimCase {
                name: "preemption with violation of the same PodDisruptionBudget",
                pod: pod("p", HIGH, VERY_LARGE).obj(),
                pods: vec![
                    pod("p1.1", MID, MEDIUM).label(foo.0, foo.1).obj(),
                    pod("p1.2", MID, MEDIUM).label(foo.0, foo.1).obj(),
                ],
                pdbs: vec![pdb("pdb", &[foo], 1, &[])],
                anti_affinity: false,
                want: Ok((vec!["p1.2", "p1.1"], 1)),
            },
            VictimCase {
                name: "a disrupted pod that is not a victim does not change the count",
                pod: pod("p", HIGH, VERY_LARGE).obj(),
                pods: vec![
                    pod("p1.1", MID, MEDIUM).label(foo.0, foo.1).obj(),
                    pod("p1.2", MID, MEDIUM).label(foo.0, foo.1).obj(),
                ],
                pdbs: vec![pdb("pdb", &[foo], 1, &["p2"])],
                anti_affinity: false,
                want: Ok((vec!["p1.2", "p1.1"], 1)),
            },
            VictimCase {
                name: "a victim already in disruptedPods does not violate the budget",
                pod: pod("p", HIGH, VERY_LARGE).obj(),
                pods: vec![
                    pod("p1.1", MID, MEDIUM).label(foo.0, foo.1).obj(),
                    pod("p1.2", MID, MEDIUM).label(foo.0, foo.1).obj(),
                ],
                pdbs: vec![pdb("pdb", &[foo], 1, &["p1.2"])],
                anti_affinity: false,
                want: Ok((vec!["p1.1", "p1.2"], 0)),
            },
            VictimCase {
                name: "a victim in disruptedPods is non-violating while the others still count",
                pod: pod("p", HIGH, VERY_LARGE).obj(),
                pods: vec![
                    pod("p1.1", MID, MEDIUM).label(foo.0, foo.1).obj(),
                    pod("p1.2", MID, MEDIUM).label(foo.0, foo.1).obj(),
                    pod("p1.3", MID, MEDIUM).label(foo.0, foo.1).obj(),
                ],
                pdbs: vec![pdb("pdb", &[foo], 1, &["p1.3"])],
                anti_affinity: false,
                want: Ok((vec!["p1.2", "p1.1", "p1.3"], 1)),
            },
            VictimCase {
                name: "victims from both groups are re-sorted most important first",
                pod: pod("p", HIGH, VERY_LARGE).obj(),
                pods: vec![
                    pod("p1.1", MID, MEDIUM).label(foo.0, foo.1).started(1).obj(),
                    pod("p1.2", MID, MEDIUM).label(foo.0, foo.1).started(2).obj(),
                ],
                pdbs: vec![pdb("pdb", &[foo], 1, &[])],
                anti_affinity: false,
                want: Ok((vec!["p1.1", "p1.2"], 1)),
            },
            VictimCase {
                name: "PDB-violating pods are reprieved before more important non-violating ones",
                pod: pod("p", HIGH, (250, 250)).obj(),
                pods: vec![
                    pod("a", LOW, MEDIUM).label(foo.0, foo.1).obj(),
                    pod("b", MID, MEDIUM).obj(),
                ],
                pdbs: vec![pdb("pdb", &[foo], 0, &[])],
                anti_affinity: false,
                want: Ok((vec!["b"], 0)),
            },
            VictimCase {
                name: "without budgets the more important pod is reprieved",
                pod: pod("p", HIGH, (250, 250)).obj(),
                pods: vec![
                    pod("a", LOW, MEDIUM).label(foo.0, foo.1).obj(),
                    pod("b", MID, MEDIUM).obj(),
                ],
                pdbs: vec![],
                anti_affinity: false,
                want: Ok((vec!["a"], 0)),
            },
            VictimCase {
                name: "a violating pod that cannot be reprieved counts as a violation",
                pod: pod("p", HIGH, (400, 400)).obj(),
                pods: vec![
                    pod("a", LOW, MEDIUM).label(foo.0, foo.1).obj(),
                    pod("b", MID, SMALL).obj(),
                ],
                pdbs: vec![pdb("pdb", &[foo], 0, &[])],
                anti_affinity: false,
                want: Ok((vec!["a"], 1)),
            },
        ];
        for case in cases {
            let pods =
                case.pods.into_iter().map(|p| Pod { node_name: Some("node1".to_string()), ..p });
            let state = ClusterState {
                pdbs: case.pdbs,
                ..cluster(vec![node("node1", VERY_LARGE).obj()], pods.collect())
            };
            let oracle = TestOracle {
                cluster: &state,
                anti_affinity: case.anti_affinity,
                error_nodes: BTreeSet::new(),
            };
            let got = select_victims_on_node(&case.pod, &state, 0, &oracle, NOW)
                .map(|v| (names(&v.pods), v.num_pdb_violations))
                .map_err(|s| format!("{:?}: {s}", s.code));
            let want = case
                .want
                .map(|(v, n)| (v.iter().map(|s| (*s).to_string()).collect::<Vec<_>>(), n))
                .map_err(str::to_string);
            assert_eq!(got, want, "{}", case.name);
        }
    }

    #[test]
    fn select_victims_on_a_missing_node_is_an_error() {
        let state = cluster(vec![node("node1", VERY_LARGE).obj()], vec![]);
        let oracle = TestOracle::resources(&state);
        let got = select_victims_on_node(&pod("p", HIGH, SMALL).obj(), &state, 5, &oracle, NOW);
        assert_eq!(got.map_err(|s| s.code), Err(Code::Error));
    }

    struct DryRunCase {
        name: &'static str,
        pods: Vec<Pod>,
        pdbs: Vec<Pdb>,
        args: DefaultPreemptionArgs,
        offset: i32,
        /// (node, victims, PDB violations) in the returned order.
        want: Vec<(&'static str, Vec<&'static str>, i64)>,
        /// Nodes that got a status.
        want_statuses: Vec<&'static str>,
    }

    #[test]
    fn dry_run_visits_nodes_from_the_offset_and_stops_at_the_quota() {
        let limit_to_2 = DefaultPreemptionArgs {
            min_candidate_nodes_percentage: 40,
            min_candidate_nodes_absolute: 1,
        };
        let five_mid = |labelled: &[usize]| -> Vec<Pod> {
            (1..=5)
                .map(|i| {
                    let mut b = pod(&format!("p{i}"), MID, LARGE).node(&format!("node{i}"));
                    if labelled.contains(&i) {
                        b = b.label("app", "foo");
                    }
                    b.obj()
                })
                .collect()
        };
        let cases = vec![
            DryRunCase {
                name: "all nodes are possible candidates, but the arguments limit them to 2",
                pods: five_mid(&[]),
                pdbs: vec![],
                args: limit_to_2,
                offset: 4,
                want: vec![("node5", vec!["p5"], 0), ("node1", vec!["p1"], 0)],
                want_statuses: vec![],
            },
            DryRunCase {
                name: "some nodes are not possible candidates, the arguments limit them to 2",
                pods: {
                    let mut pods = five_mid(&[]);
                    for i in [1, 4] {
                        if let Some(p) = pods.get_mut(i) {
                            p.priority = VERY_HIGH;
                        }
                    }
                    pods
                },
                pdbs: vec![],
                args: limit_to_2,
                offset: 4,
                want: vec![("node1", vec!["p1"], 0), ("node3", vec!["p3"], 0)],
                want_statuses: vec!["node2", "node5"],
            },
            DryRunCase {
                name: "the dry run looks past the quota until a non-violating node is found",
                pods: five_mid(&[1, 2, 5]),
                pdbs: vec![pdb("pdb", &[("app", "foo")], 0, &[])],
                args: DefaultPreemptionArgs {
                    min_candidate_nodes_percentage: 40,
                    min_candidate_nodes_absolute: 2,
                },
                offset: 4,
                want: vec![
                    ("node3", vec!["p3"], 0),
                    ("node5", vec!["p5"], 1),
                    ("node1", vec!["p1"], 1),
                ],
                want_statuses: vec![],
            },
            DryRunCase {
                name: "every node is visited when no candidate avoids violating a budget",
                pods: five_mid(&[1, 2, 3, 4, 5]),
                pdbs: vec![pdb("pdb", &[("app", "foo")], 0, &[])],
                args: limit_to_2,
                offset: 0,
                want: vec![("node1", vec!["p1"], 1), ("node2", vec!["p2"], 1)],
                want_statuses: vec![],
            },
            DryRunCase {
                name: "a quota of zero keeps no candidate",
                pods: five_mid(&[]),
                pdbs: vec![],
                args: DefaultPreemptionArgs {
                    min_candidate_nodes_percentage: 5,
                    min_candidate_nodes_absolute: 0,
                },
                offset: 2,
                want: vec![],
                want_statuses: vec![],
            },
        ];
        for case in cases {
            let state = ClusterState { pdbs: case.pdbs, ..cluster(very_large_nodes(5), case.pods) };
            let oracle = TestOracle::resources(&state);
            let potential = potential_nodes(&state, &all_unschedulable(5));
            let num = calculate_num_candidates(5, &case.args);
            let pod = pod("p", HIGH, LARGE).obj();
            let got = dry_run_preemption(&pod, &state, &potential, &oracle, case.offset, num, NOW);
            let candidates: Vec<(String, Vec<String>, i64)> = got
                .candidates
                .iter()
                .map(|c| {
                    let node = state.nodes.get(c.node).map_or(String::new(), |n| n.name.clone());
                    (node, names(&c.victims.pods), c.victims.num_pdb_violations)
                })
                .collect();
            let want: Vec<(String, Vec<String>, i64)> = case
                .want
                .iter()
                .map(|(n, v, k)| {
                    ((*n).to_string(), v.iter().map(|s| (*s).to_string()).collect(), *k)
                })
                .collect();
            assert_eq!(candidates, want, "{}", case.name);
            let statuses: Vec<&str> = got
                .node_statuses
                .keys()
                .filter_map(|&i| state.nodes.get(i).map(|n| n.name.as_str()))
                .collect();
            assert_eq!(statuses, case.want_statuses, "{}", case.name);
            assert!(got.errors.is_empty(), "{}", case.name);
        }
    }

    #[test]
    fn potential_nodes_are_those_whose_status_is_unschedulable() {
        let state = cluster(very_large_nodes(4), vec![]);
        let cases = [
            (
                "explicit statuses only",
                diagnosis(
                    &[
                        (0, Code::Unschedulable),
                        (1, Code::UnschedulableAndUnresolvable),
                        (3, Code::Unschedulable),
                    ],
                    None,
                ),
                vec![0, 3],
            ),
            (
                "an Unschedulable absent status adds the absent nodes",
                diagnosis(&[(1, Code::UnschedulableAndUnresolvable)], Some(Code::Unschedulable)),
                vec![0, 2, 3],
            ),
            (
                "an unresolvable absent status adds nothing",
                diagnosis(&[(2, Code::Unschedulable)], Some(Code::UnschedulableAndUnresolvable)),
                vec![2],
            ),
            (
                "statuses of nodes outside the cluster are ignored",
                diagnosis(&[(7, Code::Unschedulable)], None),
                vec![],
            ),
        ];
        for (name, diag, want) in cases {
            assert_eq!(potential_nodes(&state, &diag), want, "{name}");
        }
    }

    #[test]
    fn calculate_num_candidates_applies_percentage_then_absolute_then_node_count() {
        let cases = [
            ("default arguments on 10 nodes take all of them", 10, 10, 100, 10),
            ("default arguments on 1000 nodes take the absolute minimum", 1000, 10, 100, 100),
            ("50 percent of 1000 nodes is above the absolute minimum", 1000, 50, 100, 500),
            ("5 percent of 1000 nodes is below the absolute minimum", 1000, 5, 100, 100),
            ("the percentage rounds down", 7, 40, 1, 2),
            ("a small percentage with no absolute minimum can be zero", 3, 5, 0, 0),
        ];
        for (name, nodes, pct, abs, want) in cases {
            let args = DefaultPreemptionArgs {
                min_candidate_nodes_percentage: pct,
                min_candidate_nodes_absolute: abs,
            };
            assert_eq!(calculate_num_candidates(nodes, &args), want, "{name}");
        }
    }

    #[test]
    fn go_int31n_follows_go_rand_int31n() {
        let cases: [(&str, Vec<u64>, i32, i32); 5] = [
            ("a power of two masks the first draw", vec![6], 4, 2),
            ("another bound takes the draw modulo the bound", vec![7], 5, 2),
            ("a draw above the largest multiple is rejected", vec![(1 << 31) - 1, 4], 3, 1),
            ("a bound of one is always zero", vec![12345], 1, 0),
            ("a non-positive bound gives zero", vec![9], 0, 0),
        ];
        for (name, draws, n, want) in cases {
            let mut rng = int31_draws(&draws);
            assert_eq!(go_int31n(&mut rng, n), want, "{name}");
        }
    }

    #[test]
    fn the_offset_is_drawn_only_when_some_node_may_help() {
        let state =
            cluster(vec![one_pod_node("node1")], vec![pod("p1", LOW, NONE).node("node1").obj()]);
        let oracle = TestOracle::resources(&state);
        let mut rng = offset_rng(0);
        let p = pod("p", HIGH, NONE).obj();
        let args = DefaultPreemptionArgs::default();
        preempt(&p, &state, &Diagnosis::default(), &args, &oracle, NOW, &mut rng);
        assert_eq!(rng.next, 0, "no potential node: no draw");
        preempt(&p, &state, &all_unschedulable(1), &args, &oracle, NOW, &mut rng);
        assert_eq!(rng.next, 1, "one potential node: one draw");
    }

    #[test]
    fn filter_pods_with_pdb_violation_counts_down_each_budget() {
        let foo = ("app", "foo");
        let labelled = |name: &str| Arc::new(pod(name, LOW, NONE).label(foo.0, foo.1).obj());
        /// Name, pods in order, budgets, expected violating and non-violating pod names.
        type PdbCase =
            (&'static str, Vec<Arc<Pod>>, Vec<Pdb>, Vec<&'static str>, Vec<&'static str>);
        let cases: Vec<PdbCase> = vec![
            (
                "a pod selected by a budget allowing no disruption violates it",
                vec![labelled("a")],
                vec![pdb("pdb", &[foo], 0, &[])],
                vec!["a"],
                vec![],
            ),
            (
                "with one disruption allowed only the second selected pod violates",
                vec![labelled("a"), labelled("b"), labelled("c")],
                vec![pdb("pdb", &[foo], 1, &[])],
                vec!["b", "c"],
                vec!["a"],
            ),
            (
                "a budget without a selector selects nothing",
                vec![labelled("a")],
                vec![Pdb { selector: None, ..pdb("pdb", &[], 0, &[]) }],
                vec![],
                vec!["a"],
            ),
            (
                "a budget with an empty selector selects nothing",
                vec![labelled("a")],
                vec![pdb("pdb", &[], 0, &[])],
                vec![],
                vec!["a"],
            ),
            (
                "a pod without labels never violates",
                vec![Arc::new(pod("a", LOW, NONE).obj())],
                vec![Pdb {
                    selector: Some(LabelSelector {
                        requirements: vec![Requirement::new("app", MatchOp::DoesNotExist, &[])],
                    }),
                    ..pdb("pdb", &[], 0, &[])
                }],
                vec![],
                vec!["a"],
            ),
            (
                "a budget in another namespace does not apply",
                vec![labelled("a")],
                vec![Pdb { namespace: "other".to_string(), ..pdb("pdb", &[foo], 0, &[]) }],
                vec![],
                vec!["a"],
            ),
            (
                "a pod in disruptedPods neither violates nor uses up the budget",
                vec![labelled("a"), labelled("b")],
                vec![pdb("pdb", &[foo], 1, &["a"])],
                vec![],
                vec!["a", "b"],
            ),
            (
                "a pod violates when any one of its budgets is exhausted",
                vec![labelled("a")],
                vec![pdb("roomy", &[foo], 5, &[]), pdb("tight", &[foo], 0, &[])],
                vec!["a"],
                vec![],
            ),
        ];
        for (name, pods, pdbs, want_violating, want_non) in cases {
            let (violating, non_violating) = filter_pods_with_pdb_violation(&pods, &pdbs);
            assert_eq!(names(&violating), want_violating, "{name}");
            assert_eq!(names(&non_violating), want_non, "{name}");
        }
    }

    #[test]
    fn more_important_pod_orders_by_priority_then_start_time() {
        let cases = [
            (
                "higher priority wins over an earlier start",
                pod("a", MID, NONE).started(9).obj(),
                pod("b", LOW, NONE).started(1).obj(),
                true,
            ),
            (
                "lower priority loses",
                pod("a", LOW, NONE).started(1).obj(),
                pod("b", MID, NONE).started(9).obj(),
                false,
            ),
            (
                "with equal priorities the earlier start wins",
                pod("a", MID, NONE).started(1).obj(),
                pod("b", MID, NONE).started(2).obj(),
                true,
            ),
            (
                "equal priority and start time is not more important",
                pod("a", MID, NONE).started(3).obj(),
                pod("b", MID, NONE).started(3).obj(),
                false,
            ),
            (
                "a pod that has not started starts now",
                pod("a", MID, NONE).obj(),
                pod("b", MID, NONE).started(NOW + 1).obj(),
                true,
            ),
            (
                "two pods that have not started tie",
                pod("a", MID, NONE).obj(),
                pod("b", MID, NONE).obj(),
                false,
            ),
        ];
        for (name, a, b, want) in cases {
            assert_eq!(more_important_pod(&a, &b, NOW), want, "{name}");
        }
    }

    #[test]
    fn earliest_pod_start_time_looks_at_the_highest_priority_victims() {
        let v = |p: i32, start: Option<i64>| {
            let b = pod("v", p, NONE);
            Arc::new(match start {
                Some(t) => b.started(t).obj(),
                None => b.obj(),
            })
        };
        let cases = [
            ("no victims", vec![], None),
            (
                "the earliest of the equally most important victims",
                vec![v(MID, Some(5)), v(MID, Some(3)), v(LOW, Some(1))],
                Some(3),
            ),
            (
                "a more important victim later in the list resets the search",
                vec![v(LOW, Some(1)), v(HIGH, Some(9)), v(HIGH, Some(7))],
                Some(7),
            ),
            ("a victim that has not started starts now", vec![v(MID, None)], Some(NOW)),
        ];
        for (name, victims, want) in cases {
            assert_eq!(earliest_pod_start_time(&victims, NOW), want, "{name}");
        }
    }

    #[test]
    fn pick_one_node_applies_the_criteria_in_order() {
        let cand = |node: usize, violations: i64, victims: &[(i32, i64)]| Candidate {
            node,
            victims: Victims {
                pods: victims
                    .iter()
                    .map(|&(p, t)| Arc::new(pod("v", p, NONE).started(t).obj()))
                    .collect(),
                num_pdb_violations: violations,
            },
        };
        let cases = [
            ("no candidates", vec![], None),
            (
                "fewest PodDisruptionBudget violations wins",
                vec![cand(0, 1, &[(LOW, 0)]), cand(1, 0, &[(HIGH, 0)])],
                Some(1),
            ),
            (
                "the lowest most important victim wins",
                vec![cand(0, 0, &[(MID, 0)]), cand(1, 0, &[(LOW, 0), (LOW, 0), (LOW, 0)])],
                Some(1),
            ),
            (
                "the smallest sum of priorities shifted by MaxInt32+1 wins",
                vec![
                    cand(0, 0, &[(MID, 0), (NEG, 0), (NEG, 0)]),
                    cand(1, 0, &[(MID, 0), (NEG, 0)]),
                ],
                Some(1),
            ),
            (
                "fewest victims wins when the shifted sums tie",
                vec![cand(0, 0, &[(LOW, 0), (i32::MIN, 0)]), cand(1, 0, &[(LOW, 0)])],
                Some(1),
            ),
            (
                "the latest start of the most important victims wins",
                vec![cand(0, 0, &[(MID, 2)]), cand(1, 0, &[(MID, 3)])],
                Some(1),
            ),
            (
                "a full tie goes to the first candidate",
                vec![cand(0, 0, &[(MID, 2)]), cand(1, 0, &[(MID, 2)])],
                Some(0),
            ),
            ("a single candidate is picked", vec![cand(3, 2, &[(MID, 2)])], Some(0)),
        ];
        for (name, candidates, want) in cases {
            assert_eq!(pick_one_node_for_preemption(&candidates, NOW), want, "{name}");
            let selected = select_candidate(&candidates, NOW).map(|c| c.node);
            let want_node = want.and_then(|i| candidates.get(i)).map(|c| c.node);
            assert_eq!(selected, want_node, "{name}");
        }
    }

    #[test]
    fn without_lower_priority_pods_the_shortcut_is_the_dry_run() {
        use rand::{Rng, SeedableRng};
        // (name, nodes, bound pods, preemptor, node statuses: Unschedulable or not)
        let full = || node("full", SMALL);
        type Case = (&'static str, Vec<Node>, Vec<Pod>, Pod, Vec<Code>);
        let cases: Vec<Case> = vec![
            (
                "equal priorities on every node: no victims anywhere",
                vec![full().obj(), node("other", SMALL).obj()],
                vec![
                    pod("a", MID, SMALL).node("full").obj(),
                    pod("b", MID, SMALL).node("other").obj(),
                ],
                pod("p", MID, SMALL).obj(),
                vec![Code::Unschedulable, Code::Unschedulable],
            ),
            (
                "a lower-priority pod only where preemption cannot help",
                vec![full().obj(), node("other", SMALL).obj()],
                vec![
                    pod("a", HIGH, SMALL).node("full").obj(),
                    pod("b", LOW, SMALL).node("other").obj(),
                ],
                pod("p", MID, SMALL).obj(),
                vec![Code::Unschedulable, Code::UnschedulableAndUnresolvable],
            ),
            (
                "no node where preemption might help",
                vec![full().obj()],
                vec![pod("a", LOW, SMALL).node("full").obj()],
                pod("p", MID, SMALL).obj(),
                vec![Code::UnschedulableAndUnresolvable],
            ),
            (
                "a preemptor that never preempts",
                vec![full().obj()],
                vec![pod("a", MID, SMALL).node("full").obj()],
                pod("p", MID, SMALL).preemption_never().obj(),
                vec![Code::Unschedulable],
            ),
        ];
        let args = DefaultPreemptionArgs::default();
        for (name, nodes, bound, preemptor, codes) in cases {
            let state = cluster(nodes, bound);
            let explicit: Vec<(usize, Code)> = codes.iter().copied().enumerate().collect();
            let d = diagnosis(&explicit, None);
            let potential = codes.iter().filter(|&&c| c == Code::Unschedulable).count();
            let oracle = TestOracle::resources(&state);
            let mut full_rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
            let mut short_rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
            let want = preempt(&preemptor, &state, &d, &args, &oracle, 0, &mut full_rng);
            let got = preempt_without_victims(
                &preemptor,
                state.nodes.len(),
                potential,
                &args,
                &mut short_rng,
            );
            assert_eq!(got, want, "{name}");
            assert_eq!(short_rng.next_u64(), full_rng.next_u64(), "{name}: the generators differ");
        }
    }

    #[test]
    fn outcome_status_and_message_match_run_post_filter_plugins() {
        let msg = "preemption: not eligible due to preemptionPolicy=Never.".to_string();
        let cases = [
            (
                "a preemption succeeds without a message",
                PreemptionOutcome::Preempted { node: 0, victims: vec![], num_pdb_violations: 0 },
                Code::Success,
                None,
            ),
            (
                "an ineligible pod is unschedulable",
                PreemptionOutcome::Ineligible { post_filter_msg: msg.clone() },
                Code::Unschedulable,
                Some(msg.as_str()),
            ),
            (
                "an impossible preemption is unschedulable",
                PreemptionOutcome::NotPossible { post_filter_msg: "m".to_string() },
                Code::Unschedulable,
                Some("m"),
            ),
            (
                "an internal error is an error",
                PreemptionOutcome::Error { post_filter_msg: "e".to_string() },
                Code::Error,
                Some("e"),
            ),
        ];
        for (name, outcome, code, want_msg) in cases {
            let status = outcome.status();
            assert_eq!(status.code, code, "{name}");
            assert_eq!(outcome.post_filter_msg(), want_msg, "{name}");
            if code != Code::Success {
                assert_eq!(status.plugin, Some(PLUGIN_NAME), "{name}");
                assert_eq!(Some(status.to_string().as_str()), want_msg, "{name}");
            }
        }
    }

    #[test]
    fn the_recorded_message_completes_the_fit_error() {
        let state =
            cluster(vec![one_pod_node("node1")], vec![pod("p1", LOW, NONE).node("node1").obj()]);
        let oracle = TestOracle::resources(&state);
        let mut diag = diagnosis(&[], None);
        diag.node_statuses.insert(0, Status::unschedulable("Too many pods"));
        let p = pod("p", LOW, NONE).obj();
        let outcome = preempt(
            &p,
            &state,
            &diag,
            &DefaultPreemptionArgs::default(),
            &oracle,
            NOW,
            &mut offset_rng(0),
        );
        // The default profile runs DynamicResources' PostFilter before DefaultPreemption.
        let fw = crate::framework::runtime::Framework::new(
            &crate::framework::profile::Profile::default_profile(),
        )
        .unwrap();
        diag.post_filter_msg = fw.post_filter_msg(Some(&outcome.status()));
        let fit_error = FitError { num_all_nodes: 1, diagnosis: diag };
        assert_eq!(
            fit_error.message(),
            "0/1 nodes are available: 1 Too many pods. no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
        );
    }

    /// Parses a line of integers.
    fn ints(line: &str) -> Vec<usize> {
        line.split_whitespace().filter_map(|s| s.parse().ok()).collect()
    }

    #[test]
    fn go_sort_reproduces_go_sort_slice_on_inputs_with_ties() {
        // Keys in, and the permutation Go 1.19's `sort.Slice` produced for them (element ids in
        // output order). Go 1.19 differs from Go 1.24+ only in `breakPatterns`' xorshift shifts,
        // so these run with its shifts; the first two inputs do reach `breakPatterns`.
        let cases = [
            (
                "0 0 0 0 0 0 0 0 0 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0 1 1 1 1 1 1 1 1 1 1 1 0 1 1 1 1 2 2 2 2 2 2 2 2 2 2 2 2 2 2",
                "0 1 2 3 4 5 6 7 8 9 10 11 35 13 14 15 16 17 18 19 20 21 22 23 26 39 24 27 28 29 30 31 32 33 34 12 36 37 38 25 46 40 42 43 44 45 41 47 50 49 48 51 52 53",
            ),
            (
                "0 1 2 1 4 5 6 1 2 0 0 1 0 1 2 3 2 1 2 1 0 1 2 3 0 0 2 2 0 2 0 1 0 0 4 3 1 1 3 0 4 6 0 1 2 0 1 5",
                "24 42 45 39 33 0 30 28 25 9 10 32 12 20 7 43 3 17 31 19 13 21 37 1 11 36 46 16 14 26 22 18 29 2 44 27 8 15 38 23 35 40 34 4 5 47 6 41",
            ),
            ("3 1 2 1 3", "1 3 2 0 4"),
        ];
        for (keys, want) in cases {
            let mut items: Vec<(usize, usize)> =
                ints(keys).into_iter().enumerate().map(|(i, k)| (k, i)).collect();
            go_sort::sort_slice_with_shifts(
                &mut items,
                &|a: &(usize, usize), b: &(usize, usize)| a.0 < b.0,
                (13, 17, 5),
            );
            let got: Vec<usize> = items.iter().map(|x| x.1).collect();
            assert_eq!(got, ints(want), "{keys}");
        }
    }

    #[test]
    fn go_sort_sorts_and_keeps_short_runs_of_ties_in_input_order() {
        // Up to 12 elements Go uses insertion sort, which is stable.
        let mut short: Vec<(u8, usize)> =
            [2u8, 1, 2, 1, 0, 2, 1, 0, 0, 2, 1, 2].into_iter().zip(0..).collect();
        go_sort::sort_slice(&mut short, |a, b| a.0 < b.0);
        let ids: Vec<usize> = short.iter().map(|x| x.1).collect();
        assert_eq!(ids, vec![4, 7, 8, 1, 3, 6, 10, 0, 2, 5, 9, 11]);

        // Longer inputs are sorted and are a permutation of the input.
        let mut long: Vec<(u64, usize)> =
            (0..500u64).map(|i| ((i * 7919) % 13, i as usize)).collect();
        go_sort::sort_slice(&mut long, |a, b| a.0 < b.0);
        assert!(long.windows(2).all(|w| w[0].0 <= w[1].0));
        let mut ids: Vec<usize> = long.iter().map(|x| x.1).collect();
        ids.sort_unstable();
        assert_eq!(ids, (0..500).collect::<Vec<_>>());
    }
}
