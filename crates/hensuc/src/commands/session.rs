//! The durable session of `hensuc run` / `resume` (and the store paths `cancel` / `pause` use):
//! opening the project's state store, and [`Session`] — the run created with
//! [`hensu_host::launch::create_run`] (or reopened), checkpoints at every node boundary through
//! [`hensu_host::DurableRun`], and the final status once the run ends.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hensu_host::launch::{self, NewRun, RunHandle, RunSetup, SourceRef, StoredWorkflow};
use hensu_host::{DurableRun, SnapshotRedactor};
use hensu_ir::Workflow;
use hensu_runtime::{
    CancelToken, Context, Engine, ReviewDecision, RunOutcome, RunResult, RunState,
};
use hensu_store::{OwnerId, StateStore};
use serde_json::Value;

/// The store path under a project directory.
pub fn store_path(dir: &Path) -> PathBuf {
    dir.join(hensu_store::STATE_DB)
}

/// The environment variable naming the store (a `postgres://…` URL or a SQLite path); it
/// wins over `hensu.toml`.
pub const DATABASE_URL_ENV: &str = "HENSU_DATABASE_URL";

/// The store named by `--store` ([`choose_store`]): one command per process, so one store.
static CHOSEN_STORE: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Makes `url` the store of this process's command, over `HENSU_DATABASE_URL` and
/// `hensu.toml` (`--store URL` of `run`, `runs`, `resume`, `cancel`, `pause`).
pub fn choose_store(url: &str) {
    let _ = CHOSEN_STORE.set(url.to_string());
}

impl crate::args::StoreFlag {
    /// Makes `--store`, when given, the store of this process's command (over the
    /// environment and `hensu.toml`).
    pub fn apply(&self) {
        if let Some(url) = &self.store {
            choose_store(url);
        }
    }
}

/// The store configured for a project, if not the default SQLite file: `--store`, else
/// `HENSU_DATABASE_URL`, else `[store] url = "…"` in `<dir>/hensu.toml`. `None`: `<dir>/.hensu/state.db`.
pub fn configured_store_url(dir: &Path) -> anyhow::Result<Option<String>> {
    if let Some(url) = CHOSEN_STORE.get() {
        return Ok(Some(url.clone()));
    }
    if let Ok(url) = std::env::var(DATABASE_URL_ENV)
        && !url.trim().is_empty()
    {
        return Ok(Some(url));
    }
    Ok(crate::project::settings(dir)?.store.url)
}

/// `[store] commit` of the project under `dir` (docs/cli.md, *Durable runs on many machines*).
fn store_commit(dir: &Path) -> anyhow::Result<hensu_store::CommitMode> {
    Ok(crate::project::settings(dir)?
        .store
        .commit
        .unwrap_or_default())
}

/// The store a command uses: `url` (e.g. `--store`) when given, else the configured one, else
/// `<dir>/.hensu/state.db`.
pub fn store_location(dir: &Path, url: Option<&str>) -> anyhow::Result<String> {
    Ok(match url {
        Some(u) => u.to_string(),
        None => match configured_store_url(dir)? {
            Some(u) => u,
            None => store_path(dir).display().to_string(),
        },
    })
}

/// A store location fit for messages: a URL's user and password are left out
/// ([`hensu_store::StoreUrl::label_of`]).
pub fn store_label(location: &str) -> String {
    hensu_store::StoreUrl::label_of(location)
}

/// The store options: the defaults, plus two test hooks the crash test uses to kill a run in
/// the middle of a snapshot compaction (never set in normal use):
/// `HENSU_INTERNAL_SNAPSHOT_EVERY=N` compacts after every N steps, and
/// `HENSU_INTERNAL_COMPACTION_ABORT=insert|delete` aborts the process inside a compaction.
pub fn store_options() -> hensu_store::StoreOptions {
    let mut opts = hensu_store::StoreOptions::default();
    if let Some(n) = std::env::var("HENSU_INTERNAL_SNAPSHOT_EVERY")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        opts.snapshot_policy = hensu_store::SnapshotPolicy::every(n.max(1));
    }
    let stage = match std::env::var("HENSU_INTERNAL_COMPACTION_ABORT").as_deref() {
        Ok("insert") => Some(hensu_store::CompactionStage::AfterSnapshotInsert),
        Ok("delete") => Some(hensu_store::CompactionStage::AfterOldSnapshotDelete),
        _ => None,
    };
    opts.failpoint = stage.map(|stage| hensu_store::Failpoint {
        stage,
        action: hensu_store::FailAction::Abort,
    });
    opts
}

/// The runtime the CLI's own store calls (`runs`, `cancel`, opening a store, creating a run)
/// are awaited on, outside a run's engine runtime. Its one worker thread lives as long as the
/// process, so a PostgreSQL connection opened here keeps its I/O task running while a run's
/// own runtime uses the store, and the lease heartbeat task runs here.
fn store_runtime() -> anyhow::Result<&'static tokio::runtime::Runtime> {
    static RT: std::sync::OnceLock<Result<tokio::runtime::Runtime, String>> =
        std::sync::OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("hensu-store-io")
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(|e| anyhow::anyhow!("cannot start the store's runtime: {e}"))
}

