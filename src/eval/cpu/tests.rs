use super::*;

#[test]
fn default_normalization_matches_the_framework_helper() {
    let cases: &[(&str, Vec<i64>, bool)] = &[
        ("scores scale so the best becomes 100", vec![10, 5, 0], false),
        ("reversed scores give the best node 100", vec![10, 5, 0], true),
        ("all-zero scores stay zero", vec![0, 0], false),
        ("all-zero scores reversed all become 100", vec![0, 0], true),
        ("a score above a third truncates", vec![3, 1, 2], false),
        ("negative weights can make the maximum negative", vec![-4, -2], false),
    ];
    for (name, scores, reverse) in cases {
        let mut want = scores.clone();
        crate::framework::default_normalize_score(100, *reverse, &mut want);
        let max = *scores.iter().max().unwrap() as i32;
        let got: Vec<i64> =
            scores.iter().map(|&s| i64::from(default_normalize(s as i32, max, *reverse))).collect();
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn the_float_quotient_equals_integer_division() {
    let values = [0u32, 1, 2, 3, 7, 99, 100, 101, 4095, 65_536, 1 << 20, 42_949_672, u32::MAX];
    for &b in &values {
        for &a in &values {
            for a in [a, a.wrapping_sub(1), a.wrapping_add(1)] {
                let want = a.checked_div(b).unwrap_or(0);
                assert_eq!(small_quotient(a, b), want, "{a} / {b}");
            }
        }
        // Every quotient just below and at each integer up to 100, for large divisors.
        for q in 0..=100u32 {
            let a = u64::from(q) * u64::from(b);
            for a in [a.saturating_sub(1), a] {
                let Ok(a) = u32::try_from(a) else { continue };
                assert_eq!(small_quotient(a, b), a.checked_div(b).unwrap_or(0), "{a} / {b}");
            }
        }
    }
}

#[test]
fn default_normalization_wraps_where_wgsl_wraps_instead_of_panicking() {
    // 100 · 536870912 wraps to i32::MIN; i32::MIN / -1 is i32::MIN in WGSL (and in
    // `wrapping_div`), where `/` would panic.
    assert_eq!(default_normalize(536_870_912, -1, false), i32::MIN);
    assert_eq!(default_normalize(536_870_912, -1, true), 100i32.wrapping_sub(i32::MIN));
}

#[test]
fn the_broken_linear_function_matches_the_plugin() {
    use crate::plugins::noderesources::requested_to_capacity_ratio::{
        FunctionShapePoint, broken_linear as plugin_broken_linear,
    };
    let shapes: &[(&str, Vec<(i32, i32)>)] = &[
        ("an increasing shape interpolates", vec![(0, 0), (100, 100)]),
        ("a decreasing shape interpolates downwards", vec![(0, 100), (50, 30), (100, 0)]),
        ("a shape starting late is flat before its first point", vec![(30, 20), (80, 90)]),
        ("a single point is flat", vec![(50, 70)]),
    ];
    for (name, shape) in shapes {
        let plugin_shape: Vec<FunctionShapePoint> = shape
            .iter()
            .map(|&(u, s)| FunctionShapePoint { utilization: u.into(), score: s.into() })
            .collect();
        for u in 0..=100 {
            assert_eq!(
                i64::from(broken_linear(shape, u)),
                plugin_broken_linear(&plugin_shape, u.into()),
                "{name} at {u}"
            );
        }
    }
}
