//! The engine: its builder, the prepared workflow, and the entry points `run`, `run_prepared`
//! and `resume`. The work is split by phase of a node's life:
//!
//! * [`run_loop`] — the loop over nodes with the run guards and the boundary hooks,
//! * [`node`] — node execution (enum dispatch over the node kinds, agent calls, actions),
//! * [`pipeline`] — the post-execution processors (extraction, rubric, review, history),
//! * [`transition`] — transition resolution and the engine-variable lifecycle.
//!
//! The node kinds with their own files (`parallel`, `fork`, `subworkflow`) depend on this
//! module, never the other way round through imports.

mod compensation;
mod node;
mod pipeline;
mod run_loop;
mod transition;

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
use crate::boundary::BoundaryHook;
use crate::error::RuntimeError;
use crate::events::{Event, ExecutionListener, FinishKind, NoopListener};
use crate::generic::GenericHandlerRegistry;
use crate::plan::ExecPlan;
use crate::review::{AutoApprove, ReviewDecision, ReviewHandler};
use crate::run_types::{CancelToken, RunOptions, RunOutcome, RunResult};
use crate::state::{ExecutionPhase, FinishedBranch, NestedFrame, RunState};
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
    listener: Arc<dyn ExecutionListener>,
    options: RunOptions,
    structured: Option<Arc<dyn crate::structured::StructuredCaller>>,
    workflows: Option<Arc<dyn crate::repository::WorkflowRepository>>,
    boundary_hooks: Vec<Arc<dyn BoundaryHook>>,
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
    pub fn commands(mut self, r: impl CommandRunner + 'static) -> Self {
        self.commands = Arc::new(r);
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

    /// Adds a hook called at every node boundary of the main flow (checkpoints, pause/cancel
    /// control; see [`RunControl`](crate::RunControl)). Hooks run in the order added.
    pub fn boundary_hook(mut self, h: Arc<dyn BoundaryHook>) -> Self {
        self.boundary_hooks.push(h);
        self
    }

    pub fn build(self) -> Engine {
        let records_branches = self.boundary_hooks.iter().any(|h| h.records_branches());
        Engine {
            records_branches,
            step_events: self.listener.wants_step_events(),
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
    pub(crate) commands: Arc<dyn CommandRunner>,
    review: Arc<dyn ReviewHandler>,
    pub(crate) listener: Arc<dyn ExecutionListener>,
    /// `listener.wants_step_events()`, read once: when false the hot loop builds no per-step
    /// event and skips the clock reads only those events need.
    pub(crate) step_events: bool,
    pub(crate) options: RunOptions,
    structured: Option<Arc<dyn crate::structured::StructuredCaller>>,
    pub(crate) workflows: Option<Arc<dyn crate::repository::WorkflowRepository>>,
    boundary_hooks: Vec<Arc<dyn BoundaryHook>>,
    /// A boundary hook records finished branches ([`BoundaryHook::records_branches`]).
    records_branches: bool,
}

impl Engine {
    /// The sub-workflow path to record the finished branches of a parallel or fork node
    /// running in `flow` with ([`BoundaryHook::at_branch_finished`]); `None` when no hook
    /// records branches or `flow` takes no checkpoints (a fork branch, a child inside one).
    pub(crate) fn branch_recording<'f>(&self, flow: Flow<'f>) -> Option<&'f [NestedFrame]> {
        if !self.records_branches {
            return None;
        }
        match flow {
            Flow::Main => Some(&[]),
            Flow::Child(frames) => Some(frames),
            Flow::Branch { .. } | Flow::Detached => None,
        }
    }

    /// Tells the hooks that record branches that a branch of `node_id` finished.
    pub(crate) async fn record_branch(
        &self,
        frames: &[NestedFrame],
        node_id: &str,
        branch: FinishedBranch<'_>,
    ) -> Result<(), RuntimeError> {
        for hook in self.boundary_hooks.iter().filter(|h| h.records_branches()) {
            hook.at_branch_finished(frames, node_id, branch).await?;
        }
        Ok(())
    }

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
            for (key, nearest) in crate::inputs::unknown_inputs(schema, &state.context) {
                self.listener.on_event(&Event::UnknownInput {
                    key: &key,
                    did_you_mean: nearest.as_deref(),
                });
            }
            let (missing, mistyped) = crate::inputs::input_problems(schema, &state.context);
            let error = if !mistyped.is_empty() {
                let mut problems: Vec<String> = missing
                    .iter()
                    .map(|n| format!("`{n}` is missing"))
                    .collect();
                problems.extend(mistyped);
                Some(RuntimeError::InvalidInputs { problems })
            } else if !missing.is_empty() {
                Some(RuntimeError::MissingInputs { names: missing })
            } else {
                None
            };
            if let Some(e) = error {
                return self.finish(state, RunOutcome::Failed(e), started);
            }
        }
        let outcome = match self
            .drive(p, &mut state, cancel, started, None, Flow::Main)
            .await
        {
            Ok(o) => o,
            Err(e) => RunOutcome::Failed(e),
        };
        let outcome = self
            .compensate(p, &mut state, outcome, CompensationCheckpoints::Main)
            .await;
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
        // A run that died while compensating continues with the compensations left.
        if state.compensating.is_some() {
            let outcome = self
                .resume_compensation(p, &mut state, CompensationCheckpoints::Main)
                .await;
            return self.finish(state, outcome, started);
        }
        let outcome = match self
            .drive(p, &mut state, cancel, started, decision, Flow::Main)
            .await
        {
            Ok(o) => o,
            Err(e) => RunOutcome::Failed(e),
        };
        let outcome = self
            .compensate(p, &mut state, outcome, CompensationCheckpoints::Main)
            .await;
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
}
