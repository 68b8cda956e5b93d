//! The `kplace compare --report` page, and the side-by-side rows the text table shares with it.
//!
//! Input: a [`Comparison`]. Output: one self-contained HTML document — inline CSS and inline
//! SVG written here, no script, no font, no external reference of any kind — with:
//!
//! * `table#summary`: every figure of both plans side by side ([`summary_rows`]);
//! * `svg#util-<resource>` (one per charted resource, e.g. `util-cpu`, `util-nvidia-com-gpu`):
//!   per-node utilization, a pair of bars per column (`rect.bar.baseline`, `rect.bar.plan`);
//! * `svg#heatmap-baseline` and `svg#heatmap-plan`: nodes × resources (`rect.cell`), one row
//!   per resource;
//! * `svg#node-deltas`: per node, how many more (or fewer) of the batch's pods `plan` put
//!   there than `baseline` (`rect.bar.delta`), and `table#pod-differences`: pods placed
//!   differently.
//! * `p#verdict-line`: the verdict ([`super::verdict`]); `table#workloads`: one row per
//!   workload (`tr.workload`, the workloads that differ most first, at most
//!   [`MAX_WORKLOAD_ROWS`]), both plans' placed/unplaced pods, requests placed, zone and node
//!   skew and most pods on one node; `svg#zone-skew`: the zone skew of those workloads
//!   (at most [`MAX_COLUMNS`]), a pair of bars per workload (`rect.bar.baseline`,
//!   `rect.bar.plan`, each with `data-owner` and `data-skew`).
//! * with `--baseline-seeds N`, `p#seed-counts` (how many workloads are more skewed under the
//!   plan than under baseline's first seed, the seeds' median and every seed, also as
//!   `data-worse-first`, `data-worse-median`, `data-worse-every`) and `table#baseline-seeds`:
//!   those workloads (`tr.seed-workload`, with `data-owner` and `data-worse-every`), the plan's
//!   figures and baseline's under each seed ([`super::seeds`]).
//!
//! Columns: with at most [`MAX_COLUMNS`] nodes, one column per node in name order (the
//! charts' `data-mode="nodes"`). Bigger clusters are summarised, with a note on the page
//! (`data-mode="profile"`): each plan's nodes are sorted by utilization, fullest first, and
//! sampled at [`MAX_COLUMNS`] evenly spaced ranks — the utilization profile, which shows how
//! full each plan packs its nodes without drawing every node. The heatmaps sort by the mean
//! utilization over the charted resources; the delta chart shows the [`MAX_COLUMNS`] largest
//! differences. Every chart carries `data-nodes` (the cluster's node count) and
//! `data-columns` (columns drawn). Every text from the snapshot (names, messages) is escaped.
//!
//! No upstream counterpart.

use std::fmt::Write as _;

use super::{Comparison, NodeView, Side};

/// Most columns a chart draws (see the module docs).
pub const MAX_COLUMNS: usize = 200;

/// Most rows of the per-workload table.
pub const MAX_WORKLOAD_ROWS: usize = 500;

/// Escapes text for HTML content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A resource name as an element id suffix: ASCII letters and digits kept (lower-cased),
/// anything else a `-` (`nvidia.com/gpu` → `nvidia-com-gpu`).
pub fn slug(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' })
        .collect()
}

/// One row of the side-by-side table: metric, baseline, plan, difference (plan − baseline,
/// empty where it means nothing).
pub type Row = [String; 4];

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

fn signed(x: f64, decimals: usize) -> String {
    if x.abs() < 0.5 * 10f64.powi(-(decimals as i32)) {
        return "0".to_string();
    }
    format!("{x:+.decimals$}")
}

/// A resource amount in readable units (`cpu` in cores, byte resources in Gi/Mi/Ki).
pub fn amount(resource: &str, v: i64) -> String {
    match resource {
        "cpu" => format!("{:.2} cores", v as f64 / 1000.0),
        "memory" | "ephemeral-storage" => bytes(v),
        r if r.starts_with("hugepages-") => bytes(v),
        _ => v.to_string(),
    }
}

fn bytes(v: i64) -> String {
    const UNITS: [(&str, f64); 4] = [
        ("Ti", 1024f64 * 1024.0 * 1024.0 * 1024.0),
        ("Gi", 1024f64 * 1024.0 * 1024.0),
        ("Mi", 1024f64 * 1024.0),
        ("Ki", 1024.0),
    ];
    let x = v as f64;
    for (unit, size) in UNITS {
        if x.abs() >= size {
            return format!("{:.1}{unit}", x / size);
        }
    }
    format!("{v}")
}

