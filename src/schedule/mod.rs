//! `kplace schedule`: the live secondary scheduler. It watches the cluster, gathers the pending
//! pods whose `spec.schedulerName` it serves into batches, plans each batch against the cached
//! cluster state, binds through [`crate::bind`], and reports as kube-scheduler does.
//!
//! Input: a `kube::Client`, the scheduler configuration, [`ScheduleOptions`], an optional
//! listener for `/metrics` and `/healthz`, and a shutdown signal; output: Bindings, Evictions,
//! Events and pod status patches in the cluster, and a [`RunSummary`] when it stops.
//!
//! The loop, with its upstream (v1.35) counterparts:
//!
//! 1. **Watch** Nodes, Pods, PodDisruptionBudgets, PriorityClasses, Namespaces, and the
//!    Services, ReplicationControllers, ReplicaSets and StatefulSets that default spread
//!    selectors read, with kube-runtime reflectors (`informers.rs`; the scheduler's informers,
//!    `pkg/scheduler/eventhandlers.go`). Nothing is scheduled before every cache is synced.
//! 2. **Queue** ([`queue`]): pending pods of a served scheduler name enter the queue; a node
//!    added or changed, or an assigned pod deleted or finished, moves unschedulable pods back
//!    after their backoff (`pkg/scheduler/backend/queue`).
//! 3. **Lead** ([`lease`]): only the replica holding the Lease takes batches
//!    (`cmd/kube-scheduler/app/server.go` with client-go leader election). Followers keep
//!    their caches warm.
//! 4. **Decide** (`cycle.rs`, with steps 5 and 6): a batch is cut after `batch_window` or at `max_batch` pods; the cluster is
//!    built from the caches by the snapshot builder ([`cache`]), with the pods this scheduler
//!    bound but not yet seen bound counted on their nodes (upstream's assumed pods), and
//!    planned by [`planner::plan_batch`] on a blocking thread, so lease renewals and watches go
//!    on meanwhile. With [`ScheduleOptions::steer`] (`--steer PLAN`, the rebalancing plan that
//!    `kplace bind --plan` carries out), the replacement of each moved pod — the next pending
//!    pod of the moved pod's controlling owner once the moved pod is gone or terminating — is
//!    placed on the move's planned node first, when every filter passes there
//!    ([`planner::plan_batch_steered`]); otherwise it is planned like any pod.
//! 5. **Bind** with [`crate::bind::bind`]: evictions for preemptors (nominated first through
//!    `status.nominatedNodeName`), then Bindings, with its retries. A binding that fails goes
//!    back to the queue with backoff; one the cluster already shows done or moot leaves it.
//! 6. **Report** ([`events`]): `Scheduled` events for bound pods; for unschedulable pods a
//!    `FailedScheduling` event with the FitError message and the `PodScheduled=False`
//!    condition (`pkg/scheduler/schedule_one.go`: `handleSchedulingFailure`, `updatePod`).
//!    These writes go through a separate task in order and never hold up the next batch.
//!
//! Shutdown: no new batch is taken, the batch in flight finishes its bindings (while the Lease
//! is still renewed), queued events and patches are flushed (bounded by
//! [`ScheduleOptions::shutdown_timeout`]), the Lease is released, and [`run`] returns. A leader
//! that cannot renew its Lease stops at once, abandoning its in-flight requests, and [`run`]
//! returns [`ScheduleError::LeadershipLost`] (kube-scheduler exits then too).
//!
//! Known differences from kube-scheduler: no queueing hints (every watched cluster change
//! retries every unschedulable pod after its backoff); the cluster model is rebuilt from the
//! caches for each batch; a batch waits for its preemption victims to be gone before the next
//! batch is cut; nominated pods of other schedulers are not considered.

pub mod cache;
mod cycle;
pub mod events;
mod informers;
pub mod lease;
pub mod metrics;
pub mod planner;
pub mod queue;
pub mod settings;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{
    Namespace, Node, PersistentVolumeClaim, Pod, ReplicationController, Service,
};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::jiff::Timestamp;
use kube::api::Api;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use serde::de::DeserializeOwned;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::bind::{ActionResult, BindOptions, Outcome, RetryPolicy};
use crate::eval::Evaluator;
use crate::framework::config::SchedulerConfig;
use crate::plan::Plan;

