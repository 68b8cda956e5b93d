//! NodeResourcesFit's and NodeResourcesBalancedAllocation's raw scores of one class across a
//! run of nodes given as structure of arrays: the row evaluator's kernels ([`super::rows`]),
//! also run by the batch solver on the nodes whose usage changed, with their usage now
//! (`crate::batch`'s applier).
//!
//! Input: the prepared profile, the class's request rows and the nodes' resource columns
//! ([`ResourceSoa`]). Output: one raw score per node, equal bit for bit to [`super::fit_score`]
//! and [`super::balanced_score`] on the same rows (the cell-by-cell specification; checked by
//! the tests of [`crate::eval`], `tests/all/cpu_parallel.rs` and the applier's). Upstream
//! counterpart: `noderesources/resource_allocation.go`'s `score` with the strategy's scorer and
//! `balanced_allocation.go`'s `balancedResourceScorer`.

use std::ops::Index;

use super::super::prep::{
    FIT_KIND_NON_ZERO, FIT_KIND_OTHER, FIT_KIND_SCALAR, Prepared, STRATEGY_LEAST_ALLOCATED,
    STRATEGY_MOST_ALLOCATED, STRATEGY_REQUESTED_TO_CAPACITY_RATIO,
};
use super::resource_score;
use crate::encode::tensors::NONE;

/// Resource columns of `len` nodes, column-major: resource `j` of node `n` at
/// `j * stride + n` (`stride ≥ len`: the row evaluator's columns hold every node, `stride = len`;
/// the batch solver's hold the nodes that changed so far, in room for every node).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ResourceSoa<'a> {
    pub(crate) len: usize,
    pub(crate) stride: usize,
    pub(crate) alloc: &'a [u32],
    pub(crate) used: &'a [u32],
    pub(crate) used_nz: &'a [u32],
}

/// NodeResourcesFit's raw score of a pod requesting `req` (`req_nz` with the non-zero
/// defaults) on each node of `cols`, into `raw` (`cols.len` entries; `weight_sum` is scratch).
/// Returns false, writing nothing, when the pod counts more resources than the kernel holds
/// (eight): the caller scores those cell by cell.
#[inline(always)]
pub(crate) fn fit_row<A: Index<usize, Output = u32> + ?Sized>(
    p: &Prepared<'_>,
    req: &A,
    req_nz: &A,
    cols: &ResourceSoa<'_>,
    raw: &mut [i32],
    weight_sum: &mut Vec<i32>,
) -> bool {
    let (nn, st) = (cols.len, cols.stride);
    // (column, pod amount, the node amount is the non-zero one, weight)
    let mut specs: [(usize, u32, bool, i32); 8] = [(0, 0, false, 0); 8];
    let mut len = 0;
    let mut fallback = false;
    for spec in &p.fit_specs {
        if spec.column == NONE {
            continue;
        }
        let j = spec.column as usize;
        let (pod, nz) = match spec.kind {
            FIT_KIND_NON_ZERO => (req_nz[j], true),
            FIT_KIND_SCALAR => (req[j], false),
            FIT_KIND_OTHER => (0, false),
            _ => (req[j], false),
        };
        if spec.kind == FIT_KIND_SCALAR && pod == 0 {
            continue;
        }
        if len == specs.len() {
            fallback = true;
            break;
        }
        specs[len] = (j, pod, nz, spec.weight);
        len += 1;
    }
    if fallback {
        return false;
    }
    if (p.fit_strategy == STRATEGY_LEAST_ALLOCATED || p.fit_strategy == STRATEGY_MOST_ALLOCATED)
        && specs[..len].iter().all(|s| s.3 > 0)
        && specs[..len].iter().map(|s| i64::from(s.3)).sum::<i64>() <= i64::from(i32::MAX / 100)
    {
        // Positive weights whose scores cannot overflow: resource by resource across the
        // row, without a branch per cell (see `fit_score_column`).
        let most = p.fit_strategy == STRATEGY_MOST_ALLOCATED;
        raw.fill(0);
        weight_sum.clear();
        weight_sum.resize(nn, 0);
        for &(j, pod, nz, weight) in &specs[..len] {
            let alloc = &cols.alloc[j * st..j * st + nn];
            let used = if nz {
                &cols.used_nz[j * st..j * st + nn]
            } else {
                &cols.used[j * st..j * st + nn]
            };
            if most {
                fit_score_column::<true>(alloc, used, pod, weight, raw, &mut weight_sum[..]);
            } else {
                fit_score_column::<false>(alloc, used, pod, weight, raw, &mut weight_sum[..]);
            }
        }
        // `node_score ≤ 100 · weight_sum`: the quotient is below 2^20, so `small_quotient`
        // divides in `f64`; a node without any counted resource has 0 / 1 = 0.
        for (v, &w) in raw.iter_mut().zip(weight_sum.iter()) {
            *v = truncate_small(f64::from(*v) / f64::from(w.max(1)));
        }
    } else {
        let specs = &specs[..len];
        let ratio = p.fit_strategy == STRATEGY_REQUESTED_TO_CAPACITY_RATIO;
        for (n, v) in raw.iter_mut().enumerate() {
            let mut node_score = 0i32;
            let mut weight_sum = 0i32;
            for &(j, pod, nz, weight) in specs {
                let capacity = cols.alloc[j * st + n];
                if capacity == 0 {
                    continue;
                }
                let node_used = if nz { cols.used_nz[j * st + n] } else { cols.used[j * st + n] };
                let score = resource_score(p, node_used.wrapping_add(pod), capacity);
                if !ratio || score > 0 {
                    node_score = node_score.wrapping_add(score.wrapping_mul(weight));
                    weight_sum = weight_sum.wrapping_add(weight);
                }
            }
            *v = if weight_sum == 0 {
                0
            } else if !ratio {
                match (u32::try_from(node_score), u32::try_from(weight_sum)) {
                    (Ok(a), Ok(b)) => super::small_quotient(a, b) as i32,
                    _ => node_score.wrapping_div(weight_sum),
                }
            } else {
                (2 * node_score + weight_sum) / (2 * weight_sum)
            };
        }
    }
    true
}

