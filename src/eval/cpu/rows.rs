//! The row evaluator behind [`super::evaluate`] and [`super::evaluate_parallel`]: the cell
//! functions of [`super`] re-arranged to run a whole class row at a time, with what does not
//! depend on the class computed once per evaluation.
//!
//! Input: a [`Prepared`] and a run of class rows of the result arrays. Output: those rows,
//! equal bit for bit to [`super::evaluate_cells`] (the cell-by-cell specification; checked by
//! the tests of [`crate::eval`] and `tests/all/cpu_parallel.rs`). Upstream counterpart: the same
//! plugins as [`super`].
//!
//! What is shared ([`Statics`], built once per evaluation): the resource columns transposed to
//! one array per resource (structure of arrays, so that a row's loops over nodes read
//! consecutive memory); per node the class-independent filter bits (NodeUnschedulable,
//! `addedAffinity`); the static filters of node affinity as node bitsets — one per distinct
//! requirement and node term, combined once per distinct `nodeSelector` + required-terms pair
//! and shared by every class with that pair; the preferred terms' bitsets; ImageLocality's
//! scaled image scores as an inverted index (per image, the nodes listing it); the rank of
//! every check in the profile's first-failure order. Per row, the inter-pod plugins' count
//! tables are expanded into dense arrays (domain → count) once, so each node reads one entry.
//! Every `float64` step is native `f64` (IEEE 754, correctly rounded, as Go's `float64`;
//! `math.Log` comes from the prepared table), in upstream's order of operations.

use std::collections::BTreeMap;

use super::resource_rows::{ResourceSoa, balanced_row, fit_row};
use super::simd::InstructionSet;

use super::super::prep::{
    CLASS_FIT_REQUESTS_NOTHING, CLASS_HAS_NODE_NAME, CLASS_REJECTED, CLASS_RESTRICTED,
    FIT_COLUMN_CHECKED, NODE_ADDED_AFFINITY_FAILS, NUM_SCORE_PLANES, Prepared, ScorePlugin,
};
use super::super::topology::{
    DOMAIN_ABSENT, DOMAIN_MASK, IPA_AFFINITY_FALLBACK, IPA_FILTER, IPA_SCORE, PTS_FILTER,
    PTS_REQUIRE_ALL, PTS_SCORE, TERM_HOSTNAME, TERM_SELF_MATCH, TopoTerm, Topology,
};
use super::super::{
    CELL_FEASIBLE, CHECK_INTER_POD_AFFINITY, CHECK_INTER_POD_ANTI_AFFINITY,
    CHECK_INTER_POD_EXISTING_ANTI_AFFINITY, CHECK_MASK, CHECK_NODE_AFFINITY_ENFORCED,
    CHECK_NODE_AFFINITY_POD, CHECK_NODE_NAME, CHECK_NODE_RESOURCES_FIT, CHECK_NODE_UNSCHEDULABLE,
    CHECK_POD_TOPOLOGY_SPREAD_LABEL, CHECK_POD_TOPOLOGY_SPREAD_SKEW, CHECK_PREFILTER_ABSENT,
    CHECK_PREFILTER_REJECTED, CHECK_TAINT_TOLERATION, FIRST_FAILURE_SHIFT, FIT_UNRESOLVABLE,
    narrow,
};
use super::{
    PTS_IGNORED, PTS_PLANE, Rows, default_normalize, image_priority, inter_pod_affinity_normalize,
    node_ports, pod_topology_spread_normalize, pts_add, scaled_image_score,
};
use crate::encode::dict::RESOURCE_PODS;
use crate::encode::tensors::{
    CLASS_HAS_REQUIRED_NODE_AFFINITY, CLASS_TOLERATES_UNSCHEDULABLE, EFFECT_NO_EXECUTE,
    EFFECT_NO_SCHEDULE, EFFECT_PREFER_NO_SCHEDULE, NODE_UNSCHEDULABLE, NONE,
};
use crate::framework::{MAX_NODE_SCORE, MIN_NODE_SCORE};

/// A set of nodes, one bit per node index.
pub(super) type Bits = Vec<u64>;

pub(super) fn bit(set: &[u64], n: usize) -> bool {
    set.get(n >> 6).is_some_and(|w| w >> (n & 63) & 1 != 0)
}

