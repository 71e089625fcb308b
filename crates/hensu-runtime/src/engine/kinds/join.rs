//! The join of a fork (upstream `JoinNodeExecutor`; docs/language.md, *Fork and join at run
//! time*): the branches' outcomes merged into the parent context by the join's merge strategy,
//! then the join node itself as a pass-through check.

use hensu_ir::{ForkNode, JoinNode, MergeStrategy};
use indexmap::IndexMap;
use serde_json::Value;

use crate::engine::Exec;
use crate::events::Event;
use crate::state::{NodeResult, RunState};
use crate::value::Context;

/// One fork branch's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct ForkBranch {
    /// The target node id.
    pub target: String,
    pub success: bool,
    /// Why the sub-flow failed.
    pub error: Option<String>,
    /// Keys of the branch context that are new or changed (exports only, if declared).
    pub yields: serde_json::Map<String, Value>,
}

/// The keys of `branch` that are new or changed against `parent`, excluding `_`-prefixed keys
/// and `current_node`; with `exports`, only those keys (in export order). The branch context
/// is consumed: its values move into the yields.
pub(crate) fn branch_yields(
    parent: &Context,
    mut branch: Context,
    exports: &[String],
) -> serde_json::Map<String, Value> {
    let changed =
        |k: &str, v: &Value| !k.starts_with('_') && k != "current_node" && parent.get(k) != Some(v);
    if exports.is_empty() {
        branch.into_iter().filter(|(k, v)| changed(k, v)).collect()
    } else {
        exports
            .iter()
            .filter_map(|k| {
                let v = branch.swap_remove(k.as_str())?;
                changed(k, &v).then(|| (k.clone(), v))
            })
            .collect()
    }
}

/// Merges the branches into the parent context (join merge strategy) and returns the fork's
/// output. Any failed branch → `failed_branches` = their target ids.
pub(crate) fn merge(
    engine: &Exec<'_>,
    fork: &ForkNode,
    join: &JoinNode,
    branches: Vec<ForkBranch>,
    ctx: &mut Context,
) -> Value {
    let failed: Vec<Value> = branches
        .iter()
        .filter(|b| !b.success)
        .map(|b| Value::String(b.target.clone()))
        .collect();
    if !failed.is_empty() {
        ctx.insert("failed_branches".into(), Value::Array(failed));
    }
    let first_write = join.writes.first();
    match join.merge_strategy {
        MergeStrategy::CollectAll => {
            let map: serde_json::Map<String, Value> = branches
                .into_iter()
                .map(|b| {
                    let v = if b.success {
                        Value::Object(b.yields)
                    } else {
                        Value::String(format!(
                            "FailureMarker[message={}]",
                            b.error.as_deref().unwrap_or("")
                        ))
                    };
                    (b.target, v)
                })
                .collect();
            let v = Value::Object(map);
            if let Some(w) = first_write {
                ctx.insert(w.clone(), v.clone());
            }
            v
        }
        MergeStrategy::FirstSuccessful => {
            let v = branches
                .into_iter()
                .find(|b| b.success)
                .map(|b| Value::Object(b.yields))
                .unwrap_or(Value::Null);
            if let Some(w) = first_write {
                ctx.insert(w.clone(), v.clone());
            }
            v
        }
        MergeStrategy::Concatenate => {
            let v = Value::String(
                branches
                    .iter()
                    .filter(|b| b.success)
                    .map(|b| serde_json::to_string(&b.yields).unwrap_or_default())
                    .collect::<Vec<_>>()
                    .join("\n\n---\n\n"),
            );
            if let Some(w) = first_write {
                ctx.insert(w.clone(), v.clone());
            }
            v
        }
        MergeStrategy::MergeMaps => {
            let mut union: IndexMap<String, (Value, &str)> = IndexMap::new();
            for b in branches.iter().filter(|b| b.success) {
                for (k, v) in &b.yields {
                    if let Some((old, from)) = union.get(k)
                        && old != v
                    {
                        let message = format!(
                            "MERGE_MAPS: '{k}' from branch '{}' overwrites the value from branch '{from}'",
                            b.target
                        );
                        engine.listener.on_event(&Event::TransitionWarning {
                            node_id: &fork.id,
                            message: &message,
                        });
                    }
                    union.insert(k.clone(), (v.clone(), b.target.as_str()));
                }
            }
            for w in &join.writes {
                if let Some((v, _)) = union.get(w.as_str()) {
                    ctx.insert(w.clone(), v.clone());
                }
            }
            Value::Object(union.into_iter().map(|(k, (v, _))| (k, v)).collect())
        }
    }
}

/// The join as a pass-through: FAILURE when `failOnError` and a branch failed, or when the
/// merged output is missing; else SUCCESS with the merged value.
pub(crate) fn execute_join(join: &JoinNode, state: &RunState) -> NodeResult {
    let ctx = &state.context;
    if join.fail_on_any_error
        && let Some(failed) = ctx.get("failed_branches")
    {
        return NodeResult::failure(format!(
            "Fork branches failed: {}",
            serde_json::to_string(failed).unwrap_or_default()
        ));
    }
    let present = |k: &str| ctx.get(k).filter(|v| !v.is_null());
    if join.merge_strategy == MergeStrategy::MergeMaps {
        let missing: Vec<&str> = join
            .writes
            .iter()
            .map(String::as_str)
            .filter(|w| present(w).is_none())
            .collect();
        if !missing.is_empty() {
            return NodeResult::failure(format!("Join output missing: {}", missing.join(", ")));
        }
        let out: serde_json::Map<String, Value> = join
            .writes
            .iter()
            .filter_map(|w| present(w).map(|v| (w.clone(), v.clone())))
            .collect();
        return NodeResult::success_value(Value::Object(out));
    }
    let Some(w) = join.writes.first() else {
        return NodeResult::failure("Join has no `writes` to hold the merged output");
    };
    match present(w) {
        Some(v) => NodeResult::success_value(v.clone()),
        None => NodeResult::failure(format!("Join output missing: {w}")),
    }
}
