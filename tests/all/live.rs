//! Reading a live cluster: the commands with `--kubeconfig` against the in-process API server
//! (`tests/support/apiserver.rs`) serving the demo fixture, in small pages, with a continue
//! token that expires and kinds that are refused; `kplace snapshot`; `-n`/`-l`; `-` (stdin).

use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use serde_json::Value;

use crate::support::apiserver::{ApiServer, FakePod, Fault, Verb};

async fn bounded<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(120), f).await.expect("finished within 2 minutes")
}

/// Runs `kplace` (with `stdin` on its standard input) while the server serves on this runtime.
async fn kplace(args: Vec<String>, stdin: Option<Vec<u8>>) -> Output {
    bounded(tokio::task::spawn_blocking(move || {
        use std::io::Write;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kplace"))
            .args(&args)
            .env("RUST_LOG", "warn")
            .env_remove("KUBECONFIG")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("kplace runs");
        let mut input = child.stdin.take().expect("a stdin pipe");
        let text = stdin.unwrap_or_default();
        // A command that does not read stdin may exit first: a broken pipe is no failure.
        let writer = std::thread::spawn(move || {
            let _ = input.write_all(&text);
        });
        let out = child.wait_with_output().expect("kplace finishes");
        let _ = writer.join();
        out
    }))
    .await
    .expect("the command thread finished")
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_string()).collect()
}

fn with(mut base: Vec<String>, path: &Path) -> Vec<String> {
    base.push(path.display().to_string());
    base
}

fn stdout(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what}: exit {:?}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("UTF-8 output")
}

/// A plan document without what differs from run to run (timings).
fn plan_doc(out: &Output, what: &str) -> Value {
    let mut doc: Value = serde_json::from_str(&stdout(out, what)).expect("a JSON plan");
    if let Some(summary) = doc.get_mut("summary").and_then(Value::as_object_mut) {
        summary.remove("timings_ms");
    }
    doc
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name)
}

/// An API server holding every object of a fixture directory.
async fn serve(dir: &str) -> ApiServer {
    let s = kplace::snapshot::load(&[fixture(dir)]).expect("the fixture loads");
    let pods = s.pods.iter().map(|p| FakePod::from_pod(p.object.clone())).collect();
    let server = ApiServer::start(pods, Vec::new()).await;
    for o in &s.nodes {
        server.put_object("nodes", &o.object);
    }
    for o in &s.namespaces {
        server.put_object("namespaces", &o.object);
    }
    for o in &s.priority_classes {
        server.put_object("priorityclasses", &o.object);
    }
    for o in &s.pdbs {
        server.put_object("poddisruptionbudgets", &o.object);
    }
    server
}

/// Requests of `verb` for `resource` and the statuses answered.
fn statuses(server: &ApiServer, resource: &str) -> Vec<u16> {
    server
        .requests()
        .into_iter()
        .filter(|r| r.verb == Some(Verb::List) && r.pod == resource)
        .map(|r| r.status)
        .collect()
}

/// The pods a plan decides on (placed or unschedulable), sorted.
fn batch_of(plan: &Value) -> Vec<String> {
    let mut pods: Vec<String> = ["placements", "unschedulable"]
        .iter()
        .flat_map(|k| plan[*k].as_array().cloned().unwrap_or_default())
        .filter_map(|p| p["pod"].as_str().map(str::to_string))
        .collect();
    pods.sort();
    pods
}

#[tokio::test]
async fn plan_of_the_live_cluster_equals_plan_of_its_snapshot_file() {
    let server = serve("demo").await;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let kubeconfig = server.write_kubeconfig(dir.path(), "test");
    let kc = kubeconfig.display().to_string();
    // The pods' listing expires once, after its first page: it is listed again from the start.
    server.inject(Verb::List, "pods", Fault::ContinueExpired, 1);
    let live = ["--kubeconfig", &kc, "--page-size", "7"];
    let plan = |extra: &[&str]| {
        let mut a = args(&["plan", "-o", "json", "--backend", "cpu"]);
        a.extend(args(extra));
        a
    };

    let direct = plan_doc(&kplace(plan(&live), None).await, "plan --kubeconfig");
    let pods = statuses(&server, "pods");
    assert!(pods.contains(&410), "the continue token expired once: {pods:?}");
    assert!(pods.iter().filter(|s| **s == 200).count() > 300 / 7, "pods came in pages: {pods:?}");
    assert!(!direct["placements"].as_array().expect("placements").is_empty());

    let file = dir.path().join("s.yaml");
    let mut snap = args(&["snapshot", "-o"]);
    snap.push(file.display().to_string());
    snap.extend(args(&live));
    stdout(&kplace(snap, None).await, "snapshot --kubeconfig");
    let text = std::fs::read_to_string(&file).expect("the snapshot was written");
    assert!(text.starts_with("apiVersion: v1\nitems:\n"), "one List document");
    assert!(!text.contains("managedFields"), "no managedFields");
    let from_file = plan_doc(&kplace(with(plan(&[]), &file), None).await, "plan s.yaml");
    assert_eq!(direct, from_file, "plan --kubeconfig and plan of the snapshot file differ");

    // The same file read from standard input, as YAML and as JSON.
    let piped = plan_doc(&kplace(plan(&["-"]), Some(text.into_bytes())).await, "plan - (YAML)");
    assert_eq!(piped, direct, "plan - < s.yaml");
    let json = kplace(
        args(&["snapshot", &file.display().to_string(), "-o", "-", "--format", "json"]),
        None,
    )
    .await;
    let json = stdout(&json, "snapshot -o - --format json");
    assert!(json.trim_start().starts_with('{'), "JSON on stdout");
    let piped = plan_doc(&kplace(plan(&["-"]), Some(json.into_bytes())).await, "plan - (JSON)");
    assert_eq!(piped, direct, "plan - < s.json");
}

