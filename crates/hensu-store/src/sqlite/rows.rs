//! SQLite rows into the store's types: a run's record with its log counters, a log row's
//! metadata. Column order is the statements' (`RECORD_COLS`, `META_COLS` in `backend.rs`).

use std::path::Path;

use rusqlite::Row;

use crate::backend::{LogState, parse_kind, parse_status, to_u64};
use crate::{CheckpointMeta, Result, RunParent, RunRecord, RunWait};

pub(crate) struct RawRecord {
    run_id: String,
    workflow_id: String,
    workflow_version: String,
    status: String,
    current_node: Option<String>,
    started_at: i64,
    updated_at: i64,
    correlation_id: Option<String>,
    exit_status: Option<String>,
    step: i64,
    cancel_requested: i64,
    log: [i64; 4],
    parent_run: Option<String>,
    parent_step: Option<i64>,
    pause_requested: i64,
    wake_at: Option<i64>,
    waiting_for: Option<String>,
}

impl RawRecord {
    pub(crate) fn from_row(r: &Row<'_>) -> rusqlite::Result<RawRecord> {
        Ok(RawRecord {
            run_id: r.get(0)?,
            workflow_id: r.get(1)?,
            workflow_version: r.get(2)?,
            status: r.get(3)?,
            current_node: r.get(4)?,
            started_at: r.get(5)?,
            updated_at: r.get(6)?,
            correlation_id: r.get(7)?,
            exit_status: r.get(8)?,
            step: r.get(9)?,
            cancel_requested: r.get(10)?,
            log: [r.get(11)?, r.get(12)?, r.get(13)?, r.get(14)?],
            parent_run: r.get(15)?,
            parent_step: r.get(16)?,
            pause_requested: r.get(17)?,
            wake_at: r.get(18)?,
            waiting_for: r.get(19)?,
        })
    }

    pub(crate) fn into_record(self, path: &Path) -> Result<(RunRecord, LogState)> {
        let log = log_state(self.log, path)?;
        let parent = match (self.parent_run, self.parent_step) {
            (Some(run_id), Some(step)) => Some(RunParent {
                run_id,
                step: to_u64(step, path, "parent_step")?,
            }),
            _ => None,
        };
        let wake_at = self
            .wake_at
            .map(|w| to_u64(w, path, "wake_at"))
            .transpose()?;
        let wait = RunWait::from_columns(wake_at, self.waiting_for);
        let record = RunRecord {
            wait,
            parent,
            status: parse_status(&self.status, path)?,
            started_at: to_u64(self.started_at, path, "started_at")?,
            updated_at: to_u64(self.updated_at, path, "updated_at")?,
            step: to_u64(self.step, path, "step")?,
            cancel_requested: self.cancel_requested != 0,
            pause_requested: self.pause_requested != 0,
            run_id: self.run_id,
            workflow_id: self.workflow_id,
            workflow_version: self.workflow_version,
            current_node: self.current_node,
            correlation_id: self.correlation_id,
            exit_status: self.exit_status,
        };
        Ok((record, log))
    }
}

pub(crate) fn log_state(cols: [i64; 4], path: &Path) -> Result<LogState> {
    Ok(LogState {
        snapshot_step: to_u64(cols[0], path, "snapshot_step")?,
        snapshot_bytes: to_u64(cols[1], path, "snapshot_bytes")?,
        log_rows: to_u64(cols[2], path, "log_rows")?,
        log_bytes: to_u64(cols[3], path, "log_bytes")?,
    })
}

pub(crate) type RawMeta = (
    i64,
    Option<String>,
    String,
    i64,
    Option<i64>,
    String,
    Option<String>,
    Option<String>,
    Option<i64>,
);

pub(crate) fn raw_meta(r: &Row<'_>) -> rusqlite::Result<RawMeta> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
        r.get(6)?,
        r.get(7)?,
        r.get(8)?,
    ))
}

pub(crate) fn into_meta(raw: RawMeta, path: &Path) -> Result<CheckpointMeta> {
    let (step, node, status, at, bytes, kind, executed_node, node_status, duration) = raw;
    let opt = |v: Option<i64>, what| v.map(|v| to_u64(v, path, what)).transpose();
    Ok(CheckpointMeta {
        step: to_u64(step, path, "step")?,
        node,
        status: parse_status(&status, path)?,
        at: to_u64(at, path, "at")?,
        snapshot_bytes: opt(bytes, "snapshot_bytes")?,
        kind: parse_kind(&kind, path)?,
        executed_node,
        node_status,
        duration_ms: opt(duration, "duration_ms")?,
    })
}
