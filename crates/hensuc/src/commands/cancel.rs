//! `hensuc cancel ID [-d DIR]` and `hensuc pause ID [-d DIR]`: run control through the state
//! store.
//!
//! * cancel: a run nobody executes (paused, or its process died) becomes `cancelled` at once;
//!   a running one is flagged and its process stops at its next node boundary (it polls the
//!   flag with every checkpoint; its lease heartbeat also aborts a long agent call).
//! * pause: a flag in the store (as a cancellation is) that the process executing the run —
//!   this machine's or another's, a worker or a server — sees with its next checkpoint: it
//!   stops after the node then running, saves its state as `paused`, and `hensuc resume ID`
//!   continues it.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use hensu_store::{CancelRequest, PauseRequest, StateStore};

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

/// The store of the run (`--store` over `HENSU_DATABASE_URL` and `hensu.toml`).
fn open(args: &ControlArgs) -> anyhow::Result<std::sync::Arc<dyn StateStore>> {
    args.store.apply();
    let dir = args
        .project
        .dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("."));
    session::open_for_run(&dir, &args.id)
}

pub fn cancel(args: ControlArgs) -> anyhow::Result<ExitCode> {
    if let Some(remote) = crate::commands::remote::Remote::from_args(&args.remote)? {
        return crate::commands::remote_runs::cancel(&remote, &args.id);
    }
    let store = open(&args)?;
    let outcome = session::wait(store.request_cancel(&args.id))?;
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
    if let Some(remote) = crate::commands::remote::Remote::from_args(&args.remote)? {
        return crate::commands::remote_runs::pause(&remote, &args.id);
    }
    let store = open(&args)?;
    match session::wait(store.request_pause(&args.id))? {
        PauseRequest::Requested => {
            println!(
                "pause of run {} requested: it stops after its current node; continue it with `hensuc resume {}`",
                args.id, args.id
            );
            Ok(ExitCode::from(exit::SUCCESS))
        }
        PauseRequest::AlreadyPaused => {
            eprintln!("run {} is already paused", args.id);
            Ok(ExitCode::from(exit::SUCCESS))
        }
        PauseRequest::NotStarted => {
            eprintln!(
                "run {} is queued and has not started; nothing to pause (`hensuc cancel` removes it)",
                args.id
            );
            Ok(ExitCode::from(exit::FAILURE))
        }
        PauseRequest::AlreadyFinished(status) => {
            eprintln!("run {} is already {status}; nothing to pause", args.id);
            Ok(ExitCode::from(exit::FAILURE))
        }
    }
}
