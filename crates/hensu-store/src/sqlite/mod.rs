//! The default store: embedded SQLite (bundled), WAL. [`crate::MemoryStore`] is this store
//! on a `:memory:` database.

mod backend;
mod ops;
pub(crate) mod registry;
mod retention;
mod rows;
mod schedules;
mod schema;
mod signals;

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::{Arc, mpsc};

use rusqlite::{Connection, OpenFlags};

use crate::backend::LastStep;
use crate::{Result, SCHEMA_VERSION, STATE_DB, StoreError, StoreOptions};
use backend::SqliteTx;
use schema::{init_schema, quick_check, read_meta, sniff_header};

/// Prepared statements kept per connection: every statement of the store (about 30), so the
/// ones of a step are never evicted by a listing or a claim in between (rusqlite keeps 16).
const STATEMENT_CACHE: usize = 64;

/// The effective SQLite settings of an open store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqliteSettings {
    pub journal_mode: String,
    /// 0 = OFF, 1 = NORMAL, 2 = FULL, 3 = EXTRA.
    pub synchronous: i64,
    pub busy_timeout_ms: i64,
    pub schema_version: i64,
    /// The hensu version that last opened the store for writing.
    pub hensu_version: String,
    pub sqlite_version: String,
}

/// The SQLite store. One connection, owned by one writer thread that runs every operation
/// of the store's handles in turn, each in one transaction; a handle sends it the operation
/// and awaits the answer, so no caller's thread waits on the disk or on SQLite's locks.
/// Several handles (clones, [`SqliteStore::with_options`]) share the thread; several
/// stores and several processes may open the same file: SQLite's locks plus the run leases
/// coordinate them. Dropping the last handle ends the thread once its queued operations
/// are done and waits for it, so the connection is closed (and the WAL checkpointed) when
/// the drop returns.
///
/// An in-memory database ([`SqliteStore::open_memory`]) does no I/O and waits on no lock of
/// another process: its operations run on the caller's thread under the connection's mutex,
/// without a hand-off (so they also never suspend, which tests on tokio's paused clock rely
/// on).
#[derive(Clone)]
pub struct SqliteStore {
    exec: Exec,
    path: Arc<PathBuf>,
    opts: StoreOptions,
}

/// Where a store's operations run.
#[derive(Clone)]
enum Exec {
    /// On the writer thread (a database file).
    Thread(Arc<Writer>),
    /// On the caller's thread (an in-memory database).
    Inline(Arc<std::sync::Mutex<Core>>),
}

/// The writer thread and its queue.
struct Writer {
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Writer {
    fn drop(&mut self) {
        // Closing the queue ends the thread's loop after the jobs already sent.
        self.jobs.take();
        if let Some(thread) = self.thread.take()
            && thread.thread().id() != std::thread::current().id()
        {
            let _ = thread.join();
        }
    }
}

/// One operation for the writer thread.
type Job = Box<dyn FnOnce(&mut Core) + Send>;

/// What the writer thread owns: the connection and what the last append through it left
/// its run at (any other write forgets it).
pub(crate) struct Core {
    conn: Connection,
    path: Arc<PathBuf>,
    last_step: Option<LastStep>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .field("opts", &self.opts)
            .finish_non_exhaustive()
    }
}

impl SqliteStore {
    /// Opens (creating if needed) `<project_dir>/.hensu/state.db` with default options.
    pub fn open(project_dir: impl AsRef<Path>) -> Result<SqliteStore> {
        SqliteStore::open_file(project_dir.as_ref().join(STATE_DB), StoreOptions::default())
    }

