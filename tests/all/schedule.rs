//! `kplace schedule` end to end against the in-process API server
//! (`tests/support/apiserver.rs`): a stream of pods bound with `Scheduled` events; an
//! unschedulable pod reported (`FailedScheduling`, `PodScheduled=False`) and bound once a node
//! is added; `/metrics` and `/healthz`; two replicas sharing one Lease, of which only the leader
//! binds, and a standby that takes over when the leader stops; injected faults that lose no pod
//! and bind none twice; a leader that cannot renew stops; SIGTERM on the binary. Requests go
//! only to 127.0.0.1, and every wait is bounded.

use crate::support;

use std::collections::BTreeMap;
use std::future::Future;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{
    Container, Node, NodeSpec, NodeStatus, Pod, PodSpec, PodStatus, ResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kplace::bind::{BindOptions, RetryPolicy};
use kplace::framework::config::SchedulerConfig;
use kplace::schedule::lease::LeaseConfig;
use kplace::schedule::queue::BackoffPolicy;
use kplace::schedule::{RunSummary, ScheduleError, ScheduleOptions};
use serde_json::Value;
use support::apiserver::{ApiServer, Fault, Verb};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// The longest any wait may take.
pub(crate) const LIMIT: Duration = Duration::from_secs(30);

pub(crate) async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < LIMIT, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub(crate) async fn bounded<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(LIMIT, f).await.expect("finished in time")
}

pub(crate) fn quantities(pairs: &[(&str, &str)]) -> BTreeMap<String, Quantity> {
    pairs.iter().map(|(k, v)| (k.to_string(), Quantity(v.to_string()))).collect()
}

pub(crate) fn node(name: &str, cpu: &str) -> Node {
    let alloc = quantities(&[("cpu", cpu), ("memory", "16Gi"), ("pods", "110")]);
    Node {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(BTreeMap::from([("kubernetes.io/hostname".into(), name.into())])),
            ..Default::default()
        },
        spec: Some(NodeSpec::default()),
        status: Some(NodeStatus {
            allocatable: Some(alloc.clone()),
            capacity: Some(alloc),
            ..Default::default()
        }),
    }
}

fn pod(name: &str, cpu: &str) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("team".into()),
            creation_timestamp: Some(Time(k8s_openapi::jiff::Timestamp::now())),
            ..Default::default()
        },
        spec: Some(PodSpec {
            scheduler_name: Some("kplace".into()),
            containers: vec![Container {
                name: "main".into(),
                image: Some("registry.k8s.io/pause:3.10".into()),
                resources: Some(ResourceRequirements {
                    requests: Some(quantities(&[("cpu", cpu), ("memory", "100Mi")])),
                    ..Default::default()
                }),
                ..Default::default()
            }],
            ..Default::default()
        }),
        status: Some(PodStatus { phase: Some("Pending".into()), ..Default::default() }),
    }
}

pub(crate) fn fast_options() -> ScheduleOptions {
    let retry = RetryPolicy {
        max_attempts: 4,
        initial_backoff: Duration::from_millis(5),
        max_backoff: Duration::from_millis(40),
    };
    let mut o = ScheduleOptions::new(vec!["kplace".to_string()]);
    o.batch_window = Duration::from_millis(50);
    o.max_batch = 100;
    o.backoff = BackoffPolicy {
        initial: Duration::from_millis(100),
        max: Duration::from_millis(400),
        max_in_unschedulable: Duration::from_secs(60),
    };
    o.bind = BindOptions {
        qps: 0.0,
        retry,
        request_timeout: Duration::from_secs(2),
        eviction_timeout: Duration::from_secs(5),
        eviction_poll: Duration::from_millis(10),
        ..BindOptions::default()
    };
    o.write_retry = retry;
    o.write_timeout = Duration::from_secs(2);
    o.hostname = "test-host".to_string();
    o
}

