//! A stored run's trace (`hensuc runs trace`, docs/observability.md): its record, workflow,
//! tenant, latest state and whole log read from the store, handed to hensu-telemetry's
//! rebuild.

use hensu_store::StateStore;
use hensu_telemetry::{RunInfo, RunLog, Trace};

use crate::launch::StoredWorkflow;

/// Rows read per call while the log is read whole.
const PAGE: usize = 1_000;

/// The trace of run `run_id`, rebuilt from what `store` holds.
pub async fn stored_trace(store: &dyn StateStore, run_id: &str) -> Result<Trace, String> {
    let stored = store.load(run_id).await.map_err(|e| e.to_string())?;
    let decoded = StoredWorkflow::decode(run_id, &stored.workflow)?;
    let workflow = decoded.workflow;
    let parent = decoded
        .options
        .traceparent
        .as_deref()
        .and_then(hensu_telemetry::ids::parse_traceparent);
    // A run without a registry (or a local one) has no tenant.
    let tenant = match store.registry().await {
        Ok(r) => r.run_tenant(run_id).await.ok().flatten(),
        Err(_) => None,
    };
    let mut entries = Vec::new();
    let mut after = 0;
    loop {
        let page = store
            .read_log(run_id, after, PAGE)
            .await
            .map_err(|e| e.to_string())?;
        let full = page.len() == PAGE;
        match page.last() {
            Some(last) => after = last.meta.step,
            None => break,
        }
        entries.extend(page);
        if !full {
            break;
        }
    }
    let state = crate::restore(run_id, &stored.snapshot).ok();
    let record = &stored.record;
    Ok(hensu_telemetry::rebuild(&RunLog {
        run: RunInfo {
            run_id: record.run_id.clone(),
            workflow_id: record.workflow_id.clone(),
            workflow_version: record.workflow_version.clone(),
            tenant,
            parent,
        },
        record,
        workflow: &workflow,
        entries: &entries,
        state: state.as_ref(),
    }))
}