    /// Opens (creating if needed) the database file `path`.
    ///
    /// Checks, before writing anything: the file header (a non-SQLite or truncated file is
    /// [`StoreError::Corrupt`]), `PRAGMA quick_check` (if [`StoreOptions::verify_on_open`]),
    /// and the schema version in `meta` ([`StoreError::IncompatibleVersion`]).
    pub fn open_file(path: impl AsRef<Path>, opts: StoreOptions) -> Result<SqliteStore> {
        let path = path.as_ref().to_path_buf();
        if let Some(parent) = path.parent()
            && !parent.as_os_str().is_empty()
        {
            std::fs::create_dir_all(parent).map_err(|source| StoreError::Io {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        sniff_header(&path)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn =
            Connection::open_with_flags(&path, flags).map_err(|e| StoreError::sqlite(&path, e))?;
        let sq = |e| StoreError::sqlite(&path, e);
        conn.busy_timeout(opts.busy_timeout).map_err(sq)?;
        if opts.verify_on_open {
            quick_check(&conn, &path)?;
        }
        // The version check comes before any write (the journal mode is one). Older
        // versions are migrated by `init_schema`.
        let meta = read_meta(&conn, &path)?;
        if let Some((found, written_by)) = meta.clone()
            && !(1..=SCHEMA_VERSION).contains(&found)
        {
            return Err(StoreError::IncompatibleVersion {
                path,
                found,
                written_by,
                supported: SCHEMA_VERSION,
            });
        }
        if meta.is_none() {
            // A new file: pages a purge frees go back to the file system (docs/retention.md,
            // *Space*). Only possible before the first table is created.
            conn.pragma_update(None, "auto_vacuum", "INCREMENTAL")
                .map_err(sq)?;
        }
        let _mode: String = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
            .map_err(sq)?;
        let sync = match opts.durability {
            crate::Durability::Normal => "NORMAL",
            crate::Durability::Full => "FULL",
        };
        conn.pragma_update(None, "synchronous", sync).map_err(sq)?;
        // A WAL checkpoint (copy into the database file + fsync) every 1,000 pages (SQLite's
        // default), stated because it was measured: a step rewrites the same few pages (the
        // run's record, the log's last leaf), and every copy of a page in the WAL lengthens
        // that page's chain in the WAL index, which each new frame walks — quadratic in the
        // pages since the last checkpoint. At 4,000 pages that walk was ~11,000 instructions a
        // step and the larger checkpoints' fsyncs took longer in total than four times as many
        // small ones.
        conn.pragma_update(None, "wal_autocheckpoint", 1000)
            .map_err(sq)?;
        conn.pragma_update(None, "foreign_keys", "ON").map_err(sq)?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        let mut conn = conn;
        init_schema(&mut conn, &path)?;
        registry_tables(&conn, &path)?;
        SqliteStore::start(conn, path, opts)
    }

    /// A private in-memory database (SQLite `:memory:`), gone with its last handle. Clones of
    /// the store share it; [`SqliteStore::with_options`] gives a handle with other options.
    pub fn open_memory(opts: StoreOptions) -> Result<SqliteStore> {
        let path = PathBuf::from(":memory:");
        let mut conn = Connection::open_in_memory().map_err(|e| StoreError::sqlite(&path, e))?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(|e| StoreError::sqlite(&path, e))?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        init_schema(&mut conn, &path)?;
        registry_tables(&conn, &path)?;
        let path = Arc::new(path);
        let core = Core {
            conn,
            path: Arc::clone(&path),
            last_step: None,
        };
        Ok(SqliteStore {
            exec: Exec::Inline(Arc::new(std::sync::Mutex::new(core))),
            path,
            opts,
        })
    }

    /// Starts the writer thread that owns `conn`.
    fn start(conn: Connection, path: PathBuf, opts: StoreOptions) -> Result<SqliteStore> {
        let path = Arc::new(path);
        let (jobs, queue) = mpsc::channel::<Job>();
        let mut core = Core {
            conn,
            path: Arc::clone(&path),
            last_step: None,
        };
        let thread = std::thread::Builder::new()
            .name("hensu-sqlite".into())
            .spawn(move || {
                // Ends when every handle (every sender) is gone; the connection closes with it.
                for job in queue {
                    job(&mut core);
                }
            })
            .map_err(|source| StoreError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(SqliteStore {
            exec: Exec::Thread(Arc::new(Writer {
                jobs: Some(jobs),
                thread: Some(thread),
            })),
            path,
            opts,
        })
    }

    /// Another handle on the same connection with other options.
    pub fn with_options(&self, opts: StoreOptions) -> SqliteStore {
        SqliteStore {
            exec: self.exec.clone(),
            path: Arc::clone(&self.path),
            opts,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn options(&self) -> &StoreOptions {
        &self.opts
    }

    /// The effective settings (for `hensu doctor`-style reports and tests).
    pub async fn settings(&self) -> Result<SqliteSettings> {
        self.call(|core, _| core.settings()).await
    }

    /// Runs `f` where the store's operations run ([`Exec`]) and awaits its answer. A panic in
    /// `f` is answered as an error (its transaction rolls back) and the store goes on serving.
    async fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Core, &StoreOptions) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let writer = match &self.exec {
            Exec::Inline(core) => {
                // A panic while holding the lock cannot leave a transaction half-applied (it
                // rolls back on drop), so a poisoned connection is still sound.
                let mut core = core.lock().unwrap_or_else(|p| p.into_inner());
                return guarded(|| f(&mut core, &self.opts));
            }
            Exec::Thread(writer) => writer,
        };
        let (tx, rx) = tokio::sync::oneshot::channel();
        let opts = self.opts.clone();
        let job: Job = Box::new(move |core| {
            let _ = tx.send(guarded(|| f(core, &opts)));
        });
        let stopped = || StoreError::Invalid("the store's writer thread stopped".into());
        let jobs = writer.jobs.as_ref().ok_or_else(stopped)?;
        jobs.send(job).map_err(|_| stopped())?;
        rx.await.map_err(|_| stopped())?
    }

    /// Runs `f` in a write transaction on the writer thread ([`Core::write`]).
    pub(crate) async fn write<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut SqliteTx<'_>, &StoreOptions) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.call(move |core, opts| core.write(|tx| f(tx, opts)))
            .await
    }

    /// Runs `f` in a read transaction on the writer thread ([`Core::read`]).
    pub(crate) async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut SqliteTx<'_>, &StoreOptions) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.call(move |core, opts| core.read(|tx| f(tx, opts)))
            .await
    }
}

/// `f()`, with a panic answered as an internal error.
fn guarded<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| {
        Err(StoreError::Invalid(
            "internal error: a store operation panicked (please report)".into(),
        ))
    })
}

