//! `kplace compare --report` rendered in a real browser (headless Chromium, Debian's
//! `chromium`): the page parses into the expected SVG charts — one pair of bars per node and
//! resource, one heatmap cell per node and resource for each plan, one delta bar per node whose
//! pod count differs — and every bar is laid out with a size. A cluster of more nodes than the
//! charts have columns is drawn as a sampled profile, with a note.
//!
//! Without `/usr/bin/chromium` (or `$CHROMIUM`) the tests print a note and pass, except under
//! `CI=true`, where they fail: `scripts/test.sh` installs it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use kplace::compare::Comparison;
use kplace::compare::report::MAX_COLUMNS;

fn kplace(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_kplace"))
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .expect("kplace runs");
    assert!(
        out.status.success(),
        "kplace {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The Chromium binary, or `None` (after a note) when it is missing outside CI.
fn chromium() -> Option<PathBuf> {
    let found = match std::env::var_os("CHROMIUM") {
        Some(p) => Some(PathBuf::from(p)).filter(|p| p.exists()),
        None => std::iter::once(PathBuf::from("/usr/bin/chromium"))
            .chain(
                std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                    .flat_map(|dir| ["chromium", "chromium-browser"].map(|name| dir.join(name))),
            )
            .find(|p| p.is_file()),
    };
    if found.is_some() {
        return found;
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("chromium is missing; CI must install it (scripts/test.sh does)");
    }
    eprintln!(
        "note: chromium not found; skipping the browser rendering test (apt-get install chromium)"
    );
    None
}

/// Runs Chromium headless on `url` with `extra` flags and returns stdout; fails after 120 s.
fn run_chromium(chromium: &Path, profile: &Path, extra: &[&str], url: &str) -> String {
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let mut stdout = child.stdout.take().expect("piped stdout");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).map(|_| s)
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if child.try_wait().expect("waiting for chromium").is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    reader.join().expect("reader thread").expect("chromium's stdout is UTF-8")
}

/// The serialized element whose start tag contains `id="<id>"`, up to its closing `</svg>`.
fn svg<'a>(dom: &'a str, id: &str) -> &'a str {
    let start =
        dom.find(&format!("<svg id=\"{id}\"")).unwrap_or_else(|| panic!("svg#{id} in the DOM"));
    let rest = &dom[start..];
    &rest[..rest.find("</svg>").expect("closed svg")]
}

fn attr(element: &str, name: &str) -> usize {
    let key = format!("{name}=\"");
    let at = element.find(&key).unwrap_or_else(|| panic!("{name} on the element")) + key.len();
    element[at..].split('"').next().and_then(|v| v.parse().ok()).expect("a number")
}

/// Writes the report for `snapshot` and returns it with the comparison.
fn report(dir: &Path, snapshot: &Path, extra: &[&str]) -> (PathBuf, Comparison) {
    let html = dir.join("report.html");
    let mut args = vec![
        "compare",
        snapshot.to_str().expect("utf-8"),
        "--backend",
        "cpu",
        "-o",
        "json",
        "--report",
        html.to_str().expect("utf-8"),
    ];
    args.extend_from_slice(extra);
    let out = kplace(&args);
    let c: Comparison = serde_json::from_slice(&out.stdout).expect("one JSON document");
    (html, c)
}

/// A page that loads the report in an iframe and lists, per SVG, its namespace, its rects and
/// how many of them the browser laid out with a non-zero box.
fn layout_harness(dir: &Path, report: &Path) -> PathBuf {
    let page = format!(
        r#"<!DOCTYPE html><html><body><iframe id="f" src="file://{}" width="1200" height="900"></iframe>
<script>
document.getElementById('f').addEventListener('load', function () {{
  var lines = [];
  this.contentDocument.querySelectorAll('svg').forEach(function (s) {{
    var rects = s.querySelectorAll('rect'), drawn = 0;
    rects.forEach(function (r) {{ var b = r.getBoundingClientRect(); if (b.width > 0) drawn++; }});
    var box = s.getBoundingClientRect();
    lines.push([s.id, s.namespaceURI, rects.length, drawn, box.width > 0 && box.height > 0].join(' '));
  }});
  var p = document.createElement('pre'); p.id = 'layout'; p.textContent = lines.join('\n');
  document.body.appendChild(p);
}});
</script></body></html>"#,
        report.display()
    );
    let path = dir.join("harness.html");
    std::fs::write(&path, page).expect("harness written");
    path
}