/// The class-independent inputs of every row (see the module documentation).
pub(super) struct Statics {
    /// Number of node columns of a row: every node, or one per distinct column when nodes
    /// with equal inputs are merged ([`super::merged`]).
    pub(super) len: usize,
    /// Per column: the node it stands for (its first node).
    pub(super) node: Vec<u32>,
    /// Per column: how many nodes it stands for; empty when every column is one node.
    pub(super) weight: Vec<u32>,
    /// Per column: NodeAffinity's `addedAffinity` preferred score.
    pub(super) added_score: Vec<i32>,
    /// Number of resource columns.
    pub(super) r: usize,
    /// Column-major allocatable amounts: resource `j` of node `n` at `j * N + n`.
    pub(super) alloc: Vec<u32>,
    /// Column-major requested amounts.
    pub(super) used: Vec<u32>,
    /// Column-major requested amounts with the non-zero defaults.
    pub(super) used_nz: Vec<u32>,
    /// Per node: [`CHECK_NODE_UNSCHEDULABLE`] if cordoned, [`CHECK_NODE_AFFINITY_ENFORCED`] if
    /// `addedAffinity` rejects it.
    pub(super) node_word: Vec<u32>,
    /// The nodes with at least one taint.
    pub(super) tainted: Vec<u32>,
    /// The nodes with host ports in use.
    pub(super) ported: Vec<u32>,
    /// The nodes matching each distinct `nodeSelector` + required node affinity.
    pub(super) affinity_sets: Vec<Bits>,
    /// Per class: its set in `affinity_sets`, or `NONE` when it has neither (every node).
    pub(super) class_affinity: Vec<u32>,
    /// Per node term id: the nodes it matches (computed for the preferred terms of the classes).
    pub(super) term_sets: BTreeMap<u32, Bits>,
    /// Per image id: `(node, scaled score)` for every node listing the image.
    pub(super) image_nodes: Vec<Vec<(u32, i64)>>,
    /// Per check bit index: the check's position in the profile's first-failure order.
    pub(super) rank: [u32; 16],
    /// Whether the profile scores with each plane.
    pub(super) scored: [bool; NUM_SCORE_PLANES],
    /// The instruction set the rows run ([`InstructionSet::current`] when this was built).
    pub(super) simd: InstructionSet,
}

impl Statics {
    /// Whether [`evaluate_row`] reads plane `k`'s raw row where it did not write it (it then
    /// expects 0 there, as in a fresh matrix): a scored plane other than NodeAffinity's,
    /// NodeResourcesFit's and BalancedAllocation's, which every row writes in full. Scratch
    /// rows reused from row to row are cleared only for these.
    pub(super) fn reads_unwritten_raw(&self, k: usize) -> bool {
        let whole = [
            ScorePlugin::NodeAffinity.index(),
            ScorePlugin::NodeResourcesFit.index(),
            ScorePlugin::BalancedAllocation.index(),
        ];
        self.scored.get(k).copied().unwrap_or(true) && !whole.contains(&k)
    }

    /// Everything [`evaluate_rows`] shares between rows.
    pub(super) fn new(p: &Prepared<'_>) -> Statics {
        let t = &p.enc.tensors;
        let nn = p.num_nodes;
        let r = t.node_allocatable.ncols();
        let column_major = |a: &ndarray::Array2<u32>| {
            let mut out = vec![0u32; r * nn];
            for ((n, j), &v) in a.indexed_iter() {
                if n < nn {
                    out[j * nn + n] = v;
                }
            }
            out
        };
        let node_word = (0..nn)
            .map(|n| {
                let mut w = 0;
                if t.node_flags.get(n).is_some_and(|f| f & NODE_UNSCHEDULABLE != 0) {
                    w |= CHECK_NODE_UNSCHEDULABLE;
                }
                if p.node_flags.get(n).is_some_and(|f| f & NODE_ADDED_AFFINITY_FAILS != 0) {
                    w |= CHECK_NODE_AFFINITY_ENFORCED;
                }
                w
            })
            .collect();
        let nodes_with = |csr: &crate::encode::tensors::Csr| {
            (0..nn).filter(|&n| !csr.row(n).is_empty()).map(|n| n as u32).collect()
        };

        // Node affinity: per distinct requirement and term a bitset, per distinct
        // (nodeSelector, required terms) their combination.
        let mut sets = NodeSets { p, requirements: BTreeMap::new(), terms: BTreeMap::new() };
        let mut affinity_sets = Vec::new();
        let mut by_key: BTreeMap<(&[u32], bool, &[u32]), u32> = BTreeMap::new();
        let mut class_affinity = vec![NONE; p.num_classes];
        for (c, slot) in class_affinity.iter_mut().enumerate() {
            let selector = t.class_node_selector.row(c);
            let required =
                t.class_flags.get(c).is_some_and(|f| f & CLASS_HAS_REQUIRED_NODE_AFFINITY != 0);
            let terms = if required { t.class_required_terms.row(c) } else { &[] };
            if selector.is_empty() && !required {
                continue;
            }
            *slot = *by_key.entry((selector, required, terms)).or_insert_with(|| {
                let mut set = sets.all();
                for &req in selector {
                    and(&mut set, sets.requirement(req));
                }
                if required {
                    let mut any = vec![0u64; set.len()];
                    for &term in terms {
                        for (a, b) in any.iter_mut().zip(sets.term(term)) {
                            *a |= b;
                        }
                    }
                    and(&mut set, &any);
                }
                affinity_sets.push(set);
                (affinity_sets.len() - 1) as u32
            });
        }
        for c in 0..p.num_classes {
            for &term in t.class_preferred_terms.row(c) {
                sets.term(term);
            }
        }
        let term_sets = sets.terms;

        // ImageLocality: the inverted index of the nodes' scaled image scores.
        let mut image_nodes = vec![Vec::new(); p.image_names.len()];
        let total_nodes = f64::from(nn as u32);
        for n in 0..nn {
            let (start, count) = p.node_image_ranges.get(n).copied().unwrap_or((0, 0));
            for e in p.node_images.get(start as usize..(start + count) as usize).unwrap_or(&[]) {
                if let Some(list) = image_nodes.get_mut(e.image as usize) {
                    list.push((n as u32, scaled_image_score(e, total_nodes)));
                }
            }
        }

        let mut rank = [u32::MAX; 16];
        for (i, check) in p.check_order.iter().enumerate() {
            if let Some(r) = rank.get_mut(check.index() as usize) {
                *r = (*r).min(i as u32);
            }
        }
        let mut scored = [false; NUM_SCORE_PLANES];
        for (plugin, _) in &p.scores {
            scored[plugin.index()] = true;
        }
        Statics {
            len: nn,
            node: (0..nn as u32).collect(),
            weight: Vec::new(),
            added_score: p.node_added_score.get(..nn).unwrap_or_default().to_vec(),
            r,
            alloc: column_major(&t.node_allocatable),
            used: column_major(&t.node_requested),
            used_nz: column_major(&t.node_nonzero_requested),
            node_word,
            tainted: nodes_with(&t.node_taints),
            ported: nodes_with(&t.node_used_ports),
            affinity_sets,
            class_affinity,
            term_sets,
            image_nodes,
            rank,
            scored,
            simd: InstructionSet::current(),
        }
    }
}

