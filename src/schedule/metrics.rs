//! Prometheus metrics of `kplace schedule` and the small HTTP server that serves them with the
//! health checks.
//!
//! Input: counts, durations and states recorded by the scheduling loop; output: the Prometheus
//! text exposition format (version 0.0.4) on `GET /metrics`, liveness on `GET /healthz` (and
//! `/livez`), readiness on `GET /readyz`. Buckets are fixed, so the output is deterministic for
//! given observations.
//!
//! **Names.** kube-scheduler's (v1.35, `pkg/scheduler/metrics/metrics.go`), with its labels,
//! types and buckets, so that dashboards and alerts written for it work:
//! `scheduler_schedule_attempts_total{result,profile}` (`scheduled`, `unschedulable`, `error`),
//! `scheduler_scheduling_attempt_duration_seconds{result,profile}` (histogram, 1 ms × 2^0..14),
//! `scheduler_scheduling_algorithm_duration_seconds` (histogram, 1 ms × 2^0..14),
//! `scheduler_pending_pods{queue}` (`active`, `backoff`, `unschedulable`),
//! `scheduler_preemption_attempts_total`, `scheduler_preemption_victims` (histogram, 1 × 2^0..6)
//! and `scheduler_pod_scheduling_attempts` (histogram, 1 × 2^0..4). Where a batch differs from
//! upstream's one-pod cycle: an attempt's duration is its batch's, from the cut to the pod's
//! binding result (or to the decision, for unschedulable pods and errors); the algorithm
//! duration is observed once per batch; one preemption attempt is counted per preemptor
//! that evicts. kplace's own metrics keep the `kplace_schedule_` prefix beside them.
//!
//! **Health** (what a kubelet probe should act on):
//! - *Liveness* (`/healthz`, `/livez`): the scheduling loop turns (it did within
//!   [`LIVENESS_STALL`], or it is inside a batch). It does not depend on the API server: an
//!   outage would otherwise restart every replica at once, which fixes nothing and adds load when
//!   the server returns (kube-scheduler's `/healthz` does not check it either).
//! - *Readiness* (`/readyz`): every watched kind has synced (kinds the service account may not
//!   read count as synced once reported), no watch has failed continuously for
//!   [`WATCH_FAILING_UNREADY`], and fewer than [`FAILED_BATCHES_UNREADY`] batches in a row
//!   failed as a whole. A replica that leads and one that stands by are both ready (a standby is
//!   healthy and takes over when needed); the body says which. An API server unreachable at
//!   start therefore shows as not ready (`informer-sync`), not as a dead process.
//!
//! **Server**: bounded for an endpoint that may be exposed: at most [`ServeOptions`]'s
//! `max_connections` at once (further connections are closed at accept), a header-read timeout,
//! and a lifetime per connection.

use std::collections::{BTreeMap, BTreeSet};
use std::convert::Infallible;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};

use super::events::WriteObserver;
use super::queue::QueueCounts;

/// A histogram with fixed upper bounds.
#[derive(Debug, Clone, PartialEq)]
struct Histogram {
    bounds: Vec<f64>,
    /// Observations at most each bound (not cumulative; summed when rendered).
    counts: Vec<u64>,
    sum: f64,
    count: u64,
}

impl Histogram {
    fn new(bounds: &[f64]) -> Self {
        Histogram { bounds: bounds.to_vec(), counts: vec![0; bounds.len()], sum: 0.0, count: 0 }
    }

    fn observe(&mut self, v: f64) {
        if let Some(i) = self.bounds.iter().position(|b| v <= *b)
            && let Some(c) = self.counts.get_mut(i)
        {
            *c += 1;
        }
        self.sum += v;
        self.count += 1;
    }

    fn render(&self, out: &mut String, name: &str, help: &str) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        self.render_series(out, name, "");
    }

    /// The series of one label set (`labels` like `a="x",b="y"`, or empty).
    fn render_series(&self, out: &mut String, name: &str, labels: &str) {
        let sep = if labels.is_empty() { "" } else { "," };
        let braces = if labels.is_empty() { String::new() } else { format!("{{{labels}}}") };
        let mut cumulative = 0;
        for (b, c) in self.bounds.iter().zip(&self.counts) {
            cumulative += c;
            let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"{b}\"}} {cumulative}");
        }
        let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {}", self.count);
        let _ = writeln!(out, "{name}_sum{braces} {}", self.sum);
        let _ = writeln!(out, "{name}_count{braces} {}", self.count);
    }
}

/// `ExponentialBuckets(start, factor, count)` of Prometheus' Go client.
fn exponential(start: f64, factor: f64, count: usize) -> Vec<f64> {
    (0..count)
        .scan(start, |b, _| {
            let v = *b;
            *b *= factor;
            Some(v)
        })
        .collect()
}

