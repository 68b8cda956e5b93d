//! Software IEEE-754 binary64 arithmetic on pairs of `u32`: the Rust twin of `shaders/f64.wgsl`,
//! line for line, so that the CPU matrix and the GPU compute the `float64` steps of upstream's
//! plugins (NodeResourcesBalancedAllocation, ImageLocality, InterPodAffinity's and
//! PodTopologySpread's scoring) with the same operations and get the same bits.
//!
//! Input: binary64 values as [`V2`] (`x` = low 32 bits, `y` = high 32 bits of the IEEE bit
//! pattern; WGSL's `vec2<u32>`), and 64-bit integers in the same form (two's complement for
//! signed ones). Output: the correctly rounded (round to nearest, ties to even) result of each
//! operation, bit for bit what a native `f64` operation gives (checked by the property tests below
//! against Rust's `f64`, and on the GPU by `tests/all/gpu_parity.rs` against the same reference). No
//! upstream counterpart; the algorithms of `add`, `sub`, `mul` and the rounding are those of
//! Berkeley SoftFloat 3 (`softfloat_addMagsF64`, `softfloat_subMagsF64`, `f64_mul`,
//! `softfloat_roundPackToF64`, `softfloat_normRoundPackToF64`, `i64_to_f64`, `ui64_to_f64`);
//! division and square root are restoring bit-by-bit algorithms (a 63-bit quotient or 55-bit root
//! plus a sticky bit), and [`f64_round`] is Go's `math.Round` bit manipulation.
//!
//! # Domain
//!
//! Every finite input, zeros of both signs, subnormals, infinities and NaNs are handled, so no
//! input range has to be proven for correctness. NaN *payloads* follow SoftFloat's x86
//! specialization (the first NaN operand, quieted; `0xFFF8…` for invalid operations) and are
//! only compared as "is NaN" by the tests; no kplace computation produces a NaN (every divisor is
//! checked non-zero first). Conversions to integers ([`f64_to_i64`]) saturate like Rust's `as`
//! (NaN gives 0); kplace only converts values well inside the `i64` range.
//!
//! Shifts use wrapping (`shift mod 32`) semantics, as WGSL's do for non-constant amounts, and
//! every helper keeps its amounts below 32 where it matters, so both sides compute the same.

/// A 64-bit value as two `u32` words: WGSL's `vec2<u32>` (`x` low, `y` high).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct V2 {
    /// The low 32 bits.
    pub x: u32,
    /// The high 32 bits.
    pub y: u32,
}

/// `vec2<u32>(x, y)`.
pub const fn v2(x: u32, y: u32) -> V2 {
    V2 { x, y }
}

impl V2 {
    /// The words of a `u64`.
    pub const fn from_u64(v: u64) -> V2 {
        V2 { x: v as u32, y: (v >> 32) as u32 }
    }

    /// The `u64` of the words.
    pub const fn to_u64(self) -> u64 {
        (self.y as u64) << 32 | self.x as u64
    }

    /// The words of an `f64`'s bit pattern.
    pub const fn from_f64(v: f64) -> V2 {
        V2::from_u64(v.to_bits())
    }

    /// The `f64` of a bit pattern.
    pub const fn to_f64(self) -> f64 {
        f64::from_bits(self.to_u64())
    }

    /// The words of an `i64` (two's complement).
    pub const fn from_i64(v: i64) -> V2 {
        V2::from_u64(v as u64)
    }

    /// The `i64` of two's complement words.
    pub const fn to_i64(self) -> i64 {
        self.to_u64() as i64
    }
}

fn b2u(b: bool) -> u32 {
    u32::from(b)
}

// ---------------------------------------------------------------------------------------------
// 64-bit integers as two u32 words.

/// `a == 0`.
pub fn u64_is_zero(a: V2) -> bool {
    (a.x | a.y) == 0
}

/// `a + b` (wrapping).
pub fn u64_add(a: V2, b: V2) -> V2 {
    let lo = a.x.wrapping_add(b.x);
    let carry = b2u(lo < a.x);
    v2(lo, a.y.wrapping_add(b.y).wrapping_add(carry))
}

/// `a - b` (wrapping).
pub fn u64_sub(a: V2, b: V2) -> V2 {
    let lo = a.x.wrapping_sub(b.x);
    let borrow = b2u(a.x < b.x);
    v2(lo, a.y.wrapping_sub(b.y).wrapping_sub(borrow))
}

/// `-a` (two's complement).
pub fn u64_neg(a: V2) -> V2 {
    u64_sub(v2(0, 0), a)
}

/// `a < b`, unsigned.
pub fn u64_lt(a: V2, b: V2) -> bool {
    a.y < b.y || (a.y == b.y && a.x < b.x)
}

