//! `hensuc replay RUN [--until STEP] [--workflow FILE] [--json]` and `hensuc replay --all
//! [--since DATE] [--workflow FILE] [--junit FILE]` (docs/cli.md, *Replay*).
//!
//! A stored run executed again with every agent call, tool call, command, webhook,
//! api-caller and review decision answered from its run log — no model call, no process, no
//! request — and compared with the recording: path, transitions, outputs, final context, end.
//! The first divergence is reported at its step (E0916; E0917 when the recording lacks the
//! call). Through `hensu_host::launch::replay_run`, as the server's `POST …/replay`. Nothing
//! is written. Exit 0 identical, 1 diverged, 2 the run cannot be replayed.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use hensu_host::launch::{self, ReplayPlan, ReplayReport};
use hensu_ir::Workflow;
use hensu_store::StateStore;

use crate::commands::session;
use crate::{exit, project};

mod all;

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    hensuc replay 3f2b8c1e-9a47-4d0e-b6c5-2e81f0a9d7c4 -d examples\n  \
    hensuc replay 3f2b8c1e-9a47-4d0e-b6c5-2e81f0a9d7c4 --workflow examples/workflows/v2.hwf\n  \
    hensuc replay --all --since 2026-11-01 --workflow workflows/review.hwf --junit replay.xml")]
pub struct ReplayArgs {
    /// The run to replay.
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub id: Option<String>,
    /// Replay every ended run of the store (with `--workflow`: every run of that workflow).
    #[arg(long)]
    pub all: bool,
    /// Replay up to this step of the run's log and compare there.
    #[arg(long, value_name = "STEP", conflicts_with = "all")]
    pub until: Option<u64>,
    /// Only runs started at or after DATE (`2026-11-01` or an RFC 3339 time), with `--all`.
    #[arg(long, value_name = "DATE", requires = "all")]
    pub since: Option<String>,
    /// Replay against this workflow instead of the run's own: its first diverging step is
    /// where the change meets the run's past.
    #[arg(long, value_name = "FILE")]
    pub workflow: Option<PathBuf>,
    /// Write a JUnit XML report (one testcase per run), with `--all`.
    #[arg(long, value_name = "FILE", requires = "all")]
    pub junit: Option<PathBuf>,
    #[command(flatten)]
    pub format: crate::args::FormatFlag,
    #[command(flatten)]
    pub project: crate::args::ProjectDir,
    #[command(flatten)]
    pub store: crate::args::StoreFlag,
    #[command(flatten)]
    pub remote: crate::commands::remote::RemoteArgs,
}

/// The workflow given with `--workflow`, compiled (its diagnostics printed when it has
/// errors: `None`).
fn given_workflow(args: &ReplayArgs) -> anyhow::Result<Option<Option<Workflow>>> {
    let Some(path) = &args.workflow else {
        return Ok(Some(None));
    };
    let path = project::resolve_workflow_name(path, args.project.dir.as_deref());
    Ok(crate::commands::run::load_workflow(&path, args.project.dir.as_deref())?.map(Some))
}

/// Replays one run of `store`: the workflows its sub-workflow nodes can call are those of
/// `units` (the project's, compiled once) it reaches.
pub(crate) fn replay_one(
    store: &Arc<dyn StateStore>,
    units: &[Workflow],
    id: &str,
    until: Option<u64>,
    workflow: Option<Workflow>,
) -> anyhow::Result<Result<ReplayReport, launch::ReplayError>> {
    let stored = session::block(store.load(id))?;
    let callable = match &stored {
        Ok(s) => match launch::StoredWorkflow::decode(id, &s.workflow) {
            Ok(env) => {
                let main = workflow.as_ref().unwrap_or(&env.workflow);
                launch::callable_workflows(main, units)
                    .workflows()
                    .cloned()
                    .collect()
            }
            Err(_) => Vec::new(),
        },
        Err(_) => Vec::new(),
    };
    session::block(launch::replay_run(
        store,
        ReplayPlan {
            run_id: id,
            until,
            workflow,
            callable,
        },
    ))
}

