//! The scheduler_perf workloads: kube-scheduler's own benchmark cases rebuilt as snapshots, the
//! `initPods` already bound and the `measurePods` pending.
//!
//! Upstream (read at v1.35-era master): `test/integration/scheduler_perf/templates/
//! node-default.yaml` (4 CPU, 32Gi, 110 pods), `pod-default.yaml` (pause, 100m/500Mi requests
//! and limits, containerPort 80), `pod-with-pod-anti-affinity.yaml`,
//! `pod-with-pod-affinity.yaml`, `pod-with-node-affinity.yaml`,
//! `pod-with-topology-spreading.yaml`, `pod-with-preferred-topology-spreading.yaml`,
//! `pod-low-priority.yaml` (900m, no priority), `pod-high-priority.yaml` (3000m, priority 10);
//! the cases in `misc/`, `affinity/` and `topology_spreading/performance-config.yaml`; node
//! labels from `test/utils/runners.go` `LabelNodePrepareStrategy` (values round-robin); pod
//! namespaces from `scheduler_perf.go` `runCreatePodsOp` (`namespace-<opIndex>` unless given).
//!
//! scheduler_perf's API server runs without admission plugins, so pods carry only what the
//! templates say plus API defaults (no service account, no default tolerations, `priority`
//! only where the template sets it).

use serde_json::{Map, Value, json};

use super::engine::{
    Ctx, Family, Free, Limits, NodeOut, Placement, PodDraft, Request, Strategy, Unit,
};
use super::objects::{self, GI, MI, NOW, NodeShape};
use super::{GenParams, Workload, WorkloadInfo};

/// scheduler_perf's `node-default.yaml`.
pub const NODE: NodeShape = NodeShape {
    instance_type: "",
    cpu_capacity: 4000,
    memory_capacity: 32 * GI,
    cpu: 4000,
    memory: 32 * GI,
    pods: 110,
    gpus: 0,
    gpu_product: "",
};

/// The exclusive tag of `color: green` pods (required anti-affinity to themselves on the
/// hostname: at most one per node).
const GREEN: u8 = 1;

const KNOBS: &str = "--nodes: initNodes; --pods: initPods + measurePods; --init-pods: initPods \
                     (bound, spread round-robin where they fit); --seed: uids only";

/// `--list` text for a scheduler_perf workload.
pub fn info(w: Workload) -> WorkloadInfo {
    let node_default = "node-default.yaml: 4 CPU, 32Gi, 110 pods, no taints";
    let (name, mirrors, nodes, pods) = match w {
        Workload::SchedulingBasic => (
            "SchedulingBasic",
            "scheduler_perf SchedulingBasic (misc/performance-config.yaml)",
            node_default,
            "pod-default.yaml (pause, 100m/500Mi, Guaranteed): init in namespace-1, pending in namespace-2; bare pods without ownerReferences, as scheduler_perf creates them",
        ),
        Workload::SchedulingPodAntiAffinity => (
            "SchedulingPodAntiAffinity",
            "scheduler_perf SchedulingPodAntiAffinity (affinity/performance-config.yaml)",
            node_default,
            "pod-with-pod-anti-affinity.yaml: label color=green, required anti-affinity to color=green on kubernetes.io/hostname over namespaces sched-0 and sched-1; init in sched-0 (at most one per node), pending in sched-1; bare pods without ownerReferences, as scheduler_perf creates them",
        ),
        Workload::SchedulingPodAffinity => (
            "SchedulingPodAffinity",
            "scheduler_perf SchedulingPodAffinity (affinity/performance-config.yaml)",
            "node-default.yaml, every node labelled topology.kubernetes.io/zone=zone1",
            "pod-with-pod-affinity.yaml: label color=blue, required affinity to color=blue on topology.kubernetes.io/zone over sched-0 and sched-1; init in sched-0, pending in sched-1; bare pods without ownerReferences, as scheduler_perf creates them",
        ),
        Workload::SchedulingNodeAffinity => (
            "SchedulingNodeAffinity",
            "scheduler_perf SchedulingNodeAffinity (affinity/performance-config.yaml)",
            "node-default.yaml, every node labelled topology.kubernetes.io/zone=zone1",
            "pod-with-node-affinity.yaml: required node affinity topology.kubernetes.io/zone In [zone1, zone2]; init in namespace-1, pending in namespace-2; bare pods without ownerReferences, as scheduler_perf creates them",
        ),
        Workload::TopologySpreading => (
            "TopologySpreading",
            "scheduler_perf TopologySpreading (topology_spreading/performance-config.yaml)",
            "node-default.yaml, topology.kubernetes.io/zone moon-1, moon-2, moon-3 round-robin",
            "init: pod-default.yaml in namespace-1; pending: pod-with-topology-spreading.yaml (color=blue, maxSkew 5 on topology.kubernetes.io/zone, DoNotSchedule) in namespace-2; bare pods without ownerReferences, as scheduler_perf creates them",
        ),
        Workload::PreferredTopologySpreading => (
            "PreferredTopologySpreading",
            "scheduler_perf PreferredTopologySpreading (topology_spreading/performance-config.yaml)",
            "node-default.yaml, topology.kubernetes.io/zone moon-1, moon-2, moon-3 round-robin",
            "init: pod-default.yaml in namespace-1; pending: pod-with-preferred-topology-spreading.yaml (color=blue, maxSkew 5 on topology.kubernetes.io/zone, ScheduleAnyway) in namespace-2; bare pods without ownerReferences, as scheduler_perf creates them",
        ),
        _ => (
            "PreemptionBasic",
            "scheduler_perf PreemptionBasic (misc/performance-config.yaml)",
            node_default,
            "init: pod-low-priority.yaml (900m/500Mi, no priority: 0; four fill a node's CPU to 3600m) in namespace-1; pending: pod-high-priority.yaml (3000m/500Mi, priority 10) in namespace-2; bare pods without ownerReferences, as scheduler_perf creates them",
        ),
    };
    WorkloadInfo { name, mirrors, nodes, pods, knobs: KNOBS }
}

