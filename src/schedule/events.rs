//! What `kplace schedule` writes besides Bindings: scheduling Events (events.k8s.io/v1) and the
//! pod status (the `PodScheduled` condition and `status.nominatedNodeName`), worded and shaped
//! as kube-scheduler writes them.
//!
//! Input: the cached pod, the decision, the clock; output: the objects and patches to send, and
//! a [`Writer`] task that sends them in order, retrying transient failures, without holding up
//! the next batch. Upstream (v1.35):
//!
//! - `pkg/scheduler/schedule_one.go`: after a binding, `Normal` event reason `Scheduled`, action
//!   `Binding`, note `Successfully assigned <ns>/<pod> to <node>`; on failure, `Warning` event
//!   reason `FailedScheduling`, action `Scheduling`, the FitError message truncated to 1024
//!   bytes (`truncateMessage`, ending in ` ...`), and `updatePod`: the condition
//!   `PodScheduled=False` with reason `Unschedulable` (or `SchedulerError` for other failures)
//!   and the full message, patched on the `status` subresource only when something changes
//!   (`podutil.UpdatePodCondition`: the transition time is kept while the status stays the
//!   same), together with the nominated node (cleared for pods that preemption could not help).
//! - `staging/src/k8s.io/client-go/tools/events/event_broadcaster.go` and `event_recorder.go`:
//!   the event is named `<pod>.<unix nanoseconds in hex>`, lives in the pod's namespace, names
//!   the profile's scheduler as `reportingController` and `<controller>-<hostname>` as
//!   `reportingInstance`, and refers to the pod (with its resourceVersion). An isomorphic event
//!   (same type, action, reason, reporter and object) within 6 minutes is not created again:
//!   the second turns the first into a series (`series.count: 2`, a strategic merge patch), and
//!   later ones only count locally, as upstream does between its 30-minute refreshes.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{ObjectReference, Pod};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::bind::RetryPolicy;
use crate::bind::retry::{self, Fail, Verdict};

/// `validation.NoteLengthLimit`: the longest event note.
pub const NOTE_LENGTH_LIMIT: usize = 1024;

/// `v1.PodReasonUnschedulable`.
pub const REASON_UNSCHEDULABLE: &str = "Unschedulable";
/// `v1.PodReasonSchedulerError`.
pub const REASON_SCHEDULER_ERROR: &str = "SchedulerError";

/// How long an isomorphic event is folded into a series (upstream `finishTime`).
const SERIES_WINDOW: Duration = Duration::from_secs(6 * 60);

/// Upstream `truncateMessage`: messages longer than the note limit are cut and end in ` ...`
/// (cut at a character boundary, where Go cuts bytes).
pub fn truncate_message(message: &str) -> String {
    if message.len() <= NOTE_LENGTH_LIMIT {
        return message.to_string();
    }
    let suffix = " ...";
    let mut end = NOTE_LENGTH_LIMIT - suffix.len();
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{suffix}", &message[..end])
}

/// Who reports events: the profile's scheduler name and this process's host name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reporter {
    /// `reportingController`: the scheduler name of the pod's profile.
    pub controller: String,
    /// `reportingInstance`: `<controller>-<hostname>`.
    pub instance: String,
}

impl Reporter {
    /// The reporter for a scheduler name on a host.
    pub fn new(scheduler_name: &str, hostname: &str) -> Self {
        Reporter {
            controller: scheduler_name.to_string(),
            instance: format!("{scheduler_name}-{hostname}"),
        }
    }
}

/// A reference to the pod, as `reference.GetReference` makes it.
pub fn pod_reference(pod: &Pod) -> ObjectReference {
    ObjectReference {
        api_version: Some("v1".to_string()),
        kind: Some("Pod".to_string()),
        namespace: pod.metadata.namespace.clone(),
        name: pod.metadata.name.clone(),
        uid: pod.metadata.uid.clone(),
        resource_version: pod.metadata.resource_version.clone(),
        field_path: None,
    }
}

