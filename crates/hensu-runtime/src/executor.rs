//! The executor: the run loop, the node lifecycle (pre pipeline → node executor → post
//! pipeline, upstream-reference §5.1) and the run guards of language.md §8.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hensu_ir::{CompiledRule, ExitStatus, Node, ReviewMode, RuleKind, StandardNode, Workflow};
use serde_json::Value;

use crate::action::{ActionHandlerRegistry, CommandRegistry};
use crate::agent::{AgentProvider, AgentRegistry, AgentRequest};
use crate::enrich::{Enrichment, enrich};
use crate::error::RuntimeError;
use crate::events::{
    BoundedInfo, Event, ExecutionListener, FinishKind, NoopListener, TransitionCause,
};
use crate::extract::extract_object;
use crate::generic::GenericHandlerRegistry;
use crate::plan::{ExecPlan, RuleEval, evaluate};
use crate::review::{AutoApprove, ReviewDecision, ReviewHandler, ReviewOutcome, ReviewRequest};
use crate::state::{
    Backtrack, BacktrackKind, ExecutionPhase, HistoryStep, NodeResult, NodeStatus, ReviewVerdict,
    RubricEvaluation, RunState,
};
use crate::template::resolve_into;
use crate::validate::validate_output;
use crate::value::{Context, as_number, render};

/// A cooperative cancellation flag, checked at node boundaries.
#[derive(Clone, Debug, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    pub fn new() -> Self {
        Self::default()
    }

    /// Requests cancellation; the run stops before its next node.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Engine-wide options.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Timeout of an agent call when the agent declares none (`None` = unbounded).
    pub default_agent_timeout: Option<Duration>,
    /// Overrides the workflow's `maxSteps`.
    pub max_steps: Option<u64>,
    /// Overrides the workflow's `maxExecutionTime`.
    pub max_execution_time: Option<Duration>,
    /// Fixed timeout of one parallel branch (upstream: 300 s).
    pub branch_timeout: Duration,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            default_agent_timeout: None,
            max_steps: None,
            max_execution_time: None,
            branch_timeout: Duration::from_secs(300),
        }
    }
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq)]
pub enum RunOutcome {
    /// An end node was reached.
    Completed {
        exit_status: ExitStatus,
        end_node: String,
    },
    /// A reviewer rejected the run.
    Rejected { reason: String },
    /// The run waits for an out-of-band answer (resume with [`Engine::resume`]).
    Paused,
    /// The run failed.
    Failed(RuntimeError),
}

impl RunOutcome {
    /// `true` for a completed run whose end node has status SUCCESS.
    pub fn is_success(&self) -> bool {
        matches!(
            self,
            RunOutcome::Completed {
                exit_status: ExitStatus::Success,
                ..
            }
        )
    }
}

/// A finished (or paused) run with its state.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub outcome: RunOutcome,
    pub state: RunState,
    pub duration: Duration,
}

/// A workflow prepared for running: its plan and its agents.
#[derive(Clone, Debug)]
pub struct Prepared {
    pub plan: ExecPlan,
    pub agents: AgentRegistry,
}

impl Prepared {
    pub fn workflow(&self) -> &Workflow {
        self.plan.workflow()
    }
}

/// Builds an [`Engine`].
pub struct EngineBuilder {
    providers: Vec<Arc<dyn AgentProvider>>,
    credentials: HashMap<String, String>,
    generic: GenericHandlerRegistry,
    actions: ActionHandlerRegistry,
    commands: CommandRegistry,
    review: Arc<dyn ReviewHandler>,
    listener: Arc<dyn ExecutionListener>,
    options: RunOptions,
    structured: Option<Arc<dyn crate::agent::StructuredCaller>>,
    workflows: Option<Arc<dyn crate::subworkflow::WorkflowRepository>>,
    boundary_hooks: Vec<Arc<dyn crate::control::BoundaryHook>>,
}

impl Default for EngineBuilder {
    fn default() -> Self {
        EngineBuilder {
            providers: Vec::new(),
            credentials: HashMap::new(),
            generic: GenericHandlerRegistry::with_defaults(),
            actions: ActionHandlerRegistry::with_defaults(None),
            commands: CommandRegistry::new(),
            review: Arc::new(AutoApprove),
            listener: Arc::new(NoopListener),
            options: RunOptions::default(),
            structured: None,
            workflows: None,
            boundary_hooks: Vec::new(),
        }
    }
}

impl EngineBuilder {
    /// Adds an agent provider.
    pub fn provider(mut self, p: Arc<dyn AgentProvider>) -> Self {
        self.providers.push(p);
        self
    }

    /// Credentials handed to providers.
    pub fn credentials(mut self, c: HashMap<String, String>) -> Self {
        self.credentials = c;
        self
    }

    /// Replaces the generic handler registry (default: validator, data-transformer, api-caller).
    pub fn generic_handlers(mut self, r: GenericHandlerRegistry) -> Self {
        self.generic = r;
        self
    }

    /// Replaces the action handler registry (default: log, webhook).
    pub fn action_handlers(mut self, r: ActionHandlerRegistry) -> Self {
        self.actions = r;
        self
    }

    /// The commands for `execute` actions.
    pub fn commands(mut self, r: CommandRegistry) -> Self {
        self.commands = r;
        self
    }

    pub fn review_handler(mut self, r: Arc<dyn ReviewHandler>) -> Self {
        self.review = r;
        self
    }

