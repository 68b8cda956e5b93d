//! `kplace bind` against the in-process API server (`tests/support/apiserver.rs`): every pod
//! bound once, faults that lose no pod and bind none twice, budgets that refuse evictions,
//! 409s and 404s, dry-run, re-runs, limits, and the command line with a kubeconfig; and
//! rebalancing plans carried out wave by wave, with the server's stand-in ReplicaSet
//! controller, kube-scheduler, kubelet and disruption controller. Requests go
//! only to 127.0.0.1; every test is bounded in time and checks how many requests it made.

use crate::support;

use std::future::Future;
use std::time::{Duration, Instant};

use kplace::bind::{Action, ActionResult, BindOptions, BindReport, Outcome, RetryPolicy, bind};
use kplace::plan::{Eviction, Move, Placement, Plan};
use support::apiserver::{ApiServer, FakePdb, FakePod, Fault, Verb};

/// The longest any test may take.
const TEST_LIMIT: Duration = Duration::from_secs(60);

async fn bounded<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(TEST_LIMIT, f).await.expect("the test finished in time")
}

/// Options with short waits, so faults cost milliseconds.
fn fast() -> BindOptions {
    BindOptions {
        concurrency: 4,
        qps: 0.0,
        retry: RetryPolicy {
            max_attempts: 4,
            initial_backoff: Duration::from_millis(5),
            max_backoff: Duration::from_millis(40),
        },
        request_timeout: Duration::from_secs(5),
        eviction_timeout: Duration::from_secs(5),
        eviction_poll: Duration::from_millis(10),
        ..BindOptions::default()
    }
}

fn plan(placements: &[(&str, &str)], evictions: &[(&str, &str, &str)]) -> Plan {
    Plan {
        placements: placements
            .iter()
            .map(|(pod, node)| Placement { pod: pod.to_string(), node: node.to_string() })
            .collect(),
        evictions: evictions
            .iter()
            .map(|(pod, node, preemptor)| Eviction {
                pod: pod.to_string(),
                node: node.to_string(),
                preemptor: preemptor.to_string(),
            })
            .collect(),
        ..Plan::default()
    }
}

async fn run(server: &ApiServer, plan: &Plan, options: &BindOptions) -> BindReport {
    let client = server.client();
    bounded(bind(&client, plan, options, &|_: &ActionResult| {})).await.expect("a valid plan")
}

fn outcome(report: &BindReport, action: Action, pod: &str) -> Outcome {
    let list = match action {
        Action::Evict => &report.evictions,
        Action::Bind => &report.bindings,
        Action::Move => panic!("moves have their own results (report.moves)"),
    };
    list.iter().find(|r| r.pod == pod).unwrap_or_else(|| panic!("no result for {pod}")).outcome
}

fn writes(server: &ApiServer) -> usize {
    server.requests().iter().filter(|r| matches!(r.verb, Some(Verb::Bind | Verb::Evict))).count()
}

#[tokio::test]
async fn a_plan_binds_every_pod_exactly_once() {
    let keys: Vec<String> = (0..20).map(|i| format!("ns/p{i:02}")).collect();
    let server = ApiServer::start(keys.iter().map(|k| FakePod::pending(k)).collect(), vec![]).await;
    let nodes: Vec<String> = (0..20).map(|i| format!("node-{}", i % 3)).collect();
    let pairs: Vec<(&str, &str)> =
        keys.iter().zip(&nodes).map(|(k, n)| (k.as_str(), n.as_str())).collect();
    let plan = plan(&pairs, &[]);

    let report = run(&server, &plan, &fast()).await;

    assert!(report.complete, "{report:#?}");
    assert_eq!(report.bindings.len(), 20);
    for (key, node) in &pairs {
        assert_eq!(outcome(&report, Action::Bind, key), Outcome::Bound, "{key}");
        assert_eq!(server.binds(key), vec![node.to_string()], "{key} is bound once, to its node");
    }
    let order: Vec<&str> = report.bindings.iter().map(|r| r.pod.as_str()).collect();
    assert_eq!(order, keys.iter().map(String::as_str).collect::<Vec<_>>(), "plan order");
    assert_eq!(server.requests().len(), 20, "one request per pod and nothing else");
}

#[tokio::test]
async fn faults_lose_no_pod_bind_none_twice_and_a_rerun_completes_the_plan() {
    let pods = ["ns/a", "ns/b", "ns/c", "ns/d", "ns/e", "ns/f"];
    let server = ApiServer::start(pods.iter().map(|k| FakePod::pending(k)).collect(), vec![]).await;
    server.inject(Verb::Bind, "ns/a", Fault::Status(503), 2);
    server.inject(Verb::Bind, "ns/b", Fault::DropAfterApply, 1);
    server.inject(Verb::Bind, "ns/c", Fault::DropBeforeApply, 2);
    server.inject(Verb::Bind, "ns/d", Fault::Delay(Duration::from_millis(800)), 1);
    server.inject(Verb::Bind, "ns/e", Fault::Status(500), 4);
    server.inject(Verb::Bind, "ns/f", Fault::Status(429), 1);
    let plan = plan(
        &[
            ("ns/a", "n1"),
            ("ns/b", "n1"),
            ("ns/c", "n2"),
            ("ns/d", "n2"),
            ("ns/e", "n3"),
            ("ns/f", "n3"),
        ],
        &[],
    );
    let options = BindOptions { request_timeout: Duration::from_millis(300), ..fast() };

    let first = run(&server, &plan, &options).await;

    let cases = [
        ("two 503s are retried until the binding is made", "ns/a", Outcome::Bound, 3),
        ("a reply lost after the binding was made counts as bound", "ns/b", Outcome::Bound, 2),
        ("connections dropped before anything happened are retried", "ns/c", Outcome::Bound, 3),
        ("a reply too late to wait for counts as bound", "ns/d", Outcome::Bound, 2),
        ("500s outlasting every attempt fail", "ns/e", Outcome::Failed, 4),
        ("a throttling 429 is retried", "ns/f", Outcome::Bound, 2),
    ];
    for (name, pod, want, attempts) in cases {
        let r = first.bindings.iter().find(|r| r.pod == pod).unwrap();
        assert_eq!((r.outcome, r.attempts), (want, attempts), "{name}: {r:?}");
    }
    assert!(!first.complete);
    for pod in ["ns/a", "ns/b", "ns/c", "ns/d", "ns/f"] {
        assert_eq!(server.binds(pod).len(), 1, "{pod} is bound exactly once");
    }
    assert!(server.binds("ns/e").is_empty());
    assert_eq!(server.pod("ns/e").unwrap().node, None, "the failed pod is still pending");

    let second = run(&server, &plan, &options).await;

    assert!(second.complete, "{second:#?}");
    assert_eq!(outcome(&second, Action::Bind, "ns/e"), Outcome::Bound);
    for pod in ["ns/a", "ns/b", "ns/c", "ns/d", "ns/f"] {
        assert_eq!(outcome(&second, Action::Bind, pod), Outcome::AlreadyBound, "{pod}");
    }
    for (pod, node) in [
        ("ns/a", "n1"),
        ("ns/b", "n1"),
        ("ns/c", "n2"),
        ("ns/d", "n2"),
        ("ns/e", "n3"),
        ("ns/f", "n3"),
    ] {
        assert_eq!(server.binds(pod), vec![node.to_string()], "{pod} was bound once in all");
    }
    assert!(server.requests().len() <= 40, "{} requests", server.requests().len());
}

