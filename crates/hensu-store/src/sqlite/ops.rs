//! [`StateStore`] on SQLite.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension};
use serde_json::Value;

use super::rows::{
    NewLogRow, adopt_snapshot, check_holder, compact, get_lease, get_record, get_run, insert_log,
    insert_snapshot, locked, log_key, log_key_end, materialize, put_lease, query_records,
    renew_lease, step_in_place, store_snapshot, write_step,
};
use super::{SqliteStore, corrupt, parse_status, to_i64, to_u64};
use crate::owner::LeaseRow;
use crate::time::now_ms;
use crate::{
    CancelRequest, CheckpointMeta, Checkpointed, ClaimNote, Claimed, Lease, LogEntry, LogKind,
    OwnerId, RecordUpdate, Renewed, Result, RunRecord, RunStatus, StateDelta, StateStore,
    StepEntry, StepSnapshot, StoreError, StoredRun, encode_snapshot,
};

/// The checks every write under a lease makes, in order: the run exists and is not
/// terminal, `lease` is the holder, the run is at `expected_step`.
fn check_write(
    tx: &Connection,
    path: &Path,
    lease: &Lease,
    expected_step: u64,
    now: u64,
) -> Result<(RunRecord, super::rows::LogState, u64)> {
    let run_id = lease.run_id.as_str();
    let (record, log) = get_run(tx, path, run_id)?;
    if record.status.is_terminal() {
        return Err(StoreError::Finished {
            run_id: run_id.to_string(),
            status: record.status,
        });
    }
    let expires_at = check_holder(tx, path, lease, now)?;
    if record.step != expected_step {
        return Err(StoreError::StepConflict {
            run_id: run_id.to_string(),
            expected: expected_step,
            actual: record.step,
        });
    }
    Ok((record, log, expires_at))
}

fn encode_json(what: &str, v: &Value) -> Result<Vec<u8>> {
    serde_json::to_vec(v)
        .map_err(|e| StoreError::Invalid(format!("{what} does not serialize: {e}")))
}

const META_COLS: &str =
    "step, node, status, at, snapshot_bytes, kind, executed_node, node_status, duration_ms";

