//! The lean CPU evaluation ([`evaluate_lean`]): the row evaluator of [`super::rows`] writing
//! only what a [`LeanMatrix`] keeps. Raw planes, NodeResourcesFit's reason words and the
//! normalized planes nobody keeps go to one set of scratch rows per thread, reused from row to
//! row (they stay in the cache); the filter words, totals and the kept planes ([`narrow`]ed to
//! a byte per cell as they are written) are the output.
//! When many nodes are equal in everything a row reads ([`super::merged`]), the rows that read
//! no node identity are evaluated once per distinct column and copied out to the nodes.
//!
//! Input: a [`Prepared`] and the planes to keep. Output: the [`LeanMatrix`] equal to
//! `evaluate(p).lean(keep)` bit for bit (`tests/all/cpu_parallel.rs`). Upstream counterpart: as
//! [`super`].

use super::super::lean::{Keep, LeanMatrix, LeanPlane, keep_of, narrow};
use super::super::prep::{NUM_SCORE_PLANES, Prepared};
use super::super::{Planes, score_error_of};
use super::merged::Merged;
use super::{Rows, pieces, plane_pieces, rows};
use crate::framework::profile::PluginName;

/// The output arrays of a lean evaluation.
struct LeanResults {
    filter: Vec<u32>,
    total: Vec<i32>,
    /// Kept planes: `C × N`, [`narrow`]ed; the others empty.
    normalized: Planes<u8>,
    row_max: Planes<i32>,
    row_min: Planes<i32>,
    feasible_count: Vec<u32>,
    best_total: Vec<i32>,
    out_of_range: Vec<[Option<i32>; NUM_SCORE_PLANES]>,
}