/// A scheduler_perf workload.
#[derive(Debug)]
pub struct Perf {
    workload: Workload,
    nodes: usize,
}

impl Perf {
    pub fn new(workload: Workload, params: &GenParams) -> Perf {
        Perf { workload, nodes: params.nodes }
    }

    /// Namespaces of the init batch and of the pending pods.
    fn namespaces(&self) -> (&'static str, &'static str) {
        match self.workload {
            Workload::SchedulingPodAntiAffinity | Workload::SchedulingPodAffinity => {
                ("sched-0", "sched-1")
            }
            _ => ("namespace-1", "namespace-2"),
        }
    }

    /// The zone label value of node `index`, if the case labels nodes.
    fn zone(&self, index: usize) -> Option<&'static str> {
        match self.workload {
            Workload::SchedulingPodAffinity | Workload::SchedulingNodeAffinity => Some("zone1"),
            Workload::TopologySpreading | Workload::PreferredTopologySpreading => {
                Some(["moon-1", "moon-2", "moon-3"][index % 3])
            }
            _ => None,
        }
    }
}

fn color(value: &str) -> Map<String, Value> {
    let mut labels = Map::new();
    labels.insert("color".into(), value.into());
    labels
}

/// `pod-default.yaml` and its relatives: one pause container with a CPU request, 500Mi, port 80.
fn template(
    namespace: &'static str,
    generate_name: &str,
    cpu: i64,
    image: &'static str,
    nodes: usize,
) -> PodDraft {
    PodDraft {
        namespace,
        generate_name: generate_name.to_string(),
        name: None,
        labels: Map::new(),
        container: "pause",
        image,
        port: Some(80),
        request: Request { cpu, memory: 500 * MI, gpu: 0 },
        limits: Limits::Same,
        spec: Map::new(),
        admission: false,
        placement: Placement { nodes: 0..nodes, strategy: Strategy::Spread, exclusive: 0 },
        // scheduler_perf's createPods op creates bare pods.
        owner: None,
    }
}

impl Family for Perf {
    fn preamble(&mut self, ctx: &mut Ctx) -> Vec<Value> {
        let (a, b) = self.namespaces();
        [a, b]
            .into_iter()
            .map(|ns| {
                let rv = ctx.rv();
                let uid = ctx.uid();
                objects::namespace(ns, NOW - 4 * 86_400, rv, &uid)
            })
            .collect()
    }

