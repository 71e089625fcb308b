//! Boundary hooks: what the engine asks before each node of the main flow (run control and
//! durable checkpoints implement them).

use async_trait::async_trait;

use crate::error::RuntimeError;
use crate::state::{FinishedBranch, NestedFrame, RunState};

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

    /// Whether this hook records the branches of parallel and fork nodes as they finish
    /// ([`BoundaryHook::at_branch_finished`]). When no hook does, the engine prepares no
    /// record at all (a run without a store pays nothing for the feature).
    fn records_branches(&self) -> bool {
        false
    }

    /// Called (by hooks that [record branches](BoundaryHook::records_branches)) when one
    /// branch of parallel or fork node `node_id` finished while the node's other branches may
    /// still run; `frames` is the path of sub-workflow nodes from the main flow to the flow
    /// holding the node (empty: the main flow; see [`BoundaryHook::at_nested_boundary`]).
    /// Calls for one node come one at a time, in the order the branches finished. A durable
    /// run stores the branch below the state's `nested` field (as
    /// [`Nested::Parallel`](crate::Nested) / [`Nested::Fork`](crate::Nested)), so a process
    /// killed while the others run resumes the node without running the finished ones again.
    /// Branches of nodes inside fork branches are not reported. An error ends the run with
    /// that error.
    async fn at_branch_finished(
        &self,
        frames: &[NestedFrame],
        node_id: &str,
        branch: FinishedBranch<'_>,
    ) -> Result<(), RuntimeError> {
        let _ = (frames, node_id, branch);
        Ok(())
    }
}
