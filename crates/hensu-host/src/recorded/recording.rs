//! The answers of a stored run, read from its run log (docs/cli.md, *Replay*): the log is
//! walked row by row, the state rebuilt as it goes (deltas applied, snapshots reloaded), and
//! each outside call is taken from where the log shows it:
//!
//! - a standard node's agent answer: its history entry (output or error), when the entry
//!   appears; a visit rejected by its review, from the result the paused review cached;
//! - a parallel node's branch answers: the branch outcomes a durable run records below
//!   `nested` as they finish; a judge's answer: the node's history entry;
//! - a sub-workflow child's nodes: the child's history, recorded below `nested` at each of
//!   its boundaries; its last node (which no boundary follows) from the child's final context
//!   (the sub-workflow node's output): that node's writes, or its output under its id;
//! - an action node's actions: its result (the last action's output, or the first failed
//!   action and its message); a saga compensation's likewise;
//! - an `api-caller` node: its history entry;
//! - a review: the decision seen between the paused state and the state after its resume
//!   (approve with the context edits, backtrack, reject).
//!
//! What the log does not hold (a node inside a fork branch's sub-workflow, the raw text of a
//! branch whose output failed validation) is not answered: the replay reports the call.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use hensu_ir::{Action, CompensationBody, Node, TransitionRule, Workflow};
use hensu_runtime::{
    ActionResult, BacktrackKind, BranchOutcome, Context, ExecutionPhase, HistoryStep, Nested,
    NodeStatus, PostProcessor, ReviewDecision, RunState,
};
use hensu_store::{LogKind, StateStore, StoreError};
use serde::Deserialize;
use serde_json::Value;

use super::{AgentAnswer, NodeAnswer, RecordedAnswers, ReviewAnswer};

/// Rows read per page of the log.
const PAGE: usize = 512;

/// A stored run as a replay needs it: where it starts, where it ended, and its answers.
#[derive(Debug)]
pub struct Recorded {
    /// The state the replay starts from: the run's first state, or a fork's state at its
    /// fork point.
    pub start: RunState,
    /// The log step of `start`.
    pub start_step: u64,
    /// Whether the run is a fork (the replay resumes `start` instead of starting afresh).
    pub forked: bool,
    /// The state the replay is compared with: the last one, or the one at `--until`.
    pub end: RunState,
    /// The log step of `end`.
    pub end_step: u64,
    pub answers: RecordedAnswers,
}

/// Reads `run_id`'s log up to step `until` (all of it without) into its answers; `workflows`
/// are the run's workflow and those its sub-workflow nodes can call.
pub async fn read(
    store: &Arc<dyn StateStore>,
    run_id: &str,
    until: Option<u64>,
    workflows: &[&Workflow],
    reviews: Reviews,
) -> Result<Recorded, StoreError> {
    let record = store.record(run_id).await?;
    if let Some(u) = until.filter(|u| *u > record.step) {
        return Err(StoreError::Invalid(format!(
            "run `{run_id}` has no step {u} (its last step is {})",
            record.step
        )));
    }
    let last = until.unwrap_or(record.step);
    let (start_step, forked) = match &record.parent {
        Some(p) => (p.step + 1, true),
        None => (first_step(store, run_id).await?, false),
    };
    if last < start_step {
        return Err(StoreError::Invalid(format!(
            "run `{run_id}` has no step {last} to replay to (its replay starts at step \
             {start_step})"
        )));
    }
    let mut cur = store.load_at(run_id, start_step).await?.snapshot;
    let start = crate::restore(run_id, &cur).map_err(StoreError::Invalid)?;
    let mut answers = RecordedAnswers::new(workflows.iter().copied());
    if reviews == Reviews::Approved {
        answers = answers.approve_reviews();
    }
    let mut walk = Walk::new(workflows, &start, &mut answers);
    walk.in_terminal = reviews == Reviews::InTerminal;
    let mut after = start_step;
    'log: loop {
        let rows = store.read_log(run_id, after, PAGE).await?;
        if rows.is_empty() {
            break;
        }
        for row in rows {
            after = row.meta.step;
            if row.meta.step > last {
                break 'log;
            }
            match (&row.delta, row.meta.kind) {
                (Some(delta), _) => delta
                    .apply(&mut cur)
                    .map_err(|e| StoreError::Invalid(format!("step {}: {e}", row.meta.step)))?,
                (None, LogKind::Snapshot) => {
                    cur = store.load_at(run_id, row.meta.step).await?.snapshot;
                }
                _ => continue,
            }
            walk.observe(&cur).map_err(StoreError::Invalid)?;
        }
    }
    let end = crate::restore(run_id, &cur).map_err(StoreError::Invalid)?;
    walk.finish(&end, record.status.is_terminal());
    Ok(Recorded {
        start,
        start_step,
        forked,
        end,
        end_step: last,
        answers,
    })
}