#[test]
fn the_demo_report_renders_every_chart_in_chromium() {
    let Some(chromium) = chromium() else { return };
    let tmp = tempfile::tempdir().expect("temp dir");
    let demo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo");
    let (html, c) = report(tmp.path(), &demo, &[]);
    let nodes = c.snapshot.nodes;
    assert_eq!(nodes, 24);
    let profile = tmp.path().join("profile");
    let dom =
        run_chromium(&chromium, &profile, &["--dump-dom"], &format!("file://{}", html.display()));
    assert!(dom.contains("id=\"summary\""), "the summary table");
    assert!(dom.contains("Both plans pass kplace check"));
    for resource in ["cpu", "memory", "pods", "nvidia-com-gpu"] {
        let chart = svg(&dom, &format!("util-{resource}"));
        assert!(chart.contains("data-mode=\"nodes\""));
        assert_eq!(attr(chart, "data-nodes"), nodes);
        assert_eq!(chart.matches("class=\"bar baseline\"").count(), nodes, "util-{resource}");
        assert_eq!(chart.matches("class=\"bar plan\"").count(), nodes, "util-{resource}");
    }
    for side in ["baseline", "plan"] {
        let heat = svg(&dom, &format!("heatmap-{side}"));
        let rows = attr(heat, "data-rows");
        assert!(rows >= 4, "cpu, memory, pods and the GPUs at least");
        assert_eq!(heat.matches("class=\"cell\"").count(), nodes * rows, "heatmap-{side}");
    }
    let deltas = svg(&dom, "node-deltas");
    assert_eq!(deltas.matches("class=\"bar delta").count(), c.differences.nodes_changed);
    assert!(dom.contains("id=\"pod-differences\""));

    // Laid out: every chart is an SVG element with a size, and every bar has a box.
    let harness = layout_harness(tmp.path(), &html);
    let dom = run_chromium(
        &chromium,
        &profile,
        &["--allow-file-access-from-files", "--virtual-time-budget=10000", "--dump-dom"],
        &format!("file://{}", harness.display()),
    );
    let layout = dom
        .split("<pre id=\"layout\">")
        .nth(1)
        .and_then(|s| s.split("</pre>").next())
        .expect("the harness wrote its findings");
    let mut charts = 0;
    for line in layout.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        assert_eq!(f.len(), 5, "{line}");
        assert_eq!(f[1], "http://www.w3.org/2000/svg", "{line}");
        assert_eq!(f[2], f[3], "every rect laid out: {line}");
        assert_eq!(f[4], "true", "the chart has a size: {line}");
        charts += 1;
    }
    assert!(charts >= 8, "{layout}");

    // And it paints.
    let png = tmp.path().join("report.png");
    run_chromium(
        &chromium,
        &profile,
        &["--window-size=1280,2000", &format!("--screenshot={}", png.display())],
        &format!("file://{}", html.display()),
    );
    let size = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
    assert!(size > 20_000, "a screenshot with content ({size} bytes)");
}

#[test]
fn a_big_cluster_is_drawn_as_a_sampled_profile_with_a_note() {
    let Some(chromium) = chromium() else { return };
    let tmp = tempfile::tempdir().expect("temp dir");
    let snapshot = tmp.path().join("big.yaml");
    let nodes = MAX_COLUMNS + 50;
    kplace(&[
        "gen",
        "--workload",
        "SchedulingBasic",
        "--nodes",
        &nodes.to_string(),
        "--pods",
        "300",
        "--init-pods",
        "50",
        "-o",
        snapshot.to_str().expect("utf-8"),
    ]);
    let (html, c) = report(tmp.path(), &snapshot, &["--no-fallback"]);
    assert_eq!(c.snapshot.nodes, nodes);
    let dom = run_chromium(
        &chromium,
        &tmp.path().join("profile"),
        &["--dump-dom"],
        &format!("file://{}", html.display()),
    );
    assert!(dom.contains("id=\"sampling-note\""));
    let chart = svg(&dom, "util-cpu");
    assert!(chart.contains("data-mode=\"profile\""));
    assert_eq!(attr(chart, "data-nodes"), nodes);
    assert_eq!(attr(chart, "data-columns"), MAX_COLUMNS);
    assert_eq!(chart.matches("class=\"bar baseline\"").count(), MAX_COLUMNS);
    assert_eq!(chart.matches("class=\"bar plan\"").count(), MAX_COLUMNS);
    let heat = svg(&dom, "heatmap-plan");
    assert_eq!(heat.matches("class=\"cell\"").count(), MAX_COLUMNS * attr(heat, "data-rows"));
}

/// The `data-*` attribute's value of an element.
fn text_attr<'a>(element: &'a str, name: &str) -> &'a str {
    let key = format!("{name}=\"");
    let at = element.find(&key).unwrap_or_else(|| panic!("{name} on {element}")) + key.len();
    element[at..].split('"').next().expect("a value")
}

