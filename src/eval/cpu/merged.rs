//! Equal node columns merged: nodes whose every input of the row evaluator is equal give equal
//! cells in every class row that does not read node identities, so such a row is evaluated once
//! per distinct column and copied out to the nodes.
//!
//! Input: the [`Statics`] of every node and the [`Prepared`] they come from. Output: [`Merged`],
//! the statics of one column per distinct node (in order of first occurrence) and each node's
//! column, when merging leaves at most [`MERGE_RATIO`] of the columns. What a node's column
//! holds: its filter word bits, resource columns, taints, used host ports, `addedAffinity`
//! score, membership of every node-affinity set and preferred term, image scores, and its domain
//! of every topology key with fewer domains than half the nodes. Rows that read node
//! identities ([`merges`] is false: a PreFilter restriction to named nodes, `spec.nodeName`, or
//! inter-pod terms by hostname or on a key of nearly one domain per node) are evaluated on every
//! node as before. Upstream counterpart: none (kube-scheduler scores node by node); a row
//! merged equals the row unmerged bit for bit (`cpu::tests` and `tests/all/cpu_parallel.rs`).
//!
//! What the merged row computes over columns that depends on how many nodes a column stands for
//! weighs each column by its nodes: the feasible count and PodTopologySpread's number of scored
//! nodes. The first out-of-range normalized score of a row is the same column's: columns are in
//! order of their first node.

use std::collections::BTreeMap;

use super::super::prep::{CLASS_HAS_NODE_NAME, CLASS_RESTRICTED, Prepared};
use super::super::topology::{TERM_HOSTNAME, Topology};
use super::rows::{Bits, Statics, bit};

/// Merging is used when the distinct columns are at most this fraction of the nodes.
pub(super) const MERGE_RATIO: f64 = 0.5;

/// The statics of the distinct node columns and each node's column.
pub(super) struct Merged {
    /// The statics over the distinct columns.
    pub(super) statics: Statics,
    /// Per node: its column in `statics`.
    pub(super) column: Vec<u32>,
    /// Per topology key: whether nodes are merged over it (it has fewer domains than half the
    /// nodes); rows with terms on the others are not merged.
    keys: Vec<bool>,
}