fn lease(identity: &str) -> LeaseConfig {
    LeaseConfig {
        // Generous against a loaded machine; hand-overs in these tests go through a release.
        lease_duration: Duration::from_secs(4),
        renew_deadline: Duration::from_secs(3),
        retry_period: Duration::from_millis(100),
        ..LeaseConfig::new("kplace", "kube-system", identity)
    }
}

/// One `kplace schedule` replica running in this process.
struct Replica {
    stop: watch::Sender<bool>,
    task: JoinHandle<Result<RunSummary, ScheduleError>>,
    metrics: std::net::SocketAddr,
}

impl Replica {
    async fn start(server: &ApiServer, name: &str, options: ScheduleOptions) -> Replica {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let metrics = listener.local_addr().unwrap();
        let (stop, rx) = watch::channel(false);
        let client = server.client_named(name);
        let task = tokio::spawn(kplace::schedule::run(
            client,
            SchedulerConfig::default(),
            options,
            Some(listener),
            rx,
        ));
        Replica { stop, task, metrics }
    }

    /// SIGTERM's equivalent: stop and wait for the run to end.
    async fn stop(self) -> Result<RunSummary, ScheduleError> {
        self.stop.send_replace(true);
        bounded(self.task).await.expect("the run did not panic")
    }

    async fn get(&self, path: &str) -> String {
        let addr = self.metrics;
        let request = format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
        let read = tokio::task::spawn_blocking(move || {
            use std::io::{Read, Write};
            let mut s = std::net::TcpStream::connect(addr).unwrap();
            s.set_read_timeout(Some(LIMIT)).unwrap();
            s.write_all(request.as_bytes()).unwrap();
            let mut out = String::new();
            s.read_to_string(&mut out).unwrap();
            out
        });
        bounded(read).await.unwrap()
    }
}

pub(crate) fn events(server: &ApiServer, reason: &str) -> Vec<Value> {
    server.objects("events").into_iter().filter(|e| e["reason"] == reason).collect()
}

fn event_for<'a>(events: &'a [Value], pod: &str) -> Option<&'a Value> {
    events.iter().find(|e| e["regarding"]["name"] == pod)
}

pub(crate) fn bound(server: &ApiServer, keys: &[String]) -> bool {
    keys.iter().all(|k| server.pod(k).is_some_and(|p| p.node.is_some()))
}

