//! `hensuc workflows`: the workflows pushed to a server (for this token's tenant).

use std::process::ExitCode;

use clap::Args;
use serde_json::Value;

use super::remote::{Remote, RemoteArgs, fail};

#[derive(Args, Debug)]
pub struct WorkflowsArgs {
    /// Print the server's JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

pub fn execute(args: WorkflowsArgs) -> anyhow::Result<ExitCode> {
    let remote = Remote::required(&args.remote)?;
    let a = remote.get("/api/v1/workflows")?;
    if !a.ok() {
        return Err(fail("workflows", &a));
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&a.body)?);
        return Ok(ExitCode::SUCCESS);
    }
    let list = a.body.as_array().cloned().unwrap_or_default();
    if list.is_empty() {
        println!("no workflows");
    }
    for w in list {
        println!(
            "{:<32} {}",
            w.get("id").and_then(Value::as_str).unwrap_or("?"),
            w.get("version").and_then(Value::as_str).unwrap_or("")
        );
    }
    Ok(ExitCode::SUCCESS)
}
