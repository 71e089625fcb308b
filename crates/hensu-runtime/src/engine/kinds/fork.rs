//! Fork / join (upstream `ForkNodeExecutor` + `JoinNodeExecutor`; docs/language.md, *Fork and
//! join at run time*).
//!
//! A fork runs each of its targets concurrently as a sub-flow on an isolated copy of the run
//! state (context and retry counters copied; the history up to the fork shared, not copied:
//! a branch records only its own steps; no checkpoints inside a branch), with the full node
//! pipeline, until the sub-flow reaches the fork's join (SUCCESS, the join is not executed) or
//! ends otherwise (an end node is still SUCCESS; rejected, paused or failed sub-flows are
//! FAILURE). The branches' yields are then merged into the parent context with the join's
//! merge strategy, branch history is appended in target order, and the fork routes to its join,
//! which runs as a pass-through check and routes with its own rules.
//!
//! A branch that stops to wait for a human (a deferred review) does not fail: once every
//! branch has stopped, the fork saves all branch states in the run state
//! ([`Nested::Fork`]) and the run pauses at the fork. Resuming runs the fork again: ended
//! branches keep their result, waiting ones continue (the first one with the review answer).
//!
//! A durable run records each branch that ends as it ends
//! ([`Checkpointer::record_branch`](crate::Checkpointer::record_branch), stored as [`Nested::Fork`] with
//! the ended branches only), so a process killed while the others run resumes the fork with
//! those ended branches kept and only the others run again, from the fork.

use std::future::Future;
use std::time::{Duration, Instant};

use hensu_ir::{ForkNode, JoinNode, Node, Target, TransitionRule};
use indexmap::IndexMap;
use serde_json::Value;

use super::join::{ForkBranch, branch_yields, merge};
use crate::engine::branches::{BoxFuture, join_all_pinned, join_all_recording};
use crate::engine::{Exec, Flow, Prepared};
use crate::error::RuntimeError;
use crate::review::ReviewDecision;
use crate::run_types::{CancelToken, RunOutcome};
use crate::state::{
    BranchEnd, ExecutionPhase, FinishedBranch, ForkBranchState, InheritedHistory, Nested,
    NestedFrame, NodeResult, RunState,
};
use crate::value::Context;

/// The join of a fork: the target of its first `success` rule (else its first `always` rule),
/// which must be a join node.
pub(crate) fn find_join(p: &Prepared, fork: &ForkNode) -> Result<usize, RuntimeError> {
    let rules = &fork.transition_rules;
    let target = rules
        .iter()
        .find_map(|r| match r {
            TransitionRule::Success { target_node, .. } => Some(target_node),
            _ => None,
        })
        .or_else(|| {
            rules.iter().find_map(|r| match r {
                TransitionRule::Always { target_node, .. } => Some(target_node),
                _ => None,
            })
        })
        .ok_or_else(|| RuntimeError::Fork {
            node: fork.id.clone(),
            message: "the fork has no `onComplete`/`onSuccess` transition to its join".into(),
        })?;
    let idx = p.plan.index_of(target).ok_or_else(|| RuntimeError::Fork {
        node: fork.id.clone(),
        message: format!("its join '{target}' does not exist"),
    })?;
    match p.plan.node(idx) {
        Some(Node::Join(_)) => Ok(idx),
        _ => Err(RuntimeError::Fork {
            node: fork.id.clone(),
            message: format!(
                "'{target}' (the target of its success transition) is not a join node"
            ),
        }),
    }
}

/// Whether a sub-flow error ends the whole run instead of failing one branch: the run guards
/// (cancellation, `maxSteps`, `maxExecutionTime`) are about the run, not the branch.
fn escapes_branch(e: &RuntimeError) -> bool {
    matches!(
        e,
        RuntimeError::Cancelled { .. }
            | RuntimeError::MaxStepsExceeded { .. }
            | RuntimeError::TimeLimitExceeded { .. }
    )
}

