//! Execution state: context, history, retry counters and phase — all serde-serializable (the
//! snapshot format of the durable store comes in the next issue).

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::value::Context;

mod delta;
pub use delta::{Redact, StateShadow, StepChange};

/// The status of one node execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum NodeStatus {
    Success,
    Failure,
    /// Waiting for something external (the run pauses).
    Pending,
    /// An end node.
    End,
}

impl NodeStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            NodeStatus::Success => "SUCCESS",
            NodeStatus::Failure => "FAILURE",
            NodeStatus::Pending => "PENDING",
            NodeStatus::End => "END",
        }
    }
}

impl std::fmt::Display for NodeStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a node executor produced.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeResult {
    pub status: NodeStatus,
    /// The output (agent text, handler output, consensus reasoning…); `None` for failures.
    pub output: Option<Value>,
    /// The error message of a failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub metadata: IndexMap<String, Value>,
}

impl NodeResult {
    /// SUCCESS with a text output.
    pub fn success(output: impl Into<String>) -> Self {
        NodeResult {
            status: NodeStatus::Success,
            output: Some(Value::String(output.into())),
            error: None,
            metadata: IndexMap::new(),
        }
    }

    /// SUCCESS with a JSON output.
    pub fn success_value(output: Value) -> Self {
        NodeResult {
            status: NodeStatus::Success,
            output: Some(output),
            error: None,
            metadata: IndexMap::new(),
        }
    }

    /// FAILURE with a message (no output).
    pub fn failure(message: impl Into<String>) -> Self {
        NodeResult {
            status: NodeStatus::Failure,
            output: None,
            error: Some(message.into()),
            metadata: IndexMap::new(),
        }
    }

    /// Adds a metadata entry.
    pub fn with_meta(mut self, key: &str, value: Value) -> Self {
        self.metadata.insert(key.to_string(), value);
        self
    }

    /// The output as text (strings as is, other values as compact JSON).
    pub fn output_text(&self) -> Option<std::borrow::Cow<'_, str>> {
        self.output.as_ref().map(crate::value::render)
    }
}

/// One executed node, appended by the history processor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryStep {
    /// 1-based step number.
    pub step: u64,
    pub node_id: String,
    pub status: NodeStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Milliseconds since the start of the run.
    pub at_ms: u64,
    /// Score and pass flag when the node has a rubric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rubric: Option<RubricEvaluation>,
    /// Tokens the node's agent call used, when the provider reported them (the web console
    /// shows them per step and in total).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<crate::agent::Usage>,
    /// Set on the entry of a compensation (`node_id` is then the compensation's id): the node
    /// whose visit it undid (docs/language.md, *Saga compensation*).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compensates: Option<String>,
}

/// Why the flow went back to an earlier node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum BacktrackKind {
    /// Rubric auto-backtrack.
    Automatic,
    /// Reviewer backtrack.
    Manual,
    /// A bounded rule under budget (`revise` / `onFailure retry`).
    Revise,
}

/// A recorded backtrack.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Backtrack {
    pub from: String,
    pub to: String,
    pub kind: BacktrackKind,
    pub reason: String,
}

/// The result of a rubric evaluation of the current node.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RubricEvaluation {
    pub rubric_id: String,
    pub score: f64,
    pub passed: bool,
}

/// The verdict of a human review of the current node.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReviewVerdict {
    pub approved: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Not decided by the review's deadline, and the review's `onTimeout` arm routes it (no
    /// approval arm matches then; docs/language.md, *Review*).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
}

