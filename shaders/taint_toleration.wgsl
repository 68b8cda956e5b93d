// TaintToleration filter and raw score (upstream v1.35
// plugins/tainttoleration/taint_toleration.go): an untolerated NoSchedule or NoExecute taint
// rejects the node; the raw score counts untolerated PreferNoSchedule taints. A class's
// tolerated taint ids are precomputed and ascending. CPU twin: eval::cpu::taint_toleration.

@group(0) @binding(1) var<storage, read> nodes: array<GpuNode>;
@group(0) @binding(2) var<storage, read> classes: array<GpuClass>;
@group(0) @binding(3) var<storage, read> node_taint_ids: array<u32>;
@group(0) @binding(4) var<storage, read> class_tolerated_taint_ids: array<u32>;
@group(0) @binding(5) var<storage, read> taint_effects: array<u32>;
@group(0) @binding(6) var<storage, read_write> cell_filter: array<u32>;
@group(0) @binding(7) var<storage, read_write> raw: array<i32>;

// Whether the ascending ids[start .. start + count] contain x.
fn tolerated(start: u32, count: u32, x: u32) -> bool {
    var lo = start;
    var hi = start + count;
    while lo < hi {
        let mid = lo + (hi - lo) / 2u;
        if class_tolerated_taint_ids[mid] < x {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return lo < start + count && class_tolerated_taint_ids[lo] == x;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let cell = cell_of(gid);
    if !cell.valid {
        return;
    }
    let node = nodes[cell.node];
    let cls = classes[cell.cls];
    var bits = 0u;
    var count = 0i;
    for (var k = 0u; k < node.taint_count; k++) {
        let taint = node_taint_ids[node.taint_start + k];
        let effect = taint_effects[taint];
        let ok = tolerated(cls.tolerated_taint_start, cls.tolerated_taint_count, taint);
        if (effect == EFFECT_NO_SCHEDULE || effect == EFFECT_NO_EXECUTE) && !ok {
            bits = CHECK_TAINT_TOLERATION;
        }
        if effect == EFFECT_PREFER_NO_SCHEDULE && !ok {
            count += 1;
        }
    }
    cell_filter[cell.index] |= bits;
    raw[plane_cell(PLANE_TAINT_TOLERATION, cell.index)] = count;
}
