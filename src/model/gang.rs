//! Gangs: groups of pods placed all-or-nothing — at least `minMember` of a group run, or none of
//! its pending pods is placed.
//!
//! Input: the pods of the model, each with its [`GangRef`] (set by [`crate::snapshot`] from the
//! pod's label or annotation and the group's PodGroup). Output: [`GangIndex`], the gangs with
//! their pending members (indices into the pending pods) and bound members, and the map from
//! pending pod to gang that the batch solver reads.
//!
//! Two conventions are read, as their schedulers define them:
//! * **coscheduling** (kubernetes-sigs/scheduler-plugins, `pkg/coscheduling/core/core.go`): the
//!   pod label `scheduling.x-k8s.io/pod-group` names a `scheduling.x-k8s.io/v1alpha1` PodGroup
//!   in the pod's namespace (`apis/scheduling/v1alpha1/types.go`, `spec.minMember`). Permit lets
//!   the group's pods bind once `assigned + 1 >= minMember`, where `assigned`
//!   (`CalculateAssignedPods`) counts the group's pods already on nodes: bound members count
//!   toward `minMember`.
//! * **Volcano** (volcano-sh/volcano `pkg/scheduler/api/job_info.go`, `getJobID`): the pod
//!   annotation `scheduling.k8s.io/group-name` (`KubeGroupNameAnnotationKey` in volcano-sh/apis
//!   `pkg/apis/scheduling/v1beta1/labels.go`) names a `scheduling.volcano.sh/v1beta1` PodGroup
//!   in the pod's namespace. Its field is `spec.minMember` too (`minAvailable` belongs to
//!   Volcano's `batch.volcano.sh` Job, which copies it into the PodGroup's `minMember`). The
//!   gang plugin counts bound and running tasks toward it (`JobInfo.ReadyTaskNum`). Volcano's
//!   job controller also writes `scheduling.volcano.sh/group-name`, which the scheduler does not
//!   read; neither does kplace.
//!
//! An empty label or annotation value means no group (both schedulers test `len(name) != 0`).
//! A pod carrying both conventions belongs to its coscheduling group ([`gang_membership`];
//! the snapshot builder warns).
//!
//! A gang is satisfied by a plan when `placed pending members + bound members >= minMember`,
//! or when none of its pending members is placed. `minMember <= 1` is no constraint at all.

use std::collections::BTreeMap;
use std::fmt;

use super::{ClusterState, Labels, Pod};

/// The coscheduling pod label naming the pod's PodGroup (`v1alpha1.PodGroupLabel`).
pub const COSCHEDULING_POD_GROUP_LABEL: &str = "scheduling.x-k8s.io/pod-group";
/// The API version of coscheduling's PodGroup.
pub const COSCHEDULING_API_VERSION: &str = "scheduling.x-k8s.io/v1alpha1";
/// The pod annotation the Volcano scheduler reads to find the pod's PodGroup
/// (`v1beta1.KubeGroupNameAnnotationKey`).
pub const VOLCANO_GROUP_NAME_ANNOTATION: &str = "scheduling.k8s.io/group-name";
/// The annotation Volcano's job controller writes beside [`VOLCANO_GROUP_NAME_ANNOTATION`]
/// (`v1beta1.VolcanoGroupNameAnnotationKey`); the Volcano scheduler does not read it.
pub const VOLCANO_CONTROLLER_GROUP_NAME_ANNOTATION: &str = "scheduling.volcano.sh/group-name";
/// The API version of Volcano's PodGroup.
pub const VOLCANO_API_VERSION: &str = "scheduling.volcano.sh/v1beta1";

/// Which gang scheduler's convention a group follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GangConvention {
    /// kubernetes-sigs/scheduler-plugins coscheduling: label `scheduling.x-k8s.io/pod-group`,
    /// PodGroup `scheduling.x-k8s.io/v1alpha1`.
    Coscheduling,
    /// Volcano: annotation `scheduling.k8s.io/group-name`, PodGroup
    /// `scheduling.volcano.sh/v1beta1`.
    Volcano,
}

impl GangConvention {
    /// Both conventions, in precedence order.
    pub const ALL: [GangConvention; 2] = [GangConvention::Coscheduling, GangConvention::Volcano];

