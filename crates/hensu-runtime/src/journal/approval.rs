//! Gated tool calls through the call journal (docs/mcp.md, *Tool approval*): the decision on a
//! call of a tool that `require_approval` names is one more call of the visit, of kind
//! [`CallKind::Approval`]. Waiting for a reviewer, it is journaled `held` with the call's
//! correlation id and arguments, and the run pauses before the node; the node runs again on
//! resume, its journal replays the calls before the gated one (the model is not asked again),
//! and the decision the resume brought is journaled `finished` before it is used, so a crash
//! after it neither asks again nor loses it.

use serde_json::Value;

use super::{CallError, CallKind, CallPhase, JournalEntry, PendingApproval, VISIT, Visit, slot};
use crate::review::{ToolApprovalRequest, ToolDecision};

/// What a reviewer decided on a gated tool call.
#[derive(Clone, Debug, PartialEq)]
pub enum Approval {
    /// Run the call once with these arguments (the model's, or the reviewer's edit).
    Approved(Value),
    /// Do not run it; the reason goes to the model as the tool's error.
    Rejected(String),
}

impl Approval {
    fn of(decision: ToolDecision, proposed: &Value) -> Approval {
        match decision {
            ToolDecision::Approve { arguments: Some(a) } => Approval::Approved(Value::Object(a)),
            ToolDecision::Approve { arguments: None } => Approval::Approved(proposed.clone()),
            ToolDecision::Reject { reason } => Approval::Rejected(reason),
        }
    }
}

/// The decision on the gated call of tool `tool` with `arguments` the tool loop reached: one
/// recorded by an earlier run of the node; else the one a resume brought for the call this
/// visit held; else the run's review handler's, when it decides at once (`--auto-approve`, a
/// scripted test). Otherwise the call is held for a reviewer: `Err(AwaitingApproval)` (the
/// node stops and its flow pauses at it: the main flow, a sub-workflow child or a fork
/// branch), or E0520 where the run cannot pause (outside a node visit, without a journal, in
/// a parallel branch or a map item).
pub async fn approve_tool_call(tool: &str, arguments: &Value) -> Result<Approval, CallError> {
    let Ok(visit) = VISIT.try_with(Clone::clone) else {
        return Err(CallError::ApprovalUnavailable {
            tool: tool.to_string(),
            node: String::new(),
            why: "outside a node visit",
        });
    };
    let slot = slot(&visit);
    let recorded = visit
        .replay
        .lock()
        .ok()
        .and_then(|mut r| r.remove(&slot.index))
        .unwrap_or_default();
    let entry = |phase: CallPhase, result: Option<Value>, ok: Option<bool>| JournalEntry {
        visit: visit.visit.to_string(),
        index: slot.index,
        kind: CallKind::Approval,
        name: tool.to_string(),
        phase,
        node: Some(visit.node_id.to_string()),
        result,
        ok,
        duration_ms: None,
    };
    if let Some(done) = recorded.finished {
        if done.kind != CallKind::Approval || done.name != tool {
            return Err(CallError::Diverged {
                kind: CallKind::Approval,
                name: tool.to_string(),
                node: visit.node_id.to_string(),
                index: slot.index,
                was: format!("{} '{}'", done.kind.as_str(), done.name),
            });
        }
        if let Some(d) = done
            .result
            .and_then(|v| serde_json::from_value::<ToolDecision>(v).ok())
        {
            return Ok(Approval::of(d, arguments));
        }
    }
    let answer = match recorded.held {
        true => visit.answer.lock().ok().and_then(|mut a| a.take()),
        false => None,
    };
    let decision = match answer {
        Some(d) => Some(d),
        None => match &visit.ctx.approver {
            Some(h) => {
                h.decide_tool_call(ToolApprovalRequest {
                    node_id: &visit.node_id,
                    tool,
                    arguments,
                })
                .await
            }
            None => None,
        },
    };
    if let Some(d) = decision {
        let approved = matches!(d, ToolDecision::Approve { .. });
        let value = serde_json::to_value(&d).map_err(|e| CallError::Journal(e.to_string()))?;
        write(
            &visit,
            &entry(CallPhase::Finished, Some(value), Some(approved)),
        )
        .await?;
        return Ok(Approval::of(d, arguments));
    }
    let unavailable = |why| CallError::ApprovalUnavailable {
        tool: tool.to_string(),
        node: visit.node_id.to_string(),
        why,
    };
    if visit.ctx.journal.is_none() {
        return Err(unavailable("in a run without a state store"));
    }
    if !visit.pausable {
        return Err(unavailable("in a parallel branch or a map item"));
    }
    // Asked again (a resume without a decision, a crash during the pause): the same review.
    let held_id = recorded
        .held_result
        .as_ref()
        .and_then(|r| r.get("correlation_id"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let correlation_id = match held_id {
        Some(id) => id,
        None => {
            let id = format!("tool-{}", uuid::Uuid::new_v4());
            let held = serde_json::json!({"correlation_id": id, "arguments": arguments});
            write(&visit, &entry(CallPhase::Held, Some(held), None)).await?;
            id
        }
    };
    if let Ok(mut a) = visit.approval.lock() {
        *a = Some(PendingApproval {
            correlation_id: correlation_id.clone(),
            tool: tool.to_string(),
            arguments: arguments.clone(),
        });
    }
    Err(CallError::AwaitingApproval {
        tool: tool.to_string(),
        node: visit.node_id.to_string(),
        index: slot.index,
        correlation_id,
    })
}

async fn write(visit: &Visit, entry: &JournalEntry) -> Result<(), CallError> {
    match &visit.ctx.journal {
        Some(j) => j.write(entry).await.map_err(CallError::Journal),
        None => Ok(()),
    }
}