/// `set &= other`.
fn and(set: &mut [u64], other: &[u64]) {
    for (a, b) in set.iter_mut().zip(other) {
        *a &= b;
    }
}

/// Memoized node bitsets of requirements and node terms.
struct NodeSets<'a, 'p> {
    p: &'a Prepared<'p>,
    requirements: BTreeMap<u32, Bits>,
    terms: BTreeMap<u32, Bits>,
}

impl NodeSets<'_, '_> {
    /// Every node.
    fn all(&self) -> Bits {
        let nn = self.p.num_nodes;
        let mut set = vec![u64::MAX; nn.div_ceil(64)];
        if !nn.is_multiple_of(64)
            && let Some(last) = set.last_mut()
        {
            *last = (1u64 << (nn % 64)) - 1;
        }
        set
    }

    /// The nodes requirement `req` holds for.
    fn requirement(&mut self, req: u32) -> &Bits {
        let p = self.p;
        self.requirements.entry(req).or_insert_with(|| {
            let t = &p.enc.tensors;
            let mut set = vec![0u64; p.num_nodes.div_ceil(64)];
            for n in 0..p.num_nodes {
                if t.requirement_matches(req, t.node_labels.row(n), Some(n as u32)) {
                    set[n >> 6] |= 1 << (n & 63);
                }
            }
            set
        })
    }

    /// The nodes node term `term` matches.
    fn term(&mut self, term: u32) -> &Bits {
        if !self.terms.contains_key(&term) {
            let t = &self.p.enc.tensors;
            let never = t
                .node_term_flags
                .get(term as usize)
                .is_none_or(|f| f & crate::encode::tensors::TERM_NEVER_MATCHES != 0);
            let mut set = self.all();
            if never {
                set.fill(0);
            } else {
                for &req in t.node_terms.row(term as usize) {
                    let r = self.requirement(req).clone();
                    and(&mut set, &r);
                }
            }
            self.terms.insert(term, set);
        }
        &self.terms[&term]
    }
}

/// Per-thread scratch arrays, reused from row to row.
#[derive(Default)]
pub(super) struct Scratch {
    /// Dense count tables of the current row's terms.
    tables: Vec<Vec<i32>>,
    /// NodeResourcesFit's score: per node the weights of the resources it counts.
    weight_sum: Vec<i32>,
    /// ImageLocality's per-node sums.
    image_sum: Vec<i64>,
    /// PodTopologySpread: the domains the scored nodes span, per term.
    domains: Vec<Vec<u64>>,
    /// PodTopologySpread: which nodes the row's scoring ignores.
    ignored: Vec<bool>,
    /// The normalized score of each raw score of the row's range, for the plane at hand.
    normalize_table: Vec<i32>,
    /// The caller drops NodeResourcesFit's reason words (the lean evaluation): when the profile
    /// does not filter with NodeResourcesFit they are not computed (its check bit would be
    /// masked out of the filter word anyway).
    drops_fit_words: bool,
}

impl Scratch {
    /// Scratch for a caller that drops NodeResourcesFit's reason words.
    pub(super) fn dropping_fit_words() -> Scratch {
        Scratch { drops_fit_words: true, ..Scratch::default() }
    }
}