    /// `coscheduling` or `volcano`.
    pub fn as_str(self) -> &'static str {
        match self {
            GangConvention::Coscheduling => "coscheduling",
            GangConvention::Volcano => "volcano",
        }
    }

    /// The PodGroup's `apiVersion`.
    pub fn api_version(self) -> &'static str {
        match self {
            GangConvention::Coscheduling => COSCHEDULING_API_VERSION,
            GangConvention::Volcano => VOLCANO_API_VERSION,
        }
    }

    /// The PodGroup's API group (`scheduling.x-k8s.io`, `scheduling.volcano.sh`).
    pub fn api_group(self) -> &'static str {
        let v = self.api_version();
        v.split_once('/').map_or(v, |(group, _)| group)
    }

    /// The PodGroup kind qualified by its group, as `kubectl` names it
    /// (`PodGroup.scheduling.x-k8s.io`): the two conventions' PodGroups are different objects.
    pub fn pod_group_kind(self) -> String {
        format!("PodGroup.{}", self.api_group())
    }

    /// The pod label or annotation key naming the group.
    pub fn pod_key(self) -> &'static str {
        match self {
            GangConvention::Coscheduling => COSCHEDULING_POD_GROUP_LABEL,
            GangConvention::Volcano => VOLCANO_GROUP_NAME_ANNOTATION,
        }
    }

    /// `label` or `annotation`: where [`Self::pod_key`] is read.
    pub fn pod_key_kind(self) -> &'static str {
        match self {
            GangConvention::Coscheduling => "label",
            GangConvention::Volcano => "annotation",
        }
    }

    /// The group this convention names for a pod with these labels and annotations (`None`
    /// when the key is absent or empty).
    pub fn group_of<'a>(self, labels: &'a Labels, annotations: &'a Labels) -> Option<&'a str> {
        let map = match self {
            GangConvention::Coscheduling => labels,
            GangConvention::Volcano => annotations,
        };
        map.get(self.pod_key()).map(String::as_str).filter(|n| !n.is_empty())
    }
}

impl fmt::Display for GangConvention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The group a pod belongs to, given its labels and annotations: the coscheduling label wins
/// over the Volcano annotation when a pod carries both (kplace stands in for a kube-scheduler,
/// whose gang plugin is coscheduling). Returns the convention and group name.
pub fn gang_membership<'a>(
    labels: &'a Labels,
    annotations: &'a Labels,
) -> Option<(GangConvention, &'a str)> {
    GangConvention::ALL.into_iter().find_map(|c| c.group_of(labels, annotations).map(|n| (c, n)))
}

/// A pod's gang: which group, and the group's `minMember` as the snapshot resolved it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GangRef {
    /// The convention.
    pub convention: GangConvention,
    /// The group's name (the PodGroup's `metadata.name`, in the pod's namespace).
    pub name: String,
    /// The PodGroup's `spec.minMember` (≥ 0); when the snapshot has no PodGroup, the number of
    /// the group's pods in the model (pending and bound).
    pub min_member: i32,
}

/// A gang's identity: convention, namespace and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GangKey {
    /// The convention.
    pub convention: GangConvention,
    /// The namespace of the group (and of all its pods).
    pub namespace: String,
    /// The group's name.
    pub name: String,
}

impl fmt::Display for GangKey {
    /// `ml/train (coscheduling)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{} ({})", self.namespace, self.name, self.convention)
    }
}

impl Pod {
    /// The key of the pod's gang, if it belongs to one.
    pub fn gang_key(&self) -> Option<GangKey> {
        self.gang.as_ref().map(|g| GangKey {
            convention: g.convention,
            namespace: self.namespace.clone(),
            name: g.name.clone(),
        })
    }
}

/// One gang of the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gang {
    /// Identity.
    pub key: GangKey,
    /// `minMember` (the largest of its members' [`GangRef::min_member`], which the snapshot
    /// builder makes equal).
    pub min_member: i32,
    /// Indices of its pending pods in the pending slice, ascending.
    pub pending: Vec<usize>,
    /// Its pods already bound to a node (not terminal); they count toward `minMember`.
    pub bound: usize,
}

impl Gang {
    /// How many pending members must be placed for the gang to be satisfied:
    /// `max(0, minMember - bound)`. A plan places either none of the pending members or at
    /// least this many.
    pub fn needed_from_pending(&self) -> usize {
        usize::try_from(i64::from(self.min_member) - self.bound as i64).unwrap_or(0)
    }

