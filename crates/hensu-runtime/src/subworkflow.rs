//! Sub-workflow nodes (upstream `SubWorkflowNodeExecutor`; docs/language.md, *Sub-workflows at
//! run time*).
//!
//! The child workflow comes from a [`WorkflowRepository`] (the CLI fills one with every workflow
//! of the project). It runs as a fresh execution (own history and counters) on a context built
//! only from the node's `inputMapping`, plus `_tenant_id` and `_sub_workflow_depth`; nesting is
//! capped at [`MAX_DEPTH`]. A child that completes — with any exit status — makes the node
//! SUCCESS and its `outputMapping` copies values back; a rejected child or one whose output
//! fails validation makes it FAILURE (`Sub-workflow failed`); other errors end the run.

use std::time::Instant;

use hensu_ir::SubWorkflowNode;
use serde_json::Value;

use crate::engine::Engine;
use crate::error::RuntimeError;
use crate::fork::BoxFuture;
use crate::run_types::{CancelToken, RunOutcome};
use crate::state::{NodeResult, RunState};
use crate::value::{Context, as_number};

/// Deepest nesting of sub-workflows (upstream `SubWorkflowNodeExecutor.MAX_DEPTH`): a node
/// running at depth 16 cannot start a child.
pub const MAX_DEPTH: i64 = 16;

/// The tenant used when the context has no `_tenant_id`.
pub const DEFAULT_TENANT: &str = "default";

/// A nested flow that has no boundary node (a sub-workflow child): like a fork branch it takes
/// no checkpoints, but it only stops at an end node.
const NO_BOUNDARY: usize = usize::MAX;

/// The nesting depth recorded in a context (`_sub_workflow_depth`, default 0).
pub fn depth_of(ctx: &Context) -> i64 {
    ctx.get("_sub_workflow_depth")
        .and_then(as_number)
        .map(|d| d as i64)
        .unwrap_or(0)
}

/// Runs a sub-workflow node (boxed: the child runs the executor loop again).
pub(crate) fn execute_subworkflow<'a>(
    engine: &'a Engine,
    node: &'a SubWorkflowNode,
    state: &'a mut RunState,
    cancel: &'a CancelToken,
) -> BoxFuture<'a, Result<NodeResult, RuntimeError>> {
    Box::pin(run_subworkflow(engine, node, state, cancel))
}

async fn run_subworkflow(
    engine: &Engine,
    node: &SubWorkflowNode,
    state: &mut RunState,
    cancel: &CancelToken,
) -> Result<NodeResult, RuntimeError> {
    let fail = |message: String| RuntimeError::SubWorkflow {
        node: node.id.clone(),
        message,
    };
    let depth = depth_of(&state.context);
    if depth >= MAX_DEPTH {
        return Err(fail(format!(
            "maximum sub-workflow depth {MAX_DEPTH} exceeded: this workflow already runs at depth {depth}, so it cannot start '{}'",
            node.workflow_id
        )));
    }
    let repo = engine.workflows.as_ref().ok_or_else(|| {
        fail(format!(
            "no workflow repository to load '{}' from (the CLI loads the project's `workflows/` directory)",
            node.workflow_id
        ))
    })?;
    let tenant = match state.context.get("_tenant_id") {
        Some(Value::String(t)) => t.as_str(),
        _ => DEFAULT_TENANT,
    };
    let child = repo
        .get_for_tenant(tenant, &node.workflow_id)
        .ok_or_else(|| fail(format!("Sub-workflow not found: {}", node.workflow_id)))?;

    let mut input = Context::default();
    for (child_key, parent_key) in &node.input_mapping {
        match state.context.get(parent_key.as_str()) {
            Some(v) if !v.is_null() => {
                input.insert(child_key.clone(), v.clone());
            }
            _ => return Err(fail(format!("Missing input: {parent_key}"))),
        }
    }
    if let Some(t) = state.context.get("_tenant_id") {
        input.insert("_tenant_id".into(), t.clone());
    }
    input.insert("_sub_workflow_depth".into(), Value::from(depth + 1));

    let prepared = engine.prepare(child)?;
    let wf = prepared.workflow();
    if let Some(schema) = &wf.state_schema {
        let missing: Vec<&str> = schema
            .variables
            .iter()
            .filter(|v| v.is_input && input.get(&v.name).is_none_or(Value::is_null))
            .map(|v| v.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(fail(format!(
                "child workflow '{}' is missing required input{}: {} (map them with `imports`)",
                wf.id,
                if missing.len() == 1 { "" } else { "s" },
                missing.join(", ")
            )));
        }
    }
    let start = prepared.plan.id(prepared.plan.start).to_string();
    let mut child_state = RunState::new(
        uuid::Uuid::new_v4().to_string(),
        wf.id.clone(),
        start,
        input,
    );
    let flow: BoxFuture<'_, Result<RunOutcome, RuntimeError>> = Box::pin(engine.drive(
        &prepared,
        &mut child_state,
        cancel,
        Instant::now(),
        None,
        Some(NO_BOUNDARY),
    ));
    // The child is a fresh execution with its own limits; its steps are not the parent's.
    // A child that ends unsuccessfully runs its own compensations first (not checkpointed:
    // the child is recorded only through its parent; docs/language.md, *Saga compensation*).
    let outcome = flow.await.unwrap_or_else(RunOutcome::Failed);
    let compensated: BoxFuture<'_, RunOutcome> =
        Box::pin(engine.compensate(&prepared, &mut child_state, outcome, false));
    match compensated.await {
        RunOutcome::Completed { exit_status, .. } => {
            for (parent_key, child_key) in &node.output_mapping {
                let v = child_state
                    .context
                    .get(child_key.as_str())
                    .cloned()
                    .unwrap_or(Value::Null);
                state.context.insert(parent_key.clone(), v);
            }
            let out: serde_json::Map<String, Value> = child_state.context.into_iter().collect();
            Ok(NodeResult::success_value(Value::Object(out)).with_meta(
                "sub_workflow_exit_status",
                Value::String(exit_status.as_str().to_string()),
            ))
        }
        RunOutcome::Rejected { reason } => Ok(NodeResult::failure(format!(
            "Sub-workflow failed: '{}' was rejected: {reason}",
            node.workflow_id
        ))),
        RunOutcome::Failed(e @ RuntimeError::OutputValidation { .. }) => Ok(NodeResult::failure(
            format!("Sub-workflow failed: '{}': {e}", node.workflow_id),
        )),
        RunOutcome::Failed(e) => Err(e),
        RunOutcome::Paused => Err(fail(format!(
            "'{}' paused (a review waits for an answer); pausing inside a sub-workflow is not supported",
            node.workflow_id
        ))),
    }
}