use cache::{
    Assumed, Objects, is_queued, is_terminal, key_of, node_of, node_signature, queued_pod,
};
use events::WriteObserver;
use events::{REASON_SCHEDULER_ERROR, REASON_UNSCHEDULABLE, Reporter, Write};
use informers::{KINDS, Notice, OPTIONAL_FOR_PREEMPTION, Stores, none, watch_kind};
use lease::LeaseConfig;
use metrics::Metrics;
use queue::{BackoffPolicy, Poll, Queue};

/// How a planning error that came from the GPU starts (so that `auto` retries on the CPU).
const GPU_FAILED: &str = "the GPU failed: ";

/// How the scheduler runs.
#[derive(Debug, Clone, PartialEq)]
pub struct ScheduleOptions {
    /// The `spec.schedulerName`s whose pods this scheduler places.
    pub scheduler_names: Vec<String>,
    /// How long a batch gathers pods after the first one is ready.
    pub batch_window: Duration,
    /// The most pods in one batch.
    pub max_batch: usize,
    /// Backoff of pods that did not get placed.
    pub backoff: BackoffPolicy,
    /// Leader election; `None` leads at once (a single replica).
    pub leader_election: Option<LeaseConfig>,
    /// How bindings and evictions are sent.
    pub bind: BindOptions,
    /// Retries of events and pod status patches.
    pub write_retry: RetryPolicy,
    /// The longest wait for one reply to an event or status write.
    pub write_timeout: Duration,
    /// This host's name, for the events' `reportingInstance`.
    pub hostname: String,
    /// The longest wait at shutdown for queued events and patches to be sent.
    pub shutdown_timeout: Duration,
    /// Moves of rebalancing plans (`kplace rebalance`) whose replacements this scheduler steers
    /// to the planned node ([`planner::Steer`]).
    pub steer: Vec<crate::plan::Move>,
    /// Where batches are evaluated (`--backend`): the GPU context is opened once, at start,
    /// and kept. Under `auto` a GPU failure moves the rest of the run to the CPU.
    pub backend: crate::eval::Backend,
    /// What each batch maximizes within a priority tier (`--objective`).
    pub objective: kplace_solver::Objective,
    /// Test hook: planning fails for batches holding a pod it picks (never set by the CLI).
    #[doc(hidden)]
    pub plan_fault: Option<planner::PlanFault>,
    /// Test hook: awaited between planning a batch and binding it (never set by the CLI).
    #[doc(hidden)]
    pub before_bind: Option<BeforeBind>,
}

/// A test hook awaited between planning a batch and binding it, to change the cluster there.
#[doc(hidden)]
#[derive(Clone)]
#[allow(clippy::type_complexity)]
pub struct BeforeBind(
    pub  Arc<
        dyn Fn() -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> + Send + Sync,
    >,
);

impl Debug for BeforeBind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BeforeBind")
    }
}

impl PartialEq for BeforeBind {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl ScheduleOptions {
    /// Defaults for serving `scheduler_names`: a 500 ms window, batches of at most 1000 pods,
    /// upstream's backoff, no leader election.
    pub fn new(scheduler_names: Vec<String>) -> Self {
        ScheduleOptions {
            scheduler_names,
            batch_window: Duration::from_millis(500),
            max_batch: 1000,
            backoff: BackoffPolicy::default(),
            leader_election: None,
            bind: BindOptions {
                eviction_timeout: Duration::from_secs(60),
                // A batch's retries end within half a minute; its pods are retried later.
                timeout: Duration::from_secs(30),
                ..BindOptions::default()
            },
            write_retry: RetryPolicy::default(),
            write_timeout: Duration::from_secs(30),
            hostname: hostname(),
            shutdown_timeout: Duration::from_secs(10),
            steer: Vec::new(),
            backend: crate::eval::Backend::Cpu,
            objective: kplace_solver::Objective::default(),
            plan_fault: None,
            before_bind: None,
        }
    }
}

/// This machine's host name (`HOSTNAME`, else `/etc/hostname`, else `unknown`).
pub fn hostname() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.trim().is_empty())
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".to_string())
}