/// Where inside a node's lifecycle the execution is (upstream `ExecutionPhase`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ExecutionPhase {
    /// Top of the loop.
    Initial,
    /// Suspended inside the post pipeline, waiting for an out-of-band answer.
    Awaiting {
        node_id: String,
        processor_id: String,
        cached_result: Box<NodeResult>,
        correlation_id: String,
        /// Milliseconds since the Unix epoch.
        requested_at_ms: u64,
        /// A review with a `deadline` (docs/language.md, *Review*): when it is rejected
        /// undecided (unix milliseconds). A durable run is claimed again then.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        deadline_at_ms: Option<u64>,
        /// A tool call of the node's tool loop waits for approval (processor
        /// [`TOOL_APPROVAL`]; docs/mcp.md, *Tool approval*): the call under review.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_call: Option<Box<ToolCallReview>>,
    },
    /// Finished.
    Terminal,
}

/// The `processor_id` of a run paused at a gated tool call (docs/mcp.md, *Tool approval*): the
/// node runs again on resume, its journal replays the calls before the gated one, and the
/// decision goes to that call.
pub const TOOL_APPROVAL: &str = "ToolCallApproval";

/// A tool call an agent's tool loop reached and a reviewer must approve (docs/mcp.md, *Tool
/// approval*).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallReview {
    /// The tool's name.
    pub tool: String,
    /// The arguments the model gave (a JSON object), redacted as the run's state.
    pub arguments: Value,
}

/// The mutable state of one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    pub execution_id: String,
    pub workflow_id: String,
    /// The node to execute next (or the end node reached).
    pub current_node: String,
    pub context: Context,
    pub history: Vec<HistoryStep>,
    #[serde(default)]
    pub backtracks: Vec<Backtrack>,
    /// `"<namespace>:<ownerNodeId>"` → times the owner sent the flow back.
    #[serde(default)]
    pub retry_counters: IndexMap<String, i64>,
    pub phase: ExecutionPhase,
    /// Node steps executed so far (end nodes excluded).
    #[serde(default)]
    pub steps: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rubric_evaluation: Option<RubricEvaluation>,
    #[serde(default)]
    pub node_redirected: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_verdict: Option<ReviewVerdict>,
    /// Set while the compensations of an unsuccessful run run (and checkpointed with it, so a
    /// resumed run continues with the ones left).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compensating: Option<Compensating>,
    /// The compensations that ran, in execution order (not in the context).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compensations: Vec<CompensationRecord>,
    /// The nested flows of `current_node` in progress when the run stopped (a sub-workflow's
    /// child run, a fork's branches), or the branches of its parallel or fork node that a
    /// durable run recorded as finished while the others ran: a resumed run continues them
    /// instead of starting them again, and does not run a finished branch again
    /// (docs/language.md, *Runtime semantics*).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nested: Option<Box<Nested>>,
    /// Why the run failed (set when it ends failed; not for a cancelled run): recorded with
    /// the run's final state, so every face (the CLI, `runs show`, the server's status,
    /// result and `execution.error` event, the console) gives the same reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<RunFailure>,
    /// The wait node the run is waiting at (docs/language.md, *Timers and signals*): its wake
    /// time is fixed at the first arrival and kept while the run is suspended, so a resumed
    /// run wakes at the same time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<Waiting>,
    /// The sequence numbers of the signals the run has taken, so a resumed run never takes
    /// one twice.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signals_taken: Vec<u64>,
}

/// A run waiting at a `wait` or `awaitSignal` node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Waiting {
    pub node_id: String,
    /// When the wait ends without a signal (unix milliseconds); `None`: a signal wait without
    /// a timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wake_at_ms: Option<u64>,
    /// The signal waited for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
}

/// Why a run failed: the error it ended with, as `hensuc run` prints it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunFailure {
    /// The error's message (e.g. `missing required input: topic`).
    pub message: String,
    /// The node the run was at when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// What that node's last step reported, when it failed (e.g. `One or more actions
    /// failed: execute:deploy: …` under a `No valid transition` message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
}

impl RunFailure {
    /// The message with its cause, as one line.
    pub fn describe(&self) -> String {
        match &self.cause {
            Some(c) if !self.message.contains(c.as_str()) => format!("{} ({c})", self.message),
            _ => self.message.clone(),
        }
    }
}

