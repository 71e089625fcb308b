//! `hensuc run WORKFLOW|NAME [-d DIR] [-c JSON|@file.json] [--scenario NAME] [--events FILE.jsonl]
//! [-v | -q] [--defer-review | --interactive | --auto-approve]`
//!
//! Compiles the workflow and what it references (`.hwf`/`.kt` through the checker, `.json`
//! through the wire format), runs it — real models when credentials are configured, stub agents
//! otherwise (`<dir>/stubs/<scenario>/<nodeId|agentId>.txt`) — shows live progress (a status line
//! on a terminal, plain lines otherwise) and a final summary. A stub run is offline: webhook and
//! api-caller requests are simulated unless `hensu.toml` allows the host. Exit codes (README,
//! *Commands*): 0 the run ends at a SUCCESS end node; 1 at a FAILURE/CANCEL end, when rejected,
//! failed or cancelled, or when the workflow has errors; 2 usage or I/O (also an unwritable
//! `--events` file); 3 paused; 130 a second Ctrl-C; 101 internal.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use hensu_host::launch::{
    self, Extras, ProjectConfig, ReviewMode, RunEngine, RunSetup, Stubs, ToolSupply,
};
use hensu_ir::Workflow;
use hensu_runtime::{
    CancelToken, Context, ExecutionListener, MapRepository, MultiListener, RunResult,
};
use serde_json::Value;

use crate::args::{ColorFlag, ProjectDir, Verbosity};
use crate::commands::progress::Progress;
use crate::commands::session;
use crate::exit;
use crate::output::{self, Color, DiagnosticFormat};
use crate::project;

pub use super::run_summary::abbreviate_path;
pub(crate) use super::run_summary::summarize;

/// The end of `hensuc run --help`: review modes, offline behaviour, exit codes.
const RUN_AFTER_HELP: &str = "\
Examples:
  hensuc run examples/workflows/content-pipeline.hwf -d examples -c '{\"topic\": \"durable workflows\"}'
  hensuc run human-review -d examples --stub -c @context.json --events run.jsonl
  hensuc run content-pipeline --server http://127.0.0.1:8080 -c '{\"topic\": \"x\"}'
  hensuc run content-pipeline -d examples --detach   # a worker runs it (hensuc worker)

Reviews: a REQUIRED review is decided by a human. Without a flag the run pauses at the review
(as --defer-review; exit 3) and `hensuc resume ID --approve | --reject REASON | --backtrack NODE`
decides; -i asks in the terminal; --auto-approve approves every review. The mode is stored with
the run and kept by `resume` unless it is given one of these flags.

Offline: when every agent is a stub (--stub, or no credentials) webhook and api-caller requests
are simulated and recorded in the events; real HTTP only to the hosts of hensu.toml
`[network] allow_hosts = [\"…\"]`. The run header shows which.

Ctrl-C abandons the node in flight and stops without taking a transition; a second Ctrl-C exits.

Exit codes: 0 ended at a SUCCESS end node; 1 ended at a FAILURE/CANCEL end, rejected, failed,
cancelled, or the workflow has errors; 2 usage or I/O error (also an unwritable --events file);
3 paused (continue with `hensuc resume ID`); 130 second Ctrl-C; 101 internal error.";

#[derive(Args, Debug)]
#[command(after_help = RUN_AFTER_HELP)]
pub struct RunArgs {
    /// The workflow to run: a `.hwf`, `.kt` or `.json` file, or a NAME for
    /// `DIR/workflows/NAME.{hwf,kt,json}`.
    pub workflow: PathBuf,
    #[command(flatten)]
    pub project: ProjectDir,
    #[command(flatten)]
    pub store: crate::args::StoreFlag,
    #[command(flatten)]
    pub display: ColorFlag,
    /// Initial context: a JSON object, or `@file.json`.
    #[arg(short = 'c', long = "context", value_name = "JSON|@FILE")]
    pub context: Option<String>,
    #[command(flatten)]
    pub settings: RunSettings,
    /// Do not record the run in the state store (`<dir>/.hensu/state.db`); such a run cannot
    /// be resumed, listed or cancelled by id.
    #[arg(long)]
    pub no_store: bool,
    /// Queue the run in the store, print its id and return: a worker (`hensuc worker`)
    /// executes it — on the default SQLite store a local one is started — and `hensuc attach
    /// ID` follows it. With `--server`: queued on the server, for its workers.
    #[arg(long, conflicts_with_all = ["no_store", "interactive"])]
    pub detach: bool,
    /// With `--detach`: queue one run per line of FILE (JSON Lines, each line a context
    /// object as `-c` takes), all in this one process, and print their ids in order.
    #[arg(
        long,
        value_name = "FILE.jsonl",
        requires = "detach",
        conflicts_with = "context"
    )]
    pub contexts: Option<PathBuf>,
    #[command(flatten)]
    pub review: ReviewFlags,
}

