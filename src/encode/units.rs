//! Encoded units: how every resource amount becomes a `u32` that the WGSL kernels (and the CPU
//! reference, which must agree with them bit for bit) can add, compare and multiply by 100
//! without overflow.
//!
//! Input: raw amounts from [`crate::resources::Resource`] (millicores, bytes, counts) as `i64`.
//! Output: `u32` amounts in a per-resource unit, [`ResourceUnit`], with a documented rounding
//! direction. Upstream counterpart (v1.35): the `int64` amounts of `framework.Resource`
//! (`pkg/scheduler/framework/types.go`) and the scoring formulas of
//! `pkg/scheduler/framework/plugins/noderesources/{least_allocated,most_allocated,
//! requested_to_capacity_ratio,balanced_allocation}.go`.
//!
//! # Units
//!
//! | resource | base unit | scale |
//! |---|---|---|
//! | `cpu` | 2^s millicores, s ≥ 0 | millicore or coarser |
//! | `memory` | 2^s bytes, s ≥ 20 | MiB or coarser |
//! | `pods` | 2^s pods, s ≥ 0 | pod or coarser |
//! | `ephemeral-storage` | 2^s bytes, s ≥ 20 | MiB or coarser |
//! | `hugepages-*` | 2^s bytes, s ≥ 20 | MiB or coarser |
//! | any other scalar (e.g. `nvidia.com/gpu`) | 2^s of its unit, s ≥ 0 | 1 or coarser |
//!
//! Every resource is *adaptive*: it starts at its base shift and the encoder raises the shift
//! (doubling the unit) until every amount of that resource in the cluster fits [`AMOUNT_MAX`];
//! the chosen shift is recorded in [`ResourceUnit::shift`]. A node or pod whose amount is
//! outside the base unit's range (a node of 41 TiB of memory, of 42,950 CPUs or of 42,949,673
//! pods) thus widens the unit of that resource for the whole encoding instead of failing it;
//! amounts that are no longer whole units get the `INEXACT_UNITS` flags (below), and
//! `kplace plan` names the widened resources and the objects that widened them in
//! `summary.degraded`. In a cluster of real nodes (under 40 TiB of memory or ephemeral storage,
//! under 42,949 CPUs) every shift stays at its base. An amount that fits no shift (negative, or
//! a sum of rounded-up requests beyond any unit) is an error
//! ([`crate::encode::EncodeError::Overflow`]), never a wrap.
//!
//! # Rounding: requests up, allocatable down
//!
//! * Node allocatable rounds **down**: `enc(A) = floor(A / 2^s)`.
//! * Every request rounds **up**: `enc(r) = ceil(r / 2^s)`, per pod. A node's requested amount
//!   is the sum of its pods' rounded-up requests (not the rounded sum), so that adding a class's
//!   encoded request to a node's encoded requested amount — what the solver does — gives exactly
//!   what encoding the node with that pod on it would give.
//! * Zero stays zero and a positive request encodes to at least 1, so "the pod requests this
//!   resource" (upstream skips resources a pod does not request) is unchanged by encoding.
//!
//! Consequence: `Σ enc(r_i) ≤ enc(A)` implies `Σ r_i ≤ A` (each `r_i ≤ 2^s·enc(r_i)` and
//! `2^s·enc(A) ≤ A`): a pod that fits in encoded units fits in exact units. The converse fails
//! only when amounts are not multiples of the unit; the encoder then sets the `INEXACT_UNITS`
//! flag on the node or class (see [`crate::encode::tensors`]) so a caller can re-check such
//! pairs in exact units.
//!
//! # Worked example (memory)
//!
//! A node reports allocatable memory `15718608Ki` = 16,095,854,592 bytes = 15,350.2 MiB, which
//! encodes **down** to 15,350. A pod requests `1G` = 1,000,000,000 bytes = 953.67 MiB, which
//! encodes **up** to 954.
//!
//! * Fit: in bytes 16 such pods fit (16,000,000,000 ≤ 16,095,854,592) and 17 do not; encoded,
//!   16 × 954 = 15,264 ≤ 15,350 and 17 × 954 = 16,218 > 15,350. Same answer.
//! * LeastAllocated score of one such pod on the empty node: exact
//!   `(16,095,854,592 − 1,000,000,000) × 100 / 16,095,854,592 = 93` (93.79); encoded
//!   `(15,350 − 954) × 100 / 15,350 = 93` (93.78). Same answer.
//! * Where they differ: allocatable 1,049,100,288 bytes (1,000.5 MiB → 1,000) and two pods of
//!   524,550,144 bytes (500.25 MiB → 501). Exactly, both fit (their sum equals allocatable);
//!   encoded, 1,002 > 1,000 and the second is rejected. And with one pod of 524,288,001 bytes
//!   (500 MiB + 1 byte → 501) on that node, LeastAllocated is 50 exactly (50.02) but 49 encoded
//!   (49.9).
//!
//! When every amount of a node and a class is a multiple of the unit (the flags are clear),
//! the encoded verdicts and scores equal upstream's exactly: `floor(a·k / (b·k)) = floor(a/b)`.
//! The CPU reference evaluates in encoded units too, so CPU and GPU agree bit for bit always;
//! upstream agreement is exact for flag-free pairs and conservative (never a false fit) otherwise.
//! CPU is exact at its base unit (Kubernetes itself rounds CPU quantities up to millicores).
//!
//! # Bounds (why nothing overflows)
//!
//! Every encoded amount `x` — allocatable, a node's requested or non-zero requested sum, a
//! class's request — is at most [`AMOUNT_MAX`] = `floor(u32::MAX / 100)` = 42,949,672. Hence:
//!
//! * `x × 100 ≤ u32::MAX`: the products in LeastAllocated `(alloc − req) × 100 / alloc`,
//!   MostAllocated `req × 100 / alloc` and RequestedToCapacityRatio (utilization `× 100`) fit
//!   **u32** (compute them after checking `req ≤ alloc`, as upstream does). They do *not* fit
//!   i32 for the largest memory amounts (24 TiB = 25,165,824 MiB; × 100 > 2^31).
//! * `x + y < 2^31` for any two amounts, so `requested + request` and `alloc − requested` fit
//!   i32 and u32 alike.
//! * A per-resource score (≤ 100) times a weight (≤ 100, validated upstream) is ≤ 10,000, and
//!   the weighted sum over the resource columns stays far below 2^31.
//! * Largest real nodes: 448 vCPU = 448,000 millicores; 24 TiB = 25,165,824 MiB; 1 PiB of
//!   ephemeral storage = 2^30 MiB, which is over the limit, so that resource's shift becomes 25
//!   (32 MiB units: 33,554,432); 1,000 pods; 16 GPUs. All fit.
//! * Pod counts per topology domain: 1,000,000 nodes × 1,000 pods = 10^9 < 2^31 (i32).
//!   InterPodAffinity sums `weight (≤ 100) × matching pods`, up to 10^11: that needs 64-bit
//!   accumulation (two u32 words on the GPU), not a unit choice.
//! * BalancedAllocation works on `requested / allocatable` fractions in `float64` upstream; an
//!   exact integer cross product `req_a × alloc_b` needs up to 52 bits and is likewise a 64-bit
//!   (two-word) computation for the kernel author. Encoded fractions equal upstream's only for
//!   flag-free pairs.

