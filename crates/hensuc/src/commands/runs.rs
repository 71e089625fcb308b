//! `hensuc runs [-d DIR]` lists the runs of the project's state store
//! (`<dir>/.hensu/state.db`); `hensuc runs show ID` shows one run's history.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use hensu_store::{RunRecord, StateStore, rfc3339};
use serde_json::{Value, json};

use crate::commands::runs_json::{RUNS_FORMAT_VERSION, record_json};
use crate::commands::session::{open_existing, store_path};
use crate::exit;

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    hensuc runs -d examples\n  \
    hensuc runs -d examples show 3f2b8c1e-9a47-4d0e-b6c5-2e81f0a9d7c4 --json\n  \
    hensuc runs -d examples trace 3f2b8c1e-9a47-4d0e-b6c5-2e81f0a9d7c4 --format json\n  \
    hensuc runs --server http://127.0.0.1:8080 --json")]
pub struct RunsArgs {
    /// Project directory (the store is `<DIR>/.hensu/state.db`).
    #[arg(short = 'd', long = "dir", value_name = "DIR", global = true)]
    pub dir: Option<PathBuf>,
    #[command(flatten)]
    pub output: crate::args::FormatFlag,
    #[command(flatten)]
    pub store: crate::args::StoreFlag,
    #[command(subcommand)]
    pub command: Option<RunsCommand>,
    /// List the runs of a hensu server instead (`--server URL`, `--token`).
    #[command(flatten)]
    pub remote: crate::commands::remote::RemoteArgs,
}

#[derive(Subcommand, Debug)]
pub enum RunsCommand {
    /// Show a run: its record, path and every checkpoint.
    Show {
        /// The run id.
        id: String,
    },
    /// Compare two runs step by step (node, status, output) and their final contexts; exit 1
    /// when they differ.
    Diff {
        /// The first run's id.
        a: String,
        /// The second run's id.
        b: String,
    },
    /// The run's OpenTelemetry trace, rebuilt from its run log: a tree, `--format json`
    /// (docs/schemas/trace.schema.json) or `--otlp URL` (docs/observability.md).
    Trace(crate::commands::trace::TraceArgs),
    /// Delete the finished runs `[retention]` in hensu.toml names (never one a kept fork
    /// reads) and give the space back (docs/retention.md); `--json`:
    /// docs/schemas/runs-purge.schema.json.
    Purge {
        /// List what would go; delete nothing.
        #[arg(long)]
        dry_run: bool,
        /// Rewrite an SQLite store file (`VACUUM`): needed once for a file created before
        /// schema 7 to give space back; needs the store to itself and free disk of its size.
        #[arg(long, conflicts_with = "dry_run")]
        vacuum: bool,
    },
}

pub fn execute(args: RunsArgs) -> anyhow::Result<ExitCode> {
    args.store.apply();
    if let Some(remote) = crate::commands::remote::Remote::from_args(&args.remote)? {
        return match &args.command {
            None => crate::commands::remote_runs::runs(&remote, args.output.json()),
            Some(RunsCommand::Show { id }) => {
                crate::commands::remote_runs::show(&remote, id, args.output.json())
            }
            Some(RunsCommand::Diff { a, b }) => {
                crate::commands::runs_diff::remote(&remote, a, b, args.output.json())
            }
            Some(RunsCommand::Trace(_)) => {
                anyhow::bail!("`runs trace` reads a store (--store or -d DIR), not a server")
            }
            Some(RunsCommand::Purge { .. }) => anyhow::bail!(
                "`runs purge` works on a store (--store or -d DIR); a server purges its own \
                 under its hensu.toml's [retention]"
            ),
        };
    }
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let Some(store) = open_existing(&dir)? else {
        match &args.command {
            None => {
                if args.output.json() {
                    // The same envelope as with a store: one schema for `runs --json`.
                    println!(
                        "{}",
                        json!({"format_version": RUNS_FORMAT_VERSION, "runs": []})
                    );
                } else {
                    eprintln!(
                        "no runs yet ({} does not exist)",
                        store_path(&dir).display()
                    );
                }
                return Ok(ExitCode::from(exit::SUCCESS));
            }
            Some(RunsCommand::Purge { .. }) => {
                anyhow::bail!(
                    "nothing to purge: {} does not exist",
                    store_path(&dir).display()
                )
            }
            Some(
                RunsCommand::Show { id }
                | RunsCommand::Diff { a: id, .. }
                | RunsCommand::Trace(crate::commands::trace::TraceArgs { id, .. }),
            ) => {
                anyhow::bail!(
                    "no run `{id}`: {} does not exist",
                    store_path(&dir).display()
                )
            }
        }
    };
    match &args.command {
        None => list(store.as_ref(), args.output.json()),
        Some(RunsCommand::Show { id }) => show(store.as_ref(), id, args.output.json()),
        Some(RunsCommand::Diff { a, b }) => {
            crate::commands::runs_diff::diff(store.as_ref(), a, b, args.output.json())
        }
        Some(RunsCommand::Trace(t)) => {
            crate::commands::trace::execute(store.as_ref(), t, args.output.json())
        }
        Some(RunsCommand::Purge { dry_run, vacuum }) => crate::commands::runs_purge::execute(
            store.as_ref(),
            &dir,
            hensu_store::retention::PurgeOptions {
                dry_run: *dry_run,
                rewrite: *vacuum,
            },
            args.output.json(),
        ),
    }
}

