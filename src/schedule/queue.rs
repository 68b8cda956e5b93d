//! The scheduling queue of `kplace schedule`: which pending pods go into the next batch, and
//! when a pod that did not fit is tried again.
//!
//! Input: pod arrivals, updates and removals from the pod watcher, cluster changes (a node added
//! or changed, an assigned pod deleted), and the outcome of each batch; output: batches of pod
//! keys in queue order. Time is passed in (`now`), so the queue is deterministic and tested
//! without sleeping.
//!
//! Upstream (v1.35): `pkg/scheduler/backend/queue/scheduling_queue.go` — `PriorityQueue` with its
//! activeQ, backoffQ and unschedulablePods; `calculateBackoffDuration` (the initial backoff
//! doubled per attempt, capped at the maximum; defaults `podInitialBackoffSeconds` 1 s and
//! `podMaxBackoffSeconds` 10 s); `AddUnschedulableIfNotPresent` (a pod whose cycle overlapped a
//! cluster change goes to backoff instead of waiting for the next change);
//! `MoveAllToActiveOrBackoffQueue` (a cluster change moves unschedulable pods to backoff, or
//! straight to active when their backoff is over); `flushUnschedulablePodsLeftover` (a pod
//! waits at most `podMaxInUnschedulablePodsDuration`, 5 minutes, for a change). Queue order is
//! PrioritySort's: higher `spec.priority` first, then earlier creation, then namespace/name.
//!
//! Differences: there are no queueing hints (every cluster change the scheduler watches moves
//! every unschedulable pod), and pods leave the queue in batches: a batch is cut when `max`
//! pods are ready, or `window` after the first of them became ready.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How long pods wait after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackoffPolicy {
    /// The wait after the first failed attempt (`podInitialBackoffSeconds`, default 1 s).
    pub initial: Duration,
    /// The longest wait (`podMaxBackoffSeconds`, default 10 s).
    pub max: Duration,
    /// The longest an unschedulable pod waits for a cluster change before it is tried again
    /// anyway (`podMaxInUnschedulablePodsDuration`, 5 minutes).
    pub max_in_unschedulable: Duration,
}

impl Default for BackoffPolicy {
    fn default() -> Self {
        BackoffPolicy {
            initial: Duration::from_secs(1),
            max: Duration::from_secs(10),
            max_in_unschedulable: Duration::from_secs(300),
        }
    }
}

impl BackoffPolicy {
    /// Upstream `calculateBackoffDuration`: 0 before any attempt, else the initial backoff
    /// doubled once per attempt after the first, capped at the maximum (the doubling stops as
    /// soon as it would pass the cap, so it never overflows).
    pub fn duration(&self, attempts: u32) -> Duration {
        if attempts == 0 {
            return Duration::ZERO;
        }
        let mut d = self.initial;
        for _ in 1..attempts {
            if d > self.max.saturating_sub(d) {
                return self.max;
            }
            d += d;
        }
        d.min(self.max)
    }
}

/// What the queue needs to know of a pending pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedPod {
    /// `metadata.uid`.
    pub uid: String,
    /// `spec.priority` (0 when unset).
    pub priority: i32,
    /// `metadata.creationTimestamp`, Unix seconds.
    pub created: i64,
    /// A digest of what scheduling reads from the pod (spec and labels): an update that changes
    /// it sends an unschedulable pod back to be tried again.
    pub signature: u64,
}

/// Where a pod is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Ready for the next batch since this moment.
    Active(Instant),
    /// Backing off until this moment.
    Backoff(Instant),
    /// Waiting for a cluster change, since this moment.
    Unschedulable(Instant),
    /// In a batch being decided or bound.
    InFlight,
}

#[derive(Debug, Clone)]
struct Entry {
    pod: QueuedPod,
    stage: Stage,
    /// Failed attempts so far.
    attempts: u32,
    /// When the last attempt failed.
    last_failure: Option<Instant>,
    /// The cluster-change counter when the pod was taken into a batch.
    taken_at_change: u64,
    /// The pod itself changed while it was in flight.
    changed_in_flight: bool,
}

