//! What a kubectl user expects of the command line, run on the real binary: nothing alarming
//! on stderr (Mesa's XDG_RUNTIME_DIR line, wgpu's debug output), `--backend auto` saying what it
//! chose, one duration syntax, messages that say each thing once, plurals, escaped control
//! characters, `-o wide|name`, `check -o json`'s verdict, `--max-moves 0`, completions.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn demo() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo").display().to_string()
}

fn command(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kplace"));
    cmd.args(args).env_remove("RUST_LOG").env("KUBECONFIG", "/nonexistent/kubeconfig");
    cmd
}

fn kplace(args: &[&str]) -> Output {
    command(args).output().expect("kplace runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn json(args: &[&str]) -> Value {
    let out = kplace(args);
    assert!(out.status.code().is_some_and(|c| c == 0 || c == 3), "{args:?}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

/// Whether a usable Vulkan adapter of any kind (lavapipe included) is here.
fn have_any_adapter() -> bool {
    kplace::eval::gpu::GpuContext::new(&Default::default()).is_ok()
}

#[test]
fn mesa_says_nothing_about_xdg_runtime_dir_when_it_is_unset() {
    // `gpu` opens a Vulkan instance whatever adapters there are; `auto` does too.
    for backend in ["gpu", "auto"] {
        for value in [None, Some("relative/dir")] {
            let mut cmd = command(&["-q", "plan", &demo(), "--backend", backend, "-o", "json"]);
            match value {
                None => cmd.env_remove("XDG_RUNTIME_DIR"),
                Some(v) => cmd.env("XDG_RUNTIME_DIR", v),
            };
            let out = cmd.output().expect("kplace runs");
            let err = stderr(&out);
            assert!(!err.contains("XDG_RUNTIME_DIR"), "--backend {backend}, {value:?}: {err}");
            if out.status.success() {
                assert!(err.is_empty(), "-q: nothing on stderr: {err}");
            }
        }
    }
}

#[test]
fn auto_uses_a_hardware_gpu_or_the_cpu_and_says_which_in_one_line() {
    let hardware = kplace::eval::gpu::GpuContext::new_hardware(&Default::default());
    let out = kplace(&["plan", &demo(), "--backend", "auto", "-o", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let notices: Vec<&str> = err.lines().filter(|l| l.starts_with("notice:")).collect();
    assert_eq!(notices.len(), 1, "one line says which: {err}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let backend = doc["summary"]["backend"].as_str().expect("the document names its backend");
    match hardware {
        Ok(_) => {
            assert!(backend.starts_with("gpu (") && !backend.contains(", Cpu, "), "{backend}");
            assert_eq!(notices[0], format!("notice: evaluating on {backend}"));
        }
        Err(e) => {
            assert_eq!(backend, "cpu", "no hardware: the CPU, never a software adapter");
            assert_eq!(notices[0], format!("notice: {e}; evaluating on the CPU"));
        }
    }
    // -q hides the line.
    let out = kplace(&["-q", "plan", &demo(), "--backend", "auto", "-o", "json"]);
    assert!(out.status.success());
    assert_eq!(stderr(&out), "", "-q: nothing on stderr");
}

#[test]
fn an_explicit_gpu_backend_takes_a_software_adapter_when_there_is_no_hardware() {
    if !have_any_adapter() {
        eprintln!("notice: skipped: no Vulkan adapter");
        return;
    }
    let doc = json(&["-q", "plan", &demo(), "--backend", "gpu", "-o", "json"]);
    let backend = doc["summary"]["backend"].as_str().unwrap();
    assert!(backend.starts_with("gpu ("), "{backend}");
    // It says how the kernels compute binary64; lavapipe (what CI installs) does it natively.
    assert!(backend.ends_with(", binary64 native)") || backend.ends_with(", binary64 software)"));
    if std::env::var("CI").as_deref() == Ok("true") {
        assert!(backend.ends_with(", binary64 native)"), "{backend}");
    }
}

#[test]
fn verbose_shows_kplaces_logs_and_rust_log_opens_everything() {
    let out = kplace(&["-v", "plan", &demo(), "--backend", "gpu", "-o", "json"]);
    let err = stderr(&out);
    assert!(err.contains("DEBUG"), "-v shows kplace's debug logs: {err}");
    assert!(err.lines().count() < 50, "-v is kplace's logs only, not wgpu's: {err}");
    for noisy in ["naga", "wgpu_", "hyper", "kube_client"] {
        assert!(!err.contains(noisy), "{noisy}: {err}");
    }
    if have_any_adapter() {
        let out = command(&["plan", &demo(), "--backend", "gpu", "-o", "json"])
            .env("RUST_LOG", "debug")
            .output()
            .unwrap();
        assert!(stderr(&out).lines().count() > 100, "RUST_LOG=debug opens every crate's logs");
    }
}

/// Runs `args` with stderr a pipe whose reading end is already closed.
fn with_broken_stderr(args: &[&str]) -> std::process::ExitStatus {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    command(args).stdout(Stdio::null()).stderr(Stdio::from(writer)).status().expect("kplace runs")
}

#[test]
fn a_broken_stderr_does_not_make_a_verbose_run_panic() {
    let status = with_broken_stderr(&["-vv", "plan", &demo(), "--backend", "cpu"]);
    assert_eq!(status.code(), Some(0), "a verbose run with stderr closed");
    let status = with_broken_stderr(&["plan", &demo(), "--backend", "auto"]);
    assert_eq!(status.code(), Some(0), "auto's notice with stderr closed");
    let status = with_broken_stderr(&["-v", "plan", "/nonexistent/snapshot"]);
    assert_eq!(status.code(), Some(1), "an error with stderr closed is still exit code 1");
}

#[test]
fn every_duration_flag_takes_go_durations_and_rejects_a_bare_number() {
    let plan_file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(plan_file.path(), "{\"placements\":[]}").unwrap();
    let plan = plan_file.path().display().to_string();
    let demo = demo();
    // Each command fails after parsing (no config file, no cluster), so an accepted duration
    // is exit code 1, a rejected one clap's 2.
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("--time-limit", vec!["plan", &demo, "--config", "/nonexistent/config.yaml"]),
        ("--batch-window", vec!["schedule", "--config", "/nonexistent/config.yaml"]),
        ("--lease-duration", vec!["schedule", "--config", "/nonexistent/config.yaml"]),
        ("--renew-deadline", vec!["schedule", "--config", "/nonexistent/config.yaml"]),
        ("--retry-period", vec!["schedule", "--config", "/nonexistent/config.yaml"]),
        ("--wave-timeout", vec!["bind", "--plan", &plan]),
        ("--eviction-timeout", vec!["bind", "--plan", &plan]),
        ("--request-timeout", vec!["bind", "--plan", &plan]),
        ("--wave-poll", vec!["bind", "--plan", &plan]),
    ];
    for (flag, base) in &cases {
        for good in ["500ms", "30s", "1m30s", "2h", "1.5s"] {
            let mut args = base.clone();
            args.extend([*flag, good]);
            let out = kplace(&args);
            assert_eq!(out.status.code(), Some(1), "{flag} {good} is accepted: {}", stderr(&out));
            assert!(!stderr(&out).contains("invalid value"), "{flag} {good}: {}", stderr(&out));
        }
        for (bad, says) in [
            ("2", "missing unit in duration \"2\" (write e.g. 2s)"),
            ("3d", "unknown unit \"d\" in duration \"3d\""),
            ("-1s", "must not be negative"),
        ] {
            let arg = format!("{flag}={bad}");
            let mut args = base.clone();
            args.push(&arg);
            let out = kplace(&args);
            assert_eq!(out.status.code(), Some(2), "{flag} {bad} is rejected");
            assert!(stderr(&out).contains(says), "{flag} {bad}: {}", stderr(&out));
        }
    }
}

#[test]
fn errors_say_each_thing_once_and_name_the_valid_choices() {
    // A missing file: the OS error once.
    let out = kplace(&["inspect", "/nonexistent/snapshot"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stderr(&out).matches("No such file or directory").count(), 1, "{}", stderr(&out));

    // A scheduler name no profile serves.
    let out = kplace(&["plan", &demo(), "--scheduler-name", "volcano"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(
            "--scheduler-name \"volcano\": no profile of the scheduler configuration serves \
             this name; the served names are \"default-scheduler\", \"kplace\""
        ),
        "{err}"
    );
    assert!(!err.contains("plugin :"), "{err}");

    // The kubeconfig path in one kind of quotes (none).
    let plan_file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(plan_file.path(), "{\"placements\":[]}").unwrap();
    let plan = plan_file.path().display().to_string();
    for args in [
        vec!["bind", "--plan", &plan, "--kubeconfig", "/nonexistent/kc"],
        vec!["bind", "--plan", &plan],
    ] {
        let out = kplace(&args);
        assert_eq!(out.status.code(), Some(1));
        let err = stderr(&out);
        assert!(err.contains("/nonexistent/k"), "{err}");
        assert!(!err.contains("'\"") && !err.contains("\"'"), "one kind of quotes: {err}");
        assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
    }
}

/// Whether `text` has a count of one with a plural noun ("1 waves").
fn one_plural(text: &str) -> Option<String> {
    let nouns = [
        "nodes",
        "pods",
        "waves",
        "moves",
        "violations",
        "placements",
        "evictions",
        "classes",
        "batches",
    ];
    // Line by line: a table's last cell and the next line's first word are not a phrase.
    text.lines().find_map(|line| {
        let words: Vec<&str> = line.split_whitespace().collect();
        words.windows(2).find_map(|w| {
            let noun = w[1].trim_end_matches([',', ';', ')', ':', '.']);
            (w[0].trim_start_matches('(') == "1" && nouns.contains(&noun)).then(|| w.join(" "))
        })
    })
}

#[test]
fn one_of_a_thing_is_singular() {
    let out = kplace(&["-q", "rebalance", &demo(), "--objective", "pack", "--max-moves", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("pack: 1 move in 1 wave;"), "{text}");
    assert_eq!(one_plural(&text), None, "{text}");
    for args in [
        vec!["-q", "rebalance", &demo(), "--objective", "fix"],
        vec!["-q", "compare", &demo(), "--backend", "cpu"],
    ] {
        let out = kplace(&args);
        assert_eq!(one_plural(&stdout(&out)), None, "{args:?}: {}", stdout(&out));
    }
    assert_eq!(one_plural("a (1 nodes)"), Some("(1 nodes)".to_string()), "the check can fail");
}

#[test]
fn max_moves_zero_means_no_move_in_the_flag_and_the_document() {
    let none = json(&["-q", "rebalance", &demo(), "--objective", "pack", "-o", "json"]);
    assert_eq!(none["summary"]["rebalance"]["max_moves"], Value::Null, "no limit is null");
    assert!(!none["moves"].as_array().unwrap().is_empty());
    let zero = json(&[
        "-q",
        "rebalance",
        &demo(),
        "--objective",
        "pack",
        "--max-moves",
        "0",
        "-o",
        "json",
    ]);
    assert_eq!(zero["summary"]["rebalance"]["max_moves"], 0);
    assert!(zero.get("moves").is_none_or(|m| m.as_array().unwrap().is_empty()), "{zero}");
}

#[test]
fn check_json_has_a_verdict_and_counts() {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.json");
    let out = kplace(&["-q", "plan", &demo(), "--backend", "cpu", "-o", "json"]);
    std::fs::write(&plan, &out.stdout).unwrap();
    let doc = json(&["-q", "check", &demo(), "--plan", plan.to_str().unwrap(), "-o", "json"]);
    let placements = serde_json::from_slice::<Value>(&out.stdout).unwrap()["placements"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(doc["verdict"], "valid");
    assert_eq!(doc["valid"], true);
    assert_eq!(doc["checked"]["placements"], placements);
    assert_eq!(doc["violations"], Value::Array(vec![]));
    // A plan that leaves every pending pod out is invalid, with counts per kind.
    std::fs::write(&plan, "{\"placements\":[]}").unwrap();
    let doc = json(&["-q", "check", &demo(), "--plan", plan.to_str().unwrap(), "-o", "json"]);
    assert_eq!(doc["verdict"], "invalid");
    assert_eq!(doc["valid"], false);
    let total: u64 =
        doc["violation_counts"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(total as usize, doc["violations"].as_array().unwrap().len());
    assert!(total > 0);
}

#[test]
fn control_characters_in_names_are_printed_escaped() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("snapshot.yaml"),
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: \"node\\e[2J\"\nstatus:\n  \
         allocatable: {cpu: \"1\", memory: 1Gi, pods: \"10\"}\n---\napiVersion: v1\nkind: Pod\n\
         metadata:\n  name: \"web\\e[31mred\\u202e\"\n  namespace: default\nspec:\n  \
         containers:\n  - name: c\n    image: x\n    resources:\n      requests: {cpu: 100m}\n\
         ---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: \"big\\e]0;title\\a\"\n  \
         namespace: default\nspec:\n  containers:\n  - name: c\n    image: x\n    \
         resources:\n      requests: {cpu: \"4\"}\n",
    )
    .unwrap();
    let snapshot = dir.path().display().to_string();
    for output in ["table", "wide", "name"] {
        let out = kplace(&["-q", "plan", &snapshot, "--backend", "cpu", "-o", output]);
        assert!(out.status.success(), "{}", stderr(&out));
        let text = stdout(&out);
        assert!(
            !text.chars().any(|c| (c.is_control() && c != '\n') || c == '\u{202e}'),
            "-o {output}: {text:?}"
        );
        assert!(text.contains("default/web\\x1b[31mred\\u{202e}"), "-o {output}: {text}");
        if output != "name" {
            assert!(text.contains("node\\x1b[2J"), "{text}");
            assert!(text.contains("default/big\\x1b]0;title\\x07"), "{text}");
        }
    }
    // JSON escapes by its own rules: the name reads back as written.
    let doc = json(&["-q", "plan", &snapshot, "--backend", "cpu", "-o", "json"]);
    assert_eq!(doc["placements"][0]["pod"], "default/web\u{1b}[31mred\u{202e}");
    // An error quoting a path.
    let out = kplace(&["inspect", "/nonexistent/a\u{1b}[31mb"]);
    assert!(stderr(&out).contains("a\\x1b[31mb"), "{}", stderr(&out));
}

#[test]
fn wide_adds_columns_and_name_lists_one_pod_per_line() {
    let demo = demo();
    let doc = json(&["-q", "plan", &demo, "--backend", "cpu", "-o", "json"]);
    let placed: Vec<String> = doc["placements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| format!("pod/{}", p["pod"].as_str().unwrap()))
        .collect();
    for command in ["plan", "baseline"] {
        let out = kplace(&["-q", command, &demo, "--backend", "cpu", "-o", "wide"]);
        let text = stdout(&out);
        let header = text.lines().next().unwrap();
        assert_eq!(
            header.split_whitespace().collect::<Vec<_>>(),
            ["POD", "NODE", "PRIORITY", "CPU", "MEMORY"]
        );
        let unschedulable = text.lines().find(|l| l.starts_with("UNSCHEDULABLE")).unwrap();
        assert_eq!(
            unschedulable.split_whitespace().collect::<Vec<_>>(),
            ["UNSCHEDULABLE", "PRIORITY", "CPU", "MEMORY", "MESSAGE"]
        );
    }
    let out = kplace(&["-q", "plan", &demo, "--backend", "cpu", "-o", "name"]);
    let names: Vec<String> = stdout(&out).lines().map(str::to_string).collect();
    assert_eq!(names, placed, "-o name: the placed pods, in the plan's order");

    let doc = json(&["-q", "rebalance", &demo, "--objective", "fix", "-o", "json"]);
    let moved: Vec<String> = doc["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| format!("pod/{}", m["pod"].as_str().unwrap()))
        .collect();
    let out = kplace(&["-q", "rebalance", &demo, "--objective", "fix", "-o", "name"]);
    assert_eq!(stdout(&out).lines().collect::<Vec<_>>(), moved);
    let out = kplace(&["-q", "rebalance", &demo, "--objective", "fix", "-o", "wide"]);
    let header = stdout(&out).lines().next().unwrap().to_string();
    assert_eq!(
        header.split_whitespace().collect::<Vec<_>>(),
        ["WAVE", "POD", "FROM", "TO", "PRIORITY", "CPU", "MEMORY", "REASON"]
    );
}

#[test]
fn completion_scripts_for_bash_zsh_and_fish() {
    for (shell, marker) in
        [("bash", "complete -F"), ("zsh", "#compdef kplace"), ("fish", "complete -c kplace")]
    {
        let out = kplace(&["completion", shell]);
        assert!(out.status.success(), "{shell}: {}", stderr(&out));
        let script = stdout(&out);
        assert!(script.contains(marker), "{shell}: {script}");
        for word in ["rebalance", "--backend", "--time-limit", "completion"] {
            assert!(script.contains(word), "{shell}: {word}");
        }
    }
    let out = kplace(&["completion", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
}
