//! Executing runs: the [`ExecutionService`] trait the routes call, and [`InProcessExecutor`],
//! which runs each execution on a tokio task of this process through the engine with the
//! durable wiring of `hensu-host` (a checkpoint at every node boundary, under the run's
//! lease).
//!
//! Starts and resumes run at once on this server. Beside them, the executor embeds a
//! `hensu_host::worker` ([`ExecutionService::start_background`]): it claims runs whose owner
//! stopped heartbeating (a server that crashed or was killed) and continues them from their
//! last recorded step, so several servers on one PostgreSQL database continue each other's
//! executions (docs/server.md, *Several servers*). Paused runs wait for a human and are never
//! claimed. On a graceful shutdown a running execution is handed back: at its next node
//! boundary (the boundary is recorded first) it stops — suspended, never cancelled, so no saga
//! compensation runs — and gives its lease back still `running`, for another server (or this
//! one, restarted) to take. A run still inside a node when the shutdown grace is over is
//! dropped there and handed back at its last recorded boundary (the node runs again).

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use hensu_host::launch::{
    self, Extras, ProjectConfig, ReviewMode, RunSetup, StoredWorkflow, StubRoot, Stubs, ToolSupply,
};
use hensu_host::worker::{ClaimedRun, RunExecutor};
use hensu_host::{DurableRun, SnapshotRedactor};
use hensu_ir::Workflow;
use hensu_mcp::gateway::Gateway;
use hensu_runtime::{
    CancelToken, Context, Engine, MapRepository, ReviewDecision, RunOutcome, RunResult, RunState,
    RuntimeError,
};
use hensu_store::{CancelRequest, OwnerId, PauseRequest, RunStatus, StateStore, WorkflowRegistry};
use serde_json::Value;
use tokio::sync::broadcast;
use tracing::Instrument as _;

use crate::error::ApiError;
use crate::metrics;
use crate::stubs::StubScenarios;

mod notify;
mod service;

pub use notify::NotifyingHook;

/// "Run `run_id` of `tenant` wrote something": wakes the SSE streams of this process.
#[derive(Clone, Debug)]
pub struct RunChanged {
    pub tenant: String,
    pub run_id: String,
}

/// A new execution.
pub struct StartRequest {
    pub tenant: String,
    pub workflow: Arc<Workflow>,
    pub context: Context,
    /// The tenant's workflows, for sub-workflow nodes.
    pub repository: MapRepository,
    /// The start's `Idempotency-Key` and request digest (docs/server.md, *Idempotent starts*).
    pub idempotency: Option<hensu_store::IdempotencyKey>,
    /// A valid W3C `traceparent` of the start: the parent of the run's trace.
    pub traceparent: Option<String>,
}

/// What [`ExecutionService::start`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Started {
    pub run_id: String,
    /// The idempotency key had started this execution already: nothing new was started.
    pub replayed: bool,
}

/// What a resume asks for.
#[derive(Debug, Default)]
pub struct ResumeInput {
    pub correlation_id: Option<String>,
    pub decision: Option<ReviewDecision>,
    /// Merged into the context before a plain resume.
    pub context_edits: Option<Context>,
    /// The approval's edits are a tool call's edited arguments (docs/mcp.md, *Tool
    /// approval*), not context edits.
    pub arguments_given: bool,
}

