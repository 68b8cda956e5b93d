// Shared by every kernel; the host prepends types.wgsl and this file to each kernel's source.
// Kept in sync with src/eval/gpu/kernels.rs (binding 0 of every kernel is `params`).
//
// A dispatch covers one node tile × one class chunk: x = node within the tile (workgroups of
// WORKGROUP_SIZE), y = class within the chunk. Cell planes hold one tile each, row-major with
// rows of `tile_stride` cells; per-class planes are indexed by the class within the chunk.

@group(0) @binding(0) var<uniform> params: EvalParams;

struct Cell {
    valid: bool,
    // Global class index.
    cls: u32,
    // Global node index.
    node: u32,
    // Class index within the chunk (for per-class planes).
    local_class: u32,
    // Index in this tile's cell planes.
    index: u32,
}

fn cell_of(gid: vec3<u32>) -> Cell {
    var cell: Cell;
    cell.valid = gid.x < params.tile_len && gid.y < params.class_len;
    cell.cls = params.class_start + gid.y;
    cell.node = params.tile_start + gid.x;
    cell.local_class = gid.y;
    cell.index = gid.y * params.tile_stride + gid.x;
    return cell;
}

// The index of a cell in score plane `plane` of the tile's `raw` or `norm` binding (each holds
// every score plane of the tile, one after the other).
fn plane_cell(plane: u32, index: u32) -> u32 {
    return plane * params.class_stride * params.tile_stride + index;
}

// The index of a class of the chunk in per-class plane `plane` of `row_max` or `row_min`.
fn plane_class(plane: u32, local_class: u32) -> u32 {
    return plane * params.class_stride + local_class;
}

// The weight of score plane `plane`.
fn plane_weight(plane: u32) -> i32 {
    return params.weights[plane / 4u][plane % 4u];
}

// The opaque zero native binary64 XORs into its results (shaders/f64_native.wgsl; unused by the
// software library).
fn f64_fence() -> u32 {
    return params.fence;
}
