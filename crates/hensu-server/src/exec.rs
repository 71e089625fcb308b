//! Executing runs: the [`ExecutionService`] trait the routes call, and [`InProcessExecutor`],
//! which runs each execution on a tokio task of this process through the engine with the
//! durable wiring of `hensu-host` (a checkpoint at every node boundary, under the run's
//! lease). A multi-machine worker (claims and takeover) can replace it behind the same trait.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use async_trait::async_trait;
use hensu_host::{DurableRun, FsStubFiles, SnapshotRedactor};
use hensu_ir::Workflow;
use hensu_runtime::{
    Boundary, BoundaryHook, CancelToken, Context, Engine, ExecutionPhase, MapRepository,
    ReviewDecision, RunOptions, RunOutcome, RunResult, RunState, RuntimeError, StubProvider,
};
use hensu_store::{
    CancelRequest, OwnerId, RunRecord, RunStatus, StateStore, StoreError, WorkflowRegistry,
};
use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::error::ApiError;
use crate::metrics;

/// The format tag of the workflow stored with a server run (the CLI's `hensu-wire` envelope).
pub const WORKFLOW_FORMAT: &str = "hensu-wire";

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
    pub definition: Value,
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
    /// Executions this service is running now.
    fn running(&self) -> usize;
    /// Stops accepting work and cancels what runs (graceful shutdown: each run writes its
    /// final state and releases its lease).
    async fn shutdown(&self);
}

/// Runs executions on tokio tasks of this process.
pub struct InProcessExecutor {
    store: Arc<dyn StateStore>,
    registry: Arc<dyn WorkflowRegistry>,
    events: broadcast::Sender<RunChanged>,
    /// Where stub answers are read (`<dir>/stubs/<scenario>/…`).
    stub_dir: PathBuf,
    /// Stub agents for every model, whatever credentials the environment has.
    force_stub: bool,
    owner: OwnerId,
    tasks: Mutex<HashMap<String, (CancelToken, tokio::task::JoinHandle<()>)>>,
    closing: std::sync::atomic::AtomicBool,
}

impl InProcessExecutor {
    pub fn new(
        store: Arc<dyn StateStore>,
        registry: Arc<dyn WorkflowRegistry>,
        events: broadcast::Sender<RunChanged>,
        stub_dir: PathBuf,
        force_stub: bool,
    ) -> InProcessExecutor {
        InProcessExecutor {
            store,
            registry,
            events,
            stub_dir,
            force_stub,
            owner: OwnerId::current(),
            tasks: Mutex::new(HashMap::new()),
            closing: std::sync::atomic::AtomicBool::new(false),
        }
    }

    fn engine(
        &self,
        hook: Arc<dyn BoundaryHook>,
        repository: MapRepository,
    ) -> (Engine, Option<SnapshotRedactor>) {
        let config = hensu_providers::ProvidersConfig::default();
        let built = hensu_providers::build_providers_with(
            &config,
            &|name| std::env::var(name).ok(),
            hensu_providers::BuildOptions {
                force_stub: self.force_stub,
                stub: Some(Arc::new(StubProvider::new(
                    Some(Box::new(FsStubFiles::new(self.stub_dir.clone()))),
                    None,
                ))),
                ..Default::default()
            },
        );
        let redact: Option<SnapshotRedactor> = if built.redactor.is_empty() {
            None
        } else {
            let r = built.redactor.clone();
            Some(Arc::new(move |v: &mut Value| r.redact_json(v)))
        };
        // No command runner: a pushed workflow never runs shell commands on the server.
        let mut builder = Engine::builder()
            .action_handlers(hensu_host::action_handlers(None))
            .generic_handlers(hensu_host::generic_handlers())
            .review_handler(Arc::new(hensu_host::DeferredReview::new()))
            .workflows(Arc::new(repository))
            .boundary_hook(hook)
            .options(RunOptions {
                default_agent_timeout: Some(std::time::Duration::from_secs(300)),
                ..RunOptions::default()
            });
        for p in &built.providers {
            builder = builder.provider(p.clone());
        }
        (builder.build(), redact)
    }

    fn notify(&self, tenant: &str, run_id: &str) {
        let _ = self.events.send(RunChanged {
            tenant: tenant.into(),
            run_id: run_id.into(),
        });
    }

    /// Runs `durable` to its next stop on a task; `resume` continues a stored state.
    fn launch(self: &Arc<Self>, l: Launch) {
        let Launch {
            tenant,
            workflow,
            durable,
            resume,
            input,
            hook,
            engine,
        } = l;
        let cancel = CancelToken::new();
        let run_id = durable.run_id().to_string();
        let durable = Arc::new(durable.with_cancel(cancel.clone()));
        hook.bind(durable.clone());
        if let Err(e) = durable.start_heartbeat(hensu_store::DEFAULT_LEASE_TTL) {
            tracing::warn!(run_id, error = %e, "heartbeat did not start");
        }
        metrics::running_delta(1.0);
        let this = Arc::clone(self);
        let c = cancel.clone();
        let id = run_id.clone();
        let handle = tokio::spawn(async move {
            let result = match resume {
                None => engine.run(&workflow, input, &c).await,
                Some((state, decision)) => match engine.prepare(workflow.clone()) {
                    Ok(p) => engine.resume(&p, state, decision, &c).await,
                    Err(e) => RunResult {
                        outcome: RunOutcome::Failed(e),
                        state,
                        duration: std::time::Duration::ZERO,
                    },
                },
            };
            let d = durable.clone();
            let finished = tokio::task::spawn_blocking(move || d.finish(&result)).await;
            match finished {
                Ok(Ok(Some(status))) => metrics::finished(status),
                Ok(Ok(None)) => tracing::warn!(run_id = id, "lease lost; last checkpoint stands"),
                Ok(Err(e)) => tracing::error!(run_id = id, error = %e, "final state not saved"),
                Err(e) => tracing::error!(run_id = id, error = %e, "final write panicked"),
            }
            metrics::running_delta(-1.0);
            this.notify(&tenant, &id);
            if let Ok(mut t) = this.tasks.lock() {
                t.remove(&id);
            }
        });
        if let Ok(mut t) = self.tasks.lock() {
            t.insert(run_id, (cancel, handle));
        }
    }
}

