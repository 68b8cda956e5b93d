//! Applying the solver's assignment as it is made: the greedy's [`Rescore`] callback adds
//! each placed pod to the working cluster and the plan, moves relocated pods, and re-evaluates
//! the usage-dependent part of a class's score on a node that changed.
//!
//! Input: the tier's matrices, encodings and the solver's class map. Output: the plan's
//! placements and the cluster after them. Upstream counterpart: NodeResourcesFit's and
//! NodeResourcesBalancedAllocation's scores on a node whose usage changed (the rest of a
//! score does not depend on usage).

use super::*;

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
    /// NodeResourcesBalancedAllocation raw scores.
    pub(super) fn updated(&self, c: usize, fit_raw: i32, balanced_raw: i32) -> i64 {
        self.planes
            .iter()
            .zip(&self.is_fit)
            .filter(|((_, _, skipped), _)| !skipped.get(c).copied().unwrap_or(false))
            .map(|(&(_, weight, _), &fit)| {
                weight * i64::from(if fit { fit_raw } else { balanced_raw })
            })
            .sum()
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
    /// Per solver class × node, the part of the score that does not depend on usage
    /// ([`NO_STATIC_PART`]: none; the matrix's score stays).
    pub(super) static_part: &'a [i32],
    /// Per solver class × node, NodeResourcesFit's raw score at the tier's start.
    pub(super) fit_start: &'a [u8],
    /// Per node, whether relocation took a pod off it (its usage may be below the tier
    /// start's, so [`Applier::fit_start`] bounds nothing there).
    pub(super) shrunk: Vec<bool>,
    /// Per solver class × node, the score before any change (used if an update fails).
    pub(super) score: &'a [i64],
    pub(super) nodes: usize,
    /// Per scheduler-name group: the encoding and prepared profile of its matrix.
    pub(super) encs: &'a [Encoded],
    pub(super) prepared: &'a [Prepared<'a>],
    /// Per solver class: its group and class in that group's matrix.
    pub(super) source: &'a [(usize, usize)],
    /// Per group: the usage-dependent score planes.
    pub(super) resource_planes: &'a [ResourcePlanes],
    /// Per solver class: [`ResourcePlanes::max_part`] (for [`Rescore::bound`]).
    pub(super) max_part: Vec<(i64, i64)>,
    /// Per group × node (`g * nodes + node`), once asked for since the node last changed: the
    /// node's usage in the group's units (`None` when it no longer fits them). A class's
    /// usage-dependent score there is computed from it when the solver asks for that cell, so
    /// a change costs the cells of the classes still placing, not a column of every class.
    pub(super) usage: Vec<Option<Option<NodeUsage>>>,
    /// Per group × node, like `usage`: the last cell rescored there since the node last
    /// changed ([`Reference`]), which bounds the other classes' cells on the node
    /// ([`Rescore::refine`]).
    pub(super) reference: Vec<Reference>,
    /// Per group: what bounds its cells from a reference ([`Refinable::of`]; `None`: nothing).
    pub(super) refinable: Vec<Option<Refinable<'a>>>,
    /// Per solver class: the summed weights of its resource planes that PreScore did not skip,
    /// as `(NodeResourcesFit, the other)` ([`ResourcePlanes::weights`]).
    pub(super) weights: Vec<(i64, i64)>,
}

/// A group's amounts in its encoded units, as flat rows of [`Refinable::columns`].
#[derive(Debug, Clone, Copy)]
pub(super) struct Refinable<'a> {
    columns: usize,
    requests: &'a [u32],
    nonzero: &'a [u32],
    allocatable: &'a [u32],
}

impl<'a> Refinable<'a> {
    /// Group `prepared`'s cells can be bounded from a reference under NodeResourcesFit's
    /// LeastAllocated strategy with no resource plane of negative weight.
    pub(super) fn of(prepared: &Prepared<'a>, planes: &ResourcePlanes) -> Option<Self> {
        if prepared.fit_strategy != STRATEGY_LEAST_ALLOCATED
            || planes.planes.iter().any(|&(_, weight, _)| weight < 0)
        {
            return None;
        }
        let t = &prepared.enc.tensors;
        Some(Refinable {
            columns: t.class_requests.ncols(),
            requests: t.class_requests.as_slice()?,
            nonzero: t.class_nonzero_requests.as_slice()?,
            allocatable: t.node_allocatable.as_slice()?,
        })
        .filter(|r| r.columns == t.node_allocatable.ncols())
    }