/// Fills `tables[0..terms.len()]` with each term's counts, dense: entry `d` is the count of
/// domain (or node index) `d`, 0 without an entry.
fn dense_tables(topo: &Topology, nodes: usize, terms: &[TopoTerm], tables: &mut Vec<Vec<i32>>) {
    if tables.len() < terms.len() {
        tables.resize_with(terms.len(), Vec::new);
    }
    for (term, table) in terms.iter().zip(tables.iter_mut()) {
        let start = term.entry_start as usize;
        let entries =
            topo.entries.get(start..start + term.entry_count as usize).unwrap_or_default();
        // Lookups are by domain id or node index, both below `bound`; entries beyond it are
        // never looked up.
        let bound = topo.domains.get(term.key as usize).map_or(0, Vec::len).max(nodes) + 1;
        table.clear();
        let len = entries.iter().map(|e| e.0 as usize + 1).max().unwrap_or(0).min(bound);
        table.resize(len, 0);
        // Entries are ascending and distinct by domain (the first wins should one repeat).
        for &(d, v) in entries.iter().rev() {
            if let Some(slot) = table.get_mut(d as usize) {
                *slot = v;
            }
        }
    }
}

fn count(table: &[i32], at: u32) -> i32 {
    table.get(at as usize).copied().unwrap_or(0)
}

/// Every step of [`super::evaluate_cells`] for the rows of `r`, a row at a time.
pub(super) fn evaluate_rows(p: &Prepared<'_>, s: &Statics, r: &mut Rows<'_>) {
    let mut scratch = Scratch::default();
    for row in 0..r.len {
        super::simd::evaluate_row(p, s, r, row, &mut scratch);
    }
}

