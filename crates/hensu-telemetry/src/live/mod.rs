//! The live side: an [`ExecutionListener`] that turns a run's events into the spans the
//! rebuild makes from the log (same keys, so the same ids), handing each finished span to a
//! [`SpanSink`] (the OTLP [`Exporter`](crate::Exporter)).
//!
//! A step only records what happened: the listener copies an event into a compact record
//! (node, agent and model names as indices into the workflow, a clock read) and queues it
//! (module `queue`); the process's trace thread builds the spans (module `spans`) and hands
//! them to the sink, whose own batch thread sends them. Nothing on the step path waits,
//! builds a span or copies an attribute (docs/observability.md, *Cost*).

mod queue;
mod spans;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use hensu_ir::Workflow;
use hensu_providers::Redactor;
use hensu_runtime::journal::{CallEvent, CallKind, CallObserver};
use hensu_runtime::{
    BacktrackKind, Event, ExecutionListener, ExecutionPhase, FinishKind, NodeStatus, RunState,
    Usage,
};

use crate::ids;
use crate::span::SpanRecord;

pub use queue::{dropped, flush};

/// Where finished spans go.
pub trait SpanSink: Send + Sync {
    fn export(&self, trace_id: [u8; 16], span: SpanRecord);
}

impl SpanSink for crate::Exporter {
    fn export(&self, trace_id: [u8; 16], span: SpanRecord) {
        self.emit_owned(trace_id, span);
    }
}

/// Keeps the spans (tests, benchmarks).
#[derive(Default)]
pub struct CollectingSink {
    spans: Mutex<Vec<SpanRecord>>,
}

impl CollectingSink {
    /// The spans built so far (the trace thread's queue is drained first).
    pub fn spans(&self) -> Vec<SpanRecord> {
        flush();
        self.spans.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

impl SpanSink for CollectingSink {
    fn export(&self, _trace_id: [u8; 16], span: SpanRecord) {
        if let Ok(mut s) = self.spans.lock() {
            s.push(span);
        }
    }
}

/// A name an event carries: most are the workflow's own (kept as an index, no copy).
#[derive(Debug)]
pub(crate) enum Name {
    Node(usize),
    Agent(usize),
    /// The configured model of agent `n`.
    Model(usize),
    Owned(Box<str>),
}

/// A run's event as the trace needs it, owned (the step's borrowed [`Event`] is gone when the
/// trace thread reads it). Text the trace does not export is not copied: prompts and
/// responses only with `capture_content`.
#[derive(Debug)]
pub(crate) enum Rec {
    Parent(Option<([u8; 16], [u8; 8])>),
    Resuming {
        run_id: Box<str>,
        started_ms: u64,
        /// The visit waiting in a review: its node and step.
        awaiting: Option<(Name, u64)>,
    },
    Started {
        run_id: Box<str>,
    },
    NodeStarted {
        node: Name,
        step: u64,
    },
    AgentCall(Box<AgentRec>),
    Action {
        node: Name,
        action: Box<str>,
        success: bool,
    },
    Rubric {
        node: Name,
        score: f64,
        passed: bool,
    },
    NodeCompleted {
        node: Name,
        status: NodeStatus,
        error: Option<Box<str>>,
    },
    CompensationStarted {
        node: Name,
        compensation: Box<str>,
        visit_step: u64,
    },
    CompensationEnded {
        compensation: Box<str>,
        error: Option<Box<str>>,
    },
    Retry {
        attempt: u32,
        delay_ms: u64,
        error_kind: Box<str>,
        status: Option<u16>,
    },
    Backtrack {
        from: Name,
        to: Name,
        kind: BacktrackKind,
    },
    /// A tool call of an agent's tool loop finished (from the run's call observer).
    Tool {
        node: Name,
        visit: Box<str>,
        index: u32,
        tool: Box<str>,
        ok: bool,
        duration_ms: u64,
    },
    Finished(Finish),
}

#[derive(Debug)]
pub(crate) struct AgentRec {
    pub node: Name,
    pub agent: Name,
    pub branch: Option<Box<str>>,
    pub model: Name,
    pub prompt: Option<Box<str>>,
    pub response: Option<Box<str>>,
    pub error: Option<Box<str>>,
    pub duration_us: u64,
    pub usage: Option<Usage>,
}

/// How the run ended (what the root span says of it).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Finish {
    Paused,
    Completed(hensu_ir::ExitStatus),
    Rejected,
    Failed,
}

/// What the trace thread keeps of one run: its settings and its spans in flight.
pub(crate) struct RunTrace {
    pub workflow: Arc<Workflow>,
    pub tenant: Option<String>,
    pub sink: Arc<dyn SpanSink>,
    pub redactor: Arc<Redactor>,
    pub capture_content: bool,
    /// Touched by the trace thread only (a lock nobody contends).
    pub live: Mutex<spans::Live>,
    /// What outgoing calls need, kept on the step side: the run id and its trace id (set once
    /// a run), and the step of each workflow node's latest visit (by node index; 0: none).
    ids: Mutex<Option<(String, [u8; 16])>>,
    parent: Mutex<Option<([u8; 16], [u8; 8])>>,
    steps: Box<[AtomicU64]>,
}

impl RunTrace {
    fn set_run(&self, run_id: &str) {
        let parent = self.parent.lock().ok().and_then(|p| *p);
        let trace_id = parent.map_or_else(|| ids::trace_id(run_id), |(t, _)| t);
        if let Ok(mut i) = self.ids.lock() {
            *i = Some((run_id.to_string(), trace_id));
        }
    }
}

impl hensu_runtime::trace_context::TraceSource for RunTrace {
    /// The span of the visit the call belongs to (the run's root span for a call outside a
    /// workflow node's visit: a compensation's, a sub-workflow child's).
    fn traceparent(&self, node_id: &str) -> Option<String> {
        let ids = self.ids.lock().ok()?;
        let (run_id, trace_id) = ids.as_ref()?;
        let step = self
            .workflow
            .nodes
            .get_index_of(node_id)
            .and_then(|i| self.steps.get(i))
            .map_or(0, |s| s.load(Ordering::Relaxed));
        let key = if step == 0 {
            ids::SpanKey::Run
        } else {
            ids::SpanKey::Node {
                step,
                node: node_id.to_string(),
            }
        };
        let span = ids::span_id(run_id, &key);
        Some(format!("00-{}-{}-01", ids::hex(trace_id), ids::hex(&span)))
    }
}

impl RunTrace {
    /// The text of a name.
    pub fn name<'a>(&'a self, n: &'a Name) -> &'a str {
        let found = match *n {
            Name::Node(i) => self.workflow.nodes.get_index(i).map(|(k, _)| k.as_str()),
            Name::Agent(i) => self.workflow.agents.get_index(i).map(|(k, _)| k.as_str()),
            Name::Model(i) => self
                .workflow
                .agents
                .get_index(i)
                .map(|(_, a)| a.model.as_str()),
            Name::Owned(ref s) => Some(&**s),
        };
        found.unwrap_or_default()
    }
}

/// The listener of one run's live trace.
pub struct TraceListener {
    run: Arc<RunTrace>,
}

pub(crate) fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

fn owned(s: &str) -> Box<str> {
    Box::from(s)
}

impl TraceListener {
    /// A listener for a run of `workflow` (its run id comes with `run_started`, or from
    /// [`TraceListener::resuming`]). Prompts and responses are exported only with
    /// `capture_content`, redacted by `redactor`.
    pub fn new(
        workflow: Arc<Workflow>,
        tenant: Option<String>,
        sink: Arc<dyn SpanSink>,
        redactor: Arc<Redactor>,
        capture_content: bool,
    ) -> TraceListener {
        let steps = workflow.nodes.iter().map(|_| AtomicU64::new(0)).collect();
        TraceListener {
            run: Arc::new(RunTrace {
                workflow,
                tenant,
                sink,
                redactor,
                capture_content,
                live: Mutex::new(spans::Live::default()),
                ids: Mutex::new(None),
                parent: Mutex::new(None),
                steps,
            }),
        }
    }

