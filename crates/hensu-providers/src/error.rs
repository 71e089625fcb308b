//! Errors of a model request. Every error leaves the crate as a [`hensu_runtime::AgentError`]
//! whose message went through the [`crate::Redactor`].

use std::time::Duration;

use hensu_runtime::AgentError;

use crate::redact::Redactor;

/// What went wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// HTTP error status other than the ones below.
    Http,
    /// 429.
    RateLimited,
    /// 5xx, 408 or Anthropic's 529.
    ServerError,
    /// 401 / 403.
    Auth,
    /// No answer within the per-call timeout.
    Timeout,
    /// Connection refused, reset, TLS failure, …
    Transport,
    /// The provider answered something that is not its protocol.
    MalformedResponse,
    /// The provider refused or blocked the answer (safety filters, …).
    Refused,
    /// The circuit breaker of the provider is open.
    CircuitOpen,
    /// The run was cancelled.
    Cancelled,
    /// Missing key, declared tool nobody serves, …
    Config,
    /// The tool budget was exhausted and the model still asked for a tool.
    ToolBudget,
    /// The answer lacked the expected JSON after every corrective re-prompt.
    StructuredOutput,
    /// An `unsafe` tool call started before the run stopped has no recorded result (E0511).
    InterruptedCall,
    /// The same, declared `on_interrupted = "pause"`: the run pauses before the node.
    CallHeld,
    /// The node no longer makes the calls its journal recorded (E0512).
    JournalDiverged,
    /// The call journal could not be written.
    Journal,
    /// A gated tool call waits for a reviewer: the run pauses at it (docs/mcp.md, *Tool
    /// approval*).
    ApprovalPending,
    /// A gated tool call where the run cannot pause for a reviewer (E0520).
    ApprovalUnavailable,
}

impl ErrorKind {
    /// The `errorType` the runtime records.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Http => "http",
            ErrorKind::RateLimited => "rate_limited",
            ErrorKind::ServerError => "server_error",
            ErrorKind::Auth => "auth",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Transport => "transport",
            ErrorKind::MalformedResponse => "malformed_response",
            ErrorKind::Refused => "refused",
            ErrorKind::CircuitOpen => "circuit_open",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Config => "config",
            ErrorKind::ToolBudget => "tool_budget",
            ErrorKind::StructuredOutput => "structured_output",
            ErrorKind::InterruptedCall => "interrupted_call",
            ErrorKind::CallHeld => hensu_runtime::journal::HELD_KIND,
            ErrorKind::JournalDiverged => "journal_diverged",
            ErrorKind::Journal => "journal",
            ErrorKind::ApprovalPending => hensu_runtime::journal::APPROVAL_KIND,
            ErrorKind::ApprovalUnavailable => "tool_approval_unavailable",
        }
    }

    /// Worth another attempt.
    pub fn is_retryable(self) -> bool {
        matches!(
            self,
            ErrorKind::RateLimited
                | ErrorKind::ServerError
                | ErrorKind::Timeout
                | ErrorKind::Transport
        )
    }

    /// Counts as a failure of the provider for its circuit breaker.
    pub fn is_provider_failure(self) -> bool {
        self.is_retryable()
    }
}

/// A failed model request.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ProviderError {
    pub kind: ErrorKind,
    pub message: String,
    pub status: Option<u16>,
    /// The provider's `Retry-After`, when it sent one.
    pub retry_after: Option<Duration>,
}

impl ProviderError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ProviderError {
            kind,
            message: message.into(),
            status: None,
            retry_after: None,
        }
    }

    /// The error with its message redacted.
    pub fn redacted(mut self, redactor: &Redactor) -> Self {
        self.message = redactor.redact_string(self.message);
        self
    }

    /// The runtime error (message redacted).
    pub fn into_agent_error(self, redactor: &Redactor) -> AgentError {
        AgentError::new(self.kind.as_str(), redactor.redact_string(self.message))
    }
}

impl From<hensu_runtime::journal::CallError> for ProviderError {
    fn from(e: hensu_runtime::journal::CallError) -> ProviderError {
        use hensu_runtime::journal::CallError;
        let kind = match &e {
            CallError::Interrupted { .. } => ErrorKind::InterruptedCall,
            CallError::Held { .. } => ErrorKind::CallHeld,
            CallError::Diverged { .. } => ErrorKind::JournalDiverged,
            CallError::Journal(_) => ErrorKind::Journal,
            CallError::AwaitingApproval { .. } => ErrorKind::ApprovalPending,
            CallError::ApprovalUnavailable { .. } => ErrorKind::ApprovalUnavailable,
        };
        ProviderError::new(kind, e.to_string())
    }
}

/// The kind of an HTTP error status.
pub fn kind_for_status(status: u16) -> ErrorKind {
    match status {
        429 => ErrorKind::RateLimited,
        408 | 500..=599 => ErrorKind::ServerError,
        401 | 403 => ErrorKind::Auth,
        _ => ErrorKind::Http,
    }
}

/// At most `max` characters of `s` (on a char boundary), with `…` when cut.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}