#[tokio::test]
async fn a_stream_of_pods_is_bound_with_scheduled_events_and_metrics() {
    let server = ApiServer::start(vec![], vec![]).await;
    server.put_object("nodes", &node("node-a", "4"));
    server.put_object("nodes", &node("node-b", "4"));
    let replica = Replica::start(&server, "a", fast_options()).await;

    let mut keys = Vec::new();
    for wave in 0..3 {
        for i in 0..4 {
            let name = format!("p-{wave}-{i}");
            server.create_pod(pod(&name, "500m"));
            keys.push(format!("team/{name}"));
        }
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    eventually("every pod bound", || bound(&server, &keys)).await;
    eventually("a Scheduled event per pod", || events(&server, "Scheduled").len() == keys.len())
        .await;

    let scheduled = events(&server, "Scheduled");
    for key in &keys {
        let binds = server.binds(key);
        assert_eq!(binds.len(), 1, "{key} is bound exactly once");
        let name = key.trim_start_matches("team/");
        let e = event_for(&scheduled, name).unwrap_or_else(|| panic!("no event for {key}"));
        assert_eq!(e["note"], format!("Successfully assigned {key} to {}", binds[0]));
        assert_eq!(
            (&e["type"], &e["action"], &e["reportingController"], &e["reportingInstance"]),
            (
                &Value::from("Normal"),
                &Value::from("Binding"),
                &Value::from("kplace"),
                &Value::from("kplace-test-host")
            )
        );
        assert_eq!(e["metadata"]["namespace"], "team");
        assert_eq!(e["regarding"]["kind"], "Pod");
    }
    let per_node = |n: &str| keys.iter().filter(|k| server.binds(k) == vec![n.to_string()]).count();
    assert_eq!(per_node("node-a") + per_node("node-b"), 12);
    assert!(per_node("node-a") <= 8 && per_node("node-b") <= 8, "4 cpu hold 8 pods of 500m");

    let metrics = replica.get("/metrics").await;
    assert!(metrics.starts_with("HTTP/1.1 200"), "{metrics}");
    assert!(metrics.contains("kplace_schedule_bindings_total{outcome=\"bound\"} 12"), "{metrics}");
    let batches: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("kplace_schedule_batches_total "))
        .and_then(|v| v.parse().ok())
        .expect("a batch counter");
    assert!((2..=12).contains(&batches), "pods arriving in waves make several batches: {batches}");
    assert!(metrics.contains(&format!("kplace_schedule_batch_size_count {batches}")), "{metrics}");
    assert!(
        metrics.contains(&format!("kplace_schedule_decision_duration_seconds_count {batches}"))
    );
    assert!(metrics.contains("kplace_schedule_batch_size_bucket{le=\"+Inf\"}"));
    assert!(metrics.contains("kplace_schedule_leader 1"));
    let health = replica.get("/healthz").await;
    assert!(health.starts_with("HTTP/1.1 200") && health.ends_with("ok"), "{health}");
    assert!(replica.get("/nothing").await.starts_with("HTTP/1.1 404"));

    let summary = replica.stop().await.expect("a clean stop");
    assert_eq!(summary.bound, 12);
    assert_eq!(summary.lease_released, None, "no leader election");
}

#[tokio::test]
async fn an_unschedulable_pod_is_reported_then_bound_once_a_node_is_added() {
    let server = ApiServer::start(vec![], vec![]).await;
    server.put_object("nodes", &node("small", "1"));
    let replica = Replica::start(&server, "a", fast_options()).await;
    server.create_pod(pod("big", "2"));

    eventually("a FailedScheduling event", || !events(&server, "FailedScheduling").is_empty())
        .await;
    eventually("the PodScheduled condition", || {
        server.pod("team/big").is_some_and(|p| p.condition("PodScheduled").is_some())
    })
    .await;
    let failed = events(&server, "FailedScheduling");
    let e = &failed[0];
    let note = e["note"].as_str().unwrap().to_string();
    // The planner's FitError message, with DefaultPreemption's part after it.
    assert!(
        note.starts_with(
            "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: "
        ),
        "{note}"
    );
    assert_eq!((&e["type"], &e["action"]), (&Value::from("Warning"), &Value::from("Scheduling")));
    let p = server.pod("team/big").unwrap();
    let c = p.condition("PodScheduled").unwrap();
    assert_eq!((c.status.as_str(), c.reason.as_deref()), ("False", Some("Unschedulable")));
    assert_eq!(c.message.as_deref(), Some(note.as_str()), "the condition carries the message");
    assert!(p.node.is_none());

    // Nothing changes: the pod waits for a cluster change, not retried in a loop.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let binds_tried = server.requests().iter().filter(|r| r.verb == Some(Verb::Bind)).count();
    assert_eq!(binds_tried, 0);
    assert_eq!(events(&server, "FailedScheduling").len(), 1, "no new event without a change");

    server.put_object("nodes", &node("large", "4"));
    eventually("the pod bound to the new node", || {
        server.pod("team/big").is_some_and(|p| p.node.as_deref() == Some("large"))
    })
    .await;
    eventually("a Scheduled event", || !events(&server, "Scheduled").is_empty()).await;
    assert_eq!(server.binds("team/big"), vec!["large".to_string()]);
    replica.stop().await.expect("a clean stop");
}

