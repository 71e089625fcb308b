//! The tenant event log: one row per run-log row of a tenant's run (claims aside), numbered by
//! one global, increasing sequence (`seq`) that the server's tenant streams follow
//! (docs/server.md, *Events*). Opening a stream reads the latest `seq` (O(1)); a reconnect
//! reads `seq > cursor` through the `(tenant_id, seq)` index, so neither costs O(history).
//!
//! The rows are written by triggers, in the transaction of the run-log row they describe, so
//! no write path of the store needs to know about tenants:
//! - SQLite: `AFTER INSERT` on `run_log` (a row of a tagged run) and on `run_tenants` (the
//!   rows a run logged before its tag, in the tag's transaction). One writer at a time
//!   (`BEGIN IMMEDIATE`), so `seq` order is commit order.
//! - PostgreSQL (`migrations/postgres_server/V4__tenant_events.sql`, `V5__tenant_event_inbox.sql`):
//!   a deferred constraint trigger on `run_log` appends the row to `tenant_event_inbox` in the
//!   writing transaction — no lock, no `NOTIFY`, so tenant runs' commits never wait for each
//!   other. A reader first moves committed inbox rows into `tenant_events` ([`pg::sequence`]):
//!   one transaction under a transaction-scoped advisory lock draws `seq` in inbox order, and
//!   the lock is released after that commit is visible. So when a row is visible, every
//!   smaller `seq` is visible too: a reader of `seq > cursor` never passes a row that commits
//!   later.
//!
//! Rows older than [`EVENT_RETENTION_MS`] are trimmed ([`crate::WorkflowRegistry::trim_events`],
//! the newest row always stays so the bounds stay known); a cursor below the oldest row kept
//! is told so by [`EventBounds::replayable`].

use std::path::Path;

use serde_json::Value;

use crate::backend::{corrupt, parse_kind, parse_status, to_u64};
use crate::{CheckpointMeta, LogEntry, Result};

/// How long tenant events are kept for replay: one hour.
pub const EVENT_RETENTION_MS: u64 = 60 * 60 * 1000;

/// One event of a tenant's run: its global sequence number, whose run it is, and the run-log
/// row (metadata and output; no delta).
#[derive(Clone, Debug, PartialEq)]
pub struct TenantEvent {
    pub seq: u64,
    pub tenant_id: String,
    pub run_id: String,
    pub workflow_id: String,
    pub entry: LogEntry,
}

/// The sequence numbers held: the oldest kept and the latest (both 0 when none was written).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct EventBounds {
    pub oldest: u64,
    pub latest: u64,
}

impl EventBounds {
    /// Whether every event after `cursor` is still held: `cursor` is at most the latest and
    /// nothing after it was trimmed. (A `seq` between two rows that is missing was never
    /// committed, so only the oldest row tells what was trimmed.)
    pub fn replayable(&self, cursor: u64) -> bool {
        cursor <= self.latest && (self.latest == 0 || cursor.saturating_add(1) >= self.oldest)
    }
}

/// Wake-ups for a follower of the tenant event log: one (or a few, coalesced) after each
/// commit that added events, whichever server made it. PostgreSQL only
/// ([`crate::WorkflowRegistry::event_wakeups`]): a connection of its own, outside the pool,
/// `LISTEN`ing to the trigger's `NOTIFY`. It ends (`None`) when that connection is lost.
pub struct EventWakeups {
    rx: tokio::sync::mpsc::Receiver<()>,
    /// Kept open while the wake-ups are wanted (the connection closes with it).
    _client: tokio_postgres::Client,
}

impl std::fmt::Debug for EventWakeups {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventWakeups").finish_non_exhaustive()
    }
}

impl EventWakeups {
    /// The next wake-up; `None` once the connection is lost.
    pub async fn next(&mut self) -> Option<()> {
        self.rx.recv().await
    }
}

