//! Leader election through a `coordination.k8s.io/v1` Lease, so that of several `kplace
//! schedule` replicas only one plans and binds.
//!
//! Input: the Lease's name and namespace, this replica's identity, and the timings; output: a
//! `watch` channel that is `true` while this replica leads. Upstream (v1.35):
//! `staging/src/k8s.io/client-go/tools/leaderelection/leaderelection.go` (`tryAcquireOrRenew`,
//! `renew`, `release`) and `resourcelock/leaselock.go`:
//!
//! - A candidate reads the Lease every `retry_period`. It takes it when there is none (create),
//!   when no holder is named, or when the record it observed has not changed for
//!   `lease_duration` — measured on the candidate's own clock from the moment it saw the record
//!   change, never from the times written in it, so clock skew between replicas does not
//!   matter. Taking it from another holder counts a transition.
//! - The leader renews every `retry_period`, first optimistically with the Lease it last wrote,
//!   then by reading it again. Every write is an update carrying the `resourceVersion` it read,
//!   so of two replicas racing, the API server accepts one and answers 409 to the other.
//! - A leader that cannot renew within `renew_deadline` stops leading (the caller stops
//!   binding); since `renew_deadline < lease_duration`, it has stopped before any other replica
//!   may take the Lease.
//! - On shutdown the leader releases the Lease (no holder, a 1-second duration), so a standby
//!   takes over at its next try instead of after `lease_duration`.
//!
//! [`Elector`] is the state machine, with the clocks passed in; [`run`] drives it against the
//! API server.

use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, PostParams};
use tokio::sync::watch;

use crate::bind::retry::chain;

/// Leader-election settings (KubeSchedulerConfiguration `leaderElection`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseConfig {
    /// The Lease's name (`resourceName`).
    pub name: String,
    /// The Lease's namespace (`resourceNamespace`).
    pub namespace: String,
    /// This replica's identity, written as `holderIdentity`.
    pub identity: String,
    /// How long a standby waits after the record last changed before taking the Lease (15 s).
    pub lease_duration: Duration,
    /// How long the leader keeps trying to renew before it stops leading (10 s).
    pub renew_deadline: Duration,
    /// The time between two tries (2 s).
    pub retry_period: Duration,
}

impl LeaseConfig {
    /// Upstream's default timings for the named Lease and identity.
    pub fn new(name: &str, namespace: &str, identity: &str) -> Self {
        LeaseConfig {
            name: name.to_string(),
            namespace: namespace.to_string(),
            identity: identity.to_string(),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }

    /// Checks the timings as upstream's `NewLeaderElector` does.
    pub fn validate(&self) -> Result<(), String> {
        if self.lease_duration <= self.renew_deadline {
            return Err("leaseDuration must be greater than renewDeadline".to_string());
        }
        // JitterFactor 1.2, as upstream.
        if self.renew_deadline.as_secs_f64() <= 1.2 * self.retry_period.as_secs_f64() {
            return Err("renewDeadline must be greater than retryPeriod*1.2".to_string());
        }
        if self.retry_period.is_zero() {
            return Err("retryPeriod must be greater than zero".to_string());
        }
        if self.identity.is_empty() {
            return Err("identity must not be empty".to_string());
        }
        if self.name.is_empty() || self.namespace.is_empty() {
            return Err("the Lease needs a name and a namespace".to_string());
        }
        Ok(())
    }
}

/// The leader-election record kept in a Lease's spec (upstream `LeaderElectionRecord`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Record {
    /// `holderIdentity` (empty: nobody holds it).
    pub holder: String,
    /// `leaseDurationSeconds`.
    pub lease_duration_seconds: i32,
    /// `acquireTime`.
    pub acquire_time: Option<Timestamp>,
    /// `renewTime`.
    pub renew_time: Option<Timestamp>,
    /// `leaseTransitions`.
    pub transitions: i32,
}

