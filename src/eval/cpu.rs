//! The CPU matrix evaluator: the reference the WGSL kernels in `shaders/` are compared against.
//!
//! Input: [`Prepared`] (the encoded arrays plus the profile's plans). Output: a [`Matrix`].
//! Upstream counterpart (v1.35): the plugins' `Filter`/`Score`/`NormalizeScore` in
//! `pkg/scheduler/framework/plugins/{nodeunschedulable,nodename,tainttoleration,nodeaffinity,
//! nodeports,noderesources,imagelocality,podtopologyspread,interpodaffinity}/`, re-expressed on
//! encoded ids and units and on the count tables of [`super::topology`]; `float64` steps use
//! native `f64` in upstream's order (correctly rounded, as Go's `float64`; the GPU computes the
//! same steps with the software binary64 of `shaders/f64.wgsl`, whose Rust twin
//! [`super::softf64`] is tested bit for bit against native `f64`).
//!
//! Each function here has a kernel of the same name in `shaders/<name>.wgsl` and mirrors it line
//! by line, with the same integer types: `u32` amounts, `i32` scores, wrapping where WGSL wraps.
//! [`evaluate_cells`] runs them cell by cell in the order the GPU dispatches them: every filter
//! and raw-score kernel, then [`feasibility`] (the filter word, row maxima and minima, feasible
//! counts), then PodTopologySpread's scoring (which needs the feasible nodes), then
//! [`normalize_score`] (normalized scores, totals, best totals): the specification.
//! [`evaluate`] and [`evaluate_parallel`] run the same steps a class row at a time ([`rows`]),
//! with what no class changes computed once per evaluation, and give the same matrix bit for
//! bit; each step reads the prepared inputs, those shared tables and its own class row only, so
//! [`evaluate_parallel`] runs runs of rows on rayon's threads.

use super::prep::{
    CLASS_FIT_REQUESTS_NOTHING, CLASS_HAS_NODE_NAME, CLASS_REJECTED, CLASS_RESTRICTED,
    FIT_COLUMN_CHECKED, FIT_KIND_NON_ZERO, FIT_KIND_OTHER, FIT_KIND_SCALAR, FitSpec,
    NODE_ADDED_AFFINITY_FAILS, NUM_SCORE_PLANES, Prepared, STRATEGY_LEAST_ALLOCATED,
    STRATEGY_MOST_ALLOCATED, STRATEGY_REQUESTED_TO_CAPACITY_RATIO, ScorePlugin,
};
use super::topology::{
    DOMAIN_ABSENT, DOMAIN_MASK, IPA_AFFINITY_FALLBACK, IPA_FILTER, IPA_SCORE, PTS_FILTER,
    PTS_REQUIRE_ALL, PTS_SCORE, TERM_HOSTNAME, TERM_SELF_MATCH, TopoTerm,
};
use super::{
    CELL_FEASIBLE, CHECK_INTER_POD_AFFINITY, CHECK_INTER_POD_ANTI_AFFINITY,
    CHECK_INTER_POD_EXISTING_ANTI_AFFINITY, CHECK_MASK, CHECK_NODE_AFFINITY_ENFORCED,
    CHECK_NODE_AFFINITY_POD, CHECK_NODE_NAME, CHECK_NODE_PORTS, CHECK_NODE_RESOURCES_FIT,
    CHECK_NODE_UNSCHEDULABLE, CHECK_POD_TOPOLOGY_SPREAD_LABEL, CHECK_POD_TOPOLOGY_SPREAD_SKEW,
    CHECK_PREFILTER_ABSENT, CHECK_PREFILTER_REJECTED, CHECK_TAINT_TOLERATION, FIRST_FAILURE_SHIFT,
    FIT_UNRESOLVABLE, Matrix, RawResults,
};
use ndarray::ArrayView1;
use std::ops::Index;

use crate::encode::dict::RESOURCE_PODS;
use crate::encode::gpu_types::PORT_WILDCARD_IP;
use crate::encode::tensors::{
    CLASS_TOLERATES_UNSCHEDULABLE, EFFECT_NO_EXECUTE, EFFECT_NO_SCHEDULE,
    EFFECT_PREFER_NO_SCHEDULE, NODE_UNSCHEDULABLE, NONE,
};
use crate::encode::units::MAX_NODE_SCORE;

mod lean;
mod merged;
pub(crate) mod resource_rows;
mod rows;
mod simd;

pub use lean::{evaluate_lean, evaluate_lean_into};
pub(crate) use simd::resource_rows;
pub use simd::{InstructionSet, with_instruction_set};

/// Evaluates every cell on the CPU, on one thread, a class row at a time (the row evaluator
/// of [`rows`]): equal bit for bit to [`evaluate_cells`], the specification.
pub fn evaluate(p: &Prepared<'_>) -> Matrix {
    let (nc, nn) = (p.num_classes, p.num_nodes);
    let statics = rows::Statics::new(p);
    let mut r = RawResults::new(nc, nc * nn);
    r.out_of_range = Some(vec![[None; NUM_SCORE_PLANES]; nc]);
    for mut rows in Rows::split(&mut r, nn, &[nc]) {
        rows::evaluate_rows(p, &statics, &mut rows);
    }
    r.into_matrix(p)
}

/// Evaluates every cell on the CPU cell by cell with the functions of this module, in the
/// order the GPU dispatches its kernels: the specification that [`evaluate`],
/// [`evaluate_parallel`] and the GPU kernels reproduce bit for bit (slower; the tests use it).
pub fn evaluate_cells(p: &Prepared<'_>) -> Matrix {
    let (nc, nn) = (p.num_classes, p.num_nodes);
    let mut r = RawResults::new(nc, nc * nn);
    for mut rows in Rows::split(&mut r, nn, &[nc]) {
        evaluate_rows(p, &mut rows);
    }
    r.into_matrix(p)
}

