//! The run loop: node after node, with the run guards (`maxSteps`, `maxExecutionTime`,
//! cancellation) and the boundary hooks before each node of the main flow (and of its
//! sub-workflow children).

use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::task::Poll;
use std::time::{Duration, Instant};

use hensu_ir::{ExitStatus, Node};

use super::Exec;
use super::Prepared;
use super::pipeline::{PostCtx, Step, now_ms};
use crate::checkpoint::Boundary;
use crate::error::RuntimeError;
use crate::events::Event;
use crate::review::ReviewDecision;
use crate::run_types::{CancelToken, PostProcessor, RunOutcome};
use crate::state::{
    ExecutionPhase, InheritedHistory, NestedFrame, NodeResult, NodeStatus, RunState,
};

/// Which flow a [`Exec::drive`] call runs, and so which boundary hooks it calls.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Flow<'a> {
    /// The run's main flow: [`Checkpointer::record_step`](crate::Checkpointer) and the run-control hooks
    /// before each node.
    Main,
    /// A sub-workflow child reached from the main flow through `frames`:
    /// [`Checkpointer::record_nested`](crate::Checkpointer) before each node.
    Child(&'a [NestedFrame]),
    /// A fork branch ending at its join (reaching it completes the branch, SUCCESS, without
    /// executing it): no hooks, the branch is recorded through its fork.
    Branch {
        join: usize,
        inherited: &'a InheritedHistory<'a>,
    },
    /// A sub-workflow child inside a fork branch: no hooks.
    Detached,
}

/// `deadline` on tokio's clock (the time limit sleeps on it; under tokio's paused test
/// clock it runs ahead of the system's).
fn on_tokio_clock(deadline: Instant) -> tokio::time::Instant {
    tokio::time::Instant::now() + deadline.saturating_duration_since(Instant::now())
}

/// How the race between a node, the run's cancellation and its time limit ended.
enum Raced {
    Done(Result<NodeResult, RuntimeError>),
    Cancelled,
    TimedOut,
}

/// Runs `execute` until it finishes, the run is cancelled or the time limit passes, checked in
/// that order of priority: a cancellation seen before a poll abandons the node without
/// polling it again; the node wins over the time limit when both are ready. The cancellation
/// waiter is registered only when the node has to wait, so a node that finishes at once (an
/// agent answering immediately) costs no waiter registration.
/// `execute` is pinned by the caller, in place: moving the (large) node future into this one
/// would copy it on every step.
async fn race_node<F>(
    mut execute: Pin<&mut F>,
    cancel: &CancelToken,
    mut sleep: Pin<&mut tokio::time::Sleep>,
) -> Raced
where
    F: Future<Output = Result<NodeResult, RuntimeError>>,
{
    let mut cancelled = pin!(cancel.cancelled());
    poll_fn(|cx| {
        if cancel.is_cancelled() {
            return Poll::Ready(Raced::Cancelled);
        }
        if let Poll::Ready(r) = execute.as_mut().poll(cx) {
            return Poll::Ready(Raced::Done(r));
        }
        // The waiter registers on its first poll and then checks the flag, so a cancellation
        // between the check above and this poll is not missed.
        if cancelled.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Raced::Cancelled);
        }
        if sleep.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Raced::TimedOut);
        }
        Poll::Pending
    })
    .await
}

