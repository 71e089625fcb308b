//! Execution events (upstream `ExecutionListener`): node started/completed, transitions and
//! their reasons, transition warnings, agent calls, actions, backtracks and the end of a run.
//!
//! Events borrow from the engine, so emitting one costs nothing when nobody listens; a
//! listener that keeps them converts them with [`Event::to_json`].

use std::io::Write;
use std::sync::Mutex;

use hensu_ir::{ExitStatus, NodeKind};
use serde::Serialize;
use serde_json::Value;

use crate::state::{BacktrackKind, NodeStatus, RunState};

/// Version of the JSONL event stream (`run_started.format_version`).
pub const EVENTS_FORMAT_VERSION: u32 = 1;

/// Why a transition was taken.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum TransitionCause<'a> {
    Success,
    Failure,
    NoConsensus,
    Always,
    Approval {
        expected: bool,
        /// `true` when a review verdict decided, `false` when the `approved` variable did.
        from_review: bool,
    },
    Score {
        score: f64,
        condition: &'a str,
    },
    Condition {
        variable: &'a str,
        predicate: &'a str,
    },
    /// A rubric or review backtrack already chose the next node.
    Redirected,
    /// The review's `deadline` passed without a decision and its `onTimeout` arm routed it.
    ReviewTimeout,
}

impl std::fmt::Display for TransitionCause<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TransitionCause::Success => f.write_str("on success"),
            TransitionCause::Failure => f.write_str("on failure"),
            TransitionCause::NoConsensus => f.write_str("on no consensus"),
            TransitionCause::Always => f.write_str("otherwise"),
            TransitionCause::Approval {
                expected,
                from_review,
            } => write!(
                f,
                "{} ({})",
                if *expected {
                    "on approval"
                } else {
                    "on rejection"
                },
                if *from_review {
                    "review verdict"
                } else {
                    "approved variable"
                }
            ),
            TransitionCause::Score { score, condition } => {
                write!(
                    f,
                    "score {} matches {}",
                    hensu_ir::java_double_to_string(*score),
                    condition
                )
            }
            TransitionCause::Condition {
                variable,
                predicate,
            } => write!(f, "{variable} {predicate}"),
            TransitionCause::Redirected => f.write_str("redirected by rubric or review backtrack"),
            TransitionCause::ReviewTimeout => f.write_str("on review timeout (deadline passed)"),
        }
    }
}

/// The budget bookkeeping of a bounded rule that matched.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct BoundedInfo<'a> {
    pub namespace: &'a str,
    /// The counter after this transition (unchanged when exhausted).
    pub count: i64,
    pub budget: i64,
    /// `true`: the budget was spent and the rule escalated to its `otherwise` target.
    pub exhausted: bool,
}

impl std::fmt::Display for BoundedInfo<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.exhausted {
            write!(
                f,
                "{} budget of {} exhausted, escalating",
                self.namespace, self.budget
            )
        } else {
            write!(f, "{} retry {}/{}", self.namespace, self.count, self.budget)
        }
    }
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum FinishKind<'a> {
    Completed {
        #[serde(serialize_with = "ser_exit")]
        exit_status: ExitStatus,
    },
    Rejected {
        reason: &'a str,
    },
    Paused,
    Failed {
        error: &'a str,
    },
}

fn ser_exit<S: serde::Serializer>(s: &ExitStatus, ser: S) -> Result<S::Ok, S::Error> {
    ser.serialize_str(s.as_str())
}

fn ser_kind<S: serde::Serializer>(k: &NodeKind, ser: S) -> Result<S::Ok, S::Error> {
    ser.serialize_str(k.as_str())
}