/// An event about `pod` (upstream `makeEvent`).
pub fn make_event(
    pod: &Pod,
    reporter: &Reporter,
    type_: &str,
    reason: &str,
    action: &str,
    note: &str,
    now: Timestamp,
) -> Event {
    let name = pod.metadata.name.clone().unwrap_or_default();
    let namespace =
        pod.metadata.namespace.clone().filter(|n| !n.is_empty()).unwrap_or("default".to_string());
    Event {
        metadata: ObjectMeta {
            name: Some(format!("{name}.{:x}", now.as_nanosecond())),
            namespace: Some(namespace),
            ..Default::default()
        },
        event_time: Some(MicroTime(now)),
        series: None,
        reporting_controller: Some(reporter.controller.clone()),
        reporting_instance: Some(reporter.instance.clone()),
        action: Some(action.to_string()),
        reason: Some(reason.to_string()),
        regarding: Some(pod_reference(pod)),
        related: None,
        note: Some(note.to_string()),
        type_: Some(type_.to_string()),
        ..Default::default()
    }
}

/// `Scheduled`: "Successfully assigned ns/pod to node".
pub fn scheduled_event(pod: &Pod, node: &str, reporter: &Reporter, now: Timestamp) -> Event {
    let note = format!(
        "Successfully assigned {}/{} to {node}",
        pod.metadata.namespace.as_deref().unwrap_or_default(),
        pod.metadata.name.as_deref().unwrap_or_default()
    );
    make_event(pod, reporter, "Normal", "Scheduled", "Binding", &note, now)
}

/// `FailedScheduling` with the (truncated) message.
pub fn failed_scheduling_event(
    pod: &Pod,
    message: &str,
    reporter: &Reporter,
    now: Timestamp,
) -> Event {
    let note = truncate_message(message);
    make_event(pod, reporter, "Warning", "FailedScheduling", "Scheduling", &note, now)
}

/// The status patch of upstream `updatePod` for a pod that did not get scheduled: the
/// `PodScheduled=False` condition with `reason` and `message`, and the nominated node
/// (`Some("")` clears it, `None` leaves it). `None` when the pod already shows all of it.
pub fn failure_status_patch(
    pod: &Pod,
    reason: &str,
    message: &str,
    nominated: Option<&str>,
    now: Timestamp,
) -> Option<Value> {
    let status = pod.status.clone().unwrap_or_default();
    let old = status.conditions.iter().flatten().find(|c| c.type_ == "PodScheduled");
    let observed_generation = pod.metadata.generation.filter(|g| *g != 0);
    let mut transition = Time(now);
    let changed = match old {
        None => true,
        Some(old) => {
            if old.status == "False"
                && let Some(t) = &old.last_transition_time
            {
                transition = t.clone();
            }
            !(old.status == "False"
                && old.reason.as_deref() == Some(reason)
                && old.message.as_deref() == Some(message)
                && old.last_probe_time.is_none()
                && old.last_transition_time.as_ref() == Some(&transition)
                && old.observed_generation.filter(|g| *g != 0) == observed_generation)
        }
    };
    let current_nominated = status.nominated_node_name.clone().unwrap_or_default();
    let nominate = nominated.filter(|n| *n != current_nominated);
    if !changed && nominate.is_none() {
        return None;
    }
    let mut body = serde_json::Map::new();
    if changed {
        let mut condition = json!({
            "type": "PodScheduled",
            "status": "False",
            "reason": reason,
            "message": message,
            "lastProbeTime": null,
            "lastTransitionTime": transition,
        });
        if let Some(g) = observed_generation {
            condition["observedGeneration"] = json!(g);
        }
        body.insert("conditions".to_string(), json!([condition]));
    }
    if let Some(n) = nominate {
        body.insert(
            "nominatedNodeName".to_string(),
            if n.is_empty() { Value::Null } else { json!(n) },
        );
    }
    Some(json!({ "status": Value::Object(body) }))
}

