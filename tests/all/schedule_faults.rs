//! `kplace schedule` under faults, against the in-process API server
//! (`tests/support/apiserver.rs`): a pod that makes planning fail while healthy pods keep being
//! bound; an API server unreachable at start (not ready, alive, retrying) and one that answers
//! 503 at first; a 410 Gone on a watch (relist); a 403 on PodDisruptionBudgets (scheduling goes
//! on without preemption); leadership lost between planning and binding (nothing bound after);
//! a node deleted and a pod bound by someone else between planning and binding; a server
//! answering 429 with Retry-After (waited, not hammered); kube-scheduler's metric names after
//! batches. Requests go only to 127.0.0.1, and every wait is bounded.

use crate::support;

use super::schedule::{LIMIT, bound, bounded, events, eventually, fast_options, node, quantities};

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Container, Pod, PodSpec, PodStatus, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kplace::bind::RetryPolicy;
use kplace::framework::config::SchedulerConfig;
use kplace::schedule::lease::LeaseConfig;
use kplace::schedule::planner::PlanFault;
use kplace::schedule::{BeforeBind, RunSummary, ScheduleError, ScheduleOptions};
use support::apiserver::{ApiServer, Fault, Verb};
use tokio::sync::watch;
use tokio::task::JoinHandle;

fn pod(name: &str, cpu: &str) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("team".into()),
            uid: Some(format!("uid-{name}")),
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

/// One `kplace schedule` replica running in this process.
struct Replica {
    stop: watch::Sender<bool>,
    task: JoinHandle<Result<RunSummary, ScheduleError>>,
    metrics: std::net::SocketAddr,
}

impl Replica {
    async fn start_with(client: kube::Client, options: ScheduleOptions) -> Replica {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let metrics = listener.local_addr().unwrap();
        let (stop, rx) = watch::channel(false);
        let task = tokio::spawn(kplace::schedule::run(
            client,
            SchedulerConfig::default(),
            options,
            Some(listener),
            rx,
        ));
        Replica { stop, task, metrics }
    }

    async fn start(server: &ApiServer, options: ScheduleOptions) -> Replica {
        Replica::start_with(server.client_named("a"), options).await
    }

    async fn stop(self) -> Result<RunSummary, ScheduleError> {
        self.stop.send_replace(true);
        bounded(self.task).await.expect("the run did not panic")
    }

    /// `GET path`: the status code and the body.
    async fn get(&self, path: &str) -> (u16, String) {
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
        let text = bounded(read).await.unwrap();
        let code = text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
        let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
        (code, body)
    }
}

/// Creates pods `{prefix}-0` … and returns their keys.
fn create(server: &ApiServer, prefix: &str, n: usize, cpu: &str) -> Vec<String> {
    (0..n)
        .map(|i| {
            let name = format!("{prefix}-{i}");
            server.create_pod(pod(&name, cpu));
            format!("team/{name}")
        })
        .collect()
}