#[tokio::test]
async fn namespace_and_selector_narrow_the_batch_alike_on_files_live_and_every_command() {
    let server = serve("demo").await;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let kc = server.write_kubeconfig(dir.path(), "test").display().to_string();
    let demo = fixture("demo").display().to_string();
    let full = plan_doc(
        &kplace(args(&["plan", "-o", "json", "--backend", "cpu", &demo]), None).await,
        "plan demo",
    );
    let everyone = batch_of(&full);
    let ns = everyone[0].split('/').next().expect("ns/name").to_string();
    let in_ns: Vec<String> =
        everyone.iter().filter(|p| p.starts_with(&format!("{ns}/"))).cloned().collect();
    assert!(in_ns.len() < everyone.len(), "the demo has pending pods in several namespaces");

    // (case, narrowing flags, the batch expected)
    let cases: Vec<(&str, Vec<&str>, Vec<String>)> = vec![
        ("-n keeps that namespace's pending pods", vec!["-n", &ns], in_ns.clone()),
        (
            "-l with a selector no pod matches leaves an empty batch",
            vec!["-l", "kplace-test=yes"],
            Vec::new(),
        ),
        ("-l !key keeps every pod without the key", vec!["-l", "!kplace-test"], everyone.clone()),
    ];
    for (name, flags, want) in cases {
        let mut on_file = args(&["plan", "-o", "json", "--backend", "cpu", &demo]);
        on_file.extend(args(&flags));
        let from_file = plan_doc(&kplace(on_file, None).await, name);
        assert_eq!(batch_of(&from_file), want, "{name}: plan on the file");

        let mut on_live = args(&["plan", "-o", "json", "--backend", "cpu", "--kubeconfig", &kc]);
        on_live.extend(args(&flags));
        let from_live = plan_doc(&kplace(on_live, None).await, name);
        assert_eq!(from_live, from_file, "{name}: live and file agree");

        let mut baseline = args(&["baseline", "-o", "json", "--backend", "cpu", &demo]);
        baseline.extend(args(&flags));
        let baseline = plan_doc(&kplace(baseline, None).await, name);
        assert_eq!(batch_of(&baseline), want, "{name}: baseline decides on the same batch");
    }

    // A snapshot written with -n holds that batch: planning it without -n gives the same plan.
    let file = dir.path().join("narrow.json");
    let snap =
        args(&["snapshot", "--kubeconfig", &kc, "-n", &ns, "-o", &file.display().to_string()]);
    stdout(&kplace(snap, None).await, "snapshot -n");
    let narrowed = plan_doc(
        &kplace(args(&["plan", "-o", "json", "--backend", "cpu", "-n", &ns, &demo]), None).await,
        "plan -n",
    );
    let of_file = plan_doc(
        &kplace(with(args(&["plan", "-o", "json", "--backend", "cpu"]), &file), None).await,
        "plan narrow.json",
    );
    assert_eq!(of_file, narrowed);

    // explain names the batch for a pending pod outside it.
    let outside = everyone.iter().find(|p| !p.starts_with(&format!("{ns}/"))).expect("one");
    let out = kplace(args(&["explain", "--pod", outside, "-n", &ns, &demo]), None).await;
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("outside the batch") && err.contains(&format!("-n {ns}")), "{err}");

    // A malformed selector is an error saying where, before anything is read.
    let out = kplace(args(&["plan", "-l", "app in (web", "--kubeconfig", &kc]), None).await;
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("label selector \"app in (web\": at position 11"), "{err}");
}

#[tokio::test]
async fn refusals_and_an_unreachable_server_are_errors_naming_the_server() {
    let server = serve("demo").await;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let kc = server.write_kubeconfig(dir.path(), "test").display().to_string();
    let url = server.url();
    // (case, resource refused, exit code, texts on stderr)
    let cases: &[(&str, &str, i32, &[&str])] = &[
        ("a 403 on nodes is an error", "nodes", 1, &["refused", "403", "listing nodes"]),
        ("a 403 on pods is an error", "pods", 1, &["refused to list pods (403)"]),
        (
            "a 403 on budgets is a warning and the plan is made",
            "poddisruptionbudgets",
            0,
            &["did not list poddisruptionbudgets (403"],
        ),
    ];
    for (name, resource, code, texts) in cases {
        server.clear_faults();
        server.inject(Verb::List, resource, Fault::Status(403), 1000);
        let out = kplace(args(&["inspect", "--kubeconfig", &kc]), None).await;
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(*code), "{name}: {err}");
        for t in *texts {
            assert!(err.contains(t), "{name}: no {t:?} in {err}");
        }
        if *code != 0 {
            assert!(err.contains(&url), "{name}: the server is named: {err}");
        }
    }
    server.clear_faults();

    let out = kplace(args(&["plan", "--kubeconfig", &kc, "--context", "dead"]), None).await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("http://127.0.0.1:1") && err.contains("unreachable"), "{err}");
}
