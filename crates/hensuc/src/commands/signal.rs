//! `hensuc signal RUN NAME -c JSON`: sends a signal to a run (docs/language.md, *Timers and
//! signals*) through `hensu_host::launch::deliver_signal` — the operation the server's `POST
//! /api/v1/executions/{id}/signals/{name}` runs too. With `--server URL`, that route is called.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::{Value, json};

use crate::commands::session;
use crate::exit;

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    hensuc signal 3f2b8c1e-9a47-4d0e-b6c5-2e81f0a9d7c4 approved -c '{\"decision\": \"ship\"}'\n  \
    hensuc signal 3f2b8c1e-… approved -c @decision.json --server http://127.0.0.1:8080\n\n\
    A signal sent before the run waits for it is kept and delivered when it does; a run paused\n\
    waiting for it is continued by a worker or server (`hensuc resume RUN` continues it here).")]
pub struct SignalArgs {
    /// The run id.
    pub id: String,
    /// The signal's name (an `awaitSignal` node's `signal`).
    pub name: String,
    /// The payload: JSON (any value), or `@file.json`. Default: `null`.
    #[arg(short = 'c', long = "content", value_name = "JSON|@FILE")]
    pub content: Option<String>,
    #[command(flatten)]
    pub project: crate::args::ProjectDir,
    #[command(flatten)]
    pub store: crate::args::StoreFlag,
    /// Send it to a hensu server instead (`--server URL`, `--token`).
    #[command(flatten)]
    pub remote: crate::commands::remote::RemoteArgs,
}

/// `-c` as JSON (a file with `@`).
fn payload(arg: Option<&str>) -> anyhow::Result<Value> {
    let Some(arg) = arg else {
        return Ok(Value::Null);
    };
    let text = match arg.strip_prefix('@') {
        Some(path) => std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("cannot read payload file `{path}`: {e}"))?,
        None => arg.to_string(),
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    serde_json::from_str(text).map_err(|e| anyhow::anyhow!("-c: invalid JSON: {e}"))
}

pub fn execute(args: SignalArgs) -> anyhow::Result<ExitCode> {
    let payload = match payload(args.content.as_deref()) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(exit::USAGE));
        }
    };
    if let Some(remote) = crate::commands::remote::Remote::from_args(&args.remote)? {
        let path = format!(
            "/api/v1/executions/{}/signals/{}",
            hensu_host::percent_encode(&args.id),
            hensu_host::percent_encode(&args.name)
        );
        let a = remote.post(&path, &json!({ "payload": payload }))?;
        if !a.ok() {
            return Err(crate::commands::remote::fail(
                &format!("signal {} {}", args.id, args.name),
                &a,
            ));
        }
        let woke = a.body.get("woke").and_then(Value::as_bool) == Some(true);
        report(
            &args.id,
            &args.name,
            a.body.get("seq").and_then(Value::as_u64),
            woke,
        );
        return Ok(ExitCode::SUCCESS);
    }
    args.store.apply();
    let dir = args
        .project
        .dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("."));
    let store = session::open_for_run(&dir, &args.id)?;
    // A wait inside a sub-workflow child takes the run's signals too: the project's workflows
    // the run can call are checked as well (docs/language.md, *Timers and signals*).
    let sent = session::block(async {
        let workflow = hensu_host::launch::signal_workflow(&store, &args.id).await?;
        let callable = crate::commands::run::project_workflows(&dir, &workflow);
        hensu_host::launch::deliver_signal(
            &store,
            &args.id,
            (&workflow, &callable),
            &args.name,
            &payload,
        )
        .await
    })?;
    match sent {
        Ok(r) => {
            report(&args.id, &args.name, Some(r.seq), r.woke);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("error[{}]: {e}", e.code());
            Ok(ExitCode::from(exit::FAILURE))
        }
    }
}

fn report(run_id: &str, name: &str, seq: Option<u64>, woke: bool) {
    let seq = seq.map(|s| format!(" (#{s})")).unwrap_or_default();
    if woke {
        println!(
            "signal `{name}`{seq} sent to run {run_id}: it was waiting and continues (a worker or server takes it; `hensuc resume {run_id}` here)"
        );
    } else {
        println!(
            "signal `{name}`{seq} stored for run {run_id}: delivered when it waits for `{name}`"
        );
    }
}
