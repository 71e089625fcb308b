//! `hensuc run WORKFLOW [-d DIR] [-c JSON|@file.json] [--scenario NAME] [--events FILE.jsonl] [-v]`
//!
//! Compiles the workflow (`.hwf`/`.kt` through the checker, `.json` through the wire format),
//! runs it with stub agents (`<dir>/stubs/<scenario>/<nodeId|agentId>.txt`; real providers come
//! later), shows live progress (a status line on a terminal, plain lines otherwise) and a final
//! summary. Exit code: 0 when the run ends at a SUCCESS end node; 1 at a FAILURE/CANCEL end,
//! when rejected, failed or cancelled, or when the workflow has errors; 2 usage; 101 internal.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Args;
use hensu_host::{CommandRegistry, FsStubFiles};
use hensu_ir::{ExitStatus, Workflow};
use hensu_runtime::{
    CancelToken, Context, Engine, Event, ExecutionListener, MultiListener, RunOptions, RunOutcome,
    RunResult, StubProvider,
};
use serde_json::Value;

use crate::commands::progress::Progress;
use crate::exit;
use crate::output::{self, Color, DiagnosticFormat};
use crate::project;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The workflow to run (`.hwf`, `.kt` or `.json`).
    pub workflow: PathBuf,
    /// Working directory: `workflows/` (sub-workflows), `prompts/`, `rubrics/`, `stubs/` and
    /// `commands.yaml` are looked up here.
    #[arg(short = 'd', long = "dir", value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Initial context: a JSON object, or `@file.json`.
    #[arg(short = 'c', long = "context", value_name = "JSON|@FILE")]
    pub context: Option<String>,
    #[command(flatten)]
    pub settings: RunSettings,
    /// Do not record the run in the state store (`<dir>/.hensu/state.db`); such a run cannot
    /// be resumed, listed or cancelled by id.
    #[arg(long)]
    pub no_store: bool,
    /// Review nodes in the terminal: approve, reject with a reason, backtrack to an earlier
    /// node or edit context values in `$EDITOR` (answers are read from stdin). Without it,
    /// reviews are approved automatically.
    #[arg(short = 'i', long, conflicts_with = "defer_review")]
    pub interactive: bool,
    /// Pause the run at each review instead of deciding now; continue it later with
    /// `hensuc resume ID --approve | --reject REASON | --backtrack NODE`.
    #[arg(long)]
    pub defer_review: bool,
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
    /// Show prompts, outputs and transition reasons.
    #[arg(short, long)]
    pub verbose: bool,
    /// Serve every model with stub agents even when credentials are present (also
    /// `HENSU_STUB_ENABLED=true`). On resume, also when the run was started with it.
    #[arg(long)]
    pub stub: bool,
}

pub fn execute(args: RunArgs) -> anyhow::Result<ExitCode> {
    let input = parse_context(args.context.as_deref())?;
    let workdir = project::working_dir_for(&args.workflow, args.dir.as_deref());
    let Some((workflow, repository)) = load_run_project(&args.workflow, args.dir.as_deref())?
    else {
        return Ok(ExitCode::from(exit::FAILURE));
    };
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
    let (result, redactor) = run_workflow(&workflow, input, &workdir, &args, resources, start)?;
    let code = summarize(&workflow, &result, args.settings.verbose, &redactor);
    Ok(ExitCode::from(code))
}

/// Compiles the workflow at `path` with the project loader (sub-workflows come from
/// `<dir>/workflows/`) and prints its diagnostics. `None` when it has errors.
pub fn load_workflow(path: &Path, dir: Option<&Path>) -> anyhow::Result<Option<Workflow>> {
    Ok(load_run_project(path, dir)?.map(|(wf, _)| wf))
}