/// The status patch that nominates `node` for a preemptor; `None` when it is already nominated
/// there.
pub fn nomination_patch(pod: &Pod, node: &str) -> Option<Value> {
    let current = pod.status.as_ref().and_then(|s| s.nominated_node_name.as_deref());
    (current != Some(node)).then(|| json!({"status": {"nominatedNodeName": node}}))
}

/// The identity of an event for folding repeats into a series (upstream `getKey`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct EventKey {
    type_: String,
    action: String,
    reason: String,
    controller: String,
    instance: String,
    /// namespace, name, uid, resourceVersion of the object.
    regarding: (String, String, String, String),
}

impl EventKey {
    fn of(e: &Event) -> Self {
        let r = e.regarding.clone().unwrap_or_default();
        EventKey {
            type_: e.type_.clone().unwrap_or_default(),
            action: e.action.clone().unwrap_or_default(),
            reason: e.reason.clone().unwrap_or_default(),
            controller: e.reporting_controller.clone().unwrap_or_default(),
            instance: e.reporting_instance.clone().unwrap_or_default(),
            regarding: (
                r.namespace.unwrap_or_default(),
                r.name.unwrap_or_default(),
                r.uid.unwrap_or_default(),
                r.resource_version.unwrap_or_default(),
            ),
        }
    }
}

#[derive(Debug, Clone)]
struct Cached {
    namespace: String,
    name: String,
    /// The series count (1: a single event so far).
    count: i32,
    last: Instant,
}

/// A request to the API server for an event.
#[derive(Debug, Clone, PartialEq)]
pub enum EventWrite {
    /// Create the event.
    Create(Box<Event>),
    /// Turn an existing event into a series: a strategic merge patch of `series`.
    Series {
        /// Namespace of the existing event.
        namespace: String,
        /// Name of the existing event.
        name: String,
        /// The patch.
        patch: Value,
        /// The event to create instead if the existing one is gone.
        fallback: Box<Event>,
    },
}

/// Folds isomorphic events into series (upstream `recordToSink`).
#[derive(Debug, Default)]
pub struct SeriesCache {
    cache: BTreeMap<EventKey, Cached>,
}

impl SeriesCache {
    /// What to send for `event` observed at `now` (`wall` for `lastObservedTime`); `None` when
    /// it only counts into a series already written.
    pub fn record(&mut self, event: Event, now: Instant, wall: Timestamp) -> Option<EventWrite> {
        self.cache.retain(|_, c| now.saturating_duration_since(c.last) < SERIES_WINDOW);
        let key = EventKey::of(&event);
        if let Some(c) = self.cache.get_mut(&key) {
            c.count = c.count.saturating_add(1);
            c.last = now;
            if c.count > 2 {
                return None;
            }
            let patch = json!({"series": {"count": c.count, "lastObservedTime": MicroTime(wall)}});
            let mut fallback = event;
            fallback.metadata.name = Some(c.name.clone());
            return Some(EventWrite::Series {
                namespace: c.namespace.clone(),
                name: c.name.clone(),
                patch,
                fallback: Box::new(fallback),
            });
        }
        let cached = Cached {
            namespace: event.metadata.namespace.clone().unwrap_or_default(),
            name: event.metadata.name.clone().unwrap_or_default(),
            count: 1,
            last: now,
        };
        self.cache.insert(key, cached);
        Some(EventWrite::Create(Box::new(event)))
    }
}

/// What the writer sends.
#[derive(Debug, Clone)]
pub enum Write {
    /// An event (folded into series by the writer).
    Event(Box<Event>),
    /// A strategic merge patch of a pod's `status` subresource.
    PodStatus {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
        /// The patch.
        patch: Value,
    },
}

