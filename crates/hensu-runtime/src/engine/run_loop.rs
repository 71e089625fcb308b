//! The run loop: node after node, with the run guards (`maxSteps`, `maxExecutionTime`,
//! cancellation) and the boundary hooks before each node of the main flow (and of its
//! sub-workflow children).

use std::future::{Future, poll_fn};
use std::ops::ControlFlow;
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
use crate::review::{ReviewDecision, ToolDecision};
use crate::run_types::{CancelToken, PostProcessor, RunOutcome};
use crate::state::{
    ExecutionPhase, InheritedHistory, NestedFrame, NodeResult, NodeStatus, RunState,
};

/// Where a flow starts ([`Exec::enter`]): the node, the review answer for its nested flows,
/// and the answer for the tool call its visit held for approval.
type Entry = (usize, Option<ReviewDecision>, Option<ToolDecision>);

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
    /// A map item's sub-workflow child (and the children inside it): no hooks, and its
    /// waits wait in place (an item cannot be suspended; docs/language.md, *Map over a list*).
    Item,
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
    /// The node's own `timeout` passed (docs/language.md, *Timeouts and backoff*).
    NodeTimedOut,
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
    mut node_sleep: Option<Pin<&mut tokio::time::Sleep>>,
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
        if let Some(s) = node_sleep.as_mut()
            && s.as_mut().poll(cx).is_ready()
        {
            return Poll::Ready(Raced::NodeTimedOut);
        }
        Poll::Pending
    })
    .await
}

/// The node's own `timeout`, when its workflow sets one (most set none: one emptiness check).
/// A dependency DAG keeps its own (docs/language.md, *Dependency DAGs*): at its timeout it
/// fails with the results its branches collected so far, so the loop does not abandon it.
#[inline]
fn node_timeout(p: &Prepared, cur: usize, node: &Node) -> Option<Duration> {
    let timing = &p.workflow().timing;
    if timing.nodes.is_empty() {
        return None;
    }
    timing
        .nodes
        .get(p.plan.id(cur))
        .and_then(|t| t.timeout_ms)
        .filter(|_| !matches!(node, Node::Parallel(par) if par.is_dag()))
        .map(Duration::from_millis)
}

/// Sleeps `wait` unless the run is cancelled or its time limit passes first (the `Raced`
/// that stopped it).
async fn wait_backoff(
    wait: Duration,
    cancel: &CancelToken,
    mut limit: Pin<&mut tokio::time::Sleep>,
) -> Result<(), Raced> {
    let mut cancelled = pin!(cancel.cancelled());
    let mut sleep = pin!(tokio::time::sleep(wait));
    poll_fn(|cx| {
        if cancel.is_cancelled() || cancelled.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Err(Raced::Cancelled));
        }
        if sleep.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Ok(()));
        }
        if limit.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Err(Raced::TimedOut));
        }
        Poll::Pending
    })
    .await
}

/// The run guards of one [`Exec::drive`] call, and the errors they stop it with.
struct Guards<'h, 's> {
    max_steps: u64,
    time_limit: Duration,
    /// The history a fork branch continues: the last nodes an error names include it.
    inherited: InheritedHistory<'h>,
    clock: Clock<'s>,
}

/// The engine's limits, else the workflow's: `maxSteps` (at least 1) and the time limit.
fn limits(exec: &Exec<'_>, p: &Prepared) -> (u64, Duration) {
    let default_config;
    let config = match &p.workflow().config {
        Some(c) => c,
        None => {
            default_config = hensu_ir::WorkflowConfig::default();
            &default_config
        }
    };
    let max_steps = exec
        .options
        .max_steps
        .unwrap_or(config.max_steps.max(1) as u64);
    let time_limit = exec
        .options
        .max_execution_time
        .unwrap_or(Duration::from_millis(
            config.max_execution_time.max(0) as u64
        ));
    (max_steps, time_limit)
}

impl<'h, 's> Guards<'h, 's> {
    fn new(
        max_steps: u64,
        time_limit: Duration,
        inherited: InheritedHistory<'h>,
        clock: Clock<'s>,
    ) -> Self {
        Guards {
            max_steps,
            time_limit,
            inherited,
            clock,
        }
    }