/// [`load_workflow`] plus the workflows its sub-workflow nodes can call, from the same
/// compilation (the project's `workflows/` and the workflow itself).
pub fn load_run_project(
    path: &Path,
    dir: Option<&Path>,
) -> anyhow::Result<Option<(Workflow, hensu_runtime::MapRepository)>> {
    if !path.is_file() {
        anyhow::bail!("workflow file `{}` not found", path.display());
    }
    let project = project::load(&[path.to_path_buf()], dir)?;
    let errors = project.error_count();
    if errors > 0 || !project.diagnostics.is_empty() {
        output::emit(
            &project.files,
            &project.diagnostics,
            DiagnosticFormat::Human,
            Color::Auto,
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
    match serde_json::from_str::<Value>(&text) {
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

pub(crate) fn run_workflow(
    workflow: &Workflow,
    input: Context,
    workdir: &Path,
    args: &RunArgs,
    resources: RunResources,
    start: crate::commands::session::Start,
) -> anyhow::Result<(RunResult, Arc<hensu_providers::Redactor>)> {
    let RunResources {
        commands,
        events_file,
        repository,
    } = resources;
    let config = load_providers_config(workdir)?;
    let cancel = CancelToken::new();
    let actions = hensu_host::action_handlers(std::env::var("HENSU_WEBHOOK_URL").ok());
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
            tools: Some(hensu_providers::ActionToolExecutor::new(actions.clone()).into_arc()),
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
        args.settings.verbose,
        built.redactor.clone(),
    ));
    let mut listeners: Vec<Arc<dyn ExecutionListener>> = vec![progress.clone()];
    if let Some(f) = events_file {
        listeners.push(Arc::new(hensu_providers::RedactingJsonlListener::new(
            built.redactor.clone(),
            // One line per event reaches the file at once: a killed run keeps its events.
            std::io::LineWriter::new(f),
        )));
    }
    let listener: Arc<dyn ExecutionListener> = Arc::new(MultiListener::new(listeners));
    if let Ok(mut slot) = retry_sink.lock() {
        *slot = Some(listener.clone());
    }
    for note in &built.notes {
        eprintln!("note: {note}");
    }
    let mut builder = Engine::builder()
        .action_handlers(actions)
        .generic_handlers(hensu_host::generic_handlers())
        .commands(commands.with_cancel(cancel.clone()))
        .listener(listener)
        .structured_output(Arc::new(hensu_providers::StructuredOutput {
            max_corrections: config.structured_output.max_corrections,
        }))
        .options(RunOptions {
            default_agent_timeout: Some(Duration::from_secs(300)),
            ..RunOptions::default()
        });
    builder = builder.workflows(Arc::new(repository));
    if args.interactive {
        builder = builder.review_handler(Arc::new(hensu_host::InteractiveReview::stdio()));
    } else if args.defer_review {
        if args.no_store {
            anyhow::bail!(
                "--defer-review needs the state store to resume the run later; drop --no-store"
            );
        }
        builder = builder.review_handler(Arc::new(hensu_host::DeferredReview::new()));
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
        },
        &built.redactor,
        &cancel,
    )?;
    if let Some(hook) = session.hook() {
        builder = builder.boundary_hook(hook);
    }
    let engine = builder.build();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    eprintln!(
        "running {} ({} node{}), stub scenario `{}`",
        workflow.metadata.name,
        workflow.nodes.len(),
        if workflow.nodes.len() == 1 { "" } else { "s" },
        args.settings.scenario.as_deref().unwrap_or("default")
    );
    print_routes(workflow, &built);
    let result = runtime.block_on(async {
        let c = cancel.clone();
        let signal = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                c.cancel();
                eprintln!("\ncancelling (Ctrl-C): in-flight model calls are aborted, the run stops at the next node boundary…");
            }
        });
        let r = session.run(&engine, workflow, input, &cancel).await;
        signal.abort();
        r
    });
    progress.clear();
    print_usage(&built.usage.snapshot());
    Ok((result, built.redactor))
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

fn truncate(s: &str, max: usize) -> String {
    let flat = s.replace('\n', "⏎");
    if flat.chars().count() <= max {
        flat
    } else {
        format!("{}…", flat.chars().take(max).collect::<String>())
    }
}

/// Prints the summary to stdout and returns the exit code.
pub(crate) fn summarize(
    workflow: &Workflow,
    result: &RunResult,
    verbose: bool,
    redactor: &hensu_providers::Redactor,
) -> u8 {
    use std::fmt::Write as _;
    let state = &result.state;
    let (headline, code) = match &result.outcome {
        RunOutcome::Completed {
            exit_status,
            end_node,
        } => (
            format!(
                "{} workflow ended at `{end_node}`: {}",
                if *exit_status == ExitStatus::Success {
                    "✓"
                } else {
                    "✗"
                },
                exit_status.as_str()
            ),
            if *exit_status == ExitStatus::Success {
                exit::SUCCESS
            } else {
                exit::FAILURE
            },
        ),
        RunOutcome::Rejected { reason } => {
            (format!("✗ workflow rejected: {reason}"), exit::FAILURE)
        }
        RunOutcome::Paused => (
            "⏸ workflow paused (waiting for review)".to_string(),
            exit::FAILURE,
        ),
        RunOutcome::Failed(e) => (format!("✗ workflow failed: {e}"), exit::FAILURE),
    };
    let mut out = String::new();
    let _ = writeln!(out, "{headline}");
    if let RunOutcome::Failed(hensu_runtime::RuntimeError::MissingInputs { names }) =
        &result.outcome
    {
        let example: Vec<String> = names.iter().map(|n| format!("\"{n}\": \"…\"")).collect();
        let _ = writeln!(
            out,
            "  help: give them with -c '{{{}}}'",
            example.join(", ")
        );
    }
    let mut path: Vec<&str> = state.path();
    if let RunOutcome::Completed { end_node, .. } = &result.outcome {
        path.push(end_node);
    }
    let _ = writeln!(
        out,
        "  path        {}",
        if path.is_empty() {
            "(no node ran)".to_string()
        } else {
            path.join(" → ")
        }
    );
    let _ = writeln!(out, "  steps       {}", state.steps);
    if !state.backtracks.is_empty() {
        let _ = writeln!(out, "  backtracks  {}", state.backtracks.len());
        for b in &state.backtracks {
            let _ = writeln!(out, "    {} → {} {:?}({})", b.from, b.to, b.kind, b.reason);
        }
    }
    let _ = writeln!(
        out,
        "  time        {:.1} ms",
        result.duration.as_secs_f64() * 1000.0
    );
    // Output variables: the schema's non-input variables, else the node outputs.
    let names: Vec<String> = match &workflow.state_schema {
        Some(schema) => schema
            .variables
            .iter()
            .filter(|v| !v.is_input)
            .map(|v| v.name.clone())
            .collect(),
        None => workflow.nodes.keys().cloned().collect(),
    };
    let shown: Vec<(&String, &Value)> = names
        .iter()
        .filter_map(|n| state.context.get_key_value(n.as_str()))
        .collect();
    if !shown.is_empty() {
        let _ = writeln!(out, "  outputs");
        for (k, v) in shown {
            let text = hensu_runtime::render(v);
            let text = if verbose {
                text.into_owned()
            } else {
                truncate(&text, 100)
            };
            let _ = writeln!(out, "    {k} = {text}");
        }
    }
    // Outputs may echo provider keys; nothing leaves unredacted.
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(redactor.redact(&out).as_bytes());
    let _ = stdout.flush();
    code
}
