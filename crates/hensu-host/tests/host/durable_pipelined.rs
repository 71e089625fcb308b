//! Pipelined durable runs (`[store] commit = "pipelined"`): the run goes on while its steps
//! commit, yet a tool call is never made before the steps that lead to it are committed — a
//! real HTTP server on 127.0.0.1 reads the store (its own connection) when the webhook reaches
//! it — and the stored run ends as one committing each step does.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use hensu_ir::*;
use hensu_runtime::testing::{end, success};
use hensu_runtime::*;
use hensu_store::{CommitMode, LogKind, OwnerId, RunStatus, StateStore, StoreOptions};
use indexmap::IndexMap;
use serde_json::{Value, json};

use super::durable_runs::Echo;

const NODES: usize = 40;

/// `n0 → … → n39 → notify` (a webhook to `url`) `→ done`.
fn chain_then_webhook(url: &str) -> Workflow {
    let mut nodes: IndexMap<String, Node> = IndexMap::new();
    for i in 0..NODES {
        let next = match i + 1 {
            NODES => "notify".to_string(),
            n => format!("n{n}"),
        };
        let id = format!("n{i}");
        nodes.insert(
            id.clone(),
            Node::Standard(StandardNode {
                id,
                agent_id: Some("a".into()),
                prompt: Some(format!("step {i}")),
                transition_rules: vec![success(&next)],
                ..StandardNode::default()
            }),
        );
    }
    let payload = json!({"url": url, "text": "after n39"});
    nodes.insert(
        "notify".into(),
        Node::Action(ActionNode {
            id: "notify".into(),
            actions: vec![Action::Send {
                handler_id: "webhook".into(),
                payload: payload.as_object().unwrap().clone().into_iter().collect(),
                raw_payload: false,
            }],
            transition_rules: vec![success("done")],
            writes: Vec::new(),
        }),
    );
    nodes.insert("done".into(), end("done", ExitStatus::Success));
    let mut agents = IndexMap::new();
    agents.insert("a".into(), AgentConfig::new("a", "Worker", "test-model"));
    Workflow {
        id: "pipelined".into(),
        version: "1.0.0".into(),
        metadata: Metadata {
            name: "pipelined".into(),
            ..Metadata::default()
        },
        agents,
        nodes,
        start_node: "n0".into(),
        config: None,
        saga: Default::default(),
        timing: Default::default(),
        state_schema: None,
    }
}

/// What the webhook's server found in the store when the request reached it: the nodes of
/// the stored state's history and the kind of the log's last row.
#[derive(Clone, Debug, Default)]
struct Seen {
    path: Vec<String>,
    last_kind: Option<LogKind>,
}