/// `a << n` for `n < 64`.
pub fn u64_shl(a: V2, n: u32) -> V2 {
    if n == 0 {
        return a;
    }
    if n >= 32 {
        return v2(0, a.x.wrapping_shl(n - 32));
    }
    v2(a.x.wrapping_shl(n), a.y.wrapping_shl(n) | a.x.wrapping_shr(32 - n))
}

/// `a >> n` (logical) for `n < 64`.
pub fn u64_shr(a: V2, n: u32) -> V2 {
    if n == 0 {
        return a;
    }
    if n >= 32 {
        return v2(a.y.wrapping_shr(n - 32), 0);
    }
    v2(a.x.wrapping_shr(n) | a.y.wrapping_shl(32 - n), a.y.wrapping_shr(n))
}

/// SoftFloat's `softfloat_shiftRightJam64`: `a >> n` with every shifted-out bit ORed into bit 0
/// (any `n`).
pub fn u64_shr_jam(a: V2, n: u32) -> V2 {
    if n >= 63 {
        return v2(b2u(!u64_is_zero(a)), 0);
    }
    let r = u64_shr(a, n);
    let lost = u64_shl(r, n) != a;
    v2(r.x | b2u(lost), r.y)
}

/// Leading zeros of a 64-bit value (64 for 0).
pub fn u64_clz(a: V2) -> u32 {
    if a.y != 0 {
        return a.y.leading_zeros();
    }
    32 + a.x.leading_zeros()
}

/// The full 64-bit product of two `u32`s (16-bit halves, as WGSL has no wide multiply).
pub fn u32_mul_wide(a: u32, b: u32) -> V2 {
    let (a0, a1) = (a & 0xFFFF, a >> 16);
    let (b0, b1) = (b & 0xFFFF, b >> 16);
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    let mid = p01.wrapping_add(p10);
    let mid_carry = b2u(mid < p01);
    let lo = p00.wrapping_add(mid.wrapping_shl(16));
    let lo_carry = b2u(lo < p00);
    let hi = p11
        .wrapping_add(mid.wrapping_shr(16))
        .wrapping_add(mid_carry.wrapping_shl(16))
        .wrapping_add(lo_carry);
    v2(lo, hi)
}

/// The high 64 bits of the 128-bit product `a · b`, with bit 0 set when the low 64 bits are not
/// all zero (SoftFloat's `softfloat_mul64To128` followed by the jam of `f64_mul`).
pub fn u64_mul_hi_jam(a: V2, b: V2) -> V2 {
    let z0 = u32_mul_wide(a.x, b.x);
    let m1 = u32_mul_wide(a.y, b.x);
    let m2 = u32_mul_wide(a.x, b.y);
    let z3 = u32_mul_wide(a.y, b.y);
    let mid = u64_add(m1, m2);
    let mid_carry = b2u(u64_lt(mid, m1));
    let lo = u64_add(z0, v2(0, mid.x));
    let lo_carry = b2u(u64_lt(lo, z0));
    let mut hi = u64_add(z3, v2(mid.y, mid_carry));
    hi = u64_add(hi, v2(lo_carry, 0));
    v2(hi.x | b2u(!u64_is_zero(lo)), hi.y)
}

/// `a · b` modulo 2^64 for a `u32` factor (also two's complement `i64 · u32`).
pub fn u64_mul_u32(a: V2, b: u32) -> V2 {
    let lo = u32_mul_wide(a.x, b);
    v2(lo.x, lo.y.wrapping_add(a.y.wrapping_mul(b)))
}

/// `(a / b, a % b)`, unsigned, for `0 < b < 2^63` (restoring division, 64 steps).
pub fn u64_divmod(a: V2, b: V2) -> (V2, V2) {
    let mut q = v2(0, 0);
    let mut r = v2(0, 0);
    for i in 0..64u32 {
        let bit = 63 - i;
        let word = if bit >= 32 { a.y.wrapping_shr(bit - 32) } else { a.x.wrapping_shr(bit) };
        r = u64_shl(r, 1);
        r.x |= word & 1;
        q = u64_shl(q, 1);
        if !u64_lt(r, b) {
            r = u64_sub(r, b);
            q.x |= 1;
        }
    }
    (q, r)
}

/// `i64` from `i32` (sign extension).
pub fn i64_from_i32(a: i32) -> V2 {
    v2(a as u32, if a < 0 { 0xFFFF_FFFF } else { 0 })
}

/// `a < b`, signed (two's complement).
pub fn i64_lt(a: V2, b: V2) -> bool {
    u64_lt(v2(a.x, a.y ^ 0x8000_0000), v2(b.x, b.y ^ 0x8000_0000))
}

/// Whether `a < 0`.
pub fn i64_is_negative(a: V2) -> bool {
    (a.y >> 31) != 0
}

/// `a / b` truncated toward zero (Go's and Rust's integer division) for `b != 0` with
/// `|a|, |b| < 2^63`.
pub fn i64_div(a: V2, b: V2) -> V2 {
    let na = i64_is_negative(a);
    let nb = i64_is_negative(b);
    let ua = if na { u64_neg(a) } else { a };
    let ub = if nb { u64_neg(b) } else { b };
    let (q, _) = u64_divmod(ua, ub);
    if na != nb { u64_neg(q) } else { q }
}

