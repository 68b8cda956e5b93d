//! Builders for the Kubernetes objects `kplace gen` writes, as `kubectl get -o yaml` prints them
//! (API defaults filled in, `status` as the kubelet and controllers report it): Namespace,
//! PriorityClass, Node, PodDisruptionBudget and the coscheduling and Volcano PodGroups. Pods are built by
//! the engine (`engine.rs`), which knows where each one is bound.
//!
//! Input: plain values (names, amounts in millicores and bytes, Unix seconds). Output:
//! `serde_json::Value` objects. Counterparts (v1.35): the API types in `k8s.io/api` and the
//! defaulting in `pkg/apis/core/v1/defaults.go`; PodGroups are
//! `scheduling.x-k8s.io/v1alpha1` from kubernetes-sigs/scheduler-plugins (coscheduling,
//! `apis/scheduling/v1alpha1/types.go`) and `scheduling.volcano.sh/v1beta1` from volcano-sh/apis
//! (`pkg/apis/scheduling/v1beta1/types.go`).

use serde_json::{Map, Value, json};

use crate::model::GangConvention;

/// 1 KiB.
pub const KI: i64 = 1024;
/// 1 MiB.
pub const MI: i64 = 1024 * KI;
/// 1 GiB.
pub const GI: i64 = 1024 * MI;

/// `2026-11-20T09:00:00Z`: "now" in every generated snapshot (pending pods are created from
/// here on; nodes and bound pods before).
pub const NOW: i64 = 1_795_165_200;

/// The kubelet version nodes report.
pub const KUBELET_VERSION: &str = "v1.35.0";

/// A CPU amount as the API server canonicalizes it: whole cores as `"4"`, else millicores.
pub fn cpu_quantity(milli: i64) -> String {
    if milli % 1000 == 0 { (milli / 1000).to_string() } else { format!("{milli}m") }
}

/// A byte amount with the largest binary suffix that divides it exactly (`32Gi`, `500Mi`,
/// `32018676Ki`), as the API server canonicalizes binary quantities.
pub fn memory_quantity(bytes: i64) -> String {
    for (unit, suffix) in [(1024 * GI, "Ti"), (GI, "Gi"), (MI, "Mi"), (KI, "Ki")] {
        if bytes != 0 && bytes % unit == 0 {
            return format!("{}{suffix}", bytes / unit);
        }
    }
    bytes.to_string()
}

/// RFC 3339 in UTC with whole seconds, as `metav1.Time` serializes.
pub fn timestamp(unix: i64) -> String {
    match k8s_openapi::jiff::Timestamp::from_second(unix) {
        Ok(t) => t.to_string(),
        Err(_) => "1970-01-01T00:00:00Z".to_string(),
    }
}

