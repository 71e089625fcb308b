//! Sub-workflow nodes (upstream `SubWorkflowNodeExecutor`; docs/language.md, *Sub-workflows at
//! run time*).
//!
//! The child workflow comes from a [`WorkflowRepository`] (the CLI fills one with every workflow
//! of the project). It runs as a fresh execution (own history and counters) on a context built
//! only from the node's `inputMapping`, plus `_tenant_id` and `_sub_workflow_depth`; nesting is
//! capped at [`MAX_DEPTH`]. A child that completes — with any exit status — makes the node
//! SUCCESS and its `outputMapping` copies values back; a rejected child or one whose output
//! fails validation makes it FAILURE (`Sub-workflow failed`); other errors end the run.
//!
//! A child of the main flow tells the boundary hooks of its own node boundaries
//! ([`Checkpointer::record_nested`](crate::Checkpointer::record_nested)), so a durable run records it. A
//! child that stops (a review waits, a pause) is saved in the parent's state
//! ([`Nested::Child`]) and the run pauses at the sub-workflow node; resuming the run continues
//! the child where it stopped. A child of the main flow that ends unsuccessfully checkpoints
//! its compensations at its nested boundaries: a run stopped while they run resumes the
//! child's compensations left (the one in flight again; docs/language.md, *Saga
//! compensation*).

use std::time::Instant;

use hensu_ir::SubWorkflowNode;
use serde_json::Value;

use crate::engine::branches::BoxFuture;
use crate::engine::{CompensationCheckpoints, Exec, Flow, Prepared};
use crate::error::RuntimeError;
use crate::review::ReviewDecision;
use crate::run_types::{CancelToken, RunOutcome};
use crate::state::{Nested, NestedFrame, NodeResult, NodeStatus, RunState};
use crate::value::{Context, as_number};

/// Deepest nesting of sub-workflows (upstream `SubWorkflowNodeExecutor.MAX_DEPTH`): a node
/// running at depth 16 cannot start a child.
pub const MAX_DEPTH: i64 = 16;

/// The tenant used when the context has no `_tenant_id`.
pub const DEFAULT_TENANT: &str = "default";

/// The nesting depth recorded in a context (`_sub_workflow_depth`, default 0).
pub fn depth_of(ctx: &Context) -> i64 {
    ctx.get("_sub_workflow_depth")
        .and_then(as_number)
        .map(|d| d as i64)
        .unwrap_or(0)
}

/// Runs a sub-workflow node (boxed: the child runs the executor loop again) in `flow`;
/// `resume` answers a review pending in its saved child.
pub(crate) fn execute_subworkflow<'a>(
    engine: &'a Exec<'a>,
    node: &'a SubWorkflowNode,
    state: &'a mut RunState,
    cancel: &'a CancelToken,
    flow: Flow<'a>,
    resume: Option<ReviewDecision>,
) -> BoxFuture<'a, Result<NodeResult, RuntimeError>> {
    Box::pin(run_subworkflow(engine, node, state, cancel, flow, resume))
}

/// The child saved for `node` by a run that stopped inside it.
fn saved_child(state: &mut RunState, node: &SubWorkflowNode) -> Option<RunState> {
    match *state.nested.take()? {
        Nested::Child { node_id, state } if node_id == node.id => Some(*state),
        _ => None,
    }
}

async fn run_subworkflow(
    engine: &Exec<'_>,
    node: &SubWorkflowNode,
    state: &mut RunState,
    cancel: &CancelToken,
    flow: Flow<'_>,
    resume: Option<ReviewDecision>,
) -> Result<NodeResult, RuntimeError> {
    let (prepared, mut child_state) = load_child(engine, node, state)?;
    // The child takes only signals the run has not taken (docs/language.md, *Timers and
    // signals*); what it takes is handed back when it ends.
    crate::waiting::merge_taken(&mut child_state.signals_taken, &state.signals_taken);
    let frames = child_frames(flow, node, &child_state);
    let child_flow = match (&frames, flow) {
        (Some(frames), _) => Flow::Child(frames),
        (None, Flow::Item) => Flow::Item,
        (None, _) => Flow::Detached,
    };
    let outcome = run_child(
        engine,
        &prepared,
        &mut child_state,
        cancel,
        resume,
        child_flow,
    )
    .await;
    child_result(node, state, child_state, outcome)
}

/// The child workflow of `node` and the run it continues: the one saved by a run that stopped
/// inside it, else a fresh one on the node's inputs. The depth cap, a missing repository or
/// child, and missing inputs fail here.
fn load_child(
    engine: &Exec<'_>,
    node: &SubWorkflowNode,
    state: &mut RunState,
) -> Result<(Prepared, RunState), RuntimeError> {
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
    Ok(match saved_child(state, node) {
        Some(saved) => (engine.prepare(child)?, saved),
        None => {
            let input = child_input(node, state, depth).map_err(fail)?;
            let prepared = engine.prepare(child)?;
            let fresh = fresh_child(&prepared, input).map_err(fail)?;
            (prepared, fresh)
        }
    })
}