/// What [`Queue::poll`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Poll {
    /// A batch, in queue order; its pods are now in flight.
    Batch(Vec<String>),
    /// Pods are ready but the window is still open: poll again at this moment.
    WaitUntil(Instant),
    /// Nothing is ready; poll again at this moment (a backoff ends or an unschedulable pod is
    /// due), or when something happens.
    Idle(Option<Instant>),
}

/// Counts of pods by stage, for metrics and logs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueCounts {
    /// Ready for a batch.
    pub active: usize,
    /// Backing off.
    pub backoff: usize,
    /// Waiting for a cluster change.
    pub unschedulable: usize,
    /// In a batch.
    pub in_flight: usize,
}

/// The queue. Keys are `namespace/name`.
#[derive(Debug, Clone)]
pub struct Queue {
    policy: BackoffPolicy,
    entries: BTreeMap<String, Entry>,
    /// Counts cluster changes (upstream's `moveRequestCycle`).
    changes: u64,
}

impl Queue {
    /// An empty queue.
    pub fn new(policy: BackoffPolicy) -> Self {
        Queue { policy, entries: BTreeMap::new(), changes: 0 }
    }

    /// Adds a pending pod, or records an update of one already queued. An update that changes
    /// the pod's signature sends an unschedulable pod to backoff (or straight to active when its
    /// backoff is over), as upstream's `Update` does.
    pub fn upsert(&mut self, key: &str, pod: QueuedPod, now: Instant) {
        let policy = self.policy;
        match self.entries.get_mut(key) {
            None => {
                self.entries.insert(
                    key.to_string(),
                    Entry {
                        pod,
                        stage: Stage::Active(now),
                        attempts: 0,
                        last_failure: None,
                        taken_at_change: 0,
                        changed_in_flight: false,
                    },
                );
            }
            Some(e) if e.pod.uid != pod.uid => {
                // Deleted and created again under the same name between two events: a new pod.
                *e = Entry {
                    pod,
                    stage: if e.stage == Stage::InFlight {
                        Stage::InFlight
                    } else {
                        Stage::Active(now)
                    },
                    attempts: 0,
                    last_failure: None,
                    taken_at_change: e.taken_at_change,
                    changed_in_flight: true,
                };
            }
            Some(e) => {
                let changed = e.pod.signature != pod.signature;
                e.pod = pod;
                if changed {
                    match e.stage {
                        Stage::Unschedulable(_) => e.stage = ready_or_backoff(&policy, e, now),
                        Stage::InFlight => e.changed_in_flight = true,
                        Stage::Active(_) | Stage::Backoff(_) => {}
                    }
                }
            }
        }
    }

    /// Removes a pod (deleted, bound, or no longer served). Returns whether it was queued.
    pub fn remove(&mut self, key: &str) -> bool {
        self.entries.remove(key).is_some()
    }

    /// Whether the pod is queued (in any stage).
    pub fn contains(&self, key: &str) -> bool {
        self.entries.contains_key(key)
    }

    /// A cluster change that may make unschedulable pods fit: every unschedulable pod goes to
    /// backoff, or to active when its backoff is over.
    pub fn cluster_changed(&mut self, now: Instant) {
        self.changes += 1;
        let policy = self.policy;
        for e in self.entries.values_mut() {
            if matches!(e.stage, Stage::Unschedulable(_)) {
                e.stage = ready_or_backoff(&policy, e, now);
            }
        }
    }

