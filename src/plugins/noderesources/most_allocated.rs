//! The `MostAllocated` scoring strategy of NodeResourcesFit (bin packing): prefers nodes with the
//! least free capacity after placing the pod.
//!
//! Input: `requested` and `allocatable` vectors aligned with the scored resources and the
//! weights. Output: a score in `[0, 100]`:
//! `Σ_i w_i · (min(req_i, alloc_i) · 100 / alloc_i) / Σ_i w_i` over resources with
//! `alloc_i > 0`; int64 truncation as upstream.
//!
//! Upstream (v1.35): `pkg/scheduler/framework/plugins/noderesources/most_allocated.go`.

use super::resource_allocation::weighted_resource_score;
use crate::framework::MAX_NODE_SCORE;
use crate::framework::args::ResourceSpec;

/// One resource's score: the used share of capacity on a 0–100 scale, requests above capacity
/// clamped to it (upstream `mostRequestedScore`).
pub fn most_requested_score(requested: i64, capacity: i64) -> i64 {
    if capacity == 0 {
        return 0;
    }
    // Requests can exceed capacity because pods without requests count with non-zero defaults.
    let requested = requested.min(capacity);
    (requested * MAX_NODE_SCORE) / capacity
}

/// The weighted mean of [`most_requested_score`] over resources with non-zero allocatable
/// (upstream `mostResourceScorer`).
pub fn most_resource_scorer(
    resources: &[ResourceSpec],
    requested: &[i64],
    allocatable: &[i64],
) -> i64 {
    weighted_resource_score(resources, requested, allocatable, most_requested_score)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (description, resources, requested, allocatable, expected score)
    type Case<'a> = (&'a str, &'a [ResourceSpec], [i64; 2], [i64; 2], i64);

    #[test]
    fn most_allocated_arithmetic_matches_upstream() {
        let cm = [ResourceSpec::new("cpu", 1), ResourceSpec::new("memory", 1)];
        let cases: &[Case] = &[
            // cpu 3000*100/4000 = 75; mem 5000*100/10000 = 50; (75+50)/2 = 62.
            ("an averaged score truncates", &cm, [3000, 5000], [4000, 10000], 62),
            // cpu 6000 > 4000 clamps to 100; mem 0; (100+0)/2 = 50.
            ("requests above capacity clamp to a full resource", &cm, [6000, 0], [4000, 10000], 50),
            // Only memory counts: 3*100/10 = 30.
            ("resources with zero allocatable are skipped", &cm, [3, 3], [0, 10], 30),
            ("no allocatable at all scores zero", &cm, [0, 0], [0, 0], 0),
            // cpu weight 1: 75; memory weight 3: 50; (75 + 150)/4 = 56.
            (
                "weights scale each resource",
                &[ResourceSpec::new("cpu", 1), ResourceSpec::new("memory", 3)],
                [3000, 5000],
                [4000, 10000],
                56,
            ),
        ];
        for (name, res, req, alloc, want) in cases {
            assert_eq!(most_resource_scorer(res, req, alloc), *want, "{name}");
        }
    }
}
