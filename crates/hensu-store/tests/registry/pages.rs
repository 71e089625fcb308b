//! The paged list of a tenant's runs ([`hensu_store::RunQuery`]): order, cursor continuity
//! across equal start times, filters, tenant isolation (docs/server.md, *Paging*).

use hensu_store::{
    DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, RecordUpdate, RunCursor, RunQuery, RunRecord, RunStatus,
};
use serde_json::json;

use crate::conformance::{Blocking, BlockingRegistry, SyncStore};

/// `(run id, workflow, started_at)` of tenant `p1`; `p2` owns `q1` (started between them).
const RUNS: [(&str, &str, u64); 7] = [
    ("a", "wa", 100),
    ("b", "wb", 200),
    ("c", "wa", 200),
    ("d", "wb", 200),
    ("e", "wa", 300),
    ("f", "wb", 400),
    ("g", "wa", 500),
];

fn ids(records: &[RunRecord]) -> Vec<&str> {
    records.iter().map(|r| r.run_id.as_str()).collect()
}

/// Every page of `query` (its limit per page), followed through the cursors.
fn all_pages(r: &BlockingRegistry, tenant: &str, query: &RunQuery) -> Vec<Vec<String>> {
    let mut pages = Vec::new();
    let mut q = query.clone();
    loop {
        let page = r.tenant_runs_page(tenant, &q).expect("page");
        pages.push(page.records.iter().map(|x| x.run_id.clone()).collect());
        match page.next_cursor {
            Some(c) => {
                // The cursor travels as text.
                q.cursor = Some(RunCursor::decode(&c.encode()).expect("own cursor"));
            }
            None => return pages,
        }
        assert!(pages.len() <= RUNS.len() + 1, "the cursor does not advance");
    }
}

pub fn a_tenants_runs_are_paged_newest_first(store: &Blocking, r: &BlockingRegistry) {
    let wf = br#"{"id": "wf"}"#;
    let state = json!({"n": 0});
    for (id, workflow, at) in RUNS {
        let mut rec = RunRecord::new(format!("p1-{id}"), workflow, "v1", Some("start".into()));
        rec.started_at = at;
        rec.updated_at = at;
        r.create_tenant_run("p1", &rec, wf, &state).expect("create");
    }
    let mut other = RunRecord::new("p2-q1", "wa", "v1", Some("start".into()));
    other.started_at = 250;
    r.create_tenant_run("p2", &other, wf, &state)
        .expect("create");
    store
        .set_status("p1-c", None, 0, &RecordUpdate::paused("review", "corr-c"))
        .expect("pause");
    store
        .set_status("p1-f", None, 0, &RecordUpdate::paused("review", "corr-f"))
        .expect("pause");

    // Newest first, equal start times by run id (descending); pages of 2 split the three
    // runs started at 200 and still list each run once.
    let two = RunQuery {
        limit: 2,
        ..RunQuery::default()
    };
    let pages = all_pages(r, "p1", &two);
    assert_eq!(
        pages,
        [
            vec!["p1-g", "p1-f"],
            vec!["p1-e", "p1-d"],
            vec!["p1-c", "p1-b"],
            vec!["p1-a"],
        ]
    );
    // A page that ends exactly at the last row says there is no next page.
    let seven = RunQuery {
        limit: 7,
        ..RunQuery::default()
    };
    let page = r.tenant_runs_page("p1", &seven).expect("page");
    assert_eq!(page.records.len(), 7);
    assert_eq!(page.next_cursor, None);
    // The records are the runs' own (status included).
    assert_eq!(page.records[1].status, RunStatus::Paused);
    assert_eq!(page.records[1].started_at, 400);

    // Filters: workflow, status, time (since inclusive, until exclusive), and together.
    let q = |f: fn(&mut RunQuery)| {
        let mut q = RunQuery {
            limit: 2,
            ..RunQuery::default()
        };
        f(&mut q);
        all_pages(r, "p1", &q).concat()
    };
    assert_eq!(
        q(|q| q.workflow_id = Some("wa".into())),
        ["p1-g", "p1-e", "p1-c", "p1-a"]
    );
    assert_eq!(
        q(|q| q.statuses = vec![RunStatus::Paused]),
        ["p1-f", "p1-c"]
    );
    assert_eq!(
        q(|q| q.statuses = vec![RunStatus::Paused, RunStatus::Running]).len(),
        7
    );
    assert!(q(|q| q.statuses = vec![RunStatus::Completed]).is_empty());
    assert_eq!(
        q(|q| {
            q.since = Some(200);
            q.until = Some(400);
        }),
        ["p1-e", "p1-d", "p1-c", "p1-b"]
    );
    assert_eq!(
        q(|q| {
            q.since = Some(200);
            q.workflow_id = Some("wb".into());
            q.statuses = vec![RunStatus::Running];
        }),
        ["p1-d", "p1-b"]
    );
    assert!(q(|q| q.workflow_id = Some("nope".into())).is_empty());

    // Tenant isolation: each tenant pages only its own runs.
    assert_eq!(all_pages(r, "p2", &two), [vec!["p2-q1"]]);
    assert_eq!(all_pages(r, "p3", &two), [Vec::<String>::new()]);
    // Another tenant's cursor is only a position: it reveals nothing of that tenant.
    let foreign = RunQuery {
        cursor: Some(RunCursor {
            listed_at: 250,
            run_id: "p2-q1".into(),
        }),
        ..RunQuery::default()
    };
    assert_eq!(
        ids(&r.tenant_runs_page("p1", &foreign).expect("page").records),
        ["p1-d", "p1-c", "p1-b", "p1-a"]
    );
    // A cursor past the end: an empty last page.
    let past = RunQuery {
        cursor: Some(RunCursor {
            listed_at: 0,
            run_id: String::new(),
        }),
        ..RunQuery::default()
    };
    let page = r.tenant_runs_page("p1", &past).expect("page");
    assert!(page.records.is_empty() && page.next_cursor.is_none());

    // The limit: 0 is the default, a large one is clamped.
    assert_eq!(RunQuery::default().effective_limit(), DEFAULT_PAGE_LIMIT);
    let huge = RunQuery {
        limit: usize::MAX,
        ..RunQuery::default()
    };
    assert_eq!(huge.effective_limit(), MAX_PAGE_LIMIT);
    assert_eq!(
        r.tenant_runs_page("p1", &huge).expect("page").records.len(),
        7
    );
    // Malformed cursors are refused before any query.
    for bad in ["", "xyz", "00", &"ab".repeat(400)] {
        assert!(RunCursor::decode(bad).is_err(), "{bad}");
    }
}