/// Why the scheduler could not start or had to stop.
#[derive(Debug, thiserror::Error)]
pub enum ScheduleError {
    /// No scheduler name to serve.
    #[error("no scheduler name to serve")]
    NoSchedulerNames,
    /// A served scheduler name has no profile in the configuration.
    #[error("no profile of the scheduler configuration serves scheduler name {0:?}")]
    NoProfile(String),
    /// The leader-election settings are not usable.
    #[error("leader election: {0}")]
    LeaderElection(String),
    /// This replica led and could not renew its Lease in time.
    #[error("leader election lost: the lease was not renewed within the renew deadline")]
    LeadershipLost,
    /// `--backend gpu` and no usable GPU.
    #[error("--backend {backend}: {source}")]
    Backend {
        /// The backend asked for.
        backend: crate::eval::Backend,
        /// Why it could not be opened.
        #[source]
        source: crate::eval::EvalError,
    },
}

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct RunSummary {
    /// Whether this replica led at some point.
    pub led: bool,
    /// Batches decided.
    pub batches: u64,
    /// Pods bound.
    pub bound: u64,
    /// Replacements of moved pods placed on their planned node (`--steer`).
    pub steered: u64,
    /// Times a pod was found unschedulable.
    pub unschedulable: u64,
    /// Whether the Lease was released at the end (`None` without leader election or when this
    /// replica never led).
    pub lease_released: Option<bool>,
}

/// What the loop remembers of a pod it has seen.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PodSeen {
    uid: String,
    /// Bound to a node and not finished: it holds room there.
    holds_room: bool,
}

/// The `snake_case` name of an outcome, as reports and metrics use it.
pub fn outcome_name(o: Outcome) -> &'static str {
    o.name()
}

struct Loop {
    client: kube::Client,
    config: Arc<SchedulerConfig>,
    options: ScheduleOptions,
    stores: Stores,
    metrics: Arc<Metrics>,
    writes: mpsc::UnboundedSender<Write>,
    queue: Queue,
    assumed: BTreeMap<String, Assumed>,
    pods_seen: BTreeMap<String, PodSeen>,
    nodes_seen: BTreeMap<String, u64>,
    relist_pods: Option<BTreeSet<String>>,
    relist_nodes: Option<BTreeSet<String>>,
    synced: BTreeSet<&'static str>,
    /// Optional kinds the service account may not read (scheduling goes on without them).
    forbidden: BTreeSet<&'static str>,
    /// When the batch being decided was cut.
    batch_started: Instant,
    /// Objects already warned about as not converting.
    warned: BTreeSet<String>,
    summary: RunSummary,
    /// The moves whose replacements are steered, with the moved pods' owners once seen.
    steering: Vec<planner::Steer>,
    /// The evaluator batches are planned on (lent to the planning thread for each batch).
    evaluator: Option<Evaluator>,
}

/// Resolves when `leading` turns false (or its sender goes away).
async fn lost(leading: &mut watch::Receiver<bool>) {
    loop {
        if !*leading.borrow_and_update() {
            return;
        }
        if leading.changed().await.is_err() {
            return;
        }
    }
}

impl Loop {
    fn on_notice(&mut self, notice: Notice, now: Instant) {
        match notice {
            Notice::Pod(e) => self.on_pod(*e, now),
            Notice::Node(e) => self.on_node(*e, now),
            Notice::Synced(kind) => {
                self.metrics.synced(kind);
                self.forbidden.remove(kind);
                if self.synced.insert(kind) {
                    tracing::debug!("{kind} synced");
                }
            }
            Notice::Forbidden(kind) => {
                self.forbidden.insert(kind);
            }
        }
    }

    fn on_pod(&mut self, event: watcher::Event<Pod>, now: Instant) {
        match event {
            watcher::Event::Init => self.relist_pods = Some(BTreeSet::new()),
            watcher::Event::InitApply(p) => {
                if let Some(seen) = self.relist_pods.as_mut() {
                    seen.insert(key_of(&p.metadata));
                }
                self.pod_applied(&p, now);
            }
            watcher::Event::Apply(p) => self.pod_applied(&p, now),
            watcher::Event::Delete(p) => self.pod_deleted(&key_of(&p.metadata), now),
            watcher::Event::InitDone => {
                if let Some(seen) = self.relist_pods.take() {
                    let gone: Vec<String> =
                        self.pods_seen.keys().filter(|k| !seen.contains(*k)).cloned().collect();
                    for k in gone {
                        self.pod_deleted(&k, now);
                    }
                }
                self.synced.insert("pods");
                self.metrics.synced("pods");
            }
        }
    }

