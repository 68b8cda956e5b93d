//! The instruction sets the row evaluator ([`super::rows`]) is compiled for, and the choice
//! among them at run time.
//!
//! The default build targets baseline x86-64 (SSE2), where a row's loops convert between
//! `u32`, `i32` and `f64` and divide two lanes at a time. The row evaluator is compiled a second
//! time with AVX2 enabled (`#[target_feature]`), and each evaluation runs it when the CPU has it
//! ([`InstructionSet::detected`]): 15–25 % faster on the 1k × 100k benchmark. (A third copy with
//! AVX-512 was measured slower than AVX2 on this machine's Xeon and was not kept; see
//! BENCHMARKS.md.) Both copies compute
//! the same steps: integer operations wrap alike, `f64` operations are IEEE 754 in every
//! instruction set, `as` conversions are defined by Rust, and no multiply and add is fused
//! (Rust never contracts them), so both give the same matrix bit for bit (checked by
//! `tests/all/cpu_parallel.rs` on every instruction set the machine has).
//!
//! Input: the instruction set an evaluation chose ([`InstructionSet::current`], fixed in
//! [`super::rows::Statics`] when it is built) and a row. Output: the row. No upstream
//! counterpart.
//!
//! `KPLACE_CPU_SIMD=baseline|avx2` caps the choice for the whole process (to compare
//! them, or to step around a CPU that misreports a feature); [`with_instruction_set`] caps it
//! for the evaluations a thread starts.

use std::cell::Cell;
use std::sync::OnceLock;

use super::super::prep::Prepared;
use super::Rows;
use super::resource_rows::{ResourceSoa, balanced_row, fit_row};
use super::rows::{Scratch, Statics, evaluate_row_body};

/// An instruction set the row evaluator is compiled for, narrowest first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum InstructionSet {
    /// What the target was built for (SSE2 on x86-64; everything on other architectures).
    #[default]
    Baseline,
    /// x86-64 with AVX2, BMI1/2, LZCNT, MOVBE, POPCNT and F16C (x86-64-v3 without FMA).
    Avx2,
}

impl InstructionSet {
    /// Every instruction set, narrowest first.
    pub const ALL: [InstructionSet; 2] = [InstructionSet::Baseline, InstructionSet::Avx2];

    /// The name `KPLACE_CPU_SIMD` takes.
    pub fn name(self) -> &'static str {
        match self {
            InstructionSet::Baseline => "baseline",
            InstructionSet::Avx2 => "avx2",
        }
    }

    /// Whether this CPU runs the instruction set.
    pub fn supported(self) -> bool {
        match self {
            InstructionSet::Baseline => true,
            #[cfg(target_arch = "x86_64")]
            InstructionSet::Avx2 => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("bmi1")
                    && std::arch::is_x86_feature_detected!("bmi2")
                    && std::arch::is_x86_feature_detected!("lzcnt")
                    && std::arch::is_x86_feature_detected!("movbe")
                    && std::arch::is_x86_feature_detected!("popcnt")
                    && std::arch::is_x86_feature_detected!("f16c")
            }
            #[cfg(not(target_arch = "x86_64"))]
            InstructionSet::Avx2 => false,
        }
    }

    /// The widest instruction set this CPU runs, capped by `KPLACE_CPU_SIMD` (read once; an
    /// unknown value is ignored with a warning).
    pub fn detected() -> InstructionSet {
        static DETECTED: OnceLock<InstructionSet> = OnceLock::new();
        *DETECTED.get_or_init(|| {
            let widest = InstructionSet::ALL
                .into_iter()
                .rfind(|set| set.supported())
                .unwrap_or(InstructionSet::Baseline);
            match std::env::var("KPLACE_CPU_SIMD") {
                Ok(v) => match InstructionSet::ALL.into_iter().find(|s| s.name() == v) {
                    Some(cap) => widest.min(cap),
                    None => {
                        tracing::warn!(
                            value = %v,
                            "KPLACE_CPU_SIMD is neither baseline nor avx2: ignored"
                        );
                        widest
                    }
                },
                Err(_) => widest,
            }
        })
    }

    /// What an evaluation started on this thread runs: [`InstructionSet::detected`], capped
    /// by [`with_instruction_set`].
    pub fn current() -> InstructionSet {
        let detected = InstructionSet::detected();
        CAP.with(|cap| cap.get().map_or(detected, |cap| detected.min(cap)))
    }
}

thread_local! {
    /// The cap [`with_instruction_set`] sets for this thread.
    static CAP: Cell<Option<InstructionSet>> = const { Cell::new(None) };
}