/// A row of the event query as read: `seq, tenant_id, run_id, workflow_id, step, kind,
/// status, node, at, output` (the column order of both dialects' statements).
pub(crate) struct RawEvent {
    pub seq: i64,
    pub tenant_id: String,
    pub run_id: String,
    pub workflow_id: String,
    pub step: i64,
    pub kind: String,
    pub status: String,
    pub node: Option<String>,
    pub at: i64,
    pub output: Option<Vec<u8>>,
}

/// The event query's columns (`e`: `tenant_events`, `t`: `run_tenants`, `l`: `run_log`).
pub(crate) const EVENT_COLS: &str = "e.seq, e.tenant_id, e.run_id, t.workflow_id, l.step, \
     l.kind, l.status, l.node, l.at, l.output";

impl RawEvent {
    pub(crate) fn decode(self, path: &Path) -> Result<TenantEvent> {
        let output = self
            .output
            .map(|o| serde_json::from_slice::<Value>(&o))
            .transpose()
            .map_err(|e| {
                corrupt(
                    path,
                    format!(
                        "run `{}`: the output of step {}: {e}",
                        self.run_id, self.step
                    ),
                )
            })?;
        let meta = CheckpointMeta {
            step: to_u64(self.step, path, "step")?,
            node: self.node,
            status: parse_status(&self.status, path)?,
            at: to_u64(self.at, path, "at")?,
            snapshot_bytes: None,
            kind: parse_kind(&self.kind, path)?,
            executed_node: None,
            node_status: None,
            duration_ms: None,
        };
        Ok(TenantEvent {
            seq: to_u64(self.seq, path, "seq")?,
            tenant_id: self.tenant_id,
            run_id: self.run_id,
            workflow_id: self.workflow_id,
            entry: LogEntry {
                meta,
                output,
                delta: None,
                started_at: None,
            },
        })
    }
}