    fn pod_applied(&mut self, pod: &Pod, now: Instant) {
        let key = key_of(&pod.metadata);
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let seen =
            PodSeen { uid: uid.clone(), holds_room: node_of(pod).is_some() && !is_terminal(pod) };
        let holds = seen.holds_room;
        if let Some(prev) = self.pods_seen.insert(key.clone(), seen)
            && prev.holds_room
            && (!holds || prev.uid != uid)
        {
            // An assigned pod finished or was replaced: its room is free.
            self.queue.cluster_changed(now);
        }
        if self.assumed.get(&key).is_some_and(|a| a.uid != uid || node_of(pod).is_some()) {
            self.assumed.remove(&key);
        }
        if is_queued(pod, &self.options.scheduler_names) {
            self.queue.upsert(&key, queued_pod(pod), now);
        } else {
            self.queue.remove(&key);
        }
    }

    fn pod_deleted(&mut self, key: &str, now: Instant) {
        if self.pods_seen.remove(key).is_some_and(|p| p.holds_room) {
            self.queue.cluster_changed(now);
        }
        self.queue.remove(key);
        self.assumed.remove(key);
    }

    fn on_node(&mut self, event: watcher::Event<Node>, now: Instant) {
        let applied = |this: &mut Self, n: &Node| {
            let name = n.metadata.name.clone().unwrap_or_default();
            let sig = node_signature(n);
            if this.nodes_seen.insert(name, sig) != Some(sig) {
                this.queue.cluster_changed(now);
            }
        };
        match event {
            watcher::Event::Init => self.relist_nodes = Some(BTreeSet::new()),
            watcher::Event::InitApply(n) => {
                if let Some(seen) = self.relist_nodes.as_mut() {
                    seen.insert(n.metadata.name.clone().unwrap_or_default());
                }
                applied(self, &n);
            }
            watcher::Event::Apply(n) => applied(self, &n),
            watcher::Event::Delete(n) => {
                self.nodes_seen.remove(n.metadata.name.as_deref().unwrap_or_default());
            }
            watcher::Event::InitDone => {
                if let Some(seen) = self.relist_nodes.take() {
                    self.nodes_seen.retain(|k, _| seen.contains(k));
                }
                self.synced.insert("nodes");
                self.metrics.synced("nodes");
            }
        }
    }

    fn write(&self, w: Write) {
        if self.writes.send(w).is_err() {
            tracing::debug!("the writer has stopped; a write was dropped");
        }
    }

    fn reporter(&self, pod: &Pod) -> Reporter {
        let name = pod
            .spec
            .as_ref()
            .and_then(|s| s.scheduler_name.as_deref())
            .filter(|s| !s.is_empty())
            .unwrap_or("default-scheduler");
        Reporter::new(name, &self.options.hostname)
    }

    /// Reports a pod that did not get placed: a `FailedScheduling` event and the
    /// `PodScheduled=False` condition (nominated node cleared).
    fn report_failure(&self, key: &str, reason: &str, message: &str) {
        let Some(pod) = self.stores.pod(key) else { return };
        let now = Timestamp::now();
        let event = events::failed_scheduling_event(&pod, message, &self.reporter(&pod), now);
        self.write(Write::Event(Box::new(event)));
        if let Some(patch) = events::failure_status_patch(&pod, reason, message, Some(""), now) {
            self.write(Write::PodStatus {
                namespace: pod.metadata.namespace.clone().unwrap_or_default(),
                name: pod.metadata.name.clone().unwrap_or_default(),
                patch,
            });
        }
    }

    fn fail_all(&mut self, keys: &[String], message: &str) {
        let now = Instant::now();
        for k in keys {
            self.attempt(k, metrics::ERROR);
            self.assumed.remove(k);
            self.queue.failed(k, now);
            self.report_failure(k, REASON_SCHEDULER_ERROR, message);
        }
    }

