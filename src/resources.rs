//! Resource accounting exactly as kube-scheduler computes it.
//!
//! Input: a `v1.PodSpec` / `v1.NodeStatus`; output: [`Resource`] amounts in integer units
//! (millicores for CPU, bytes for memory and storage, counts otherwise).
//! Counterparts (v1.35): `pkg/scheduler/framework/types.go` (`Resource`, `NewResource`),
//! `k8s.io/component-helpers/resource/helpers.go` (`PodRequests`), and
//! `pkg/scheduler/util/pod_resources.go` (non-zero defaults).

use std::collections::BTreeMap;

/// The CPU request assumed for a container that requests none, when scoring (millicores).
pub const DEFAULT_MILLI_CPU_REQUEST: i64 = 100;
/// The memory request assumed for a container that requests none, when scoring (bytes, 200 MB).
pub const DEFAULT_MEMORY_REQUEST: i64 = 200 * 1024 * 1024;

/// `cpu`.
pub const CPU: &str = "cpu";
/// `memory`.
pub const MEMORY: &str = "memory";
/// `ephemeral-storage`.
pub const EPHEMERAL_STORAGE: &str = "ephemeral-storage";
/// `pods`.
pub const PODS: &str = "pods";

/// Amounts of every resource kind (upstream `framework.Resource`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash, PartialOrd, Ord)]
pub struct Resource {
    /// CPU in millicores.
    pub milli_cpu: i64,
    /// Memory in bytes.
    pub memory: i64,
    /// Ephemeral storage in bytes.
    pub ephemeral_storage: i64,
    /// Pod count (only meaningful for node allocatable).
    pub allowed_pod_number: i64,
    /// Extended and hugepages resources by name, in their integer units.
    pub scalar: BTreeMap<String, i64>,
}

impl Resource {
    /// Adds `other` to `self`, resource by resource.
    pub fn add(&mut self, other: &Resource) {
        self.milli_cpu += other.milli_cpu;
        self.memory += other.memory;
        self.ephemeral_storage += other.ephemeral_storage;
        self.allowed_pod_number += other.allowed_pod_number;
        for (name, v) in &other.scalar {
            *self.scalar.entry(name.clone()).or_insert(0) += v;
        }
    }

    /// Subtracts `other` from `self`, resource by resource.
    pub fn sub(&mut self, other: &Resource) {
        self.milli_cpu -= other.milli_cpu;
        self.memory -= other.memory;
        self.ephemeral_storage -= other.ephemeral_storage;
        self.allowed_pod_number -= other.allowed_pod_number;
        for (name, v) in &other.scalar {
            *self.scalar.entry(name.clone()).or_insert(0) -= v;
        }
    }

    /// The amount of a resource by its API name (`cpu` in millicores, others in base units).
    pub fn get(&self, name: &str) -> i64 {
        match name {
            CPU => self.milli_cpu,
            MEMORY => self.memory,
            EPHEMERAL_STORAGE => self.ephemeral_storage,
            PODS => self.allowed_pod_number,
            _ => self.scalar.get(name).copied().unwrap_or(0),
        }
    }

    /// Sets the amount of a resource by its API name.
    pub fn set(&mut self, name: &str, value: i64) {
        match name {
            CPU => self.milli_cpu = value,
            MEMORY => self.memory = value,
            EPHEMERAL_STORAGE => self.ephemeral_storage = value,
            PODS => self.allowed_pod_number = value,
            _ => {
                self.scalar.insert(name.to_string(), value);
            }
        }
    }

    /// Names of every resource with a non-zero amount, in a stable order: cpu, memory,
    /// ephemeral-storage, pods, then scalar resources by name.
    pub fn names(&self) -> Vec<&str> {
        let mut out = Vec::new();
        for (name, v) in [
            (CPU, self.milli_cpu),
            (MEMORY, self.memory),
            (EPHEMERAL_STORAGE, self.ephemeral_storage),
            (PODS, self.allowed_pod_number),
        ] {
            if v != 0 {
                out.push(name);
            }
        }
        out.extend(self.scalar.iter().filter(|(_, v)| **v != 0).map(|(k, _)| k.as_str()));
        out
    }
}