/// One row of `r`: what [`super::simd::evaluate_row`] runs, compiled once per instruction set
/// (inlined into each of its copies).
#[inline(always)]
pub(super) fn evaluate_row_body(
    p: &Prepared<'_>,
    s: &Statics,
    r: &mut Rows<'_>,
    row: usize,
    sc: &mut Scratch,
) {
    // Node columns of the row: nodes, or merged columns standing for equal nodes (then `s.node`
    // names each column's node and `s.weight` how many nodes it stands for).
    let nn = s.len;
    let c = r.first + row;
    debug_assert!(
        s.weight.is_empty() || super::merged::merges(p, c),
        "class {c} reads node identities"
    );
    let cells = row * nn..(row + 1) * nn;
    let t = &p.enc.tensors;
    let flags = p.class_flags[c];
    let k_tt = ScorePlugin::TaintToleration.index();
    let k_na = ScorePlugin::NodeAffinity.index();
    let k_fit = ScorePlugin::NodeResourcesFit.index();
    let k_ba = ScorePlugin::BalancedAllocation.index();
    let k_il = ScorePlugin::ImageLocality.index();
    let k_ipa = ScorePlugin::InterPodAffinity.index();

    // NodeUnschedulable, NodeName, PreFilter, addedAffinity.
    {
        let filter = &mut r.filter[cells.clone()];
        let tolerates =
            t.class_flags.get(c).is_some_and(|f| f & CLASS_TOLERATES_UNSCHEDULABLE != 0);
        let mask = if tolerates { !CHECK_NODE_UNSCHEDULABLE } else { !0 };
        let mut row_bits = 0;
        if flags & CLASS_REJECTED != 0 {
            row_bits |= CHECK_PREFILTER_REJECTED;
        }
        if flags & CLASS_RESTRICTED != 0 {
            row_bits |= CHECK_PREFILTER_ABSENT;
        }
        if flags & CLASS_HAS_NODE_NAME != 0 {
            row_bits |= CHECK_NODE_NAME;
        }
        for (w, &nw) in filter.iter_mut().zip(&s.node_word) {
            *w = (nw & mask) | row_bits;
        }
        if flags & CLASS_RESTRICTED != 0 {
            for &n in p.class_restrict.row(c) {
                if let Some(w) = filter.get_mut(n as usize) {
                    *w &= !CHECK_PREFILTER_ABSENT;
                }
            }
        }
        if flags & CLASS_HAS_NODE_NAME != 0
            && let Some(w) = filter.get_mut(p.class_node_name[c] as usize)
        {
            *w &= !CHECK_NODE_NAME;
        }

        // NodeAffinity's filter: the class's shared node set.
        if let Some(set) = s.affinity_sets.get(s.class_affinity[c] as usize) {
            for (n, w) in filter.iter_mut().enumerate() {
                if !bit(set, n) {
                    *w |= CHECK_NODE_AFFINITY_POD;
                }
            }
        }

        // TaintToleration: only tainted nodes can fail or score.
        let tolerated = t.class_tolerated_taints.row(c);
        let raw_tt = &mut r.raw[k_tt][cells.clone()];
        for &n in &s.tainted {
            let n = n as usize;
            let mut bits = 0u32;
            let mut count = 0i32;
            for &taint in t.node_taints.row(s.node[n] as usize) {
                let effect =
                    t.taint_effects.get(taint as usize).copied().unwrap_or(EFFECT_NO_SCHEDULE);
                let ok = tolerated.binary_search(&taint).is_ok();
                if (effect == EFFECT_NO_SCHEDULE || effect == EFFECT_NO_EXECUTE) && !ok {
                    bits = CHECK_TAINT_TOLERATION;
                }
                if effect == EFFECT_PREFER_NO_SCHEDULE && !ok {
                    count = count.wrapping_add(1);
                }
            }
            filter[n] |= bits;
            raw_tt[n] = count;
        }

        // NodePorts: only nodes with ports in use can conflict.
        if !t.class_host_ports.row(c).is_empty() {
            for &n in &s.ported {
                filter[n as usize] |= node_ports(p, c, s.node[n as usize] as usize);
            }
        }
    }

    // NodeAffinity's score: addedAffinity's weights plus the matching preferred terms'.
    if s.scored[k_na] {
        let raw = &mut r.raw[k_na][cells.clone()];
        raw.copy_from_slice(&s.added_score);
        let (start, _) = t.class_preferred_terms.range(c);
        for (k, &term) in t.class_preferred_terms.row(c).iter().enumerate() {
            let weight = t.class_preferred_weights.get(start as usize + k).copied().unwrap_or(0);
            let Some(set) = s.term_sets.get(&term) else { continue };
            for (wi, &word) in set.iter().enumerate() {
                let mut w = word;
                while w != 0 {
                    let n = wi * 64 + w.trailing_zeros() as usize;
                    w &= w - 1;
                    if let Some(v) = raw.get_mut(n) {
                        *v = v.wrapping_add(weight);
                    }
                }
            }
        }
    }

    // NodeResourcesFit's filter, column by column.
    if !sc.drops_fit_words || p.enabled_checks & CHECK_NODE_RESOURCES_FIT != 0 {
        let fit = &mut r.fit_insufficient[cells.clone()];
        let pods = RESOURCE_PODS * nn..(RESOURCE_PODS + 1) * nn;
        if RESOURCE_PODS < s.r {
            for ((w, &u), &a) in fit.iter_mut().zip(&s.used[pods.clone()]).zip(&s.alloc[pods]) {
                *w = u32::from(u.wrapping_add(1) > a) << RESOURCE_PODS;
            }
        }
        if flags & CLASS_FIT_REQUESTS_NOTHING == 0 {
            let req = t.class_requests.row(c);
            for j in 0..p.fit_columns.len().min(s.r) {
                let want = req[j];
                if p.fit_columns[j] & FIT_COLUMN_CHECKED == 0 || want == 0 {
                    continue;
                }
                let range = j * nn..(j + 1) * nn;
                for ((w, &u), &a) in fit.iter_mut().zip(&s.used[range.clone()]).zip(&s.alloc[range])
                {
                    let over = u32::from(u.wrapping_add(want) > a);
                    let unresolvable = over & u32::from(want > a);
                    *w |= (over << j) | (unresolvable << 31);
                }
            }
        }
        debug_assert_eq!(FIT_UNRESOLVABLE, 1 << 31);
        for (w, &f) in r.filter[cells.clone()].iter_mut().zip(fit.iter()) {
            if f != 0 {
                *w |= CHECK_NODE_RESOURCES_FIT;
            }
        }
    }

    // NodeResourcesFit's and BalancedAllocation's scores: the resource kernels, cell by cell
    // where a class counts more resources than they hold.
    let columns =
        ResourceSoa { len: nn, stride: nn, alloc: &s.alloc, used: &s.used, used_nz: &s.used_nz };
    if s.scored[k_fit] {
        let (req, req_nz) = (t.class_requests.row(c), t.class_nonzero_requests.row(c));
        let raw = &mut r.raw[k_fit][cells.clone()];
        if !fit_row(p, &req, &req_nz, &columns, raw, &mut sc.weight_sum) {
            for (n, v) in raw.iter_mut().enumerate() {
                *v = super::node_resources_fit(p, c, s.node[n] as usize).2;
            }
        }
    }
    if s.scored[k_ba] {
        let raw = &mut r.raw[k_ba][cells.clone()];
        if !balanced_row(p, &t.class_requests.row(c), &columns, raw) {
            for (n, v) in raw.iter_mut().enumerate() {
                *v = super::balanced_allocation(p, c, s.node[n] as usize);
            }
        }
    }

    // ImageLocality: the class's images through the inverted index.
    if s.scored[k_il] {
        let containers = p.class_images.row(c);
        if containers.iter().any(|&id| id != NONE) {
            sc.image_sum.clear();
            sc.image_sum.resize(nn, 0);
            for &id in containers {
                for &(n, scaled) in s.image_nodes.get(id as usize).map_or(&[][..], Vec::as_slice) {
                    let v = &mut sc.image_sum[n as usize];
                    *v = v.wrapping_add(scaled);
                }
            }
            let k = containers.len() as u32;
            for (v, &sum) in r.raw[k_il][cells.clone()].iter_mut().zip(&sc.image_sum) {
                *v = image_priority(sum, k);
            }
        }
    }

    // The inter-pod plugins' filters and InterPodAffinity's raw score.
    let topo = &p.topology;
    let keys = topo.keys.len();
    let domain_of = |n: usize, key: u32| {
        let at = s.node[n] as usize * keys + key as usize;
        topo.node_domains.get(at).copied().unwrap_or(DOMAIN_ABSENT)
    };
    let nodes = p.num_nodes;
    if let Some(class) = topo.classes.get(c) {
        if class.pts_flags & PTS_FILTER != 0 {
            let terms = topo.terms(class.pts_filter);
            dense_tables(topo, nodes, terms, &mut sc.tables);
            let filter = &mut r.filter[cells.clone()];
            for (n, w) in filter.iter_mut().enumerate() {
                for (term, table) in terms.iter().zip(&sc.tables) {
                    let domain = domain_of(n, term.key);
                    if domain & DOMAIN_ABSENT != 0 {
                        *w |= CHECK_POD_TOPOLOGY_SPREAD_LABEL;
                        break;
                    }
                    let self_match = i32::from(term.flags & TERM_SELF_MATCH != 0);
                    let skew =
                        count(table, domain).wrapping_add(self_match).wrapping_sub(term.min_match);
                    if skew > term.skew {
                        *w |= CHECK_POD_TOPOLOGY_SPREAD_SKEW;
                        break;
                    }
                }
            }
        }
        if class.ipa_flags & IPA_FILTER != 0 {
            let fallback = class.ipa_flags & IPA_AFFINITY_FALLBACK != 0;
            let filter = &mut r.filter[cells.clone()];
            let affinity = topo.terms(class.ipa_affinity);
            if !affinity.is_empty() {
                dense_tables(topo, nodes, affinity, &mut sc.tables);
                for (n, w) in filter.iter_mut().enumerate() {
                    let mut missing_key = false;
                    let mut pods_exist = true;
                    for (term, table) in affinity.iter().zip(&sc.tables) {
                        let domain = domain_of(n, term.key);
                        if domain & DOMAIN_ABSENT != 0 {
                            missing_key = true;
                            break;
                        }
                        if count(table, domain) <= 0 {
                            pods_exist = false;
                        }
                    }
                    if missing_key || !(pods_exist || fallback) {
                        *w |= CHECK_INTER_POD_AFFINITY;
                    }
                }
            }
            for (range, check) in [
                (class.ipa_anti_affinity, CHECK_INTER_POD_ANTI_AFFINITY),
                (class.ipa_existing, CHECK_INTER_POD_EXISTING_ANTI_AFFINITY),
            ] {
                let terms = topo.terms(range);
                if terms.is_empty() {
                    continue;
                }
                dense_tables(topo, nodes, terms, &mut sc.tables);
                for (n, w) in filter.iter_mut().enumerate() {
                    let present = terms.iter().zip(&sc.tables).any(|(term, table)| {
                        let domain = domain_of(n, term.key);
                        domain & DOMAIN_ABSENT == 0 && count(table, domain) > 0
                    });
                    if present {
                        *w |= check;
                    }
                }
            }
        }
        if class.ipa_flags & IPA_SCORE != 0 && s.scored[k_ipa] {
            let terms = topo.terms(class.ipa_score);
            dense_tables(topo, nodes, terms, &mut sc.tables);
            for (n, v) in r.raw[k_ipa][cells.clone()].iter_mut().enumerate() {
                let mut score = 0i32;
                for (term, table) in terms.iter().zip(&sc.tables) {
                    let domain = domain_of(n, term.key);
                    if domain & DOMAIN_ABSENT == 0 {
                        score = score.wrapping_add(count(table, domain));
                    }
                }
                *v = score;
            }
        }
    }

    // Feasibility: the enabled failed checks, the first in profile order.
    let enabled = p.enabled_checks & CHECK_MASK;
    let mut feasible_count = 0u32;
    let (mut last_failed, mut last_word) = (0u32, 0u32);
    for w in r.filter[cells.clone()].iter_mut() {
        let failed = *w & enabled;
        if failed == 0 {
            *w = CELL_FEASIBLE;
            feasible_count += 1;
            continue;
        }
        // Cells of a row mostly fail the same checks: the last word's first failure is reused.
        if failed == last_failed {
            *w = last_word;
            continue;
        }
        let (mut best, mut first) = (u32::MAX, 0u32);
        let mut f = failed;
        while f != 0 {
            let b = f.trailing_zeros();
            f &= f - 1;
            let rank = s.rank.get(b as usize).copied().unwrap_or(u32::MAX);
            if rank < best {
                best = rank;
                first = b + 1;
            }
        }
        *w = failed | (first << FIRST_FAILURE_SHIFT);
        (last_failed, last_word) = (failed, *w);
    }
    if !s.weight.is_empty() {
        // Merged columns: each feasible column counts the nodes it stands for.
        feasible_count = r.filter[cells.clone()]
            .iter()
            .zip(&s.weight)
            .filter(|(w, _)| **w & CELL_FEASIBLE != 0)
            .map(|(_, &k)| k)
            .sum();
    }
    r.feasible_count[row] = feasible_count;
    for k in 0..NUM_SCORE_PLANES {
        if k == PTS_PLANE || !s.scored[k] {
            continue;
        }
        let (mut max, mut min) = (r.row_max[k][row], r.row_min[k][row]);
        // Without a branch (an infeasible cell compares as the identity), so that it vectorizes.
        for (&w, &v) in r.filter[cells.clone()].iter().zip(&r.raw[k][cells.clone()]) {
            let feasible = w & CELL_FEASIBLE != 0;
            max = max.max(if feasible { v } else { i32::MIN });
            min = min.min(if feasible { v } else { i32::MAX });
        }
        r.row_max[k][row] = max;
        r.row_min[k][row] = min;
    }

    // PodTopologySpread's score, over the feasible nodes.
    if s.scored[PTS_PLANE]
        && let Some(class) = topo.classes.get(c)
        && class.pts_flags & PTS_SCORE != 0
    {
        pod_topology_spread_score(p, s, r, row, class.pts_score, class.pts_flags, sc);
    }

    // Normalization, totals and the row's best total, plane by plane.
    let mut out_of_range = [None; NUM_SCORE_PLANES];
    for &(plugin, weight) in &p.scores {
        let k = plugin.index();
        if p.class_score_skip[c] & plugin.bit() != 0 {
            continue;
        }
        let (row_max, row_min) = (r.row_max[k][row], r.row_min[k][row]);
        let weight = weight as i32;
        let filter = &r.filter[cells.clone()];
        let raw = &r.raw[k][cells.clone()];
        let narrowed = r.narrowed[k].get_mut(cells.clone()).unwrap_or_default();
        let normalized = match narrowed.is_empty() {
            true => &mut r.normalized[k][cells.clone()],
            false => &mut [][..],
        };
        let out = Out { normalized, narrowed };
        let total = &mut r.total[cells.clone()];
        let normalize = |v: i32| match plugin {
            ScorePlugin::TaintToleration => default_normalize(v, row_max, true),
            ScorePlugin::NodeAffinity => default_normalize(v, row_max, false),
            ScorePlugin::NodeResourcesFit
            | ScorePlugin::BalancedAllocation
            | ScorePlugin::ImageLocality => v,
            ScorePlugin::PodTopologySpread => pod_topology_spread_normalize(v, row_max, row_min),
            ScorePlugin::InterPodAffinity => inter_pod_affinity_normalize(v, row_max, row_min),
        };
        let identity = matches!(
            plugin,
            ScorePlugin::NodeResourcesFit
                | ScorePlugin::BalancedAllocation
                | ScorePlugin::ImageLocality
        );
        let bad = if identity {
            normalize_row(filter, raw, out, total, weight, |v| v)
        } else if row_min <= row_max
            && (row_max.abs_diff(row_min) as usize) < (nn / 2).min(NORMALIZE_TABLE)
        {
            // The feasible cells' raw scores lie in row_min..=row_max (PodTopologySpread's
            // ignored nodes excepted): their normalized scores come from a table of the
            // range, so no cell divides.
            sc.normalize_table.clear();
            sc.normalize_table.extend((row_min..=row_max).map(normalize));
            let table = &sc.normalize_table;
            normalize_row(filter, raw, out, total, weight, |v| {
                match table.get(v.wrapping_sub(row_min) as u32 as usize) {
                    Some(&x) => x,
                    None => normalize(v),
                }
            })
        } else {
            normalize_row(filter, raw, out, total, weight, normalize)
        };
        // The first out-of-range score of a feasible cell, looked for only when there is one.
        let first_bad = bad
            .then(|| {
                filter.iter().zip(raw).find_map(|(&w, &v)| {
                    let x = normalize(v);
                    (w & CELL_FEASIBLE != 0
                        && !(MIN_NODE_SCORE..=MAX_NODE_SCORE).contains(&i64::from(x)))
                    .then_some(x)
                })
            })
            .flatten();
        out_of_range[k] = first_bad;
    }
    for v in r.raw[PTS_PLANE][cells.clone()].iter_mut() {
        if *v == PTS_IGNORED {
            *v = 0;
        }
    }
    let mut best = r.best_total[row];
    for (&w, &v) in r.filter[cells.clone()].iter().zip(&r.total[cells]) {
        best = best.max(if w & CELL_FEASIBLE != 0 { v } else { i32::MIN });
    }
    r.best_total[row] = best;
    if let Some(o) = r.out_of_range.get_mut(row) {
        *o = out_of_range;
    }
}