/// How the recorded run's reviews were decided (its stored review mode).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reviews {
    /// Each review paused the run and a resume answered it: the decision is read between the
    /// pause and the resume.
    Paused,
    /// Every review was approved (`--auto-approve`).
    Approved,
    /// Asked in the terminal (`--interactive`): no pause is logged; the decision is read from
    /// the state after the reviewed node (a backtrack, the `onRejection` arm, else an
    /// approval — edits made in the editor are not told apart from the node's writes).
    InTerminal,
}

/// The step of a run's first log row (its creation).
async fn first_step(store: &Arc<dyn StateStore>, run_id: &str) -> Result<u64, StoreError> {
    let history = store.history(run_id).await?;
    Ok(history.first().map_or(0, |h| h.step))
}

/// The parts of a logged state the walk reads at every row.
#[derive(serde::Deserialize)]
struct Light {
    workflow_id: String,
    #[serde(default)]
    nested: Option<Box<Nested>>,
    phase: ExecutionPhase,
}

/// A review the log shows paused, waiting for its answer.
struct OpenReview {
    node: String,
    correlation_id: String,
    cached: Option<Value>,
    context: Context,
    history_len: usize,
    backtracks: usize,
}

/// The walk over the log's states.
struct Walk<'a> {
    workflows: HashMap<&'a str, &'a Workflow>,
    answers: &'a mut RecordedAnswers,
    /// History entries already seen, per flow (the main flow is `""`, a child its run id).
    seen: HashMap<String, usize>,
    /// The latest recorded branch outcomes of a parallel node, per (flow, node).
    branches: HashMap<(String, String), Vec<BranchOutcome>>,
    /// Branch outcomes the replay starts with (a redrive keeps them): not called again.
    kept: HashSet<(String, String)>,
    /// The latest state of a sub-workflow node's child, per (flow, node).
    children: HashMap<(String, String), RunState>,
    review: Option<OpenReview>,
    /// Reviews were answered in the terminal ([`Reviews::InTerminal`]).
    in_terminal: bool,
    /// The main flow's backtracks already seen (for [`Reviews::InTerminal`]).
    backtracks_seen: usize,
}

impl<'a> Walk<'a> {
    fn new(
        workflows: &[&'a Workflow],
        start: &RunState,
        answers: &'a mut RecordedAnswers,
    ) -> Walk<'a> {
        let mut walk = Walk {
            workflows: workflows.iter().map(|w| (w.id.as_str(), *w)).collect(),
            answers,
            seen: HashMap::new(),
            branches: HashMap::new(),
            kept: HashSet::new(),
            children: HashMap::new(),
            review: None,
            in_terminal: false,
            backtracks_seen: start.backtracks.len(),
        };
        walk.seen.insert(String::new(), start.history.len());
        walk.already_run(start.nested.as_deref());
        walk
    }

    /// What the state the replay starts from already holds (a fork inside a child or a
    /// parallel node): the replay continues it, so it is not answered again.
    fn already_run(&mut self, nested: Option<&Nested>) {
        match nested {
            Some(Nested::Parallel { node_id, finished }) => {
                for b in finished {
                    self.kept.insert((node_id.clone(), b.id.clone()));
                }
            }
            Some(Nested::Child { state, .. }) => {
                self.seen
                    .insert(state.execution_id.clone(), state.history.len());
                self.already_run(state.nested.as_deref());
            }
            Some(Nested::Fork { .. }) | None => {}
        }
    }

