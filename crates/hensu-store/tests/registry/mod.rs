//! The workflow registry's conformance suite (definitions per tenant, soft delete, run
//! tenants), run on every backend by `sqlite.rs` and `postgres.rs`.

use hensu_store::{StoreError, WorkflowRegistry, WorkflowSummary};
use serde_json::json;

pub fn definitions_per_tenant_with_soft_delete(r: &dyn WorkflowRegistry) {
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

pub fn runs_belong_to_one_tenant(r: &dyn WorkflowRegistry) {
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
