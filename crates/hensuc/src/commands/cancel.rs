//! `hensuc cancel ID [-d DIR]` and `hensuc pause ID [-d DIR]`: run control through the state
//! store.
//!
//! * cancel: a run nobody executes (paused, or its process died) becomes `cancelled` at once;
//!   a running one is flagged and its process stops at its next node boundary (it polls the
//!   flag with every checkpoint; its lease heartbeat also aborts a long agent call).
//! * pause: a flag file (`<DIR>/.hensu/pause/<ID>`) the running process polls at its node
//!   boundaries (at most every 50 ms, so a chain of fast nodes does not pay a system call a
//!   node): it stops after the node then running, saves its state as `paused`, and
//!   `hensuc resume ID` continues it.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use hensu_store::{CancelRequest, RunStatus, StateStore};

use crate::commands::session;
use crate::exit;

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    hensuc cancel 3f2b8c1e-9a47-4d0e-b6c5-2e81f0a9d7c4 -d examples\n  \
    hensuc pause 3f2b8c1e-9a47-4d0e-b6c5-2e81f0a9d7c4 -d examples   # continue with hensuc resume")]
pub struct ControlArgs {
    /// The run id.
    pub id: String,
    #[command(flatten)]
    pub project: crate::args::ProjectDir,
    #[command(flatten)]
    pub store: crate::args::StoreFlag,
    /// Cancel on a hensu server instead (`--server URL`, `--token`).
    #[command(flatten)]
    pub remote: crate::commands::remote::RemoteArgs,
}

fn open(args: &ControlArgs) -> anyhow::Result<(PathBuf, std::sync::Arc<dyn StateStore>)> {
    args.store.apply();
    let dir = args
        .project
        .dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("."));
    let Some(store) = session::open_existing(&dir)? else {
        anyhow::bail!(
            "no run `{}`: {} does not exist",
            args.id,
            session::store_path(&dir).display()
        );
    };
    Ok((dir, store))
}

pub fn cancel(args: ControlArgs) -> anyhow::Result<ExitCode> {
    if let Some(remote) = crate::commands::remote::Remote::from_args(&args.remote)? {
        return crate::commands::remote_runs::cancel(&remote, &args.id);
    }
    let (dir, store) = open(&args)?;
    let outcome = session::wait(store.request_cancel(&args.id))?;
    let _ = std::fs::remove_file(session::pause_flag(&dir, &args.id));
    match outcome {
        CancelRequest::Requested { owner } => {
            println!(
                "cancellation of run {} requested: its process ({owner}) stops at its next node boundary",
                args.id
            );
            Ok(ExitCode::from(exit::SUCCESS))
        }
        CancelRequest::Cancelled(record) => {
            println!(
                "run {} cancelled (at `{}`)",
                record.run_id,
                record.current_node.as_deref().unwrap_or("-")
            );
            Ok(ExitCode::from(exit::SUCCESS))
        }
        CancelRequest::AlreadyFinished(status) => {
            eprintln!("run {} is already {status}; nothing to cancel", args.id);
            Ok(ExitCode::from(exit::FAILURE))
        }
    }
}

pub fn pause(args: ControlArgs) -> anyhow::Result<ExitCode> {
    if args.remote.server.is_some() {
        anyhow::bail!("a hensu server has no pause endpoint; `cancel --server` stops a run");
    }
    let (dir, store) = open(&args)?;
    let record = session::wait(store.record(&args.id))?;
    match record.status {
        RunStatus::Running => {}
        RunStatus::Paused => {
            eprintln!("run {} is already paused", args.id);
            return Ok(ExitCode::from(exit::SUCCESS));
        }
        other => {
            eprintln!("run {} is already {other}; nothing to pause", args.id);
            return Ok(ExitCode::from(exit::FAILURE));
        }
    }
    let flag = session::pause_flag(&dir, &args.id);
    if let Some(parent) = flag.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| anyhow::anyhow!("cannot create `{}`: {e}", parent.display()))?;
    }
    std::fs::write(&flag, b"")
        .map_err(|e| anyhow::anyhow!("cannot write `{}`: {e}", flag.display()))?;
    println!(
        "pause of run {} requested: it stops after its current node; continue it with `hensuc resume {}`",
        args.id, args.id
    );
    Ok(ExitCode::from(exit::SUCCESS))
}
