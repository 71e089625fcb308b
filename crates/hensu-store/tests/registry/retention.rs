//! Retention (docs/retention.md) on every backend: a purge deletes the finished runs its rules
//! name — by age, failed runs later, by count per workflow, per-workflow and per-tenant rules —
//! never a running or paused one, and never a run a kept fork reads its log from; a fork stays
//! readable after its parent's age has passed, and goes (children first) once it is purged too.

use std::collections::BTreeMap;

use hensu_store::retention::{PurgeOptions, PurgeReason, RetentionRule, RetentionSection, purge};
use hensu_store::{ForkSpec, RecordUpdate, RunParent, RunStatus, StateDelta, StoreError};
use serde_json::json;

use crate::conformance::{
    Blocking, BlockingRegistry, SyncStore, block, record, snapshot, workflow,
};

const DAY: u64 = 86_400_000;

fn rule(age: Option<f64>, count: Option<u64>) -> RetentionRule {
    RetentionRule {
        max_age_days: age,
        max_count: count,
        failed_max_age_days: None,
    }
}

fn section() -> RetentionSection {
    RetentionSection {
        max_age_days: Some(1.0),
        failed_max_age_days: Some(5.0),
        workflows: BTreeMap::from([
            ("keep".to_string(), rule(Some(10.0), None)),
            ("counted".to_string(), rule(Some(100.0), Some(2))),
        ]),
        tenants: BTreeMap::from([("acme".to_string(), rule(Some(30.0), None))]),
        ..RetentionSection::default()
    }
}

/// A run `id` of `workflow` ended with `status` (and `exit`).
fn ended(s: &Blocking, id: &str, workflow_id: &str, status: RunStatus, exit: Option<&str>) {
    let mut r = record(id, 1_000);
    r.workflow_id = workflow_id.into();
    s.create_run(&r, &workflow(), &snapshot(0)).expect("create");
    let update = RecordUpdate::finished(status, Some("done".into()), exit.map(str::to_string));
    s.set_status(id, None, 0, &update).expect("finish");
}

fn purge_at(s: &Blocking, at: u64, dry_run: bool) -> (Vec<String>, Vec<String>) {
    let options = PurgeOptions {
        dry_run,
        rewrite: false,
    };
    let report = block(purge(s.inner.as_ref(), &section(), at, options)).expect("purge");
    let mut deleted: Vec<String> = report
        .deleted
        .iter()
        .map(|(r, _)| r.run_id.clone())
        .collect();
    deleted.sort();
    (deleted, report.kept_for_forks)
}

fn gone(s: &Blocking, id: &str) -> bool {
    matches!(s.record(id), Err(StoreError::NotFound { .. }))
}

pub fn purge_keeps_what_rules_and_forks_need(s: &Blocking, r: &BlockingRegistry) {
    let now = hensu_store::now_ms();
    ended(s, "old", "old", RunStatus::Completed, Some("SUCCESS"));
    ended(s, "failed", "old", RunStatus::Failed, None);
    ended(
        s,
        "failed-end",
        "old",
        RunStatus::Completed,
        Some("FAILURE"),
    );
    ended(s, "cancelled", "old", RunStatus::Cancelled, None);
    ended(s, "keep1", "keep", RunStatus::Completed, Some("SUCCESS"));
    for c in ["c1", "c2", "c3", "c4"] {
        ended(s, c, "counted", RunStatus::Completed, Some("SUCCESS"));
    }
    // Never finished: never purged, however old.
    let mut running = record("running", 1_000);
    running.workflow_id = "old".into();
    s.create_run(&running, &workflow(), &snapshot(0))
        .expect("create");
    ended(s, "paused", "old", RunStatus::Paused, None);
    // A tenant's run, under its tenant's rule.
    let mut t1 = record("t1", 1_000);
    t1.workflow_id = "old".into();
    r.create_tenant_run("acme", &t1, b"{}", &snapshot(0))
        .expect("tenant run");
    s.set_status(
        "t1",
        None,
        0,
        &RecordUpdate::finished(RunStatus::Completed, None, None),
    )
    .expect("finish");
    // A parent past its age, read by a fork that is kept.
    ended(s, "parent", "old", RunStatus::Completed, Some("SUCCESS"));
    let mut fork = record("fork", 2_000);
    fork.workflow_id = "keep".into();
    fork.status = RunStatus::Queued;
    s.fork(&ForkSpec {
        parent: RunParent {
            run_id: "parent".into(),
            step: 0,
        },
        record: fork,
        workflow: None,
        edits: StateDelta::new().set(&["context", "edited"], json!("yes")),
        tenant: None,
    })
    .expect("fork");

    // Two days on: a dry run names what goes and deletes nothing.
    let expected = (
        vec![
            "c1".to_string(),
            "c2".into(),
            "cancelled".into(),
            "old".into(),
        ],
        vec!["parent".to_string()],
    );
    assert_eq!(purge_at(s, now + 2 * DAY, true), expected);
    assert!(!gone(s, "old"));
    assert_eq!(purge_at(s, now + 2 * DAY, false), expected);
    for id in ["old", "cancelled", "c1", "c2"] {
        assert!(gone(s, id), "{id}");
    }
    for id in [
        "failed",
        "failed-end",
        "keep1",
        "c3",
        "c4",
        "running",
        "paused",
        "t1",
        "parent",
    ] {
        assert!(!gone(s, id), "{id} kept");
    }
    // The fork still reads its parent's prefix.
    assert_eq!(
        s.load("fork").expect("fork loads").snapshot["context"]["edited"],
        "yes"
    );
    assert!(s.history("fork").expect("history").len() >= 2);
    // Twenty days on: the failed runs, the parent's workflow age and the fork's have passed;
    // the fork (cancelled) goes first, then its parent.
    s.request_cancel("fork").expect("cancel the fork");
    let (deleted, kept) = purge_at(s, now + 20 * DAY, false);
    assert!(kept.is_empty());
    for id in ["failed", "failed-end", "keep1", "fork", "parent"] {
        assert!(deleted.contains(&id.to_string()), "{id} in {deleted:?}");
    }
    assert!(!gone(s, "t1") && !gone(s, "c3"));
    // Forty days on: the tenant's run, and its tag with it.
    let (deleted, _) = purge_at(s, now + 40 * DAY, false);
    assert_eq!(deleted, ["t1"]);
    assert_eq!(r.run_tenant("t1").expect("tenant"), None);
    assert!(!gone(s, "running") && !gone(s, "paused"));
    let reason = block(purge(
        s.inner.as_ref(),
        &section(),
        now + 200 * DAY,
        PurgeOptions::default(),
    ))
    .expect("purge")
    .deleted;
    assert!(reason.iter().all(|(_, why)| *why == PurgeReason::Age));
}