    /// [`refinement`] of class `c` against class `c0` on `node`.
    fn of_classes(&self, c: usize, c0: usize, node: usize) -> Option<(i32, i32)> {
        let k = self.columns;
        refinement(
            self.requests.get(c * k..(c + 1) * k)?,
            self.nonzero.get(c * k..(c + 1) * k)?,
            self.requests.get(c0 * k..(c0 + 1) * k)?,
            self.nonzero.get(c0 * k..(c0 + 1) * k)?,
            self.allocatable.get(node * k..(node + 1) * k)?,
        )
    }
}

/// A class's usage-dependent raw scores on a node at the node's usage now: NodeResourcesFit's
/// and NodeResourcesBalancedAllocation's (class [`Reference::NONE`]: none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Reference {
    /// The class in its group's matrix.
    pub(super) class: u32,
    pub(super) fit: i32,
    pub(super) balanced: i32,
}

impl Reference {
    pub(super) const NONE: Reference = Reference { class: u32::MAX, fit: 0, balanced: 0 };
}

/// `⌈d · 100 / a⌉` for `a > 0`, at most 100 (a larger step leaves no bound below
/// [`MAX_NODE_SCORE`] anyway), exactly: `d · 100 < 2^53` is exact in `f64` and the quotient
/// correctly rounded; a quotient that is not an integer is at least `1 / a` from one, more than
/// its rounding error (`quotient · 2^-53`, with `quotient · a < 2^53`), so the ceiling is
/// that of the exact quotient.
#[inline]
fn ceil_percent(d: u32, a: u32) -> i32 {
    if d >= a {
        return MAX_NODE_SCORE as i32;
    }
    let q = f64::from(d) * 100.0 / f64::from(a);
    let t = q as i32; // 0 ≤ q < 100
    if f64::from(t) < q { t + 1 } else { t }
}

/// The most class `c`'s usage-dependent raw scores can exceed those of class `c0` on a node of
/// allocatable `alloc` at the same usage, as `(NodeResourcesFit, BalancedAllocation)`, or
/// `None` when the two classes do not count the same resources (a scalar resource requested by
/// one only).
///
/// NodeResourcesFit (LeastAllocated): per resource `⌊(a − used − pod) · 100 / a⌋` (0 past
/// capacity); a pod smaller by `d` raises it by at most `⌈d · 100 / a⌉`
/// (`⌊x + y⌋ ≤ ⌊x⌋ + ⌈y⌉`), and a larger pod only lowers it, so the weighted mean (positive
/// weights, truncated) rises by at most the largest such step. BalancedAllocation:
/// `⌊(1 − σ) · 100⌋` of the fractions `min(requested / a, 1)`; a pod differing by `d` moves a
/// fraction by at most `d / a`, so the standard deviation σ moves by at most the largest such
/// move, and the score by at most `⌈100 · move⌉`, plus 2 for the rounding of `f64` (each of
/// the two scores may be truncated one below its exact value's integer part).
#[inline]
pub(super) fn refinement(
    req: &[u32],
    nonzero: &[u32],
    req0: &[u32],
    nonzero0: &[u32],
    alloc: &[u32],
) -> Option<(i32, i32)> {
    let (mut fit, mut balanced) = (0, 0);
    for (j, &a) in alloc.iter().enumerate() {
        let (r, r0) = (*req.get(j)?, *req0.get(j)?);
        if (r == 0) != (r0 == 0) {
            return None;
        }
        if a == 0 {
            continue;
        }
        let smaller = r0.saturating_sub(r).max(nonzero0.get(j)?.saturating_sub(*nonzero.get(j)?));
        if smaller > 0 {
            fit = fit.max(ceil_percent(smaller, a));
        }
        if r != r0 {
            balanced = balanced.max(ceil_percent(r.abs_diff(r0), a));
        }
    }
    Some((fit, balanced + 2))
}

