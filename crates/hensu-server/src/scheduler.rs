//! The scheduler of `hensuc serve` (docs/schedules.md): a task beside the takeover worker
//! that writes the `[[schedules]]` of hensu.toml into the store, then every
//! [`Scheduling::poll`](crate::service::firing::Scheduling) fires the schedules that are due
//! and moves the open firings on (queued ones whose previous run ended, claims a stopped server
//! left). Every server sharing a database runs one; the store's claim lets exactly one of them
//! fire each tick (`hensu_store::ScheduleStore`).

use hensu_runtime::CancelToken;
use hensu_store::{ScheduleRow, StoreError};

use crate::AppState;
use crate::service::firing;

/// Finished firings are kept this long (the latest started one of a schedule always).
pub const FIRING_RETENTION_MS: u64 = 30 * 24 * 3_600_000;

/// How often finished firings are trimmed.
const TRIM_EVERY_MS: u64 = 3_600_000;

/// Runs until `closing` is cancelled.
pub async fn run(app: AppState, closing: CancelToken) {
    while let Err(e) = sync_config(&app).await {
        tracing::warn!(error = %e, "writing the schedules of hensu.toml failed; retrying");
        tokio::select! {
            () = closing.cancelled() => return,
            () = tokio::time::sleep(std::time::Duration::from_secs(1)) => {}
        }
    }
    let mut trimmed_at = 0;
    loop {
        let now = hensu_store::now_ms();
        if let Err(e) = pass(&app, now).await {
            tracing::warn!(error = %e, "a scheduler pass failed");
        }
        if now.saturating_sub(trimmed_at) >= TRIM_EVERY_MS {
            trimmed_at = now;
            let before = now.saturating_sub(FIRING_RETENTION_MS);
            if let Err(e) = app.scheduling.store.trim_firings(before).await {
                tracing::warn!(error = %e, "trimming old firings failed");
            }
        }
        tokio::select! {
            () = closing.cancelled() => return,
            () = tokio::time::sleep(app.scheduling.poll) => {}
        }
    }
}

/// One pass: every due schedule, then the open firings.
pub async fn pass(app: &AppState, now: u64) -> Result<(), StoreError> {
    for row in app.scheduling.store.due(now, 64).await? {
        firing::fire_due(app, &row, now).await?;
    }
    firing::resume_open(app, now).await
}

/// Writes `[[schedules]]` of hensu.toml as `config` schedules (a new one fires from its next
/// occurrence; an existing one keeps its pause and, unless its cron or time zone changed, its
/// next tick, so ticks missed while no server ran follow its missed-run policy) and deletes the
/// config schedules the file no longer declares.
pub async fn sync_config(app: &AppState) -> Result<(), StoreError> {
    let sched = &app.scheduling;
    let now = hensu_store::now_ms();
    let mut declared = Vec::new();
    for entry in &sched.config {
        let Ok(cadence) = entry.cadence() else {
            continue; // the file's check refused it (E0913, E0914)
        };
        let tenant = entry
            .tenant
            .clone()
            .unwrap_or_else(|| crate::auth::DEV_TENANT.to_string());
        let row = ScheduleRow {
            tenant_id: tenant.clone(),
            schedule_id: entry.name.clone(),
            workflow_id: entry.workflow.clone(),
            cron: entry.cron.clone(),
            time_zone: entry.zone().to_string(),
            context: serde_json::Value::Object(entry.context.clone()),
            overlap: entry.overlap.as_str().to_string(),
            missed: entry.missed.as_str().to_string(),
            grace_seconds: entry.grace(),
            paused: entry.paused,
            source: "config".into(),
            next_fire_at: cadence.next_after(now),
            created_at: now,
            updated_at: now,
        };
        if !sched.store.put_config_schedule(&row).await? {
            tracing::warn!(
                tenant,
                schedule = entry.name,
                "a schedule created over the API has this name; the hensu.toml entry is ignored"
            );
        }
        declared.push((tenant, entry.name.clone()));
    }
    for row in sched.store.list_schedules(None).await? {
        let gone = row.source == "config"
            && !declared
                .iter()
                .any(|(t, n)| *t == row.tenant_id && *n == row.schedule_id);
        if gone {
            sched
                .store
                .delete_schedule(&row.tenant_id, &row.schedule_id)
                .await?;
        }
    }
    Ok(())
}