    /// The profile (scheduler name) of a pod, for metrics.
    fn profile_of(&self, key: &str) -> String {
        self.stores
            .pod(key)
            .and_then(|p| p.spec.as_ref().and_then(|s| s.scheduler_name.clone()))
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "default-scheduler".to_string())
    }

    /// Records one scheduling attempt of `key` ending now with `result`.
    fn attempt(&self, key: &str, result: &'static str) {
        self.metrics.attempt(result, &self.profile_of(key), self.batch_started.elapsed());
    }

    /// The main loop; returns on shutdown or lost leadership.
    async fn run(
        &mut self,
        mut notices: mpsc::UnboundedReceiver<Notice>,
        mut leading: watch::Receiver<bool>,
        mut shutdown: watch::Receiver<bool>,
    ) -> Result<(), ScheduleError> {
        let mut was_leading = false;
        loop {
            if *shutdown.borrow() {
                return Ok(());
            }
            let now = Instant::now();
            self.metrics.queue(self.queue.counts());
            let is_leading = *leading.borrow();
            if is_leading && !was_leading {
                self.summary.led = true;
                self.metrics.leader(true);
            }
            if was_leading && !is_leading {
                self.metrics.leader(false);
                return Err(ScheduleError::LeadershipLost);
            }
            was_leading = is_leading;
            let mut wake: Option<Instant> = None;
            self.metrics.turn(now);
            let ready = KINDS.iter().all(|k| self.synced.contains(k) || self.forbidden.contains(k));
            if is_leading && ready {
                match self.queue.poll(now, self.options.batch_window, self.options.max_batch) {
                    Poll::Batch(keys) => {
                        self.metrics.in_batch(Some(now));
                        let done = self.cycle(keys, &mut leading).await;
                        self.metrics.in_batch(None);
                        done?;
                        continue;
                    }
                    Poll::WaitUntil(t) => wake = Some(t),
                    Poll::Idle(t) => wake = t,
                }
            }
            // Turn at least every 10 s, so that liveness sees the loop alive when idle.
            let heartbeat = now + Duration::from_secs(10);
            let wake = Some(wake.map_or(heartbeat, |w| w.min(heartbeat)));
            let sleep = async move {
                match wake {
                    Some(t) => tokio::time::sleep_until(tokio::time::Instant::from_std(t)).await,
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                biased;
                changed = shutdown.changed() => {
                    if changed.is_err() {
                        return Ok(());
                    }
                }
                changed = leading.changed() => {
                    if changed.is_err() && was_leading {
                        return Err(ScheduleError::LeadershipLost);
                    }
                }
                notice = notices.recv() => {
                    let Some(notice) = notice else { return Ok(()) };
                    let now = Instant::now();
                    self.on_notice(notice, now);
                    while let Ok(more) = notices.try_recv() {
                        self.on_notice(more, now);
                    }
                }
                _ = sleep => {}
            }
        }
    }
}

/// Checks that every served name has a profile.
pub fn check_profiles(config: &SchedulerConfig, names: &[String]) -> Result<(), ScheduleError> {
    if names.is_empty() {
        return Err(ScheduleError::NoSchedulerNames);
    }
    for n in names {
        if config.profile_for(n).is_none() {
            return Err(ScheduleError::NoProfile(n.clone()));
        }
    }
    Ok(())
}

