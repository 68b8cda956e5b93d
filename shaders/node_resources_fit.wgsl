// NodeResourcesFit filter and raw score (upstream v1.35 plugins/noderesources/fit.go
// fitsRequest, resource_allocation.go, least_allocated.go, most_allocated.go,
// requested_to_capacity_ratio.go), in encoded units (encode::units: every amount ≤ AMOUNT_MAX,
// so amount × 100 fits u32):
// - filter: "Too many pods" (the pods column), then every checked column whose request exceeds
//   allocatable − requested; FIT_UNRESOLVABLE when a request exceeds allocatable outright;
// - raw score: the profile's strategy over its scored resources.
// CPU twin: eval::cpu::node_resources_fit.

@group(0) @binding(1) var<storage, read> eval_classes: array<EvalClass>;
@group(0) @binding(2) var<storage, read> node_allocatable: array<u32>;
@group(0) @binding(3) var<storage, read> node_requested: array<u32>;
@group(0) @binding(4) var<storage, read> node_nonzero_requested: array<u32>;
@group(0) @binding(5) var<storage, read> class_requests: array<u32>;
@group(0) @binding(6) var<storage, read> class_nonzero_requests: array<u32>;
@group(0) @binding(7) var<storage, read> fit_columns: array<u32>;
@group(0) @binding(8) var<storage, read> fit_specs: array<EvalFitSpec>;
@group(0) @binding(9) var<storage, read> shape: array<EvalShapePoint>;
@group(0) @binding(10) var<storage, read_write> cell_filter: array<u32>;
@group(0) @binding(11) var<storage, read_write> fit_insufficient: array<u32>;
@group(0) @binding(12) var<storage, read_write> raw: array<i32>;

// RequestedToCapacityRatio's piecewise-linear function (BuildBrokenLinearFunction).
fn broken_linear(u: i32) -> i32 {
    var has_prev = false;
    var prev_u = 0;
    var prev_s = 0;
    for (var k = 0u; k < params.num_shape; k++) {
        let p = shape[k];
        if u <= p.utilization {
            if !has_prev {
                return p.score;
            }
            return prev_s + (p.score - prev_s) * (u - prev_u) / (p.utilization - prev_u);
        }
        has_prev = true;
        prev_u = p.utilization;
        prev_s = p.score;
    }
    if params.num_shape == 0u {
        return 0;
    }
    return shape[params.num_shape - 1u].score;
}

// One resource's score; capacity > 0.
fn resource_score(requested: u32, capacity: u32) -> i32 {
    if params.fit_strategy == STRATEGY_LEAST_ALLOCATED {
        if requested > capacity {
            return 0;
        }
        return i32((capacity - requested) * MAX_NODE_SCORE / capacity);
    }
    if params.fit_strategy == STRATEGY_MOST_ALLOCATED {
        return i32(min(requested, capacity) * MAX_NODE_SCORE / capacity);
    }
    var utilization = MAX_NODE_SCORE;
    if requested <= capacity {
        utilization = requested * MAX_NODE_SCORE / capacity;
    }
    return broken_linear(i32(utilization));
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let cell = cell_of(gid);
    if !cell.valid {
        return;
    }
    let r = params.num_resources;
    let nrow = cell.node * r;
    let crow = cell.cls * r;

    var word = 0u;
    if node_requested[nrow + RESOURCE_PODS] + 1u > node_allocatable[nrow + RESOURCE_PODS] {
        word |= 1u << RESOURCE_PODS;
    }
    if (eval_classes[cell.cls].flags & EVAL_CLASS_FIT_REQUESTS_NOTHING) == 0u {
        for (var j = 0u; j < r; j++) {
            let want = class_requests[crow + j];
            if (fit_columns[j] & FIT_COLUMN_CHECKED) == 0u || want == 0u {
                continue;
            }
            let alloc = node_allocatable[nrow + j];
            if node_requested[nrow + j] + want > alloc {
                word |= 1u << j;
                if want > alloc {
                    word |= FIT_UNRESOLVABLE;
                }
            }
        }
    }
    if word != 0u {
        cell_filter[cell.index] |= CHECK_NODE_RESOURCES_FIT;
    }
    fit_insufficient[cell.index] = word;

    var node_score = 0i;
    var weight_sum = 0i;
    for (var k = 0u; k < params.num_fit_specs; k++) {
        let spec = fit_specs[k];
        if spec.column == NONE {
            continue;
        }
        let j = spec.column;
        var pod = class_requests[crow + j];
        var used = node_requested[nrow + j];
        if spec.kind == FIT_KIND_NON_ZERO {
            pod = class_nonzero_requests[crow + j];
            used = node_nonzero_requested[nrow + j];
        } else if spec.kind == FIT_KIND_OTHER {
            pod = 0u;
        }
        if spec.kind == FIT_KIND_SCALAR && pod == 0u {
            continue;
        }
        let capacity = node_allocatable[nrow + j];
        if capacity == 0u {
            continue;
        }
        let s = resource_score(used + pod, capacity);
        // RequestedToCapacityRatio leaves resources scoring 0 out of the weighted mean.
        if params.fit_strategy != STRATEGY_REQUESTED_TO_CAPACITY_RATIO || s > 0 {
            node_score += s * spec.weight;
            weight_sum += spec.weight;
        }
    }
    var score = 0;
    if weight_sum != 0 {
        if params.fit_strategy != STRATEGY_REQUESTED_TO_CAPACITY_RATIO {
            score = node_score / weight_sum;
        } else {
            // round(node_score / weight_sum), half away from zero, for non-negative integers.
            score = (2 * node_score + weight_sum) / (2 * weight_sum);
        }
    }
    raw[plane_cell(PLANE_NODE_RESOURCES_FIT, cell.index)] = score;
}