    /// Whether the gang has enough pending members to be satisfied at all
    /// (`pending >= needed_from_pending`); if not, none of them can be placed.
    pub fn is_satisfiable(&self) -> bool {
        self.pending.len() >= self.needed_from_pending()
    }

    /// Whether placing `placed` of the pending members satisfies the gang: zero, or enough.
    pub fn accepts(&self, placed: usize) -> bool {
        placed == 0 || placed >= self.needed_from_pending()
    }
}

/// The gangs of a cluster and its pending pods, for the batch solver.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GangIndex {
    /// Every gang with at least one pod in the model, sorted by key; a gang's index is its
    /// position here.
    pub gangs: Vec<Gang>,
    /// For each pending pod (same indices as the pending slice), the index of its gang.
    pub of_pending: Vec<Option<usize>>,
}

impl GangIndex {
    /// Collects the gangs of `pending` and of the pods bound on `state`'s nodes (terminal pods
    /// are left out, as the scheduler cache leaves them out). Pure and deterministic.
    pub fn new(state: &ClusterState, pending: &[Pod]) -> GangIndex {
        fn entry<'m>(by_key: &'m mut BTreeMap<GangKey, Gang>, pod: &Pod) -> Option<&'m mut Gang> {
            let key = pod.gang_key()?;
            let min = pod.gang.as_ref().map_or(0, |g| g.min_member);
            let gang = by_key.entry(key.clone()).or_insert_with(|| Gang {
                key,
                min_member: min,
                pending: Vec::new(),
                bound: 0,
            });
            gang.min_member = gang.min_member.max(min);
            Some(gang)
        }
        let mut by_key: BTreeMap<GangKey, Gang> = BTreeMap::new();
        for node in &state.nodes {
            for pod in node.pods.iter().filter(|p| !p.is_terminal()) {
                if let Some(gang) = entry(&mut by_key, pod) {
                    gang.bound += 1;
                }
            }
        }
        for (i, pod) in pending.iter().enumerate() {
            if let Some(gang) = entry(&mut by_key, pod) {
                gang.pending.push(i);
            }
        }
        let gangs: Vec<Gang> = by_key.into_values().collect();
        let mut of_pending = vec![None; pending.len()];
        for (g, gang) in gangs.iter().enumerate() {
            for &i in &gang.pending {
                if let Some(slot) = of_pending.get_mut(i) {
                    *slot = Some(g);
                }
            }
        }
        GangIndex { gangs, of_pending }
    }

    /// The gang of pending pod `i`, if any.
    pub fn gang_of(&self, i: usize) -> Option<&Gang> {
        self.of_pending.get(i).copied().flatten().and_then(|g| self.gangs.get(g))
    }

    /// Whether there is no gang at all.
    pub fn is_empty(&self) -> bool {
        self.gangs.is_empty()
    }
}