/// The value of the series `line` (name and labels exactly as rendered), if present.
fn sample(metrics: &str, series: &str) -> Option<f64> {
    metrics.lines().find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[tokio::test]
async fn a_poison_pod_is_set_aside_and_healthy_pods_keep_being_bound() {
    let server = ApiServer::start(vec![], vec![]).await;
    server.put_object("nodes", &node("node-a", "8"));
    let mut options = fast_options();
    options.plan_fault = Some(PlanFault(Arc::new(|p| p.name == "poison")));
    let replica = Replica::start(&server, options).await;

    server.create_pod(pod("poison", "100m"));
    let mut keys = create(&server, "first", 5, "100m");
    eventually("the first pods bound", || bound(&server, &keys)).await;
    eventually("the poison pod reported", || {
        server.pod("team/poison").is_some_and(|p| p.condition("PodScheduled").is_some())
    })
    .await;
    let p = server.pod("team/poison").unwrap();
    assert!(p.node.is_none(), "the poison pod is not bound");
    let c = p.condition("PodScheduled").unwrap();
    assert_eq!((c.status.as_str(), c.reason.as_deref()), ("False", Some("SchedulerError")));
    let failed = events(&server, "FailedScheduling");
    let e = failed.iter().find(|e| e["regarding"]["name"] == "poison").expect("an event");
    assert!(
        e["note"].as_str().unwrap().contains("injected planning fault for pod team/poison"),
        "{e}"
    );
    assert!(
        failed.iter().all(|e| e["regarding"]["name"] == "poison"),
        "only the poison pod failed: {failed:?}"
    );

    // The poison pod stays in the queue (retried with backoff); later pods are bound too.
    for wave in 0..3 {
        let more = create(&server, &format!("wave{wave}"), 3, "100m");
        eventually("a later wave bound", || bound(&server, &more)).await;
        keys.extend(more);
    }
    for k in &keys {
        assert_eq!(server.binds(k).len(), 1, "{k} bound once");
    }
    assert!(server.pod("team/poison").unwrap().node.is_none());

    let (_, metrics) = replica.get("/metrics").await;
    let errors =
        sample(&metrics, "scheduler_schedule_attempts_total{profile=\"kplace\",result=\"error\"}")
            .unwrap_or(0.0);
    assert!(errors >= 1.0, "the poison pod's attempts are errors:\n{metrics}");
    assert_eq!(
        sample(
            &metrics,
            "scheduler_schedule_attempts_total{profile=\"kplace\",result=\"scheduled\"}"
        ),
        Some(keys.len() as f64)
    );
    assert!(sample(&metrics, "kplace_schedule_planning_errors_total").unwrap_or(0.0) >= 1.0);
    let summary = replica.stop().await.expect("a clean stop");
    assert_eq!(summary.bound, keys.len() as u64);
}

#[tokio::test]
async fn kube_scheduler_metric_names_appear_with_their_types_after_a_batch() {
    let server = ApiServer::start(vec![], vec![]).await;
    server.put_object("nodes", &node("node-a", "2"));
    let replica = Replica::start(&server, fast_options()).await;
    let keys = create(&server, "p", 3, "500m");
    server.create_pod(pod("too-big", "4"));
    eventually("the pods bound", || bound(&server, &keys)).await;
    eventually("the big pod reported", || !events(&server, "FailedScheduling").is_empty()).await;

    let (code, metrics) = replica.get("/metrics").await;
    assert_eq!(code, 200);
    let types: BTreeMap<&str, &str> = metrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_once(' '))
        .collect();
    for (name, kind) in [
        ("scheduler_schedule_attempts_total", "counter"),
        ("scheduler_scheduling_attempt_duration_seconds", "histogram"),
        ("scheduler_scheduling_algorithm_duration_seconds", "histogram"),
        ("scheduler_pending_pods", "gauge"),
        ("scheduler_preemption_attempts_total", "counter"),
        ("scheduler_preemption_victims", "histogram"),
        ("scheduler_pod_scheduling_attempts", "histogram"),
        ("kplace_schedule_batches_total", "counter"),
        ("kplace_schedule_bindings_total", "counter"),
    ] {
        assert_eq!(types.get(name).copied(), Some(kind), "{name}:\n{metrics}");
    }
    let attempts = |result: &str| {
        sample(
            &metrics,
            &format!("scheduler_schedule_attempts_total{{profile=\"kplace\",result=\"{result}\"}}"),
        )
    };
    assert_eq!(attempts("scheduled"), Some(3.0), "{metrics}");
    assert!(attempts("unschedulable").unwrap_or(0.0) >= 1.0, "{metrics}");
    assert_eq!(
        sample(
            &metrics,
            "scheduler_scheduling_attempt_duration_seconds_count{profile=\"kplace\",result=\"scheduled\"}"
        ),
        Some(3.0)
    );
    assert_eq!(sample(&metrics, "scheduler_pod_scheduling_attempts_count"), Some(3.0));
    assert_eq!(sample(&metrics, "scheduler_pending_pods{queue=\"unschedulable\"}"), Some(1.0));
    assert_eq!(replica.get("/readyz").await, (200, "ok".to_string()));
    assert_eq!(replica.get("/healthz").await, (200, "ok".to_string()));
    replica.stop().await.expect("a clean stop");
}

#[tokio::test]
async fn an_api_server_unreachable_at_start_leaves_the_replica_alive_unready_and_retrying() {
    // Nothing listens on port 1 of the loopback address: every connection is refused.
    let config = kube::Config::new("http://127.0.0.1:1".parse().unwrap());
    let client = kube::Client::try_from(config).expect("a client");
    let replica = Replica::start_with(client, fast_options()).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (code, body) = replica.get("/readyz").await;
    assert_eq!(code, 503, "{body}");
    assert!(body.contains("[-]informer-sync failed: not synced: nodes, pods"), "{body}");
    assert_eq!(replica.get("/healthz").await, (200, "ok".to_string()), "alive: no restart");
    let (_, metrics) = replica.get("/metrics").await;
    assert!(metrics.contains("kplace_schedule_synced{kind=\"nodes\"} 0"), "{metrics}");
    assert!(!replica.task.is_finished(), "it keeps retrying, it does not exit");
    let summary = replica.stop().await.expect("a clean stop");
    assert_eq!(summary.batches, 0);
}

