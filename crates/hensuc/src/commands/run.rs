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
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Args;
use hensu_host::{CommandRegistry, FsStubFiles};
use hensu_ir::Workflow;
use hensu_runtime::{
    CancelToken, Context, Engine, Event, ExecutionListener, MultiListener, RunOptions, RunResult,
    StubProvider,
};
use serde_json::Value;

use crate::args::{ColorFlag, ProjectDir, Verbosity};
use crate::commands::progress::Progress;
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
    /// ID` follows it.
    #[arg(long, conflicts_with_all = ["no_store", "interactive"])]
    pub detach: bool,
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

/// The review mode of a run, stored with it (`options.review` of the stored workflow).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReviewMode {
    Deferred,
    Interactive,
    AutoApprove,
}

impl ReviewMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewMode::Deferred => "deferred",
            ReviewMode::Interactive => "interactive",
            ReviewMode::AutoApprove => "auto-approve",
        }
    }

    /// The stored spelling; a run stored before review modes existed defers (never approves a
    /// REQUIRED review by itself).
    pub fn parse(stored: Option<&str>) -> ReviewMode {
        match stored {
            Some("interactive") => ReviewMode::Interactive,
            Some("auto-approve") => ReviewMode::AutoApprove,
            _ => ReviewMode::Deferred,
        }
    }
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

    pub fn from_mode(mode: ReviewMode) -> ReviewFlags {
        ReviewFlags {
            interactive: mode == ReviewMode::Interactive,
            defer_review: mode == ReviewMode::Deferred,
            auto_approve: mode == ReviewMode::AutoApprove,
        }
    }
}

/// The nodes of `workflow` (and of the workflows it can call) with a REQUIRED review.
fn required_reviews(workflow: &Workflow, repository: &hensu_runtime::MapRepository) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut scan = |wf: &Workflow| {
        for node in wf.nodes.values() {
            if let hensu_ir::Node::Standard(s) = node
                && s.review_config
                    .as_ref()
                    .is_some_and(|r| r.mode == hensu_ir::ReviewMode::Required)
                && !found.contains(&s.id)
            {
                found.push(s.id.clone());
            }
        }
    };
    scan(workflow);
    for wf in repository.workflows() {
        scan(wf);
    }
    found
}

/// The options `run` and `resume` share.
#[derive(Args, Clone, Debug, Default)]
pub struct RunSettings {
    /// Stub scenario (`stubs/<scenario>/`); the context key `stub_scenario` takes precedence.
    /// On resume, the run's scenario unless given.
    #[arg(long, value_name = "NAME")]
    pub scenario: Option<String>,
    /// Write every execution event as one JSON line to this file.
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
    if let Some(remote) = crate::commands::remote::Remote::from_args(&args.settings.remote)? {
        return crate::commands::remote_runs::run(
            &remote,
            &args.workflow,
            args.project.dir.as_deref(),
            args.context.as_deref(),
        );
    }
    args.workflow = project::resolve_workflow_name(&args.workflow, args.project.dir.as_deref());
    let input = parse_context(args.context.as_deref())?;
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
    if args.detach {
        return crate::commands::worker::queue_run(&workflow, input, &workdir, &args);
    }
    let events_file = match &args.settings.events {
        Some(p) => Some(
            std::fs::File::create(p)
                .map_err(|e| anyhow::anyhow!("cannot create `{}`: {e}", p.display()))?,
        ),
        None => None,
    };
    let commands = CommandRegistry::load(&workdir).map_err(|e| anyhow::anyhow!(e))?;
    let start = crate::commands::session::Start::Fresh {
        source: Some(args.workflow.clone()),
        store: !args.no_store,
    };
    let resources = RunResources {
        commands,
        events_file,
        repository,
    };
    let end = run_workflow(&workflow, input, &workdir, &args, resources, start)?;
    Ok(ExitCode::from(
        end.summarize(&workflow, args.settings.verbosity.verbose),
    ))
}

/// Compiles the workflow at `path` with the project loader (sub-workflows come from
/// `<dir>/workflows/`) and prints its diagnostics. `None` when it has errors.
pub fn load_workflow(path: &Path, dir: Option<&Path>) -> anyhow::Result<Option<Workflow>> {
    Ok(load_run_project(path, dir)?.map(|(wf, _)| wf))
}

/// [`load_workflow`] plus the workflows its sub-workflow nodes can call, from the same
/// compilation: the workflow and what it references, transitively ([`project::load_scoped`]).
pub fn load_run_project(
    path: &Path,
    dir: Option<&Path>,
) -> anyhow::Result<Option<(Workflow, hensu_runtime::MapRepository)>> {
    load_run_project_with(path, dir, Color::Auto)
}

/// [`load_run_project`] with the diagnostics coloured as `--color` says.
fn load_run_project_with(
    path: &Path,
    dir: Option<&Path>,
    color: Color,
) -> anyhow::Result<Option<(Workflow, hensu_runtime::MapRepository)>> {
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
    let mut repo = hensu_runtime::MapRepository::new();
    for unit in project.units {
        if let Some(wf) = unit.workflow {
            repo.insert(wf);
        }
    }
    repo.insert(main.clone());
    Ok(Some((main, repo)))
}