/// Counts of what the writer did, for metrics.
pub trait WriteObserver: Send + Sync {
    /// One write ended; `kind` is `event` or `pod_status`, `ok` whether it was accepted.
    fn written(&self, kind: &'static str, ok: bool);
}

/// Sends [`Write`]s in order from a channel until it closes.
pub struct Writer {
    client: kube::Client,
    retry: RetryPolicy,
    timeout: Duration,
    series: SeriesCache,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("retry", &self.retry)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl Writer {
    /// A writer with its own retry policy and per-request timeout.
    pub fn new(client: kube::Client, retry: RetryPolicy, timeout: Duration) -> Self {
        Writer { client, retry, timeout, series: SeriesCache::default() }
    }

    /// Sends everything received until the channel closes.
    pub async fn run(
        mut self,
        mut rx: mpsc::UnboundedReceiver<Write>,
        observer: &dyn WriteObserver,
    ) {
        while let Some(w) = rx.recv().await {
            match w {
                Write::Event(e) => {
                    let Some(write) = self.series.record(*e, Instant::now(), Timestamp::now())
                    else {
                        continue;
                    };
                    let ok = self.send_event(write).await;
                    observer.written("event", ok);
                }
                Write::PodStatus { namespace, name, patch } => {
                    let api: Api<Pod> = Api::namespaced(self.client.clone(), &namespace);
                    let params = PatchParams::default();
                    let what = format!("patch status of {namespace}/{name}");
                    let patch = Patch::Strategic(&patch);
                    let result =
                        self.call(&what, || api.patch_status(&name, &params, &patch)).await;
                    if let Err(f) = &result {
                        tracing::warn!("{what}: {}", f.message());
                    }
                    observer.written("pod_status", result.is_ok());
                }
            }
        }
    }

    async fn send_event(&self, write: EventWrite) -> bool {
        let create = |event: Box<Event>| async move {
            let ns = event.metadata.namespace.clone().unwrap_or_default();
            let api: Api<Event> = Api::namespaced(self.client.clone(), &ns);
            let what =
                format!("create event {ns}/{}", event.metadata.name.clone().unwrap_or_default());
            let pp = PostParams::default();
            let result = self.call(&what, || api.create(&pp, &event)).await;
            if let Err(f) = &result {
                tracing::warn!("{what}: {}", f.message());
            }
            result.is_ok()
        };
        match write {
            EventWrite::Create(event) => create(event).await,
            EventWrite::Series { namespace, name, patch, fallback } => {
                let api: Api<Event> = Api::namespaced(self.client.clone(), &namespace);
                let what = format!("patch event {namespace}/{name}");
                let params = PatchParams::default();
                let patch = Patch::Strategic(&patch);
                match self.call(&what, || api.patch(&name, &params, &patch)).await {
                    Ok(_) => true,
                    Err(Fail::NotFound(_)) => create(fallback).await,
                    Err(f) => {
                        tracing::warn!("{what}: {}", f.message());
                        false
                    }
                }
            }
        }
    }

    async fn call<T, F, Fut>(&self, what: &str, mut send: F) -> Result<T, Fail>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, kube::Error>>,
    {
        send_with_retry(self.retry, self.timeout, what, &mut send).await
    }
}

/// Sends one request, retrying what [`retry::classify`] deems transient, with the binder's
/// backoff.
pub async fn send_with_retry<T, F, Fut>(
    policy: RetryPolicy,
    timeout: Duration,
    what: &str,
    send: &mut F,
) -> Result<T, Fail>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, kube::Error>>,
{
    let max = policy.max_attempts.max(1);
    let mut attempts = 0;
    loop {
        attempts += 1;
        let verdict = match tokio::time::timeout(timeout, send()).await {
            Ok(Ok(v)) => return Ok(v),
            Ok(Err(e)) => retry::classify(&e),
            Err(_) => Verdict::Retry {
                message: format!("no reply within {} ms", timeout.as_millis()),
                after: None,
                ambiguous: true,
            },
        };
        match verdict {
            Verdict::Stop(f) => return Err(f),
            Verdict::Retry { message, after, .. } => {
                if attempts >= max {
                    return Err(Fail::Exhausted(format!(
                        "{message} (gave up after {attempts} attempts)"
                    )));
                }
                let delay = policy.delay(attempts, rand::random_range(0.0..=1.0), after);
                tracing::debug!("{what}: {message}; retrying in {} ms", delay.as_millis());
                tokio::time::sleep(delay).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{PodCondition, PodStatus};

    fn pod(ns: &str, name: &str) -> Pod {
        Pod {
            metadata: ObjectMeta {
                namespace: Some(ns.to_string()),
                name: Some(name.to_string()),
                uid: Some("u1".to_string()),
                resource_version: Some("7".to_string()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + secs).unwrap()
    }

    #[test]
    fn messages_longer_than_the_note_limit_are_cut_with_an_ellipsis() {
        let long = "x".repeat(2000);
        let cases = [
            ("a short message is kept", "0/3 nodes are available.".to_string(), None),
            ("a message at the limit is kept", "y".repeat(1024), None),
            ("a longer one is cut to 1024 bytes", long.clone(), Some(1024)),
            (
                "a cut never splits a character",
                format!("{}é{}", "z".repeat(1019), "z".repeat(50)),
                Some(1023),
            ),
        ];
        for (name, message, cut) in cases {
            let got = truncate_message(&message);
            match cut {
                None => assert_eq!(got, message, "{name}"),
                Some(len) => {
                    assert_eq!(got.len(), len, "{name}");
                    assert!(got.ends_with(" ..."), "{name}");
                }
            }
        }
    }

    #[test]
    fn events_are_shaped_as_kube_scheduler_records_them() {
        let p = pod("team", "web-1");
        let reporter = Reporter::new("kplace", "host-a");
        let e = scheduled_event(&p, "node-3", &reporter, at(0));
        assert_eq!(e.note.as_deref(), Some("Successfully assigned team/web-1 to node-3"));
        assert_eq!(
            (e.type_.as_deref(), e.reason.as_deref(), e.action.as_deref()),
            (Some("Normal"), Some("Scheduled"), Some("Binding"))
        );
        assert_eq!(e.reporting_controller.as_deref(), Some("kplace"));
        assert_eq!(e.reporting_instance.as_deref(), Some("kplace-host-a"));
        assert_eq!(e.metadata.namespace.as_deref(), Some("team"));
        assert_eq!(
            e.metadata.name,
            Some(format!("web-1.{:x}", at(0).as_nanosecond())),
            "named after the pod and the time in hex nanoseconds"
        );
        let r = e.regarding.unwrap();
        assert_eq!(
            (r.kind.as_deref(), r.uid.as_deref(), r.resource_version.as_deref()),
            (Some("Pod"), Some("u1"), Some("7"))
        );

        let f = failed_scheduling_event(
            &p,
            "0/1 nodes are available: 1 Insufficient cpu.",
            &reporter,
            at(1),
        );
        assert_eq!(
            (f.type_.as_deref(), f.reason.as_deref(), f.action.as_deref(), f.note.as_deref()),
            (
                Some("Warning"),
                Some("FailedScheduling"),
                Some("Scheduling"),
                Some("0/1 nodes are available: 1 Insufficient cpu.")
            )
        );
    }

    #[test]
    fn a_repeated_event_becomes_a_series_once_and_then_only_counts() {
        let p = pod("ns", "a");
        let reporter = Reporter::new("kplace", "h");
        let t0 = Instant::now();
        let mut cache = SeriesCache::default();
        let first = cache.record(failed_scheduling_event(&p, "m1", &reporter, at(0)), t0, at(0));
        assert!(matches!(first, Some(EventWrite::Create(_))), "the first is created");
        let second = cache.record(failed_scheduling_event(&p, "m2", &reporter, at(1)), t0, at(1));
        match second {
            Some(EventWrite::Series { name, patch, .. }) => {
                assert_eq!(
                    name,
                    format!("a.{:x}", at(0).as_nanosecond()),
                    "the first event is patched"
                );
                assert_eq!(patch["series"]["count"], 2);
            }
            other => panic!("expected a series patch, got {other:?}"),
        }
        assert_eq!(
            cache.record(failed_scheduling_event(&p, "m3", &reporter, at(2)), t0, at(2)),
            None
        );
        let other = cache.record(scheduled_event(&p, "n", &reporter, at(3)), t0, at(3));
        assert!(matches!(other, Some(EventWrite::Create(_))), "another reason is another event");
        let later = t0 + Duration::from_secs(7 * 60);
        let fresh =
            cache.record(failed_scheduling_event(&p, "m4", &reporter, at(500)), later, at(500));
        assert!(
            matches!(fresh, Some(EventWrite::Create(_))),
            "after six minutes a new event starts"
        );
    }

    #[test]
    fn the_status_patch_is_sent_only_when_the_condition_or_nomination_changes() {
        let message = "0/2 nodes are available: 2 Insufficient cpu.";
        let with = |status: &str, reason: &str, msg: &str, nominated: Option<&str>| {
            let mut p = pod("ns", "a");
            p.status = Some(PodStatus {
                conditions: Some(vec![PodCondition {
                    type_: "PodScheduled".into(),
                    status: status.into(),
                    reason: Some(reason.into()),
                    message: Some(msg.into()),
                    last_transition_time: Some(Time(at(0))),
                    ..Default::default()
                }]),
                nominated_node_name: nominated.map(str::to_string),
                ..Default::default()
            });
            p
        };
        let cases: Vec<(&str, Pod, Option<&str>, bool)> = vec![
            ("a pod without the condition gets it", pod("ns", "a"), None, true),
            (
                "the same condition is not sent again",
                with("False", "Unschedulable", message, None),
                None,
                false,
            ),
            ("a new message is sent", with("False", "Unschedulable", "older", None), None, true),
            (
                "clearing a nomination is sent",
                with("False", "Unschedulable", message, Some("n1")),
                Some(""),
                true,
            ),
            (
                "clearing no nomination is not",
                with("False", "Unschedulable", message, None),
                Some(""),
                false,
            ),
        ];
        for (name, p, nominated, want) in cases {
            let patch = failure_status_patch(&p, REASON_UNSCHEDULABLE, message, nominated, at(9));
            assert_eq!(patch.is_some(), want, "{name}: {patch:?}");
        }
        let patch =
            failure_status_patch(&pod("ns", "a"), REASON_UNSCHEDULABLE, message, None, at(9))
                .unwrap();
        let c = &patch["status"]["conditions"][0];
        assert_eq!(
            (c["type"].as_str(), c["status"].as_str(), c["reason"].as_str()),
            (Some("PodScheduled"), Some("False"), Some("Unschedulable"))
        );
        assert_eq!(c["message"], message);
        let kept = failure_status_patch(
            &with("False", "Unschedulable", "older", None),
            REASON_UNSCHEDULABLE,
            message,
            None,
            at(9),
        )
        .unwrap();
        assert_eq!(
            kept["status"]["conditions"][0]["lastTransitionTime"],
            json!(Time(at(0))),
            "the status did not change: its transition time stays"
        );
    }

    #[test]
    fn a_preemptor_is_nominated_once() {
        let mut p = pod("ns", "a");
        assert_eq!(
            nomination_patch(&p, "n1"),
            Some(json!({"status": {"nominatedNodeName": "n1"}}))
        );
        p.status = Some(PodStatus { nominated_node_name: Some("n1".into()), ..Default::default() });
        assert_eq!(nomination_patch(&p, "n1"), None);
    }
}