/// BalancedAllocation's raw score of a pod requesting `req` on each node of `cols`, into `raw`
/// (`cols.len` entries). Returns false, writing nothing, when the pod counts more resources
/// than the kernel holds (eight).
#[inline(always)]
pub(crate) fn balanced_row<A: Index<usize, Output = u32> + ?Sized>(
    p: &Prepared<'_>,
    req: &A,
    cols: &ResourceSoa<'_>,
    raw: &mut [i32],
) -> bool {
    let st = cols.stride;
    let mut specs: [(usize, u32); 8] = [(0, 0); 8];
    let mut len = 0;
    let mut fallback = false;
    for spec in &p.balanced_specs {
        if spec.column == NONE {
            continue;
        }
        let j = spec.column as usize;
        let pod = if spec.kind == FIT_KIND_OTHER { 0 } else { req[j] };
        if spec.kind == FIT_KIND_SCALAR && pod == 0 {
            continue;
        }
        if len == specs.len() {
            fallback = true;
            break;
        }
        specs[len] = (j, pod);
        len += 1;
    }
    if fallback {
        return false;
    }
    if len == 2 {
        // The common case, cpu and memory: |f₁ − f₂| / 2 when both count.
        let (j0, pod0) = specs[0];
        let (j1, pod1) = specs[1];
        for (n, v) in raw.iter_mut().enumerate() {
            let (c0, c1) = (cols.alloc[j0 * st + n], cols.alloc[j1 * st + n]);
            let f0 = f64::from(cols.used[j0 * st + n].wrapping_add(pod0)) / f64::from(c0);
            let f1 = f64::from(cols.used[j1 * st + n].wrapping_add(pod1)) / f64::from(c1);
            let (f0, f1) = (if 1.0 < f0 { 1.0 } else { f0 }, if 1.0 < f1 { 1.0 } else { f1 });
            let deviation = if c0 != 0 && c1 != 0 { ((f0 - f1) / 2.0).abs() } else { 0.0 };
            // In 50..=100: deviation ≤ 1/2 for fractions in 0..=1.
            *v = truncate_small((1.0 - deviation) * 100.0);
        }
    } else {
        let specs = &specs[..len];
        for (n, v) in raw.iter_mut().enumerate() {
            let mut fractions = [0.0f64; 8];
            let mut count = 0usize;
            let mut total = 0.0f64;
            for &(j, pod) in specs {
                let capacity = cols.alloc[j * st + n];
                if capacity == 0 {
                    continue;
                }
                let mut f =
                    f64::from(cols.used[j * st + n].wrapping_add(pod)) / f64::from(capacity);
                if 1.0 < f {
                    f = 1.0;
                }
                total += f;
                fractions[count] = f;
                count += 1;
            }
            let mut deviation = 0.0f64;
            if count == 2 {
                deviation = ((fractions[0] - fractions[1]) / 2.0).abs();
            } else if count > 2 {
                let mean = total / count as f64;
                let mut sum = 0.0f64;
                for &f in &fractions[..count] {
                    let d = f - mean;
                    sum += d * d;
                }
                deviation = (sum / count as f64).sqrt();
            }
            *v = ((1.0 - deviation) * 100.0) as i64 as i32;
        }
    }
    true
}