    /// Moves due pods forward (ended backoffs, unschedulable pods past the longest wait) and
    /// cuts a batch when one is due: `max` pods ready, or `window` elapsed since the first ready
    /// pod became ready.
    pub fn poll(&mut self, now: Instant, window: Duration, max: usize) -> Poll {
        let policy = self.policy;
        for e in self.entries.values_mut() {
            match e.stage {
                Stage::Backoff(until) if until <= now => e.stage = Stage::Active(until),
                Stage::Unschedulable(since) if later(since, policy.max_in_unschedulable) <= now => {
                    // Ready since it became due (its backoff is long over by then).
                    e.stage = match ready_or_backoff(&policy, e, now) {
                        Stage::Active(_) => {
                            Stage::Active(later(since, policy.max_in_unschedulable))
                        }
                        other => other,
                    };
                }
                _ => {}
            }
        }
        let mut ready: Vec<(&String, &Entry, Instant)> = self
            .entries
            .iter()
            .filter_map(|(k, e)| match e.stage {
                Stage::Active(since) => Some((k, e, since)),
                _ => None,
            })
            .collect();
        let Some(first) = ready.iter().map(|r| r.2).min() else {
            let wake = self
                .entries
                .values()
                .filter_map(|e| match e.stage {
                    Stage::Backoff(until) => Some(until),
                    Stage::Unschedulable(since) => Some(later(since, policy.max_in_unschedulable)),
                    _ => None,
                })
                .min();
            return Poll::Idle(wake);
        };
        let max = max.max(1);
        let due = later(first, window);
        if ready.len() < max && now < due {
            return Poll::WaitUntil(due);
        }
        ready.sort_by(|a, b| {
            b.1.pod
                .priority
                .cmp(&a.1.pod.priority)
                .then(a.1.pod.created.cmp(&b.1.pod.created))
                .then_with(|| a.0.cmp(b.0))
        });
        let keys: Vec<String> = ready.into_iter().take(max).map(|r| r.0.clone()).collect();
        for k in &keys {
            if let Some(e) = self.entries.get_mut(k) {
                e.stage = Stage::InFlight;
                e.taken_at_change = self.changes;
                e.changed_in_flight = false;
            }
        }
        Poll::Batch(keys)
    }

    /// The pod was bound (or found bound, or gone): it leaves the queue.
    pub fn done(&mut self, key: &str) {
        self.entries.remove(key);
    }

    /// The pod fits nowhere. It waits for a cluster change, or goes to backoff when a change
    /// (of the cluster or of the pod) happened while its batch was being decided.
    pub fn unschedulable(&mut self, key: &str, now: Instant) {
        let policy = self.policy;
        let changes = self.changes;
        if let Some(e) = self.entries.get_mut(key) {
            e.attempts = e.attempts.saturating_add(1);
            e.last_failure = Some(now);
            e.stage = if changes > e.taken_at_change || e.changed_in_flight {
                ready_or_backoff(&policy, e, now)
            } else {
                Stage::Unschedulable(now)
            };
        }
    }

    /// The attempt failed for another reason (a binding that did not go through, an API
    /// error): the pod backs off and is tried again.
    pub fn failed(&mut self, key: &str, now: Instant) {
        let policy = self.policy;
        if let Some(e) = self.entries.get_mut(key) {
            e.attempts = e.attempts.saturating_add(1);
            e.last_failure = Some(now);
            e.stage = ready_or_backoff(&policy, e, now);
        }
    }

    /// The pod goes back to active without counting an attempt (its batch was abandoned).
    pub fn requeue(&mut self, key: &str, now: Instant) {
        if let Some(e) = self.entries.get_mut(key)
            && e.stage == Stage::InFlight
        {
            e.stage = Stage::Active(now);
        }
    }

    /// Failed attempts of a queued pod.
    pub fn attempts(&self, key: &str) -> Option<u32> {
        self.entries.get(key).map(|e| e.attempts)
    }

    /// Pods by stage.
    pub fn counts(&self) -> QueueCounts {
        let mut c = QueueCounts::default();
        for e in self.entries.values() {
            match e.stage {
                Stage::Active(_) => c.active += 1,
                Stage::Backoff(_) => c.backoff += 1,
                Stage::Unschedulable(_) => c.unschedulable += 1,
                Stage::InFlight => c.in_flight += 1,
            }
        }
        c
    }