#[tokio::test]
async fn only_the_leader_binds_and_a_standby_takes_over_when_it_stops() {
    let server = ApiServer::start(vec![], vec![]).await;
    server.put_object("nodes", &node("node-a", "8"));
    let with_lease =
        |id: &str| ScheduleOptions { leader_election: Some(lease(id)), ..fast_options() };
    let a = Replica::start(&server, "a", with_lease("replica-a")).await;
    eventually("replica a leads", || {
        server
            .object("leases", "kube-system/kplace")
            .is_some_and(|l| l["spec"]["holderIdentity"] == "replica-a")
    })
    .await;
    let b = Replica::start(&server, "b", with_lease("replica-b")).await;

    let first: Vec<String> = (0..6).map(|i| format!("team/first-{i}")).collect();
    for k in &first {
        server.create_pod(pod(k.trim_start_matches("team/"), "100m"));
    }
    eventually("the first pods bound", || bound(&server, &first)).await;
    // Give the standby time to misbehave if it would.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let binders = |server: &ApiServer| -> Vec<String> {
        server
            .requests()
            .iter()
            .filter(|r| r.verb == Some(Verb::Bind))
            .map(|r| r.client.clone())
            .collect()
    };
    assert!(
        binders(&server).iter().all(|c| c == "a"),
        "only the leader binds: {:?}",
        binders(&server)
    );
    assert!(
        server.requests().iter().filter(|r| r.client == "b").all(|r| !matches!(
            r.verb,
            Some(Verb::Bind | Verb::Evict | Verb::PatchStatus | Verb::CreateEvent)
        )),
        "the standby writes nothing but the Lease"
    );
    assert!(b.get("/metrics").await.contains("kplace_schedule_leader 0"));

    let summary = a.stop().await.expect("a clean stop");
    assert_eq!((summary.led, summary.lease_released), (true, Some(true)));

    eventually("replica b takes over", || {
        server
            .object("leases", "kube-system/kplace")
            .is_some_and(|l| l["spec"]["holderIdentity"] == "replica-b")
    })
    .await;
    let lease = server.object("leases", "kube-system/kplace").unwrap();
    assert_eq!(lease["spec"]["leaseTransitions"], 1, "one hand-over");
    let second: Vec<String> = (0..4).map(|i| format!("team/second-{i}")).collect();
    for k in &second {
        server.create_pod(pod(k.trim_start_matches("team/"), "100m"));
    }
    eventually("the second pods bound", || bound(&server, &second)).await;
    for k in first.iter().chain(&second) {
        assert_eq!(server.binds(k).len(), 1, "{k} is bound exactly once");
    }
    let log = server.requests();
    let bound_by = |k: &String| -> Vec<String> {
        log.iter()
            .filter(|r| r.verb == Some(Verb::Bind) && &r.pod == k)
            .map(|r| r.client.clone())
            .collect()
    };
    for k in &second {
        assert_eq!(bound_by(k), vec!["b".to_string()], "{k} bound by the new leader");
    }
    let summary = b.stop().await.expect("a clean stop");
    assert_eq!(summary.bound, 4);
    let lease = server.object("leases", "kube-system/kplace").unwrap();
    assert_eq!(lease["spec"]["holderIdentity"], "", "released on the way out");
}

