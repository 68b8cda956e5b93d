//! Reading and checking plan documents: kplace's own and those of other tools (kube-scheduler
//! run through `../shared/upstream/kso`, hand-edited plans).
//!
//! Input: a file or its text; output: a [`Plan`] (see [`crate::plan`] for the lenient forms) or
//! an error naming the file and the field.

use std::path::Path;

use serde::Deserialize;

use super::{BindError, Work, moves};
use crate::plan::{Plan, Summary};

/// Reads a plan document (JSON or YAML) as `kplace` writes it and as other tools write it:
/// `placements` is required; `evictions`, `unschedulable` and `moves` default to empty; evictions
/// may be bare `"namespace/name"` strings or lack `node` or `preemptor`, unschedulable entries
/// may lack `message` (see [`crate::plan`]); a `summary` that is not kplace's is ignored.
/// Duplicate keys in JSON are an error, as in YAML. Errors name the file and the field.
pub fn read_plan(path: &Path) -> Result<Plan, BindError> {
    let text = std::fs::read_to_string(path)
        .map_err(|source| BindError::ReadPlan { path: path.to_path_buf(), source })?;
    parse_plan(&text).map_err(|message| BindError::ParsePlan { path: path.to_path_buf(), message })
}

/// Parses the text of a plan document (see [`read_plan`]); the error says where and why.
pub fn parse_plan(text: &str) -> Result<Plan, String> {
    parse_plan_and_summary(text).map(|(plan, _)| plan)
}

/// [`parse_plan`], also returning the document's `summary` as written, for summaries that are
/// not kplace's (kso's `wall_ms`, `kube_scheduler_version`).
pub fn parse_plan_and_summary(text: &str) -> Result<(Plan, Option<serde_json::Value>), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let value: serde_json::Value = if text.trim_start().starts_with('{') {
        crate::json::from_str(text).map_err(|(e, dup)| match dup {
            Some(dup) => format!("{dup} (line {}, column {})", e.line(), e.column()),
            None => e.to_string(),
        })?
    } else {
        serde_saphyr::from_str(text).map_err(|e| e.to_string())?
    };
    let serde_json::Value::Object(mut doc) = value else {
        return Err("not a plan document (not a mapping)".to_string());
    };
    if !doc.contains_key("placements") {
        return Err("missing field `placements`: not a plan document".to_string());
    }
    let summary = doc.remove("summary");
    let mut plan: Plan = serde_path_to_error::deserialize(serde_json::Value::Object(doc))
        .map_err(|e| format!("{}: {}", e.path(), e.inner()))?;
    if let Some(summary) = &summary {
        match Summary::deserialize(summary) {
            Ok(summary) => plan.summary = summary,
            Err(e) => tracing::debug!("the plan's summary is not kplace's; ignored: {e}"),
        }
    }
    Ok((plan, summary))
}

/// Checks a plan before anything is sent: pod keys parse, nodes are named, no pod is placed
/// twice or both placed and evicted, every named preemptor has a placement, moves are
/// well-formed. [`bind`] checks the same; callers that read the plan from a file call this first
/// to name the file in the error.
pub fn validate(plan: &Plan) -> Result<(), BindError> {
    Work::new(plan)?;
    let touched: std::collections::BTreeSet<&str> = plan
        .placements
        .iter()
        .map(|p| p.pod.as_str())
        .chain(plan.evictions.iter().map(|e| e.pod.as_str()))
        .collect();
    moves::validate(&plan.moves, &touched)?;
    Ok(())
}
