// After feasibility: the normalized score of each plane (TaintToleration: reversed
// DefaultNormalizeScore; NodeAffinity: DefaultNormalizeScore; PodTopologySpread: its reversed
// min/max normalization; InterPodAffinity: its min/max normalization in binary64; NodeResourcesFit, NodeResourcesBalancedAllocation, ImageLocality: as
// they are), the weighted total of the cell, and the best
// total of each class. Infeasible cells, planes the profile does not score and planes whose
// PreScore skipped the class get 0. Upstream counterpart (v1.35): RunScorePlugins and the
// plugins' NormalizeScore. CPU twin: eval::cpu::normalize_score.

@group(0) @binding(1) var<storage, read> eval_classes: array<EvalClass>;
@group(0) @binding(2) var<storage, read> cell_filter: array<u32>;
@group(0) @binding(3) var<storage, read_write> raw: array<i32>;
@group(0) @binding(4) var<storage, read> row_max: array<i32>;
@group(0) @binding(5) var<storage, read> row_min: array<i32>;
@group(0) @binding(6) var<storage, read_write> norm: array<i32>;
@group(0) @binding(7) var<storage, read_write> total: array<i32>;
@group(0) @binding(8) var<storage, read_write> best_total: array<atomic<i32>>;

fn default_normalize(raw_score: i32, max_raw: i32, reverse: bool) -> i32 {
    let max_score = i32(MAX_NODE_SCORE);
    if max_raw == 0 {
        if reverse {
            return max_score;
        }
        return raw_score;
    }
    let v = max_score * raw_score / max_raw;
    if reverse {
        return max_score - v;
    }
    return v;
}

// PodTopologySpread's NormalizeScore: 0 for an ignored node, 100 for all when the maximum is 0,
// else 100 · (max + min − raw) / max in int64 (vec2<u32>, f64.wgsl's integer helpers).
fn pod_topology_spread_normalize(r: i32, max_raw: i32, min_raw: i32) -> i32 {
    if r == bitcast<i32>(PTS_IGNORED_BITS) {
        return 0;
    }
    if max_raw == 0 {
        return i32(MAX_NODE_SCORE);
    }
    let x = i64_from_i32(max_raw + min_raw - r);
    return i32(i64_div(u64_mul_u32(x, MAX_NODE_SCORE), i64_from_i32(max_raw)).x);
}

// InterPodAffinity's NormalizeScore: int64(100 · (float64(raw − min) / float64(max − min))) in
// binary64 (f64.wgsl), 0 when every feasible node scores the same.
fn inter_pod_affinity_normalize(r: i32, max_raw: i32, min_raw: i32) -> i32 {
    let diff = max_raw - min_raw;
    if diff <= 0 {
        return 0;
    }
    let fraction = f64_div(f64_from_i32(r - min_raw), f64_from_i32(diff));
    return i32(f64_to_i64(f64_mul(F64_HUNDRED, fraction)).x);
}

// The normalized score of plane k for a feasible cell.
fn normalized(k: u32, i: u32, c: u32) -> i32 {
    let r = raw[plane_cell(k, i)];
    let max_raw = row_max[plane_class(k, c)];
    let min_raw = row_min[plane_class(k, c)];
    if k == PLANE_TAINT_TOLERATION {
        return default_normalize(r, max_raw, true);
    }
    if k == PLANE_NODE_AFFINITY {
        return default_normalize(r, max_raw, false);
    }
    if k == PLANE_POD_TOPOLOGY_SPREAD {
        return pod_topology_spread_normalize(r, max_raw, min_raw);
    }
    if k == PLANE_INTER_POD_AFFINITY {
        return inter_pod_affinity_normalize(r, max_raw, min_raw);
    }
    return r;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let cell = cell_of(gid);
    if !cell.valid {
        return;
    }
    let i = cell.index;
    let c = cell.local_class;
    let feasible = (cell_filter[i] & CELL_FEASIBLE) != 0u;
    let skip = eval_classes[cell.cls].score_skip;
    var sum = 0;
    for (var k = 0u; k < NUM_SCORE_PLANES; k++) {
        var v = 0;
        let bit = 1u << k;
        if feasible && (params.score_mask & bit) != 0u && (skip & bit) == 0u {
            v = normalized(k, i, c);
            sum += v * plane_weight(k);
        }
        norm[plane_cell(k, i)] = v;
    }
    if feasible {
        atomicMax(&best_total[c], sum);
    }
    total[i] = sum;
    // An ignored node's sentinel becomes the 0 upstream's Score gives it.
    let pts = plane_cell(PLANE_POD_TOPOLOGY_SPREAD, i);
    if raw[pts] == bitcast<i32>(PTS_IGNORED_BITS) {
        raw[pts] = 0;
    }
}