    pub fn listener(mut self, l: Arc<dyn ExecutionListener>) -> Self {
        self.listener = l;
        self
    }

    pub fn options(mut self, o: RunOptions) -> Self {
        self.options = o;
        self
    }

    /// Corrects answers that miss required JSON keys with a re-prompt (see
    /// [`crate::agent::StructuredCaller`]).
    pub fn structured_output(mut self, s: Arc<dyn crate::agent::StructuredCaller>) -> Self {
        self.structured = Some(s);
        self
    }

    /// The workflows sub-workflow nodes load their child from (none: sub-workflow nodes fail).
    pub fn workflows(mut self, r: Arc<dyn crate::subworkflow::WorkflowRepository>) -> Self {
        self.workflows = Some(r);
        self
    }

    /// Adds a hook called at every node boundary of the main flow (checkpoints, pause/cancel
    /// control; see [`crate::control`]). Hooks run in the order added.
    pub fn boundary_hook(mut self, h: Arc<dyn crate::control::BoundaryHook>) -> Self {
        self.boundary_hooks.push(h);
        self
    }

    pub fn build(self) -> Engine {
        Engine {
            providers: self.providers,
            credentials: self.credentials,
            generic: self.generic,
            actions: self.actions,
            commands: self.commands,
            review: self.review,
            listener: self.listener,
            options: self.options,
            structured: self.structured,
            workflows: self.workflows,
            boundary_hooks: self.boundary_hooks,
        }
    }
}

/// The workflow executor.
pub struct Engine {
    providers: Vec<Arc<dyn AgentProvider>>,
    credentials: HashMap<String, String>,
    pub(crate) generic: GenericHandlerRegistry,
    pub(crate) actions: ActionHandlerRegistry,
    pub(crate) commands: CommandRegistry,
    review: Arc<dyn ReviewHandler>,
    pub(crate) listener: Arc<dyn ExecutionListener>,
    pub(crate) options: RunOptions,
    structured: Option<Arc<dyn crate::agent::StructuredCaller>>,
    pub(crate) workflows: Option<Arc<dyn crate::subworkflow::WorkflowRepository>>,
    boundary_hooks: Vec<Arc<dyn crate::control::BoundaryHook>>,
}

/// The post-execution processors, in their fixed order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PostProcessor {
    OutputExtraction,
    Rubric,
    Review,
    NodeComplete,
    History,
    Transition,
}

impl PostProcessor {
    /// The pipeline, in order.
    pub const PIPELINE: [PostProcessor; 6] = [
        PostProcessor::OutputExtraction,
        PostProcessor::Rubric,
        PostProcessor::Review,
        PostProcessor::NodeComplete,
        PostProcessor::History,
        PostProcessor::Transition,
    ];

    /// Upstream processor id (used in `ExecutionPhase::Awaiting`).
    pub fn id(self) -> &'static str {
        match self {
            PostProcessor::OutputExtraction => "OutputExtractionPostProcessor",
            PostProcessor::Rubric => "RubricPostProcessor",
            PostProcessor::Review => "ReviewPostProcessor",
            PostProcessor::NodeComplete => "NodeCompletePostProcessor",
            PostProcessor::History => "HistoryPostProcessor",
            PostProcessor::Transition => "TransitionPostProcessor",
        }
    }
}

/// What a processor decided.
#[derive(Debug)]
pub enum ProcessorOutcome {
    Continue,
    Terminal(RunOutcome),
    Suspend { correlation_id: String },
}

/// Per-node data flowing through the post pipeline.
struct PostCtx {
    idx: usize,
    result: NodeResult,
    started: Instant,
    /// Set by the transition processor, or by a rubric/review backtrack.
    next: Option<usize>,
    /// A review decision delivered by a resume call.
    resume_decision: Option<ReviewDecision>,
    /// When this `drive` call started (history timestamps).
    run_started: Instant,
    /// Set by the node-complete processor (one clock read for the event and the history).
    completed: Option<Instant>,
}

/// What the loop does after one node.
enum Step {
    Next(usize),
    Stop(RunOutcome),
}

impl Engine {
    pub fn builder() -> EngineBuilder {
        EngineBuilder::default()
    }

    /// The listener events go to.
    pub fn listener(&self) -> &Arc<dyn ExecutionListener> {
        &self.listener
    }

    /// Builds the plan and creates the workflow's agents.
    pub fn prepare(&self, workflow: Arc<Workflow>) -> Result<Prepared, RuntimeError> {
        let plan = ExecPlan::new(&workflow)?;
        let agents = AgentRegistry::from_configs(
            plan.workflow().agents.values(),
            &self.providers,
            &self.credentials,
        )
        .map_err(|e| RuntimeError::AgentSetup { message: e.message })?;
        Ok(Prepared { plan, agents })
    }

    /// Prepares and runs `workflow` from its start node with `input` as the initial context.
    pub async fn run(
        &self,
        workflow: &Workflow,
        input: Context,
        cancel: &CancelToken,
    ) -> RunResult {
        let started = Instant::now();
        match self.prepare(Arc::new(workflow.clone())) {
            Ok(p) => self.run_prepared(&p, input, cancel).await,
            Err(e) => {
                let state = RunState::new(
                    String::new(),
                    workflow.id.clone(),
                    workflow.start_node.clone(),
                    input,
                );
                self.finish(state, RunOutcome::Failed(e), started)
            }
        }
    }