// ---------------------------------------------------------------------------------------------
// binary64.

/// `+0.0`.
pub const F64_ZERO: V2 = v2(0, 0);
/// `1.0`.
pub const F64_ONE: V2 = v2(0, 0x3FF0_0000);
/// `2.0`.
pub const F64_TWO: V2 = v2(0, 0x4000_0000);
/// `100.0`.
pub const F64_HUNDRED: V2 = v2(0, 0x4059_0000);
/// The default NaN of invalid operations (SoftFloat's x86 `defaultNaNF64UI`).
pub const F64_DEFAULT_NAN: V2 = v2(0, 0xFFF8_0000);

/// The sign bit (0 or 1).
pub fn f64_sign(a: V2) -> u32 {
    a.y >> 31
}

/// The biased exponent field.
pub fn f64_exp(a: V2) -> i32 {
    ((a.y >> 20) & 0x7FF) as i32
}

/// The 52-bit fraction field.
pub fn f64_frac(a: V2) -> V2 {
    v2(a.x, a.y & 0x000F_FFFF)
}

/// SoftFloat's `packToF64UI`: `(sign << 63) + (exp << 52) + sig` (an addition, so a significand
/// with its hidden bit set carries into the exponent).
pub fn f64_pack(sign: u32, exp: i32, sig: V2) -> V2 {
    u64_add(v2(0, (sign << 31).wrapping_add((exp as u32).wrapping_shl(20))), sig)
}

/// Whether `a` is a NaN.
pub fn f64_is_nan(a: V2) -> bool {
    f64_exp(a) == 0x7FF && !u64_is_zero(f64_frac(a))
}

/// SoftFloat's `softfloat_propagateNaNF64UI` (x86): the first NaN operand, quieted.
pub fn f64_propagate_nan(a: V2, b: V2) -> V2 {
    let n = if f64_is_nan(a) { a } else { b };
    v2(n.x, n.y | 0x0008_0000)
}

/// `-a`.
pub fn f64_neg(a: V2) -> V2 {
    v2(a.x, a.y ^ 0x8000_0000)
}

/// `|a|`.
pub fn f64_abs(a: V2) -> V2 {
    v2(a.x, a.y & 0x7FFF_FFFF)
}

/// A subnormal significand normalized: `(exponent, significand with bit 52 set)` (SoftFloat's
/// `softfloat_normSubnormalF64Sig`).
pub fn f64_norm_subnormal(sig: V2) -> (i32, V2) {
    let shift = u64_clz(sig) as i32 - 11;
    (1 - shift, u64_shl(sig, shift as u32))
}

/// SoftFloat's `softfloat_roundPackToF64` (round to nearest, ties to even): `sig` has its
/// leading bit at bit 62 (or below, for subnormal results), `exp` is the biased exponent minus
/// one.
pub fn f64_round_pack(sign: u32, exp_in: i32, sig_in: V2) -> V2 {
    let mut exp = exp_in;
    let mut sig = sig_in;
    let mut round_bits = sig.x & 0x3FF;
    if (exp as u32) >= 0x7FD {
        if exp < 0 {
            sig = u64_shr_jam(sig, exp.wrapping_neg() as u32);
            exp = 0;
            round_bits = sig.x & 0x3FF;
        } else if exp > 0x7FD || !u64_lt(u64_add(sig, v2(0x200, 0)), v2(0, 0x8000_0000)) {
            return v2(0, (sign << 31) | 0x7FF0_0000);
        }
    }
    sig = u64_shr(u64_add(sig, v2(0x200, 0)), 10);
    if round_bits == 0x200 {
        sig.x &= !1u32;
    }
    if u64_is_zero(sig) {
        exp = 0;
    }
    f64_pack(sign, exp, sig)
}

/// SoftFloat's `softfloat_normRoundPackToF64`: like [`f64_round_pack`] for a significand whose
/// leading bit may be anywhere below bit 63.
pub fn f64_norm_round_pack(sign: u32, exp: i32, sig: V2) -> V2 {
    let shift = u64_clz(sig) as i32 - 1;
    let e = exp - shift;
    if shift >= 10 && (e as u32) < 0x7FD {
        let ee = if u64_is_zero(sig) { 0 } else { e };
        return f64_pack(sign, ee, u64_shl(sig, (shift - 10) as u32));
    }
    f64_round_pack(sign, e, u64_shl(sig, shift as u32))
}

