//! Run control at node boundaries: pause after the current node, resume, cancel (the
//! `ExecutionPlan` controls of upstream's plan runners), a [`RunControlHook`] the executor calls
//! at every node boundary of the main flow (after the checkpointer, before the node starts).
//!
//! ```no_run
//! # async fn demo(workflow: std::sync::Arc<hensu_ir::Workflow>) {
//! use hensu_runtime::{Engine, RunControl, RunCtx};
//! let control = RunControl::new();
//! let engine = Engine::builder().build();
//! let prepared = engine.prepare(workflow).expect("prepared");
//! let handle = control.clone();
//! // elsewhere: handle.pause(); … handle.resume(); … handle.cancel();
//! let ctx = RunCtx::new(control.cancel_token());
//! let result = control.run(&engine, &prepared, Default::default(), ctx).await;
//! # let _ = (result, handle);
//! # }
//! ```

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use crate::checkpoint::{Boundary, RunControlHook};
use crate::engine::{Engine, Prepared, RunCtx};
use crate::error::RuntimeError;
use crate::run_types::{CancelToken, RunOutcome, RunResult};
use crate::state::RunState;
use crate::value::Context;

/// The lifecycle of a controlled run (upstream `ExecutionPlan.state()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ControlStatus {
    Created,
    Running,
    /// Waiting at a node boundary for [`RunControl::resume`].
    Paused,
    Cancelled,
    Completed,
    Failed,
}

impl ControlStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ControlStatus::Created => "CREATED",
            ControlStatus::Running => "RUNNING",
            ControlStatus::Paused => "PAUSED",
            ControlStatus::Cancelled => "CANCELLED",
            ControlStatus::Completed => "COMPLETED",
            ControlStatus::Failed => "FAILED",
        }
    }

    fn is_final(self) -> bool {
        matches!(
            self,
            ControlStatus::Cancelled | ControlStatus::Completed | ControlStatus::Failed
        )
    }
}

impl std::fmt::Display for ControlStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

struct Inner {
    status: Mutex<ControlStatus>,
    pause_requested: AtomicBool,
    cancel: CancelToken,
    wake: tokio::sync::Notify,
    /// Node boundaries passed (nodes started under this control).
    boundaries: AtomicU64,
    current_node: Mutex<Option<String>>,
}

/// A handle on one run: `pause()` takes effect before the next node (the running node
/// finishes first) and the run waits in place (not counted by `maxExecutionTime`); `resume()` continues it; `cancel()` ends it
/// before the next node (in any state, also while paused; a run cancelled before it starts
/// never starts). Cheap to clone; every clone controls the same run.
#[derive(Clone)]
pub struct RunControl {
    inner: Arc<Inner>,
}

impl Default for RunControl {
    fn default() -> Self {
        RunControl::new()
    }
}

impl std::fmt::Debug for RunControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunControl")
            .field("status", &self.status())
            .field("current_node", &self.current_node())
            .finish()
    }
}

impl RunControl {
    pub fn new() -> RunControl {
        RunControl::with_cancel(CancelToken::new())
    }

    /// A control sharing `cancel` (e.g. the token providers abort in-flight calls with).
    pub fn with_cancel(cancel: CancelToken) -> RunControl {
        RunControl {
            inner: Arc::new(Inner {
                status: Mutex::new(ControlStatus::Created),
                pause_requested: AtomicBool::new(false),
                cancel,
                wake: tokio::sync::Notify::new(),
                boundaries: AtomicU64::new(0),
                current_node: Mutex::new(None),
            }),
        }
    }

    /// The cancellation token to pass to [`Engine::run`] / [`Engine::resume`].
    pub fn cancel_token(&self) -> &CancelToken {
        &self.inner.cancel
    }

    /// Pauses before the next node. No effect on a finished run.
    pub fn pause(&self) {
        if !self.status().is_final() {
            self.inner.pause_requested.store(true, Ordering::SeqCst);
        }
    }

    /// Continues a paused run (or withdraws a pause not yet reached).
    pub fn resume(&self) {
        self.inner.pause_requested.store(false, Ordering::SeqCst);
        self.inner.wake.notify_waiters();
    }

    /// Ends the run before its next node; in-flight provider calls sharing the token abort.
    pub fn cancel(&self) {
        self.inner.cancel.cancel();
        self.set_status_unless_final(ControlStatus::Cancelled);
        self.inner.wake.notify_waiters();
    }

    pub fn status(&self) -> ControlStatus {
        self.inner
            .status
            .lock()
            .map(|s| *s)
            .unwrap_or(ControlStatus::Failed)
    }

