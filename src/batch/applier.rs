//! Applying the solver's assignment as it is made: the greedy's [`Rescore`] callback adds
//! each placed pod to the working cluster and the plan, moves relocated pods, and re-evaluates
//! the usage-dependent part of a class's score on a node that changed.
//!
//! Input: the tier's matrices, encodings and the solver's class map. Output: the plan's
//! placements and the cluster after them. Upstream counterpart: NodeResourcesFit's and
//! NodeResourcesBalancedAllocation's scores on a node whose usage changed (the rest of a
//! score does not depend on usage).

use super::*;
use crate::eval::cpu::resource_rows::ResourceSoa;
use crate::eval::cpu::{InstructionSet, resource_rows};

/// The usage-dependent score planes of a matrix (NodeResourcesFit and
/// NodeResourcesBalancedAllocation: neither normalizes, so their raw score is their final one):
/// their weights and, per class, whether PreScore skipped them.
#[derive(Debug, Clone)]
pub(super) struct ResourcePlanes {
    /// `(plane index in the matrix, weight, per class skipped)`.
    pub(super) planes: Vec<(usize, i64, Vec<bool>)>,
    /// Which [`crate::eval::columns::ResourceColumns`] plane each entry of `planes` reads: NodeResourcesFit or not.
    pub(super) is_fit: Vec<bool>,
}

impl ResourcePlanes {
    pub(super) fn of(m: &LeanMatrix) -> Self {
        let mut planes = Vec::new();
        let mut is_fit = Vec::new();
        for (i, plane) in m.planes.iter().enumerate() {
            if is_resource_score(plane.plugin) {
                planes.push((i, plane.weight, plane.skipped.clone()));
                is_fit.push(plane.plugin == PluginName::NodeResourcesFit);
            }
        }
        ResourcePlanes { planes, is_fit }
    }

    /// The weighted sum over the planes of `value(plane)` for class `c` (skipped planes count 0).
    #[cfg(test)]
    pub(super) fn part(
        &self,
        m: &LeanMatrix,
        c: usize,
        value: impl Fn(&crate::eval::LeanPlane) -> i64,
    ) -> i64 {
        self.planes
            .iter()
            .filter(|(_, _, skipped)| !skipped.get(c).copied().unwrap_or(false))
            .map(|&(i, weight, _)| weight * value(&m.planes[i]))
            .sum()
    }

    /// The most the usage-dependent part of class `c`'s score can be, as `(fit weight, rest)`:
    /// at most `fit weight × NodeResourcesFit's raw score at the tier's start + rest` on a node
    /// whose usage only grew since. Every plane's raw score is at most [`MAX_NODE_SCORE`], and
    /// with `monotone` (LeastAllocated) NodeResourcesFit's only falls as usage grows; otherwise
    /// the fit weight is 0 and its plane counts in the rest.
    pub(super) fn max_part(&self, c: usize, monotone: bool) -> (i64, i64) {
        let (mut fit_weight, mut rest) = (0, 0);
        for (&(_, weight, ref skipped), &fit) in self.planes.iter().zip(&self.is_fit) {
            if skipped.get(c).copied().unwrap_or(false) {
                continue;
            }
            if fit && monotone {
                fit_weight += weight.max(0);
            } else {
                rest += weight.max(0) * MAX_NODE_SCORE;
            }
        }
        (fit_weight, rest)
    }

    /// The summed weights of class `c`'s NodeResourcesFit planes and of its other resource
    /// planes, skipped planes left out: [`ResourcePlanes::updated`] is
    /// `fit weight × fit raw + other weight × balanced raw`.
    pub(super) fn weights(&self, c: usize) -> (i64, i64) {
        let (mut fit_weight, mut other) = (0, 0);
        for (&(_, weight, ref skipped), &fit) in self.planes.iter().zip(&self.is_fit) {
            if skipped.get(c).copied().unwrap_or(false) {
                continue;
            }
            if fit {
                fit_weight += weight;
            } else {
                other += weight;
            }
        }
        (fit_weight, other)
    }