#[tokio::test]
async fn an_eviction_refused_by_a_budget_skips_the_bindings_that_needed_its_room() {
    let server = ApiServer::start(
        vec![
            FakePod::running("ns/v1", "n1").label("app", "free"),
            FakePod::running("ns/v2", "n1").label("app", "web"),
            FakePod::running("ns/v3", "n1").label("app", "free"),
            FakePod::pending("ns/p"),
            FakePod::pending("ns/q"),
        ],
        vec![FakePdb::new("ns", "web", "app", "web", 0)],
    )
    .await;
    let plan = plan(
        &[("ns/p", "n1"), ("ns/q", "n2")],
        &[("ns/v1", "n1", "ns/p"), ("ns/v2", "n1", "ns/p"), ("ns/v3", "n1", "ns/p")],
    );

    let report = run(&server, &plan, &fast()).await;

    assert!(!report.complete);
    assert_eq!(outcome(&report, Action::Evict, "ns/v1"), Outcome::Evicted);
    let refused = report.evictions.iter().find(|r| r.pod == "ns/v2").unwrap();
    assert_eq!(refused.outcome, Outcome::Refused);
    assert!(
        refused.message.contains("The disruption budget web needs 2 healthy pods"),
        "{refused:?}"
    );
    assert_eq!(refused.attempts, 1, "a budget refusal is not retried");
    assert_eq!(outcome(&report, Action::Evict, "ns/v3"), Outcome::Skipped, "no pointless eviction");
    let skipped = report.bindings.iter().find(|r| r.pod == "ns/p").unwrap();
    assert_eq!(skipped.outcome, Outcome::Skipped);
    assert!(skipped.message.contains("ns/v2"), "{skipped:?}");
    assert_eq!(outcome(&report, Action::Bind, "ns/q"), Outcome::Bound, "unrelated pods still bind");
    assert!(server.pod("ns/v2").is_some() && server.pod("ns/v3").is_some());
    assert_eq!(server.pod("ns/p").unwrap().node, None);
    assert!(server.requests().len() <= 12, "{:?}", server.requests());
}

#[tokio::test]
async fn evictions_come_first_and_the_preemptor_waits_until_its_victims_are_gone() {
    let server = ApiServer::start(
        vec![FakePod::running("ns/v", "n1").label("app", "web"), FakePod::pending("ns/p")],
        vec![FakePdb::new("ns", "web", "app", "web", 1)],
    )
    .await;
    server.set_grace_reads(3);
    let plan = plan(&[("ns/p", "n1")], &[("ns/v", "n1", "ns/p")]);

    let report = run(&server, &plan, &fast()).await;

    assert!(report.complete, "{report:#?}");
    assert_eq!(outcome(&report, Action::Evict, "ns/v"), Outcome::Evicted);
    assert_eq!(outcome(&report, Action::Bind, "ns/p"), Outcome::Bound);
    assert_eq!(server.pdb("web").unwrap().disruptions_allowed, 0, "the budget was spent");
    assert_eq!(server.evictions("ns/v"), 1);
    let log: Vec<(Option<Verb>, String, u16)> =
        server.requests().into_iter().map(|r| (r.verb, r.pod, r.status)).collect();
    let evict_at = log.iter().position(|r| r.0 == Some(Verb::Evict)).unwrap();
    let gone_at =
        log.iter().position(|r| r.0 == Some(Verb::GetPod) && r.1 == "ns/v" && r.2 == 404).unwrap();
    let bind_at = log.iter().position(|r| r.0 == Some(Verb::Bind)).unwrap();
    assert!(
        evict_at < gone_at && gone_at < bind_at,
        "evict, wait for it to be gone, bind: {log:?}"
    );
    assert!(log.len() <= 10, "{log:?}");
}

#[tokio::test]
async fn a_victim_that_outlives_the_eviction_timeout_holds_back_its_preemptor() {
    let server =
        ApiServer::start(vec![FakePod::running("ns/v", "n1"), FakePod::pending("ns/p")], vec![])
            .await;
    server.set_grace_reads(1_000_000);
    let plan = plan(&[("ns/p", "n1")], &[("ns/v", "n1", "ns/p")]);
    let options = BindOptions { eviction_timeout: Duration::from_millis(200), ..fast() };

    let report = run(&server, &plan, &options).await;

    assert_eq!(outcome(&report, Action::Evict, "ns/v"), Outcome::Evicted);
    let p = report.bindings.iter().find(|r| r.pod == "ns/p").unwrap();
    assert_eq!(p.outcome, Outcome::Skipped);
    assert!(p.message.contains("still terminating"), "{p:?}");
    assert!(!report.complete);
    assert_eq!(server.pod("ns/p").unwrap().node, None);
    assert!(server.requests().len() <= 40, "{} requests", server.requests().len());
}

#[tokio::test]
async fn conflict_outcomes_depend_on_where_the_pod_already_is() {
    let server = ApiServer::start(
        vec![FakePod::running("ns/same", "n1"), FakePod::running("ns/other", "n2")],
        vec![],
    )
    .await;
    let plan = plan(&[("ns/same", "n1"), ("ns/other", "n1")], &[]);

    let report = run(&server, &plan, &fast()).await;

    let cases = [
        (
            "a 409 for a pod already on its planned node is success",
            "ns/same",
            Outcome::AlreadyBound,
        ),
        ("a 409 for a pod on another node is a conflict", "ns/other", Outcome::Conflict),
    ];
    for (name, pod, want) in cases {
        assert_eq!(outcome(&report, Action::Bind, pod), want, "{name}");
    }
    let other = report.bindings.iter().find(|r| r.pod == "ns/other").unwrap();
    assert!(other.message.contains("n2"), "{other:?}");
    assert!(!report.complete, "a conflict leaves the plan incomplete");
    assert_eq!(server.total_binds(), 0);
    assert_eq!(server.pod("ns/other").unwrap().node.as_deref(), Some("n2"), "left where it was");
    assert_eq!(server.requests().len(), 4, "a POST and a GET per pod");
}