    /// Before each node: a cancelled run ends, and a node starts only before the deadline; it
    /// starts when the previous one ended unless a step event needs a clock read of its own.
    #[inline]
    fn start_node(
        &self,
        cancel: &CancelToken,
        state: &RunState,
        previous_end: Option<Instant>,
        step_events: bool,
    ) -> Result<Instant, RuntimeError> {
        if cancel.is_cancelled() {
            return Err(self.cancelled(state));
        }
        let node_started = match previous_end {
            Some(t) if !step_events => t,
            _ => Instant::now(),
        };
        if node_started >= self.clock.deadline {
            return Err(self.timed_out(state));
        }
        Ok(node_started)
    }

    /// What the boundary hooks before a node decided: `Some` is the outcome the flow stops
    /// with; a pause in place does not count against the time limit.
    #[inline]
    fn decided(
        &mut self,
        decided: Boundary,
        state: &RunState,
    ) -> Result<Option<RunOutcome>, RuntimeError> {
        match decided {
            Boundary::Continue => Ok(None),
            Boundary::ContinueAfterPause(waited) => {
                self.clock.not_counting(waited);
                Ok(None)
            }
            Boundary::Cancel => Err(self.cancelled(state)),
            Boundary::Suspend => Ok(Some(RunOutcome::Paused)),
        }
    }

    /// The post pipeline's context for node `cur`, which ran from `node_started`.
    #[inline]
    fn post_ctx(&self, cur: usize, result: NodeResult, node_started: Instant) -> PostCtx<'h> {
        PostCtx {
            idx: cur,
            result,
            started: node_started,
            next: None,
            resume_decision: None,
            run_started: self.clock.started,
            completed: None,
            human_wait: std::time::Duration::ZERO,
            inherited: self.inherited,
            backoff: None,
            review_deadline_at: None,
            still_waiting: None,
        }
    }

    /// A reviewer's answer took `waited`: it does not count against the time limit.
    #[inline]
    fn human_waited(&mut self, waited: Duration) {
        if !waited.is_zero() {
            self.clock.not_counting(waited);
        }
    }

    fn cancelled(&self, state: &RunState) -> RuntimeError {
        RuntimeError::Cancelled {
            last_nodes: state.last_nodes_after(&self.inherited, 5),
        }
    }

    fn timed_out(&self, state: &RunState) -> RuntimeError {
        RuntimeError::TimeLimitExceeded {
            limit_ms: self.time_limit.as_millis() as u64,
            last_nodes: state.last_nodes_after(&self.inherited, 5),
        }
    }
}

/// The time limit of one [`Exec::drive`] call: `started` and the deadline move forward by the
/// time a human kept the run waiting, and the sleep that races each node follows the deadline.
struct Clock<'s> {
    started: Instant,
    deadline: Instant,
    sleep: Pin<&'s mut tokio::time::Sleep>,
}

impl<'s> Clock<'s> {
    fn new(started: Instant, deadline: Instant, sleep: Pin<&'s mut tokio::time::Sleep>) -> Self {
        Clock {
            started,
            deadline,
            sleep,
        }
    }

    /// `waited` (a pause in place, a reviewer's answer) does not count against the limit.
    fn not_counting(&mut self, waited: Duration) {
        self.started += waited;
        self.deadline += waited;
        self.sleep.as_mut().reset(on_tokio_clock(self.deadline));
    }
}

/// What the flow does at a node before running it.
enum Arrival<'p> {
    Run(&'p Node),
    Stop(RunOutcome),
}

