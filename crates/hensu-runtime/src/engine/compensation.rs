//! Saga compensation (docs/language.md, *Saga compensation*): when a run ends unsuccessfully,
//! the compensation of every completed visit of a node that names one runs, newest first.
//!
//! * *Unsuccessful*: an end node with status FAILURE or CANCEL, a rejection, or a run error
//!   (a failure nothing routes, `maxSteps`, `maxExecutionTime`, a cancellation). A lost lease
//!   or a stale write of the store is not an end: another process continues the run.
//! * *Completed visit*: a history entry with status SUCCESS. The failed visit, a visit
//!   cancelled in flight and a rejected one are not in the history as successes.
//! * The tasks are planned once into `RunState::compensating` and checkpointed at a boundary
//!   before each one, so a run that dies while compensating resumes with those left (the one
//!   in flight runs again). Cancel and pause requests at those boundaries are ignored: the
//!   compensations are how a cancelled run cleans up. A sub-workflow child of the main flow
//!   compensating its own visits is checkpointed the same way, at nested boundaries (below
//!   its parent's state), and a resumed parent continues the child's compensations.
//! * A compensation sees the context as the run left it plus `{compensating}` and
//!   `{compensating_output}`; its output goes to `RunState::compensations` and the history,
//!   never to the context. A failed one is recorded and the rest still run.

use std::time::Instant;

use hensu_ir::{COMPENSATING, COMPENSATING_OUTPUT, CompensationBody, ExitStatus, Workflow};
use serde_json::Value;

use super::Exec;
use super::Prepared;
use crate::error::RuntimeError;
use crate::events::Event;
use crate::run_types::RunOutcome;
use crate::state::{
    Compensating, CompensationRecord, CompensationTask, EndCause, HistoryStep, NestedFrame,
    NodeResult, NodeStatus, RunState,
};
use crate::template::resolve;
use crate::value::{render, set_current_node};

/// Where the progress of compensations is checkpointed before each one.
#[derive(Clone, Copy, Debug)]
pub(crate) enum CompensationCheckpoints<'a> {
    /// Nowhere (a child inside a fork branch: nothing of it is checkpointed).
    None,
    /// The main flow's boundary ([`Checkpointer::record_step`](crate::Checkpointer), then the run-control hooks).
    Main,
    /// The nested boundary of the sub-workflow child reached through these frames
    /// ([`Checkpointer::record_nested`](crate::Checkpointer)).
    Child(&'a [NestedFrame]),
}

impl EndCause {
    /// The cause of an unsuccessful outcome; `None` when nothing is to be compensated.
    fn of(outcome: &RunOutcome) -> Option<EndCause> {
        match outcome {
            RunOutcome::Completed {
                exit_status: ExitStatus::Success,
                ..
            }
            | RunOutcome::Paused
            | RunOutcome::Failed(RuntimeError::Store { .. } | RuntimeError::AlreadyTerminal) => {
                None
            }
            RunOutcome::Completed {
                exit_status,
                end_node,
            } => Some(EndCause::Completed {
                end_node: end_node.clone(),
                exit_status: exit_status.as_str().to_string(),
            }),
            RunOutcome::Rejected { reason } => Some(EndCause::Rejected {
                reason: reason.clone(),
            }),
            RunOutcome::Failed(e) => Some(EndCause::Failed { error: e.clone() }),
        }
    }

    /// The outcome the run reports once compensated.
    fn outcome(&self) -> RunOutcome {
        match self {
            EndCause::Completed {
                end_node,
                exit_status,
            } => RunOutcome::Completed {
                exit_status: ExitStatus::parse(exit_status).unwrap_or(ExitStatus::Failure),
                end_node: end_node.clone(),
            },
            EndCause::Rejected { reason } => RunOutcome::Rejected {
                reason: reason.clone(),
            },
            EndCause::Failed { error } => RunOutcome::Failed(error.clone()),
        }
    }
}

/// The compensations an unsuccessful run owes: one per completed visit of a node naming a
/// compensation, newest visit first.
pub fn plan_compensations(workflow: &Workflow, state: &RunState) -> Vec<CompensationTask> {
    if workflow.saga.node_compensations.is_empty() {
        return Vec::new();
    }
    state
        .history
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, h)| h.status == NodeStatus::Success && h.compensates.is_none())
        .filter_map(|(i, h)| {
            let c = workflow.saga.compensation_of(&h.node_id)?;
            Some(CompensationTask {
                node_id: h.node_id.clone(),
                compensation_id: c.id.clone(),
                visit_step: h.step,
                history_index: i,
            })
        })
        .collect()
}