/// A version-4 UUID from 128 random bits.
pub fn uuid(bits: u128) -> String {
    let b = (bits & !(0xf << 76) | (0x4 << 76)) & !(0x3 << 62) | (0x2 << 62);
    let hex = format!("{b:032x}");
    format!("{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32])
}

/// A deterministic version-4 UUID for an object that `kplace gen` names but does not write (the
/// controllers owning generated pods): two FNV-1a 64-bit hashes of `namespace/kind/name`, so
/// the same owner always gets the same uid and distinct owners distinct ones (barring a
/// 122-bit collision).
pub fn owner_uid(namespace: &str, kind: &str, name: &str) -> String {
    let fnv = |offset: u64| {
        [namespace, "/", kind, "/", name]
            .iter()
            .flat_map(|s| s.bytes())
            .fold(offset, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
    };
    let hi = fnv(0xcbf2_9ce4_8422_2325);
    let lo = fnv(0x6c62_272e_07bb_0142);
    uuid((u128::from(hi) << 64) | u128::from(lo))
}

/// The characters Kubernetes uses for generated name suffixes (`k8s.io/apimachinery`
/// `util/rand`: no vowels, no confusable digits).
const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// A name suffix for item `index` of `count`, like the ones `generateName` produces: at least
/// five characters from [`ALPHANUMS`], distinct for distinct indices (a fixed bijection
/// scrambles the order so neighbours do not look alike).
pub fn name_suffix(index: usize, count: usize) -> String {
    let base = ALPHANUMS.len() as u128;
    let mut width = 5u32;
    while base.pow(width) < count as u128 {
        width += 1;
    }
    let space = base.pow(width);
    // 1_000_003 is not a multiple of 3, so it is invertible modulo 27^width.
    let mut n = (index as u128 * 1_000_003 + 7_777) % space;
    let mut out = vec![b'b'; width as usize];
    for slot in out.iter_mut().rev() {
        *slot = ALPHANUMS[(n % base) as usize];
        n /= base;
    }
    String::from_utf8(out).unwrap_or_default()
}

/// An IPv4 address as dotted text.
pub fn ipv4(ip: u32) -> String {
    let [a, b, c, d] = ip.to_be_bytes();
    format!("{a}.{b}.{c}.{d}")
}

/// `metadata` of a generated object.
pub fn metadata(
    name: &str,
    namespace: Option<&str>,
    labels: Map<String, Value>,
    created: i64,
    resource_version: u64,
    uid: &str,
) -> Value {
    let mut m = Map::new();
    m.insert("creationTimestamp".into(), Value::String(timestamp(created)));
    if !labels.is_empty() {
        m.insert("labels".into(), Value::Object(labels));
    }
    m.insert("name".into(), name.into());
    if let Some(ns) = namespace {
        m.insert("namespace".into(), ns.into());
    }
    m.insert("resourceVersion".into(), Value::String(resource_version.to_string()));
    m.insert("uid".into(), uid.into());
    Value::Object(m)
}

/// A `v1/Namespace`, labelled with its own name as the API server does.
pub fn namespace(name: &str, created: i64, resource_version: u64, uid: &str) -> Value {
    let mut labels = Map::new();
    labels.insert("kubernetes.io/metadata.name".into(), name.into());
    json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": metadata(name, None, labels, created, resource_version, uid),
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    })
}

/// A `scheduling.k8s.io/v1` PriorityClass.
#[derive(Debug, Clone)]
pub struct PriorityClassSpec {
    /// `metadata.name`.
    pub name: &'static str,
    /// `value`.
    pub value: i32,
    /// `globalDefault`.
    pub global_default: bool,
    /// `preemptionPolicy`.
    pub preemption_policy: &'static str,
    /// `description`.
    pub description: &'static str,
}

/// A `scheduling.k8s.io/v1` PriorityClass object.
pub fn priority_class(
    spec: &PriorityClassSpec,
    created: i64,
    resource_version: u64,
    uid: &str,
) -> Value {
    json!({
        "apiVersion": "scheduling.k8s.io/v1",
        "description": spec.description,
        "globalDefault": spec.global_default,
        "kind": "PriorityClass",
        "metadata": metadata(spec.name, None, Map::new(), created, resource_version, uid),
        "preemptionPolicy": spec.preemption_policy,
        "value": spec.value,
    })
}

/// What a node looks like: its capacity and what the kubelet reserves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeShape {
    /// `node.kubernetes.io/instance-type` (empty: no cloud labels, as scheduler_perf's nodes).
    pub instance_type: &'static str,
    /// `status.capacity.cpu` in millicores.
    pub cpu_capacity: i64,
    /// `status.capacity.memory` in bytes.
    pub memory_capacity: i64,
    /// `status.allocatable.cpu` in millicores.
    pub cpu: i64,
    /// `status.allocatable.memory` in bytes.
    pub memory: i64,
    /// `pods` (capacity and allocatable).
    pub pods: i64,
    /// `nvidia.com/gpu` (capacity and allocatable; 0: none).
    pub gpus: i64,
    /// `nvidia.com/gpu.product` label (GPU nodes).
    pub gpu_product: &'static str,
}

/// Everything a node object needs besides its shape.
#[derive(Debug, Clone)]
pub struct NodeSpec<'a> {
    /// `metadata.name` (also the hostname label).
    pub name: &'a str,
    /// The shape.
    pub shape: &'a NodeShape,
    /// Extra labels (zone, region, node group, …); the kubelet's own labels are added.
    pub labels: Map<String, Value>,
    /// `spec.taints`.
    pub taints: Vec<Value>,
    /// The InternalIP.
    pub ip: u32,
    /// Created at (Unix seconds).
    pub created: i64,
    /// `metadata.resourceVersion`.
    pub resource_version: u64,
    /// `metadata.uid`.
    pub uid: &'a str,
    /// A cloud node (EKS-like annotations, providerID, addresses, conditions and nodeInfo) or a
    /// bare scheduler_perf node (`status.capacity`, allocatable, a Ready condition).
    pub cloud: Option<CloudInfo<'a>>,
}