/// SoftFloat's `softfloat_addMagsF64`: `|a| + |b|` with sign `sign_z`.
pub fn f64_add_mags(a: V2, b: V2, sign_z: u32) -> V2 {
    let exp_a = f64_exp(a);
    let mut sig_a = f64_frac(a);
    let exp_b = f64_exp(b);
    let mut sig_b = f64_frac(b);
    let exp_diff = exp_a - exp_b;
    let mut exp_z;
    let mut sig_z;
    if exp_diff == 0 {
        if exp_a == 0 {
            return u64_add(a, sig_b);
        }
        if exp_a == 0x7FF {
            if !u64_is_zero(v2(sig_a.x | sig_b.x, sig_a.y | sig_b.y)) {
                return f64_propagate_nan(a, b);
            }
            return a;
        }
        exp_z = exp_a;
        sig_z = u64_shl(u64_add(u64_add(v2(0, 0x0020_0000), sig_a), sig_b), 9);
    } else {
        sig_a = u64_shl(sig_a, 9);
        sig_b = u64_shl(sig_b, 9);
        if exp_diff < 0 {
            if exp_b == 0x7FF {
                if !u64_is_zero(sig_b) {
                    return f64_propagate_nan(a, b);
                }
                return f64_pack(sign_z, 0x7FF, v2(0, 0));
            }
            exp_z = exp_b;
            if exp_a != 0 {
                sig_a = u64_add(sig_a, v2(0, 0x2000_0000));
            } else {
                sig_a = u64_shl(sig_a, 1);
            }
            sig_a = u64_shr_jam(sig_a, (-exp_diff) as u32);
        } else {
            if exp_a == 0x7FF {
                if !u64_is_zero(sig_a) {
                    return f64_propagate_nan(a, b);
                }
                return a;
            }
            exp_z = exp_a;
            if exp_b != 0 {
                sig_b = u64_add(sig_b, v2(0, 0x2000_0000));
            } else {
                sig_b = u64_shl(sig_b, 1);
            }
            sig_b = u64_shr_jam(sig_b, exp_diff as u32);
        }
        sig_z = u64_add(u64_add(v2(0, 0x2000_0000), sig_a), sig_b);
        if u64_lt(sig_z, v2(0, 0x4000_0000)) {
            exp_z -= 1;
            sig_z = u64_shl(sig_z, 1);
        }
    }
    f64_round_pack(sign_z, exp_z, sig_z)
}

/// SoftFloat's `softfloat_subMagsF64`: `|a| - |b|` with the sign of `a` being `sign_in`.
pub fn f64_sub_mags(a: V2, b: V2, sign_in: u32) -> V2 {
    let mut sign_z = sign_in;
    let mut exp_a = f64_exp(a);
    let mut sig_a = f64_frac(a);
    let exp_b = f64_exp(b);
    let mut sig_b = f64_frac(b);
    let exp_diff = exp_a - exp_b;
    if exp_diff == 0 {
        if exp_a == 0x7FF {
            if !u64_is_zero(v2(sig_a.x | sig_b.x, sig_a.y | sig_b.y)) {
                return f64_propagate_nan(a, b);
            }
            return F64_DEFAULT_NAN;
        }
        let mut sig_diff = u64_sub(sig_a, sig_b);
        if u64_is_zero(sig_diff) {
            return v2(0, 0);
        }
        if exp_a != 0 {
            exp_a -= 1;
        }
        if i64_is_negative(sig_diff) {
            sign_z ^= 1;
            sig_diff = u64_neg(sig_diff);
        }
        let mut shift = u64_clz(sig_diff) as i32 - 11;
        let mut exp_z = exp_a - shift;
        if exp_z < 0 {
            shift = exp_a;
            exp_z = 0;
        }
        return f64_pack(sign_z, exp_z, u64_shl(sig_diff, shift as u32));
    }
    sig_a = u64_shl(sig_a, 10);
    sig_b = u64_shl(sig_b, 10);
    let exp_z;
    let sig_z;
    if exp_diff < 0 {
        sign_z ^= 1;
        if exp_b == 0x7FF {
            if !u64_is_zero(sig_b) {
                return f64_propagate_nan(a, b);
            }
            return f64_pack(sign_z, 0x7FF, v2(0, 0));
        }
        if exp_a != 0 {
            sig_a = u64_add(sig_a, v2(0, 0x4000_0000));
        } else {
            sig_a = u64_add(sig_a, sig_a);
        }
        sig_a = u64_shr_jam(sig_a, (-exp_diff) as u32);
        sig_b = v2(sig_b.x, sig_b.y | 0x4000_0000);
        exp_z = exp_b;
        sig_z = u64_sub(sig_b, sig_a);
    } else {
        if exp_a == 0x7FF {
            if !u64_is_zero(sig_a) {
                return f64_propagate_nan(a, b);
            }
            return a;
        }
        if exp_b != 0 {
            sig_b = u64_add(sig_b, v2(0, 0x4000_0000));
        } else {
            sig_b = u64_add(sig_b, sig_b);
        }
        sig_b = u64_shr_jam(sig_b, exp_diff as u32);
        sig_a = v2(sig_a.x, sig_a.y | 0x4000_0000);
        exp_z = exp_a;
        sig_z = u64_sub(sig_a, sig_b);
    }
    f64_norm_round_pack(sign_z, exp_z - 1, sig_z)
}

