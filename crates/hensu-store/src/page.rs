//! Paging a tenant's runs: one SQL query per page, newest first, with a keyset cursor
//! (docs/server.md, *Paging*).
//!
//! The order key is the tenant tag's `created_at` (the run's `started_at`, written with it in
//! one transaction), then the run id, both descending: a cursor is the key of the last row of
//! a page, and the next page is everything strictly below it, so rows with equal times are
//! neither skipped nor repeated.

use crate::Result;
use crate::backend::Backend;
use crate::query::{RunCursor, RunPage, RunQuery};

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
