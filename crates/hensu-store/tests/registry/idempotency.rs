//! Idempotent starts (`WorkflowRegistry::create_keyed_tenant_run`; docs/server.md,
//! *Idempotent starts*): one run per (tenant, key), a reused key refused, nothing half-written.

use hensu_store::{IdempotencyKey, KeyedStart, RunRecord, StoreError};
use serde_json::json;

use crate::conformance::{Blocking, BlockingRegistry, SyncStore};

pub fn a_key_starts_one_run_per_tenant(store: &Blocking, r: &BlockingRegistry) {
    let wf = br#"{"id": "wf"}"#;
    let state = json!({"n": 0});
    let record = |id: &str| RunRecord::new(id, "wf", "v1", Some("start".into()));
    let key = |k: &str, h: &str| IdempotencyKey {
        key: k.into(),
        request_hash: h.into(),
    };
    assert_eq!(
        r.create_keyed_tenant_run("k1", &record("ik1"), wf, &state, &key("order-1", "h1"))
            .expect("create"),
        KeyedStart::Created
    );
    assert_eq!(r.run_tenant("ik1").expect("tenant").as_deref(), Some("k1"));
    // The same request again: the first run, no second one.
    assert_eq!(
        r.create_keyed_tenant_run("k1", &record("ik2"), wf, &state, &key("order-1", "h1"))
            .expect("retry"),
        KeyedStart::Existing {
            run_id: "ik1".into()
        }
    );
    assert!(matches!(
        store.record("ik2"),
        Err(StoreError::NotFound { .. })
    ));
    assert_eq!(r.run_tenant("ik2").expect("tenant"), None);
    // Another request under the key: refused, nothing written.
    match r.create_keyed_tenant_run("k1", &record("ik3"), wf, &state, &key("order-1", "h2")) {
        Err(StoreError::IdempotencyKeyReused { key, run_id }) => {
            assert_eq!((key.as_str(), run_id.as_str()), ("order-1", "ik1"));
        }
        other => panic!("expected IdempotencyKeyReused, got {other:?}"),
    }
    assert!(matches!(
        store.record("ik3"),
        Err(StoreError::NotFound { .. })
    ));
    // Keys are per tenant.
    assert_eq!(
        r.create_keyed_tenant_run("k2", &record("ik4"), wf, &state, &key("order-1", "h2"))
            .expect("other tenant"),
        KeyedStart::Created
    );
    // A failed creation (the run id is taken) records no key: the key stays free.
    assert!(matches!(
        r.create_keyed_tenant_run("k1", &record("ik1"), wf, &state, &key("order-2", "h1")),
        Err(StoreError::AlreadyExists { .. })
    ));
    assert_eq!(
        r.create_keyed_tenant_run("k1", &record("ik5"), wf, &state, &key("order-2", "h1"))
            .expect("free key"),
        KeyedStart::Created
    );
}