#[tokio::test]
async fn pods_that_no_longer_exist_are_gone() {
    let server = ApiServer::start(vec![FakePod::pending("ns/p")], vec![]).await;
    let plan = plan(&[("ns/p", "n1"), ("ns/missing", "n1")], &[("ns/victim", "n1", "ns/p")]);

    let report = run(&server, &plan, &fast()).await;

    let cases = [
        ("a victim that is gone already freed its room", Action::Evict, "ns/victim", Outcome::Gone),
        ("its preemptor binds", Action::Bind, "ns/p", Outcome::Bound),
        ("a 404 on binding is gone", Action::Bind, "ns/missing", Outcome::Gone),
    ];
    for (name, action, pod, want) in cases {
        assert_eq!(outcome(&report, action, pod), want, "{name}");
    }
    assert!(!report.complete, "a gone pod did not bind");
    assert!(server.requests().len() <= 5, "{:?}", server.requests());
}

#[tokio::test]
async fn a_server_dry_run_changes_nothing() {
    let server = ApiServer::start(
        vec![
            FakePod::running("ns/v", "n1").label("app", "web"),
            FakePod::pending("ns/p"),
            FakePod::pending("ns/q"),
        ],
        vec![FakePdb::new("ns", "web", "app", "web", 1)],
    )
    .await;
    let plan = plan(&[("ns/p", "n1"), ("ns/q", "n2")], &[("ns/v", "n1", "ns/p")]);
    let options = BindOptions { dry_run: true, ..fast() };

    let report = run(&server, &plan, &options).await;

    assert!(report.dry_run && report.complete, "{report:#?}");
    assert_eq!(outcome(&report, Action::Evict, "ns/v"), Outcome::Evicted);
    assert_eq!(outcome(&report, Action::Bind, "ns/p"), Outcome::Bound);
    assert_eq!(outcome(&report, Action::Bind, "ns/q"), Outcome::Bound);
    assert!(server.pod("ns/v").is_some(), "the victim still exists");
    assert_eq!(server.pdb("web").unwrap().disruptions_allowed, 1, "the budget is untouched");
    assert_eq!(server.pod("ns/p").unwrap().node, None);
    assert_eq!(server.pod("ns/q").unwrap().node, None);
    assert_eq!((server.total_binds(), server.evictions("ns/v")), (0, 0));
    let requests = server.requests();
    let posts: Vec<_> =
        requests.iter().filter(|r| matches!(r.verb, Some(Verb::Bind | Verb::Evict))).collect();
    assert_eq!(posts.len(), 3);
    assert!(posts.iter().all(|r| r.dry_run), "every write carried dryRun=All: {posts:?}");
}

#[tokio::test]
async fn running_a_finished_plan_again_changes_nothing() {
    let server = ApiServer::start(
        vec![FakePod::running("ns/v", "n1"), FakePod::pending("ns/p"), FakePod::pending("ns/q")],
        vec![],
    )
    .await;
    let plan = plan(&[("ns/p", "n1"), ("ns/q", "n2")], &[("ns/v", "n1", "ns/p")]);
    let first = run(&server, &plan, &fast()).await;
    assert!(first.complete, "{first:#?}");
    let writes_before = writes(&server);

    let second = run(&server, &plan, &fast()).await;

    assert!(second.complete, "{second:#?}");
    assert_eq!(outcome(&second, Action::Evict, "ns/v"), Outcome::NotNeeded);
    assert_eq!(outcome(&second, Action::Bind, "ns/p"), Outcome::AlreadyBound);
    assert_eq!(outcome(&second, Action::Bind, "ns/q"), Outcome::AlreadyBound);
    assert_eq!(server.evictions("ns/v"), 1);
    assert_eq!(server.total_binds(), 2);
    assert_eq!(writes(&server) - writes_before, 2, "only the two binding attempts, both refused");
}

#[tokio::test]
async fn a_dropped_eviction_reply_is_not_a_failure() {
    let server =
        ApiServer::start(vec![FakePod::running("ns/v", "n1"), FakePod::pending("ns/p")], vec![])
            .await;
    server.inject(Verb::Evict, "ns/v", Fault::DropAfterApply, 1);
    let plan = plan(&[("ns/p", "n1")], &[("ns/v", "n1", "ns/p")]);

    let report = run(&server, &plan, &fast()).await;

    assert!(report.complete, "{report:#?}");
    assert_eq!(
        outcome(&report, Action::Evict, "ns/v"),
        Outcome::Evicted,
        "the retry finds it gone after an unanswered attempt: the eviction happened"
    );
    assert_eq!(server.evictions("ns/v"), 1);
    assert_eq!(server.binds("ns/p"), vec!["n1".to_string()]);
}

#[tokio::test]
async fn a_victim_replaced_under_the_same_name_is_not_evicted() {
    let server =
        ApiServer::start(vec![FakePod::running("ns/v", "n1"), FakePod::pending("ns/p")], vec![])
            .await;
    // The first eviction is applied but its reply comes too late; a controller recreates the
    // pod under the same name on the same node at once. The retried eviction must not delete
    // the new pod.
    server.inject(Verb::Evict, "ns/v", Fault::Delay(Duration::from_millis(500)), 1);
    server.recreate_after_eviction("ns/v", "uid-replacement");
    let plan = plan(&[("ns/p", "n1")], &[("ns/v", "n1", "ns/p")]);
    let options = BindOptions { request_timeout: Duration::from_millis(100), ..fast() };

    let report = run(&server, &plan, &options).await;

    assert_eq!(outcome(&report, Action::Evict, "ns/v"), Outcome::Evicted, "{report:#?}");
    assert_eq!(server.evictions("ns/v"), 1, "the replacement was not evicted");
    assert_eq!(server.pod("ns/v").unwrap().uid, "uid-replacement");
    let refused = server.requests().iter().any(|r| r.verb == Some(Verb::Evict) && r.status == 409);
    assert!(refused, "the retry was refused by its UID precondition: {:?}", server.requests());
}