/// Runs a fork (boxed: the branches run the executor loop again). `resume` answers a review
/// pending in a saved branch.
#[allow(clippy::too_many_arguments)]
pub(crate) fn execute_fork<'a>(
    engine: &'a Exec<'a>,
    p: &'a Prepared,
    idx: usize,
    fork: &'a ForkNode,
    state: &'a mut RunState,
    cancel: &'a CancelToken,
    started: Instant,
    resume: Option<ReviewDecision>,
    flow: Flow<'a>,
) -> BoxFuture<'a, Result<NodeResult, RuntimeError>> {
    Box::pin(run_fork(
        engine, p, idx, fork, state, cancel, started, resume, flow,
    ))
}

/// A branch to run: fresh, saved and waiting (with the review answer for it, if any), or
/// saved and ended; with whether its history holds only its own steps
/// ([`ForkBranchState::own_history`]).
enum BranchStart {
    Run(RunState, Option<ReviewDecision>, bool),
    Ended(RunState, BranchEnd, bool),
}

/// How a branch came out of this call of the fork.
enum BranchRun {
    Ran(Result<RunOutcome, RuntimeError>),
    /// Ran in a run that records finished branches, with the branch's record if it ended
    /// (taken when it is recorded). A variant of its own so that runs without recording
    /// carry nothing more.
    Recorded(
        Result<RunOutcome, RuntimeError>,
        Option<Box<ForkBranchState>>,
    ),
    /// Saved as ended by an earlier, paused call.
    Saved(BranchEnd),
}

/// The branches saved by a paused run of this fork, by target, each with how it starts; the
/// answer goes to the first waiting branch (the one whose review the run showed).
fn saved_branches(
    state: &mut RunState,
    fork: &ForkNode,
    mut resume: Option<ReviewDecision>,
) -> Option<IndexMap<String, BranchStart>> {
    let Nested::Fork { node_id, branches } = *state.nested.take()? else {
        return None;
    };
    if node_id != fork.id {
        return None;
    }
    let saved = branches
        .into_iter()
        .map(|b| {
            let start = match b.ended {
                None => BranchStart::Run(b.state, resume.take(), b.own_history),
                Some(end) => BranchStart::Ended(b.state, end, b.own_history),
            };
            (b.target, start)
        })
        .collect();
    Some(saved)
}

#[allow(clippy::too_many_arguments)]
async fn run_fork(
    engine: &Exec<'_>,
    p: &Prepared,
    idx: usize,
    fork: &ForkNode,
    state: &mut RunState,
    cancel: &CancelToken,
    started: Instant,
    resume: Option<ReviewDecision>,
    flow: Flow<'_>,
) -> Result<NodeResult, RuntimeError> {
    let (join_idx, join) = join_of(p, fork)?;
    let base_history = state.history.len();
    let base_steps = state.steps;
    let targets = fork_targets(p, idx);
    let saved = saved_branches(state, fork, resume);
    let recording = engine.branch_recording(flow);
    // Branches inherit the history up to the fork without a copy; their own steps are
    // appended below. Branches saved by older versions carry a full copy and inherit nothing.
    let outer = match flow {
        Flow::Branch { inherited, .. } => *inherited,
        _ => InheritedHistory::default(),
    };
    let shared = outer.then(&state.history);
    let (mut branch_states, runs, own_history) = branch_starts(p, state, &targets, saved);
    let run = ForkRun {
        engine,
        p,
        fork,
        join,
        join_idx,
        cancel,
        started,
        shared: &shared,
    };
    // Without recording, the branch futures and the join are the plain ones: a run without a
    // store pays nothing per target for the recording (the `fanout` bench guards this cost).
    let outcomes = match recording {
        None => {
            run.unrecorded(&mut branch_states, runs, &own_history)
                .await?
        }
        Some(frames) => {
            let parent_context = &state.context;
            run.recorded(
                frames,
                &mut branch_states,
                runs,
                &own_history,
                &targets,
                parent_context,
            )
            .await?
        }
    };
    let stopped = Stopped {
        targets: &targets,
        states: branch_states,
        runs: outcomes,
        own_history,
    };
    if stopped.runs.iter().any(BranchRun::paused) {
        return pause_at_fork(p, fork, state, stopped);
    }
    let branches = fold_branches(p, join, state, stopped, base_history, base_steps)?;
    let count = branches.len();
    let merged = merge(engine, fork, join, branches, &mut state.context);
    Ok(NodeResult::success_value(merged).with_meta("branch_count", Value::from(count as u64)))
}

