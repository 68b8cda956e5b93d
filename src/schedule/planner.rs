//! The one place `kplace schedule` asks the batch planner for a decision, so that a new solver
//! changes one call.
//!
//! Input: the cluster model built from the caches, the batch's pending pods (model pods), the
//! scheduler configuration and the wall clock; output: a [`Plan`] (placements in the order they
//! are valid, evictions for preemptors, unschedulable pods with kube-scheduler's FitError
//! message). Upstream counterpart: `ScheduleOne`'s scheduling cycle
//! (`pkg/scheduler/schedule_one.go`), run here for a whole batch by [`crate::batch`].
//!
//! A batch that cannot be planned (an error, not an unschedulable pod) is not lost whole:
//! [`isolate`] finds the pods that make planning fail by bisection and plans the rest, as
//! kube-scheduler's one-pod cycles confine an error to its pod.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::batch::{BatchError, BatchOptions, plan_greedy_on};
use crate::eval::Evaluator;
use crate::framework::config::SchedulerConfig;
use crate::framework::runtime::{Framework, PreFilterOutcome};
use crate::model::{ClusterState, Pod};
use crate::plan::{Move, Placement, Plan};
use kplace_solver::Objective;

/// One move of a rebalancing plan whose replacement `kplace schedule` steers: the first pending
/// pod with the same controlling owner as the moved pod, seen once the moved pod is gone or
/// terminating, is placed on the planned node if that node passes every filter for it (else
/// it is planned as any other pod). One replacement per move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Steer {
    /// `namespace/name` of the moved pod.
    pub pod: String,
    /// The planned node of its replacement.
    pub node: String,
    /// The moved pod's controlling owner's uid, once the moved pod was seen.
    pub owner_uid: Option<String>,
    /// Whether the moved pod is gone or terminating (its replacement may be pending).
    pub vacated: bool,
    /// The replacement placed on the planned node, once one was.
    pub taken_by: Option<String>,
    /// Whether the placement was counted in the run summary.
    pub counted: bool,
}

impl Steer {
    /// A move not seen yet.
    pub fn new(m: &Move) -> Self {
        Steer {
            pod: m.pod.clone(),
            node: m.to.clone(),
            owner_uid: None,
            vacated: false,
            taken_by: None,
            counted: false,
        }
    }

    /// Updates the move from the moved pod as the cache has it now (`None`: not there).
    pub fn observe(&mut self, pod: Option<&k8s_openapi::api::core::v1::Pod>) {
        let Some(pod) = pod else {
            self.vacated = true;
            return;
        };
        if pod.metadata.deletion_timestamp.is_some() {
            self.vacated = true;
        }
        let controller =
            pod.metadata.owner_references.iter().flatten().find(|o| o.controller == Some(true));
        if let Some(o) = controller {
            self.owner_uid = Some(o.uid.clone());
        }
    }

    /// Whether `pod` (pending) is this move's replacement.
    fn replaced_by(&self, pod: &Pod) -> bool {
        self.taken_by.is_none()
            && self.vacated
            && pod.key() != self.pod
            && pod.owner.as_ref().is_some_and(|o| Some(&o.uid) == self.owner_uid.as_ref())
    }
}

/// [`plan_batch`] with steering: replacements of the moves in `steering` are placed on their
/// planned node first, when it passes every filter (the full profile, on the cluster as it is,
/// each steered pod added before the next is checked); the rest of the batch is planned on the
/// cluster with them. A move whose replacement was placed records it in `taken_by`.
pub fn plan_batch_steered(
    mut cluster: ClusterState,
    batch: &[Pod],
    config: &SchedulerConfig,
    now_unix: i64,
    objective: Objective,
    steering: &mut [Steer],
    evaluator: &mut Evaluator,
) -> Result<Plan, BatchError> {
    let mut steered = Vec::new();
    let mut rest = Vec::new();
    for pod in batch {
        let Some(s) = steering.iter_mut().find(|s| s.replaced_by(pod)) else {
            rest.push(pod.clone());
            continue;
        };
        let Some(node) = cluster.node_index(&s.node) else {
            rest.push(pod.clone());
            continue;
        };
        let fw = Framework::for_scheduler(config, &pod.scheduler_name)?;
        let fits = match fw.pre_filter(pod, &cluster) {
            PreFilterOutcome::Proceed(state) => {
                state.node_names().is_none_or(|names| names.contains(&s.node))
                    && fw.filter(&state, pod, &cluster.nodes[node]).is_success()
            }
            PreFilterOutcome::Rejected(_) => false,
        };
        if !fits {
            tracing::info!(
                "the planned node {} cannot take {} (replacing {}); planning it as any pod",
                s.node,
                pod.key(),
                s.pod
            );
            rest.push(pod.clone());
            continue;
        }
        s.taken_by = Some(pod.key());
        let mut placed = pod.clone();
        placed.node_name = Some(s.node.clone());
        cluster.nodes[node].add_pod(Arc::new(placed));
        steered.push(Placement { pod: pod.key(), node: s.node.clone() });
    }
    let mut plan = plan_batch(cluster, &rest, config, now_unix, objective, evaluator)?;
    if !steered.is_empty() {
        steered.append(&mut plan.placements);
        plan.placements = steered;
    }
    Ok(plan)
}

