//! Human review (upstream Hensu's `ReviewHandler`; docs/language.md, *Reviews*). The default
//! handler approves everything (upstream `AUTO_APPROVE`, what the non-interactive CLI does);
//! the terminal and deferred handlers are host adapters (`hensu-host`).

use async_trait::async_trait;
use hensu_ir::ReviewConfig;
use serde::{Deserialize, Serialize};

use crate::run_types::PostProcessor;
use crate::state::{
    ExecutionPhase, HistoryStep, Nested, NodeResult, RunState, TOOL_APPROVAL, ToolCallReview,
};
use crate::value::Context;

/// A reviewer's decision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum ReviewDecision {
    /// Continue; `edits` are merged into the context.
    Approve {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        edits: Option<Context>,
    },
    /// Reject: routes through an `onRejection` arm if the node has one, else ends the run.
    Reject { reason: String },
    /// Go back to `target`; the reason becomes `recommendation`.
    Backtrack {
        target: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        edits: Option<Context>,
        reason: String,
    },
}

/// A handler's answer.
#[derive(Clone, Debug, PartialEq)]
pub enum ReviewOutcome {
    /// Answered synchronously.
    Decided(ReviewDecision),
    /// The answer arrives out of band; the run pauses.
    Pending { correlation_id: String },
}

/// What a reviewer is shown.
#[derive(Debug)]
pub struct ReviewRequest<'a> {
    pub node_id: &'a str,
    pub config: &'a ReviewConfig,
    pub result: &'a NodeResult,
    pub context: &'a Context,
    pub history: &'a [HistoryStep],
    /// The fork target whose branch the node runs in (the innermost), `None` in the main flow.
    pub branch: Option<&'a str>,
}

tokio::task_local! {
    static BRANCH: String;
}

/// Runs `flow` as the branch of fork target `target` (what [`ReviewRequest::branch`] says).
pub(crate) async fn in_branch<F: std::future::Future>(target: &str, flow: F) -> F::Output {
    BRANCH.scope(target.to_string(), flow).await
}

/// The fork target whose branch the current task runs, if any.
pub(crate) fn current_branch() -> Option<String> {
    BRANCH.try_with(Clone::clone).ok()
}

/// A reviewer's decision on a gated tool call (docs/mcp.md, *Tool approval*).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum ToolDecision {
    /// Run the call once, with `arguments` instead of the model's when given.
    Approve {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
    },
    /// Do not run it: the model gets a tool error carrying `reason`.
    Reject { reason: String },
}

impl From<ReviewDecision> for ToolDecision {
    /// A review decision answering a tool-call review: an approval's `edits` are the edited
    /// arguments (a JSON object, replacing the model's); a backtrack is not offered for tool
    /// calls (the faces refuse it) and counts as a rejection with its reason.
    fn from(d: ReviewDecision) -> ToolDecision {
        match d {
            ReviewDecision::Approve { edits } => ToolDecision::Approve {
                arguments: edits.map(|e| e.into_iter().collect()),
            },
            ReviewDecision::Reject { reason } | ReviewDecision::Backtrack { reason, .. } => {
                ToolDecision::Reject { reason }
            }
        }
    }
}

/// A gated tool call shown to a handler that may decide it at once.
#[derive(Debug)]
pub struct ToolApprovalRequest<'a> {
    pub node_id: &'a str,
    pub tool: &'a str,
    pub arguments: &'a serde_json::Value,
}

/// Decides reviews.
#[async_trait]
pub trait ReviewHandler: Send + Sync {
    async fn request_review(&self, request: ReviewRequest<'_>) -> ReviewOutcome;

    /// Decides a gated tool call at once (docs/mcp.md, *Tool approval*); `None` (the
    /// default): the run pauses durably at the call until a decision arrives out of band.
    async fn decide_tool_call(&self, _request: ToolApprovalRequest<'_>) -> Option<ToolDecision> {
        None
    }
}

/// Approves every review (upstream `AUTO_APPROVE`).
#[derive(Clone, Copy, Debug, Default)]
pub struct AutoApprove;

#[async_trait]
impl ReviewHandler for AutoApprove {
    async fn request_review(&self, _request: ReviewRequest<'_>) -> ReviewOutcome {
        ReviewOutcome::Decided(ReviewDecision::Approve { edits: None })
    }

    /// `--auto-approve` approves gated tool calls too.
    async fn decide_tool_call(&self, _request: ToolApprovalRequest<'_>) -> Option<ToolDecision> {
        Some(ToolDecision::Approve { arguments: None })
    }
}
/// The review a paused state waits for: `(node id, correlation id)`.
pub fn pending_review(state: &RunState) -> Option<(&str, &str)> {
    match &state.phase {
        ExecutionPhase::Awaiting {
            node_id,
            processor_id,
            correlation_id,
            ..
        } if processor_id == PostProcessor::Review.id() || processor_id == TOOL_APPROVAL => {
            Some((node_id.as_str(), correlation_id.as_str()))
        }
        _ => None,
    }
}

/// The gated tool call the review `state` shows waits for (docs/mcp.md, *Tool approval*), if
/// that review is one (a main-flow review: tool calls hold only the main flow).
pub fn reviewed_tool_call(state: &RunState) -> Option<&ToolCallReview> {
    match &state.phase {
        ExecutionPhase::Awaiting {
            processor_id,
            tool_call: Some(call),
            ..
        } if processor_id == TOOL_APPROVAL => Some(call),
        _ => None,
    }
}

/// Why `decision` cannot answer the review `state` shows first: a tool call is approved
/// (optionally with edited `arguments`, given apart from context edits) or rejected, never
/// sent back; edited arguments answer only a tool call.
pub fn tool_decision_problem(
    state: &RunState,
    decision: &ReviewDecision,
    arguments_given: bool,
) -> Option<String> {
    match (reviewed_tool_call(state), decision) {
        (Some(call), ReviewDecision::Backtrack { .. }) => Some(format!(
            "the review waits for the approval of a call of tool '{}': approve or reject it (a tool call cannot be sent back)",
            call.tool
        )),
        (Some(call), ReviewDecision::Approve { edits: Some(_) }) if !arguments_given => {
            Some(format!(
                "the review waits for the approval of a call of tool '{}': context edits do not apply; give the edited arguments instead",
                call.tool
            ))
        }
        (None, _) if arguments_given => Some(
            "edited arguments answer the approval of a tool call, and this review is a node's"
                .to_string(),
        ),
        _ => None,
    }
}

/// One argument a reviewer's edit changed (docs/mcp.md, *Tool approval*): `None` where the
/// argument is absent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgumentChange {
    pub key: String,
    pub before: Option<serde_json::Value>,
    pub after: Option<serde_json::Value>,
}