impl Core {
    fn settings(&self) -> Result<SqliteSettings> {
        let conn = &self.conn;
        let sq = |e| StoreError::sqlite(&self.path, e);
        let journal_mode: String = conn
            .pragma_query_value(None, "journal_mode", |r| r.get(0))
            .map_err(sq)?;
        let synchronous: i64 = conn
            .pragma_query_value(None, "synchronous", |r| r.get(0))
            .map_err(sq)?;
        let busy_timeout_ms: i64 = conn
            .pragma_query_value(None, "busy_timeout", |r| r.get(0))
            .map_err(sq)?;
        let (schema_version, hensu_version) =
            read_meta(conn, &self.path)?.ok_or_else(|| StoreError::Corrupt {
                path: self.path.to_path_buf(),
                detail: "the meta table is missing".into(),
            })?;
        Ok(SqliteSettings {
            journal_mode,
            synchronous,
            busy_timeout_ms,
            schema_version,
            hensu_version,
            sqlite_version: rusqlite::version().to_string(),
        })
    }

    /// Runs `f` in a `BEGIN IMMEDIATE` transaction (the write lock is taken up front, so two
    /// writers serialize instead of failing on upgrade). The transaction carries where the
    /// last append left its run, taken (whatever `f` writes may change what it describes);
    /// what `f`'s append reports is kept once it commits.
    fn write<T>(&mut self, f: impl FnOnce(&mut SqliteTx<'_>) -> Result<T>) -> Result<T> {
        let last = self.last_step.take();
        let (out, keep) = self.in_transaction("BEGIN IMMEDIATE", last, f)?;
        if keep.is_some() {
            self.last_step = keep;
        }
        Ok(out)
    }

    /// Runs `f` in a read transaction (a consistent view across tables).
    fn read<T>(&mut self, f: impl FnOnce(&mut SqliteTx<'_>) -> Result<T>) -> Result<T> {
        self.in_transaction("BEGIN DEFERRED", None, f)
            .map(|(out, _)| out)
    }

    fn in_transaction<T>(
        &self,
        begin: &str,
        last: Option<LastStep>,
        f: impl FnOnce(&mut SqliteTx<'_>) -> Result<T>,
    ) -> Result<(T, Option<LastStep>)> {
        let conn = &self.conn;
        let sq = |e| StoreError::sqlite(&self.path, e);
        let tx = Tx::begin(conn, begin).map_err(sq)?;
        let mut backend = SqliteTx {
            conn,
            path: &self.path,
            last,
            keep: None,
        };
        let out = f(&mut backend)?;
        let keep = backend.keep.take();
        tx.commit().map_err(sq)?;
        Ok((out, keep))
    }
}

/// An open transaction: rolled back when dropped uncommitted (an error or a panic in its
/// body), as rusqlite's `Transaction` is, but begun and committed with cached statements —
/// rusqlite parses `BEGIN` and `COMMIT` afresh every time, ~3,700 instructions of a step.
struct Tx<'a> {
    conn: &'a Connection,
    open: bool,
}

impl<'a> Tx<'a> {
    fn begin(conn: &'a Connection, sql: &str) -> rusqlite::Result<Tx<'a>> {
        conn.prepare_cached(sql)?.execute([])?;
        Ok(Tx { conn, open: true })
    }

    fn commit(mut self) -> rusqlite::Result<()> {
        self.conn.prepare_cached("COMMIT")?.execute([])?;
        self.open = false;
        Ok(())
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if self.open && !self.conn.is_autocommit() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}

/// The registry's tables, created with the store: a claim tells a server's run from a local
/// one by its tenant tag ([`crate::ClaimScope`]), so the tag's table must exist.
fn registry_tables(conn: &Connection, path: &Path) -> Result<()> {
    conn.execute_batch(registry::SCHEMA)
        .and_then(|()| conn.execute_batch(crate::events::SQLITE_SCHEMA))
        .map_err(|e| StoreError::sqlite(path, e))
}