    /// The state after one row of the log. Only what a row can change is read: the history
    /// from where it was last seen, the nested record and the phase (the whole state only
    /// around a review), so the walk costs O(the step's change) per row, not O(the run).
    fn observe(&mut self, value: &Value) -> Result<(), String> {
        let light = Light::deserialize(value).map_err(|e| format!("a logged state: {e}"))?;
        if self.review.is_some() {
            let full = RunState::deserialize(value).map_err(|e| format!("a logged state: {e}"))?;
            self.close_review(&full);
        }
        let history = value
            .get("history")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let seen = self.seen.get("").copied().unwrap_or(0).min(history.len());
        let new = history[seen..]
            .iter()
            .map(HistoryStep::deserialize)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("a logged history entry: {e}"))?;
        self.flow(
            "",
            &light.workflow_id,
            &new,
            history.len(),
            light.nested.as_deref(),
        );
        if self.in_terminal && !new.is_empty() {
            let full = RunState::deserialize(value).map_err(|e| format!("a logged state: {e}"))?;
            self.terminal_reviews(&new, &full);
        }
        if let ExecutionPhase::Awaiting {
            processor_id,
            correlation_id,
            ..
        } = &light.phase
            && processor_id == PostProcessor::Review.id()
            && self
                .review
                .as_ref()
                .is_none_or(|r| &r.correlation_id != correlation_id)
        {
            let full = RunState::deserialize(value).map_err(|e| format!("a logged state: {e}"))?;
            self.open_review(&full);
        }
        Ok(())
    }

    /// A flow's new history entries (`total`: its history's length now), then its nested
    /// flows.
    fn flow(
        &mut self,
        flow: &str,
        workflow_id: &str,
        new: &[HistoryStep],
        total: usize,
        nested: Option<&Nested>,
    ) {
        for entry in new {
            self.entry(flow, workflow_id, entry);
        }
        self.seen.insert(flow.to_string(), total);
        match nested {
            Some(Nested::Parallel { node_id, finished }) => {
                self.branches
                    .insert((flow.to_string(), node_id.clone()), finished.clone());
            }
            Some(Nested::Child {
                node_id,
                state: child,
            }) => {
                let key = child.execution_id.as_str();
                let seen = self.seen.get(key).copied().unwrap_or(0);
                let new = child.history.get(seen..).unwrap_or_default();
                self.flow(
                    key,
                    &child.workflow_id,
                    new,
                    child.history.len(),
                    child.nested.as_deref(),
                );
                self.children
                    .insert((flow.to_string(), node_id.clone()), (**child).clone());
            }
            Some(Nested::Fork { .. }) | None => {}
        }
    }

    /// One history entry of `flow` (running workflow `workflow_id`).
    fn entry(&mut self, flow: &str, workflow_id: &str, entry: &HistoryStep) {
        let Some(wf) = self.workflows.get(workflow_id).copied() else {
            return;
        };
        if entry.compensates.is_some() {
            if let Some(c) = wf.saga.compensations.get(&entry.node_id) {
                match &c.body {
                    CompensationBody::Agent { .. } => {
                        self.answers
                            .push_agent(&entry.node_id, None, agent_answer(entry));
                    }
                    CompensationBody::Actions(actions) => {
                        self.actions(actions, entry, false);
                    }
                }
            }
            return;
        }
        let key = (flow.to_string(), entry.node_id.clone());
        match wf.nodes.get(&entry.node_id) {
            Some(Node::Standard(s)) if s.agent_id.is_some() => {
                self.answers
                    .push_agent(&entry.node_id, None, agent_answer(entry));
            }
            Some(Node::Parallel(p)) => {
                let recorded = self.branches.remove(&key).unwrap_or_default();
                for branch in &p.branches {
                    if self
                        .kept
                        .remove(&(entry.node_id.clone(), branch.id.clone()))
                    {
                        continue;
                    }
                    if let Some(o) = recorded.iter().find(|o| o.id == branch.id)
                        && let Some(answer) = branch_answer(o)
                    {
                        self.answers
                            .push_agent(&entry.node_id, Some(&branch.id), answer);
                    }
                }
                let judged = p
                    .consensus_config
                    .as_ref()
                    .is_some_and(|c| c.strategy == hensu_ir::ConsensusStrategy::JudgeDecides);
                if judged {
                    self.answers
                        .push_agent(&entry.node_id, None, agent_answer(entry));
                }
            }
            // Each settled item is recorded like a parallel branch, its position as its id.
            Some(Node::Map(m)) if m.target.is_none() => {
                let recorded = self.branches.remove(&key).unwrap_or_default();
                for o in &recorded {
                    if self.kept.remove(&(entry.node_id.clone(), o.id.clone())) {
                        continue;
                    }
                    if let Some(answer) = branch_answer(o) {
                        self.answers.push_agent(&entry.node_id, Some(&o.id), answer);
                    }
                }
            }
            Some(Node::Action(a)) => self.actions(&a.actions, entry, true),
            Some(Node::Generic(g)) if g.executor_type == "api-caller" => {
                self.answers.push_generic(
                    &entry.node_id,
                    NodeAnswer {
                        status: entry.status,
                        output: entry.output.clone(),
                        error: entry.error.clone(),
                    },
                );
            }
            Some(Node::SubWorkflow(_)) => {
                if let Some(child) = self.children.remove(&key) {
                    self.last_child_node(&child, entry.output.as_ref());
                }
            }
            _ => {}
        }
    }

    /// The child's last node ran after its last recorded boundary: its answer is what its
    /// final context holds (the sub-workflow node's output).
    fn last_child_node(&mut self, child: &RunState, output: Option<&Value>) {
        let Some(Value::Object(ctx)) = output else {
            return;
        };
        let Some(wf) = self.workflows.get(child.workflow_id.as_str()).copied() else {
            return;
        };
        let node = child.current_node.as_str();
        let Some(Node::Standard(s)) = wf.nodes.get(node) else {
            return;
        };
        if s.agent_id.is_none() {
            return;
        }
        let text = match s.writes.as_slice() {
            [] => ctx.get(node).map(|v| hensu_runtime::render(v).into_owned()),
            [one] if !ctx.contains_key("score") && !ctx.contains_key("approved") => {
                ctx.get(one).map(|v| hensu_runtime::render(v).into_owned())
            }
            writes => {
                let mut obj = serde_json::Map::new();
                for k in
                    writes
                        .iter()
                        .map(String::as_str)
                        .chain(["score", "approved", "recommendation"])
                {
                    if let Some(v) = ctx.get(k) {
                        obj.insert(k.to_string(), v.clone());
                    }
                }
                Some(Value::Object(obj).to_string())
            }
        };
        if let Some(text) = text {
            self.answers.push_agent(
                node,
                None,
                AgentAnswer {
                    result: Ok(text),
                    usage: None,
                },
            );
        }
    }

    /// The results of `actions` that give `entry`'s result: on success each action succeeds
    /// with the recorded output (the last one with a result gives it); on failure the first
    /// failed action (named in the message) fails with its message, the others succeed.
    fn actions(&mut self, actions: &[Action], entry: &HistoryStep, node: bool) {
        let failed = (entry.status == NodeStatus::Failure)
            .then(|| {
                entry
                    .error
                    .as_deref()
                    .and_then(|e| e.strip_prefix("One or more actions failed: "))
            })
            .flatten();
        let output = match (&entry.output, node) {
            (Some(v), true) => hensu_runtime::render(v).into_owned(),
            _ => String::new(),
        };
        let mut failure_used = false;
        for action in actions {
            let label = match action {
                Action::Send { handler_id, .. } if handler_id == "log" => continue,
                Action::Send { handler_id, .. } => format!("send:{handler_id}"),
                Action::Execute { command_id } => format!("execute:{command_id}"),
            };
            let result = match failed.and_then(|f| f.strip_prefix(&format!("{label}: "))) {
                Some(message) if !failure_used => {
                    failure_used = true;
                    ActionResult::failure(message)
                }
                _ => ActionResult::success(output.clone()),
            };
            self.answers.push_action(&label, result);
        }
    }

    /// A review the state shows waiting (its phase), not seen before.
    fn open_review(&mut self, state: &RunState) {
        let ExecutionPhase::Awaiting {
            node_id,
            processor_id,
            cached_result,
            correlation_id,
            ..
        } = &state.phase
        else {
            return;
        };
        if processor_id != PostProcessor::Review.id()
            || self
                .review
                .as_ref()
                .is_some_and(|r| &r.correlation_id == correlation_id)
        {
            return;
        }
        self.review = Some(OpenReview {
            node: node_id.clone(),
            correlation_id: correlation_id.clone(),
            cached: cached_result.output.clone(),
            context: state.context.clone(),
            history_len: state.history.len(),
            backtracks: state.backtracks.len(),
        });
    }

    /// The decision of the open review, once the state has moved on from it.
    fn close_review(&mut self, state: &RunState) {
        let Some(open) = &self.review else {
            return;
        };
        if matches!(&state.phase, ExecutionPhase::Awaiting { correlation_id, .. } if *correlation_id == open.correlation_id)
        {
            return;
        }
        let Some(open) = self.review.take() else {
            return;
        };
        let edits: Context = state
            .context
            .iter()
            .filter(|(k, v)| open.context.get(k.as_str()) != Some(*v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let edits = (!edits.is_empty()).then_some(edits);
        let decision = if let Some(b) = state.backtracks
            [open.backtracks.min(state.backtracks.len())..]
            .iter()
            .find(|b| b.from == open.node && b.kind == BacktrackKind::Manual)
        {
            ReviewDecision::Backtrack {
                target: b.to.clone(),
                edits,
                reason: b.reason.clone(),
            }
        } else if let Some(v) = state.review_verdict.as_ref().filter(|v| !v.approved) {
            ReviewDecision::Reject {
                reason: v.reason.clone().unwrap_or_default(),
            }
        } else if state.history.len() == open.history_len || self.rejected(&open.node, state) {
            // No history entry followed (the review ended the run), or the flow took the
            // node's `onRejection` arm (the transition spent the verdict): a rejection, whose
            // reason is the `recommendation` it left, if any.
            let reason = match state.context.get("recommendation") {
                Some(Value::String(r))
                    if open.context.get("recommendation")
                        != state.context.get("recommendation") =>
                {
                    r.clone()
                }
                _ => String::new(),
            };
            ReviewDecision::Reject { reason }
        } else {
            ReviewDecision::Approve { edits }
        };
        if state.history.len() == open.history_len {
            self.cached_answer(&open);
        }
        self.answers
            .push_review(&open.node, ReviewAnswer::Decided(decision));
    }

    /// The reviews asked in the terminal at the visits of `new` (the main flow's entries
    /// this row added; `state` is the state after them).
    fn terminal_reviews(&mut self, new: &[HistoryStep], state: &RunState) {
        let fresh = state
            .backtracks
            .get(self.backtracks_seen..)
            .unwrap_or_default();
        self.backtracks_seen = state.backtracks.len();
        let Some(wf) = self.workflows.get(state.workflow_id.as_str()).copied() else {
            return;
        };
        for entry in new {
            let Some(Node::Standard(node)) = wf.nodes.get(&entry.node_id) else {
                continue;
            };
            let asked = node.review_config.as_ref().is_some_and(|r| match r.mode {
                hensu_ir::ReviewMode::Required => true,
                hensu_ir::ReviewMode::Optional => entry.status != NodeStatus::Success,
                hensu_ir::ReviewMode::Disabled => false,
            });
            let from_here = |kind: BacktrackKind| {
                fresh
                    .iter()
                    .find(|b| b.from == entry.node_id && b.kind == kind)
            };
            // A rubric that sent the flow back skipped the review.
            if !asked || from_here(BacktrackKind::Automatic).is_some() {
                continue;
            }
            let decision = match from_here(BacktrackKind::Manual) {
                Some(b) => ReviewDecision::Backtrack {
                    target: b.to.clone(),
                    edits: None,
                    reason: b.reason.clone(),
                },
                None if self.rejected(&entry.node_id, state) => ReviewDecision::Reject {
                    reason: match state.context.get("recommendation") {
                        Some(Value::String(r)) => r.clone(),
                        _ => String::new(),
                    },
                },
                None => ReviewDecision::Approve { edits: None },
            };
            self.answers
                .push_review(&entry.node_id, ReviewAnswer::Decided(decision));
        }
    }

    /// Whether the flow left the reviewed node by its `onRejection` arm: the state has moved
    /// to a target only a rejection leads to (or revised back under a rejection's budget).
    fn rejected(&self, node: &str, state: &RunState) -> bool {
        let Some(Node::Standard(node)) = self
            .workflows
            .get(state.workflow_id.as_str())
            .and_then(|w| w.nodes.get(node))
        else {
            return false;
        };
        let mut on_reject: Vec<&str> = Vec::new();
        let mut otherwise: Vec<&str> = Vec::new();
        for rule in &node.transition_rules {
            match rule {
                TransitionRule::Approval {
                    expected: false,
                    target_node,
                    ..
                } => on_reject.push(target_node),
                TransitionRule::Bounded {
                    inner,
                    otherwise: o,
                    ..
                } => {
                    if let TransitionRule::Approval {
                        expected: false,
                        target_node,
                        ..
                    } = inner.as_ref()
                    {
                        on_reject.push(target_node);
                        on_reject.push(o);
                    }
                }
                other => otherwise.extend(other.targets()),
            }
        }
        let next = state.current_node.as_str();
        on_reject.contains(&next) && !otherwise.contains(&next)
    }

    /// The run ended at the review (rejected) or still waits for it: the node's answer is
    /// the result the paused review cached.
    fn cached_answer(&mut self, open: &OpenReview) {
        if let Some(out) = &open.cached {
            self.answers.push_agent(
                &open.node,
                None,
                AgentAnswer {
                    result: Ok(hensu_runtime::render(out).into_owned()),
                    usage: None,
                },
            );
        }
    }

    /// The end of the log: a review still open waits, or ended the run (`ended`: the run
    /// is terminal, so it was rejected there).
    fn finish(&mut self, end: &RunState, ended: bool) {
        let Some(open) = self.review.take() else {
            return;
        };
        let still = matches!(&end.phase, ExecutionPhase::Awaiting { correlation_id, .. } if *correlation_id == open.correlation_id);
        if !still {
            return;
        }
        self.cached_answer(&open);
        let answer = if ended {
            ReviewAnswer::Decided(ReviewDecision::Reject {
                reason: String::new(),
            })
        } else {
            ReviewAnswer::Pending {
                correlation_id: open.correlation_id,
            }
        };
        self.answers.push_review(&open.node, answer);
    }
}

/// An agent's answer as its history entry shows it.
fn agent_answer(entry: &HistoryStep) -> AgentAnswer {
    let result = match (&entry.output, &entry.error) {
        (Some(out), _) => Ok(hensu_runtime::render(out).into_owned()),
        (None, Some(e)) => Err(e.clone()),
        (None, None) => Err(String::new()),
    };
    AgentAnswer {
        result,
        usage: entry.usage,
    }
}

/// A parallel branch's answer as its recorded outcome shows it (`None`: the raw text is not
/// recorded, as for an output that failed validation).
fn branch_answer(o: &BranchOutcome) -> Option<AgentAnswer> {
    let result = match (&o.output, &o.error) {
        (Some(out), _) if o.success => Ok(out.clone()),
        (_, Some(e)) => Err(e.strip_prefix("Branch execution failed: ")?.to_string()),
        _ => return None,
    };
    Some(AgentAnswer {
        result,
        usage: None,
    })
}