/// How reviews are decided (`run` and `resume`). Without a flag, a run pauses at each review
/// (as `--defer-review`); a REQUIRED review is never approved without a human or an explicit
/// `--auto-approve`. The mode is stored with the run; `resume` keeps it unless given a flag.
#[derive(Args, Clone, Copy, Debug, Default)]
pub struct ReviewFlags {
    /// Review nodes in the terminal: approve, reject with a reason, backtrack to an earlier
    /// node or edit context values in `$EDITOR` (answers are read from stdin).
    #[arg(short = 'i', long, conflicts_with_all = ["defer_review", "auto_approve"])]
    pub interactive: bool,
    /// Pause the run at each review (the default); continue it later with
    /// `hensuc resume ID --approve | --reject REASON | --backtrack NODE`.
    #[arg(long, conflicts_with = "auto_approve")]
    pub defer_review: bool,
    /// Approve every review, REQUIRED ones included, without asking anybody.
    #[arg(long)]
    pub auto_approve: bool,
}

impl ReviewFlags {
    /// The mode the flags ask for (`None`: no flag given).
    pub fn chosen(self) -> Option<ReviewMode> {
        if self.interactive {
            Some(ReviewMode::Interactive)
        } else if self.defer_review {
            Some(ReviewMode::Deferred)
        } else if self.auto_approve {
            Some(ReviewMode::AutoApprove)
        } else {
            None
        }
    }
}

/// The options `run` and `resume` share.
#[derive(Args, Clone, Debug, Default)]
pub struct RunSettings {
    /// Stub scenario (`stubs/<scenario>/`); the context key `stub_scenario` takes precedence.
    /// On resume, the run's scenario unless given.
    #[arg(long, value_name = "NAME")]
    pub scenario: Option<String>,
    /// Write every execution event as one JSON line to this file (`-`: to stdout, which
    /// carries nothing else; the progress and summary go to stderr).
    #[arg(long, value_name = "FILE.jsonl")]
    pub events: Option<PathBuf>,
    #[command(flatten)]
    pub verbosity: Verbosity,
    /// Serve every model with stub agents even when credentials are present (also
    /// `HENSU_STUB_ENABLED=true`). On resume, also when the run was started with it.
    #[arg(long)]
    pub stub: bool,
    /// `run`: refuse to start when the static worst-case cost (docs/bounds.md; prices from
    /// `[pricing."model"]` in hensu.toml) exceeds AMOUNT. `run` and `resume`: cancel the run
    /// once the measured spend of real model calls reaches it.
    #[arg(long, value_name = "AMOUNT")]
    pub max_cost: Option<f64>,
    /// Run on a hensu server instead of here (`--server URL`, `--token`).
    #[command(flatten)]
    pub remote: crate::commands::remote::RemoteArgs,
}

