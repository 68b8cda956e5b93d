// Software IEEE-754 binary64 on vec2<u32> (x = low 32 bits, y = high 32 bits of the bit
// pattern), and 64-bit integers in the same form (two's complement when signed). Every operation
// is correctly rounded (to nearest, ties to even) and gives exactly the bits of a native f64
// operation, for every input: zeros, subnormals, infinities and NaNs included.
//
// Rust twin, line for line: src/eval/softf64.rs (its property tests compare it with native f64;
// tests/all/gpu_parity.rs runs this file on the device against the same reference). Algorithms:
// Berkeley SoftFloat 3 for add, sub, mul and rounding; restoring division (63 quotient bits) and
// digit-by-digit square root (55 root bits), each with a sticky bit; Go's math.Round.
//
// A library, not a kernel: prepended to the kernels that need it (src/eval/gpu/kernels.rs).

// ---------------------------------------------------------------------------------------------
// 64-bit integers as two u32 words.

fn u64_is_zero(a: vec2<u32>) -> bool {
    return (a.x | a.y) == 0u;
}

fn u64_add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.x + b.x;
    let carry = select(0u, 1u, lo < a.x);
    return vec2<u32>(lo, a.y + b.y + carry);
}

fn u64_sub(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.x - b.x;
    let borrow = select(0u, 1u, a.x < b.x);
    return vec2<u32>(lo, a.y - b.y - borrow);
}

fn u64_neg(a: vec2<u32>) -> vec2<u32> {
    return u64_sub(vec2<u32>(0u, 0u), a);
}

fn u64_lt(a: vec2<u32>, b: vec2<u32>) -> bool {
    return a.y < b.y || (a.y == b.y && a.x < b.x);
}

// a << n for n < 64.
fn u64_shl(a: vec2<u32>, n: u32) -> vec2<u32> {
    if n == 0u {
        return a;
    }
    if n >= 32u {
        return vec2<u32>(0u, a.x << (n - 32u));
    }
    return vec2<u32>(a.x << n, (a.y << n) | (a.x >> (32u - n)));
}

// a >> n (logical) for n < 64.
fn u64_shr(a: vec2<u32>, n: u32) -> vec2<u32> {
    if n == 0u {
        return a;
    }
    if n >= 32u {
        return vec2<u32>(a.y >> (n - 32u), 0u);
    }
    return vec2<u32>((a.x >> n) | (a.y << (32u - n)), a.y >> n);
}

// softfloat_shiftRightJam64: a >> n, shifted-out bits ORed into bit 0 (any n).
fn u64_shr_jam(a: vec2<u32>, n: u32) -> vec2<u32> {
    if n >= 63u {
        return vec2<u32>(select(0u, 1u, !u64_is_zero(a)), 0u);
    }
    let r = u64_shr(a, n);
    let back = u64_shl(r, n);
    let lost = back.x != a.x || back.y != a.y;
    return vec2<u32>(r.x | select(0u, 1u, lost), r.y);
}

fn u64_clz(a: vec2<u32>) -> u32 {
    if a.y != 0u {
        return countLeadingZeros(a.y);
    }
    return 32u + countLeadingZeros(a.x);
}

// The full 64-bit product of two u32s.
fn u32_mul_wide(a: u32, b: u32) -> vec2<u32> {
    let a0 = a & 0xFFFFu;
    let a1 = a >> 16u;
    let b0 = b & 0xFFFFu;
    let b1 = b >> 16u;
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    let mid = p01 + p10;
    let mid_carry = select(0u, 1u, mid < p01);
    let lo = p00 + (mid << 16u);
    let lo_carry = select(0u, 1u, lo < p00);
    let hi = p11 + (mid >> 16u) + (mid_carry << 16u) + lo_carry;
    return vec2<u32>(lo, hi);
}

// The high 64 bits of a · b, bit 0 set when the low 64 bits are not all zero.
fn u64_mul_hi_jam(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let z0 = u32_mul_wide(a.x, b.x);
    let m1 = u32_mul_wide(a.y, b.x);
    let m2 = u32_mul_wide(a.x, b.y);
    let z3 = u32_mul_wide(a.y, b.y);
    let mid = u64_add(m1, m2);
    let mid_carry = select(0u, 1u, u64_lt(mid, m1));
    let lo = u64_add(z0, vec2<u32>(0u, mid.x));
    let lo_carry = select(0u, 1u, u64_lt(lo, z0));
    var hi = u64_add(z3, vec2<u32>(mid.y, mid_carry));
    hi = u64_add(hi, vec2<u32>(lo_carry, 0u));
    return vec2<u32>(hi.x | select(0u, 1u, !u64_is_zero(lo)), hi.y);
}