impl Record {
    /// The record in a Lease.
    pub fn of(lease: &Lease) -> Record {
        let spec = lease.spec.clone().unwrap_or_default();
        Record {
            holder: spec.holder_identity.unwrap_or_default(),
            lease_duration_seconds: spec.lease_duration_seconds.unwrap_or(0),
            acquire_time: spec.acquire_time.map(|t| t.0),
            renew_time: spec.renew_time.map(|t| t.0),
            transitions: spec.lease_transitions.unwrap_or(0),
        }
    }

    /// The Lease spec holding this record.
    pub fn to_spec(&self) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(self.holder.clone()),
            lease_duration_seconds: Some(self.lease_duration_seconds),
            acquire_time: self.acquire_time.map(MicroTime),
            renew_time: self.renew_time.map(MicroTime),
            lease_transitions: Some(self.transitions),
            ..Default::default()
        }
    }
}

/// What to write after reading the Lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Write this record (an update with the resourceVersion read).
    Write(Record),
    /// Another replica holds a valid Lease: do nothing this round.
    HeldBy(String),
}

/// The election state of one replica: the record it last observed and when (its own clock).
#[derive(Debug, Clone)]
pub struct Elector {
    config: LeaseConfig,
    observed: Option<(Record, Instant)>,
}

impl Elector {
    /// A replica that has observed nothing yet.
    pub fn new(config: LeaseConfig) -> Self {
        Elector { config, observed: None }
    }

    /// The settings.
    pub fn config(&self) -> &LeaseConfig {
        &self.config
    }

    /// Whether the last observed record names this replica.
    pub fn is_leader(&self) -> bool {
        self.observed.as_ref().is_some_and(|(r, _)| r.holder == self.config.identity)
    }

    /// Whether the observed record is still valid on this replica's clock.
    pub fn lease_valid(&self, now: Instant) -> bool {
        self.observed.as_ref().is_some_and(|(r, at)| {
            let secs = u64::try_from(r.lease_duration_seconds).unwrap_or(0);
            at.checked_add(Duration::from_secs(secs)).is_none_or(|end| end > now)
        })
    }

    fn fresh(&self, wall: Timestamp) -> Record {
        Record {
            holder: self.config.identity.clone(),
            lease_duration_seconds: i32::try_from(self.config.lease_duration.as_secs())
                .unwrap_or(i32::MAX),
            acquire_time: Some(wall),
            renew_time: Some(wall),
            transitions: 0,
        }
    }

    /// The leader's optimistic renewal, written with the Lease it last wrote (step 1 of
    /// upstream's `tryAcquireOrRenew`); `None` when this replica does not lead or its lease is
    /// no longer valid.
    pub fn fast_renewal(&self, now: Instant, wall: Timestamp) -> Option<Record> {
        if !(self.is_leader() && self.lease_valid(now)) {
            return None;
        }
        let (old, _) = self.observed.as_ref()?;
        Some(Record {
            acquire_time: old.acquire_time,
            transitions: old.transitions,
            ..self.fresh(wall)
        })
    }

    /// The record to create when no Lease exists.
    pub fn creation(&self, wall: Timestamp) -> Record {
        self.fresh(wall)
    }

    /// Decides after reading the Lease (steps 3 and 4 of upstream's `tryAcquireOrRenew`).
    pub fn on_read(&mut self, current: Record, now: Instant, wall: Timestamp) -> Step {
        if self.observed.as_ref().is_none_or(|(r, _)| *r != current) {
            self.observed = Some((current.clone(), now));
        }
        if !current.holder.is_empty() && self.lease_valid(now) && !self.is_leader() {
            return Step::HeldBy(current.holder);
        }
        let mut record = self.fresh(wall);
        if self.is_leader() {
            record.acquire_time = current.acquire_time;
            record.transitions = current.transitions;
        } else {
            record.transitions = current.transitions.saturating_add(1);
        }
        Step::Write(record)
    }

    /// A write of `record` succeeded at `now`.
    pub fn on_written(&mut self, record: Record, now: Instant) {
        self.observed = Some((record, now));
    }

    /// The record that releases the Lease (upstream `release`): no holder, a 1-second
    /// duration, the transitions kept; `None` when the Lease read names another holder.
    pub fn release(&self, current: &Record, wall: Timestamp) -> Option<Record> {
        if current.holder != self.config.identity {
            return None;
        }
        Some(Record {
            holder: String::new(),
            lease_duration_seconds: 1,
            acquire_time: Some(wall),
            renew_time: Some(wall),
            transitions: current.transitions,
        })
    }
}