pub fn execute(mut args: RunArgs) -> anyhow::Result<ExitCode> {
    if args.no_store && args.store.store.is_some() {
        anyhow::bail!("`--store` and `--no-store` contradict each other: keep one");
    }
    args.store.apply();
    if let Some(remote) = crate::commands::remote::Remote::from_args(&args.settings.remote)? {
        if args.detach {
            let contexts = match args.contexts.as_deref() {
                Some(file) => read_contexts(file)?,
                None => vec![parse_context(args.context.as_deref())?],
            };
            return crate::commands::remote_runs::queue(
                &remote,
                &args.workflow,
                args.project.dir.as_deref(),
                contexts
                    .into_iter()
                    .map(|c| c.into_iter().collect())
                    .collect(),
            );
        }
        return crate::commands::remote_runs::run(
            &remote,
            &args.workflow,
            args.project.dir.as_deref(),
            args.context.as_deref(),
        );
    }
    args.workflow = project::resolve_workflow_name(&args.workflow, args.project.dir.as_deref());
    let input = parse_context(args.context.as_deref())?;
    let batch = args.contexts.as_deref().map(read_contexts).transpose()?;
    let workdir = project::working_dir_for(&args.workflow, args.project.dir.as_deref());
    let Some((workflow, repository)) = load_run_project_with(
        &args.workflow,
        args.project.dir.as_deref(),
        args.display.color,
    )?
    else {
        return Ok(ExitCode::from(exit::FAILURE));
    };
    if let Some(limit) = args.settings.max_cost
        && !crate::commands::bounds::admit_run(&args.workflow, &workdir, limit)?
    {
        return Ok(ExitCode::from(exit::FAILURE));
    }
    if args.no_store && !refuse_waits_without_store(&workflow) {
        return Ok(ExitCode::from(exit::FAILURE));
    }
    if args.no_store
        && !args.review.auto_approve
        && !refuse_gated_tools_without_store(&workflow, &repository, &workdir)
    {
        return Ok(ExitCode::from(exit::FAILURE));
    }
    let review = review_mode(&args, &workflow, &repository)?;
    let store = if args.no_store {
        None
    } else {
        Some(session::open_store(&workdir)?)
    };
    let setup = RunSetup {
        project: Arc::new(ProjectConfig::from_project_dir(&workdir).map_err(anyhow::Error::msg)?),
        store,
        stubs: Stubs {
            force: args.settings.stub,
            scenario: args.settings.scenario.clone(),
            ..Stubs::default()
        },
        review,
        local_commands: true,
        // A local run checks no address (docs/server.md, *Egress*: server runs only).
        egress: None,
    };
    if args.detach {
        let inputs = batch.unwrap_or_else(|| vec![input]);
        return crate::commands::detach::queue_runs(&workflow, inputs, &setup, &args.workflow);
    }
    let face = Face::new(&args.settings)?;
    let start = session::Start::Fresh {
        source: Some(args.workflow.clone()),
    };
    let end = run_workflow(&workflow, input, &setup, face, repository, start)?;
    Ok(ExitCode::from(
        end.summarize(&workflow, args.settings.verbosity.verbose),
    ))
}

/// E0116: a `wait` or `awaitSignal` node suspends its run durably, and `--no-store` leaves
/// nowhere to keep it (docs/language.md, *Timers and signals*). `false` (reported) when the
/// workflow has one.
fn refuse_waits_without_store(workflow: &Workflow) -> bool {
    let waits: Vec<String> = workflow
        .nodes
        .values()
        .filter_map(|n| match n {
            hensu_ir::Node::Wait(w) => Some(format!(
                "`{}` ({})",
                w.id,
                if w.signal().is_some() {
                    "awaitSignal"
                } else {
                    "wait"
                }
            )),
            _ => None,
        })
        .collect();
    if waits.is_empty() {
        return true;
    }
    eprintln!(
        "error[{}]: durable wait in a run without a store\n  = node{} {} suspend{} the run \
         until a time or a signal, and --no-store leaves nowhere to keep it\n  = help: drop \
         --no-store (or give --store URL); `hensuc test` runs waits on a virtual clock \
         (`hensuc explain E0116`)",
        hensu_diagnostics::codes::E0116.as_str(),
        if waits.len() == 1 { "" } else { "s" },
        waits.join(", "),
        if waits.len() == 1 { "s" } else { "" },
    );
    false
}

