//! [`ExecutionService`] for the in-process executor: the operations the routes call.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use async_trait::async_trait;
use hensu_host::DurableRun;
use hensu_host::launch::{self, NewRun, RunHandle, StoredWorkflow};
use hensu_host::worker::{WorkerEvent, WorkerOptions};
use hensu_runtime::{CancelToken, Context, ExecutionPhase, MapRepository, ReviewDecision};
use hensu_store::{CancelRequest, RunStatus, StoreError};

use super::{
    Claims, ExecutionService, InProcessExecutor, PauseRequest, ReadyRun, ResumeInput, StartRequest,
    Started,
};
use crate::error::ApiError;
use crate::metrics;

#[async_trait]
impl ExecutionService for Arc<InProcessExecutor> {
    fn redactor(&self) -> Option<hensu_host::SnapshotRedactor> {
        self.redact.clone()
    }

    async fn start(&self, req: StartRequest) -> Result<Started, ApiError> {
        let (created, run_id) = self.create(&req, false).await?;
        if let RunHandle::Replayed(_) = created {
            return Ok(Started {
                run_id,
                replayed: true,
            });
        }
        // `Elsewhere`: between its creation and its lease the run looked claimable, and a
        // takeover worker (of this server or another) claimed it: it runs there.
        if let RunHandle::Leased(durable) = created {
            self.spawn_run(ReadyRun {
                tenant: req.tenant,
                workflow: req.workflow,
                durable: *durable,
                resume: None,
                input: req.context,
                repository: req.repository,
                cancel: CancelToken::new(),
                traceparent: req.traceparent,
            });
        }
        Ok(Started {
            run_id,
            replayed: false,
        })
    }

    async fn queue(&self, req: StartRequest) -> Result<Started, ApiError> {
        let (created, run_id) = self.create(&req, true).await?;
        Ok(Started {
            run_id,
            replayed: matches!(created, RunHandle::Replayed(_)),
        })
    }

    async fn queue_many(
        &self,
        tenant: &str,
        workflow: &hensu_ir::Workflow,
        contexts: &[Context],
    ) -> Result<Vec<String>, ApiError> {
        self.refuse_when_closing()?;
        let stored = StoredWorkflow {
            workflow: workflow.clone(),
            source: None,
            options: self.setup.stored_options(),
        };
        let ids = launch::create_queued_tenant_runs(
            self.registry.as_ref(),
            tenant,
            &stored,
            contexts,
            self.redact.as_ref(),
        )
        .await?;
        for run_id in &ids {
            metrics::started(tenant);
            self.notify(tenant, run_id);
        }
        Ok(ids)
    }

