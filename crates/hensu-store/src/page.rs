//! Paging a tenant's runs: one SQL query per page, newest first, with a keyset cursor
//! (docs/server.md, *Paging*).
//!
//! The order key is the tenant tag's `created_at` (the run's `started_at`, written with it in
//! one transaction), then the run id, both descending: a cursor is the key of the last row of
//! a page, and the next page is everything strictly below it, so rows with equal times are
//! neither skipped nor repeated.

use crate::backend::Backend;
use crate::{Result, RunRecord, RunStatus};

/// Rows of a page when the caller does not say.
pub const DEFAULT_PAGE_LIMIT: usize = 50;
/// Rows of a page at most; a larger limit is clamped to it.
pub const MAX_PAGE_LIMIT: usize = 500;

/// Which of a tenant's runs a page holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunQuery {
    /// Only runs in one of these statuses (empty: any status).
    pub statuses: Vec<RunStatus>,
    /// Only runs of this workflow.
    pub workflow_id: Option<String>,
    /// Only runs started at or after this time (unix ms, inclusive).
    pub since: Option<u64>,
    /// Only runs started before this time (unix ms, exclusive).
    pub until: Option<u64>,
    /// Continue after this key (the previous page's [`RunPage::next_cursor`]).
    pub cursor: Option<RunCursor>,
    /// Rows at most: 0 means [`DEFAULT_PAGE_LIMIT`], more than [`MAX_PAGE_LIMIT`] is clamped.
    pub limit: usize,
}

impl RunQuery {
    /// The limit the query runs with (see [`RunQuery::limit`]).
    pub fn effective_limit(&self) -> usize {
        match self.limit {
            0 => DEFAULT_PAGE_LIMIT,
            n => n.min(MAX_PAGE_LIMIT),
        }
    }
}

/// One page of a tenant's runs, newest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunPage {
    pub records: Vec<RunRecord>,
    /// The cursor of the next page; `None` on the last page.
    pub next_cursor: Option<RunCursor>,
}

/// The position after a row of a page: its listing time and run id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunCursor {
    /// Unix milliseconds.
    pub listed_at: u64,
    pub run_id: String,
}

/// A cursor string that no page produced.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("malformed cursor: pass the next cursor of a previous page unchanged")]
pub struct InvalidCursor;

impl RunCursor {
    /// The opaque text form: lower-case hex of `"<listed_at>:<run_id>"` (URL-safe as is).
    pub fn encode(&self) -> String {
        let plain = format!("{}:{}", self.listed_at, self.run_id);
        plain.bytes().map(|b| format!("{b:02x}")).collect()
    }

    /// Parses [`RunCursor::encode`]'s output; anything else is [`InvalidCursor`].
    pub fn decode(text: &str) -> Result<RunCursor, InvalidCursor> {
        // 20 digits, a colon and a 255-byte id, hex-encoded.
        if text.is_empty() || text.len() > 2 * 276 || !text.len().is_multiple_of(2) {
            return Err(InvalidCursor);
        }
        let bytes = (0..text.len())
            .step_by(2)
            .map(|i| {
                text.get(i..i + 2)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
            })
            .collect::<Option<Vec<u8>>>()
            .ok_or(InvalidCursor)?;
        let plain = String::from_utf8(bytes).map_err(|_| InvalidCursor)?;
        let (at, run_id) = plain.split_once(':').ok_or(InvalidCursor)?;
        let listed_at = at.parse::<u64>().map_err(|_| InvalidCursor)?;
        // The key must fit the store's signed 64-bit columns.
        if i64::try_from(listed_at).is_err()
            || run_id.is_empty()
            || run_id.chars().any(|c| c.is_control())
        {
            return Err(InvalidCursor);
        }
        Ok(RunCursor {
            listed_at,
            run_id: run_id.to_string(),
        })
    }
}

