//! `hensuc runs purge [--dry-run] [--json] [--vacuum]`: deletes the finished runs the
//! `[retention]` rules of the project's hensu.toml name (docs/retention.md), never a run a kept
//! fork reads, and gives the space back; `--json` is docs/schemas/runs-purge.schema.json.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use hensu_store::StateStore;
use hensu_store::retention::{PurgeOptions, PurgeReason, PurgeReport, purge};
use serde_json::{Value, json};

use crate::exit;

/// The `format_version` of `runs purge --json`.
pub const PURGE_FORMAT_VERSION: u64 = 1;

/// Purges the store of `dir` under its hensu.toml's `[retention]`.
pub fn execute(
    store: &dyn StateStore,
    dir: &Path,
    options: PurgeOptions,
    as_json: bool,
) -> anyhow::Result<ExitCode> {
    let section = crate::project::settings(dir)?.retention;
    if !section.is_enabled() && !options.rewrite {
        anyhow::bail!(
            "{}: no [retention] rule (max_age_days, max_count, failed_max_age_days): nothing \
             to purge (docs/retention.md)",
            dir.join(hensu_project::PROJECT_FILE).display()
        );
    }
    let report =
        crate::commands::session::wait(purge(store, &section, hensu_store::now_ms(), options))?;
    let mut out = std::io::stdout().lock();
    if as_json {
        let _ = writeln!(out, "{}", to_json(&report, options.dry_run));
    } else {
        let _ = write!(out, "{}", human(&report, options.dry_run));
    }
    Ok(ExitCode::from(exit::SUCCESS))
}

fn reason(r: PurgeReason) -> &'static str {
    match r {
        PurgeReason::Age => "age",
        PurgeReason::Count => "count",
    }
}

fn to_json(report: &PurgeReport, dry_run: bool) -> Value {
    let deleted: Vec<Value> = report
        .deleted
        .iter()
        .map(|(r, why)| {
            json!({
                "run_id": r.run_id,
                "workflow": r.workflow_id,
                "status": r.status.as_str(),
                "tenant": r.tenant,
                "ended_at": hensu_store::rfc3339(r.updated_at),
                "reason": reason(*why),
            })
        })
        .collect();
    json!({
        "format_version": PURGE_FORMAT_VERSION,
        "dry_run": dry_run,
        "examined": report.examined,
        "deleted": deleted,
        "kept_for_forks": report.kept_for_forks,
        "reclaimed": report.reclaimed.as_ref().map(|r| json!({
            "bytes_before": r.bytes_before,
            "bytes_after": r.bytes_after,
            "free_pages": r.free_pages,
            "note": r.note,
        })),
    })
}

fn human(report: &PurgeReport, dry_run: bool) -> String {
    let mut s = String::new();
    let verb = if dry_run { "would purge" } else { "purged" };
    for (r, why) in &report.deleted {
        s.push_str(&format!(
            "{verb} {}  {}  {}  ended {}  ({})\n",
            r.run_id,
            r.workflow_id,
            r.status.as_str(),
            hensu_store::rfc3339(r.updated_at),
            reason(*why)
        ));
    }
    for id in &report.kept_for_forks {
        s.push_str(&format!("kept {id}: a kept fork reads its log\n"));
    }
    s.push_str(&format!(
        "{verb} {} of {} runs ({} kept for their forks)\n",
        report.deleted.len(),
        report.examined,
        report.kept_for_forks.len()
    ));
    if let Some(r) = &report.reclaimed {
        if let (Some(before), Some(after)) = (r.bytes_before, r.bytes_after) {
            s.push_str(&format!("store file: {before} → {after} bytes\n"));
        }
        s.push_str(&format!("{}\n", r.note));
    }
    s
}
