//! Which running pods may be evicted: descheduler's DefaultEvictor `Filter`, with its deprecated
//! boolean arguments (the flags of `kplace rebalance`).
//!
//! Input: a pod and [`EvictorOptions`]; output: `Ok` when the pod may be evicted, else the
//! reasons, worded as descheduler words them. Upstream: kubernetes-sigs/descheduler
//! `pkg/framework/plugins/defaultevictor/defaultevictor.go` (`Filter`,
//! `legacyGetPodProtections`, the `apply*Protection` constraints) and `pkg/utils/pod.go`
//! (`IsMirrorPod`, `IsStaticPod`, `IsCriticalPriorityPod`, `IsDaemonsetPod`,
//! `IsPodWithLocalStorage`, `IsPodWithPVC`), read at the repository's head (2026-06).
//!
//! With the defaults (`evictLocalStoragePods`, `evictDaemonSetPods`, `evictSystemCriticalPods`,
//! `evictFailedBarePods` false; `ignorePvcPods` false) a pod is not evictable when it is a
//! mirror pod, a static pod, terminating, has no owner reference, is owned by a DaemonSet, has
//! local storage (`emptyDir` or `hostPath`), or has a priority of at least
//! `SystemCriticalPriority` (2 000 000 000); with `ignorePvcPods`, also when it mounts a
//! PersistentVolumeClaim. The `descheduler.alpha.kubernetes.io/evict` annotation makes any pod
//! evictable. kplace's model keeps only the controlling owner reference, so a pod whose only
//! owner references are not controllers counts as having none (stricter than descheduler).

use crate::model::Pod;

/// `v1.MirrorPodAnnotationKey`.
pub const MIRROR_POD_ANNOTATION: &str = "kubernetes.io/config.mirror";
/// The kubelet's pod source annotation (`api` for pods from the API server).
pub const CONFIG_SOURCE_ANNOTATION: &str = "kubernetes.io/config.source";
/// descheduler's annotation that makes a pod evictable whatever else holds.
pub const EVICT_ANNOTATION: &str = "descheduler.alpha.kubernetes.io/evict";
/// descheduler's `utils.SystemCriticalPriority`.
pub const SYSTEM_CRITICAL_PRIORITY: i32 = 2_000_000_000;

/// The DefaultEvictor's deprecated boolean arguments, under their descheduler names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EvictorOptions {
    /// `evictLocalStoragePods`: pods with `emptyDir`/`hostPath` volumes may be evicted.
    pub evict_local_storage_pods: bool,
    /// `evictDaemonSetPods`: DaemonSet pods may be evicted.
    pub evict_daemonset_pods: bool,
    /// `evictSystemCriticalPods`: pods with system-critical priority may be evicted.
    pub evict_system_critical_pods: bool,
    /// `ignorePvcPods`: pods with PersistentVolumeClaims are not evicted.
    pub ignore_pvc_pods: bool,
}

/// Whether the pod is a mirror pod (upstream `IsMirrorPod`).
pub fn is_mirror(pod: &Pod) -> bool {
    pod.annotations.contains_key(MIRROR_POD_ANNOTATION)
}

/// Whether the pod is a static pod (upstream `IsStaticPod`: a source annotation other than `api`).
pub fn is_static(pod: &Pod) -> bool {
    pod.annotations.get(CONFIG_SOURCE_ANNOTATION).is_some_and(|s| s != "api")
}

/// Whether a DaemonSet owns the pod (upstream `IsDaemonsetPod`).
pub fn is_daemonset(pod: &Pod) -> bool {
    pod.owner.as_ref().is_some_and(|o| o.kind == "DaemonSet")
}

/// Whether the pod belongs to its node: a DaemonSet, mirror or static pod. Such pods are never
/// moved, and a node whose other pods are gone counts as empty (they go away with the node).
pub fn is_node_daemon(pod: &Pod) -> bool {
    is_daemonset(pod) || is_mirror(pod) || is_static(pod)
}

