// NodeResourcesBalancedAllocation raw score (upstream v1.35
// plugins/noderesources/balanced_allocation.go balancedResourceScorer, with
// resource_allocation.go's useRequested = true), in binary64 (f64.wgsl) with upstream's order of
// operations: per scored resource with allocatable > 0 (a scalar resource the class does not
// request is left out) the fraction min(requested / allocatable, 1); with two fractions the
// deviation is |(f0 - f1) / 2|, with more sqrt(Σ (f - mean)·(f - mean) / n), else 0; the score is
// trunc((1 - deviation) · 100). Amounts are in encoded units: their ratio, hence every fraction, is
// exact where the units are. The second pass recomputes the fractions (no arrays).
// CPU twin: eval::cpu::balanced_allocation.

@group(0) @binding(1) var<storage, read> node_allocatable: array<u32>;
@group(0) @binding(2) var<storage, read> node_requested: array<u32>;
@group(0) @binding(3) var<storage, read> class_requests: array<u32>;
@group(0) @binding(4) var<storage, read> balanced_specs: array<EvalFitSpec>;
@group(0) @binding(5) var<storage, read_write> raw: array<i32>;

struct Fraction {
    counted: bool,
    value: vec2<u32>,
}

// The fraction of scored resource k, or counted = false when it takes no part.
fn fraction(k: u32, nrow: u32, crow: u32) -> Fraction {
    var out = Fraction(false, F64_ZERO);
    let spec = balanced_specs[k];
    if spec.column == NONE {
        return out;
    }
    let j = spec.column;
    var pod = class_requests[crow + j];
    if spec.kind == FIT_KIND_OTHER {
        pod = 0u;
    }
    if spec.kind == FIT_KIND_SCALAR && pod == 0u {
        return out;
    }
    let capacity = node_allocatable[nrow + j];
    if capacity == 0u {
        return out;
    }
    var f = f64_div(f64_from_u32(node_requested[nrow + j] + pod), f64_from_u32(capacity));
    if f64_lt(F64_ONE, f) {
        f = F64_ONE;
    }
    out.counted = true;
    out.value = f;
    return out;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let cell = cell_of(gid);
    if !cell.valid {
        return;
    }
    let nrow = cell.node * params.num_resources;
    let crow = cell.cls * params.num_resources;
    var count = 0u;
    var total = F64_ZERO;
    var first = F64_ZERO;
    var second = F64_ZERO;
    for (var k = 0u; k < params.num_balanced_specs; k++) {
        let f = fraction(k, nrow, crow);
        if !f.counted {
            continue;
        }
        total = f64_add(total, f.value);
        if count == 0u {
            first = f.value;
        } else if count == 1u {
            second = f.value;
        }
        count += 1u;
    }
    var deviation = F64_ZERO;
    if count == 2u {
        // x · 0.5 is x / 2 exactly: both are the one correctly rounded value of the same real.
        deviation = f64_abs(f64_mul(f64_sub(first, second), F64_HALF));
    } else if count > 2u {
        let mean = f64_div(total, f64_from_u32(count));
        var sum = F64_ZERO;
        for (var k = 0u; k < params.num_balanced_specs; k++) {
            let f = fraction(k, nrow, crow);
            if !f.counted {
                continue;
            }
            let d = f64_sub(f.value, mean);
            sum = f64_add(sum, f64_mul(d, d));
        }
        deviation = f64_sqrt(f64_div(sum, f64_from_u32(count)));
    }
    let score = f64_to_i64(f64_mul(f64_sub(F64_ONE, deviation), F64_HUNDRED));
    raw[plane_cell(PLANE_BALANCED_ALLOCATION, cell.index)] = i32(score.x);
}
