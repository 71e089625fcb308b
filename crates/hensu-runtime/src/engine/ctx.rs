//! What comes with one run rather than with the engine: its cancellation token, listener,
//! checkpointer and run-control hooks ([`RunCtx`]), and the engine as one run sees it
//! ([`Exec`], what the run loop and the node kinds are methods of).

use std::ops::Deref;

use crate::checkpoint::{Boundary, Checkpointer, RunControlHook};
use crate::error::RuntimeError;
use crate::events::{ExecutionListener, NoopListener};
use crate::run_types::CancelToken;
use crate::state::{FinishedBranch, NestedFrame, RunState};
use crate::wait::{SleepingWaiter, Waiter};

use super::{Engine, Flow};

/// The per-run hooks of one [`Engine::run`] / [`Engine::run_prepared`] /
/// [`Engine::resume`] call.
///
/// ```
/// # use hensu_runtime::{CancelToken, CollectingListener, RunCtx};
/// let cancel = CancelToken::new();
/// let events = CollectingListener::default();
/// let ctx = RunCtx::new(&cancel).listener(&events);
/// # let _ = ctx;
/// ```
#[derive(Clone, Copy)]
pub struct RunCtx<'r> {
    /// Cancels the run (the node in flight is abandoned).
    pub cancel: &'r CancelToken,
    /// Everything observable (default: nothing is listened to).
    pub listener: &'r dyn ExecutionListener,
    /// Records the run as it goes (default: none, and no record is prepared).
    pub checkpointer: Option<&'r dyn Checkpointer>,
    /// Asked at every boundary of the main flow after the checkpointer, in order.
    pub controls: &'r [&'r dyn RunControlHook],
    /// The id of a new run (the durable run's id, so events, records and `runs` name it the
    /// same); `None`: a fresh UUID.
    pub run_id: Option<&'r str>,
    /// Decides the run's `wait` and `awaitSignal` nodes (default: [`SleepingWaiter`]).
    pub waiter: Option<&'r dyn Waiter>,
    /// Where the calls of the node in flight are journaled (a durable run; docs/security.md,
    /// *Call journal*); `None`: calls are numbered and keyed, not recorded.
    pub journal: Option<&'r std::sync::Arc<dyn crate::journal::CallJournal>>,
}

impl std::fmt::Debug for RunCtx<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunCtx")
            .field("cancel", self.cancel)
            .field("checkpointer", &self.checkpointer.is_some())
            .field("controls", &self.controls.len())
            .field("run_id", &self.run_id)
            .field("journal", &self.journal.is_some())
            .finish_non_exhaustive()
    }
}

impl<'r> RunCtx<'r> {
    /// A run cancelled by `cancel`, with no listener, checkpointer or controls.
    pub fn new(cancel: &'r CancelToken) -> RunCtx<'r> {
        RunCtx {
            cancel,
            listener: &NoopListener,
            checkpointer: None,
            controls: &[],
            run_id: None,
            waiter: None,
            journal: None,
        }
    }

    /// The waiter of the run's `wait` and `awaitSignal` nodes (docs/language.md, *Timers and
    /// signals*).
    pub fn waiter(mut self, waiter: &'r dyn Waiter) -> RunCtx<'r> {
        self.waiter = Some(waiter);
        self
    }

    /// Journals the calls of the node in flight in `journal`.
    pub fn journal(
        mut self,
        journal: Option<&'r std::sync::Arc<dyn crate::journal::CallJournal>>,
    ) -> RunCtx<'r> {
        self.journal = journal;
        self
    }

    /// The id a new run gets (ignored by a resume, whose state has its id).
    pub fn run_id(mut self, run_id: &'r str) -> RunCtx<'r> {
        self.run_id = Some(run_id);
        self
    }

    pub fn listener(mut self, listener: &'r dyn ExecutionListener) -> RunCtx<'r> {
        self.listener = listener;
        self
    }

    pub fn checkpointer(mut self, checkpointer: &'r dyn Checkpointer) -> RunCtx<'r> {
        self.checkpointer = Some(checkpointer);
        self
    }

    /// Sets the checkpointer, or none.
    pub fn checkpointer_opt(mut self, checkpointer: Option<&'r dyn Checkpointer>) -> RunCtx<'r> {
        self.checkpointer = checkpointer;
        self
    }

    pub fn controls(mut self, controls: &'r [&'r dyn RunControlHook]) -> RunCtx<'r> {
        self.controls = controls;
        self
    }
}

/// The engine as one run sees it: the long-lived [`Engine`] (through `Deref`) and the run's
/// hooks. Built once per run call; nothing in it is built per step.
pub(crate) struct Exec<'r> {
    engine: &'r Engine,
    pub(crate) listener: &'r dyn ExecutionListener,
    /// `listener.wants_step_events()`, read once: when false the hot loop builds no per-step
    /// event and skips the clock reads only those events need.
    pub(crate) step_events: bool,
    checkpointer: Option<&'r dyn Checkpointer>,
    controls: &'r [&'r dyn RunControlHook],
    /// The listener's trace, which outgoing calls carry (`None`: no trace exported).
    trace: Option<std::sync::Arc<dyn crate::trace_context::TraceSource>>,
    waiter: Option<&'r dyn Waiter>,
    /// The run's call journal and call observer; the run id is filled at the first visit.
    journal: Option<std::sync::Arc<dyn crate::journal::CallJournal>>,
    observer: Option<std::sync::Arc<dyn crate::journal::CallObserver>>,
    journal_ctx: std::sync::OnceLock<crate::journal::JournalCtx>,
    /// The listener's token sink (`None`: no agent call streams).
    tokens: Option<std::sync::Arc<dyn crate::tokens::TokenSink>>,
    /// The signals any flow of the run took (docs/language.md, *Timers and signals*).
    pub(crate) signals: crate::waiting::SignalLedger,
}

impl Deref for Exec<'_> {
    type Target = Engine;
    fn deref(&self) -> &Engine {
        self.engine
    }
}

