//! Test support for matrix evaluation (used by unit tests, `tests/all/eval_framework.rs` and
//! `tests/all/gpu_parity.rs`): the framework runtime as an oracle for every cell of a [`Matrix`],
//! a profile reduced to the plugins the matrix evaluates, and a cluster rounded to its encoded
//! units (so that encoded and exact arithmetic agree everywhere).
//!
//! Input: a profile, a cluster, pending pods, their encoding and a matrix. Output: a list of
//! mismatches (empty when the matrix agrees). No upstream counterpart.

use std::sync::Arc;

use super::{Check, Matrix, NOT_YET_IN_MATRIX};
use crate::encode::Encoded;
use crate::encode::dict::ResourceTable;
use crate::encode::tensors::{CLASS_INEXACT_UNITS, NODE_INEXACT_UNITS};
use crate::framework::profile::{PluginName, Profile};
use crate::framework::runtime::{Framework, FrameworkError, PreFilterOutcome};
use crate::framework::{Code, Status};
use crate::model::{ClusterState, Node, Pod};
use crate::resources::Resource;

/// How closely the matrix must follow the framework.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agreement {
    /// Every cell, status, raw, normalized and total score is equal. Holds when every amount is
    /// a multiple of its encoded unit.
    Exact,
    /// Only what encoded units cannot change: every filter check's verdict and status and every
    /// raw score, except those of the plugins that compute with amounts ([`unit_dependent`]:
    /// NodeResourcesFit, NodeResourcesBalancedAllocation) on cells whose node or class has
    /// `INEXACT_UNITS`; normalized scores and totals are not compared (they depend on the whole
    /// feasible row).
    UnitIndependent,
}

/// `profile` without the plugins the matrix does not evaluate yet ([`NOT_YET_IN_MATRIX`]), so
/// that the framework runtime and the matrix evaluate the same plugins.
pub fn matrix_profile(profile: &Profile) -> Profile {
    let keep = |p: &PluginName| !NOT_YET_IN_MATRIX.contains(p);
    let mut out = profile.clone();
    out.plugins.pre_filter.retain(keep);
    out.plugins.filter.retain(keep);
    out.plugins.pre_score.retain(keep);
    out.plugins.score.retain(|(p, _)| keep(p));
    out
}

fn round_up(v: i64, shift: u32) -> i64 {
    let scale = 1i64 << shift.min(62);
    if v <= 0 { v } else { (v / scale + i64::from(v % scale != 0)).saturating_mul(scale) }
}

fn round_down(v: i64, shift: u32) -> i64 {
    let scale = 1i64 << shift.min(62);
    if v <= 0 { v } else { v / scale * scale }
}

fn round_resource(r: &Resource, units: &ResourceTable, up: bool) -> Resource {
    let mut out = r.clone();
    for unit in &units.units {
        let v = r.get(&unit.name);
        let rounded = if up { round_up(v, unit.shift) } else { round_down(v, unit.shift) };
        if rounded != v {
            out.set(&unit.name, rounded);
        }
    }
    out
}

fn round_pod(p: &Pod, units: &ResourceTable) -> Pod {
    let mut pod = p.clone();
    pod.requests = round_resource(&p.requests, units, true);
    let mem = units.column(crate::resources::MEMORY).and_then(|c| units.units.get(c));
    if let Some(unit) = mem {
        pod.non_zero_requests.memory = round_up(p.non_zero_requests.memory, unit.shift);
    }
    pod
}

/// The cluster and pending pods with every amount rounded as the encoder rounds it
/// (allocatable down, each pod's requests up, in the units of `units`), so that every amount is
/// a multiple of its unit and encoding loses nothing.
pub fn round_to_units(
    state: &ClusterState,
    pending: &[Pod],
    units: &ResourceTable,
) -> (ClusterState, Vec<Pod>) {
    let nodes = state
        .nodes
        .iter()
        .map(|n| {
            let mut node = Node::new(
                n.name.clone(),
                n.labels.clone(),
                round_resource(&n.allocatable, units, false),
            );
            node.taints = n.taints.clone();
            node.unschedulable = n.unschedulable;
            node.images = n.images.clone();
            for pod in &n.pods {
                node.add_pod(Arc::new(round_pod(pod, units)));
            }
            node
        })
        .collect();
    let rounded = ClusterState {
        nodes,
        namespace_labels: state.namespace_labels.clone(),
        pdbs: state.pdbs.clone(),
        claims: state.claims.clone(),
    };
    (rounded, pending.iter().map(|p| round_pod(p, units)).collect())
}

