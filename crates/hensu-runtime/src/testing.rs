//! The engine's test harness, shared by the test binaries of hensu-runtime and hensu-host
//! (behind the `testing` feature; never in a shipped build): workflow builders, a scripted
//! agent whose answers are queued per node, and an engine harness that collects events.

// Test support: a broken expectation is a failed test, so panicking is the point.
#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use hensu_ir::*;
use indexmap::IndexMap;
use serde_json::Value;

use crate::*;

// ---------------------------------------------------------------------------------------------
// Workflow builders

pub fn agent(id: &str) -> AgentConfig {
    AgentConfig::new(id, format!("Role of {id}"), "test-model")
}

pub fn workflow(start: &str, nodes: Vec<Node>) -> Workflow {
    let mut agents = IndexMap::new();
    for n in &nodes {
        if let Some(a) = n.agent_id() {
            agents.insert(a.to_string(), agent(a));
        }
        if let Node::Parallel(p) = n {
            for b in &p.branches {
                agents.insert(b.agent_id.clone(), agent(&b.agent_id));
            }
            if let Some(j) = p
                .consensus_config
                .as_ref()
                .and_then(|c| c.judge_agent_id.clone())
            {
                agents.insert(j.clone(), agent(&j));
            }
        }
    }
    Workflow {
        id: "test".into(),
        version: "1.0.0".into(),
        metadata: Metadata {
            name: "test".into(),
            ..Metadata::default()
        },
        agents,
        nodes: nodes.into_iter().map(|n| (n.id().to_string(), n)).collect(),
        start_node: start.into(),
        config: None,
        saga: Default::default(),
        timing: Default::default(),
        state_schema: None,
    }
}

pub fn node(id: &str, prompt: &str, writes: &[&str], rules: Vec<TransitionRule>) -> Node {
    Node::Standard(StandardNode {
        id: id.into(),
        agent_id: Some(format!("{id}-agent")),
        prompt: Some(prompt.into()),
        writes: writes.iter().map(|s| s.to_string()).collect(),
        transition_rules: rules,
        ..StandardNode::default()
    })
}

/// `p0 → sub → done`: `sub` runs workflow `child` with `topic` passed down and `outputs`
/// (`output_mapping` entries, as given) mapped back.
pub fn parent_of(child: &str, outputs: &[(&str, &str)]) -> Workflow {
    workflow(
        "p0",
        vec![
            node("p0", "start {topic}", &[], vec![success("sub")]),
            Node::SubWorkflow(SubWorkflowNode {
                id: "sub".into(),
                workflow_id: child.into(),
                input_mapping: [("topic".to_string(), "topic".to_string())]
                    .into_iter()
                    .collect(),
                output_mapping: outputs
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                transition_rules: vec![success("done")],
                ..SubWorkflowNode::default()
            }),
            end("done", ExitStatus::Success),
        ],
    )
}

pub fn end(id: &str, status: ExitStatus) -> Node {
    Node::End(EndNode {
        id: id.into(),
        status,
    })
}

pub fn success(t: &str) -> TransitionRule {
    TransitionRule::Success {
        target_node: t.into(),
        with_feedback: false,
    }
}

pub fn failure(t: Option<&str>) -> TransitionRule {
    TransitionRule::Failure {
        target_node: t.map(String::from),
    }
}

pub fn approval(expected: bool, t: &str) -> TransitionRule {
    TransitionRule::Approval {
        expected,
        target_node: t.into(),
        with_feedback: false,
    }
}

pub fn always(t: &str, with_feedback: bool) -> TransitionRule {
    TransitionRule::Always {
        target_node: t.into(),
        with_feedback,
    }
}

pub fn score_rule(
    conds: Vec<(ComparisonOperator, f64, &str)>,
    with_feedback: bool,
) -> TransitionRule {
    TransitionRule::Score {
        conditions: conds
            .into_iter()
            .map(|(op, v, t)| ScoreCondition {
                operator: op,
                value: Some(v),
                range: None,
                target_node: t.into(),
            })
            .collect(),
        with_feedback,
    }
}

pub fn condition(var: &str, p: ConditionPredicate, t: &str) -> TransitionRule {
    TransitionRule::Condition {
        variable: var.into(),
        predicate: p,
        target_node: t.into(),
        with_feedback: false,
    }
}

