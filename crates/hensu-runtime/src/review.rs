//! Human review (upstream Hensu's `ReviewHandler`; docs/language.md, *Reviews*). The default
//! handler approves everything (upstream `AUTO_APPROVE`, what the non-interactive CLI does);
//! the terminal and deferred handlers are host adapters (`hensu-host`).

use async_trait::async_trait;
use hensu_ir::ReviewConfig;
use serde::{Deserialize, Serialize};

use crate::run_types::PostProcessor;
use crate::state::{ExecutionPhase, HistoryStep, NodeResult, RunState};
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
}

/// Decides reviews.
#[async_trait]
pub trait ReviewHandler: Send + Sync {
    async fn request_review(&self, request: ReviewRequest<'_>) -> ReviewOutcome;
}

/// Approves every review (upstream `AUTO_APPROVE`).
#[derive(Clone, Copy, Debug, Default)]
pub struct AutoApprove;

#[async_trait]
impl ReviewHandler for AutoApprove {
    async fn request_review(&self, _request: ReviewRequest<'_>) -> ReviewOutcome {
        ReviewOutcome::Decided(ReviewDecision::Approve { edits: None })
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
        } if processor_id == PostProcessor::Review.id() => {
            Some((node_id.as_str(), correlation_id.as_str()))
        }
        _ => None,
    }
}