impl Merged {
    /// The distinct columns of `s` (every node's statics), when there are few enough.
    pub(super) fn new(p: &Prepared<'_>, s: &Statics) -> Option<Merged> {
        let nn = s.len;
        if nn < 2 || !s.weight.is_empty() {
            return None;
        }
        let topo = &p.topology;
        let keys = merged_keys(p);
        let t = &p.enc.tensors;
        let mut column = Vec::with_capacity(nn);
        let mut node: Vec<u32> = Vec::new();
        let mut weight: Vec<u32> = Vec::new();
        let mut seen: BTreeMap<Vec<u64>, u32> = BTreeMap::new();
        let mut key = Vec::new();
        let term_sets: Vec<&Bits> = s.term_sets.values().collect();
        let mut image_of: Vec<Vec<(u32, i64)>> = vec![Vec::new(); nn];
        for (id, list) in s.image_nodes.iter().enumerate() {
            for &(n, scaled) in list {
                if let Some(v) = image_of.get_mut(n as usize) {
                    v.push((id as u32, scaled));
                }
            }
        }
        for (n, images) in image_of.iter().enumerate() {
            key.clear();
            key.push(u64::from(s.node_word[n]));
            key.push(s.added_score.get(n).map_or(0, |&v| v as u32 as u64));
            for j in 0..s.r {
                let at = j * nn + n;
                key.push(u64::from(s.alloc[at]) << 32 | u64::from(s.used[at]));
                key.push(u64::from(s.used_nz[at]));
            }
            for row in [t.node_taints.row(n), t.node_used_ports.row(n)] {
                key.push(row.len() as u64);
                key.extend(row.iter().map(|&v| u64::from(v)));
            }
            let sets = s.affinity_sets.iter().chain(term_sets.iter().copied());
            let mut bits = 0u64;
            for (i, set) in sets.enumerate() {
                if i > 0 && i % 64 == 0 {
                    key.push(bits);
                    bits = 0;
                }
                bits |= u64::from(bit(set, n)) << (i % 64);
            }
            key.push(bits);
            key.push(images.len() as u64);
            for &(id, scaled) in images {
                key.push(u64::from(id));
                key.push(scaled as u64);
            }
            for (k, &merged) in keys.iter().enumerate() {
                if merged {
                    key.push(u64::from(topo.node_domain(n, k as u32)));
                }
            }
            let col = match seen.get(&key) {
                Some(&col) => col,
                None => {
                    if (node.len() + 1) as f64 > MERGE_RATIO * nn as f64 {
                        return None; // Too few equal nodes to be worth it.
                    }
                    seen.insert(key.clone(), node.len() as u32);
                    node.push(n as u32);
                    weight.push(0);
                    (node.len() - 1) as u32
                }
            };
            weight[col as usize] += 1;
            column.push(col);
        }
        let m = node.len();
        let gather = |a: &[u32]| -> Vec<u32> {
            (0..s.r).flat_map(|j| node.iter().map(move |&n| a[j * nn + n as usize])).collect()
        };
        let gather_bits = |set: &Bits| -> Bits {
            let mut out = vec![0u64; m.div_ceil(64)];
            for (i, &n) in node.iter().enumerate() {
                if bit(set, n as usize) {
                    out[i >> 6] |= 1 << (i & 63);
                }
            }
            out
        };
        let local = |list: &[u32]| -> Vec<u32> {
            (0..m as u32).filter(|&i| list.binary_search(&node[i as usize]).is_ok()).collect()
        };
        let statics = Statics {
            len: m,
            added_score: node.iter().map(|&n| s.added_score[n as usize]).collect(),
            r: s.r,
            alloc: gather(&s.alloc),
            used: gather(&s.used),
            used_nz: gather(&s.used_nz),
            node_word: node.iter().map(|&n| s.node_word[n as usize]).collect(),
            tainted: local(&s.tainted),
            ported: local(&s.ported),
            affinity_sets: s.affinity_sets.iter().map(gather_bits).collect(),
            class_affinity: s.class_affinity.clone(),
            term_sets: s.term_sets.iter().map(|(&k, set)| (k, gather_bits(set))).collect(),
            image_nodes: s
                .image_nodes
                .iter()
                .map(|list| {
                    list.iter()
                        .filter_map(|&(n, scaled)| {
                            let col = column[n as usize];
                            (node[col as usize] == n).then_some((col, scaled))
                        })
                        .collect()
                })
                .collect(),
            rank: s.rank,
            scored: s.scored,
            simd: s.simd,
            node,
            weight,
        };
        Some(Merged { statics, column, keys })
    }

    /// Whether class `c`'s row can be evaluated on the merged columns.
    pub(super) fn merges(&self, p: &Prepared<'_>, c: usize) -> bool {
        reads_no_identity(p, c, &self.keys)
    }
}

/// Whether class `c`'s row reads nothing but what merged columns hold (see the module
/// documentation).
pub(super) fn merges(p: &Prepared<'_>, c: usize) -> bool {
    reads_no_identity(p, c, &merged_keys(p))
}

/// Per topology key: whether merged columns hold a node's domain of it (the key has fewer
/// domains than half the nodes).
fn merged_keys(p: &Prepared<'_>) -> Vec<bool> {
    let topo = &p.topology;
    (0..topo.keys.len())
        .map(|k| topo.domains.get(k).map_or(0, Vec::len) * 2 < p.num_nodes)
        .collect()
}

