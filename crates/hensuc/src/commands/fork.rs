//! `hensuc fork RUN --at STEP [--set KEY=VALUE … | -c JSON] [--workflow FILE] [-d DIR]`
//!
//! A new run whose history is RUN's log up to STEP (referenced by the store, not copied), with
//! the context edits, continued here from the node that step names as next: the nodes before
//! it do not run again (docs/cli.md, *Time travel*). With `--workflow`, the fork continues
//! with that workflow, checked against the state at STEP first (E0908, E0909: nothing is
//! written on a refusal). The fork is written paused at its fork point and then resumed as
//! `hensuc resume` resumes any paused run (the same run recipe, `hensu_host::launch`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use hensu_diagnostics::Files;
use hensu_host::launch::{self, ForkError, ForkPlan, SourceRef, StoredWorkflow};
use hensu_runtime::Context;

use crate::commands::resume::{self, ResumeArgs};
use crate::commands::run::{ReviewFlags, RunSettings, parse_context};
use crate::commands::session;
use crate::output::DiagnosticFormat;
use crate::{exit, output, project};

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    hensuc fork 3f2b8c1e-9a47-4d0e-b6c5-2e81f0a9d7c4 --at 4 -d examples --set tone=formal\n  \
    hensuc fork 3f2b8c1e-9a47-4d0e-b6c5-2e81f0a9d7c4 --at 4 --workflow examples/workflows/v2.hwf")]
pub struct ForkArgs {
    /// The run to fork.
    pub id: String,
    /// The step of the run's log to continue from (`hensuc runs show ID` lists them): its
    /// state is the fork's, and the node it names as next runs first.
    #[arg(long, value_name = "STEP")]
    pub at: u64,
    /// Context edits (`key=value`; the value is JSON when it parses, else a string).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Context edits as one JSON object, or `@file.json`.
    #[arg(short = 'c', long = "context", value_name = "JSON|@FILE")]
    pub context: Option<String>,
    /// Continue with this workflow instead of the run's (checked against the state first).
    #[arg(long, value_name = "FILE")]
    pub workflow: Option<PathBuf>,
    /// Write the fork and stop (paused at its fork point): `hensuc resume NEW` runs it.
    #[arg(long)]
    pub no_run: bool,
    #[command(flatten)]
    pub project: crate::args::ProjectDir,
    #[command(flatten)]
    pub store: crate::args::StoreFlag,
    #[command(flatten)]
    pub display: crate::args::ColorFlag,
    #[command(flatten)]
    pub settings: RunSettings,
    #[command(flatten)]
    pub review: ReviewFlags,
}

/// `--set` and `-c` as one context (the `--set`s win).
pub(crate) fn edits(context: Option<&str>, sets: &[String]) -> anyhow::Result<Context> {
    let mut edits = parse_context(context)?;
    if let Some(more) = resume::parse_sets(sets)? {
        edits.extend(more);
    }
    Ok(edits)
}

pub fn execute(args: ForkArgs) -> anyhow::Result<ExitCode> {
    args.store.apply();
    let edits = edits(args.context.as_deref(), &args.set)?;
    if let Some(remote) = crate::commands::remote::Remote::from_args(&args.settings.remote)? {
        return crate::commands::remote_runs::time_travel(
            &remote,
            &args.id,
            "fork",
            serde_json::json!({"step": args.at, "contextEdits": edits}),
        );
    }
    let workdir = args
        .project
        .dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("."));
    let store = session::open_for_run(&workdir, &args.id)?;
    let workflow = match &args.workflow {
        None => None,
        Some(path) => {
            let path = project::resolve_workflow_name(path, args.project.dir.as_deref());
            let Some(wf) = crate::commands::run::load_workflow(&path, args.project.dir.as_deref())?
            else {
                return Ok(ExitCode::from(exit::FAILURE));
            };
            let parent =
                session::block(store.load(&args.id))?.map_err(|e| anyhow::anyhow!("{e}"))?;
            let options = StoredWorkflow::decode(&args.id, &parent.workflow)
                .map_err(anyhow::Error::msg)?
                .options;
            Some((
                StoredWorkflow {
                    workflow: wf,
                    source: Some(SourceRef::of(&path)),
                    options,
                },
                path,
            ))
        }
    };
    let file = workflow.as_ref().map(|(_, p)| p.clone());
    let forked = session::block(launch::fork_run(
        &store,
        ForkPlan {
            parent: &args.id,
            at: args.at,
            edits,
            workflow: workflow.map(|(w, _)| w),
            tenant: None,
            redact: None,
            retry_failed_branches: false,
        },
    ))?;
    let forked = match forked {
        Ok(f) => f,
        Err(ForkError::Refused(diagnostics)) => {
            let mut files = Files::new();
            let name = file.map(|p| p.display().to_string()).unwrap_or_default();
            let id = files.add(name, String::new());
            let diagnostics: Vec<_> = diagnostics.into_iter().map(|d| d.in_file(id)).collect();
            output::emit(
                &files,
                &diagnostics,
                DiagnosticFormat::Human,
                args.display.color,
            );
            eprintln!("the fork was refused; nothing was written");
            return Ok(ExitCode::from(exit::FAILURE));
        }
        Err(e) => anyhow::bail!("cannot fork run `{}`: {e}", args.id),
    };
    let new_id = forked.record.run_id.clone();
    eprintln!(
        "forked run {new_id} from {} at step {} (continues at `{}`)",
        args.id, args.at, forked.node
    );
    if args.no_run {
        println!("{new_id}");
        return Ok(ExitCode::from(exit::SUCCESS));
    }
    run_fork(
        new_id,
        args.project,
        args.store,
        args.display,
        args.settings,
        args.review,
    )
}