/// Whether a plugin's verdicts or raw scores depend on resource amounts, hence on encoded units.
pub fn unit_dependent(plugin: PluginName) -> bool {
    matches!(plugin, PluginName::NodeResourcesFit | PluginName::NodeResourcesBalancedAllocation)
}

/// Whether encoding rounded some amount of the node or the class.
pub fn inexact(enc: &Encoded, class: usize, node: usize) -> bool {
    enc.tensors.node_flags.get(node).is_some_and(|f| f & NODE_INEXACT_UNITS != 0)
        || enc.tensors.class_flags.get(class).is_some_and(|f| f & CLASS_INEXACT_UNITS != 0)
}

/// The most mismatches [`framework_mismatches`] reports.
const MAX_REPORTED: usize = 20;

/// Runs the framework on each class's representative pod over every node and lists where the
/// matrix disagrees (at most 20 entries; empty when it agrees). `profile` should be a
/// [`matrix_profile`].
pub fn framework_mismatches(
    profile: &Profile,
    state: &ClusterState,
    pending: &[Pod],
    enc: &Encoded,
    m: &Matrix,
    agreement: Agreement,
) -> Result<Vec<String>, FrameworkError> {
    let fw = Framework::new(profile)?;
    let mut out = Vec::new();
    let mut report = |s: String| {
        if out.len() < MAX_REPORTED {
            out.push(s);
        }
    };
    if (m.num_classes, m.num_nodes) != (enc.classes.len(), state.nodes.len()) {
        report(format!("matrix shape {}×{}", m.num_classes, m.num_nodes));
        return Ok(out);
    }
    for (c, class) in enc.classes.classes.iter().enumerate() {
        let Some(pod) = pending.get(class.representative) else {
            report(format!("class {c}: no representative"));
            continue;
        };
        let who = format!("class {c} ({})", pod.key());
        let cs = match fw.pre_filter(pod, state) {
            PreFilterOutcome::Rejected(status) => {
                if m.pre_filter_rejections[c].as_ref() != Some(&status) {
                    report(format!(
                        "{who}: PreFilter rejection {status:?}, matrix {:?}",
                        m.pre_filter_rejections[c]
                    ));
                }
                for n in 0..m.num_nodes {
                    if m.first_failure(c, n) != Some(Check::PreFilterRejected) || m.feasible(c, n) {
                        report(format!("{who}, node {n}: not marked as rejected at PreFilter"));
                    }
                }
                continue;
            }
            PreFilterOutcome::Proceed(cs) => cs,
        };
        if let Some(r) = &m.pre_filter_rejections[c] {
            report(format!("{who}: matrix rejects at PreFilter ({r:?}), the framework does not"));
        }
        let absent_status = Status::new(
            Code::UnschedulableAndUnresolvable,
            [format!(
                "node(s) didn't satisfy plugin(s) [{}]",
                cs.pre_filter_restricting_plugins().join(" ")
            )],
        );
        let mut feasible = Vec::new();
        for (n, node) in state.nodes.iter().enumerate() {
            let absent = cs.node_names().is_some_and(|names| !names.contains(&node.name));
            match agreement {
                Agreement::Exact => {
                    let want =
                        if absent { absent_status.clone() } else { fw.filter(&cs, pod, node) };
                    let got = m.filter_status(c, n);
                    if want != got {
                        report(format!(
                            "{who}, node {}: filter {want:?}, matrix {got:?}",
                            node.name
                        ));
                    }
                    if want.is_success() != m.feasible(c, n) {
                        report(format!("{who}, node {}: feasibility differs", node.name));
                    }
                    if want.is_success() {
                        feasible.push(n);
                    }
                }
                Agreement::UnitIndependent => {
                    let word = m.filter[m.cell(c, n)];
                    if absent != (word & Check::PreFilterAbsent.bit() != 0) {
                        report(format!("{who}, node {}: PreFilter restriction differs", node.name));
                    }
                    if absent {
                        continue;
                    }
                    for (plugin, status) in fw.filter_each(&cs, pod, node) {
                        let checks = Check::of_plugin(plugin);
                        if checks.is_empty() || unit_dependent(plugin) && inexact(enc, c, n) {
                            continue;
                        }
                        let failed = checks.iter().find(|ch| word & ch.bit() != 0);
                        let got = failed
                            .map_or(Status::success().with_plugin(plugin.as_str()), |ch| {
                                m.check_status(c, n, *ch)
                            });
                        let want_ok = status.is_success() || status.code == Code::Skip;
                        if want_ok != got.is_success() || (!want_ok && got != status) {
                            report(format!(
                                "{who}, node {}: {} {status:?}, matrix {got:?}",
                                node.name,
                                plugin.as_str()
                            ));
                        }
                    }
                }
            }
        }
        match agreement {
            Agreement::Exact => {
                if m.feasible_count[c] as usize != feasible.len() {
                    report(format!("{who}: feasible count {}", m.feasible_count[c]));
                }
                compare_scores(&fw, pod, state, m, c, &feasible, &who, &mut report);
            }
            Agreement::UnitIndependent => {
                // Raw scores of every node, except PodTopologySpread's: its weights depend on
                // the scored nodes, so it is compared over the matrix's feasible nodes.
                let all: Vec<usize> = (0..m.num_nodes).collect();
                compare_raw_scores(&fw, pod, state, enc, m, c, &all, false, &who, &mut report);
                let feasible = m.feasible_nodes(c);
                compare_raw_scores(&fw, pod, state, enc, m, c, &feasible, true, &who, &mut report);
            }
        }
    }
    Ok(out)
}