/// What readiness and liveness look at.
#[derive(Debug)]
struct Health {
    /// The kinds that must sync.
    kinds: Vec<&'static str>,
    synced: BTreeSet<&'static str>,
    /// Kinds the service account may not read, with why (counted as synced).
    forbidden: BTreeMap<&'static str, String>,
    /// Kinds whose watch fails, since when.
    failing: BTreeMap<&'static str, Instant>,
    /// Batches in a row that failed as a whole.
    failed_batches: u32,
    /// The loop's last turn.
    last_turn: Instant,
    /// Inside a batch (planning or binding) since.
    in_batch: Option<Instant>,
    leader_election: bool,
}

#[derive(Debug)]
struct Inner {
    health: Health,
    attempts: BTreeMap<(&'static str, String), u64>,
    attempt_duration: BTreeMap<(&'static str, String), Histogram>,
    algorithm: Histogram,
    preemption_attempts: u64,
    preemption_victims: Histogram,
    pod_attempts: Histogram,
    planning_errors: u64,
    batches: u64,
    batch_size: Histogram,
    decision: Histogram,
    bindings: BTreeMap<String, u64>,
    evictions: BTreeMap<String, u64>,
    unschedulable: u64,
    writes: BTreeMap<(String, bool), u64>,
    queue: QueueCounts,
    leader: bool,
}

/// The scheduler's metrics; shared between the loop and the HTTP server.
#[derive(Debug)]
pub struct Metrics {
    inner: Mutex<Inner>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

/// Batch-size buckets.
const SIZE_BUCKETS: &[f64] =
    &[1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0];
/// Decision-latency buckets, seconds.
const LATENCY_BUCKETS: &[f64] =
    &[0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0];

/// Liveness fails when the loop has not turned for this long outside a batch.
pub const LIVENESS_STALL: Duration = Duration::from_secs(120);
/// Readiness fails when a watch has failed continuously for this long.
pub const WATCH_FAILING_UNREADY: Duration = Duration::from_secs(30);
/// Readiness fails after this many batches in a row failed as a whole.
pub const FAILED_BATCHES_UNREADY: u32 = 3;

/// The `result` label values of `scheduler_schedule_attempts_total`.
pub const SCHEDULED: &str = "scheduled";
/// A pod that fits nowhere.
pub const UNSCHEDULABLE: &str = "unschedulable";
/// An internal problem (planning or binding failed).
pub const ERROR: &str = "error";

impl Metrics {
    /// No observations yet; no kinds to sync.
    pub fn new() -> Self {
        Metrics {
            inner: Mutex::new(Inner {
                health: Health {
                    kinds: Vec::new(),
                    synced: BTreeSet::new(),
                    forbidden: BTreeMap::new(),
                    failing: BTreeMap::new(),
                    failed_batches: 0,
                    last_turn: Instant::now(),
                    in_batch: None,
                    leader_election: false,
                },
                attempts: BTreeMap::new(),
                attempt_duration: BTreeMap::new(),
                algorithm: Histogram::new(&exponential(0.001, 2.0, 15)),
                preemption_attempts: 0,
                preemption_victims: Histogram::new(&exponential(1.0, 2.0, 7)),
                pod_attempts: Histogram::new(&exponential(1.0, 2.0, 5)),
                planning_errors: 0,
                batches: 0,
                batch_size: Histogram::new(SIZE_BUCKETS),
                decision: Histogram::new(LATENCY_BUCKETS),
                bindings: BTreeMap::new(),
                evictions: BTreeMap::new(),
                unschedulable: 0,
                writes: BTreeMap::new(),
                queue: QueueCounts::default(),
                leader: false,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The kinds that must sync before the scheduler is ready, and whether it elects a leader.
    pub fn expect(&self, kinds: &[&'static str], leader_election: bool) {
        let mut m = self.lock();
        m.health.kinds = kinds.to_vec();
        m.health.leader_election = leader_election;
    }

    /// A kind's cache synced (its watch works again).
    pub fn synced(&self, kind: &'static str) {
        let mut m = self.lock();
        m.health.synced.insert(kind);
        m.health.failing.remove(kind);
        m.health.forbidden.remove(kind);
    }

    /// A kind's watch failed (`now`); it stays failing until it lists or watches again.
    pub fn watch_failed(&self, kind: &'static str, now: Instant) {
        self.lock().health.failing.entry(kind).or_insert(now);
    }

    /// A kind's watch works (an event arrived).
    pub fn watch_ok(&self, kind: &'static str) {
        self.lock().health.failing.remove(kind);
    }

    /// The service account may not read `kind`: scheduling goes on without it.
    pub fn forbidden(&self, kind: &'static str, why: &str) {
        let mut m = self.lock();
        m.health.forbidden.insert(kind, why.to_string());
        m.health.failing.remove(kind);
    }

    /// The loop turned.
    pub fn turn(&self, now: Instant) {
        self.lock().health.last_turn = now;
    }

    /// A batch started (`Some(now)`) or ended (`None`).
    pub fn in_batch(&self, since: Option<Instant>) {
        self.lock().health.in_batch = since;
    }

    /// A batch ended; `failed`: it failed as a whole (nothing decided or nothing bound).
    pub fn batch_result(&self, failed: bool) {
        let mut m = self.lock();
        m.health.failed_batches =
            if failed { m.health.failed_batches.saturating_add(1) } else { 0 };
    }

    /// Pods whose planning failed.
    pub fn planning_errors(&self, n: usize) {
        self.lock().planning_errors += n as u64;
    }

    /// One scheduling attempt of a pod of `profile` ended with `result` ([`SCHEDULED`],
    /// [`UNSCHEDULABLE`], [`ERROR`]) after `took`.
    pub fn attempt(&self, result: &'static str, profile: &str, took: Duration) {
        let mut m = self.lock();
        *m.attempts.entry((result, profile.to_string())).or_insert(0) += 1;
        m.attempt_duration
            .entry((result, profile.to_string()))
            .or_insert_with(|| Histogram::new(&exponential(0.001, 2.0, 15)))
            .observe(took.as_secs_f64());
    }

    /// A pod was bound after this many attempts (this one included).
    pub fn scheduled_after(&self, attempts: u32) {
        self.lock().pod_attempts.observe(f64::from(attempts));
    }

    /// A preemptor evicts `victims` pods.
    pub fn preemption(&self, victims: usize) {
        let mut m = self.lock();
        m.preemption_attempts += 1;
        m.preemption_victims.observe(victims as f64);
    }

    /// Attempts so far with this result and profile.
    pub fn attempts(&self, result: &str, profile: &str) -> u64 {
        let m = self.lock();
        m.attempts.iter().filter(|((r, p), _)| *r == result && p == profile).map(|(_, n)| *n).sum()
    }

    /// One batch of `size` pods was decided in `latency`.
    pub fn batch(&self, size: usize, latency: Duration) {
        let mut m = self.lock();
        m.batches += 1;
        m.batch_size.observe(size as f64);
        m.decision.observe(latency.as_secs_f64());
        m.algorithm.observe(latency.as_secs_f64());
    }

    /// Liveness at `now`: whether the loop turns, and the report.
    pub fn liveness(&self, now: Instant) -> (bool, String) {
        let h = &self.lock().health;
        let idle = now.saturating_duration_since(h.last_turn);
        if h.in_batch.is_some() || idle < LIVENESS_STALL {
            (true, "[+]scheduling-loop ok\nhealthz check passed\n".to_string())
        } else {
            (
                false,
                format!(
                    "[-]scheduling-loop failed: no turn for {} s\nhealthz check failed\n",
                    idle.as_secs()
                ),
            )
        }
    }

    /// Readiness at `now`: whether the scheduler is ready, and the report (one line per check,
    /// `[+]` passed, `[-]` failed, as the Kubernetes components write it).
    pub fn readiness(&self, now: Instant) -> (bool, String) {
        let m = self.lock();
        let h = &m.health;
        let mut out = String::new();
        let mut ok = true;
        let missing: Vec<&str> = h
            .kinds
            .iter()
            .copied()
            .filter(|k| !h.synced.contains(k) && !h.forbidden.contains_key(k))
            .collect();
        if missing.is_empty() {
            let _ = writeln!(out, "[+]informer-sync ok");
        } else {
            ok = false;
            let _ = writeln!(out, "[-]informer-sync failed: not synced: {}", missing.join(", "));
        }
        for (kind, why) in &h.forbidden {
            let _ = writeln!(out, "[+]informer-sync: {kind} not readable: {why}");
        }
        let failing: Vec<String> = h
            .failing
            .iter()
            .filter(|(_, since)| now.saturating_duration_since(**since) >= WATCH_FAILING_UNREADY)
            .map(|(k, since)| {
                format!("{k} ({} s)", now.saturating_duration_since(*since).as_secs())
            })
            .collect();
        if failing.is_empty() {
            let _ = writeln!(out, "[+]watches ok");
        } else {
            ok = false;
            let _ = writeln!(out, "[-]watches failed: failing for: {}", failing.join(", "));
        }
        if h.failed_batches >= FAILED_BATCHES_UNREADY {
            ok = false;
            let _ =
                writeln!(out, "[-]batches failed: the last {} batches failed", h.failed_batches);
        } else {
            let _ = writeln!(out, "[+]batches ok");
        }
        let role = match (h.leader_election, m.leader) {
            (false, _) => "leading (no leader election)",
            (true, true) => "leading",
            (true, false) => "standby",
        };
        let _ = writeln!(out, "[+]leader-election ok: {role}");
        let _ = writeln!(out, "readyz check {}", if ok { "passed" } else { "failed" });
        (ok, out)
    }

    /// A binding ended with this outcome (`bound`, `already_bound`, `conflict`, …).
    pub fn binding(&self, outcome: &str) {
        *self.lock().bindings.entry(outcome.to_string()).or_insert(0) += 1;
    }

    /// An eviction ended with this outcome.
    pub fn eviction(&self, outcome: &str) {
        *self.lock().evictions.entry(outcome.to_string()).or_insert(0) += 1;
    }

    /// A pod was found unschedulable.
    pub fn unschedulable(&self) {
        self.lock().unschedulable += 1;
    }

    /// The queue now holds these pods.
    pub fn queue(&self, counts: QueueCounts) {
        self.lock().queue = counts;
    }

    /// Whether this replica leads.
    pub fn leader(&self, leading: bool) {
        self.lock().leader = leading;
    }

    /// Bindings made so far with this outcome.
    pub fn bindings(&self, outcome: &str) -> u64 {
        self.lock().bindings.get(outcome).copied().unwrap_or(0)
    }

    /// Batches decided so far.
    pub fn batches(&self) -> u64 {
        self.lock().batches
    }

    /// The text exposition.
    pub fn render(&self) -> String {
        let m = self.lock();
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# HELP scheduler_schedule_attempts_total Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem.\n\
             # TYPE scheduler_schedule_attempts_total counter"
        );
        for ((result, profile), n) in &m.attempts {
            let _ = writeln!(
                out,
                "scheduler_schedule_attempts_total{{profile=\"{}\",result=\"{result}\"}} {n}",
                escape(profile)
            );
        }
        let name = "scheduler_scheduling_attempt_duration_seconds";
        let _ = writeln!(
            out,
            "# HELP {name} Scheduling attempt latency in seconds (scheduling algorithm + binding)\n# TYPE {name} histogram"
        );
        for ((result, profile), h) in &m.attempt_duration {
            let labels = format!("profile=\"{}\",result=\"{result}\"", escape(profile));
            h.render_series(&mut out, name, &labels);
        }
        m.algorithm.render(
            &mut out,
            "scheduler_scheduling_algorithm_duration_seconds",
            "Scheduling algorithm latency in seconds",
        );
        let q = m.queue;
        let _ = writeln!(
            out,
            "# HELP scheduler_pending_pods Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods that the scheduler attempted to schedule and failed.\n\
             # TYPE scheduler_pending_pods gauge"
        );
        for (queue, n) in
            [("active", q.active), ("backoff", q.backoff), ("unschedulable", q.unschedulable)]
        {
            let _ = writeln!(out, "scheduler_pending_pods{{queue=\"{queue}\"}} {n}");
        }
        let _ = writeln!(
            out,
            "# HELP scheduler_preemption_attempts_total Total preemption attempts in the cluster till now\n\
             # TYPE scheduler_preemption_attempts_total counter\n\
             scheduler_preemption_attempts_total {}",
            m.preemption_attempts
        );
        m.preemption_victims.render(
            &mut out,
            "scheduler_preemption_victims",
            "Number of selected preemption victims",
        );
        m.pod_attempts.render(
            &mut out,
            "scheduler_pod_scheduling_attempts",
            "Number of attempts to successfully schedule a pod.",
        );
        let _ = writeln!(
            out,
            "# HELP kplace_schedule_planning_errors_total Pods whose batch could not be planned with them (set aside and reported).\n\
             # TYPE kplace_schedule_planning_errors_total counter\n\
             kplace_schedule_planning_errors_total {}",
            m.planning_errors
        );
        let h = &m.health;
        let _ = writeln!(
            out,
            "# HELP kplace_schedule_synced Whether a watched kind's cache has synced (forbidden kinds: 0).\n\
             # TYPE kplace_schedule_synced gauge"
        );
        for kind in &h.kinds {
            let _ = writeln!(
                out,
                "kplace_schedule_synced{{kind=\"{kind}\"}} {}",
                u8::from(h.synced.contains(kind))
            );
        }
        let _ = writeln!(
            out,
            "# HELP kplace_schedule_batches_total Batches of pending pods decided.\n\
             # TYPE kplace_schedule_batches_total counter\n\
             kplace_schedule_batches_total {}",
            m.batches
        );
        m.batch_size.render(&mut out, "kplace_schedule_batch_size", "Pods per batch.");
        m.decision.render(
            &mut out,
            "kplace_schedule_decision_duration_seconds",
            "Time from cutting a batch to its plan (building the cluster state and planning).",
        );
        let _ = writeln!(
            out,
            "# HELP kplace_schedule_bindings_total Bindings by outcome.\n\
             # TYPE kplace_schedule_bindings_total counter"
        );
        for (o, n) in &m.bindings {
            let _ = writeln!(out, "kplace_schedule_bindings_total{{outcome=\"{o}\"}} {n}");
        }
        let _ = writeln!(
            out,
            "# HELP kplace_schedule_evictions_total Evictions of preemption victims by outcome.\n\
             # TYPE kplace_schedule_evictions_total counter"
        );
        for (o, n) in &m.evictions {
            let _ = writeln!(out, "kplace_schedule_evictions_total{{outcome=\"{o}\"}} {n}");
        }
        let _ = writeln!(
            out,
            "# HELP kplace_schedule_unschedulable_total Pods found unschedulable.\n\
             # TYPE kplace_schedule_unschedulable_total counter\n\
             kplace_schedule_unschedulable_total {}",
            m.unschedulable
        );
        let _ = writeln!(
            out,
            "# HELP kplace_schedule_writes_total Events and pod status patches sent, by result.\n\
             # TYPE kplace_schedule_writes_total counter"
        );
        for ((kind, ok), n) in &m.writes {
            let result = if *ok { "ok" } else { "error" };
            let _ = writeln!(
                out,
                "kplace_schedule_writes_total{{kind=\"{kind}\",result=\"{result}\"}} {n}"
            );
        }
        let q = m.queue;
        let _ = writeln!(
            out,
            "# HELP kplace_schedule_pending_pods Pending pods in the queue, by stage.\n\
             # TYPE kplace_schedule_pending_pods gauge"
        );
        for (stage, n) in [
            ("active", q.active),
            ("backoff", q.backoff),
            ("unschedulable", q.unschedulable),
            ("in_flight", q.in_flight),
        ] {
            let _ = writeln!(out, "kplace_schedule_pending_pods{{stage=\"{stage}\"}} {n}");
        }
        let _ = writeln!(
            out,
            "# HELP kplace_schedule_leader Whether this replica holds the leader lease.\n\
             # TYPE kplace_schedule_leader gauge\n\
             kplace_schedule_leader {}",
            u8::from(m.leader)
        );
        out
    }
}

/// A label value with `\\`, `"` and newlines escaped, as the text format requires.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

impl WriteObserver for Metrics {
    fn written(&self, kind: &'static str, ok: bool) {
        *self.lock().writes.entry((kind.to_string(), ok)).or_insert(0) += 1;
    }
}

fn respond(code: StatusCode, content_type: &str, body: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = code;
    if let Ok(v) = content_type.parse() {
        r.headers_mut().insert("content-type", v);
    }
    r
}

/// Answers one request: `GET /metrics`, `/healthz` and `/livez`, `/readyz`, else 404.
/// A health check passes with `ok` (the full report with `?verbose`) and fails with 503 and
/// the report, as the Kubernetes components answer.
fn answer(metrics: &Metrics, req: &Request<Incoming>) -> Response<Full<Bytes>> {
    let verbose = req.uri().query().is_some_and(|q| q.split('&').any(|p| p == "verbose"));
    let health = |(ok, body): (bool, String)| {
        let code = if ok { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
        let body = if ok && !verbose { "ok".to_string() } else { body };
        respond(code, "text/plain; charset=utf-8", body)
    };
    match (req.method(), req.uri().path()) {
        (&Method::GET, "/metrics") => {
            respond(StatusCode::OK, "text/plain; version=0.0.4; charset=utf-8", metrics.render())
        }
        (&Method::GET, "/healthz" | "/livez") => health(metrics.liveness(Instant::now())),
        (&Method::GET, "/readyz") => health(metrics.readiness(Instant::now())),
        _ => respond(StatusCode::NOT_FOUND, "text/plain", "not found".to_string()),
    }
}

/// Limits of the metrics server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServeOptions {
    /// Connections served at once; more are closed as soon as they are accepted.
    pub max_connections: usize,
    /// The longest wait for a request's headers.
    pub header_timeout: Duration,
    /// The longest a connection is kept, whatever it does.
    pub connection_lifetime: Duration,
}

impl Default for ServeOptions {
    /// 64 connections, 5 s for the headers, 60 s per connection: a scraper and the probes need
    /// a few short connections.
    fn default() -> Self {
        ServeOptions {
            max_connections: 64,
            header_timeout: Duration::from_secs(5),
            connection_lifetime: Duration::from_secs(60),
        }
    }
}

/// Connections being served now (for tests and logs).
static OPEN_CONNECTIONS: AtomicUsize = AtomicUsize::new(0);

/// Connections the metrics servers of this process serve now.
pub fn open_connections() -> usize {
    OPEN_CONNECTIONS.load(Ordering::Relaxed)
}

/// Serves `/metrics`, `/healthz`, `/livez` and `/readyz` on `listener` with the default
/// [`ServeOptions`] until `shutdown` turns true.
pub async fn serve(listener: TcpListener, metrics: Arc<Metrics>, shutdown: watch::Receiver<bool>) {
    serve_with(listener, metrics, ServeOptions::default(), shutdown).await;
}

/// [`serve`] with explicit limits.
pub async fn serve_with(
    listener: TcpListener,
    metrics: Arc<Metrics>,
    options: ServeOptions,
    mut shutdown: watch::Receiver<bool>,
) {
    let slots = Arc::new(Semaphore::new(options.max_connections.max(1)));
    let mut refused: u64 = 0;
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            changed = shutdown.changed() => {
                if changed.is_err() || *shutdown.borrow() {
                    return;
                }
                continue;
            }
        };
        let Ok((stream, peer)) = accepted else { continue };
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            refused += 1;
            if refused.is_power_of_two() {
                tracing::warn!(
                    "metrics server: {} connections open, closing {peer} ({refused} refused so far)",
                    options.max_connections
                );
            }
            drop(stream);
            continue;
        };
        let metrics = Arc::clone(&metrics);
        tokio::spawn(async move {
            OPEN_CONNECTIONS.fetch_add(1, Ordering::Relaxed);
            let service = service_fn(move |req: Request<Incoming>| {
                let r = answer(&metrics, &req);
                async move { Ok::<_, Infallible>(r) }
            });
            let mut builder = http1::Builder::new();
            builder.timer(TokioTimer::new()).header_read_timeout(options.header_timeout);
            let conn = builder.serve_connection(TokioIo::new(stream), service);
            match tokio::time::timeout(options.connection_lifetime, conn).await {
                Ok(Err(e)) => tracing::debug!("metrics connection from {peer}: {e}"),
                Err(_) => tracing::debug!("metrics connection from {peer}: lifetime over"),
                Ok(Ok(())) => {}
            }
            OPEN_CONNECTIONS.fetch_sub(1, Ordering::Relaxed);
            drop(slot);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_render_cumulative_buckets_sum_and_count() {
        let mut h = Histogram::new(&[1.0, 5.0]);
        for v in [0.5, 1.0, 3.0, 9.0] {
            h.observe(v);
        }
        let mut out = String::new();
        h.render(&mut out, "x", "help");
        let want = "# HELP x help\n# TYPE x histogram\nx_bucket{le=\"1\"} 2\nx_bucket{le=\"5\"} 3\n\
                    x_bucket{le=\"+Inf\"} 4\nx_sum 13.5\nx_count 4\n";
        assert_eq!(out, want);
    }

    /// (name, type) of every `# TYPE` line.
    fn types(text: &str) -> BTreeMap<String, String> {
        text.lines()
            .filter_map(|l| l.strip_prefix("# TYPE "))
            .filter_map(|l| l.split_once(' '))
            .map(|(n, t)| (n.to_string(), t.to_string()))
            .collect()
    }

    #[test]
    fn kube_scheduler_metrics_have_its_names_types_labels_and_buckets() {
        let m = Metrics::new();
        m.attempt(SCHEDULED, "kplace", Duration::from_millis(3));
        m.attempt(SCHEDULED, "kplace", Duration::from_millis(30));
        m.attempt(UNSCHEDULABLE, "kplace", Duration::from_millis(3));
        m.attempt(ERROR, "other", Duration::from_secs(100));
        m.preemption(3);
        m.scheduled_after(1);
        m.scheduled_after(5);
        m.batch(4, Duration::from_millis(2));
        m.queue(QueueCounts { active: 2, backoff: 1, unschedulable: 3, in_flight: 4 });
        let text = m.render();
        let types = types(&text);
        for (name, kind) in [
            ("scheduler_schedule_attempts_total", "counter"),
            ("scheduler_scheduling_attempt_duration_seconds", "histogram"),
            ("scheduler_scheduling_algorithm_duration_seconds", "histogram"),
            ("scheduler_pending_pods", "gauge"),
            ("scheduler_preemption_attempts_total", "counter"),
            ("scheduler_preemption_victims", "histogram"),
            ("scheduler_pod_scheduling_attempts", "histogram"),
            ("kplace_schedule_batches_total", "counter"),
            ("kplace_schedule_planning_errors_total", "counter"),
        ] {
            assert_eq!(types.get(name).map(String::as_str), Some(kind), "{name} in\n{text}");
        }
        for line in [
            "scheduler_schedule_attempts_total{profile=\"kplace\",result=\"scheduled\"} 2",
            "scheduler_schedule_attempts_total{profile=\"kplace\",result=\"unschedulable\"} 1",
            "scheduler_schedule_attempts_total{profile=\"other\",result=\"error\"} 1",
            // ExponentialBuckets(0.001, 2, 15): 1 ms … 16.384 s.
            "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"kplace\",result=\"scheduled\",le=\"0.004\"} 1",
            "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"kplace\",result=\"scheduled\",le=\"0.032\"} 2",
            "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"other\",result=\"error\",le=\"16.384\"} 0",
            "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"other\",result=\"error\",le=\"+Inf\"} 1",
            "scheduler_scheduling_attempt_duration_seconds_count{profile=\"kplace\",result=\"scheduled\"} 2",
            "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"0.002\"} 1",
            "scheduler_pending_pods{queue=\"active\"} 2",
            "scheduler_pending_pods{queue=\"backoff\"} 1",
            "scheduler_pending_pods{queue=\"unschedulable\"} 3",
            "scheduler_preemption_attempts_total 1",
            // ExponentialBuckets(1, 2, 7): 1 … 64.
            "scheduler_preemption_victims_bucket{le=\"2\"} 0",
            "scheduler_preemption_victims_bucket{le=\"4\"} 1",
            "scheduler_preemption_victims_bucket{le=\"64\"} 1",
            // ExponentialBuckets(1, 2, 5): 1 … 16.
            "scheduler_pod_scheduling_attempts_bucket{le=\"1\"} 1",
            "scheduler_pod_scheduling_attempts_bucket{le=\"4\"} 1",
            "scheduler_pod_scheduling_attempts_bucket{le=\"8\"} 2",
            "scheduler_pod_scheduling_attempts_bucket{le=\"16\"} 2",
        ] {
            assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
        }
        assert!(!text.contains("le=\"128\""), "no victims bucket past 64");
        assert_eq!((m.attempts(SCHEDULED, "kplace"), m.attempts(ERROR, "kplace")), (2, 0));
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }

    #[test]
    fn readiness_follows_sync_watches_failed_batches_and_forbidden_kinds() {
        let t0 = Instant::now();
        let m = Metrics::new();
        m.expect(&["nodes", "pods", "services"], true);
        let (ok, body) = m.readiness(t0);
        assert!(!ok);
        assert!(
            body.contains("[-]informer-sync failed: not synced: nodes, pods, services"),
            "{body}"
        );
        m.synced("nodes");
        m.synced("pods");
        m.forbidden("services", "scheduling without default spreading by its selectors");
        let (ok, body) = m.readiness(t0);
        assert!(ok, "{body}");
        assert!(body.contains("[+]leader-election ok: standby"), "{body}");
        m.leader(true);
        assert!(m.readiness(t0).1.contains("[+]leader-election ok: leading"));

        // A watch failing briefly (a relist) is fine; for 30 s it is not.
        m.watch_failed("pods", t0);
        assert!(m.readiness(t0 + Duration::from_secs(5)).0);
        let (ok, body) = m.readiness(t0 + WATCH_FAILING_UNREADY);
        assert!(!ok);
        assert!(body.contains("[-]watches failed: failing for: pods (30 s)"), "{body}");
        m.watch_ok("pods");
        assert!(m.readiness(t0 + WATCH_FAILING_UNREADY).0);
        // A kind that becomes readable syncs and is no longer reported as forbidden.
        m.synced("services");
        assert!(!m.readiness(t0).1.contains("not readable"));

        // Three whole batches failed in a row; one good batch makes it ready again.
        for _ in 0..FAILED_BATCHES_UNREADY - 1 {
            m.batch_result(true);
        }
        assert!(m.readiness(t0).0);
        m.batch_result(true);
        let (ok, body) = m.readiness(t0);
        assert!(!ok);
        assert!(body.contains("[-]batches failed: the last 3 batches failed"), "{body}");
        m.batch_result(false);
        assert!(m.readiness(t0).0);
    }

    #[test]
    fn liveness_fails_only_when_the_loop_stops_turning_outside_a_batch() {
        let t0 = Instant::now();
        let m = Metrics::new();
        m.expect(&["nodes"], false);
        m.turn(t0);
        assert!(
            m.liveness(t0 + Duration::from_secs(60)).0,
            "nothing synced is not a liveness failure"
        );
        let (ok, body) = m.liveness(t0 + LIVENESS_STALL);
        assert!(!ok);
        assert!(body.contains("[-]scheduling-loop failed"), "{body}");
        m.in_batch(Some(t0));
        assert!(m.liveness(t0 + LIVENESS_STALL).0, "a long batch is not a stall");
    }

    /// `GET path` over a fresh connection: the status code and the body.
    async fn get(addr: std::net::SocketAddr, path: &str) -> (u16, String) {
        let path = path.to_string();
        tokio::task::spawn_blocking(move || {
            use std::io::{Read, Write};
            let mut s = std::net::TcpStream::connect(addr).expect("connects");
            s.set_read_timeout(Some(Duration::from_secs(5))).expect("sets a timeout");
            let req = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
            s.write_all(req.as_bytes()).expect("writes");
            let mut text = String::new();
            s.read_to_string(&mut text).expect("reads");
            let code = text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
            let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
            (code, body)
        })
        .await
        .expect("the request ran")
    }

    #[tokio::test]
    async fn the_server_holds_no_more_than_its_cap_of_silent_connections_and_answers_after() {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("binds");
        let addr = listener.local_addr().expect("address");
        let metrics = Arc::new(Metrics::new());
        metrics.expect(&["nodes"], false);
        let options = ServeOptions {
            max_connections: 8,
            header_timeout: Duration::from_millis(300),
            connection_lifetime: Duration::from_secs(5),
        };
        let (stop, stop_rx) = watch::channel(false);
        let server = tokio::spawn(serve_with(listener, Arc::clone(&metrics), options, stop_rx));

        // 3,000 connections that never send a byte.
        let mut silent = Vec::new();
        let mut most = 0;
        for _ in 0..3000 {
            if let Ok(Ok(s)) =
                tokio::time::timeout(Duration::from_secs(2), tokio::net::TcpStream::connect(addr))
                    .await
            {
                silent.push(s);
            }
            most = most.max(open_connections());
        }
        assert_eq!(silent.len(), 3000, "every connection is accepted (and closed past the cap)");
        tokio::time::sleep(Duration::from_millis(50)).await;
        most = most.max(open_connections());
        assert!(most <= 8, "at most 8 connections held at once, saw {most}");
        // The header timeout frees the slots; then the probes get through.
        let start = Instant::now();
        while open_connections() > 0 {
            assert!(start.elapsed() < Duration::from_secs(5), "silent connections are closed");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let (code, body) = get(addr, "/readyz").await;
        assert_eq!(code, 503, "{body}");
        assert!(body.contains("not synced: nodes"), "{body}");
        metrics.synced("nodes");
        assert_eq!(get(addr, "/readyz").await, (200, "ok".to_string()));
        let (code, body) = get(addr, "/readyz?verbose").await;
        assert_eq!(code, 200);
        assert!(body.contains("[+]informer-sync ok") && body.ends_with("readyz check passed\n"));
        assert_eq!(get(addr, "/healthz").await, (200, "ok".to_string()));
        assert_eq!(get(addr, "/livez").await.0, 200);
        assert_eq!(get(addr, "/nope").await.0, 404);
        drop(silent);
        stop.send_replace(true);
        server.await.expect("the server stops");
    }

    #[test]
    fn the_exposition_has_every_metric_with_its_labels() {
        let m = Metrics::new();
        m.batch(3, Duration::from_millis(20));
        m.batch(1, Duration::from_millis(2));
        m.binding("bound");
        m.binding("bound");
        m.binding("conflict");
        m.unschedulable();
        m.written("event", true);
        m.leader(true);
        let text = m.render();
        for line in [
            "kplace_schedule_batches_total 2",
            "kplace_schedule_batch_size_bucket{le=\"1\"} 1",
            "kplace_schedule_batch_size_bucket{le=\"5\"} 2",
            "kplace_schedule_batch_size_count 2",
            "kplace_schedule_decision_duration_seconds_bucket{le=\"0.005\"} 1",
            "kplace_schedule_decision_duration_seconds_bucket{le=\"0.025\"} 2",
            "kplace_schedule_bindings_total{outcome=\"bound\"} 2",
            "kplace_schedule_bindings_total{outcome=\"conflict\"} 1",
            "kplace_schedule_unschedulable_total 1",
            "kplace_schedule_writes_total{kind=\"event\",result=\"ok\"} 1",
            "kplace_schedule_leader 1",
        ] {
            assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
        }
        assert_eq!((m.bindings("bound"), m.batches()), (2, 2));
    }
}
