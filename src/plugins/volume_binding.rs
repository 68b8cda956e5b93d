//! The claim checks of VolumeBinding's and VolumeRestrictions' PreFilters: a pod whose
//! PersistentVolumeClaims are missing, lost, being deleted, not its own (generic ephemeral
//! volumes) or unbound with immediate binding is rejected on every node.
//!
//! Input: the pod's [`PodClaim`]s and the cluster's [`Claims`]. Output: a PreFilter result —
//! `Skip` when the pod uses no claim (VolumeBinding) or nothing is left to check
//! (VolumeRestrictions), `UnschedulableAndUnresolvable` with upstream's message, or success.
//!
//! Upstream (v1.35): `pkg/scheduler/framework/plugins/volumebinding/volume_binding.go`
//! (`podHasPVCs`, `PreFilter`), `binder.go` (`GetPodVolumeClaims`, `isPVCFullyBound`),
//! `component-helpers/storage/ephemeral` (`VolumeClaimName`, `VolumeIsForPod`) and
//! `volumerestrictions/volume_restrictions.go` (`readWriteOncePodPVCsForPod`: the first
//! `persistentVolumeClaim` volume whose claim is missing). Not modelled, as kplace reads no
//! PersistentVolumes or StorageClasses: the Filter halves (PV node affinity, matching and
//! provisioning unbound claims, ReadWriteOncePod conflicts, disk conflicts). An unbound claim
//! that names a storage class is taken as `WaitForFirstConsumer` (its binding mode lives in the
//! StorageClass); one without a class, or pre-bound to a volume, binds immediately.

use crate::framework::profile::PluginName;
use crate::framework::{Code, Status};
use crate::model::{Claims, ClusterState, Pod, PodClaim};

/// VolumeBinding's reason when an immediate-binding claim is not bound yet.
pub const ERR_UNBOUND_IMMEDIATE: &str = "pod has unbound immediate PersistentVolumeClaims";

/// The VolumeBinding plugin (its PreFilter). It has no arguments kplace reads.
#[derive(Debug, Clone, Copy, Default)]
pub struct VolumeBinding;

/// The VolumeRestrictions plugin (the claim lookup of its PreFilter).
#[derive(Debug, Clone, Copy, Default)]
pub struct VolumeRestrictions;

fn unresolvable(message: String, plugin: &'static str) -> Status {
    Status::new(Code::UnschedulableAndUnresolvable, [message]).with_plugin(plugin)
}

/// Why the pod's claims fail `podHasPVCs`, checked volume by volume in order: missing, lost,
/// being deleted, an ephemeral claim the pod does not control.
fn claim_problem(pod: &Pod, claims: &Claims) -> Option<String> {
    for PodClaim { claim: name, ephemeral } in &pod.claims {
        let Some(claim) = claims.get(&pod.namespace, name) else {
            return Some(if *ephemeral {
                format!(
                    "waiting for ephemeral volume controller to create the persistentvolumeclaim {name:?}"
                )
            } else {
                format!("persistentvolumeclaim {name:?} not found")
            });
        };
        if claim.lost {
            return Some(format!(
                "persistentvolumeclaim {name:?} bound to non-existent persistentvolume {:?}",
                claim.volume_name
            ));
        }
        if claim.deleting {
            return Some(format!("persistentvolumeclaim {name:?} is being deleted"));
        }
        // `metav1.IsControlledBy`: the controller reference's uid is the pod's.
        let owned = claim.controller_uid.as_deref().is_some_and(|u| u == pod.uid);
        if *ephemeral && !owned {
            let ns = &pod.namespace;
            return Some(format!(
                "PVC {ns}/{name} was not created for pod {ns}/{} (pod is not owner)",
                pod.name
            ));
        }
    }
    None
}

impl VolumeBinding {
    /// The plugin name used in profiles and statuses.
    pub const NAME: &str = "VolumeBinding";

    /// The plugin.
    pub fn new() -> Self {
        VolumeBinding
    }