impl Applier<'_> {
    fn add_to_cluster(&mut self, m: usize, node: usize) {
        self.forget(node);
        let Some(target) = self.cluster.nodes.get_mut(node) else { return };
        let mut pod = self.pending[m].clone();
        pod.node_name = Some(target.name.clone());
        target.add_pod(Arc::new(pod));
    }

    /// Drops the cached usage (and reference cells) of a node whose usage changed.
    fn forget(&mut self, node: usize) {
        for g in 0..self.encs.len() {
            if let Some(slot) = self.usage.get_mut(g * self.nodes + node) {
                *slot = None;
            }
            if let Some(slot) = self.reference.get_mut(g * self.nodes + node) {
                *slot = Reference::NONE;
            }
        }
    }

    /// [`Rescore::refine`]: the static part plus the resource planes' weighted raw scores,
    /// each at most the node's reference cell's plus [`refinement`] (and at most
    /// [`MAX_NODE_SCORE`]). A reference exists only where the node's usage was computed, so
    /// [`Rescore::rescore`] returns the static part plus the planes' scores there.
    fn refined(&self, class: usize, node: usize) -> Option<i64> {
        let &(g, c) = self.source.get(class)?;
        let fixed = *self.static_part.get(class * self.nodes + node)?;
        if fixed == NO_STATIC_PART {
            return None;
        }
        let r = *self.reference.get(g * self.nodes + node)?;
        if r.class == Reference::NONE.class {
            return None;
        }
        let c0 = r.class as usize;
        let (fit, balanced) = if c0 == c {
            (r.fit, r.balanced)
        } else {
            let (up_fit, up_balanced) = self.refinable.get(g)?.as_ref()?.of_classes(c, c0, node)?;
            let max = MAX_NODE_SCORE as i32;
            (r.fit.saturating_add(up_fit).min(max), r.balanced.saturating_add(up_balanced).min(max))
        };
        let &(fit_weight, other_weight) = self.weights.get(class)?;
        Some(i64::from(fixed) + fit_weight * i64::from(fit) + other_weight * i64::from(balanced))
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

    /// The usage-dependent part of class `c` of group `g`'s score on the node of `usage`: the
    /// incremental entry point of evaluation (the CPU twin; every backend's cells are equal).
    fn updated_part(&self, g: usize, c: usize, usage: &NodeUsage) -> Option<(i64, Reference)> {
        let (_, fit, balanced) = columns::cell_cpu(&self.prepared[g], usage, 0, c)?;
        let reference = Reference { class: u32::try_from(c).ok()?, fit, balanced };
        Some((self.resource_planes[g].updated(c, fit, balanced), reference))
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
        let slot = g * self.nodes + node;
        if self.usage.get(slot).is_some_and(Option::is_none) {
            self.usage[slot] = Some(self.node_usage(g, node));
        }
        let part = match self.usage.get(slot) {
            Some(Some(Some(usage))) => self.updated_part(g, c, usage),
            _ => None,
        };
        let score = self.score.get(cell).copied().unwrap_or(0);
        let rescored = match (part, self.static_part.get(cell)) {
            (Some((part, _)), Some(&fixed)) if fixed != NO_STATIC_PART => i64::from(fixed) + part,
            _ => score,
        };
        #[cfg(test)]
        if let Some(bound) = self.refined(class, node) {
            assert!(rescored <= bound, "class {class} on node {node}: {rescored} > {bound}");
        }
        if let (Some((_, reference)), Some(r)) = (part, self.reference.get_mut(slot)) {
            *r = reference;
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
        let cell = class * self.nodes + node;
        let (Some(&fixed), Some(&(fit_weight, rest)), Some(&score), Some(&fit0), Some(&shrunk)) = (
            self.static_part.get(cell),
            self.max_part.get(class),
            self.score.get(cell),
            self.fit_start.get(cell),
            self.shrunk.get(node),
        ) else {
            return i64::MAX;
        };
        if fixed == NO_STATIC_PART {
            return score;
        }
        let fit = if shrunk { MAX_NODE_SCORE } else { i64::from(fit0) };
        (i64::from(fixed) + fit_weight * fit + rest).max(score)
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

    #[test]
    fn refinements_are_the_largest_step_per_resource_rounded_up() {
        // Columns: cpu (m), memory, pods; allocatable 4000, 1000, 110.
        let alloc = [4000, 1000, 110];
        type Case = (&'static str, [u32; 3], [u32; 3], Option<(i32, i32)>);
        let cases: [Case; 5] = [
            (
                "the same requests: only the rounding margin",
                [500, 100, 1],
                [500, 100, 1],
                Some((0, 2)),
            ),
            (
                "a smaller pod raises the fit score by its step",
                [100, 100, 1],
                [500, 100, 1],
                Some((10, 12)),
            ),
            ("a larger pod raises only the balance", [900, 100, 1], [500, 100, 1], Some((0, 12))),
            ("steps round up", [500, 97, 1], [500, 100, 1], Some((1, 3))),
            ("a resource requested by one class only", [500, 0, 1], [500, 100, 1], None),
        ];
        for (name, req, req0, want) in cases {
            assert_eq!(refinement(&req, &req, &req0, &req0, &alloc), want, "{name}");
        }
        // A column of allocatable 0 takes no part.
        assert_eq!(refinement(&[1, 5], &[1, 5], &[9, 5], &[9, 5], &[0, 100]), Some((0, 2)));
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// On any node usage, a class's raw NodeResourcesFit and BalancedAllocation scores are
        /// at most another class's plus [`refinement`] (the evaluator's own cells compared).
        #[test]
        fn a_refined_bound_is_never_below_the_evaluated_cell(
            node in (1u32..64, 1u64..256, 0u32..64, 0u64..256),
            a in (0u32..8000, 0u64..8192),
            b in (0u32..8000, 0u64..8192),
        ) {
            let (cpu, mem, used_cpu, used_mem) = node;
            let nodes = vec![NodeBuilder::new("n").cpu(i64::from(cpu) * 250).memory(mem as i64 * GI / 4).pods(110).obj()];
            let bound = vec![PodBuilder::new("d", "used")
                .cpu(i64::from(used_cpu) * 250)
                .memory(used_mem as i64 * GI / 4)
                .node("n")
                .obj()];
            let pending = vec![
                PodBuilder::new("d", "a").cpu(i64::from(a.0)).memory(a.1 as i64 * MI).obj(),
                PodBuilder::new("d", "b").cpu(i64::from(b.0)).memory(b.1 as i64 * MI).obj(),
            ];
            let state = cluster(nodes, bound);
            let profile = Profile::default_profile();
            let enc = encode(&state, &pending).expect("encodes");
            let p = Prepared::new(&profile, &state, &pending, &enc).expect("prepares");
            let usage = NodeUsage::of(&enc, &state, &[0]).expect("usage");
            let t = &enc.tensors;
            let classes = enc.classes.pod_class.clone();
            for (&c, &c0) in [(&classes[0], &classes[1]), (&classes[1], &classes[0])] {
                let (c, c0) = (c as usize, c0 as usize);
                let (_, fit, balanced) = cell_cpu(&p, &usage, 0, c).expect("cell");
                let (_, fit0, balanced0) = cell_cpu(&p, &usage, 0, c0).expect("cell");
                let row = |a: &ndarray::Array2<u32>, k: usize| a.row(k).to_vec();
                let up = refinement(
                    &row(&t.class_requests, c),
                    &row(&t.class_nonzero_requests, c),
                    &row(&t.class_requests, c0),
                    &row(&t.class_nonzero_requests, c0),
                    &row(&t.node_allocatable, 0),
                );
                let Some((up_fit, up_balanced)) = up else { continue };
                prop_assert!(fit <= fit0 + up_fit, "fit {fit} > {fit0} + {up_fit}");
                prop_assert!(
                    balanced <= balanced0 + up_balanced,
                    "balanced {balanced} > {balanced0} + {up_balanced}"
                );
            }
        }
    }
}