#[test]
fn the_report_shows_every_workload_and_its_zone_skew_under_both_plans() {
    let Some(chromium) = chromium() else { return };
    let tmp = tempfile::tempdir().expect("temp dir");
    let snapshot = tmp.path().join("deployments.yaml");
    kplace(&[
        "gen",
        "--workload",
        "deployments",
        "--nodes",
        "30",
        "--pods",
        "240",
        "-o",
        snapshot.to_str().expect("utf-8"),
    ]);
    let (html, c) = report(tmp.path(), &snapshot, &[]);
    assert_eq!(c.owners.len(), 8, "240 pods: eight Deployments");
    let profile = tmp.path().join("profile");
    let dom =
        run_chromium(&chromium, &profile, &["--dump-dom"], &format!("file://{}", html.display()));
    let verdict = dom.split("<p id=\"verdict-line\"").nth(1).expect("the verdict line");
    assert_eq!(text_attr(verdict, "data-overall"), c.verdict.overall.as_str());

    // The table: one row per workload, in the document's order, with both plans' figures.
    let table = dom
        .split("<table id=\"workloads\">")
        .nth(1)
        .and_then(|t| t.split("</table>").next())
        .expect("table#workloads");
    let rows: Vec<&str> = table.split("<tr class=\"workload\"").skip(1).collect();
    assert_eq!(rows.len(), c.owners.len());
    let zone = "topology.kubernetes.io/zone";
    let host = "kubernetes.io/hostname";
    for (row, owner) in rows.iter().zip(&c.owners) {
        assert_eq!(text_attr(row, "data-owner"), owner.owner);
        let cells: Vec<&str> =
            row.split("<td>").skip(1).map(|c| c.split("</td>").next().expect("a cell")).collect();
        let (a, b) = (&owner.baseline, &owner.plan);
        assert_eq!(cells[0], owner.owner);
        assert_eq!(cells[1], format!("{} / {}", a.placed, b.placed));
        assert_eq!(cells[2], format!("{} / {}", a.unplaced, b.unplaced));
        assert_eq!(cells[5], format!("{} / {}", a.skew[zone], b.skew[zone]));
        assert_eq!(cells[6], format!("{} / {}", a.skew[host], b.skew[host]));
        assert_eq!(cells[7], format!("{} / {}", a.max_per_node, b.max_per_node));
    }
    let more = c.owners.iter().filter(|r| r.more_skewed()).count();
    let beyond = c.owners.iter().filter(|r| r.more_skewed_beyond_max_skew()).count();
    assert_eq!((c.more_skewed.workloads, c.more_skewed.beyond_max_skew), (more, beyond));
    assert!(
        dom.contains(&format!(
            "under baseline: {more}, of which beyond their own constraints' maxSkew: {beyond}."
        )),
        "the count of workloads more skewed under the table"
    );

    // The chart: a pair of bars per workload, each carrying its zone skew, taller for more.
    let chart = svg(&dom, "zone-skew");
    assert_eq!(attr(chart, "data-workloads"), c.owners.len());
    for (side, pick) in [
        ("baseline", (|r: &kplace::compare::workloads::OwnerRow| &r.baseline) as fn(&_) -> &_),
        ("plan", |r| &r.plan),
    ] {
        let bars: Vec<&str> = chart.split(&format!("<rect class=\"bar {side}\"")).skip(1).collect();
        assert_eq!(bars.len(), c.owners.len(), "{side}");
        for (bar, owner) in bars.iter().zip(&c.owners) {
            assert_eq!(text_attr(bar, "data-owner"), owner.owner);
            let skew: i64 = text_attr(bar, "data-skew").parse().expect("a number");
            assert_eq!(skew, pick(owner).skew[zone], "{side} {}", owner.owner);
        }
        let height = |bar: &&str| text_attr(bar, "height").parse::<f64>().expect("a height");
        let skews: Vec<i64> = c.owners.iter().map(|o| pick(o).skew[zone]).collect();
        for (i, j) in (0..bars.len()).flat_map(|i| (0..bars.len()).map(move |j| (i, j))) {
            if skews[i] > skews[j] {
                assert!(height(&bars[i]) > height(&bars[j]), "{side}: taller for more skew");
            }
        }
    }

    // Laid out: the chart has a size and every bar a box.
    let harness = layout_harness(tmp.path(), &html);
    let dom = run_chromium(
        &chromium,
        &profile,
        &["--allow-file-access-from-files", "--virtual-time-budget=10000", "--dump-dom"],
        &format!("file://{}", harness.display()),
    );
    let layout = dom
        .split("<pre id=\"layout\">")
        .nth(1)
        .and_then(|s| s.split("</pre>").next())
        .expect("the harness wrote its findings");
    let line =
        layout.lines().find(|l| l.starts_with("zone-skew ")).expect("svg#zone-skew laid out");
    let f: Vec<&str> = line.split(' ').collect();
    assert_eq!(f[2], (2 * c.owners.len()).to_string(), "{line}");
    assert_eq!(f[2], f[3], "every bar laid out: {line}");
    assert_eq!(f[4], "true", "{line}");
}
