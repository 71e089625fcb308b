//! hensu-runtime — the tokio executor of hensu workflows.
//!
//! * [`Engine`] runs a [`hensu_ir::Workflow`]: the node lifecycle of upstream Hensu (pre
//!   pipeline → node executor → post pipeline of six processors), every transition rule with
//!   bounded budgets, the engine-variable lifecycle, prompt enrichment, output validation, and
//!   hensu's run guards (`maxSteps`, `maxExecutionTime`, required inputs, cancellation).
//! * Agents come from [`AgentProvider`]s; [`StubProvider`] reproduces upstream's stub agents
//!   byte for byte ([`stub`]).
//! * Generic nodes run [`GenericNodeHandler`]s (`validator`, `data-transformer`, `api-caller`);
//!   action nodes `send` to [`ActionHandler`]s (`log`, `webhook`) and `execute` commands of
//!   `commands.yaml` with shell-quoted values.
//! * Parallel nodes with consensus, fork/join sub-flows with their four merge strategies
//!   ([`fork`]) and sub-workflows loaded from a [`WorkflowRepository`] ([`subworkflow`]) run.
//! * Human review goes to a [`ReviewHandler`]: auto-approve (default), an interactive terminal
//!   reviewer or a deferred one that pauses the run ([`review_handlers`]).
//! * Everything observable goes to an [`ExecutionListener`] as [`Event`]s.

pub mod action;
pub mod agent;
pub mod control;
pub mod durable;
pub mod enrich;
pub mod error;
pub mod events;
pub mod executor;
pub mod extract;
pub mod fork;
pub mod generic;
pub mod parallel;
pub mod plan;
pub mod review;
pub mod review_handlers;
pub mod state;
pub mod stub;
pub mod subworkflow;
pub mod template;
pub mod validate;
pub mod value;

pub use action::{
    ActionHandler, ActionHandlerRegistry, ActionResult, CommandRegistry, CommandSpec, LogHandler,
    WebhookHandler,
};
pub use agent::{
    Agent, AgentError, AgentProvider, AgentRegistry, AgentRequest, AgentResponse, StructuredCaller,
    Usage, system_prompt,
};
pub use control::{Boundary, BoundaryHook, ControlStatus, RunControl};
pub use durable::{DurableRun, SnapshotRedactor};
pub use error::RuntimeError;
pub use events::{
    CollectingListener, Event, ExecutionListener, JsonlListener, MultiListener, NoopListener,
    TransitionCause,
};
pub use executor::{
    CancelToken, Engine, EngineBuilder, PostProcessor, Prepared, ProcessorOutcome, RunOptions,
    RunOutcome, RunResult,
};
pub use generic::{
    ApiCallerHandler, DataTransformerHandler, GenericHandlerRegistry, GenericNodeHandler,
    ValidatorHandler,
};
pub use plan::ExecPlan;
pub use review::{AutoApprove, ReviewDecision, ReviewHandler, ReviewOutcome, ReviewRequest};
pub use review_handlers::{DeferredReview, InteractiveReview};
pub use state::{
    Backtrack, BacktrackKind, ExecutionPhase, HistoryStep, NodeResult, NodeStatus, RunState,
};
pub use stub::{FsStubFiles, MemoryStubFiles, StubFiles, StubProvider, StubResponseRegistry};
pub use subworkflow::{MapRepository, WorkflowRepository};
pub use value::Context;
