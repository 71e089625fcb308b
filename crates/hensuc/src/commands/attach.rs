//! `hensuc attach ID`: follows a run's log live (one line per step, status change or
//! snapshot) until the run ends or pauses — also a run executed by a worker elsewhere.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use hensu_store::{LogKind, RunStatus};
use serde_json::json;

use crate::commands::session;
use crate::exit;

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    hensuc attach 3f2b8c1e-9a47-4d0e-b6c5-2e81f0a9d7c4 -d examples\n  \
    hensuc attach 3f2b8c1e-9a47-4d0e-b6c5-2e81f0a9d7c4 --store postgres://hensu@db/hensu --json")]
pub struct AttachArgs {
    /// The run id.
    pub id: String,
    /// Project directory (the default store is `<DIR>/.hensu/state.db`).
    #[arg(short = 'd', long = "dir", value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// The store: `postgres://…` or a SQLite path (default: `HENSU_DATABASE_URL`, else
    /// `hensu.toml` `[store] url`, else the project's).
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// `json`: one JSON object per log row (with its output) instead of text.
    #[command(flatten)]
    pub output: crate::args::FormatFlag,
    /// How often the log is read.
    #[arg(long, default_value = "200ms", value_parser = crate::commands::worker::parse_duration, value_name = "DURATION")]
    pub interval: Duration,
}

pub fn execute(args: AttachArgs) -> anyhow::Result<ExitCode> {
    let workdir = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let location = session::store_location(&workdir, args.store.as_deref())?;
    let store = session::wait(hensu_store::open_store(
        &location,
        hensu_store::StoreOptions::default(),
    ))
    .map_err(|e| anyhow::anyhow!("{}: {e}", session::store_label(&location)))?;
    let mut after = 0u64;
    let mut first = true;
    loop {
        // The record first: rows written after it are read on the next round.
        let record = session::wait(store.record(&args.id))?;
        loop {
            let rows = session::wait(store.read_log(&args.id, if first { 0 } else { after }, 500))?;
            let rows: Vec<_> = rows
                .into_iter()
                .filter(|r| first || r.meta.step > after)
                .collect();
            first = false;
            if rows.is_empty() {
                break;
            }
            for r in &rows {
                after = after.max(r.meta.step);
                print_row(r, args.output.json());
            }
        }
        if record.status.is_terminal() || record.status == RunStatus::Paused {
            if !args.output.json() {
                eprintln!(
                    "run {} {} at `{}`",
                    record.run_id,
                    record.status,
                    record.current_node.as_deref().unwrap_or("-")
                );
            }
            return Ok(ExitCode::from(match record.status {
                RunStatus::Completed if record.exit_status.as_deref() != Some("FAILURE") => {
                    exit::SUCCESS
                }
                RunStatus::Paused => exit::SUCCESS,
                _ => exit::FAILURE,
            }));
        }
        std::thread::sleep(args.interval);
    }
}

fn print_row(r: &hensu_store::LogEntry, as_json: bool) {
    let m = &r.meta;
    if as_json {
        let line = json!({
            "format_version": 1,
            "step": m.step,
            "kind": m.kind.as_str(),
            "status": m.status.as_str(),
            "node": m.node,
            "executed_node": m.executed_node,
            "node_status": m.node_status,
            "duration_ms": m.duration_ms,
            "output": r.output,
            "at": hensu_store::rfc3339(m.at),
        });
        println!("{line}");
        return;
    }
    let what = match (m.kind, &m.executed_node) {
        (LogKind::Claimed, _) => claim_text(r),
        (LogKind::Journal, _) => journal_text(r),
        (LogKind::Step, Some(node)) => format!(
            "{node} {} → {}",
            m.node_status.as_deref().unwrap_or("?"),
            m.node.as_deref().unwrap_or("-")
        ),
        (LogKind::Step, None) => format!("at {}", m.node.as_deref().unwrap_or("-")),
        (kind, _) => format!(
            "{} {} at {}",
            kind.as_str(),
            m.status,
            m.node.as_deref().unwrap_or("-")
        ),
    };
    println!("{:>6}  {}  {what}", m.step, hensu_store::rfc3339(m.at));
}

/// A journal row (docs/security.md, *Call journal*): the call's node, number, kind, name and
/// phase, never its result.
fn journal_text(r: &hensu_store::LogEntry) -> String {
    use hensu_runtime::journal::{CallPhase, JournalEntry};
    let entry = r
        .output
        .clone()
        .and_then(|o| serde_json::from_value::<JournalEntry>(o).ok());
    let Some(e) = entry else {
        return "journal".into();
    };
    let phase = match (e.phase, e.ok) {
        (CallPhase::Started, _) => "started",
        (CallPhase::Held, _) => "held for a human",
        (CallPhase::Finished, Some(false)) => "failed",
        (CallPhase::Finished, _) => "finished",
    };
    format!(
        "{} call {}: {} `{}` {phase}",
        e.node.as_deref().unwrap_or("-"),
        e.index,
        e.kind.as_str(),
        e.name
    )
}

/// A claim row: which worker took the run and, after a takeover, from whom and which node runs
/// again (its first run was in flight when that owner stopped).
pub(crate) fn claim_text(r: &hensu_store::LogEntry) -> String {
    let note = r
        .output
        .clone()
        .and_then(|o| serde_json::from_value::<hensu_store::ClaimNote>(o).ok());
    match note {
        Some(hensu_store::ClaimNote {
            worker,
            taken_over_from: Some(from),
            rerun_node,
        }) => format!(
            "taken over by {worker} from {from}; `{}` runs again (at-least-once)",
            rerun_node.as_deref().unwrap_or("-")
        ),
        Some(note) => format!("claimed by {}", note.worker),
        None => "claimed".into(),
    }
}