impl Exec<'_> {
    /// Runs the compensations `outcome` calls for (none for a success or a pause) and returns
    /// the outcome to report: the original one, or a store error that stopped the work.
    /// Progress is checkpointed through the boundary hooks before each compensation, where
    /// `checkpoints` says.
    pub(crate) async fn compensate(
        &self,
        p: &Prepared,
        state: &mut RunState,
        outcome: RunOutcome,
        checkpoints: CompensationCheckpoints<'_>,
    ) -> RunOutcome {
        let Some(cause) = EndCause::of(&outcome) else {
            return outcome;
        };
        let pending = plan_compensations(p.workflow(), state);
        if pending.is_empty() {
            return outcome;
        }
        state.compensating = Some(Compensating { cause, pending });
        match self.run_compensations(p, state, checkpoints).await {
            Ok(()) => outcome,
            Err(e) => RunOutcome::Failed(e),
        }
    }

    /// Continues the compensations of a resumed run (`state.compensating` set) and returns the
    /// outcome of the run as it ended before them.
    pub(crate) async fn resume_compensation(
        &self,
        p: &Prepared,
        state: &mut RunState,
        checkpoints: CompensationCheckpoints<'_>,
    ) -> RunOutcome {
        let Some(outcome) = state.compensating.as_ref().map(|c| c.cause.outcome()) else {
            return RunOutcome::Failed(RuntimeError::AlreadyTerminal);
        };
        match self.run_compensations(p, state, checkpoints).await {
            Ok(()) => outcome,
            Err(e) => RunOutcome::Failed(e),
        }
    }

    async fn run_compensations(
        &self,
        p: &Prepared,
        state: &mut RunState,
        checkpoints: CompensationCheckpoints<'_>,
    ) -> Result<(), RuntimeError> {
        // History times count from the run's start: continue from its last entry.
        let base_ms = state.history.last().map_or(0, |h| h.at_ms);
        let run_started = Instant::now();
        while let Some(task) = state
            .compensating
            .as_ref()
            .and_then(|c| c.pending.first())
            .cloned()
        {
            // Cancel and pause are ignored: compensating is how the run ends.
            match checkpoints {
                CompensationCheckpoints::None => {}
                CompensationCheckpoints::Main => {
                    self.listener.on_checkpoint(state);
                    self.at_boundary(super::Flow::Main, state).await?;
                }
                CompensationCheckpoints::Child(frames) => {
                    self.at_boundary(super::Flow::Child(frames), state).await?;
                }
            }
            self.listener.on_event(&Event::CompensationStarted {
                node_id: &task.node_id,
                compensation_id: &task.compensation_id,
                visit_step: task.visit_step,
            });
            let started = Instant::now();
            let result = self.run_one(p, state, &task).await;
            let duration_us = started.elapsed().as_micros() as u64;
            match result.status {
                NodeStatus::Success => self.listener.on_event(&Event::CompensationFinished {
                    node_id: &task.node_id,
                    compensation_id: &task.compensation_id,
                    visit_step: task.visit_step,
                    output: result.output.as_ref(),
                    duration_us,
                }),
                _ => self.listener.on_event(&Event::CompensationFailed {
                    node_id: &task.node_id,
                    compensation_id: &task.compensation_id,
                    visit_step: task.visit_step,
                    error: result.error.as_deref().unwrap_or("compensation failed"),
                    duration_us,
                }),
            }
            state.history.push(HistoryStep {
                step: task.visit_step,
                node_id: task.compensation_id.clone(),
                status: result.status,
                output: result.output.clone(),
                error: result.error.clone(),
                at_ms: base_ms + run_started.elapsed().as_millis() as u64,
                rubric: None,
                compensates: Some(task.node_id.clone()),
                usage: super::pipeline::token_usage(&result.metadata),
            });
            state.compensations.push(CompensationRecord {
                node_id: task.node_id,
                compensation_id: task.compensation_id,
                visit_step: task.visit_step,
                status: result.status,
                output: result.output,
                error: result.error,
            });
            if let Some(c) = state.compensating.as_mut() {
                c.pending.remove(0);
            }
        }
        state.compensating = None;
        Ok(())
    }

    /// One compensation on the run's final context plus `compensating` and
    /// `compensating_output`; the context of the run is not changed.
    async fn run_one(&self, p: &Prepared, state: &RunState, task: &CompensationTask) -> NodeResult {
        let Some(compensation) = p.workflow().saga.compensations.get(&task.compensation_id) else {
            return NodeResult::failure(format!(
                "compensation '{}' is not declared",
                task.compensation_id
            ));
        };
        let mut ctx = state.context.clone();
        ctx.insert(
            COMPENSATING.to_string(),
            Value::String(task.node_id.clone()),
        );
        let output = state
            .history
            .get(task.history_index)
            .and_then(|h| h.output.clone())
            .unwrap_or(Value::Null);
        ctx.insert(COMPENSATING_OUTPUT.to_string(), output);
        // Agents (stubs among them) see the compensation as the node being executed.
        set_current_node(&mut ctx, &compensation.id);
        match &compensation.body {
            CompensationBody::Agent { agent_id, prompt } => {
                let Some((agent, system_prompt)) = p.agents.get_with_system_prompt(agent_id) else {
                    return NodeResult::failure(format!("Agent not found: {agent_id}"));
                };
                let prompt = resolve(prompt, &ctx);
                let timeout = self.agent_timeout(agent.as_ref());
                self.call_agent(
                    agent.as_ref(),
                    system_prompt,
                    &compensation.id,
                    None,
                    &prompt,
                    &ctx,
                    timeout,
                    &[],
                )
                .await
            }
            CompensationBody::Actions(actions) => {
                let (mut result, outputs) =
                    self.execute_actions(&compensation.id, actions, &ctx).await;
                let text = outputs
                    .iter()
                    .map(|o| o.trim())
                    .filter(|o| !o.is_empty())
                    .collect::<Vec<_>>()
                    .join("\n");
                if result.status == NodeStatus::Success {
                    result.output = Some(Value::String(text));
                } else {
                    result.error = Some(format!(
                        "{}: {}",
                        result.error.as_deref().unwrap_or("failed"),
                        render(&Value::String(text))
                    ));
                }
                result
            }
        }
    }
}