/// One event of a run.
#[derive(Clone, Copy, Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event<'a> {
    RunStarted {
        /// Version of the event stream format (first line of every `--events` file).
        format_version: u32,
        execution_id: &'a str,
        workflow_id: &'a str,
        start_node: &'a str,
    },
    NodeStarted {
        node_id: &'a str,
        #[serde(serialize_with = "ser_kind")]
        kind: NodeKind,
        /// 1-based step number of this node execution.
        step: u64,
    },
    AgentCall {
        node_id: &'a str,
        agent_id: &'a str,
        /// Set for parallel branches.
        #[serde(skip_serializing_if = "Option::is_none")]
        branch_id: Option<&'a str>,
        model: &'a str,
        prompt: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        response: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<&'a str>,
        prompt_bytes: usize,
        response_bytes: usize,
        duration_us: u64,
        /// Tokens in/out, when the provider reports them.
        #[serde(skip_serializing_if = "Option::is_none")]
        usage: Option<crate::agent::Usage>,
    },
    /// A provider call is retried after a transient failure (429, 5xx, timeout).
    ProviderRetry {
        provider: &'a str,
        model: &'a str,
        attempt: u32,
        delay_ms: u64,
        error_kind: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
        message: &'a str,
    },
    /// An answer missed required JSON keys; the agent is re-prompted once more.
    StructuredOutputCorrection {
        node_id: &'a str,
        agent_id: &'a str,
        attempt: u32,
        problem: &'a str,
    },
    /// A branch of a dependency DAG that settled without running (docs/language.md,
    /// *Dependency DAGs*): its `runIf` flag was not true (`success`, output `SKIPPED`), or a
    /// dependency failed (`reason` is its error, `Dependency '<id>' failed`).
    BranchSkipped {
        node_id: &'a str,
        branch_id: &'a str,
        success: bool,
        reason: &'a str,
    },
    /// One item of a map node settled (docs/language.md, *Map over a list*): its answer was
    /// gathered (`success`), or it failed with `error`.
    ItemSettled {
        node_id: &'a str,
        index: u64,
        success: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<&'a str>,
    },
    ActionExecuted {
        node_id: &'a str,
        /// `send:<handler>` or `execute:<command>`.
        action: &'a str,
        success: bool,
        output: &'a str,
    },
    NodeCompleted {
        node_id: &'a str,
        status: NodeStatus,
        #[serde(skip_serializing_if = "Option::is_none")]
        output: Option<&'a Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<&'a str>,
        duration_us: u64,
    },
    RubricEvaluated {
        node_id: &'a str,
        score: f64,
        passed: bool,
    },
    /// A run input the schema does not declare (it is kept in the context).
    UnknownInput {
        key: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        did_you_mean: Option<&'a str>,
    },
    /// A rubric node's output carried no numeric `score`: it is evaluated as 0
    /// (docs/language.md, *Rubric evaluation*).
    RubricScoreMissing {
        node_id: &'a str,
    },
    /// A rubric node used up its automatic backtracks; its own transitions decide.
    RubricBacktracksSpent {
        node_id: &'a str,
        limit: u64,
    },
    Backtrack {
        from: &'a str,
        to: &'a str,
        kind: BacktrackKind,
        reason: &'a str,
    },
    TransitionTaken {
        from: &'a str,
        to: &'a str,
        cause: TransitionCause<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        bounded: Option<BoundedInfo<'a>>,
        /// Whether `recommendation` was kept for the next node.
        feedback: bool,
    },
    TransitionWarning {
        node_id: &'a str,
        message: &'a str,
    },
    /// A compensation of an unsuccessful run starts (docs/language.md, *Saga compensation*).
    CompensationStarted {
        /// The compensated node.
        node_id: &'a str,
        compensation_id: &'a str,
        /// The step of the compensated visit.
        visit_step: u64,
    },
    CompensationFinished {
        node_id: &'a str,
        compensation_id: &'a str,
        visit_step: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        output: Option<&'a Value>,
        duration_us: u64,
    },
    /// A compensation failed; it is recorded and the remaining ones still run.
    CompensationFailed {
        node_id: &'a str,
        compensation_id: &'a str,
        visit_step: u64,
        error: &'a str,
        duration_us: u64,
    },
    RunFinished {
        finish: FinishKind<'a>,
        /// The end node reached, if any.
        #[serde(skip_serializing_if = "Option::is_none")]
        end_node: Option<&'a str>,
        steps: u64,
        duration_us: u64,
    },
}

impl Event<'_> {
    /// The event as a JSON object (`{"event": "...", ...}`).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// Receives the events of a run. Every method has a no-op default.
