//! The incremental entry point of matrix evaluation: after some nodes' usage changed (pods
//! placed on them or taken off), re-evaluate only those nodes' columns, and only the cells that
//! depend on usage.
//!
//! Input: a [`Prepared`] (the profile, classes and encoding of a full evaluation) and a
//! [`NodeUsage`]: the changed nodes' requested amounts, re-encoded in the units of that
//! encoding ([`NodeUsage::of`]). Output: [`ResourceColumns`]: for every class and changed node,
//! NodeResourcesFit's insufficient-resource word and raw score and
//! NodeResourcesBalancedAllocation's raw score — the cells a filled node changes. Neither plugin
//! normalizes, so these raw scores are the plugins' final scores on the node; every other
//! check and score of a cell depends on usage only through the inter-pod plugins' domain
//! counts, which a batch solver enforces itself (conflicts) or evaluates again per tier.
//!
//! [`evaluate_cpu`] is the specification (the same cell functions as [`super::cpu`], on the
//! given rows); [`super::gpu::GpuContext::resource_columns`] runs the two kernels of
//! `shaders/node_resources_fit.wgsl` and `shaders/balanced_allocation.wgsl` over the changed
//! columns only, bit-identical (`tests/all/gpu_parity.rs`). Upstream counterpart (v1.35): the
//! scheduler cache's `NodeInfo` update after `AddPod`/`RemovePod`, followed by
//! `plugins/noderesources/fit.go` (`fitsRequest`, `Score`) and `balanced_allocation.go`
//! (`Score`) on the updated node.

use crate::encode::Encoded;
use crate::encode::tensors::encode_node_usage_column;
use crate::model::ClusterState;

use super::cpu::{NodeColumn, balanced_allocation_on, node_resources_fit_on};
use super::{EvalError, Prepared};

/// The usage of some nodes, in the encoded units of one [`Encoded`]: the input of an
/// incremental update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeUsage {
    /// The nodes (indices of the encoded cluster), in the order of the rows below.
    pub nodes: Vec<usize>,
    /// Resource columns per node (`R`).
    pub num_resources: usize,
    /// `k × R`: requested amounts (the pod count in the `pods` column).
    pub requested: Vec<u32>,
    /// `k × R`: requested amounts with the non-zero defaults in `cpu` and `memory`.
    pub nonzero_requested: Vec<u32>,
}

impl NodeUsage {
    /// The current usage of `nodes` of `state`, encoded in `enc`'s units (`enc` encodes an
    /// earlier state of the same nodes, in the same order). Fails when an amount no longer fits
    /// the encoding's range, or a node index is out of range.
    pub fn of(
        enc: &Encoded,
        state: &ClusterState,
        nodes: &[usize],
    ) -> Result<NodeUsage, EvalError> {
        let units = &enc.dicts.resources.units;
        let mut usage = NodeUsage::empty(nodes, units.len());
        for &n in nodes {
            let node = state.nodes.get(n).ok_or_else(|| {
                EvalError::Mismatch(format!("node {n} of a cluster of {}", state.nodes.len()))
            })?;
            for unit in units {
                let (requested, nonzero) = encode_node_usage_column(node, unit)?;
                usage.requested.push(requested.value);
                usage.nonzero_requested.push(nonzero.value);
            }
        }
        Ok(usage)
    }

    /// The usage the encoding itself holds for `nodes` (no change): what an update computed
    /// from an unchanged cluster must equal.
    pub fn encoded(enc: &Encoded, nodes: &[usize]) -> Result<NodeUsage, EvalError> {
        let t = &enc.tensors;
        let mut usage = NodeUsage::empty(nodes, t.node_requested.ncols());
        for &n in nodes {
            if n >= t.node_requested.nrows() {
                return Err(EvalError::Mismatch(format!(
                    "node {n} of {} encoded nodes",
                    t.node_requested.nrows()
                )));
            }
            usage.requested.extend(t.node_requested.row(n).iter().copied());
            usage.nonzero_requested.extend(t.node_nonzero_requested.row(n).iter().copied());
        }
        Ok(usage)
    }

