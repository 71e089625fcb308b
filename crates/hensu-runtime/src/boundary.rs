//! Boundary hooks: what the engine asks before each node of the main flow (run control and
//! durable checkpoints implement them).

use async_trait::async_trait;

use crate::error::RuntimeError;
use crate::state::RunState;

/// What a [`BoundaryHook`] decides at a node boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Boundary {
    /// Run the next node.
    Continue,
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
}
