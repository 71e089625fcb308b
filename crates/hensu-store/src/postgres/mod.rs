//! The PostgreSQL store: the same contract as the SQLite store, for runs shared by several
//! machines.
//!
//! Driver: `tokio-postgres` behind a `deadpool-postgres` pool, natively async: each
//! [`crate::StateStore`] call runs on the caller's tokio runtime (a pooled connection's I/O
//! task runs on the runtime that opened it; a connection whose runtime has stopped is closed
//! and the pool replaces it). Queries are plain SQL strings prepared at
//! run time (no compile-time database). Schema: `refinery` migrations embedded from
//! `migrations/postgres/`, applied on open under an advisory lock; [`PG_SCHEMA_VERSION`]
//! is recorded in the `meta` table, and a database of a newer version is refused untouched.
//!
//! Concurrency: every write starts with `SELECT … FROM runs WHERE run_id = $1 FOR UPDATE`,
//! so the writes to one run (acquire, heartbeat, append, checkpoint, cancel) serialize on the
//! run's row and see each other's effects; the lease rule is then the SQLite store's. Reads
//! of several tables (load) run in one `REPEATABLE READ` transaction.

mod backend;
mod group;
mod ops;
pub(crate) mod registry;
mod retention;
mod schedules;
mod signals;
mod step;

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::NoTls;

use crate::{HENSU_VERSION, Result, StoreError, StoreOptions};

/// The PostgreSQL schema version this build reads and writes.
pub const PG_SCHEMA_VERSION: i64 = 7;

mod embedded {
    refinery::embed_migrations!("migrations/postgres");
}

/// Serializes schema creation and migration between processes opening one database.
const MIGRATION_LOCK: i64 = 0x6865_6e73_755f_6462; // "hensu_db"

pub(crate) struct Inner {
    pub pool: Pool,
    /// The URL without its password, for messages.
    pub target: String,
    /// `target` as the location [`crate::StoreError::Corrupt`] names.
    pub path: PathBuf,
    pub opts: StoreOptions,
    /// The parsed URL (with the schema's `search_path`): for a connection of its own, outside
    /// the pool (the tenant event log's `LISTEN`).
    pub config: tokio_postgres::Config,
}

/// The PostgreSQL store. Cloning gives another handle on the same pool.
#[derive(Clone)]
pub struct PgStore {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("target", &self.inner.target)
            .field("opts", &self.inner.opts)
            .finish_non_exhaustive()
    }
}

pub(crate) fn pg_err(target: &str, e: tokio_postgres::Error) -> StoreError {
    let unreachable = e.as_db_error().is_none() && (e.is_closed() || io_caused(&e));
    let detail = match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                text.push_str(": ");
                text.push_str(&s.to_string());
                source = s.source();
            }
            text
        }
    };
    if unreachable {
        return StoreError::Unavailable {
            target: target.to_string(),
            detail,
        };
    }
    StoreError::Postgres {
        target: target.to_string(),
        detail,
    }
}

/// An I/O error somewhere in `e`'s causes: the connection failed (refused, reset, timed out).
fn io_caused(e: &tokio_postgres::Error) -> bool {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if s.is::<std::io::Error>() {
            return true;
        }
        source = s.source();
    }
    false
}

pub(crate) fn pool_err(target: &str, e: deadpool_postgres::PoolError) -> StoreError {
    match e {
        deadpool_postgres::PoolError::Backend(e) => pg_err(target, e),
        // Waiting for a connection timed out, or the pool is closed: the database is not
        // reachable now.
        deadpool_postgres::PoolError::Timeout(_) | deadpool_postgres::PoolError::Closed => {
            StoreError::Unavailable {
                target: target.to_string(),
                detail: format!("connection pool: {e}"),
            }
        }
        other => StoreError::Postgres {
            target: target.to_string(),
            detail: format!("connection pool: {other}"),
        },
    }
}

fn corrupt(target: &str, detail: impl Into<String>) -> StoreError {
    crate::backend::corrupt(std::path::Path::new(target), detail)
}