pub trait ExecutionListener: Send + Sync {
    /// One event.
    fn on_event(&self, _event: &Event<'_>) {}
    /// Whether [`on_event`](Self::on_event) reads the per-step events (`NodeStarted`,
    /// `AgentCall`, `NodeCompleted`, `TransitionTaken`). When it does not, the engine builds
    /// none of them and skips the clock reads only they need (ARCHITECTURE.md,
    /// *hensu-runtime*); every other event is still sent.
    fn wants_step_events(&self) -> bool {
        true
    }
    /// The checkpoint hook, called before every node (crash-recovery persistence).
    fn on_checkpoint(&self, _state: &RunState) {}
    /// The trace the run's outgoing calls carry (a `traceparent` header), asked once per run:
    /// a listener that exports the run's trace gives its source ([`crate::trace_context`]).
    fn trace_source(&self) -> Option<std::sync::Arc<dyn crate::trace_context::TraceSource>> {
        None
    }
    /// Who receives the run's call events (a tool of the tool loop, a command, a webhook:
    /// [`crate::journal::CallEvent`]), asked once per run.
    fn call_observer(&self) -> Option<std::sync::Arc<dyn crate::journal::CallObserver>> {
        None
    }
    /// Who receives the text of the run's agent calls as the models write it
    /// ([`crate::tokens`]), asked once per run; `None` (the default): providers do not stream.
    fn token_sink(&self) -> Option<std::sync::Arc<dyn crate::tokens::TokenSink>> {
        None
    }
}

/// Ignores everything.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoopListener;

impl ExecutionListener for NoopListener {
    fn wants_step_events(&self) -> bool {
        false
    }
}

/// Keeps every event as JSON (tests, summaries).
#[derive(Debug, Default)]
pub struct CollectingListener {
    events: Mutex<Vec<Value>>,
}

impl CollectingListener {
    pub fn new() -> Self {
        Self::default()
    }

    /// The events so far.
    pub fn events(&self) -> Vec<Value> {
        self.events.lock().map(|e| e.clone()).unwrap_or_default()
    }
}

impl ExecutionListener for CollectingListener {
    fn on_event(&self, event: &Event<'_>) {
        if let Ok(mut e) = self.events.lock() {
            e.push(event.to_json());
        }
    }
}

/// Writes one JSON line per event.
pub struct JsonlListener<W: Write + Send> {
    out: Mutex<W>,
}

impl<W: Write + Send> JsonlListener<W> {
    pub fn new(out: W) -> Self {
        JsonlListener {
            out: Mutex::new(out),
        }
    }
}

impl<W: Write + Send> ExecutionListener for JsonlListener<W> {
    fn on_event(&self, event: &Event<'_>) {
        if let Ok(mut out) = self.out.lock() {
            if serde_json::to_writer(&mut *out, event).is_ok() {
                let _ = out.write_all(b"\n");
            }
            if matches!(event, Event::RunFinished { .. }) {
                let _ = out.flush();
            }
        }
    }
}

/// Fans events out to several listeners.
#[derive(Default)]
pub struct MultiListener {
    listeners: Vec<std::sync::Arc<dyn ExecutionListener>>,
}

impl MultiListener {
    pub fn new(listeners: Vec<std::sync::Arc<dyn ExecutionListener>>) -> Self {
        MultiListener { listeners }
    }
}

impl ExecutionListener for MultiListener {
    fn on_event(&self, event: &Event<'_>) {
        for l in &self.listeners {
            l.on_event(event);
        }
    }

    fn wants_step_events(&self) -> bool {
        self.listeners.iter().any(|l| l.wants_step_events())
    }

    fn on_checkpoint(&self, state: &RunState) {
        for l in &self.listeners {
            l.on_checkpoint(state);
        }
    }

    fn trace_source(&self) -> Option<std::sync::Arc<dyn crate::trace_context::TraceSource>> {
        self.listeners.iter().find_map(|l| l.trace_source())
    }

    fn call_observer(&self) -> Option<std::sync::Arc<dyn crate::journal::CallObserver>> {
        let all: Vec<_> = self
            .listeners
            .iter()
            .filter_map(|l| l.call_observer())
            .collect();
        match all.len() {
            0 => None,
            1 => all.into_iter().next(),
            _ => Some(std::sync::Arc::new(crate::journal::Fanout(all))),
        }
    }

    fn token_sink(&self) -> Option<std::sync::Arc<dyn crate::tokens::TokenSink>> {
        let all: Vec<_> = self
            .listeners
            .iter()
            .filter_map(|l| l.token_sink())
            .collect();
        match all.len() {
            0 => None,
            1 => all.into_iter().next(),
            _ => Some(std::sync::Arc::new(crate::tokens::Fanout(all))),
        }
    }
}
