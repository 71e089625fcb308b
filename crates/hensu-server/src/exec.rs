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

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use hensu_host::launch::{
    self, Extras, NewRun, ProjectConfig, ReviewMode, RunHandle, RunSetup, StoredWorkflow, StubRoot,
    Stubs, ToolSupply,
};
use hensu_host::worker::{ClaimedRun, RunExecutor, WorkerEvent, WorkerOptions};
use hensu_host::{DurableRun, SnapshotRedactor};
use hensu_ir::Workflow;
use hensu_mcp::gateway::Gateway;
use hensu_runtime::{
    Boundary, CancelToken, Checkpointer, Context, Engine, ExecutionPhase, FinishedBranch,
    MapRepository, NestedFrame, ReviewDecision, RunControlHook, RunOutcome, RunResult, RunState,
    RuntimeError,
};
use hensu_store::{CancelRequest, OwnerId, RunStatus, StateStore, StoreError, WorkflowRegistry};
use serde_json::Value;
use tokio::sync::broadcast;

use crate::error::ApiError;
use crate::metrics;
use crate::pause::PauseHook;
pub use crate::pause::PauseRequest;
use crate::stubs::StubScenarios;

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
}

/// What a resume asks for.
#[derive(Debug, Default)]
pub struct ResumeInput {
    pub correlation_id: Option<String>,
    pub decision: Option<ReviewDecision>,
    /// Merged into the context before a plain resume.
    pub context_edits: Option<Context>,
}