/// The frames that lead from the main flow to the child, when the child's boundaries are
/// recorded (a child of the main flow or of such a child); `None` inside a fork branch.
fn child_frames(
    flow: Flow<'_>,
    node: &SubWorkflowNode,
    child_state: &RunState,
) -> Option<Vec<NestedFrame>> {
    let outer: &[NestedFrame] = match flow {
        Flow::Main => &[],
        Flow::Child(outer) => outer,
        Flow::Branch { .. } | Flow::Detached | Flow::Item => return None,
    };
    let frames = outer
        .iter()
        .cloned()
        .chain([NestedFrame {
            node_id: node.id.clone(),
            execution_id: child_state.execution_id.clone(),
        }])
        .collect();
    Some(frames)
}

/// Runs the child to its end (boxed: the child runs the executor loop again). A child that
/// ends unsuccessfully runs its own compensations first, checkpointed where its boundaries are
/// (docs/language.md, *Saga compensation*); a paused child is not compensated.
async fn run_child(
    engine: &Exec<'_>,
    prepared: &Prepared,
    child_state: &mut RunState,
    cancel: &CancelToken,
    resume: Option<ReviewDecision>,
    child_flow: Flow<'_>,
) -> RunOutcome {
    let checkpoints = match child_flow {
        Flow::Child(frames) => CompensationCheckpoints::Child(frames),
        _ => CompensationCheckpoints::None,
    };
    let compensated: BoxFuture<'_, RunOutcome> = if child_state.compensating.is_some() {
        // The run stopped while the saved child compensated: the compensations left.
        Box::pin(engine.resume_compensation(prepared, child_state, checkpoints))
    } else {
        Box::pin(async {
            // The child is a fresh execution with its own limits; its steps are not the
            // parent's.
            let run: BoxFuture<'_, Result<RunOutcome, RuntimeError>> = Box::pin(engine.drive(
                prepared,
                child_state,
                cancel,
                Instant::now(),
                resume,
                child_flow,
            ));
            let outcome = run.await.unwrap_or_else(RunOutcome::Failed);
            engine
                .compensate(prepared, child_state, outcome, checkpoints)
                .await
        })
    };
    compensated.await
}

/// The node's result for how the child ended: completed (any exit status) copies the
/// `outputMapping` back, rejected or invalid output fails the node, another error ends the
/// run, and a paused child is saved in the parent (the run pauses here; resuming continues it).
fn child_result(
    node: &SubWorkflowNode,
    state: &mut RunState,
    child_state: RunState,
    outcome: RunOutcome,
) -> Result<NodeResult, RuntimeError> {
    if !matches!(outcome, RunOutcome::Paused) {
        crate::waiting::merge_taken(&mut state.signals_taken, &child_state.signals_taken);
    }
    match outcome {
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
        RunOutcome::Paused => {
            state.nested = Some(Box::new(Nested::Child {
                node_id: node.id.clone(),
                state: Box::new(child_state),
            }));
            Ok(NodeResult {
                status: NodeStatus::Pending,
                output: None,
                error: None,
                metadata: Default::default(),
            })
        }
    }
}

/// The context of a new child: the node's `inputMapping` (plus the tenant and the depth).
/// `Err` is the failure message.
fn child_input(node: &SubWorkflowNode, state: &RunState, depth: i64) -> Result<Context, String> {
    let mut input = Context::default();
    for (child_key, parent_key) in &node.input_mapping {
        match state.context.get(parent_key.as_str()) {
            Some(v) if !v.is_null() => {
                input.insert(child_key.clone(), v.clone());
            }
            _ => return Err(format!("Missing input: {parent_key}")),
        }
    }
    if let Some(t) = state.context.get("_tenant_id") {
        input.insert("_tenant_id".into(), t.clone());
    }
    input.insert("_sub_workflow_depth".into(), Value::from(depth + 1));
    Ok(input)
}

/// A new child run on `input`, its required inputs checked. `Err` is the failure message.
fn fresh_child(prepared: &Prepared, input: Context) -> Result<RunState, String> {
    let wf = prepared.workflow();
    if let Some(schema) = &wf.state_schema {
        let missing: Vec<&str> = schema
            .variables
            .iter()
            .filter(|v| v.is_input && input.get(&v.name).is_none_or(Value::is_null))
            .map(|v| v.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "child workflow '{}' is missing required input{}: {} (map them with `imports`)",
                wf.id,
                if missing.len() == 1 { "" } else { "s" },
                missing.join(", ")
            ));
        }
    }
    let start = prepared.plan.id(prepared.plan.start).to_string();
    Ok(RunState::new(
        uuid::Uuid::new_v4().to_string(),
        wf.id.clone(),
        start,
        input,
    ))
}
