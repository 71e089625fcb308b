//! `hensuc resume ID [-d DIR] [--approve | --reject REASON | --backtrack NODE] [--set k=v …]`
//!
//! Continues a run from the state store: a run paused for a review (a decision is required;
//! `--correlation` must match when given, and `ID` may be the correlation id itself), a run
//! paused by `hensuc pause`, or a run whose process died (from its last checkpoint: the node in
//! flight at the crash runs again). The workflow stored with the run is used; a warning says
//! when the source changed since. Every check happens before anything is written; a run held
//! by another live process is refused (its lease).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use hensu_host::DurableRun;
use hensu_host::launch::{self, ProjectConfig, RunSetup, SourceRef, StoredWorkflow, Stubs};
use hensu_runtime::{Context, ExecutionPhase, ReviewDecision};
use hensu_store::{OwnerId, RunStatus, StateStore, StoreError};
use serde_json::Value;

use crate::commands::run::{Face, RunSettings, run_workflow};
use crate::commands::session::{self, Resumed, Start};

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    hensuc resume 3f2b8c1e-9a47-4d0e-b6c5-2e81f0a9d7c4 -d examples --approve\n  \
    hensuc resume 3f2b8c1e-9a47-4d0e-b6c5-2e81f0a9d7c4 -d examples --reject \"needs sources\"\n  \
    hensuc resume 3f2b8c1e-9a47-4d0e-b6c5-2e81f0a9d7c4 -d examples --backtrack write
  \
    hensuc resume tool-5d0c… -d examples --approve --arguments '{\"path\": \"/tmp/x\"}'")]
pub struct ResumeArgs {
    /// The run id (or the correlation id of its pending review).
    pub id: String,
    #[command(flatten)]
    pub project: crate::args::ProjectDir,
    #[command(flatten)]
    pub store: crate::args::StoreFlag,
    #[command(flatten)]
    pub display: crate::args::ColorFlag,
    /// Approve the pending review.
    #[arg(long, conflicts_with_all = ["reject", "backtrack"])]
    pub approve: bool,
    /// Reject the pending review with a reason.
    #[arg(long, value_name = "REASON", conflicts_with = "backtrack")]
    pub reject: Option<String>,
    /// Send the flow back to an earlier (visited) node.
    #[arg(long, value_name = "NODE")]
    pub backtrack: Option<String>,
    /// The reason of a backtrack (becomes `recommendation`).
    #[arg(long, value_name = "TEXT", requires = "backtrack")]
    pub reason: Option<String>,
    /// The correlation id of the pending review; must match the stored one.
    #[arg(long, value_name = "ID")]
    pub correlation: Option<String>,
    /// Context edits (`key=value`; the value is JSON when it parses, else a string).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// The edited arguments of a gated tool call being approved (a JSON object, replacing
    /// the model's; docs/mcp.md, *Tool approval*).
    #[arg(
        long,
        value_name = "JSON",
        requires = "approve",
        conflicts_with = "set"
    )]
    pub arguments: Option<String>,
    #[command(flatten)]
    pub settings: RunSettings,
    /// How the run's next reviews are decided; without a flag, the mode the run was started
    /// with (stored with it).
    #[command(flatten)]
    pub review: crate::commands::run::ReviewFlags,
}