/// The arguments an edit changed, removed or added, in the order of the model's arguments
/// then the new ones (the diff the CLI and the console show).
pub fn argument_changes(
    before: &serde_json::Value,
    after: &serde_json::Map<String, serde_json::Value>,
) -> Vec<ArgumentChange> {
    let empty = serde_json::Map::new();
    let before = before.as_object().unwrap_or(&empty);
    let changed = before
        .iter()
        .filter(|(k, v)| after.get(*k) != Some(*v))
        .map(|(k, v)| ArgumentChange {
            key: k.clone(),
            before: Some(v.clone()),
            after: after.get(k).cloned(),
        });
    let added = after
        .iter()
        .filter(|(k, _)| !before.contains_key(*k))
        .map(|(k, v)| ArgumentChange {
            key: k.clone(),
            before: None,
            after: Some(v.clone()),
        });
    changed.chain(added).collect()
}

/// One review a paused run waits for (docs/server.md, *Pending reviews*): the main flow's,
/// a fork branch's or a sub-workflow child's, each with its own correlation id, so several
/// reviewers can decide them independently and in any order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitingReview {
    pub correlation_id: String,
    /// The node under review.
    pub node_id: String,
    /// The fork target whose branch waits (innermost), `None` in the main flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The fork and sub-workflow nodes the review is nested in, outermost first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub within: Vec<String>,
    /// Milliseconds since the Unix epoch.
    pub requested_at_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_at_ms: Option<u64>,
    /// The reviewed node's output as text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// A gated tool call under review (docs/mcp.md, *Tool approval*), instead of a node's
    /// output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call: Option<ToolCallReview>,
}

/// Every review `state` waits for, in the order the run's flows hold them (the main flow's
/// first, then fork branches in target order, depth first).
pub fn waiting_reviews(state: &RunState) -> Vec<WaitingReview> {
    let mut out = Vec::new();
    collect_waiting(state, &mut Vec::new(), None, &mut out);
    out
}

fn collect_waiting(
    state: &RunState,
    within: &mut Vec<String>,
    branch: Option<&str>,
    out: &mut Vec<WaitingReview>,
) {
    let Some(nested) = state.nested.as_deref() else {
        if let ExecutionPhase::Awaiting {
            node_id,
            processor_id,
            correlation_id,
            requested_at_ms,
            deadline_at_ms,
            cached_result,
            tool_call,
        } = &state.phase
            && (processor_id == PostProcessor::Review.id() || processor_id == TOOL_APPROVAL)
            && !correlation_id.is_empty()
        {
            out.push(WaitingReview {
                correlation_id: correlation_id.clone(),
                node_id: node_id.clone(),
                branch: branch.map(str::to_string),
                within: within.clone(),
                requested_at_ms: *requested_at_ms,
                deadline_at_ms: *deadline_at_ms,
                output: cached_result.output_text().map(|c| c.into_owned()),
                tool_call: tool_call.as_deref().cloned(),
            });
        }
        return;
    };
    within.push(nested.node_id().to_string());
    match nested {
        Nested::Child { state, .. } => collect_waiting(state, within, None, out),
        Nested::Fork { branches, .. } => {
            for b in branches.iter().filter(|b| b.ended.is_none()) {
                collect_waiting(&b.state, within, Some(&b.target), out);
            }
        }
        Nested::Parallel { .. } => {}
    }
    within.pop();
}

/// Directs the next review decision to the review `correlation_id` of `state` (any of
/// [`waiting_reviews`]): the waiting fork branch that holds it is moved ahead of the other
/// waiting branches (a resumed fork gives the decision to its first waiting branch; the
/// others wait on with their own correlation ids), and each flow's phase shows it. `false`
/// (nothing changed) when `state` does not wait for that review.
pub fn route_review(state: &mut RunState, correlation_id: &str) -> bool {
    let Some(nested) = state.nested.as_deref_mut() else {
        return matches!(&state.phase, ExecutionPhase::Awaiting { correlation_id: c, .. } if c == correlation_id);
    };
    let routed = match nested {
        Nested::Child { state, .. } => route_review(state, correlation_id),
        Nested::Fork { branches, .. } => {
            let first = branches.iter().position(|b| b.ended.is_none());
            let hit = branches
                .iter_mut()
                .position(|b| b.ended.is_none() && route_review(&mut b.state, correlation_id));
            if let (Some(first), Some(hit)) = (first, hit) {
                let b = branches.remove(hit);
                branches.insert(first, b);
            }
            hit.is_some()
        }
        Nested::Parallel { .. } => false,
    };
    if routed && let Some(phase) = nested.awaiting().cloned() {
        state.phase = phase;
    }
    routed
}