fn list(store: &dyn StateStore, as_json: bool) -> anyhow::Result<ExitCode> {
    let runs = crate::commands::session::wait(store.list())?;
    let mut out = std::io::stdout().lock();
    if as_json {
        let rows: Vec<Value> = runs.iter().map(record_json).collect();
        let _ = writeln!(
            out,
            "{}",
            json!({"format_version": RUNS_FORMAT_VERSION, "runs": rows})
        );
        return Ok(ExitCode::from(exit::SUCCESS));
    }
    if runs.is_empty() {
        eprintln!("no runs yet");
        return Ok(ExitCode::from(exit::SUCCESS));
    }
    let rows: Vec<[String; 6]> = runs
        .iter()
        .map(|r| {
            [
                r.run_id.clone(),
                r.workflow_id.clone(),
                status_text(r),
                r.current_node.clone().unwrap_or_else(|| "-".into()),
                rfc3339(r.started_at),
                rfc3339(r.updated_at),
            ]
        })
        .collect();
    let header = ["RUN", "WORKFLOW", "STATUS", "NODE", "STARTED", "UPDATED"];
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                s.push_str(c);
            } else {
                s.push_str(&format!("{c:<w$}  ", w = widths[i]));
            }
        }
        s
    };
    let _ = writeln!(out, "{}", line(&header.map(String::from)));
    for row in &rows {
        let _ = writeln!(out, "{}", line(row));
    }
    Ok(ExitCode::from(exit::SUCCESS))
}

fn status_text(r: &RunRecord) -> String {
    let mut s = r.status.to_string();
    if let Some(e) = &r.exit_status {
        s.push_str(&format!(" ({e})"));
    }
    if r.cancel_requested && !r.status.is_terminal() {
        s.push_str(" (cancel requested)");
    }
    s
}

