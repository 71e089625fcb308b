//! `hensuc health`: probes a server's `GET /health` (or `GET /ready` with `--ready`) and exits 0
//! when it answers 200, 1 otherwise. It is the container image's `HEALTHCHECK` (the image has no
//! shell and no curl) and a readiness probe for scripts and unit files (docs/deploy.md).

use std::process::ExitCode;

use clap::Args;

use super::remote::{Remote, RemoteArgs};
use crate::exit;

/// The address `hensuc serve` listens on by default (and the container image's, on its own
/// loopback): a probe without `--server` asks it.
const DEFAULT_SERVER: &str = "http://127.0.0.1:8080";

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    hensuc health                                  # http://127.0.0.1:8080/health\n  \
    hensuc health --ready --server https://hensu.example.com")]
pub struct HealthArgs {
    /// Probe `/ready` (the store answers) instead of `/health` (the process answers).
    #[arg(long)]
    pub ready: bool,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

pub fn execute(mut args: HealthArgs) -> anyhow::Result<ExitCode> {
    if args.remote.server.is_none() && std::env::var_os("HENSU_SERVER").is_none() {
        args.remote.server = Some(DEFAULT_SERVER.to_string());
    }
    let remote = Remote::required(&args.remote)?;
    let path = if args.ready { "/ready" } else { "/health" };
    // Unreachable is unhealthy (exit 1), not a usage error: a container runtime reads any code
    // but 0 and 1 as reserved.
    match remote.get(path) {
        Ok(answer) if answer.status == 200 => {
            println!("{}", answer.body);
            Ok(ExitCode::from(exit::SUCCESS))
        }
        Ok(answer) => {
            eprintln!("{path}: {} {}", answer.status, answer.body);
            Ok(ExitCode::from(exit::FAILURE))
        }
        Err(err) => {
            eprintln!("{path}: {err:#}");
            Ok(ExitCode::from(exit::FAILURE))
        }
    }
}