#[tokio::test]
async fn concurrency_and_the_request_rate_are_limited() {
    let keys: Vec<String> = (0..8).map(|i| format!("ns/p{i}")).collect();
    let server = ApiServer::start(keys.iter().map(|k| FakePod::pending(k)).collect(), vec![]).await;
    for k in &keys {
        server.inject(Verb::Bind, k, Fault::Delay(Duration::from_millis(30)), 1);
    }
    let pairs: Vec<(&str, &str)> = keys.iter().map(|k| (k.as_str(), "n1")).collect();
    let plan = plan(&pairs, &[]);
    let options = BindOptions { concurrency: 2, qps: 40.0, burst: 1, ..fast() };

    let start = Instant::now();
    let report = run(&server, &plan, &options).await;
    let elapsed = start.elapsed();

    assert!(report.complete);
    assert!(server.max_in_flight() <= 2, "at most 2 in flight, saw {}", server.max_in_flight());
    // Burst 1 at 40/s: the 8th request waits 7 × 25 ms.
    assert!(elapsed >= Duration::from_millis(170), "took only {elapsed:?}");
    assert_eq!(server.requests().len(), 8);
}

/// Runs the `kplace` binary while the server keeps serving on this runtime.
async fn kplace(args: Vec<String>, env: Vec<(&'static str, String)>) -> std::process::Output {
    bounded(tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_kplace"))
            .args(&args)
            .env("RUST_LOG", "warn")
            .env_remove("KUBECONFIG")
            .envs(env)
            .output()
            .expect("kplace runs")
    }))
    .await
    .expect("the command thread finished")
}

#[tokio::test]
async fn the_command_reads_the_kubeconfig_prints_json_and_exits_3_when_incomplete() {
    let server = ApiServer::start(
        vec![
            FakePod::running("ns/v", "n1").label("app", "web"),
            FakePod::pending("ns/p"),
            FakePod::pending("ns/q"),
        ],
        vec![FakePdb::new("ns", "web", "app", "web", 0)],
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path(), "test");
    let plan_path = dir.path().join("plan.json");
    let plan = plan(&[("ns/p", "n1"), ("ns/q", "n2")], &[("ns/v", "n1", "ns/p")]);
    std::fs::write(&plan_path, serde_json::to_string(&plan).unwrap()).unwrap();

    let args = vec![
        "bind".to_string(),
        "--plan".to_string(),
        plan_path.display().to_string(),
        "--kubeconfig".to_string(),
        kubeconfig.display().to_string(),
        "-o".to_string(),
        "json".to_string(),
    ];
    let out = kplace(args, vec![]).await;

    assert_eq!(out.status.code(), Some(3), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let report: BindReport =
        serde_json::from_slice(&out.stdout).expect("stdout is one JSON report");
    assert_eq!(outcome(&report, Action::Evict, "ns/v"), Outcome::Refused);
    assert_eq!(outcome(&report, Action::Bind, "ns/p"), Outcome::Skipped);
    assert_eq!(outcome(&report, Action::Bind, "ns/q"), Outcome::Bound);
    assert_eq!(server.binds("ns/q"), vec!["n2".to_string()]);
}

#[tokio::test]
async fn the_command_finds_the_cluster_through_kubeconfig_and_context_and_prints_a_table() {
    let server = ApiServer::start(vec![FakePod::pending("ns/p")], vec![]).await;
    let dir = tempfile::tempdir().unwrap();
    // The current context points at a closed port; --context picks the live one.
    let kubeconfig = server.write_kubeconfig(dir.path(), "dead");
    let plan_path = dir.path().join("plan.yaml");
    std::fs::write(&plan_path, "placements:\n- pod: ns/p\n  node: n1\n").unwrap();
    let args: Vec<String> = [
        "bind",
        "--plan",
        &plan_path.display().to_string(),
        "--context",
        "test",
        "--dry-run",
        "server",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();

    let out = kplace(args, vec![("KUBECONFIG", kubeconfig.display().to_string())]).await;

    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("ns/p") && stdout.contains("bound"), "{stdout}");
    assert!(stdout.contains("server dry run: nothing changed"), "{stdout}");
    assert_eq!(server.pod("ns/p").unwrap().node, None, "dry run");
    let requests = server.requests();
    let writes: Vec<_> =
        requests.iter().filter(|r| matches!(r.verb, Some(Verb::Bind | Verb::Evict))).collect();
    assert!(!writes.is_empty() && writes.iter().all(|r| r.dry_run), "{requests:?}");
}

#[tokio::test]
async fn a_plan_that_is_not_a_plan_is_an_error_before_any_request() {
    let server = ApiServer::start(vec![], vec![]).await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path(), "test");
    let plan_path = dir.path().join("plan.json");
    std::fs::write(&plan_path, r#"{"placements": [{"pod": "no-namespace", "node": "n1"}]}"#)
        .unwrap();
    let args: Vec<String> = ["bind", "--plan", &plan_path.display().to_string(), "--kubeconfig"]
        .iter()
        .map(|s| s.to_string())
        .chain([kubeconfig.display().to_string()])
        .collect();

    let out = kplace(args, vec![]).await;

    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("placements[0].pod") && stderr.contains("no-namespace"), "{stderr}");
    assert!(
        stderr.contains(&plan_path.display().to_string()),
        "the error names the file: {stderr}"
    );
    assert!(server.requests().is_empty());
}

// --- rebalancing plans: moves, wave by wave ----------------------------------------------------

fn moves_plan(moves: &[(&str, &str, &str, u32)]) -> Plan {
    Plan {
        moves: moves
            .iter()
            .map(|(pod, from, to, wave)| Move {
                pod: pod.to_string(),
                from: from.to_string(),
                to: to.to_string(),
                wave: *wave,
                reason: String::new(),
            })
            .collect(),
        ..Plan::default()
    }
}

/// Waves polled every 10 ms, given 2 s.
fn waves() -> BindOptions {
    BindOptions {
        wave_timeout: Duration::from_secs(2),
        wave_poll: Duration::from_millis(10),
        ..fast()
    }
}

/// Three ready replicas of ReplicaSet `web` on n1, scheduled by `scheduler`, and a budget that
/// needs two of them ready.
async fn web_cluster(scheduler: &str) -> ApiServer {
    let pods = ["ns/web-a", "ns/web-b", "ns/web-c"]
        .iter()
        .map(|k| {
            FakePod::running(k, "n1")
                .label("app", "web")
                .owned_by_replica_set("web")
                .scheduler(scheduler)
        })
        .collect();
    let server =
        ApiServer::start(pods, vec![FakePdb::min_available("ns", "web", "app", "web", 2)]).await;
    server.run_replica_set_controller();
    server.run_kubelet();
    server
}

fn position(server: &ApiServer, verb: Verb, pod: &str) -> usize {
    server
        .requests()
        .iter()
        .position(|r| r.verb == Some(verb) && r.pod == pod && r.status < 300)
        .unwrap_or_else(|| panic!("no successful {verb:?} of {pod}"))
}

