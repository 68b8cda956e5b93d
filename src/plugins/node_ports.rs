//! NodePorts: a filter that rejects nodes where a host port the pod asks for is already taken.
//!
//! Input: the pod's host ports ([`Pod::host_ports`]) and the node's used ports
//! ([`Node::used_ports`]). Output: a pre-filter state (or `Skip` when the pod asks for no host
//! port) and a filter [`Status`] (`Unschedulable` with
//! `"node(s) didn't have free ports for the requested pod ports"`, which preemption may resolve).
//!
//! Upstream (v1.35): `pkg/scheduler/framework/plugins/nodeports/node_ports.go` and `HostPortInfo`
//! (`Add`, `CheckConflict`, `sanitize`) in `k8s.io/kube-scheduler/framework` (formerly
//! `pkg/scheduler/framework/types.go`). The ports of a pod are those of
//! `pkg/scheduler/util.GetHostPorts`: `hostPort > 0` of every app container **and** of every
//! restartable init container (sidecar, `restartPolicy: Always`); plain init containers are
//! ignored. The node's used ports are built from the same function for each pod on it.
//!
//! Conflict rule: ports conflict when protocol and port are equal and the host IPs overlap, where
//! `0.0.0.0` (also an empty IP) overlaps every IP. An empty protocol means `TCP`.

use crate::framework::{Code, Status};
use crate::model::{ClusterState, HostPort, Node, Pod};

/// The filter reason when a requested host port is taken.
pub const ERR_REASON: &str = "node(s) didn't have free ports for the requested pod ports";

/// The wildcard host IP.
pub const DEFAULT_BIND_ALL_HOST_IP: &str = "0.0.0.0";

/// The NodePorts plugin. It has no arguments.
#[derive(Debug, Clone, Copy, Default)]
pub struct NodePorts;

/// Per-pod state computed at PreFilter: the host ports the pod asks for (sanitized).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodePortsPreFilter {
    /// Wanted host ports with empty IPs replaced by `0.0.0.0` and empty protocols by `TCP`.
    pub wanted: Vec<HostPort>,
}

/// `(ip, protocol)` with upstream's defaults applied (`HostPortInfo.sanitize`).
fn sanitize(port: &HostPort) -> (&str, &str) {
    let ip = if port.host_ip.is_empty() { DEFAULT_BIND_ALL_HOST_IP } else { &port.host_ip };
    let protocol = if port.protocol.is_empty() { "TCP" } else { &port.protocol };
    (ip, protocol)
}

/// Whether `(ip, protocol, port)` conflicts with any of `used` (upstream
/// `HostPortInfo.CheckConflict`). A non-positive port never conflicts.
pub fn check_conflict(used: &[HostPort], want: &HostPort) -> bool {
    if want.port <= 0 {
        return false;
    }
    let (ip, protocol) = sanitize(want);
    used.iter().filter(|u| u.port > 0).any(|u| {
        let (used_ip, used_protocol) = sanitize(u);
        if used_protocol != protocol || u.port != want.port {
            return false;
        }
        // 0.0.0.0 asks for the port on every IP; a specific IP conflicts with itself and with
        // a 0.0.0.0 binding.
        ip == DEFAULT_BIND_ALL_HOST_IP || used_ip == DEFAULT_BIND_ALL_HOST_IP || used_ip == ip
    })
}

/// Whether none of `wanted` conflicts with `used` (upstream `fitsPorts`).
pub fn fits_ports(wanted: &[HostPort], used: &[HostPort]) -> bool {
    !wanted.iter().any(|w| check_conflict(used, w))
}

impl NodePorts {
    /// The plugin name used in profiles and statuses.
    pub const NAME: &str = "NodePorts";

    /// The plugin.
    pub fn new() -> Self {
        NodePorts
    }

    /// Collects the pod's host ports; `Skip` when it asks for none.
    pub fn pre_filter(
        &self,
        pod: &Pod,
        _cluster: &ClusterState,
    ) -> Result<NodePortsPreFilter, Status> {
        let wanted: Vec<HostPort> = pod
            .host_ports
            .iter()
            .filter(|p| p.port > 0)
            .map(|p| {
                let (ip, protocol) = sanitize(p);
                HostPort { host_ip: ip.to_string(), protocol: protocol.to_string(), port: p.port }
            })
            .collect();
        if wanted.is_empty() {
            return Err(Status::skip());
        }
        Ok(NodePortsPreFilter { wanted })
    }