/// Node `cur` is reached: a fork branch stops at its join, any flow at an end node; past the
/// step limit the run fails; else the node runs, its rubric and redirect marks cleared.
#[inline]
fn arrive<'p>(
    p: &'p Prepared,
    cur: usize,
    state: &mut RunState,
    boundary: Option<usize>,
    guards: &Guards<'_, '_>,
) -> Result<Arrival<'p>, RuntimeError> {
    let Some(node) = p.plan.node(cur) else {
        return Err(RuntimeError::NodeNotFound {
            node: state.current_node.clone(),
        });
    };
    if boundary == Some(cur) {
        // The fork reads only that the branch completed, never the node it ended at.
        return Ok(Arrival::Stop(RunOutcome::Completed {
            exit_status: ExitStatus::Success,
            end_node: String::new(),
        }));
    }
    state.rubric_evaluation = None;
    state.node_redirected = false;
    if let Node::End(end) = node {
        return Ok(Arrival::Stop(RunOutcome::Completed {
            exit_status: end.status,
            end_node: end.id.clone(),
        }));
    }
    if state.steps >= guards.max_steps {
        return Err(RuntimeError::MaxStepsExceeded {
            limit: guards.max_steps,
            last_nodes: state.last_nodes_after(&guards.inherited, 5),
        });
    }
    Ok(Arrival::Run(node))
}

/// A node whose nested flows were saved (a child run, fork branches) runs again and continues
/// them; the answer to a review pending in them goes to them (taken from `resume_decision`).
fn continue_nested(
    state: &mut RunState,
    resume_decision: &mut Option<ReviewDecision>,
) -> Option<ReviewDecision> {
    if state
        .nested
        .as_ref()
        .is_some_and(|n| n.node_id() != state.current_node)
    {
        state.nested = None;
    }
    if state.nested.is_some() {
        state.phase = ExecutionPhase::Initial;
        return resume_decision.take();
    }
    None
}

/// Node `cur` answered PENDING: the run pauses there. Stopped inside its nested flows, the
/// node runs again on resume and continues them (the phase shows what the innermost one waits
/// for); else resuming enters the post pipeline with the cached result.
/// Runs `node` (the visit of `node_id` at `step`) as a visit of the run's call journal
/// (docs/security.md, *Call journal*: a visit run again replays its calls); `answer` is a
/// resume's decision for the tool call the visit held for approval. `end` tells whether an
/// interrupted `unsafe` call holds the run or a gated tool call waits for approval.
async fn journal_visit<F: Future>(
    journal: Option<crate::journal::JournalCtx>,
    (node_id, step): (&str, u64),
    answer: Option<ToolDecision>,
    end: &mut crate::journal::VisitEnd,
    node: F,
) -> F::Output {
    match journal {
        Some(j) => {
            let (out, e) = crate::journal::in_visit(j, node_id, step, answer, node).await;
            *end = e;
            out
        }
        None => node.await,
    }
}

/// The run pauses at a gated tool call of node `cur` (docs/mcp.md, *Tool approval*): before
/// the node (which runs again on resume, replaying its journal), waiting for the review
/// `approval.correlation_id`.
fn hold_for_approval(
    p: &Prepared,
    cur: usize,
    state: &mut RunState,
    approval: crate::journal::PendingApproval,
) -> RunOutcome {
    state.steps = state.steps.saturating_sub(1);
    state.phase = ExecutionPhase::Awaiting {
        node_id: p.plan.id(cur).to_string(),
        processor_id: crate::state::TOOL_APPROVAL.to_string(),
        cached_result: Box::new(NodeResult {
            status: NodeStatus::Pending,
            output: None,
            error: None,
            metadata: Default::default(),
        }),
        correlation_id: approval.correlation_id,
        requested_at_ms: now_ms(),
        deadline_at_ms: None,
        tool_call: Some(Box::new(crate::state::ToolCallReview {
            tool: approval.tool,
            arguments: approval.arguments,
        })),
    };
    RunOutcome::Paused
}

/// The run pauses before the node in flight (an interrupted `unsafe` call holds it): resuming
/// it runs the node again and issues the call.
fn hold_before_node(state: &mut RunState) -> RunOutcome {
    state.steps = state.steps.saturating_sub(1);
    state.phase = ExecutionPhase::Initial;
    RunOutcome::Paused
}