/// Plans one batch. `now_unix` is the preemption clock (Unix seconds); `objective` is what the
/// batch maximizes within a priority tier (`--objective`). Deterministic for given inputs: the
/// sequential parts use seed 0.
pub fn plan_batch(
    cluster: ClusterState,
    batch: &[Pod],
    config: &SchedulerConfig,
    now_unix: i64,
    objective: Objective,
    evaluator: &mut Evaluator,
) -> Result<Plan, BatchError> {
    let options = BatchOptions { now: now_unix, objective, ..BatchOptions::default() };
    let progress = crate::progress::Progress::hidden();
    plan_greedy_on(cluster, batch, config, &options, &progress, evaluator)
}

/// A batch planner as [`isolate`] calls it: the cluster, the pods, the steering and the
/// evaluator to plan with.
pub type PlanFn<'a, E> =
    dyn FnMut(ClusterState, &[Pod], &mut Vec<Steer>, &mut Evaluator) -> Result<Plan, E> + 'a;

/// Plans `batch` with `plan`; when that fails, finds the pods that make it fail by bisection
/// (each half of a failing set planned alone, on the same cluster) and plans the batch without
/// them. Returns the plan of the rest (or its error, when even that fails) and the pods set
/// aside, in batch order, each with the error that planning it gave. Of pods that fail only
/// together, one is set aside. `steering` is updated by the plan returned only.
pub fn isolate<E: std::fmt::Display>(
    cluster: ClusterState,
    batch: &[Pod],
    steering: &mut Vec<Steer>,
    evaluator: &mut Evaluator,
    plan: &mut PlanFn<'_, E>,
) -> (Result<Plan, E>, Vec<(String, String)>) {
    let saved = steering.clone();
    let error = match plan(cluster.clone(), batch, steering, evaluator) {
        Ok(p) => return (Ok(p), Vec::new()),
        Err(e) => e,
    };
    *steering = saved;
    let indices: Vec<usize> = (0..batch.len()).collect();
    let mut bad = Vec::new();
    culprits(
        &cluster,
        batch,
        &[],
        &indices,
        error.to_string(),
        steering,
        evaluator,
        plan,
        &mut bad,
    );
    bad.sort_by_key(|(i, _)| *i);
    let set_aside: BTreeSet<usize> = bad.iter().map(|(i, _)| *i).collect();
    let rest: Vec<Pod> =
        (0..batch.len()).filter(|i| !set_aside.contains(i)).map(|i| batch[i].clone()).collect();
    let poisoned = bad.into_iter().map(|(i, m)| (batch[i].key(), m)).collect();
    if rest.is_empty() {
        return (Ok(Plan::default()), poisoned);
    }
    (plan(cluster, &rest, steering, evaluator), poisoned)
}

/// Adds to `bad` pods among `set` (indices into `batch`) without which planning `context` and
/// `set` together no longer fails (it failed with `error`): bisection, where a set whose halves
/// plan alone is searched again with the other half as context (delta debugging), so that of
/// pods failing only together, one is set aside.
#[allow(clippy::too_many_arguments)]
fn culprits<E: std::fmt::Display>(
    cluster: &ClusterState,
    batch: &[Pod],
    context: &[usize],
    set: &[usize],
    error: String,
    steering: &[Steer],
    evaluator: &mut Evaluator,
    plan: &mut PlanFn<'_, E>,
    bad: &mut Vec<(usize, String)>,
) {
    if set.len() <= 1 {
        bad.extend(set.iter().map(|&i| (i, error.clone())));
        return;
    }
    let (a, b) = set.split_at(set.len() / 2);
    let mut try_plan = |extra: &[usize], evaluator: &mut Evaluator| {
        let pods: Vec<Pod> = context.iter().chain(extra).map(|&i| batch[i].clone()).collect();
        plan(cluster.clone(), &pods, &mut steering.to_vec(), evaluator).err().map(|e| e.to_string())
    };
    let fail_a = try_plan(a, evaluator);
    let fail_b = try_plan(b, evaluator);
    match (fail_a, fail_b) {
        (None, None) => {
            // Only together: the pods of `a` that fail with all of `b`.
            let with_b: Vec<usize> = context.iter().chain(b).copied().collect();
            culprits(cluster, batch, &with_b, a, error, steering, evaluator, plan, bad);
        }
        (fa, fb) => {
            if let Some(e) = fa {
                culprits(cluster, batch, context, a, e, steering, evaluator, plan, bad);
            }
            if let Some(e) = fb {
                culprits(cluster, batch, context, b, e, steering, evaluator, plan, bad);
            }
        }
    }
}