    /// The weighted sum for class `c` of an update's NodeResourcesFit and
    /// NodeResourcesBalancedAllocation raw scores (what [`Applier`] adds to a cell's static
    /// part, from the same weights).
    #[cfg(test)]
    pub(super) fn updated(&self, c: usize, fit_raw: i32, balanced_raw: i32) -> i64 {
        let (fit_weight, other_weight) = self.weights(c);
        fit_weight * i64::from(fit_raw) + other_weight * i64::from(balanced_raw)
    }
}

/// The greedy's callback: adds each placed pod to the working cluster and the plan, moves
/// relocated pods (in the cluster and in their plan entry), and recomputes the usage-dependent
/// part of a class's score on a node that changed.
pub(super) struct Applier<'a> {
    pub(super) cluster: &'a mut ClusterState,
    pub(super) plan: &'a mut Plan,
    pub(super) greedy_pods: &'a mut Vec<GreedyPod>,
    pub(super) by_class: &'a mut BTreeMap<usize, Vec<usize>>,
    pub(super) pending: &'a [Pod],
    /// Per pending pod, the copy the working cluster holds once placed ([`Run::shared`]).
    pub(super) shared: &'a mut [Option<Arc<Pod>>],
    /// Solver class → class.
    pub(super) global: &'a [usize],
    /// Per solver class, its pods in queue order.
    pub(super) members: &'a [&'a [usize]],
    /// Per solver class, how many of its pods this solve placed.
    pub(super) next: Vec<usize>,
    /// Per solver class, the pod (index in `greedy_pods`) relocation just took off a node.
    pub(super) moving: Vec<Option<usize>>,
    /// Whether anything was placed or moved.
    pub(super) changed: bool,
    /// `(solver class, pending index)` of the pods a trade or substitution took out of the plan again
    /// ([`Rescore::dropped`]); their plan entries are left empty until the tier ends
    /// ([`super::run`] compacts the plan).
    pub(super) dropped: Vec<(usize, usize)>,
    /// Per solver class × node, NodeResourcesFit's raw score at the tier's start ([`NO_RAW`]:
    /// not known; the cell keeps the matrix's score).
    pub(super) fit_start: &'a [u8],
    /// Per solver class × node, BalancedAllocation's raw score at the tier's start.
    pub(super) balanced_start: &'a [u8],
    /// Per node, whether relocation took a pod off it (its usage may be below the tier
    /// start's, so [`Applier::fit_start`] bounds nothing there).
    pub(super) shrunk: Vec<bool>,
    /// Per solver class × node, the score before any change (used if an update fails, and
    /// less the tier-start raw scores, the part that does not depend on usage).
    pub(super) score: &'a [i32],
    pub(super) nodes: usize,
    /// Per scheduler-name group: the encoding and prepared profile of its matrix.
    pub(super) encs: &'a [Encoded],
    pub(super) prepared: &'a [Prepared<'a>],
    /// Per solver class: its group and class in that group's matrix.
    pub(super) source: &'a [(usize, usize)],
    /// Per solver class: [`ResourcePlanes::max_part`] (for [`Rescore::bound`]).
    pub(super) max_part: Vec<(i64, i64)>,
    /// Per group × node (`g * nodes + node`), once asked for since the node last changed: the
    /// node's usage in the group's units (`None` when it no longer fits them). A class's
    /// usage-dependent score there is computed from it when the solver asks for that cell, so
    /// a change costs the cells of the classes still placing, not a column of every class.
    pub(super) usage: Vec<Option<Option<NodeUsage>>>,
    /// Per group: its resource rows for [`UsageColumns`] (`None`: rows are rescored node by node).
    pub(super) rows: Vec<Option<UsageRows<'a>>>,
    /// Per group: its resource columns over every node for [`Rescore::rescore_row`].
    pub(super) columns: Vec<UsageColumns>,
    /// Per solver class: the summed weights of its resource planes that PreScore did not skip,
    /// as `(NodeResourcesFit, the other)` ([`ResourcePlanes::weights`]).
    pub(super) weights: Vec<(i64, i64)>,
}

/// A group's resource rows in its encoded units, flat ([`UsageRows::columns`] per class or
/// node): the classes' requests and the nodes' allocatable amounts that
/// [`UsageColumns`] scores from.
#[derive(Debug, Clone, Copy)]
pub(super) struct UsageRows<'a> {
    columns: usize,
    requests: &'a [u32],
    nonzero: &'a [u32],
    allocatable: &'a [u32],
}