pub fn bounded(
    ns: Namespace,
    budget: i64,
    otherwise: &str,
    ewf: bool,
    inner: TransitionRule,
) -> TransitionRule {
    TransitionRule::Bounded {
        namespace: ns,
        budget,
        otherwise: otherwise.into(),
        escalation_with_feedback: ewf,
        inner: Box::new(inner),
    }
}

/// intro → plan (reviewed with `mode`, routed by `rules`) → exec → done; `cancelled` is a
/// CANCEL end. The review tests of both crates use it.
pub fn reviewed(rules: Vec<TransitionRule>, mode: ReviewMode) -> Workflow {
    let mut plan = node("plan", "Plan {goal}", &["plan"], rules);
    if let Node::Standard(s) = &mut plan {
        s.review_config = Some(ReviewConfig {
            mode,
            allow_backtrack: true,
            allow_edit: true,
        });
    }
    workflow(
        "intro",
        vec![
            node("intro", "Intro", &[], vec![success("plan")]),
            plan,
            node("exec", "Run {plan} {note}", &[], vec![success("done")]),
            end("done", ExitStatus::Success),
            end("cancelled", ExitStatus::Cancel),
        ],
    )
}

/// Approval → `exec`; rejection (with feedback) → `cancelled`.
pub fn approval_arms() -> Vec<TransitionRule> {
    vec![
        approval(true, "exec"),
        TransitionRule::Approval {
            expected: false,
            target_node: "cancelled".into(),
            with_feedback: true,
        },
    ]
}

pub fn map(v: Value) -> IndexMap<String, Value> {
    match v {
        Value::Object(m) => m.into_iter().collect(),
        _ => IndexMap::new(),
    }
}

pub fn ctx(v: Value) -> Context {
    match v {
        Value::Object(m) => m.into_iter().collect(),
        _ => Context::default(),
    }
}

// ---------------------------------------------------------------------------------------------
// A scripted agent: responses per node id, consumed in order (the last one repeats).