/// Starts, resumes and cancels executions. Every method has checked the tenant already.
#[async_trait]
pub trait ExecutionService: Send + Sync {
    /// Stores the run and starts it in the background; returns its id.
    async fn start(&self, req: StartRequest) -> Result<String, ApiError>;
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
    /// continues it).
    async fn pause(&self, run_id: &str) -> Result<PauseRequest, ApiError>;
    /// Executions this service is running now.
    fn running(&self) -> usize;
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
    /// Runs of this server whose pause a client asked for (each run's [`PauseHook`] takes
    /// its entry at the next boundary).
    pause_requested: Arc<Mutex<HashSet<String>>>,
    /// Shutting down: running executions are handed back at their next boundary.
    closing: Arc<AtomicBool>,
    /// The shutdown grace is over: executions still inside a node stop there.
    hard_stop: CancelToken,
    worker: Mutex<Option<(CancelToken, tokio::task::JoinHandle<()>)>>,
    /// Runs without a tenant seen by the worker (warned about once).
    foreign: Mutex<HashSet<String>>,
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
            pause_requested: Arc::new(Mutex::new(HashSet::new())),
            closing: Arc::new(AtomicBool::new(false)),
            hard_stop: CancelToken::new(),
            worker: Mutex::new(None),
            foreign: Mutex::new(HashSet::new()),
        }
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
        let tools = crate::tools::for_run(&self.gateway, tenant, workflow, &repository).await;
        let extras = Extras {
            tools: ToolSupply::Given(Box::new(tools)),
            listener: None,
            terminal_pause: None,
            cancel: cancel.clone(),
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
        // Spawned under the lock: the task's own removal cannot come before this insert.
        if let Ok(mut t) = self.tasks.lock() {
            let handle = tokio::spawn(this.execute(run));
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
        } = run;
        let run_id = durable.run_id().to_string();
        let durable = Arc::new(durable.with_cancel(cancel.clone()));
        let hook = NotifyingHook::new(
            durable.clone(),
            &tenant,
            &run_id,
            self.events.clone(),
            self.closing.clone(),
        );
        // A claimed run's lease is renewed by the worker; this does nothing for it.
        if let Err(e) = durable.start_heartbeat(self.options.lease_ttl) {
            tracing::warn!(run_id, error = %e, "heartbeat did not start");
        }
        metrics::running_delta(1.0);
        let engine = self.engine(&tenant, &workflow, repository, &cancel).await;
        let pause = PauseHook {
            requested: self.pause_requested.clone(),
            run_id: run_id.clone(),
        };
        let controls: [&dyn RunControlHook; 1] = [&pause];
        let ctx = hensu_runtime::RunCtx::new(&cancel)
            .checkpointer(&hook)
            .controls(&controls)
            .run_id(&run_id);
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
        let d = durable.clone();
        let finished = tokio::task::spawn_blocking(move || match result {
            Some(r) if !handed_back => d.finish(&r),
            // Handed back, not an end and not a pause: the run continues on another server
            // (or here, after a restart) from its last recorded boundary.
            _ => d.store().release(d.lease()).map(|()| None),
        })
        .await;
        let id = run_id.as_str();
        match finished {
            Ok(Ok(Some(status))) => metrics::finished(status),
            Ok(Ok(None)) if handed_back => {
                tracing::info!(
                    run_id = id,
                    "shutdown: lease released, the run stays running"
                )
            }
            Ok(Ok(None)) => tracing::warn!(run_id = id, "lease lost; last checkpoint stands"),
            Ok(Err(e)) => tracing::error!(run_id = id, error = %e, "final state not saved"),
            Err(e) => tracing::error!(run_id = id, error = %e, "final write panicked"),
        }
        metrics::running_delta(-1.0);
        self.notify(&tenant, &run_id);
        if let Ok(mut t) = self.tasks.lock() {
            t.remove(&run_id);
        }
        if let Ok(mut p) = self.pause_requested.lock() {
            p.remove(&run_id);
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
        let give_back = |why: &str| {
            tracing::error!(run_id, why, "a claimed run cannot continue; lease released");
            let _ = durable.store().release(durable.lease());
        };
        let tenant = match self.registry.run_tenant(&run_id) {
            Ok(Some(t)) => t,
            Ok(None) => {
                // Not a server run (e.g. `hensuc run --detach` on this database): not ours.
                let _ = durable.store().release(durable.lease());
                if self
                    .foreign
                    .lock()
                    .is_ok_and(|mut f| f.insert(run_id.clone()))
                {
                    tracing::warn!(
                        run_id,
                        "a run without a tenant in the server's store is left alone"
                    );
                }
                return;
            }
            Err(e) => return give_back(&e.to_string()),
        };
        let state = match hensu_host::restore(&run_id, &stored.snapshot) {
            Ok(s) => s,
            Err(e) => return give_back(&e),
        };
        let workflow = match stored_workflow(&run_id, &stored.workflow) {
            Ok(w) => Arc::new(w),
            Err(e) => return give_back(&e),
        };
        let repository =
            match crate::subflows::repository(self.registry.as_ref(), &tenant, &workflow) {
                Ok(r) => r,
                Err(e) => return give_back(&e.message),
            };
        if taken_over {
            metrics::takeover();
            tracing::info!(
                run_id,
                node = stored.record.current_node.as_deref().unwrap_or("-"),
                "took over a run whose server stopped; the node in flight runs again"
            );
        }
        metrics::resumed();
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
        })
        .await;
    }
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
}

/// The executor as the takeover worker's [`RunExecutor`].
struct Claims(Arc<InProcessExecutor>);

#[async_trait]
impl RunExecutor for Claims {
    async fn execute(&self, run: ClaimedRun) {
        Arc::clone(&self.0).execute_claimed(run).await;
    }
}

/// The checkpointer of a server run: the durable checkpoint, then a wake-up for the run's
/// streams, and the step latency metric.
pub struct NotifyingHook {
    durable: Arc<DurableRun>,
    tenant: String,
    run_id: String,
    events: broadcast::Sender<RunChanged>,
    last: Mutex<Option<Instant>>,
    /// The server is shutting down: the next boundary suspends the run.
    closing: Arc<AtomicBool>,
    /// A boundary suspended the run for the shutdown.
    handed_back: AtomicBool,
}

impl NotifyingHook {
    fn new(
        durable: Arc<DurableRun>,
        tenant: &str,
        run_id: &str,
        events: broadcast::Sender<RunChanged>,
        closing: Arc<AtomicBool>,
    ) -> NotifyingHook {
        NotifyingHook {
            durable,
            tenant: tenant.into(),
            run_id: run_id.into(),
            events,
            last: Mutex::new(None),
            closing,
            handed_back: AtomicBool::new(false),
        }
    }

