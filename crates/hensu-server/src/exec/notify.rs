//! The checkpointer of a server run ([`NotifyingHook`]): each boundary is recorded durably,
//! and the run's SSE streams are woken once it is committed (after the boundary, or after the
//! pipelined writer's commit); during a shutdown a boundary suspends the run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use async_trait::async_trait;
use hensu_host::DurableRun;
use hensu_runtime::{Boundary, Checkpointer, FinishedBranch, NestedFrame, RunState, RuntimeError};
use tokio::sync::broadcast;

use super::RunChanged;
use crate::metrics;

/// The checkpointer of a server run: the durable checkpoint, then a wake-up for the run's
/// streams, and the step latency metric.
pub struct NotifyingHook {
    durable: Arc<DurableRun>,
    tenant: String,
    run_id: String,
    events: broadcast::Sender<RunChanged>,
    last: Mutex<Option<Instant>>,
    /// The server is shutting down: the next boundary suspends the run.
    closing: Arc<AtomicBool>,
    /// A boundary suspended the run for the shutdown.
    handed_back: AtomicBool,
    /// The run's tokens: a boundary ends the node whose text they were.
    tokens: Option<Arc<crate::tokens::TokenHub>>,
    /// The durable run wakes the streams after each of its commits (pipelined commit: a
    /// boundary returns before its step is committed, and streams read committed steps).
    woken_on_commit: bool,
}

impl NotifyingHook {
    pub(super) fn new(
        durable: Arc<DurableRun>,
        tenant: &str,
        run_id: &str,
        events: broadcast::Sender<RunChanged>,
        closing: Arc<AtomicBool>,
    ) -> NotifyingHook {
        let changed = RunChanged {
            tenant: tenant.into(),
            run_id: run_id.into(),
        };
        let wake = events.clone();
        let woken_on_commit = durable.on_commit(Arc::new(move || {
            let _ = wake.send(changed.clone());
        }));
        NotifyingHook {
            durable,
            tenant: tenant.into(),
            run_id: run_id.into(),
            events,
            last: Mutex::new(None),
            closing,
            handed_back: AtomicBool::new(false),
            tokens: None,
            woken_on_commit,
        }
    }

    pub(super) fn with_tokens(
        mut self,
        tokens: Option<Arc<crate::tokens::TokenHub>>,
    ) -> NotifyingHook {
        self.tokens = tokens;
        self
    }

    /// Whether the run stopped because a boundary handed it back for the shutdown.
    pub(super) fn handed_back(&self) -> bool {
        self.handed_back.load(Ordering::SeqCst)
    }

    /// The durable run's decision, unless the server is shutting down: then a boundary that
    /// would go on suspends the run instead (recorded already; a client's cancel still wins).
    /// Suspending, not cancelling: a cancelled run would run its saga compensations.
    fn at_shutdown(
        &self,
        decided: Result<Boundary, RuntimeError>,
    ) -> Result<Boundary, RuntimeError> {
        match decided {
            Ok(Boundary::Continue | Boundary::ContinueAfterPause(_))
                if self.closing.load(Ordering::SeqCst) =>
            {
                self.handed_back.store(true, Ordering::SeqCst);
                Ok(Boundary::Suspend)
            }
            other => other,
        }
    }

    /// Wakes the run's streams after a boundary, unless the durable run does after its
    /// commits.
    fn notify(&self) {
        if self.woken_on_commit {
            return;
        }
        let _ = self.events.send(RunChanged {
            tenant: self.tenant.clone(),
            run_id: self.run_id.clone(),
        });
    }
}

#[async_trait]
impl Checkpointer for NotifyingHook {
    async fn record_step(&self, state: &RunState) -> Result<Boundary, RuntimeError> {
        let now = Instant::now();
        if let Ok(mut last) = self.last.lock()
            && let Some(prev) = last.replace(now)
        {
            metrics::step_latency(now - prev);
        }
        let r = self.durable.record_step(state).await;
        // The node's output is in the log now; its tokens are no longer kept.
        if let Some(t) = &self.tokens {
            t.node_done(&self.run_id);
        }
        self.notify();
        self.at_shutdown(r)
    }

    // The run's children and finished fork/parallel branches are recorded like the
    // main flow's steps (ARCHITECTURE.md, *Nested flows*): a takeover resumes them too.
    async fn record_nested(
        &self,
        frames: &[NestedFrame],
        state: &RunState,
    ) -> Result<Boundary, RuntimeError> {
        let r = self.durable.record_nested(frames, state).await;
        self.notify();
        self.at_shutdown(r)
    }

    async fn record_branch(
        &self,
        frames: &[NestedFrame],
        node_id: &str,
        branch: FinishedBranch<'_>,
    ) -> Result<(), RuntimeError> {
        let r = self.durable.record_branch(frames, node_id, branch).await;
        self.notify();
        r
    }
}
