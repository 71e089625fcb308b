//! The workflow registry's conformance suite (definitions per tenant, soft delete, run
//! tenants), run on every backend by `sqlite.rs` and `postgres.rs`.

mod events;
mod idempotency;
mod pages;
mod retention;
mod schedules;
pub use events::{tenant_events_are_trimmed_oldest_first, tenant_events_follow_one_sequence};
pub use idempotency::a_key_starts_one_run_per_tenant;
pub use pages::a_tenants_runs_are_paged_newest_first;
pub use retention::purge_keeps_what_rules_and_forks_need;
pub use schedules::{
    a_tick_is_claimed_once, config_schedules_keep_their_state, open_firings_are_taken_over_once,
    racing_claimers_fire_each_tick_once, schedules_are_rows_per_tenant,
};

use crate::conformance::{Blocking, BlockingRegistry, SyncStore};
use hensu_store::{RunRecord, StoreError, WorkflowSummary};
use serde_json::json;

pub fn definitions_per_tenant_with_soft_delete(r: &BlockingRegistry) {
    let v1 = json!({"id": "wf", "version": "1.0.0", "nodes": {}});
    let v2 = json!({"id": "wf", "version": "2.0.0", "nodes": {"a": 1}});
    assert!(
        r.put_workflow("t1", "wf", "1.0.0", &v1).expect("put"),
        "created"
    );
    assert!(
        !r.put_workflow("t1", "wf", "2.0.0", &v2).expect("put"),
        "replaced"
    );
    let got = r.get_workflow("t1", "wf").expect("get").expect("live");
    assert_eq!((got.version.as_str(), &got.definition), ("2.0.0", &v2));
    assert!(got.updated_at >= got.created_at);
    // Another tenant: same id, separate row.
    assert_eq!(r.get_workflow("t2", "wf").expect("get"), None);
    assert!(r.put_workflow("t2", "wf", "1.0.0", &v1).expect("put"));
    r.put_workflow("t1", "a-first", "0.1", &v1).expect("put");
    assert_eq!(
        r.list_workflows("t1").expect("list"),
        vec![
            WorkflowSummary {
                workflow_id: "a-first".into(),
                version: "0.1".into()
            },
            WorkflowSummary {
                workflow_id: "wf".into(),
                version: "2.0.0".into()
            },
        ]
    );
    // Soft delete: gone from reads, once; a push revives it (created again).
    assert!(r.delete_workflow("t1", "wf").expect("delete"));
    assert!(!r.delete_workflow("t1", "wf").expect("delete"));
    assert_eq!(r.get_workflow("t1", "wf").expect("get"), None);
    assert_eq!(r.list_workflows("t1").expect("list").len(), 1);
    assert!(
        r.get_workflow("t2", "wf").expect("get").is_some(),
        "t2 untouched"
    );
    assert!(r.put_workflow("t1", "wf", "3.0.0", &v1).expect("revive"));
    assert_eq!(
        r.get_workflow("t1", "wf")
            .expect("get")
            .expect("live")
            .version,
        "3.0.0"
    );
}

pub fn runs_belong_to_one_tenant(r: &BlockingRegistry) {
    r.tag_run("r1", "t1", "wf").expect("tag");
    r.tag_run("r2", "t2", "wf").expect("tag");
    r.tag_run("r3", "t1", "wf").expect("tag");
    assert!(matches!(
        r.tag_run("r1", "t2", "wf"),
        Err(StoreError::AlreadyExists { .. })
    ));
    assert_eq!(r.run_tenant("r1").expect("tenant").as_deref(), Some("t1"));
    assert_eq!(r.run_tenant("nope").expect("tenant"), None);
    let mut t1 = r.tenant_runs("t1").expect("runs");
    t1.sort();
    assert_eq!(t1, ["r1", "r3"]);
    assert_eq!(r.tenant_runs("t2").expect("runs"), ["r2"]);
    assert!(r.tenant_runs("t3").expect("runs").is_empty());
}

/// `create_tenant_run` writes the run and its tag together or not at all (`store` and `r` are
/// one handle's store and registry).
pub fn a_tenant_run_and_its_tag_are_one_transaction(store: &Blocking, r: &BlockingRegistry) {
    let wf = br#"{"id": "wf"}"#;
    let state = json!({"n": 0});
    let record = |id: &str| RunRecord::new(id, "wf", "v1", Some("start".into()));
    r.create_tenant_run("t1", &record("tr1"), wf, &state)
        .expect("create");
    assert_eq!(r.run_tenant("tr1").expect("tenant").as_deref(), Some("t1"));
    assert_eq!(store.record("tr1").expect("record").workflow_id, "wf");
    assert_eq!(store.load("tr1").expect("load").snapshot, state);
    // The run id is taken: no second tag either.
    store
        .create_run(&record("tr2"), &json!({"id": "wf"}), &state)
        .expect("untagged run");
    assert!(matches!(
        r.create_tenant_run("t2", &record("tr2"), wf, &state),
        Err(StoreError::AlreadyExists { .. })
    ));
    assert_eq!(
        r.run_tenant("tr2").expect("tenant"),
        None,
        "the tag rolled back"
    );
    // The tag is taken: no run either.
    r.tag_run("tr3", "t2", "wf").expect("tag");
    assert!(matches!(
        r.create_tenant_run("t1", &record("tr3"), wf, &state),
        Err(StoreError::AlreadyExists { .. })
    ));
    assert!(matches!(
        store.record("tr3"),
        Err(StoreError::NotFound { .. })
    ));
    assert_eq!(r.run_tenant("tr3").expect("tenant").as_deref(), Some("t2"));
}