fn reads_no_identity(p: &Prepared<'_>, c: usize, keys: &[bool]) -> bool {
    if p.class_flags.get(c).is_none_or(|f| f & (CLASS_RESTRICTED | CLASS_HAS_NODE_NAME) != 0) {
        return false;
    }
    let topo: &Topology = &p.topology;
    let Some(class) = topo.classes.get(c) else { return true };
    [
        class.pts_filter,
        class.pts_score,
        class.ipa_affinity,
        class.ipa_anti_affinity,
        class.ipa_existing,
        class.ipa_score,
    ]
    .into_iter()
    .flat_map(|range| topo.terms(range))
    .all(|t| t.flags & TERM_HOSTNAME == 0 && keys.get(t.key as usize).copied().unwrap_or(false))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::encode::encode;
    use crate::eval::synthetic::{Synthetic, cluster_of, cluster_of_kinds};
    use crate::eval::testing::matrix_profile;
    use crate::framework::args::ScoringStrategyType;
    use crate::framework::profile::{PluginName, Profile};
    use crate::model::testing::PodBuilder;

    fn profiles() -> Vec<(&'static str, Profile)> {
        let default = matrix_profile(&Profile::default_profile());
        let mut most = default.clone();
        most.args.node_resources_fit.scoring_strategy.kind = ScoringStrategyType::MostAllocated;
        let mut some = default.clone();
        some.plugins
            .score
            .retain(|(p, _)| matches!(p, PluginName::NodeAffinity | PluginName::PodTopologySpread));
        vec![("default", default), ("MostAllocated", most), ("two scores", some)]
    }

    /// Asserts that the lean evaluation (merging where it can) equals the cell-by-cell
    /// specification's on every kept set and on one and three threads; returns the number of
    /// merged columns and of rows evaluated on them (`None` when nodes do not merge).
    fn assert_merged_equals_cells(
        profile: &Profile,
        s: &Synthetic,
        what: &str,
    ) -> Option<(usize, usize)> {
        let enc = encode(&s.state, &s.pending).expect("encodes");
        let p = Prepared::new(profile, &s.state, &s.pending, &enc).expect("prepares");
        let want = crate::eval::cpu::evaluate_cells(&p);
        let kept = vec![
            PluginName::NodeResourcesFit,
            PluginName::NodeResourcesBalancedAllocation,
            PluginName::PodTopologySpread,
        ];
        for keep in [Vec::new(), PluginName::ALL.to_vec(), kept] {
            for threads in [1, 3] {
                let got = crate::eval::cpu::evaluate_lean(&p, &keep, threads);
                assert!(
                    got == want.clone().lean(&keep),
                    "{what}, {threads} threads, keeping {keep:?}: merged rows differ"
                );
            }
        }
        let merged = Merged::new(&p, &Statics::new(&p))?;
        let rows = (0..p.num_classes).filter(|&c| merged.merges(&p, c)).count();
        Some((merged.statics.len, rows))
    }

    #[test]
    fn rows_over_merged_columns_equal_the_cells_of_every_node() {
        for (classes, nodes, kinds) in [(60, 130, 7), (45, 300, 13), (20, 64, 1), (33, 50, 20)] {
            let s = cluster_of_kinds(classes, nodes, kinds);
            for (name, profile) in profiles() {
                let what = format!("{classes} classes, {nodes} nodes of {kinds} kinds, {name}");
                let (columns, rows) =
                    assert_merged_equals_cells(&profile, &s, &what).expect("equal nodes merge");
                assert!(columns <= kinds, "{what}: {columns} columns");
                // Rows with anti-affinity by hostname read node identities; the others merge.
                assert!(rows > classes / 2 && rows < classes, "{what}: {rows} rows merged");
            }
        }
    }

    #[test]
    fn distinct_nodes_are_not_merged() {
        let s = cluster_of(30, 80);
        let profile = matrix_profile(&Profile::default_profile());
        assert_eq!(assert_merged_equals_cells(&profile, &s, "distinct nodes"), None);
    }

    #[test]
    fn a_node_differing_in_any_evaluated_input_gets_a_column_of_its_own() {
        type Change = fn(&mut crate::model::Node);
        let changes: &[(&str, Change)] = &[
            ("a cordoned node", |n| n.unschedulable = !n.unschedulable),
            ("a node of another pool", |n| {
                n.labels.insert("pool".into(), "pool-2".into());
            }),
            ("a node in another zone", |n| {
                n.labels.insert(crate::eval::synthetic::ZONE.into(), "zone-c".into());
            }),
            ("a node with a local disk of another kind", |n| {
                n.labels.insert("disk".into(), "hdd".into());
            }),
            ("a node without images", |n| n.images.clear()),
            ("a node without taints", |n| n.taints.clear()),
            ("a node running one more pod", |n| {
                let pod = PodBuilder::new("prod", "extra").cpu(700).memory(1 << 30);
                n.add_pod(Arc::new(pod.node(&n.name.clone()).obj()));
            }),
        ];
        let profile = matrix_profile(&Profile::default_profile());
        let same = cluster_of_kinds(40, 30, 1);
        let (columns, _) =
            assert_merged_equals_cells(&profile, &same, "equal nodes").expect("they merge");
        assert_eq!(columns, 1, "nodes that differ only in their names merge");
        for (name, change) in changes {
            let mut s = same.clone();
            change(&mut s.state.nodes[7]);
            let (columns, rows) =
                assert_merged_equals_cells(&profile, &s, name).expect("the others merge");
            assert_eq!(columns, 2, "{name}");
            assert!(rows > 0, "{name}");
        }
    }
}