    /// Runs a prepared workflow from its start node.
    pub async fn run_prepared(
        &self,
        p: &Prepared,
        input: Context,
        cancel: &CancelToken,
    ) -> RunResult {
        let started = Instant::now();
        let wf = p.workflow();
        let execution_id = match input.get("_execution_id") {
            Some(Value::String(s)) => s.clone(),
            _ => uuid::Uuid::new_v4().to_string(),
        };
        let start_id = p.plan.id(p.plan.start).to_string();
        let mut state = RunState::new(execution_id, wf.id.clone(), start_id, input);
        self.listener.on_event(&Event::RunStarted {
            format_version: crate::events::EVENTS_FORMAT_VERSION,
            execution_id: &state.execution_id,
            workflow_id: &state.workflow_id,
            start_node: &state.current_node,
        });
        if let Some(schema) = &wf.state_schema {
            let missing: Vec<String> = schema
                .variables
                .iter()
                .filter(|v| v.is_input)
                .filter(|v| state.context.get(&v.name).is_none_or(Value::is_null))
                .map(|v| v.name.clone())
                .collect();
            if !missing.is_empty() {
                return self.finish(
                    state,
                    RunOutcome::Failed(RuntimeError::MissingInputs { names: missing }),
                    started,
                );
            }
        }
        let outcome = match self.drive(p, &mut state, cancel, started, None, None).await {
            Ok(o) => o,
            Err(e) => RunOutcome::Failed(e),
        };
        self.finish(state, outcome, started)
    }

    /// Continues a paused or saved run. A state in `Awaiting` re-enters the post pipeline at the
    /// suspended processor with its cached result; `decision` answers a pending review.
    pub async fn resume(
        &self,
        p: &Prepared,
        mut state: RunState,
        decision: Option<ReviewDecision>,
        cancel: &CancelToken,
    ) -> RunResult {
        let started = Instant::now();
        if state.phase == ExecutionPhase::Terminal {
            return self.finish(
                state,
                RunOutcome::Failed(RuntimeError::AlreadyTerminal),
                started,
            );
        }
        let outcome = match self
            .drive(p, &mut state, cancel, started, decision, None)
            .await
        {
            Ok(o) => o,
            Err(e) => RunOutcome::Failed(e),
        };
        self.finish(state, outcome, started)
    }

    fn finish(&self, mut state: RunState, outcome: RunOutcome, started: Instant) -> RunResult {
        let duration = started.elapsed();
        if !matches!(outcome, RunOutcome::Paused) {
            state.phase = ExecutionPhase::Terminal;
        }
        let error_text;
        let (finish, end_node) = match &outcome {
            RunOutcome::Completed {
                exit_status,
                end_node,
            } => (
                FinishKind::Completed {
                    exit_status: *exit_status,
                },
                Some(end_node.as_str()),
            ),
            RunOutcome::Rejected { reason } => (FinishKind::Rejected { reason }, None),
            RunOutcome::Paused => (FinishKind::Paused, None),
            RunOutcome::Failed(e) => {
                error_text = e.to_string();
                (FinishKind::Failed { error: &error_text }, None)
            }
        };
        self.listener.on_event(&Event::RunFinished {
            finish,
            end_node,
            steps: state.steps,
            duration_us: duration.as_micros() as u64,
        });
        RunResult {
            outcome,
            state,
            duration,
        }
    }