    /// PreFilter: `Skip` for a pod without claims; every claim must exist, be neither lost
    /// nor being deleted, be the pod's own when ephemeral, and be bound unless its binding
    /// waits for the first consumer.
    pub fn pre_filter(&self, pod: &Pod, cluster: &ClusterState) -> Result<(), Status> {
        if pod.claims.is_empty() {
            return Err(Status::skip());
        }
        if let Some(message) = claim_problem(pod, &cluster.claims) {
            return Err(unresolvable(message, Self::NAME));
        }
        let immediate_unbound = pod.claims.iter().any(|c| {
            cluster.claims.get(&pod.namespace, &c.claim).is_some_and(|claim| {
                // Pre-bound claims count as immediate, whatever their class.
                !claim.fully_bound()
                    && (!claim.volume_name.is_empty() || claim.storage_class.is_empty())
            })
        });
        if immediate_unbound {
            return Err(unresolvable(ERR_UNBOUND_IMMEDIATE.to_string(), Self::NAME));
        }
        Ok(())
    }
}

impl VolumeRestrictions {
    /// The plugin name used in profiles and statuses.
    pub const NAME: &str = "VolumeRestrictions";

    /// The plugin.
    pub fn new() -> Self {
        VolumeRestrictions
    }

    /// PreFilter: the first `persistentVolumeClaim` volume whose claim is missing rejects the
    /// pod; otherwise `Skip` (the ReadWriteOncePod and disk conflict checks are not modelled).
    pub fn pre_filter(&self, pod: &Pod, cluster: &ClusterState) -> Result<(), Status> {
        for c in pod.claims.iter().filter(|c| !c.ephemeral) {
            if cluster.claims.get(&pod.namespace, &c.claim).is_none() {
                let message = format!("persistentvolumeclaim {:?} not found", c.claim);
                return Err(unresolvable(message, Self::NAME));
            }
        }
        Err(Status::skip())
    }
}