/// A real HTTP server on 127.0.0.1 (a plain thread): on each request it reads run `run_id`
/// from `store` (its own handle), then answers 204.
fn probe(store: Arc<dyn StateStore>, run_id: &str) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let (out, run_id) = (seen.clone(), run_id.to_string());
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            let mut reader = BufReader::new(conn.try_clone().unwrap());
            let mut len = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0u8; len];
            let _ = reader.read_exact(&mut body);
            let stored = crate::wait(store.load(&run_id)).unwrap();
            let history = crate::wait(store.history(&run_id)).unwrap();
            let path = stored.snapshot["history"]
                .as_array()
                .map(|h| {
                    h.iter()
                        .filter_map(|e| e["node_id"].as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            out.lock().unwrap().push(Seen {
                path,
                last_kind: history.last().map(|m| m.kind),
            });
            let _ = conn.write_all(
                b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    (url, seen)
}

/// Runs `wf` on echo agents with the built-in action handlers, checkpointed and journaled by
/// `durable`.
async fn run_journaled(
    wf: &Workflow,
    durable: &Arc<hensu_host::DurableRun>,
    id: &str,
) -> RunResult {
    let engine = Engine::builder()
        .provider(Arc::new(Echo::default()))
        .action_handlers(hensu_host::action_handlers(None))
        .build();
    let cancel = CancelToken::new();
    let journal = durable.journal();
    let ctx = RunCtx::new(&cancel)
        .run_id(id)
        .checkpointer(durable.as_ref())
        .journal(Some(&journal));
    engine.run(wf, Context::default(), ctx).await
}

/// Runs the workflow durably in `store` (run `id`); the webhook server reads `reader`.
/// Returns what the server saw and the stored run's final context and log kinds.
async fn run_once(
    store: Arc<dyn StateStore>,
    reader: Arc<dyn StateStore>,
    id: &str,
) -> (Vec<Seen>, Value, Vec<LogKind>) {
    let (url, seen) = probe(reader, id);
    let wf = chain_then_webhook(&url);
    let durable =
        super::new_durable_run(&store, id, &wf, Context::default(), &OwnerId::current()).await;
    let result = run_journaled(&wf, &durable, id).await;
    assert!(result.outcome.is_success(), "{:?}", result.outcome);
    assert_eq!(
        durable.finish(&result).await.unwrap(),
        Some(RunStatus::Completed)
    );
    let stored = store.load(id).await.unwrap();
    assert_eq!(stored.record.status, RunStatus::Completed);
    let kinds = store
        .history(id)
        .await
        .unwrap()
        .iter()
        .map(|m| m.kind)
        .collect();
    let seen = seen.lock().unwrap().clone();
    (seen, stored.snapshot["context"].clone(), kinds)
}

fn nodes_before_the_call() -> Vec<String> {
    (0..NODES).map(|i| format!("n{i}")).collect()
}

/// Both modes on `open(mode)`: the webhook found every step before it committed, and the two
/// runs stored the same context and the same log.
async fn check_both_modes(open: impl Fn(CommitMode) -> (Arc<dyn StateStore>, Arc<dyn StateStore>)) {
    let mut stored = Vec::new();
    for (mode, id) in [
        (CommitMode::EachStep, "each-step"),
        (CommitMode::Pipelined, "pipelined"),
    ] {
        let (store, reader) = open(mode);
        assert_eq!(store.commit_mode(), mode);
        let (seen, context, kinds) = run_once(store, reader, id).await;
        assert_eq!(seen.len(), 1, "{id}: one webhook request");
        assert_eq!(
            seen[0].path,
            nodes_before_the_call(),
            "{id}: steps before the call"
        );
        assert_eq!(
            seen[0].last_kind,
            Some(LogKind::Journal),
            "{id}: the call's journal entry is committed before the call"
        );
        stored.push((context, kinds));
    }
    assert_eq!(
        stored[0], stored[1],
        "each-step and pipelined store the same run"
    );
}

fn temp_store_path(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "hensu-pipelined-{}-{name}-{}",
        std::process::id(),
        hensu_store::now_ms()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("state.db")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_waits_for_the_steps_before_it_sqlite() {
    check_both_modes(|mode| {
        let path = temp_store_path(mode.as_str());
        // Every commit synced to disk: commits slower than the engine's steps, so the
        // pipelined run has steps in flight when it reaches the call.
        let opts = StoreOptions {
            commit: mode,
            durability: hensu_store::Durability::Full,
            ..StoreOptions::default()
        };
        let store = hensu_store::SqliteStore::open_file(&path, opts.clone()).unwrap();
        let reader = hensu_store::SqliteStore::open_file(&path, opts).unwrap();
        (Arc::new(store), Arc::new(reader))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (scripts/pg-test.sh)"]
async fn a_tool_call_waits_for_the_steps_before_it_postgres() {
    let base = std::env::var("HENSU_TEST_DATABASE_URL")
        .expect("HENSU_TEST_DATABASE_URL is not set: run under scripts/pg-test.sh");
    let schema = format!("pipelined_{}_{}", std::process::id(), hensu_store::now_ms());
    let mut handles = Vec::new();
    for mode in [CommitMode::EachStep, CommitMode::Pipelined] {
        let opts = StoreOptions {
            commit: mode,
            ..StoreOptions::default()
        };
        let store: Arc<dyn StateStore> = Arc::new(
            hensu_store::PgStore::open_in_schema(&base, Some(&schema), opts.clone())
                .await
                .unwrap(),
        );
        // The server's own connection, opened on (and driven by) the runtime it reads on.
        let (b, sc) = (base.clone(), schema.clone());
        let reader = std::thread::spawn(move || {
            crate::wait(hensu_store::PgStore::open_in_schema(&b, Some(&sc), opts)).unwrap()
        })
        .join()
        .unwrap();
        let reader: Arc<dyn StateStore> = Arc::new(reader);
        handles.push((mode, store, reader));
    }
    check_both_modes(|mode| {
        let (_, s, r) = handles.iter().find(|(m, _, _)| *m == mode).unwrap();
        (s.clone(), r.clone())
    })
    .await;
}

/// A commit that fails (here: the lease is gone before the first one) stops the pipelined run
/// at its next boundary (with the store's error) or barrier (the webhook's journal entry): the
/// webhook is never called, no status is recorded, and `finish` reports nothing as done.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_commit_stops_the_pipelined_run_with_its_error() {
    let path = temp_store_path("lost");
    let opts = StoreOptions {
        durability: hensu_store::Durability::Full,
        ..StoreOptions::default()
    };
    let store: Arc<dyn StateStore> =
        Arc::new(hensu_store::SqliteStore::open_file(&path, opts.clone()).unwrap());
    let reader: Arc<dyn StateStore> =
        Arc::new(hensu_store::SqliteStore::open_file(&path, opts).unwrap());
    assert_eq!(store.commit_mode(), CommitMode::Pipelined);
    let (url, seen) = probe(reader, "lost");
    let wf = chain_then_webhook(&url);
    let durable =
        super::new_durable_run(&store, "lost", &wf, Context::default(), &OwnerId::current()).await;
    store.release(durable.lease()).await.unwrap();
    let result = run_journaled(&wf, &durable, "lost").await;
    let RunOutcome::Failed(e) = &result.outcome else {
        panic!("the run must fail: {:?}", result.outcome);
    };
    // Stopped at a boundary with the store's error, or at the webhook's barrier (its journal
    // entry could not be committed: the node fails without calling).
    let at_boundary = e.to_string().contains("was lost");
    let at_call = result.state.current_node == "notify";
    assert!(at_boundary || at_call, "{e}");
    assert_eq!(durable.finish(&result).await.unwrap(), None);
    assert!(seen.lock().unwrap().is_empty(), "the webhook was called");
    let record = store.record("lost").await.unwrap();
    assert_eq!(record.status, RunStatus::Running);
    assert_eq!(record.step, 0, "nothing was committed");
}