/// `a + b`.
pub fn f64_add(a: V2, b: V2) -> V2 {
    let sign_a = f64_sign(a);
    if sign_a == f64_sign(b) { f64_add_mags(a, b, sign_a) } else { f64_sub_mags(a, b, sign_a) }
}

/// `a - b`.
pub fn f64_sub(a: V2, b: V2) -> V2 {
    let sign_a = f64_sign(a);
    if sign_a == f64_sign(b) { f64_sub_mags(a, b, sign_a) } else { f64_add_mags(a, b, sign_a) }
}

/// `a · b` (SoftFloat's `f64_mul`).
pub fn f64_mul(a: V2, b: V2) -> V2 {
    let sign_z = f64_sign(a) ^ f64_sign(b);
    let mut exp_a = f64_exp(a);
    let mut sig_a = f64_frac(a);
    let mut exp_b = f64_exp(b);
    let mut sig_b = f64_frac(b);
    if exp_a == 0x7FF {
        if !u64_is_zero(sig_a) || (exp_b == 0x7FF && !u64_is_zero(sig_b)) {
            return f64_propagate_nan(a, b);
        }
        if exp_b == 0 && u64_is_zero(sig_b) {
            return F64_DEFAULT_NAN;
        }
        return f64_pack(sign_z, 0x7FF, v2(0, 0));
    }
    if exp_b == 0x7FF {
        if !u64_is_zero(sig_b) {
            return f64_propagate_nan(a, b);
        }
        if exp_a == 0 && u64_is_zero(sig_a) {
            return F64_DEFAULT_NAN;
        }
        return f64_pack(sign_z, 0x7FF, v2(0, 0));
    }
    if exp_a == 0 {
        if u64_is_zero(sig_a) {
            return f64_pack(sign_z, 0, v2(0, 0));
        }
        (exp_a, sig_a) = f64_norm_subnormal(sig_a);
    }
    if exp_b == 0 {
        if u64_is_zero(sig_b) {
            return f64_pack(sign_z, 0, v2(0, 0));
        }
        (exp_b, sig_b) = f64_norm_subnormal(sig_b);
    }
    let mut exp_z = exp_a + exp_b - 0x3FF;
    sig_a = u64_shl(v2(sig_a.x, sig_a.y | 0x0010_0000), 10);
    sig_b = u64_shl(v2(sig_b.x, sig_b.y | 0x0010_0000), 11);
    let mut sig_z = u64_mul_hi_jam(sig_a, sig_b);
    if u64_lt(sig_z, v2(0, 0x4000_0000)) {
        exp_z -= 1;
        sig_z = u64_shl(sig_z, 1);
    }
    f64_round_pack(sign_z, exp_z, sig_z)
}

/// `a / b`: a 63-bit quotient by restoring division, plus a sticky bit, rounded by
/// [`f64_round_pack`].
pub fn f64_div(a: V2, b: V2) -> V2 {
    let sign_z = f64_sign(a) ^ f64_sign(b);
    let mut exp_a = f64_exp(a);
    let mut sig_a = f64_frac(a);
    let mut exp_b = f64_exp(b);
    let mut sig_b = f64_frac(b);
    if exp_a == 0x7FF {
        if !u64_is_zero(sig_a) {
            return f64_propagate_nan(a, b);
        }
        if exp_b == 0x7FF {
            if !u64_is_zero(sig_b) {
                return f64_propagate_nan(a, b);
            }
            return F64_DEFAULT_NAN;
        }
        return f64_pack(sign_z, 0x7FF, v2(0, 0));
    }
    if exp_b == 0x7FF {
        if !u64_is_zero(sig_b) {
            return f64_propagate_nan(a, b);
        }
        return f64_pack(sign_z, 0, v2(0, 0));
    }
    if exp_b == 0 {
        if u64_is_zero(sig_b) {
            if exp_a == 0 && u64_is_zero(sig_a) {
                return F64_DEFAULT_NAN;
            }
            return f64_pack(sign_z, 0x7FF, v2(0, 0));
        }
        (exp_b, sig_b) = f64_norm_subnormal(sig_b);
    }
    if exp_a == 0 {
        if u64_is_zero(sig_a) {
            return f64_pack(sign_z, 0, v2(0, 0));
        }
        (exp_a, sig_a) = f64_norm_subnormal(sig_a);
    }
    let mut exp_z = exp_a - exp_b + 0x3FE;
    sig_a = v2(sig_a.x, sig_a.y | 0x0010_0000);
    sig_b = v2(sig_b.x, sig_b.y | 0x0010_0000);
    if u64_lt(sig_a, sig_b) {
        exp_z -= 1;
        sig_a = u64_shl(sig_a, 1);
    }
    // sig_b <= sig_a < 2·sig_b: the quotient sig_a·2^62 / sig_b lies in [2^62, 2^63).
    let mut rem = sig_a;
    let mut q = v2(0, 0);
    for _ in 0..63 {
        q = u64_shl(q, 1);
        if !u64_lt(rem, sig_b) {
            rem = u64_sub(rem, sig_b);
            q.x |= 1;
        }
        rem = u64_shl(rem, 1);
    }
    q.x |= b2u(!u64_is_zero(rem));
    f64_round_pack(sign_z, exp_z, q)
}