/// The cloud details of an EKS-like node.
#[derive(Debug, Clone)]
pub struct CloudInfo<'a> {
    /// `topology.kubernetes.io/zone`.
    pub zone: &'a str,
    /// The EC2 instance id (`i-…`), for `spec.providerID`.
    pub instance_id: &'a str,
    /// Random bits for machine and boot ids.
    pub bits: u128,
}

/// A `v1/Node`.
pub fn node(spec: NodeSpec<'_>) -> Value {
    let shape = spec.shape;
    let mut labels = spec.labels;
    labels.insert("kubernetes.io/arch".into(), "amd64".into());
    labels.insert("kubernetes.io/hostname".into(), spec.name.into());
    labels.insert("kubernetes.io/os".into(), "linux".into());
    labels.insert("beta.kubernetes.io/arch".into(), "amd64".into());
    labels.insert("beta.kubernetes.io/os".into(), "linux".into());
    if !shape.instance_type.is_empty() {
        labels.insert("node.kubernetes.io/instance-type".into(), shape.instance_type.into());
        labels.insert("beta.kubernetes.io/instance-type".into(), shape.instance_type.into());
    }
    if shape.gpus > 0 && !shape.gpu_product.is_empty() {
        labels.insert("nvidia.com/gpu.present".into(), "true".into());
        labels.insert("nvidia.com/gpu.product".into(), shape.gpu_product.into());
        labels.insert("nvidia.com/gpu.count".into(), shape.gpus.to_string().into());
    }
    let mut capacity = Map::new();
    capacity.insert("cpu".into(), cpu_quantity(shape.cpu_capacity).into());
    capacity.insert("memory".into(), memory_quantity(shape.memory_capacity).into());
    capacity.insert("pods".into(), shape.pods.to_string().into());
    let mut allocatable = Map::new();
    allocatable.insert("cpu".into(), cpu_quantity(shape.cpu).into());
    allocatable.insert("memory".into(), memory_quantity(shape.memory).into());
    allocatable.insert("pods".into(), shape.pods.to_string().into());
    if shape.gpus > 0 {
        capacity.insert("nvidia.com/gpu".into(), shape.gpus.to_string().into());
        allocatable.insert("nvidia.com/gpu".into(), shape.gpus.to_string().into());
    }
    let mut meta = metadata(spec.name, None, labels, spec.created, spec.resource_version, spec.uid);
    let mut node_spec = Map::new();
    if !spec.taints.is_empty() {
        node_spec.insert("taints".into(), Value::Array(spec.taints));
    }
    let Some(cloud) = spec.cloud else {
        // scheduler_perf's node template: capacity, a Ready condition, phase Running. The
        // kubelet would fill allocatable; it equals capacity here.
        return json!({
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": meta,
            "spec": node_spec,
            "status": {
                "allocatable": allocatable,
                "capacity": capacity,
                "conditions": [{"status": "True", "type": "Ready"}],
                "phase": "Running",
            },
        });
    };
    capacity.insert("ephemeral-storage".into(), "104845292Ki".into());
    allocatable.insert("ephemeral-storage".into(), "95551679124".into());
    for m in [&mut capacity, &mut allocatable] {
        m.insert("hugepages-1Gi".into(), "0".into());
        m.insert("hugepages-2Mi".into(), "0".into());
    }
    let ip = ipv4(spec.ip);
    if let Some(m) = meta.as_object_mut() {
        m.insert(
            "annotations".into(),
            json!({
                "alpha.kubernetes.io/provided-node-ip": ip,
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            }),
        );
    }
    node_spec
        .insert("providerID".into(), format!("aws:///{}/{}", cloud.zone, cloud.instance_id).into());
    let created = timestamp(spec.created);
    let ready_at = timestamp(spec.created + 40);
    let heartbeat = timestamp(NOW - 17);
    let condition = |kind: &str, status: &str, reason: &str, message: &str, since: &str| {
        json!({
            "lastHeartbeatTime": heartbeat,
            "lastTransitionTime": since,
            "message": message,
            "reason": reason,
            "status": status,
            "type": kind,
        })
    };
    let hex = format!("{:032x}", cloud.bits);
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta,
        "spec": node_spec,
        "status": {
            "addresses": [
                {"address": ip, "type": "InternalIP"},
                {"address": spec.name, "type": "InternalDNS"},
                {"address": spec.name, "type": "Hostname"},
            ],
            "allocatable": allocatable,
            "capacity": capacity,
            "conditions": [
                condition("MemoryPressure", "False", "KubeletHasSufficientMemory",
                    "kubelet has sufficient memory available", &created),
                condition("DiskPressure", "False", "KubeletHasNoDiskPressure",
                    "kubelet has no disk pressure", &created),
                condition("PIDPressure", "False", "KubeletHasSufficientPID",
                    "kubelet has sufficient PID available", &created),
                condition("Ready", "True", "KubeletReady",
                    "kubelet is posting ready status", &ready_at),
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": uuid(cloud.bits.rotate_left(64)),
                "containerRuntimeVersion": "containerd://1.7.27",
                "kernelVersion": "6.12.40-63.114.amzn2023.x86_64",
                "kubeProxyVersion": "",
                "kubeletVersion": KUBELET_VERSION,
                "machineID": format!("ec2{}", &hex[3..]),
                "operatingSystem": "linux",
                "osImage": "Amazon Linux 2023.9.20251117",
                "systemUUID": format!("ec2{}", &uuid(cloud.bits)[3..]),
            },
        },
    })
}