use crate::resources::{CPU, EPHEMERAL_STORAGE, MEMORY, PODS};

/// upstream `framework.MaxNodeScore`.
pub const MAX_NODE_SCORE: u32 = 100;

/// The largest encoded amount of any resource: `u32::MAX / 100` = 42,949,672, so that an amount
/// times [`MAX_NODE_SCORE`] fits a `u32`.
pub const AMOUNT_MAX: u32 = u32::MAX / MAX_NODE_SCORE;

/// log2 of one MiB: the base shift of byte-valued resources.
pub const MIB_SHIFT: u32 = 20;

/// The largest shift an adaptive resource may reach (2^62 of its base unit).
pub const MAX_SHIFT: u32 = 62;

/// Prefix of hugepages resources (`hugepages-2Mi`, `hugepages-1Gi`), which are byte amounts.
pub use crate::resources::HUGEPAGES_PREFIX;

/// Direction of rounding when an amount is not a multiple of the unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rounding {
    /// Toward zero: capacities (node allocatable).
    Down,
    /// Away from zero: requests (pod, class and node requested amounts).
    Up,
}

/// What the raw amount of a resource counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnitKind {
    /// Millicores (`cpu`).
    MilliCpu,
    /// Bytes (`memory`, `ephemeral-storage`, `hugepages-*`).
    Bytes,
    /// A plain count (`pods`, extended resources).
    Count,
}

/// The unit of one resource column: encoded = raw / 2^`shift`, rounded per [`Rounding`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ResourceUnit {
    /// The resource's API name.
    pub name: String,
    /// What the raw amount counts.
    pub kind: UnitKind,
    /// log2 of the unit in raw amounts.
    pub shift: u32,
    /// Whether the encoder may raise `shift` for this resource when amounts are large.
    pub adaptive: bool,
}