    pub fn is_pause_requested(&self) -> bool {
        self.inner.pause_requested.load(Ordering::SeqCst)
    }

    /// The node about to run (or running), as of the last boundary.
    pub fn current_node(&self) -> Option<String> {
        self.inner.current_node.lock().ok().and_then(|n| n.clone())
    }

    /// Nodes started under this control.
    pub fn nodes_started(&self) -> u64 {
        self.inner.boundaries.load(Ordering::SeqCst)
    }

    fn set_status(&self, s: ControlStatus) {
        if let Ok(mut st) = self.inner.status.lock() {
            *st = s;
        }
    }

    fn set_status_unless_final(&self, s: ControlStatus) {
        if let Ok(mut st) = self.inner.status.lock()
            && !st.is_final()
        {
            *st = s;
        }
    }

    /// Records how a run ended (done by [`RunControl::run`] / [`RunControl::resume_run`]).
    pub fn finished(&self, outcome: &RunOutcome) {
        let s = match outcome {
            RunOutcome::Completed { .. } => ControlStatus::Completed,
            RunOutcome::Paused => ControlStatus::Paused,
            RunOutcome::Failed(RuntimeError::Cancelled { .. }) => ControlStatus::Cancelled,
            RunOutcome::Rejected { .. } | RunOutcome::Failed(_) => ControlStatus::Failed,
        };
        if self.inner.cancel.is_cancelled() {
            self.set_status(ControlStatus::Cancelled);
        } else {
            self.set_status(s);
        }
    }

    /// Runs `p` from its start under this control: with `ctx`'s listener and checkpointer,
    /// but this control's cancellation token and this control as the run's one control hook.
    pub async fn run(
        &self,
        engine: &Engine,
        p: &Prepared,
        input: Context,
        ctx: RunCtx<'_>,
    ) -> RunResult {
        if self.inner.cancel.is_cancelled() {
            let state = RunState::new(
                String::new(),
                p.workflow().id.clone(),
                p.plan.id(p.plan.start).to_string(),
                input,
            );
            return RunResult {
                outcome: RunOutcome::Failed(RuntimeError::Cancelled {
                    last_nodes: Vec::new(),
                }),
                state,
                duration: std::time::Duration::ZERO,
            };
        }
        self.set_status(ControlStatus::Running);
        let controls: [&dyn RunControlHook; 1] = [self];
        let ctx = RunCtx {
            cancel: &self.inner.cancel,
            controls: &controls,
            ..ctx
        };
        let r = engine.run_prepared(p, input, ctx).await;
        self.finished(&r.outcome);
        r
    }

    /// Continues a saved run under this control ([`Engine::resume`]).
    pub async fn resume_run(
        &self,
        engine: &Engine,
        p: &Prepared,
        state: RunState,
        decision: Option<crate::review::ReviewDecision>,
        ctx: RunCtx<'_>,
    ) -> RunResult {
        self.set_status(ControlStatus::Running);
        let controls: [&dyn RunControlHook; 1] = [self];
        let ctx = RunCtx {
            cancel: &self.inner.cancel,
            controls: &controls,
            ..ctx
        };
        let r = engine.resume(p, state, decision, ctx).await;
        self.finished(&r.outcome);
        r
    }
}

#[async_trait]
impl RunControlHook for RunControl {
    async fn at_boundary(&self, state: &RunState) -> Result<Boundary, RuntimeError> {
        if let Ok(mut n) = self.inner.current_node.lock() {
            match n.as_mut() {
                Some(s) => s.clone_from(&state.current_node),
                None => *n = Some(state.current_node.clone()),
            }
        }
        // While paused in place the run waits for a human: that time is not run time.
        // Measured on tokio's clock, the one the run's time limit sleeps on.
        let mut paused_since: Option<tokio::time::Instant> = None;
        loop {
            if self.inner.cancel.is_cancelled() {
                return Ok(Boundary::Cancel);
            }
            if !self.inner.pause_requested.load(Ordering::SeqCst) {
                break;
            }
            paused_since.get_or_insert_with(tokio::time::Instant::now);
            // Register interest before re-checking, so a resume() in between is not lost.
            let woken = self.inner.wake.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            self.set_status_unless_final(ControlStatus::Paused);
            if self.inner.cancel.is_cancelled() || !self.is_pause_requested() {
                continue;
            }
            woken.await;
        }
        self.set_status_unless_final(ControlStatus::Running);
        self.inner.boundaries.fetch_add(1, Ordering::SeqCst);
        Ok(match paused_since {
            Some(t) => Boundary::ContinueAfterPause(t.elapsed()),
            None => Boundary::Continue,
        })
    }
}