impl Exec<'_> {
    /// The run loop over `flow`. The time limit counts from `started`; time a hook or a
    /// reviewer spends waiting for a human does not count (the clock moves forward by it).
    pub(crate) async fn drive(
        &self,
        p: &Prepared,
        state: &mut RunState,
        cancel: &CancelToken,
        mut started: Instant,
        mut resume_decision: Option<ReviewDecision>,
        flow: Flow<'_>,
    ) -> Result<RunOutcome, RuntimeError> {
        let (boundary, inherited) = match flow {
            Flow::Branch { join, inherited } => (Some(join), *inherited),
            _ => (None, InheritedHistory::default()),
        };
        let default_config;
        let config = match &p.workflow().config {
            Some(c) => c,
            None => {
                default_config = hensu_ir::WorkflowConfig::default();
                &default_config
            }
        };
        let max_steps = self
            .options
            .max_steps
            .unwrap_or(config.max_steps.max(1) as u64);
        let time_limit = self
            .options
            .max_execution_time
            .unwrap_or(Duration::from_millis(
                config.max_execution_time.max(0) as u64
            ));
        let mut deadline = started + time_limit;
        let sleep = tokio::time::sleep_until(on_tokio_clock(deadline));
        tokio::pin!(sleep);
        let time_error = |state: &RunState| RuntimeError::TimeLimitExceeded {
            limit_ms: time_limit.as_millis() as u64,
            last_nodes: state.last_nodes_after(&inherited, 5),
        };

        let mut cur =
            p.plan
                .index_of(&state.current_node)
                .ok_or_else(|| RuntimeError::NodeNotFound {
                    node: state.current_node.clone(),
                })?;

        // A node whose nested flows were saved (a child run, fork branches) runs again and
        // continues them; the answer to a review pending in them goes to them.
        let mut nested_decision = None;
        if state
            .nested
            .as_ref()
            .is_some_and(|n| n.node_id() != state.current_node)
        {
            state.nested = None;
        }
        if state.nested.is_some() {
            state.phase = ExecutionPhase::Initial;
            nested_decision = resume_decision.take();
        }
        // Resume inside the post pipeline of a suspended node.
        if let ExecutionPhase::Awaiting {
            node_id,
            processor_id,
            cached_result,
            ..
        } = std::mem::replace(&mut state.phase, ExecutionPhase::Initial)
        {
            cur = p
                .plan
                .index_of(&node_id)
                .ok_or(RuntimeError::NodeNotFound { node: node_id })?;
            let from = PostProcessor::PIPELINE
                .iter()
                .position(|pp| pp.id() == processor_id)
                .unwrap_or(0);
            let mut pc = PostCtx {
                idx: cur,
                result: *cached_result,
                started: Instant::now(),
                next: None,
                resume_decision: resume_decision.take(),
                run_started: started,
                completed: None,
                human_wait: std::time::Duration::ZERO,
                inherited,
            };
            let step = self.post_pipeline(p, state, &mut pc, from).await?;
            started += pc.human_wait;
            deadline += pc.human_wait;
            sleep.as_mut().reset(on_tokio_clock(deadline));
            match step {
                Step::Next(n) => cur = n,
                Step::Stop(o) => return Ok(o),
            }
        }

        // One prompt buffer for the whole flow: a standard node renders its prompt into it.
        let mut prompt = String::new();
        // When the previous node completed: only the engine's own history and transition work
        // ran since, so without step events (the one reader of a node's exact duration) that
        // clock read also serves as this node's start.
        let mut previous_end: Option<Instant> = None;
        loop {
            if cancel.is_cancelled() {
                return Err(RuntimeError::Cancelled {
                    last_nodes: state.last_nodes_after(&inherited, 5),
                });
            }
            let node_started = match previous_end.take() {
                Some(t) if !self.step_events => t,
                _ => Instant::now(),
            };
            if node_started >= deadline {
                return Err(time_error(state));
            }
            let Some(node) = p.plan.node(cur) else {
                return Err(RuntimeError::NodeNotFound {
                    node: state.current_node.clone(),
                });
            };
            if boundary == Some(cur) {
                // The fork reads only that the branch completed, never the node it ended at.
                return Ok(RunOutcome::Completed {
                    exit_status: ExitStatus::Success,
                    end_node: String::new(),
                });
            }
            state.rubric_evaluation = None;
            state.node_redirected = false;
            if let Node::End(end) = node {
                return Ok(RunOutcome::Completed {
                    exit_status: end.status,
                    end_node: end.id.clone(),
                });
            }
            if state.steps >= max_steps {
                return Err(RuntimeError::MaxStepsExceeded {
                    limit: max_steps,
                    last_nodes: state.last_nodes_after(&inherited, 5),
                });
            }
            // Pre pipeline: checkpoint hook, node start.
            if matches!(flow, Flow::Main | Flow::Child(_)) {
                if let Flow::Main = flow {
                    self.listener.on_checkpoint(state);
                }
                match self.at_boundary(flow, state).await? {
                    Boundary::Continue => {}
                    Boundary::ContinueAfterPause(waited) => {
                        started += waited;
                        deadline += waited;
                        sleep.as_mut().reset(on_tokio_clock(deadline));
                    }
                    Boundary::Cancel => {
                        return Err(RuntimeError::Cancelled {
                            last_nodes: state.last_nodes_after(&inherited, 5),
                        });
                    }
                    Boundary::Suspend => return Ok(RunOutcome::Paused),
                }
            }
            state.steps += 1;
            if self.step_events {
                self.listener.on_event(&Event::NodeStarted {
                    node_id: p.plan.id(cur),
                    kind: node.kind(),
                    step: state.steps,
                });
            }
            // A cancellation abandons the node in flight and takes no transition: its failure
            // ("request cancelled") is not the node's (docs/language.md, *Runtime semantics*).
            let raced = {
                let execute = pin!(self.execute_node(
                    p,
                    cur,
                    node,
                    state,
                    cancel,
                    started,
                    flow,
                    nested_decision.take(),
                    &mut prompt,
                ));
                race_node(execute, cancel, sleep.as_mut()).await
            };
            let result = match raced {
                Raced::Done(r) => Some(r?),
                Raced::Cancelled => None,
                Raced::TimedOut => return Err(time_error(state)),
            };
            let Some(result) = result.filter(|_| !cancel.is_cancelled()) else {
                return Err(RuntimeError::Cancelled {
                    last_nodes: state.last_nodes_after(&inherited, 5),
                });
            };
            if result.status == NodeStatus::Pending
                && let Some(nested) = &state.nested
            {
                // Stopped inside its nested flows: the node runs again on resume and continues
                // them; the phase shows what the innermost one waits for.
                state.steps = state.steps.saturating_sub(1);
                state.phase = nested
                    .awaiting()
                    .cloned()
                    .unwrap_or(ExecutionPhase::Initial);
                return Ok(RunOutcome::Paused);
            }
            if result.status == NodeStatus::Pending {
                state.phase = ExecutionPhase::Awaiting {
                    node_id: p.plan.id(cur).to_string(),
                    processor_id: PostProcessor::OutputExtraction.id().to_string(),
                    cached_result: Box::new(result),
                    correlation_id: String::new(),
                    requested_at_ms: now_ms(),
                };
                return Ok(RunOutcome::Paused);
            }
            let mut pc = PostCtx {
                idx: cur,
                result,
                started: node_started,
                next: None,
                resume_decision: None,
                run_started: started,
                completed: None,
                human_wait: std::time::Duration::ZERO,
                inherited,
            };
            let step = self.post_pipeline(p, state, &mut pc, 0).await?;
            previous_end = pc.completed;
            if !pc.human_wait.is_zero() {
                started += pc.human_wait;
                deadline += pc.human_wait;
                sleep.as_mut().reset(on_tokio_clock(deadline));
            }
            match step {
                Step::Next(n) => cur = n,
                Step::Stop(o) => return Ok(o),
            }
        }
    }
}