/// Awaits one store call from the CLI's synchronous code (not from inside a runtime).
pub fn wait<T, E: std::fmt::Display>(
    call: impl std::future::Future<Output = Result<T, E>>,
) -> anyhow::Result<T> {
    block(call)?.map_err(|e| anyhow::anyhow!("{e}"))
}

/// [`wait`] keeping the call's own result (its typed error).
pub fn block<F: std::future::Future>(call: F) -> anyhow::Result<F::Output> {
    Ok(store_runtime()?.block_on(call))
}

fn open_at(location: &str, dir: &Path) -> anyhow::Result<Arc<dyn StateStore>> {
    let opts = hensu_store::StoreOptions {
        commit: store_commit(dir)?,
        ..store_options()
    };
    wait(hensu_store::open_store(location, opts)).map_err(|e| {
        anyhow::anyhow!(
            "{}: {e}\n  (nothing was written; `hensuc run --no-store` runs without it)",
            store_label(location)
        )
    })
}

/// Opens the project's store (see [`store_location`]); a clear error for a corrupt or
/// foreign-version file or an unreachable server.
pub fn open_store(dir: &Path) -> anyhow::Result<Arc<dyn StateStore>> {
    open_at(&store_location(dir, None)?, dir)
}

/// Opens an existing store (None when the project uses the default SQLite file and has none
/// yet).
pub fn open_existing(dir: &Path) -> anyhow::Result<Option<Arc<dyn StateStore>>> {
    let location = store_location(dir, None)?;
    if configured_store_url(dir)?.is_none() && !store_path(dir).exists() {
        return Ok(None);
    }
    open_at(&location, dir).map(Some)
}

/// The store holding run `run_id` under `dir`: an error naming the missing store file when
/// the project has none (the `cancel`, `pause`, `resume`, `fork` and `redrive` of a run).
pub fn open_for_run(dir: &Path, run_id: &str) -> anyhow::Result<Arc<dyn StateStore>> {
    match open_existing(dir)? {
        Some(store) => Ok(store),
        None => anyhow::bail!(
            "no run `{run_id}`: {} does not exist",
            store_path(dir).display()
        ),
    }
}

/// How `run_workflow` starts: a fresh run (stored when the setup has a store) or a resumed
/// one.
pub enum Start {
    Fresh {
        /// The source file, recorded with the run.
        source: Option<PathBuf>,
    },
    Resume(Box<Resumed>),
}

/// A run reopened by `hensuc resume` (its lease held).
pub struct Resumed {
    pub durable: DurableRun,
    pub state: RunState,
    pub decision: Option<ReviewDecision>,
}

/// The durable part of one `hensuc run`/`resume` invocation.
pub struct Session {
    durable: Option<Arc<DurableRun>>,
    resume: Option<(RunState, Option<ReviewDecision>)>,
}

impl Start {
    /// Creates the run in the store (fresh) and prints its id; wires cancellation (a pause
    /// request comes back with each checkpoint).
    pub fn open(
        self,
        workflow: &Workflow,
        input: &Context,
        setup: &RunSetup,
        redactor: &Arc<hensu_providers::Redactor>,
        cancel: &CancelToken,
    ) -> anyhow::Result<Session> {
        let workdir = setup.project.dir.as_path();
        let redact: Option<SnapshotRedactor> = if redactor.is_empty() {
            None
        } else {
            let r = redactor.clone();
            Some(Arc::new(move |v: &mut Value| r.redact_json(v)))
        };
        let (durable, resume) = match self {
            Start::Fresh { source } => {
                let Some(store) = &setup.store else {
                    return Ok(Session::none());
                };
                let stored = StoredWorkflow {
                    workflow: workflow.clone(),
                    source: source.as_deref().map(SourceRef::of),
                    options: setup.stored_options(),
                };
                let created = wait(launch::create_run(
                    store,
                    NewRun {
                        stored: &stored,
                        input,
                        queued: false,
                        owner: &OwnerId::current(),
                        redact,
                        tenant: None,
                        idempotency: None,
                    },
                ))?;
                let durable = match created {
                    RunHandle::Leased(durable) => *durable,
                    // A local run has no idempotency key: `Replayed` never comes back.
                    RunHandle::Elsewhere(run_id) | RunHandle::Replayed(run_id) => anyhow::bail!(
                        "run {run_id} was claimed by a worker as soon as it was stored; follow it \
                         with `hensuc attach {run_id}`"
                    ),
                };
                let run_id = durable.run_id();
                eprintln!(
                    "run {run_id} (state: {}; resume with `hensuc resume {run_id}`)",
                    store_label(&store_location(workdir, None)?)
                );
                (durable, None)
            }
            Start::Resume(r) => {
                let Resumed {
                    durable,
                    state,
                    decision,
                } = *r;
                (durable.with_redactor(redact), Some((state, decision)))
            }
        };
        let durable = durable.with_cancel(cancel.clone());
        // The heartbeat task runs on the store runtime, beside the run's own.
        let _in_store_runtime = store_runtime()?.enter();
        durable
            .start_heartbeat(hensu_store::DEFAULT_LEASE_TTL)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(Session {
            durable: Some(Arc::new(durable)),
            resume,
        })
    }
}

