//! The `RequestedToCapacityRatio` scoring strategy of NodeResourcesFit: scores each resource's
//! utilization with a user-defined piecewise-linear shape.
//!
//! Input: `requested` and `allocatable` vectors aligned with the scored resources, the weights,
//! and the shape (utilization 0–100 → score 0–10). Output: a score in `[0, 100]`.
//!
//! Steps, exactly as upstream:
//! 1. The shape's scores are scaled by `MaxNodeScore / MaxCustomPriorityScore = 100 / 10 = 10`.
//! 2. Per resource with `alloc > 0`: utilization `u = req · 100 / alloc` (int64 truncation), or
//!    `100` when `req > alloc`; the score is the broken linear function at `u`
//!    (`helper.BuildBrokenLinearFunction`: `s[i-1] + (s[i] − s[i-1]) · (u − u[i-1]) / (u[i] − u[i-1])`
//!    with Go's truncating division, flat before the first and after the last point).
//! 3. Only resources whose score is `> 0` enter the weighted mean (their weight too).
//! 4. The result is `int64(math.Round(float64(Σ w·s) / float64(Σ w)))`, i.e. rounded half away
//!    from zero. For non-negative integers below 2^52 this equals the integer expression
//!    `(2·Σws + Σw) / (2·Σw)`, which [`round_div`] implements and the GPU can use; a test checks
//!    the two agree.
//!
//! Upstream (v1.35): `pkg/scheduler/framework/plugins/noderesources/requested_to_capacity_ratio.go`
//! and `pkg/scheduler/framework/plugins/helper/shape_score.go`.

use crate::framework::MAX_NODE_SCORE;
use crate::framework::args::{ResourceSpec, UtilizationShapePoint};

/// The highest score a shape point may have (upstream `config.MaxCustomPriorityScore`).
pub const MAX_CUSTOM_PRIORITY_SCORE: i64 = 10;
/// The highest utilization (upstream `maxUtilization`).
pub const MAX_UTILIZATION: i64 = 100;

/// A point of the scaled function: utilization → score on the node-score scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FunctionShapePoint {
    /// Utilization, 0–100.
    pub utilization: i64,
    /// Score, 0–100 (already scaled).
    pub score: i64,
}

/// Scales the configured shape to the node-score range (×10).
pub fn scale_shape(shape: &[UtilizationShapePoint]) -> Vec<FunctionShapePoint> {
    shape
        .iter()
        .map(|p| FunctionShapePoint {
            utilization: i64::from(p.utilization),
            score: i64::from(p.score) * (MAX_NODE_SCORE / MAX_CUSTOM_PRIORITY_SCORE),
        })
        .collect()
}

/// The broken linear function of `shape` at `p` (upstream `BuildBrokenLinearFunction`); 0 for an
/// empty shape (validation rejects one).
pub fn broken_linear(shape: &[FunctionShapePoint], p: i64) -> i64 {
    let mut prev: Option<&FunctionShapePoint> = None;
    for point in shape {
        if p <= point.utilization {
            return match prev {
                None => point.score,
                Some(a) => {
                    a.score
                        + (point.score - a.score) * (p - a.utilization)
                            / (point.utilization - a.utilization)
                }
            };
        }
        prev = Some(point);
    }
    shape.last().map_or(0, |p| p.score)
}

/// One resource's score (upstream `resourceScoringFunction`).
pub fn resource_score(shape: &[FunctionShapePoint], requested: i64, capacity: i64) -> i64 {
    if capacity == 0 || requested > capacity {
        return broken_linear(shape, MAX_UTILIZATION);
    }
    broken_linear(shape, requested * MAX_UTILIZATION / capacity)
}

/// `round(n / d)` half away from zero in integers, for `n ≥ 0`, `d > 0`.
pub fn round_div(n: i64, d: i64) -> i64 {
    (2 * n + d) / (2 * d)
}

