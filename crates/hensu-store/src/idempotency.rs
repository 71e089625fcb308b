//! Idempotent starts (docs/server.md, *Idempotent starts*): a start that carries an
//! `Idempotency-Key` creates its run and records the key in one transaction, so a retried
//! request (same tenant, same key) finds the run instead of starting a second one.

use crate::backend::{Backend, KeyRow};
use crate::logic::create_tenant_run;
use crate::{Result, RunRecord, StoreError, StoreOptions};

/// How long a key holds: a key older than this is forgotten, and its next use starts a new
/// run (and takes the key over).
pub const IDEMPOTENCY_WINDOW_MS: u64 = 24 * 60 * 60 * 1000;

/// The key of a start and a digest of its request (to tell a retry from a reuse).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdempotencyKey {
    pub key: String,
    pub request_hash: String,
}

/// What a keyed start did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyedStart {
    /// The run was created and the key recorded.
    Created,
    /// The key started `run_id` within the window, for the same request: nothing written.
    Existing { run_id: String },
}

/// Creates the tenant's run under `key` (see [`create_tenant_run`]) unless the key started
/// one within [`IDEMPOTENCY_WINDOW_MS`]: then the same request answers that run, another
/// request is [`StoreError::IdempotencyKeyReused`]. The key row is locked first (PostgreSQL:
/// a transaction-scoped advisory lock), so two racing requests with one key start one run.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn create_keyed_tenant_run<B: Backend>(
    b: &mut B,
    opts: &StoreOptions,
    tenant: &str,
    record: &RunRecord,
    workflow: &[u8],
    snapshot: &[u8],
    key: &IdempotencyKey,
    now: u64,
) -> Result<KeyedStart> {
    if let Some(row) = b.idempotency_key(tenant, &key.key).await?
        && now.saturating_sub(row.created_at) < IDEMPOTENCY_WINDOW_MS
    {
        if row.request_hash == key.request_hash {
            return Ok(KeyedStart::Existing { run_id: row.run_id });
        }
        return Err(StoreError::IdempotencyKeyReused {
            key: key.key.clone(),
            run_id: row.run_id,
        });
    }
    create_tenant_run(b, opts, tenant, record, workflow, snapshot, now).await?;
    b.put_idempotency_key(
        tenant,
        &key.key,
        &KeyRow {
            run_id: record.run_id.clone(),
            request_hash: key.request_hash.clone(),
            created_at: now,
        },
    )
    .await?;
    Ok(KeyedStart::Created)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logic::run_ready;
    use crate::{SqliteStore, StateStore};

    /// A key past its window is taken over by its next use, whatever that request is.
    #[tokio::test]
    async fn a_key_past_its_window_starts_a_new_run() {
        let store = SqliteStore::open_memory(StoreOptions::default()).expect("store");
        store.registry().await.expect("registry tables");
        let start = |id: &'static str, hash: &'static str, now: u64| {
            let store = store.clone();
            async move {
                let record = RunRecord::new(id, "wf", "v1", Some("start".into()));
                let key = IdempotencyKey {
                    key: "k".into(),
                    request_hash: hash.into(),
                };
                store
                    .write(move |b, opts| {
                        run_ready(create_keyed_tenant_run(
                            b,
                            opts,
                            "t",
                            &record,
                            b"{}",
                            b"{\"snapshot_version\":1,\"state\":{}}",
                            &key,
                            now,
                        ))
                    })
                    .await
            }
        };
        let t0 = 1_000_000;
        assert_eq!(
            start("r1", "h1", t0).await.expect("first"),
            KeyedStart::Created
        );
        let last_moment = t0 + IDEMPOTENCY_WINDOW_MS - 1;
        assert_eq!(
            start("r2", "h1", last_moment).await.expect("retry"),
            KeyedStart::Existing {
                run_id: "r1".into()
            }
        );
        let expired = t0 + IDEMPOTENCY_WINDOW_MS;
        assert_eq!(
            start("r3", "h2", expired).await.expect("expired"),
            KeyedStart::Created
        );
        assert_eq!(
            start("r4", "h2", expired + 1).await.expect("new window"),
            KeyedStart::Existing {
                run_id: "r3".into()
            }
        );
    }
}