/// `postgres://user@host:port/db` of a parsed config (never its password).
fn describe(config: &tokio_postgres::Config) -> String {
    let host = config
        .get_hosts()
        .first()
        .map(|h| match h {
            tokio_postgres::config::Host::Tcp(name) => name.clone(),
            #[cfg(unix)]
            tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .unwrap_or_default();
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!(
        "postgres://{}@{host}:{port}/{}",
        config.get_user().unwrap_or(""),
        config.get_dbname().unwrap_or("")
    )
}

fn valid_schema_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && name.len() <= 63
}

/// A parsed URL (with `search_path` set for `schema`), its password-free description, and a
/// connection pool: what [`PgStore`] opens with.
pub(crate) struct Opened {
    pub config: tokio_postgres::Config,
    pub target: String,
    pub pool: Pool,
}

pub(crate) fn open_pool(
    url: &str,
    schema: Option<&str>,
    max_size: usize,
    wait_timeout: Duration,
) -> Result<Opened> {
    let mut config: tokio_postgres::Config = url.parse().map_err(|e| {
        StoreError::Invalid(format!("not a PostgreSQL URL ({e}); expected postgres://…"))
    })?;
    let mut target = describe(&config);
    if let Some(s) = schema {
        if !valid_schema_name(s) {
            return Err(StoreError::Invalid(format!(
                "`{s}` is not a schema name hensu uses (lowercase letters, digits, `_`)"
            )));
        }
        config.options(format!("-c search_path={s}"));
        target = format!("{target} (schema {s})");
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(10));
    }
    let manager = Manager::from_config(
        config.clone(),
        NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    let pool = Pool::builder(manager)
        .max_size(max_size)
        .runtime(deadpool_postgres::Runtime::Tokio1)
        .wait_timeout(Some(wait_timeout))
        .create_timeout(Some(Duration::from_secs(10)))
        .build()
        .map_err(|e| StoreError::Postgres {
            target: target.clone(),
            detail: format!("cannot build the connection pool: {e}"),
        })?;
    Ok(Opened {
        config,
        target,
        pool,
    })
}

impl PgStore {
    /// Connects to `url` (`postgres://user:password@host:port/db?…`, libpq style), creates or
    /// migrates the schema, and checks its version.
    pub async fn open(url: &str, opts: StoreOptions) -> Result<PgStore> {
        PgStore::open_in_schema(url, None, opts).await
    }

    /// Like [`PgStore::open`], with the store's tables in the PostgreSQL schema `schema`
    /// (created if missing; lowercase letters, digits and `_`): several stores in one
    /// database, e.g. one per test.
    pub async fn open_in_schema(
        url: &str,
        schema: Option<&str>,
        opts: StoreOptions,
    ) -> Result<PgStore> {
        let Opened {
            config,
            target,
            pool,
        } = open_pool(url, schema, 8, opts.busy_timeout)?;
        let store = PgStore {
            inner: Arc::new(Inner {
                pool,
                path: PathBuf::from(&target),
                target,
                opts,
                config: config.clone(),
            }),
        };
        migrate(config.clone(), schema, &store.inner.target).await?;
        registry::migrate(&store).await?;
        Ok(store)
    }

    /// A handle on the same pool with other options.
    pub fn with_options(&self, opts: StoreOptions) -> PgStore {
        PgStore {
            inner: Arc::new(Inner {
                pool: self.inner.pool.clone(),
                target: self.inner.target.clone(),
                path: self.inner.path.clone(),
                opts,
                config: self.inner.config.clone(),
            }),
        }
    }

    pub fn options(&self) -> &StoreOptions {
        &self.inner.opts
    }

    /// The database this store writes to (`postgres://user@host:port/db`, no password).
    pub fn target(&self) -> &str {
        &self.inner.target
    }

    /// Runs `f` with the shared state.
    pub(crate) async fn with<T, F, Fut>(&self, f: F) -> Result<T>
    where
        F: FnOnce(Arc<Inner>) -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        f(Arc::clone(&self.inner)).await
    }
}

/// Creates or migrates the schema on a dedicated connection (its session-level advisory lock
/// dies with it, whatever happens).
async fn migrate(config: tokio_postgres::Config, schema: Option<&str>, target: &str) -> Result<()> {
    let (mut client, connection) = config.connect(NoTls).await.map_err(|e| pg_err(target, e))?;
    let conn_task = tokio::spawn(connection);
    let out = async {
        let pg = |e| pg_err(target, e);
        client
            .execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
            .await
            .map_err(pg)?;
        if let Some(s) = schema {
            // The name was validated: lowercase letters, digits and `_` only.
            client
                .batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {s}"))
                .await
                .map_err(pg)?;
        }
        let has_meta: bool = client
            .query_one("SELECT to_regclass('meta') IS NOT NULL", &[])
            .await
            .map_err(pg)?
            .get(0);
        if has_meta {
            let rows = client
                .query(
                    "SELECT key, value FROM meta WHERE key IN ('schema_version', 'hensu_version')",
                    &[],
                )
                .await
                .map_err(pg)?;
            let get = |k: &str| {
                rows.iter()
                    .find(|r| r.get::<_, &str>(0) == k)
                    .map(|r| r.get::<_, String>(1))
            };
            let version = get("schema_version")
                .ok_or_else(|| corrupt(target, "the meta table has no schema_version"))?;
            let found: i64 = version.trim().parse().map_err(|_| {
                corrupt(
                    target,
                    format!("schema_version `{version}` is not a number"),
                )
            })?;
            if !(1..=PG_SCHEMA_VERSION).contains(&found) {
                return Err(StoreError::IncompatibleVersion {
                    path: PathBuf::from(target),
                    found,
                    written_by: get("hensu_version").unwrap_or_else(|| "unknown".into()),
                    supported: PG_SCHEMA_VERSION,
                });
            }
        } else {
            let foreign: bool = client
                .query_one("SELECT to_regclass('runs') IS NOT NULL", &[])
                .await
                .map_err(pg)?
                .get(0);
            if foreign {
                return Err(corrupt(
                    target,
                    "a `runs` table without hensu's meta table: not a hensu state store",
                ));
            }
        }
        embedded::migrations::runner()
            .run_async(&mut client)
            .await
            .map_err(|e| StoreError::Postgres {
                target: target.to_string(),
                detail: format!("migrating the schema failed: {e}"),
            })?;
        client
            .execute(
                "INSERT INTO meta (key, value) VALUES ('hensu_version', $1) \
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                &[&HENSU_VERSION],
            )
            .await
            .map_err(pg)?;
        client
            .execute(
                "UPDATE meta SET value = $1 WHERE key = 'schema_version'",
                &[&PG_SCHEMA_VERSION.to_string()],
            )
            .await
            .map_err(pg)?;
        Ok(())
    }
    .await;
    drop(client);
    let _ = conn_task.await;
    out
}