#[tokio::test]
async fn a_rebalancing_plan_is_applied_wave_by_wave_with_replacements_steered_to_their_nodes() {
    let server = web_cluster("kplace").await;
    let plan = moves_plan(&[
        ("ns/web-a", "n1", "n2", 1),
        ("ns/web-b", "n1", "n3", 2),
        ("ns/web-c", "n1", "n2", 3),
    ]);

    let report = run(&server, &plan, &waves()).await;

    assert!(report.complete, "{report:#?}");
    let replacements = server.replacements();
    assert_eq!(replacements, vec!["ns/web-r1", "ns/web-r2", "ns/web-r3"]);
    for (m, (r, to)) in report.moves.iter().zip(replacements.iter().zip(["n2", "n3", "n2"])) {
        assert_eq!(m.outcome, Outcome::Moved, "{m:?}");
        assert!(m.steered, "kplace bound {r}: {m:?}");
        assert_eq!(m.replacement.as_deref(), Some(r.as_str()));
        assert_eq!(m.node.as_deref(), Some(to));
        assert_eq!(server.binds(r), vec![to.to_string()], "{r} bound once, to its planned node");
    }
    // Each wave starts only once the previous wave's replacement is bound (and running).
    assert!(
        position(&server, Verb::Bind, "ns/web-r1") < position(&server, Verb::Evict, "ns/web-b")
    );
    assert!(
        position(&server, Verb::Bind, "ns/web-r2") < position(&server, Verb::Evict, "ns/web-c")
    );
    // The budget (two of three ready) never had to refuse an eviction.
    assert!(!server.requests().iter().any(|r| r.status == 429), "{:?}", server.requests());
    assert_eq!(report.summary.moves.get(&Outcome::Moved), Some(&3));

    // Running the plan again finds every move done and changes nothing.
    let writes_before = writes(&server);
    let again = run(&server, &plan, &waves()).await;
    assert!(again.complete);
    assert!(again.moves.iter().all(|m| m.outcome == Outcome::Gone), "{again:#?}");
    assert_eq!(writes(&server), writes_before);
}

#[tokio::test]
async fn a_wave_larger_than_the_budget_allows_waits_for_the_budget_at_each_eviction() {
    let server = web_cluster("kplace").await;
    // Two evictions in one wave, but the budget allows one at a time: the second is refused
    // until the first one's replacement is ready, then goes through.
    let plan = moves_plan(&[("ns/web-a", "n1", "n2", 1), ("ns/web-b", "n1", "n3", 1)]);

    let report = run(&server, &plan, &waves()).await;

    assert!(report.complete, "{report:#?}");
    assert!(server.requests().iter().any(|r| r.verb == Some(Verb::Evict) && r.status == 429));
    assert!(
        position(&server, Verb::Bind, "ns/web-r1") < position(&server, Verb::Evict, "ns/web-b")
    );
    let b = report.moves.iter().find(|m| m.pod == "ns/web-b").unwrap();
    assert!(b.attempts >= 2, "the refused eviction was sent again: {b:?}");
}

#[tokio::test]
async fn an_eviction_the_budget_keeps_refusing_ends_the_plan_at_its_wave() {
    let server = web_cluster("kplace").await;
    // All three must stay ready: nothing may be evicted.
    server.put_pdb(FakePdb::min_available("ns", "web", "app", "web", 3));
    let plan = moves_plan(&[("ns/web-a", "n1", "n2", 1), ("ns/web-b", "n1", "n3", 2)]);
    let options = BindOptions { wave_timeout: Duration::from_millis(200), ..waves() };

    let report = run(&server, &plan, &options).await;

    assert!(!report.complete);
    assert_eq!(report.moves[0].outcome, Outcome::Refused);
    assert_eq!(report.moves[1].outcome, Outcome::Skipped);
    assert!(server.pod("ns/web-a").is_some() && server.evictions("ns/web-b") == 0);
}

#[tokio::test]
async fn replacements_kube_scheduler_puts_elsewhere_end_the_plan_after_their_wave() {
    let server = web_cluster("default-scheduler").await;
    server.run_kube_scheduler("n9");
    let plan = moves_plan(&[("ns/web-a", "n1", "n2", 1), ("ns/web-b", "n1", "n3", 2)]);

    let report = run(&server, &plan, &waves()).await;

    assert!(!report.complete);
    let a = &report.moves[0];
    assert_eq!((a.outcome, a.node.as_deref(), a.steered), (Outcome::Elsewhere, Some("n9"), false));
    assert!(a.message.contains("default-scheduler"), "{a:?}");
    let b = &report.moves[1];
    assert_eq!(b.outcome, Outcome::Skipped);
    assert!(b.message.contains("wave 1 did not go as planned"), "{b:?}");
    assert_eq!(server.evictions("ns/web-b"), 0, "later waves are not started");
    assert_eq!(server.total_binds(), 0, "kplace binds no default-scheduler pod");
}

#[tokio::test]
async fn a_replacement_kube_scheduler_puts_on_the_planned_node_completes_the_move_unsteered() {
    let server = web_cluster("default-scheduler").await;
    server.run_kube_scheduler("n2");
    let plan = moves_plan(&[("ns/web-a", "n1", "n2", 1)]);

    let report = run(&server, &plan, &waves()).await;

    assert!(report.complete, "{report:#?}");
    assert_eq!((report.moves[0].outcome, report.moves[0].steered), (Outcome::Moved, false));
    assert_eq!(server.total_binds(), 0);
}

#[tokio::test]
async fn a_move_whose_replacement_never_appears_fails_when_its_wave_times_out() {
    let server = web_cluster("kplace").await;
    // No controller: nothing replaces the evicted pod.
    server.state_without_controller();
    let plan = moves_plan(&[("ns/web-a", "n1", "n2", 1), ("ns/web-b", "n1", "n3", 2)]);
    let options = BindOptions { wave_timeout: Duration::from_millis(200), ..waves() };

    let report = run(&server, &plan, &options).await;

    assert!(!report.complete);
    assert_eq!(report.moves[0].outcome, Outcome::Failed);
    assert!(report.moves[0].message.contains("no replacement appeared"), "{:?}", report.moves[0]);
    assert_eq!(report.moves[1].outcome, Outcome::Skipped);
}