/// A test hook: planning fails for every batch that holds a pod it picks, as a pod the planner
/// cannot handle would. Set only by tests through [`crate::schedule::ScheduleOptions`]; the
/// command line has no way to set it.
#[doc(hidden)]
#[derive(Clone)]
pub struct PlanFault(pub Arc<dyn Fn(&Pod) -> bool + Send + Sync>);

impl PlanFault {
    /// The error planning `batch` gives, if the hook picks one of its pods.
    pub fn check(&self, batch: &[Pod]) -> Result<(), String> {
        match batch.iter().find(|p| (self.0)(p)) {
            Some(p) => Err(format!("injected planning fault for pod {}", p.key())),
            None => Ok(()),
        }
    }
}

impl std::fmt::Debug for PlanFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PlanFault")
    }
}

impl PartialEq for PlanFault {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::testing::{NodeBuilder, PodBuilder, cluster};
    use crate::plan::Placement;

    /// A stand-in planner: fails when the batch holds a pod named in `poison` (or, for
    /// `pair`, both of them), else places every pod on node `n`.
    fn fake<'a>(
        poison: &'static [&'static str],
        pair: Option<(&'static str, &'static str)>,
        calls: &'a std::cell::Cell<usize>,
    ) -> impl FnMut(ClusterState, &[Pod], &mut Vec<Steer>, &mut Evaluator) -> Result<Plan, String> + 'a
    {
        move |_, pods, _, _| {
            calls.set(calls.get() + 1);
            let has = |n: &str| pods.iter().any(|p| p.name == n);
            if let Some(p) = poison.iter().find(|p| has(p)) {
                return Err(format!("cannot plan {p}"));
            }
            if let Some((a, b)) = pair.filter(|(a, b)| has(a) && has(b)) {
                return Err(format!("cannot plan {a} with {b}"));
            }
            let placements =
                pods.iter().map(|p| Placement { pod: p.key(), node: "n".into() }).collect();
            Ok(Plan { placements, ..Plan::default() })
        }
    }

    #[test]
    fn each_batch_is_planned_under_the_objective_it_is_given() {
        // One 4-CPU node; the queue holds a 4-CPU pod first, then three 1-CPU pods. By
        // placed resources the big pod wins (it is also the queue order's floor); by placed
        // pods the three small ones do.
        let state = cluster(vec![NodeBuilder::new("n").cpu(4000).obj()], vec![]);
        let mut batch = vec![PodBuilder::new("d", "big").cpu(4000).created(1).obj()];
        batch.extend(
            (0..3).map(|i| PodBuilder::new("d", &format!("small{i}")).cpu(1000).created(2).obj()),
        );
        let config = SchedulerConfig::default();
        let placed = |objective| {
            let plan =
                plan_batch(state.clone(), &batch, &config, 0, objective, &mut Evaluator::Cpu)
                    .expect("the batch plans");
            let mut pods: Vec<String> = plan.placements.into_iter().map(|p| p.pod).collect();
            pods.sort();
            pods
        };
        assert_eq!(placed(Objective::Resources), ["d/big"]);
        assert_eq!(placed(Objective::Pods), ["d/small0", "d/small1", "d/small2"]);
    }

    #[test]
    fn a_batch_that_cannot_be_planned_sets_aside_only_the_pods_that_make_it_fail() {
        let state = cluster(vec![NodeBuilder::new("n").cpu(1000).obj()], vec![]);
        let batch: Vec<Pod> =
            (0..16).map(|i| PodBuilder::new("d", &format!("p{i}")).obj()).collect();
        // (name, poison pods, poison pair, pods set aside)
        type Case<'a> =
            (&'a str, &'static [&'static str], Option<(&'a str, &'a str)>, &'a [&'a str]);
        let cases: &[Case] = &[
            ("a healthy batch plans whole", &[], None, &[]),
            ("one poison pod is set aside", &["p5"], None, &["d/p5"]),
            ("two poison pods are both set aside", &["p0", "p15"], None, &["d/p0", "d/p15"]),
            (
                "of two pods that fail only together, one is set aside",
                &[],
                Some(("p1", "p2")),
                &["d/p1"],
            ),
        ];
        for (name, poison, pair, want) in cases {
            let calls = std::cell::Cell::new(0);
            let mut planner = fake(poison, *pair, &calls);
            let (plan, aside) =
                isolate(state.clone(), &batch, &mut Vec::new(), &mut Evaluator::Cpu, &mut planner);
            let plan = plan.unwrap_or_else(|e| panic!("{name}: {e}"));
            let aside_keys: Vec<&str> = aside.iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(aside_keys, *want, "{name}");
            assert_eq!(
                plan.placements.len(),
                batch.len() - want.len(),
                "{name}: the rest is planned"
            );
            for (k, message) in &aside {
                assert!(message.starts_with("cannot plan"), "{name}: {k}: {message}");
            }
            if want.len() == 1 {
                // log2(16) = 4 levels of two halves, then the rest: far fewer than one per pod.
                assert!(calls.get() <= 2 + 2 * 4 + 1, "{name}: {} plans", calls.get());
            }
        }
    }
}