/// One resource of NodeResourcesFit's LeastAllocated (`MOST = false`) or MostAllocated score
/// added across a row: `sum += score · weight` and `weight_sum += weight` on the nodes with a
/// capacity. As `resource_score`: the quotient is at most 100 whatever the (wrapping) `× 100`
/// gives, so `small_quotient` always takes its `f64` division, done here for every node
/// (capacity 0 divides by 1 and is weighted 0) so that the loop has no branch.
#[inline(always)]
fn fit_score_column<const MOST: bool>(
    alloc: &[u32],
    used: &[u32],
    pod: u32,
    weight: i32,
    sum: &mut [i32],
    weight_sum: &mut [i32],
) {
    let max = crate::encode::units::MAX_NODE_SCORE;
    for (((&cap, &u), s), ws) in alloc.iter().zip(used).zip(sum.iter_mut()).zip(weight_sum) {
        let requested = u.wrapping_add(pod);
        let a = if MOST { requested.min(cap) } else { cap.wrapping_sub(requested) };
        let q = truncate_small(f64::from(a.wrapping_mul(max)) / f64::from(cap.max(1)));
        let score = if !MOST && requested > cap { 0 } else { q };
        let w = if cap == 0 { 0 } else { weight };
        *s = s.wrapping_add(score.wrapping_mul(w));
        *ws = ws.wrapping_add(w);
    }
}

/// `x as i32` for a finite `x` in `0.0..2^31`, in operations a loop vectorizes (Rust's
/// saturating `as` is converted lane by lane): `x + 1.5 · 2^52` rounds `x` to the nearest
/// integer into the low bits of the sum's mantissa (exact below 2^51), and one is taken off
/// where that rounded up. Every caller's value is a non-negative quotient below 2^32; where it
/// is 2^31 or more (a LeastAllocated request above the capacity) the caller discards the
/// result.
#[inline(always)]
fn truncate_small(x: f64) -> i32 {
    const MAGIC: f64 = 6_755_399_441_055_744.0; // 1.5 · 2^52
    let sum = x + MAGIC;
    let rounded = sum - MAGIC;
    (sum.to_bits() as u32 as i32).wrapping_sub(i32::from(rounded > x))
}

#[cfg(test)]
mod tests {
    use super::truncate_small;
    use proptest::prelude::*;

    #[test]
    fn truncation_matches_as_at_integers_halves_and_their_neighbours() {
        for i in [0u32, 1, 2, 3, 49, 50, 99, 100, 101, 1 << 20, (1 << 31) - 2] {
            let x = f64::from(i);
            for v in [x, x + 0.5, x + 0.25, x + 0.75, f64::from_bits(x.to_bits() + 1)] {
                assert_eq!(truncate_small(v), v as i32, "{v}");
            }
            if i > 0 {
                let below = f64::from_bits(x.to_bits() - 1);
                assert_eq!(truncate_small(below), below as i32, "{below}");
            }
        }
    }

    proptest! {
        #[test]
        fn truncation_matches_as_on_quotients_below_two_to_the_31(a in 0u32..u32::MAX, b in 2u32..u32::MAX) {
            let x = f64::from(a) / f64::from(b) * 1e3;
            prop_assert_eq!(truncate_small(x), x as i32);
            let y = f64::from(a >> 1) / f64::from(b % 7 + 1);
            prop_assert_eq!(truncate_small(y), y as i32);
        }
    }
}
