//! The scheduling queue's retries around preemption, for `kplace baseline`: every pending pod's
//! first attempt in PrioritySort order, then — while preemption victims terminate — the
//! preemptors and the failed pods again, as kube-scheduler requeues them on the victims'
//! deletion.
//!
//! Input: a [`Baseline`] with deferred preemption, the pending pods and their frameworks;
//! output: the plan. Counterpart (v1.35): `pkg/scheduler/backend/queue/scheduling_queue.go`
//! (`MoveAllToActiveOrBackoffQueue` on an assigned pod's deletion, PrioritySort order),
//! `schedule_one.go` (`handleSchedulingFailure` nominating the preemptor,
//! `evaluateNominatedNode`), `framework/preemption` (async preemption: victims get a
//! deletionTimestamp and leave after their grace period).
//!
//! Modelled: victims terminate for longer than the first pass takes (a 30 s grace period
//! against milliseconds per pod), so every pod's first attempt sees them still there, and the
//! nominations of the preemptors reserving their room against pods of equal or lower priority;
//! then the victims leave all at once. Or victims that leave as soon as they are evicted
//! ([`super::scheduler::VictimExit::AtOnce`]): the pods after a preemptor see the room they
//! freed, less the preemptor's nomination, and the preemptors bind on their retry after the
//! first pass. Not modelled: retries that a binding triggers (a pod
//! whose required affinity a later pod satisfies is left unschedulable; kube-scheduler may
//! place it on a retry), the order of equal-priority retries (upstream's queue orders them by
//! when they were requeued; here by creation), and each victim's own grace period.

use std::collections::{BTreeMap, BTreeSet};

use super::scheduler::{Baseline, CycleResult, NO_NODES_AVAILABLE, StaticFilters, queue_order};
use crate::framework::runtime::Framework;
use crate::model::{Pod, PreemptionPolicy};
use crate::plan::{Eviction, Placement, Plan, Unschedulable};

/// The scheduling loop over `pending` on a scheduler with deferred preemption, as kube-scheduler
/// runs it when every pod is queued at the start and victims take longer to terminate than the
/// queue takes to drain (a 30 s grace period):
///
/// 1. every pod gets its first attempt in PrioritySort order; a preemptor is nominated to its
///    node ([`Baseline::preempt`]), its victims terminate meanwhile (they keep their room, and
///    the nomination reserves the room against pods of equal or lower priority), and the pods
///    after it are scheduled around both (with victims that leave
///    [at once](super::scheduler::VictimExit::AtOnce), around the nomination alone);
/// 2. while the round before saw a preemption: the victims leave, and the preemptors and the
///    pods that failed are attempted again in PrioritySort order (upstream requeues them on
///    the deletions); a preemptor tries its nominated node first, and one that no longer fits
///    there (a pod of higher priority took the room) may preempt again, elsewhere.
///
/// An unschedulable pod's message is its first attempt's (as kube-scheduler's event and kso's
/// plan report it); a pod placed on a retry leaves the unschedulable list.
pub(super) fn run_cycles(
    sched: &mut Baseline,
    pending: &[Pod],
    frameworks: &BTreeMap<String, Framework>,
    statics: &StaticFilters,
    tick: &dyn Fn(),
) -> Plan {
    let mut run = Run::default();
    let order = queue_order(pending);
    for &i in &order {
        tick();
        run.attempt(sched, pending, frameworks, statics, i);
    }
    // Each round needs a preemption in the round before, and a pod preempts again only when
    // it lost its node: bound the rounds all the same.
    let mut rounds = 0;
    while run.preempted && rounds <= pending.len() {
        rounds += 1;
        run.preempted = false;
        sched.terminate_victims();
        let again: Vec<usize> = order.iter().copied().filter(|i| run.retry.contains(i)).collect();
        run.retry.clear();
        for i in again {
            run.attempt(sched, pending, frameworks, statics, i);
        }
    }
    run.attribute_evictions(pending);
    let mut failures: Vec<(usize, Unschedulable)> = run.failures.into_values().collect();
    failures.sort_by_key(|(seq, _)| *seq);
    run.plan.unschedulable = failures.into_iter().map(|(_, u)| u).collect();
    run.plan
}

