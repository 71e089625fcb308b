//! Schedules on SQLite (`crate::schedules`): the store's one connection, each operation one
//! transaction on its writer thread (`BEGIN IMMEDIATE` for writes: a claim's read of
//! `next_fire_at` and its update cannot interleave with another process's).

use rusqlite::{Connection, OptionalExtension, Row, params};

use crate::schedules::{
    Firing, FiringState, NewFiring, ScheduleRow, ScheduleStore, TickClaim, decode_context,
    encode_context, state_of,
};
use crate::workflows::ms;
use crate::{Result, SqliteStore, StoreError};

/// The tables (schema 7; `SCHEMA` and the migration from 6 both run it).
pub(crate) const TABLES: &str = "
CREATE TABLE IF NOT EXISTS schedules (
    tenant_id     TEXT NOT NULL,
    schedule_id   TEXT NOT NULL,
    workflow_id   TEXT NOT NULL,
    cron          TEXT NOT NULL,
    time_zone     TEXT NOT NULL,
    context       BLOB NOT NULL,
    overlap       TEXT NOT NULL,
    missed        TEXT NOT NULL,
    grace_seconds INTEGER NOT NULL,
    paused        INTEGER NOT NULL DEFAULT 0,
    source        TEXT NOT NULL,
    next_fire_at  INTEGER,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, schedule_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS schedules_due ON schedules (next_fire_at)
    WHERE paused = 0 AND next_fire_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS schedule_firings (
    tenant_id   TEXT NOT NULL,
    schedule_id TEXT NOT NULL,
    tick        INTEGER NOT NULL,
    state       TEXT NOT NULL,
    run_id      TEXT,
    detail      TEXT,
    owner       TEXT NOT NULL,
    claimed_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, schedule_id, tick)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS schedule_firings_open ON schedule_firings (claimed_at)
    WHERE state IN ('claimed', 'queued');
";

const COLUMNS: &str = "tenant_id, schedule_id, workflow_id, cron, time_zone, context, overlap, \
                       missed, grace_seconds, paused, source, next_fire_at, created_at, updated_at";

const FIRING_COLUMNS: &str =
    "tenant_id, schedule_id, tick, state, run_id, detail, owner, claimed_at, updated_at";

/// A schedule row with its context still encoded.
struct Raw(ScheduleRow, Vec<u8>);

fn raw(r: &Row<'_>) -> rusqlite::Result<Raw> {
    Ok(Raw(
        ScheduleRow {
            tenant_id: r.get(0)?,
            schedule_id: r.get(1)?,
            workflow_id: r.get(2)?,
            cron: r.get(3)?,
            time_zone: r.get(4)?,
            context: serde_json::Value::Null,
            overlap: r.get(6)?,
            missed: r.get(7)?,
            grace_seconds: ms(r.get(8)?),
            paused: r.get::<_, i64>(9)? != 0,
            source: r.get(10)?,
            next_fire_at: r.get::<_, Option<i64>>(11)?.map(ms),
            created_at: ms(r.get(12)?),
            updated_at: ms(r.get(13)?),
        },
        r.get(5)?,
    ))
}

type RawFiring = (Firing, String);

fn raw_firing(r: &Row<'_>) -> rusqlite::Result<RawFiring> {
    Ok((
        Firing {
            tenant_id: r.get(0)?,
            schedule_id: r.get(1)?,
            tick: ms(r.get(2)?),
            state: FiringState::Claimed,
            run_id: r.get(4)?,
            detail: r.get(5)?,
            owner: r.get(6)?,
            claimed_at: ms(r.get(7)?),
            updated_at: ms(r.get(8)?),
        },
        r.get(3)?,
    ))
}

fn int(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The schedules of a [`SqliteStore`].
#[derive(Clone, Debug)]
pub struct SqliteSchedules {
    store: SqliteStore,
}

impl SqliteSchedules {
    pub(crate) fn new(store: &SqliteStore) -> SqliteSchedules {
        SqliteSchedules {
            store: store.clone(),
        }
    }

    async fn write<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T> {
        self.store
            .write(|tx, _| f(tx.conn).map_err(|e| StoreError::sqlite(tx.path, e)))
            .await
    }

    async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T> {
        self.store
            .read(|tx, _| f(tx.conn).map_err(|e| StoreError::sqlite(tx.path, e)))
            .await
    }

    fn target(&self) -> String {
        self.store.path().display().to_string()
    }

    fn rows(&self, raws: Vec<Raw>) -> Result<Vec<ScheduleRow>> {
        let target = self.target();
        raws.into_iter()
            .map(|Raw(mut row, bytes)| {
                row.context = decode_context(&target, &bytes)?;
                Ok(row)
            })
            .collect()
    }

    fn firings_of(&self, raws: Vec<RawFiring>) -> Result<Vec<Firing>> {
        let target = self.target();
        raws.into_iter()
            .map(|(mut f, state)| {
                f.state = state_of(&target, &state)?;
                Ok(f)
            })
            .collect()
    }

    async fn select(
        &self,
        sql: String,
        args: Vec<rusqlite::types::Value>,
    ) -> Result<Vec<ScheduleRow>> {
        let raws = self
            .read(move |c| {
                let mut st = c.prepare(&sql)?;
                st.query_map(rusqlite::params_from_iter(args), raw)?
                    .collect::<rusqlite::Result<Vec<Raw>>>()
            })
            .await?;
        self.rows(raws)
    }

    async fn select_firings(
        &self,
        sql: String,
        args: Vec<rusqlite::types::Value>,
    ) -> Result<Vec<Firing>> {
        let raws = self
            .read(move |c| {
                let mut st = c.prepare(&sql)?;
                st.query_map(rusqlite::params_from_iter(args), raw_firing)?
                    .collect::<rusqlite::Result<Vec<RawFiring>>>()
            })
            .await?;
        self.firings_of(raws)
    }
}

fn insert_firing(
    c: &Connection,
    tenant: &str,
    id: &str,
    f: &NewFiring,
    owner: &str,
    now: i64,
) -> rusqlite::Result<bool> {
    let n = c.execute(
        "INSERT INTO schedule_firings (tenant_id, schedule_id, tick, state, run_id, detail, owner, \
         claimed_at, updated_at) VALUES (?1, ?2, ?3, ?4, NULL, ?5, ?6, ?7, ?7) \
         ON CONFLICT (tenant_id, schedule_id, tick) DO NOTHING",
        params![
            tenant,
            id,
            int(f.tick),
            f.state.as_str(),
            f.detail,
            owner,
            now
        ],
    )?;
    Ok(n == 1)
}

fn text(s: &str) -> rusqlite::types::Value {
    rusqlite::types::Value::Text(s.to_string())
}

#[async_trait::async_trait]
impl ScheduleStore for SqliteSchedules {
    async fn create_schedule(&self, row: &ScheduleRow) -> Result<()> {
        let context = encode_context(&row.context)?;
        let label = format!("schedule {}/{}", row.tenant_id, row.schedule_id);
        let row = row.clone();
        let inserted = self
            .write(move |c| {
                c.execute(
                    &format!(
                        "INSERT INTO schedules ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, \
                         ?8, ?9, ?10, ?11, ?12, ?13, ?14) \
                         ON CONFLICT (tenant_id, schedule_id) DO NOTHING"
                    ),
                    params![
                        row.tenant_id,
                        row.schedule_id,
                        row.workflow_id,
                        row.cron,
                        row.time_zone,
                        context,
                        row.overlap,
                        row.missed,
                        int(row.grace_seconds),
                        row.paused,
                        row.source,
                        row.next_fire_at.map(int),
                        int(row.created_at),
                        int(row.updated_at),
                    ],
                )
            })
            .await?;
        if inserted == 1 {
            Ok(())
        } else {
            Err(StoreError::AlreadyExists { run_id: label })
        }
    }

    async fn update_schedule(&self, row: &ScheduleRow) -> Result<bool> {
        let context = encode_context(&row.context)?;
        let row = row.clone();
        self.write(move |c| {
            c.execute(
                "UPDATE schedules SET workflow_id = ?3, cron = ?4, time_zone = ?5, context = ?6, \
                 overlap = ?7, missed = ?8, grace_seconds = ?9, paused = ?10, \
                 next_fire_at = ?11, updated_at = ?12 WHERE tenant_id = ?1 AND schedule_id = ?2",
                params![
                    row.tenant_id,
                    row.schedule_id,
                    row.workflow_id,
                    row.cron,
                    row.time_zone,
                    context,
                    row.overlap,
                    row.missed,
                    int(row.grace_seconds),
                    row.paused,
                    row.next_fire_at.map(int),
                    int(row.updated_at),
                ],
            )
        })
        .await
        .map(|n| n > 0)
    }

    async fn put_config_schedule(&self, row: &ScheduleRow) -> Result<bool> {
        let context = encode_context(&row.context)?;
        let row = row.clone();
        self.write(move |c| {
            let source: Option<String> = c
                .query_row(
                    "SELECT source FROM schedules WHERE tenant_id = ?1 AND schedule_id = ?2",
                    params![row.tenant_id, row.schedule_id],
                    |r| r.get(0),
                )
                .optional()?;
            match source.as_deref() {
                Some("config") => {}
                Some(_) => return Ok(false),
                None => {
                    c.execute(
                        &format!(
                            "INSERT INTO schedules ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, \
                             ?7, ?8, ?9, ?10, 'config', ?11, ?12, ?12)"
                        ),
                        params![
                            row.tenant_id,
                            row.schedule_id,
                            row.workflow_id,
                            row.cron,
                            row.time_zone,
                            context,
                            row.overlap,
                            row.missed,
                            int(row.grace_seconds),
                            row.paused,
                            row.next_fire_at.map(int),
                            int(row.updated_at),
                        ],
                    )?;
                    return Ok(true);
                }
            }
            c.execute(
                "UPDATE schedules SET \
                 next_fire_at = CASE WHEN cron = ?4 AND time_zone = ?5 THEN next_fire_at \
                                ELSE ?10 END, \
                 workflow_id = ?3, cron = ?4, time_zone = ?5, context = ?6, overlap = ?7, \
                 missed = ?8, grace_seconds = ?9, updated_at = ?11 \
                 WHERE tenant_id = ?1 AND schedule_id = ?2",
                params![
                    row.tenant_id,
                    row.schedule_id,
                    row.workflow_id,
                    row.cron,
                    row.time_zone,
                    context,
                    row.overlap,
                    row.missed,
                    int(row.grace_seconds),
                    row.next_fire_at.map(int),
                    int(row.updated_at),
                ],
            )?;
            Ok(true)
        })
        .await
    }

    async fn get_schedule(&self, tenant: &str, id: &str) -> Result<Option<ScheduleRow>> {
        let rows = self
            .select(
                format!(
                    "SELECT {COLUMNS} FROM schedules WHERE tenant_id = ?1 AND schedule_id = ?2"
                ),
                vec![text(tenant), text(id)],
            )
            .await?;
        Ok(rows.into_iter().next())
    }

    async fn list_schedules(&self, tenant: Option<&str>) -> Result<Vec<ScheduleRow>> {
        match tenant {
            Some(t) => {
                self.select(
                    format!(
                        "SELECT {COLUMNS} FROM schedules WHERE tenant_id = ?1 \
                         ORDER BY schedule_id"
                    ),
                    vec![text(t)],
                )
                .await
            }
            None => {
                self.select(
                    format!("SELECT {COLUMNS} FROM schedules ORDER BY tenant_id, schedule_id"),
                    vec![],
                )
                .await
            }
        }
    }

    async fn delete_schedule(&self, tenant: &str, id: &str) -> Result<bool> {
        let (tenant, id) = (tenant.to_owned(), id.to_owned());
        self.write(move |c| {
            c.execute(
                "DELETE FROM schedule_firings WHERE tenant_id = ?1 AND schedule_id = ?2",
                params![tenant, id],
            )?;
            c.execute(
                "DELETE FROM schedules WHERE tenant_id = ?1 AND schedule_id = ?2",
                params![tenant, id],
            )
        })
        .await
        .map(|n| n > 0)
    }

    async fn due(&self, now: u64, limit: usize) -> Result<Vec<ScheduleRow>> {
        self.select(
            format!(
                "SELECT {COLUMNS} FROM schedules WHERE paused = 0 AND next_fire_at IS NOT NULL \
                 AND next_fire_at <= ?1 ORDER BY next_fire_at LIMIT ?2"
            ),
            vec![
                rusqlite::types::Value::Integer(int(now)),
                rusqlite::types::Value::Integer(int(limit as u64)),
            ],
        )
        .await
    }

    async fn claim_ticks(&self, claim: &TickClaim) -> Result<Option<Vec<u64>>> {
        let TickClaim {
            tenant,
            schedule: id,
            expected,
            next,
            firings,
            owner,
            now,
        } = claim.clone();
        self.write(move |c| {
            let moved = c.execute(
                "UPDATE schedules SET next_fire_at = ?4, updated_at = ?5 WHERE tenant_id = ?1 \
                 AND schedule_id = ?2 AND next_fire_at = ?3 AND paused = 0",
                params![tenant, id, int(expected), next.map(int), int(now)],
            )?;
            if moved != 1 {
                return Ok(None);
            }
            let mut inserted = Vec::new();
            for f in &firings {
                if insert_firing(c, &tenant, &id, f, &owner, int(now))? {
                    inserted.push(f.tick);
                }
            }
            Ok(Some(inserted))
        })
        .await
    }

    async fn insert_firing(
        &self,
        tenant: &str,
        id: &str,
        firing: &NewFiring,
        owner: &str,
        now: u64,
    ) -> Result<bool> {
        let (tenant, id, owner, firing) = (
            tenant.to_owned(),
            id.to_owned(),
            owner.to_owned(),
            firing.clone(),
        );
        self.write(move |c| insert_firing(c, &tenant, &id, &firing, &owner, int(now)))
            .await
    }

    async fn take_firing(&self, seen: &Firing, owner: &str, now: u64) -> Result<bool> {
        let (seen, owner) = (seen.clone(), owner.to_owned());
        self.write(move |c| {
            c.execute(
                "UPDATE schedule_firings SET state = 'claimed', owner = ?6, claimed_at = ?7, \
                 updated_at = ?7 WHERE tenant_id = ?1 AND schedule_id = ?2 AND tick = ?3 \
                 AND state = ?4 AND owner = ?5 AND claimed_at = ?8",
                params![
                    seen.tenant_id,
                    seen.schedule_id,
                    int(seen.tick),
                    seen.state.as_str(),
                    seen.owner,
                    owner,
                    int(now),
                    int(seen.claimed_at),
                ],
            )
        })
        .await
        .map(|n| n == 1)
    }

    async fn set_firing(
        &self,
        tenant: &str,
        id: &str,
        tick: u64,
        state: FiringState,
        run_id: Option<&str>,
        detail: Option<&str>,
    ) -> Result<()> {
        let (tenant, id) = (tenant.to_owned(), id.to_owned());
        let (run_id, detail) = (run_id.map(str::to_owned), detail.map(str::to_owned));
        let now = crate::workflows::now();
        self.write(move |c| {
            c.execute(
                "UPDATE schedule_firings SET state = ?4, run_id = coalesce(?5, run_id), \
                 detail = ?6, updated_at = ?7 \
                 WHERE tenant_id = ?1 AND schedule_id = ?2 AND tick = ?3",
                params![tenant, id, int(tick), state.as_str(), run_id, detail, now],
            )
        })
        .await
        .map(|_| ())
    }

    async fn open_firings(&self, limit: usize) -> Result<Vec<Firing>> {
        self.select_firings(
            format!(
                "SELECT {FIRING_COLUMNS} FROM schedule_firings \
                 WHERE state IN ('claimed', 'queued') ORDER BY claimed_at, tick LIMIT ?1"
            ),
            vec![rusqlite::types::Value::Integer(int(limit as u64))],
        )
        .await
    }

    async fn firings(&self, tenant: &str, id: &str, limit: usize) -> Result<Vec<Firing>> {
        self.select_firings(
            format!(
                "SELECT {FIRING_COLUMNS} FROM schedule_firings WHERE tenant_id = ?1 \
                 AND schedule_id = ?2 ORDER BY tick DESC LIMIT ?3"
            ),
            vec![
                text(tenant),
                text(id),
                rusqlite::types::Value::Integer(int(limit as u64)),
            ],
        )
        .await
    }

    async fn last_run(&self, tenant: &str, id: &str) -> Result<Option<String>> {
        let (tenant, id) = (tenant.to_owned(), id.to_owned());
        self.read(move |c| {
            c.query_row(
                "SELECT run_id FROM schedule_firings WHERE tenant_id = ?1 AND schedule_id = ?2 \
                 AND state = 'started' AND run_id IS NOT NULL ORDER BY tick DESC LIMIT 1",
                params![tenant, id],
                |r| r.get(0),
            )
            .optional()
        })
        .await
    }

    async fn trim_firings(&self, before: u64) -> Result<u64> {
        self.write(move |c| {
            c.execute(
                "DELETE FROM schedule_firings WHERE state IN ('started', 'skipped', 'failed') \
                 AND updated_at < ?1 AND NOT (state = 'started' AND tick = \
                 (SELECT max(f.tick) FROM schedule_firings f WHERE f.tenant_id = \
                  schedule_firings.tenant_id AND f.schedule_id = schedule_firings.schedule_id \
                  AND f.state = 'started'))",
                params![int(before)],
            )
        })
        .await
        .map(|n| n as u64)
    }
}