    /// Whether the run stopped because a boundary handed it back for the shutdown.
    fn handed_back(&self) -> bool {
        self.handed_back.load(Ordering::SeqCst)
    }

    /// The durable run's decision, unless the server is shutting down: then a boundary that
    /// would go on suspends the run instead (recorded already; a client's cancel still wins).
    /// Suspending, not cancelling: a cancelled run would run its saga compensations.
    fn at_shutdown(
        &self,
        decided: Result<Boundary, RuntimeError>,
    ) -> Result<Boundary, RuntimeError> {
        match decided {
            Ok(Boundary::Continue | Boundary::ContinueAfterPause(_))
                if self.closing.load(Ordering::SeqCst) =>
            {
                self.handed_back.store(true, Ordering::SeqCst);
                Ok(Boundary::Suspend)
            }
            other => other,
        }
    }

    fn notify(&self) {
        let _ = self.events.send(RunChanged {
            tenant: self.tenant.clone(),
            run_id: self.run_id.clone(),
        });
    }
}

#[async_trait]
impl Checkpointer for NotifyingHook {
    async fn record_step(&self, state: &RunState) -> Result<Boundary, RuntimeError> {
        let now = Instant::now();
        if let Ok(mut last) = self.last.lock()
            && let Some(prev) = last.replace(now)
        {
            metrics::step_latency(now - prev);
        }
        let r = self.durable.record_step(state).await;
        self.notify();
        self.at_shutdown(r)
    }

    // The run's children and finished fork/parallel branches are recorded like the
    // main flow's steps (ARCHITECTURE.md, *Nested flows*): a takeover resumes them too.
    async fn record_nested(
        &self,
        frames: &[NestedFrame],
        state: &RunState,
    ) -> Result<Boundary, RuntimeError> {
        let r = self.durable.record_nested(frames, state).await;
        self.notify();
        self.at_shutdown(r)
    }