/// The SQLite side: the table, its index and the two triggers, created (if missing) with the
/// registry's tables every time a store opens.
pub(crate) const SQLITE_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS tenant_events (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id TEXT NOT NULL,
    run_id    TEXT NOT NULL,
    step      INTEGER NOT NULL,
    at        INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS tenant_events_by_tenant ON tenant_events (tenant_id, seq);
CREATE TRIGGER IF NOT EXISTS run_log_tenant_event AFTER INSERT ON run_log
    WHEN NEW.kind <> 'claimed'
BEGIN
    INSERT INTO tenant_events (tenant_id, run_id, step, at)
        SELECT tenant_id, NEW.run_id, NEW.step, NEW.at FROM run_tenants
        WHERE run_id = NEW.run_id;
END;
CREATE TRIGGER IF NOT EXISTS run_tenants_tenant_event AFTER INSERT ON run_tenants
BEGIN
    INSERT INTO tenant_events (tenant_id, run_id, step, at)
        SELECT NEW.tenant_id, l.run_id, l.step, l.at FROM run_log l
        WHERE l.id >= (SELECT run_no FROM runs WHERE run_id = NEW.run_id) * 4294967296
          AND l.id < (SELECT run_no + 1 FROM runs WHERE run_id = NEW.run_id) * 4294967296
          AND l.kind <> 'claimed'
        ORDER BY l.id;
END;
";

pub(crate) mod sqlite {
    use std::path::Path;

    use rusqlite::{Connection, params};

    use super::{EVENT_COLS, EventBounds, RawEvent, TenantEvent};
    use crate::backend::to_i64;
    use crate::{Result, StoreError};

    fn sq(path: &Path) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        move |e| StoreError::sqlite(path, e)
    }

    pub(crate) fn after(
        conn: &Connection,
        path: &Path,
        tenant: Option<&str>,
        after: u64,
        limit: usize,
    ) -> Result<Vec<TenantEvent>> {
        // Two statements, so each is planned for its own index (`tenant_events_by_tenant`
        // with a tenant, the key without).
        let filter = if tenant.is_some() {
            "e.tenant_id = ?3 AND"
        } else {
            "?3 IS NULL AND"
        };
        let after = to_i64(after)?;
        let sql = format!(
            "SELECT {EVENT_COLS} FROM tenant_events e \
             JOIN run_tenants t ON t.run_id = e.run_id \
             JOIN runs r ON r.run_id = e.run_id \
             JOIN run_log l ON l.id = r.run_no * 4294967296 + e.step \
             WHERE {filter} e.seq > ?1 ORDER BY e.seq LIMIT ?2"
        );
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = conn
            .prepare_cached(&sql)
            .and_then(|mut s| {
                s.query_map(params![after, limit, tenant], |r| {
                    Ok(RawEvent {
                        seq: r.get(0)?,
                        tenant_id: r.get(1)?,
                        run_id: r.get(2)?,
                        workflow_id: r.get(3)?,
                        step: r.get(4)?,
                        kind: r.get(5)?,
                        status: r.get(6)?,
                        node: r.get(7)?,
                        at: r.get(8)?,
                        output: r.get(9)?,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()
            })
            .map_err(sq(path))?;
        rows.into_iter().map(|r| r.decode(path)).collect()
    }

    pub(crate) fn bounds(conn: &Connection, path: &Path) -> Result<EventBounds> {
        let (oldest, latest): (Option<i64>, Option<i64>) = conn
            .query_row(
                "SELECT (SELECT seq FROM tenant_events ORDER BY seq LIMIT 1), \
                 (SELECT seq FROM tenant_events ORDER BY seq DESC LIMIT 1)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(sq(path))?;
        Ok(EventBounds {
            oldest: oldest.and_then(|v| u64::try_from(v).ok()).unwrap_or(0),
            latest: latest.and_then(|v| u64::try_from(v).ok()).unwrap_or(0),
        })
    }

    pub(crate) fn trim(conn: &Connection, path: &Path, before: u64, limit: usize) -> Result<u64> {
        let n = conn
            .prepare_cached(super::TRIM_SQLITE)
            .and_then(|mut s| {
                s.execute(params![
                    to_i64(before).unwrap_or(i64::MAX),
                    i64::try_from(limit).unwrap_or(i64::MAX)
                ])
            })
            .map_err(sq(path))?;
        Ok(n as u64)
    }
}

/// Deletes, oldest first and at most `?2` rows, the rows before the first one written at or
/// after `?1` (unix ms), never the newest. The walk stops at that first young row, so a trim
/// with nothing to do reads one row.
const TRIM_SQLITE: &str = "DELETE FROM tenant_events WHERE seq < coalesce(\
     (SELECT seq FROM tenant_events WHERE at >= ?1 ORDER BY seq LIMIT 1), \
     (SELECT seq FROM tenant_events ORDER BY seq DESC LIMIT 1)) \
     AND seq < (SELECT seq FROM tenant_events ORDER BY seq LIMIT 1) + ?2";

pub(crate) mod pg {
    use tokio_postgres::{AsyncMessage, Client, NoTls};

    use super::{EVENT_COLS, EventBounds, EventWakeups, RawEvent, TenantEvent};
    use crate::Result;
    use crate::backend::{corrupt, to_i64};
    use crate::postgres::pg_err;

    /// The channel the sequencer notifies once per batch it moved ([`sequence`]).
    const CHANNEL: &str = "hensu_tenant_events";
    /// The sequencer's transaction-scoped advisory lock ("hensu_ev", as in V4).
    const SEQUENCE_LOCK: i64 = 0x6865_6e73_755f_6576;
    /// Inbox rows moved per sequencer transaction at most (a short transaction; a reader
    /// that finds a full batch moved calls again).
    pub(crate) const SEQUENCE_BATCH: i64 = 10_000;

    /// Moves the oldest committed inbox rows (at most [`SEQUENCE_BATCH`]) into
    /// `tenant_events`, drawing their `seq` in inbox order under [`SEQUENCE_LOCK`], and
    /// notifies [`CHANNEL`] once if it moved any; returns how many it moved. Readers call it
    /// before they read, so events are sequenced by whichever server reads first; an empty
    /// inbox costs one indexed probe and no lock.
    pub(crate) async fn sequence(c: &mut Client, target: &str) -> Result<u64> {
        let pg = |e| pg_err(target, e);
        let pending = c
            .query_opt("SELECT 1 FROM tenant_event_inbox LIMIT 1", &[])
            .await
            .map_err(pg)?;
        if pending.is_none() {
            return Ok(0);
        }
        let tx = c.transaction().await.map_err(pg)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SEQUENCE_LOCK])
            .await
            .map_err(pg)?;
        // `ORDER BY id` in the INSERT's SELECT: identity values are drawn in that order, so a
        // run's rows (inbox ids increasing with its commits) keep their order.
        let moved = tx
            .execute(
                "WITH batch AS (DELETE FROM tenant_event_inbox WHERE id IN                  (SELECT id FROM tenant_event_inbox ORDER BY id LIMIT $1)                  RETURNING id, tenant_id, run_id, step, at)                  INSERT INTO tenant_events (tenant_id, run_id, step, at)                  SELECT tenant_id, run_id, step, at FROM batch ORDER BY id",
                &[&SEQUENCE_BATCH],
            )
            .await
            .map_err(pg)?;
        if moved > 0 {
            tx.execute("SELECT pg_notify($1, '')", &[&CHANNEL])
                .await
                .map_err(pg)?;
        }
        tx.commit().await.map_err(pg)?;
        Ok(moved)
    }

    /// [`sequence`] until the inbox holds less than a batch.
    pub(crate) async fn sequence_all(c: &mut Client, target: &str) -> Result<()> {
        while sequence(c, target).await? == SEQUENCE_BATCH as u64 {}
        Ok(())
    }

    /// A connection of its own `LISTEN`ing to the event log's notifications.
    pub(crate) async fn listen(
        config: &tokio_postgres::Config,
        target: &str,
    ) -> Result<EventWakeups> {
        listen_on(config, target, CHANNEL, false).await
    }

    /// A connection of its own `LISTEN`ing to `channel`'s notifications. With `own_schema`,
    /// only notifications whose payload is this connection's schema wake (a channel is
    /// database-wide; the store's `hensu_work` wake-up sends the writer's schema).
    pub(crate) async fn listen_on(
        config: &tokio_postgres::Config,
        target: &str,
        channel: &str,
        own_schema: bool,
    ) -> Result<EventWakeups> {
        let (client, mut conn) = config.connect(NoTls).await.map_err(|e| pg_err(target, e))?;
        let (tx, rx) = tokio::sync::mpsc::channel(1);
        let schema = std::sync::Arc::new(std::sync::OnceLock::<String>::new());
        let wanted = schema.clone();
        // Drives the connection: every notification is a wake-up (a full channel already
        // holds one); an error or the end of the connection ends the wake-ups.
        tokio::spawn(async move {
            while let Some(Ok(message)) = std::future::poll_fn(|cx| conn.poll_message(cx)).await {
                if let AsyncMessage::Notification(n) = message
                    && (!own_schema || wanted.get().is_some_and(|s| s == n.payload()))
                {
                    let _ = tx.try_send(());
                }
                if tx.is_closed() {
                    break;
                }
            }
        });
        if own_schema {
            let row = client
                .query_one("SELECT current_schema()", &[])
                .await
                .map_err(|e| pg_err(target, e))?;
            let name: Option<String> = row.try_get(0).map_err(|e| pg_err(target, e))?;
            let _ = schema.set(name.unwrap_or_default());
        }
        client
            .batch_execute(&format!("LISTEN {channel}"))
            .await
            .map_err(|e| pg_err(target, e))?;
        Ok(EventWakeups {
            rx,
            _client: client,
        })
    }

    pub(crate) async fn after(
        c: &Client,
        target: &str,
        tenant: Option<&str>,
        after: u64,
        limit: usize,
    ) -> Result<Vec<TenantEvent>> {
        let path = std::path::Path::new(target);
        let filter = if tenant.is_some() {
            "e.tenant_id = $3 AND"
        } else {
            ""
        };
        let sql = format!(
            "SELECT {EVENT_COLS} FROM tenant_events e \
             JOIN run_tenants t ON t.run_id = e.run_id \
             JOIN run_log l ON l.run_id = e.run_id AND l.step = e.step \
             WHERE {filter} e.seq > $1 ORDER BY e.seq LIMIT $2"
        );
        let (after, limit) = (to_i64(after)?, i64::try_from(limit).unwrap_or(i64::MAX));
        let rows = match tenant {
            Some(t) => c.query(&sql, &[&after, &limit, &t]).await,
            None => c.query(&sql, &[&after, &limit]).await,
        }
        .map_err(|e| pg_err(target, e))?;
        rows.iter()
            .map(|r| {
                let get = |e: tokio_postgres::Error| corrupt(path, format!("an event row: {e}"));
                RawEvent {
                    seq: r.try_get(0).map_err(get)?,
                    tenant_id: r.try_get(1).map_err(get)?,
                    run_id: r.try_get(2).map_err(get)?,
                    workflow_id: r.try_get(3).map_err(get)?,
                    step: r.try_get(4).map_err(get)?,
                    kind: r.try_get(5).map_err(get)?,
                    status: r.try_get(6).map_err(get)?,
                    node: r.try_get(7).map_err(get)?,
                    at: r.try_get(8).map_err(get)?,
                    output: r.try_get(9).map_err(get)?,
                }
                .decode(path)
            })
            .collect()
    }

    pub(crate) async fn bounds(c: &Client, target: &str) -> Result<EventBounds> {
        let row = c
            .query_one(
                "SELECT (SELECT seq FROM tenant_events ORDER BY seq LIMIT 1), \
                 (SELECT seq FROM tenant_events ORDER BY seq DESC LIMIT 1)",
                &[],
            )
            .await
            .map_err(|e| pg_err(target, e))?;
        let get = |i: usize| -> u64 {
            row.try_get::<_, Option<i64>>(i)
                .ok()
                .flatten()
                .and_then(|v| u64::try_from(v).ok())
                .unwrap_or(0)
        };
        Ok(EventBounds {
            oldest: get(0),
            latest: get(1),
        })
    }

    pub(crate) async fn trim(c: &Client, target: &str, before: u64, limit: usize) -> Result<u64> {
        // Inbox rows no server sequenced within the retention window (none ran): nobody could
        // replay them any more, so they are dropped rather than sequenced.
        c.execute(
            "DELETE FROM tenant_event_inbox WHERE id IN (SELECT id FROM tenant_event_inbox \
             WHERE at < $1 ORDER BY id LIMIT $2)",
            &[
                &to_i64(before).unwrap_or(i64::MAX),
                &i64::try_from(limit).unwrap_or(i64::MAX),
            ],
        )
        .await
        .map_err(|e| pg_err(target, e))?;
        let n = c
            .execute(
                "DELETE FROM tenant_events WHERE seq < coalesce(\
                 (SELECT seq FROM tenant_events WHERE at >= $1 ORDER BY seq LIMIT 1), \
                 (SELECT seq FROM tenant_events ORDER BY seq DESC LIMIT 1)) \
                 AND seq < (SELECT seq FROM tenant_events ORDER BY seq LIMIT 1) + $2",
                &[
                    &to_i64(before).unwrap_or(i64::MAX),
                    &i64::try_from(limit).unwrap_or(i64::MAX),
                ],
            )
            .await
            .map_err(|e| pg_err(target, e))?;
        Ok(n)
    }
}