/// The nested flows of a node, saved when the run stops inside them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Nested {
    /// The child run of sub-workflow node `node_id`.
    Child {
        node_id: String,
        state: Box<RunState>,
    },
    /// The branches of fork node `node_id`: every target in target order when the run paused
    /// inside them; the finished ones in the order they finished when a durable run recorded
    /// them while the others ran (a target missing here starts afresh on resume).
    Fork {
        node_id: String,
        branches: Vec<ForkBranchState>,
    },
    /// The branches of parallel node `node_id` that finished, in the order they finished
    /// (recorded by a durable run while the others ran): a resumed run runs only the others.
    Parallel {
        node_id: String,
        finished: Vec<BranchOutcome>,
    },
}

/// A branch of a parallel or fork node that finished while the node's other branches run,
/// as a durable run records it ([`Checkpointer::record_branch`](crate::Checkpointer::record_branch)).
#[derive(Clone, Copy, Debug)]
pub enum FinishedBranch<'a> {
    /// A parallel branch's outcome (stored in [`Nested::Parallel`]).
    Parallel(&'a BranchOutcome),
    /// A fork target's sub-flow, ended (stored in [`Nested::Fork`]); its context holds only
    /// the entries it changed against the fork's (the rest is the fork's, which the branch
    /// cannot change).
    Fork(&'a ForkBranchState),
}

impl FinishedBranch<'_> {
    /// The branch id (parallel) or target node id (fork) the branch is known by.
    pub fn key(&self) -> &str {
        match self {
            FinishedBranch::Parallel(o) => &o.id,
            FinishedBranch::Fork(b) => &b.target,
        }
    }
}

/// One saved fork branch: its state, and how it ended (`None`: it waits, e.g. for a review).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ForkBranchState {
    pub target: String,
    pub state: RunState,
    /// The branch's history holds only its own steps (it inherits the run's history up to the
    /// fork without a copy). Unset in branches saved by versions that copied the run's history
    /// into each branch: their first steps are the run's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub own_history: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<BranchEnd>,
}

/// The history a fork branch inherits from the flow it forked from: borrowed, never copied
/// into the branch (a branch's own `RunState::history` holds only the steps it ran; the fork
/// appends them to the parent's when the branches are done). Nested forks chain: a branch's
/// branches inherit its inheritance plus its own steps.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct InheritedHistory<'a> {
    outer: Option<&'a InheritedHistory<'a>>,
    steps: &'a [HistoryStep],
}

impl<'a> InheritedHistory<'a> {
    /// `steps` after everything `self` holds.
    pub(crate) fn then(&'a self, steps: &'a [HistoryStep]) -> InheritedHistory<'a> {
        InheritedHistory {
            outer: Some(self),
            steps,
        }
    }

    /// The inherited segments, oldest first.
    fn segments(&self) -> Vec<&'a [HistoryStep]> {
        let mut out = vec![self.steps];
        let mut at = self.outer;
        while let Some(h) = at {
            out.push(h.steps);
            at = h.outer;
        }
        out.reverse();
        out
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.steps.is_empty() && self.outer.is_none_or(|o| o.is_empty())
    }

    /// The inherited steps followed by `own`, oldest first.
    pub(crate) fn with<'b>(
        &self,
        own: &'b [HistoryStep],
    ) -> impl DoubleEndedIterator<Item = &'b HistoryStep> + use<'a, 'b>
    where
        'a: 'b,
    {
        self.segments()
            .into_iter()
            .chain(std::iter::once(own))
            .flat_map(|s| s.iter())
    }
}

/// How a saved fork branch ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BranchEnd {
    Completed,
    Failed { error: String },
}

impl Nested {
    /// The node the nested flows belong to.
    pub fn node_id(&self) -> &str {
        match self {
            Nested::Child { node_id, .. }
            | Nested::Fork { node_id, .. }
            | Nested::Parallel { node_id, .. } => node_id,
        }
    }