/// The region of kplace's own (EKS-like) workloads.
pub const REGION: &str = "eu-west-1";

/// Its zones; node `i` is in `ZONES[i % 3]`.
pub const ZONES: [&str; 3] = ["eu-west-1a", "eu-west-1b", "eu-west-1c"];

/// The InternalIP of EKS-like node `index`: distinct addresses in 10.64.0.0/10 (an odd
/// multiplier permutes the 22 low bits, so neighbours do not look alike).
pub fn eks_node_ip(index: usize) -> u32 {
    let n = (index as u32).wrapping_add(0x1_0203).wrapping_mul(2_654_435_761) & 0x003F_FFFF;
    0x0A40_0000 | n
}

/// The name EC2 gives a node with this address: `ip-10-64-3-7.eu-west-1.compute.internal`.
pub fn eks_node_name(ip: u32) -> String {
    let [a, b, c, d] = ip.to_be_bytes();
    format!("ip-{a}-{b}-{c}-{d}.{REGION}.compute.internal")
}

/// The cloud labels of an EKS-like node in `zone`, from node group `nodegroup`.
pub fn eks_labels(zone: &str, nodegroup: &str, spot: bool) -> Map<String, Value> {
    let mut labels = Map::new();
    labels.insert("topology.kubernetes.io/region".into(), REGION.into());
    labels.insert("topology.kubernetes.io/zone".into(), zone.into());
    labels.insert("failure-domain.beta.kubernetes.io/region".into(), REGION.into());
    labels.insert("failure-domain.beta.kubernetes.io/zone".into(), zone.into());
    labels.insert("eks.amazonaws.com/nodegroup".into(), nodegroup.into());
    labels.insert(
        "eks.amazonaws.com/capacityType".into(),
        if spot { "SPOT" } else { "ON_DEMAND" }.into(),
    );
    labels
}

/// An EC2 instance id from random bits.
pub fn instance_id(bits: u128) -> String {
    format!("i-0{:016x}", bits as u64)
}

/// A node taint.
pub fn taint(key: &str, value: &str, effect: &str) -> Value {
    json!({"effect": effect, "key": key, "value": value})
}

/// A `policy/v1` PodDisruptionBudget with the status the disruption controller would report.
#[derive(Debug, Clone)]
pub struct PdbSpec<'a> {
    /// Namespace.
    pub namespace: &'a str,
    /// Name.
    pub name: &'a str,
    /// `spec.selector.matchLabels` (`app: <value>`).
    pub app: &'a str,
    /// `spec.minAvailable` or `spec.maxUnavailable`.
    pub budget: Budget,
    /// Pods the owning workload expects (its replicas).
    pub expected: i64,
    /// Healthy (bound, running) pods.
    pub healthy: i64,
}