/// `√a`: a 55-bit root by the digit-by-digit method, plus a sticky bit, rounded by
/// [`f64_round_pack`]; `√-0 = -0`, the root of a negative number is NaN.
pub fn f64_sqrt(a: V2) -> V2 {
    let sign = f64_sign(a);
    let mut exp = f64_exp(a);
    let mut sig = f64_frac(a);
    if exp == 0x7FF {
        if !u64_is_zero(sig) {
            return f64_propagate_nan(a, a);
        }
        if sign == 0 {
            return a;
        }
        return F64_DEFAULT_NAN;
    }
    if sign != 0 {
        if exp == 0 && u64_is_zero(sig) {
            return a;
        }
        return F64_DEFAULT_NAN;
    }
    if exp == 0 {
        if u64_is_zero(sig) {
            return a;
        }
        (exp, sig) = f64_norm_subnormal(sig);
    }
    // a = m · 2^d with m in [2^52, 2^53); make d even.
    let mut m = v2(sig.x, sig.y | 0x0010_0000);
    let mut d = exp - 1075;
    if (d & 1) != 0 {
        m = u64_shl(m, 1);
        d -= 1;
    }
    // The root of R = m · 2^56 (< 2^110), two radicand bits per step; the remainder stays below
    // 2^58.
    let mut rem = v2(0, 0);
    let mut root = v2(0, 0);
    for i in 0..55u32 {
        let mut bits = 0u32;
        if i <= 26 {
            bits = u64_shr(m, 52 - 2 * i).x & 3;
        }
        rem = u64_shl(rem, 2);
        rem.x |= bits;
        let mut trial = u64_shl(root, 2);
        trial.x |= 1;
        root = u64_shl(root, 1);
        if !u64_lt(rem, trial) {
            rem = u64_sub(rem, trial);
            root.x |= 1;
        }
    }
    // root is in [2^54, 2^55): move its leading bit to bit 62.
    let mut sig_z = u64_shl(root, 8);
    sig_z.x |= b2u(!u64_is_zero(rem));
    f64_round_pack(0, 1048 + d / 2, sig_z)
}

/// `i64 as f64` (SoftFloat's `i64_to_f64`), `a` in two's complement.
pub fn f64_from_i64(a: V2) -> V2 {
    let sign = a.y >> 31;
    if (a.x | (a.y & 0x7FFF_FFFF)) == 0 {
        if sign != 0 {
            return v2(0, 0xC3E0_0000);
        }
        return v2(0, 0);
    }
    let abs = if sign != 0 { u64_neg(a) } else { a };
    f64_norm_round_pack(sign, 0x43C, abs)
}

/// `u64 as f64` (SoftFloat's `ui64_to_f64`).
pub fn f64_from_u64(a: V2) -> V2 {
    if u64_is_zero(a) {
        return v2(0, 0);
    }
    if (a.y & 0x8000_0000) != 0 {
        let half = u64_shr(a, 1);
        return f64_round_pack(0, 0x43D, v2(half.x | (a.x & 1), half.y));
    }
    f64_norm_round_pack(0, 0x43C, a)
}

/// `i32 as f64`.
pub fn f64_from_i32(a: i32) -> V2 {
    f64_from_i64(i64_from_i32(a))
}

/// `u32 as f64`.
pub fn f64_from_u32(a: u32) -> V2 {
    f64_from_u64(v2(a, 0))
}

/// `a as i64`: truncation toward zero, saturating at the `i64` range, NaN gives 0 (Rust's `as`;
/// Go's conversion agrees inside the range).
pub fn f64_to_i64(a: V2) -> V2 {
    let sign = f64_sign(a);
    let exp = f64_exp(a);
    let frac = f64_frac(a);
    if exp == 0x7FF && !u64_is_zero(frac) {
        return v2(0, 0);
    }
    if exp < 1023 {
        return v2(0, 0);
    }
    if exp >= 1023 + 63 {
        if sign != 0 {
            return v2(0, 0x8000_0000);
        }
        return v2(0xFFFF_FFFF, 0x7FFF_FFFF);
    }
    let m = v2(frac.x, frac.y | 0x0010_0000);
    let shift = exp - 1075;
    let mag = if shift >= 0 { u64_shl(m, shift as u32) } else { u64_shr(m, (-shift) as u32) };
    if sign != 0 { u64_neg(mag) } else { mag }
}

