//! The two seams the engine calls at node boundaries: a [`Checkpointer`] records the run as
//! it goes (durable runs, `hensu-host`), a [`RunControlHook`] decides whether it goes on
//! (pause, cancel: [`RunControl`](crate::RunControl)). Both come with each run in its
//! [`RunCtx`](crate::RunCtx), not with the engine.

use async_trait::async_trait;

use crate::error::RuntimeError;
use crate::state::{FinishedBranch, NestedFrame, RunState};

/// What a checkpointer or a run-control hook decides at a node boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Boundary {
    /// Run the next node.
    Continue,
    /// Run the next node; the hook held the run paused in place (waiting for a human) for
    /// this long, which the run's `maxExecutionTime` does not count.
    ContinueAfterPause(std::time::Duration),
    /// End the run with [`RuntimeError::Cancelled`] before the next node.
    Cancel,
    /// End the call with [`RunOutcome::Paused`](crate::RunOutcome::Paused) before the next
    /// node; the returned state (phase `Initial`, `current_node` = the next node) continues
    /// with [`Engine::resume`](crate::Engine::resume).
    Suspend,
}

/// Records a run as it goes, so a process killed mid-run resumes it (durable runs). Every
/// method is required: a wrapper that forgets to forward one does not compile. A run without
/// a checkpointer prepares no record at all (no branch records, no nested-boundary calls).
///
/// Calls come in run order, one at a time; an error ends the run with that error. The
/// returned [`Boundary`] lets a store's answer (a cancellation request, a pause flag) stop
/// the run at that boundary.
#[async_trait]
pub trait Checkpointer: Send + Sync {
    /// At every node boundary of the main flow — after the listener's `on_checkpoint`,
    /// before the run-control hooks and `NodeStarted` — with the state about to run
    /// `state.current_node`.
    async fn record_step(&self, state: &RunState) -> Result<Boundary, RuntimeError>;

    /// At every node boundary of a sub-workflow child of the main flow (at any depth), with
    /// the path of sub-workflow nodes from the main flow (`frames`, outermost first) and the
    /// child's state. The main flow's state is as of its last boundary (it waits at the
    /// sub-workflow node). Children inside fork branches are not reported. Durable runs
    /// record the child below the state's `nested` field, so a crash inside it resumes the
    /// child.
    async fn record_nested(
        &self,
        frames: &[NestedFrame],
        state: &RunState,
    ) -> Result<Boundary, RuntimeError>;

    /// When one branch of parallel or fork node `node_id` finished while the node's other
    /// branches may still run; `frames` is the path of sub-workflow nodes from the main flow
    /// to the flow holding the node (empty: the main flow). Calls for one node come in the
    /// order the branches finished. A durable run stores the branch below the state's
    /// `nested` field (as [`Nested::Parallel`](crate::Nested) /
    /// [`Nested::Fork`](crate::Nested)), so a process killed while the others run resumes
    /// the node without running the finished ones again. Branches of nodes inside fork
    /// branches are not reported.
    async fn record_branch(
        &self,
        frames: &[NestedFrame],
        node_id: &str,
        branch: FinishedBranch<'_>,
    ) -> Result<(), RuntimeError>;
}

/// Decides, at every node boundary of the main flow (after the [`Checkpointer`]), whether
/// the run goes on, waits, pauses or ends. An error ends the run with that error.
#[async_trait]
pub trait RunControlHook: Send + Sync {
    async fn at_boundary(&self, state: &RunState) -> Result<Boundary, RuntimeError>;
}