/// E0521: a tool `require_approval` gates pauses its run for a reviewer (docs/mcp.md, *Tool
/// approval*), and `--no-store` leaves nowhere to keep the pause and nobody to answer it
/// (unless `--auto-approve` approves every call). `false` (reported) when an agent of the
/// workflow or of its sub-workflows declares such a tool.
fn refuse_gated_tools_without_store(
    workflow: &Workflow,
    repository: &MapRepository,
    workdir: &Path,
) -> bool {
    let Ok(settings) = crate::project::settings(workdir) else {
        return true;
    };
    let mut gated: Vec<String> = std::iter::once(workflow)
        .chain(repository.workflows())
        .flat_map(|w| w.agents.values().flat_map(|a| a.tools.iter()))
        .filter(|t| settings.mcp.requires_approval(None, t))
        .map(|t| format!("`{t}`"))
        .collect();
    gated.sort();
    gated.dedup();
    if gated.is_empty() {
        return true;
    }
    eprintln!(
        "error[{}]: gated tool in a run without a store\n  = tool{} {} need{} a reviewer's \
         approval (`require_approval` in hensu.toml), and --no-store leaves nowhere to pause \
         the run for it\n  = help: drop --no-store, or approve every call with \
         --auto-approve (`hensuc explain E0521`)",
        hensu_diagnostics::codes::E0521.as_str(),
        if gated.len() == 1 { "" } else { "s" },
        gated.join(", "),
        if gated.len() == 1 { "s" } else { "" },
    );
    false
}

/// The review mode the flags ask for; without one, a stored run defers and a `--no-store` run
/// approves OPTIONAL reviews (nothing to defer and nowhere to store a pause) but refuses to
/// start with a REQUIRED one.
fn review_mode(
    args: &RunArgs,
    workflow: &Workflow,
    repository: &MapRepository,
) -> anyhow::Result<ReviewMode> {
    let required = launch::required_reviews(workflow, repository);
    Ok(match args.review.chosen() {
        Some(ReviewMode::Deferred) if args.no_store => anyhow::bail!(
            "--defer-review needs the state store to resume the run later; drop --no-store"
        ),
        Some(mode) => mode,
        None if args.no_store && required.is_empty() => ReviewMode::AutoApprove,
        None if args.no_store => anyhow::bail!(
            "node{} {} need{} a human review (REQUIRED) and --no-store leaves nowhere to pause \
             the run: review with -i, approve with --auto-approve, or drop --no-store",
            if required.len() == 1 { "" } else { "s" },
            required
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", "),
            if required.len() == 1 { "s" } else { "" },
        ),
        None => ReviewMode::Deferred,
    })
}

/// Compiles the workflow at `path` with the project loader (sub-workflows come from
/// `<dir>/workflows/`) and prints its diagnostics. `None` when it has errors.
pub fn load_workflow(path: &Path, dir: Option<&Path>) -> anyhow::Result<Option<Workflow>> {
    Ok(load_run_project(path, dir)?.map(|(wf, _)| wf))
}

/// [`load_workflow`] plus the workflows its sub-workflow nodes can call, from the same
/// compilation: the workflow and what it references, transitively ([`project::load_scoped`],
/// [`launch::callable_workflows`]).
pub fn load_run_project(
    path: &Path,
    dir: Option<&Path>,
) -> anyhow::Result<Option<(Workflow, MapRepository)>> {
    load_run_project_with(path, dir, Color::Auto)
}

/// [`load_run_project`] with the diagnostics coloured as `--color` says.
fn load_run_project_with(
    path: &Path,
    dir: Option<&Path>,
    color: Color,
) -> anyhow::Result<Option<(Workflow, MapRepository)>> {
    if !path.is_file() {
        anyhow::bail!("workflow file `{}` not found", path.display());
    }
    let project = project::load_scoped(&[path.to_path_buf()], dir)?;
    let errors = project.error_count();
    if errors > 0 || !project.diagnostics.is_empty() {
        output::emit(
            &project.files,
            &project.diagnostics,
            DiagnosticFormat::Human,
            color,
        );
    }
    if errors > 0 {
        return Ok(None);
    }
    let Some(main) = project.explicit_units().find_map(|u| u.workflow.clone()) else {
        eprintln!("error: `{}` did not produce a workflow", path.display());
        return Ok(None);
    };
    let compiled: Vec<&Workflow> = project
        .units
        .iter()
        .filter_map(|u| u.workflow.as_ref())
        .collect();
    let repo = launch::callable_workflows(&main, compiled);
    Ok(Some((main, repo)))
}