/// Runs the scheduler until `shutdown` turns true (then it finishes the batch in flight,
/// flushes its writes, releases the Lease and returns the summary) or until it loses the
/// leadership it held. Serves `/metrics` and `/healthz` on `metrics_listener` if given.
pub async fn run(
    client: kube::Client,
    config: SchedulerConfig,
    options: ScheduleOptions,
    metrics_listener: Option<TcpListener>,
    shutdown: watch::Receiver<bool>,
) -> Result<RunSummary, ScheduleError> {
    check_profiles(&config, &options.scheduler_names)?;
    if let Some(le) = &options.leader_election {
        le.validate().map_err(ScheduleError::LeaderElection)?;
    }
    let selected = Evaluator::select(options.backend)
        .map_err(|source| ScheduleError::Backend { backend: options.backend, source })?;
    if let Some(notice) = &selected.notice {
        tracing::warn!("{notice}");
    }
    tracing::info!("planning batches on {}", selected.evaluator.describe());
    let evaluator = selected.evaluator;
    let metrics = Arc::new(Metrics::new());
    metrics.expect(&KINDS, options.leader_election.is_some());

    // Watches.
    let (tx, notices) = mpsc::unbounded_channel();
    let mut tasks: Vec<JoinHandle<()>> = Vec::new();
    let mut spawn = |t: JoinHandle<()>| tasks.push(t);
    let (nodes, t) = watch_kind::<Node>(&client, "nodes", tx.clone(), Arc::clone(&metrics), |e| {
        Some(Notice::Node(Box::new(e)))
    });
    spawn(t);
    let (pods, t) = watch_kind::<Pod>(&client, "pods", tx.clone(), Arc::clone(&metrics), |e| {
        Some(Notice::Pod(Box::new(e)))
    });
    spawn(t);
    let (pdbs, t) = watch_kind(
        &client,
        "poddisruptionbudgets",
        tx.clone(),
        Arc::clone(&metrics),
        none::<PodDisruptionBudget>,
    );
    spawn(t);
    let (pvcs, t) = watch_kind(
        &client,
        "persistentvolumeclaims",
        tx.clone(),
        Arc::clone(&metrics),
        none::<PersistentVolumeClaim>,
    );
    spawn(t);
    let (priority_classes, t) = watch_kind(
        &client,
        "priorityclasses",
        tx.clone(),
        Arc::clone(&metrics),
        none::<PriorityClass>,
    );
    spawn(t);
    let (namespaces, t) =
        watch_kind(&client, "namespaces", tx.clone(), Arc::clone(&metrics), none::<Namespace>);
    spawn(t);
    let (services, t) =
        watch_kind(&client, "services", tx.clone(), Arc::clone(&metrics), none::<Service>);
    spawn(t);
    let (rcs, t) = watch_kind(
        &client,
        "replicationcontrollers",
        tx.clone(),
        Arc::clone(&metrics),
        none::<ReplicationController>,
    );
    spawn(t);
    let (rss, t) =
        watch_kind(&client, "replicasets", tx.clone(), Arc::clone(&metrics), none::<ReplicaSet>);
    spawn(t);
    let (sss, t) =
        watch_kind(&client, "statefulsets", tx.clone(), Arc::clone(&metrics), none::<StatefulSet>);
    spawn(t);
    drop(tx);
    let stores =
        Stores { nodes, pods, pdbs, pvcs, priority_classes, namespaces, services, rcs, rss, sss };

    // Writes.
    let (writes, write_rx) = mpsc::unbounded_channel();
    let writer = events::Writer::new(client.clone(), options.write_retry, options.write_timeout);
    let observer = Arc::clone(&metrics);
    let writer_task = tokio::spawn(async move { writer.run(write_rx, &*observer).await });

    // Metrics.
    let (stop_metrics, metrics_stop_rx) = watch::channel(false);
    let metrics_task = metrics_listener
        .map(|l| tokio::spawn(metrics::serve(l, Arc::clone(&metrics), metrics_stop_rx)));

    // Leadership.
    let (leading_tx, leading_rx) = watch::channel(false);
    let (release_tx, release_rx) = watch::channel(false);
    let elector = match options.leader_election.clone() {
        Some(le) => Some(tokio::spawn(lease::run(
            client.clone(),
            le,
            leading_tx.clone(),
            shutdown.clone(),
            release_rx,
        ))),
        None => {
            leading_tx.send_replace(true);
            None
        }
    };

    let shutdown_timeout = options.shutdown_timeout;
    let mut lp = Loop {
        client,
        config: Arc::new(config),
        queue: Queue::new(options.backoff),
        options,
        stores,
        metrics: Arc::clone(&metrics),
        writes,
        assumed: BTreeMap::new(),
        pods_seen: BTreeMap::new(),
        nodes_seen: BTreeMap::new(),
        relist_pods: None,
        relist_nodes: None,
        synced: BTreeSet::new(),
        forbidden: BTreeSet::new(),
        batch_started: Instant::now(),
        warned: BTreeSet::new(),
        summary: RunSummary::default(),
        steering: Vec::new(),
        evaluator: Some(evaluator),
    };
    lp.steering = lp.options.steer.iter().map(planner::Steer::new).collect();
    let result = lp.run(notices, leading_rx, shutdown).await;
    let Loop { mut summary, writes, .. } = lp;

    // Flush writes, then let go of the Lease.
    drop(writes);
    if tokio::time::timeout(shutdown_timeout, writer_task).await.is_err() {
        tracing::warn!(
            "events and status patches still queued after {} s were dropped",
            shutdown_timeout.as_secs()
        );
    }
    release_tx.send_replace(true);
    if let Some(elector) = elector {
        match elector.await {
            Ok(lease::Ended::Released { released }) => summary.lease_released = Some(released),
            Ok(_) => {}
            Err(e) => tracing::warn!("leader election task: {e}"),
        }
    }
    drop(leading_tx);
    stop_metrics.send_replace(true);
    if let Some(t) = metrics_task {
        let _ = t.await;
    }
    for t in tasks {
        t.abort();
    }
    tracing::info!(
        batches = summary.batches,
        bound = summary.bound,
        unschedulable = summary.unschedulable,
        "stopped"
    );
    result.map(|()| summary)
}