    fn push(&self, rec: Rec) {
        queue::push(&self.run, now_ns(), rec);
    }

    /// The run continues a stored one: its id, its start (unix ms, for the root span) and,
    /// when it waits in a review, the visit the resume completes.
    pub fn resuming(&self, run_id: &str, started_ms: u64, state: &RunState) {
        self.run.set_run(run_id);
        let awaiting = match &state.phase {
            ExecutionPhase::Awaiting { node_id, .. } => {
                let node = self.node(node_id);
                self.visit(&node, state.steps);
                Some((node, state.steps))
            }
            _ => None,
        };
        self.push(Rec::Resuming {
            run_id: owned(run_id),
            started_ms,
            awaiting,
        });
    }

    /// The run was started under a caller's trace (a valid W3C `traceparent`).
    pub fn set_parent(&self, traceparent: Option<&str>) {
        let parent = traceparent.and_then(ids::parse_traceparent);
        if let Ok(mut p) = self.run.parent.lock() {
            *p = parent;
        }
        let run_id = self
            .run
            .ids
            .lock()
            .ok()
            .and_then(|i| i.as_ref().map(|(r, _)| r.clone()));
        if let Some(run_id) = run_id {
            self.run.set_run(&run_id);
        }
        self.push(Rec::Parent(parent));
    }

    /// Notes the step of a visit of a workflow node (what its calls' `traceparent` names).
    fn visit(&self, node: &Name, step: u64) {
        if let Name::Node(i) = *node
            && let Some(s) = self.run.steps.get(i)
        {
            s.store(step, Ordering::Relaxed);
        }
    }

    /// Waits until the trace thread has handed every span of the events so far to the sink.
    pub fn flush(&self) {
        flush();
    }

    fn node(&self, id: &str) -> Name {
        match self.run.workflow.nodes.get_index_of(id) {
            Some(i) => Name::Node(i),
            None => Name::Owned(owned(id)),
        }
    }