    async fn resume(
        &self,
        run_id: &str,
        input: ResumeInput,
        repository: MapRepository,
    ) -> Result<(), ApiError> {
        let record = self.store.record(run_id).await?;
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
            .run_tenant(run_id)
            .await?
            .ok_or_else(ApiError::not_found)?;
        let opened =
            DurableRun::reopen(self.store.clone(), run_id, &self.owner, self.redact.clone()).await;
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
        let refuse = async |e: ApiError| {
            let _ = durable.store().release(durable.lease()).await;
            Err(e)
        };
        let mut state = match hensu_host::restore(run_id, &stored.snapshot) {
            Ok(s) => s,
            Err(e) => return refuse(ApiError::internal(e)).await,
        };
        let (workflow, traceparent) = match StoredWorkflow::decode(run_id, &stored.workflow) {
            Ok(s) => (Arc::new(s.workflow), s.options.traceparent),
            Err(e) => return refuse(ApiError::internal(e)).await,
        };
        match (&state.phase, &input.decision) {
            (ExecutionPhase::Awaiting { .. }, None) => {
                let (node, corr) = hensu_runtime::pending_review(&state).unwrap_or(("?", "?"));
                return refuse(ApiError::bad_request(format!(
                    "Execution is awaiting a review decision for node '{node}' (correlation id \
                     '{corr}'); resume with a decision of approve, reject, or backtrack"
                )))
                .await;
            }
            (ExecutionPhase::Awaiting { correlation_id, .. }, Some(_)) => {
                // Any review the run waits for (docs/server.md, *Pending reviews*): the
                // decision goes to that one; the others wait on.
                let given = input.correlation_id.as_deref().unwrap_or_default();
                let routed =
                    given == correlation_id || hensu_runtime::route_review(&mut state, given);
                if !routed {
                    let waiting: Vec<String> = hensu_runtime::waiting_reviews(&state)
                        .into_iter()
                        .map(|w| format!("'{}'", w.correlation_id))
                        .collect();
                    return refuse(ApiError::bad_request(format!(
                        "Correlation id mismatch: expected one of {}, got '{given}'",
                        waiting.join(", ")
                    )))
                    .await;
                }
            }
            (_, Some(_)) => {
                return refuse(ApiError::bad_request(
                    "Cannot apply review decision: execution is not awaiting review",
                ))
                .await;
            }
            (_, None) => {}
        }
        // A gated tool call is approved (optionally with edited arguments) or rejected.
        if let Some(d) = &input.decision
            && let Some(problem) =
                hensu_runtime::tool_decision_problem(&state, d, input.arguments_given)
        {
            return refuse(ApiError::bad_request(problem)).await;
        }
        if let Some(ReviewDecision::Backtrack { target, .. }) = &input.decision
            && !workflow.nodes.contains_key(target)
        {
            return refuse(ApiError::bad_request(format!("Node not found: {target}"))).await;
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
        metrics::resumed(&tenant);
        self.spawn_run(ReadyRun {
            tenant,
            workflow,
            durable,
            resume: Some((state, input.decision)),
            input: Context::default(),
            repository,
            cancel: CancelToken::new(),
            traceparent,
        });
        Ok(())
    }

    async fn cancel(&self, run_id: &str) -> Result<CancelRequest, ApiError> {
        let r = self.store.request_cancel(run_id).await?;
        if let CancelRequest::Requested { .. } = r
            && let Ok(t) = self.tasks.lock()
            && let Some((c, _)) = t.get(run_id)
        {
            c.cancel();
        }
        if let CancelRequest::Cancelled(rec) = &r {
            let tenant = self.registry.run_tenant(run_id).await?;
            metrics::finished(tenant.as_deref().unwrap_or(""), rec.status);
            if let Some(tenant) = tenant {
                self.notify(&tenant, run_id);
            }
        }
        Ok(r)
    }

    async fn pause(&self, run_id: &str) -> Result<PauseRequest, ApiError> {
        Ok(self.store.request_pause(run_id).await?)
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
            // The tenants' runs only: a local run (`hensuc run --detach` on this database) is
            // a worker's, and is never even claimed here.
            scope: hensu_store::ClaimScope::Tenants,
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

impl InProcessExecutor {
    /// 503 once the server is shutting down: nothing new is stored.
    fn refuse_when_closing(&self) -> Result<(), ApiError> {
        if self.closing.load(Ordering::SeqCst) {
            return Err(ApiError::new(
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                "the server is shutting down",
            ));
        }
        Ok(())
    }

    /// Stores a new run of `req` (leased to this server, or `queued` for any worker) and
    /// announces it; a replayed idempotent start stores and announces nothing.
    async fn create(
        &self,
        req: &StartRequest,
        queued: bool,
    ) -> Result<(RunHandle, String), ApiError> {
        self.refuse_when_closing()?;
        let stored = StoredWorkflow {
            workflow: (*req.workflow).clone(),
            source: None,
            options: launch::StoredOptions {
                traceparent: req.traceparent.clone(),
                ..self.setup.stored_options()
            },
        };
        let created = launch::create_run(
            &self.store,
            NewRun {
                stored: &stored,
                input: &req.context,
                queued,
                owner: &self.owner,
                redact: self.redact.clone(),
                tenant: Some((self.registry.as_ref(), &req.tenant)),
                idempotency: req.idempotency.as_ref(),
            },
        )
        .await?;
        let run_id = created.run_id().to_string();
        if !matches!(created, RunHandle::Replayed(_)) {
            metrics::started(&req.tenant);
            self.notify(&req.tenant, &run_id);
        }
        Ok((created, run_id))
    }
}