/// A run ready to go on a task.
struct Launch {
    tenant: String,
    workflow: Arc<Workflow>,
    durable: DurableRun,
    /// A stored state to continue (and the review decision), or `None` for a fresh run.
    resume: Option<(RunState, Option<ReviewDecision>)>,
    input: Context,
    hook: Arc<NotifyingHook>,
    engine: Engine,
}

/// The boundary hook of a server run: the durable checkpoint, then a wake-up for the run's
/// streams, and the step latency metric.
pub struct NotifyingHook {
    durable: std::sync::OnceLock<Arc<DurableRun>>,
    tenant: String,
    run_id: String,
    events: broadcast::Sender<RunChanged>,
    last: Mutex<Option<Instant>>,
}

impl NotifyingHook {
    fn new(
        tenant: &str,
        run_id: &str,
        events: broadcast::Sender<RunChanged>,
    ) -> Arc<NotifyingHook> {
        Arc::new(NotifyingHook {
            durable: std::sync::OnceLock::new(),
            tenant: tenant.into(),
            run_id: run_id.into(),
            events,
            last: Mutex::new(None),
        })
    }
    fn bind(&self, d: Arc<DurableRun>) {
        let _ = self.durable.set(d);
    }
}

#[async_trait]
impl BoundaryHook for NotifyingHook {
    async fn at_boundary(&self, state: &RunState) -> Result<Boundary, RuntimeError> {
        let now = Instant::now();
        if let Ok(mut last) = self.last.lock()
            && let Some(prev) = last.replace(now)
        {
            metrics::step_latency(now - prev);
        }
        let Some(d) = self.durable.get() else {
            return Err(RuntimeError::Store {
                message: "internal: the run has no durable store".into(),
            });
        };
        let r = d.at_boundary(state).await;
        let _ = self.events.send(RunChanged {
            tenant: self.tenant.clone(),
            run_id: self.run_id.clone(),
        });
        r
    }
}

fn envelope(definition: &Value) -> Value {
    json!({"format": WORKFLOW_FORMAT, "workflow": definition, "source": null,
           "options": {"scenario": null, "stub": false}})
}

/// The compiled workflow stored with a run.
pub fn stored_workflow(envelope: &Value) -> Result<Workflow, String> {
    let wire = envelope
        .get("workflow")
        .ok_or_else(|| "the run has no stored workflow".to_string())?;
    hensu_ir::from_json(&wire.to_string()).map_err(|e| format!("stored workflow: {e:?}"))
}

fn blocking_err(e: tokio::task::JoinError) -> ApiError {
    ApiError::internal(format!("store task failed: {e}"))
}

/// Ids of server runs: unguessable, and valid under the id rule.
pub fn new_run_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

#[async_trait]
impl ExecutionService for Arc<InProcessExecutor> {
    async fn start(&self, req: StartRequest) -> Result<String, ApiError> {
        if self.closing.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(ApiError::new(
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                "the server is shutting down",
            ));
        }
        let run_id = new_run_id();
        let hook = NotifyingHook::new(&req.tenant, &run_id, self.events.clone());
        let (engine, redact) = self.engine(hook.clone(), req.repository);
        let wf = req.workflow.clone();
        let record = RunRecord::new(
            run_id.clone(),
            wf.id.clone(),
            wf.version.clone(),
            Some(wf.start_node.clone()),
        );
        let initial = RunState::new(
            run_id.clone(),
            wf.id.clone(),
            wf.start_node.clone(),
            req.context.clone(),
        );
        let (store, registry, owner) = (
            self.store.clone(),
            self.registry.clone(),
            self.owner.clone(),
        );
        let env = envelope(&req.definition);
        let (tenant, id) = (req.tenant.clone(), run_id.clone());
        let durable = tokio::task::spawn_blocking(move || {
            // The tenant tag comes first: a run is never visible without its owner.
            registry.tag_run(&id, &tenant, &record.workflow_id)?;
            DurableRun::create(store, &record, &env, &initial, &owner, redact)
        })
        .await
        .map_err(blocking_err)??;
        metrics::started();
        self.notify(&req.tenant, &run_id);
        self.launch(Launch {
            tenant: req.tenant,
            workflow: wf,
            durable,
            resume: None,
            input: req.context,
            hook,
            engine,
        });
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
        let hook = NotifyingHook::new(&tenant, run_id, self.events.clone());
        let (engine, redact) = self.engine(hook.clone(), repository);
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
        let workflow = match stored_workflow(&stored.workflow) {
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
        self.launch(Launch {
            tenant,
            workflow,
            durable,
            resume: Some((state, input.decision)),
            input: Context::default(),
            hook,
            engine,
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

    fn running(&self) -> usize {
        self.tasks.lock().map(|t| t.len()).unwrap_or(0)
    }

    async fn shutdown(&self) {
        self.closing
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let handles: Vec<_> = match self.tasks.lock() {
            Ok(mut t) => t
                .drain()
                .map(|(_, (c, h))| {
                    c.cancel();
                    h
                })
                .collect(),
            Err(_) => Vec::new(),
        };
        for h in handles {
            let _ = h.await;
        }
    }
}

/// The status word of a record (hensu's real statuses).
pub fn status_word(s: RunStatus) -> &'static str {
    s.as_str()
}