/// Evaluates every cell on the CPU with `threads` threads (0: rayon's global pool, all cores
/// unless `RAYON_NUM_THREADS` says otherwise; 1: [`evaluate`] itself, no thread is started).
///
/// The matrix is cut into runs of class rows, evaluated concurrently: every step (filters and
/// raw scores, feasibility and row reductions, PodTopologySpread's scoring, normalization)
/// reads only the prepared inputs, the shared class-independent tables and its own row, so the
/// result is equal bit for bit to [`evaluate`]'s whatever the number of threads. When a pool
/// of `threads` threads cannot be started, evaluates on the current thread.
pub fn evaluate_parallel(p: &Prepared<'_>, threads: usize) -> Matrix {
    let (nc, nn) = (p.num_classes, p.num_nodes);
    let pool = match threads {
        0 | 1 => None,
        n => rayon::ThreadPoolBuilder::new().num_threads(n).build().ok(),
    };
    let workers = match (&pool, threads) {
        (Some(pool), _) => pool.current_num_threads(),
        (None, 0) => rayon::current_num_threads(),
        (None, _) => 1,
    };
    if workers <= 1 || nc <= 1 {
        return evaluate(p);
    }
    let statics = rows::Statics::new(p);
    // A few runs per thread so that rows of unequal cost (long toleration or term lists, a
    // PodTopologySpread row) balance out; at least one row per run.
    let runs = (workers * 4).min(nc);
    let lens: Vec<usize> =
        (0..runs).map(|k| (k + 1) * nc / runs - k * nc / runs).filter(|&l| l > 0).collect();
    let mut r = RawResults::new(nc, nc * nn);
    r.out_of_range = Some(vec![[None; NUM_SCORE_PLANES]; nc]);
    let split = Rows::split(&mut r, nn, &lens);
    let statics = &statics;
    let work = move || {
        use rayon::prelude::*;
        split.into_par_iter().for_each(|mut rows| rows::evaluate_rows(p, statics, &mut rows));
    };
    match &pool {
        Some(pool) => pool.install(work),
        None => work(),
    }
    r.into_matrix(p)
}