pub fn execute(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    args.store.apply();
    if let Some(remote) = crate::commands::remote::Remote::from_args(&args.remote)? {
        return remote_replay(&remote, &args);
    }
    let workdir = args
        .project
        .dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("."));
    let Some(workflow) = given_workflow(&args)? else {
        return Ok(ExitCode::from(exit::FAILURE));
    };
    if args.all {
        return all::execute(&args, &workdir, workflow);
    }
    let id = args.id.clone().unwrap_or_default();
    let store = session::open_for_run(&workdir, &id)?;
    let units = crate::commands::run::project_units(&workdir);
    let report = match replay_one(&store, &units, &id, args.until, workflow)? {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot replay run `{id}`: {e}");
            return Ok(ExitCode::from(exit::USAGE));
        }
    };
    print_report(&report, args.format.json())
}

/// `hensuc replay ID --server URL`: the server's `POST …/replay` (the same
/// `launch::replay_run`), printed as a local replay is.
fn remote_replay(
    remote: &crate::commands::remote::Remote,
    args: &ReplayArgs,
) -> anyhow::Result<ExitCode> {
    if args.all || args.workflow.is_some() {
        anyhow::bail!(
            "`replay --server` replays one execution on its own workflow: `--all` and \
             `--workflow FILE` read a store (`--store URL`)"
        );
    }
    let id = args.id.clone().unwrap_or_default();
    let a = remote.post(
        &format!("/api/v1/executions/{id}/replay"),
        &serde_json::json!({"until": args.until}),
    )?;
    if !a.ok() {
        return Err(crate::commands::remote::fail(&format!("replay {id}"), &a));
    }
    print_report(&from_api(&a.body)?, args.format.json())
}

/// The API's answer (camelCase, docs/server.md) as the CLI's report (docs/schemas/).
fn from_api(body: &serde_json::Value) -> anyhow::Result<ReplayReport> {
    let field = |k: &str| body.get(k).cloned().unwrap_or(serde_json::Value::Null);
    let divergence = body.get("divergence").filter(|d| !d.is_null()).map(|d| {
        let mut out = serde_json::Map::new();
        for k in [
            "code", "kind", "step", "node", "key", "expected", "got", "message",
        ] {
            if let Some(v) = d
                .get(k)
                .filter(|v| !v.is_null() || matches!(k, "expected" | "got"))
            {
                out.insert(k.to_string(), v.clone());
            }
        }
        serde_json::Value::Object(out)
    });
    let shaped = serde_json::json!({
        "format_version": launch::replay::REPLAY_FORMAT_VERSION,
        "run_id": field("executionId"),
        "workflow_id": field("workflowId"),
        "from_step": field("fromStep"),
        "to_step": field("toStep"),
        "identical": field("identical"),
        "recorded_status": field("recordedStatus"),
        "replayed_status": field("replayedStatus"),
        "steps": field("steps"),
        "recorded_answers": field("recordedAnswers"),
        "divergence": divergence,
        "not_recorded": body.get("notRecorded").cloned().unwrap_or_else(|| serde_json::json!([])),
    });
    serde_json::from_value(shaped)
        .map_err(|e| anyhow::anyhow!("the server's replay answer is not a replay report: {e}"))
}

/// Prints a report (JSON or for people); exit 0 identical, 1 diverged.
fn print_report(report: &ReplayReport, json: bool) -> anyhow::Result<ExitCode> {
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(report).unwrap_or_default()
        );
    } else {
        print!("{}", human(report));
    }
    Ok(ExitCode::from(if report.identical {
        exit::SUCCESS
    } else {
        exit::FAILURE
    }))
}

/// The report for people.
pub(crate) fn human(r: &ReplayReport) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "replayed run {} ({}) from step {} to step {}: {} steps, {} recorded answers, no live call",
        r.run_id, r.workflow_id, r.from_step, r.to_step, r.steps, r.recorded_answers
    );
    match &r.divergence {
        None => {
            let _ = writeln!(
                out,
                "identical: same path, transitions, outputs, context and end ({})",
                r.replayed_status
            );
        }
        Some(d) => {
            let _ = writeln!(out, "error[{}]: {}", d.code, d.message);
            let _ = writeln!(out, "  node: {}", d.node);
            if let Some(k) = &d.key {
                let _ = writeln!(out, "  key: {k}");
            }
            let _ = writeln!(out, "  expected: {}", d.expected);
            let _ = writeln!(out, "  got:      {}", d.got);
            for m in &r.not_recorded {
                let _ = writeln!(out, "  not recorded: {m}");
            }
        }
    }
    out
}