pub type Responder =
    Arc<dyn Fn(&AgentRequest<'_>) -> Result<AgentResponse, AgentError> + Send + Sync>;

/// Scripted answers per node (or agent) id.
pub type Queues = HashMap<String, VecDeque<Result<String, String>>>;

#[derive(Clone, Default)]
pub struct Script {
    pub queues: Arc<Mutex<Queues>>,
    /// Every call: `(node id, prompt)`, in order.
    pub prompts: Arc<Mutex<Vec<(String, String)>>>,
    /// Answers every call instead of the queues.
    pub custom: Option<Responder>,
    /// Every call first sleeps this long (tokio time).
    pub delay: Option<Duration>,
    /// Calls for these node (or agent) ids sleep this long instead of `delay`.
    pub delays: Arc<Mutex<HashMap<String, Duration>>>,
}

impl Script {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn on(self, node: &str, responses: &[&str]) -> Self {
        self.queues.lock().unwrap().insert(
            node.into(),
            responses.iter().map(|s| Ok(s.to_string())).collect(),
        );
        self
    }
    pub fn fail(self, node: &str, message: &str) -> Self {
        self.queues
            .lock()
            .unwrap()
            .insert(node.into(), VecDeque::from(vec![Err(message.to_string())]));
        self
    }
    /// Calls for `node` (a node id, or an agent id without `-agent`) first sleep `delay`
    /// (tokio time).
    pub fn delay_on(self, node: &str, delay: Duration) -> Self {
        self.delays.lock().unwrap().insert(node.into(), delay);
        self
    }
    pub fn prompts(&self) -> Vec<(String, String)> {
        self.prompts.lock().unwrap().clone()
    }
    pub fn prompts_of(&self, node: &str) -> Vec<String> {
        self.prompts()
            .into_iter()
            .filter(|(n, _)| n == node)
            .map(|(_, p)| p)
            .collect()
    }
}

pub struct ScriptAgent {
    pub config: AgentConfig,
    pub script: Script,
}

#[async_trait]
impl Agent for ScriptAgent {
    fn id(&self) -> &str {
        &self.config.id
    }
    fn config(&self) -> &AgentConfig {
        &self.config
    }
    async fn execute(&self, req: AgentRequest<'_>) -> Result<AgentResponse, AgentError> {
        self.script
            .prompts
            .lock()
            .unwrap()
            .push((req.node_id.to_string(), req.prompt.to_string()));
        let key = self
            .config
            .id
            .strip_suffix("-agent")
            .unwrap_or(&self.config.id)
            .to_string();
        let delay = {
            let delays = self.script.delays.lock().unwrap();
            delays
                .get(req.node_id)
                .or_else(|| delays.get(&key))
                .copied()
                .or(self.script.delay)
        };
        if let Some(d) = delay {
            tokio::time::sleep(d).await;
        }
        if let Some(f) = &self.script.custom {
            return f(&req);
        }
        let mut queues = self.script.queues.lock().unwrap();
        let name = if queues.get(req.node_id).is_some_and(|q| !q.is_empty()) {
            req.node_id.to_string()
        } else {
            key
        };
        let Some(q) = queues.get_mut(&name).filter(|q| !q.is_empty()) else {
            return Ok(AgentResponse::text("ok"));
        };
        let r = if q.len() > 1 {
            q.pop_front().unwrap()
        } else {
            q.front().cloned().unwrap()
        };
        r.map(AgentResponse::text)
            .map_err(|m| AgentError::new("scripted", m))
    }
}

pub struct ScriptProvider(pub Script);

impl AgentProvider for ScriptProvider {
    fn name(&self) -> &str {
        "script"
    }
    fn supports_model(&self, _m: &str) -> bool {
        true
    }
    fn priority(&self) -> i32 {
        2000
    }
    fn create_agent(
        &self,
        config: &AgentConfig,
        _c: &HashMap<String, String>,
    ) -> Result<Arc<dyn Agent>, AgentError> {
        Ok(Arc::new(ScriptAgent {
            config: config.clone(),
            script: self.0.clone(),
        }))
    }
}

pub struct Harness {
    pub engine: Engine,
    pub events: Arc<CollectingListener>,
}

pub fn harness(script: &Script) -> Harness {
    harness_with(script, |b| b)
}

pub fn harness_with(script: &Script, f: impl FnOnce(EngineBuilder) -> EngineBuilder) -> Harness {
    let events = Arc::new(CollectingListener::new());
    let b = Engine::builder().provider(Arc::new(ScriptProvider(script.clone())));
    Harness {
        engine: f(b).build(),
        events,
    }
}

impl Harness {
    pub async fn run(&self, wf: &Workflow, input: Value) -> RunResult {
        let cancel = CancelToken::new();
        self.engine.run(wf, ctx(input), self.ctx(&cancel)).await
    }
    /// [`Harness::run`] with `listener` instead of the harness's event collector.
    pub async fn run_with(
        &self,
        wf: &Workflow,
        input: Value,
        listener: &dyn ExecutionListener,
    ) -> RunResult {
        let cancel = CancelToken::new();
        let run = RunCtx::new(&cancel).listener(listener);
        self.engine.run(wf, ctx(input), run).await
    }
    /// A run context with `cancel` and the harness's event collector.
    pub fn ctx<'r>(&'r self, cancel: &'r CancelToken) -> RunCtx<'r> {
        RunCtx::new(cancel).listener(self.events.as_ref())
    }
    pub fn events_of(&self, kind: &str) -> Vec<Value> {
        self.events
            .events()
            .into_iter()
            .filter(|e| e["event"] == kind)
            .collect()
    }
}

pub fn path(r: &RunResult) -> Vec<String> {
    let mut p: Vec<String> = r.state.path().into_iter().map(String::from).collect();
    if let RunOutcome::Completed { end_node, .. } = &r.outcome {
        p.push(end_node.clone());
    }
    p
}

pub fn completed(r: &RunResult) -> (ExitStatus, String) {
    match &r.outcome {
        RunOutcome::Completed {
            exit_status,
            end_node,
        } => (*exit_status, end_node.clone()),
        other => panic!("expected completion, got {other:?}"),
    }
}

pub fn failed(r: &RunResult) -> RuntimeError {
    match &r.outcome {
        RunOutcome::Failed(e) => e.clone(),
        other => panic!("expected failure, got {other:?}"),
    }
}