    /// Number of queued pods.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no pod is queued.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// `t + d`, or a year after `t` when that cannot be represented.
fn later(t: Instant, d: Duration) -> Instant {
    t.checked_add(d).or_else(|| t.checked_add(Duration::from_secs(365 * 24 * 3600))).unwrap_or(t)
}

/// Backoff until the last failure plus the backoff for the attempts so far, or active now when
/// that moment has passed (upstream `isPodBackingoff`).
fn ready_or_backoff(policy: &BackoffPolicy, e: &Entry, now: Instant) -> Stage {
    let until = e.last_failure.map(|t| later(t, policy.duration(e.attempts)));
    match until {
        Some(until) if until > now => Stage::Backoff(until),
        _ => Stage::Active(now),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(uid: &str, priority: i32, created: i64) -> QueuedPod {
        QueuedPod { uid: uid.to_string(), priority, created, signature: 0 }
    }

    const WINDOW: Duration = Duration::from_millis(500);

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn backoff_doubles_from_one_second_and_stops_at_ten() {
        let p = BackoffPolicy::default();
        let cases = [
            ("no attempt yet means no backoff", 0, 0),
            ("the first failure waits the initial backoff", 1, 1000),
            ("the second failure waits twice as long", 2, 2000),
            ("the fourth failure waits eight seconds", 4, 8000),
            ("the fifth failure is capped at ten seconds", 5, 10_000),
            ("a huge attempt count stays at the cap", 1000, 10_000),
        ];
        for (name, attempts, want_ms) in cases {
            assert_eq!(p.duration(attempts), ms(want_ms), "{name}");
        }
    }

    #[test]
    fn a_batch_is_cut_when_the_window_closes_or_when_it_is_full() {
        let t0 = Instant::now();
        let cases: Vec<(&str, usize, usize, Duration, Poll)> = vec![
            (
                "three pods inside the window wait for it",
                3,
                10,
                ms(100),
                Poll::WaitUntil(t0 + WINDOW),
            ),
            (
                "the window closed: every ready pod goes",
                3,
                10,
                WINDOW,
                Poll::Batch(vec!["ns/p0".into(), "ns/p1".into(), "ns/p2".into()]),
            ),
            (
                "a full batch goes before the window closes",
                3,
                2,
                ms(1),
                Poll::Batch(vec!["ns/p0".into(), "ns/p1".into()]),
            ),
            ("no pod: idle with nothing to wake for", 0, 10, WINDOW, Poll::Idle(None)),
        ];
        for (name, n, max, after, want) in cases {
            let mut q = Queue::new(BackoffPolicy::default());
            for i in 0..n {
                q.upsert(&format!("ns/p{i}"), pod(&format!("u{i}"), 0, i as i64), t0);
            }
            assert_eq!(q.poll(t0 + after, WINDOW, max), want, "{name}");
        }
    }

    #[test]
    fn batches_follow_priority_then_creation_then_name() {
        let t0 = Instant::now();
        let mut q = Queue::new(BackoffPolicy::default());
        q.upsert("ns/low-old", pod("1", 0, 1), t0);
        q.upsert("ns/high-new", pod("2", 100, 9), t0);
        q.upsert("ns/b-same", pod("3", 0, 5), t0);
        q.upsert("ns/a-same", pod("4", 0, 5), t0);
        let want: Vec<String> =
            ["ns/high-new", "ns/low-old", "ns/a-same", "ns/b-same"].map(String::from).to_vec();
        assert_eq!(q.poll(t0 + WINDOW, WINDOW, 10), Poll::Batch(want));
        assert_eq!(q.counts().in_flight, 4);
        assert_eq!(
            q.poll(t0 + WINDOW, WINDOW, 10),
            Poll::Idle(None),
            "in-flight pods are not taken twice"
        );
    }

    #[test]
    fn an_unschedulable_pod_waits_for_a_cluster_change_then_for_its_backoff() {
        let t0 = Instant::now();
        let mut q = Queue::new(BackoffPolicy::default());
        q.upsert("ns/p", pod("u", 0, 0), t0);
        assert!(matches!(q.poll(t0 + WINDOW, WINDOW, 10), Poll::Batch(_)));
        let failed_at = t0 + WINDOW;
        q.unschedulable("ns/p", failed_at);
        let cases = [
            ("without a change it waits for five minutes", failed_at + ms(20_000), None),
            (
                "a change during the backoff waits for the backoff's end",
                failed_at + ms(200),
                Some(failed_at + ms(1000)),
            ),
        ];
        for (name, change_at, want_wake) in cases {
            let mut q = q.clone();
            if want_wake.is_some() {
                q.cluster_changed(change_at);
            }
            match q.poll(change_at, WINDOW, 10) {
                Poll::Idle(wake) => {
                    let want = want_wake.unwrap_or(failed_at + Duration::from_secs(300));
                    assert_eq!(wake, Some(want), "{name}");
                }
                other => panic!("{name}: {other:?}"),
            }
        }
        // A change after the backoff ended makes it ready at once.
        let mut q2 = q.clone();
        q2.cluster_changed(failed_at + ms(3000));
        assert_eq!(q2.counts().active, 1);
        // Five minutes without a change: tried again anyway.
        let mut q3 = q.clone();
        assert_eq!(
            q3.poll(failed_at + Duration::from_secs(300) + WINDOW, WINDOW, 10),
            Poll::Batch(vec!["ns/p".to_string()])
        );
    }

    #[test]
    fn a_change_during_the_cycle_sends_an_unschedulable_pod_to_backoff() {
        let t0 = Instant::now();
        let mut q = Queue::new(BackoffPolicy::default());
        q.upsert("ns/p", pod("u", 0, 0), t0);
        q.upsert("ns/q", pod("v", 0, 0), t0);
        assert!(matches!(q.poll(t0 + WINDOW, WINDOW, 10), Poll::Batch(_)));
        q.cluster_changed(t0 + ms(600));
        let t1 = t0 + ms(700);
        q.unschedulable("ns/p", t1);
        assert_eq!(q.counts().backoff, 1, "the node added meanwhile may make it fit");
        assert_eq!(q.poll(t1 + ms(999), WINDOW, 10), Poll::Idle(Some(t1 + ms(1000))));
    }

    #[test]
    fn an_update_of_the_pod_itself_retries_it_but_a_status_only_update_does_not() {
        let t0 = Instant::now();
        let mut q = Queue::new(BackoffPolicy::default());
        q.upsert("ns/p", pod("u", 0, 0), t0);
        assert!(matches!(q.poll(t0 + WINDOW, WINDOW, 10), Poll::Batch(_)));
        let t1 = t0 + WINDOW;
        q.unschedulable("ns/p", t1);
        q.upsert("ns/p", pod("u", 0, 0), t1 + ms(10));
        assert_eq!(q.counts().unschedulable, 1, "same signature (a status patch): still waiting");
        q.upsert("ns/p", QueuedPod { signature: 7, ..pod("u", 0, 0) }, t1 + ms(2000));
        assert_eq!(q.counts().active, 1, "a new toleration: tried again, its backoff over");
    }

    #[test]
    fn failures_back_off_longer_each_time_and_done_pods_leave() {
        let t0 = Instant::now();
        let mut q = Queue::new(BackoffPolicy::default());
        q.upsert("ns/p", pod("u", 0, 0), t0);
        let mut now = t0;
        for (attempt, want_ms) in [(1u32, 1000u64), (2, 2000), (3, 4000)] {
            now += WINDOW;
            assert_eq!(q.poll(now, WINDOW, 10), Poll::Batch(vec!["ns/p".to_string()]));
            q.failed("ns/p", now);
            assert_eq!(q.attempts("ns/p"), Some(attempt));
            assert_eq!(q.poll(now, WINDOW, 10), Poll::Idle(Some(now + ms(want_ms))));
            now += ms(want_ms);
        }
        now += WINDOW;
        assert!(matches!(q.poll(now, WINDOW, 10), Poll::Batch(_)));
        q.done("ns/p");
        assert!(q.is_empty());
    }

    #[test]
    fn a_requeued_pod_is_ready_again_without_an_attempt() {
        let t0 = Instant::now();
        let mut q = Queue::new(BackoffPolicy::default());
        q.upsert("ns/p", pod("u", 0, 0), t0);
        assert!(matches!(q.poll(t0 + WINDOW, WINDOW, 10), Poll::Batch(_)));
        q.requeue("ns/p", t0 + WINDOW);
        assert_eq!((q.counts().active, q.attempts("ns/p")), (1, Some(0)));
        assert!(q.remove("ns/p"));
        assert!(!q.remove("ns/p"));
    }
}