impl ResourceUnit {
    /// The base unit of a resource, before any adaptive raise (see the module doc's table).
    pub fn base(name: &str) -> Self {
        let (kind, shift, adaptive) = match name {
            CPU => (UnitKind::MilliCpu, 0, true),
            MEMORY => (UnitKind::Bytes, MIB_SHIFT, true),
            PODS => (UnitKind::Count, 0, true),
            EPHEMERAL_STORAGE => (UnitKind::Bytes, MIB_SHIFT, true),
            n if n.starts_with(HUGEPAGES_PREFIX) => (UnitKind::Bytes, MIB_SHIFT, true),
            _ => (UnitKind::Count, 0, true),
        };
        ResourceUnit { name: name.to_string(), kind, shift, adaptive }
    }

    /// The unit in raw amounts (`2^shift`).
    pub fn scale(&self) -> u64 {
        1u64 << self.shift
    }

    /// Encodes a raw amount with the given rounding.
    pub fn encode(&self, raw: i64, rounding: Rounding) -> Result<Amount, AmountError> {
        encode_amount(raw, self.shift, rounding)
    }

    /// The raw amount an encoded amount stands for (`units × 2^shift`).
    pub fn decode(&self, units: u32) -> u64 {
        u64::from(units) << self.shift
    }

    /// A human-readable unit name, e.g. `millicores`, `MiB`, `32 MiB`, `units`.
    pub fn unit_name(&self) -> String {
        match self.kind {
            UnitKind::MilliCpu if self.shift == 0 => "millicores".to_string(),
            UnitKind::MilliCpu => format!("{} millicores", self.scale()),
            UnitKind::Bytes if self.shift == MIB_SHIFT => "MiB".to_string(),
            UnitKind::Bytes if self.shift >= MIB_SHIFT => {
                format!("{} MiB", 1u64 << (self.shift - MIB_SHIFT))
            }
            UnitKind::Bytes => format!("{} bytes", self.scale()),
            UnitKind::Count if self.shift == 0 => "units".to_string(),
            UnitKind::Count => format!("{} units", self.scale()),
        }
    }
}

/// An encoded amount and whether encoding lost nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Amount {
    /// The encoded amount (≤ [`AMOUNT_MAX`]).
    pub value: u32,
    /// Whether the raw amount was a multiple of the unit.
    pub exact: bool,
}

/// Why an amount could not be encoded (the caller adds which node/pod and resource).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AmountError {
    /// The raw amount is negative.
    Negative,
    /// The encoded amount exceeds [`AMOUNT_MAX`].
    TooLarge {
        /// The encoded amount that did not fit.
        encoded: u64,
    },
}

/// Encodes `raw` as `raw / 2^shift` rounded per `rounding`, checking [`AMOUNT_MAX`].
pub fn encode_amount(raw: i64, shift: u32, rounding: Rounding) -> Result<Amount, AmountError> {
    let Ok(raw) = u64::try_from(raw) else {
        return Err(AmountError::Negative);
    };
    let shift = shift.min(MAX_SHIFT);
    let mask = (1u64 << shift) - 1;
    let exact = raw & mask == 0;
    let down = raw >> shift;
    let value = match rounding {
        Rounding::Down => down,
        Rounding::Up => down + u64::from(!exact),
    };
    if value > u64::from(AMOUNT_MAX) {
        return Err(AmountError::TooLarge { encoded: value });
    }
    // `value ≤ AMOUNT_MAX < u32::MAX`, so the conversion cannot fail.
    Ok(Amount { value: u32::try_from(value).unwrap_or(AMOUNT_MAX), exact })
}

/// Encodes a sum of requests: the sum of each rounded-up request, checked against
/// [`AMOUNT_MAX`]. Returns the amount, or the error of the first request or of the sum.
pub fn encode_request_sum(
    raws: impl IntoIterator<Item = i64>,
    shift: u32,
) -> Result<Amount, AmountError> {
    let mut total: u64 = 0;
    let mut exact = true;
    for raw in raws {
        let a = encode_amount(raw, shift, Rounding::Up)?;
        total += u64::from(a.value);
        exact &= a.exact;
        if total > u64::from(AMOUNT_MAX) {
            return Err(AmountError::TooLarge { encoded: total });
        }
    }
    Ok(Amount { value: u32::try_from(total).unwrap_or(AMOUNT_MAX), exact })
}