/// A group's resource columns of the nodes whose usage changed, column-major as the row
/// evaluator lays them out ([`ResourceSoa`], in room for every node), for
/// [`Rescore::rescore_row`]: a node gets the next slot when its usage is first copied, with its
/// allocatable amounts from [`UsageRows`], then its usage now, copied from [`Applier::usage`]
/// before a row is scored. The kernels run over the slots alone: an unchanged node's score is
/// the matrix's. Also the kernels' output, per slot.
#[derive(Debug, Clone, Default)]
pub(super) struct UsageColumns {
    nodes: usize,
    /// Resources per node.
    width: usize,
    /// Per slot, column-major with stride `nodes`.
    alloc: Vec<u32>,
    used: Vec<u32>,
    used_nz: Vec<u32>,
    /// Per node: its slot ([`NO_SLOT`] before its usage is first copied).
    slot: Vec<u32>,
    /// Per slot: its node.
    slot_node: Vec<u32>,
    /// Per node: whether its slot holds its usage now.
    current: Vec<bool>,
    /// Nodes whose usage changed since their entries were last copied (repeats possible).
    stale: Vec<usize>,
    /// NodeResourcesFit's and BalancedAllocation's raw scores of the last row scored, per slot.
    fit: Vec<i32>,
    balanced: Vec<i32>,
    weight_sum: Vec<i32>,
    /// The instruction set the kernels run ([`InstructionSet::current`] when built).
    simd: InstructionSet,
}

/// [`UsageColumns::slot`] of a node without one.
const NO_SLOT: u32 = u32::MAX;

impl UsageColumns {
    /// Columns for `nodes` nodes of `rows`' width, no slot taken (`None`: no columns, and no
    /// row is scored).
    pub(super) fn new(rows: Option<&UsageRows<'_>>, nodes: usize) -> Self {
        let Some(rows) = rows else { return UsageColumns::default() };
        let k = rows.columns;
        UsageColumns {
            nodes,
            width: k,
            alloc: vec![0; k * nodes],
            used: vec![0; k * nodes],
            used_nz: vec![0; k * nodes],
            slot: vec![NO_SLOT; nodes],
            current: vec![false; nodes],
            simd: InstructionSet::current(),
            ..UsageColumns::default()
        }
    }

    /// Makes `usage` (one node's, at least as wide as the columns) `node`'s usage entries, in
    /// its slot (the next one, with its allocatable amounts from `rows`, the first time).
    fn set(&mut self, node: usize, usage: &NodeUsage, rows: &UsageRows<'_>) {
        let (n, k) = (self.nodes, self.width);
        let Some(allocatable) = rows.allocatable.get(node * k..(node + 1) * k) else { return };
        if node >= n || usage.requested.len() < k || usage.nonzero_requested.len() < k {
            return;
        }
        let slot = match self.slot[node] {
            NO_SLOT => {
                let slot = self.slot_node.len();
                for (j, &a) in allocatable.iter().enumerate() {
                    self.alloc[j * n + slot] = a;
                }
                self.slot[node] = slot as u32;
                self.slot_node.push(node as u32);
                slot
            }
            slot => slot as usize,
        };
        for j in 0..k {
            self.used[j * n + slot] = usage.requested[j];
            self.used_nz[j * n + slot] = usage.nonzero_requested[j];
        }
        self.current[node] = true;
    }

    /// Runs the resource kernels for class `c` of a group (`p`, `rows`) across the slots into
    /// [`UsageColumns::fit`] and [`UsageColumns::balanced`]: false when they do not score the
    /// class (more resources than they hold) or the columns are missing.
    fn score(&mut self, p: &Prepared<'_>, rows: &UsageRows<'_>, c: usize) -> bool {
        let (k, n) = (rows.columns, self.nodes);
        let (Some(req), Some(req_nz)) =
            (rows.requests.get(c * k..(c + 1) * k), rows.nonzero.get(c * k..(c + 1) * k))
        else {
            return false;
        };
        if self.alloc.len() != k * n || self.current.len() != n || self.slot.len() != n {
            return false;
        }
        let len = self.slot_node.len();
        let (alloc, used, used_nz) = (&self.alloc, &self.used, &self.used_nz);
        let cols = ResourceSoa { len, stride: n, alloc, used, used_nz };
        self.fit.resize(len, 0);
        self.balanced.resize(len, 0);
        let (fit, balanced, weight_sum) = (&mut self.fit, &mut self.balanced, &mut self.weight_sum);
        resource_rows(self.simd, p, req, req_nz, &cols, fit, balanced, weight_sum)
    }
}