/// A run of consecutive class rows of a [`RawResults`], borrowed mutably: classes
/// `first .. first + len`, with their cells and per-class results (local row `row` is class
/// `first + row`; its cells start at `row * num_nodes`).
struct Rows<'a> {
    first: usize,
    len: usize,
    filter: &'a mut [u32],
    fit_insufficient: &'a mut [u32],
    raw: [&'a mut [i32]; NUM_SCORE_PLANES],
    normalized: [&'a mut [i32]; NUM_SCORE_PLANES],
    /// Planes the lean evaluation keeps, a byte a cell ([`super::narrow`]): where one is not
    /// empty the row evaluator writes the plane's normalized scores there instead of into
    /// `normalized` (empty for a full matrix).
    narrowed: [&'a mut [u8]; NUM_SCORE_PLANES],
    total: &'a mut [i32],
    row_max: [&'a mut [i32]; NUM_SCORE_PLANES],
    row_min: [&'a mut [i32]; NUM_SCORE_PLANES],
    feasible_count: &'a mut [u32],
    best_total: &'a mut [i32],
    /// Per class of the run: the first normalized score outside 0–100 of a feasible cell, per
    /// plane (empty when the evaluator leaves that to [`RawResults::into_matrix`]).
    out_of_range: &'a mut [[Option<i32>; NUM_SCORE_PLANES]],
}

/// Cuts `s` into consecutive pieces of `unit × len` elements, one per entry of `lens`.
fn pieces<'a, T>(mut s: &'a mut [T], lens: &[usize], unit: usize) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(lens.len());
    for &len in lens {
        let at = (len * unit).min(s.len());
        let (head, tail) = std::mem::take(&mut s).split_at_mut(at);
        out.push(head);
        s = tail;
    }
    out
}

/// [`pieces`] of each plane, regrouped by piece.
fn plane_pieces<'a, T>(
    planes: &'a mut [Vec<T>; NUM_SCORE_PLANES],
    lens: &[usize],
    unit: usize,
) -> Vec<[&'a mut [T]; NUM_SCORE_PLANES]> {
    let mut per_plane: Vec<std::vec::IntoIter<&'a mut [T]>> =
        planes.iter_mut().map(|v| pieces(v, lens, unit).into_iter()).collect();
    (0..lens.len())
        .map(|_| std::array::from_fn(|k| per_plane[k].next().unwrap_or_default()))
        .collect()
}

impl<'a> Rows<'a> {
    /// `r` (of `Σ lens` classes and `num_nodes` nodes) cut into runs of `lens` rows, in order.
    fn split(r: &'a mut RawResults, num_nodes: usize, lens: &[usize]) -> Vec<Rows<'a>> {
        let mut filter = pieces(&mut r.filter, lens, num_nodes).into_iter();
        let mut fit = pieces(&mut r.fit_insufficient, lens, num_nodes).into_iter();
        let mut raw = plane_pieces(&mut r.raw, lens, num_nodes).into_iter();
        let mut normalized = plane_pieces(&mut r.normalized, lens, num_nodes).into_iter();
        let mut total = pieces(&mut r.total, lens, num_nodes).into_iter();
        let mut row_max = plane_pieces(&mut r.row_max, lens, 1).into_iter();
        let mut row_min = plane_pieces(&mut r.row_min, lens, 1).into_iter();
        let mut feasible_count = pieces(&mut r.feasible_count, lens, 1).into_iter();
        let mut best_total = pieces(&mut r.best_total, lens, 1).into_iter();
        let unit = usize::from(r.out_of_range.is_some());
        let mut out_of_range =
            pieces(r.out_of_range.as_deref_mut().unwrap_or_default(), lens, unit).into_iter();
        let mut first = 0;
        let mut out = Vec::with_capacity(lens.len());
        for &len in lens {
            out.push(Rows {
                first,
                len,
                filter: filter.next().unwrap_or_default(),
                fit_insufficient: fit.next().unwrap_or_default(),
                raw: raw.next().unwrap_or_default(),
                normalized: normalized.next().unwrap_or_default(),
                narrowed: Default::default(),
                total: total.next().unwrap_or_default(),
                row_max: row_max.next().unwrap_or_default(),
                row_min: row_min.next().unwrap_or_default(),
                feasible_count: feasible_count.next().unwrap_or_default(),
                best_total: best_total.next().unwrap_or_default(),
                out_of_range: out_of_range.next().unwrap_or_default(),
            });
            first += len;
        }
        out
    }
}

/// [`evaluate`]'s steps over one run of class rows: every filter and raw-score kernel, then
/// [`feasibility`] with the row reductions, then PodTopologySpread's scoring, then
/// [`normalize_score`].
fn evaluate_rows(p: &Prepared<'_>, r: &mut Rows<'_>) {
    let nn = p.num_nodes;
    for row in 0..r.len {
        let c = r.first + row;
        for n in 0..nn {
            let i = row * nn + n;
            let mut word = node_unschedulable(p, c, n);
            word |= node_name(p, c, n);
            let (bits, raw_tt) = taint_toleration(p, c, n);
            word |= bits;
            let (bits, raw_na) = node_affinity(p, c, n);
            word |= bits;
            word |= node_ports(p, c, n);
            let (bits, insufficient, raw_fit) = node_resources_fit(p, c, n);
            word |= bits;
            word |= pod_topology_spread(p, c, n);
            let (bits, raw_ipa) = inter_pod_affinity(p, c, n);
            word |= bits;
            r.filter[i] = word;
            r.raw[ScorePlugin::InterPodAffinity.index()][i] = raw_ipa;
            r.fit_insufficient[i] = insufficient;
            r.raw[ScorePlugin::TaintToleration.index()][i] = raw_tt;
            r.raw[ScorePlugin::NodeAffinity.index()][i] = raw_na;
            r.raw[ScorePlugin::NodeResourcesFit.index()][i] = raw_fit;
            r.raw[ScorePlugin::BalancedAllocation.index()][i] = balanced_allocation(p, c, n);
            r.raw[ScorePlugin::ImageLocality.index()][i] = image_locality(p, c, n);
        }
    }
    for row in 0..r.len {
        for n in 0..nn {
            let i = row * nn + n;
            r.filter[i] = feasibility(p, r.filter[i]);
            if r.filter[i] & CELL_FEASIBLE != 0 {
                r.feasible_count[row] += 1;
                for k in 0..NUM_SCORE_PLANES {
                    if k == PTS_PLANE {
                        continue;
                    }
                    let v = r.raw[k][i];
                    r.row_max[k][row] = r.row_max[k][row].max(v);
                    r.row_min[k][row] = r.row_min[k][row].min(v);
                }
            }
        }
    }
    for row in 0..r.len {
        pod_topology_spread_score(p, row, r);
    }
    for row in 0..r.len {
        let c = r.first + row;
        let row_max: [i32; NUM_SCORE_PLANES] = std::array::from_fn(|k| r.row_max[k][row]);
        let row_min: [i32; NUM_SCORE_PLANES] = std::array::from_fn(|k| r.row_min[k][row]);
        for n in 0..nn {
            let i = row * nn + n;
            let raw: [i32; NUM_SCORE_PLANES] = std::array::from_fn(|k| r.raw[k][i]);
            let (normalized, total) = normalize_score(p, c, r.filter[i], &raw, &row_max, &row_min);
            // An ignored node's sentinel becomes the 0 upstream's Score gives it.
            if r.raw[PTS_PLANE][i] == PTS_IGNORED {
                r.raw[PTS_PLANE][i] = 0;
            }
            for (plane, v) in r.normalized.iter_mut().zip(normalized) {
                plane[i] = v;
            }
            r.total[i] = total;
            if r.filter[i] & CELL_FEASIBLE != 0 {
                r.best_total[row] = r.best_total[row].max(total);
            }
        }
    }
}

/// `node_unschedulable.wgsl`: a cordoned node rejects a class that does not tolerate the
/// `node.kubernetes.io/unschedulable:NoSchedule` taint.
pub fn node_unschedulable(p: &Prepared<'_>, c: usize, n: usize) -> u32 {
    let t = &p.enc.tensors;
    let cordoned = t.node_flags[n] & NODE_UNSCHEDULABLE != 0;
    let tolerates = t.class_flags[c] & CLASS_TOLERATES_UNSCHEDULABLE != 0;
    if cordoned && !tolerates { CHECK_NODE_UNSCHEDULABLE } else { 0 }
}

/// `node_name.wgsl`: a class that names a node fits only that node.
pub fn node_name(p: &Prepared<'_>, c: usize, n: usize) -> u32 {
    if p.class_flags[c] & CLASS_HAS_NODE_NAME != 0 && p.class_node_name[c] != n as u32 {
        CHECK_NODE_NAME
    } else {
        0
    }
}

/// `taint_toleration.wgsl`: the filter bit (an untolerated `NoSchedule`/`NoExecute` taint) and
/// the raw score (untolerated `PreferNoSchedule` taints).
pub fn taint_toleration(p: &Prepared<'_>, c: usize, n: usize) -> (u32, i32) {
    let t = &p.enc.tensors;
    let tolerated = t.class_tolerated_taints.row(c);
    let mut bits = 0u32;
    let mut count = 0i32;
    for &taint in t.node_taints.row(n) {
        let effect = t.taint_effects.get(taint as usize).copied().unwrap_or(EFFECT_NO_SCHEDULE);
        let ok = tolerated.binary_search(&taint).is_ok();
        if (effect == EFFECT_NO_SCHEDULE || effect == EFFECT_NO_EXECUTE) && !ok {
            bits = CHECK_TAINT_TOLERATION;
        }
        if effect == EFFECT_PREFER_NO_SCHEDULE && !ok {
            count = count.wrapping_add(1);
        }
    }
    (bits, count)
}

/// `node_affinity.wgsl`: the PreFilter bits (class rejected; node outside the restriction), the
/// filter bits (`addedAffinity`; `nodeSelector` and required terms) and the raw score (weights of
/// the matching preferred terms plus `addedAffinity`'s).
pub fn node_affinity(p: &Prepared<'_>, c: usize, n: usize) -> (u32, i32) {
    let t = &p.enc.tensors;
    let mut bits = 0u32;
    let flags = p.class_flags[c];
    if flags & CLASS_REJECTED != 0 {
        bits |= CHECK_PREFILTER_REJECTED;
    }
    if flags & CLASS_RESTRICTED != 0 && p.class_restrict.row(c).binary_search(&(n as u32)).is_err()
    {
        bits |= CHECK_PREFILTER_ABSENT;
    }
    if p.node_flags[n] & NODE_ADDED_AFFINITY_FAILS != 0 {
        bits |= CHECK_NODE_AFFINITY_ENFORCED;
    }
    if !t.class_required_node_affinity_matches(c, n) {
        bits |= CHECK_NODE_AFFINITY_POD;
    }
    let (start, _) = t.class_preferred_terms.range(c);
    let mut score = p.node_added_score[n];
    for (k, &term) in t.class_preferred_terms.row(c).iter().enumerate() {
        if t.node_term_matches(term, n) {
            let weight = t.class_preferred_weights.get(start as usize + k).copied().unwrap_or(0);
            score = score.wrapping_add(weight);
        }
    }
    (bits, score)
}

/// `node_ports.wgsl`: a wanted host port conflicts with a used one when protocol and port are
/// equal and either IP is `0.0.0.0` or the IPs are equal.
pub fn node_ports(p: &Prepared<'_>, c: usize, n: usize) -> u32 {
    let (t, g) = (&p.enc.tensors, &p.enc.gpu);
    for &w in t.class_host_ports.row(c) {
        let Some(want) = g.host_ports.get(w as usize) else { continue };
        for &u in t.node_used_ports.row(n) {
            let Some(used) = g.host_ports.get(u as usize) else { continue };
            let wildcard = (want.flags | used.flags) & PORT_WILDCARD_IP != 0;
            if want.protocol == used.protocol
                && want.port == used.port
                && (wildcard || want.ip == used.ip)
            {
                return CHECK_NODE_PORTS;
            }
        }
    }
    0
}

/// `node_resources_fit.wgsl`: the filter bit, the insufficient-resource word and the raw score
/// of the profile's scoring strategy.
pub fn node_resources_fit(p: &Prepared<'_>, c: usize, n: usize) -> (u32, u32, i32) {
    node_resources_fit_on(p, c, NodeColumn::of(p, n))
}

/// One node's resource columns (encoded units, one entry per resource column): what the
/// usage-dependent cells read. [`super::columns`] passes usage other than the encoding's.
#[derive(Debug, Clone, Copy)]
pub struct NodeColumn<'a> {
    /// Allocatable.
    pub allocatable: ArrayView1<'a, u32>,
    /// Requested (the pod count in the `pods` column).
    pub requested: ArrayView1<'a, u32>,
    /// Requested with the non-zero defaults in `cpu` and `memory`.
    pub nonzero_requested: ArrayView1<'a, u32>,
}

impl<'a> NodeColumn<'a> {
    /// Node `n` as the encoding has it.
    pub fn of(p: &Prepared<'a>, n: usize) -> Self {
        let t = &p.enc.tensors;
        NodeColumn {
            allocatable: t.node_allocatable.row(n),
            requested: t.node_requested.row(n),
            nonzero_requested: t.node_nonzero_requested.row(n),
        }
    }

    /// A node given by its three rows.
    pub fn new(allocatable: &'a [u32], requested: &'a [u32], nonzero: &'a [u32]) -> Self {
        NodeColumn {
            allocatable: ArrayView1::from(allocatable),
            requested: ArrayView1::from(requested),
            nonzero_requested: ArrayView1::from(nonzero),
        }
    }
}

/// [`node_resources_fit`] on a node given by its resource columns.
pub fn node_resources_fit_on(p: &Prepared<'_>, c: usize, node: NodeColumn<'_>) -> (u32, u32, i32) {
    let t = &p.enc.tensors;
    let (alloc, used, used_nz) = (node.allocatable, node.requested, node.nonzero_requested);
    let req = t.class_requests.row(c);
    let req_nz = t.class_nonzero_requests.row(c);

    // Filter (upstream `fitsRequest`): the pod count, then every checked column.
    let mut word = 0u32;
    if used[RESOURCE_PODS] + 1 > alloc[RESOURCE_PODS] {
        word |= 1 << RESOURCE_PODS;
    }
    if p.class_flags[c] & CLASS_FIT_REQUESTS_NOTHING == 0 {
        for j in 0..p.fit_columns.len() {
            let want = req[j];
            if p.fit_columns[j] & FIT_COLUMN_CHECKED == 0 || want == 0 {
                continue;
            }
            // `want > capacity − used`, without going negative.
            if used[j] + want > alloc[j] {
                word |= 1 << j;
                if want > alloc[j] {
                    word |= FIT_UNRESOLVABLE;
                }
            }
        }
    }
    let bits = if word != 0 { CHECK_NODE_RESOURCES_FIT } else { 0 };
    (bits, word, fit_score(p, &req, &req_nz, &alloc, &used, &used_nz))
}

/// NodeResourcesFit's raw score (upstream `resourceAllocationScorer.score` and the strategy's
/// scorer) of a pod requesting `req` (`req_nz` with the non-zero defaults) on a node of
/// allocatable `alloc` with `used` (`used_nz`) requested: rows of the encoding's resource
/// columns, as matrix rows or slices.
#[inline]
pub(crate) fn fit_score<A: Index<usize, Output = u32> + ?Sized>(
    p: &Prepared<'_>,
    req: &A,
    req_nz: &A,
    alloc: &A,
    used: &A,
    used_nz: &A,
) -> i32 {
    let mut node_score = 0i32;
    let mut weight_sum = 0i32;
    for spec in &p.fit_specs {
        if spec.column == NONE {
            continue;
        }
        let j = spec.column as usize;
        let (pod, node_used) = match spec.kind {
            FIT_KIND_NON_ZERO => (req_nz[j], used_nz[j]),
            FIT_KIND_SCALAR => (req[j], used[j]),
            FIT_KIND_OTHER => (0, used[j]),
            _ => (req[j], used[j]),
        };
        if spec.kind == FIT_KIND_SCALAR && pod == 0 {
            continue;
        }
        let capacity = alloc[j];
        if capacity == 0 {
            continue;
        }
        let requested = node_used + pod;
        let s = resource_score(p, requested, capacity);
        // RequestedToCapacityRatio leaves resources scoring 0 out of the weighted mean.
        let counted = p.fit_strategy != STRATEGY_REQUESTED_TO_CAPACITY_RATIO || s > 0;
        if counted {
            node_score = node_score.wrapping_add(s.wrapping_mul(spec.weight));
            weight_sum = weight_sum.wrapping_add(spec.weight);
        }
    }
    if weight_sum == 0 {
        0
    } else if p.fit_strategy != STRATEGY_REQUESTED_TO_CAPACITY_RATIO {
        node_score / weight_sum
    } else {
        // round(node_score / weight_sum), half away from zero, for non-negative integers.
        (2 * node_score + weight_sum) / (2 * weight_sum)
    }
}

/// One resource's score under the profile's strategy (`requested ≤ 2 · AMOUNT_MAX`,
/// `capacity > 0`, so `× 100` fits `u32`).
#[inline]
pub(super) fn resource_score(p: &Prepared<'_>, requested: u32, capacity: u32) -> i32 {
    let max = MAX_NODE_SCORE;
    let s = match p.fit_strategy {
        STRATEGY_LEAST_ALLOCATED => {
            if requested > capacity {
                0
            } else {
                small_quotient((capacity - requested).wrapping_mul(max), capacity)
            }
        }
        STRATEGY_MOST_ALLOCATED => {
            small_quotient(requested.min(capacity).wrapping_mul(max), capacity)
        }
        _ => {
            let utilization = if requested > capacity { max } else { requested * max / capacity };
            return broken_linear(&p.shape, utilization as i32);
        }
    };
    s as i32
}

/// `a / b` (truncating; 0 for `b = 0`), in `f64` when the quotient is below 2^20: exact, and
/// a vector division where the loop vectorizes. With `q < 2^20` the rounding error of
/// `a as f64 / b as f64` is below `2^20 · 2^-53 = 2^-33`, while a quotient that is not an
/// integer is at least `1 / b ≥ 2^-32` away from one, so truncation cannot cross an integer
/// (an integer quotient is exact). Resource scores' quotients are at most 100.
#[inline]
pub(crate) fn small_quotient(a: u32, b: u32) -> u32 {
    if b == 0 || a >> 20 >= b {
        return a.checked_div(b).unwrap_or(0);
    }
    (f64::from(a) / f64::from(b)) as u32
}

/// RequestedToCapacityRatio's piecewise-linear function at `u` (upstream
/// `BuildBrokenLinearFunction`, truncating division).
pub fn broken_linear(shape: &[(i32, i32)], u: i32) -> i32 {
    let mut prev: Option<(i32, i32)> = None;
    for &(pu, ps) in shape {
        if u <= pu {
            return match prev {
                None => ps,
                Some((au, as_)) => as_ + (ps - as_) * (u - au) / (pu - au),
            };
        }
        prev = Some((pu, ps));
    }
    shape.last().map_or(0, |&(_, s)| s)
}

/// One fraction of `balanced_allocation.wgsl`: `min(requested / allocatable, 1)` of a scored
/// resource, or `None` when the resource takes no part (no column, allocatable 0, or a scalar
/// resource the class does not request).
#[inline]
fn balanced_fraction<A: Index<usize, Output = u32> + ?Sized>(
    spec: &FitSpec,
    req: &A,
    alloc: &A,
    used: &A,
) -> Option<f64> {
    if spec.column == NONE {
        return None;
    }
    let j = spec.column as usize;
    let pod = if spec.kind == FIT_KIND_OTHER { 0 } else { req[j] };
    if spec.kind == FIT_KIND_SCALAR && pod == 0 {
        return None;
    }
    let capacity = alloc[j];
    if capacity == 0 {
        return None;
    }
    let requested = used[j].wrapping_add(pod);
    let mut f = f64::from(requested) / f64::from(capacity);
    if 1.0 < f {
        f = 1.0;
    }
    Some(f)
}

/// `balanced_allocation.wgsl`: NodeResourcesBalancedAllocation's raw score in binary64
/// ([`crate::eval::softf64`]) with the operations of upstream's `balancedResourceScorer`, in its
/// order (see [`crate::plugins::noderesources::balanced_allocation`]).
pub fn balanced_allocation(p: &Prepared<'_>, c: usize, n: usize) -> i32 {
    balanced_allocation_on(p, c, &NodeColumn::of(p, n))
}

/// [`balanced_allocation`] on a node given by its resource columns.
pub fn balanced_allocation_on(p: &Prepared<'_>, c: usize, node: &NodeColumn<'_>) -> i32 {
    balanced_score(p, &p.enc.tensors.class_requests.row(c), &node.allocatable, &node.requested)
}

/// [`balanced_allocation`] of a pod requesting `req` on a node of allocatable `alloc` with
/// `used` requested (rows of the resource columns, as matrix rows or slices).
#[inline]
pub(crate) fn balanced_score<A: Index<usize, Output = u32> + ?Sized>(
    p: &Prepared<'_>,
    req: &A,
    alloc: &A,
    used: &A,
) -> i32 {
    let mut count = 0u32;
    let mut total = 0.0f64;
    let mut first = 0.0f64;
    let mut second = 0.0f64;
    for spec in &p.balanced_specs {
        let Some(f) = balanced_fraction(spec, req, alloc, used) else { continue };
        total += f;
        if count == 0 {
            first = f;
        } else if count == 1 {
            second = f;
        }
        count += 1;
    }
    let mut deviation = 0.0f64;
    if count == 2 {
        deviation = ((first - second) / 2.0).abs();
    } else if count > 2 {
        let mean = total / f64::from(count);
        let mut sum = 0.0f64;
        for spec in &p.balanced_specs {
            let Some(f) = balanced_fraction(spec, req, alloc, used) else { continue };
            let d = f - mean;
            sum += d * d;
        }
        deviation = (sum / f64::from(count)).sqrt();
    }
    ((1.0 - deviation) * 100.0) as i64 as i32
}

/// Below this sum of image sizes ImageLocality scores 0 (upstream `minThreshold`, 23 MiB).
const IMAGE_MIN_THRESHOLD: i64 = 23 << 20;
/// Per container, from this sum on ImageLocality scores 100 (`maxContainerThreshold`, 1000 MiB).
const IMAGE_MAX_CONTAINER_THRESHOLD: u64 = 1000 << 20;

/// `image_locality.wgsl`: ImageLocality's raw score — per container image the node lists, its
/// size scaled by the fraction of nodes listing it (binary64, upstream `scaledImageScore`),
/// summed in `int64` and mapped to 0–100 between the thresholds (upstream `calculatePriority`).
pub fn image_locality(p: &Prepared<'_>, c: usize, n: usize) -> i32 {
    let (start, count) = p.node_image_ranges.get(n).copied().unwrap_or((0, 0));
    let images = p.node_images.get(start as usize..(start + count) as usize).unwrap_or(&[]);
    let total_nodes = f64::from(p.num_nodes as u32);
    let containers = p.class_images.row(c);
    let mut sum = 0i64;
    for &id in containers {
        if id == NONE {
            continue;
        }
        let Ok(k) = images.binary_search_by_key(&id, |e| e.image) else { continue };
        sum = sum.wrapping_add(scaled_image_score(&images[k], total_nodes));
    }
    image_priority(sum, containers.len() as u32)
}

/// Upstream `scaledImageScore`: `int64(float64(size) · (float64(nodes listing it) /
/// float64(total nodes)))`.
pub fn scaled_image_score(image: &super::NodeImage, total_nodes: f64) -> i64 {
    let spread = f64::from(image.num_nodes) / total_nodes;
    (image.size as f64 * spread) as i64
}

/// Upstream `calculatePriority` on an `int64` sum (`image_locality.wgsl`'s `priority`, whose
/// 64-bit integer steps wrap as these do).
pub fn image_priority(sum: i64, containers: u32) -> i32 {
    if containers == 0 {
        // The sum is 0, clamped to the minimum: 100 · 0 / (0 − minimum) = 0.
        return 0;
    }
    let max_threshold = IMAGE_MAX_CONTAINER_THRESHOLD.wrapping_mul(u64::from(containers)) as i64;
    let mut clamped = sum;
    if clamped < IMAGE_MIN_THRESHOLD {
        return 0;
    } else if max_threshold < clamped {
        clamped = max_threshold;
    }
    let numerator =
        (clamped.wrapping_sub(IMAGE_MIN_THRESHOLD) as u64).wrapping_mul(u64::from(MAX_NODE_SCORE));
    let q = numerator / (max_threshold.wrapping_sub(IMAGE_MIN_THRESHOLD) as u64);
    q as u32 as i32
}

/// The PodTopologySpread score plane.
const PTS_PLANE: usize = ScorePlugin::PodTopologySpread as usize;

/// The raw PodTopologySpread score of a node the plugin ignores (it lacks a required key),
/// until normalization turns it into the 0 upstream gives it (upstream's `invalidScore`).
pub const PTS_IGNORED: i32 = i32::MIN;

/// `pod_topology_spread.wgsl`: the filter bit of the first failing `DoNotSchedule` constraint,
/// in order: the node lacks its key ([`CHECK_POD_TOPOLOGY_SPREAD_LABEL`]), or the matching pods
/// of the node's domain, plus the pod itself if it matches, exceed the global minimum by more
/// than `maxSkew` ([`CHECK_POD_TOPOLOGY_SPREAD_SKEW`]).
pub fn pod_topology_spread(p: &Prepared<'_>, c: usize, n: usize) -> u32 {
    let topo = &p.topology;
    let Some(class) = topo.classes.get(c) else { return 0 };
    if class.pts_flags & PTS_FILTER == 0 {
        return 0;
    }
    for term in topo.terms(class.pts_filter) {
        let domain = topo.node_domain(n, term.key);
        if domain & DOMAIN_ABSENT != 0 {
            return CHECK_POD_TOPOLOGY_SPREAD_LABEL;
        }
        let self_match = i32::from(term.flags & TERM_SELF_MATCH != 0);
        let skew = topo.lookup(term, domain).wrapping_add(self_match).wrapping_sub(term.min_match);
        if skew > term.skew {
            return CHECK_POD_TOPOLOGY_SPREAD_SKEW;
        }
    }
    0
}

/// Whether PodTopologySpread's scoring ignores the node for the class (keys are required and
/// the node lacks one).
pub fn pod_topology_spread_ignored(p: &Prepared<'_>, c: usize, n: usize) -> bool {
    let topo = &p.topology;
    let Some(class) = topo.classes.get(c) else { return false };
    class.pts_flags & PTS_REQUIRE_ALL != 0
        && topo
            .terms(class.pts_score)
            .iter()
            .any(|t| topo.node_domain(n, t.key) & DOMAIN_ABSENT != 0)
}

/// `pod_topology_spread_domains.wgsl`, `pod_topology_spread_weights.wgsl` and
/// `pod_topology_spread_score.wgsl` for one class row: the number of scored (feasible, not
/// ignored) nodes and of the domains they span per constraint give the weights
/// `ln(size + 2)`; each node's raw score is `round(Σ cnt · weight + (maxSkew − 1))` in binary64
/// over the constraints whose key it has ([`PTS_IGNORED`] for ignored nodes); the row maximum
/// (from 0, as upstream) and minimum are taken over the scored nodes.
fn pod_topology_spread_score(p: &Prepared<'_>, row: usize, r: &mut Rows<'_>) {
    let (topo, nn, c) = (&p.topology, p.num_nodes, r.first + row);
    let Some(class) = topo.classes.get(c) else { return };
    if class.pts_flags & PTS_SCORE == 0 {
        return;
    }
    let terms = topo.terms(class.pts_score);
    let mut scored = 0usize;
    let mut domains: Vec<std::collections::BTreeSet<u32>> = vec![Default::default(); terms.len()];
    for n in 0..nn {
        if r.filter[row * nn + n] & CELL_FEASIBLE == 0 || pod_topology_spread_ignored(p, c, n) {
            continue;
        }
        scored += 1;
        for (t, set) in terms.iter().zip(&mut domains) {
            if t.flags & TERM_HOSTNAME == 0 {
                set.insert(topo.node_domain(n, t.key) & DOMAIN_MASK);
            }
        }
    }
    let weights: Vec<f64> = terms
        .iter()
        .zip(&domains)
        .map(|(t, set)| {
            let size = if t.flags & TERM_HOSTNAME != 0 { scored } else { set.len() };
            f64::from_bits(topo.pts_weight_table.get(size).copied().unwrap_or(0))
        })
        .collect();
    for n in 0..nn {
        let i = row * nn + n;
        if pod_topology_spread_ignored(p, c, n) {
            r.raw[PTS_PLANE][i] = PTS_IGNORED;
            continue;
        }
        let mut score = 0.0f64;
        for (t, &weight) in terms.iter().zip(&weights) {
            let domain = topo.node_domain(n, t.key);
            if domain & DOMAIN_ABSENT != 0 {
                continue;
            }
            let at = if t.flags & TERM_HOSTNAME != 0 { n as u32 } else { domain };
            score = pts_add(score, topo.lookup(t, at), weight, t.skew);
        }
        let raw = score.round() as i64 as i32;
        r.raw[PTS_PLANE][i] = raw;
        if r.filter[i] & CELL_FEASIBLE != 0 {
            r.row_max[PTS_PLANE][row] = r.row_max[PTS_PLANE][row].max(raw);
            r.row_min[PTS_PLANE][row] = r.row_min[PTS_PLANE][row].min(raw);
        }
    }
}

/// One constraint's term of PodTopologySpread's score, added to `score`:
/// `score + (float64(cnt) · weight + float64(maxSkew − 1))` (upstream `scoreForCount`).
#[inline]
pub fn pts_add(score: f64, cnt: i32, weight: f64, skew: i32) -> f64 {
    score + (f64::from(cnt) * weight + f64::from(skew))
}

/// PodTopologySpread's NormalizeScore for one scored node: 100 for every node when the row
/// maximum is 0, else `100 · (max + min − raw) / max` (`int64`, truncating).
pub fn pod_topology_spread_normalize(raw: i32, row_max: i32, row_min: i32) -> i32 {
    if raw == PTS_IGNORED {
        return 0;
    }
    if row_max == 0 {
        return MAX_NODE_SCORE as i32;
    }
    let x = i64::from(row_max.wrapping_add(row_min).wrapping_sub(raw));
    (i64::from(MAX_NODE_SCORE) * x / i64::from(row_max)) as i32
}

/// `inter_pod_affinity.wgsl`: InterPodAffinity's filter bits, each checked on its own (the
/// pod's required affinity [`CHECK_INTER_POD_AFFINITY`], its required anti-affinity
/// [`CHECK_INTER_POD_ANTI_AFFINITY`], existing pods' required anti-affinity
/// [`CHECK_INTER_POD_EXISTING_ANTI_AFFINITY`]), and its raw score: the summed weights of the
/// node's domains.
pub fn inter_pod_affinity(p: &Prepared<'_>, c: usize, n: usize) -> (u32, i32) {
    let topo = &p.topology;
    let Some(class) = topo.classes.get(c) else { return (0, 0) };
    let mut bits = 0u32;
    if class.ipa_flags & IPA_FILTER != 0 {
        let mut missing_key = false;
        let mut pods_exist = true;
        for term in topo.terms(class.ipa_affinity) {
            let domain = topo.node_domain(n, term.key);
            if domain & DOMAIN_ABSENT != 0 {
                missing_key = true;
                break;
            }
            if topo.lookup(term, domain) <= 0 {
                pods_exist = false;
            }
        }
        let fallback = class.ipa_flags & IPA_AFFINITY_FALLBACK != 0;
        if missing_key || !(pods_exist || fallback) {
            bits |= CHECK_INTER_POD_AFFINITY;
        }
        let present = |term: &TopoTerm| {
            let domain = topo.node_domain(n, term.key);
            domain & DOMAIN_ABSENT == 0 && topo.lookup(term, domain) > 0
        };
        if topo.terms(class.ipa_anti_affinity).iter().any(present) {
            bits |= CHECK_INTER_POD_ANTI_AFFINITY;
        }
        if topo.terms(class.ipa_existing).iter().any(present) {
            bits |= CHECK_INTER_POD_EXISTING_ANTI_AFFINITY;
        }
    }
    let mut score = 0i32;
    if class.ipa_flags & IPA_SCORE != 0 {
        for term in topo.terms(class.ipa_score) {
            let domain = topo.node_domain(n, term.key);
            if domain & DOMAIN_ABSENT == 0 {
                score = score.wrapping_add(topo.lookup(term, domain));
            }
        }
    }
    (bits, score)
}

/// InterPodAffinity's NormalizeScore for one feasible node:
/// `int64(100 · (float64(raw − min) / float64(max − min)))` in binary64, 0 when every feasible
/// node scores the same.
pub fn inter_pod_affinity_normalize(raw: i32, row_max: i32, row_min: i32) -> i32 {
    let diff = row_max.wrapping_sub(row_min);
    if diff <= 0 {
        return 0;
    }
    let fraction = f64::from(raw.wrapping_sub(row_min)) / f64::from(diff);
    (100.0 * fraction) as i64 as i32
}

/// `feasibility.wgsl`: keeps the enabled failed checks, records the first in profile order
/// (`1 + bit index`) and sets [`CELL_FEASIBLE`] when none failed.
pub fn feasibility(p: &Prepared<'_>, word: u32) -> u32 {
    let failed = word & p.enabled_checks & CHECK_MASK;
    let mut first = 0u32;
    for check in &p.check_order {
        if failed & check.bit() != 0 {
            first = check.index() + 1;
            break;
        }
    }
    let feasible = if failed == 0 { CELL_FEASIBLE } else { 0 };
    failed | (first << FIRST_FAILURE_SHIFT) | feasible
}

/// Upstream `helper.DefaultNormalizeScore` for one score, given the row maximum.
pub fn default_normalize(raw: i32, max: i32, reverse: bool) -> i32 {
    let max_score = MAX_NODE_SCORE as i32;
    if max == 0 {
        return if reverse { max_score } else { raw };
    }
    let v = max_score.wrapping_mul(raw).wrapping_div(max);
    if reverse { max_score.wrapping_sub(v) } else { v }
}

/// `normalize_score.wgsl`: the normalized score of each plane and the weighted total of a cell
/// (0 for infeasible cells and for planes the profile does not score or PreScore skipped).
pub fn normalize_score(
    p: &Prepared<'_>,
    c: usize,
    word: u32,
    raw: &[i32; NUM_SCORE_PLANES],
    row_max: &[i32; NUM_SCORE_PLANES],
    row_min: &[i32; NUM_SCORE_PLANES],
) -> ([i32; NUM_SCORE_PLANES], i32) {
    let mut normalized = [0i32; NUM_SCORE_PLANES];
    if word & CELL_FEASIBLE == 0 {
        return (normalized, 0);
    }
    let mut total = 0i32;
    for &(plugin, weight) in &p.scores {
        if p.class_score_skip[c] & plugin.bit() != 0 {
            continue;
        }
        let k = plugin.index();
        let v = match plugin {
            ScorePlugin::TaintToleration => default_normalize(raw[k], row_max[k], true),
            ScorePlugin::NodeAffinity => default_normalize(raw[k], row_max[k], false),
            ScorePlugin::NodeResourcesFit
            | ScorePlugin::BalancedAllocation
            | ScorePlugin::ImageLocality => raw[k],
            ScorePlugin::PodTopologySpread => {
                pod_topology_spread_normalize(raw[k], row_max[k], row_min[k])
            }
            ScorePlugin::InterPodAffinity => {
                inter_pod_affinity_normalize(raw[k], row_max[k], row_min[k])
            }
        };
        normalized[k] = v;
        // Prepared bounds the weights so that this fits i32 when scores are in 0–100.
        total = total.wrapping_add(v.wrapping_mul(weight as i32));
    }
    (normalized, total)
}

#[cfg(test)]
mod tests;
