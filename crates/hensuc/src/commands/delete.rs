//! `hensuc delete ID`: removes a pushed workflow (a soft delete: its executions remain).

use std::process::ExitCode;

use clap::Args;

use super::remote::{Remote, RemoteArgs, fail};

#[derive(Args, Debug)]
pub struct DeleteArgs {
    /// The workflow id.
    pub id: String,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

pub fn execute(args: DeleteArgs) -> anyhow::Result<ExitCode> {
    let remote = Remote::required(&args.remote)?;
    let a = remote.delete(&format!("/api/v1/workflows/{}", args.id))?;
    if !a.ok() {
        return Err(fail(&format!("delete {}", args.id), &a));
    }
    println!("deleted {}", args.id);
    Ok(ExitCode::SUCCESS)
}
