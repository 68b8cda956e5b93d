// After every filter kernel: keeps the enabled failed checks of a cell, records the first in
// profile order (1 + bit index, in bits 16–23), sets CELL_FEASIBLE when none failed, and for
// feasible cells counts them and takes the row maxima and minima of the raw scores (what the
// normalizations divide by). Upstream counterpart (v1.35): RunFilterPlugins' first failure, and
// the max and min of the NormalizeScore functions. CPU twin: eval::cpu::feasibility and the
// reduction loop of eval::cpu::evaluate.

@group(0) @binding(1) var<storage, read_write> cell_filter: array<u32>;
@group(0) @binding(2) var<storage, read> raw: array<i32>;
@group(0) @binding(3) var<storage, read_write> row_max: array<atomic<i32>>;
@group(0) @binding(4) var<storage, read_write> row_min: array<atomic<i32>>;
@group(0) @binding(5) var<storage, read_write> feasible_count: array<atomic<u32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let cell = cell_of(gid);
    if !cell.valid {
        return;
    }
    let failed = cell_filter[cell.index] & params.enabled_checks & CHECK_MASK;
    var first = 0u;
    for (var k = 0u; k < params.num_checks; k++) {
        let bit = params.check_order[k / 4u][k % 4u];
        if ((failed >> bit) & 1u) != 0u {
            first = bit + 1u;
            break;
        }
    }
    var feasible = 0u;
    if failed == 0u {
        feasible = CELL_FEASIBLE;
    }
    cell_filter[cell.index] = failed | (first << FIRST_FAILURE_SHIFT) | feasible;
    if failed == 0u {
        let c = cell.local_class;
        atomicAdd(&feasible_count[c], 1u);
        for (var k = 0u; k < NUM_SCORE_PLANES; k++) {
            // PodTopologySpread's raw scores need the feasible nodes: reduced by its own kernel.
            if k == PLANE_POD_TOPOLOGY_SPREAD {
                continue;
            }
            let v = raw[plane_cell(k, cell.index)];
            atomicMax(&row_max[plane_class(k, c)], v);
            atomicMin(&row_min[plane_class(k, c)], v);
        }
    }
}