/// Runs `f` with the evaluations it starts on this thread capped at `set` (their rows run on
/// other threads too: the choice is made once, when an evaluation starts). Restores the
/// previous cap afterwards, also when `f` panics.
pub fn with_instruction_set<R>(set: InstructionSet, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<InstructionSet>);
    impl Drop for Restore {
        fn drop(&mut self) {
            CAP.with(|cap| cap.set(self.0));
        }
    }
    let _restore = Restore(CAP.with(|cap| cap.replace(Some(set))));
    f()
}

/// The row evaluator compiled for `s.simd`. Calling a `#[target_feature]` function is `unsafe`
/// (the CPU must have the features): this dispatch and [`resource_rows`]' are kplace's
/// `unsafe` blocks besides one other, allowed in this module alone (the workspace denies
/// `unsafe_code`).
#[allow(unsafe_code)]
pub(super) fn evaluate_row(
    p: &Prepared<'_>,
    s: &Statics,
    r: &mut Rows<'_>,
    row: usize,
    sc: &mut Scratch,
) {
    match s.simd {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Statics::new` takes `s.simd` from `InstructionSet::current`, which never
        // exceeds what `supported` found on this CPU.
        InstructionSet::Avx2 => unsafe { row_avx2(p, s, r, row, sc) },
        _ => evaluate_row_body(p, s, r, row, sc),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,movbe,popcnt,f16c")]
fn row_avx2(p: &Prepared<'_>, s: &Statics, r: &mut Rows<'_>, row: usize, sc: &mut Scratch) {
    evaluate_row_body(p, s, r, row, sc)
}

/// The resource kernels ([`super::resource_rows`]) of one class across node columns, compiled
/// for `set`, which must come from [`InstructionSet::current`]: NodeResourcesFit's raw scores
/// into `fit`, BalancedAllocation's into `balanced` (`cols.len` each; `weight_sum` is scratch).
/// False when the kernels do not score the class (more resources than they hold). The batch
/// solver runs them on the nodes whose usage changed, where SSE2's lack of a 32-bit vector
/// multiply made the baseline copy twice as slow. The same dispatch as [`evaluate_row`].
#[allow(unsafe_code, clippy::too_many_arguments)]
pub(crate) fn resource_rows(
    set: InstructionSet,
    p: &Prepared<'_>,
    req: &[u32],
    req_nz: &[u32],
    cols: &ResourceSoa<'_>,
    fit: &mut [i32],
    balanced: &mut [i32],
    weight_sum: &mut Vec<i32>,
) -> bool {
    match set {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `set` comes from `InstructionSet::current`, which never exceeds what
        // `supported` found on this CPU.
        InstructionSet::Avx2 => unsafe {
            resource_rows_avx2(p, req, req_nz, cols, fit, balanced, weight_sum)
        },
        _ => fit_row(p, req, req_nz, cols, fit, weight_sum) && balanced_row(p, req, cols, balanced),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,movbe,popcnt,f16c")]
fn resource_rows_avx2(
    p: &Prepared<'_>,
    req: &[u32],
    req_nz: &[u32],
    cols: &ResourceSoa<'_>,
    fit: &mut [i32],
    balanced: &mut [i32],
    weight_sum: &mut Vec<i32>,
) -> bool {
    fit_row(p, req, req_nz, cols, fit, weight_sum) && balanced_row(p, req, cols, balanced)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cap_narrows_the_choice_and_never_widens_it() {
        let detected = InstructionSet::detected();
        for set in InstructionSet::ALL {
            let got = with_instruction_set(set, InstructionSet::current);
            assert_eq!(got, detected.min(set), "capped at {}", set.name());
        }
        assert_eq!(InstructionSet::current(), detected, "no cap outside with_instruction_set");
    }

    #[test]
    fn a_cap_is_restored_when_its_closure_panics() {
        let result = std::panic::catch_unwind(|| {
            with_instruction_set(InstructionSet::Baseline, || panic!("inside"))
        });
        assert!(result.is_err());
        assert_eq!(InstructionSet::current(), InstructionSet::detected());
    }

    #[test]
    fn nested_caps_apply_the_inner_one_and_restore_the_outer_one() {
        let widest = InstructionSet::detected();
        with_instruction_set(widest, || {
            with_instruction_set(InstructionSet::Baseline, || {
                assert_eq!(InstructionSet::current(), InstructionSet::Baseline);
            });
            assert_eq!(InstructionSet::current(), widest);
        });
    }

    #[test]
    fn the_baseline_runs_everywhere_and_names_are_distinct() {
        assert!(InstructionSet::Baseline.supported());
        assert!(InstructionSet::detected().supported());
        let names: Vec<&str> = InstructionSet::ALL.iter().map(|s| s.name()).collect();
        assert_eq!(names, ["baseline", "avx2"]);
    }
}
