//! `hensuc replay --all [--since DATE] [--workflow FILE] [--junit FILE]` (docs/cli.md,
//! *Replay*): every ended run of the store replayed, oldest first — with `--workflow`, every
//! run of that workflow against the file — as a regression suite: a summary, a JUnit report
//! (one testcase per run) and exit 1 when a run diverged or could not be replayed.
//!
//! Skipped (with the reason): runs that have not ended (queued, running, paused) and cancelled
//! runs (a cancellation comes from outside the run, which a replay cannot give).

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use hensu_host::launch::ReplayReport;
use hensu_ir::Workflow;
use hensu_store::{RunRecord, RunStatus};
use serde::Serialize;

use super::{ReplayArgs, human, replay_one};
use crate::commands::session;
use crate::commands::test::report::xml_escape;
use crate::exit;

/// `replay --all --json`: raised when the shape changes (docs/schemas/replay-all.schema.json).
pub(crate) const REPLAY_ALL_FORMAT_VERSION: u32 = 1;

/// How one run came out.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "snake_case")]
enum Outcome {
    Identical,
    Diverged,
    Skipped,
    Error,
}

#[derive(Clone, Debug, Serialize)]
struct RunResult {
    run_id: String,
    workflow_id: String,
    status: String,
    outcome: Outcome,
    /// Why the run was skipped or could not be replayed.
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    report: Option<ReplayReport>,
}

#[derive(Clone, Debug, Default, Serialize)]
struct Summary {
    replayed: usize,
    identical: usize,
    diverged: usize,
    skipped: usize,
    errors: usize,
}

#[derive(Serialize)]
struct AllReport {
    format_version: u32,
    summary: Summary,
    runs: Vec<RunResult>,
}

/// `--since`: a date (`2026-11-01`, midnight UTC) or an RFC 3339 time, as Unix milliseconds.
pub(crate) fn parse_since(text: &str) -> anyhow::Result<u64> {
    let at: jiff::Timestamp = match text.parse::<jiff::Timestamp>() {
        Ok(t) => t,
        Err(_) => {
            let date: jiff::civil::Date = text.parse().map_err(|_| {
                anyhow::anyhow!(
                    "--since `{text}` is neither a date (2026-11-01) nor an RFC 3339 time"
                )
            })?;
            date.to_zoned(jiff::tz::TimeZone::UTC)
                .map_err(|e| anyhow::anyhow!("--since `{text}`: {e}"))?
                .timestamp()
        }
    };
    Ok(u64::try_from(at.as_millisecond()).unwrap_or(0))
}

/// Why `record` is not replayed, if it is not.
fn skip_reason(record: &RunRecord) -> Option<String> {
    match record.status {
        RunStatus::Queued | RunStatus::Running | RunStatus::Paused => {
            Some(format!("the run has not ended (it is {})", record.status))
        }
        RunStatus::Cancelled => Some("cancelled: a cancellation is not replayed".to_string()),
        RunStatus::Completed | RunStatus::Failed | RunStatus::Rejected => None,
    }
}