    /// No rows yet, room for `nodes` × `r`.
    fn empty(nodes: &[usize], r: usize) -> NodeUsage {
        NodeUsage {
            nodes: nodes.to_vec(),
            num_resources: r,
            requested: Vec::with_capacity(nodes.len() * r),
            nonzero_requested: Vec::with_capacity(nodes.len() * r),
        }
    }

    /// Checks the update against the evaluation it updates.
    pub fn validate(&self, p: &Prepared<'_>) -> Result<(), EvalError> {
        let r = p.resource_names.len();
        let k = self.nodes.len();
        if self.num_resources != r
            || self.requested.len() != k * r
            || self.nonzero_requested.len() != k * r
        {
            return Err(EvalError::Mismatch(format!(
                "a usage update of {k} nodes × {} columns ({} and {} amounts) for {r} columns",
                self.num_resources,
                self.requested.len(),
                self.nonzero_requested.len()
            )));
        }
        if let Some(&n) = self.nodes.iter().find(|&&n| n >= p.num_nodes) {
            return Err(EvalError::Mismatch(format!("node {n} of {} nodes", p.num_nodes)));
        }
        Ok(())
    }
}

/// The usage-dependent cells of some node columns, class-major: cell `class * k + i` is the
/// class on `nodes[i]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceColumns {
    /// The nodes, as in the [`NodeUsage`].
    pub nodes: Vec<usize>,
    /// Number of classes.
    pub num_classes: usize,
    /// NodeResourcesFit's insufficient-resource word (0: the class fits the node's room).
    pub fit_insufficient: Vec<u32>,
    /// NodeResourcesFit's raw (final) score under the profile's strategy.
    pub fit_raw: Vec<i32>,
    /// NodeResourcesBalancedAllocation's raw (final) score.
    pub balanced_raw: Vec<i32>,
}

impl ResourceColumns {
    /// Planes read back from a device (or computed), `num_classes × nodes.len()` each.
    pub(crate) fn from_planes(
        nodes: Vec<usize>,
        num_classes: usize,
        fit_insufficient: Vec<u32>,
        fit_raw: Vec<i32>,
        balanced_raw: Vec<i32>,
    ) -> Self {
        ResourceColumns { nodes, num_classes, fit_insufficient, fit_raw, balanced_raw }
    }

    /// The index of the cell of `class` on the `i`-th updated node.
    pub fn cell(&self, class: usize, i: usize) -> usize {
        class * self.nodes.len() + i
    }
}

/// The usage-dependent cell of `class` on the `i`-th node of `usage` (NodeResourcesFit's
/// insufficient word and raw score, NodeResourcesBalancedAllocation's raw score): one cell of
/// [`evaluate_cpu`]'s columns, for callers that need a few classes of a changed node rather
/// than every class. `usage` must have passed [`NodeUsage::validate`] against `p`, and `class`
/// and `i` be in range; `None` otherwise.
pub fn cell_cpu(
    p: &Prepared<'_>,
    usage: &NodeUsage,
    i: usize,
    class: usize,
) -> Option<(u32, i32, i32)> {
    if class >= p.num_classes {
        return None;
    }
    Some(cell_on(p, class, &node_column(p, usage, i)?))
}

/// The `i`-th node of `usage` as the cell functions read it (`None` when out of range).
fn node_column<'u>(p: &Prepared<'u>, usage: &'u NodeUsage, i: usize) -> Option<NodeColumn<'u>> {
    let r = usage.num_resources;
    let &n = usage.nodes.get(i)?;
    if n >= p.num_nodes {
        return None;
    }
    Some(NodeColumn {
        allocatable: p.enc.tensors.node_allocatable.row(n),
        requested: ndarray::ArrayView1::from(usage.requested.get(i * r..(i + 1) * r)?),
        nonzero_requested: ndarray::ArrayView1::from(
            usage.nonzero_requested.get(i * r..(i + 1) * r)?,
        ),
    })
}

