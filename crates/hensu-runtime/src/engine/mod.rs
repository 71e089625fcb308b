//! The engine: its builder, the prepared workflow, and the entry points `run`, `run_prepared`
//! and `resume`. The work is split by phase of a node's life:
//!
//! * [`ctx`] — what comes with one run ([`RunCtx`]) and the engine as that run sees it,
//! * [`run_loop`] — the loop over nodes with the run guards and the boundary hooks,
//! * [`node`] — node execution (enum dispatch over the node kinds, agent calls, actions),
//! * [`pipeline`] — the post-execution processors (extraction, rubric, review, history),
//! * [`transition`] — transition resolution and the engine-variable lifecycle.
//!
//! The node kinds with their own files (`parallel`, `fork`, `subworkflow`) depend on this
//! module, never the other way round through imports.

mod branches;
mod compensation;
mod ctx;
pub(crate) mod kinds;
mod node;
mod pipeline;
mod run_loop;
mod transition;

pub(crate) use ctx::Exec;
pub use ctx::RunCtx;
pub(crate) use run_loop::Flow;

use std::collections::HashMap;

pub(crate) use compensation::CompensationCheckpoints;
pub use compensation::plan_compensations;
use std::sync::Arc;
use std::time::Instant;

use hensu_ir::Workflow;
use serde_json::Value;

use crate::action::{ActionHandlerRegistry, CommandRunner, NoCommands};
use crate::agent::{AgentProvider, AgentRegistry};
use crate::error::RuntimeError;
use crate::events::{Event, FinishKind};
use crate::generic::GenericHandlerRegistry;
use crate::plan::ExecPlan;
use crate::review::{AutoApprove, ReviewDecision, ReviewHandler};
use crate::run_types::{RunOptions, RunOutcome, RunResult};
use crate::state::{ExecutionPhase, RunState};
use crate::value::Context;
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
    commands: Arc<dyn CommandRunner>,
    review: Arc<dyn ReviewHandler>,
    options: RunOptions,
    structured: Option<Arc<dyn crate::structured::StructuredCaller>>,
    workflows: Option<Arc<dyn crate::repository::WorkflowRepository>>,
}