#[tokio::test]
async fn moves_of_pods_without_a_controller_are_skipped_and_a_dry_run_changes_nothing() {
    let server = ApiServer::start(
        vec![
            FakePod::running("ns/bare", "n1"),
            FakePod::running("ns/web-a", "n1").owned_by_replica_set("web").scheduler("kplace"),
        ],
        vec![],
    )
    .await;
    server.run_replica_set_controller();
    let plan = moves_plan(&[("ns/bare", "n1", "n2", 1)]);
    let report = run(&server, &plan, &waves()).await;
    assert_eq!(report.moves[0].outcome, Outcome::Skipped);
    assert_eq!(server.evictions("ns/bare"), 0);

    let plan = moves_plan(&[("ns/web-a", "n1", "n2", 1)]);
    let report = run(&server, &plan, &BindOptions { dry_run: true, ..waves() }).await;
    assert!(report.complete && report.dry_run);
    assert_eq!(report.moves[0].outcome, Outcome::Evicted);
    assert!(server.pod("ns/web-a").is_some() && server.replacements().is_empty());
    assert!(server.requests().iter().filter(|r| r.verb == Some(Verb::Evict)).all(|r| r.dry_run));
}

#[tokio::test]
async fn invalid_moves_are_rejected_before_any_request() {
    let server = ApiServer::start(vec![], vec![]).await;
    let cases = [
        (
            "a pod moved twice",
            moves_plan(&[("ns/a", "n1", "n2", 1), ("ns/a", "n2", "n3", 2)]),
            "moves[1].pod",
        ),
        ("a wave 0", moves_plan(&[("ns/a", "n1", "n2", 0)]), "moves[0].wave"),
        ("no target", moves_plan(&[("ns/a", "n1", "", 1)]), "moves[0].to"),
    ];
    for (name, plan, field) in cases {
        let client = server.client();
        match bind(&client, &plan, &waves(), &|_: &ActionResult| {}).await {
            Err(kplace::bind::BindError::InvalidPlan { field: f, .. }) => {
                assert_eq!(f, field, "{name}")
            }
            other => panic!("{name}: expected an invalid plan, got {other:?}"),
        }
    }
    assert!(server.requests().is_empty());
}

/// A snapshot of three 4-CPU nodes, each running one replica (1 CPU) of ReplicaSet `web`,
/// scheduled by kplace, with a budget that needs two replicas.
fn web_snapshot() -> String {
    let mut docs = Vec::new();
    for i in 0..3 {
        docs.push(format!(
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: n{}\n  labels:\n    kubernetes.io/hostname: n{}\n\
             status:\n  allocatable: {{cpu: '4', memory: 16Gi, pods: '110'}}\n  capacity: {{cpu: '4', memory: 16Gi, pods: '110'}}\n",
            i + 1,
            i + 1
        ));
        docs.push(format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-{i}\n  namespace: ns\n  uid: uid-web-{i}\n  labels: {{app: web}}\n\
             \x20 ownerReferences:\n  - {{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: uid-rs-web, controller: true}}\n\
             spec:\n  nodeName: n{}\n  schedulerName: kplace\n  containers:\n  - name: c\n    image: web\n\
             \x20   resources: {{requests: {{cpu: '1', memory: 1Gi}}}}\nstatus:\n  phase: Running\n",
            i + 1
        ));
    }
    docs.push(
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: ns}\n\
         spec:\n  minAvailable: 2\n  selector: {matchLabels: {app: web}}\n\
         status: {currentHealthy: 3, desiredHealthy: 2, expectedPods: 3, disruptionsAllowed: 1}\n"
            .to_string(),
    );
    docs.join("---\n")
}