/// The node score (upstream `buildRequestedToCapacityRatioScorerFunction`), with the final
/// rounding done in `f64` exactly as upstream.
pub fn requested_to_capacity_ratio_scorer(
    resources: &[ResourceSpec],
    shape: &[FunctionShapePoint],
    requested: &[i64],
    allocatable: &[i64],
) -> i64 {
    let (mut node_score, mut weight_sum) = (0i64, 0i64);
    for ((r, &req), &alloc) in resources.iter().zip(requested).zip(allocatable) {
        if alloc == 0 {
            continue;
        }
        let score = resource_score(shape, req, alloc);
        if score > 0 {
            node_score += score * r.weight;
            weight_sum += r.weight;
        }
    }
    if weight_sum == 0 {
        return 0;
    }
    (node_score as f64 / weight_sum as f64).round() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (description, shape, requested, allocatable, expected score)
    type Case<'a> = (&'a str, &'a [FunctionShapePoint], [i64; 2], [i64; 2], i64);

    fn shape(points: &[(i64, i64)]) -> Vec<FunctionShapePoint> {
        points
            .iter()
            .map(|&(utilization, score)| FunctionShapePoint { utilization, score })
            .collect()
    }

    /// Cases from upstream `TestBrokenLinearFunction`.
    #[test]
    fn broken_linear_function_interpolates_with_truncating_division() {
        let rising = shape(&[(10, 1), (90, 9)]);
        // p=15: 1 + 8·5/80 = 1; p=20: 1 + 8·10/80 = 2; p=89: 1 + 8·79/80 = 8.
        let rising_cases = [
            (-10, 1),
            (0, 1),
            (9, 1),
            (10, 1),
            (15, 1),
            (19, 1),
            (20, 2),
            (89, 8),
            (90, 9),
            (99, 9),
            (100, 9),
            (110, 9),
        ];
        for (p, want) in rising_cases {
            assert_eq!(broken_linear(&rising, p), want, "a rising shape at utilization {p}");
        }
        let peak = shape(&[(0, 2), (40, 10), (100, 0)]);
        // p=20: 2 + 8·20/40 = 6; p=70: 10 + (−10)·30/60 = 5.
        let peak_cases =
            [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)];
        for (p, want) in peak_cases {
            assert_eq!(broken_linear(&peak, p), want, "a peaked shape at utilization {p}");
        }
        // Falling segment with a negative slope truncates toward zero, like Go:
        // p=1: 100 + (0 − 100)·1/3 = 100 − 33 = 67 (−33.3 truncates to −33).
        assert_eq!(broken_linear(&shape(&[(0, 100), (3, 0)]), 1), 67);
    }

    #[test]
    fn requested_to_capacity_ratio_scores_match_worked_examples() {
        let cm = [ResourceSpec::new("cpu", 1), ResourceSpec::new("memory", 1)];
        // The least-allocated-like shape {0:10, 100:0}, scaled to {0:100, 100:0}.
        let least = scale_shape(&[
            UtilizationShapePoint { utilization: 0, score: 10 },
            UtilizationShapePoint { utilization: 100, score: 0 },
        ]);
        assert_eq!(least, shape(&[(0, 100), (100, 0)]));
        // The most-allocated-like shape {0:0, 100:10}.
        let most = scale_shape(&[
            UtilizationShapePoint { utilization: 0, score: 0 },
            UtilizationShapePoint { utilization: 100, score: 10 },
        ]);
        let cases: Vec<Case> = vec![
            // cpu u = 3000·100/4000 = 75 → 100 − 75 = 25; mem u = 50 → 50.
            // (25 + 50) / 2 = 37.5 → rounds half away from zero to 38.
            ("the mean is rounded, not truncated", &least, [3000, 5000], [4000, 10000], 38),
            // cpu u = 75 → 75; mem 50 → 50; 62.5 → 63.
            ("a bin-packing shape favours used nodes", &most, [3000, 5000], [4000, 10000], 63),
            // cpu u = 100 → score 0 and is left out with its weight; mem u = 50 → 50. Result 50.
            (
                "resources scoring zero are left out of the mean",
                &least,
                [4000, 5000],
                [4000, 10000],
                50,
            ),
            // cpu requested > capacity → f(100) = 0, left out; mem u = 0 → 100. Result 100.
            ("an over-committed resource scores as full", &least, [5000, 0], [4000, 10000], 100),
            // Every resource scores 0 → 0.
            (
                "a node where every resource scores zero scores zero",
                &most,
                [0, 0],
                [4000, 10000],
                0,
            ),
            // Zero allocatable everywhere → nothing counted → 0.
            ("resources with zero allocatable are skipped", &least, [1, 1], [0, 0], 0),
        ];
        for (name, s, req, alloc, want) in cases {
            assert_eq!(requested_to_capacity_ratio_scorer(&cm, s, &req, &alloc), want, "{name}");
        }
        // Weights: cpu 3 (25), memory 1 (50): (75 + 50) / 4 = 31.25 → 31.
        let weighted = [ResourceSpec::new("cpu", 3), ResourceSpec::new("memory", 1)];
        assert_eq!(
            requested_to_capacity_ratio_scorer(&weighted, &least, &[3000, 5000], &[4000, 10000]),
            31
        );
    }

    #[test]
    fn integer_rounding_equals_upstreams_float_rounding() {
        // Scores are ≤ 100 and weights ≤ 100 per resource: cover every sum for up to a few
        // resources, plus large values.
        for d in 1..=400i64 {
            for n in 0..=(100 * d) {
                assert_eq!(round_div(n, d), (n as f64 / d as f64).round() as i64, "{n}/{d}");
            }
        }
        for &(n, d) in &[(1i64 << 40, 3i64), ((1 << 45) + 1, 2), (999_999_999_999, 7)] {
            assert_eq!(round_div(n, d), (n as f64 / d as f64).round() as i64, "{n}/{d}");
        }
    }
}