/// How an election ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// Shutdown was asked before this replica led.
    NeverLed,
    /// This replica led and released the Lease on shutdown (or tried to: `released` says).
    Released {
        /// Whether the release was written.
        released: bool,
    },
    /// This replica led and could not renew within the renew deadline.
    Lost,
}

/// The Lease as last read or written, for the next update's resourceVersion.
struct Lock {
    api: Api<Lease>,
    name: String,
    namespace: String,
    last: Option<Lease>,
    /// Whether a 403 on the Lease was reported (once: it repeats every retry period).
    reported_forbidden: bool,
}

impl Lock {
    /// The error's text; a 403 is reported once at error level with what to fix (the Role in
    /// deploy/rbac.yaml grants one Lease name in one namespace).
    fn error(&mut self, e: &kube::Error) -> String {
        if matches!(e, kube::Error::Api(s) if s.code == 403) && !self.reported_forbidden {
            self.reported_forbidden = true;
            tracing::error!(
                "the Lease {}/{} is forbidden ({}): this replica cannot lead. Grant get and update on \
                 this Lease name and create on leases in namespace {} (deploy/rbac.yaml, Role \
                 kplace-leader-election), or use the Lease the Role names (--lease-name, \
                 --lease-namespace)",
                self.namespace,
                self.name,
                chain(e),
                self.namespace
            );
        }
        chain(e)
    }

    async fn get(&mut self) -> Result<Option<Record>, String> {
        match self.api.get_opt(&self.name).await {
            Ok(Some(lease)) => {
                let record = Record::of(&lease);
                self.last = Some(lease);
                Ok(Some(record))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(self.error(&e)),
        }
    }

    async fn create(&mut self, record: &Record) -> Result<(), String> {
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(self.name.clone()),
                namespace: Some(self.namespace.clone()),
                ..Default::default()
            },
            spec: Some(record.to_spec()),
        };
        match self.api.create(&PostParams::default(), &lease).await {
            Ok(created) => {
                self.last = Some(created);
                Ok(())
            }
            Err(e) => Err(self.error(&e)),
        }
    }

    /// Updates with the resourceVersion of the Lease last read or written (409 when stale).
    async fn update(&mut self, record: &Record) -> Result<(), String> {
        let Some(mut lease) = self.last.clone() else {
            return Err("the Lease was not read before the update".to_string());
        };
        lease.spec = Some(record.to_spec());
        match self.api.replace(&self.name, &PostParams::default(), &lease).await {
            Ok(updated) => {
                self.last = Some(updated);
                Ok(())
            }
            Err(e) => Err(self.error(&e)),
        }
    }
}

/// One try of upstream's `tryAcquireOrRenew`; true when this replica holds the Lease after it.
async fn try_acquire_or_renew(elector: &mut Elector, lock: &mut Lock, timeout: Duration) -> bool {
    let attempt = async {
        // 1. The leader's fast path.
        if let Some(record) = elector.fast_renewal(Instant::now(), Timestamp::now()) {
            match lock.update(&record).await {
                Ok(()) => {
                    elector.on_written(record, Instant::now());
                    return true;
                }
                Err(e) => tracing::debug!("optimistic lease renewal failed: {e}; reading it"),
            }
        }
        // 2. Read it, or create it.
        let current = match lock.get().await {
            Ok(Some(r)) => r,
            Ok(None) => {
                let record = elector.creation(Timestamp::now());
                return match lock.create(&record).await {
                    Ok(()) => {
                        elector.on_written(record, Instant::now());
                        true
                    }
                    Err(e) => {
                        tracing::debug!("creating the lease: {e}");
                        false
                    }
                };
            }
            Err(e) => {
                tracing::debug!("reading the lease: {e}");
                return false;
            }
        };
        // 3. and 4.
        match elector.on_read(current, Instant::now(), Timestamp::now()) {
            Step::HeldBy(holder) => {
                tracing::trace!("the lease is held by {holder}");
                false
            }
            Step::Write(record) => match lock.update(&record).await {
                Ok(()) => {
                    elector.on_written(record, Instant::now());
                    true
                }
                Err(e) => {
                    tracing::debug!("updating the lease: {e}");
                    false
                }
            },
        }
    };
    tokio::time::timeout(timeout, attempt).await.unwrap_or(false)
}

