//! `hensuc runs [-d DIR]` lists the runs of the project's state store
//! (`<dir>/.hensu/state.db`); `hensuc runs show ID` shows one run's history.
//!
//! Also the durable side of `hensuc run`/`resume`: opening the store, the stored workflow
//! envelope, and [`Session`] (checkpoints at every node boundary through
//! [`hensu_host::DurableRun`]).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Subcommand};
use hensu_host::{DurableRun, SnapshotRedactor};
use hensu_ir::Workflow;
use hensu_runtime::{
    BoundaryHook, CancelToken, Context, Engine, ReviewDecision, RunOutcome, RunResult, RunState,
};
use hensu_store::{OwnerId, RunRecord, SqliteStore, StateStore, rfc3339};
use serde_json::{Value, json};

use crate::exit;

/// The format tag of the workflow stored with a run.
pub const WORKFLOW_FORMAT: &str = "hensu-wire";

#[derive(Args, Debug)]
pub struct RunsArgs {
    /// Project directory (the store is `<DIR>/.hensu/state.db`).
    #[arg(short = 'd', long = "dir", value_name = "DIR", global = true)]
    pub dir: Option<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Option<RunsCommand>,
}

#[derive(Subcommand, Debug)]
pub enum RunsCommand {
    /// Show a run: its record, path and every checkpoint.
    Show {
        /// The run id.
        id: String,
    },
}

/// The store path under a project directory.
pub fn store_path(dir: &Path) -> PathBuf {
    dir.join(hensu_store::STATE_DB)
}

/// The pause flag of a run (`hensuc pause`), polled at node boundaries.
pub fn pause_flag(dir: &Path, run_id: &str) -> PathBuf {
    dir.join(".hensu").join("pause").join(run_id)
}

/// Opens the project's store; a clear error for a corrupt or foreign-version file.
pub fn open_store(dir: &Path) -> anyhow::Result<Arc<SqliteStore>> {
    SqliteStore::open(dir).map(Arc::new).map_err(|e| {
        anyhow::anyhow!("{e}\n  (nothing was written; `hensuc run --no-store` runs without it)")
    })
}

/// Opens an existing store (None when the project has none yet).
pub fn open_existing(dir: &Path) -> anyhow::Result<Option<Arc<SqliteStore>>> {
    if !store_path(dir).exists() {
        return Ok(None);
    }
    open_store(dir).map(Some)
}

/// FNV-1a 64 of the source bytes (stable across versions and platforms).
pub fn content_hash(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("fnv1a64:{h:016x}")
}

/// What is stored with a run besides its state: the compiled workflow (resume does not need
/// the source), where it came from and the run's options.
pub fn workflow_envelope(
    workflow: &Workflow,
    source: Option<&Path>,
    scenario: Option<&str>,
    stub: bool,
) -> anyhow::Result<Value> {
    let wire: Value = serde_json::from_str(&hensu_ir::to_json(workflow))
        .map_err(|e| anyhow::anyhow!("internal: the workflow artifact is not JSON: {e}"))?;
    let source = source.map(|p| {
        let abs = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let hash = std::fs::read(p).ok().map(|b| content_hash(&b));
        json!({"path": abs.display().to_string(), "hash": hash})
    });
    Ok(json!({
        "format": WORKFLOW_FORMAT,
        "workflow": wire,
        "source": source,
        "options": {"scenario": scenario, "stub": stub},
    }))
}

/// The workflow stored with a run.
pub fn stored_workflow(run_id: &str, envelope: &Value) -> anyhow::Result<Workflow> {
    if envelope.get("format").and_then(Value::as_str) != Some(WORKFLOW_FORMAT) {
        anyhow::bail!(
            "the workflow stored with run `{run_id}` is not in a format this hensuc reads"
        );
    }
    let wire = envelope
        .get("workflow")
        .ok_or_else(|| anyhow::anyhow!("run `{run_id}` has no stored workflow"))?;
    let text = serde_json::to_string(wire)
        .map_err(|e| anyhow::anyhow!("run `{run_id}`: stored workflow: {e}"))?;
    hensu_ir::from_json(&text).map_err(|e| {
        anyhow::anyhow!("the workflow stored with run `{run_id}` does not load: {e:?}")
    })
}