#[tokio::test]
async fn faults_lose_no_pod_and_bind_none_twice() {
    let server = ApiServer::start(vec![], vec![]).await;
    server.put_object("nodes", &node("node-a", "8"));
    server.put_object("nodes", &node("node-b", "8"));
    server.inject(Verb::List, "pods", Fault::Status(500), 1);
    server.inject(Verb::Bind, "team/p-0", Fault::Status(503), 2);
    server.inject(Verb::Bind, "team/p-1", Fault::DropAfterApply, 1);
    server.inject(Verb::Bind, "team/p-2", Fault::DropBeforeApply, 2);
    server.inject(Verb::Bind, "team/p-3", Fault::Status(500), 10);
    server.inject(Verb::CreateEvent, "*", Fault::Status(500), 1);
    server.inject(Verb::CreateEvent, "*", Fault::DropAfterApply, 1);
    let replica = Replica::start(&server, "a", fast_options()).await;

    let keys: Vec<String> = (0..10).map(|i| format!("team/p-{i}")).collect();
    for k in &keys[..5] {
        server.create_pod(pod(k.trim_start_matches("team/"), "250m"));
    }
    let early: Vec<String> =
        ["team/p-0", "team/p-1", "team/p-2", "team/p-4"].map(String::from).to_vec();
    eventually("the first pods bound", || bound(&server, &early)).await;
    server.drop_watches();
    for k in &keys[5..] {
        server.create_pod(pod(k.trim_start_matches("team/"), "250m"));
    }
    eventually("every pod bound despite the faults", || bound(&server, &keys)).await;
    for k in &keys {
        assert_eq!(server.binds(k).len(), 1, "{k} is bound exactly once");
    }
    eventually("a Scheduled event per pod", || {
        let scheduled = events(&server, "Scheduled");
        keys.iter().all(|k| event_for(&scheduled, k.trim_start_matches("team/")).is_some())
    })
    .await;
    let log = server.requests();
    assert!(
        log.iter().any(|r| r.verb == Some(Verb::List) && r.pod == "pods" && r.status == 500),
        "the first list of pods failed"
    );
    let pod_watches = log.iter().filter(|r| r.verb == Some(Verb::Watch) && r.pod == "pods").count();
    assert!(pod_watches >= 2, "the dropped watch was started again: {pod_watches}");
    let p3_binds = server
        .requests()
        .iter()
        .filter(|r| r.verb == Some(Verb::Bind) && r.pod == "team/p-3")
        .count();
    assert!(p3_binds > 4, "the pod whose bindings kept failing was tried again: {p3_binds}");
    let failures = events(&server, "FailedScheduling");
    let e = event_for(&failures, "p-3").expect("the failed binding was reported");
    assert!(e["note"].as_str().unwrap().contains("running Bind plugin \"DefaultBinder\""), "{e}");
    let metrics = replica.get("/metrics").await;
    assert!(metrics.contains("kplace_schedule_bindings_total{outcome=\"failed\"}"), "{metrics}");
    replica.stop().await.expect("a clean stop");
}

#[tokio::test]
async fn a_leader_that_cannot_renew_its_lease_stops() {
    let server = ApiServer::start(vec![], vec![]).await;
    server.put_object("nodes", &node("node-a", "8"));
    let options = ScheduleOptions { leader_election: Some(lease("replica-a")), ..fast_options() };
    let a = Replica::start(&server, "a", options).await;
    eventually("replica a leads", || {
        server
            .object("leases", "kube-system/kplace")
            .is_some_and(|l| l["spec"]["holderIdentity"] == "replica-a")
    })
    .await;
    server.inject(Verb::UpdateLease, "kube-system/kplace", Fault::Status(500), 1000);
    server.inject(Verb::GetLease, "kube-system/kplace", Fault::Status(500), 1000);
    let result = bounded(a.task).await.expect("no panic");
    assert!(matches!(result, Err(ScheduleError::LeadershipLost)), "{result:?}");
}

