//! Schedules on PostgreSQL (`crate::schedules`): the store's pool. A claim's
//! `UPDATE … WHERE next_fire_at = $expected` takes the schedule's row lock; a second server's
//! update waits for it and then finds the new value (read committed re-checks the row), so it
//! claims nothing.

use std::future::Future;

use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use super::{pg_err, pool_err};
use crate::schedules::{
    Firing, FiringState, NewFiring, ScheduleRow, ScheduleStore, TickClaim, decode_context,
    encode_context, state_of,
};
use crate::workflows::ms;
use crate::{PgStore, Result, StoreError};

const COLUMNS: &str = "tenant_id, schedule_id, workflow_id, cron, time_zone, context, overlap, \
                       missed, grace_seconds, paused, source, next_fire_at, created_at, updated_at";

const FIRING_COLUMNS: &str =
    "tenant_id, schedule_id, tick, state, run_id, detail, owner, claimed_at, updated_at";

fn int(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn row_of(target: &str, r: &Row) -> Result<ScheduleRow> {
    Ok(ScheduleRow {
        tenant_id: r.get(0),
        schedule_id: r.get(1),
        workflow_id: r.get(2),
        cron: r.get(3),
        time_zone: r.get(4),
        context: decode_context(target, r.get::<_, &[u8]>(5))?,
        overlap: r.get(6),
        missed: r.get(7),
        grace_seconds: ms(r.get(8)),
        paused: r.get(9),
        source: r.get(10),
        next_fire_at: r.get::<_, Option<i64>>(11).map(ms),
        created_at: ms(r.get(12)),
        updated_at: ms(r.get(13)),
    })
}

fn firing_of(target: &str, r: &Row) -> Result<Firing> {
    Ok(Firing {
        tenant_id: r.get(0),
        schedule_id: r.get(1),
        tick: ms(r.get(2)),
        state: state_of(target, r.get(3))?,
        run_id: r.get(4),
        detail: r.get(5),
        owner: r.get(6),
        claimed_at: ms(r.get(7)),
        updated_at: ms(r.get(8)),
    })
}

const INSERT_FIRING: &str = "INSERT INTO schedule_firings (tenant_id, schedule_id, tick, state, \
     run_id, detail, owner, claimed_at, updated_at) VALUES ($1, $2, $3, $4, NULL, $5, $6, $7, $7) \
     ON CONFLICT (tenant_id, schedule_id, tick) DO NOTHING";

/// The schedules of a [`PgStore`].
#[derive(Clone, Debug)]
pub struct PgSchedules {
    store: PgStore,
}

impl PgSchedules {
    pub(crate) fn new(store: &PgStore) -> PgSchedules {
        PgSchedules {
            store: store.clone(),
        }
    }

    async fn query<T, F, Fut>(&self, f: F) -> Result<T>
    where
        F: FnOnce(deadpool_postgres::Object, String) -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        self.store
            .with(move |inner| async move {
                let client = inner
                    .pool
                    .get()
                    .await
                    .map_err(|e| pool_err(&inner.target, e))?;
                f(client, inner.target.clone()).await
            })
            .await
    }

    async fn select(
        &self,
        sql: String,
        args: Vec<Box<dyn ToSql + Sync + Send>>,
    ) -> Result<Vec<ScheduleRow>> {
        self.query(move |c, target| async move {
            let refs: Vec<&(dyn ToSql + Sync)> = args.iter().map(|a| a.as_ref() as _).collect();
            let rows = c.query(&sql, &refs).await.map_err(|e| pg_err(&target, e))?;
            rows.iter().map(|r| row_of(&target, r)).collect()
        })
        .await
    }

    async fn select_firings(
        &self,
        sql: String,
        args: Vec<Box<dyn ToSql + Sync + Send>>,
    ) -> Result<Vec<Firing>> {
        self.query(move |c, target| async move {
            let refs: Vec<&(dyn ToSql + Sync)> = args.iter().map(|a| a.as_ref() as _).collect();
            let rows = c.query(&sql, &refs).await.map_err(|e| pg_err(&target, e))?;
            rows.iter().map(|r| firing_of(&target, r)).collect()
        })
        .await
    }

    async fn execute(
        &self,
        sql: &'static str,
        args: Vec<Box<dyn ToSql + Sync + Send>>,
    ) -> Result<u64> {
        self.query(move |c, target| async move {
            let refs: Vec<&(dyn ToSql + Sync)> = args.iter().map(|a| a.as_ref() as _).collect();
            c.execute(sql, &refs).await.map_err(|e| pg_err(&target, e))
        })
        .await
    }
}

fn s(v: &str) -> Box<dyn ToSql + Sync + Send> {
    Box::new(v.to_string())
}

fn n(v: u64) -> Box<dyn ToSql + Sync + Send> {
    Box::new(int(v))
}