// a · b modulo 2^64 (also two's complement i64 · u32).
fn u64_mul_u32(a: vec2<u32>, b: u32) -> vec2<u32> {
    let lo = u32_mul_wide(a.x, b);
    return vec2<u32>(lo.x, lo.y + a.y * b);
}

struct U64DivMod {
    q: vec2<u32>,
    r: vec2<u32>,
}

// (a / b, a % b), unsigned, for 0 < b < 2^63.
fn u64_divmod(a: vec2<u32>, b: vec2<u32>) -> U64DivMod {
    var q = vec2<u32>(0u, 0u);
    var r = vec2<u32>(0u, 0u);
    for (var i = 0u; i < 64u; i++) {
        let bit = 63u - i;
        var word = a.x >> bit;
        if bit >= 32u {
            word = a.y >> (bit - 32u);
        }
        r = u64_shl(r, 1u);
        r.x |= word & 1u;
        q = u64_shl(q, 1u);
        if !u64_lt(r, b) {
            r = u64_sub(r, b);
            q.x |= 1u;
        }
    }
    return U64DivMod(q, r);
}

fn i64_from_i32(a: i32) -> vec2<u32> {
    return vec2<u32>(u32(a), select(0u, 0xFFFFFFFFu, a < 0));
}

fn i64_lt(a: vec2<u32>, b: vec2<u32>) -> bool {
    return u64_lt(vec2<u32>(a.x, a.y ^ 0x80000000u), vec2<u32>(b.x, b.y ^ 0x80000000u));
}

fn i64_is_negative(a: vec2<u32>) -> bool {
    return (a.y >> 31u) != 0u;
}

// a / b truncated toward zero, b != 0, |a|, |b| < 2^63.
fn i64_div(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let na = i64_is_negative(a);
    let nb = i64_is_negative(b);
    var ua = a;
    if na {
        ua = u64_neg(a);
    }
    var ub = b;
    if nb {
        ub = u64_neg(b);
    }
    let q = u64_divmod(ua, ub).q;
    if na != nb {
        return u64_neg(q);
    }
    return q;
}

// ---------------------------------------------------------------------------------------------
// binary64.

const F64_ZERO: vec2<u32> = vec2<u32>(0u, 0u);
const F64_ONE: vec2<u32> = vec2<u32>(0u, 0x3FF00000u);
const F64_HALF: vec2<u32> = vec2<u32>(0u, 0x3FE00000u);
const F64_TWO: vec2<u32> = vec2<u32>(0u, 0x40000000u);
const F64_HUNDRED: vec2<u32> = vec2<u32>(0u, 0x40590000u);
const F64_DEFAULT_NAN: vec2<u32> = vec2<u32>(0u, 0xFFF80000u);

fn f64_sign(a: vec2<u32>) -> u32 {
    return a.y >> 31u;
}

fn f64_exp(a: vec2<u32>) -> i32 {
    return i32((a.y >> 20u) & 0x7FFu);
}

fn f64_frac(a: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(a.x, a.y & 0x000FFFFFu);
}

// packToF64UI: (sign << 63) + (exp << 52) + sig.
fn f64_pack(sign: u32, exp: i32, sig: vec2<u32>) -> vec2<u32> {
    return u64_add(vec2<u32>(0u, (sign << 31u) + (u32(exp) << 20u)), sig);
}

fn f64_is_nan(a: vec2<u32>) -> bool {
    return f64_exp(a) == 0x7FF && !u64_is_zero(f64_frac(a));
}

fn f64_propagate_nan(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    var n = b;
    if f64_is_nan(a) {
        n = a;
    }
    return vec2<u32>(n.x, n.y | 0x00080000u);
}

fn f64_neg(a: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(a.x, a.y ^ 0x80000000u);
}

fn f64_abs(a: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(a.x, a.y & 0x7FFFFFFFu);
}

struct F64Norm {
    exp: i32,
    sig: vec2<u32>,
}

// softfloat_normSubnormalF64Sig.
fn f64_norm_subnormal(sig: vec2<u32>) -> F64Norm {
    let shift = i32(u64_clz(sig)) - 11;
    return F64Norm(1 - shift, u64_shl(sig, u32(shift)));
}