/// The side-by-side rows of `kplace compare` (the text table and the report's summary table).
pub fn summary_rows(c: &Comparison) -> Vec<Row> {
    let (a, b) = (&c.baseline, &c.plan);
    let mut rows: Vec<Row> = Vec::new();
    let count = |rows: &mut Vec<Row>, name: String, x: usize, y: usize| {
        rows.push([name, x.to_string(), y.to_string(), signed(y as f64 - x as f64, 0)]);
    };
    count(&mut rows, "pods placed".into(), a.placed, b.placed);
    let mut prios: Vec<i32> = a
        .placed_by_priority
        .keys()
        .chain(b.placed_by_priority.keys())
        .chain(a.unschedulable_by_priority.keys())
        .chain(b.unschedulable_by_priority.keys())
        .copied()
        .collect();
    prios.sort_unstable_by(|x, y| y.cmp(x));
    prios.dedup();
    let get = |m: &std::collections::BTreeMap<i32, usize>, p: i32| m.get(&p).copied().unwrap_or(0);
    if prios.len() > 1 {
        for &p in &prios {
            count(
                &mut rows,
                format!("  placed, priority {p}"),
                get(&a.placed_by_priority, p),
                get(&b.placed_by_priority, p),
            );
        }
    }
    count(&mut rows, "unschedulable".into(), a.unschedulable, b.unschedulable);
    let (starved_a, starved_b) = super::verdict::starved(&c.owners);
    count(&mut rows, "workloads starved (none placed)".into(), starved_a, starved_b);
    let skew_sum = |f: &dyn Fn(&super::workloads::OwnerRow) -> &super::workloads::WorkloadSide,
                    key: &str| {
        c.owners.iter().map(|r| f(r).skew.get(key).copied().unwrap_or(0)).sum::<i64>() as usize
    };
    for (label, key) in [
        ("zone skew, sum over workloads", super::workloads::ZONE_LABEL),
        ("node skew, sum over workloads", super::workloads::HOSTNAME_LABEL),
    ] {
        count(
            &mut rows,
            label.into(),
            skew_sum(&|r| &r.baseline, key),
            skew_sum(&|r| &r.plan, key),
        );
    }
    let (sa, sb) = (&a.soft_rules, &b.soft_rules);
    rows.push([
        "spread pods within maxSkew".into(),
        format!("{}/{}", sa.spread_pods_within_max_skew, sa.spread_pods),
        format!("{}/{}", sb.spread_pods_within_max_skew, sb.spread_pods),
        format!("{} pp", signed((sb.spread_fraction() - sa.spread_fraction()) * 100.0, 1)),
    ]);
    rows.push([
        "preferred (anti-)affinity weight kept".into(),
        format!("{}/{}", sa.preferred_weight_satisfied, sa.preferred_weight),
        format!("{}/{}", sb.preferred_weight_satisfied, sb.preferred_weight),
        format!("{} pp", signed((sb.preferred_fraction() - sa.preferred_fraction()) * 100.0, 1)),
    ]);
    let score =
        |s: &super::soft::SoftRules| s.score_total.map_or("-".to_string(), |t| t.to_string());
    rows.push([
        "profile score of the final state".into(),
        score(sa),
        score(sb),
        match (sa.score_total, sb.score_total) {
            (Some(x), Some(y)) => signed((y - x) as f64, 0),
            _ => String::new(),
        },
    ]);
    count(&mut rows, "evictions".into(), a.evictions, b.evictions);
    count(&mut rows, "nodes used".into(), a.nodes_used, b.nodes_used);
    let resources: Vec<&String> = {
        let mut r: Vec<&String> = a.utilization.keys().chain(b.utilization.keys()).collect();
        r.sort();
        r.dedup();
        r
    };
    for r in &resources {
        let (ua, ub) = (a.utilization.get(*r), b.utilization.get(*r));
        if ua.is_none_or(|u| u.requested == 0) && ub.is_none_or(|u| u.requested == 0) {
            continue;
        }
        let f =
            |u: Option<&crate::plan::ResourceUtilization>,
             g: fn(&crate::plan::ResourceUtilization) -> f64| { u.map_or(0.0, g) };
        for (label, g) in [
            ("mean util", (|u: &crate::plan::ResourceUtilization| u.mean) as fn(&_) -> f64),
            ("max util", |u| u.max),
            ("balance (stddev)", |u| u.stddev),
        ] {
            let (x, y) = (f(ua, g), f(ub, g));
            let is_std = label.starts_with("balance");
            rows.push([
                format!("{r} {label}"),
                if is_std { format!("{x:.3}") } else { pct(x) },
                if is_std { format!("{y:.3}") } else { pct(y) },
                if is_std {
                    signed(y - x, 3)
                } else {
                    format!("{} pp", signed((y - x) * 100.0, 1))
                },
            ]);
        }
    }
    let stranded: Vec<&String> = {
        let mut r: Vec<&String> = a.stranded.keys().chain(b.stranded.keys()).collect();
        r.sort();
        r.dedup();
        r
    };
    for r in stranded {
        let (sa, sb) = (a.stranded.get(r), b.stranded.get(r));
        let v = |s: Option<&super::Stranded>| s.map_or(0, |s| s.stranded);
        let frac = |s: Option<&super::Stranded>| s.map_or(0.0, |s| s.fraction_of_free);
        rows.push([
            format!("{r} stranded"),
            format!("{} ({} of free)", amount(r, v(sa)), pct(frac(sa))),
            format!("{} ({} of free)", amount(r, v(sb)), pct(frac(sb))),
            if r == "cpu" || r == "memory" || r == "ephemeral-storage" {
                match v(sb) - v(sa) {
                    0 => "0".to_string(),
                    d if d > 0 => format!("+{}", amount(r, d)),
                    d => format!("-{}", amount(r, -d)),
                }
            } else {
                signed((v(sb) - v(sa)) as f64, 0)
            },
        ]);
    }
    count(&mut rows, "nodes with stranded capacity".into(), a.stranded_nodes, b.stranded_nodes);
    count(&mut rows, "violations (kplace check)".into(), a.violations, b.violations);
    rows.push([
        "decision time".into(),
        format!("{:.1} ms", a.timings_ms.decision),
        format!("{:.1} ms", b.timings_ms.decision),
        if a.timings_ms.decision > 0.0 {
            format!("×{:.2}", b.timings_ms.decision / a.timings_ms.decision)
        } else {
            String::new()
        },
    ]);
    rows.push([
        "pods/s".into(),
        format!("{:.0}", a.pods_per_second),
        format!("{:.0}", b.pods_per_second),
        if a.pods_per_second > 0.0 {
            format!("×{:.2}", b.pods_per_second / a.pods_per_second)
        } else {
            String::new()
        },
    ]);
    rows.push(["algorithm".into(), a.algorithm.clone(), b.algorithm.clone(), String::new()]);
    rows.push(["strategy".into(), a.strategy.clone(), b.strategy.clone(), String::new()]);
    count(&mut rows, "pods placed by the repair step".into(), a.repaired, b.repaired);
    rows.push(["backend".into(), a.backend.clone(), b.backend.clone(), String::new()]);
    rows
}

