//! The claim statements of both dialects, one per [`ClaimScope`]: a claimer's candidates are
//! only the runs it may take, told apart by their tenant tag (`run_tenants`), so a server
//! never claims (and releases, and claims again) a local run, nor a worker a server's. A
//! paused run whose wake time has passed (a durable wait, docs/language.md, *Timers and
//! signals*) is a candidate too.

use crate::ClaimScope;

/// SQLite: the claim statement for runs with (`EXISTS`) or without (`NOT EXISTS`) a tenant tag.
macro_rules! sqlite_claim {
    ($tagged:literal) => {
        concat!(
            "INSERT INTO leases (run_id, owner, host, pid, acquired_at, expires_at) \
             SELECT r.run_id, ?1, ?2, ?3, ?4, ?5 FROM runs r \
             LEFT JOIN leases l ON l.run_id = r.run_id \
             WHERE (r.status IN ('queued', 'running') \
             OR (r.status = 'paused' AND r.wake_at <= ?4)) \
             AND (l.run_id IS NULL OR l.expires_at <= ?4) AND ",
            $tagged,
            " (SELECT 1 FROM run_tenants t WHERE t.run_id = r.run_id) \
             ORDER BY r.started_at, r.run_id LIMIT ?6 \
             ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner, \
             host = excluded.host, pid = excluded.pid, \
             acquired_at = excluded.acquired_at, expires_at = excluded.expires_at \
             WHERE leases.expires_at <= ?4 \
             RETURNING run_id, acquired_at, expires_at"
        )
    };
}

/// PostgreSQL: the claim statement for runs with (`EXISTS`) or without (`NOT EXISTS`) a tenant tag.
macro_rules! pg_claim {
    ($tagged:literal) => {
        concat!(
            "WITH c AS ( \
               SELECT r.run_id, l.owner AS prior FROM runs r \
               LEFT JOIN leases l ON l.run_id = r.run_id \
               WHERE (r.status IN ('queued', 'running') \
               OR (r.status = 'paused' AND r.wake_at <= $4)) \
               AND (l.run_id IS NULL OR l.expires_at <= $4) AND ",
            $tagged,
            " (SELECT 1 FROM run_tenants t WHERE t.run_id = r.run_id) \
               ORDER BY r.started_at, r.run_id LIMIT $6 \
               FOR UPDATE OF r SKIP LOCKED), \
             ins AS ( \
               INSERT INTO leases (run_id, owner, host, pid, acquired_at, expires_at) \
               SELECT run_id, $1, $2, $3, $4, $5 FROM c \
               ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner, \
               host = excluded.host, pid = excluded.pid, \
               acquired_at = excluded.acquired_at, expires_at = excluded.expires_at \
               WHERE leases.expires_at <= $4 \
               RETURNING run_id, acquired_at, expires_at) \
             SELECT ins.run_id, ins.acquired_at, ins.expires_at, c.prior \
             FROM ins JOIN c ON c.run_id = ins.run_id ORDER BY ins.run_id"
        )
    };
}

/// How many runs a claim could take at `now` (parameter 1), of any scope: the queue depth. The
/// same predicate as the claim's: a paused run whose wake time has passed counts too.
macro_rules! claimable_count {
    ($now:literal) => {
        concat!(
            "SELECT count(*) FROM runs r \
             LEFT JOIN leases l ON l.run_id = r.run_id \
             WHERE (r.status IN ('queued', 'running') \
             OR (r.status = 'paused' AND r.wake_at <= ",
            $now,
            ")) AND (l.run_id IS NULL OR l.expires_at <= ",
            $now,
            ")"
        )
    };
}

/// SQLite's queue-depth count (parameter: now).
pub(crate) const SQLITE_CLAIMABLE_COUNT: &str = claimable_count!("?1");

/// PostgreSQL's queue-depth count (parameter: now).
pub(crate) const PG_CLAIMABLE_COUNT: &str = claimable_count!("$1");

/// SQLite's claim statement for `scope` (parameters: owner, host, pid, now, expires, limit).
pub(crate) fn sqlite(scope: ClaimScope) -> &'static str {
    match scope {
        ClaimScope::Local => sqlite_claim!("NOT EXISTS"),
        ClaimScope::Tenants => sqlite_claim!("EXISTS"),
    }
}

/// PostgreSQL's claim statement for `scope` (same parameters as [`sqlite`]).
pub(crate) fn postgres(scope: ClaimScope) -> &'static str {
    match scope {
        ClaimScope::Local => pg_claim!("NOT EXISTS"),
        ClaimScope::Tenants => pg_claim!("EXISTS"),
    }
}