/// The workflows a stored run's sub-workflow nodes can call on resume or on a worker: those of
/// `<workdir>/workflows/` that compile without errors and that `main` reaches, plus `main`
/// — the set a direct run of `main` in this project gets ([`launch::callable_workflows`]).
pub fn project_workflows(workdir: &Path, main: &Workflow) -> MapRepository {
    launch::callable_workflows(main, &project_units(workdir))
}

/// Every workflow of the project in `workdir` that compiles without errors (none without a
/// `workflows/` directory).
pub fn project_units(workdir: &Path) -> Vec<Workflow> {
    let mut compiled: Vec<Workflow> = Vec::new();
    if workdir.join("workflows").is_dir()
        && let Ok(project) = project::load(&[], Some(workdir))
    {
        for unit in project.units {
            let has_errors = project
                .diagnostics
                .iter()
                .any(|d| d.is_error() && d.primary.file == unit.file);
            if let Some(wf) = unit.workflow.filter(|_| !has_errors) {
                compiled.push(wf);
            }
        }
    }
    compiled
}

/// `-c '{"k": …}'` or `-c @file.json` → an ordered context. Anything but a JSON object is a
/// usage error.
pub fn parse_context(arg: Option<&str>) -> anyhow::Result<Context> {
    let Some(arg) = arg else {
        return Ok(Context::default());
    };
    let text = match arg.strip_prefix('@') {
        Some(path) => std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("cannot read context file `{path}`: {e}"))?,
        None => arg.to_string(),
    };
    // Editors on Windows save JSON with a UTF-8 byte order mark.
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map.into_iter().collect()),
        Ok(_) => {
            anyhow::bail!("-c: the context must be a JSON object, e.g. '{{\"topic\": \"AI\"}}'")
        }
        Err(e) => anyhow::bail!("-c: invalid JSON: {e}"),
    }
}

/// `--contexts FILE.jsonl`: one context per non-blank line, each read as `-c` reads one.
fn read_contexts(path: &std::path::Path) -> anyhow::Result<Vec<Context>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("cannot read contexts file `{}`: {e}", path.display()))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let contexts = text
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            parse_context(Some(line))
                .map_err(|e| anyhow::anyhow!("{}:{}: {e}", path.display(), i + 1))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    if contexts.is_empty() {
        anyhow::bail!(
            "`{}` holds no context (one JSON object a line)",
            path.display()
        );
    }
    Ok(contexts)
}

/// What the command line adds to a run: its display and its own listeners.
pub(crate) struct Face {
    pub verbosity: Verbosity,
    /// `--events FILE.jsonl`, created (or stdout for `-`), and the name it was given.
    pub events: Option<(Box<dyn Write + Send>, PathBuf)>,
    /// `--max-cost`: the run is cancelled once its measured spend reaches it.
    pub max_cost: Option<f64>,
    /// Nothing on stderr: no header, progress or usage (a worker writing JSON log lines,
    /// whose runs are in its logs and events; notes become log lines).
    pub silent: bool,
}

impl Face {
    /// The face `run` and `resume` flags describe (creates the `--events` file).
    pub(crate) fn new(settings: &RunSettings) -> anyhow::Result<Face> {
        let events = match &settings.events {
            Some(p) if p.as_os_str() == "-" => {
                let out: Box<dyn Write + Send> = Box::new(std::io::stdout());
                Some((out, PathBuf::from("-")))
            }
            Some(p) => {
                let file = std::fs::File::create(p)
                    .map_err(|e| anyhow::anyhow!("cannot create `{}`: {e}", p.display()))?;
                let out: Box<dyn Write + Send> = Box::new(file);
                Some((out, p.clone()))
            }
            None => None,
        };
        Ok(Face {
            verbosity: settings.verbosity,
            events,
            max_cost: settings.max_cost,
            silent: false,
        })
    }
}

