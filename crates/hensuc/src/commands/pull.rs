//! `hensuc pull ID`: a pushed workflow's JSON, to stdout or a file.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::remote::{Remote, RemoteArgs, fail};

#[derive(Args, Debug)]
pub struct PullArgs {
    /// The workflow id.
    pub id: String,
    /// Write to this file (atomically) instead of stdout.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

pub fn execute(args: PullArgs) -> anyhow::Result<ExitCode> {
    let remote = Remote::required(&args.remote)?;
    let a = remote.get(&format!("/api/v1/workflows/{}", args.id))?;
    if !a.ok() {
        return Err(fail(&format!("pull {}", args.id), &a));
    }
    let text = serde_json::to_string_pretty(&a.body)? + "\n";
    match args.output {
        Some(path) => crate::atomic_write::write_atomically(&path, text.as_bytes())?,
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}
