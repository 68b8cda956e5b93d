//! Applying the solver's assignment as it is made: the greedy's [`Rescore`] callback adds
//! each placed pod to the working cluster and the plan, moves relocated pods, and re-evaluates
//! the usage-dependent part of a class's score on a node that changed.
//!
//! Input: the tier's matrices, encodings and the solver's class map. Output: the plan's
//! placements and the cluster after them. Upstream counterpart: NodeResourcesFit's and
//! NodeResourcesBalancedAllocation's scores on a node whose usage changed (the rest of a
//! score does not depend on usage).

use super::*;
use crate::eval::cpu::{balanced_score, fit_score};

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
    /// Per group: its resource rows for [`Rescore::refine`] (`None`: no refinement).
    pub(super) rows: Vec<Option<UsageRows<'a>>>,
    /// Per group: the nodes' usage as flat rows for [`Rescore::refine`].
    pub(super) flat: Vec<FlatUsage>,
    /// Per solver class: the summed weights of its resource planes that PreScore did not skip,
    /// as `(NodeResourcesFit, the other)` ([`ResourcePlanes::weights`]).
    pub(super) weights: Vec<(i64, i64)>,
}

/// A group's resource rows in its encoded units, flat ([`UsageRows::columns`] per class or
/// node), for [`Rescore::refine`]: a class's usage-dependent raw scores on a node at its usage
/// now, computed by the same functions as a rescoring ([`fit_score`], [`balanced_score`])
/// without the node's filter word or the matrix views.
#[derive(Debug, Clone, Copy)]
pub(super) struct UsageRows<'a> {
    columns: usize,
    requests: &'a [u32],
    nonzero: &'a [u32],
    allocatable: &'a [u32],
}

/// A group's node usage as flat rows ([`UsageRows`]' columns a node), copied from
/// [`Applier::usage`] when a refinement first reads a node after it changed: refinements visit
/// the changed nodes in order, and these rows (unlike a [`NodeUsage`] per node) lie in order in
/// memory.
#[derive(Debug, Clone, Default)]
pub(super) struct FlatUsage {
    columns: usize,
    /// Per node: whether its rows hold its usage now.
    current: Vec<bool>,
    requested: Vec<u32>,
    nonzero: Vec<u32>,
}

impl FlatUsage {
    /// Rows for `nodes` nodes of the width of `rows` (none current).
    pub(super) fn new(rows: Option<&UsageRows<'_>>, nodes: usize) -> Self {
        let columns = rows.map_or(0, |r| r.columns);
        FlatUsage {
            columns,
            current: vec![false; nodes],
            requested: vec![0; nodes * columns],
            nonzero: vec![0; nodes * columns],
        }
    }

    /// `node`'s requested and non-zero requested rows, when current.
    fn of(&self, node: usize) -> Option<(&[u32], &[u32])> {
        let k = self.columns;
        self.current.get(node)?.then_some(())?;
        Some((
            self.requested.get(node * k..(node + 1) * k)?,
            self.nonzero.get(node * k..(node + 1) * k)?,
        ))
    }

    /// Makes `usage` `node`'s current rows (`None` when it is narrower than the rows).
    fn set(&mut self, node: usize, usage: &NodeUsage) -> Option<()> {
        let k = self.columns;
        let (requested, nonzero) = (usage.requested.get(..k)?, usage.nonzero_requested.get(..k)?);
        self.requested.get_mut(node * k..(node + 1) * k)?.copy_from_slice(requested);
        self.nonzero.get_mut(node * k..(node + 1) * k)?.copy_from_slice(nonzero);
        *self.current.get_mut(node)? = true;
        Some(())
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

    /// Class `c`'s NodeResourcesFit and BalancedAllocation raw scores on `node` at its usage
    /// (`used`, `used_nz`: the node's requested and non-zero requested rows).
    fn scores(
        &self,
        p: &Prepared<'_>,
        c: usize,
        node: usize,
        (used, used_nz): (&[u32], &[u32]),
    ) -> Option<(i32, i32)> {
        let k = self.columns;
        let req = self.requests.get(c * k..(c + 1) * k)?;
        let req_nz = self.nonzero.get(c * k..(c + 1) * k)?;
        let alloc = self.allocatable.get(node * k..(node + 1) * k)?;
        let (used, used_nz) = (used.get(..k)?, used_nz.get(..k)?);
        Some((fit_score(p, req, req_nz, alloc, used, used_nz), balanced_score(p, req, alloc, used)))
    }
}

impl Applier<'_> {
    fn add_to_cluster(&mut self, m: usize, node: usize) {
        self.forget(node);
        let Some(target) = self.cluster.nodes.get_mut(node) else { return };
        let mut pod = self.pending[m].clone();
        pod.node_name = Some(target.name.clone());
        target.add_pod(Arc::new(pod));
    }