/// Runs a fork written paused at its fork point, as `hensuc resume` runs a paused run.
fn run_fork(
    id: String,
    project: crate::args::ProjectDir,
    store: crate::args::StoreFlag,
    display: crate::args::ColorFlag,
    settings: RunSettings,
    review: ReviewFlags,
) -> anyhow::Result<ExitCode> {
    resume::execute(ResumeArgs {
        id,
        project,
        store,
        display,
        approve: false,
        reject: None,
        backtrack: None,
        reason: None,
        correlation: None,
        set: Vec::new(),
        arguments: None,
        settings,
        review,
    })
}

/// `hensuc redrive RUN [--set KEY=VALUE … | -c JSON] [-d DIR]`: a fork of a failed run at the
/// last step before its failure; inside a parallel or fork node only the failed branches run
/// again (docs/cli.md, *Time travel*).
#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    hensuc redrive 3f2b8c1e-9a47-4d0e-b6c5-2e81f0a9d7c4 -d examples")]
pub struct RedriveArgs {
    /// The failed run.
    pub id: String,
    /// Context edits (`key=value`; the value is JSON when it parses, else a string).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Context edits as one JSON object, or `@file.json`.
    #[arg(short = 'c', long = "context", value_name = "JSON|@FILE")]
    pub context: Option<String>,
    /// Write the redrive and stop (paused at its fork point): `hensuc resume NEW` runs it.
    #[arg(long)]
    pub no_run: bool,
    #[command(flatten)]
    pub project: crate::args::ProjectDir,
    #[command(flatten)]
    pub store: crate::args::StoreFlag,
    #[command(flatten)]
    pub display: crate::args::ColorFlag,
    #[command(flatten)]
    pub settings: RunSettings,
    #[command(flatten)]
    pub review: ReviewFlags,
}

pub fn redrive(args: RedriveArgs) -> anyhow::Result<ExitCode> {
    args.store.apply();
    let edits = edits(args.context.as_deref(), &args.set)?;
    if let Some(remote) = crate::commands::remote::Remote::from_args(&args.settings.remote)? {
        return crate::commands::remote_runs::time_travel(
            &remote,
            &args.id,
            "redrive",
            serde_json::json!({"contextEdits": edits}),
        );
    }
    let workdir = args
        .project
        .dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("."));
    let store = session::open_for_run(&workdir, &args.id)?;
    let forked = session::block(launch::redrive_run(&store, &args.id, edits, None, None))?
        .map_err(|e| anyhow::anyhow!("cannot redrive run `{}`: {e}", args.id))?;
    let new_id = forked.record.run_id.clone();
    let at = forked.record.parent.as_ref().map_or(0, |p| p.step);
    eprintln!(
        "redriving run {} as {new_id} from step {at} (continues at `{}`)",
        args.id, forked.node
    );
    if args.no_run {
        println!("{new_id}");
        return Ok(ExitCode::from(exit::SUCCESS));
    }
    run_fork(
        new_id,
        args.project,
        args.store,
        args.display,
        args.settings,
        args.review,
    )
}