/// One page of a tenant's runs (see [`crate::RunQuery`]): one more row than the limit is
/// read, so the last page says so without a second query.
pub(crate) async fn tenant_runs_page<B: Backend>(
    b: &mut B,
    tenant: &str,
    query: &RunQuery,
) -> Result<RunPage> {
    let limit = query.effective_limit();
    let mut rows = b.tenant_page(tenant, query, limit + 1).await?;
    let more = rows.len() > limit;
    rows.truncate(limit);
    let next_cursor = match rows.last() {
        Some((listed_at, r)) if more => Some(RunCursor {
            listed_at: *listed_at,
            run_id: r.run_id.clone(),
        }),
        _ => None,
    };
    Ok(RunPage {
        records: rows.into_iter().map(|(_, r)| r).collect(),
        next_cursor,
    })
}

/// A parameter of [`page_sql`]'s statement.
#[derive(Debug)]
pub(crate) enum PageParam {
    Text(String),
    Int(i64),
}

/// The one statement of a page, shared by the dialects (`placeholder(n)` spells parameter
/// `n`, from 1; `join`: `CROSS JOIN` on SQLite, `JOIN` on PostgreSQL, which has no
/// `CROSS JOIN … ON`): the record columns (`record_cols`, in the backend's record order), then the
/// tag's `created_at`. The tenant tags drive it (`CROSS JOIN` keeps them the outer loop on
/// SQLite, whose planner honours the written order then), walked backwards on the index
/// `(tenant_id, created_at, run_id)` — or `(tenant_id, workflow_id, created_at, run_id)` with a
/// workflow — so a page reads about `limit` tags and their runs by primary key.
pub(crate) fn page_sql(
    record_cols: &str,
    join: &str,
    tenant: &str,
    query: &RunQuery,
    limit: usize,
    placeholder: impl Fn(usize) -> String,
) -> (String, Vec<PageParam>) {
    let mut params = vec![PageParam::Text(tenant.to_string())];
    let next = |p: PageParam, params: &mut Vec<PageParam>| {
        params.push(p);
        placeholder(params.len())
    };
    let cols: Vec<String> = record_cols
        .split(',')
        .map(|c| format!("r.{}", c.trim()))
        .collect();
    let mut sql = format!(
        "SELECT {}, t.created_at FROM run_tenants t {join} runs r ON r.run_id = t.run_id \
         WHERE t.tenant_id = {}",
        cols.join(", "),
        placeholder(1)
    );
    if let Some(w) = &query.workflow_id {
        let p = next(PageParam::Text(w.clone()), &mut params);
        sql.push_str(&format!(" AND t.workflow_id = {p}"));
    }
    let int = |v: u64| PageParam::Int(i64::try_from(v).unwrap_or(i64::MAX));
    if let Some(since) = query.since {
        let p = next(int(since), &mut params);
        sql.push_str(&format!(" AND t.created_at >= {p}"));
    }
    if let Some(until) = query.until {
        let p = next(int(until), &mut params);
        sql.push_str(&format!(" AND t.created_at < {p}"));
    }
    if let Some(c) = &query.cursor {
        let at = next(int(c.listed_at), &mut params);
        let id = next(PageParam::Text(c.run_id.clone()), &mut params);
        sql.push_str(&format!(" AND (t.created_at, t.run_id) < ({at}, {id})"));
    }
    if !query.statuses.is_empty() {
        let list: Vec<String> = query
            .statuses
            .iter()
            .map(|s| next(PageParam::Text(s.as_str().to_string()), &mut params))
            .collect();
        sql.push_str(&format!(" AND r.status IN ({})", list.join(", ")));
    }
    let lim = next(int(limit as u64), &mut params);
    sql.push_str(&format!(
        " ORDER BY t.created_at DESC, t.run_id DESC LIMIT {lim}"
    ));
    (sql, params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_round_trips_and_garbage_is_refused() {
        let c = RunCursor {
            listed_at: 1_700_000_000_123,
            run_id: "3f2a-b".into(),
        };
        assert_eq!(RunCursor::decode(&c.encode()), Ok(c));
        for bad in [
            "", "zz", "abc", "3a", "3a31", "313a", "ffff3a31", "2d313a61",
        ] {
            assert_eq!(RunCursor::decode(bad), Err(InvalidCursor), "{bad}");
        }
        assert_eq!(RunCursor::decode(&"a".repeat(10_000)), Err(InvalidCursor));
    }
}