#[allow(clippy::too_many_arguments)]
fn compare_scores(
    fw: &Framework,
    pod: &Pod,
    state: &ClusterState,
    m: &Matrix,
    c: usize,
    feasible: &[usize],
    who: &str,
    report: &mut impl FnMut(String),
) {
    let scores = match fw.score(pod, state, feasible) {
        Err(status) => {
            if m.score_errors[c].as_ref() != Some(&status) {
                report(format!("{who}: score error {status:?}, matrix {:?}", m.score_errors[c]));
            }
            return;
        }
        Ok(s) => s,
    };
    if let Some(e) = &m.score_errors[c] {
        report(format!("{who}: matrix score error {e:?}, the framework has none"));
        return;
    }
    let mut best = i32::MIN;
    for ns in &scores {
        let i = m.cell(c, ns.node);
        let scored: Vec<PluginName> =
            m.scores.iter().filter(|p| !p.skipped[c]).map(|p| p.plugin).collect();
        let framework_scored: Vec<PluginName> = ns.plugins.iter().map(|p| p.plugin).collect();
        if scored != framework_scored {
            report(format!("{who}: scored plugins {framework_scored:?}, matrix {scored:?}"));
        }
        for ps in &ns.plugins {
            let Some(plane) = m.plane(ps.plugin) else { continue };
            let got = (i64::from(plane.raw[i]), i64::from(plane.normalized[i]), plane.weight);
            if got != (ps.raw, ps.normalized, ps.weight) {
                report(format!(
                    "{who}, node {}: {} (raw, normalized, weight) {:?}, matrix {got:?}",
                    ns.node,
                    ps.plugin.as_str(),
                    (ps.raw, ps.normalized, ps.weight)
                ));
            }
        }
        if i64::from(m.total[i]) != ns.total {
            report(format!("{who}, node {}: total {}, matrix {}", ns.node, ns.total, m.total[i]));
        }
        best = best.max(m.total[i]);
    }
    if m.best_total[c] != best {
        report(format!("{who}: best total {best}, matrix {}", m.best_total[c]));
    }
}

#[allow(clippy::too_many_arguments)]
fn compare_raw_scores(
    fw: &Framework,
    pod: &Pod,
    state: &ClusterState,
    enc: &Encoded,
    m: &Matrix,
    c: usize,
    nodes: &[usize],
    spread_only: bool,
    who: &str,
    report: &mut impl FnMut(String),
) {
    let Ok(scores) = fw.score(pod, state, nodes) else {
        // Only NodeAffinity's PreScore fails independently of the nodes.
        if m.score_errors[c].is_none() {
            report(format!("{who}: the framework fails to score, the matrix does not"));
        }
        return;
    };
    for ns in &scores {
        let i = m.cell(c, ns.node);
        for ps in &ns.plugins {
            if unit_dependent(ps.plugin) && inexact(enc, c, ns.node)
                || spread_only != (ps.plugin == PluginName::PodTopologySpread)
            {
                continue;
            }
            let Some(plane) = m.plane(ps.plugin) else { continue };
            if i64::from(plane.raw[i]) != ps.raw {
                report(format!(
                    "{who}, node {}: {} raw {}, matrix {}",
                    ns.node,
                    ps.plugin.as_str(),
                    ps.raw,
                    plane.raw[i]
                ));
            }
        }
    }
}
