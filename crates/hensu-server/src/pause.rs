//! Pausing a run of this server at its next node boundary: the request's outcome and the
//! run-control hook each run carries (`exec.rs` wires it into every run it executes).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use hensu_runtime::{Boundary, RunControlHook, RunState, RuntimeError};

/// What a pause request did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PauseRequest {
    /// The run stops after the node it runs now, saved `paused`.
    Requested,
    /// It was paused already (for a review, an external answer or an earlier pause).
    AlreadyPaused,
}

/// Pauses the run it was made for at its next node boundary once the executor's `pause`
/// asked for it (the run is then saved `paused`, resumable with a plain resume).
pub(crate) struct PauseHook {
    pub(crate) requested: Arc<Mutex<HashSet<String>>>,
    pub(crate) run_id: String,
}

#[async_trait]
impl RunControlHook for PauseHook {
    async fn at_boundary(&self, _state: &RunState) -> Result<Boundary, RuntimeError> {
        let asked = self
            .requested
            .lock()
            .is_ok_and(|mut r| r.remove(&self.run_id));
        Ok(if asked {
            Boundary::Suspend
        } else {
            Boundary::Continue
        })
    }
}