#[tokio::test]
async fn an_api_server_answering_503_at_start_is_retried_until_it_serves() {
    let server = ApiServer::start(vec![], vec![]).await;
    server.put_object("nodes", &node("node-a", "4"));
    server.inject(Verb::List, "nodes", Fault::Status(503), 2);
    server.inject(Verb::List, "pods", Fault::Status(503), 2);
    let replica = Replica::start(&server, fast_options()).await;
    let keys = create(&server, "p", 3, "500m");
    eventually("the pods bound once the server serves", || bound(&server, &keys)).await;
    let failed_lists =
        server.requests().iter().filter(|r| r.verb == Some(Verb::List) && r.status == 503).count();
    assert_eq!(failed_lists, 4, "each injected failure was met, then retried");
    assert_eq!(replica.get("/readyz").await.0, 200);
    replica.stop().await.expect("a clean stop");
}

#[tokio::test]
async fn a_410_gone_on_a_watch_relists_and_scheduling_goes_on() {
    let server = ApiServer::start(vec![], vec![]).await;
    server.put_object("nodes", &node("node-a", "8"));
    let replica = Replica::start(&server, fast_options()).await;
    let mut keys = create(&server, "first", 3, "100m");
    eventually("the first pods bound", || bound(&server, &keys)).await;
    let lists = || {
        server.requests().iter().filter(|r| r.verb == Some(Verb::List) && r.pod == "pods").count()
    };
    let before = lists();

    // The next watch of pods is answered 410 Gone (its resourceVersion is too old): the
    // reflector lists again.
    server.inject(Verb::Watch, "pods", Fault::WatchExpired, 1);
    server.drop_watches();
    eventually("pods listed again", || lists() > before).await;
    let more = create(&server, "after", 3, "100m");
    eventually("pods created after the relist bound", || bound(&server, &more)).await;
    keys.extend(more);
    for k in &keys {
        assert_eq!(server.binds(k).len(), 1, "{k} bound once");
    }
    let gone =
        server.requests().iter().filter(|r| r.verb == Some(Verb::Watch) && r.pod == "pods").count();
    assert!(gone >= 3, "watched, expired, watched again after the relist: {gone}");
    assert_eq!(replica.get("/readyz").await.0, 200);
    replica.stop().await.expect("a clean stop");
}

