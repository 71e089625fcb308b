//! The trace context of the call in flight (docs/observability.md, *Context propagation*):
//! while the engine waits on an agent call, an action or a generic node, the HTTP clients
//! underneath (model providers, `webhook`, `api-caller`, MCP servers) read
//! [`traceparent`] and send it as the W3C `traceparent` header.
//!
//! The engine knows calls, not traces: a run's listener that exports traces gives it a
//! [`TraceSource`] ([`crate::ExecutionListener::trace_source`]), and the engine scopes each
//! call with the node it belongs to. The header is computed only when a client asks for it,
//! so a run whose calls make no HTTP request pays nothing but the scope.

use std::future::Future;
use std::sync::Arc;

/// Answers the W3C `traceparent` of a call made by node `node_id` of the current run.
pub trait TraceSource: Send + Sync {
    /// `00-<trace id>-<span id>-01` of the span the call belongs to, or `None`.
    fn traceparent(&self, node_id: &str) -> Option<String>;
}

/// The call in flight: whose trace and which node.
#[derive(Clone)]
pub struct CallScope {
    source: Arc<dyn TraceSource>,
    node_id: Arc<str>,
}

impl CallScope {
    pub fn new(source: Arc<dyn TraceSource>, node_id: &str) -> CallScope {
        CallScope {
            source,
            node_id: Arc::from(node_id),
        }
    }
}

tokio::task_local! {
    static CALL: CallScope;
}

/// The `traceparent` of the call the current task is making (`None`: no trace exported, or
/// not inside a call).
pub fn traceparent() -> Option<String> {
    CALL.try_with(|c| c.source.traceparent(&c.node_id))
        .ok()
        .flatten()
}

/// Runs `call` as the call of `scope` (none: as it is).
pub async fn in_call<F: Future>(scope: Option<CallScope>, call: F) -> F::Output {
    match scope {
        Some(s) => Box::pin(CALL.scope(s, call)).await,
        None => call.await,
    }
}

/// `call` as the call of `scope`, boxed: for a spawned task, which does not inherit the task
/// locals of its parent.
pub fn scoped<F: Future + Send + 'static>(
    scope: Option<CallScope>,
    call: F,
) -> std::pin::Pin<Box<dyn Future<Output = F::Output> + Send>>
where
    F::Output: Send,
{
    match scope {
        Some(s) => Box::pin(CALL.scope(s, call)),
        None => Box::pin(call),
    }
}

/// The scope of the current task's call, to hand to a task it spawns.
pub fn current() -> Option<CallScope> {
    CALL.try_with(Clone::clone).ok()
}
