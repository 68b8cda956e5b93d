//! PersistentVolumeClaims as the volume plugins' PreFilters read them, and the claims a pod's
//! volumes use.
//!
//! Input: `v1.PersistentVolumeClaim`s (converted by [`crate::snapshot`]) and a pod's
//! `spec.volumes`; output: [`Claims`] (in [`super::ClusterState`]) and [`PodClaim`]s (in
//! [`super::Pod`]). Counterpart: what `VolumeBinding` and `VolumeRestrictions` read through the
//! PVC lister (`pkg/scheduler/framework/plugins/volumebinding`, `volumerestrictions`, v1.35).
//! PersistentVolumes and StorageClasses are not read (see ARCHITECTURE.md, "Volumes").

use std::collections::BTreeMap;

/// `pv.kubernetes.io/bind-completed`: the PV controller finished binding the claim
/// (upstream `volume.AnnBindCompleted`).
pub const ANN_BIND_COMPLETED: &str = "pv.kubernetes.io/bind-completed";

/// `volume.beta.kubernetes.io/storage-class`, read before `spec.storageClassName`
/// (upstream `GetPersistentVolumeClaimClass`).
pub const ANN_BETA_STORAGE_CLASS: &str = "volume.beta.kubernetes.io/storage-class";

/// One PersistentVolumeClaim, reduced to what the PreFilters read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Claim {
    /// `spec.volumeName` (empty when unbound).
    pub volume_name: String,
    /// Whether the claim carries [`ANN_BIND_COMPLETED`].
    pub bind_completed: bool,
    /// The storage class: the beta annotation, else `spec.storageClassName`, else empty.
    pub storage_class: String,
    /// `status.phase == Lost`.
    pub lost: bool,
    /// Whether `metadata.deletionTimestamp` is set.
    pub deleting: bool,
    /// The uid of the controlling owner reference, if any.
    pub controller_uid: Option<String>,
    /// Whether `spec.accessModes` holds `ReadWriteOncePod`.
    pub read_write_once_pod: bool,
}

impl Claim {
    /// Fully bound: a volume name and the bind-completed annotation (upstream
    /// `isPVCFullyBound`).
    pub fn fully_bound(&self) -> bool {
        !self.volume_name.is_empty() && self.bind_completed
    }
}

/// The snapshot's claims by namespace and name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Claims {
    by_key: BTreeMap<(String, String), Claim>,
}

impl Claims {
    /// Adds (or replaces) the claim `namespace/name`.
    pub fn insert(&mut self, namespace: &str, name: &str, claim: Claim) {
        self.by_key.insert((namespace.to_string(), name.to_string()), claim);
    }

    /// The claim `namespace/name`.
    pub fn get(&self, namespace: &str, name: &str) -> Option<&Claim> {
        // A borrowed tuple key cannot be looked up without allocating; claims are few per pod.
        self.by_key.get(&(namespace.to_string(), name.to_string()))
    }

    /// Number of claims.
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }
}

/// A volume of a pod backed by a claim, in `spec.volumes` order.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PodClaim {
    /// The claim's name: `persistentVolumeClaim.claimName`, or `<pod>-<volume>` for a generic
    /// ephemeral volume (upstream `ephemeral.VolumeClaimName`).
    pub claim: String,
    /// Whether the volume is a generic ephemeral volume (its claim must be controlled by the
    /// pod).
    pub ephemeral: bool,
}