// softfloat_roundPackToF64: leading bit of sig at bit 62, exp = biased exponent - 1.
fn f64_round_pack(sign: u32, exp_in: i32, sig_in: vec2<u32>) -> vec2<u32> {
    var exp = exp_in;
    var sig = sig_in;
    var round_bits = sig.x & 0x3FFu;
    if u32(exp) >= 0x7FDu {
        if exp < 0 {
            sig = u64_shr_jam(sig, u32(-exp));
            exp = 0;
            round_bits = sig.x & 0x3FFu;
        } else if exp > 0x7FD
            || !u64_lt(u64_add(sig, vec2<u32>(0x200u, 0u)), vec2<u32>(0u, 0x80000000u)) {
            return vec2<u32>(0u, (sign << 31u) | 0x7FF00000u);
        }
    }
    sig = u64_shr(u64_add(sig, vec2<u32>(0x200u, 0u)), 10u);
    if round_bits == 0x200u {
        sig.x &= ~1u;
    }
    if u64_is_zero(sig) {
        exp = 0;
    }
    return f64_pack(sign, exp, sig);
}

// softfloat_normRoundPackToF64.
fn f64_norm_round_pack(sign: u32, exp: i32, sig: vec2<u32>) -> vec2<u32> {
    let shift = i32(u64_clz(sig)) - 1;
    let e = exp - shift;
    if shift >= 10 && u32(e) < 0x7FDu {
        var ee = e;
        if u64_is_zero(sig) {
            ee = 0;
        }
        return f64_pack(sign, ee, u64_shl(sig, u32(shift - 10)));
    }
    return f64_round_pack(sign, e, u64_shl(sig, u32(shift)));
}

// softfloat_addMagsF64.
fn f64_add_mags(a: vec2<u32>, b: vec2<u32>, sign_z: u32) -> vec2<u32> {
    let exp_a = f64_exp(a);
    var sig_a = f64_frac(a);
    let exp_b = f64_exp(b);
    var sig_b = f64_frac(b);
    let exp_diff = exp_a - exp_b;
    var exp_z: i32;
    var sig_z: vec2<u32>;
    if exp_diff == 0 {
        if exp_a == 0 {
            return u64_add(a, sig_b);
        }
        if exp_a == 0x7FF {
            if !u64_is_zero(vec2<u32>(sig_a.x | sig_b.x, sig_a.y | sig_b.y)) {
                return f64_propagate_nan(a, b);
            }
            return a;
        }
        exp_z = exp_a;
        sig_z = u64_shl(u64_add(u64_add(vec2<u32>(0u, 0x00200000u), sig_a), sig_b), 9u);
    } else {
        sig_a = u64_shl(sig_a, 9u);
        sig_b = u64_shl(sig_b, 9u);
        if exp_diff < 0 {
            if exp_b == 0x7FF {
                if !u64_is_zero(sig_b) {
                    return f64_propagate_nan(a, b);
                }
                return f64_pack(sign_z, 0x7FF, vec2<u32>(0u, 0u));
            }
            exp_z = exp_b;
            if exp_a != 0 {
                sig_a = u64_add(sig_a, vec2<u32>(0u, 0x20000000u));
            } else {
                sig_a = u64_shl(sig_a, 1u);
            }
            sig_a = u64_shr_jam(sig_a, u32(-exp_diff));
        } else {
            if exp_a == 0x7FF {
                if !u64_is_zero(sig_a) {
                    return f64_propagate_nan(a, b);
                }
                return a;
            }
            exp_z = exp_a;
            if exp_b != 0 {
                sig_b = u64_add(sig_b, vec2<u32>(0u, 0x20000000u));
            } else {
                sig_b = u64_shl(sig_b, 1u);
            }
            sig_b = u64_shr_jam(sig_b, u32(exp_diff));
        }
        sig_z = u64_add(u64_add(vec2<u32>(0u, 0x20000000u), sig_a), sig_b);
        if u64_lt(sig_z, vec2<u32>(0u, 0x40000000u)) {
            exp_z -= 1;
            sig_z = u64_shl(sig_z, 1u);
        }
    }
    return f64_round_pack(sign_z, exp_z, sig_z);
}