#[tokio::test]
async fn sigterm_finishes_and_releases_the_lease_and_exits_zero() {
    let server = ApiServer::start(vec![], vec![]).await;
    server.put_object("nodes", &node("node-a", "4"));
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path(), "test");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_kplace"))
        .args(["schedule", "--kubeconfig"])
        .arg(&kubeconfig)
        .args([
            "--metrics-addr",
            "off",
            "--batch-window",
            "50ms",
            "--identity",
            "cli",
            "--lease-duration",
            "4s",
            "--renew-deadline",
            "3s",
            "--retry-period",
            "100ms",
        ])
        .stderr(std::fs::File::create(dir.path().join("stderr")).unwrap())
        .spawn()
        .expect("kplace starts");
    struct KillOnDrop(std::process::Child);
    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut child = KillOnDrop(child);
    server.create_pod(pod("cli-pod", "100m"));
    eventually("the pod bound by the binary", || bound(&server, &["team/cli-pod".to_string()]))
        .await;
    let pid = child.0.id().to_string();
    // The shell's own `kill`, so no procps binary is needed.
    let killed = std::process::Command::new("sh")
        .args(["-c", &format!("kill -TERM {pid}")])
        .status()
        .unwrap();
    assert!(killed.success());
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            break status;
        }
        assert!(start.elapsed() < LIMIT, "kplace did not exit after SIGTERM");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let stderr = std::fs::read_to_string(dir.path().join("stderr")).unwrap_or_default();
    assert!(status.success(), "exit status {status:?}; stderr:\n{stderr}");
    assert!(stderr.contains("SIGTERM: finishing the bindings in flight"), "{stderr}");
    assert!(stderr.contains("released the lease"), "{stderr}");
    let lease = server.object("leases", "kube-system/kplace").expect("the lease exists");
    assert_eq!(lease["spec"]["holderIdentity"], "", "released on SIGTERM");
    assert_eq!(server.binds("team/cli-pod").len(), 1);
}

#[tokio::test]
async fn a_preemptor_is_nominated_its_victim_evicted_and_it_is_bound() {
    let server = ApiServer::start(vec![], vec![]).await;
    server.put_object("nodes", &node("only", "2"));
    let mut victim = pod("low", "1500m");
    victim.spec.as_mut().unwrap().node_name = Some("only".into());
    victim.spec.as_mut().unwrap().scheduler_name = Some("default-scheduler".into());
    victim.spec.as_mut().unwrap().priority = Some(0);
    server.create_pod(victim);
    let replica = Replica::start(&server, "a", fast_options()).await;
    let mut preemptor = pod("high", "1");
    preemptor.spec.as_mut().unwrap().priority = Some(1000);
    server.create_pod(preemptor);

    eventually("the preemptor bound", || {
        server.pod("team/high").is_some_and(|p| p.node.as_deref() == Some("only"))
    })
    .await;
    assert_eq!(server.evictions("team/low"), 1, "the victim was evicted once");
    assert!(server.pod("team/low").is_none());
    let log = server.requests();
    let nominated_at = log
        .iter()
        .position(|r| r.verb == Some(Verb::PatchStatus) && r.pod == "team/high")
        .expect("the preemptor was nominated");
    let bound_at = log.iter().position(|r| r.verb == Some(Verb::Bind)).unwrap();
    assert!(nominated_at < bound_at, "nominated before it was bound: {log:?}");
    assert_eq!(server.pod("team/high").unwrap().nominated_node.as_deref(), Some("only"));
    eventually("a Scheduled event", || !events(&server, "Scheduled").is_empty()).await;
    let metrics = replica.get("/metrics").await;
    assert!(
        metrics.contains("kplace_schedule_evictions_total{outcome=\"evicted\"} 1"),
        "{metrics}"
    );
    replica.stop().await.expect("a clean stop");
}

/// `pod` owned by the ReplicaSet `rs` (controller reference, uid `uid-rs-{rs}`).
fn owned(mut p: Pod, rs: &str) -> Pod {
    p.metadata.owner_references =
        Some(vec![k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
            api_version: "apps/v1".into(),
            kind: "ReplicaSet".into(),
            name: rs.into(),
            uid: format!("uid-rs-{rs}"),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }]);
    p
}

