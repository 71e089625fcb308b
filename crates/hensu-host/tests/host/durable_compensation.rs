//! Saga compensation through the durable store (docs/language.md, *Saga compensation*): the
//! progress of the compensations is checkpointed, and a process that dies while one runs is
//! resumed with the ones left; each runs once per compensated visit, the one in flight again.

use std::time::Duration;

use hensu_host::{DurableRun, restore};
use hensu_store::{MemoryStore, OwnerId, RunStatus, StateStore};
use tokio::sync::Notify;

use super::*;

/// a → b → c → declined (FAILURE); each of a, b, c names `undo-<id>`.
fn saga() -> Workflow {
    let mut wf = workflow(
        "a",
        vec![
            node("a", "book a", &[], vec![success("b")]),
            node("b", "book b", &[], vec![success("c")]),
            node("c", "book c", &[], vec![success("declined")]),
            end("declined", ExitStatus::Failure),
        ],
    );
    wf.agents.insert("undoer".into(), agent("undoer"));
    for n in ["a", "b", "c"] {
        let id = format!("undo-{n}");
        wf.saga.compensations.insert(
            id.clone(),
            Compensation {
                id: id.clone(),
                body: CompensationBody::Agent {
                    agent_id: "undoer".into(),
                    prompt: "undo {compensating}: {compensating_output}".into(),
                },
            },
        );
        wf.saga.node_compensations.insert(n.into(), id);
    }
    wf
}

/// Wakes the test when the compensation of visit `step` starts.
struct OnCompensation(u64, Arc<Notify>);

impl ExecutionListener for OnCompensation {
    fn on_event(&self, e: &Event<'_>) {
        if let Event::CompensationStarted { visit_step, .. } = e
            && *visit_step == self.0
        {
            self.1.notify_one();
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_crash_during_compensation_resumes_with_the_remaining_ones() {
    let wf = saga();
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    let durable = new_durable_run(&store, "r1", &wf, Context::default(), &OwnerId::current()).await;
    // Every call takes a second (paused time), so the process can die inside one.
    let script = Script {
        delay: Some(Duration::from_secs(1)),
        ..Script::new()
    };
    let crash = Arc::new(Notify::new());
    let engine = Engine::builder()
        .provider(Arc::new(ScriptProvider(script.clone())))
        .build();
    // The process dies while `undo-b` (the second compensation, of visit 2) runs.
    let dies = OnCompensation(2, crash.clone());
    run_until(
        &engine,
        &wf,
        Context::default(),
        durable.as_ref(),
        &dies,
        &crash,
    )
    .await;
    drop(engine);
    store.release(durable.lease()).await.unwrap();
    drop(durable);

    let (durable, stored) = DurableRun::reopen(store.clone(), "r1", &OwnerId::current(), None)
        .await
        .unwrap();
    let state = restore("r1", &stored.snapshot).unwrap();
    assert_eq!(
        state.compensations.len(),
        1,
        "undo-c was checkpointed as done"
    );
    let left: Vec<&str> = state
        .compensating
        .as_ref()
        .unwrap()
        .pending
        .iter()
        .map(|t| t.compensation_id.as_str())
        .collect();
    assert_eq!(left, vec!["undo-b", "undo-a"], "undo-b was in flight");

    let durable = Arc::new(durable);
    let engine = Engine::builder()
        .provider(Arc::new(ScriptProvider(script.clone())))
        .build();
    let p = engine.prepare(Arc::new(wf.clone())).unwrap();
    let cancel = CancelToken::new();
    let run = RunCtx::new(&cancel).checkpointer(durable.as_ref());
    let r = engine.resume(&p, state, None, run).await;
    assert_eq!(completed(&r), (ExitStatus::Failure, "declined".into()));
    assert_eq!(
        durable.finish(&r).await.unwrap(),
        Some(RunStatus::Completed)
    );

    let done: Vec<(&str, u64)> = r
        .state
        .compensations
        .iter()
        .map(|c| (c.compensation_id.as_str(), c.visit_step))
        .collect();
    assert_eq!(done, vec![("undo-c", 3), ("undo-b", 2), ("undo-a", 1)]);
    let runs = |id: &str| script.prompts_of(id).len();
    assert_eq!(
        (runs("undo-c"), runs("undo-b"), runs("undo-a")),
        (1, 2, 1),
        "each compensation ran once, the one in flight at the crash twice"
    );
    assert_eq!((runs("a"), runs("b"), runs("c")), (1, 1, 1));

    // The store holds the final state, compensations included, and the failure's status.
    let stored = store.load("r1").await.unwrap();
    assert_eq!(stored.record.exit_status.as_deref(), Some("FAILURE"));
    let saved = restore("r1", &stored.snapshot).unwrap();
    assert_eq!(saved.compensations, r.state.compensations);
    assert!(saved.compensating.is_none());
}