/// The fork's join, by index and node ([`find_join`]).
fn join_of<'p>(p: &'p Prepared, fork: &ForkNode) -> Result<(usize, &'p JoinNode), RuntimeError> {
    let join_idx = find_join(p, fork)?;
    let Some(Node::Join(join)) = p.plan.node(join_idx) else {
        return Err(RuntimeError::Fork {
            node: fork.id.clone(),
            message: "its join is not a join node".into(),
        });
    };
    Ok((join_idx, join))
}

/// The plan's resolved targets of the fork at `idx`, in declaration order; missing target ids
/// are skipped (upstream).
fn fork_targets(p: &Prepared, idx: usize) -> Vec<usize> {
    p.plan
        .graph_node(idx)
        .map(|g| {
            g.fork_targets
                .iter()
                .filter_map(|t| match t {
                    Target::Node(i) => Some(i.index()),
                    Target::SelfRetry => Some(idx),
                    Target::Unresolved(_) => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// How each branch starts, by target position: an ended saved branch keeps its end (`Err`), a
/// waiting saved one or a fresh one runs (`Ok`, with the review answer for it); with each
/// branch's state and whether its history holds only its own steps.
type BranchStarts = (
    Vec<RunState>,
    Vec<Result<Option<ReviewDecision>, BranchEnd>>,
    Vec<bool>,
);

fn branch_starts(
    p: &Prepared,
    state: &RunState,
    targets: &[usize],
    mut saved: Option<IndexMap<String, BranchStart>>,
) -> BranchStarts {
    // The branch states stay with the fork; each branch's future borrows its own (small
    // futures, and no large outcome to move around).
    let mut branch_states = Vec::with_capacity(targets.len());
    let mut runs = Vec::with_capacity(targets.len());
    let mut own_history = Vec::with_capacity(targets.len());
    for &target in targets {
        let start = saved
            .as_mut()
            .and_then(|s| s.shift_remove(p.plan.id(target)));
        let (branch, run, own) = match start {
            Some(BranchStart::Ended(branch, end, own)) => (branch, Err(end), own),
            Some(BranchStart::Run(branch, decision, own)) => (branch, Ok(decision), own),
            None => (fresh_branch(p, state, target), Ok(None), true),
        };
        branch_states.push(branch);
        runs.push(run);
        own_history.push(own);
    }
    (branch_states, runs, own_history)
}

/// A new branch at `target`: the fork's context and retry counters copied, no history of its
/// own yet.
fn fresh_branch(p: &Prepared, state: &RunState, target: usize) -> RunState {
    RunState {
        execution_id: state.execution_id.clone(),
        workflow_id: state.workflow_id.clone(),
        current_node: p.plan.id(target).to_string(),
        context: branch_context(&state.context),
        history: Vec::new(),
        backtracks: Vec::new(),
        retry_counters: state.retry_counters.clone(),
        phase: ExecutionPhase::Initial,
        steps: state.steps,
        rubric_evaluation: None,
        node_redirected: false,
        review_verdict: None,
        compensating: None,
        compensations: Vec::new(),
        nested: None,
        failure: None,
        waiting: None,
        signals_taken: state.signals_taken.clone(),
    }
}

/// What every branch of one call of the fork runs with.
#[derive(Clone, Copy)]
struct ForkRun<'a, 'r> {
    engine: &'a Exec<'r>,
    p: &'a Prepared,
    fork: &'a ForkNode,
    join: &'a JoinNode,
    join_idx: usize,
    cancel: &'a CancelToken,
    started: Instant,
    /// The history up to the fork, which the branches continue.
    shared: &'a InheritedHistory<'a>,
}

impl ForkRun<'_, '_> {
    /// Runs the branches together (a saved end is ready at once), bounded by the join's
    /// timeout; nothing is recorded.
    async fn unrecorded(
        self,
        branch_states: &mut [RunState],
        runs: Vec<Result<Option<ReviewDecision>, BranchEnd>>,
        own_history: &[bool],
    ) -> Result<Vec<BranchRun>, RuntimeError> {
        let ForkRun {
            engine,
            p,
            fork,
            join,
            join_idx,
            cancel,
            started,
            shared,
        } = self;
        let legacy = InheritedHistory::default();
        let futures: Vec<BoxFuture<'_, BranchRun>> = branch_states
            .iter_mut()
            .zip(runs)
            .zip(own_history)
            .map(|((branch, run), &own)| match run {
                Err(end) => Box::pin(std::future::ready(BranchRun::Saved(end))) as BoxFuture<'_, _>,
                Ok(decision) => {
                    let inherited = if own { shared } else { &legacy };
                    // Each branch's calls are journaled apart, under its target.
                    let segment = branch.current_node.clone();
                    Box::pin(async move {
                        let flow = Flow::Branch {
                            join: join_idx,
                            inherited,
                        };
                        let run = engine.drive(p, branch, cancel, started, decision, flow);
                        let run = crate::review::in_branch(&segment, run);
                        BranchRun::Ran(crate::journal::in_nested(&segment, run).await)
                    })
                }
            })
            .collect();
        within_join_timeout(fork, join, join_all_pinned(futures)).await
    }

    /// [`Self::unrecorded`] in a durable run: each branch that ends is recorded as it ends
    /// (its context reduced against `parent_context`), while the others run.
    async fn recorded(
        self,
        frames: &[NestedFrame],
        branch_states: &mut [RunState],
        runs: Vec<Result<Option<ReviewDecision>, BranchEnd>>,
        own_history: &[bool],
        targets: &[usize],
        parent_context: &Context,
    ) -> Result<Vec<BranchRun>, RuntimeError> {
        let ForkRun {
            engine,
            p,
            fork,
            join,
            join_idx,
            cancel,
            started,
            shared,
        } = self;
        let legacy = InheritedHistory::default();
        let futures: Vec<BoxFuture<'_, BranchRun>> = branch_states
            .iter_mut()
            .zip(runs)
            .zip(own_history)
            .zip(targets)
            .map(|(((branch, run), &own), &target)| match run {
                Err(end) => Box::pin(std::future::ready(BranchRun::Saved(end))) as BoxFuture<'_, _>,
                Ok(decision) => {
                    let inherited = if own { shared } else { &legacy };
                    Box::pin(async move {
                        let flow = Flow::Branch {
                            join: join_idx,
                            inherited,
                        };
                        let target = p.plan.id(target);
                        let run = engine.drive(p, branch, cancel, started, decision, flow);
                        let run = crate::review::in_branch(target, run);
                        let r = crate::journal::in_nested(target, run).await;
                        let record = ended_record(target, branch, own, &r, parent_context);
                        BranchRun::Recorded(r, record)
                    })
                }
            })
            .collect();
        let recorded = join_all_recording(futures, |r: &mut BranchRun| {
            let BranchRun::Recorded(_, record) = r else {
                return None;
            };
            let record = record.take()?;
            let write: BoxFuture<'_, _> = Box::pin(async move {
                engine
                    .record_branch(frames, &fork.id, FinishedBranch::Fork(&record))
                    .await
            });
            Some(write)
        });
        within_join_timeout(fork, join, recorded).await?
    }
}

impl BranchRun {
    /// Whether the branch stopped to wait for a human.
    fn paused(&self) -> bool {
        matches!(
            self,
            BranchRun::Ran(Ok(RunOutcome::Paused)) | BranchRun::Recorded(Ok(RunOutcome::Paused), _)
        )
    }
}

/// The branches of one call of the fork once they all stopped, by target position.
struct Stopped<'t> {
    targets: &'t [usize],
    states: Vec<RunState>,
    runs: Vec<BranchRun>,
    own_history: Vec<bool>,
}

/// A branch waits for a human: every branch has stopped, so save them all and pause the run
/// here (a branch that failed with an error that ends the run still ends it).
fn pause_at_fork(
    p: &Prepared,
    fork: &ForkNode,
    state: &mut RunState,
    stopped: Stopped<'_>,
) -> Result<NodeResult, RuntimeError> {
    for r in &stopped.runs {
        if let BranchRun::Ran(Err(e)) | BranchRun::Recorded(Err(e), _) = r
            && escapes_branch(e)
        {
            return Err(e.clone());
        }
    }
    let branches = stopped
        .targets
        .iter()
        .zip(stopped.states)
        .zip(stopped.runs)
        .zip(stopped.own_history)
        .map(|(((&target, state), r), own_history)| ForkBranchState {
            target: p.plan.id(target).to_string(),
            state,
            own_history,
            ended: match r {
                BranchRun::Ran(Ok(RunOutcome::Paused))
                | BranchRun::Recorded(Ok(RunOutcome::Paused), _) => None,
                BranchRun::Ran(r) | BranchRun::Recorded(r, _) => Some(match branch_end(&r) {
                    (true, _) => BranchEnd::Completed,
                    (false, error) => BranchEnd::Failed {
                        error: error.unwrap_or_default(),
                    },
                }),
                BranchRun::Saved(end) => Some(end),
            },
        })
        .collect();
    state.nested = Some(Box::new(Nested::Fork {
        node_id: fork.id.clone(),
        branches,
    }));
    Ok(NodeResult {
        status: crate::state::NodeStatus::Pending,
        output: None,
        error: None,
        metadata: Default::default(),
    })
}

/// Every branch ended: their results in target order, with their history, backtracks and
/// step counts appended to the fork's run. An error that ends the run ends it here.
fn fold_branches(
    p: &Prepared,
    join: &JoinNode,
    state: &mut RunState,
    stopped: Stopped<'_>,
    base_history: usize,
    base_steps: u64,
) -> Result<Vec<ForkBranch>, RuntimeError> {
    let mut branches = Vec::with_capacity(stopped.runs.len());
    // Branch steps are numbered in history order; the fork's own step (recorded after them)
    // takes the number after the last branch step.
    let mut numbered = base_steps.saturating_sub(1);
    let mut executed = 0u64;
    let finished = stopped.targets.iter().zip(stopped.states).zip(stopped.runs);
    for (((&target, branch), r), own) in finished.zip(stopped.own_history) {
        let (success, error) = match r {
            BranchRun::Ran(Err(e)) | BranchRun::Recorded(Err(e), _) if escapes_branch(&e) => {
                return Err(e);
            }
            BranchRun::Ran(r) | BranchRun::Recorded(r, _) => branch_end(&r),
            BranchRun::Saved(BranchEnd::Completed) => (true, None),
            BranchRun::Saved(BranchEnd::Failed { error }) => (false, Some(error)),
        };
        let yields = if success {
            branch_yields(&state.context, branch.context, &join.exports)
        } else {
            serde_json::Map::new()
        };
        // Branch history and backtracks after the fork point, in target order; the branch's
        // node steps count towards the run's (maxSteps).
        let inherited = if own { 0 } else { base_history };
        for mut h in branch.history.into_iter().skip(inherited) {
            numbered += 1;
            h.step = numbered;
            state.history.push(h);
        }
        executed += branch.steps.saturating_sub(base_steps);
        state.backtracks.extend(branch.backtracks);
        // The signals a branch took are the run's: a later wait never takes them again.
        crate::waiting::merge_taken(&mut state.signals_taken, &branch.signals_taken);
        branches.push(ForkBranch {
            target: p.plan.id(target).to_string(),
            success,
            error,
            yields,
        });
    }
    state.steps = base_steps + executed;
    Ok(branches)
}

/// A branch's copy of the parent context, with room for what a branch step adds to it
/// (`current_node` and the node's output) so those inserts do not grow it.
fn branch_context(parent: &Context) -> Context {
    let mut context = Context::with_capacity(parent.len() + 2);
    context.extend(parent.iter().map(|(k, v)| (k.clone(), v.clone())));
    context
}

/// `branches` bounded by the join's timeout, when it has one.
async fn within_join_timeout<T>(
    fork: &ForkNode,
    join: &JoinNode,
    branches: impl Future<Output = T>,
) -> Result<T, RuntimeError> {
    if join.timeout_ms <= 0 {
        return Ok(branches.await);
    }
    let limit = Duration::from_millis(join.timeout_ms as u64);
    tokio::time::timeout(limit, branches)
        .await
        .map_err(|_| RuntimeError::Fork {
            node: fork.id.clone(),
            message: format!(
                "the branches did not reach join '{}' within its timeout of {} ms",
                join.id, join.timeout_ms
            ),
        })
}

/// The record of a branch that ended (`None` when it paused or failed with an error that ends
/// the run: neither is an end of the branch). Its context keeps only the entries that differ
/// from the fork's — all the join reads of it (see [`branch_yields`]) — so a record does not
/// copy the whole context.
fn ended_record(
    target: &str,
    branch: &RunState,
    own_history: bool,
    r: &Result<RunOutcome, RuntimeError>,
    parent: &Context,
) -> Option<Box<ForkBranchState>> {
    match r {
        Ok(RunOutcome::Paused) => return None,
        Err(e) if escapes_branch(e) => return None,
        _ => {}
    }
    let ended = match branch_end(r) {
        (true, _) => BranchEnd::Completed,
        (false, error) => BranchEnd::Failed {
            error: error.unwrap_or_default(),
        },
    };
    let context = branch
        .context
        .iter()
        .filter(|(k, v)| parent.get(k.as_str()) != Some(*v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let state = RunState {
        execution_id: branch.execution_id.clone(),
        workflow_id: branch.workflow_id.clone(),
        current_node: branch.current_node.clone(),
        context,
        history: branch.history.clone(),
        backtracks: branch.backtracks.clone(),
        retry_counters: branch.retry_counters.clone(),
        phase: branch.phase.clone(),
        steps: branch.steps,
        rubric_evaluation: branch.rubric_evaluation.clone(),
        node_redirected: branch.node_redirected,
        review_verdict: branch.review_verdict.clone(),
        compensating: None,
        compensations: Vec::new(),
        nested: None,
        failure: None,
        waiting: None,
        signals_taken: branch.signals_taken.clone(),
    };
    Some(Box::new(ForkBranchState {
        target: target.to_string(),
        state,
        own_history,
        ended: Some(ended),
    }))
}

/// Whether a branch's sub-flow succeeded, and why not (an error that ends the run is handled
/// before).
fn branch_end(r: &Result<RunOutcome, RuntimeError>) -> (bool, Option<String>) {
    match r {
        Ok(RunOutcome::Completed { .. }) => (true, None),
        Ok(RunOutcome::Rejected { reason }) => {
            (false, Some(format!("Sub-flow rejected: {reason}")))
        }
        Ok(RunOutcome::Paused) => (false, Some("Sub-flow paused".into())),
        Ok(RunOutcome::Failed(e)) | Err(e) => {
            (false, Some(format!("Sub-flow execution failed: {e}")))
        }
    }
}
