//! `hensuc run --detach`: the run is stored queued and a worker (`commands/worker.rs`) runs it.

use std::path::Path;
use std::process::ExitCode;

use hensu_host::launch::{self, NewRun, RunSetup, SourceRef, StoredWorkflow};
use hensu_ir::Workflow;
use hensu_runtime::Context;
use hensu_store::OwnerId;

use crate::commands::session;
use crate::exit;

/// `hensuc run --detach`: stores each run queued (no lease; one per context of `inputs`, in
/// order) and prints its id; a worker runs them. On the default SQLite store a local `hensuc
/// worker --drain` is started for them.
pub fn queue_runs(
    workflow: &Workflow,
    inputs: Vec<Context>,
    setup: &RunSetup,
    source: &Path,
) -> anyhow::Result<ExitCode> {
    let workdir = setup.project.dir.as_path();
    let Some(store) = &setup.store else {
        anyhow::bail!("--detach needs the state store");
    };
    let stored = StoredWorkflow {
        workflow: workflow.clone(),
        source: Some(SourceRef::of(source)),
        options: setup.stored_options(),
    };
    let owner = OwnerId::current();
    let mut ids = Vec::with_capacity(inputs.len());
    for input in &inputs {
        let queued = session::wait(launch::create_run(
            store,
            NewRun {
                stored: &stored,
                input,
                queued: true,
                owner: &owner,
                redact: None,
                tenant: None,
                idempotency: None,
            },
        ))?;
        let run_id = queued.run_id().to_string();
        println!("{run_id}");
        ids.push(run_id);
    }
    if session::configured_store_url(workdir)?.is_none() {
        spawn_local_worker(workdir);
    }
    match ids.as_slice() {
        [run_id] => eprintln!("run {run_id} queued; follow it with `hensuc attach {run_id}`"),
        _ => eprintln!(
            "{} runs queued; follow one with `hensuc attach ID`",
            ids.len()
        ),
    }
    Ok(ExitCode::from(exit::SUCCESS))
}

/// A detached `hensuc worker --drain` for the project (it exits when the queue is empty).
fn spawn_local_worker(workdir: &Path) {
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let log = workdir.join(".hensu").join("worker.log");
    let stderr = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .map(std::process::Stdio::from)
        .unwrap_or_else(|_| std::process::Stdio::null());
    let spawned = std::process::Command::new(exe)
        .args(["worker", "--drain", "-d"])
        .arg(workdir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(stderr)
        .spawn();
    if let Err(e) = spawned {
        eprintln!("note: no local worker started ({e}); run `hensuc worker` to execute the run");
    }
}