/// Starts, resumes and cancels executions. Every method has checked the tenant already.
#[async_trait]
pub trait ExecutionService: Send + Sync {
    /// Stores the run and starts it in the background; returns its id (or, for a key that
    /// started one already, that execution's).
    async fn start(&self, req: StartRequest) -> Result<Started, ApiError>;
    /// Stores the run queued, for a worker to claim (this server's takeover worker or any
    /// other on the same store, within their concurrency); returns its id, as `start`.
    async fn queue(&self, req: StartRequest) -> Result<Started, ApiError>;
    /// Stores one queued run of `workflow` per context, all in one transaction (every run or
    /// none); returns their ids in order.
    async fn queue_many(
        &self,
        tenant: &str,
        workflow: &Workflow,
        contexts: &[Context],
    ) -> Result<Vec<String>, ApiError>;
    /// Checks the input against the stored run, then continues it in the background. Nothing
    /// is written when the input is refused.
    async fn resume(
        &self,
        run_id: &str,
        input: ResumeInput,
        repository: MapRepository,
    ) -> Result<(), ApiError>;
    /// Cancels a run: at once when idle, at its next boundary when running.
    async fn cancel(&self, run_id: &str) -> Result<CancelRequest, ApiError>;
    /// Asks a run to pause at its next node boundary (saved `paused`; a plain resume
    /// continues it), through the store: whichever server or worker executes it sees the
    /// request with its next checkpoint.
    async fn pause(&self, run_id: &str) -> Result<PauseRequest, ApiError>;
    /// Executions this service is running now.
    fn running(&self) -> usize;
    /// What replaces secrets in what the server stores (a fork's edits; docs/server.md).
    fn redactor(&self) -> Option<hensu_host::SnapshotRedactor> {
        None
    }
    /// Starts background work (the takeover worker); call once, inside the server's runtime.
    fn start_background(&self) {}
    /// Stops accepting work and hands back what runs (graceful shutdown: each run stops at
    /// its next boundary, or at the end of the grace at its last one, and releases its lease
    /// still running; nothing is cancelled).
    async fn shutdown(&self);
}

/// Lease and takeover timing of an [`InProcessExecutor`].
#[derive(Clone, Debug)]
pub struct ExecutorOptions {
    /// The store's lease time-to-live: a run whose server stopped heartbeating is taken over
    /// this long after its last renewal. Leases are renewed every third of it.
    pub lease_ttl: Duration,
    /// How often the takeover worker looks for orphaned runs.
    pub poll: Duration,
    /// Orphaned runs continued at the same time by this server.
    pub takeover_concurrency: usize,
    /// On shutdown, how long a running execution may take to reach its next node boundary
    /// before it is dropped inside its node and handed back at its last recorded one.
    pub shutdown_grace: Duration,
}

impl Default for ExecutorOptions {
    fn default() -> Self {
        ExecutorOptions {
            lease_ttl: hensu_store::DEFAULT_LEASE_TTL,
            poll: Duration::from_millis(500),
            takeover_concurrency: 8,
            shutdown_grace: Duration::from_secs(20),
        }
    }
}

/// A run in progress on this server: its token, and its task when this executor spawned it
/// (claimed runs run on the worker's tasks).
type Running = HashMap<String, (CancelToken, Option<tokio::task::JoinHandle<()>>)>;

/// Runs executions on tokio tasks of this process.
pub struct InProcessExecutor {
    store: Arc<dyn StateStore>,
    registry: Arc<dyn WorkflowRegistry>,
    events: broadcast::Sender<RunChanged>,
    /// Every run's configuration: the server's project (`hensu.toml` run sections), its
    /// store, stubs forced or not, deferred reviews, no local commands. Each run gets its
    /// tenant's stub directory on top ([`StubScenarios::root_for`]).
    setup: RunSetup,
    /// Where each tenant's stub answers are read.
    stubs: StubScenarios,
    /// Where the tenants' tools are (server mode: their own MCP clients).
    gateway: Gateway,
    options: ExecutorOptions,
    /// The owner of the leases taken by starts and resumes.
    owner: OwnerId,
    /// The owner of the leases the takeover worker claims (another nonce: a run claimed by
    /// the worker between its creation and its start's lease is never run twice here).
    worker_owner: OwnerId,
    /// Provider keys replaced in every stored snapshot.
    redact: Option<SnapshotRedactor>,
    tasks: Mutex<Running>,
    /// Shutting down: running executions are handed back at their next boundary.
    closing: Arc<AtomicBool>,
    /// The shutdown grace is over: executions still inside a node stop there.
    hard_stop: CancelToken,
    worker: Mutex<Option<(CancelToken, tokio::task::JoinHandle<()>)>>,
    /// Where the runs' tokens go (docs/server.md, *Token events*); none: no run streams.
    tokens: Option<Arc<crate::tokens::TokenHub>>,
}

