//! PodGroups, the gang objects of the coscheduling plugin and of Volcano: custom resources that
//! k8s-openapi does not know, read with kplace's own small serde types.
//!
//! Input: a PodGroup document (`serde_json::Value`); output: [`PodGroup`], reduced to what
//! gang placement reads (the group's identity and `spec.minMember`).
//!
//! Upstream types: kubernetes-sigs/scheduler-plugins `apis/scheduling/v1alpha1/types.go`
//! (`scheduling.x-k8s.io/v1alpha1`, `PodGroupSpec{MinMember int32, MinResources,
//! ScheduleTimeoutSeconds}`) and volcano-sh/apis `pkg/apis/scheduling/v1beta1/types.go`
//! (`scheduling.volcano.sh/v1beta1`, `PodGroupSpec{MinMember int32, MinTaskMember, Queue,
//! PriorityClassName, MinResources}`). Both name the field `minMember` (an `int32`, omitted
//! when 0); every other field is ignored, whatever its value. Neither CRD sets a minimum, but a
//! negative `minMember` is refused here as bad input.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;
use serde_json::Value;

use crate::model::GangConvention;

/// A PodGroup of either convention.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodGroup {
    /// Which scheduler's PodGroup it is (from its `apiVersion`).
    pub convention: GangConvention,
    /// `metadata.namespace` (`default` when absent).
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `spec.minMember` (0 when absent, as both APIs omit it when 0).
    pub min_member: i32,
}

/// The fields read, as both APIs spell them.
#[derive(Debug, Deserialize)]
struct RawPodGroup {
    #[serde(default)]
    metadata: ObjectMeta,
    #[serde(default)]
    spec: Option<RawSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawSpec {
    #[serde(default)]
    min_member: Option<i32>,
}

/// Why a PodGroup document could not be read: the field path and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PodGroupError {
    /// `spec.minMember`, …
    pub field: String,
    /// Lower-case description.
    pub message: String,
}

/// The convention whose PodGroup has this `apiVersion`.
pub fn convention_of(api_version: &str) -> Option<GangConvention> {
    GangConvention::ALL.into_iter().find(|c| c.api_version() == api_version)
}

/// Reads a PodGroup of `convention` from its document (namespace already defaulted).
pub(super) fn parse(convention: GangConvention, value: Value) -> Result<PodGroup, PodGroupError> {
    // serde reads a struct from a sequence too; the API has a mapping or nothing.
    if let Some(spec) = value.get("spec").filter(|s| !s.is_object() && !s.is_null()) {
        return Err(PodGroupError {
            field: "spec".to_string(),
            message: format!("invalid type: {}, expected a mapping", json_type(spec)),
        });
    }
    let raw: RawPodGroup = serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        PodGroupError {
            field: if path == "." { "(document)".to_string() } else { path },
            message: e.into_inner().to_string(),
        }
    })?;
    let min_member = raw.spec.and_then(|s| s.min_member).unwrap_or(0);
    if min_member < 0 {
        return Err(PodGroupError {
            field: "spec.minMember".to_string(),
            message: format!("must not be negative, got {min_member}"),
        });
    }
    Ok(PodGroup {
        convention,
        namespace: raw.metadata.namespace.unwrap_or_else(|| "default".to_string()),
        name: raw.metadata.name.unwrap_or_default(),
        min_member,
    })
}

/// The JSON type of a value, for messages.
fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "sequence",
        Value::Object(_) => "mapping",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pod_groups_read_min_member_and_ignore_the_rest() {
        let doc = |spec: Value| json!({"metadata": {"name": "g", "namespace": "ml"}, "spec": spec, "status": {"phase": "Running"}});
        /// (case, document, minMember or the error's field and message).
        type Case<'a> = (&'a str, Value, Result<i32, (&'a str, &'a str)>);
        let cases: Vec<Case<'_>> = vec![
            ("minMember is read", doc(json!({"minMember": 4})), Ok(4)),
            ("an absent minMember is 0", doc(json!({})), Ok(0)),
            ("a null minMember is 0", doc(json!({"minMember": null})), Ok(0)),
            (
                "minResources and scheduleTimeoutSeconds are ignored whatever their form",
                doc(json!({"minMember": 2, "minResources": {"cpu": "4", "nvidia.com/gpu": 8},
                           "scheduleTimeoutSeconds": "soon", "queue": 7})),
                Ok(2),
            ),
            (
                "a negative minMember is refused",
                doc(json!({"minMember": -1})),
                Err(("spec.minMember", "must not be negative")),
            ),
            (
                "a string minMember is refused with its path",
                doc(json!({"minMember": "4"})),
                Err(("spec.minMember", "invalid type: string")),
            ),
            (
                "a fractional minMember is refused",
                doc(json!({"minMember": 2.5})),
                Err(("spec.minMember", "invalid type: floating point")),
            ),
            (
                "a minMember beyond int32 is refused",
                doc(json!({"minMember": 3_000_000_000u64})),
                Err(("spec.minMember", "invalid value")),
            ),
            (
                "a spec that is a sequence is refused",
                doc(json!([1])),
                Err(("spec", "invalid type: sequence, expected a mapping")),
            ),
            (
                "a spec that is a string is refused",
                doc(json!("x")),
                Err(("spec", "invalid type: string")),
            ),
        ];
        for (name, value, want) in cases {
            let got = parse(GangConvention::Volcano, value);
            match (got, want) {
                (Ok(pg), Ok(min)) => {
                    assert_eq!(pg.min_member, min, "{name}");
                    assert_eq!((pg.namespace.as_str(), pg.name.as_str()), ("ml", "g"), "{name}");
                    assert_eq!(pg.convention, GangConvention::Volcano, "{name}");
                }
                (Err(e), Err((field, message))) => {
                    assert_eq!(e.field, field, "{name}");
                    assert!(e.message.contains(message), "{name}: {}", e.message);
                }
                (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn the_api_version_picks_the_convention() {
        let cases: &[(&str, &str, Option<GangConvention>)] = &[
            (
                "coscheduling's group",
                "scheduling.x-k8s.io/v1alpha1",
                Some(GangConvention::Coscheduling),
            ),
            ("volcano's group", "scheduling.volcano.sh/v1beta1", Some(GangConvention::Volcano)),
            (
                "the old scheduler-plugins group is not read",
                "scheduling.sigs.k8s.io/v1alpha1",
                None,
            ),
            ("another volcano version is not read", "scheduling.volcano.sh/v1alpha1", None),
        ];
        for (name, api_version, want) in cases {
            assert_eq!(convention_of(api_version), *want, "{name}");
        }
    }
}