type RawMeta = (
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

fn raw_meta(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawMeta> {
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

fn into_meta(raw: RawMeta, path: &Path) -> Result<CheckpointMeta> {
    let (step, node, status, at, bytes, kind, executed_node, node_status, duration) = raw;
    let opt = |v: Option<i64>, what| v.map(|v| to_u64(v, path, what)).transpose();
    Ok(CheckpointMeta {
        step: to_u64(step, path, "step")?,
        node,
        status: parse_status(&status, path)?,
        at: to_u64(at, path, "at")?,
        snapshot_bytes: opt(bytes, "snapshot_bytes")?,
        kind: LogKind::parse(&kind)
            .ok_or_else(|| corrupt(path, format!("unknown log kind `{kind}`")))?,
        executed_node,
        node_status,
        duration_ms: opt(duration, "duration_ms")?,
    })
}

impl StateStore for SqliteStore {
    fn create_run_encoded(&self, record: &RunRecord, wf: &[u8], snapshot: &Value) -> Result<()> {
        let snap = encode_snapshot(self.opts.snapshot_version, snapshot)?;
        let version = self.opts.snapshot_version;
        let (started, updated, step) = (
            to_i64(record.started_at)?,
            to_i64(record.updated_at)?,
            to_i64(record.step)?,
        );
        let snap_len = snap.len() as u64;
        self.write(|tx, path| {
            let sq = |e| StoreError::sqlite(path, e);
            let inserted = tx
                .execute(
                    &format!(
                        "INSERT OR IGNORE INTO runs ({}, run_no) VALUES (?1, ?2, ?3, ?4, ?5, ?6, \
                         ?7, ?8, ?9, ?10, ?11, ?10, ?12, 0, 0, \
                         (SELECT coalesce(max(run_no), 0) + 1 FROM runs))",
                        super::rows::RECORD_COLS
                    ),
                    rusqlite::params![
                        record.run_id,
                        record.workflow_id,
                        record.workflow_version,
                        record.status.as_str(),
                        record.current_node,
                        started,
                        updated,
                        record.correlation_id,
                        record.exit_status,
                        step,
                        i64::from(record.cancel_requested),
                        to_i64(snap_len)?,
                    ],
                )
                .map_err(sq)?;
            if inserted == 0 {
                return Err(StoreError::AlreadyExists {
                    run_id: record.run_id.clone(),
                });
            }
            tx.execute(
                "INSERT INTO run_data (run_id, workflow) VALUES (?1, ?2)",
                rusqlite::params![record.run_id, wf],
            )
            .map_err(sq)?;
            insert_snapshot(tx, path, &record.run_id, record.step, version, &snap)?;
            let update = RecordUpdate {
                status: record.status,
                current_node: record.current_node.clone(),
                correlation_id: record.correlation_id.clone(),
                exit_status: record.exit_status.clone(),
            };
            let row = NewLogRow {
                snapshot_bytes: Some(snap_len),
                ..NewLogRow::default()
            };
            insert_log(
                tx,
                path,
                &record.run_id,
                record.step,
                LogKind::Created,
                &update,
                record.updated_at,
                &row,
            )
        })
    }

    fn acquire(&self, run_id: &str, owner: &OwnerId) -> Result<Lease> {
        let ttl = self.opts.ttl_ms();
        self.write(|tx, path| {
            let record = get_record(tx, path, run_id)?;
            if record.status.is_terminal() {
                return Err(StoreError::Finished {
                    run_id: run_id.to_string(),
                    status: record.status,
                });
            }
            let now = now_ms();
            let me = owner.to_string();
            let mut row = LeaseRow::new(owner, now, ttl);
            if let Some(held) = get_lease(tx, path, run_id)? {
                if held.blocks(&me, now) {
                    return Err(locked(run_id, &held));
                }
                if held.owner == me {
                    row.acquired_at = held.acquired_at;
                }
            }
            put_lease(tx, path, run_id, &row)?;
            Ok(Lease {
                run_id: run_id.to_string(),
                owner: owner.clone(),
                acquired_at: row.acquired_at,
                expires_at: row.expires_at,
            })
        })
    }

    fn heartbeat(&self, lease: &Lease) -> Result<Renewed> {
        let ttl = self.opts.ttl_ms();
        self.write(|tx, path| {
            let now = now_ms();
            check_holder(tx, path, lease, now)?;
            let expires_at = now.saturating_add(ttl);
            renew_lease(tx, path, &lease.run_id, expires_at)?;
            let record = get_record(tx, path, &lease.run_id)?;
            Ok(Renewed {
                expires_at,
                cancel_requested: record.cancel_requested,
            })
        })
    }

    fn release(&self, lease: &Lease) -> Result<()> {
        let me = lease.owner.to_string();
        self.write(|tx, path| {
            tx.execute(
                "DELETE FROM leases WHERE run_id = ?1 AND owner = ?2",
                rusqlite::params![lease.run_id, me],
            )
            .map(|_| ())
            .map_err(|e| StoreError::sqlite(path, e))
        })
    }

    fn checkpoint(
        &self,
        lease: &Lease,
        expected_step: u64,
        update: &RecordUpdate,
        snapshot: &Value,
    ) -> Result<Checkpointed> {
        // Encode outside the lock: the transaction only copies bytes.
        let snap = encode_snapshot(self.opts.snapshot_version, snapshot)?;
        let version = self.opts.snapshot_version;
        let run_id = lease.run_id.as_str();
        self.write(|tx, path| {
            let now = now_ms();
            let (record, _, held_until) = check_write(tx, path, lease, expected_step, now)?;
            let step = expected_step.saturating_add(1);
            let len = snap.len() as u64;
            insert_snapshot(tx, path, run_id, step, version, &snap)?;
            let row = NewLogRow {
                snapshot_bytes: Some(len),
                ..NewLogRow::default()
            };
            write_step(
                tx,
                path,
                run_id,
                step,
                LogKind::Snapshot,
                update,
                now,
                &row,
                None,
            )?;
            adopt_snapshot(tx, path, run_id, step, len, None)?;
            let mut lease_expires_at = held_until;
            if !update.status.is_terminal()
                && let Some(renewed) = self.opts.renewal(held_until, now)
            {
                renew_lease(tx, path, run_id, renewed)?;
                lease_expires_at = renewed;
            }
            Ok(Checkpointed {
                step,
                at: now,
                lease_expires_at,
                cancel_requested: record.cancel_requested,
                snapshot_written: true,
                snapshot_wanted: false,
            })
        })
    }

    fn append(
        &self,
        lease: &Lease,
        expected_step: u64,
        update: &RecordUpdate,
        entry: &StepEntry,
    ) -> Result<Checkpointed> {
        let delta = serde_json::to_vec(&entry.delta)
            .map_err(|e| StoreError::Invalid(format!("the delta does not serialize: {e}")))?;
        let output = entry
            .output
            .as_ref()
            .map(|o| encode_json("the step output", o))
            .transpose()?;
        let offered = match &entry.snapshot {
            StepSnapshot::State(state) => Some(encode_snapshot(self.opts.snapshot_version, state)?),
            StepSnapshot::ByStore | StepSnapshot::OnRequest => None,
        };
        let policy = self.opts.snapshot_policy;
        let run_id = lease.run_id.as_str();
        let last = self.take_last_step();
        let (written, after) = self.write(|tx, path| {
            let now = now_ms();
            let step = expected_step.saturating_add(1);
            let delta_len = delta.len() as u64;
            let row = NewLogRow {
                executed_node: entry.node.as_deref(),
                node_status: entry.node_status.as_deref(),
                output,
                delta: Some(delta),
                state_version: Some(self.opts.snapshot_version),
                started_at: entry.started_at,
                duration_ms: entry.duration_ms,
                snapshot_bytes: None,
            };
            // The common case in one statement (no reads first); the checks' failures and
            // status changes take the full path.
            let (cancel_requested, log, held_until) = match step_in_place(
                tx,
                path,
                lease,
                expected_step,
                update,
                now,
                delta_len,
                last.as_ref(),
            )? {
                Some(done) => {
                    insert_log(tx, path, run_id, step, LogKind::Step, update, now, &row)?;
                    // Not cancelled: the step update's condition says so.
                    (false, done.log, done.lease_expires_at)
                }
                None => {
                    let (record, log, held_until) =
                        check_write(tx, path, lease, expected_step, now)?;
                    write_step(
                        tx,
                        path,
                        run_id,
                        step,
                        LogKind::Step,
                        update,
                        now,
                        &row,
                        Some(&record),
                    )?;
                    (record.cancel_requested, log, held_until)
                }
            };
            let due = policy.due(
                log.log_rows.saturating_add(1),
                log.log_bytes.saturating_add(delta_len),
                log.snapshot_bytes,
            );
            let snapshot = match (&offered, &entry.snapshot) {
                (Some(bytes), _) => {
                    Some(store_snapshot(tx, path, run_id, step, bytes, &self.opts)?)
                }
                (None, StepSnapshot::ByStore) if due => {
                    Some(compact(tx, path, run_id, step, &self.opts)?)
                }
                _ => None,
            };
            let snapshot_written = snapshot.is_some();
            let after = match snapshot {
                Some(bytes) => super::rows::LogState {
                    snapshot_step: step,
                    snapshot_bytes: bytes,
                    log_rows: 0,
                    log_bytes: 0,
                },
                None => super::rows::LogState {
                    log_rows: log.log_rows.saturating_add(1),
                    log_bytes: log.log_bytes.saturating_add(delta_len),
                    ..log
                },
            };
            let mut lease_expires_at = held_until;
            if !update.status.is_terminal()
                && let Some(renewed) = self.opts.renewal(held_until, now)
            {
                renew_lease(tx, path, run_id, renewed)?;
                lease_expires_at = renewed;
            }
            let written = Checkpointed {
                step,
                at: now,
                lease_expires_at,
                cancel_requested,
                snapshot_written,
                snapshot_wanted: due && !snapshot_written,
            };
            Ok((written, after))
        })?;
        if !update.status.is_terminal() && !written.cancel_requested {
            self.keep_last_step(super::rows::LastStep {
                run_id: run_id.to_string(),
                step: written.step,
                log: after,
                lease_expires_at: written.lease_expires_at,
            });
        }
        Ok(written)
    }

    fn set_status(
        &self,
        run_id: &str,
        lease: Option<&Lease>,
        expected_step: u64,
        update: &RecordUpdate,
    ) -> Result<RunRecord> {
        self.write(|tx, path| {
            let now = now_ms();
            let record = get_record(tx, path, run_id)?;
            match lease {
                Some(l) if l.run_id == run_id => {
                    check_holder(tx, path, l, now)?;
                }
                Some(l) => {
                    return Err(StoreError::Invalid(format!(
                        "a lease on `{}` used for run `{run_id}`",
                        l.run_id
                    )));
                }
                None => {
                    if let Some(held) = get_lease(tx, path, run_id)?
                        && held.blocks("", now)
                    {
                        return Err(locked(run_id, &held));
                    }
                }
            }
            if record.step != expected_step {
                return Err(StoreError::StepConflict {
                    run_id: run_id.to_string(),
                    expected: expected_step,
                    actual: record.step,
                });
            }
            let step = expected_step.saturating_add(1);
            let row = NewLogRow::default();
            write_step(
                tx,
                path,
                run_id,
                step,
                LogKind::Status,
                update,
                now,
                &row,
                None,
            )?;
            get_record(tx, path, run_id)
        })
    }

    fn request_cancel(&self, run_id: &str) -> Result<CancelRequest> {
        self.write(|tx, path| {
            let now = now_ms();
            let record = get_record(tx, path, run_id)?;
            if record.status.is_terminal() {
                return Ok(CancelRequest::AlreadyFinished(record.status));
            }
            if let Some(held) = get_lease(tx, path, run_id)?
                && held.blocks("", now)
            {
                tx.execute(
                    "UPDATE runs SET cancel_requested = 1 WHERE run_id = ?1",
                    [run_id],
                )
                .map_err(|e| StoreError::sqlite(path, e))?;
                return Ok(CancelRequest::Requested { owner: held.owner });
            }
            let update =
                RecordUpdate::finished(RunStatus::Cancelled, record.current_node.clone(), None);
            let step = record.step.saturating_add(1);
            let row = NewLogRow::default();
            write_step(
                tx,
                path,
                run_id,
                step,
                LogKind::Status,
                &update,
                now,
                &row,
                None,
            )?;
            Ok(CancelRequest::Cancelled(get_record(tx, path, run_id)?))
        })
    }

    fn load(&self, run_id: &str) -> Result<StoredRun> {
        let expected = self.opts.snapshot_version;
        self.read(|tx, path| {
            let (record, log) = get_run(tx, path, run_id)?;
            let wf: Vec<u8> = tx
                .prepare_cached("SELECT workflow FROM run_data WHERE run_id = ?1")
                .and_then(|mut s| s.query_row([run_id], |r| r.get(0)).optional())
                .map_err(|e| StoreError::sqlite(path, e))?
                .ok_or_else(|| corrupt(path, format!("run `{run_id}` has no data row")))?;
            let snapshot = materialize(tx, path, run_id, &log, expected)?;
            let workflow: Value = serde_json::from_slice(&wf)
                .map_err(|e| corrupt(path, format!("run `{run_id}`: undecodable workflow: {e}")))?;
            Ok(StoredRun {
                record,
                workflow,
                snapshot,
                snapshot_version: expected,
            })
        })
    }

    fn record(&self, run_id: &str) -> Result<RunRecord> {
        self.read(|tx, path| get_record(tx, path, run_id))
    }

    fn list(&self) -> Result<Vec<RunRecord>> {
        self.read(|tx, path| query_records(tx, path, "ORDER BY started_at DESC, run_id DESC", &[]))
    }

    fn find_by_correlation(&self, correlation_id: &str) -> Result<Option<RunRecord>> {
        self.read(|tx, path| {
            let mut found = query_records(
                tx,
                path,
                "WHERE correlation_id = ?1 ORDER BY updated_at DESC LIMIT 1",
                &[&correlation_id],
            )?;
            Ok(found.pop())
        })
    }

    fn history(&self, run_id: &str) -> Result<Vec<CheckpointMeta>> {
        self.read(|tx, path| {
            get_record(tx, path, run_id)?;
            let rows = tx
                .prepare_cached(&format!(
                    "SELECT {META_COLS} FROM run_log WHERE id >= {} AND id < {} ORDER BY id",
                    log_key!(),
                    log_key_end!()
                ))
                .and_then(|mut s| {
                    s.query_map([run_id], raw_meta)?
                        .collect::<rusqlite::Result<Vec<_>>>()
                })
                .map_err(|e| StoreError::sqlite(path, e))?;
            rows.into_iter().map(|r| into_meta(r, path)).collect()
        })
    }

    fn read_log(&self, run_id: &str, after: u64, limit: usize) -> Result<Vec<LogEntry>> {
        let after = to_i64(after)?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.read(|tx, path| {
            get_record(tx, path, run_id)?;
            let rows = tx
                .prepare_cached(&format!(
                    "SELECT {META_COLS}, output, delta, started_at FROM run_log \
                     WHERE id > {} + ?2 AND id < {} ORDER BY id LIMIT ?3",
                    log_key!(),
                    log_key_end!()
                ))
                .and_then(|mut s| {
                    s.query_map(rusqlite::params![run_id, after, limit], |r| {
                        Ok((
                            raw_meta(r)?,
                            r.get::<_, Option<Vec<u8>>>(9)?,
                            r.get::<_, Option<Vec<u8>>>(10)?,
                            r.get::<_, Option<i64>>(11)?,
                        ))
                    })?
                    .collect::<rusqlite::Result<Vec<_>>>()
                })
                .map_err(|e| StoreError::sqlite(path, e))?;
            rows.into_iter()
                .map(|(meta, output, delta, started)| {
                    let meta = into_meta(meta, path)?;
                    let step = meta.step;
                    let bad = |what: &str, e: serde_json::Error| {
                        corrupt(
                            path,
                            format!("run `{run_id}`: the {what} of step {step}: {e}"),
                        )
                    };
                    Ok(LogEntry {
                        output: output
                            .map(|o| serde_json::from_slice::<Value>(&o))
                            .transpose()
                            .map_err(|e| bad("output", e))?,
                        delta: delta
                            .map(|d| serde_json::from_slice::<StateDelta>(&d))
                            .transpose()
                            .map_err(|e| bad("delta", e))?,
                        started_at: started.map(|s| to_u64(s, path, "started_at")).transpose()?,
                        meta,
                    })
                })
                .collect()
        })
    }

    fn claim(&self, owner: &OwnerId, limit: usize) -> Result<Vec<Claimed>> {
        let ttl = self.opts.ttl_ms();
        let me = owner.to_string();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.write(|tx, path| {
            let now_u = now_ms();
            let now = to_i64(now_u)?;
            let expires = now.saturating_add(to_i64(ttl)?);
            // Who held each claimable run before (a takeover, not a queued run): read before
            // the upsert replaces it.
            let held: std::collections::HashMap<String, String> = tx
                .prepare_cached(
                    "SELECT l.run_id, l.owner FROM leases l JOIN runs r ON r.run_id = l.run_id \
                     WHERE r.status IN ('queued', 'running') AND l.expires_at <= ?1",
                )
                .and_then(|mut s| {
                    s.query_map([now], |r| {
                        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
                    })?
                    .collect::<rusqlite::Result<_>>()
                })
                .map_err(|e| StoreError::sqlite(path, e))?;
            let rows = tx
                .prepare_cached(
                    "INSERT INTO leases (run_id, owner, host, pid, acquired_at, expires_at) \
                     SELECT r.run_id, ?1, ?2, ?3, ?4, ?5 FROM runs r \
                     LEFT JOIN leases l ON l.run_id = r.run_id \
                     WHERE r.status IN ('queued', 'running') \
                     AND (l.run_id IS NULL OR l.expires_at <= ?4) \
                     ORDER BY r.started_at, r.run_id LIMIT ?6 \
                     ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner, \
                     host = excluded.host, pid = excluded.pid, \
                     acquired_at = excluded.acquired_at, expires_at = excluded.expires_at \
                     WHERE leases.expires_at <= ?4 \
                     RETURNING run_id, acquired_at, expires_at",
                )
                .and_then(|mut stmt| {
                    stmt.query_map(
                        rusqlite::params![
                            me,
                            owner.host,
                            i64::from(owner.pid),
                            now,
                            expires,
                            limit
                        ],
                        |r| {
                            Ok((
                                r.get::<_, String>(0)?,
                                r.get::<_, i64>(1)?,
                                r.get::<_, i64>(2)?,
                            ))
                        },
                    )?
                    .collect::<rusqlite::Result<Vec<_>>>()
                })
                .map_err(|e| StoreError::sqlite(path, e))?;
            let mut out = Vec::with_capacity(rows.len());
            for (run_id, acquired_at, expires_at) in rows {
                let from = held.get(&run_id).cloned();
                let record = get_record(tx, path, &run_id)?;
                let step = record.step.saturating_add(1);
                let (update, note) = ClaimNote::claim(record, me.clone(), from.clone());
                let row = NewLogRow {
                    output: Some(note),
                    ..NewLogRow::default()
                };
                write_step(
                    tx,
                    path,
                    &run_id,
                    step,
                    LogKind::Claimed,
                    &update,
                    now_u,
                    &row,
                    None,
                )?;
                out.push(Claimed {
                    taken_over: from.is_some(),
                    lease: Lease {
                        run_id,
                        owner: owner.clone(),
                        acquired_at: to_u64(acquired_at, path, "acquired_at")?,
                        expires_at: to_u64(expires_at, path, "expires_at")?,
                    },
                });
            }
            Ok(out)
        })
    }

    fn heartbeat_owner(&self, owner: &OwnerId) -> Result<Vec<(String, Renewed)>> {
        let ttl = self.opts.ttl_ms();
        let me = owner.to_string();
        self.write(|tx, path| {
            let expires_at = now_ms().saturating_add(ttl);
            tx.prepare_cached(
                "UPDATE leases SET expires_at = ?2 WHERE owner = ?1 \
                 RETURNING run_id, (SELECT cancel_requested FROM runs r \
                                    WHERE r.run_id = leases.run_id)",
            )
            .and_then(|mut s| {
                s.query_map(
                    rusqlite::params![me, to_i64(expires_at).unwrap_or(i64::MAX)],
                    |r| {
                        Ok((
                            r.get::<_, String>(0)?,
                            Renewed {
                                expires_at,
                                cancel_requested: r.get::<_, Option<i64>>(1)?.unwrap_or(0) != 0,
                            },
                        ))
                    },
                )?
                .collect::<rusqlite::Result<Vec<_>>>()
            })
            .map_err(|e| StoreError::sqlite(path, e))
        })
    }
}