/// `--arguments JSON`: the edited arguments of a tool call, which must be a JSON object.
pub(crate) fn parse_arguments(text: Option<&str>) -> anyhow::Result<Option<Context>> {
    let Some(text) = text else { return Ok(None) };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(Some(m.into_iter().collect())),
        Ok(other) => anyhow::bail!(
            "--arguments: the edited arguments must be a JSON object, not {}",
            json_kind(&other)
        ),
        Err(e) => anyhow::bail!("--arguments: not JSON: {e}"),
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

pub(crate) fn parse_sets(sets: &[String]) -> anyhow::Result<Option<Context>> {
    if sets.is_empty() {
        return Ok(None);
    }
    let mut ctx = Context::default();
    for s in sets {
        let Some((k, v)) = s.split_once('=') else {
            anyhow::bail!("--set `{s}`: expected KEY=VALUE");
        };
        let k = k.trim();
        if k.is_empty() {
            anyhow::bail!("--set `{s}`: the key is empty");
        }
        let value = serde_json::from_str::<Value>(v).unwrap_or_else(|_| Value::String(v.into()));
        ctx.insert(k.to_string(), value);
    }
    Ok(Some(ctx))
}

fn store_err(e: StoreError) -> anyhow::Error {
    match e {
        StoreError::RunLocked { .. } => anyhow::anyhow!(
            "{e}\n  another hensuc process is running this run; nothing was changed"
        ),
        other => anyhow::anyhow!("{other}"),
    }
}

pub fn execute(args: ResumeArgs) -> anyhow::Result<ExitCode> {
    args.store.apply();
    let arguments = parse_arguments(args.arguments.as_deref())?;
    if let Some(remote) = crate::commands::remote::Remote::from_args(&args.settings.remote)? {
        let edits = parse_sets(&args.set)?.map(|c| c.into_iter().collect());
        return crate::commands::remote_runs::resume(
            &remote,
            crate::commands::remote_runs::ResumeRequest {
                id: &args.id,
                approve: args.approve,
                reject: args.reject.as_deref(),
                backtrack: args.backtrack.as_deref(),
                reason: args.reason.as_deref(),
                correlation: args.correlation.as_deref(),
                edits,
                arguments: arguments.map(|a| a.into_iter().collect()),
            },
        );
    }
    let workdir = args
        .project
        .dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("."));
    let edits = parse_sets(&args.set)?;
    let store = session::open_for_run(&workdir, &args.id)?;
    // ID: a run id, or the correlation id of a paused review.
    let (run_id, via_correlation) = match session::block(store.record(&args.id))? {
        Ok(r) => (r.run_id, None),
        Err(StoreError::NotFound { .. }) => {
            match session::block(store.find_by_correlation(&args.id))? {
                Ok(Some(r)) => (r.run_id, Some(args.id.clone())),
                // Not the review a run shows first: another pending review of a paused run
                // (a fork branch's; docs/server.md, *Pending reviews*).
                Ok(None) if let Some(run_id) = waiting_run(store.as_ref(), &args.id)? => {
                    (run_id, Some(args.id.clone()))
                }
                Ok(None) => anyhow::bail!(
                    "no run `{}` in {}",
                    args.id,
                    session::store_path(&workdir).display()
                ),
                Err(e) => return Err(store_err(e)),
            }
        }
        Err(e) => return Err(store_err(e)),
    };
    let record = session::block(store.record(&run_id))?.map_err(store_err)?;
    if record.status.is_terminal() {
        anyhow::bail!(
            "run `{run_id}` is already {}; there is nothing to resume",
            record.status
        );
    }
    let store_dyn: Arc<dyn StateStore> = store.clone();
    // Take the lease first: a second resumer is refused here, before any check or write.
    let (durable, stored) = session::block(DurableRun::reopen(
        store_dyn.clone(),
        &run_id,
        &OwnerId::current(),
        None,
    ))?
    .map_err(store_err)?;
    // A run waiting at a timer waits for its recorded wake time here (docs/language.md,
    // *Timers and signals*).
    let durable = durable.with_waiting_in_place();
    let release = |d: &DurableRun| {
        let _ = session::block(d.store().release(d.lease()));
    };
    let prepared = (|| -> anyhow::Result<_> {
        let mut state =
            hensu_host::restore(&run_id, &stored.snapshot).map_err(|e| anyhow::anyhow!(e))?;
        let envelope =
            StoredWorkflow::decode(&run_id, &stored.workflow).map_err(anyhow::Error::msg)?;
        // Any review the run waits for (docs/server.md, *Pending reviews*): the decision goes
        // to that one, the others wait on.
        if let Some(c) = args.correlation.as_deref().or(via_correlation.as_deref()) {
            hensu_runtime::route_review(&mut state, c);
        }
        let decision = decide(
            &args,
            &run_id,
            &state,
            &envelope.workflow,
            via_correlation,
            arguments.clone().or(edits.clone()),
        )?;
        // A gated tool call (docs/mcp.md, *Tool approval*) is approved, optionally with
        // edited arguments, or rejected.
        if let Some(d) = &decision
            && let Some(problem) =
                hensu_runtime::tool_decision_problem(&state, d, arguments.is_some())
        {
            anyhow::bail!("run `{run_id}`: {problem}; nothing was changed");
        }
        if let (Some(call), Some(edited)) = (hensu_runtime::reviewed_tool_call(&state), &arguments)
        {
            eprintln!("approving tool `{}` with edited arguments:", call.tool);
            let edited: serde_json::Map<String, Value> = edited.clone().into_iter().collect();
            for c in hensu_runtime::argument_changes(&call.arguments, &edited) {
                if let Some(b) = &c.before {
                    eprintln!("  - {}: {b}", c.key);
                }
                if let Some(a) = &c.after {
                    eprintln!("  + {}: {a}", c.key);
                }
            }
        }
        if decision.is_none()
            && let Some(e) = edits.clone()
        {
            state.context.extend(e);
        }
        if let Some(ReviewDecision::Reject { .. }) = &decision
            && let Some(e) = edits.clone()
        {
            state.context.extend(e);
        }
        let setup = RunSetup {
            project: Arc::new(
                ProjectConfig::from_project_dir(&workdir).map_err(anyhow::Error::msg)?,
            ),
            store: Some(store_dyn.clone()),
            stubs: Stubs {
                force: args.settings.stub,
                scenario: args.settings.scenario.clone(),
                ..Stubs::default()
            }
            .continuing(&envelope.options),
            review: args
                .review
                .chosen()
                .unwrap_or(envelope.options.review.unwrap_or_default()),
            local_commands: true,
            // A local run checks no address (docs/server.md, *Egress*: server runs only).
            egress: None,
        };
        let face = Face::new(&args.settings)?;
        Ok((state, envelope, decision, setup, face))
    })();
    let (state, envelope, decision, setup, face) = match prepared {
        Ok(p) => p,
        Err(e) => {
            release(&durable);
            return Err(e);
        }
    };
    warn_if_source_changed(&run_id, envelope.source.as_ref());
    eprintln!(
        "resuming run {run_id} at `{}` (step {})",
        match &state.phase {
            ExecutionPhase::Awaiting { node_id, .. } => node_id.as_str(),
            _ => state.current_node.as_str(),
        },
        state.steps
    );
    let start = Start::Resume(Box::new(Resumed {
        durable,
        state,
        decision,
    }));
    let workflow = envelope.workflow;
    let repository = crate::commands::run::project_workflows(&workdir, &workflow);
    let end = run_workflow(
        &workflow,
        Context::default(),
        &setup,
        face,
        repository,
        start,
    )?;
    Ok(ExitCode::from(
        end.summarize(&workflow, args.settings.verbosity.verbose),
    ))
}

