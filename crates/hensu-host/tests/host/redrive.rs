//! `hensu_host::launch::redrive_run` of a run that failed inside a sub-workflow child
//! (docs/cli.md, *Time travel*): the fork holds the child saved at its failed node, so
//! resuming it runs that node and the rest of the child — not the parent's nodes before the
//! child, not the child's nodes before the failure.

use std::collections::VecDeque;
use std::sync::Arc;

use hensu_host::launch::{StoredOptions, StoredWorkflow, redrive_run};
use hensu_host::{DurableRun, restore};
use hensu_ir::*;
use hensu_runtime::testing::*;
use hensu_runtime::*;
use hensu_store::{MemoryStore, OwnerId, RunRecord, RunStatus, StateStore};
use serde_json::json;

#[tokio::test]
async fn a_redrive_of_a_failure_inside_a_child_resumes_the_child_at_its_failed_node() {
    let mut child = workflow(
        "c0",
        vec![
            node("c0", "first {topic}", &[], vec![success("c1")]),
            node("c1", "then {c0}", &[], vec![success("c2")]),
            node("c2", "last {c1}", &[], vec![success("end")]),
            end("end", ExitStatus::Success),
        ],
    );
    child.id = "child".into();
    let parent = parent_of("child", &[("result", "c2")]);
    let repo: Arc<dyn WorkflowRepository> = Arc::new(MapRepository::from_iter([child]));
    // `c1` fails its first call and answers every later one.
    let script = Script::new();
    script.queues.lock().unwrap().insert(
        "c1".into(),
        VecDeque::from(vec![Err("boom".to_string()), Ok("fixed".to_string())]),
    );
    let engine = Engine::builder()
        .provider(Arc::new(ScriptProvider(script.clone())))
        .workflows(repo)
        .build();
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    let owner = OwnerId::current();
    let input = || ctx(json!({"topic": "T"}));
    // Created as every face creates a run: the workflow stored in its envelope.
    let envelope = StoredWorkflow {
        workflow: parent.clone(),
        source: None,
        options: StoredOptions::default(),
    }
    .encode()
    .unwrap();
    let record = RunRecord::new("r1", parent.id.clone(), "1.0.0", Some("p0".into()));
    let initial = RunState::new("r1".into(), parent.id.clone(), "p0".into(), input());
    let durable =
        DurableRun::create_encoded(store.clone(), &record, &envelope, &initial, &owner, None)
            .await
            .unwrap();
    let cancel = CancelToken::new();
    let run = RunCtx::new(&cancel).checkpointer(&durable);
    let r = engine.run(&parent, input(), run).await;
    assert!(
        matches!(r.outcome, RunOutcome::Failed(_)),
        "{:?}",
        r.outcome
    );
    assert_eq!(durable.finish(&r).await.unwrap(), Some(RunStatus::Failed));
    drop(durable);
    let ran = |from: usize| -> Vec<String> {
        script.prompts()[from..]
            .iter()
            .map(|(n, _)| n.clone())
            .collect()
    };
    assert_eq!(ran(0), ["p0", "c0", "c1"]);

    // The fork continues at the sub-workflow node with the child saved at `c1`.
    let forked = redrive_run(&store, "r1", Context::default(), None, None)
        .await
        .expect("redrive");
    assert_eq!(forked.node, "sub");
    let new_id = forked.record.run_id.clone();
    assert_eq!(forked.record.status, RunStatus::Paused);
    let (durable, stored) = DurableRun::reopen(store.clone(), &new_id, &owner, None)
        .await
        .unwrap();
    let state = restore(&new_id, &stored.snapshot).unwrap();
    assert!(state.failure.is_none());
    match state.nested.as_deref() {
        Some(Nested::Child { node_id, state }) => {
            assert_eq!(node_id, "sub");
            assert_eq!(state.current_node, "c1");
            assert_eq!(state.path(), ["c0"]);
        }
        other => panic!("no saved child: {other:?}"),
    }
    // Resumed as every face resumes a fork: only `c1` and `c2` run.
    let before = script.prompts().len();
    let p = engine.prepare(Arc::new(parent.clone())).unwrap();
    let run = RunCtx::new(&cancel).checkpointer(&durable);
    let r = engine.resume(&p, state, None, run).await;
    assert!(r.outcome.is_success(), "{:?}", r.outcome);
    assert_eq!(
        durable.finish(&r).await.unwrap(),
        Some(RunStatus::Completed)
    );
    assert_eq!(ran(before), ["c1", "c2"]);
    assert_eq!(r.state.path(), ["p0", "sub"]);
    assert!(
        r.state.context.contains_key("result"),
        "{:?}",
        r.state.context
    );
}