/// For each pending pod, the index of its gang in [`GangIndex::new`]'s `gangs` (shorthand for
/// `GangIndex::new(state, pending).of_pending`).
pub fn gang_of_pending(state: &ClusterState, pending: &[Pod]) -> Vec<Option<usize>> {
    GangIndex::new(state, pending).of_pending
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::testing::{NodeBuilder, PodBuilder, cluster};

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs.iter().map(|(k, v)| ((*k).to_string(), (*v).to_string())).collect()
    }

    #[test]
    fn membership_follows_each_schedulers_key() {
        /// (case, labels, annotations, membership).
        type Case<'a> = (&'a str, Labels, Labels, Option<(GangConvention, &'a str)>);
        let cases: &[Case<'_>] = &[
            (
                "the coscheduling label names a coscheduling group",
                labels(&[(COSCHEDULING_POD_GROUP_LABEL, "a")]),
                labels(&[]),
                Some((GangConvention::Coscheduling, "a")),
            ),
            (
                "the volcano scheduler's annotation names a volcano group",
                labels(&[]),
                labels(&[(VOLCANO_GROUP_NAME_ANNOTATION, "b")]),
                Some((GangConvention::Volcano, "b")),
            ),
            (
                "the coscheduling label wins over the volcano annotation",
                labels(&[(COSCHEDULING_POD_GROUP_LABEL, "a")]),
                labels(&[(VOLCANO_GROUP_NAME_ANNOTATION, "b")]),
                Some((GangConvention::Coscheduling, "a")),
            ),
            (
                "an empty label value means no group, so the annotation applies",
                labels(&[(COSCHEDULING_POD_GROUP_LABEL, "")]),
                labels(&[(VOLCANO_GROUP_NAME_ANNOTATION, "b")]),
                Some((GangConvention::Volcano, "b")),
            ),
            (
                "the coscheduling key as an annotation is not read",
                labels(&[]),
                labels(&[(COSCHEDULING_POD_GROUP_LABEL, "a")]),
                None,
            ),
            (
                "the volcano key as a label is not read",
                labels(&[(VOLCANO_GROUP_NAME_ANNOTATION, "b")]),
                labels(&[]),
                None,
            ),
            (
                "the volcano controller's own annotation is not read by the scheduler",
                labels(&[]),
                labels(&[(VOLCANO_CONTROLLER_GROUP_NAME_ANNOTATION, "b")]),
                None,
            ),
        ];
        for (name, l, a, want) in cases {
            assert_eq!(gang_membership(l, a), *want, "{name}");
        }
    }

    fn member(name: &str, group: &str, convention: GangConvention, min: i32) -> PodBuilder {
        PodBuilder::new("ml", name).gang(convention, group, min)
    }

    #[test]
    fn the_index_counts_pending_and_bound_members_per_gang() {
        use GangConvention::{Coscheduling as C, Volcano as V};
        let state = cluster(
            vec![NodeBuilder::new("n1").obj()],
            vec![
                member("b0", "train", C, 4).node("n1").obj(),
                member("done", "train", C, 4)
                    .node("n1")
                    .phase(crate::model::PodPhase::Succeeded)
                    .obj(),
            ],
        );
        let pending = vec![
            member("p0", "train", C, 4).obj(),
            PodBuilder::new("ml", "solo").obj(),
            member("p1", "train", V, 2).obj(), // same name, other convention: another gang
            member("p2", "train", C, 4).obj(),
        ];
        let index = GangIndex::new(&state, &pending);
        assert_eq!(index.gangs.len(), 2);
        let cosched = &index.gangs[0];
        assert_eq!(cosched.key.convention, C);
        assert_eq!((cosched.pending.as_slice(), cosched.bound), (&[0, 3][..], 1));
        assert_eq!(cosched.needed_from_pending(), 3, "minMember 4 less one bound member");
        assert!(!cosched.is_satisfiable(), "two pending members cannot make up three");
        assert_eq!(index.gangs[1].key.convention, V);
        assert_eq!(index.of_pending, vec![Some(0), None, Some(1), Some(0)]);
        assert_eq!(gang_of_pending(&state, &pending), index.of_pending);
        assert_eq!(index.gang_of(2).map(|g| g.min_member), Some(2));
        assert!(index.gang_of(1).is_none());
    }

    #[test]
    fn needed_from_pending_never_goes_below_zero() {
        /// (case, minMember, bound, needed, [(placed, accepted)]).
        type Case<'a> = (&'a str, i32, usize, usize, &'a [(usize, bool)]);
        let cases: &[Case<'_>] = &[
            (
                "a gang without bound members needs minMember",
                3,
                0,
                3,
                &[(0, true), (2, false), (3, true)],
            ),
            ("bound members count toward minMember", 3, 2, 1, &[(0, true), (1, true)]),
            ("a gang already at minMember needs nothing more", 2, 5, 0, &[(0, true), (1, true)]),
            ("minMember 0 is no constraint", 0, 0, 0, &[(0, true), (1, true)]),
        ];
        for (name, min, bound, needed, accepts) in cases {
            let gang = Gang {
                key: GangKey {
                    convention: GangConvention::Coscheduling,
                    namespace: "ml".into(),
                    name: "g".into(),
                },
                min_member: *min,
                pending: vec![0, 1, 2],
                bound: *bound,
            };
            assert_eq!(gang.needed_from_pending(), *needed, "{name}");
            for (placed, ok) in *accepts {
                assert_eq!(gang.accepts(*placed), *ok, "{name}: {placed} placed");
            }
        }
    }
}