impl<'r> Exec<'r> {
    pub(crate) fn new(engine: &'r Engine, ctx: &RunCtx<'r>) -> Exec<'r> {
        Exec {
            engine,
            listener: ctx.listener,
            step_events: ctx.listener.wants_step_events(),
            checkpointer: ctx.checkpointer,
            controls: ctx.controls,
            trace: ctx.listener.trace_source(),
            waiter: ctx.waiter,
            journal: ctx.journal.cloned(),
            observer: ctx.listener.call_observer(),
            journal_ctx: std::sync::OnceLock::new(),
            tokens: ctx.listener.token_sink(),
            signals: crate::waiting::SignalLedger::default(),
        }
    }

    /// The run's waiter (the default sleeps and receives no signal).
    pub(crate) fn waiter(&self) -> &dyn Waiter {
        self.waiter.unwrap_or(&SleepingWaiter)
    }

    /// The journal scope of a visit of a node of kind `node` in run `run_id`: always for a
    /// run with a journal or a call observer, else only for the nodes that call outside
    /// (actions, generic nodes: their commands and requests get idempotency keys).
    pub(crate) fn journal_ctx(
        &self,
        run_id: &str,
        node: &hensu_ir::Node,
    ) -> Option<crate::journal::JournalCtx> {
        let wanted = self.journal.is_some()
            || self.observer.is_some()
            || matches!(node, hensu_ir::Node::Action(_) | hensu_ir::Node::Generic(_));
        wanted.then(|| {
            self.journal_ctx
                .get_or_init(|| crate::journal::JournalCtx {
                    run_id: std::sync::Arc::from(run_id),
                    journal: self.journal.clone(),
                    observer: self.observer.clone(),
                    approver: Some(self.review.clone()),
                })
                .clone()
        })
    }

    /// The scope of a call node `node_id` makes (`None` when no trace is exported).
    pub(crate) fn call_scope(&self, node_id: &str) -> Option<crate::trace_context::CallScope> {
        self.trace
            .as_ref()
            .map(|t| crate::trace_context::CallScope::new(t.clone(), node_id))
    }

    /// The token scope of an agent call of `node_id` (`None` when nobody listens).
    pub(crate) fn token_scope(
        &self,
        node_id: &str,
        branch_id: Option<&str>,
    ) -> Option<crate::tokens::TokenScope> {
        self.tokens
            .as_ref()
            .map(|t| crate::tokens::TokenScope::new(t.clone(), node_id, branch_id))
    }

    /// The boundary of a node of `flow` (main flow or a sub-workflow child of it): the
    /// checkpointer records, then (main flow only) the controls decide. The first decision
    /// other than going on wins; the pauses of those that went on add up.
    pub(crate) async fn at_boundary(
        &self,
        flow: Flow<'_>,
        state: &mut RunState,
    ) -> Result<Boundary, RuntimeError> {
        let mut waited = std::time::Duration::ZERO;
        if let Some(c) = self.checkpointer {
            // The checkpointer's delta reads the keys written since its last step from the
            // context's change log (a no-op after the first boundary).
            state.context.track_changes();
            let state = &*state;
            let decided = match flow {
                Flow::Child(frames) => c.record_nested(frames, state).await?,
                _ => c.record_step(state).await?,
            };
            match decided {
                Boundary::Continue => {}
                Boundary::ContinueAfterPause(w) => waited += w,
                stop => return Ok(stop),
            }
        }
        if let Flow::Main = flow {
            for control in self.controls {
                match control.at_boundary(&*state).await? {
                    Boundary::Continue => {}
                    Boundary::ContinueAfterPause(w) => waited += w,
                    stop => return Ok(stop),
                }
            }
        }
        Ok(if waited.is_zero() {
            Boundary::Continue
        } else {
            Boundary::ContinueAfterPause(waited)
        })
    }

    /// The sub-workflow path to record the finished branches of a parallel or fork node
    /// running in `flow` with ([`Checkpointer::record_branch`]); `None` when the run has no
    /// checkpointer or `flow` takes no checkpoints (a fork branch, a child inside one).
    pub(crate) fn branch_recording<'f>(&self, flow: Flow<'f>) -> Option<&'f [NestedFrame]> {
        self.checkpointer?;
        match flow {
            Flow::Main => Some(&[]),
            Flow::Child(frames) => Some(frames),
            Flow::Branch { .. } | Flow::Detached | Flow::Item => None,
        }
    }

    /// Tells the checkpointer that a branch of `node_id` finished.
    pub(crate) async fn record_branch(
        &self,
        frames: &[NestedFrame],
        node_id: &str,
        branch: FinishedBranch<'_>,
    ) -> Result<(), RuntimeError> {
        match self.checkpointer {
            Some(c) => c.record_branch(frames, node_id, branch).await,
            None => Ok(()),
        }
    }
}