    async fn record_branch(
        &self,
        frames: &[NestedFrame],
        node_id: &str,
        branch: FinishedBranch<'_>,
    ) -> Result<(), RuntimeError> {
        let r = self.durable.record_branch(frames, node_id, branch).await;
        self.notify();
        r
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

fn blocking_err(e: tokio::task::JoinError) -> ApiError {
    ApiError::internal(format!("store task failed: {e}"))
}

#[async_trait]
impl ExecutionService for Arc<InProcessExecutor> {
    async fn start(&self, req: StartRequest) -> Result<String, ApiError> {
        if self.closing.load(Ordering::SeqCst) {
            return Err(ApiError::new(
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                "the server is shutting down",
            ));
        }
        let wf = req.workflow.clone();
        let stored = StoredWorkflow {
            workflow: (*wf).clone(),
            source: None,
            options: self.setup.stored_options(),
        };
        let (store, registry, owner, redact) = (
            self.store.clone(),
            self.registry.clone(),
            self.owner.clone(),
            self.redact.clone(),
        );
        let (tenant, input) = (req.tenant.clone(), req.context.clone());
        let created = tokio::task::spawn_blocking(move || {
            launch::create_run(
                &store,
                NewRun {
                    stored: &stored,
                    input: &input,
                    queued: false,
                    owner: &owner,
                    redact,
                    tenant: Some((registry.as_ref(), &tenant)),
                },
            )
        })
        .await
        .map_err(blocking_err)??;
        let run_id = created.run_id().to_string();
        metrics::started();
        self.notify(&req.tenant, &run_id);
        // `Elsewhere`: between its creation and its lease the run looked claimable, and a
        // takeover worker (of this server or another) claimed it: it runs there.
        if let RunHandle::Leased(durable) = created {
            self.spawn_run(ReadyRun {
                tenant: req.tenant,
                workflow: wf,
                durable: *durable,
                resume: None,
                input: req.context,
                repository: req.repository,
                cancel: CancelToken::new(),
            });
        }
        Ok(run_id)
    }

    async fn resume(
        &self,
        run_id: &str,
        input: ResumeInput,
        repository: MapRepository,
    ) -> Result<(), ApiError> {
        let (store, owner) = (self.store.clone(), self.owner.clone());
        let id = run_id.to_string();
        let record = {
            let s = store.clone();
            tokio::task::spawn_blocking(move || s.record(&id))
                .await
                .map_err(blocking_err)??
        };
        if record.status.is_terminal() {
            if input.decision.is_some() {
                return Err(ApiError::bad_request(
                    "Cannot apply review decision: execution is not awaiting review",
                ));
            }
            return Err(ApiError::conflict(format!(
                "execution {run_id} is {}; it cannot be resumed",
                record.status
            )));
        }
        let tenant = self
            .registry
            .run_tenant(run_id)?
            .ok_or_else(ApiError::not_found)?;
        let redact = self.redact.clone();
        let id = run_id.to_string();
        let opened =
            tokio::task::spawn_blocking(move || DurableRun::reopen(store, &id, &owner, redact))
                .await
                .map_err(blocking_err)?;
        let (durable, stored) = match opened {
            Ok(x) => x,
            Err(StoreError::RunLocked { .. }) => {
                return Err(ApiError::conflict(format!(
                    "execution {run_id} is running; resume it once it pauses"
                )));
            }
            Err(StoreError::Finished { .. }) => {
                return Err(ApiError::conflict(format!("execution {run_id} has ended")));
            }
            Err(e) => return Err(e.into()),
        };
        // From here on, a refusal gives the lease back untouched.
        let refuse = |e: ApiError| {
            let _ = durable.store().release(durable.lease());
            Err(e)
        };
        let mut state = match hensu_host::restore(run_id, &stored.snapshot) {
            Ok(s) => s,
            Err(e) => return refuse(ApiError::internal(e)),
        };
        let workflow = match stored_workflow(run_id, &stored.workflow) {
            Ok(w) => Arc::new(w),
            Err(e) => return refuse(ApiError::internal(e)),
        };
        match (&state.phase, &input.decision) {
            (ExecutionPhase::Awaiting { .. }, None) => {
                let (node, corr) = hensu_runtime::pending_review(&state).unwrap_or(("?", "?"));
                return refuse(ApiError::bad_request(format!(
                    "Execution is awaiting a review decision for node '{node}' (correlation id \
                     '{corr}'); resume with a decision of approve, reject, or backtrack"
                )));
            }
            (ExecutionPhase::Awaiting { correlation_id, .. }, Some(_)) => {
                let given = input.correlation_id.as_deref().unwrap_or_default();
                if given != correlation_id {
                    return refuse(ApiError::bad_request(format!(
                        "Correlation id mismatch: expected '{correlation_id}', got '{given}'"
                    )));
                }
            }
            (_, Some(_)) => {
                return refuse(ApiError::bad_request(
                    "Cannot apply review decision: execution is not awaiting review",
                ));
            }
            (_, None) => {}
        }
        if let Some(ReviewDecision::Backtrack { target, .. }) = &input.decision
            && !workflow.nodes.contains_key(target)
        {
            return refuse(ApiError::bad_request(format!("Node not found: {target}")));
        }
        if input.decision.is_none()
            && let Some(edits) = input.context_edits
        {
            state.context.extend(edits);
        }
        if record.status == RunStatus::Running {
            // A running run whose owner's lease had expired (a crashed server): taken over.
            metrics::takeover();
            tracing::info!(run_id, "took over a run whose owner stopped");
        }
        metrics::resumed();
        self.spawn_run(ReadyRun {
            tenant,
            workflow,
            durable,
            resume: Some((state, input.decision)),
            input: Context::default(),
            repository,
            cancel: CancelToken::new(),
        });
        Ok(())
    }

    async fn cancel(&self, run_id: &str) -> Result<CancelRequest, ApiError> {
        let store = self.store.clone();
        let id = run_id.to_string();
        let r = tokio::task::spawn_blocking(move || store.request_cancel(&id))
            .await
            .map_err(blocking_err)??;
        if let CancelRequest::Requested { .. } = r
            && let Ok(t) = self.tasks.lock()
            && let Some((c, _)) = t.get(run_id)
        {
            c.cancel();
        }
        if let CancelRequest::Cancelled(rec) = &r {
            metrics::finished(rec.status);
            if let Some(tenant) = self.registry.run_tenant(run_id)? {
                self.notify(&tenant, run_id);
            }
        }
        Ok(r)
    }

    async fn pause(&self, run_id: &str) -> Result<PauseRequest, ApiError> {
        let store = self.store.clone();
        let id = run_id.to_string();
        let record = tokio::task::spawn_blocking(move || store.record(&id))
            .await
            .map_err(blocking_err)??;
        match record.status {
            RunStatus::Paused => return Ok(PauseRequest::AlreadyPaused),
            RunStatus::Running => {}
            s if s.is_terminal() => {
                return Err(ApiError::conflict(format!(
                    "execution {run_id} has already ended ({s})"
                )));
            }
            _ => {
                return Err(ApiError::conflict(format!(
                    "execution {run_id} has not started yet; cancel it instead"
                )));
            }
        }
        // Under the tasks lock: the run cannot finish (and drop its entry) in between.
        let tasks = self
            .tasks
            .lock()
            .map_err(|_| ApiError::internal("run table poisoned"))?;
        if !tasks.contains_key(run_id) {
            return Err(ApiError::conflict(format!(
                "execution {run_id} is running on another server; pause it there"
            )));
        }
        if let Ok(mut p) = self.pause_requested.lock() {
            p.insert(run_id.to_string());
        }
        Ok(PauseRequest::Requested)
    }

    fn running(&self) -> usize {
        self.tasks.lock().map(|t| t.len()).unwrap_or(0)
    }

    fn start_background(&self) {
        let Ok(mut slot) = self.worker.lock() else {
            return;
        };
        if slot.is_some() {
            return;
        }
        let stop = CancelToken::new();
        let this = Arc::clone(self);
        let opts = WorkerOptions {
            concurrency: self.options.takeover_concurrency,
            heartbeat: (self.options.lease_ttl / 3).max(Duration::from_millis(50)),
            poll: self.options.poll,
            exit_when_idle: false,
        };
        let on_event = Arc::new(|e: WorkerEvent| match e {
            WorkerEvent::LeaseLost { run_id } => {
                tracing::warn!(run_id, "lease lost: another server continues the run")
            }
            WorkerEvent::StoreError { message } => {
                tracing::warn!(message, "takeover worker: store error")
            }
            _ => {}
        });
        let handle = tokio::spawn({
            let (store, owner, stop) =
                (self.store.clone(), self.worker_owner.clone(), stop.clone());
            async move {
                hensu_host::worker::run_worker(
                    store,
                    owner,
                    Arc::new(Claims(this)),
                    opts,
                    stop,
                    on_event,
                )
                .await;
            }
        });
        *slot = Some((stop, handle));
    }

    async fn shutdown(&self) {
        // From here on every boundary of every run hands it back (no token is cancelled: a
        // cancelled run would compensate and end `cancelled`).
        self.closing.store(true, Ordering::SeqCst);
        // Stop claiming first, so nothing new starts while the runs stop.
        let worker = self.worker.lock().ok().and_then(|mut w| w.take());
        if let Some((stop, _)) = &worker {
            stop.cancel();
        }
        let handles: Vec<_> = match self.tasks.lock() {
            Ok(mut t) => t.drain().filter_map(|(_, (_, h))| h).collect(),
            Err(_) => Vec::new(),
        };
        let all_stopped = async {
            for h in handles {
                let _ = h.await;
            }
            // The worker returns once its claimed runs have stopped.
            if let Some((_, handle)) = worker {
                let _ = handle.await;
            }
        };
        tokio::pin!(all_stopped);
        tokio::select! {
            () = &mut all_stopped => return,
            () = tokio::time::sleep(self.options.shutdown_grace) => {}
        }
        tracing::warn!(
            "shutdown grace over: runs still inside a node are handed back at their last boundary"
        );
        self.hard_stop.cancel();
        all_stopped.await;
    }
}

/// The status word of a record (hensu's real statuses).
pub fn status_word(s: RunStatus) -> &'static str {
    s.as_str()
}
