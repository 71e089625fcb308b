//! The record a durable run's result leaves: its final status, or — paused — where it stopped
//! and when a claim may take it.

use hensu_runtime::{ExecutionPhase, RunOutcome, RunResult, RunState, RuntimeError};
use hensu_store::{RecordUpdate, RunStatus};

/// The record a run's result leaves.
pub fn final_update(result: &RunResult) -> RecordUpdate {
    let state = &result.state;
    match &result.outcome {
        RunOutcome::Completed {
            exit_status,
            end_node,
        } => RecordUpdate::finished(
            RunStatus::Completed,
            Some(end_node.clone()),
            Some(exit_status.as_str().to_string()),
        ),
        RunOutcome::Rejected { .. } => {
            RecordUpdate::finished(RunStatus::Rejected, Some(state.current_node.clone()), None)
        }
        RunOutcome::Failed(RuntimeError::Cancelled { .. }) => {
            RecordUpdate::finished(RunStatus::Cancelled, Some(state.current_node.clone()), None)
        }
        RunOutcome::Failed(_) => {
            RecordUpdate::finished(RunStatus::Failed, Some(state.current_node.clone()), None)
        }
        RunOutcome::Paused => paused_update(state),
    }
}

/// The record of a paused run: where it stopped, the review it shows, and when a claim may
/// take it — the earliest wake time of every wait of its flows (docs/language.md, *Timers and
/// signals*: the main flow's, a fork branch's, a sub-workflow child's) and of every review
/// deadline (docs/server.md, *Pending reviews*), woken earlier by a signal any of its waits
/// waits for. A run paused by hand with nothing of that waits for a resume.
fn paused_update(state: &RunState) -> RecordUpdate {
    let waits = hensu_runtime::waiting_waits(state);
    let (node, correlation_id, deadline) = match &state.phase {
        ExecutionPhase::Awaiting {
            node_id,
            correlation_id,
            deadline_at_ms,
            ..
        } => (
            node_id.clone(),
            Some(correlation_id.clone()).filter(|c| !c.is_empty()),
            *deadline_at_ms,
        ),
        _ => (state.current_node.clone(), None, None),
    };
    let wake_at = waits
        .iter()
        .filter_map(|w| w.wake_at_ms)
        .chain(
            hensu_runtime::waiting_reviews(state)
                .iter()
                .filter_map(|w| w.deadline_at_ms),
        )
        .chain(deadline)
        .min();
    let mut signals: Vec<String> = Vec::new();
    for name in waits.into_iter().filter_map(|w| w.signal) {
        if !signals.contains(&name) {
            signals.push(name);
        }
    }
    let wait = (wake_at.is_some() || !signals.is_empty())
        .then(|| hensu_store::RunWait::new(wake_at, signals));
    RecordUpdate {
        status: RunStatus::Paused,
        current_node: Some(node),
        correlation_id,
        exit_status: None,
        wait,
    }
}
