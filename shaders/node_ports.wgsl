// NodePorts filter (upstream v1.35 plugins/nodeports/node_ports.go, HostPortInfo.CheckConflict):
// a wanted host port conflicts with a used one when protocol and port are equal and either IP is
// 0.0.0.0 or the IPs are equal. CPU twin: eval::cpu::node_ports.

@group(0) @binding(1) var<storage, read> nodes: array<GpuNode>;
@group(0) @binding(2) var<storage, read> classes: array<GpuClass>;
@group(0) @binding(3) var<storage, read> node_port_ids: array<u32>;
@group(0) @binding(4) var<storage, read> class_port_ids: array<u32>;
@group(0) @binding(5) var<storage, read> host_ports: array<GpuHostPort>;
@group(0) @binding(6) var<storage, read_write> cell_filter: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let cell = cell_of(gid);
    if !cell.valid {
        return;
    }
    let node = nodes[cell.node];
    let cls = classes[cell.cls];
    for (var w = 0u; w < cls.port_count; w++) {
        let want = host_ports[class_port_ids[cls.port_start + w]];
        for (var u = 0u; u < node.port_count; u++) {
            let used = host_ports[node_port_ids[node.port_start + u]];
            let wildcard = ((want.flags | used.flags) & PORT_WILDCARD_IP) != 0u;
            if want.protocol == used.protocol && want.port == used.port
                && (wildcard || want.ip == used.ip) {
                cell_filter[cell.index] |= CHECK_NODE_PORTS;
                return;
            }
        }
    }
}
