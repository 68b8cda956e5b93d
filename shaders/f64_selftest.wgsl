// Runs every operation of the binary64 library (f64.wgsl, with f64_native.wgsl's versions in a
// native context) on pairs of inputs, for the device test and the start-up check of native
// binary64 (src/eval/gpu/selftest.rs compares each result with the CPU's f64). Input i is
// (a.x, a.y, b.x, b.y); output 10 i + k is operation k: a + b, a - b, a · b, a / b, √a,
// round(a), a as i64, (a as i64) as f64, (a as u64) as f64, a < b. Rust side:
// eval::gpu::GpuContext::f64_selftest.

@group(0) @binding(0) var<storage, read> f64_inputs: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> f64_outputs: array<vec2<u32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= arrayLength(&f64_inputs) {
        return;
    }
    let a = f64_inputs[i].xy;
    let b = f64_inputs[i].zw;
    let o = 10u * i;
    f64_outputs[o] = f64_add(a, b);
    f64_outputs[o + 1u] = f64_sub(a, b);
    f64_outputs[o + 2u] = f64_mul(a, b);
    f64_outputs[o + 3u] = f64_div(a, b);
    f64_outputs[o + 4u] = f64_sqrt(a);
    f64_outputs[o + 5u] = f64_round(a);
    f64_outputs[o + 6u] = f64_to_i64(a);
    f64_outputs[o + 7u] = f64_from_i64(a);
    f64_outputs[o + 8u] = f64_from_u64(a);
    f64_outputs[o + 9u] = vec2<u32>(select(0u, 1u, f64_lt(a, b)), 0u);
}