#[tokio::test]
async fn a_plan_from_kplace_rebalance_is_carried_out_by_kplace_bind() {
    let dir = tempfile::tempdir().unwrap();
    let snapshot = dir.path().join("cluster.yaml");
    std::fs::write(&snapshot, web_snapshot()).unwrap();
    let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let out = kplace(
        args(&["rebalance", &snapshot.display().to_string(), "--objective", "pack", "-o", "json"]),
        vec![],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let plan: Plan = serde_json::from_slice(&out.stdout).expect("one JSON plan");
    let planned: Vec<(&str, &str, &str, u32)> = plan
        .moves
        .iter()
        .map(|m| (m.pod.as_str(), m.from.as_str(), m.to.as_str(), m.wave))
        .collect();
    // n1 and n3 are emptied onto n2, one replica at a time (the budget allows one disruption).
    assert_eq!(planned, vec![("ns/web-0", "n1", "n2", 1), ("ns/web-2", "n3", "n2", 2)]);
    let plan_path = dir.path().join("plan.json");
    std::fs::write(&plan_path, &out.stdout).unwrap();

    let pods = (0..3)
        .map(|i| {
            FakePod::running(&format!("ns/web-{i}"), &format!("n{}", i + 1))
                .label("app", "web")
                .owned_by_replica_set("web")
                .scheduler("kplace")
        })
        .collect();
    let server =
        ApiServer::start(pods, vec![FakePdb::min_available("ns", "web", "app", "web", 2)]).await;
    server.run_replica_set_controller();
    server.run_kubelet();
    let kubeconfig = server.write_kubeconfig(dir.path(), "test");
    let out = kplace(
        args(&[
            "bind",
            "--plan",
            &plan_path.display().to_string(),
            "--kubeconfig",
            &kubeconfig.display().to_string(),
            "--wave-poll",
            "20ms",
            "-o",
            "json",
        ]),
        vec![],
    )
    .await;

    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let report: BindReport = serde_json::from_slice(&out.stdout).expect("one JSON report");
    assert!(report.moves.iter().all(|m| m.outcome == Outcome::Moved && m.steered), "{report:#?}");
    for r in server.replacements() {
        assert_eq!(server.pod(&r).unwrap().node.as_deref(), Some("n2"), "{r}");
    }
    assert!(server.pod("ns/web-0").is_none() && server.pod("ns/web-2").is_none());
    assert!(!server.requests().iter().any(|r| r.status == 429), "the waves kept the budget");
}

// --- deadlines, uncertain outcomes and the first contact (issue 19, item 2) --------------------

/// Retries bounded by a deadline only, as `kplace bind` runs by default, with short waits.
fn deadline(timeout: Duration) -> BindOptions {
    BindOptions {
        retry: RetryPolicy { max_attempts: 0, ..fast().retry },
        timeout,
        read_back_timeout: Duration::from_millis(300),
        ..fast()
    }
}

#[tokio::test]
async fn retries_last_until_the_deadline_not_a_fixed_count() {
    let server = ApiServer::start(vec![FakePod::pending("ns/a")], vec![]).await;
    server.inject(Verb::Bind, "ns/a", Fault::Status(503), 12);
    let plan = plan(&[("ns/a", "n1")], &[]);

    let report = run(&server, &plan, &deadline(Duration::from_secs(20))).await;

    let r = &report.bindings[0];
    assert_eq!((r.outcome, r.attempts), (Outcome::Bound, 13), "{r:?}");
    assert_eq!(server.binds("ns/a"), vec!["n1".to_string()]);
}

#[tokio::test]
async fn uncertain_writes_are_settled_by_reading_the_pod_back() {
    let server = ApiServer::start(
        vec![
            FakePod::pending("ns/applied"),
            FakePod::pending("ns/never"),
            FakePod::pending("ns/unknown"),
            FakePod::running("ns/victim", "n2"),
            FakePod::pending("ns/preemptor"),
        ],
        vec![],
    )
    .await;
    let forever = 1_000_000;
    // Applied, then every retry fails until the deadline: the pod is on its node.
    server.inject(Verb::Bind, "ns/applied", Fault::DropAfterApply, 1);
    server.inject(Verb::Bind, "ns/applied", Fault::Status(503), forever);
    // Never applied: only 503s.
    server.inject(Verb::Bind, "ns/never", Fault::Status(503), forever);
    // Applied, and the read back fails as well: nobody can tell.
    server.inject(Verb::Bind, "ns/unknown", Fault::DropAfterApply, 1);
    server.inject(Verb::Bind, "ns/unknown", Fault::Status(503), forever);
    server.inject(Verb::GetPod, "ns/unknown", Fault::Status(503), forever);
    // An eviction applied whose answer was lost, then 503s: its preemptor must still bind.
    server.inject(Verb::Evict, "ns/victim", Fault::DropAfterApply, 1);
    server.set_grace_reads(2);
    server.inject(Verb::Evict, "ns/victim", Fault::Status(503), forever);
    let plan = plan(
        &[("ns/applied", "n1"), ("ns/never", "n1"), ("ns/unknown", "n1"), ("ns/preemptor", "n2")],
        &[("ns/victim", "n2", "ns/preemptor")],
    );

    // Each write gives up after four attempts (as at a deadline, without the timing).
    let options = BindOptions {
        retry: RetryPolicy { max_attempts: 4, ..fast().retry },
        ..deadline(Duration::from_secs(20))
    };
    let report = run(&server, &plan, &options).await;

    let cases = [
        ("an applied binding whose answers were lost is bound", "ns/applied", Outcome::Bound),
        ("a binding never applied failed, truly", "ns/never", Outcome::Failed),
        ("a binding nobody can read back is unknown", "ns/unknown", Outcome::Unknown),
        ("the preemptor of an applied eviction binds", "ns/preemptor", Outcome::Bound),
    ];
    for (name, pod, want) in cases {
        let r = report.bindings.iter().find(|r| r.pod == pod).unwrap();
        assert_eq!(r.outcome, want, "{name}: {r:?}");
    }
    let victim = report.evictions.iter().find(|r| r.pod == "ns/victim").unwrap();
    assert_eq!(victim.outcome, Outcome::Evicted, "{victim:?}");
    assert_eq!(server.evictions("ns/victim"), 1);
    assert_eq!(server.pod("ns/applied").unwrap().node.as_deref(), Some("n1"));
    assert_eq!(server.pod("ns/never").unwrap().node, None);
    assert_eq!(server.pod("ns/unknown").unwrap().node.as_deref(), Some("n1"));
    assert_eq!(server.pod("ns/preemptor").unwrap().node.as_deref(), Some("n2"));
    let never = report.bindings.iter().find(|r| r.pod == "ns/never").unwrap();
    assert!(never.message.contains("read back: not bound"), "{never:?}");
    assert!(!report.complete);
}

/// Every reported outcome against the server's final state.
fn assert_outcomes_true(server: &ApiServer, report: &BindReport, plan: &Plan) {
    for (r, p) in report.bindings.iter().zip(&plan.placements) {
        assert_eq!(r.pod, p.pod);
        let now = server.pod(&p.pod);
        let node = now.as_ref().and_then(|p| p.node.clone());
        let truth = match r.outcome {
            Outcome::Bound | Outcome::AlreadyBound => node.as_deref() == Some(p.node.as_str()),
            Outcome::Failed | Outcome::Skipped => node.is_none(),
            Outcome::Conflict => node.is_some_and(|n| n != p.node),
            Outcome::Gone => now.is_none_or(|p| p.deleting),
            Outcome::Unknown => true,
            other => panic!("a binding cannot be {other}"),
        };
        assert!(truth, "{r:?} is not true: the pod is {:?}", server.pod(&p.pod));
        assert!(server.binds(&p.pod).len() <= 1, "{} bound twice", p.pod);
    }
    for (r, e) in report.evictions.iter().zip(&plan.evictions) {
        assert_eq!(r.pod, e.pod);
        let now = server.pod(&e.pod);
        let removed = now.as_ref().is_none_or(|p| p.deleting);
        let truth = match r.outcome {
            Outcome::Evicted => removed && server.evictions(&e.pod) == 1,
            Outcome::Gone => removed,
            Outcome::Failed | Outcome::Refused | Outcome::Skipped => {
                !removed && server.evictions(&e.pod) == 0
            }
            Outcome::NotNeeded => true,
            Outcome::Unknown => true,
            other => panic!("an eviction cannot be {other}"),
        };
        assert!(truth, "{r:?} is not true: the pod is {now:?}");
    }
}

#[tokio::test]
async fn two_thousand_pods_under_5xx_and_dropped_connections_complete_and_every_outcome_is_true() {
    let placements: Vec<(String, String)> =
        (0..2000).map(|i| (format!("ns/p{i:04}"), format!("node-{}", i % 50))).collect();
    // Every tenth pod preempts a running victim on its node.
    let evictions: Vec<(String, String, String)> = placements
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 10 == 0)
        .map(|(i, (pod, node))| (format!("ns/v{i:04}"), node.clone(), pod.clone()))
        .collect();
    let mut pods: Vec<FakePod> = placements.iter().map(|(p, _)| FakePod::pending(p)).collect();
    pods.extend(evictions.iter().map(|(v, n, _)| FakePod::running(v, n)));
    let server = ApiServer::start(pods, vec![]).await;
    server.chaos(&[Verb::GetPod, Verb::Bind, Verb::Evict], 503, 0.30, 0.10, 19);
    let p: Vec<(&str, &str)> = placements.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let e: Vec<(&str, &str, &str)> =
        evictions.iter().map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str())).collect();
    let plan = plan(&p, &e);
    let options = BindOptions { concurrency: 32, ..deadline(Duration::from_secs(50)) };

    let report = run(&server, &plan, &options).await;

    assert_outcomes_true(&server, &report, &plan);
    assert!(report.complete, "{:?}", report.summary);
    let requests = server.requests();
    let dropped = requests.iter().filter(|r| r.status == 0).count();
    let failed = requests.iter().filter(|r| r.status == 503).count();
    // About 5,100 requests at 10% drops and 30% 503s give about 510 and 1,530; how many
    // requests there are depends on the order the binder's tasks reach the server, so the bounds
    // sit far below those means (the old ones, 500 and 1,500, sat within one deviation).
    assert!(
        dropped > 350 && failed > 1200,
        "the faults happened: {dropped} dropped, {failed} 503s of {} requests",
        requests.len()
    );
    for (pod, node) in &placements {
        assert_eq!(server.binds(pod), vec![node.clone()], "{pod} bound once, to its node");
    }
}

