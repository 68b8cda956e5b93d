//! Prometheus metrics of `kplace schedule` and the small HTTP server that serves them with
//! `/healthz`.
//!
//! Input: counts and durations recorded by the scheduling loop; output: the Prometheus text
//! exposition format (version 0.0.4) on `GET /metrics`, and `ok` on `GET /healthz`. Metric
//! names follow Prometheus conventions (`_total` counters, `_seconds` durations); buckets are
//! fixed, so the output is deterministic for given observations.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::watch;

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
        let mut cumulative = 0;
        for (b, c) in self.bounds.iter().zip(&self.counts) {
            cumulative += c;
            let _ = writeln!(out, "{name}_bucket{{le=\"{b}\"}} {cumulative}");
        }
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {}", self.count);
        let _ = writeln!(out, "{name}_sum {}", self.sum);
        let _ = writeln!(out, "{name}_count {}", self.count);
    }
}

#[derive(Debug)]
struct Inner {
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

impl Metrics {
    /// No observations yet.
    pub fn new() -> Self {
        Metrics {
            inner: Mutex::new(Inner {
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

    /// One batch of `size` pods was decided in `latency`.
    pub fn batch(&self, size: usize, latency: Duration) {
        let mut m = self.lock();
        m.batches += 1;
        m.batch_size.observe(size as f64);
        m.decision.observe(latency.as_secs_f64());
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

/// Answers one request: `GET /metrics`, `GET /healthz`, else 404.
fn answer(metrics: &Metrics, req: &Request<Incoming>) -> Response<Full<Bytes>> {
    match (req.method(), req.uri().path()) {
        (&Method::GET, "/metrics") => {
            respond(StatusCode::OK, "text/plain; version=0.0.4; charset=utf-8", metrics.render())
        }
        (&Method::GET, "/healthz") => respond(StatusCode::OK, "text/plain", "ok".to_string()),
        _ => respond(StatusCode::NOT_FOUND, "text/plain", "not found".to_string()),
    }
}

/// Serves `/metrics` and `/healthz` on `listener` until `shutdown` turns true.
pub async fn serve(
    listener: TcpListener,
    metrics: Arc<Metrics>,
    mut shutdown: watch::Receiver<bool>,
) {
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
        let Ok((stream, _)) = accepted else { continue };
        let metrics = Arc::clone(&metrics);
        tokio::spawn(async move {
            let service = service_fn(move |req: Request<Incoming>| {
                let r = answer(&metrics, &req);
                async move { Ok::<_, Infallible>(r) }
            });
            if let Err(e) =
                http1::Builder::new().serve_connection(TokioIo::new(stream), service).await
            {
                tracing::debug!("metrics connection: {e}");
            }
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