    fn agent_call(&self, event: &Event<'_>) -> Option<Rec> {
        let Event::AgentCall {
            node_id,
            agent_id,
            branch_id,
            model,
            prompt,
            response,
            error,
            duration_us,
            usage,
            ..
        } = *event
        else {
            return None;
        };
        let agents = &self.run.workflow.agents;
        let (agent, configured) = match agents.get_full(agent_id) {
            Some((i, _, a)) => (Name::Agent(i), (a.model == model).then_some(i)),
            None => (Name::Owned(owned(agent_id)), None),
        };
        let capture = self.run.capture_content;
        Some(Rec::AgentCall(Box::new(AgentRec {
            node: self.node(node_id),
            agent,
            branch: branch_id.map(owned),
            model: configured.map_or_else(|| Name::Owned(owned(model)), Name::Model),
            prompt: capture.then(|| owned(prompt)),
            response: response.filter(|_| capture).map(owned),
            error: error.map(owned),
            duration_us,
            usage,
        })))
    }

    /// The compact record of an event the trace reads (`None`: one it ignores).
    fn record(&self, event: &Event<'_>) -> Option<Rec> {
        Some(match *event {
            Event::RunStarted { execution_id, .. } => {
                self.run.set_run(execution_id);
                Rec::Started {
                    run_id: owned(execution_id),
                }
            }
            Event::NodeStarted { node_id, step, .. } => {
                let node = self.node(node_id);
                self.visit(&node, step);
                Rec::NodeStarted { node, step }
            }
            Event::AgentCall { .. } => return self.agent_call(event),
            Event::ActionExecuted {
                node_id,
                action,
                success,
                ..
            } => Rec::Action {
                node: self.node(node_id),
                action: owned(action),
                success,
            },
            Event::RubricEvaluated {
                node_id,
                score,
                passed,
            } => Rec::Rubric {
                node: self.node(node_id),
                score,
                passed,
            },
            Event::NodeCompleted {
                node_id,
                status,
                error,
                ..
            } => Rec::NodeCompleted {
                node: self.node(node_id),
                status,
                error: error.map(owned),
            },
            Event::CompensationStarted {
                node_id,
                compensation_id,
                visit_step,
            } => Rec::CompensationStarted {
                node: self.node(node_id),
                compensation: owned(compensation_id),
                visit_step,
            },
            Event::CompensationFinished {
                compensation_id, ..
            } => Rec::CompensationEnded {
                compensation: owned(compensation_id),
                error: None,
            },
            Event::CompensationFailed {
                compensation_id,
                error,
                ..
            } => Rec::CompensationEnded {
                compensation: owned(compensation_id),
                error: Some(owned(error)),
            },
            Event::ProviderRetry {
                attempt,
                delay_ms,
                error_kind,
                status,
                ..
            } => Rec::Retry {
                attempt,
                delay_ms,
                error_kind: owned(error_kind),
                status,
            },
            Event::Backtrack { from, to, kind, .. } => Rec::Backtrack {
                from: self.node(from),
                to: self.node(to),
                kind,
            },
            Event::RunFinished { finish, .. } => Rec::Finished(match finish {
                FinishKind::Paused => Finish::Paused,
                FinishKind::Completed { exit_status } => Finish::Completed(exit_status),
                FinishKind::Rejected { .. } => Finish::Rejected,
                FinishKind::Failed { .. } => Finish::Failed,
            }),
            _ => return None,
        })
    }
}

impl ExecutionListener for TraceListener {
    fn on_event(&self, event: &Event<'_>) {
        if let Some(rec) = self.record(event) {
            self.push(rec);
        }
    }

    fn trace_source(&self) -> Option<Arc<dyn hensu_runtime::trace_context::TraceSource>> {
        Some(self.run.clone())
    }

    fn call_observer(&self) -> Option<Arc<dyn CallObserver>> {
        Some(Arc::new(ToolCalls(self.run.clone())))
    }
}

/// The run's call observer: each tool call of a tool loop that really ran (not replayed from
/// the journal: its span was the first run's) becomes a record of its `execute_tool` span.
struct ToolCalls(Arc<RunTrace>);

impl CallObserver for ToolCalls {
    fn on_call(&self, event: &CallEvent<'_>) {
        let Some(done) = event.finished else {
            return;
        };
        if event.kind != CallKind::Tool
            || done.replayed
            || crate::semconv::tool_visit_step(event.visit).is_none()
        {
            return;
        }
        let node = match self.0.workflow.nodes.get_index_of(event.node_id) {
            Some(i) => Name::Node(i),
            None => Name::Owned(owned(event.node_id)),
        };
        let rec = Rec::Tool {
            node,
            visit: owned(event.visit),
            index: event.index,
            tool: owned(event.name),
            ok: done.ok,
            duration_ms: done.duration_ms,
        };
        queue::push(&self.0, now_ns(), rec);
    }
}