/// The state of [`run_cycles`].
#[derive(Default)]
struct Run {
    plan: Plan,
    /// Pods to attempt again once victims are gone: preemptors and failed pods.
    retry: BTreeSet<usize>,
    /// Per pod that is unschedulable so far: when it first failed, and its first failure.
    failures: BTreeMap<usize, (usize, Unschedulable)>,
    /// Attempts so far (orders the failures).
    attempts: usize,
    /// Pending pods placed so far: `namespace/name` → index in `pending`.
    placed: BTreeMap<String, usize>,
    /// The priority of each victim evicted, by `namespace/name`.
    victim_priority: BTreeMap<String, i32>,
    /// A pod preempted since the last round began: its victims terminate (or are gone
    /// already, [`super::scheduler::VictimExit::AtOnce`]) and it waits for a retry.
    preempted: bool,
}

impl Run {
    /// A plan says an eviction makes room for its preemptor on the victim's node. A preemptor
    /// that preempted again elsewhere (or was never placed) left that room to another pod: the
    /// eviction is attributed to the first pod the plan places on that node that may preempt
    /// it (a priority above the victim's, not `preemptionPolicy: Never`), when there is one.
    fn attribute_evictions(&mut self, pending: &[Pod]) {
        let node_of: BTreeMap<&str, &str> =
            self.plan.placements.iter().map(|p| (p.pod.as_str(), p.node.as_str())).collect();
        let mut changes = Vec::new();
        for (k, e) in self.plan.evictions.iter().enumerate() {
            if node_of.get(e.preemptor.as_str()) == Some(&e.node.as_str()) {
                continue;
            }
            let victim = self.victim_priority.get(&e.pod).copied().unwrap_or(i32::MIN);
            let taker = self.plan.placements.iter().find(|p| {
                p.node == e.node
                    && self.placed.get(&p.pod).is_some_and(|&i| {
                        pending[i].priority > victim
                            && pending[i].preemption_policy != PreemptionPolicy::Never
                    })
            });
            if let Some(t) = taker {
                changes.push((k, t.pod.clone()));
            }
        }
        for (k, preemptor) in changes {
            self.plan.evictions[k].preemptor = preemptor;
        }
    }

