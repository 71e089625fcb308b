//! hensu-runtime — the engine that runs hensu workflows. It does no I/O of its own: the outside
//! world comes in through traits, and `hensu-host` implements them (shell commands, HTTP,
//! terminal review, stub files on disk, durable runs in a store).
//!
//! * [`Engine`] runs a [`hensu_ir::Workflow`]: the node lifecycle of upstream Hensu (pre
//!   pipeline → node executor → post pipeline of six processors), every transition rule with
//!   bounded budgets, the engine-variable lifecycle, prompt enrichment, output validation, and
//!   hensu's run guards (`maxSteps`, `maxExecutionTime`, required inputs, cancellation).
//! * Agents come from [`AgentProvider`]s; [`StubProvider`] reproduces upstream's stub agents
//!   byte for byte, reading stub files through [`StubFiles`].
//! * Generic nodes run [`GenericNodeHandler`]s (built in: `validator`, `data-transformer`);
//!   action nodes `send` to [`ActionHandler`]s (built in: `log`) and `execute` named commands
//!   through a [`CommandRunner`].
//! * Parallel nodes with consensus, fork/join sub-flows with their four merge strategies and
//!   sub-workflows loaded from a [`WorkflowRepository`] run.
//! * Human review goes to a [`ReviewHandler`] (default: [`AutoApprove`]).
//! * [`Engine`] is long-lived; each run brings its [`RunCtx`]: cancellation, listener, a
//!   [`Checkpointer`] (durable runs) and [`RunControlHook`]s ([`RunControl`]) that may cancel
//!   or suspend the run before each node.
//! * Everything observable goes to an [`ExecutionListener`] as [`Event`]s.
//!
//! Module dependencies point one way: `value`/`state`/`run_types` ← the seams (`agent`,
//! `action`, `generic`, `review`, `checkpoint`, `stub`, `repository`) ← `engine` (its node
//! kinds in `engine/kinds/`, join helpers in `engine/branches.rs`) ← `control`.

mod action;
mod agent;
mod checkpoint;
mod context;
mod control;
mod engine;
mod enrich;
mod error;
mod events;
mod extract;
mod generic;
pub mod inputs;
pub mod journal;
mod plan;
mod repository;
mod review;
mod run_types;
mod state;
mod structured;
mod stub;
mod template;
pub mod tokens;
pub mod trace_context;
mod validate;
mod value;
mod wait;
mod waiting;

#[cfg(feature = "testing")]
pub mod testing;

pub use action::{
    ActionHandler, ActionHandlerRegistry, ActionResult, CommandRunner, LogHandler, NoCommands,
};
pub use agent::{
    Agent, AgentError, AgentProvider, AgentRegistry, AgentRequest, AgentResponse, Usage,
    select_provider, system_prompt,
};
pub use checkpoint::{Boundary, Checkpointer, RunControlHook};
pub use context::{Changes, ContextMap, ContextMark};
pub use control::{ControlStatus, RunControl};
pub use engine::kinds::subworkflow::{DEFAULT_TENANT, MAX_DEPTH};
pub use engine::{Engine, EngineBuilder, Prepared, RunCtx, plan_compensations};
pub use enrich::{APPROVED_INSTRUCTION, RECOMMENDATION_INSTRUCTION, SCORE_INSTRUCTION};
pub use error::RuntimeError;
pub use events::{
    BoundedInfo, CollectingListener, EVENTS_FORMAT_VERSION, Event, ExecutionListener, FinishKind,
    JsonlListener, MultiListener, NoopListener, TransitionCause,
};
pub use extract::{extract_object, first_balanced_object};
pub use generic::{
    DataTransformerHandler, GenericHandlerRegistry, GenericNodeHandler, MAX_PATTERN_INPUT,
    MAX_PATTERN_LENGTH, ValidatorHandler, cfg_num, cfg_str,
};
pub use plan::ExecPlan;
pub use repository::{MapRepository, WorkflowRepository};
pub use review::{
    ArgumentChange, AutoApprove, ReviewDecision, ReviewHandler, ReviewOutcome, ReviewRequest,
    ToolApprovalRequest, ToolDecision, WaitingReview, argument_changes, pending_review,
    reviewed_tool_call, route_review, tool_decision_problem, waiting_reviews,
};
pub use run_types::{
    CancelToken, DEFAULT_RUBRIC_BACKTRACK_LIMIT, PostProcessor, RunOptions, RunOutcome, RunResult,
};
pub use state::{
    Backtrack, BacktrackKind, BranchEnd, BranchOutcome, Compensating, CompensationRecord,
    CompensationTask, EndCause, ExecutionPhase, FinishedBranch, ForkBranchState, HistoryStep,
    Nested, NestedFrame, NodeResult, NodeStatus, Redact, ReviewVerdict, RubricEvaluation,
    RunFailure, RunState, StateShadow, StepChange, TOOL_APPROVAL, ToolCallReview, Waiting,
};
pub use structured::StructuredCaller;
pub use stub::{
    CURRENT_BRANCH_KEY, DEFAULT_JSON_STUB, DEFAULT_SCENARIO, MemoryStubFiles, STUB_SCENARIO_KEY,
    StubFiles, StubProvider, StubResponseRegistry, generate_fallback, substitute_double_braces,
};
pub use template::{placeholders, resolve, resolve_with};
pub use validate::{MAX_OUTPUT_BYTES, OutputViolation, validate_output};
pub use value::{Context, java_to_string, render};
pub use wait::{ScheduledSignal, SleepingWaiter, VirtualClock, WaitAnswer, WaitRequest, Waiter};
pub use waiting::{WaitingWait, waiting_waits};