pub(super) fn execute(
    args: &ReplayArgs,
    workdir: &Path,
    workflow: Option<Workflow>,
) -> anyhow::Result<ExitCode> {
    let since = args.since.as_deref().map(parse_since).transpose()?;
    let Some(store) = session::open_existing(workdir)? else {
        anyhow::bail!(
            "no runs to replay: {} does not exist",
            session::store_path(workdir).display()
        );
    };
    let mut records = session::block(store.list())??;
    // Oldest first, so the report reads in the order the runs were made.
    records.reverse();
    // The project is compiled once: each run takes the workflows it reaches.
    let units = crate::commands::run::project_units(workdir);
    let mut summary = Summary::default();
    let mut runs = Vec::new();
    for record in records {
        if since.is_some_and(|s| record.started_at < s)
            || workflow
                .as_ref()
                .is_some_and(|w| w.id != record.workflow_id)
        {
            continue;
        }
        let mut result = RunResult {
            run_id: record.run_id.clone(),
            workflow_id: record.workflow_id.clone(),
            status: record.status.to_string(),
            outcome: Outcome::Skipped,
            reason: skip_reason(&record),
            report: None,
        };
        if result.reason.is_some() {
            summary.skipped += 1;
            runs.push(result);
            continue;
        }
        match replay_one(&store, &units, &record.run_id, None, workflow.clone())? {
            Ok(report) => {
                summary.replayed += 1;
                if report.identical {
                    summary.identical += 1;
                    result.outcome = Outcome::Identical;
                } else {
                    summary.diverged += 1;
                    result.outcome = Outcome::Diverged;
                }
                result.report = Some(report);
            }
            Err(e) => {
                summary.errors += 1;
                result.outcome = Outcome::Error;
                result.reason = Some(format!("cannot be replayed: {e}"));
            }
        }
        runs.push(result);
    }
    if let Some(path) = &args.junit {
        crate::atomic_write::write_atomically(path, junit(&summary, &runs).as_bytes())
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    }
    let failed = summary.diverged + summary.errors > 0;
    let report = AllReport {
        format_version: REPLAY_ALL_FORMAT_VERSION,
        summary,
        runs,
    };
    if args.format.json() {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        );
    } else {
        print!("{}", text(&report));
    }
    Ok(ExitCode::from(if failed {
        exit::FAILURE
    } else {
        exit::SUCCESS
    }))
}

fn text(report: &AllReport) -> String {
    let mut out = String::new();
    for r in &report.runs {
        match (&r.outcome, &r.report) {
            (Outcome::Diverged, Some(rep)) => {
                let _ = writeln!(out, "{} {}: diverged", r.run_id, r.workflow_id);
                for line in human(rep).lines().skip(1) {
                    let _ = writeln!(out, "  {line}");
                }
            }
            (Outcome::Identical, _) => {
                let _ = writeln!(out, "{} {}: identical", r.run_id, r.workflow_id);
            }
            (_, _) => {
                let _ = writeln!(
                    out,
                    "{} {}: {} ({})",
                    r.run_id,
                    r.workflow_id,
                    if matches!(r.outcome, Outcome::Error) {
                        "error"
                    } else {
                        "skipped"
                    },
                    r.reason.as_deref().unwrap_or("")
                );
            }
        }
    }
    let s = &report.summary;
    let _ = writeln!(
        out,
        "replayed {}: {} identical, {} diverged; {} skipped, {} errors",
        s.replayed, s.identical, s.diverged, s.skipped, s.errors
    );
    out
}

/// One testsuite, one testcase per run: a divergence is a failure, a run that cannot be
/// replayed an error, a skipped run skipped.
fn junit(summary: &Summary, runs: &[RunResult]) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"hensuc replay\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\">",
        runs.len(),
        summary.diverged,
        summary.errors,
        summary.skipped
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"replay\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\">",
        runs.len(),
        summary.diverged,
        summary.errors,
        summary.skipped
    );
    for r in runs {
        let _ = write!(
            out,
            "    <testcase name=\"{}\" classname=\"{}\"",
            xml_escape(&r.run_id),
            xml_escape(&r.workflow_id)
        );
        match (&r.outcome, &r.report) {
            (Outcome::Identical, _) => out.push_str("/>\n"),
            (Outcome::Diverged, Some(rep)) => {
                let message = rep
                    .divergence
                    .as_ref()
                    .map(|d| format!("{}: {}", d.code, d.message))
                    .unwrap_or_default();
                let _ = write!(
                    out,
                    ">\n      <failure message=\"{}\">{}</failure>\n    </testcase>\n",
                    xml_escape(&message),
                    xml_escape(&human(rep))
                );
            }
            (Outcome::Error, _) | (Outcome::Diverged, None) => {
                let _ = write!(
                    out,
                    ">\n      <error message=\"{}\"/>\n    </testcase>\n",
                    xml_escape(r.reason.as_deref().unwrap_or(""))
                );
            }
            (Outcome::Skipped, _) => {
                let _ = write!(
                    out,
                    ">\n      <skipped message=\"{}\"/>\n    </testcase>\n",
                    xml_escape(r.reason.as_deref().unwrap_or(""))
                );
            }
        }
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}