/// Rows whose feasible raw scores span fewer values than this (and than half the nodes) are
/// normalized through a table of the span (no division per cell).
const NORMALIZE_TABLE: usize = 4096;

/// Where a plane's normalized scores go: `narrowed` ([`narrow`]ed, for a lean matrix that keeps
/// the plane) when it is not empty, else `normalized`.
struct Out<'a> {
    normalized: &'a mut [i32],
    narrowed: &'a mut [u8],
}

/// One plane of a row normalized: `normalized = f(raw)` and `total += weight · normalized` on
/// the feasible cells (the word's [`CELL_FEASIBLE`] bit, bit 31, as a mask), 0 written to the
/// others. Returns whether a feasible cell's normalized score is outside 0–100.
#[inline(always)]
fn normalize_row(
    filter: &[u32],
    raw: &[i32],
    out: Out<'_>,
    total: &mut [i32],
    weight: i32,
    f: impl Fn(i32) -> i32,
) -> bool {
    debug_assert_eq!(CELL_FEASIBLE, 1 << 31);
    let mut bad = false;
    let x = |w: u32, v: i32| if (w as i32) >> 31 != 0 { f(v) } else { 0 };
    if out.narrowed.is_empty() {
        for (((&w, &v), out), sum) in filter.iter().zip(raw).zip(out.normalized).zip(total) {
            let x = x(w, v);
            *out = x;
            *sum = sum.wrapping_add(x.wrapping_mul(weight));
            bad |= x as u32 > MAX_NODE_SCORE as u32;
        }
    } else {
        for (((&w, &v), out), sum) in filter.iter().zip(raw).zip(out.narrowed).zip(total) {
            let x = x(w, v);
            *out = narrow(x);
            *sum = sum.wrapping_add(x.wrapping_mul(weight));
            bad |= x as u32 > MAX_NODE_SCORE as u32;
        }
    }
    bad
}