/// What configures every run of an [`InProcessExecutor`].
pub struct RunConfig {
    /// The server's project: its `hensu.toml` is honoured as by `hensuc run`.
    pub project: ProjectConfig,
    /// Where each tenant's stub answers are read.
    pub stubs: StubScenarios,
    /// Stub agents for every model (`hensuc serve --stub`).
    pub force_stub: bool,
}

impl InProcessExecutor {
    /// An executor running every execution under `config`.
    pub fn new(
        store: Arc<dyn StateStore>,
        registry: Arc<dyn WorkflowRegistry>,
        events: broadcast::Sender<RunChanged>,
        config: RunConfig,
        gateway: Gateway,
        options: ExecutorOptions,
    ) -> InProcessExecutor {
        let RunConfig {
            project,
            stubs,
            force_stub,
        } = config;
        let redactor = project.secrets();
        let redact: Option<SnapshotRedactor> = if redactor.is_empty() {
            None
        } else {
            Some(Arc::new(move |v: &mut Value| redactor.redact_json(v)))
        };
        // Every run of the server sends its HTTP requests under the project's egress policy
        // (docs/server.md, *Egress*): a tenant's workflow cannot reach the server's network.
        let egress = Some(Arc::new(project.egress.clone()));
        let setup = RunSetup {
            project: Arc::new(project),
            store: Some(store.clone()),
            stubs: Stubs {
                force: force_stub,
                scenario: None,
                // Set per run, for its tenant.
                files: StubRoot::None,
            },
            // No terminal and no human at hand: a review pauses the run for a resume.
            review: ReviewMode::Deferred,
            local_commands: false,
            egress,
        };
        InProcessExecutor {
            store,
            registry,
            events,
            setup,
            stubs,
            gateway,
            options,
            owner: OwnerId::current(),
            worker_owner: OwnerId::current(),
            redact,
            tasks: Mutex::new(HashMap::new()),
            closing: Arc::new(AtomicBool::new(false)),
            hard_stop: CancelToken::new(),
            worker: Mutex::new(None),
            tokens: None,
        }
    }

    /// The executor with its runs' tokens going to `hub` (their models stream).
    pub fn with_tokens(mut self, hub: Arc<crate::tokens::TokenHub>) -> InProcessExecutor {
        self.tokens = Some(hub);
        self
    }

    /// The engine of one run of `tenant`: the one run recipe ([`launch::engine`]) under the
    /// server's setup, with the tenant's stub directory and MCP tools.
    async fn engine(
        &self,
        tenant: &str,
        workflow: &Workflow,
        repository: MapRepository,
        cancel: &CancelToken,
    ) -> Result<Engine, String> {
        let tools = crate::tools::for_run(&self.gateway, tenant, workflow, &repository)
            .await
            .with_policies(&self.setup.project.mcp);
        let extras = Extras {
            tools: ToolSupply::Given(Box::new(tools)),
            listener: None,
            terminal_pause: None,
            cancel: cancel.clone(),
            recorded: None,
        };
        let mut setup = self.setup.clone();
        setup.stubs.files = self.stubs.root_for(tenant);
        launch::engine(&setup, workflow, repository, extras).map(|run| run.engine)
    }

    fn notify(&self, tenant: &str, run_id: &str) {
        let _ = self.events.send(RunChanged {
            tenant: tenant.into(),
            run_id: run_id.into(),
        });
    }