/// `spec.minAvailable` / `spec.maxUnavailable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    /// `minAvailable: N`.
    MinAvailable(i64),
    /// `minAvailable: "N%"`.
    MinAvailablePercent(i64),
    /// `maxUnavailable: N`.
    MaxUnavailable(i64),
    /// `maxUnavailable: "N%"`.
    MaxUnavailablePercent(i64),
}

/// `GetScaledValueFromIntOrPercent(percent, total, roundUp=true)`.
fn scaled_up(percent: i64, total: i64) -> i64 {
    (percent * total + 99) / 100
}

impl Budget {
    /// `desiredHealthy` as upstream's disruption controller computes it
    /// (`pkg/controller/disruption/disruption.go`, `getExpectedPodCount`): percentages scale
    /// the expected count rounding up, and `maxUnavailable` subtracts from it (not below 0).
    pub fn desired_healthy(self, expected: i64) -> i64 {
        match self {
            Budget::MinAvailable(n) => n,
            Budget::MinAvailablePercent(p) => scaled_up(p, expected),
            Budget::MaxUnavailable(n) => (expected - n).max(0),
            Budget::MaxUnavailablePercent(p) => (expected - scaled_up(p, expected)).max(0),
        }
    }

    fn spec_entry(self) -> (&'static str, Value) {
        match self {
            Budget::MinAvailable(n) => ("minAvailable", n.into()),
            Budget::MinAvailablePercent(p) => ("minAvailable", format!("{p}%").into()),
            Budget::MaxUnavailable(n) => ("maxUnavailable", n.into()),
            Budget::MaxUnavailablePercent(p) => ("maxUnavailable", format!("{p}%").into()),
        }
    }
}

/// A `policy/v1` PodDisruptionBudget object.
pub fn pdb(spec: &PdbSpec<'_>, created: i64, resource_version: u64, uid: &str) -> Value {
    let desired = spec.budget.desired_healthy(spec.expected);
    let allowed = if spec.expected <= 0 { 0 } else { (spec.healthy - desired).max(0) };
    let (key, budget) = spec.budget.spec_entry();
    let mut pdb_spec = Map::new();
    pdb_spec.insert(key.into(), budget);
    pdb_spec.insert("selector".into(), json!({"matchLabels": {"app": spec.app}}));
    let (status, reason, message) = if allowed > 0 {
        ("True", "SufficientPods", "")
    } else {
        ("False", "InsufficientPods", "")
    };
    json!({
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": metadata(spec.name, Some(spec.namespace), Map::new(), created, resource_version, uid),
        "spec": pdb_spec,
        "status": {
            "conditions": [{
                "lastTransitionTime": timestamp(NOW - 600),
                "message": message,
                "observedGeneration": 1,
                "reason": reason,
                "status": status,
                "type": "DisruptionAllowed",
            }],
            "currentHealthy": spec.healthy,
            "desiredHealthy": desired,
            "disruptionsAllowed": allowed,
            "expectedPods": spec.expected,
            "observedGeneration": 1,
        },
    })
}

/// A PodGroup: coscheduling's `scheduling.x-k8s.io/v1alpha1` (kubernetes-sigs/scheduler-plugins)
/// or Volcano's `scheduling.volcano.sh/v1beta1`. Both say in `spec.minMember` how many pods
/// must be placed together. `running` of its pods are bound.
#[derive(Debug, Clone)]
pub struct PodGroupSpec<'a> {
    /// Whose PodGroup.
    pub convention: GangConvention,
    /// Namespace.
    pub namespace: &'a str,
    /// Name (the value of the pods' label or annotation).
    pub name: &'a str,
    /// `spec.minMember`.
    pub min_member: usize,
    /// Bound pods of the group.
    pub running: usize,
}

