//! PostgreSQL's rows of signals (`run_signals`; see `crate::signals`).

use super::backend::{PgTx, col};
use super::pg_err;
use crate::Result;
use crate::backend::{to_i64, to_u64};
use crate::signals::{SignalRow, SignalRows};

impl SignalRows for PgTx<'_> {
    async fn insert_signal(
        &mut self,
        run_id: &str,
        name: &str,
        payload: &[u8],
        now: u64,
    ) -> Result<u64> {
        self.wakes_workers = true;
        // The run's row is locked (`send_signal` read it `FOR UPDATE`): no concurrent send
        // of the same run draws the same number.
        let row = self
            .tx
            .query_one(
                "INSERT INTO run_signals (run_id, seq, name, payload, sent_at) \
                 SELECT $1, coalesce(max(seq) + 1, 0), $2, $3, $4 FROM run_signals \
                 WHERE run_id = $1 RETURNING seq",
                &[&run_id, &name, &payload, &to_i64(now)?],
            )
            .await
            .map_err(|e| pg_err(self.target, e))?;
        to_u64(col(&row, 0, self.path)?, self.path, "seq")
    }

    async fn signal_rows(&mut self, run_id: &str) -> Result<Vec<SignalRow>> {
        let rows = self
            .tx
            .query(
                "SELECT seq, name, payload, sent_at FROM run_signals WHERE run_id = $1 \
                 ORDER BY seq",
                &[&run_id],
            )
            .await
            .map_err(|e| pg_err(self.target, e))?;
        rows.iter()
            .map(|r| {
                Ok(SignalRow {
                    seq: to_u64(col(r, 0, self.path)?, self.path, "seq")?,
                    name: col(r, 1, self.path)?,
                    payload: col(r, 2, self.path)?,
                    sent_at: to_u64(col(r, 3, self.path)?, self.path, "sent_at")?,
                })
            })
            .collect()
    }

    async fn wake_now(&mut self, run_id: &str, now: u64) -> Result<()> {
        self.tx
            .execute(
                "UPDATE runs SET wake_at = $2 WHERE run_id = $1 AND status = 'paused'",
                &[&run_id, &to_i64(now)?],
            )
            .await
            .map_err(|e| pg_err(self.target, e))
            .map(|_| ())
    }
}