/// descheduler's DefaultEvictor `Filter`: `Ok` when the pod may be evicted, else every reason
/// it may not, in descheduler's words.
pub fn filter(pod: &Pod, options: &EvictorOptions) -> Result<(), Vec<&'static str>> {
    if pod.annotations.contains_key(EVICT_ANNOTATION) {
        return Ok(());
    }
    let mut errs = Vec::new();
    if is_mirror(pod) {
        errs.push("pod is a mirror pod");
    }
    if is_static(pod) {
        errs.push("pod is a static pod");
    }
    if pod.terminating {
        errs.push("pod is terminating");
    }
    // Constraints, in the order descheduler adds them.
    if !options.evict_system_critical_pods && pod.priority >= SYSTEM_CRITICAL_PRIORITY {
        errs.push("pod has system critical priority and is protected against eviction");
    }
    // FailedBarePods protection (evictFailedBarePods is not offered: always on).
    if pod.owner.is_none() {
        errs.push("pod does not have any ownerRefs");
    }
    if !options.evict_local_storage_pods && pod.has_local_storage {
        errs.push("pod has local storage and is protected against eviction");
    }
    if !options.evict_daemonset_pods && is_daemonset(pod) {
        errs.push("daemonset pods are protected against eviction");
    }
    if options.ignore_pvc_pods && pod.has_pvc {
        errs.push("pod with PVC is protected against eviction");
    }
    if errs.is_empty() { Ok(()) } else { Err(errs) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::OwnerRef;
    use crate::model::testing::PodBuilder;

    fn owned(kind: &str) -> Pod {
        let mut p = PodBuilder::new("ns", "p").node("n1").obj();
        p.owner = Some(OwnerRef { kind: kind.to_string(), name: "o".into(), uid: "u".into() });
        p
    }

    #[test]
    fn the_default_evictor_protects_what_descheduler_protects() {
        let defaults = EvictorOptions::default();
        let mut local = owned("ReplicaSet");
        local.has_local_storage = true;
        let mut pvc = owned("ReplicaSet");
        pvc.has_pvc = true;
        let mut critical = owned("ReplicaSet");
        critical.priority = SYSTEM_CRITICAL_PRIORITY;
        let mut mirror = owned("Node");
        mirror.annotations.insert(MIRROR_POD_ANNOTATION.into(), "x".into());
        let mut static_pod = owned("Node");
        static_pod.annotations.insert(CONFIG_SOURCE_ANNOTATION.into(), "file".into());
        let mut api_source = owned("ReplicaSet");
        api_source.annotations.insert(CONFIG_SOURCE_ANNOTATION.into(), "api".into());
        let mut terminating = owned("ReplicaSet");
        terminating.terminating = true;
        let mut annotated = PodBuilder::new("ns", "bare").node("n1").obj();
        annotated.annotations.insert(EVICT_ANNOTATION.into(), String::new());
        let bare = PodBuilder::new("ns", "bare").node("n1").obj();
        let replica = owned("ReplicaSet");
        let ds = owned("DaemonSet");
        let all = EvictorOptions {
            evict_local_storage_pods: true,
            evict_daemonset_pods: true,
            evict_system_critical_pods: true,
            ignore_pvc_pods: false,
        };
        let ignore_pvc = EvictorOptions { ignore_pvc_pods: true, ..defaults };
        let cases: Vec<(&str, &Pod, EvictorOptions, bool)> = vec![
            ("a ReplicaSet pod is evictable", &replica, defaults, true),
            ("a pod without owner references is not", &bare, defaults, false),
            ("the evict annotation makes a bare pod evictable", &annotated, defaults, true),
            ("a DaemonSet pod is not by default", &ds, defaults, false),
            ("a DaemonSet pod is with evictDaemonSetPods", &ds, all, true),
            ("an emptyDir pod is not by default", &local, defaults, false),
            ("an emptyDir pod is with evictLocalStoragePods", &local, all, true),
            ("a system-critical pod is not by default", &critical, defaults, false),
            ("a system-critical pod is with evictSystemCriticalPods", &critical, all, true),
            ("a PVC pod is evictable by default", &pvc, defaults, true),
            ("a PVC pod is not with ignorePvcPods", &pvc, ignore_pvc, false),
            ("a mirror pod never is", &mirror, all, false),
            ("a static pod never is", &static_pod, all, false),
            ("a pod from the api source is", &api_source, defaults, true),
            ("a terminating pod never is", &terminating, all, false),
        ];
        for (name, pod, options, want) in cases {
            assert_eq!(filter(pod, &options).is_ok(), want, "{name}: {:?}", filter(pod, &options));
        }
    }
}