    /// Drops the cached usage of a node whose usage changed.
    fn forget(&mut self, node: usize) {
        for g in 0..self.encs.len() {
            if let Some(slot) = self.usage.get_mut(g * self.nodes + node) {
                *slot = None;
            }
            if let Some(current) = self.flat.get_mut(g).and_then(|f| f.current.get_mut(node)) {
                *current = false;
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

    /// Makes group `g`'s flat rows of `node` current (`None` when they cannot be).
    fn refresh_flat(&mut self, g: usize, node: usize) -> Option<()> {
        if *self.flat.get(g)?.current.get(node)? {
            return Some(());
        }
        self.usage_now(g, node)?;
        let usage = self.usage.get(g * self.nodes + node)?.as_ref()?.as_ref()?;
        self.flat.get_mut(g)?.set(node, usage)
    }

    /// [`Rescore::refine`]: the score [`Rescore::rescore`] returns, computed from the group's
    /// flat rows ([`UsageRows`]) by the same functions (`None` where a rescoring would fall
    /// back to the matrix's score).
    fn refined(&mut self, class: usize, node: usize) -> Option<i64> {
        let &(g, c) = self.source.get(class)?;
        let rows = (*self.rows.get(g)?)?;
        self.refresh_flat(g, node)?;
        let prepared = self.prepared.get(g)?;
        let (fit, balanced) = rows.scores(prepared, c, node, self.flat.get(g)?.of(node)?)?;
        self.with_planes(class, node, fit, balanced)
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
        let Some(ids) = self.by_class.get(&self.global[class]) else { return };
        let Some(&g) = ids.iter().rev().find(|&&g| self.greedy_pods[g].node == node) else {
            return;
        };
        let pod = &self.pending[self.greedy_pods[g].member];
        self.forget(node);
        if let Some(s) = self.shrunk.get_mut(node) {
            *s = true;
        }
        if let Some(n) = self.cluster.nodes.get_mut(node) {
            n.remove_pod(&pod.namespace, &pod.name);
        }
        self.moving[class] = Some(g);
    }

    fn rescore(&mut self, class: usize, node: usize, _free: &[i64]) -> i64 {
        let cell = class * self.nodes + node;
        let Some(&(g, c)) = self.source.get(class) else { return 0 };
        // The usage-dependent cell from the incremental entry point of evaluation (the CPU
        // twin; every backend's cells are equal).
        self.usage_now(g, node);
        let rescored = self
            .cached_usage(g, node)
            .and_then(|usage| columns::cell_cpu(&self.prepared[g], usage, 0, c))
            .and_then(|(_, fit, balanced)| self.with_planes(class, node, fit, balanced))
            .unwrap_or_else(|| i64::from(self.score.get(cell).copied().unwrap_or(0)));
        #[cfg(test)]
        if let Some(refined) = self.refined(class, node) {
            assert_eq!(rescored, refined, "class {class} on node {node}");
        }
        rescored
    }

    fn refine(&mut self, class: usize, node: usize, _free: &[i64]) -> i64 {
        #[cfg(test)]
        if !BOUNDS.get() {
            return i64::MAX;
        }
        self.refined(class, node).unwrap_or(i64::MAX)
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

        /// On any node usage and under every scoring strategy, the flat rows' NodeResourcesFit
        /// and BalancedAllocation raw scores ([`Rescore::refine`]'s) equal the evaluator's cell
        /// (a rescoring's).
        #[test]
        fn flat_rows_score_a_cell_as_the_evaluator_does(
            node in (1u32..64, 1u64..256, 0u32..64, 0u64..256, 0i64..4),
            pods in proptest::collection::vec((0u32..8000, 0u64..8192, 0i64..3), 1..4),
        ) {
            let (cpu, mem, used_cpu, used_mem, gpus) = node;
            let nodes = vec![NodeBuilder::new("n")
                .cpu(i64::from(cpu) * 250)
                .memory(mem as i64 * GI / 4)
                .pods(110)
                .scalar("example.com/gpu", gpus)
                .obj()];
            let bound = vec![PodBuilder::new("d", "used")
                .cpu(i64::from(used_cpu) * 250)
                .memory(used_mem as i64 * GI / 4)
                .node("n")
                .obj()];
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
                let usage = NodeUsage::of(&enc, &state, &[0]).expect("usage");
                let rows = UsageRows::of(&p).expect("flat rows");
                for c in 0..p.num_classes {
                    let (_, fit, balanced) = cell_cpu(&p, &usage, 0, c).expect("cell");
                    let mut flat = FlatUsage::new(Some(&rows), 1);
                    prop_assert_eq!(flat.set(0, &usage), Some(()));
                    let used = flat.of(0).expect("current rows");
                    prop_assert_eq!(rows.scores(&p, c, 0, used), Some((fit, balanced)), "{} class {}", name, c);
                }
            }
        }
    }
}