#[async_trait::async_trait]
impl ScheduleStore for PgSchedules {
    async fn create_schedule(&self, row: &ScheduleRow) -> Result<()> {
        let context = encode_context(&row.context)?;
        let label = format!("schedule {}/{}", row.tenant_id, row.schedule_id);
        let row = row.clone();
        let inserted = self
            .query(move |c, target| async move {
                c.execute(
                    &format!(
                        "INSERT INTO schedules ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, \
                         $8, $9, $10, $11, $12, $13, $14) \
                         ON CONFLICT (tenant_id, schedule_id) DO NOTHING"
                    ),
                    &[
                        &row.tenant_id,
                        &row.schedule_id,
                        &row.workflow_id,
                        &row.cron,
                        &row.time_zone,
                        &context,
                        &row.overlap,
                        &row.missed,
                        &int(row.grace_seconds),
                        &row.paused,
                        &row.source,
                        &row.next_fire_at.map(int),
                        &int(row.created_at),
                        &int(row.updated_at),
                    ],
                )
                .await
                .map_err(|e| pg_err(&target, e))
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
        self.query(move |c, target| async move {
            c.execute(
                "UPDATE schedules SET workflow_id = $3, cron = $4, time_zone = $5, context = $6, \
                 overlap = $7, missed = $8, grace_seconds = $9, paused = $10, \
                 next_fire_at = $11, updated_at = $12 WHERE tenant_id = $1 AND schedule_id = $2",
                &[
                    &row.tenant_id,
                    &row.schedule_id,
                    &row.workflow_id,
                    &row.cron,
                    &row.time_zone,
                    &context,
                    &row.overlap,
                    &row.missed,
                    &int(row.grace_seconds),
                    &row.paused,
                    &row.next_fire_at.map(int),
                    &int(row.updated_at),
                ],
            )
            .await
            .map_err(|e| pg_err(&target, e))
        })
        .await
        .map(|n| n > 0)
    }

    async fn put_config_schedule(&self, row: &ScheduleRow) -> Result<bool> {
        let context = encode_context(&row.context)?;
        let row = row.clone();
        self.query(move |c, target| async move {
            let pg = |e| pg_err(&target, e);
            // One statement: insert, or refresh a config row (an API row is left alone).
            let written = c
                .execute(
                    &format!(
                        "INSERT INTO schedules ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, \
                         $8, $9, $10, 'config', $11, $12, $12) \
                         ON CONFLICT (tenant_id, schedule_id) DO UPDATE SET \
                         next_fire_at = CASE WHEN schedules.cron = excluded.cron \
                           AND schedules.time_zone = excluded.time_zone \
                           THEN schedules.next_fire_at ELSE excluded.next_fire_at END, \
                         workflow_id = excluded.workflow_id, cron = excluded.cron, \
                         time_zone = excluded.time_zone, context = excluded.context, \
                         overlap = excluded.overlap, missed = excluded.missed, \
                         grace_seconds = excluded.grace_seconds, updated_at = excluded.updated_at \
                         WHERE schedules.source = 'config'"
                    ),
                    &[
                        &row.tenant_id,
                        &row.schedule_id,
                        &row.workflow_id,
                        &row.cron,
                        &row.time_zone,
                        &context,
                        &row.overlap,
                        &row.missed,
                        &int(row.grace_seconds),
                        &row.paused,
                        &row.next_fire_at.map(int),
                        &int(row.updated_at),
                    ],
                )
                .await
                .map_err(pg)?;
            Ok(written == 1)
        })
        .await
    }

    async fn get_schedule(&self, tenant: &str, id: &str) -> Result<Option<ScheduleRow>> {
        let rows = self
            .select(
                format!(
                    "SELECT {COLUMNS} FROM schedules WHERE tenant_id = $1 AND schedule_id = $2"
                ),
                vec![s(tenant), s(id)],
            )
            .await?;
        Ok(rows.into_iter().next())
    }

    async fn list_schedules(&self, tenant: Option<&str>) -> Result<Vec<ScheduleRow>> {
        match tenant {
            Some(t) => {
                self.select(
                    format!(
                        "SELECT {COLUMNS} FROM schedules WHERE tenant_id = $1 \
                         ORDER BY schedule_id"
                    ),
                    vec![s(t)],
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
        let (tenant, id) = (tenant.to_string(), id.to_string());
        self.query(move |mut c, target| async move {
            let pg = |e| pg_err(&target, e);
            let tx = c.transaction().await.map_err(pg)?;
            tx.execute(
                "DELETE FROM schedule_firings WHERE tenant_id = $1 AND schedule_id = $2",
                &[&tenant, &id],
            )
            .await
            .map_err(pg)?;
            let n = tx
                .execute(
                    "DELETE FROM schedules WHERE tenant_id = $1 AND schedule_id = $2",
                    &[&tenant, &id],
                )
                .await
                .map_err(pg)?;
            tx.commit().await.map_err(pg)?;
            Ok(n > 0)
        })
        .await
    }

    async fn due(&self, now: u64, limit: usize) -> Result<Vec<ScheduleRow>> {
        self.select(
            format!(
                "SELECT {COLUMNS} FROM schedules WHERE NOT paused AND next_fire_at IS NOT NULL \
                 AND next_fire_at <= $1 ORDER BY next_fire_at LIMIT $2"
            ),
            vec![n(now), n(limit as u64)],
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
        self.query(move |mut c, target| async move {
            let pg = |e| pg_err(&target, e);
            let tx = c.transaction().await.map_err(pg)?;
            let moved = tx
                .execute(
                    "UPDATE schedules SET next_fire_at = $4, updated_at = $5 WHERE tenant_id = $1 \
                     AND schedule_id = $2 AND next_fire_at = $3 AND NOT paused",
                    &[&tenant, &id, &int(expected), &next.map(int), &int(now)],
                )
                .await
                .map_err(pg)?;
            if moved != 1 {
                return Ok(None);
            }
            let mut inserted = Vec::new();
            for f in &firings {
                let n = tx
                    .execute(
                        INSERT_FIRING,
                        &[
                            &tenant,
                            &id,
                            &int(f.tick),
                            &f.state.as_str(),
                            &f.detail,
                            &owner,
                            &int(now),
                        ],
                    )
                    .await
                    .map_err(pg)?;
                if n == 1 {
                    inserted.push(f.tick);
                }
            }
            tx.commit().await.map_err(pg)?;
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
        let detail: Box<dyn ToSql + Sync + Send> = Box::new(firing.detail.clone());
        self.execute(
            INSERT_FIRING,
            vec![
                s(tenant),
                s(id),
                n(firing.tick),
                s(firing.state.as_str()),
                detail,
                s(owner),
                n(now),
            ],
        )
        .await
        .map(|n| n == 1)
    }

    async fn take_firing(&self, seen: &Firing, owner: &str, now: u64) -> Result<bool> {
        self.execute(
            "UPDATE schedule_firings SET state = 'claimed', owner = $6, claimed_at = $7, \
             updated_at = $7 WHERE tenant_id = $1 AND schedule_id = $2 AND tick = $3 \
             AND state = $4 AND owner = $5 AND claimed_at = $8",
            vec![
                s(&seen.tenant_id),
                s(&seen.schedule_id),
                n(seen.tick),
                s(seen.state.as_str()),
                s(&seen.owner),
                s(owner),
                n(now),
                n(seen.claimed_at),
            ],
        )
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
        let run_id: Box<dyn ToSql + Sync + Send> = Box::new(run_id.map(str::to_string));
        let detail: Box<dyn ToSql + Sync + Send> = Box::new(detail.map(str::to_string));
        self.execute(
            "UPDATE schedule_firings SET state = $4, run_id = coalesce($5, run_id), \
             detail = $6, updated_at = $7 \
             WHERE tenant_id = $1 AND schedule_id = $2 AND tick = $3",
            vec![
                s(tenant),
                s(id),
                n(tick),
                s(state.as_str()),
                run_id,
                detail,
                n(crate::now_ms()),
            ],
        )
        .await
        .map(|_| ())
    }

    async fn open_firings(&self, limit: usize) -> Result<Vec<Firing>> {
        self.select_firings(
            format!(
                "SELECT {FIRING_COLUMNS} FROM schedule_firings \
                 WHERE state IN ('claimed', 'queued') ORDER BY claimed_at, tick LIMIT $1"
            ),
            vec![n(limit as u64)],
        )
        .await
    }

    async fn firings(&self, tenant: &str, id: &str, limit: usize) -> Result<Vec<Firing>> {
        self.select_firings(
            format!(
                "SELECT {FIRING_COLUMNS} FROM schedule_firings WHERE tenant_id = $1 \
                 AND schedule_id = $2 ORDER BY tick DESC LIMIT $3"
            ),
            vec![s(tenant), s(id), n(limit as u64)],
        )
        .await
    }

    async fn last_run(&self, tenant: &str, id: &str) -> Result<Option<String>> {
        let (tenant, id) = (tenant.to_string(), id.to_string());
        self.query(move |c, target| async move {
            let row = c
                .query_opt(
                    "SELECT run_id FROM schedule_firings WHERE tenant_id = $1 \
                     AND schedule_id = $2 AND state = 'started' AND run_id IS NOT NULL \
                     ORDER BY tick DESC LIMIT 1",
                    &[&tenant, &id],
                )
                .await
                .map_err(|e| pg_err(&target, e))?;
            Ok(row.map(|r| r.get(0)))
        })
        .await
    }

    async fn trim_firings(&self, before: u64) -> Result<u64> {
        self.execute(
            "DELETE FROM schedule_firings WHERE state IN ('started', 'skipped', 'failed') \
             AND updated_at < $1 AND NOT (state = 'started' AND tick = \
             (SELECT max(f.tick) FROM schedule_firings f WHERE f.tenant_id = \
              schedule_firings.tenant_id AND f.schedule_id = schedule_firings.schedule_id \
              AND f.state = 'started'))",
            vec![n(before)],
        )
        .await
    }
}