// softfloat_subMagsF64.
fn f64_sub_mags(a: vec2<u32>, b: vec2<u32>, sign_in: u32) -> vec2<u32> {
    var sign_z = sign_in;
    var exp_a = f64_exp(a);
    var sig_a = f64_frac(a);
    let exp_b = f64_exp(b);
    var sig_b = f64_frac(b);
    let exp_diff = exp_a - exp_b;
    if exp_diff == 0 {
        if exp_a == 0x7FF {
            if !u64_is_zero(vec2<u32>(sig_a.x | sig_b.x, sig_a.y | sig_b.y)) {
                return f64_propagate_nan(a, b);
            }
            return F64_DEFAULT_NAN;
        }
        var sig_diff = u64_sub(sig_a, sig_b);
        if u64_is_zero(sig_diff) {
            return vec2<u32>(0u, 0u);
        }
        if exp_a != 0 {
            exp_a -= 1;
        }
        if i64_is_negative(sig_diff) {
            sign_z ^= 1u;
            sig_diff = u64_neg(sig_diff);
        }
        var shift = i32(u64_clz(sig_diff)) - 11;
        var exp_z = exp_a - shift;
        if exp_z < 0 {
            shift = exp_a;
            exp_z = 0;
        }
        return f64_pack(sign_z, exp_z, u64_shl(sig_diff, u32(shift)));
    }
    sig_a = u64_shl(sig_a, 10u);
    sig_b = u64_shl(sig_b, 10u);
    var exp_z: i32;
    var sig_z: vec2<u32>;
    if exp_diff < 0 {
        sign_z ^= 1u;
        if exp_b == 0x7FF {
            if !u64_is_zero(sig_b) {
                return f64_propagate_nan(a, b);
            }
            return f64_pack(sign_z, 0x7FF, vec2<u32>(0u, 0u));
        }
        if exp_a != 0 {
            sig_a = u64_add(sig_a, vec2<u32>(0u, 0x40000000u));
        } else {
            sig_a = u64_add(sig_a, sig_a);
        }
        sig_a = u64_shr_jam(sig_a, u32(-exp_diff));
        sig_b = vec2<u32>(sig_b.x, sig_b.y | 0x40000000u);
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
            sig_b = u64_add(sig_b, vec2<u32>(0u, 0x40000000u));
        } else {
            sig_b = u64_add(sig_b, sig_b);
        }
        sig_b = u64_shr_jam(sig_b, u32(exp_diff));
        sig_a = vec2<u32>(sig_a.x, sig_a.y | 0x40000000u);
        exp_z = exp_a;
        sig_z = u64_sub(sig_a, sig_b);
    }
    return f64_norm_round_pack(sign_z, exp_z - 1, sig_z);
}

fn f64_add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let sign_a = f64_sign(a);
    if sign_a == f64_sign(b) {
        return f64_add_mags(a, b, sign_a);
    }
    return f64_sub_mags(a, b, sign_a);
}

fn f64_sub(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let sign_a = f64_sign(a);
    if sign_a == f64_sign(b) {
        return f64_sub_mags(a, b, sign_a);
    }
    return f64_add_mags(a, b, sign_a);
}

// f64_mul.
fn f64_mul(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let sign_z = f64_sign(a) ^ f64_sign(b);
    var exp_a = f64_exp(a);
    var sig_a = f64_frac(a);
    var exp_b = f64_exp(b);
    var sig_b = f64_frac(b);
    if exp_a == 0x7FF {
        if !u64_is_zero(sig_a) || (exp_b == 0x7FF && !u64_is_zero(sig_b)) {
            return f64_propagate_nan(a, b);
        }
        if exp_b == 0 && u64_is_zero(sig_b) {
            return F64_DEFAULT_NAN;
        }
        return f64_pack(sign_z, 0x7FF, vec2<u32>(0u, 0u));
    }
    if exp_b == 0x7FF {
        if !u64_is_zero(sig_b) {
            return f64_propagate_nan(a, b);
        }
        if exp_a == 0 && u64_is_zero(sig_a) {
            return F64_DEFAULT_NAN;
        }
        return f64_pack(sign_z, 0x7FF, vec2<u32>(0u, 0u));
    }
    if exp_a == 0 {
        if u64_is_zero(sig_a) {
            return f64_pack(sign_z, 0, vec2<u32>(0u, 0u));
        }
        let n = f64_norm_subnormal(sig_a);
        exp_a = n.exp;
        sig_a = n.sig;
    }
    if exp_b == 0 {
        if u64_is_zero(sig_b) {
            return f64_pack(sign_z, 0, vec2<u32>(0u, 0u));
        }
        let n = f64_norm_subnormal(sig_b);
        exp_b = n.exp;
        sig_b = n.sig;
    }
    var exp_z = exp_a + exp_b - 0x3FF;
    sig_a = u64_shl(vec2<u32>(sig_a.x, sig_a.y | 0x00100000u), 10u);
    sig_b = u64_shl(vec2<u32>(sig_b.x, sig_b.y | 0x00100000u), 11u);
    var sig_z = u64_mul_hi_jam(sig_a, sig_b);
    if u64_lt(sig_z, vec2<u32>(0u, 0x40000000u)) {
        exp_z -= 1;
        sig_z = u64_shl(sig_z, 1u);
    }
    return f64_round_pack(sign_z, exp_z, sig_z);
}