/// A PodGroup object, as its controller leaves it: coscheduling's with
/// `scheduleTimeoutSeconds`, Volcano's in the `default` queue.
pub fn pod_group(spec: &PodGroupSpec<'_>, created: i64, resource_version: u64, uid: &str) -> Value {
    let phase = if spec.running >= spec.min_member { "Running" } else { "Pending" };
    let body = match spec.convention {
        GangConvention::Coscheduling => {
            json!({"minMember": spec.min_member, "scheduleTimeoutSeconds": 60})
        }
        GangConvention::Volcano => json!({"minMember": spec.min_member, "queue": "default"}),
    };
    json!({
        "apiVersion": spec.convention.api_version(),
        "kind": "PodGroup",
        "metadata": metadata(spec.name, Some(spec.namespace), Map::new(), created, resource_version, uid),
        "spec": body,
        "status": {"phase": phase, "running": spec.running},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_are_written_in_canonical_form() {
        let cases: &[(&str, String, &str)] = &[
            ("whole cores are written without a suffix", cpu_quantity(3000), "3"),
            ("fractional cores are written in millicores", cpu_quantity(100), "100m"),
            ("whole GiB use Gi", memory_quantity(32 * GI), "32Gi"),
            ("whole MiB use Mi", memory_quantity(500 * MI), "500Mi"),
            ("whole KiB use Ki", memory_quantity(32_018_676 * KI), "32018676Ki"),
            ("other amounts are bytes", memory_quantity(1000), "1000"),
            ("zero is 0", memory_quantity(0), "0"),
        ];
        for (name, got, want) in cases {
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn now_is_the_documented_instant() {
        assert_eq!(timestamp(NOW), "2026-11-20T09:00:00Z");
    }

    #[test]
    fn uuids_have_the_version_4_layout() {
        let u = uuid(u128::MAX);
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert!(matches!(&u[19..20], "8" | "9" | "a" | "b"), "{u}");
    }

    #[test]
    fn owner_uids_are_stable_per_owner_and_distinct_between_owners() {
        let a = owner_uid("shop", "ReplicaSet", "web-abc");
        assert_eq!(a, owner_uid("shop", "ReplicaSet", "web-abc"), "the same owner, the same uid");
        assert_eq!(&a[14..15], "4", "{a} is a version-4 uuid");
        let others = [
            owner_uid("other", "ReplicaSet", "web-abc"),
            owner_uid("shop", "StatefulSet", "web-abc"),
            owner_uid("shop", "ReplicaSet", "web-abd"),
        ];
        for o in others {
            assert_ne!(a, o, "another namespace, kind or name gives another uid");
        }
    }

    #[test]
    fn name_suffixes_are_distinct_and_widen_with_the_count() {
        let n = 30_000;
        let mut seen: Vec<String> = (0..n).map(|i| name_suffix(i, n)).collect();
        assert!(seen.iter().all(|s| s.len() == 5));
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), n);
        assert_eq!(name_suffix(0, 27usize.pow(5) + 1).len(), 6);
    }

    #[test]
    fn pdb_status_follows_the_disruption_controller() {
        // (budget, expected, healthy, desired, allowed)
        let cases: &[(&str, Budget, i64, i64, i64, i64)] = &[
            ("minAvailable 2 of 5 healthy allows 3", Budget::MinAvailable(2), 5, 5, 2, 3),
            ("minAvailable 50% of 5 rounds up to 3", Budget::MinAvailablePercent(50), 5, 4, 3, 1),
            ("maxUnavailable 1 of 4 wants 3", Budget::MaxUnavailable(1), 4, 2, 3, 0),
            (
                "maxUnavailable 10% of 5 rounds up to 1",
                Budget::MaxUnavailablePercent(10),
                5,
                5,
                4,
                1,
            ),
            ("no expected pods allow nothing", Budget::MaxUnavailable(1), 0, 0, 0, 0),
        ];
        for (name, budget, expected, healthy, desired, allowed) in cases {
            let spec = PdbSpec {
                namespace: "ns",
                name: "b",
                app: "a",
                budget: *budget,
                expected: *expected,
                healthy: *healthy,
            };
            let v = pdb(&spec, NOW, 1, "u");
            assert_eq!(v["status"]["desiredHealthy"], *desired, "{name}");
            assert_eq!(v["status"]["disruptionsAllowed"], *allowed, "{name}");
        }
    }
}
