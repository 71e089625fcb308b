//! The tenant event log (`hensu_store::TenantEvent`): one global sequence, increasing in
//! commit order, one event per run-log row of a tagged run (claims aside), filtered by tenant
//! in the query, replayed after any cursor, trimmed oldest first (docs/server.md, *Events*).

use hensu_store::{ClaimScope, EventBounds, LogKind, RecordUpdate, RunRecord, RunStatus};
use serde_json::json;

use crate::conformance::{Blocking, BlockingRegistry, SyncStore, block, owner, step_entry};

fn seqs(events: &[hensu_store::TenantEvent]) -> Vec<u64> {
    events.iter().map(|e| e.seq).collect()
}

pub fn tenant_events_follow_one_sequence(store: &Blocking, r: &BlockingRegistry) {
    let reg = &r.inner;
    let start = block(reg.event_bounds()).expect("bounds").latest;
    let wf = br#"{"id": "wf"}"#;
    let state = json!({"n": 0});
    // t1: a run with two steps and an end; t2: a run; a local run (no tag) logs nothing.
    let rec = RunRecord::new("ev-a", "wa", "v1", Some("start".into()));
    r.create_tenant_run("ev-t1", &rec, wf, &state)
        .expect("create");
    let rec = RunRecord::new("ev-b", "wb", "v1", Some("start".into()));
    r.create_tenant_run("ev-t2", &rec, wf, &state)
        .expect("create");
    store
        .create_run(
            &RunRecord::new("ev-local", "wl", "v1", None),
            &json!({}),
            &state,
        )
        .expect("local");
    let lease = store.acquire("ev-a", &owner("ev")).expect("lease");
    store
        .append(&lease, 0, &RecordUpdate::running("n1"), &step_entry(1))
        .expect("step 1");
    store
        .append(&lease, 1, &RecordUpdate::running("n2"), &step_entry(2))
        .expect("step 2");
    let local = store.acquire("ev-local", &owner("ev")).expect("lease");
    store
        .append(&local, 0, &RecordUpdate::running("x"), &step_entry(1))
        .expect("local step");
    store
        .set_status(
            "ev-a",
            Some(&lease),
            2,
            &RecordUpdate::finished(RunStatus::Completed, Some("end".into()), None),
        )
        .expect("end");

    let all = block(reg.events_after(None, start, 100)).expect("all");
    let runs: Vec<(&str, u64)> = all
        .iter()
        .map(|e| (e.run_id.as_str(), e.entry.meta.step))
        .collect();
    assert_eq!(
        runs,
        [
            ("ev-a", 0),
            ("ev-b", 0),
            ("ev-a", 1),
            ("ev-a", 2),
            ("ev-a", 3)
        ],
        "every row of a tagged run once, in write order; the local run has none"
    );
    assert!(
        seqs(&all).windows(2).all(|w| w[0] < w[1]),
        "increasing: {:?}",
        seqs(&all)
    );
    let first = &all[0];
    assert_eq!(
        (first.tenant_id.as_str(), first.workflow_id.as_str()),
        ("ev-t1", "wa")
    );
    assert_eq!(first.entry.meta.kind, LogKind::Created);
    assert_eq!(
        all[2].entry.output,
        Some(json!({"n": 1})),
        "the step's output"
    );
    assert_eq!(all[4].entry.meta.status, RunStatus::Completed);

    // The tenant filter, and a replay after any cursor.
    let t1 = block(reg.events_after(Some("ev-t1"), start, 100)).expect("t1");
    assert!(t1.iter().all(|e| e.tenant_id == "ev-t1") && t1.len() == 4);
    let t2 = block(reg.events_after(Some("ev-t2"), start, 100)).expect("t2");
    assert_eq!(seqs(&t2), [all[1].seq]);
    let rest = block(reg.events_after(Some("ev-t1"), all[2].seq, 100)).expect("after");
    assert_eq!(seqs(&rest), [all[3].seq, all[4].seq]);
    let page = block(reg.events_after(Some("ev-t1"), start, 2)).expect("page");
    assert_eq!(seqs(&page), [all[0].seq, all[2].seq], "limit");
    assert!(
        block(reg.events_after(Some("nobody"), 0, 100))
            .expect("none")
            .is_empty()
    );

    // A claim is bookkeeping, not an event: a claimed tagged run logs nothing new.
    let queued = {
        let mut r = RunRecord::new("ev-q", "wq", "v1", Some("start".into()));
        r.status = RunStatus::Queued;
        r
    };
    r.create_tenant_run("ev-t1", &queued, wf, &state)
        .expect("queued");
    let before = block(reg.event_bounds()).expect("bounds").latest;
    let claimed = store
        .claim_in(&owner("ev-claim"), ClaimScope::Tenants, 1_000)
        .expect("claim");
    assert!(claimed.iter().any(|c| c.lease.run_id == "ev-q"));
    assert_eq!(block(reg.event_bounds()).expect("bounds").latest, before);

    let bounds = block(reg.event_bounds()).expect("bounds");
    assert_eq!(bounds.latest, before);
    assert!(bounds.replayable(start) && bounds.replayable(bounds.latest));
    assert!(
        !bounds.replayable(bounds.latest + 1),
        "an id from the future"
    );
}

/// Trimming removes the oldest rows written before the cut-off, never the latest, and a
/// cursor below what is kept is no longer replayable.
pub fn tenant_events_are_trimmed_oldest_first(r: &BlockingRegistry) {
    let reg = &r.inner;
    let wf = br#"{"id": "wf"}"#;
    let state = json!({"n": 0});
    for i in 0..3 {
        let rec = RunRecord::new(format!("trim-{i}"), "wt", "v1", Some("s".into()));
        r.create_tenant_run("trim-t", &rec, wf, &state)
            .expect("create");
    }
    let before: EventBounds = block(reg.event_bounds()).expect("bounds");
    assert!(before.oldest >= 1 && before.latest >= before.oldest + 2);
    // Everything is older than a cut-off in the future; one row at most per call here.
    let n = block(reg.trim_events(u64::MAX / 2, 1)).expect("trim");
    assert_eq!(n, 1);
    let n = block(reg.trim_events(u64::MAX / 2, 1_000_000)).expect("trim");
    assert!(n >= 1);
    let after = block(reg.event_bounds()).expect("bounds");
    assert_eq!(
        (after.oldest, after.latest),
        (before.latest, before.latest),
        "the latest stays"
    );
    assert!(!after.replayable(before.oldest), "trimmed: not replayable");
    assert!(after.replayable(after.latest - 1) && after.replayable(after.latest));
    // Nothing is older than the epoch: nothing to do.
    assert_eq!(block(reg.trim_events(0, 10)).expect("trim"), 0);
}
