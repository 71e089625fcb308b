//! The one parser of store locations: every caller (the CLI's commands, the server, the
//! console, tests) names a store the same way and opens it with [`StoreUrl::open`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::{
    MemoryStore, PgStore, Result, STATE_DB, SqliteStore, StateStore, StoreError, StoreOptions,
};

/// A parsed store location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreUrl {
    /// `postgres://…` or `postgresql://…` (libpq style, as given: it may hold a password).
    Postgres(String),
    /// `:memory:` or `sqlite::memory:`: a fresh private database.
    Memory,
    /// `sqlite://PATH` or a plain `PATH`: the database file (a directory's `.hensu/state.db`).
    Sqlite(PathBuf),
}

impl StoreUrl {
    /// Parses a store location:
    /// - `postgres://…` or `postgresql://…`: [`StoreUrl::Postgres`];
    /// - `:memory:` or `sqlite::memory:`: [`StoreUrl::Memory`];
    /// - `sqlite://PATH` or a plain `PATH`: [`StoreUrl::Sqlite`] on that file, or, when `PATH`
    ///   is a directory, on its `.hensu/state.db`.
    ///
    /// Any other `scheme://` is [`StoreError::Invalid`].
    pub fn parse(url_or_path: &str) -> Result<StoreUrl> {
        let s = url_or_path.trim();
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            return Ok(StoreUrl::Postgres(s.to_string()));
        }
        if s == ":memory:" || s == "sqlite::memory:" {
            return Ok(StoreUrl::Memory);
        }
        if let Some((scheme, _)) = s.split_once("://")
            && scheme != "sqlite"
        {
            return Err(StoreError::Invalid(format!(
                "unknown store URL scheme `{scheme}://` (expected postgres://, sqlite:// or a path)"
            )));
        }
        let path = Path::new(s.strip_prefix("sqlite://").unwrap_or(s));
        Ok(StoreUrl::Sqlite(if path.is_dir() {
            path.join(STATE_DB)
        } else {
            path.to_path_buf()
        }))
    }

    /// Opens the store this location names.
    pub async fn open(&self, opts: StoreOptions) -> Result<Arc<dyn StateStore>> {
        Ok(match self {
            StoreUrl::Postgres(url) => Arc::new(PgStore::open(url, opts).await?),
            StoreUrl::Memory => Arc::new(MemoryStore::try_new(opts)?),
            StoreUrl::Sqlite(file) => Arc::new(SqliteStore::open_file(file, opts)?),
        })
    }

    /// The location fit for messages and logs: a URL's user, password and parameters are
    /// left out.
    pub fn label(&self) -> String {
        match self {
            StoreUrl::Postgres(url) => {
                let (scheme, rest) = url.split_once("://").unwrap_or(("postgres", url));
                let rest = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
                let rest = rest.split_once('?').map_or(rest, |(base, _)| base);
                format!("{scheme}://{rest}")
            }
            StoreUrl::Memory => ":memory:".into(),
            StoreUrl::Sqlite(file) => file.display().to_string(),
        }
    }

    /// [`StoreUrl::label`] of a location that may not parse (then shown as given, minus any
    /// credentials before an `@`).
    pub fn label_of(url_or_path: &str) -> String {
        match StoreUrl::parse(url_or_path) {
            Ok(url) => url.label(),
            Err(_) => match url_or_path.split_once("://") {
                Some((scheme, rest)) => {
                    let rest = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
                    format!("{scheme}://{rest}")
                }
                None => url_or_path.to_string(),
            },
        }
    }
}

/// Opens the store `url_or_path` names ([`StoreUrl::parse`], then [`StoreUrl::open`]).
pub async fn open_store(url_or_path: &str, opts: StoreOptions) -> Result<Arc<dyn StateStore>> {
    StoreUrl::parse(url_or_path)?.open(opts).await
}