    /// Runs `run` to its next stop on a task of its own.
    fn spawn_run(self: &Arc<Self>, run: ReadyRun) {
        let run_id = run.durable.run_id().to_string();
        let cancel = run.cancel.clone();
        let this = Arc::clone(self);
        let span =
            launch::telemetry::log_span(&run_id, Some(&run.tenant), run.traceparent.as_deref());
        // Spawned under the lock: the task's own removal cannot come before this insert.
        if let Ok(mut t) = self.tasks.lock() {
            let handle = tokio::spawn(this.execute(run).instrument(span));
            t.insert(run_id, (cancel, Some(handle)));
        }
    }

    /// Runs a stored run to its next stop (end, pause or failure) and records it; on a
    /// graceful shutdown it is handed back (suspended at a boundary, or dropped inside its
    /// node once the grace is over) and gives the lease back, still `running`.
    async fn execute(self: Arc<Self>, run: ReadyRun) {
        let ReadyRun {
            tenant,
            workflow,
            durable,
            resume,
            input,
            repository,
            cancel,
            traceparent: _,
        } = run;
        let run_id = durable.run_id().to_string();
        let durable = Arc::new(durable.with_cancel(cancel.clone()));
        let hook = NotifyingHook::new(
            durable.clone(),
            &tenant,
            &run_id,
            self.events.clone(),
            self.closing.clone(),
        )
        .with_tokens(self.tokens.clone());
        // A claimed run's lease is renewed by the worker; this does nothing for it.
        if let Err(e) = durable.start_heartbeat(self.options.lease_ttl) {
            tracing::warn!(run_id, error = %e, "heartbeat did not start");
        }
        metrics::running_delta(1.0);
        tracing::info!(
            workflow = %workflow.id,
            resumed = resume.is_some(),
            "execution running"
        );
        let engine = self.engine(&tenant, &workflow, repository, &cancel).await;
        // The live trace (docs/observability.md), as for a local run; none when it is off.
        let trace = launch::telemetry::trace_listener(
            self.setup.project.telemetry.as_ref(),
            &workflow,
            Some(&tenant),
            Arc::new(self.setup.project.secrets()),
        );
        if let Some(t) = &trace {
            let resumed = resume.as_ref().map(|(state, _)| state);
            launch::telemetry::attach(t, durable.store().as_ref(), &run_id, resumed).await;
        }
        // The run's model metrics (per tenant and model) and its live trace, if any.
        let model_metrics: Arc<dyn hensu_runtime::ExecutionListener> = Arc::new(
            metrics::ModelMetrics::new(&tenant, self.setup.project.pricing.clone()),
        );
        let mut listeners = vec![model_metrics];
        if let Some(t) = &trace {
            listeners.push(t.clone() as Arc<dyn hensu_runtime::ExecutionListener>);
        }
        // The text of the node in flight for the SSE streams, redacted as it streams
        // (docs/security.md, *Streaming redaction*).
        if let Some(hub) = &self.tokens {
            let sink = hensu_providers::RedactingTokenSink::new(
                Arc::new(self.setup.project.secrets()),
                hub.sink(&tenant, &workflow.id, &durable),
            );
            listeners.push(Arc::new(crate::tokens::TokenListener(Arc::new(sink))));
        }
        let listener: Arc<dyn hensu_runtime::ExecutionListener> =
            Arc::new(hensu_runtime::MultiListener::new(listeners));
        let journal = durable.journal();
        // The run's waits are durable (docs/language.md, *Timers and signals*): a suspended
        // run is claimed again by a server's takeover once its time or its signal comes.
        let ctx = hensu_runtime::RunCtx::new(&cancel)
            .checkpointer(&hook)
            .journal(Some(&journal))
            .waiter(durable.as_ref())
            .run_id(&run_id)
            .listener(listener.as_ref());
        let asked_before = asked(resume.as_ref().map(|(s, _)| s));
        let run = async {
            match (&engine, resume) {
                (Ok(engine), None) => engine.run(&workflow, input, ctx).await,
                (Ok(engine), Some((state, decision))) => match engine.prepare(workflow.clone()) {
                    Ok(p) => engine.resume(&p, state, decision, ctx).await,
                    Err(e) => failed(e, state),
                },
                // The engine could not be built: the run fails with the reason, recorded like
                // any failure.
                (Err(reason), resume) => {
                    let state = resume.map(|(s, _)| s).unwrap_or_else(|| {
                        RunState::new(
                            run_id.clone(),
                            workflow.id.clone(),
                            workflow.start_node.clone(),
                            input,
                        )
                    });
                    failed(
                        RuntimeError::AgentSetup {
                            message: reason.clone(),
                        },
                        state,
                    )
                }
            }
        };
        // Past the shutdown grace the run is dropped inside its node (the engine spawns no
        // task of its own, so nothing of it runs on): its last boundary stands.
        let result = tokio::select! {
            r = run => Some(r),
            () = self.hard_stop.cancelled() => None,
        };
        let suspended_by_shutdown = hook.handed_back();
        drop((engine, hook));
        let handed_back = match &result {
            None => true,
            Some(r) => suspended_by_shutdown && matches!(r.outcome, RunOutcome::Paused),
        };
        // The reviews the run started waiting for in this segment (told to `[server]
        // review_webhook` once recorded; one still waiting from before is not told again).
        let review = result.as_ref().map(|r| {
            hensu_runtime::waiting_reviews(&r.state)
                .into_iter()
                .filter(|w| !asked_before.contains(&w.correlation_id))
                .map(|w| (w.node_id, w.correlation_id))
                .collect::<Vec<_>>()
        });
        let finished = match result {
            Some(r) if !handed_back => durable.finish(&r).await,
            // Handed back, not an end and not a pause: the run continues on another server
            // (or here, after a restart) from its last recorded boundary.
            _ => durable.release().await.map(|()| None),
        };
        let id = run_id.as_str();
        match finished {
            Ok(Some(status)) => {
                tracing::info!(status = status.as_str(), "execution stopped");
                metrics::finished(&tenant, status);
                if status == RunStatus::Paused
                    && let (Some(reviews), Some(url)) =
                        (review, self.setup.project.review_webhook.as_ref())
                {
                    for (node, correlation) in reviews {
                        let url = url.clone();
                        review_requested(url, &tenant, &run_id, &workflow.id, &node, &correlation);
                    }
                }
            }
            Ok(None) if handed_back => {
                tracing::info!(
                    run_id = id,
                    "shutdown: lease released, the run stays running"
                )
            }
            Ok(None) => tracing::warn!(run_id = id, "lease lost; last checkpoint stands"),
            Err(e) => tracing::error!(run_id = id, error = %e, "final state not saved"),
        }
        metrics::running_delta(-1.0);
        self.notify(&tenant, &run_id);
        if let Ok(mut t) = self.tasks.lock() {
            t.remove(&run_id);
        }
    }