/// The paused run one of whose pending reviews is `correlation_id`, if any (every paused
/// run's state is read: a local store's few).
fn waiting_run(store: &dyn StateStore, correlation_id: &str) -> anyhow::Result<Option<String>> {
    let runs = session::block(store.list())?.map_err(store_err)?;
    for r in runs.iter().filter(|r| r.status == RunStatus::Paused) {
        let Ok(stored) = session::block(store.load(&r.run_id))? else {
            continue;
        };
        let Ok(state) = hensu_host::restore(&r.run_id, &stored.snapshot) else {
            continue;
        };
        let waiting = hensu_runtime::waiting_reviews(&state);
        if waiting.iter().any(|w| w.correlation_id == correlation_id) {
            return Ok(Some(r.run_id.clone()));
        }
    }
    Ok(None)
}

/// The review decision of this resume, checked against the stored state.
fn decide(
    args: &ResumeArgs,
    run_id: &str,
    state: &hensu_runtime::RunState,
    workflow: &hensu_ir::Workflow,
    via_correlation: Option<String>,
    edits: Option<Context>,
) -> anyhow::Result<Option<ReviewDecision>> {
    let explicit = args.approve || args.reject.is_some() || args.backtrack.is_some();
    // `--auto-approve` approves every review from now on, the pending one included.
    let wants_decision = explicit
        || (args.review.auto_approve
            && matches!(&state.phase, ExecutionPhase::Awaiting { correlation_id, .. } if !correlation_id.is_empty()));
    let given_correlation = args.correlation.clone().or(via_correlation);
    match &state.phase {
        ExecutionPhase::Awaiting {
            node_id,
            correlation_id,
            ..
        } if !correlation_id.is_empty() => {
            if let Some(c) = &given_correlation
                && c != correlation_id
            {
                let waiting: Vec<String> = hensu_runtime::waiting_reviews(state)
                    .into_iter()
                    .map(|w| format!("`{}` (node `{}`)", w.correlation_id, w.node_id))
                    .collect();
                anyhow::bail!(
                    "run `{run_id}` waits for review {}, not `{c}`; nothing was changed",
                    waiting.join(", ")
                );
            }
            if !wants_decision && let Some(call) = hensu_runtime::reviewed_tool_call(state) {
                anyhow::bail!(
                    "run `{run_id}` is paused for the approval of a call of tool `{}` by node \
                     `{node_id}` (correlation id `{correlation_id}`) with arguments {}: resume \
                     it with --approve (optionally --arguments JSON) or --reject REASON",
                    call.tool,
                    call.arguments
                );
            }
            if !wants_decision {
                anyhow::bail!(
                    "run `{run_id}` is paused for the review of node `{node_id}` (correlation id \
                     `{correlation_id}`): resume it with --approve, --reject REASON or \
                     --backtrack NODE"
                );
            }
        }
        _ => {
            if let Some(c) = &given_correlation {
                anyhow::bail!(
                    "run `{run_id}` is not waiting for a review (correlation id `{c}` given); \
                     nothing was changed"
                );
            }
            if wants_decision {
                anyhow::bail!(
                    "run `{run_id}` is not waiting for a review: --approve, --reject and \
                     --backtrack answer a paused review (resume without them, optionally with \
                     --set)"
                );
            }
            return Ok(None);
        }
    }
    if let Some(target) = &args.backtrack {
        let back = ReviewDecision::Backtrack {
            target: target.clone(),
            edits: None,
            reason: String::new(),
        };
        if let Some(problem) = hensu_runtime::tool_decision_problem(state, &back, false) {
            anyhow::bail!("run `{run_id}`: {problem}; nothing was changed");
        }
        if workflow.node(target).is_none() {
            anyhow::bail!(
                "--backtrack `{target}`: workflow `{}` has no such node; nothing was changed",
                workflow.id
            );
        }
        if !state.history.iter().any(|h| &h.node_id == target) {
            anyhow::bail!(
                "--backtrack `{target}`: run `{run_id}` never visited that node (visited: {}); \
                 nothing was changed",
                state.path().join(", ")
            );
        }
        return Ok(Some(ReviewDecision::Backtrack {
            target: target.clone(),
            edits,
            reason: args
                .reason
                .clone()
                .unwrap_or_else(|| "backtracked on resume".into()),
        }));
    }
    if let Some(reason) = &args.reject {
        return Ok(Some(ReviewDecision::Reject {
            reason: reason.clone(),
        }));
    }
    Ok(Some(ReviewDecision::Approve { edits }))
}

fn warn_if_source_changed(run_id: &str, source: Option<&SourceRef>) {
    let Some(SourceRef { path, hash }) = source else {
        return;
    };
    match std::fs::read(path) {
        Ok(bytes) => {
            if hash
                .as_deref()
                .is_some_and(|h| h != launch::content_hash(&bytes))
            {
                eprintln!(
                    "warning: `{path}` changed since run {run_id} started; resuming with the \
                     workflow stored with the run"
                );
            }
        }
        Err(_) => {
            eprintln!("note: `{path}` is gone; resuming with the workflow stored with run {run_id}")
        }
    }
}
