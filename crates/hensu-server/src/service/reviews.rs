//! Pending reviews of one execution (docs/server.md, *Pending reviews*): every review a
//! paused execution waits for — its main flow's, each fork branch's, each sub-workflow
//! child's — with its own correlation id. A decision (`POST …/resume` with `decision` and
//! `correlationId`) answers exactly that review; the others go on waiting with their ids,
//! so several reviewers decide them independently and in any order.

use hensu_runtime::WaitingReview;
use hensu_store::RunStatus;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::AppState;
use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult};

/// What waits for a reviewer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReviewKind {
    /// A node of the main flow.
    Node,
    /// A node in a fork branch.
    Branch,
    /// A node of a sub-workflow child run.
    Child,
    /// A gated tool call of a node's agent (docs/mcp.md, *Tool approval*): approve it
    /// (optionally with edited `arguments`) or reject it.
    Tool,
}

/// One review a paused execution waits for.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PendingReview {
    /// The resume's `correlationId` for this review.
    pub correlation_id: String,
    pub kind: ReviewKind,
    /// The node under review.
    pub node_id: String,
    /// The fork target whose branch waits (innermost).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The fork and sub-workflow nodes the review is nested in, outermost first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub within: Vec<String>,
    /// RFC 3339, UTC.
    pub requested_at: String,
    /// When the review is rejected undecided (RFC 3339, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_at: Option<String>,
    /// The node's output as text (what the reviewer decides on), redacted as the run's state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// The gated tool (kind `tool`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The arguments the model gave the gated tool (kind `tool`), redacted as the run's state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub arguments: Option<serde_json::Value>,
}

impl From<WaitingReview> for PendingReview {
    fn from(w: WaitingReview) -> PendingReview {
        let kind = match (&w.branch, w.within.is_empty()) {
            _ if w.tool_call.is_some() => ReviewKind::Tool,
            (Some(_), _) => ReviewKind::Branch,
            (None, false) => ReviewKind::Child,
            (None, true) => ReviewKind::Node,
        };
        let (tool, arguments) = match w.tool_call {
            Some(c) => (Some(c.tool), Some(c.arguments)),
            None => (None, None),
        };
        PendingReview {
            correlation_id: w.correlation_id,
            kind,
            node_id: w.node_id,
            branch: w.branch,
            within: w.within,
            requested_at: hensu_store::rfc3339(w.requested_at_ms),
            deadline_at: w.deadline_at_ms.map(hensu_store::rfc3339),
            output: w.output,
            tool,
            arguments,
        }
    }
}

/// `GET /api/v1/executions/{id}/reviews`.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PendingReviews {
    pub execution_id: String,
    /// In the order the execution's flows hold them (main flow first, then fork branches in
    /// target order, depth first); empty unless the execution is paused for review.
    pub reviews: Vec<PendingReview>,
}

/// The reviews the tenant's execution `run_id` waits for.
pub async fn list(app: &AppState, tenant: &Tenant, run_id: &str) -> ApiResult<PendingReviews> {
    let record = super::executions::owned_record(app, tenant, run_id).await?;
    let mut reviews = Vec::new();
    if record.status == RunStatus::Paused {
        let stored = app.store.load(run_id).await?;
        let state = hensu_host::restore(run_id, &stored.snapshot).map_err(ApiError::internal)?;
        reviews = hensu_runtime::waiting_reviews(&state)
            .into_iter()
            .map(PendingReview::from)
            .collect();
    }
    Ok(PendingReviews {
        execution_id: run_id.to_string(),
        reviews,
    })
}