    fn node(&mut self, index: usize, ctx: &mut Ctx) -> NodeOut {
        let name = self.node_name(index);
        let mut labels = Map::new();
        if let Some(zone) = self.zone(index) {
            labels.insert("topology.kubernetes.io/zone".into(), zone.into());
        }
        let uid = ctx.uid();
        let object = objects::node(objects::NodeSpec {
            name: &name,
            shape: &NODE,
            labels,
            taints: Vec::new(),
            ip: self.node_ip(index),
            created: NOW - 5 * 86_400 + index as i64 / 100,
            resource_version: ctx.rv(),
            uid: &uid,
            cloud: None,
        });
        NodeOut { object, free: Free::of(&NODE) }
    }

    fn node_name(&self, index: usize) -> String {
        format!("scheduler-perf-{}", objects::name_suffix(index, self.nodes))
    }

    fn node_ip(&self, index: usize) -> u32 {
        0x0A00_0000 + 256 + index as u32
    }

    fn unit(&mut self, bound: bool, _remaining: usize, _ctx: &mut Ctx) -> Unit {
        let (init_ns, measure_ns) = self.namespaces();
        let ns = if bound { init_ns } else { measure_ns };
        let n = self.nodes;
        let pod = match self.workload {
            Workload::SchedulingBasic => {
                template(ns, "pod-", 100, "registry.k8s.io/pause:3.10.1", n)
            }
            Workload::SchedulingPodAntiAffinity => {
                let mut p =
                    template(ns, "anti-affinity-pod-", 100, "registry.k8s.io/pause:3.10.2", n);
                p.labels = color("green");
                p.spec.insert(
                    "affinity".into(),
                    json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                        "labelSelector": {"matchLabels": {"color": "green"}},
                        "namespaces": ["sched-1", "sched-0"],
                        "topologyKey": "kubernetes.io/hostname",
                    }]}}),
                );
                p.placement.exclusive = GREEN;
                p
            }
            Workload::SchedulingPodAffinity => {
                let mut p = template(ns, "affinity-pod-", 100, "registry.k8s.io/pause:3.10.1", n);
                p.labels = color("blue");
                p.spec.insert(
                    "affinity".into(),
                    json!({"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                        "labelSelector": {"matchLabels": {"color": "blue"}},
                        "namespaces": ["sched-1", "sched-0"],
                        "topologyKey": "topology.kubernetes.io/zone",
                    }]}}),
                );
                p
            }
            Workload::SchedulingNodeAffinity => {
                let mut p = template(ns, "node-affinity-", 100, "registry.k8s.io/pause:3.10.1", n);
                p.spec.insert(
                    "affinity".into(),
                    json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [{
                            "key": "topology.kubernetes.io/zone",
                            "operator": "In",
                            "values": ["zone1", "zone2"],
                        }]}],
                    }}}),
                );
                p
            }
            Workload::TopologySpreading | Workload::PreferredTopologySpreading if bound => {
                template(ns, "pod-", 100, "registry.k8s.io/pause:3.10.1", n)
            }
            Workload::TopologySpreading | Workload::PreferredTopologySpreading => {
                let hard = self.workload == Workload::TopologySpreading;
                let image = if hard {
                    "registry.k8s.io/pause:3.10"
                } else {
                    "registry.k8s.io/pause:3.10.1"
                };
                let mut p = template(ns, "spreading-pod-", 100, image, n);
                p.labels = color("blue");
                p.spec.insert(
                    "topologySpreadConstraints".into(),
                    json!([{
                        "labelSelector": {"matchLabels": {"color": "blue"}},
                        "maxSkew": 5,
                        "topologyKey": "topology.kubernetes.io/zone",
                        "whenUnsatisfiable": if hard { "DoNotSchedule" } else { "ScheduleAnyway" },
                    }]),
                );
                p
            }
            _ if bound => {
                let mut p = template(ns, "pod-", 900, "registry.k8s.io/pause:3.10", n);
                p.spec.insert("terminationGracePeriodSeconds".into(), 0.into());
                p
            }
            _ => {
                let mut p = template(ns, "pod-", 3000, "registry.k8s.io/pause:3.10", n);
                p.spec.insert("priority".into(), 10.into());
                p
            }
        };
        Unit { pods: vec![pod], gang: None }
    }
}