/// Sleeps `period` plus up to 1.2 × `period` of jitter (upstream `wait.Jitter`).
async fn jittered(period: Duration) {
    let factor = rand::random_range(0.0..=1.2);
    tokio::time::sleep(period + period.mul_f64(factor)).await;
}

/// Runs the election: tries to acquire until `shutdown` turns true, then renews while leading,
/// publishing `true` on `leading` while this replica leads. When `shutdown` turns true while
/// leading, it waits for `release` to turn true (the scheduler has finished its in-flight
/// bindings) while still renewing, then releases the Lease.
pub async fn run(
    client: kube::Client,
    config: LeaseConfig,
    leading: watch::Sender<bool>,
    mut shutdown: watch::Receiver<bool>,
    mut release: watch::Receiver<bool>,
) -> Ended {
    let api: Api<Lease> = Api::namespaced(client, &config.namespace);
    let mut lock = Lock {
        api,
        name: config.name.clone(),
        namespace: config.namespace.clone(),
        last: None,
        reported_forbidden: false,
    };
    let retry = config.retry_period;
    let deadline = config.renew_deadline;
    let mut elector = Elector::new(config);

    // Acquire.
    loop {
        if *shutdown.borrow() {
            return Ended::NeverLed;
        }
        if try_acquire_or_renew(&mut elector, &mut lock, deadline).await {
            break;
        }
        tokio::select! {
            _ = jittered(retry) => {}
            changed = shutdown.changed() => {
                if changed.is_err() {
                    return Ended::NeverLed;
                }
            }
        }
    }
    tracing::info!(
        lease = %format!("{}/{}", elector.config().namespace, elector.config().name),
        identity = %elector.config().identity,
        "became the leader"
    );
    leading.send_replace(true);

    // Renew, until the scheduler is done or renewal fails for `renew_deadline`.
    let mut last_renewal = Instant::now();
    loop {
        let dropped = tokio::select! {
            _ = tokio::time::sleep(retry) => false,
            changed = release.changed() => changed.is_err(),
        };
        if dropped || *release.borrow() {
            break;
        }
        let left = deadline.saturating_sub(last_renewal.elapsed());
        if !left.is_zero() && try_acquire_or_renew(&mut elector, &mut lock, left).await {
            last_renewal = Instant::now();
            continue;
        }
        if last_renewal.elapsed() >= deadline {
            tracing::error!(
                "failed to renew the lease within {} ms: leadership lost",
                deadline.as_millis()
            );
            leading.send_replace(false);
            return Ended::Lost;
        }
    }

    // Release.
    let released = tokio::time::timeout(deadline, async {
        let current = lock.get().await.ok().flatten()?;
        let record = elector.release(&current, Timestamp::now())?;
        lock.update(&record).await.ok()?;
        elector.on_written(record, Instant::now());
        Some(())
    })
    .await
    .ok()
    .flatten()
    .is_some();
    leading.send_replace(false);
    if released {
        tracing::info!("released the lease");
    } else {
        tracing::warn!("could not release the lease; a standby takes over once it expires");
    }
    Ended::Released { released }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(identity: &str) -> LeaseConfig {
        LeaseConfig::new("kplace", "kube-system", identity)
    }

    fn wall(secs: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + secs).unwrap()
    }

    fn held_by(holder: &str, transitions: i32) -> Record {
        Record {
            holder: holder.to_string(),
            lease_duration_seconds: 15,
            acquire_time: Some(wall(0)),
            renew_time: Some(wall(0)),
            transitions,
        }
    }

    #[test]
    fn a_lease_held_by_another_replica_is_taken_only_after_it_stops_changing_for_the_lease_duration()
     {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let cases = [
            ("right after seeing it, it is held", vec![(0, held_by("a", 0))], 0, false),
            ("14 s later, still held", vec![(0, held_by("a", 0))], 14, false),
            ("16 s without a change, it is taken", vec![(0, held_by("a", 0))], 16, true),
            (
                "a renewal seen at 10 s restarts the wait",
                vec![
                    (0, held_by("a", 0)),
                    (10, Record { renew_time: Some(wall(10)), ..held_by("a", 0) }),
                ],
                16,
                false,
            ),
            ("a released lease (no holder) is taken at once", vec![(0, held_by("", 3))], 0, true),
        ];
        for (name, reads, at, want_taken) in cases {
            let mut e = Elector::new(config("b"));
            let mut step = Step::HeldBy(String::new());
            for (t, r) in reads {
                step = e.on_read(r, t0 + s(t), wall(t as i64));
            }
            let last = e.observed.clone().unwrap().0;
            step = if at > 0 { e.on_read(last, t0 + s(at), wall(at as i64)) } else { step };
            assert_eq!(matches!(step, Step::Write(_)), want_taken, "{name}: {step:?}");
        }
    }

    #[test]
    fn taking_over_counts_a_transition_and_renewing_keeps_acquire_time() {
        let t0 = Instant::now();
        let mut e = Elector::new(config("b"));
        let Step::Write(taken) = e.on_read(held_by("", 3), t0, wall(5)) else { panic!("taken") };
        assert_eq!((taken.holder.as_str(), taken.transitions), ("b", 4));
        assert_eq!((taken.acquire_time, taken.renew_time), (Some(wall(5)), Some(wall(5))));
        e.on_written(taken.clone(), t0);
        assert!(e.is_leader());

        let fast = e.fast_renewal(t0 + Duration::from_secs(2), wall(7)).expect("leader renews");
        assert_eq!(
            (fast.acquire_time, fast.renew_time, fast.transitions),
            (Some(wall(5)), Some(wall(7)), 4)
        );
        assert_eq!(
            e.fast_renewal(t0 + Duration::from_secs(16), wall(21)),
            None,
            "an expired lease is read again"
        );

        let Step::Write(slow) = e.on_read(taken.clone(), t0 + Duration::from_secs(3), wall(8))
        else {
            panic!("the leader renews on the slow path too")
        };
        assert_eq!((slow.acquire_time, slow.transitions), (Some(wall(5)), 4));
    }

    #[test]
    fn creating_a_missing_lease_starts_at_zero_transitions() {
        let e = Elector::new(config("a"));
        let r = e.creation(wall(1));
        assert_eq!((r.holder.as_str(), r.lease_duration_seconds, r.transitions), ("a", 15, 0));
    }

    #[test]
    fn only_the_holder_releases_and_a_released_lease_names_nobody() {
        let e = Elector::new(config("a"));
        assert_eq!(e.release(&held_by("b", 2), wall(9)), None, "another holder's lease stays");
        let r = e.release(&held_by("a", 2), wall(9)).unwrap();
        assert_eq!((r.holder.as_str(), r.lease_duration_seconds, r.transitions), ("", 1, 2));
    }

    #[test]
    fn timings_are_checked_as_upstream_checks_them() {
        let ok = config("a");
        let cases = [
            ("the defaults are valid", ok.clone(), true),
            (
                "a renew deadline as long as the lease is not",
                LeaseConfig { renew_deadline: ok.lease_duration, ..ok.clone() },
                false,
            ),
            (
                "a renew deadline within 1.2 retry periods is not",
                LeaseConfig { retry_period: Duration::from_secs(9), ..ok.clone() },
                false,
            ),
            (
                "an empty identity is not",
                LeaseConfig { identity: String::new(), ..ok.clone() },
                false,
            ),
        ];
        for (name, c, want) in cases {
            assert_eq!(c.validate().is_ok(), want, "{name}");
        }
    }

    #[test]
    fn records_round_trip_through_a_lease_spec() {
        let r = held_by("a", 7);
        let lease = Lease { metadata: Default::default(), spec: Some(r.to_spec()) };
        assert_eq!(Record::of(&lease), r);
    }
}