#[tokio::test]
async fn a_403_on_budgets_warns_and_schedules_without_preemption() {
    let server = ApiServer::start(vec![], vec![]).await;
    server.put_object("nodes", &node("node-a", "1"));
    for verb in [Verb::List, Verb::Watch] {
        server.inject(verb, "poddisruptionbudgets", Fault::Status(403), 100_000);
    }
    let replica = Replica::start(&server, fast_options()).await;
    let low = create(&server, "low", 1, "1");
    eventually("the low-priority pod bound", || bound(&server, &low)).await;
    let (code, body) = replica.get("/readyz?verbose").await;
    assert_eq!(code, 200, "{body}");
    assert!(
        body.contains(
            "[+]informer-sync: poddisruptionbudgets not readable: scheduling without preemption"
        ),
        "{body}"
    );

    // A higher-priority pod that would preempt it is unschedulable instead: no eviction is sent
    // without knowing the budgets.
    let mut high = pod("high", "1");
    if let Some(spec) = high.spec.as_mut() {
        spec.priority = Some(1000);
    }
    server.create_pod(high);
    eventually("the high-priority pod reported", || {
        events(&server, "FailedScheduling").iter().any(|e| e["regarding"]["name"] == "high")
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(server.requests().iter().all(|r| r.verb != Some(Verb::Evict)), "no eviction");
    assert!(server.pod("team/high").unwrap().node.is_none());
    assert_eq!(server.pod(&low[0]).unwrap().node.as_deref(), Some("node-a"));
    replica.stop().await.expect("a clean stop");
}

#[tokio::test]
async fn leadership_lost_between_planning_and_binding_binds_nothing() {
    let server = Arc::new(ApiServer::start(vec![], vec![]).await);
    server.put_object("nodes", &node("node-a", "8"));
    let mut options = fast_options();
    options.leader_election = Some(LeaseConfig {
        lease_duration: Duration::from_secs(2),
        renew_deadline: Duration::from_millis(1500),
        retry_period: Duration::from_millis(100),
        ..LeaseConfig::new("kplace", "kube-system", "replica-a")
    });
    // Once the batch is planned, every renewal of the Lease fails until the renew deadline
    // passes.
    let hook_server = Arc::clone(&server);
    options.before_bind = Some(BeforeBind(Arc::new(move || {
        let server = Arc::clone(&hook_server);
        Box::pin(async move {
            server.inject(Verb::UpdateLease, "kube-system/kplace", Fault::Status(500), 100_000);
            tokio::time::sleep(Duration::from_secs(3)).await;
        })
    })));
    let replica = Replica::start(&server, options).await;
    let keys = create(&server, "p", 3, "100m");
    let result = bounded(replica.task).await.expect("the run did not panic");
    assert!(matches!(result, Err(ScheduleError::LeadershipLost)), "{result:?}");
    assert!(server.requests().iter().all(|r| r.verb != Some(Verb::Bind)), "nothing bound");
    for k in &keys {
        assert!(server.pod(k).unwrap().node.is_none(), "{k} not bound");
    }
}

#[tokio::test]
async fn a_node_deleted_and_a_pod_bound_elsewhere_between_planning_and_binding() {
    let server = Arc::new(ApiServer::start(vec![], vec![]).await);
    server.put_object("nodes", &node("node-a", "8"));
    server.put_object("nodes", &node("node-b", "8"));
    let mut options = fast_options();
    // Before the first batch is bound: node-b goes away and another scheduler binds p-0.
    let hook_server = Arc::clone(&server);
    let once = Arc::new(AtomicBool::new(false));
    options.before_bind = Some(BeforeBind(Arc::new(move || {
        let server = Arc::clone(&hook_server);
        let first = !once.swap(true, Ordering::SeqCst);
        Box::pin(async move {
            if first {
                server.delete_object("nodes", "node-b");
                let mut p = server.pod("team/p-0").expect("p-0 exists");
                p.node = Some("node-a".into());
                server.put_pod(p);
                // Let the watches deliver both changes.
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
        })
    })));
    let replica = Replica::start(&server, options).await;
    let keys = create(&server, "p", 6, "500m");
    eventually("every pod bound", || bound(&server, &keys)).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    for k in &keys {
        assert_eq!(server.pod(k).unwrap().node.as_deref(), Some("node-a"), "{k} on node-a");
    }
    assert!(server.binds("team/p-0").is_empty(), "kplace did not bind p-0 over the other binding");
    for k in &keys[1..] {
        assert_eq!(server.binds(k), vec!["node-a".to_string()], "{k} bound once, to node-a");
    }
    assert!(events(&server, "FailedScheduling").is_empty(), "no pod reported failed");
    replica.stop().await.expect("a clean stop");
}

#[tokio::test]
async fn a_server_answering_429_is_given_the_time_it_asks_for() {
    let server = ApiServer::start(vec![], vec![]).await;
    server.put_object("nodes", &node("node-a", "4"));
    let mut options = fast_options();
    options.write_retry = RetryPolicy {
        max_attempts: 5,
        initial_backoff: Duration::from_millis(5),
        max_backoff: Duration::from_secs(5),
    };
    // The Scheduled event of `slow` is refused twice with "come back in 1 s".
    server.inject(Verb::CreateEvent, "team/slow", Fault::TooManyRequests(1), 2);
    let replica = Replica::start(&server, options).await;
    let started = Instant::now();
    server.create_pod(pod("slow", "100m"));
    eventually("the pod bound", || bound(&server, &["team/slow".to_string()])).await;
    eventually("its Scheduled event", || {
        events(&server, "Scheduled").iter().any(|e| e["regarding"]["name"] == "slow")
    })
    .await;
    let waited = started.elapsed();
    let tries: Vec<u16> = server
        .requests()
        .iter()
        .filter(|r| r.verb == Some(Verb::CreateEvent) && r.pod == "team/slow")
        .map(|r| r.status)
        .collect();
    assert_eq!(tries, [429, 429, 201], "one request per Retry-After, no hammering");
    assert!(waited >= Duration::from_secs(2), "waited {waited:?}: twice the 1 s asked for");
    replica.stop().await.expect("a clean stop");
}