/// [`super::pod_topology_spread_score`] for one row, with dense tables and domain bitmaps.
#[inline(always)]
fn pod_topology_spread_score(
    p: &Prepared<'_>,
    s: &Statics,
    r: &mut Rows<'_>,
    row: usize,
    range: (u32, u32),
    pts_flags: u32,
    sc: &mut Scratch,
) {
    let (topo, nn) = (&p.topology, s.len);
    let keys = topo.keys.len();
    let domain_of = |n: usize, key: u32| {
        let at = s.node[n] as usize * keys + key as usize;
        topo.node_domains.get(at).copied().unwrap_or(DOMAIN_ABSENT)
    };
    let cells = row * nn..(row + 1) * nn;
    let terms = topo.terms(range);
    let require_all = pts_flags & PTS_REQUIRE_ALL != 0;
    sc.ignored.clear();
    sc.ignored
        .extend((0..nn).map(|n| {
            require_all && terms.iter().any(|t| domain_of(n, t.key) & DOMAIN_ABSENT != 0)
        }));
    if sc.domains.len() < terms.len() {
        sc.domains.resize_with(terms.len(), Vec::new);
    }
    for (t, set) in terms.iter().zip(sc.domains.iter_mut()) {
        set.clear();
        let size = topo.domains.get(t.key as usize).map_or(0, Vec::len);
        set.resize(size.div_ceil(64).max(1), 0);
    }
    let mut scored = 0usize;
    for n in 0..nn {
        if r.filter[cells.start + n] & CELL_FEASIBLE == 0 || sc.ignored[n] {
            continue;
        }
        scored += s.weight.get(n).map_or(1, |&k| k as usize);
        for (t, set) in terms.iter().zip(sc.domains.iter_mut()) {
            if t.flags & TERM_HOSTNAME == 0 {
                let d = (domain_of(n, t.key) & DOMAIN_MASK) as usize;
                if d >= set.len() * 64 {
                    set.resize(d / 64 + 1, 0);
                }
                set[d >> 6] |= 1 << (d & 63);
            }
        }
    }
    let mut weights = [0.0f64; 8];
    let mut weight_vec = Vec::new();
    let weights: &mut [f64] = if terms.len() <= weights.len() {
        &mut weights[..terms.len()]
    } else {
        weight_vec.resize(terms.len(), 0.0);
        &mut weight_vec
    };
    for ((t, set), w) in terms.iter().zip(&sc.domains).zip(weights.iter_mut()) {
        let size = if t.flags & TERM_HOSTNAME != 0 {
            scored
        } else {
            set.iter().map(|w| w.count_ones() as usize).sum()
        };
        *w = f64::from_bits(topo.pts_weight_table.get(size).copied().unwrap_or(0));
    }
    dense_tables(topo, p.num_nodes, terms, &mut sc.tables);
    let (mut max, mut min) = (r.row_max[PTS_PLANE][row], r.row_min[PTS_PLANE][row]);
    for n in 0..nn {
        let i = cells.start + n;
        if sc.ignored[n] {
            r.raw[PTS_PLANE][i] = PTS_IGNORED;
            continue;
        }
        let mut score = 0.0f64;
        for ((t, &weight), table) in terms.iter().zip(weights.iter()).zip(&sc.tables) {
            let domain = domain_of(n, t.key);
            if domain & DOMAIN_ABSENT != 0 {
                continue;
            }
            let at = if t.flags & TERM_HOSTNAME != 0 { s.node[n] } else { domain };
            score = pts_add(score, count(table, at), weight, t.skew);
        }
        let raw = score.round() as i64 as i32;
        r.raw[PTS_PLANE][i] = raw;
        if r.filter[i] & CELL_FEASIBLE != 0 {
            max = max.max(raw);
            min = min.min(raw);
        }
    }
    r.row_max[PTS_PLANE][row] = max;
    r.row_min[PTS_PLANE][row] = min;
}