/// How `run_workflow` ended.
pub(crate) struct RunEnd {
    pub result: RunResult,
    pub redactor: Arc<hensu_providers::Redactor>,
    /// Writing `--events FILE` failed at least once (warned about when it happened).
    pub events_failed: bool,
    /// `--events -`: the events have stdout, the summary goes to stderr.
    pub events_on_stdout: bool,
}

impl RunEnd {
    /// Prints the summary; the exit code is 2 when the events file could not be written.
    pub(crate) fn summarize(&self, workflow: &Workflow, verbose: bool) -> u8 {
        let code = summarize(
            workflow,
            &self.result,
            verbose,
            &self.redactor,
            self.events_on_stdout,
        );
        if self.events_failed {
            eprintln!("error: the events file is incomplete (see the warning above)");
            exit::USAGE
        } else {
            code
        }
    }
}

/// The `--events` file: the first write error is reported once; the run goes on and exits 2.
struct EventsFile {
    file: Box<dyn Write + Send>,
    path: PathBuf,
    failed: Arc<std::sync::atomic::AtomicBool>,
}

impl EventsFile {
    fn note<T>(&self, r: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &r
            && !self.failed.swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            eprintln!(
                "warning: cannot write events to `{}`: {e}; the run goes on",
                self.path.display()
            );
        }
        r
    }
}

impl Write for EventsFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = self.file.write(buf);
        self.note(r)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.file.flush();
        self.note(r)
    }
}

/// Where a run's futures are driven: a current-thread runtime of its own, or the runtime of
/// the worker whose blocking thread runs it.
enum RunRuntime {
    Own(tokio::runtime::Runtime),
    Worker(tokio::runtime::Handle),
}