fn show(store: &dyn StateStore, id: &str, as_json: bool) -> anyhow::Result<ExitCode> {
    let stored = crate::commands::session::wait(store.load(id))?;
    let history = crate::commands::session::wait(store.history(id))?;
    let state = hensu_host::restore(id, &stored.snapshot).ok();
    // Claims by workers (takeovers among them) with their notes: one log row each.
    let claims: Vec<(u64, hensu_store::ClaimNote)> = history
        .iter()
        .filter(|h| h.kind == hensu_store::LogKind::Claimed)
        .filter_map(|h| {
            let row =
                crate::commands::session::wait(store.read_log(id, h.step.saturating_sub(1), 1))
                    .ok()?
                    .pop()?;
            let note = serde_json::from_value(row.output?).ok()?;
            Some((h.step, note))
        })
        .collect();
    let r = &stored.record;
    // Why a failed run failed, in the words of its status on a server (`error`).
    let error = state
        .as_ref()
        .and_then(|s| s.failure.as_ref())
        .map(|f| f.describe());
    let source = hensu_host::launch::StoredWorkflow::source_of(&stored.workflow).map(|s| s.path);
    let mut out = std::io::stdout().lock();
    if as_json {
        let mut v = json!({
            "format_version": RUNS_FORMAT_VERSION,
            "record": record_json(r),
            "source": source,
            "path": state.as_ref().map(|s| s.path()),
            "steps": state.as_ref().map(|s| s.steps),
            "error": error,
            "history": history.iter().map(|h| json!({
                "step": h.step,
                "at": rfc3339(h.at),
                "kind": h.kind.as_str(),
                "status": h.status.as_str(),
                "node": h.node,
                "snapshot_bytes": h.snapshot_bytes,
            })).collect::<Vec<_>>(),
            "claims": claims.iter().map(|(step, note)| json!({
                "step": step,
                "worker": note.worker,
                "taken_over_from": note.taken_over_from,
                "rerun_node": note.rerun_node,
            })).collect::<Vec<_>>(),
        });
        if let Some(p) = &r.parent {
            v["parent"] = json!({"run_id": p.run_id, "step": p.step});
        }
        // Every review a paused run waits for (docs/server.md, *Pending reviews*).
        let reviews = state.as_ref().map(hensu_runtime::waiting_reviews);
        if let Some(reviews) = reviews.filter(|r| !r.is_empty()) {
            v["reviews"] = json!(
                reviews
                    .iter()
                    .map(|w| {
                        let mut r = json!({
                            "correlation_id": w.correlation_id,
                            "node": w.node_id,
                            "branch": w.branch,
                            "within": w.within,
                            "requested_at": rfc3339(w.requested_at_ms),
                        });
                        // A gated tool call (docs/mcp.md, *Tool approval*).
                        if let Some(call) = &w.tool_call {
                            r["tool"] = json!(call.tool);
                            r["arguments"] = call.arguments.clone();
                        }
                        r
                    })
                    .collect::<Vec<_>>()
            );
        }
        let _ = writeln!(out, "{v}");
        return Ok(ExitCode::from(exit::SUCCESS));
    }
    let _ = writeln!(out, "run         {}", r.run_id);
    let _ = writeln!(
        out,
        "workflow    {} (version {})",
        r.workflow_id, r.workflow_version
    );
    if let Some(s) = &source {
        let _ = writeln!(out, "source      {s}");
    }
    if let Some(p) = &r.parent {
        let _ = writeln!(out, "forked from {} at step {}", p.run_id, p.step);
    }
    let _ = writeln!(out, "status      {}", status_text(r));
    if let Some(e) = &error {
        let _ = writeln!(out, "error       {e}");
    }
    if let Some(n) = &r.current_node {
        let _ = writeln!(out, "node        {n}");
    }
    if let Some(c) = &r.correlation_id {
        let _ = writeln!(out, "correlation {c}");
    }
    // Each review a paused run waits for, decided on its own with `hensuc resume RUN
    // --correlation ID` (docs/server.md, *Pending reviews*).
    for w in state.iter().flat_map(hensu_runtime::waiting_reviews) {
        let at = w
            .branch
            .as_deref()
            .map(|b| format!(" in branch `{b}`"))
            .unwrap_or_default();
        match &w.tool_call {
            Some(call) => {
                let _ = writeln!(
                    out,
                    "review      {} (node `{}`{at}: call of tool `{}` with {})",
                    w.correlation_id, w.node_id, call.tool, call.arguments
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "review      {} (node `{}`{at})",
                    w.correlation_id, w.node_id
                );
            }
        }
    }
    // A durable wait (docs/language.md, *Timers and signals*).
    if let Some(w) = &r.wait {
        // Fork branches or children of the run may wait for several.
        let signals: Vec<String> = w.signals().map(|s| format!("`{s}`")).collect();
        if !signals.is_empty() {
            let noun = if signals.len() == 1 {
                "signal"
            } else {
                "signals"
            };
            let _ = writeln!(out, "waits for   {noun} {}", signals.join(", "));
        }
        if let Some(at) = w.wake_at {
            let _ = writeln!(out, "wakes at    {}", rfc3339(at));
        }
    }
    let _ = writeln!(out, "started     {}", rfc3339(r.started_at));
    let _ = writeln!(out, "updated     {}", rfc3339(r.updated_at));
    if let Some(s) = &state {
        let path = s.path();
        let _ = writeln!(
            out,
            "path        {}",
            if path.is_empty() {
                "(no node completed)".to_string()
            } else {
                path.join(" → ")
            }
        );
        let _ = writeln!(out, "steps       {}", s.steps);
        if !s.backtracks.is_empty() {
            let _ = writeln!(out, "backtracks  {}", s.backtracks.len());
        }
    }
    for (step, note) in &claims {
        match &note.taken_over_from {
            Some(from) => {
                let _ = writeln!(
                    out,
                    "takeover    step {step}: {} took over from {from}; `{}` ran again \
                     (at-least-once)",
                    note.worker,
                    note.rerun_node.as_deref().unwrap_or("-")
                );
            }
            None => {
                let _ = writeln!(out, "claimed     step {step}: by {}", note.worker);
            }
        }
    }
    let _ = writeln!(out, "history ({} rows)", history.len());
    let _ = writeln!(
        out,
        "  {:>5}  {:<24}  {:<10}  {:<20}  SNAPSHOT",
        "STEP", "AT", "STATUS", "NODE"
    );
    for h in &history {
        let _ = writeln!(
            out,
            "  {:>5}  {:<24}  {:<10}  {:<20}  {}",
            h.step,
            rfc3339(h.at),
            h.status.as_str(),
            h.node.as_deref().unwrap_or("-"),
            h.snapshot_bytes
                .map(|b| format!("{b} B"))
                .unwrap_or_else(|| "-".into())
        );
    }
    Ok(ExitCode::from(exit::SUCCESS))
}
