// Lookups in the inter-pod count tables (eval::topology): a node's domain for a key slot, and a
// term's count for a domain (its entries are ascending by domain; no entry counts 0). A library:
// the kernels that include it bind `node_domains` and `topo_entries`. CPU twins:
// eval::topology::Topology::{node_domain, lookup}.

fn node_domain(node: u32, key: u32) -> u32 {
    return node_domains[node * params.num_topology_keys + key];
}

fn topo_lookup(term: EvalTopoTerm, domain: u32) -> i32 {
    var lo = term.entry_start;
    var hi = term.entry_start + term.entry_count;
    while lo < hi {
        let mid = lo + (hi - lo) / 2u;
        if topo_entries[mid].x < domain {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    if lo < term.entry_start + term.entry_count && topo_entries[lo].x == domain {
        return bitcast<i32>(topo_entries[lo].y);
    }
    return 0;
}