#[tokio::test]
async fn a_short_deadline_under_faults_still_reports_only_what_is_true() {
    let placements: Vec<(String, String)> =
        (0..300).map(|i| (format!("ns/p{i:03}"), format!("node-{}", i % 7))).collect();
    let server =
        ApiServer::start(placements.iter().map(|(p, _)| FakePod::pending(p)).collect(), vec![])
            .await;
    // Faults so frequent that many writes end uncertain at the deadline.
    server.chaos(&[Verb::GetPod, Verb::Bind, Verb::Evict], 503, 0.55, 0.25, 7);
    let p: Vec<(&str, &str)> = placements.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let plan = plan(&p, &[]);
    let options = BindOptions { concurrency: 32, ..deadline(Duration::from_millis(1500)) };

    let report = run(&server, &plan, &options).await;

    assert_outcomes_true(&server, &report, &plan);
    let bound_after_loss = report
        .bindings
        .iter()
        .filter(|r| r.outcome == Outcome::Bound && r.message.contains("went unanswered"))
        .count();
    assert!(
        bound_after_loss > 0,
        "some bindings were settled by reading back: {:?}",
        report.summary
    );
}

fn bind_args(plan: &std::path::Path, kubeconfig: &std::path::Path, extra: &[&str]) -> Vec<String> {
    let mut v = vec![
        "bind".to_string(),
        "--plan".to_string(),
        plan.display().to_string(),
        "--kubeconfig".to_string(),
        kubeconfig.display().to_string(),
    ];
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

#[tokio::test]
async fn an_unreachable_or_refusing_server_is_exit_1_within_seconds_naming_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let plan_path = dir.path().join("plan.yaml");
    std::fs::write(&plan_path, "placements:\n- pod: ns/p\n  node: n1\n").unwrap();
    for (name, code) in
        [("an unreachable server", None), ("a 401", Some(401)), ("a 403", Some(403))]
    {
        let server = ApiServer::start(vec![FakePod::pending("ns/p")], vec![]).await;
        let context = if code.is_some() { "test" } else { "dead" };
        if let Some(code) = code {
            server.inject(Verb::GetPod, "ns/p", Fault::Status(code), 1_000);
        }
        let kubeconfig = server.write_kubeconfig(dir.path(), context);
        let start = Instant::now();

        let out = kplace(bind_args(&plan_path, &kubeconfig, &[]), vec![]).await;

        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        assert!(start.elapsed() < Duration::from_secs(20), "{name}: {:?}", start.elapsed());
        let url = if code.is_some() { server.url() } else { "http://127.0.0.1:1".to_string() };
        assert!(stderr.contains(url.trim_end_matches('/')), "{name} names the server: {stderr}");
        if let Some(code) = code {
            assert!(stderr.contains(&code.to_string()), "{name}: {stderr}");
        } else {
            assert!(stderr.contains("unreachable"), "{name}: {stderr}");
        }
        assert!(server.binds("ns/p").is_empty(), "{name}: nothing was written");
        let writes = server.requests().iter().filter(|r| r.verb == Some(Verb::Bind)).count();
        assert_eq!(writes, 0, "{name}");
    }
}

#[tokio::test]
async fn insecure_skip_tls_verify_is_honoured_with_one_warning() {
    let server = ApiServer::start(vec![FakePod::pending("ns/p")], vec![]).await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: test\nclusters:\n\
             - name: test\n  cluster:\n    server: {}\n    insecure-skip-tls-verify: true\n\
             users:\n- name: test\n  user: {{}}\n\
             contexts:\n- name: test\n  context:\n    cluster: test\n    user: test\n",
            server.url()
        ),
    )
    .unwrap();
    let plan_path = dir.path().join("plan.yaml");
    std::fs::write(&plan_path, "placements:\n- pod: ns/p\n  node: n1\n").unwrap();

    let out = kplace(bind_args(&plan_path, &kubeconfig, &[]), vec![]).await;

    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(stderr.matches("insecure-skip-tls-verify").count(), 1, "{stderr}");
    assert_eq!(server.binds("ns/p"), vec!["n1".to_string()]);
}

#[tokio::test]
async fn a_plan_from_another_tool_with_bare_evictions_is_carried_out() {
    let server = ApiServer::start(
        vec![
            FakePod::running("ns/v1", "n1"),
            FakePod::running("ns/v2", "n2").label("app", "web"),
            FakePod::pending("ns/p"),
            FakePod::pending("ns/q"),
        ],
        vec![FakePdb::new("ns", "web", "app", "web", 0)],
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path(), "test");
    let plan_path = dir.path().join("plan.json");
    // No preemptors, one eviction a bare string: the refused one holds back the binding to its
    // node only.
    std::fs::write(
        &plan_path,
        r#"{"placements": [{"pod": "ns/p", "node": "n1"}, {"pod": "ns/q", "node": "n2"}],
            "evictions": ["ns/v1", {"pod": "ns/v2", "node": "n2"}],
            "unschedulable": [{"pod": "ns/u"}]}"#,
    )
    .unwrap();

    let out = kplace(bind_args(&plan_path, &kubeconfig, &["-o", "json"]), vec![]).await;

    assert_eq!(out.status.code(), Some(3), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let report: BindReport = serde_json::from_slice(&out.stdout).expect("one JSON report");
    let v1 = report.evictions.iter().find(|r| r.pod == "ns/v1").unwrap();
    assert_eq!((v1.outcome, v1.node.as_str()), (Outcome::Evicted, "n1"), "{v1:?}");
    assert_eq!(outcome(&report, Action::Evict, "ns/v2"), Outcome::Refused);
    assert_eq!(outcome(&report, Action::Bind, "ns/p"), Outcome::Bound);
    assert_eq!(outcome(&report, Action::Bind, "ns/q"), Outcome::Skipped);
    assert!(server.pod("ns/v1").is_none() && server.pod("ns/v2").is_some());
    assert_eq!(server.pod("ns/q").unwrap().node, None);
}