    /// Continues a run the takeover worker claimed (its owner stopped heartbeating).
    async fn execute_claimed(self: Arc<Self>, run: ClaimedRun) {
        let ClaimedRun {
            durable,
            stored,
            taken_over,
            cancel,
        } = run;
        let run_id = durable.run_id().to_string();
        let give_back = async |why: &str| {
            tracing::error!(run_id, why, "a claimed run cannot continue; lease released");
            let _ = durable.store().release(durable.lease()).await;
        };
        let tenant = match self.registry.run_tenant(&run_id).await {
            Ok(Some(t)) => t,
            // The claim takes tenants' runs only (`ClaimScope::Tenants`).
            Ok(None) => return give_back("the claimed run has no tenant").await,
            Err(e) => return give_back(&e.to_string()).await,
        };
        let state = match hensu_host::restore(&run_id, &stored.snapshot) {
            Ok(s) => s,
            Err(e) => return give_back(&e).await,
        };
        let (workflow, traceparent) = match StoredWorkflow::decode(&run_id, &stored.workflow) {
            Ok(s) => (Arc::new(s.workflow), s.options.traceparent),
            Err(e) => return give_back(&e).await,
        };
        let span = launch::telemetry::log_span(&run_id, Some(&tenant), traceparent.as_deref());
        let repository =
            match crate::subflows::repository(self.registry.as_ref(), &tenant, &workflow).await {
                Ok(r) => r,
                Err(e) => return give_back(&e.message).await,
            };
        if taken_over {
            metrics::takeover();
            span.in_scope(|| {
                tracing::info!(
                    node = stored.record.current_node.as_deref().unwrap_or("-"),
                    "took over a run whose server stopped; the node in flight runs again"
                );
            });
        }
        metrics::resumed(&tenant);
        if let Ok(mut t) = self.tasks.lock() {
            t.insert(run_id.clone(), (cancel.clone(), None));
        }
        let durable = durable.with_redactor(self.redact.clone());
        self.execute(ReadyRun {
            tenant,
            workflow,
            durable,
            resume: Some((state, None)),
            input: Context::default(),
            repository,
            cancel,
            traceparent: None,
        })
        .instrument(span)
        .await;
    }
}

