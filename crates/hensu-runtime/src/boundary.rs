//! Boundary hooks: what the engine asks before each node of the main flow (run control and
//! durable checkpoints implement them).

use async_trait::async_trait;

use crate::error::RuntimeError;
use crate::state::{NestedFrame, RunState};

/// What a [`BoundaryHook`] decides at a node boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Boundary {
    /// Run the next node.
    Continue,
    /// Run the next node; the hook held the run paused in place (waiting for a human) for
    /// this long, which the run's `maxExecutionTime` does not count.
    ContinueAfterPause(std::time::Duration),
    /// End the run with [`RuntimeError::Cancelled`] before the next node.
    Cancel,
    /// End the call with [`RunOutcome::Paused`](crate::RunOutcome::Paused) before the next node; the returned state (phase
    /// `Initial`, `current_node` = the next node) continues with [`Engine::resume`](crate::Engine::resume).
    Suspend,
}

/// Called by the executor at every node boundary of the main flow — after the checkpoint
/// listener, before `NodeStarted` — with the state about to run `state.current_node`.
/// An error ends the run with that error.
#[async_trait]
pub trait BoundaryHook: Send + Sync {
    async fn at_boundary(&self, state: &RunState) -> Result<Boundary, RuntimeError>;

    /// Called at every node boundary of a sub-workflow child of the main flow (at any depth),
    /// with the path of sub-workflow nodes from the main flow (`frames`, outermost first) and
    /// the child's state. The main flow's state is as of its last boundary (it waits at the
    /// sub-workflow node). Children inside fork branches are not reported. Durable runs record
    /// the child here, so a crash inside it resumes the child; the default does nothing.
    async fn at_nested_boundary(
        &self,
        frames: &[NestedFrame],
        state: &RunState,
    ) -> Result<Boundary, RuntimeError> {
        let _ = (frames, state);
        Ok(Boundary::Continue)
    }
}
