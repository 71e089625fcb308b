//! SQLite's rows of signals (`run_signals`; see `crate::signals`).

use rusqlite::OptionalExtension;

use super::backend::SqliteTx;
use crate::backend::{sat_i64, to_u64};
use crate::signals::{SignalRow, SignalRows};
use crate::{Result, StoreError};

impl SignalRows for SqliteTx<'_> {
    async fn insert_signal(
        &mut self,
        run_id: &str,
        name: &str,
        payload: &[u8],
        now: u64,
    ) -> Result<u64> {
        let sq = |e| StoreError::sqlite(self.path, e);
        let next: i64 = self
            .conn
            .prepare_cached("SELECT coalesce(max(seq) + 1, 0) FROM run_signals WHERE run_id = ?1")
            .and_then(|mut s| s.query_row([run_id], |r| r.get(0)).optional())
            .map_err(sq)?
            .unwrap_or(0);
        self.conn
            .prepare_cached(
                "INSERT INTO run_signals (run_id, seq, name, payload, sent_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .and_then(|mut s| {
                s.execute(rusqlite::params![run_id, next, name, payload, sat_i64(now)])
            })
            .map_err(sq)?;
        to_u64(next, self.path, "seq")
    }

    async fn signal_rows(&mut self, run_id: &str) -> Result<Vec<SignalRow>> {
        let sq = |e| StoreError::sqlite(self.path, e);
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT seq, name, payload, sent_at FROM run_signals WHERE run_id = ?1 \
                 ORDER BY seq",
            )
            .map_err(sq)?;
        let rows = stmt
            .query_map([run_id], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Vec<u8>>(2)?,
                    r.get::<_, i64>(3)?,
                ))
            })
            .map_err(sq)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(sq)?;
        rows.into_iter()
            .map(|(seq, name, payload, sent_at)| {
                Ok(SignalRow {
                    seq: to_u64(seq, self.path, "seq")?,
                    name,
                    payload,
                    sent_at: to_u64(sent_at, self.path, "sent_at")?,
                })
            })
            .collect()
    }

    async fn wake_now(&mut self, run_id: &str, now: u64) -> Result<()> {
        self.conn
            .prepare_cached("UPDATE runs SET wake_at = ?2 WHERE run_id = ?1 AND status = 'paused'")
            .and_then(|mut s| s.execute(rusqlite::params![run_id, sat_i64(now)]))
            .map_err(|e| StoreError::sqlite(self.path, e))
            .map(|_| ())
    }
}
