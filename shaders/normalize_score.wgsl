// After feasibility: the normalized score of each plane (TaintToleration: reversed
// DefaultNormalizeScore; NodeAffinity: DefaultNormalizeScore unless PreScore skipped the class;
// NodeResourcesFit: as is), the weighted total of the cell, and the best total of each class.
// Infeasible cells get 0 everywhere. Upstream counterpart (v1.35): RunScorePlugins and
// helper.DefaultNormalizeScore. CPU twin: eval::cpu::normalize_score.

@group(0) @binding(1) var<storage, read> eval_classes: array<EvalClass>;
@group(0) @binding(2) var<storage, read> cell_filter: array<u32>;
@group(0) @binding(3) var<storage, read> raw_taint: array<i32>;
@group(0) @binding(4) var<storage, read> raw_affinity: array<i32>;
@group(0) @binding(5) var<storage, read> raw_fit: array<i32>;
@group(0) @binding(6) var<storage, read> row_max: array<i32>;
@group(0) @binding(7) var<storage, read_write> norm_taint: array<i32>;
@group(0) @binding(8) var<storage, read_write> norm_affinity: array<i32>;
@group(0) @binding(9) var<storage, read_write> norm_fit: array<i32>;
@group(0) @binding(10) var<storage, read_write> total: array<i32>;
@group(0) @binding(11) var<storage, read_write> best_total: array<atomic<i32>>;

fn default_normalize(raw: i32, max_raw: i32, reverse: bool) -> i32 {
    let max_score = i32(MAX_NODE_SCORE);
    if max_raw == 0 {
        if reverse {
            return max_score;
        }
        return raw;
    }
    let v = max_score * raw / max_raw;
    if reverse {
        return max_score - v;
    }
    return v;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let cell = cell_of(gid);
    if !cell.valid {
        return;
    }
    let i = cell.index;
    var tt = 0;
    var na = 0;
    var fit = 0;
    var sum = 0;
    if (cell_filter[i] & CELL_FEASIBLE) != 0u {
        let c = cell.local_class;
        let stride = params.class_stride;
        if (params.score_mask & 1u) != 0u {
            tt = default_normalize(raw_taint[i], row_max[c], true);
            sum += tt * params.weights.x;
        }
        let skip = (eval_classes[cell.cls].flags & EVAL_CLASS_NODE_AFFINITY_SCORE_SKIP) != 0u;
        if (params.score_mask & 2u) != 0u && !skip {
            na = default_normalize(raw_affinity[i], row_max[stride + c], false);
            sum += na * params.weights.y;
        }
        if (params.score_mask & 4u) != 0u {
            fit = raw_fit[i];
            sum += fit * params.weights.z;
        }
        atomicMax(&best_total[c], sum);
    }
    norm_taint[i] = tt;
    norm_affinity[i] = na;
    norm_fit[i] = fit;
    total[i] = sum;
}