#[tokio::test]
async fn the_replacement_of_a_moved_pod_is_steered_to_its_planned_node_once() {
    let server = ApiServer::start(vec![], vec![]).await;
    server.put_object("nodes", &node("node-a", "4"));
    server.put_object("nodes", &node("node-b", "4"));
    // node-b is busier, so scoring (LeastAllocated) prefers node-a for any new pod.
    let mut busy = owned(pod("busy", "2"), "other");
    busy.spec.as_mut().unwrap().node_name = Some("node-b".into());
    server.create_pod(busy);
    let mut web = owned(pod("web-1", "500m"), "web");
    web.spec.as_mut().unwrap().node_name = Some("node-a".into());
    server.create_pod(web);
    let mut options = fast_options();
    options.steer = vec![kplace::plan::Move {
        pod: "team/web-1".into(),
        from: "node-a".into(),
        to: "node-b".into(),
        wave: 1,
        reason: String::new(),
    }];
    let replica = Replica::start(&server, "a", options).await;
    // A pod of another owner is placed by scoring: on node-a.
    server.create_pod(owned(pod("stranger", "500m"), "stranger"));
    eventually("the stranger bound", || bound(&server, &["team/stranger".to_string()])).await;
    assert_eq!(server.binds("team/stranger"), vec!["node-a".to_string()]);

    // The moved pod goes; its ReplicaSet creates a replacement, which lands on node-b.
    server.delete_pod("team/web-1");
    tokio::time::sleep(Duration::from_millis(150)).await;
    server.create_pod(owned(pod("web-2", "500m"), "web"));
    eventually("the replacement bound", || bound(&server, &["team/web-2".to_string()])).await;
    assert_eq!(server.binds("team/web-2"), vec!["node-b".to_string()], "steered");
    // One replacement per move: a further pod of the same owner is placed by scoring.
    server.create_pod(owned(pod("web-3", "500m"), "web"));
    eventually("the next pod bound", || bound(&server, &["team/web-3".to_string()])).await;
    assert_eq!(server.binds("team/web-3"), vec!["node-a".to_string()], "not steered");
    let summary = replica.stop().await.expect("a clean stop");
    assert_eq!((summary.bound, summary.steered), (3, 1));
}

#[tokio::test]
async fn batches_are_planned_on_the_gpu_backend_when_one_is_asked_for() {
    if let Err(e) = kplace::eval::gpu::GpuContext::new(&Default::default()) {
        assert_ne!(std::env::var("CI").as_deref(), Ok("true"), "CI=true and no GPU adapter: {e}");
        eprintln!("notice: skipped without a GPU adapter: {e}");
        return;
    }
    let server = ApiServer::start(vec![], vec![]).await;
    server.put_object("nodes", &node("node-a", "4"));
    server.put_object("nodes", &node("node-b", "2"));
    let mut options = fast_options();
    options.backend = kplace::eval::Backend::Gpu;
    let replica = Replica::start(&server, "a", options).await;
    let keys: Vec<String> = (0..6).map(|i| format!("team/g-{i}")).collect();
    for i in 0..6 {
        server.create_pod(pod(&format!("g-{i}"), "1"));
    }
    eventually("every pod bound", || bound(&server, &keys)).await;
    let on = |n: &str| keys.iter().filter(|k| server.binds(k) == vec![n.to_string()]).count();
    assert_eq!((on("node-a"), on("node-b")), (4, 2), "capacity respected on the GPU path");
    let summary = replica.stop().await.expect("a clean stop");
    assert_eq!(summary.bound, 6);
}

#[tokio::test]
async fn the_binary_refuses_an_explicit_gpu_backend_without_an_adapter() {
    let server = ApiServer::start(vec![], vec![]).await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path(), "test");
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_kplace"))
            .args(["schedule", "--kubeconfig"])
            .arg(&kubeconfig)
            .args(["--metrics-addr", "off", "--leader-elect", "false", "--backend", "gpu"])
            .env("WGPU_BACKEND", "metal")
            .output()
            .expect("kplace runs")
    });
    let out = bounded(out).await.expect("joins");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--backend gpu: no GPU adapter found"), "{stderr}");
}