impl Session {
    fn none() -> Session {
        Session {
            durable: None,
            resume: None,
        }
    }

    pub fn run_id(&self) -> Option<&str> {
        self.durable.as_ref().map(|d| d.run_id())
    }

    /// Runs (or resumes) with the session's store as checkpointer and records the outcome.
    pub async fn run(
        self,
        engine: &Engine,
        workflow: &Workflow,
        input: Context,
        cancel: &CancelToken,
        listener: &dyn hensu_runtime::ExecutionListener,
        silent: bool,
    ) -> RunResult {
        let mut ctx = hensu_runtime::RunCtx::new(cancel).listener(listener);
        if let Some(d) = &self.durable {
            // The run's waits are durable (docs/language.md, *Timers and signals*).
            ctx = ctx.run_id(d.run_id()).waiter(d.as_ref());
        }
        let ctx = ctx.checkpointer_opt(
            self.durable
                .as_deref()
                .map(|d| d as &dyn hensu_runtime::Checkpointer),
        );
        // The calls of the node in flight are journaled in the run's log.
        let journal = self.durable.as_ref().map(|d| d.journal());
        let ctx = ctx.journal(journal.as_ref());
        let result = match self.resume {
            None => engine.run(workflow, input, ctx).await,
            Some((state, decision)) => match engine.prepare(Arc::new(workflow.clone())) {
                Ok(p) => engine.resume(&p, state, decision, ctx).await,
                Err(e) => RunResult {
                    outcome: RunOutcome::Failed(e),
                    state,
                    duration: std::time::Duration::ZERO,
                },
            },
        };
        if let Some(d) = &self.durable {
            let id = d.run_id();
            let (said, problem) = match d.finish(&result).await {
                Ok(Some(status)) => {
                    let mut text = format!("run {id} {status} (state saved)");
                    if status == hensu_store::RunStatus::Paused {
                        // Every wait of its flows: the main flow's, a child's, a branch's.
                        let waits = hensu_runtime::waiting_waits(&result.state);
                        for w in &waits {
                            eprintln!("{}", waiting_note(d.run_id(), w));
                        }
                        if !waits.is_empty()
                            && hensu_runtime::pending_review(&result.state).is_none()
                        {
                            return result;
                        }
                        let call = hensu_runtime::reviewed_tool_call(&result.state);
                        match hensu_runtime::pending_review(&result.state) {
                            // A gated tool call (docs/mcp.md, *Tool approval*).
                            Some((node, corr)) if let Some(call) = call => text.push_str(&format!(
                                "\n  node `{node}` waits for the approval of a call of tool `{}` \
                                 with {}: `hensuc resume {corr} --approve` (optionally \
                                 --arguments JSON) or --reject REASON",
                                call.tool, call.arguments
                            )),
                            Some((node, _)) => text.push_str(&format!(
                                "\n  node `{node}` waits for review: `hensuc resume {id} --approve` \
                                 (or --reject REASON, --backtrack NODE)"
                            )),
                            None => text.push_str(&format!(
                                "\n  continue with `hensuc resume {id}`"
                            )),
                        }
                    }
                    (text, false)
                }
                Ok(None) => (
                    format!(
                        "run {id}: the state store lost this run's lease; its last checkpoint stands"
                    ),
                    true,
                ),
                Err(e) => (
                    format!("warning: run {id}: the final state was not saved: {e}"),
                    true,
                ),
            };
            // A silent face (a worker logging JSON lines) says it in a log line.
            match (silent, problem) {
                (false, _) => eprintln!("{said}"),
                (true, false) => tracing::info!("{said}"),
                (true, true) => tracing::warn!("{said}"),
            }
        }
        result
    }
}

/// How a run suspended at a `wait` or `awaitSignal` node continues (docs/language.md,
/// *Timers and signals*).
fn waiting_note(run_id: &str, w: &hensu_runtime::WaitingWait) -> String {
    let mut out = format!("  node `{}`", w.node_id);
    if !w.within.is_empty() {
        let within: Vec<String> = w.within.iter().map(|n| format!("`{n}`")).collect();
        out.push_str(&format!(" (inside {})", within.join(" › ")));
    }
    out.push_str(" waits");
    if let Some(signal) = &w.signal {
        out.push_str(&format!(" for signal `{signal}`"));
    }
    if let Some(at) = w.wake_at_ms {
        let word = if w.signal.is_some() {
            " (timeout"
        } else {
            " until"
        };
        out.push_str(&format!("{word} {}", hensu_store::rfc3339(at)));
        if w.signal.is_some() {
            out.push(')');
        }
    }
    out.push_str(
        ": no process holds it meanwhile; a worker (`hensuc worker`) or server continues it",
    );
    if let Some(signal) = &w.signal {
        out.push_str(&format!(
            " when `hensuc signal {run_id} {signal} -c JSON` sends the signal"
        ));
    } else {
        out.push_str(&format!(
            " on time, or `hensuc resume {run_id}` waits for it here"
        ));
    }
    out
}