/// A run of consecutive class rows of a [`LeanResults`] (as [`Rows`]).
struct LeanRun<'a> {
    first: usize,
    len: usize,
    filter: &'a mut [u32],
    total: &'a mut [i32],
    normalized: [&'a mut [u8]; NUM_SCORE_PLANES],
    row_max: [&'a mut [i32]; NUM_SCORE_PLANES],
    row_min: [&'a mut [i32]; NUM_SCORE_PLANES],
    feasible_count: &'a mut [u32],
    best_total: &'a mut [i32],
    out_of_range: &'a mut [[Option<i32>; NUM_SCORE_PLANES]],
}

/// One thread's scratch rows: what the row evaluator writes and the lean matrix drops.
struct RowScratch {
    fit: Vec<u32>,
    raw: Planes<i32>,
    normalized: Planes<i32>,
    rows: rows::Scratch,
    /// The row over merged columns, before it is copied out to the nodes.
    merged: Option<MergedRow>,
}

/// A row over merged columns ([`Merged`]): every plane, the kept ones too.
struct MergedRow {
    filter: Vec<u32>,
    total: Vec<i32>,
    fit: Vec<u32>,
    raw: Planes<i32>,
    normalized: Planes<i32>,
    rows: rows::Scratch,
}

impl RowScratch {
    fn new(nn: usize, keep: &Keep, merged: Option<&Merged>) -> RowScratch {
        RowScratch {
            fit: vec![0; nn],
            raw: std::array::from_fn(|_| vec![0; nn]),
            normalized: std::array::from_fn(|k| if keep[k] { Vec::new() } else { vec![0; nn] }),
            rows: rows::Scratch::dropping_fit_words(),
            merged: merged.map(|m| {
                let len = m.statics.len;
                MergedRow {
                    filter: vec![0; len],
                    total: vec![0; len],
                    fit: vec![0; len],
                    raw: std::array::from_fn(|_| vec![0; len]),
                    normalized: std::array::from_fn(|_| vec![0; len]),
                    rows: rows::Scratch::dropping_fit_words(),
                }
            }),
        }
    }
}

/// Evaluates every class row on the CPU, keeping the normalized planes of `keep`'s plugins,
/// with `threads` threads as [`super::evaluate_parallel`] (0: rayon's global pool; 1: this
/// thread). Equal bit for bit to `evaluate(p).lean(keep)`.
pub fn evaluate_lean(p: &Prepared<'_>, keep: &[PluginName], threads: usize) -> LeanMatrix {
    let mut out = LeanMatrix::default();
    evaluate_lean_into(p, keep, threads, &mut out);
    out
}

/// [`evaluate_lean`] into `out`, reusing its `C × N` arrays (the filter words, the totals and
/// the kept planes) where they are large enough: a second evaluation of the same size writes
/// memory already mapped instead of fresh pages the kernel has to fault in and zero. `out`'s
/// previous contents do not matter; afterwards it equals what [`evaluate_lean`] returns.
pub fn evaluate_lean_into(
    p: &Prepared<'_>,
    keep: &[PluginName],
    threads: usize,
    out: &mut LeanMatrix,
) {
    let (nc, nn) = (p.num_classes, p.num_nodes);
    let keep = keep_of(keep);
    let pool = match threads {
        0 | 1 => None,
        n => rayon::ThreadPoolBuilder::new().num_threads(n).build().ok(),
    };
    let workers = match (&pool, threads) {
        (Some(pool), _) => pool.current_num_threads(),
        (None, 0) => rayon::current_num_threads(),
        (None, _) => 1,
    };
    let statics = rows::Statics::new(p);
    let merged = Merged::new(p, &statics);
    let pts = super::PTS_PLANE;
    // The previous arrays, each reused when it has room (then what the row evaluator does not
    // assign is cleared row by row, in `evaluate_run`).
    let mut spare: Vec<Vec<u8>> = std::mem::take(&mut out.planes)
        .into_iter()
        .map(|plane| plane.normalized)
        .filter(|v| v.capacity() > 0)
        .collect();
    spare.sort_by_key(Vec::capacity);
    let mut dirty = false;
    let filter = reuse(std::mem::take(&mut out.filter), nc * nn, &mut dirty);
    let total = reuse(std::mem::take(&mut out.total), nc * nn, &mut dirty);
    let normalized = std::array::from_fn(|k| match keep[k] {
        true => reuse(spare.pop().unwrap_or_default(), nc * nn, &mut dirty),
        false => Vec::new(),
    });
    let mut r = LeanResults {
        filter,
        total,
        normalized,
        row_max: std::array::from_fn(|k| vec![if k == pts { 0 } else { i32::MIN }; nc]),
        row_min: std::array::from_fn(|_| vec![i32::MAX; nc]),
        feasible_count: vec![0; nc],
        best_total: vec![i32::MIN; nc],
        out_of_range: vec![[None; NUM_SCORE_PLANES]; nc],
    };
    // A few runs per thread so that rows of unequal cost balance out.
    let runs = if workers <= 1 { 1 } else { (workers * 4).min(nc).max(1) };
    let lens: Vec<usize> =
        (0..runs).map(|k| (k + 1) * nc / runs - k * nc / runs).filter(|&l| l > 0).collect();
    let split = split(&mut r, nn, &lens);
    let statics = Statics { all: &statics, merged: merged.as_ref(), keep: &keep, dirty };
    if workers <= 1 {
        let mut scratch = RowScratch::new(nn, &keep, merged.as_ref());
        for mut run in split {
            evaluate_run(p, &statics, &mut run, &mut scratch);
        }
    } else {
        let (statics, keep, merged) = (&statics, &keep, merged.as_ref());
        let work = move || {
            use rayon::prelude::*;
            split.into_par_iter().for_each_init(
                || RowScratch::new(nn, keep, merged),
                |scratch, mut run| evaluate_run(p, statics, &mut run, scratch),
            );
        };
        match &pool {
            Some(pool) => pool.install(work),
            None => work(),
        }
    }
    *out = into_lean(p, r);
}

/// `buf` as `len` cells: kept (and `dirty` set: its cells hold an earlier evaluation's values)
/// when it has the capacity, else fresh zeroed memory.
fn reuse<T: Copy + Default>(mut buf: Vec<T>, len: usize, dirty: &mut bool) -> Vec<T> {
    if buf.capacity() < len || len == 0 {
        return vec![T::default(); len];
    }
    *dirty |= !buf.is_empty();
    buf.truncate(len);
    buf.resize(len, T::default());
    buf
}

/// `r` cut into runs of `lens` rows, in order.
fn split<'a>(r: &'a mut LeanResults, nn: usize, lens: &[usize]) -> Vec<LeanRun<'a>> {
    let mut filter = pieces(&mut r.filter, lens, nn).into_iter();
    let mut total = pieces(&mut r.total, lens, nn).into_iter();
    let mut normalized = plane_pieces(&mut r.normalized, lens, nn).into_iter();
    let mut row_max = plane_pieces(&mut r.row_max, lens, 1).into_iter();
    let mut row_min = plane_pieces(&mut r.row_min, lens, 1).into_iter();
    let mut feasible_count = pieces(&mut r.feasible_count, lens, 1).into_iter();
    let mut best_total = pieces(&mut r.best_total, lens, 1).into_iter();
    let mut out_of_range = pieces(&mut r.out_of_range, lens, 1).into_iter();
    let mut first = 0;
    let mut out = Vec::with_capacity(lens.len());
    for &len in lens {
        out.push(LeanRun {
            first,
            len,
            filter: filter.next().unwrap_or_default(),
            total: total.next().unwrap_or_default(),
            normalized: normalized.next().unwrap_or_default(),
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

/// What every row of an evaluation shares.
struct Statics<'a> {
    /// Every node's.
    all: &'a rows::Statics,
    /// The merged columns', when nodes merge.
    merged: Option<&'a Merged>,
    keep: &'a Keep,
    /// The output arrays hold an earlier evaluation's cells: each row's totals are cleared
    /// first.
    dirty: bool,
}

/// The rows of one run, each through the row evaluator with the scratch rows in place of the
/// planes the lean matrix does not keep; a row that merges nodes over the merged columns, then
/// copied out.
fn evaluate_run(p: &Prepared<'_>, st: &Statics<'_>, run: &mut LeanRun<'_>, sc: &mut RowScratch) {
    let nn = p.num_nodes;
    let s = st.all;
    for row in 0..run.len {
        let cells = row * nn..(row + 1) * nn;
        if let (Some(merged), Some(m)) = (st.merged, sc.merged.as_mut())
            && merged.merges(p, run.first + row)
        {
            evaluate_merged_row(p, merged, st.keep, run, row, m);
            continue;
        }
        if st.dirty {
            // The row evaluator assigns the filter words, but adds to the totals, as in fresh
            // memory (a merged row writes every cell).
            run.total[cells.clone()].fill(0);
        }
        // The row evaluator writes some raw planes only where they are not 0 (as into a fresh
        // matrix): those scratch rows start each row at 0.
        for (k, plane) in sc.raw.iter_mut().enumerate() {
            if s.reads_unwritten_raw(k) {
                plane.fill(0);
            }
        }
        let mut narrowed = run.normalized.iter_mut();
        let mut rows = Rows {
            first: run.first + row,
            len: 1,
            filter: &mut run.filter[cells.clone()],
            fit_insufficient: &mut sc.fit,
            raw: sc.raw.each_mut().map(Vec::as_mut_slice),
            normalized: sc.normalized.each_mut().map(Vec::as_mut_slice),
            narrowed: std::array::from_fn(|_| {
                narrowed.next().and_then(|kept| kept.get_mut(cells.clone())).unwrap_or_default()
            }),
            total: &mut run.total[cells.clone()],
            row_max: run.row_max.each_mut().map(|s| &mut s[row..row + 1]),
            row_min: run.row_min.each_mut().map(|s| &mut s[row..row + 1]),
            feasible_count: &mut run.feasible_count[row..row + 1],
            best_total: &mut run.best_total[row..row + 1],
            out_of_range: &mut run.out_of_range[row..row + 1],
        };
        super::simd::evaluate_row(p, s, &mut rows, 0, &mut sc.rows);
        if st.dirty {
            // The row evaluator writes every cell of a kept plane the class scores, and none of
            // one it skips (0, as in fresh memory).
            let skip = p.class_score_skip.get(run.first + row).copied().unwrap_or(!0);
            for (k, out) in run.normalized.iter_mut().enumerate() {
                let scored = p.scores.iter().any(|&(x, _)| x.index() == k && skip & x.bit() == 0);
                if !scored && !out.is_empty() {
                    out[cells.clone()].fill(0);
                }
            }
        }
    }
}

/// The lean matrix of the results: the profile's planes, per-class score errors.
fn into_lean(p: &Prepared<'_>, mut r: LeanResults) -> LeanMatrix {
    let planes: Vec<LeanPlane> = p
        .scores
        .iter()
        .map(|&(plugin, weight)| {
            let k = plugin.index();
            LeanPlane {
                plugin: plugin.plugin(),
                weight,
                skipped: (0..p.num_classes)
                    .map(|c| p.class_score_skip[c] & plugin.bit() != 0)
                    .collect(),
                row_max: std::mem::take(&mut r.row_max[k]),
                row_min: std::mem::take(&mut r.row_min[k]),
                normalized: std::mem::take(&mut r.normalized[k]),
            }
        })
        .collect();
    let score_errors = (0..p.num_classes)
        .map(|c| {
            let found = &r.out_of_range[c];
            let of_class = planes.iter().map(|l| (l.plugin, l.skipped[c]));
            score_error_of(p, c, of_class, |_, plugin| {
                super::super::ScorePlugin::of(plugin).and_then(|k| found[k.index()])
            })
        })
        .collect();
    LeanMatrix {
        num_classes: p.num_classes,
        num_nodes: p.num_nodes,
        filter: r.filter,
        total: r.total,
        feasible_count: r.feasible_count,
        best_total: r.best_total,
        score_errors,
        planes,
    }
}

/// Row `row` of `run` over the merged columns, copied out to the nodes.
fn evaluate_merged_row(
    p: &Prepared<'_>,
    merged: &Merged,
    keep: &Keep,
    run: &mut LeanRun<'_>,
    row: usize,
    m: &mut MergedRow,
) {
    let s = &merged.statics;
    // The row evaluator adds to the totals and leaves unscored planes unwritten (as in a fresh
    // matrix): those scratch rows start each row at 0.
    m.total.fill(0);
    for (k, plane) in m.raw.iter_mut().enumerate() {
        if s.reads_unwritten_raw(k) {
            plane.fill(0);
        }
    }
    for plane in &mut m.normalized {
        plane.fill(0);
    }
    let mut rows = Rows {
        first: run.first + row,
        len: 1,
        filter: &mut m.filter,
        fit_insufficient: &mut m.fit,
        raw: m.raw.each_mut().map(Vec::as_mut_slice),
        normalized: m.normalized.each_mut().map(Vec::as_mut_slice),
        narrowed: Default::default(),
        total: &mut m.total,
        row_max: run.row_max.each_mut().map(|s| &mut s[row..row + 1]),
        row_min: run.row_min.each_mut().map(|s| &mut s[row..row + 1]),
        feasible_count: &mut run.feasible_count[row..row + 1],
        best_total: &mut run.best_total[row..row + 1],
        out_of_range: &mut run.out_of_range[row..row + 1],
    };
    super::simd::evaluate_row(p, s, &mut rows, 0, &mut m.rows);
    let nn = p.num_nodes;
    let cells = row * nn..(row + 1) * nn;
    copy_out(&merged.column, &m.filter, &mut run.filter[cells.clone()], |w| w);
    copy_out(&merged.column, &m.total, &mut run.total[cells.clone()], |v| v);
    for (k, out) in run.normalized.iter_mut().enumerate() {
        if keep[k] && !out.is_empty() {
            copy_out(&merged.column, &m.normalized[k], &mut out[cells.clone()], narrow);
        }
    }
}

/// `out[n] = f(columns[column[n]])` for every node.
#[inline(always)]
fn copy_out<T: Copy + Default, U: Copy>(
    column: &[u32],
    columns: &[T],
    out: &mut [U],
    f: impl Fn(T) -> U,
) {
    for (o, &col) in out.iter_mut().zip(column) {
        *o = f(columns.get(col as usize).copied().unwrap_or_default());
    }
}