    /// The phase of the innermost flow that waits for an answer (a pending review), if any.
    pub fn awaiting(&self) -> Option<&ExecutionPhase> {
        fn waiting(s: &RunState) -> Option<&ExecutionPhase> {
            match &s.phase {
                p @ ExecutionPhase::Awaiting { .. } => Some(p),
                _ => s.nested.as_ref().and_then(|n| n.awaiting()),
            }
        }
        match self {
            Nested::Child { state, .. } => waiting(state),
            Nested::Fork { branches, .. } => branches
                .iter()
                .filter(|b| b.ended.is_none())
                .find_map(|b| waiting(&b.state)),
            Nested::Parallel { .. } => None,
        }
    }
}

/// A sub-workflow child on the way from the main flow to a nested flow (the path the durable
/// boundary hooks are told, outermost first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NestedFrame {
    /// The sub-workflow node.
    pub node_id: String,
    /// The child run's execution id.
    pub execution_id: String,
}

/// The compensation of one completed visit, still to run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompensationTask {
    /// The compensated node.
    pub node_id: String,
    pub compensation_id: String,
    /// The step of the compensated visit.
    pub visit_step: u64,
    /// The index of that visit in `RunState::history` (its output is there).
    pub history_index: usize,
}

/// A run whose compensations are running: why it ended and what is left, next first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Compensating {
    pub cause: EndCause,
    pub pending: Vec<CompensationTask>,
}

/// How a compensated run ended (its outcome once the compensations are done).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EndCause {
    /// An end node with status FAILURE or CANCEL.
    Completed {
        end_node: String,
        exit_status: String,
    },
    Rejected {
        reason: String,
    },
    Failed {
        error: crate::error::RuntimeError,
    },
}

/// One compensation that ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompensationRecord {
    pub node_id: String,
    pub compensation_id: String,
    pub visit_step: u64,
    pub status: NodeStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl RunState {
    /// A fresh state at `start`.
    pub fn new(execution_id: String, workflow_id: String, start: String, context: Context) -> Self {
        RunState {
            execution_id,
            workflow_id,
            current_node: start,
            context,
            history: Vec::new(),
            backtracks: Vec::new(),
            retry_counters: IndexMap::new(),
            phase: ExecutionPhase::Initial,
            steps: 0,
            rubric_evaluation: None,
            node_redirected: false,
            review_verdict: None,
            compensating: None,
            compensations: Vec::new(),
            nested: None,
            failure: None,
            waiting: None,
            signals_taken: Vec::new(),
        }
    }

    /// The node ids of the history, in order (the path taken; compensations are not part of
    /// it, see `compensations`).
    pub fn path(&self) -> Vec<&str> {
        self.history
            .iter()
            .filter(|s| s.compensates.is_none())
            .map(|s| s.node_id.as_str())
            .collect()
    }

    /// The last `n` node ids visited (most recent last), including the current node when it
    /// is not the last history entry.
    pub fn last_nodes(&self, n: usize) -> Vec<String> {
        self.last_nodes_after(&InheritedHistory::default(), n)
    }

    /// [`last_nodes`](Self::last_nodes) of a fork branch, whose history continues `inherited`.
    pub(crate) fn last_nodes_after(
        &self,
        inherited: &InheritedHistory<'_>,
        n: usize,
    ) -> Vec<String> {
        let mut out: Vec<String> = inherited
            .with(&self.history)
            .rev()
            .take(n)
            .map(|s| s.node_id.clone())
            .collect();
        out.reverse();
        if out.last().map(String::as_str) != Some(self.current_node.as_str()) {
            out.push(self.current_node.clone());
            if out.len() > n {
                out.remove(0);
            }
        }
        out
    }
}

/// One branch's outcome (what the consensus sees of it; recorded as is by durable runs).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BranchOutcome {
    pub id: String,
    pub success: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The yields (and, for vote strategies, engine variables) found in the output.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub yields: IndexMap<String, Value>,
}