/// One usage-dependent cell: NodeResourcesFit's insufficient word and raw score,
/// NodeResourcesBalancedAllocation's raw score.
fn cell_on(p: &Prepared<'_>, class: usize, node: &NodeColumn<'_>) -> (u32, i32, i32) {
    let (_, word, raw) = node_resources_fit_on(p, class, *node);
    (word, raw, balanced_allocation_on(p, class, node))
}

/// Below this many cells an update on the GPU backend runs on the CPU twin: one dispatch and
/// readback costs more than the work (the results are the same bit for bit).
pub const GPU_MIN_UPDATE_CELLS: usize = 1 << 16;

/// The update on the CPU: the cell functions of [`super::cpu`] on the given usage.
pub fn evaluate_cpu(p: &Prepared<'_>, usage: &NodeUsage) -> Result<ResourceColumns, EvalError> {
    usage.validate(p)?;
    let (nc, k) = (p.num_classes, usage.nodes.len());
    let mut out = ResourceColumns {
        nodes: usage.nodes.clone(),
        num_classes: nc,
        fit_insufficient: vec![0; nc * k],
        fit_raw: vec![0; nc * k],
        balanced_raw: vec![0; nc * k],
    };
    for i in 0..k {
        // Validated above: every node of the update is in range.
        let Some(node) = node_column(p, usage, i) else { continue };
        for c in 0..nc {
            let cell = c * k + i;
            (out.fit_insufficient[cell], out.fit_raw[cell], out.balanced_raw[cell]) =
                cell_on(p, c, &node);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::encode;
    use crate::eval::evaluate_cpu as evaluate_matrix;
    use crate::framework::profile::{PluginName, Profile};
    use crate::model::testing::{GI, NodeBuilder, PodBuilder, cluster};
    use std::sync::Arc;

    fn nodes_and_pods() -> (ClusterState, Vec<crate::model::Pod>) {
        let nodes = vec![
            NodeBuilder::new("a").cpu(4000).memory(16 * GI).pods(10).obj(),
            NodeBuilder::new("b").cpu(8000).memory(32 * GI).pods(10).obj(),
            NodeBuilder::new("c").cpu(2000).memory(4 * GI).pods(2).obj(),
        ];
        let bound =
            vec![PodBuilder::new("default", "bound").cpu(1000).memory(2 * GI).node("a").obj()];
        let pending = vec![
            PodBuilder::new("default", "small").cpu(500).memory(GI).obj(),
            PodBuilder::new("default", "large").cpu(3000).memory(8 * GI).obj(),
            PodBuilder::new("default", "empty").obj(),
        ];
        (cluster(nodes, bound), pending)
    }

    /// The matrix of `state`, as the reference for updates.
    fn columns_of_matrix(
        profile: &Profile,
        state: &ClusterState,
        pending: &[crate::model::Pod],
        nodes: &[usize],
    ) -> ResourceColumns {
        let enc = encode(state, pending).expect("encodes");
        let m = evaluate_matrix(profile, state, pending, &enc).expect("evaluates");
        let raw = |plugin: PluginName| {
            let plane = m.plane(plugin).expect("plane scored");
            let mut v = Vec::new();
            for c in 0..m.num_classes {
                for &n in nodes {
                    v.push(plane.raw[m.cell(c, n)]);
                }
            }
            v
        };
        let mut words = Vec::new();
        for c in 0..m.num_classes {
            for &n in nodes {
                words.push(m.fit_insufficient[m.cell(c, n)]);
            }
        }
        ResourceColumns::from_planes(
            nodes.to_vec(),
            m.num_classes,
            words,
            raw(PluginName::NodeResourcesFit),
            raw(PluginName::NodeResourcesBalancedAllocation),
        )
    }

    #[test]
    fn an_update_with_unchanged_usage_equals_the_full_matrix() {
        let (state, pending) = nodes_and_pods();
        let profile = Profile::default_profile();
        let enc = encode(&state, &pending).expect("encodes");
        let p = Prepared::new(&profile, &state, &pending, &enc).expect("prepares");
        for nodes in [vec![0], vec![2, 0], vec![0, 1, 2]] {
            let from_state = NodeUsage::of(&enc, &state, &nodes).expect("usage");
            assert_eq!(from_state, NodeUsage::encoded(&enc, &nodes).expect("usage"));
            let got = evaluate_cpu(&p, &from_state).expect("update");
            assert_eq!(got, columns_of_matrix(&profile, &state, &pending, &nodes), "{nodes:?}");
        }
    }

    #[test]
    fn an_update_after_placing_pods_equals_a_fresh_evaluation_of_the_filled_cluster() {
        let (state, pending) = nodes_and_pods();
        let profile = Profile::default_profile();
        let enc = encode(&state, &pending).expect("encodes");
        let p = Prepared::new(&profile, &state, &pending, &enc).expect("prepares");
        // Place "large" on b and "small" twice on c (c then holds its 2 pods: Too many pods).
        let mut filled = state.clone();
        for (pod, node) in [(1, 1), (0, 2), (0, 2)] {
            let mut placed = pending[pod].clone();
            placed.name = format!("{}-{node}-{}", placed.name, filled.nodes[node].pods.len());
            placed.node_name = Some(filled.nodes[node].name.clone());
            filled.nodes[node].add_pod(Arc::new(placed));
        }
        let usage = NodeUsage::of(&enc, &filled, &[1, 2]).expect("usage");
        let got = evaluate_cpu(&p, &usage).expect("update");
        let want = columns_of_matrix(&profile, &filled, &pending, &[1, 2]);
        assert_eq!(got, want);
        // The update saw the change: c is full for every class.
        for c in 0..got.num_classes {
            assert_ne!(got.fit_insufficient[got.cell(c, 1)], 0, "class {c} on full node c");
        }
        assert_ne!(
            got,
            evaluate_cpu(&p, &NodeUsage::encoded(&enc, &[1, 2]).expect("u")).expect("u")
        );
    }

    #[test]
    fn a_single_cell_equals_its_cell_of_the_whole_column() {
        let (state, pending) = nodes_and_pods();
        let profile = Profile::default_profile();
        let enc = encode(&state, &pending).expect("encodes");
        let p = Prepared::new(&profile, &state, &pending, &enc).expect("prepares");
        let mut filled = state.clone();
        let mut placed = pending[1].clone();
        placed.node_name = Some(filled.nodes[1].name.clone());
        filled.nodes[1].add_pod(Arc::new(placed));
        let usage = NodeUsage::of(&enc, &filled, &[1, 0]).expect("usage");
        let cols = evaluate_cpu(&p, &usage).expect("update");
        for c in 0..cols.num_classes {
            for i in 0..2 {
                let cell = cols.cell(c, i);
                let want =
                    (cols.fit_insufficient[cell], cols.fit_raw[cell], cols.balanced_raw[cell]);
                assert_eq!(cell_cpu(&p, &usage, i, c), Some(want), "class {c}, node {i}");
            }
        }
        assert_eq!(cell_cpu(&p, &usage, 2, 0), None);
        assert_eq!(cell_cpu(&p, &usage, 0, cols.num_classes), None);
    }

    #[test]
    fn an_update_that_does_not_match_the_evaluation_is_an_error() {
        let (state, pending) = nodes_and_pods();
        let profile = Profile::default_profile();
        let enc = encode(&state, &pending).expect("encodes");
        let p = Prepared::new(&profile, &state, &pending, &enc).expect("prepares");
        let mut usage = NodeUsage::encoded(&enc, &[0]).expect("usage");
        usage.requested.pop();
        assert!(matches!(evaluate_cpu(&p, &usage), Err(EvalError::Mismatch(_))));
        let mut usage = NodeUsage::encoded(&enc, &[0]).expect("usage");
        usage.nodes = vec![7];
        assert!(matches!(evaluate_cpu(&p, &usage), Err(EvalError::Mismatch(_))));
        assert!(matches!(NodeUsage::of(&enc, &state, &[3]), Err(EvalError::Mismatch(_))));
    }
}