impl<'a> UsageRows<'a> {
    /// `prepared`'s rows (`None` when a tensor is not laid out flat or the widths differ).
    pub(super) fn of(prepared: &Prepared<'a>) -> Option<Self> {
        let t = &prepared.enc.tensors;
        let columns = t.class_requests.ncols();
        (columns == t.node_allocatable.ncols() && columns == t.class_nonzero_requests.ncols())
            .then_some(())?;
        Some(UsageRows {
            columns,
            requests: t.class_requests.as_slice()?,
            nonzero: t.class_nonzero_requests.as_slice()?,
            allocatable: t.node_allocatable.as_slice()?,
        })
    }
}

impl Applier<'_> {
    /// Adds pending pod `m` to `node` in the working cluster. The copy is made the first time
    /// the pod is placed and shared from then on (by later moves and strategies), so its
    /// `node_name` stays unset: the node that holds a pod is its node, and no stage of a plan
    /// reads a placed pod's `node_name`.
    fn add_to_cluster(&mut self, m: usize, node: usize) {
        self.forget(node);
        let pending = self.pending;
        let (Some(target), Some(shared)) =
            (self.cluster.nodes.get_mut(node), self.shared.get_mut(m))
        else {
            return;
        };
        let pod = shared.get_or_insert_with(|| Arc::new(pending[m].clone()));
        target.add_pod(Arc::clone(pod));
    }

    /// Drops the cached usage of a node whose usage changed.
    fn forget(&mut self, node: usize) {
        for g in 0..self.encs.len() {
            if let Some(slot) = self.usage.get_mut(g * self.nodes + node) {
                *slot = None;
            }
            if let Some(cols) = self.columns.get_mut(g)
                && let Some(current) = cols.current.get_mut(node)
            {
                *current = false;
                cols.stale.push(node);
            }
        }
    }

    /// The usage of `node` now in group `g`'s units, computed once after each change (`None`
    /// when it no longer fits them).
    fn usage_now(&mut self, g: usize, node: usize) -> Option<&NodeUsage> {
        let slot = g * self.nodes + node;
        if self.usage.get(slot)?.is_none() {
            self.usage[slot] = Some(self.node_usage(g, node));
        }
        self.cached_usage(g, node)
    }

    /// The usage of `node` in group `g`'s units as [`Applier::usage_now`] last computed it.
    fn cached_usage(&self, g: usize, node: usize) -> Option<&NodeUsage> {
        self.usage.get(g * self.nodes + node)?.as_ref()?.as_ref()
    }

    /// The part of class `class`'s score on `node` that does not depend on usage, and the
    /// cell's tier-start NodeResourcesFit raw score: the matrix's score less the planes'
    /// weights ([`ResourcePlanes::weights`]) times their tier-start raw scores (`None` where
    /// those are not known, [`NO_RAW`]).
    fn static_part(&self, class: usize, node: usize) -> Option<(i64, u8)> {
        let cell = class * self.nodes + node;
        let fit0 = *self.fit_start.get(cell)?;
        if fit0 == NO_RAW {
            return None;
        }
        let (score, balanced0) = (*self.score.get(cell)?, *self.balanced_start.get(cell)?);
        let &(fit_weight, other_weight) = self.weights.get(class)?;
        let part = fit_weight * i64::from(fit0) + other_weight * i64::from(balanced0);
        Some((i64::from(score) - part, fit0))
    }

    /// Class `class`'s score on `node` from its usage-dependent raw scores: the cell's static
    /// part plus the planes' weights ([`ResourcePlanes::weights`]) times the raw scores (`None`
    /// where the cell has no static part).
    fn with_planes(&self, class: usize, node: usize, fit: i32, balanced: i32) -> Option<i64> {
        let (fixed, _) = self.static_part(class, node)?;
        let &(fit_weight, other_weight) = self.weights.get(class)?;
        Some(fixed + fit_weight * i64::from(fit) + other_weight * i64::from(balanced))
    }

    /// Copies the usage now of group `g`'s changed nodes (resource rows `rows`) into its
    /// columns.
    fn refresh_columns(&mut self, g: usize, rows: &UsageRows<'_>) {
        let Some(cols) = self.columns.get_mut(g) else { return };
        let mut stale = std::mem::take(&mut cols.stale);
        for node in stale.drain(..) {
            if self.columns[g].current.get(node).copied().unwrap_or(true) {
                continue; // A repeat, already copied.
            }
            self.usage_now(g, node);
            if let Some(Some(Some(usage))) = self.usage.get(g * self.nodes + node) {
                self.columns[g].set(node, usage, rows);
            }
        }
        self.columns[g].stale = stale;
    }

    /// The usage of `node` now, in group `g`'s units (checked against its evaluation).
    fn node_usage(&self, g: usize, node: usize) -> Option<NodeUsage> {
        let usage = NodeUsage::of(&self.encs[g], self.cluster, &[node])
            .and_then(|u| u.validate(&self.prepared[g]).map(|()| u));
        match usage {
            Ok(u) => Some(u),
            Err(e) => {
                tracing::warn!(
                    "re-evaluating node {node} failed ({e}); its scores stay as they were"
                );
                None
            }
        }
    }

    /// Takes the latest greedy pod of solver class `class` on `node` off the working cluster
    /// (relocation's move, or a drop by a trade or substitution): its position in its class's list and its index
    /// in `greedy_pods`.
    fn lift(&mut self, class: usize, node: usize) -> Option<(usize, usize)> {
        let ids = self.by_class.get(self.global.get(class)?)?;
        let pos = ids.iter().rposition(|&g| self.greedy_pods[g].node == node)?;
        let g = ids[pos];
        let pod = &self.pending[self.greedy_pods[g].member];
        self.forget(node);
        if let Some(s) = self.shrunk.get_mut(node) {
            *s = true;
        }
        if let Some(n) = self.cluster.nodes.get_mut(node) {
            n.remove_pod(&pod.namespace, &pod.name);
        }
        Some((pos, g))
    }

    fn node_name(&self, node: usize) -> String {
        self.cluster.nodes.get(node).map(|n| n.name.clone()).unwrap_or_default()
    }
}