/// Runs (or resumes) `workflow` under `setup` on this thread: the engine from the one run
/// recipe ([`launch::engine`]), the face's listeners, the durable session, Ctrl-C.
pub(crate) fn run_workflow(
    workflow: &Workflow,
    input: Context,
    setup: &RunSetup,
    face: Face,
    repository: MapRepository,
    start: session::Start,
) -> anyhow::Result<RunEnd> {
    let cancel = CancelToken::new();
    let redactor = Arc::new(setup.project.secrets());
    let events_on_stdout = face
        .events
        .as_ref()
        .is_some_and(|(_, p)| p == Path::new("-"));
    let progress = (!face.silent).then(|| {
        let p = Progress::new(
            std::io::stderr().is_terminal(),
            face.verbosity,
            redactor.clone(),
        );
        // The model's text as it is written, on a terminal (docs/cli.md, *Live output*).
        Arc::new(if events_on_stdout || !std::io::stdout().is_terminal() {
            p.without_live_text()
        } else {
            p
        })
    });
    let mut listeners: Vec<Arc<dyn ExecutionListener>> = Vec::new();
    if let Some(p) = &progress {
        listeners.push(p.clone());
    }
    if let Some(limit) = face.max_cost {
        listeners.push(crate::commands::bounds::spend_guard(
            &setup.project.dir,
            limit,
            cancel.clone(),
        )?);
    }
    let events_failed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    if let Some((file, path)) = face.events {
        listeners.push(Arc::new(hensu_providers::RedactingJsonlListener::new(
            redactor.clone(),
            // One line per event reaches the file at once: a killed run keeps its events.
            std::io::LineWriter::new(EventsFile {
                file,
                path,
                failed: events_failed.clone(),
            }),
        )));
    }
    // The live trace (docs/observability.md): only when telemetry is on.
    if let Some(trace) = launch::telemetry::trace_listener(
        setup.project.telemetry.as_ref(),
        workflow,
        None,
        redactor.clone(),
    ) {
        if let session::Start::Resume(r) = &start {
            let (store, id) = (r.durable.store().as_ref(), r.durable.run_id());
            session::block(launch::telemetry::attach(&trace, store, id, Some(&r.state)))?;
        }
        listeners.push(trace);
    }
    let listener: Arc<dyn ExecutionListener> = Arc::new(MultiListener::new(listeners));
    let run = launch::engine(
        setup,
        workflow,
        repository,
        Extras {
            tools: ToolSupply::Project,
            listener: Some(listener.clone()),
            terminal_pause: progress.clone().map(|p| p as _),
            cancel: cancel.clone(),
            recorded: None,
        },
    )
    .map_err(anyhow::Error::msg)?;
    for note in &run.notes {
        if face.silent {
            tracing::info!("note: {note}");
        } else {
            eprintln!("note: {note}");
        }
    }
    let session = start.open(workflow, &input, setup, &run.redactor, &cancel)?;
    // A worker runs each claimed run on a blocking thread of its own runtime: the run uses
    // that runtime, so the store's pooled PostgreSQL connections it opens keep their I/O
    // tasks after the run (on a runtime of the run's own, they would die with it and close
    // under the next run that takes them from the pool). A direct run gets one of its own.
    let runtime = match tokio::runtime::Handle::try_current() {
        Ok(handle) => RunRuntime::Worker(handle),
        Err(_) => RunRuntime::Own(
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?,
        ),
    };
    if !face.verbosity.quiet && !face.silent {
        eprintln!(
            "running {} ({} node{}), stub scenario `{}`, reviews {}",
            workflow.metadata.name,
            workflow.nodes.len(),
            if workflow.nodes.len() == 1 { "" } else { "s" },
            // The context key wins over `--scenario`, as the stub agents read it.
            input
                .get("stub_scenario")
                .and_then(|v| v.as_str())
                .or(setup.stubs.scenario.as_deref())
                .unwrap_or("default"),
            setup.review.as_str()
        );
        print_routes(workflow, &run);
        eprintln!("  network     {}", run.network.describe());
    }
    let work = async {
        let c = cancel.clone();
        let signal = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                c.cancel();
                eprintln!(
                    "\ncancelling (Ctrl-C): the node in flight is abandoned, no transition is taken \
                     (press Ctrl-C again to exit at once)…"
                );
            }
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("interrupted");
                std::process::exit(i32::from(exit::INTERRUPTED));
            }
        });
        // Let the signal task register its handler before the first node starts.
        tokio::task::yield_now().await;
        let r = session
            .run(
                &run.engine,
                workflow,
                input,
                &cancel,
                listener.as_ref(),
                face.silent,
            )
            .await;
        signal.abort();
        r
    };
    // A current-thread runtime drives its I/O only under its own `block_on`.
    let result = match &runtime {
        RunRuntime::Own(own) => own.block_on(work),
        RunRuntime::Worker(worker) => worker.block_on(work),
    };
    if let Some(p) = &progress {
        p.clear();
        print_usage(&run.usage.snapshot());
    }
    launch::telemetry::flush();
    Ok(RunEnd {
        result,
        redactor: run.redactor,
        events_failed: events_failed.load(std::sync::atomic::Ordering::SeqCst),
        events_on_stdout,
    })
}

/// Which provider serves each agent (and why stubs, when they do).
fn print_routes(workflow: &Workflow, run: &RunEngine) {
    for agent in workflow.agents.values() {
        match run.route(&agent.model) {
            Some(route) => match &route.stub_reason {
                Some(reason) if !run.stubs_forced() => {
                    eprintln!("  agent {:<12} {} → stub ({reason})", agent.id, agent.model)
                }
                _ => eprintln!(
                    "  agent {:<12} {} → {}",
                    agent.id, agent.model, route.provider
                ),
            },
            None => eprintln!("  agent {:<12} {} → no provider", agent.id, agent.model),
        }
    }
}

/// Token and request totals of the real model calls (nothing for an all-stub run).
fn print_usage(usage: &hensu_providers::UsageSummary) {
    let t = &usage.total;
    if t.requests == 0 {
        return;
    }
    eprintln!(
        "  usage       {} calls, {} requests ({} retries, {} tool calls, {} corrections), {} tokens in, {} out, {} ms",
        t.calls,
        t.requests,
        t.retries,
        t.tool_calls,
        t.corrections,
        t.input_tokens,
        t.output_tokens,
        t.latency_ms
    );
}