    /// The run loop. `boundary` is the join of a fork branch: reaching it completes the
    /// sub-flow (SUCCESS) without executing it; branch states take no checkpoints.
    pub(crate) async fn drive(
        &self,
        p: &Prepared,
        state: &mut RunState,
        cancel: &CancelToken,
        started: Instant,
        mut resume_decision: Option<ReviewDecision>,
        boundary: Option<usize>,
    ) -> Result<RunOutcome, RuntimeError> {
        let config = p.workflow().effective_config();
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
        let deadline = started + time_limit;
        let sleep = tokio::time::sleep_until(tokio::time::Instant::from_std(deadline));
        tokio::pin!(sleep);
        let time_error = |state: &RunState| RuntimeError::TimeLimitExceeded {
            limit_ms: time_limit.as_millis() as u64,
            last_nodes: state.last_nodes(5),
        };

        let mut cur =
            p.plan
                .index_of(&state.current_node)
                .ok_or_else(|| RuntimeError::NodeNotFound {
                    node: state.current_node.clone(),
                })?;

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
            };
            match self.post_pipeline(p, state, &mut pc, from).await? {
                Step::Next(n) => cur = n,
                Step::Stop(o) => return Ok(o),
            }
        }

        loop {
            if cancel.is_cancelled() {
                return Err(RuntimeError::Cancelled {
                    last_nodes: state.last_nodes(5),
                });
            }
            let node_started = Instant::now();
            if node_started >= deadline {
                return Err(time_error(state));
            }
            let Some(node) = p.plan.node(cur) else {
                return Err(RuntimeError::NodeNotFound {
                    node: state.current_node.clone(),
                });
            };
            if boundary == Some(cur) {
                return Ok(RunOutcome::Completed {
                    exit_status: ExitStatus::Success,
                    end_node: p.plan.id(cur).to_string(),
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
                    last_nodes: state.last_nodes(5),
                });
            }
            // Pre pipeline: checkpoint hook, node start.
            if boundary.is_none() {
                self.listener.on_checkpoint(state);
                for hook in &self.boundary_hooks {
                    match hook.at_boundary(state).await? {
                        crate::control::Boundary::Continue => {}
                        crate::control::Boundary::Cancel => {
                            return Err(RuntimeError::Cancelled {
                                last_nodes: state.last_nodes(5),
                            });
                        }
                        crate::control::Boundary::Suspend => return Ok(RunOutcome::Paused),
                    }
                }
            }
            state.steps += 1;
            self.listener.on_event(&Event::NodeStarted {
                node_id: p.plan.id(cur),
                kind: node.kind(),
                step: state.steps,
            });
            let result = tokio::select! {
                biased;
                r = self.execute_node(p, cur, node, state, cancel, started) => r?,
                _ = &mut sleep => return Err(time_error(state)),
            };
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
            };
            match self.post_pipeline(p, state, &mut pc, 0).await? {
                Step::Next(n) => cur = n,
                Step::Stop(o) => return Ok(o),
            }
        }
    }

    /// Node executors (enum dispatch over the node kinds).
    async fn execute_node(
        &self,
        p: &Prepared,
        idx: usize,
        node: &Node,
        state: &mut RunState,
        cancel: &CancelToken,
        started: Instant,
    ) -> Result<NodeResult, RuntimeError> {
        match node {
            Node::Standard(s) => self.execute_standard(p, idx, s, state).await,
            Node::Generic(g) => {
                let handler = self.generic.get(&g.executor_type).ok_or_else(|| {
                    RuntimeError::NoGenericHandler {
                        executor_type: g.executor_type.clone(),
                    }
                })?;
                Ok(handler.handle(g, &mut state.context).await)
            }
            // Rare or large futures are boxed so the hot standard-node future stays small.
            Node::Action(a) => Ok(Box::pin(self.execute_action(a, state)).await),
            Node::Parallel(par) => {
                Box::pin(crate::parallel::execute_parallel(self, p, par, state)).await
            }
            Node::Fork(f) => {
                crate::fork::execute_fork(self, p, idx, f, state, cancel, started).await
            }
            Node::Join(j) => Ok(crate::fork::execute_join(j, state)),
            Node::SubWorkflow(s) => {
                crate::subworkflow::execute_subworkflow(self, s, state, cancel).await
            }
            Node::End(_) => Ok(NodeResult {
                status: NodeStatus::End,
                output: None,
                error: None,
                metadata: Default::default(),
            }),
        }
    }

    /// Standard node (upstream `StandardNodeExecutor` + `AgentLifecycleRunner`, §5.2).
    async fn execute_standard(
        &self,
        p: &Prepared,
        idx: usize,
        node: &StandardNode,
        state: &mut RunState,
    ) -> Result<NodeResult, RuntimeError> {
        let pn = &p.plan.nodes[idx];
        let ctx = &mut state.context;
        let prompt_override = ctx.shift_remove("_prompt_override");
        set_current_node(ctx, &node.id);
        let mut prompt = String::new();
        {
            let template: &str = match &prompt_override {
                Some(Value::String(s)) => s,
                _ => node.prompt.as_deref().unwrap_or(""),
            };
            let ctx_ref: &Context = ctx;
            resolve_into(template, &mut prompt, |name| {
                ctx_ref
                    .get(name)
                    .map(render)
                    .unwrap_or(std::borrow::Cow::Borrowed(""))
            });
        }
        for w in &node.writes {
            ctx.shift_remove(w.as_str());
        }
        let agent_id = node
            .agent_id
            .as_deref()
            .ok_or_else(|| RuntimeError::NoAgent {
                node: node.id.clone(),
            })?;
        let (agent, system_prompt) =
            p.agents.get_with_system_prompt(agent_id).ok_or_else(|| {
                RuntimeError::AgentNotFound {
                    agent: agent_id.to_string(),
                }
            })?;
        let enrichment = Enrichment {
            recommendation: match ctx.get("recommendation") {
                Some(Value::String(s)) => Some(s.as_str()),
                _ => None,
            },
            rubric: node.rubric.as_ref(),
            needs_score: pn.needs_score,
            needs_approved: pn.needs_approved,
            needs_recommendation: pn.needs_recommendation,
            writes: &node.writes,
            yields: &[],
            schema: p.workflow().state_schema.as_ref(),
        };
        if !enrichment.is_empty() {
            enrich(&mut prompt, &enrichment);
        }
        let timeout = self.agent_timeout(agent.as_ref());
        // A JSON answer is expected when more than the single raw-output write is extracted.
        let json_mode = pn.extract_keys.len() > 1 || pn.has_engine_vars;
        let mut required: Vec<&str> = Vec::new();
        if json_mode {
            required.extend(node.writes.iter().map(String::as_str));
            if pn.needs_score {
                required.push("score");
            }
            if pn.needs_approved {
                required.push("approved");
            }
        }
        Ok(self
            .call_agent(
                agent.as_ref(),
                system_prompt,
                &node.id,
                None,
                &prompt,
                ctx,
                timeout,
                &required,
            )
            .await)
    }

    /// The overall time limit of one agent call: the agent's own `timeout` (seconds) unless the
    /// agent manages its timeouts itself, else the run's default.
    pub(crate) fn agent_timeout(&self, agent: &dyn crate::agent::Agent) -> Option<Duration> {
        if agent.manages_timeouts() {
            return self.options.default_agent_timeout;
        }
        agent
            .config()
            .timeout
            .filter(|t| *t > 0)
            .map(|t| Duration::from_secs(t as u64))
            .or(self.options.default_agent_timeout)
    }

    /// Calls an agent, with an optional timeout, and reports the call. `required_keys` are the
    /// JSON keys the answer must carry (empty: no structured-output correction).
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn call_agent(
        &self,
        agent: &dyn crate::agent::Agent,
        system_prompt: &str,
        node_id: &str,
        branch_id: Option<&str>,
        prompt: &str,
        ctx: &Context,
        timeout: Option<Duration>,
        required_keys: &[&str],
    ) -> NodeResult {
        let call_started = Instant::now();
        let request = AgentRequest {
            node_id,
            prompt,
            system_prompt,
            context: ctx,
        };
        let call = async {
            match (&self.structured, required_keys.is_empty()) {
                (Some(s), false) => {
                    s.call(agent, request, required_keys, self.listener.as_ref())
                        .await
                }
                _ => agent.execute(request).await,
            }
        };
        let response = match timeout {
            None => call.await,
            Some(t) => match tokio::time::timeout(t, call).await {
                Ok(r) => r,
                Err(_) => Err(crate::agent::AgentError::new(
                    "timeout",
                    format!(
                        "Agent '{}' did not answer within {} ms",
                        agent.id(),
                        t.as_millis()
                    ),
                )),
            },
        };
        let duration_us = call_started.elapsed().as_micros() as u64;
        match response {
            Ok(resp) => {
                self.listener.on_event(&Event::AgentCall {
                    node_id,
                    agent_id: agent.id(),
                    branch_id,
                    model: &agent.config().model,
                    prompt,
                    response: Some(&resp.text),
                    error: None,
                    prompt_bytes: prompt.len(),
                    response_bytes: resp.text.len(),
                    duration_us,
                    usage: resp.usage,
                });
                let mut metadata = resp.metadata;
                if let Some(u) = resp.usage {
                    metadata.insert("input_tokens".into(), Value::from(u.input_tokens));
                    metadata.insert("output_tokens".into(), Value::from(u.output_tokens));
                }
                NodeResult {
                    status: NodeStatus::Success,
                    output: Some(Value::String(resp.text)),
                    error: None,
                    metadata,
                }
            }
            Err(e) => {
                self.listener.on_event(&Event::AgentCall {
                    node_id,
                    agent_id: agent.id(),
                    branch_id,
                    model: &agent.config().model,
                    prompt,
                    response: None,
                    error: Some(&e.message),
                    prompt_bytes: prompt.len(),
                    response_bytes: 0,
                    duration_us,
                    usage: None,
                });
                NodeResult::failure(e.message).with_meta("errorType", Value::String(e.kind))
            }
        }
    }

    /// Action node: every action in order, no short-circuit.
    async fn execute_action(
        &self,
        node: &hensu_ir::ActionNode,
        state: &mut RunState,
    ) -> NodeResult {
        let mut all_ok = true;
        for action in &node.actions {
            let (label, result) = match action {
                hensu_ir::Action::Send {
                    handler_id,
                    payload,
                    raw_payload,
                } => {
                    let label = format!("send:{handler_id}");
                    let result = match self.actions.get(handler_id) {
                        None => crate::action::ActionResult::failure(format!(
                            "Action handler not found: '{handler_id}'. Registered handlers: [{}]",
                            self.actions.ids().join(", ")
                        )),
                        Some(h) => {
                            let resolved;
                            let payload = if *raw_payload {
                                payload
                            } else {
                                resolved = payload
                                    .iter()
                                    .map(|(k, v)| {
                                        let v = match v {
                                            Value::String(s) => Value::String(
                                                crate::template::resolve(s, &state.context),
                                            ),
                                            other => other.clone(),
                                        };
                                        (k.clone(), v)
                                    })
                                    .collect();
                                &resolved
                            };
                            h.execute(payload, &state.context).await
                        }
                    };
                    (label, result)
                }
                hensu_ir::Action::Execute { command_id } => (
                    format!("execute:{command_id}"),
                    self.commands.execute(command_id, &state.context).await,
                ),
            };
            self.listener.on_event(&Event::ActionExecuted {
                node_id: &node.id,
                action: &label,
                success: result.success,
                output: &result.output,
            });
            all_ok &= result.success;
        }
        if all_ok {
            NodeResult::success("Actions completed")
        } else {
            NodeResult::failure("One or more actions failed")
        }
    }

    async fn post_pipeline(
        &self,
        p: &Prepared,
        state: &mut RunState,
        pc: &mut PostCtx,
        from: usize,
    ) -> Result<Step, RuntimeError> {
        for (i, processor) in PostProcessor::PIPELINE.iter().enumerate().skip(from) {
            let outcome = match processor {
                PostProcessor::OutputExtraction => self.output_extraction(p, state, pc),
                PostProcessor::Rubric => self.rubric(p, state, pc),
                PostProcessor::Review => {
                    let reviewed = matches!(
                        p.plan.node(pc.idx),
                        Some(Node::Standard(StandardNode {
                            review_config: Some(_),
                            ..
                        }))
                    );
                    if reviewed {
                        Box::pin(self.review(p, state, pc)).await?
                    } else {
                        ProcessorOutcome::Continue
                    }
                }
                PostProcessor::NodeComplete => {
                    let now = Instant::now();
                    pc.completed = Some(now);
                    let (output, error) = (pc.result.output.as_ref(), pc.result.error.as_deref());
                    self.listener.on_event(&Event::NodeCompleted {
                        node_id: p.plan.id(pc.idx),
                        status: pc.result.status,
                        output,
                        error,
                        duration_us: now.saturating_duration_since(pc.started).as_micros() as u64,
                    });
                    ProcessorOutcome::Continue
                }
                PostProcessor::History => {
                    // Only the transition processor runs after this one and it reads the
                    // status and metadata, never the output: the output moves into history.
                    state.history.push(HistoryStep {
                        step: state.steps,
                        node_id: p.plan.id(pc.idx).to_string(),
                        status: pc.result.status,
                        output: pc.result.output.take(),
                        error: pc.result.error.clone(),
                        at_ms: pc
                            .completed
                            .unwrap_or_else(Instant::now)
                            .saturating_duration_since(pc.run_started)
                            .as_millis() as u64,
                        rubric: state.rubric_evaluation.clone(),
                    });
                    ProcessorOutcome::Continue
                }
                PostProcessor::Transition => self.transition(p, state, pc)?,
            };
            match outcome {
                ProcessorOutcome::Continue => {}
                ProcessorOutcome::Terminal(o) => return Ok(Step::Stop(o)),
                ProcessorOutcome::Suspend { correlation_id } => {
                    state.phase = ExecutionPhase::Awaiting {
                        node_id: p.plan.id(pc.idx).to_string(),
                        processor_id: PostProcessor::PIPELINE[i].id().to_string(),
                        cached_result: Box::new(pc.result.clone()),
                        correlation_id,
                        requested_at_ms: now_ms(),
                    };
                    return Ok(Step::Stop(RunOutcome::Paused));
                }
            }
        }
        match pc.next {
            Some(n) => Ok(Step::Next(n)),
            None => Err(RuntimeError::NoValidTransition {
                node: p.plan.id(pc.idx).to_string(),
            }),
        }
    }

    /// Output extraction (§5.3): validation, then storage by node kind.
    fn output_extraction(
        &self,
        p: &Prepared,
        state: &mut RunState,
        pc: &mut PostCtx,
    ) -> ProcessorOutcome {
        let Some(output) = &pc.result.output else {
            return ProcessorOutcome::Continue;
        };
        let text = render(output);
        let pn = &p.plan.nodes[pc.idx];
        let id = p.plan.id(pc.idx);
        if let Err(violation) = validate_output(&text) {
            return ProcessorOutcome::Terminal(RunOutcome::Failed(
                RuntimeError::OutputValidation {
                    node: id.to_string(),
                    violation,
                },
            ));
        }
        let ctx = &mut state.context;
        match p.plan.node(pc.idx) {
            Some(Node::Standard(node)) => {
                if pn.extract_keys.is_empty() {
                    ctx.insert(id.to_string(), Value::String(text.into_owned()));
                    return ProcessorOutcome::Continue;
                }
                for k in &pn.extract_keys {
                    ctx.shift_remove(k.as_str());
                }
                if node.writes.len() == 1 && !pn.has_engine_vars {
                    let key = &node.writes[0];
                    let value = extract_object(&text)
                        .and_then(|mut m| m.shift_remove(key.as_str()))
                        .unwrap_or_else(|| Value::String(text.into_owned()));
                    ctx.insert(key.clone(), value);
                } else if let Some(mut map) = extract_object(&text) {
                    for k in &pn.extract_keys {
                        if let Some(v) = map.shift_remove(k.as_str()) {
                            ctx.insert(k.clone(), v);
                        }
                    }
                }
            }
            Some(Node::Generic(_)) => {
                ctx.insert(id.to_string(), output.clone());
            }
            _ => {}
        }
        ProcessorOutcome::Continue
    }

    /// Rubric evaluation and auto-backtrack (§5.9).
    fn rubric(&self, p: &Prepared, state: &mut RunState, pc: &mut PostCtx) -> ProcessorOutcome {
        let Some(rubric) = p.plan.node(pc.idx).and_then(Node::rubric) else {
            return ProcessorOutcome::Continue;
        };
        let pn = &p.plan.nodes[pc.idx];
        let id = p.plan.id(pc.idx);
        let mut score = if pc.result.status == NodeStatus::Success {
            state
                .context
                .get("score")
                .and_then(as_number)
                .unwrap_or(0.0)
        } else {
            0.0
        };
        if score > 0.0 && score <= 1.0 {
            score *= 100.0;
        }
        let total_weight: f64 = rubric.criteria.iter().map(|c| c.weight).sum();
        let final_score = if total_weight > 0.0 {
            rubric
                .criteria
                .iter()
                .map(|c| score * c.weight)
                .sum::<f64>()
                / total_weight
        } else {
            0.0
        };
        let passed = final_score >= rubric.pass_threshold;
        state.rubric_evaluation = Some(RubricEvaluation {
            rubric_id: rubric.id.clone(),
            score: final_score,
            passed,
        });
        self.listener.on_event(&Event::RubricEvaluated {
            node_id: id,
            score: final_score,
            passed,
        });
        if passed {
            return ProcessorOutcome::Continue;
        }
        // An explicit score rule that handles the score wins over auto-backtrack.
        let handled = p
            .plan
            .rules(pc.idx)
            .iter()
            .zip(&pn.rule_extras)
            .any(|(r, extra)| {
                r.trigger() == RuleKind::Score
                    && matches!(
                        evaluate(
                            r,
                            extra,
                            &pc.result,
                            &state.context,
                            state.review_verdict.as_ref()
                        ),
                        RuleEval::Match { .. }
                    )
            });
        if handled {
            return ProcessorOutcome::Continue;
        }
        let failed: Vec<Value> = rubric
            .criteria
            .iter()
            .filter(|c| score < c.min_score)
            .map(|c| Value::String(c.name.clone()))
            .collect();
        let shown = hensu_ir::java_double_to_string(final_score);
        let ctx = &mut state.context;
        let target: Option<usize> = if final_score < 30.0 {
            let t = state
                .history
                .iter()
                .find(|h| {
                    p.plan
                        .index_of(&h.node_id)
                        .and_then(|i| p.plan.node(i))
                        .is_some_and(|n| n.rubric().is_some())
                })
                .and_then(|h| p.plan.index_of(&h.node_id))
                .unwrap_or(p.plan.start);
            ctx.insert(
                "backtrack_reason".into(),
                Value::String(format!("Critical rubric failure: {shown}")),
            );
            ctx.insert("failed_criteria".into(), Value::Array(failed.clone()));
            if !failed.is_empty() {
                let mut rec = String::from("Rubric improvement areas:");
                for f in &failed {
                    rec.push_str("\n- ");
                    rec.push_str(&render(f));
                }
                ctx.insert("recommendation".into(), Value::String(rec));
            }
            Some(t)
        } else {
            let previous = if final_score < 60.0 {
                state.history.iter().rev().find_map(|h| {
                    let i = p.plan.index_of(&h.node_id)?;
                    let r = p.plan.node(i)?.rubric()?;
                    (r.id != rubric.id).then_some(i)
                })
            } else {
                None
            };
            if let Some(t) = previous {
                ctx.insert(
                    "backtrack_reason".into(),
                    Value::String(format!("Moderate rubric failure: {shown}")),
                );
                ctx.insert(
                    "improvement_suggestions".into(),
                    Value::Array(failed.clone()),
                );
                Some(t)
            } else if final_score < 80.0 {
                let key = format!("rubric_backtrack:{id}");
                let count = state.retry_counters.get(&key).copied().unwrap_or(0);
                if count < 3 {
                    state.retry_counters.insert(key, count + 1);
                    ctx.insert("improvement_hints".into(), Value::Array(failed.clone()));
                    Some(pc.idx)
                } else {
                    None
                }
            } else {
                None
            }
        };
        if let Some(t) = target {
            let to = p.plan.id(t).to_string();
            let reason = format!("Rubric score: {shown}");
            self.listener.on_event(&Event::Backtrack {
                from: id,
                to: &to,
                kind: BacktrackKind::Automatic,
                reason: &reason,
            });
            state.backtracks.push(Backtrack {
                from: id.to_string(),
                to: to.clone(),
                kind: BacktrackKind::Automatic,
                reason,
            });
            state.current_node = to;
            state.node_redirected = true;
            pc.next = Some(t);
        }
        ProcessorOutcome::Continue
    }

    /// Human review (§5.10).
    async fn review(
        &self,
        p: &Prepared,
        state: &mut RunState,
        pc: &mut PostCtx,
    ) -> Result<ProcessorOutcome, RuntimeError> {
        let Some(Node::Standard(node)) = p.plan.node(pc.idx) else {
            return Ok(ProcessorOutcome::Continue);
        };
        let Some(config) = &node.review_config else {
            return Ok(ProcessorOutcome::Continue);
        };
        if state.node_redirected
            || config.mode == ReviewMode::Disabled
            || (config.mode == ReviewMode::Optional && pc.result.status == NodeStatus::Success)
        {
            return Ok(ProcessorOutcome::Continue);
        }
        let decision = match pc.resume_decision.take() {
            Some(d) => d,
            None => match self
                .review
                .request_review(ReviewRequest {
                    node_id: &node.id,
                    config,
                    result: &pc.result,
                    context: &state.context,
                    history: &state.history,
                })
                .await
            {
                ReviewOutcome::Decided(d) => d,
                ReviewOutcome::Pending { correlation_id } => {
                    return Ok(ProcessorOutcome::Suspend { correlation_id });
                }
            },
        };
        let pn = &p.plan.nodes[pc.idx];
        let id = p.plan.id(pc.idx);
        match decision {
            ReviewDecision::Approve { edits } => {
                if let Some(edits) = edits {
                    state.context.extend(edits);
                }
                state.review_verdict = Some(ReviewVerdict {
                    approved: true,
                    reason: None,
                });
            }
            ReviewDecision::Reject { reason } => {
                if !pn.has_rejection_arm {
                    return Ok(ProcessorOutcome::Terminal(RunOutcome::Rejected { reason }));
                }
                state.review_verdict = Some(ReviewVerdict {
                    approved: false,
                    reason: Some(reason),
                });
            }
            ReviewDecision::Backtrack {
                target,
                edits,
                reason,
            } => {
                let t = p
                    .plan
                    .index_of(&target)
                    .ok_or_else(|| RuntimeError::NodeNotFound {
                        node: target.clone(),
                    })?;
                if let Some(edits) = edits {
                    state.context.extend(edits);
                }
                self.listener.on_event(&Event::Backtrack {
                    from: id,
                    to: &target,
                    kind: BacktrackKind::Manual,
                    reason: &reason,
                });
                state.backtracks.push(Backtrack {
                    from: id.to_string(),
                    to: target.clone(),
                    kind: BacktrackKind::Manual,
                    reason: reason.clone(),
                });
                state.review_verdict = Some(ReviewVerdict {
                    approved: false,
                    reason: Some(reason),
                });
                state.current_node = target;
                state.node_redirected = true;
                pc.next = Some(t);
            }
        }
        Ok(ProcessorOutcome::Continue)
    }

    /// Transition resolution and the engine-variable lifecycle (§5.4).
    fn transition(
        &self,
        p: &Prepared,
        state: &mut RunState,
        pc: &mut PostCtx,
    ) -> Result<ProcessorOutcome, RuntimeError> {
        let pn = &p.plan.nodes[pc.idx];
        let id = p.plan.id(pc.idx);
        if state.node_redirected {
            state.node_redirected = false;
            if let Some(reason) = state
                .review_verdict
                .take()
                .and_then(|v| v.reason)
                .filter(|r| !r.trim().is_empty())
            {
                state
                    .context
                    .insert("recommendation".into(), Value::String(reason));
            }
            if let Some(next) = pc.next {
                self.listener.on_event(&Event::TransitionTaken {
                    from: id,
                    to: p.plan.id(next),
                    cause: TransitionCause::Redirected,
                    bounded: None,
                    feedback: state.context.contains_key("recommendation"),
                });
            }
            return Ok(ProcessorOutcome::Continue);
        }
        let verdict_reason = state
            .review_verdict
            .as_ref()
            .and_then(|v| v.reason.clone())
            .filter(|r| !r.trim().is_empty());
        let routing_vars = p.plan.routing_vars(pc.idx);
        for (rule, extra) in p.plan.rules(pc.idx).iter().zip(&pn.rule_extras) {
            let (target, cause) = match evaluate(
                rule,
                extra,
                &pc.result,
                &state.context,
                state.review_verdict.as_ref(),
            ) {
                RuleEval::Match { target, cause } => (target, cause),
                RuleEval::NoMatch(diag) => {
                    if let Some(message) = diag.filter(|_| pc.result.status == NodeStatus::Success)
                    {
                        self.listener.on_event(&Event::TransitionWarning {
                            node_id: id,
                            message: &message,
                        });
                    }
                    continue;
                }
            };
            let ctx = &mut state.context;
            let mut bounded = None;
            let dest;
            let feedback;
            let mut retried = false;
            if let CompiledRule::Bounded {
                namespace,
                budget,
                otherwise,
                inner,
                ..
            } = rule
            {
                let counter_key = &extra.counter_key;
                let count = state.retry_counters.get(counter_key).copied().unwrap_or(0);
                if count < *budget {
                    retried = true;
                    state.retry_counters.insert(counter_key.clone(), count + 1);
                    match inner.trigger() {
                        RuleKind::Failure => {
                            ctx.shift_remove("recommendation");
                        }
                        RuleKind::NoConsensus => {
                            let key = format!("consensus_feedback:{id}");
                            if let Some(Value::String(fb)) = ctx.shift_remove(key.as_str())
                                && !fb.trim().is_empty()
                            {
                                ctx.insert("recommendation".into(), Value::String(fb));
                            }
                        }
                        _ => {
                            if let Some(r) = &verdict_reason {
                                ctx.insert("recommendation".into(), Value::String(r.clone()));
                            }
                        }
                    }
                    for v in routing_vars {
                        ctx.shift_remove(v.as_str());
                    }
                    dest = p.plan.resolve(pc.idx, target)?;
                    feedback = ctx.contains_key("recommendation");
                    bounded = Some(BoundedInfo {
                        namespace: namespace.as_str(),
                        count: count + 1,
                        budget: *budget,
                        exhausted: false,
                    });
                } else {
                    dest = p.plan.resolve(pc.idx, otherwise)?;
                    bounded = Some(BoundedInfo {
                        namespace: namespace.as_str(),
                        count,
                        budget: *budget,
                        exhausted: true,
                    });
                    feedback = rule.with_feedback();
                }
            } else {
                dest = p.plan.resolve(pc.idx, target)?;
                feedback = rule.with_feedback();
            }
            if !retried {
                if !state.retry_counters.is_empty() {
                    let suffix = pn.counter_suffix.as_str();
                    state.retry_counters.retain(|k, _| !k.ends_with(suffix));
                }
                for v in routing_vars {
                    ctx.shift_remove(v.as_str());
                }
                if feedback {
                    if let Some(r) = &verdict_reason {
                        ctx.insert("recommendation".into(), Value::String(r.clone()));
                    }
                } else {
                    ctx.shift_remove("recommendation");
                }
            }
            state.review_verdict = None;
            let to = p.plan.id(dest);
            if retried {
                let reason = format!("{cause}");
                state.backtracks.push(Backtrack {
                    from: id.to_string(),
                    to: to.to_string(),
                    kind: BacktrackKind::Revise,
                    reason,
                });
            }
            self.listener.on_event(&Event::TransitionTaken {
                from: id,
                to,
                cause,
                bounded,
                feedback: feedback && state.context.contains_key("recommendation"),
            });
            state.current_node.clear();
            state.current_node.push_str(to);
            pc.next = Some(dest);
            return Ok(ProcessorOutcome::Continue);
        }
        state.review_verdict = None;
        Err(RuntimeError::NoValidTransition {
            node: id.to_string(),
        })
    }
}

/// Sets `context["current_node"]` without reallocating when the key exists.
pub(crate) fn set_current_node(ctx: &mut Context, id: &str) {
    match ctx.get_mut("current_node") {
        Some(Value::String(s)) => {
            s.clear();
            s.push_str(id);
        }
        Some(v) => *v = Value::String(id.to_string()),
        None => {
            ctx.insert("current_node".to_string(), Value::String(id.to_string()));
        }
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