/// Go's `math.Round`: to the nearest integer, halves away from zero (the bit manipulation of
/// `src/math/floor.go`); NaN, infinities and integers are returned unchanged.
pub fn f64_round(x: V2) -> V2 {
    let mut bits = x;
    let e = ((x.y >> 20) & 0x7FF) as i32;
    if e < 1023 {
        bits = v2(0, x.y & 0x8000_0000);
        if e == 1022 {
            bits.y |= 0x3FF0_0000;
        }
    } else if e < 1023 + 52 {
        let s = (e - 1023) as u32;
        bits = u64_add(bits, u64_shr(v2(0, 0x0008_0000), s));
        let mask = u64_shr(v2(0xFFFF_FFFF, 0x000F_FFFF), s);
        bits = v2(bits.x & !mask.x, bits.y & !mask.y);
    }
    bits
}

/// `a < b` (false when either is NaN; `-0 == +0`).
pub fn f64_lt(a: V2, b: V2) -> bool {
    if f64_is_nan(a) || f64_is_nan(b) {
        return false;
    }
    let sign_a = f64_sign(a);
    let sign_b = f64_sign(b);
    if sign_a != sign_b {
        let magnitudes = (a.y & 0x7FFF_FFFF) | a.x | (b.y & 0x7FFF_FFFF) | b.x;
        return sign_a != 0 && magnitudes != 0;
    }
    if sign_a == 0 { u64_lt(a, b) } else { u64_lt(b, a) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn same(got: V2, want: f64) -> bool {
        let g = got.to_f64();
        (g.is_nan() && want.is_nan()) || got.to_u64() == want.to_bits()
    }

    fn check2(a: f64, b: f64) -> Result<(), TestCaseError> {
        let (x, y) = (V2::from_f64(a), V2::from_f64(b));
        let show = |op: &str, got: V2, want: f64| {
            format!(
                "{a:e} ({:#x}) {op} {b:e} ({:#x}): got {:#x}, want {:#x}",
                a.to_bits(),
                b.to_bits(),
                got.to_u64(),
                want.to_bits()
            )
        };
        let r = f64_add(x, y);
        prop_assert!(same(r, a + b), "{}", show("+", r, a + b));
        let r = f64_sub(x, y);
        prop_assert!(same(r, a - b), "{}", show("-", r, a - b));
        let r = f64_mul(x, y);
        prop_assert!(same(r, a * b), "{}", show("*", r, a * b));
        let r = f64_div(x, y);
        prop_assert!(same(r, a / b), "{}", show("/", r, a / b));
        prop_assert_eq!(f64_lt(x, y), a < b, "{} < {}", a, b);
        Ok(())
    }

    fn check1(a: f64) -> Result<(), TestCaseError> {
        let x = V2::from_f64(a);
        let r = f64_sqrt(x);
        prop_assert!(same(r, a.sqrt()), "sqrt({a:e} = {:#x}): got {:#x}", a.to_bits(), r.to_u64());
        let r = f64_round(x);
        prop_assert!(same(r, a.round()), "round({a:e}): got {:#x}", r.to_u64());
        prop_assert_eq!(f64_to_i64(x).to_i64(), a as i64, "{} as i64", a);
        prop_assert_eq!(f64_abs(x).to_u64(), a.abs().to_bits());
        Ok(())
    }

    fn check_int(i: i64) -> Result<(), TestCaseError> {
        let r = f64_from_i64(V2::from_i64(i));
        prop_assert_eq!(r.to_u64(), (i as f64).to_bits(), "{} as f64", i);
        let u = i as u64;
        let r = f64_from_u64(V2::from_u64(u));
        prop_assert_eq!(r.to_u64(), (u as f64).to_bits(), "{} as f64", u);
        Ok(())
    }

    /// Values where the arithmetic has its special cases: zeros, the subnormal and normal
    /// boundaries, the largest finite value, infinities, NaNs, powers of two, integers, halves.
    fn special() -> impl Strategy<Value = f64> {
        prop::sample::select(vec![
            0.0,
            -0.0,
            f64::from_bits(1),
            f64::from_bits(0x000F_FFFF_FFFF_FFFF),
            f64::MIN_POSITIVE,
            f64::from_bits(0x0010_0000_0000_0001),
            f64::MAX,
            -f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::from_bits(0x7FF0_0000_0000_0001),
            1.0,
            -1.0,
            0.5,
            1.5,
            2.5,
            -2.5,
            0.49999999999999994,
            4503599627370495.5,
            4503599627370496.0,
            9007199254740993.0,
            9.223372036854775e18,
            -9.223372036854776e18,
            2.0,
            3.0,
            0.1,
            0.3,
            0.68,
            100.0,
            1e308,
            1e-308,
        ])
    }

    /// Any bit pattern, a special value, a "nice" value (small integers and ratios) or a
    /// neighbour of one of those (a few ulps away), so that ties, cancellations and carries
    /// are frequent.
    fn value() -> impl Strategy<Value = f64> {
        let nice = (-2000i64..2000, 1i64..2000).prop_map(|(a, b)| a as f64 / b as f64);
        let base = prop_oneof![
            3 => any::<u64>().prop_map(f64::from_bits),
            2 => special(),
            3 => nice,
            1 => (any::<i32>(), -1100i32..1100).prop_map(|(m, e)| f64::from(m) * 2f64.powi(e)),
        ];
        (base, -3i64..=3).prop_map(|(v, ulps)| {
            if v.is_nan() || ulps == 0 {
                v
            } else {
                f64::from_bits((v.to_bits() as i64).wrapping_add(ulps) as u64)
            }
        })
    }

    #[test]
    fn special_values_combine_exactly_as_native_f64() {
        let vals = [
            0.0,
            -0.0,
            f64::from_bits(1),
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            1.0,
            -1.0,
            0.1,
            3.0,
            1e-310,
            -2.5,
        ];
        for &a in &vals {
            check1(a).unwrap();
            for &b in &vals {
                check2(a, b).unwrap();
            }
        }
    }

    #[test]
    fn the_upstream_truncation_examples_come_out_as_upstream() {
        // BalancedAllocation's std of 0 and 0.68 (see the plugin): 65.99999999999999.
        let f = f64_div(f64_from_u32(68), f64_from_u32(100));
        let std = f64_abs(f64_div(f64_sub(F64_ZERO, f), F64_TWO));
        let score = f64_mul(f64_sub(F64_ONE, std), F64_HUNDRED);
        assert_eq!(f64_to_i64(score).to_i64(), 65);
        // PodTopologySpread's halves round away from zero.
        assert_eq!(f64_round(V2::from_f64(2.5)).to_f64(), 3.0);
        assert_eq!(f64_round(V2::from_f64(-2.5)).to_f64(), -3.0);
        assert_eq!(f64_round(V2::from_f64(0.49999999999999994)).to_f64(), 0.0);
    }

    #[test]
    fn integer_helpers_agree_with_native_integers() {
        let cases: &[(&str, u64, u64)] = &[
            ("small numbers divide", 100, 7),
            ("a large dividend divides by a small divisor", 0xFFFF_FFFF_FFFF_FFF0, 3),
            ("equal numbers give one", 123_456_789_012, 123_456_789_012),
            ("a smaller dividend gives zero", 5, 123_456_789_012),
            ("a divisor above 32 bits", 0x1234_5678_9ABC_DEF0, 0x1_0000_0001),
        ];
        for &(name, a, b) in cases {
            let (q, r) = u64_divmod(V2::from_u64(a), V2::from_u64(b));
            assert_eq!((q.to_u64(), r.to_u64()), (a / b, a % b), "{name}");
        }
        for (a, b) in [(-7i64, 2i64), (7, -2), (-7, -2), (0, 5), (-100_000_000_000, 3)] {
            assert_eq!(i64_div(V2::from_i64(a), V2::from_i64(b)).to_i64(), a / b, "{a} / {b}");
        }
        assert!(i64_lt(V2::from_i64(-1), V2::from_i64(0)));
        assert!(!i64_lt(V2::from_i64(3), V2::from_i64(-3)));
        assert_eq!(u64_mul_u32(V2::from_i64(-3), 100).to_i64(), -300);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 20_000, ..ProptestConfig::default() })]

        #[test]
        fn binary_operations_are_bit_identical_to_native_f64(a in value(), b in value()) {
            check2(a, b)?;
        }

        #[test]
        fn unary_operations_are_bit_identical_to_native_f64(a in value()) {
            check1(a)?;
        }

        #[test]
        fn integer_conversions_are_bit_identical_to_native_f64(
            i in prop_oneof![any::<i64>(), -(1i64 << 54)..(1i64 << 54), Just(i64::MIN), Just(i64::MAX)]
        ) {
            check_int(i)?;
        }

        #[test]
        fn wide_multiplication_and_division_agree_with_native_integers(
            a in any::<u64>(), b in 1u64..(1 << 63), c in any::<u32>()
        ) {
            let (q, r) = u64_divmod(V2::from_u64(a), V2::from_u64(b));
            prop_assert_eq!((q.to_u64(), r.to_u64()), (a / b, a % b));
            let wide = u64::from(c) * u64::from(a as u32);
            prop_assert_eq!(u32_mul_wide(c, a as u32).to_u64(), wide);
            prop_assert_eq!(u64_mul_u32(V2::from_u64(a), c).to_u64(), a.wrapping_mul(u64::from(c)));
            let full = u128::from(a) * u128::from(b);
            let want = (full >> 64) as u64 | u64::from(full as u64 != 0);
            prop_assert_eq!(u64_mul_hi_jam(V2::from_u64(a), V2::from_u64(b)).to_u64(), want);
        }
    }
}
