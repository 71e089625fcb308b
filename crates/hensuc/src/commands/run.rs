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
use std::time::{Duration, Instant};

use clap::Args;
use hensu_ir::{ExitStatus, Workflow};
use hensu_runtime::{
    ActionHandlerRegistry, CancelToken, CommandRegistry, Context, Engine, Event, ExecutionListener,
    FsStubFiles, JsonlListener, MultiListener, RunOptions, RunOutcome, RunResult, StubProvider,
};
use serde_json::Value;

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
    /// Stub scenario (`stubs/<scenario>/`); the context key `stub_scenario` takes precedence.
    #[arg(long, value_name = "NAME")]
    pub scenario: Option<String>,
    /// Write every execution event as one JSON line to this file.
    #[arg(long, value_name = "FILE.jsonl")]
    pub events: Option<PathBuf>,
    /// Show prompts, outputs and transition reasons.
    #[arg(short, long)]
    pub verbose: bool,
}

pub fn execute(args: RunArgs) -> anyhow::Result<ExitCode> {
    let input = parse_context(args.context.as_deref())?;
    let workdir = project::working_dir_for(&args.workflow, args.dir.as_deref());
    let Some(workflow) = load_workflow(&args.workflow, args.dir.as_deref())? else {
        return Ok(ExitCode::from(exit::FAILURE));
    };
    let events_file = match &args.events {
        Some(p) => Some(
            std::fs::File::create(p)
                .map_err(|e| anyhow::anyhow!("cannot create `{}`: {e}", p.display()))?,
        ),
        None => None,
    };
    let commands = CommandRegistry::load(&workdir).map_err(|e| anyhow::anyhow!(e))?;
    let result = run_workflow(&workflow, input, &workdir, &args, commands, events_file)?;
    let code = summarize(&workflow, &result, args.verbose);
    Ok(ExitCode::from(code))
}

/// Compiles the workflow at `path` with the project loader (sub-workflows come from
/// `<dir>/workflows/`) and prints its diagnostics. `None` when it has errors.
pub fn load_workflow(path: &Path, dir: Option<&Path>) -> anyhow::Result<Option<Workflow>> {
    if !path.is_file() {
        anyhow::bail!("workflow file `{}` not found", path.display());
    }
    let project = project::load(&[path.to_path_buf()], dir)?;
    let explicit: Vec<_> = project.explicit_units().collect();
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
    let wf = explicit.first().and_then(|u| u.workflow.clone());
    if wf.is_none() {
        eprintln!("error: `{}` did not produce a workflow", path.display());
    }
    Ok(wf)
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

fn run_workflow(
    workflow: &Workflow,
    input: Context,
    workdir: &Path,
    args: &RunArgs,
    commands: CommandRegistry,
    events_file: Option<std::fs::File>,
) -> anyhow::Result<RunResult> {
    let terminal = std::io::stderr().is_terminal();
    let progress = Arc::new(Progress::new(terminal, args.verbose));
    let mut listeners: Vec<Arc<dyn ExecutionListener>> = vec![progress.clone()];
    if let Some(f) = events_file {
        listeners.push(Arc::new(JsonlListener::new(std::io::BufWriter::new(f))));
    }
    let stubs = FsStubFiles::new(workdir.join("stubs"));
    let engine = Engine::builder()
        .provider(Arc::new(StubProvider::new(
            Some(Box::new(stubs)),
            args.scenario.clone(),
        )))
        .action_handlers(ActionHandlerRegistry::with_defaults(
            std::env::var("HENSU_WEBHOOK_URL").ok(),
        ))
        .commands(commands)
        .listener(Arc::new(MultiListener::new(listeners)))
        .options(RunOptions {
            default_agent_timeout: Some(Duration::from_secs(300)),
            ..RunOptions::default()
        })
        .build();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    eprintln!(
        "running {} ({} node{}) with stub agents, scenario `{}`",
        workflow.metadata.name,
        workflow.nodes.len(),
        if workflow.nodes.len() == 1 { "" } else { "s" },
        args.scenario.as_deref().unwrap_or("default")
    );
    let cancel = CancelToken::new();
    let result = runtime.block_on(async {
        let c = cancel.clone();
        let progress_ticker = progress.clone();
        let signal = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                c.cancel();
                eprintln!("\ncancelling at the next node boundary (Ctrl-C)…");
            }
        });
        let ticker = tokio::spawn(async move {
            let mut interval = tokio::time::interval(Duration::from_millis(200));
            loop {
                interval.tick().await;
                progress_ticker.redraw();
            }
        });
        let r = engine.run(workflow, input, &cancel).await;
        signal.abort();
        ticker.abort();
        r
    });
    progress.clear();
    Ok(result)
}