const STYLE: &str = r#"
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #222; margin: 24px auto; max-width: 1200px; padding: 0 16px; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid #ddd; }
h3 { font-size: 15px; margin: 18px 0 4px; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { padding: 3px 10px; border-bottom: 1px solid #eee; text-align: right; vertical-align: top; }
th:first-child, td:first-child { text-align: left; }
thead th { border-bottom: 2px solid #ccc; }
.verdict-ok { color: #1b7f3b; font-weight: 600; } .verdict-bad { color: #b00020; font-weight: 600; }
.note { color: #666; font-size: 13px; }
.legend span { display: inline-block; width: 12px; height: 12px; margin: 0 4px -2px 12px; }
svg { display: block; max-width: 100%; height: auto; margin: 4px 0 12px; }
svg text { font: 10px system-ui, sans-serif; fill: #555; }
.baseline { fill: #f28e2b; } .plan { fill: #4e79a7; }
.legend .baseline { background: #f28e2b; } .legend .plan { background: #4e79a7; }
.delta.up { fill: #4e79a7; } .delta.down { fill: #f28e2b; }
.grid { stroke: #e4e4e4; stroke-width: 1; } .axis { stroke: #999; stroke-width: 1; }
code { background: #f4f4f4; padding: 0 3px; }
"#;

/// Renders the report page.
pub fn render_html(c: &Comparison) -> String {
    let mut h = String::with_capacity(64 * 1024);
    let title = format!("kplace compare: {}", c.snapshot.paths.join(", "));
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(&title)
    );
    let _ = write!(h, "<h1>kplace compare</h1>\n<p>{}</p>\n", escape(&c.snapshot.paths.join(", ")));
    let _ = writeln!(
        h,
        "<p>{} nodes, {} bound pods, {} pending pods. Loaded in {:.0} ms, model built in {:.0} ms \
         (shared by both plans). Seed {}, solver <code>{}</code>, objective <code>{}</code>, \
         backend <code>{}</code>, {}.</p>",
        c.snapshot.nodes,
        c.snapshot.bound_pods,
        c.snapshot.pending_pods,
        c.snapshot.load_ms,
        c.snapshot.build_ms,
        c.settings.seed,
        escape(&c.settings.solver),
        escape(if c.settings.objective.is_empty() { "pods" } else { &c.settings.objective }),
        escape(&c.settings.backend),
        if c.settings.ensure_baseline {
            "with --ensure-baseline (the sequential plan returned when it ranks higher)"
        } else {
            "no sequential fallback"
        },
    );
    for n in &c.settings.notes {
        let _ = writeln!(h, "<p class=\"note\">{}</p>", escape(n));
    }
    if c.baseline.violations == 0 && c.plan.violations == 0 {
        h.push_str(
            "<p id=\"verdict\" class=\"verdict-ok\">Both plans pass kplace check (0 violations).</p>\n",
        );
    } else {
        let _ = writeln!(
            h,
            "<p id=\"verdict\" class=\"{}\">kplace check found violations: baseline {}, plan {}.</p>",
            if c.valid { "verdict-ok" } else { "verdict-bad" },
            c.baseline.violations,
            c.plan.violations
        );
    }
    let _ = writeln!(
        h,
        "<p id=\"verdict-line\" data-overall=\"{}\"><strong>{}</strong></p>\n<ul class=\"note\">",
        c.verdict.overall.as_str(),
        escape(&c.verdict.line)
    );
    for cr in &c.verdict.criteria {
        let _ = writeln!(
            h,
            "<li>{}: <strong>{}</strong> — {}</li>",
            escape(&cr.name),
            cr.outcome.as_str(),
            escape(&cr.detail)
        );
    }
    h.push_str("</ul>\n");

    h.push_str("<h2>Side by side</h2>\n<table id=\"summary\">\n<thead><tr><th>metric</th><th>baseline</th><th>plan</th><th>plan − baseline</th></tr></thead>\n<tbody>\n");
    for row in summary_rows(c) {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&row[0]),
            escape(&row[1]),
            escape(&row[2]),
            escape(&row[3])
        );
    }
    h.push_str("</tbody>\n</table>\n");
    violations_section(&mut h, "baseline", &c.baseline);
    violations_section(&mut h, "plan", &c.plan);
    workloads_section(&mut h, c);
    seeds_section(&mut h, c);

    let v = &c.nodes;
    let n = v.names.len();
    h.push_str("<h2>Per-node utilization</h2>\n");
    let _ = writeln!(
        h,
        "<p class=\"legend\"><span class=\"baseline\"></span>baseline<span class=\"plan\"></span>plan</p>"
    );
    if n > MAX_COLUMNS {
        let _ = writeln!(
            h,
            "<p class=\"note\" id=\"sampling-note\">{n} nodes are more than {MAX_COLUMNS} columns: each \
             plan's nodes are sorted by utilization (fullest first) and shown at {MAX_COLUMNS} \
             evenly spaced ranks, so a column pairs the baseline's and the plan's k-th fullest \
             node, not the same node.</p>"
        );
    } else {
        h.push_str("<p class=\"note\">One column per node, nodes in name order.</p>\n");
    }
    for (r, resource) in v.resources.iter().enumerate() {
        util_chart(&mut h, v, r, resource);
    }

    h.push_str("<h2>Nodes × resources</h2>\n");
    h.push_str(
        "<p class=\"note\">Utilization per node (columns) and resource (rows); white is empty, \
         dark blue full, red over-committed, grey no allocatable. ",
    );
    if n > MAX_COLUMNS {
        let _ = write!(
            h,
            "Nodes sorted by their mean utilization over these resources, fullest first, \
             sampled at {MAX_COLUMNS} evenly spaced ranks."
        );
    } else {
        h.push_str("Nodes in name order.");
    }
    h.push_str("</p>\n");
    heatmap(&mut h, v, "baseline", &v.baseline);
    heatmap(&mut h, v, "plan", &v.plan);

    differences_section(&mut h, c);

    h.push_str(
        "<h2>Definitions</h2>\n<ul class=\"note\">\n\
         <li>Utilization: requested / allocatable per node after the plan (pods: pods on the node / allowed pods), over nodes with allocatable; balance is the population standard deviation of it over nodes.</li>\n\
         <li>Stranded capacity: free capacity (allocatable − requested) on nodes where no reference pod shape fits by resources alone; the reference shapes are the request vectors of every pending pod, the same for both plans.</li>\n\
         <li>Workload: the controlling owner of a pod (ReplicaSet, StatefulSet, Job, …; the pod itself when bare). Skew: most minus fewest of its pods per zone (or node), over the zones (nodes) its node selector, affinity and tolerations allow.</li>\n\
         <li>Soft rules: placed pods whose ScheduleAnyway (or default) spread constraints end within maxSkew; weight of preferred pod (anti-)affinity terms satisfied; the profile's total score of each placed pod's node in the final state.</li>\n\
         <li>Decision time: encode + evaluate + solve as the plan's summary reports it; loading and building the model are measured once, above.</li>\n\
         <li>Violations: found by <code>kplace check</code>, the independent validator (default profile).</li>\n</ul>\n",
    );
    let _ = writeln!(
        h,
        "<p class=\"note\">Written by kplace {} (kube-scheduler {} semantics).</p>\n</body>\n</html>",
        env!("CARGO_PKG_VERSION"),
        crate::UPSTREAM_VERSION
    );
    h
}

/// `p#seed-counts` and `table#baseline-seeds`, with several baseline seeds (see the module docs).
fn seeds_section(h: &mut String, c: &Comparison) {
    use super::workloads::{HOSTNAME_LABEL, ZONE_LABEL};
    let Some(s) = &c.baseline_seeds else { return };
    let first = s.seeds.first().copied().unwrap_or(0);
    let word = s.run_word();
    let range = |v: &[usize]| super::seeds::range(v, "–");
    let why = if s.documents.is_empty() {
        "kube-scheduler breaks ties between equally scored nodes at random, so "
    } else {
        ""
    };
    let _ = writeln!(
        h,
        "<h3>Against baseline under {} {word}s</h3>\n<p class=\"note\" id=\"seed-counts\" \
         data-worse-first=\"{}\" data-worse-median=\"{}\" data-worse-every=\"{}\">{why}{}: {} \
         pods placed, against the plan's {}. Workloads more skewed under the plan than under \
         {word} {first}: {}; than the {word}s' median: {}; than every {word}: {}.</p>",
        s.seeds.len(),
        s.worse_than_first,
        s.worse_than_median,
        s.worse_than_every,
        escape(&s.origin("–")),
        range(&s.baseline_placed),
        c.plan.placed,
        s.worse_than_first,
        s.worse_than_median,
        s.worse_than_every,
    );
    if s.owners.is_empty() {
        return;
    }
    let _ = writeln!(
        h,
        "<table id=\"baseline-seeds\">\n<thead><tr><th>workload</th>\
         <th>placed (plan; baseline)</th><th>zone skew (plan; baseline by {word})</th>\
         <th>node skew (plan; baseline by {word})</th><th>worse than every {word}</th></tr>\
         </thead>\n<tbody>",
    );
    for r in &s.owners {
        let _ = writeln!(
            h,
            "<tr class=\"seed-workload\" data-owner=\"{}\" data-worse-every=\"{}\"><td>{}</td>\
             <td>{}; {}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&r.owner),
            r.worse_than_every,
            escape(&r.owner),
            r.plan_placed,
            range(&r.baseline_placed),
            r.skews(ZONE_LABEL),
            r.skews(HOSTNAME_LABEL),
            if r.worse_than_every { "yes" } else { "no" },
        );
    }
    h.push_str("</tbody>\n</table>\n");
}

/// `table#workloads` and `svg#zone-skew` (see the module docs).
fn workloads_section(h: &mut String, c: &Comparison) {
    use super::workloads::{HOSTNAME_LABEL, ZONE_LABEL};
    h.push_str("<h2>Per workload</h2>\n");
    if c.owners.is_empty() {
        h.push_str("<p class=\"note\">No pending pods.</p>\n");
        return;
    }
    let listed = c.owners.len().min(MAX_WORKLOAD_ROWS);
    let _ = writeln!(
        h,
        "<p class=\"note\">{} workload(s){}, the ones the plans treat most differently first. \
         Each cell: baseline / plan.</p>",
        c.owners.len() + c.owners_not_listed,
        if listed + c.owners_not_listed > listed {
            format!(", {listed} listed")
        } else {
            String::new()
        }
    );
    h.push_str(
        "<table id=\"workloads\">\n<thead><tr><th>workload</th><th>placed</th><th>unplaced</th>\
         <th>cpu placed</th><th>memory placed</th><th>zone skew</th><th>node skew</th>\
         <th>most on one node</th></tr></thead>\n<tbody>\n",
    );
    let skew = |s: &super::workloads::WorkloadSide, k: &str| s.skew.get(k).copied().unwrap_or(0);
    for r in c.owners.iter().take(listed) {
        let (a, b) = (&r.baseline, &r.plan);
        let _ = writeln!(
            h,
            "<tr class=\"workload\" data-owner=\"{}\"><td>{}</td><td>{} / {}</td><td>{} / {}</td>\
             <td>{} / {}</td><td>{} / {}</td><td>{} / {}</td><td>{} / {}</td><td>{} / {}</td></tr>",
            escape(&r.owner),
            escape(&r.owner),
            a.placed,
            b.placed,
            a.unplaced,
            b.unplaced,
            escape(&amount("cpu", a.cpu_placed_m)),
            escape(&amount("cpu", b.cpu_placed_m)),
            escape(&amount("memory", a.memory_placed_bytes)),
            escape(&amount("memory", b.memory_placed_bytes)),
            skew(a, ZONE_LABEL),
            skew(b, ZONE_LABEL),
            skew(a, HOSTNAME_LABEL),
            skew(b, HOSTNAME_LABEL),
            a.max_per_node,
            b.max_per_node,
        );
    }
    h.push_str("</tbody>\n</table>\n");
    let _ = writeln!(
        h,
        "<p class=\"note\" id=\"more-skewed\">Workloads more skewed (zone or node) under the plan \
         than under baseline: {}, of which beyond their own constraints' maxSkew: {}.</p>",
        c.more_skewed.workloads, c.more_skewed.beyond_max_skew
    );

    // Zone skew per workload, a pair of bars each.
    let rows: Vec<&super::workloads::OwnerRow> = c.owners.iter().take(MAX_COLUMNS).collect();
    let max = rows
        .iter()
        .map(|r| skew(&r.baseline, ZONE_LABEL).max(skew(&r.plan, ZONE_LABEL)))
        .max()
        .unwrap_or(0)
        .max(1);
    let (plot_h, top, left, label_h) = (160.0, 10.0, 40.0, 14.0);
    let col = column_width(rows.len()).max(14.0);
    let width = left + col * rows.len() as f64 + 10.0;
    let _ = writeln!(
        h,
        "<h3>Zone skew per workload</h3>\n<p class=\"legend\"><span class=\"baseline\"></span>baseline\
         <span class=\"plan\"></span>plan <span class=\"note\">(most minus fewest pods per \
         eligible zone; 0 is an even spread; scale 0–{max})</span></p>\n\
         <svg id=\"zone-skew\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {width:.1} {:.1}\" \
         width=\"{width:.0}\" height=\"{:.0}\" data-workloads=\"{}\" data-columns=\"{}\">",
        top + plot_h + label_h + 4.0,
        top + plot_h + label_h + 4.0,
        c.owners.len() + c.owners_not_listed,
        rows.len()
    );
    let _ = writeln!(
        h,
        "<line class=\"axis\" x1=\"{left}\" y1=\"{:.1}\" x2=\"{width:.1}\" y2=\"{:.1}\"/>\
         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{max}</text>\
         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">0</text>",
        top + plot_h,
        top + plot_h,
        left - 4.0,
        top + 8.0,
        left - 4.0,
        top + plot_h,
    );
    for (i, r) in rows.iter().enumerate() {
        let x = left + col * i as f64;
        let bar_w = (col / 2.0 - 1.0).max(1.0);
        for (j, (side, s)) in [("baseline", &r.baseline), ("plan", &r.plan)].iter().enumerate() {
            let v = skew(s, ZONE_LABEL);
            // A skew of 0 is drawn as a 1-unit sliver so that every bar has a box.
            let bh = (v as f64 / max as f64 * plot_h).max(1.0);
            let _ = writeln!(
                h,
                "<rect class=\"bar {side}\" data-owner=\"{}\" data-skew=\"{v}\" x=\"{:.2}\" y=\"{:.2}\" \
                 width=\"{bar_w:.2}\" height=\"{bh:.2}\"><title>{} ({side}): zone skew {v}</title></rect>",
                escape(&r.owner),
                x + j as f64 * (bar_w + 1.0),
                top + plot_h - bh,
                escape(&r.owner),
            );
        }
    }
    h.push_str("</svg>\n");
}

fn violations_section(h: &mut String, name: &str, side: &Side) {
    if side.violations == 0 {
        return;
    }
    let _ = writeln!(
        h,
        "<h3>Violations of {name} ({})</h3>\n<table id=\"violations-{name}\">\n\
         <thead><tr><th>kind</th><th>pod</th><th>node</th><th>message</th></tr></thead><tbody>",
        side.violations
    );
    for v in &side.violation_list {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&v.kind),
            escape(&v.pod),
            escape(v.node.as_deref().unwrap_or("")),
            escape(&v.message)
        );
    }
    h.push_str("</tbody></table>\n");
}

/// The columns of a chart over one plan's per-node values: `(node index, value)` per column.
/// Nodes mode: every node in order. Profile mode: nodes with a value, sorted by it descending,
/// sampled at [`MAX_COLUMNS`] evenly spaced ranks.
fn columns(values: &[Option<f64>]) -> Vec<(Option<usize>, Option<f64>)> {
    if values.len() <= MAX_COLUMNS {
        return values.iter().enumerate().map(|(i, v)| (Some(i), *v)).collect();
    }
    let mut sorted: Vec<(usize, f64)> =
        values.iter().enumerate().filter_map(|(i, v)| v.map(|v| (i, v))).collect();
    sorted.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    (0..MAX_COLUMNS)
        .map(|k| {
            if sorted.is_empty() {
                return (None, None);
            }
            // The middle of the k-th of MAX_COLUMNS equal slices of the ranks.
            let rank = ((2 * k + 1) * sorted.len()) / (2 * MAX_COLUMNS);
            let (i, v) = sorted[rank.min(sorted.len() - 1)];
            (Some(i), Some(v))
        })
        .collect()
}

/// Geometry shared by the charts.
const LEFT: f64 = 44.0;
const RIGHT: f64 = 8.0;
const TOP: f64 = 8.0;

fn column_width(columns: usize) -> f64 {
    (1000.0 / columns.max(1) as f64).clamp(4.0, 28.0)
}

fn util_chart(h: &mut String, v: &NodeView, r: usize, resource: &str) {
    let n = v.names.len();
    let empty = Vec::new();
    let a = columns(v.baseline.get(r).unwrap_or(&empty));
    let b = columns(v.plan.get(r).unwrap_or(&empty));
    let cols = a.len().max(b.len());
    let cw = column_width(cols);
    let plot_h = 160.0;
    let width = LEFT + cw * cols as f64 + RIGHT;
    let height = TOP + plot_h + 20.0;
    let mode = if n > MAX_COLUMNS { "profile" } else { "nodes" };
    let id = format!("util-{}", slug(resource));
    let _ = writeln!(
        h,
        "<h3>{}</h3>\n<svg id=\"{}\" class=\"util-chart\" data-resource=\"{}\" data-mode=\"{mode}\" \
         data-nodes=\"{n}\" data-columns=\"{cols}\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" \
         xmlns=\"http://www.w3.org/2000/svg\" role=\"img\"><title>{} utilization per node: baseline and plan</title>",
        escape(resource),
        escape(&id),
        escape(resource),
        escape(resource)
    );
    grid(h, width, plot_h);
    let bw = ((cw - 1.0) / 2.0).max(1.0);
    for k in 0..cols {
        let x0 = LEFT + cw * k as f64;
        for (side, col, dx) in [("baseline", a.get(k), 0.0), ("plan", b.get(k), bw)] {
            let (node, value) = col.copied().unwrap_or((None, None));
            let u = value.unwrap_or(0.0);
            let bar_h = u.clamp(0.0, 1.05) * plot_h;
            let name = node.and_then(|i| v.names.get(i)).map_or("", String::as_str);
            let label = match value {
                Some(u) => format!("{side}: {name} {resource} {:.1}%", u * 100.0),
                None => format!("{side}: {name} has no {resource}"),
            };
            let _ = writeln!(
                h,
                "<rect class=\"bar {side}\" data-node=\"{}\" x=\"{:.1}\" y=\"{:.1}\" width=\"{bw:.1}\" height=\"{bar_h:.1}\"><title>{}</title></rect>",
                escape(name),
                x0 + dx,
                TOP + plot_h - bar_h,
                escape(&label)
            );
        }
    }
    h.push_str("</svg>\n");
}

/// Horizontal grid lines at 0, 25, 50, 75 and 100 %, with labels.
fn grid(h: &mut String, width: f64, plot_h: f64) {
    for q in [0u32, 25, 50, 75, 100] {
        let y = TOP + plot_h - plot_h * f64::from(q) / 100.0;
        let class = if q == 0 { "axis" } else { "grid" };
        let _ = write!(
            h,
            "<line class=\"{class}\" x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{q}%</text>",
            width - RIGHT,
            LEFT - 4.0,
            y + 3.0
        );
    }
    h.push('\n');
}

/// A sequential colour for a utilization: white (0) to dark blue (1); red above 1; grey none.
fn color(u: Option<f64>) -> String {
    let Some(u) = u else { return "#d9d9d9".to_string() };
    if u > 1.0 + 1e-9 {
        return "#c0392b".to_string();
    }
    let t = u.clamp(0.0, 1.0);
    let lerp = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    format!("#{:02x}{:02x}{:02x}", lerp(247.0, 8.0), lerp(251.0, 48.0), lerp(255.0, 107.0))
}

fn heatmap(h: &mut String, v: &NodeView, side: &str, values: &[Vec<Option<f64>>]) {
    let n = v.names.len();
    let rows = v.resources.len();
    // Column order: nodes by name, or (big clusters) by mean utilization, sampled.
    let order: Vec<usize> = if n <= MAX_COLUMNS {
        (0..n).collect()
    } else {
        let means: Vec<Option<f64>> = (0..n)
            .map(|i| {
                let vals: Vec<f64> =
                    values.iter().filter_map(|row| row.get(i).copied().flatten()).collect();
                (!vals.is_empty()).then(|| vals.iter().sum::<f64>() / vals.len() as f64)
            })
            .collect();
        columns(&means).into_iter().filter_map(|(i, _)| i).collect()
    };
    let cols = order.len();
    let cw = column_width(cols);
    let ch = 18.0;
    let left = 120.0;
    let width = left + cw * cols as f64 + RIGHT;
    let height = TOP + ch * rows as f64 + 8.0;
    let mode = if n > MAX_COLUMNS { "profile" } else { "nodes" };
    let _ = writeln!(
        h,
        "<h3>{side}</h3>\n<svg id=\"heatmap-{side}\" class=\"heatmap\" data-mode=\"{mode}\" data-nodes=\"{n}\" \
         data-columns=\"{cols}\" data-rows=\"{rows}\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" \
         xmlns=\"http://www.w3.org/2000/svg\" role=\"img\"><title>{side}: utilization, nodes × resources</title>"
    );
    for (r, resource) in v.resources.iter().enumerate() {
        let y = TOP + ch * r as f64;
        let _ = write!(
            h,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left - 6.0,
            y + ch / 2.0 + 3.0,
            escape(resource)
        );
        for (k, &i) in order.iter().enumerate() {
            let u = values.get(r).and_then(|row| row.get(i)).copied().flatten();
            let name = v.names.get(i).map_or("", String::as_str);
            let label = match u {
                Some(u) => format!("{name} {resource} {:.1}%", u * 100.0),
                None => format!("{name} has no {resource}"),
            };
            let _ = write!(
                h,
                "<rect class=\"cell\" data-node=\"{}\" x=\"{:.1}\" y=\"{y:.1}\" width=\"{cw:.1}\" height=\"{ch:.1}\" fill=\"{}\"><title>{}</title></rect>",
                escape(name),
                left + cw * k as f64,
                color(u),
                escape(&label)
            );
        }
        h.push('\n');
    }
    h.push_str("</svg>\n");
}

fn differences_section(h: &mut String, c: &Comparison) {
    let d = &c.differences;
    h.push_str("<h2>Where the plans differ</h2>\n<table id=\"difference-counts\">\n<tbody>\n");
    for (label, n) in [
        ("pending pods on the same node", d.same_node),
        ("placed by both, on different nodes", d.different_node),
        ("placed only by baseline", d.only_baseline),
        ("placed only by plan", d.only_plan),
        ("placed by neither", d.neither),
        ("nodes receiving a different number of pods", d.nodes_changed),
    ] {
        let _ = writeln!(h, "<tr><td>{label}</td><td>{n}</td></tr>");
    }
    h.push_str("</tbody>\n</table>\n");

    h.push_str("<h3>Pods of the batch per node: plan − baseline</h3>\n");
    let deltas: Vec<&super::NodeDelta> = {
        let mut ds: Vec<&super::NodeDelta> = d.node_deltas.iter().take(MAX_COLUMNS).collect();
        ds.sort_by(|a, b| b.delta.cmp(&a.delta).then_with(|| a.node.cmp(&b.node)));
        ds
    };
    if deltas.is_empty() {
        h.push_str("<p class=\"note\" id=\"node-deltas-none\">Both plans put the same number of the batch's pods on every node.</p>\n");
    } else {
        if d.nodes_changed > deltas.len() {
            let _ = writeln!(
                h,
                "<p class=\"note\">The {} largest of {} differences, by size.</p>",
                deltas.len(),
                d.nodes_changed
            );
        }
        let cols = deltas.len();
        let cw = column_width(cols);
        let max = deltas.iter().map(|x| x.delta.unsigned_abs()).max().unwrap_or(1).max(1) as f64;
        let half = 70.0;
        let width = LEFT + cw * cols as f64 + RIGHT;
        let height = TOP + 2.0 * half + 8.0;
        let zero = TOP + half;
        let _ = writeln!(
            h,
            "<svg id=\"node-deltas\" class=\"delta-chart\" data-nodes=\"{}\" data-columns=\"{cols}\" \
             width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\">\
             <title>per node: pods plan placed minus pods baseline placed</title>",
            c.nodes.names.len()
        );
        let _ = writeln!(
            h,
            "<line class=\"axis\" x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{zero:.1}\" y2=\"{zero:.1}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">+{max:.0}</text>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">0</text>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">-{max:.0}</text>",
            width - RIGHT,
            LEFT - 4.0,
            TOP + 8.0,
            LEFT - 4.0,
            zero + 3.0,
            LEFT - 4.0,
            TOP + 2.0 * half
        );
        for (k, x) in deltas.iter().enumerate() {
            let bar_h = (x.delta.unsigned_abs() as f64 / max) * half;
            let (class, y) = if x.delta > 0 { ("up", zero - bar_h) } else { ("down", zero) };
            let _ = writeln!(
                h,
                "<rect class=\"bar delta {class}\" data-node=\"{}\" x=\"{:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{bar_h:.1}\"><title>{}: baseline {}, plan {} ({:+})</title></rect>",
                escape(&x.node),
                LEFT + cw * k as f64,
                (cw - 1.0).max(1.0),
                escape(&x.node),
                x.baseline,
                x.plan,
                x.delta
            );
        }
        h.push_str("</svg>\n");
    }

    h.push_str("<h3>Pods placed differently</h3>\n");
    if d.pods.is_empty() {
        h.push_str("<p class=\"note\">None: every pending pod went to the same node under both plans.</p>\n");
        return;
    }
    if d.pods_not_listed > 0 {
        let _ = writeln!(
            h,
            "<p class=\"note\">The first {} of {} pods, by name.</p>",
            d.pods.len(),
            d.pods.len() + d.pods_not_listed
        );
    }
    h.push_str("<table id=\"pod-differences\">\n<thead><tr><th>pod</th><th>priority</th><th>baseline</th><th>plan</th></tr></thead>\n<tbody>\n");
    for p in &d.pods {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&p.pod),
            p.priority,
            escape(p.baseline.as_deref().unwrap_or("(unplaced)")),
            escape(p.plan.as_deref().unwrap_or("(unplaced)"))
        );
    }
    h.push_str("</tbody>\n</table>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_characters_are_escaped_in_text_and_attributes() {
        assert_eq!(
            escape(r#"<a href="x">&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn resource_names_become_id_safe_slugs() {
        assert_eq!(slug("nvidia.com/gpu"), "nvidia-com-gpu");
        assert_eq!(slug("cpu"), "cpu");
    }

    #[test]
    fn small_clusters_get_one_column_per_node_in_order() {
        let cols = columns(&[Some(0.2), None, Some(0.9)]);
        assert_eq!(cols, vec![(Some(0), Some(0.2)), (Some(1), None), (Some(2), Some(0.9))]);
    }

    #[test]
    fn big_clusters_are_sampled_fullest_first_at_max_columns_ranks() {
        let values: Vec<Option<f64>> = (0..1000).map(|i| Some(f64::from(i) / 1000.0)).collect();
        let cols = columns(&values);
        assert_eq!(cols.len(), MAX_COLUMNS);
        let vals: Vec<f64> = cols.iter().map(|c| c.1.unwrap_or(-1.0)).collect();
        assert!(vals.windows(2).all(|w| w[0] >= w[1]), "descending");
        // The first column is near the fullest node, the last near the emptiest.
        assert!(
            vals[0] > 0.99 && vals[MAX_COLUMNS - 1] < 0.01,
            "{} {}",
            vals[0],
            vals[MAX_COLUMNS - 1]
        );
    }

    #[test]
    fn colours_run_from_white_to_dark_blue_with_red_for_overcommit() {
        assert_eq!(color(Some(0.0)), "#f7fbff");
        assert_eq!(color(Some(1.0)), "#08306b");
        assert_eq!(color(Some(1.5)), "#c0392b");
        assert_eq!(color(None), "#d9d9d9");
    }

    #[test]
    fn several_baseline_seeds_get_their_counts_and_a_row_per_listed_workload() {
        use crate::compare::seeds::{SeedComparison, SeedRow};
        use crate::compare::workloads::{HOSTNAME_LABEL, ZONE_LABEL};
        let row = |owner: &str, plan: i64, by_seed: Vec<i64>, every: bool| SeedRow {
            owner: owner.into(),
            plan_placed: 5,
            plan_skew: [(ZONE_LABEL.to_string(), plan), (HOSTNAME_LABEL.to_string(), 1)].into(),
            baseline_placed: vec![4, 5, 4],
            baseline_skew: [
                (ZONE_LABEL.to_string(), by_seed),
                (HOSTNAME_LABEL.to_string(), vec![1, 1, 1]),
            ]
            .into(),
            worse_than_every: every,
        };
        let mut c = Comparison::default();
        assert!(!render_html(&c).contains("seed-counts"), "one seed: no section");
        c.baseline_seeds = Some(SeedComparison {
            seeds: vec![3, 4, 5],
            baseline_placed: vec![40, 41, 39],
            worse_than_first: 2,
            worse_than_median: 1,
            worse_than_every: 1,
            owners: vec![
                row("ReplicaSet a/<web>", 3, vec![1, 2, 2], true),
                row("ReplicaSet b/db", 2, vec![1, 2, 3], false),
            ],
            documents: Vec::new(),
        });
        let html = render_html(&c);
        assert!(html.contains(
            "id=\"seed-counts\" data-worse-first=\"2\" data-worse-median=\"1\" data-worse-every=\"1\""
        ));
        assert!(html.contains("seeds 3–5: 39–41 pods placed"), "{html}");
        assert_eq!(html.matches("<tr class=\"seed-workload\"").count(), 2);
        assert!(html.contains(
            "data-owner=\"ReplicaSet a/&lt;web&gt;\" data-worse-every=\"true\"><td>ReplicaSet a/&lt;web&gt;</td>\
             <td>5; 4–5</td><td>3; 1 2 2</td><td>1; 1 1 1</td><td>yes</td>"
        ), "{html}");
        assert!(html.contains("data-owner=\"ReplicaSet b/db\" data-worse-every=\"false\""));

        // Plan documents instead of seeds: named, and the rows say so.
        if let Some(s) = c.baseline_seeds.as_mut() {
            s.seeds = vec![1, 2, 3];
            s.documents = vec!["k1.json".into(), "k2.json".into(), "<k3>.json".into()];
        }
        let html = render_html(&c);
        assert!(html.contains("<h3>Against baseline under 3 plan documents</h3>"), "{html}");
        assert!(html.contains(
            "baseline is 3 plan documents (k1.json, k2.json, &lt;k3&gt;.json): 39–41 pods placed"
        ));
        assert!(html.contains("than every plan document: 1."), "{html}");
        assert!(!html.contains("breaks ties"), "no seeds, no ties to explain");
    }

    #[test]
    fn amounts_are_readable() {
        assert_eq!(amount("cpu", 1500), "1.50 cores");
        assert_eq!(amount("memory", 3 * 1024 * 1024 * 1024), "3.0Gi");
        assert_eq!(amount("pods", 7), "7");
    }
}
