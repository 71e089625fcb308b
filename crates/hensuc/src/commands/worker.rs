//! `hensuc worker`: claims queued and orphaned runs from the configured store and executes
//! them (see `hensu_host::worker`), and `hensuc run --detach` (queues a run for a worker).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use clap::Args;
use hensu_host::launch::{ProjectConfig, RunSetup, StoredWorkflow, Stubs};
use hensu_host::worker::{ClaimedRun, RunExecutor, WorkerEvent, WorkerOptions};
use hensu_runtime::{CancelToken, Context};
use hensu_store::{OwnerId, StoreOptions};
use serde_json::{Value, json};

use crate::commands::run::{Face, run_workflow};
use crate::commands::session::{self, Resumed, Start};
use crate::exit;

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    hensuc worker -d examples\n  \
    hensuc worker --store postgres://hensu@db/hensu -d .")]
pub struct WorkerArgs {
    /// Project directory: `stubs/`, `prompts/`, `commands.yaml` and `hensu.toml` are read
    /// here (and the default store is `<DIR>/.hensu/state.db`).
    #[arg(short = 'd', long = "dir", value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// The store: `postgres://…` or a SQLite path. Default: `HENSU_DATABASE_URL`, else
    /// `hensu.toml` `[store] url`, else `<DIR>/.hensu/state.db`.
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// Runs executed at the same time.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub concurrency: usize,
    /// Lease time-to-live: a run whose worker stops heartbeating is taken over after this
    /// (e.g. `90s`, `500ms`).
    #[arg(long, default_value = "90s", value_parser = parse_duration, value_name = "DURATION")]
    pub lease_ttl: Duration,
    /// How often the worker renews its leases (one statement for all its runs).
    #[arg(long, default_value = "30s", value_parser = parse_duration, value_name = "DURATION")]
    pub heartbeat: Duration,
    /// How often free slots look for queued or orphaned runs.
    #[arg(long, default_value = "500ms", value_parser = parse_duration, value_name = "DURATION")]
    pub poll: Duration,
    /// Exit once nothing runs and nothing is left to claim.
    #[arg(long)]
    pub drain: bool,
    /// Write the worker's events (claimed, taken_over, finished, lease_lost) as JSON lines
    /// to this file.
    #[arg(long, value_name = "FILE.jsonl")]
    pub events: Option<PathBuf>,
    /// Log lines on stderr as text, or as JSON objects carrying each run's trace ids
    /// (docs/observability.md, *Logs*); `RUST_LOG` filters them.
    #[arg(long, value_enum, default_value = "text", value_name = "FORMAT")]
    pub log_format: crate::logs::LogFormat,
}

/// `90s`, `500ms`, `2m` or plain seconds: the one duration rule of flags and hensu.toml.
pub use hensu_project::parse_duration;

/// Runs a claimed run the way `hensuc resume` does, in this worker's project directory.
struct CliExecutor {
    project: Arc<ProjectConfig>,
    /// The runs print nothing on stderr (`--log-format json`: every line is a log line).
    silent: bool,
}

#[async_trait]
impl RunExecutor for CliExecutor {
    async fn execute(&self, run: ClaimedRun) {
        let project = self.project.clone();
        let silent = self.silent;
        let run_id = run.durable.run_id().to_string();
        let r = tokio::task::spawn_blocking(move || execute_claimed(project, run, silent)).await;
        let error = match r {
            Ok(Ok(())) => return,
            Ok(Err(e)) => e.to_string(),
            Err(e) => e.to_string(),
        };
        log_span(&run_id).in_scope(|| tracing::error!(error, "worker: run {run_id}: {error}"));
    }
}

/// A claimed run under the options stored with it; a worker has no terminal, so an
/// interactive run defers its reviews instead.
fn execute_claimed(
    project: Arc<ProjectConfig>,
    run: ClaimedRun,
    silent: bool,
) -> anyhow::Result<()> {
    let ClaimedRun {
        durable, stored, ..
    } = run;
    let run_id = durable.run_id().to_string();
    let prepared = (|| -> anyhow::Result<_> {
        let state =
            hensu_host::restore(&run_id, &stored.snapshot).map_err(|e| anyhow::anyhow!(e))?;
        let envelope =
            StoredWorkflow::decode(&run_id, &stored.workflow).map_err(anyhow::Error::msg)?;
        Ok((state, envelope))
    })();
    let (state, envelope) = match prepared {
        Ok(p) => p,
        Err(e) => {
            let _ = session::block(durable.store().release(durable.lease()));
            return Err(e);
        }
    };
    let setup = RunSetup {
        store: Some(durable.store().clone()),
        stubs: Stubs::default().continuing(&envelope.options),
        review: envelope
            .options
            .review
            .unwrap_or_default()
            .without_terminal(),
        local_commands: true,
        // A local run checks no address (docs/server.md, *Egress*: server runs only).
        egress: None,
        project,
    };
    let span = hensu_host::launch::telemetry::log_span(
        &run_id,
        None,
        envelope.options.traceparent.as_deref(),
    );
    let _in_run = span.enter();
    let workflow = envelope.workflow;
    let repository = crate::commands::run::project_workflows(&setup.project.dir, &workflow);
    let face = Face {
        verbosity: crate::args::Verbosity::default(),
        events: None,
        max_cost: None,
        silent,
    };
    let start = Start::Resume(Box::new(Resumed {
        durable,
        state,
        decision: None,
    }));
    run_workflow(
        &workflow,
        Context::default(),
        &setup,
        face,
        repository,
        start,
    )?;
    Ok(())
}