/// The correlation ids of the reviews `state` (a run resumed) waited for.
fn asked(state: Option<&RunState>) -> std::collections::HashSet<String> {
    state
        .map(hensu_runtime::waiting_reviews)
        .unwrap_or_default()
        .into_iter()
        .map(|w| w.correlation_id)
        .collect()
}

/// Tells `[server] review_webhook` that run `run_id` waits for a review (docs/server.md,
/// *Review notifications*), on a task of its own: the run's end is recorded already and is not
/// held up by the receiver; a failure is logged.
fn review_requested(
    url: String,
    tenant: &str,
    run_id: &str,
    workflow_id: &str,
    node_id: &str,
    correlation_id: &str,
) {
    let message = serde_json::json!({
        "event": "execution.review_requested",
        "executionId": run_id,
        "tenantId": tenant,
        "workflowId": workflow_id,
        "nodeId": node_id,
        "correlationId": correlation_id,
    });
    let span = tracing::Span::current();
    tokio::spawn(
        async move {
            if let Err(e) = hensu_host::review_notify::notify(&url, &message).await {
                tracing::warn!(error = %e, "the review notification was not delivered");
            }
        }
        .instrument(span),
    );
}

/// A run ready to go.
struct ReadyRun {
    tenant: String,
    workflow: Arc<Workflow>,
    durable: DurableRun,
    /// A stored state to continue (and the review decision), or `None` for a fresh run.
    resume: Option<(RunState, Option<ReviewDecision>)>,
    input: Context,
    repository: MapRepository,
    /// The run's token (a claimed run's is also cancelled by the worker).
    cancel: CancelToken,
    /// The `traceparent` it was started under: its log lines carry that trace's id.
    traceparent: Option<String>,
}

/// The executor as the takeover worker's [`RunExecutor`].
struct Claims(Arc<InProcessExecutor>);

#[async_trait]
impl RunExecutor for Claims {
    async fn execute(&self, run: ClaimedRun) {
        Arc::clone(&self.0).execute_claimed(run).await;
    }
}

/// The compiled workflow stored with run `run_id` ([`StoredWorkflow`]).
pub fn stored_workflow(run_id: &str, envelope: &Value) -> Result<Workflow, String> {
    StoredWorkflow::decode(run_id, envelope).map(|s| s.workflow)
}

/// A run that ended before its first node (`error`), at `state`.
fn failed(error: RuntimeError, state: RunState) -> RunResult {
    RunResult {
        outcome: RunOutcome::Failed(error),
        state,
        duration: Duration::ZERO,
    }
}

/// The status word of a record (hensu's real statuses).
pub fn status_word(s: RunStatus) -> &'static str {
    s.as_str()
}
