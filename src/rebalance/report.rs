//! `--report FILE.html`: a self-contained HTML page of a rebalancing plan — the before/after
//! figures, per-node utilization before and after as inline SVG bar charts (cpu and memory), and
//! the moves by wave. No JavaScript, no stylesheet or font from the network.
//!
//! Input: a [`Rebalance`]; output: the page as a string.

use std::fmt::Write as _;

use super::Rebalance;
use crate::model::ClusterState;
use crate::resources::{CPU, MEMORY};

pub use crate::compare::report::escape;

fn utilization(state: &ClusterState, resource: &str) -> Vec<(String, f64)> {
    state
        .nodes
        .iter()
        .map(|n| {
            let alloc = n.allocatable.get(resource);
            let u = if alloc > 0 { n.requested.get(resource) as f64 / alloc as f64 } else { 0.0 };
            (n.name.clone(), u)
        })
        .collect()
}

const LABEL_WIDTH: usize = 280;
const BAR_WIDTH: usize = 520;
const ROW: usize = 22;

/// One chart: a row per node with its utilization before (grey) and after (blue).
fn chart(before: &ClusterState, after: &ClusterState, resource: &str) -> String {
    let b = utilization(before, resource);
    let a = utilization(after, resource);
    let height = ROW * b.len() + 30;
    let width = LABEL_WIDTH + BAR_WIDTH + 70;
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" aria-label="{} utilization per node">"#,
        escape(resource)
    );
    for pct in [0, 25, 50, 75, 100] {
        let x = LABEL_WIDTH + BAR_WIDTH * pct / 100;
        let _ = write!(
            svg,
            r##"<line x1="{x}" y1="0" x2="{x}" y2="{}" stroke="#ddd"/><text x="{x}" y="{}" font-size="10" text-anchor="middle">{pct}%</text>"##,
            height - 18,
            height - 6
        );
    }
    for (i, ((name, ub), (_, ua))) in b.iter().zip(&a).enumerate() {
        let y = i * ROW;
        let wb = (ub.clamp(0.0, 1.0) * BAR_WIDTH as f64).round();
        let wa = (ua.clamp(0.0, 1.0) * BAR_WIDTH as f64).round();
        let _ = write!(
            svg,
            r##"<text x="{}" y="{}" font-size="11" text-anchor="end">{}</text><rect x="{LABEL_WIDTH}" y="{}" width="{wb}" height="8" fill="#9aa0a6"><title>before {:.1}%</title></rect><rect x="{LABEL_WIDTH}" y="{}" width="{wa}" height="8" fill="#1a73e8"><title>after {:.1}%</title></rect><text x="{}" y="{}" font-size="10">{:.0}% → {:.0}%</text>"##,
            LABEL_WIDTH - 6,
            y + 14,
            escape(name),
            y + 3,
            ub * 100.0,
            y + 11,
            ua * 100.0,
            LABEL_WIDTH + BAR_WIDTH + 4,
            y + 14,
            ub * 100.0,
            ua * 100.0
        );
    }
    svg.push_str("</svg>");
    svg
}

/// The page.
pub fn render(rebalance: &Rebalance) -> String {
    let plan = &rebalance.plan;
    let s = plan.summary.rebalance.clone().unwrap_or_default();
    let mut html = String::new();
    html.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    let _ = write!(html, "<title>kplace rebalance: {}</title>", escape(&s.objective));
    html.push_str(
        "<style>body{font-family:sans-serif;margin:2em;color:#202124}table{border-collapse:collapse;margin:1em 0}\
         td,th{border:1px solid #ddd;padding:2px 8px;text-align:left;font-size:13px}\
         .legend span{display:inline-block;width:12px;height:8px;margin:0 4px 0 12px}</style></head><body>",
    );
    let _ = write!(
        html,
        "<h1>kplace rebalance: {}</h1><p>{} move{} in {} wave{}; nodes in use {} → {} ({} freed, {} newly used); check: {}.</p>",
        escape(&s.objective),
        s.moves,
        if s.moves == 1 { "" } else { "s" },
        s.waves,
        if s.waves == 1 { "" } else { "s" },
        s.nodes_in_use_before,
        s.nodes_in_use_after,
        s.nodes_freed.len(),
        s.nodes_newly_used.len(),
        if s.check_valid { "valid" } else { "INVALID" }
    );
    html.push_str("<table><tr><th>figure</th><th>before</th><th>after</th></tr>");
    for (label, before, after) in [
        ("node stddev", &s.node_stddev_before, &s.node_stddev_after),
        ("zone stddev", &s.zone_stddev_before, &s.zone_stddev_after),
    ] {
        for (r, v) in before {
            let _ = write!(
                html,
                "<tr><td>{label} {}</td><td>{v:.4}</td><td>{:.4}</td></tr>",
                escape(r),
                after.get(r).copied().unwrap_or(0.0)
            );
        }
    }
    let strategies: std::collections::BTreeSet<&String> =
        s.violations_before.keys().chain(s.violations_after.keys()).collect();
    for k in strategies {
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(k),
            s.violations_before.get(k).copied().unwrap_or(0),
            s.violations_after.get(k).copied().unwrap_or(0)
        );
    }
    html.push_str("</table>");
    html.push_str(
        "<p class=\"legend\">Requested / allocatable per node:<span style=\"background:#9aa0a6\"></span>before\
         <span style=\"background:#1a73e8\"></span>after</p>",
    );
    for r in [CPU, MEMORY] {
        let _ = write!(html, "<h2>{}</h2>", escape(r));
        html.push_str(&chart(&rebalance.before, &rebalance.after, r));
    }
    html.push_str("<h2>Moves</h2><table><tr><th>wave</th><th>pod</th><th>from</th><th>to</th><th>reason</th></tr>");
    for m in &plan.moves {
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            m.wave,
            escape(&m.pod),
            escape(&m.from),
            escape(&m.to),
            escape(&m.reason)
        );
    }
    html.push_str("</table>");
    if !s.unmoved.is_empty() {
        html.push_str("<h2>Not moved</h2><table><tr><th>pod</th><th>node</th><th>reason</th></tr>");
        for u in &s.unmoved {
            let _ = write!(
                html,
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&u.pod),
                escape(&u.node),
                escape(&u.reason)
            );
        }
        html.push_str("</table>");
    }
    html.push_str("</body></html>\n");
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_for_html() {
        assert_eq!(escape(r#"<a href="x">&'"#), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
    }
}
