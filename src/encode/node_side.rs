//! The cluster side of an encoding, collected once and shared by the encodings of several
//! groups of pending pods on one cluster state (`plan` encodes a tier's classes per scheduler
//! profile and chunk of classes, each group on the same nodes).
//!
//! Input: a [`ClusterState`]. Output: [`NodeSide`] — the distinct label pairs of the nodes and
//! of the bound pods, each sorted, with every node's and bound pod's pair ids in them.
//! [`super::encode_with`] merges these sorted lists with the pending pods' pairs and renumbers
//! the rows through the merge, instead of collecting every node label into a set and looking
//! each one up again per group; topology domains are ranges of the nodes' pairs. The result
//! equals [`super::encode`]'s exactly (tests compare the two). No upstream counterpart.

use super::EncodeError;
use super::tensors::Csr;
use crate::model::{ClusterState, Labels};

/// Label pairs of a cluster's nodes and bound pods (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeSide {
    /// Distinct `(key, value)` label pairs of the nodes, sorted.
    pub(crate) node_pairs: Vec<(String, String)>,
    /// Per node (state order): ids in `node_pairs`, ascending.
    pub(crate) node_rows: Csr,
    /// Distinct label pairs of the bound pods, sorted.
    pub(crate) pod_pairs: Vec<(String, String)>,
    /// Per bound pod (node order, then the node's pod order): ids in `pod_pairs`, ascending.
    pub(crate) pod_rows: Csr,
    /// Number of nodes it was built for (a guard against use with another state).
    pub(crate) nodes: usize,
}

impl NodeSide {
    /// Collects the label pairs of `state`'s nodes and bound pods.
    pub fn build(state: &ClusterState) -> Result<Self, EncodeError> {
        let (node_pairs, node_rows) =
            pairs_and_rows("node labels", state.nodes.iter().map(|n| &n.labels))?;
        let (pod_pairs, pod_rows) = pairs_and_rows(
            "bound pod labels",
            state.nodes.iter().flat_map(|n| n.pods.iter().map(|p| &p.labels)),
        )?;
        Ok(NodeSide { node_pairs, node_rows, pod_pairs, pod_rows, nodes: state.nodes.len() })
    }

    /// Whether this was built for a state with `state`'s nodes and bound pods (a cheap check:
    /// counts only).
    pub(crate) fn fits(&self, state: &ClusterState) -> bool {
        self.nodes == state.nodes.len()
            && self.node_rows.rows() == state.nodes.len()
            && self.pod_rows.rows() == state.nodes.iter().map(|n| n.pods.len()).sum::<usize>()
    }

    /// The id range in `node_pairs` of the pairs with this key.
    pub(crate) fn node_key_range(&self, key: &str) -> std::ops::Range<usize> {
        let lo = self.node_pairs.partition_point(|(k, _)| k.as_str() < key);
        let hi = lo + self.node_pairs[lo..].partition_point(|(k, _)| k.as_str() == key);
        lo..hi
    }
}

/// The distinct pairs of every label map (sorted) and each map's pair ids (ascending).
fn pairs_and_rows<'a>(
    what: &'static str,
    maps: impl Iterator<Item = &'a Labels> + Clone,
) -> Result<(Vec<(String, String)>, Csr), EncodeError> {
    let mut refs: Vec<(&str, &str)> =
        maps.clone().flat_map(|m| m.iter().map(|(k, v)| (k.as_str(), v.as_str()))).collect();
    refs.sort_unstable();
    refs.dedup();
    super::dict::check_u32(what, refs.len())?;
    let mut rows = Csr::default();
    let mut row = Vec::new();
    for m in maps {
        row.clear();
        // A map iterates in (key, value) order, so its ids come out ascending; the search
        // starts after the previous hit.
        let mut from = 0;
        for (k, v) in m {
            let at = from + refs[from..].partition_point(|&p| p < (k.as_str(), v.as_str()));
            row.push(at as u32);
            from = at;
        }
        rows.push_row(what, row.iter().copied())?;
    }
    let pairs = refs.into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Ok((pairs, rows))
}

/// Merges sorted, distinct lists into one sorted, distinct list, and says where each list's
/// items went (`maps[l][i]` = the merged id of `lists[l][i]`).
pub(crate) fn merge_sorted<T: Ord + Clone>(lists: &[&[T]]) -> (Vec<T>, Vec<Vec<u32>>) {
    let mut heads = vec![0usize; lists.len()];
    let mut maps: Vec<Vec<u32>> = lists.iter().map(|l| Vec::with_capacity(l.len())).collect();
    let mut out: Vec<T> = Vec::with_capacity(lists.iter().map(|l| l.len()).max().unwrap_or(0));
    loop {
        let mut least: Option<&T> = None;
        for (l, list) in lists.iter().enumerate() {
            if let Some(x) = list.get(heads[l])
                && least.is_none_or(|m| x < m)
            {
                least = Some(x);
            }
        }
        let Some(least) = least else { break };
        let id = out.len() as u32;
        out.push(least.clone());
        for (l, list) in lists.iter().enumerate() {
            if list.get(heads[l]) == Some(least) {
                maps[l].push(id);
                heads[l] += 1;
            }
        }
    }
    (out, maps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_sorted_lists_keeps_one_of_each_item_and_maps_every_position() {
        let a = [1, 3, 5];
        let b = [2, 3, 9];
        let c: [i32; 0] = [];
        let (out, maps) = merge_sorted(&[&a[..], &b[..], &c[..]]);
        assert_eq!(out, vec![1, 2, 3, 5, 9]);
        assert_eq!(maps, vec![vec![0, 2, 3], vec![1, 2, 4], vec![]]);
    }

    #[test]
    fn every_node_row_lists_its_own_labels() {
        use crate::model::testing::{NodeBuilder, cluster};
        let nodes = vec![
            NodeBuilder::new("a").label("zone", "z1").label("disk", "ssd").obj(),
            NodeBuilder::new("b").label("zone", "z2").obj(),
            NodeBuilder::new("c").obj(),
        ];
        let state = cluster(nodes, vec![]);
        let side = NodeSide::build(&state).unwrap();
        for (i, node) in state.nodes.iter().enumerate() {
            let got: Vec<(String, String)> = side
                .node_rows
                .row(i)
                .iter()
                .map(|&p| side.node_pairs[p as usize].clone())
                .collect();
            let want: Vec<(String, String)> =
                node.labels.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            assert_eq!(got, want);
        }
        let zone = side.node_key_range("zone");
        let values: Vec<&str> = side.node_pairs[zone].iter().map(|(_, v)| v.as_str()).collect();
        assert_eq!(values, ["z1", "z2"]);
        assert!(side.node_key_range("rack").is_empty());
        assert!(side.fits(&state));
    }
}