/// The claim checks of a profile's PreFilter plugins (`pre_filter`, in the profile's order):
/// the first rejection, as the framework runtime would meet it. Both end PreFilter at once
/// (`UnschedulableAndUnresolvable`), so no other plugin's order matters among them.
pub fn claims_rejection(
    pre_filter: &[PluginName],
    pod: &Pod,
    cluster: &ClusterState,
) -> Option<Status> {
    if pod.claims.is_empty() {
        return None;
    }
    pre_filter.iter().find_map(|p| {
        let result = match p {
            PluginName::VolumeRestrictions => VolumeRestrictions::new().pre_filter(pod, cluster),
            PluginName::VolumeBinding => VolumeBinding::new().pre_filter(pod, cluster),
            _ => return None,
        };
        result.err().filter(|s| s.code != Code::Skip)
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::model::Claim;
    use crate::model::testing::PodBuilder;

    fn pod(volumes: &[(&str, bool)]) -> Pod {
        let mut p = PodBuilder::new("ns", "web-0").obj();
        p.uid = "uid-web-0".to_string();
        p.claims = volumes
            .iter()
            .map(|(c, e)| PodClaim { claim: (*c).to_string(), ephemeral: *e })
            .collect();
        p.has_pvc = !p.claims.is_empty();
        p
    }

    fn bound() -> Claim {
        Claim { volume_name: "pv-1".into(), bind_completed: true, ..Claim::default() }
    }

    fn cluster(claims: &[(&str, Claim)]) -> ClusterState {
        let mut c = Claims::default();
        for (name, claim) in claims {
            c.insert("ns", name, claim.clone());
        }
        ClusterState { claims: Arc::new(c), ..ClusterState::default() }
    }

    #[test]
    fn pre_filters_reject_pods_whose_claims_cannot_be_used_with_upstreams_messages() {
        let owned = Claim { controller_uid: Some("uid-web-0".into()), ..bound() };
        let other_owner = Claim { controller_uid: Some("uid-other".into()), ..bound() };
        let lost = Claim { lost: true, ..bound() };
        let deleting = Claim { deleting: true, ..bound() };
        let no_class = Claim::default();
        let waiting = Claim { storage_class: "standard".into(), ..Claim::default() };
        let prebound =
            Claim { volume_name: "pv-2".into(), storage_class: "x".into(), ..Claim::default() };
        // (case, pod's claims, cluster's claims, VolumeBinding's verdict, VolumeRestrictions')
        // where `None` is success for VolumeBinding and Skip for VolumeRestrictions.
        type Case<'a> = (
            &'a str,
            Vec<(&'a str, bool)>,
            Vec<(&'a str, Claim)>,
            Option<&'a str>,
            Option<&'a str>,
        );
        let cases: Vec<Case> = vec![
            ("a pod without claims skips", vec![], vec![], Some("skip"), None),
            ("a bound claim passes", vec![("data", false)], vec![("data", bound())], None, None),
            (
                "a missing claim is not found by both plugins",
                vec![("data", false)],
                vec![],
                Some("persistentvolumeclaim \"data\" not found"),
                Some("persistentvolumeclaim \"data\" not found"),
            ),
            (
                "a missing ephemeral claim waits for its controller",
                vec![("web-0-scratch", true)],
                vec![],
                Some(
                    "waiting for ephemeral volume controller to create the persistentvolumeclaim \"web-0-scratch\"",
                ),
                None,
            ),
            (
                "a lost claim names its missing volume",
                vec![("data", false)],
                vec![("data", lost)],
                Some(
                    "persistentvolumeclaim \"data\" bound to non-existent persistentvolume \"pv-1\"",
                ),
                None,
            ),
            (
                "a claim being deleted is refused",
                vec![("data", false)],
                vec![("data", deleting)],
                Some("persistentvolumeclaim \"data\" is being deleted"),
                None,
            ),
            (
                "an ephemeral claim the pod controls passes",
                vec![("web-0-s", true)],
                vec![("web-0-s", owned)],
                None,
                None,
            ),
            (
                "an ephemeral claim of another owner is refused",
                vec![("web-0-s", true)],
                vec![("web-0-s", other_owner)],
                Some("PVC ns/web-0-s was not created for pod ns/web-0 (pod is not owner)"),
                None,
            ),
            (
                "an unbound claim without a class binds immediately, so the pod waits",
                vec![("data", false)],
                vec![("data", no_class)],
                Some(ERR_UNBOUND_IMMEDIATE),
                None,
            ),
            (
                "an unbound claim with a class waits for its first consumer",
                vec![("data", false)],
                vec![("data", waiting)],
                None,
                None,
            ),
            (
                "a claim pre-bound to a volume without bind-completed is immediate",
                vec![("data", false)],
                vec![("data", prebound)],
                Some(ERR_UNBOUND_IMMEDIATE),
                None,
            ),
            (
                "the first problem in volume order is reported",
                vec![("gone", false), ("data", false)],
                vec![("data", Claim { lost: true, ..bound() })],
                Some("persistentvolumeclaim \"gone\" not found"),
                Some("persistentvolumeclaim \"gone\" not found"),
            ),
            (
                "VolumeRestrictions reports a missing claim after a missing ephemeral one",
                vec![("web-0-s", true), ("gone", false)],
                vec![],
                Some(
                    "waiting for ephemeral volume controller to create the persistentvolumeclaim \"web-0-s\"",
                ),
                Some("persistentvolumeclaim \"gone\" not found"),
            ),
        ];
        for (name, volumes, claims, binding, restrictions) in cases {
            let (p, c) = (pod(&volumes), cluster(&claims));
            let got = VolumeBinding::new().pre_filter(&p, &c);
            match binding {
                None => assert!(got.is_ok(), "{name}: {got:?}"),
                Some("skip") => assert_eq!(got.unwrap_err().code, Code::Skip, "{name}"),
                Some(msg) => {
                    let s = got.unwrap_err();
                    assert_eq!(s.code, Code::UnschedulableAndUnresolvable, "{name}");
                    assert_eq!(s.reasons, vec![msg.to_string()], "{name}");
                    assert_eq!(s.plugin, Some(VolumeBinding::NAME), "{name}");
                }
            }
            let got = VolumeRestrictions::new().pre_filter(&p, &c).unwrap_err();
            match restrictions {
                None => assert_eq!(got.code, Code::Skip, "{name}"),
                Some(msg) => {
                    assert_eq!(got.code, Code::UnschedulableAndUnresolvable, "{name}");
                    assert_eq!(got.reasons, vec![msg.to_string()], "{name}");
                    assert_eq!(got.plugin, Some(VolumeRestrictions::NAME), "{name}");
                }
            }
        }
    }
}