pub fn execute(args: WorkerArgs) -> anyhow::Result<ExitCode> {
    let workdir = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let location = session::store_location(&workdir, args.store.as_deref())?;
    // The project is read once: every claimed run uses this configuration, and the store is
    // opened with its `[store]` settings as the server's is.
    let project = Arc::new(ProjectConfig::from_project_dir(&workdir).map_err(anyhow::Error::msg)?);
    let store = session::wait(hensu_store::open_store(
        &location,
        project.store_options(StoreOptions {
            lease_ttl: args.lease_ttl,
            ..StoreOptions::default()
        }),
    ))
    .map_err(|e| anyhow::anyhow!("{}: {e}", session::store_label(&location)))?;
    let events: Option<Arc<std::sync::Mutex<std::io::LineWriter<std::fs::File>>>> =
        match &args.events {
            Some(p) => Some(Arc::new(std::sync::Mutex::new(std::io::LineWriter::new(
                std::fs::File::create(p)
                    .map_err(|e| anyhow::anyhow!("cannot create `{}`: {e}", p.display()))?,
            )))),
            None => None,
        };
    let owner = OwnerId::current();
    crate::logs::init(args.log_format);
    let label = session::store_label(&location);
    tracing::info!(
        worker = %owner,
        store = %label,
        concurrency = args.concurrency,
        "worker {owner} on {label} (concurrency {}, lease {:?}, heartbeat {:?})",
        args.concurrency,
        args.lease_ttl,
        args.heartbeat
    );
    let worker_id = owner.to_string();
    let on_event = Arc::new(move |e: WorkerEvent| {
        let line = match &e {
            WorkerEvent::Claimed { run_id } => {
                log_span(run_id).in_scope(|| tracing::info!("worker: claimed run {run_id}"));
                json!({"event": "claimed", "run_id": run_id})
            }
            WorkerEvent::TakenOver { run_id, node } => {
                let at = node.as_deref().unwrap_or("-");
                log_span(run_id).in_scope(|| {
                    tracing::warn!(
                        node = at,
                        "worker: run {run_id} taken over at `{at}` (its previous worker stopped; the node in flight runs again)"
                    );
                });
                json!({"event": "taken_over", "run_id": run_id, "node": node})
            }
            WorkerEvent::Finished { run_id } => {
                log_span(run_id).in_scope(|| tracing::info!("worker: run {run_id} stopped"));
                json!({"event": "finished", "run_id": run_id})
            }
            WorkerEvent::LeaseLost { run_id } => {
                log_span(run_id).in_scope(|| {
                    tracing::warn!("worker: run {run_id}: lease lost (another worker has it)");
                });
                json!({"event": "lease_lost", "run_id": run_id})
            }
            WorkerEvent::StoreError { message } => {
                tracing::warn!("worker: store: {message}");
                json!({"event": "store_error", "message": message})
            }
        };
        if let Some(f) = &events
            && let Ok(mut w) = f.lock()
        {
            let mut line = line;
            line["worker"] = Value::String(worker_id.clone());
            line["at_ms"] = Value::from(hensu_store::now_ms());
            let _ = std::io::Write::write_all(&mut *w, format!("{line}\n").as_bytes());
        }
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let opts = WorkerOptions {
        concurrency: args.concurrency,
        heartbeat: args.heartbeat,
        poll: args.poll,
        exit_when_idle: args.drain,
        // Never a server's run: it needs the server's rules (docs/cli.md, *Workers*).
        scope: hensu_store::ClaimScope::Local,
    };
    let executor = Arc::new(CliExecutor {
        project,
        silent: args.log_format == crate::logs::LogFormat::Json,
    });
    // `[retention]`: the worker purges its store now and then (docs/retention.md).
    let retention = crate::project::settings(&workdir)?.retention;
    let purger = runtime.spawn(hensu_store::retention::purge_periodically(
        store.clone(),
        retention,
        |done| log_purge("worker", done),
    ));
    let stats = runtime.block_on(hensu_host::worker::run_worker(
        store,
        owner,
        executor,
        opts,
        CancelToken::new(),
        on_event,
    ));
    purger.abort();
    tracing::info!(
        claimed = stats.claimed,
        taken_over = stats.taken_over,
        finished = stats.finished,
        "worker done: {} runs claimed ({} taken over), {} finished",
        stats.claimed,
        stats.taken_over,
        stats.finished
    );
    Ok(ExitCode::from(exit::SUCCESS))
}

/// The log span of a local run (a worker claims local runs only: none has a caller's
/// `traceparent` or a tenant).
fn log_span(run_id: &str) -> tracing::Span {
    hensu_host::launch::telemetry::log_span(run_id, None, None)
}

/// One log line per purge that deleted something, or failed.
pub(crate) fn log_purge(who: &str, done: hensu_store::Result<hensu_store::retention::PurgeReport>) {
    match done {
        Ok(r) if r.deleted.is_empty() => {}
        Ok(r) => tracing::info!(
            deleted = r.deleted.len(),
            kept_for_forks = r.kept_for_forks.len(),
            "{who}: purged {} finished runs ([retention]; {} kept for their forks)",
            r.deleted.len(),
            r.kept_for_forks.len()
        ),
        Err(e) => tracing::warn!("{who}: purge failed: {e}"),
    }
}