// a / b: 63 quotient bits by restoring division, plus a sticky bit.
fn f64_div(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let sign_z = f64_sign(a) ^ f64_sign(b);
    var exp_a = f64_exp(a);
    var sig_a = f64_frac(a);
    var exp_b = f64_exp(b);
    var sig_b = f64_frac(b);
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
        return f64_pack(sign_z, 0x7FF, vec2<u32>(0u, 0u));
    }
    if exp_b == 0x7FF {
        if !u64_is_zero(sig_b) {
            return f64_propagate_nan(a, b);
        }
        return f64_pack(sign_z, 0, vec2<u32>(0u, 0u));
    }
    if exp_b == 0 {
        if u64_is_zero(sig_b) {
            if exp_a == 0 && u64_is_zero(sig_a) {
                return F64_DEFAULT_NAN;
            }
            return f64_pack(sign_z, 0x7FF, vec2<u32>(0u, 0u));
        }
        let n = f64_norm_subnormal(sig_b);
        exp_b = n.exp;
        sig_b = n.sig;
    }
    if exp_a == 0 {
        if u64_is_zero(sig_a) {
            return f64_pack(sign_z, 0, vec2<u32>(0u, 0u));
        }
        let n = f64_norm_subnormal(sig_a);
        exp_a = n.exp;
        sig_a = n.sig;
    }
    var exp_z = exp_a - exp_b + 0x3FE;
    sig_a = vec2<u32>(sig_a.x, sig_a.y | 0x00100000u);
    sig_b = vec2<u32>(sig_b.x, sig_b.y | 0x00100000u);
    if u64_lt(sig_a, sig_b) {
        exp_z -= 1;
        sig_a = u64_shl(sig_a, 1u);
    }
    var rem = sig_a;
    var q = vec2<u32>(0u, 0u);
    for (var i = 0u; i < 63u; i++) {
        q = u64_shl(q, 1u);
        if !u64_lt(rem, sig_b) {
            rem = u64_sub(rem, sig_b);
            q.x |= 1u;
        }
        rem = u64_shl(rem, 1u);
    }
    q.x |= select(0u, 1u, !u64_is_zero(rem));
    return f64_round_pack(sign_z, exp_z, q);
}

// √a: 55 root bits, digit by digit, plus a sticky bit.
fn f64_sqrt(a: vec2<u32>) -> vec2<u32> {
    let sign = f64_sign(a);
    var exp = f64_exp(a);
    var sig = f64_frac(a);
    if exp == 0x7FF {
        if !u64_is_zero(sig) {
            return f64_propagate_nan(a, a);
        }
        if sign == 0u {
            return a;
        }
        return F64_DEFAULT_NAN;
    }
    if sign != 0u {
        if exp == 0 && u64_is_zero(sig) {
            return a;
        }
        return F64_DEFAULT_NAN;
    }
    if exp == 0 {
        if u64_is_zero(sig) {
            return a;
        }
        let n = f64_norm_subnormal(sig);
        exp = n.exp;
        sig = n.sig;
    }
    var m = vec2<u32>(sig.x, sig.y | 0x00100000u);
    var d = exp - 1075;
    if (d & 1) != 0 {
        m = u64_shl(m, 1u);
        d -= 1;
    }
    var rem = vec2<u32>(0u, 0u);
    var root = vec2<u32>(0u, 0u);
    for (var i = 0u; i < 55u; i++) {
        var bits = 0u;
        if i <= 26u {
            bits = u64_shr(m, 52u - 2u * i).x & 3u;
        }
        rem = u64_shl(rem, 2u);
        rem.x |= bits;
        var trial = u64_shl(root, 2u);
        trial.x |= 1u;
        root = u64_shl(root, 1u);
        if !u64_lt(rem, trial) {
            rem = u64_sub(rem, trial);
            root.x |= 1u;
        }
    }
    var sig_z = u64_shl(root, 8u);
    sig_z.x |= select(0u, 1u, !u64_is_zero(rem));
    return f64_round_pack(0u, 1048 + d / 2, sig_z);
}