/// How `run_workflow` starts: a fresh run (stored unless `--no-store`) or a resumed one.
pub enum Start {
    Fresh {
        /// The source file, recorded with the run.
        source: Option<PathBuf>,
        store: bool,
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
    /// Creates the run in the store (fresh) and prints its id; wires cancellation and the
    /// pause flag.
    pub fn open(
        self,
        workflow: &Workflow,
        input: &Context,
        workdir: &Path,
        args: &crate::commands::run::RunArgs,
        redactor: &Arc<hensu_providers::Redactor>,
        cancel: &CancelToken,
    ) -> anyhow::Result<Session> {
        let redact: Option<SnapshotRedactor> = if redactor.is_empty() {
            None
        } else {
            let r = redactor.clone();
            Some(Arc::new(move |v: &mut Value| r.redact_json(v)))
        };
        let (durable, resume) = match self {
            Start::Fresh { store: false, .. } => return Ok(Session::none()),
            Start::Fresh {
                source,
                store: true,
            } => {
                let store = open_store(workdir)?;
                let run_id = new_run_id();
                let envelope = workflow_envelope(
                    workflow,
                    source.as_deref(),
                    args.scenario.as_deref(),
                    args.stub,
                )?;
                let record = RunRecord::new(
                    run_id.clone(),
                    workflow.id.clone(),
                    workflow.version.clone(),
                    Some(workflow.start_node.clone()),
                );
                let initial = RunState::new(
                    run_id.clone(),
                    workflow.id.clone(),
                    workflow.start_node.clone(),
                    input.clone(),
                );
                let durable = DurableRun::create(
                    store,
                    &record,
                    &envelope,
                    &initial,
                    &OwnerId::current(),
                    redact,
                )
                .map_err(|e| anyhow::anyhow!("{e}"))?;
                eprintln!(
                    "run {run_id} (state: {}; resume with `hensuc resume {run_id}`)",
                    store_path(workdir).display()
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
        let run_id = durable.run_id().to_string();
        let durable = durable
            .with_cancel(cancel.clone())
            .with_pause_flag(pause_flag(workdir, &run_id));
        durable
            .start_heartbeat(hensu_store::DEFAULT_LEASE_TTL)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(Session {
            durable: Some(Arc::new(durable)),
            resume,
        })
    }
}

fn new_run_id() -> String {
    let u = uuid::Uuid::new_v4().simple().to_string();
    format!("r{}", &u[..11])
}

impl Session {
    fn none() -> Session {
        Session {
            durable: None,
            resume: None,
        }
    }

    /// The checkpoint hook for the engine.
    pub fn hook(&self) -> Option<Arc<dyn BoundaryHook>> {
        self.durable
            .as_ref()
            .map(|d| d.clone() as Arc<dyn BoundaryHook>)
    }

    pub fn run_id(&self) -> Option<&str> {
        self.durable.as_ref().map(|d| d.run_id())
    }

    /// Runs (or resumes) and records the outcome in the store.
    pub async fn run(
        self,
        engine: &Engine,
        workflow: &Workflow,
        input: Context,
        cancel: &CancelToken,
    ) -> RunResult {
        let result = match self.resume {
            None => engine.run(workflow, input, cancel).await,
            Some((state, decision)) => match engine.prepare(Arc::new(workflow.clone())) {
                Ok(p) => engine.resume(&p, state, decision, cancel).await,
                Err(e) => RunResult {
                    outcome: RunOutcome::Failed(e),
                    state,
                    duration: std::time::Duration::ZERO,
                },
            },
        };
        if let Some(d) = &self.durable {
            match d.finish(&result) {
                Ok(Some(status)) => {
                    eprintln!("run {} {status} (state saved)", d.run_id());
                    if status == hensu_store::RunStatus::Paused {
                        match hensu_runtime::pending_review(&result.state) {
                            Some((node, _)) => eprintln!(
                                "  node `{node}` waits for review: `hensuc resume {} --approve` \
                                 (or --reject REASON, --backtrack NODE)",
                                d.run_id()
                            ),
                            None => eprintln!("  continue with `hensuc resume {}`", d.run_id()),
                        }
                    }
                }
                Ok(None) => eprintln!(
                    "run {}: the state store lost this run's lease; its last checkpoint stands",
                    d.run_id()
                ),
                Err(e) => eprintln!(
                    "warning: run {}: the final state was not saved: {e}",
                    d.run_id()
                ),
            }
        }
        result
    }
}

pub fn execute(args: RunsArgs) -> anyhow::Result<ExitCode> {
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let Some(store) = open_existing(&dir)? else {
        match &args.command {
            None => {
                if args.json {
                    println!("[]");
                } else {
                    eprintln!(
                        "no runs yet ({} does not exist)",
                        store_path(&dir).display()
                    );
                }
                return Ok(ExitCode::from(exit::SUCCESS));
            }
            Some(RunsCommand::Show { id }) => {
                anyhow::bail!(
                    "no run `{id}`: {} does not exist",
                    store_path(&dir).display()
                )
            }
        }
    };
    match &args.command {
        None => list(store.as_ref(), args.json),
        Some(RunsCommand::Show { id }) => show(store.as_ref(), id, args.json),
    }
}

fn list(store: &dyn StateStore, as_json: bool) -> anyhow::Result<ExitCode> {
    let runs = store.list().map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut out = std::io::stdout().lock();
    if as_json {
        let rows: Vec<Value> = runs.iter().map(record_json).collect();
        let _ = writeln!(out, "{}", json!({"format_version": "1", "runs": rows}));
        return Ok(ExitCode::from(exit::SUCCESS));
    }
    if runs.is_empty() {
        eprintln!("no runs yet");
        return Ok(ExitCode::from(exit::SUCCESS));
    }
    let rows: Vec<[String; 6]> = runs
        .iter()
        .map(|r| {
            [
                r.run_id.clone(),
                r.workflow_id.clone(),
                status_text(r),
                r.current_node.clone().unwrap_or_else(|| "-".into()),
                rfc3339(r.started_at),
                rfc3339(r.updated_at),
            ]
        })
        .collect();
    let header = ["RUN", "WORKFLOW", "STATUS", "NODE", "STARTED", "UPDATED"];
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                s.push_str(c);
            } else {
                s.push_str(&format!("{c:<w$}  ", w = widths[i]));
            }
        }
        s
    };
    let _ = writeln!(out, "{}", line(&header.map(String::from)));
    for row in &rows {
        let _ = writeln!(out, "{}", line(row));
    }
    Ok(ExitCode::from(exit::SUCCESS))
}

fn status_text(r: &RunRecord) -> String {
    let mut s = r.status.to_string();
    if let Some(e) = &r.exit_status {
        s.push_str(&format!(" ({e})"));
    }
    if r.cancel_requested && !r.status.is_terminal() {
        s.push_str(" (cancel requested)");
    }
    s
}

fn record_json(r: &RunRecord) -> Value {
    json!({
        "run_id": r.run_id,
        "workflow": r.workflow_id,
        "workflow_version": r.workflow_version,
        "status": r.status.as_str(),
        "current_node": r.current_node,
        "started": rfc3339(r.started_at),
        "updated": rfc3339(r.updated_at),
        "correlation_id": r.correlation_id,
        "exit_status": r.exit_status,
        "step": r.step,
        "cancel_requested": r.cancel_requested,
    })
}

fn show(store: &dyn StateStore, id: &str, as_json: bool) -> anyhow::Result<ExitCode> {
    let stored = store.load(id).map_err(|e| anyhow::anyhow!("{e}"))?;
    let history = store.history(id).map_err(|e| anyhow::anyhow!("{e}"))?;
    let state = hensu_host::restore(id, &stored.snapshot).ok();
    let r = &stored.record;
    let source = stored
        .workflow
        .pointer("/source/path")
        .and_then(Value::as_str)
        .map(String::from);
    let mut out = std::io::stdout().lock();
    if as_json {
        let v = json!({
            "format_version": "1",
            "record": record_json(r),
            "source": source,
            "path": state.as_ref().map(|s| s.path()),
            "steps": state.as_ref().map(|s| s.steps),
            "history": history.iter().map(|h| json!({
                "step": h.step,
                "at": rfc3339(h.at),
                "status": h.status.as_str(),
                "node": h.node,
                "snapshot_bytes": h.snapshot_bytes,
            })).collect::<Vec<_>>(),
        });
        let _ = writeln!(out, "{v}");
        return Ok(ExitCode::from(exit::SUCCESS));
    }
    let _ = writeln!(out, "run         {}", r.run_id);
    let _ = writeln!(
        out,
        "workflow    {} (version {})",
        r.workflow_id, r.workflow_version
    );
    if let Some(s) = &source {
        let _ = writeln!(out, "source      {s}");
    }
    let _ = writeln!(out, "status      {}", status_text(r));
    if let Some(n) = &r.current_node {
        let _ = writeln!(out, "node        {n}");
    }
    if let Some(c) = &r.correlation_id {
        let _ = writeln!(out, "correlation {c}");
    }
    let _ = writeln!(out, "started     {}", rfc3339(r.started_at));
    let _ = writeln!(out, "updated     {}", rfc3339(r.updated_at));
    if let Some(s) = &state {
        let path = s.path();
        let _ = writeln!(
            out,
            "path        {}",
            if path.is_empty() {
                "(no node completed)".to_string()
            } else {
                path.join(" → ")
            }
        );
        let _ = writeln!(out, "steps       {}", s.steps);
        if !s.backtracks.is_empty() {
            let _ = writeln!(out, "backtracks  {}", s.backtracks.len());
        }
    }
    let _ = writeln!(out, "history ({} rows)", history.len());
    let _ = writeln!(
        out,
        "  {:>5}  {:<24}  {:<10}  {:<20}  SNAPSHOT",
        "STEP", "AT", "STATUS", "NODE"
    );
    for h in &history {
        let _ = writeln!(
            out,
            "  {:>5}  {:<24}  {:<10}  {:<20}  {}",
            h.step,
            rfc3339(h.at),
            h.status.as_str(),
            h.node.as_deref().unwrap_or("-"),
            h.snapshot_bytes
                .map(|b| format!("{b} B"))
                .unwrap_or_else(|| "-".into())
        );
    }
    Ok(ExitCode::from(exit::SUCCESS))
}