impl Rescore for Applier<'_> {
    fn placed(&mut self, class: usize, node: usize) {
        self.changed = true;
        let name = self.node_name(node);
        if let Some(g) = self.moving.get_mut(class).and_then(Option::take) {
            let gp = &mut self.greedy_pods[g];
            gp.node = node;
            if let Some(entry) = self.plan.placements.get_mut(gp.plan_index) {
                entry.node = name;
            }
            let member = gp.member;
            self.add_to_cluster(member, node);
            return;
        }
        let Some(next) = self.next.get_mut(class) else { return };
        let Some(&m) = self.members.get(class).and_then(|ms| ms.get(*next)) else { return };
        *next += 1;
        let g = self.greedy_pods.len();
        self.greedy_pods.push(GreedyPod {
            member: m,
            node,
            plan_index: self.plan.placements.len(),
        });
        self.plan.placements.push(Placement { pod: self.pending[m].key(), node: name });
        self.by_class.entry(self.global[class]).or_default().push(g);
        self.add_to_cluster(m, node);
    }

    fn removed(&mut self, class: usize, node: usize) {
        if let Some((_, g)) = self.lift(class, node) {
            self.moving[class] = Some(g);
        }
    }

    fn dropped(&mut self, class: usize, node: usize) {
        self.changed = true;
        let Some((pos, g)) = self.lift(class, node) else { return };
        if let Some(ids) = self.by_class.get_mut(&self.global[class]) {
            ids.remove(pos);
        }
        let gp = self.greedy_pods[g];
        if let Some(entry) = self.plan.placements.get_mut(gp.plan_index) {
            entry.pod.clear();
            entry.node.clear();
        }
        self.greedy_pods[g].node = usize::MAX;
        self.greedy_pods[g].plan_index = usize::MAX;
        self.dropped.push((class, gp.member));
    }

    fn rescore(&mut self, class: usize, node: usize, _free: &[i64]) -> i64 {
        let cell = class * self.nodes + node;
        let Some(&(g, c)) = self.source.get(class) else { return 0 };
        // The usage-dependent cell from the incremental entry point of evaluation (the CPU
        // twin; every backend's cells are equal).
        self.usage_now(g, node);
        self.cached_usage(g, node)
            .and_then(|usage| columns::cell_cpu(&self.prepared[g], usage, 0, c))
            .and_then(|(_, fit, balanced)| self.with_planes(class, node, fit, balanced))
            .unwrap_or_else(|| i64::from(self.score.get(cell).copied().unwrap_or(0)))
    }

    /// The row: the matrix's scores, and on the changed nodes the resource kernels of the row
    /// evaluator (`eval::cpu::resource_rows`) run across the group's columns of changed nodes
    /// ([`UsageColumns`]): a changed node's score is its static part plus the planes' weights
    /// times the kernels' raw scores, as a rescoring computes it from the same functions' cell
    /// twins (the tests compare every one); a node the columns cannot score (no static part,
    /// or a usage that no longer fits the group's units) is rescored alone.
    fn rescore_row(
        &mut self,
        class: usize,
        version: &[u64],
        _free: &[i64],
        _width: usize,
        out: &mut Vec<i64>,
    ) -> bool {
        #[cfg(test)]
        if !BOUNDS.get() {
            return false;
        }
        let Some(&(g, c)) = self.source.get(class) else { return false };
        let (Some(rows), Some(&(fit_weight, other_weight))) =
            (self.rows.get(g).copied().flatten(), self.weights.get(class))
        else {
            return false;
        };
        let prepared: &[Prepared<'_>] = self.prepared;
        let Some(p) = prepared.get(g) else { return false };
        self.refresh_columns(g, &rows);
        let mut cols = std::mem::take(&mut self.columns[g]);
        let n = self.nodes;
        let row = class * n..(class + 1) * n;
        let (score, fit0, balanced0): (&[i32], &[u8], &[u8]) =
            (self.score, self.fit_start, self.balanced_start);
        let scored = version.len() == n && cols.score(p, &rows, c);
        let start = out.len();
        if scored
            && let (Some(score), Some(fit0), Some(balanced0)) =
                (score.get(row.clone()), fit0.get(row.clone()), balanced0.get(row))
        {
            // The matrix's row, then each changed node from its slot, or rescored alone where
            // the columns cannot score it.
            out.extend(score.iter().map(|&s| i64::from(s)));
            for (node, _) in version.iter().enumerate().filter(|&(_, &v)| v != 0) {
                let slot = cols.slot[node] as usize;
                let from_columns = cols.current[node] && fit0[node] != NO_RAW;
                out[start + node] = match (cols.fit.get(slot), cols.balanced.get(slot)) {
                    (Some(&f), Some(&b)) if from_columns => {
                        let then = fit_weight * i64::from(fit0[node])
                            + other_weight * i64::from(balanced0[node]);
                        let now = fit_weight * i64::from(f) + other_weight * i64::from(b);
                        i64::from(score[node]) - then + now
                    }
                    _ => self.rescore(class, node, &[]),
                };
            }
            #[cfg(test)]
            for node in (0..n).filter(|&node| version[node] != 0) {
                let want = self.rescore(class, node, &[]);
                assert_eq!(out[start + node], want, "class {class} on node {node}");
            }
        }
        self.columns[g] = cols;
        scored && out.len() == start + n
    }

    /// The static part plus the most the resource planes can add now ([`ResourcePlanes::max_part`];
    /// at least the matrix's score, which a failed update returns).
    fn bound(&mut self, class: usize, node: usize) -> i64 {
        #[cfg(test)]
        if !BOUNDS.get() {
            return i64::MAX;
        }
        let (Some(&(fit_weight, rest)), Some(&score), Some(&shrunk)) = (
            self.max_part.get(class),
            self.score.get(class * self.nodes + node),
            self.shrunk.get(node),
        ) else {
            return i64::MAX;
        };
        let Some((fixed, fit0)) = self.static_part(class, node) else {
            return i64::from(score);
        };
        let fit = if shrunk { MAX_NODE_SCORE } else { i64::from(fit0) };
        (fixed + fit_weight * fit + rest).max(i64::from(score))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::encode;
    use crate::eval::columns::cell_cpu;
    use crate::framework::profile::Profile;
    use crate::model::testing::{GI, MI, NodeBuilder, PodBuilder, cluster};
    use proptest::prelude::*;

    /// The default profile, MostAllocated, and RequestedToCapacityRatio with a scalar resource
    /// and three balanced resources (the general deviation).
    fn profiles() -> Vec<(&'static str, Profile)> {
        use crate::framework::args::{ScoringStrategyType, UtilizationShapePoint};
        let default = Profile::default_profile();
        let mut most = default.clone();
        most.args.node_resources_fit.scoring_strategy.kind = ScoringStrategyType::MostAllocated;
        let mut ratio = default.clone();
        let strategy = &mut ratio.args.node_resources_fit.scoring_strategy;
        strategy.kind = ScoringStrategyType::RequestedToCapacityRatio;
        strategy.shape = vec![
            UtilizationShapePoint { utilization: 0, score: 10 },
            UtilizationShapePoint { utilization: 100, score: 0 },
        ];
        let gpu = |weight| crate::framework::args::ResourceSpec {
            name: "example.com/gpu".into(),
            weight,
        };
        strategy.resources.push(gpu(3));
        ratio.args.balanced_allocation.resources.push(gpu(1));
        vec![("default", default), ("MostAllocated", most), ("ratio and a scalar", ratio)]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// On any node usage and under every scoring strategy, the resource kernels'
        /// NodeResourcesFit and BalancedAllocation raw scores on a group's columns
        /// ([`Rescore::rescore_row`]'s) equal the evaluator's cell (a rescoring's).
        #[test]
        fn resource_columns_score_a_cell_as_the_evaluator_does(
            specs in proptest::collection::vec((1u32..64, 1u64..256, 0u32..64, 0u64..256, 0i64..4), 1..5),
            pods in proptest::collection::vec((0u32..8000, 0u64..8192, 0i64..3), 1..4),
        ) {
            let mut nodes = Vec::new();
            let mut bound = Vec::new();
            for (i, &(cpu, mem, used_cpu, used_mem, gpus)) in specs.iter().enumerate() {
                let name = format!("n{i}");
                nodes.push(NodeBuilder::new(&name)
                    .cpu(i64::from(cpu) * 250)
                    .memory(mem as i64 * GI / 4)
                    .pods(110)
                    .scalar("example.com/gpu", gpus)
                    .obj());
                bound.push(PodBuilder::new("d", &format!("used{i}"))
                    .cpu(i64::from(used_cpu) * 250)
                    .memory(used_mem as i64 * GI / 4)
                    .node(&name)
                    .obj());
            }
            let pending: Vec<_> = pods
                .iter()
                .enumerate()
                .map(|(i, &(c, m, g))| {
                    let mut b = PodBuilder::new("d", &format!("p{i}")).cpu(i64::from(c)).memory(m as i64 * MI);
                    if g > 0 {
                        b = b.scalar("example.com/gpu", g);
                    }
                    b.obj()
                })
                .collect();
            let state = cluster(nodes, bound);
            for (name, profile) in profiles() {
                let enc = encode(&state, &pending).expect("encodes");
                let p = Prepared::new(&profile, &state, &pending, &enc).expect("prepares");
                let rows = UsageRows::of(&p).expect("flat rows");
                let n = specs.len();
                let mut cols = UsageColumns::new(Some(&rows), n);
                let usage: Vec<NodeUsage> =
                    (0..n).map(|i| NodeUsage::of(&enc, &state, &[i]).expect("usage")).collect();
                // Slots taken last node first, the first node's usage set twice.
                for (i, u) in usage.iter().enumerate().rev().chain(usage.iter().enumerate().take(1)) {
                    cols.set(i, u, &rows);
                }
                prop_assert_eq!(&cols.current, &vec![true; n]);
                prop_assert_eq!(cols.slot_node.len(), n);
                for c in 0..p.num_classes {
                    prop_assert!(cols.score(&p, &rows, c), "{} class {}", name, c);
                    for (i, u) in usage.iter().enumerate() {
                        let (_, fit, balanced) = cell_cpu(&p, u, 0, c).expect("cell");
                        let slot = cols.slot[i] as usize;
                        prop_assert_eq!((cols.fit[slot], cols.balanced[slot]), (fit, balanced), "{} class {} node {}", name, c, i);
                    }
                }
            }
        }
    }
}