/// Live progress: a status line on a terminal, plain lines otherwise; `-v` adds prompts,
/// outputs and transition reasons.
struct Progress {
    terminal: bool,
    verbose: bool,
    started: Instant,
    line: Mutex<Option<(String, u64)>>,
}

impl Progress {
    fn new(terminal: bool, verbose: bool) -> Self {
        Progress {
            terminal,
            verbose,
            started: Instant::now(),
            line: Mutex::new(None),
        }
    }

    fn redraw(&self) {
        if !self.terminal {
            return;
        }
        if let Ok(line) = self.line.lock()
            && let Some((node, step)) = line.as_ref()
        {
            let mut err = std::io::stderr().lock();
            let _ = write!(
                err,
                "\r\x1b[2K⠿ {node} · step {step} · {:.1}s",
                self.started.elapsed().as_secs_f64()
            );
            let _ = err.flush();
        }
    }

    fn clear(&self) {
        if self.terminal {
            if let Ok(mut line) = self.line.lock() {
                *line = None;
            }
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    }

    /// Prints a line above the status line.
    fn say(&self, text: &str) {
        let mut err = std::io::stderr().lock();
        if self.terminal {
            let _ = write!(err, "\r\x1b[2K");
        }
        let _ = writeln!(err, "{text}");
        drop(err);
        self.redraw();
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    │ {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

impl ExecutionListener for Progress {
    fn on_event(&self, event: &Event<'_>) {
        match event {
            Event::NodeStarted {
                node_id,
                kind,
                step,
            } => {
                if let Ok(mut line) = self.line.lock() {
                    *line = Some((node_id.to_string(), *step));
                }
                if !self.terminal || self.verbose {
                    self.say(&format!(
                        "→ {node_id} ({}, step {step})",
                        kind.as_str().to_lowercase()
                    ));
                } else {
                    self.redraw();
                }
            }
            Event::AgentCall {
                agent_id,
                branch_id,
                prompt,
                response,
                error,
                duration_us,
                ..
            } => {
                if self.verbose {
                    let who = match branch_id {
                        Some(b) => format!("branch {b}, agent {agent_id}"),
                        None => format!("agent {agent_id}"),
                    };
                    self.say(&format!("  ┌ prompt ({who})\n{}", indent(prompt)));
                    match (response, error) {
                        (Some(r), _) => self.say(&format!(
                            "  └ response ({:.1} ms)\n{}",
                            *duration_us as f64 / 1000.0,
                            indent(r)
                        )),
                        (None, Some(e)) => self.say(&format!("  └ error: {e}")),
                        _ => {}
                    }
                }
            }
            Event::ActionExecuted {
                action,
                success,
                output,
                ..
            } => {
                let mark = if *success { "✓" } else { "✗" };
                self.say(&format!("  {mark} {action}: {output}"));
            }
            Event::NodeCompleted {
                node_id,
                status,
                error,
                ..
            } => {
                if let Some(e) = error {
                    self.say(&format!("  ✗ {node_id} {status}: {e}"));
                }
            }
            Event::RubricEvaluated {
                node_id,
                score,
                passed,
            } => {
                if self.verbose {
                    self.say(&format!(
                        "  rubric {node_id}: {} ({})",
                        hensu_ir::java_double_to_string(*score),
                        if *passed { "passed" } else { "failed" }
                    ));
                }
            }
            Event::Backtrack {
                from,
                to,
                kind,
                reason,
            } => {
                self.say(&format!("  ↺ backtrack {from} → {to} ({kind:?}: {reason})"));
            }
            Event::TransitionTaken {
                from,
                to,
                cause,
                bounded,
                ..
            } => {
                if self.verbose || bounded.is_some() {
                    let extra = bounded.map(|b| format!(", {b}")).unwrap_or_default();
                    self.say(&format!("  {from} → {to}: {cause}{extra}"));
                }
            }
            Event::TransitionWarning { node_id, message } => {
                self.say(&format!("⚠ transition warning · {node_id}\n  {message}"));
            }
            Event::RunStarted { .. } | Event::RunFinished { .. } => {}
        }
    }
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
fn summarize(workflow: &Workflow, result: &RunResult, verbose: bool) -> u8 {
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
    let mut out = std::io::stdout().lock();
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
            let text = hensu_runtime::value::render(v);
            let text = if verbose {
                text.into_owned()
            } else {
                truncate(&text, 100)
            };
            let _ = writeln!(out, "    {k} = {text}");
        }
    }
    let _ = out.flush();
    code
}