// i64_to_f64.
fn f64_from_i64(a: vec2<u32>) -> vec2<u32> {
    let sign = a.y >> 31u;
    if (a.x | (a.y & 0x7FFFFFFFu)) == 0u {
        if sign != 0u {
            return vec2<u32>(0u, 0xC3E00000u);
        }
        return vec2<u32>(0u, 0u);
    }
    var abs = a;
    if sign != 0u {
        abs = u64_neg(a);
    }
    return f64_norm_round_pack(sign, 0x43C, abs);
}

// ui64_to_f64.
fn f64_from_u64(a: vec2<u32>) -> vec2<u32> {
    if u64_is_zero(a) {
        return vec2<u32>(0u, 0u);
    }
    if (a.y & 0x80000000u) != 0u {
        let half = u64_shr(a, 1u);
        return f64_round_pack(0u, 0x43D, vec2<u32>(half.x | (a.x & 1u), half.y));
    }
    return f64_norm_round_pack(0u, 0x43C, a);
}

fn f64_from_i32(a: i32) -> vec2<u32> {
    return f64_from_i64(i64_from_i32(a));
}

fn f64_from_u32(a: u32) -> vec2<u32> {
    return f64_from_u64(vec2<u32>(a, 0u));
}

// Truncation toward zero, saturating at the i64 range, NaN gives 0 (Rust's `as i64`).
fn f64_to_i64(a: vec2<u32>) -> vec2<u32> {
    let sign = f64_sign(a);
    let exp = f64_exp(a);
    let frac = f64_frac(a);
    if exp == 0x7FF && !u64_is_zero(frac) {
        return vec2<u32>(0u, 0u);
    }
    if exp < 1023 {
        return vec2<u32>(0u, 0u);
    }
    if exp >= 1023 + 63 {
        if sign != 0u {
            return vec2<u32>(0u, 0x80000000u);
        }
        return vec2<u32>(0xFFFFFFFFu, 0x7FFFFFFFu);
    }
    let m = vec2<u32>(frac.x, frac.y | 0x00100000u);
    let shift = exp - 1075;
    var mag: vec2<u32>;
    if shift >= 0 {
        mag = u64_shl(m, u32(shift));
    } else {
        mag = u64_shr(m, u32(-shift));
    }
    if sign != 0u {
        return u64_neg(mag);
    }
    return mag;
}

// Go's math.Round: halves away from zero.
fn f64_round(x: vec2<u32>) -> vec2<u32> {
    var bits = x;
    let e = i32((x.y >> 20u) & 0x7FFu);
    if e < 1023 {
        bits = vec2<u32>(0u, x.y & 0x80000000u);
        if e == 1022 {
            bits.y |= 0x3FF00000u;
        }
    } else if e < 1023 + 52 {
        let s = u32(e - 1023);
        bits = u64_add(bits, u64_shr(vec2<u32>(0u, 0x00080000u), s));
        let mask = u64_shr(vec2<u32>(0xFFFFFFFFu, 0x000FFFFFu), s);
        bits = vec2<u32>(bits.x & ~mask.x, bits.y & ~mask.y);
    }
    return bits;
}

// a < b (false when either is NaN; -0 == +0).
fn f64_lt(a: vec2<u32>, b: vec2<u32>) -> bool {
    if f64_is_nan(a) || f64_is_nan(b) {
        return false;
    }
    let sign_a = f64_sign(a);
    let sign_b = f64_sign(b);
    if sign_a != sign_b {
        let magnitudes = (a.y & 0x7FFFFFFFu) | a.x | (b.y & 0x7FFFFFFFu) | b.x;
        return sign_a != 0u && magnitudes != 0u;
    }
    if sign_a == 0u {
        return u64_lt(a, b);
    }
    return u64_lt(b, a);
}