    /// One scheduling attempt of `pending[i]`: placed, nominated with its victims evicted (and
    /// queued for a retry), or unschedulable (its first failure kept, queued for a retry).
    fn attempt(
        &mut self,
        sched: &mut Baseline,
        pending: &[Pod],
        frameworks: &BTreeMap<String, Framework>,
        statics: &StaticFilters,
        i: usize,
    ) {
        let pod = &pending[i];
        let key = pod.key();
        let fw = &frameworks[&pod.scheduler_name];
        self.attempts += 1;
        let failure = match sched.decide_with(fw, pod, statics.row(i)) {
            CycleResult::Scheduled(n) => {
                sched.assume(pod, n);
                self.failures.remove(&i);
                self.placed.insert(key.clone(), i);
                let node = sched.cluster.nodes[n].name.clone();
                self.plan.placements.push(Placement { pod: key, node });
                return;
            }
            CycleResult::Preempted(n, victims) if !sched.defers_preemption() => {
                let node = sched.cluster.nodes[n].name.clone();
                for v in victims {
                    sched.remove_victim(n, &v.namespace, &v.name);
                    self.plan.evictions.push(Eviction {
                        pod: v.key(),
                        node: node.clone(),
                        preemptor: key.clone(),
                    });
                }
                sched.assume(pod, n);
                self.failures.remove(&i);
                self.placed.insert(key.clone(), i);
                self.plan.placements.push(Placement { pod: key, node });
                return;
            }
            CycleResult::Preempted(n, victims) => {
                let node = sched.cluster.nodes[n].name.clone();
                for v in sched.preempt(pod, n, &victims) {
                    let victim = v.key();
                    if let Some(j) = self.placed.remove(&victim) {
                        // A pod this run placed, preempted on a retry: it never runs (upstream
                        // deletes it), so the plan does not place it.
                        self.plan.placements.retain(|p| p.pod != victim);
                        let message = format!("preempted by {key} on {node} after it was placed");
                        let failure =
                            Unschedulable { pod: victim, message, reasons: BTreeMap::new() };
                        self.failures.insert(j, (self.attempts, failure));
                        continue;
                    }
                    self.victim_priority.insert(victim, v.priority);
                    self.plan.evictions.push(Eviction {
                        pod: v.key(),
                        node: node.clone(),
                        preemptor: key.clone(),
                    });
                }
                self.preempted = true;
                self.retry.insert(i);
                return;
            }
            CycleResult::Unschedulable(err) => {
                Unschedulable { pod: key, message: err.message(), reasons: err.reasons() }
            }
            CycleResult::NoNodes => Unschedulable {
                pod: key,
                message: NO_NODES_AVAILABLE.to_string(),
                reasons: BTreeMap::new(),
            },
            CycleResult::Error(message) => {
                Unschedulable { pod: key, message, reasons: BTreeMap::new() }
            }
        };
        self.retry.insert(i);
        let seq = self.attempts;
        self.failures.entry(i).or_insert((seq, failure));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::scheduler::{BaselineOptions, VictimExit};
    use crate::framework::config::SchedulerConfig;
    use crate::model::ClusterState;
    use crate::model::testing::{GI, NodeBuilder, PodBuilder, cluster};

    fn framework() -> Framework {
        Framework::for_scheduler(&SchedulerConfig::default(), "default-scheduler").unwrap()
    }

    fn pod(name: &str, priority: i32, cpu: i64) -> PodBuilder {
        PodBuilder::new("d", name).cpu(cpu).memory(GI).priority(priority)
    }

    /// One node `a` (4 CPUs) running `v` (priority 0, 2 CPUs); `p` (priority 100, 3 CPUs)
    /// preempted `v` and is nominated to `a` while `v` terminates.
    fn nominated() -> (Baseline, Framework, Pod) {
        let state = cluster(
            vec![NodeBuilder::new("a").cpu(4000).memory(16 * GI).obj()],
            vec![pod("v", 0, 2000).node("a").started(1).obj()],
        );
        let mut sched = Baseline::with_deferred_preemption(state, BaselineOptions::default());
        let fw = framework();
        let p = pod("p", 100, 3000).obj();
        let CycleResult::Preempted(n, victims) = sched.decide_with(&fw, &p, None) else {
            panic!("p preempts v");
        };
        assert_eq!(victims.len(), 1);
        assert_eq!(sched.preempt(&p, n, &victims).len(), 1, "v is evicted");
        (sched, fw, p)
    }

    fn outcome(sched: &Baseline, result: &CycleResult) -> String {
        match result {
            CycleResult::Scheduled(n) => format!("node {}", sched.cluster.nodes[*n].name),
            CycleResult::Preempted(n, v) => {
                let names: Vec<&str> = v.iter().map(|p| p.name.as_str()).collect();
                format!("preempt {names:?} on {}", sched.cluster.nodes[*n].name)
            }
            CycleResult::Unschedulable(e) => e.message(),
            CycleResult::NoNodes => "no nodes".to_string(),
            CycleResult::Error(e) => format!("error {e}"),
        }
    }

    #[test]
    fn a_nomination_reserves_the_room_against_pods_of_lower_or_equal_priority_only() {
        // `a` holds v (2 CPUs, terminating) and p's nomination (3 CPUs): a 1.5-CPU pod fits
        // beside v only when p is not counted, i.e. when it has the higher priority; evicting v
        // does not make room beside p either.
        let fit = "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, ";
        let no_victims = format!(
            "{fit}preemption: 0/1 nodes are available: 1 No preemption victims found for \
             incoming pod."
        );
        let no_room = format!("{fit}preemption: 0/1 nodes are available: 1 Insufficient cpu.");
        let cases = [
            ("a pod of lower priority does not fit beside the nomination", 0, no_victims.as_str()),
            ("a pod of equal priority does not fit beside the nomination", 100, no_room.as_str()),
            ("a pod of higher priority ignores the nomination", 1000, "node a"),
        ];
        for (name, priority, want) in cases {
            let (mut sched, fw, _) = nominated();
            let q = pod("q", priority, 1500).obj();
            let got = sched.decide_with(&fw, &q, None);
            assert_eq!(outcome(&sched, &got), want, "{name}");
        }
    }

    #[test]
    fn the_preemption_dry_run_counts_the_pods_nominated_to_the_node() {
        // Without p's nomination, evicting v would make room for q (2.5 CPUs); with it, q
        // would need 5.5 of 4 CPUs.
        let (mut sched, fw, _) = nominated();
        let q = pod("q", 100, 2500).obj();
        let got = sched.decide_with(&fw, &q, None);
        assert_eq!(
            outcome(&sched, &got),
            "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, \
             preemption: 0/1 nodes are available: 1 Insufficient cpu."
        );
    }

    #[test]
    fn a_preemptor_waits_for_its_victims_then_takes_its_nominated_node() {
        let (mut sched, fw, p) = nominated();
        let cases = [
            (
                "while its victim terminates it may not preempt again",
                false,
                "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, \
                 preemption: not eligible due to a terminating pod on the nominated node.",
            ),
            ("once its victim is gone it goes to its nominated node", true, "node a"),
        ];
        for (name, gone, want) in cases {
            if gone {
                sched.terminate_victims();
            }
            let got = sched.decide_with(&fw, &p, None);
            assert_eq!(outcome(&sched, &got), want, "{name}");
            assert_eq!(sched.nominated_node(&p), Some(0), "{name}: the nomination stays");
        }
    }

    #[test]
    fn a_victim_already_terminating_is_not_evicted_again() {
        // q (higher priority than p, 3.5 CPUs) fits once v is gone: it picks v, which is
        // already terminating, and is nominated without evicting anyone.
        let (mut sched, fw, _) = nominated();
        let q = pod("q", 1000, 3500).obj();
        let got = sched.decide_with(&fw, &q, None);
        assert_eq!(outcome(&sched, &got), "preempt [] on a");
    }

    /// `(name, pods)` of a plan's placements and evictions, and its unschedulable pods.
    fn summary(plan: &Plan) -> (Vec<String>, Vec<String>, Vec<String>) {
        (
            plan.placements.iter().map(|p| format!("{} on {}", p.pod, p.node)).collect(),
            plan.evictions
                .iter()
                .map(|e| format!("{} from {} by {}", e.pod, e.node, e.preemptor))
                .collect(),
            plan.unschedulable.iter().map(|u| u.pod.clone()).collect(),
        )
    }

    fn run(state: ClusterState, pending: &[Pod]) -> Plan {
        run_with(state, pending, VictimExit::AfterQueue)
    }

    fn run_with(state: ClusterState, pending: &[Pod], victims_leave: VictimExit) -> Plan {
        crate::baseline::run_baseline(
            state,
            pending,
            &SchedulerConfig::default(),
            BaselineOptions { victims_leave, ..Default::default() },
        )
        .unwrap()
    }

    #[test]
    fn when_victims_leave_decides_whether_the_pods_after_a_preemptor_use_the_room_it_leaves_over() {
        // `a` runs v1 (3 CPUs, the older victim), `b` runs h (priority 1000) and v2 (2 CPUs,
        // the younger): both are full. p (3 CPUs) can only preempt v1, and leaves 1 CPU of
        // its room over; q (1 CPU) fits there once v1 is gone, else it preempts the younger
        // v2; l (priority 0, 1 CPU) may preempt no one and takes whatever room is left.
        let state = cluster(
            vec![
                NodeBuilder::new("a").cpu(4000).memory(16 * GI).obj(),
                NodeBuilder::new("b").cpu(4000).memory(16 * GI).obj(),
            ],
            vec![
                pod("v1", 0, 3000).node("a").started(1).obj(),
                pod("h", 1000, 2000).node("b").started(1).obj(),
                pod("v2", 0, 2000).node("b").started(2).obj(),
            ],
        );
        let pending = [
            pod("p", 100, 3000).created(1).obj(),
            pod("q", 100, 1000).created(2).obj(),
            pod("l", 0, 1000).created(3).obj(),
        ];
        let strings = |v: &[&str]| v.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
        let cases = [
            (
                "victims that stop after the queue drains: q preempts v2 and l takes a room left over",
                VictimExit::AfterQueue,
                (
                    strings(&["d/p on a", "d/q on b", "d/l on b"]),
                    strings(&["d/v1 from a by d/p", "d/v2 from b by d/q"]),
                    strings(&[]),
                ),
            ),
            (
                "victims that leave at once: q takes p's room over, v2 stays, l fits nowhere",
                VictimExit::AtOnce,
                (
                    strings(&["d/q on a", "d/p on a"]),
                    strings(&["d/v1 from a by d/p"]),
                    strings(&["d/l"]),
                ),
            ),
        ];
        for (name, victims_leave, want) in cases {
            let plan = run_with(state.clone(), &pending, victims_leave);
            assert_eq!(summary(&plan), want, "{name}");
        }
    }

    #[test]
    fn pods_after_a_preemptor_are_scheduled_while_its_victims_terminate() {
        // p preempts v on `a`; l (lower priority, 1 CPU) would fit beside v alone but not
        // beside v and p's nomination: it fails its first attempt, and once v is gone and p is
        // bound it fits beside p on its retry.
        let state = cluster(
            vec![NodeBuilder::new("a").cpu(4000).memory(16 * GI).obj()],
            vec![pod("v", 0, 2000).node("a").started(1).obj()],
        );
        let pending = [pod("p", 100, 3000).created(1).obj(), pod("l", 10, 1000).created(2).obj()];
        let plan = run(state, &pending);
        assert_eq!(
            summary(&plan),
            (
                vec!["d/p on a".to_string(), "d/l on a".to_string()],
                vec!["d/v from a by d/p".to_string()],
                vec![],
            )
        );
    }

    #[test]
    fn a_preemptor_whose_room_a_higher_priority_pod_took_preempts_again_elsewhere() {
        // h (priority 1000, never preempts) fits nowhere at first; p (priority 100) preempts
        // v1 on `a` (its victim is the least important). Once v1 is gone, h is retried first
        // and takes `a`; p no longer fits there and preempts v2 on `b`.
        let state = cluster(
            vec![
                NodeBuilder::new("a").cpu(4000).memory(16 * GI).obj(),
                NodeBuilder::new("b").cpu(4000).memory(16 * GI).obj(),
            ],
            vec![
                pod("v1", 0, 3000).node("a").started(1).obj(),
                pod("v2", 50, 3000).node("b").started(1).obj(),
            ],
        );
        let pending = [
            pod("h", 1000, 3000).preemption_never().created(1).obj(),
            pod("p", 100, 2000).created(2).obj(),
        ];
        let plan = run(state, &pending);
        assert_eq!(
            summary(&plan),
            (
                vec!["d/h on a".to_string(), "d/p on b".to_string()],
                // p evicted v1 and h took the room; h never preempts, so v1 stays p's.
                vec!["d/v1 from a by d/p".to_string(), "d/v2 from b by d/p".to_string()],
                vec![],
            )
        );
    }
}