impl Default for EngineBuilder {
    fn default() -> Self {
        EngineBuilder {
            providers: Vec::new(),
            credentials: HashMap::new(),
            generic: GenericHandlerRegistry::with_defaults(),
            actions: ActionHandlerRegistry::with_defaults(),
            commands: Arc::new(NoCommands),
            review: Arc::new(AutoApprove),
            options: RunOptions::default(),
            structured: None,
            workflows: None,
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
    pub fn commands(mut self, r: impl CommandRunner + 'static) -> Self {
        self.commands = Arc::new(r);
        self
    }

    pub fn review_handler(mut self, r: Arc<dyn ReviewHandler>) -> Self {
        self.review = r;
        self
    }

    pub fn options(mut self, o: RunOptions) -> Self {
        self.options = o;
        self
    }

    /// Corrects answers that miss required JSON keys with a re-prompt (see
    /// [`crate::structured::StructuredCaller`]).
    pub fn structured_output(mut self, s: Arc<dyn crate::structured::StructuredCaller>) -> Self {
        self.structured = Some(s);
        self
    }

    /// The workflows sub-workflow nodes load their child from (none: sub-workflow nodes fail).
    pub fn workflows(mut self, r: Arc<dyn crate::repository::WorkflowRepository>) -> Self {
        self.workflows = Some(r);
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
            options: self.options,
            structured: self.structured,
            workflows: self.workflows,
        }
    }
}

/// The workflow executor: long-lived (providers, handlers, repository, options), shared by
/// any number of runs; what belongs to one run comes with the call ([`RunCtx`]).
pub struct Engine {
    providers: Vec<Arc<dyn AgentProvider>>,
    credentials: HashMap<String, String>,
    pub(crate) generic: GenericHandlerRegistry,
    pub(crate) actions: ActionHandlerRegistry,
    pub(crate) commands: Arc<dyn CommandRunner>,
    review: Arc<dyn ReviewHandler>,
    pub(crate) options: RunOptions,
    structured: Option<Arc<dyn crate::structured::StructuredCaller>>,
    pub(crate) workflows: Option<Arc<dyn crate::repository::WorkflowRepository>>,
}

impl Engine {
    pub fn builder() -> EngineBuilder {
        EngineBuilder::default()
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
    pub async fn run(&self, workflow: &Workflow, input: Context, ctx: RunCtx<'_>) -> RunResult {
        let started = Instant::now();
        match self.prepare(Arc::new(workflow.clone())) {
            Ok(p) => self.run_prepared(&p, input, ctx).await,
            Err(e) => {
                let state = RunState::new(
                    String::new(),
                    workflow.id.clone(),
                    workflow.start_node.clone(),
                    input,
                );
                Exec::new(self, &ctx).finish(state, RunOutcome::Failed(e), started)
            }
        }
    }

    /// Runs a prepared workflow from its start node.
    pub async fn run_prepared(&self, p: &Prepared, input: Context, ctx: RunCtx<'_>) -> RunResult {
        let started = Instant::now();
        let exec = Exec::new(self, &ctx);
        let wf = p.workflow();
        let execution_id = match (ctx.run_id, input.get("_execution_id")) {
            (Some(id), _) => id.to_string(),
            (None, Some(Value::String(s))) => s.clone(),
            _ => uuid::Uuid::new_v4().to_string(),
        };
        let start_id = p.plan.id(p.plan.start).to_string();
        let mut state = RunState::new(execution_id, wf.id.clone(), start_id, input);
        exec.listener.on_event(&Event::RunStarted {
            format_version: crate::events::EVENTS_FORMAT_VERSION,
            execution_id: &state.execution_id,
            workflow_id: &state.workflow_id,
            start_node: &state.current_node,
        });
        if let Some(e) = exec.check_inputs(wf, &state) {
            return exec.finish(state, RunOutcome::Failed(e), started);
        }
        let outcome = exec.drive_main(p, &mut state, ctx, started, None).await;
        exec.finish(state, outcome, started)
    }

    /// Continues a paused or saved run. A state in `Awaiting` re-enters the post pipeline at the
    /// suspended processor with its cached result; `decision` answers a pending review.
    pub async fn resume(
        &self,
        p: &Prepared,
        mut state: RunState,
        decision: Option<ReviewDecision>,
        ctx: RunCtx<'_>,
    ) -> RunResult {
        let started = Instant::now();
        let exec = Exec::new(self, &ctx);
        if state.phase == ExecutionPhase::Terminal {
            return exec.finish(
                state,
                RunOutcome::Failed(RuntimeError::AlreadyTerminal),
                started,
            );
        }
        // A run that died while compensating continues with the compensations left.
        if state.compensating.is_some() {
            let outcome = exec
                .resume_compensation(p, &mut state, CompensationCheckpoints::Main)
                .await;
            return exec.finish(state, outcome, started);
        }
        let outcome = exec.drive_main(p, &mut state, ctx, started, decision).await;
        exec.finish(state, outcome, started)
    }
}

impl Exec<'_> {
    /// The main flow to its end, then its compensations when it failed.
    async fn drive_main(
        &self,
        p: &Prepared,
        state: &mut RunState,
        ctx: RunCtx<'_>,
        started: Instant,
        decision: Option<ReviewDecision>,
    ) -> RunOutcome {
        // The signals its flows took before (a resumed run's saved branches and children too).
        self.signals.seed(state);
        let outcome = match self
            .drive(p, state, ctx.cancel, started, decision, Flow::Main)
            .await
        {
            Ok(o) => o,
            Err(e) => RunOutcome::Failed(e),
        };
        self.compensate(p, state, outcome, CompensationCheckpoints::Main)
            .await
    }

    /// Reports the inputs the workflow's state schema does not know; the error when one it
    /// requires is missing or of the wrong type.
    fn check_inputs(&self, wf: &Workflow, state: &RunState) -> Option<RuntimeError> {
        let schema = wf.state_schema.as_ref()?;
        for (key, nearest) in crate::inputs::unknown_inputs(schema, &state.context) {
            self.listener.on_event(&Event::UnknownInput {
                key: &key,
                did_you_mean: nearest.as_deref(),
            });
        }
        crate::inputs::input_error(schema, &state.context)
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
                if !matches!(e, RuntimeError::Cancelled { .. }) {
                    let node = Some(state.current_node.clone()).filter(|n| !n.is_empty());
                    let cause = state
                        .history
                        .last()
                        .filter(|h| Some(&h.node_id) == node.as_ref())
                        .and_then(|h| h.error.clone());
                    state.failure = Some(crate::state::RunFailure {
                        message: error_text.clone(),
                        node,
                        cause,
                    });
                }
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
}

/// `30s`, `1500ms`: how a timeout is named in a failure.
pub(crate) fn describe_ms(ms: u64) -> String {
    if ms >= 1000 && ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}