    /// Rejects the node (`Unschedulable`) if any wanted port conflicts with a used one.
    pub fn filter(&self, state: &NodePortsPreFilter, _pod: &Pod, node: &Node) -> Status {
        if fits_ports(&state.wanted, &node.used_ports) {
            Status::success()
        } else {
            Status::new(Code::Unschedulable, [ERR_REASON]).with_plugin(Self::NAME)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::Code;
    use crate::model::testing::{NodeBuilder, PodBuilder, cluster};

    /// `(host IP, protocol, port)` triples.
    type Ports = Vec<(&'static str, &'static str, i32)>;

    /// A pod asking for `(ip, protocol, port)` triples.
    fn pod_with_ports(name: &str, node: Option<&str>, ports: &[(&str, &str, i32)]) -> Pod {
        let mut b = PodBuilder::new("ns", name);
        if let Some(n) = node {
            b = b.node(n);
        }
        for (ip, proto, port) in ports {
            b = b.host_port(ip, proto, *port);
        }
        b.obj()
    }

    /// Cases from upstream `TestNodePorts`.
    #[test]
    fn host_port_conflicts_follow_protocol_and_wildcard_ip_rules() {
        let rejected = Status::new(Code::Unschedulable, [ERR_REASON]).with_plugin(NodePorts::NAME);
        let cases: Vec<(&str, Ports, Ports, Status)> = vec![
            (
                "the same UDP port on the same IP conflicts",
                vec![("127.0.0.1", "UDP", 8080)],
                vec![("127.0.0.1", "UDP", 8080)],
                rejected.clone(),
            ),
            (
                "the same port on the same IP with another protocol does not conflict",
                vec![("127.0.0.1", "TCP", 8080)],
                vec![("127.0.0.1", "UDP", 8080)],
                Status::success(),
            ),
            (
                "another port on the same IP does not conflict",
                vec![("127.0.0.1", "UDP", 8080)],
                vec![("127.0.0.1", "UDP", 8081)],
                Status::success(),
            ),
            (
                "the second of two wanted ports conflicting is enough to reject",
                vec![("127.0.0.1", "TCP", 8080), ("127.0.0.1", "UDP", 8081)],
                vec![("127.0.0.1", "UDP", 8081)],
                rejected.clone(),
            ),
            (
                "the same port on two different specific IPs does not conflict",
                vec![("127.0.0.1", "TCP", 8001)],
                vec![("10.0.10.10", "TCP", 8001)],
                Status::success(),
            ),
            (
                "a wanted 0.0.0.0 port conflicts with the same port on any IP",
                vec![("0.0.0.0", "TCP", 8001)],
                vec![("127.0.0.1", "TCP", 8001)],
                rejected.clone(),
            ),
            (
                "a wanted specific IP conflicts with the same port bound on 0.0.0.0",
                vec![("127.0.0.1", "TCP", 8001)],
                vec![("0.0.0.0", "TCP", 8001)],
                rejected.clone(),
            ),
            (
                "an empty host IP means 0.0.0.0",
                vec![("", "TCP", 8001)],
                vec![("10.0.10.10", "TCP", 8001)],
                rejected.clone(),
            ),
            (
                "0.0.0.0 on another protocol does not conflict",
                vec![("0.0.0.0", "UDP", 8001)],
                vec![("127.0.0.1", "TCP", 8001)],
                Status::success(),
            ),
            (
                "an empty protocol means TCP",
                vec![("127.0.0.1", "", 9000)],
                vec![("127.0.0.1", "TCP", 9000)],
                rejected.clone(),
            ),
        ];
        let pl = NodePorts::new();
        for (name, wanted, used, want) in cases {
            let existing = pod_with_ports("existing", Some("n"), &used);
            let cl = cluster(vec![NodeBuilder::new("n").obj()], vec![existing]);
            let pod = pod_with_ports("incoming", None, &wanted);
            let state = pl.pre_filter(&pod, &cl).expect("pod has ports");
            assert_eq!(pl.filter(&state, &pod, &cl.nodes[0]), want, "{name}");
        }
    }

    #[test]
    fn a_pod_without_host_ports_skips_the_plugin() {
        let cl = cluster(vec![NodeBuilder::new("n").obj()], vec![]);
        let pod = PodBuilder::new("ns", "p").obj();
        let got = NodePorts::new().pre_filter(&pod, &cl);
        assert_eq!(got.map_err(|s| s.code), Err(Code::Skip));
    }

    #[test]
    fn a_port_released_by_a_removed_pod_is_free_again() {
        let existing = pod_with_ports("existing", Some("n"), &[("0.0.0.0", "TCP", 80)]);
        let mut cl = cluster(vec![NodeBuilder::new("n").obj()], vec![existing]);
        let pod = pod_with_ports("incoming", None, &[("10.1.1.1", "TCP", 80)]);
        let pl = NodePorts::new();
        let state = pl.pre_filter(&pod, &cl).expect("pod has ports");
        assert!(pl.filter(&state, &pod, &cl.nodes[0]).is_rejected());
        cl.nodes[0].remove_pod("ns", "existing");
        assert!(pl.filter(&state, &pod, &cl.nodes[0]).is_success());
    }
}
