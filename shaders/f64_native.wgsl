// Native binary64 (wgpu's SHADER_F64 and SHADER_INT64) for the operations of f64.wgsl where the
// device's own result is provably the software library's, bit for bit. Same functions, same
// vec2<u32> bit patterns: the host appends this file after f64.wgsl, whose definitions of these
// functions it renames `soft_<name>` (src/eval/gpu/kernels.rs), so every kernel and the rest of
// the library call the native versions unchanged.
//
// What is native and why it is exact:
// * integer ↔ binary64 conversions of values below 2^53, and truncation of a binary64 below 2^62
//   to an integer: the result is exactly representable, so there is nothing to round;
// * 64-bit integer multiply, divide and remainder: integer arithmetic has one answer;
// * add, subtract and multiply of two zero-or-normal operands: with a zero operand, or a sum
//   that cancels exactly, the result is IEEE-754's identity, written out in bits; otherwise the
//   device computes it and its result is kept when it is a normal number (|r| ≥ 2^-1021,
//   finite), where IEEE-754 defines one correctly rounded result, which a binary64 ALU gives.
//   Everything else (subnormal, infinite or NaN operands; subnormal, infinite or NaN results, or
//   a zero the device made of nonzero operands) is recomputed in software, so flushed
//   subnormals, signed-zero shortcuts and NaN payloads cannot differ. The host runs
//   f64_selftest.wgsl with this file at start-up and uses it only when every result equals the
//   CPU's (src/eval/gpu/mod.rs, src/eval/gpu/selftest.rs).
// * Every native result leaves through f64n_bits, which XORs in f64_fence() (a uniform that is
//   always 0 but that the compiler cannot know): a product is never visible to the next sum as
//   a product, so the driver cannot fuse the two into one FMA with a single rounding.
//
// Division, square root, rounding and comparisons stay in software: a device's native division
// and square root need not be correctly rounded, and the others are a few integer operations.

fn u64n_value(a: vec2<u32>) -> u64 {
    return (u64(a.y) << 32u) | u64(a.x);
}

fn u64n_bits(x: u64) -> vec2<u32> {
    return vec2<u32>(u32(x & 0xFFFFFFFFlu), u32(x >> 32u));
}

fn f64n_value(a: vec2<u32>) -> f64 {
    return bitcast<f64>(u64n_value(a));
}

fn f64n_bits(x: f64) -> vec2<u32> {
    return u64n_bits(bitcast<u64>(x)) ^ vec2<u32>(f64_fence());
}

fn f64n_biased_exp(a: vec2<u32>) -> u32 {
    return (a.y >> 20u) & 0x7FFu;
}

// Zero or a finite normal number.
fn f64n_operand(a: vec2<u32>) -> bool {
    let e = f64n_biased_exp(a);
    return (e != 0u && e != 0x7FFu) || f64n_is_zero(a);
}

// A finite normal number of magnitude at least 2^-1021 (one binade clear of the subnormals).
fn f64n_result(r: vec2<u32>) -> bool {
    let e = f64n_biased_exp(r);
    return e >= 2u && e != 0x7FFu;
}

fn f64n_is_zero(a: vec2<u32>) -> bool {
    return ((a.y & 0x7FFFFFFFu) | a.x) == 0u;
}

// a + b for zero-or-normal operands, or none when the device's sum could differ. Sums with a
// zero operand and exact cancellations are IEEE-754's identities, written out rather than left
// to a device that may not keep the sign of zero.
fn f64n_add(a: vec2<u32>, b: vec2<u32>) -> F64Maybe {
    if f64n_is_zero(b) {
        if f64n_is_zero(a) {
            // -0 only when both are -0 (round to nearest).
            return F64Maybe(true, vec2<u32>(0u, a.y & b.y & 0x80000000u));
        }
        return F64Maybe(true, a);
    }
    if f64n_is_zero(a) {
        return F64Maybe(true, b);
    }
    if a.x == b.x && (a.y ^ b.y) == 0x80000000u {
        return F64Maybe(true, vec2<u32>(0u, 0u));
    }
    let r = f64n_bits(f64n_value(a) + f64n_value(b));
    return F64Maybe(f64n_result(r), r);
}

struct F64Maybe {
    ok: bool,
    value: vec2<u32>,
}

fn f64_add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    if f64n_operand(a) && f64n_operand(b) {
        let r = f64n_add(a, b);
        if r.ok {
            return r.value;
        }
    }
    return soft_f64_add(a, b);
}

// a − b is a + (−b) exactly for zero-or-normal operands, signs of zero included.
fn f64_sub(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    if f64n_operand(a) && f64n_operand(b) {
        let r = f64n_add(a, vec2<u32>(b.x, b.y ^ 0x80000000u));
        if r.ok {
            return r.value;
        }
    }
    return soft_f64_sub(a, b);
}

fn f64_mul(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    if f64n_operand(a) && f64n_operand(b) {
        if f64n_is_zero(a) || f64n_is_zero(b) {
            // A zero operand: a zero whose sign is the operands' signs combined.
            return vec2<u32>(0u, (a.y ^ b.y) & 0x80000000u);
        }
        let r = f64n_bits(f64n_value(a) * f64n_value(b));
        if f64n_result(r) {
            return r;
        }
    }
    return soft_f64_mul(a, b);
}

fn f64_from_u32(a: u32) -> vec2<u32> {
    if a == 0u {
        return vec2<u32>(0u, 0u);
    }
    return f64n_bits(f64(a));
}

fn f64_from_i32(a: i32) -> vec2<u32> {
    if a == 0 {
        return vec2<u32>(0u, 0u);
    }
    return f64n_bits(f64(a));
}

// Exact below 2^53 in magnitude; larger values round, in software.
fn f64_from_i64(a: vec2<u32>) -> vec2<u32> {
    let v = bitcast<i64>(u64n_value(a));
    if v != 0li && v < 9007199254740992li && v > -9007199254740992li {
        return f64n_bits(f64(v));
    }
    return soft_f64_from_i64(a);
}

fn f64_from_u64(a: vec2<u32>) -> vec2<u32> {
    let v = u64n_value(a);
    if v != 0lu && v < 9007199254740992lu {
        return f64n_bits(f64(v));
    }
    return soft_f64_from_u64(a);
}

// Truncation of zero-or-normal values below 2^62 in magnitude; the rest (saturation, NaN) in
// software.
fn f64_to_i64(a: vec2<u32>) -> vec2<u32> {
    if f64n_operand(a) && f64n_biased_exp(a) < 1023u + 62u {
        return u64n_bits(bitcast<u64>(i64(f64n_value(a))));
    }
    return soft_f64_to_i64(a);
}

fn u64_mul_u32(a: vec2<u32>, b: u32) -> vec2<u32> {
    return u64n_bits(u64n_value(a) * u64(b));
}

fn u64_divmod(a: vec2<u32>, b: vec2<u32>) -> U64DivMod {
    let d = u64n_value(b);
    if d == 0lu {
        return soft_u64_divmod(a, b);
    }
    let n = u64n_value(a);
    return U64DivMod(u64n_bits(n / d), u64n_bits(n % d));
}

fn i64_div(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let n = bitcast<i64>(u64n_value(a));
    let d = bitcast<i64>(u64n_value(b));
    if d == 0li || (d == -1li && n == i64(-9223372036854775807li - 1li)) {
        return soft_i64_div(a, b);
    }
    return u64n_bits(bitcast<u64>(n / d));
}