/// The workflows sub-workflow nodes can call: every workflow of `<workdir>/workflows/` that
/// compiles without errors, plus `main` itself.
pub fn project_workflows(workdir: &Path, main: &Workflow) -> hensu_runtime::MapRepository {
    let mut repo = hensu_runtime::MapRepository::new();
    if workdir.join("workflows").is_dir()
        && let Ok(project) = project::load(&[], Some(workdir))
    {
        for unit in project.units {
            let has_errors = project
                .diagnostics
                .iter()
                .any(|d| d.is_error() && d.primary.file == unit.file);
            if let Some(wf) = unit.workflow.filter(|_| !has_errors) {
                repo.insert(wf);
            }
        }
    }
    repo.insert(main.clone());
    repo
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

/// What a run needs from its working directory besides the workflow.
pub(crate) struct RunResources {
    /// `commands.yaml` for `execute` actions.
    pub commands: CommandRegistry,
    /// `--events FILE.jsonl`.
    pub events_file: Option<std::fs::File>,
    /// The workflows sub-workflow nodes can call.
    pub repository: hensu_runtime::MapRepository,
}

/// How `run_workflow` ended.
pub(crate) struct RunEnd {
    pub result: RunResult,
    pub redactor: Arc<hensu_providers::Redactor>,
    /// Writing `--events FILE` failed at least once (warned about when it happened).
    pub events_failed: bool,
}

impl RunEnd {
    /// Prints the summary; the exit code is 2 when the events file could not be written.
    pub(crate) fn summarize(&self, workflow: &Workflow, verbose: bool) -> u8 {
        let code = summarize(workflow, &self.result, verbose, &self.redactor);
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
    file: std::fs::File,
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

pub(crate) fn run_workflow(
    workflow: &Workflow,
    input: Context,
    workdir: &Path,
    args: &RunArgs,
    resources: RunResources,
    start: crate::commands::session::Start,
) -> anyhow::Result<RunEnd> {
    let RunResources {
        commands,
        events_file,
        repository,
    } = resources;
    let config = load_providers_config(workdir)?;
    let cancel = CancelToken::new();
    let mut actions = hensu_host::action_handlers(std::env::var("HENSU_WEBHOOK_URL").ok());
    // MCP servers of hensu.toml (docs/mcp.md): their tools for agents and `send("mcp", …)`.
    let stubbed =
        args.settings.stub || hensu_providers::stub_env_enabled(&|name| std::env::var(name).ok());
    let mcp = hensu_mcp::RunTools::start(
        workdir,
        args.settings.scenario.as_deref(),
        stubbed,
        hensu_mcp::uses_tools(workflow),
    )
    .map_err(anyhow::Error::msg)?;
    mcp.register_action(&mut actions);
    let stubs = FsStubFiles::new(workdir.join("stubs"));
    // Retry notices become events once the listener exists; the slot breaks the cycle.
    let retry_sink: Arc<Mutex<Option<Arc<dyn ExecutionListener>>>> = Arc::new(Mutex::new(None));
    let sink = retry_sink.clone();
    let built = hensu_providers::build_providers_with(
        &config,
        &|name| std::env::var(name).ok(),
        hensu_providers::BuildOptions {
            force_stub: args.settings.stub,
            stub: Some(Arc::new(StubProvider::new(
                Some(Box::new(stubs)),
                args.settings.scenario.clone(),
            ))),
            tools: Some(mcp.tool_executor(
                hensu_providers::ActionToolExecutor::new(actions.clone()).into_arc(),
            )),
            cancel: Some(cancel.clone()),
            on_retry: Some(Arc::new(move |n: &hensu_providers::RetryNotice| {
                if let Ok(slot) = sink.lock()
                    && let Some(listener) = slot.as_ref()
                {
                    listener.on_event(&Event::ProviderRetry {
                        provider: &n.provider,
                        model: &n.model,
                        attempt: n.attempt,
                        delay_ms: n.delay.as_millis() as u64,
                        error_kind: n.kind,
                        status: n.status,
                        message: &n.message,
                    });
                }
            })),
            ..Default::default()
        },
    );
    let terminal = std::io::stderr().is_terminal();
    let progress = Arc::new(Progress::new(
        terminal,
        args.settings.verbosity,
        built.redactor.clone(),
    ));
    let mut listeners: Vec<Arc<dyn ExecutionListener>> = vec![progress.clone()];
    if let Some(limit) = args.settings.max_cost {
        listeners.push(crate::commands::bounds::spend_guard(
            workdir,
            limit,
            cancel.clone(),
        )?);
    }
    let events_failed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    if let Some(f) = events_file {
        listeners.push(Arc::new(hensu_providers::RedactingJsonlListener::new(
            built.redactor.clone(),
            // One line per event reaches the file at once: a killed run keeps its events.
            std::io::LineWriter::new(EventsFile {
                file: f,
                path: args.settings.events.clone().unwrap_or_default(),
                failed: events_failed.clone(),
            }),
        )));
    }
    let listener: Arc<dyn ExecutionListener> = Arc::new(MultiListener::new(listeners));
    if let Ok(mut slot) = retry_sink.lock() {
        *slot = Some(listener.clone());
    }
    for note in built.notes.iter().chain(&mcp.notes) {
        eprintln!("note: {note}");
    }
    let network = network_access(workflow, &built, workdir)?;
    let webhook_url = std::env::var("HENSU_WEBHOOK_URL").ok();
    let mut builder = Engine::builder()
        .action_handlers(match &network {
            hensu_host::NetworkAccess::Live => actions,
            offline => {
                let mut simulated = hensu_host::action_handlers_with(webhook_url, offline.clone());
                mcp.register_action(&mut simulated);
                simulated
            }
        })
        .generic_handlers(hensu_host::generic_handlers_with(network.clone()))
        .commands(commands.with_cancel(cancel.clone()))
        .structured_output(Arc::new(hensu_providers::StructuredOutput {
            max_corrections: config.structured_output.max_corrections,
        }))
        .options(RunOptions {
            default_agent_timeout: Some(Duration::from_secs(300)),
            ..RunOptions::default()
        });
    let required = required_reviews(workflow, &repository);
    builder = builder.workflows(Arc::new(repository));
    let review_mode = match args.review.chosen() {
        Some(mode) => mode,
        // Nothing to defer and nowhere to store a pause: OPTIONAL reviews are approved.
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
    };
    match review_mode {
        ReviewMode::Interactive => {
            builder = builder.review_handler(Arc::new(
                hensu_host::InteractiveReview::stdio().with_pause(progress.clone()),
            ));
        }
        ReviewMode::Deferred => {
            if args.no_store {
                anyhow::bail!(
                    "--defer-review needs the state store to resume the run later; drop --no-store"
                );
            }
            builder = builder.review_handler(Arc::new(hensu_host::DeferredReview::new()));
        }
        ReviewMode::AutoApprove => {}
    }
    for provider in &built.providers {
        builder = builder.provider(provider.clone());
    }
    let session = start.open(
        workflow,
        &input,
        workdir,
        crate::commands::session::RunOptionsStored {
            scenario: args.settings.scenario.as_deref(),
            stub: args.settings.stub,
            review: Some(review_mode.as_str()),
        },
        &built.redactor,
        &cancel,
    )?;
    let engine = builder.build();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    if !args.settings.verbosity.quiet {
        eprintln!(
            "running {} ({} node{}), stub scenario `{}`, reviews {}",
            workflow.metadata.name,
            workflow.nodes.len(),
            if workflow.nodes.len() == 1 { "" } else { "s" },
            args.settings.scenario.as_deref().unwrap_or("default"),
            review_mode.as_str()
        );
        print_routes(workflow, &built);
        eprintln!("  network     {}", network.describe());
    }
    let result = runtime.block_on(async {
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
            .run(&engine, workflow, input, &cancel, listener.as_ref())
            .await;
        signal.abort();
        r
    });
    progress.clear();
    print_usage(&built.usage.snapshot());
    Ok(RunEnd {
        result,
        redactor: built.redactor,
        events_failed: events_failed.load(std::sync::atomic::Ordering::SeqCst),
    })
}

/// A run whose every agent is served by stubs (`--stub`, or no credentials) is offline: its
/// webhook and api-caller requests are simulated except to the hosts `hensu.toml` allows.
fn network_access(
    workflow: &Workflow,
    built: &hensu_providers::BuiltProviders,
    workdir: &Path,
) -> anyhow::Result<hensu_host::NetworkAccess> {
    let all_stub = built.stubs_forced
        || workflow
            .agents
            .values()
            .all(|a| built.route(&a.model).is_none_or(|r| r.provider == "stub"));
    if !all_stub {
        return Ok(hensu_host::NetworkAccess::Live);
    }
    let path = workdir.join("hensu.toml");
    let allow_hosts = match std::fs::read_to_string(&path) {
        Ok(text) => hensu_host::allowed_hosts(&text)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?,
        Err(_) => Vec::new(),
    };
    Ok(hensu_host::NetworkAccess::Offline { allow_hosts })
}

/// `<dir>/hensu.toml` (providers, retries, timeouts), or the defaults when there is none.
fn load_providers_config(workdir: &Path) -> anyhow::Result<hensu_providers::ProvidersConfig> {
    let path = workdir.join("hensu.toml");
    match std::fs::read_to_string(&path) {
        Ok(text) => hensu_providers::load_config(&text)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Ok(hensu_providers::ProvidersConfig::default())
        }
        Err(e) => anyhow::bail!("cannot read `{}`: {e}", path.display()),
    }
}

/// Which provider serves each agent (and why stubs, when they do).
fn print_routes(workflow: &Workflow, built: &hensu_providers::BuiltProviders) {
    for agent in workflow.agents.values() {
        match built.route(&agent.model) {
            Some(route) => match &route.stub_reason {
                Some(reason) if !built.stubs_forced => {
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