fn pause_pending(p: &Prepared, cur: usize, state: &mut RunState, result: NodeResult) {
    if let Some(nested) = &state.nested {
        state.steps = state.steps.saturating_sub(1);
        state.phase = nested
            .awaiting()
            .cloned()
            .unwrap_or(ExecutionPhase::Initial);
        return;
    }
    state.phase = ExecutionPhase::Awaiting {
        node_id: p.plan.id(cur).to_string(),
        processor_id: PostProcessor::OutputExtraction.id().to_string(),
        cached_result: Box::new(result),
        correlation_id: String::new(),
        requested_at_ms: now_ms(),
        deadline_at_ms: None,
        tool_call: None,
    };
}

impl Exec<'_> {
    /// The run loop over `flow`. The time limit counts from `started`; time a hook or a
    /// reviewer spends waiting for a human does not count (the clock moves forward by it).
    pub(crate) async fn drive(
        &self,
        p: &Prepared,
        state: &mut RunState,
        cancel: &CancelToken,
        started: Instant,
        resume_decision: Option<ReviewDecision>,
        flow: Flow<'_>,
    ) -> Result<RunOutcome, RuntimeError> {
        let (boundary, inherited) = match flow {
            Flow::Branch { join, inherited } => (Some(join), *inherited),
            _ => (None, InheritedHistory::default()),
        };
        let (max_steps, time_limit) = limits(self, p);
        let deadline = started + time_limit;
        let sleep = tokio::time::sleep_until(on_tokio_clock(deadline));
        tokio::pin!(sleep);
        let clock = Clock::new(started, deadline, sleep);
        let mut guards = Guards::new(max_steps, time_limit, inherited, clock);
        let (mut cur, mut nested_decision, mut tool_answer) =
            match self.enter(p, state, &mut guards, resume_decision).await? {
                ControlFlow::Continue(at) => at,
                ControlFlow::Break(outcome) => return Ok(outcome),
            };

        // One prompt buffer for the whole flow: a standard node renders its prompt into it.
        let mut prompt = String::new();
        // When the previous node completed: only the engine's own history and transition work
        // ran since, so without step events (the one reader of a node's exact duration) that
        // clock read also serves as this node's start.
        let mut previous_end: Option<Instant> = None;
        // The wait before the next node, when the last one failed into a retry with backoff.
        let mut backoff: Option<Duration> = None;
        loop {
            let node_started =
                guards.start_node(cancel, state, previous_end.take(), self.step_events)?;
            let node = match arrive(p, cur, state, boundary, &guards)? {
                Arrival::Run(node) => node,
                Arrival::Stop(outcome) => return Ok(outcome),
            };
            // Pre pipeline: checkpoint hook, node start.
            if matches!(flow, Flow::Main | Flow::Child(_)) {
                if let Flow::Main = flow {
                    self.listener.on_checkpoint(state);
                }
                let decided = self.at_boundary(flow, state).await?;
                if let Some(stop) = guards.decided(decided, state)? {
                    return Ok(stop);
                }
            }
            // A failure retry with `backoff` waits here, after the boundary recorded the retry
            // count (docs/language.md, *Timeouts and backoff*).
            if let Some(wait) = backoff.take() {
                wait_backoff(wait, cancel, guards.clock.sleep.as_mut())
                    .await
                    .map_err(|stop| match stop {
                        Raced::Cancelled => guards.cancelled(state),
                        _ => guards.timed_out(state),
                    })?;
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
            let mut visit_end = crate::journal::VisitEnd::default();
            let raced = {
                let execute = pin!(journal_visit(
                    self.journal_ctx(&state.execution_id, node),
                    (p.plan.id(cur), state.steps),
                    tool_answer.take(),
                    &mut visit_end,
                    self.execute_node(
                        p,
                        cur,
                        node,
                        state,
                        cancel,
                        guards.clock.started,
                        flow,
                        nested_decision.take(),
                        &mut prompt,
                    ),
                ));
                let timeout = node_timeout(p, cur, node);
                let node_sleep = pin!(timeout.map(tokio::time::sleep));
                let raced = race_node(
                    execute,
                    cancel,
                    guards.clock.sleep.as_mut(),
                    node_sleep.as_pin_mut(),
                )
                .await;
                (raced, timeout)
            };
            let result = match raced {
                (Raced::Done(r), _) => Some(r?),
                (Raced::Cancelled, _) => None,
                (Raced::TimedOut, _) => return Err(guards.timed_out(state)),
                // The node in flight is abandoned; its failure takes the normal failure path.
                (Raced::NodeTimedOut, t) => Some(NodeResult::failure(format!(
                    "timed out after {}",
                    super::describe_ms(t.map_or(0, |t| t.as_millis() as u64))
                ))),
            };
            let Some(result) = result.filter(|_| !cancel.is_cancelled()) else {
                return Err(guards.cancelled(state));
            };
            if let Some(approval) = visit_end.approval.take() {
                return Ok(hold_for_approval(p, cur, state, approval));
            }
            if result.status == NodeStatus::Pending {
                if matches!(node, Node::Wait(_)) {
                    // A durable wait: the run stops before the node, which runs again (with
                    // its wake time kept in `state.waiting`) when the run continues.
                    state.steps = state.steps.saturating_sub(1);
                    state.phase = ExecutionPhase::Initial;
                } else {
                    pause_pending(p, cur, state, result);
                }
                return Ok(RunOutcome::Paused);
            }
            if visit_end.held {
                return Ok(hold_before_node(state));
            }
            let mut pc = guards.post_ctx(cur, result, node_started);
            let step = self.post_pipeline(p, state, &mut pc, 0).await?;
            previous_end = pc.completed;
            backoff = pc.backoff;
            guards.human_waited(pc.human_wait);
            match step {
                Step::Next(n) => cur = n,
                Step::Stop(o) => return Ok(o),
            }
        }
    }

    /// Where the flow starts: at its current node, with the review answer for the nested flows
    /// saved there, or — when the run was suspended inside the post pipeline of a node (a
    /// deferred review) — where that pipeline, resumed with the decision, leads. The phase is
    /// reset either way.
    async fn enter(
        &self,
        p: &Prepared,
        state: &mut RunState,
        guards: &mut Guards<'_, '_>,
        mut resume_decision: Option<ReviewDecision>,
    ) -> Result<ControlFlow<RunOutcome, Entry>, RuntimeError> {
        let cur =
            p.plan
                .index_of(&state.current_node)
                .ok_or_else(|| RuntimeError::NodeNotFound {
                    node: state.current_node.clone(),
                })?;
        let nested_decision = continue_nested(state, &mut resume_decision);
        let ExecutionPhase::Awaiting {
            node_id,
            processor_id,
            cached_result,
            deadline_at_ms,
            correlation_id,
            requested_at_ms,
            ..
        } = std::mem::replace(&mut state.phase, ExecutionPhase::Initial)
        else {
            return Ok(ControlFlow::Continue((cur, nested_decision, None)));
        };
        let cur = p
            .plan
            .index_of(&node_id)
            .ok_or(RuntimeError::NodeNotFound { node: node_id })?;
        // A gated tool call (docs/mcp.md, *Tool approval*): the node runs again and its
        // journal gives the decision to the call it held.
        if processor_id == crate::state::TOOL_APPROVAL {
            return Ok(ControlFlow::Continue((
                cur,
                nested_decision,
                resume_decision.map(ToolDecision::from),
            )));
        }
        let from = PostProcessor::PIPELINE
            .iter()
            .position(|pp| pp.id() == processor_id)
            .unwrap_or(0);
        let mut pc = PostCtx {
            idx: cur,
            result: *cached_result,
            started: Instant::now(),
            next: None,
            resume_decision,
            run_started: guards.clock.started,
            completed: None,
            human_wait: std::time::Duration::ZERO,
            inherited: guards.inherited,
            backoff: None,
            review_deadline_at: deadline_at_ms,
            still_waiting: (processor_id == PostProcessor::Review.id()
                && !correlation_id.is_empty())
            .then_some((correlation_id, requested_at_ms)),
        };
        let step = self.post_pipeline(p, state, &mut pc, from).await?;
        guards.clock.not_counting(pc.human_wait);
        Ok(match step {
            Step::Next(n) => ControlFlow::Continue((n, nested_decision, None)),
            Step::Stop(o) => ControlFlow::Break(o),
        })
    }
}