/// The smallest shift ≥ `base` at which every capacity (rounded down) and every group of
/// requests (each rounded up, then summed) fits [`AMOUNT_MAX`]; `None` when even
/// [`MAX_SHIFT`] does not suffice or an amount is negative.
pub fn smallest_fitting_shift<'a>(
    base: u32,
    capacities: &[i64],
    request_groups: impl Iterator<Item = &'a [i64]> + Clone,
) -> Option<u32> {
    (base..=MAX_SHIFT).find(|&shift| {
        capacities.iter().all(|&c| encode_amount(c, shift, Rounding::Down).is_ok())
            && request_groups
                .clone()
                .all(|group| encode_request_sum(group.iter().copied(), shift).is_ok())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MI: i64 = 1 << 20;
    const GI: i64 = 1 << 30;
    const TI: i64 = 1 << 40;
    const PI: i64 = 1 << 50;

    #[test]
    fn amounts_round_in_the_documented_direction() {
        let cases: &[(&str, i64, u32, Rounding, u32, bool)] = &[
            (
                "allocatable memory rounds down to whole MiB",
                16_095_854_592,
                20,
                Rounding::Down,
                15_350,
                false,
            ),
            (
                "a memory request rounds up to whole MiB",
                1_000_000_000,
                20,
                Rounding::Up,
                954,
                false,
            ),
            (
                "a whole number of MiB is exact either way (down)",
                500 * MI,
                20,
                Rounding::Down,
                500,
                true,
            ),
            (
                "a whole number of MiB is exact either way (up)",
                500 * MI,
                20,
                Rounding::Up,
                500,
                true,
            ),
            ("a zero request stays zero", 0, 20, Rounding::Up, 0, true),
            ("one byte of request becomes one MiB", 1, 20, Rounding::Up, 1, false),
            ("one byte of capacity becomes nothing", 1, 20, Rounding::Down, 0, false),
            ("millicores are kept as they are", 448_000, 0, Rounding::Up, 448_000, true),
            (
                "an amount of exactly AMOUNT_MAX units fits",
                i64::from(AMOUNT_MAX) << 20,
                20,
                Rounding::Down,
                AMOUNT_MAX,
                true,
            ),
        ];
        for (name, raw, shift, rounding, want, exact) in cases {
            let got =
                encode_amount(*raw, *shift, *rounding).unwrap_or_else(|e| panic!("{name}: {e:?}"));
            assert_eq!(got, Amount { value: *want, exact: *exact }, "{name}");
        }
    }

    #[test]
    fn amounts_outside_the_range_are_errors_not_wraps() {
        let cases: &[(&str, i64, u32, Rounding, AmountError)] = &[
            ("a negative amount is refused", -1, 0, Rounding::Down, AmountError::Negative),
            (
                "50,000 cores of CPU exceed the millicore range",
                50_000_000,
                0,
                Rounding::Down,
                AmountError::TooLarge { encoded: 50_000_000 },
            ),
            (
                "one more unit than AMOUNT_MAX is refused",
                i64::from(AMOUNT_MAX) + 1,
                0,
                Rounding::Up,
                AmountError::TooLarge { encoded: u64::from(AMOUNT_MAX) + 1 },
            ),
            (
                "a request just over AMOUNT_MAX MiB rounds up past the limit",
                (i64::from(AMOUNT_MAX) << 20) + 1,
                20,
                Rounding::Up,
                AmountError::TooLarge { encoded: u64::from(AMOUNT_MAX) + 1 },
            ),
        ];
        for (name, raw, shift, rounding, want) in cases {
            assert_eq!(encode_amount(*raw, *shift, *rounding), Err(*want), "{name}");
        }
    }

    #[test]
    fn the_worked_example_in_the_module_doc_holds() {
        let mem = ResourceUnit::base(MEMORY);
        let alloc = mem.encode(16_095_854_592, Rounding::Down).unwrap();
        let req = mem.encode(1_000_000_000, Rounding::Up).unwrap();
        assert_eq!((alloc.value, req.value), (15_350, 954));
        // 16 pods fit exactly and encoded; 17 fit neither way.
        assert!(16 * 1_000_000_000_i64 <= 16_095_854_592 && 16 * req.value <= alloc.value);
        assert!(17 * 1_000_000_000_i64 > 16_095_854_592 && 17 * req.value > alloc.value);
        let exact_score = (16_095_854_592_i64 - 1_000_000_000) * 100 / 16_095_854_592;
        let enc_score = (alloc.value - req.value) * MAX_NODE_SCORE / alloc.value;
        assert_eq!((exact_score, enc_score), (93, 93));

        // Where encoding is conservative.
        let small = 1_049_100_288_i64;
        let a = mem.encode(small, Rounding::Down).unwrap().value;
        let r = mem.encode(524_550_144, Rounding::Up).unwrap().value;
        assert_eq!((a, r), (1_000, 501));
        assert!(2 * 524_550_144 <= small, "two pods fit in bytes");
        assert!(2 * r > a, "but not in MiB");
        let r1 = mem.encode(500 * MI + 1, Rounding::Up).unwrap().value;
        let exact = (small - (500 * MI + 1)) * 100 / small;
        let enc = (a - r1) * MAX_NODE_SCORE / a;
        assert_eq!((exact, enc), (50, 49));
    }

    #[test]
    fn fitting_in_encoded_units_implies_fitting_in_bytes() {
        // Exhaustive over small amounts with a 16-unit scale (shift 4).
        for alloc in 0..200i64 {
            let a = encode_amount(alloc, 4, Rounding::Down).unwrap().value;
            for r1 in 0..60i64 {
                for r2 in 0..60i64 {
                    let e = encode_request_sum([r1, r2], 4).unwrap().value;
                    if e <= a {
                        assert!(r1 + r2 <= alloc, "alloc {alloc}, requests {r1} + {r2}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_largest_real_node_fits_and_its_products_stay_in_u32() {
        let cpu = ResourceUnit::base(CPU).encode(448_000, Rounding::Down).unwrap().value;
        let mem = ResourceUnit::base(MEMORY).encode(24 * TI, Rounding::Down).unwrap().value;
        assert_eq!(mem, 25_165_824);
        let gpus = ResourceUnit::base("nvidia.com/gpu").encode(16, Rounding::Down).unwrap().value;
        let pods = ResourceUnit::base(PODS).encode(1_000, Rounding::Down).unwrap().value;
        for x in [cpu, mem, gpus, pods, AMOUNT_MAX] {
            assert!(x.checked_mul(MAX_NODE_SCORE).is_some(), "{x} × 100 fits u32");
            assert!(i32::try_from(u64::from(x) * 2).is_ok(), "{x} + {x} fits i32");
        }
        // 1 PiB of ephemeral storage needs 32 MiB units.
        let storage = ResourceUnit::base(EPHEMERAL_STORAGE);
        assert!(storage.encode(PI, Rounding::Down).is_err());
        assert_eq!(smallest_fitting_shift(MIB_SHIFT, &[PI], std::iter::empty()), Some(25));
        // Per-domain pod counts up to a million nodes of 1,000 pods fit i32.
        assert!(i32::try_from(1_000_000_i64 * 1_000).is_ok());
    }

    #[test]
    fn the_adaptive_shift_is_the_smallest_that_fits_capacities_and_request_sums() {
        type Case = (&'static str, Vec<i64>, Vec<Vec<i64>>, Option<u32>);
        let cases: &[Case] = &[
            ("ordinary disks stay in MiB", vec![500 * GI], vec![vec![10 * GI]], Some(20)),
            ("a 1 PiB disk moves storage to 32 MiB units", vec![PI], vec![], Some(25)),
            (
                "a node's summed requests also count",
                vec![GI],
                vec![vec![i64::from(AMOUNT_MAX) << 20, 1 << 20]],
                Some(21),
            ),
            ("a negative capacity never fits", vec![-1], vec![], None),
        ];
        for (name, caps, groups, want) in cases {
            let got = smallest_fitting_shift(20, caps, groups.iter().map(Vec::as_slice));
            assert_eq!(got, *want, "{name}");
        }
    }

    #[test]
    fn base_units_follow_the_table() {
        let cases: &[(&str, UnitKind, u32, bool, &str)] = &[
            (CPU, UnitKind::MilliCpu, 0, true, "millicores"),
            (MEMORY, UnitKind::Bytes, 20, true, "MiB"),
            (PODS, UnitKind::Count, 0, true, "units"),
            (EPHEMERAL_STORAGE, UnitKind::Bytes, 20, true, "MiB"),
            ("hugepages-2Mi", UnitKind::Bytes, 20, true, "MiB"),
            ("nvidia.com/gpu", UnitKind::Count, 0, true, "units"),
        ];
        for (name, kind, shift, adaptive, unit) in cases {
            let u = ResourceUnit::base(name);
            assert_eq!((u.kind, u.shift, u.adaptive), (*kind, *shift, *adaptive), "{name}");
            assert_eq!(u.unit_name(), *unit, "{name}");
        }
        let coarse = ResourceUnit { shift: 25, ..ResourceUnit::base(EPHEMERAL_STORAGE) };
        assert_eq!(coarse.unit_name(), "32 MiB");
        assert_eq!(coarse.decode(3), 3 << 25);
    }
}
