//! SSE delivery: one execution of a long stub workflow, followed by N subscribers of its event
//! stream over HTTP (`GET /api/v1/executions/{id}/events`), against the same run with no
//! subscriber (the baseline: events appended to the run log per second). Prints one line per
//! case: `cargo bench -p hensu-server --bench sse`. Figures: docs/server.md, *Measured*.

use std::sync::Arc;
use std::time::{Duration, Instant};

use hensu_diagnostics::FileId;
use serde_json::{Value, json};

const NODES: usize = 200;
const SUBSCRIBERS: [usize; 4] = [0, 1, 10, 50];

fn workflow() -> Value {
    let mut s = String::from(
        "fun long() = workflow(\"Long\") {\n    agents {\n        agent(\"a\") { role = \"W\"; model = \"stub\" }\n    }\n    graph {\n        start at \"n0\"\n",
    );
    for i in 0..NODES {
        let next = if i + 1 == NODES {
            "done".to_string()
        } else {
            format!("n{}", i + 1)
        };
        s.push_str(&format!(
            "        node(\"n{i}\") {{\n            agent = \"a\"\n            prompt = \"step {i}\"\n            onSuccess goto \"{next}\"\n        }}\n"
        ));
    }
    s.push_str("        end(\"done\")\n    }\n}\n");
    let lowered = hensu_sema::lower_source(&s, FileId(0), &hensu_sema::files::NoFiles);
    let wf = lowered.workflow.expect("the bench workflow lowers");
    serde_json::from_str(&hensu_ir::to_json(&wf)).expect("wire json")
}

/// Counts the events of one execution's stream until it closes.
async fn follow(http: reqwest::Client, url: String) -> usize {
    let mut resp = http.get(url).send().await.expect("events");
    let mut text = String::new();
    while let Ok(Some(chunk)) = resp.chunk().await {
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    text.matches("\ndata:").count() + usize::from(text.starts_with("data:"))
}

async fn case(base: &str, http: &reqwest::Client, subscribers: usize) -> (Duration, usize) {
    let started: Value = http
        .post(format!("{base}/api/v1/executions"))
        .json(&json!({"workflowId": "long"}))
        .send()
        .await
        .expect("start")
        .json()
        .await
        .expect("json");
    let id = started["executionId"].as_str().expect("id").to_string();
    let t = Instant::now();
    let url = format!("{base}/api/v1/executions/{id}/events");
    let followers: Vec<_> = (0..subscribers)
        .map(|_| tokio::spawn(follow(http.clone(), url.clone())))
        .collect();
    let mut delivered = 0;
    for f in followers {
        delivered += f.await.expect("follower");
    }
    // The run itself (and, without subscribers, only it).
    loop {
        let st: Value = http
            .get(format!("{base}/api/v1/executions/{id}"))
            .send()
            .await
            .expect("status")
            .json()
            .await
            .expect("json");
        if st["status"] != "running" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    (t.elapsed(), delivered)
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("state.db");
        let store: Arc<dyn hensu_store::StateStore> = Arc::new(
            hensu_store::SqliteStore::open_file(&db, hensu_store::StoreOptions::default())
                .expect("store"),
        );
        let registry = store.registry().await.expect("registry");
        let state = hensu_server::state_with(
            store,
            registry,
            hensu_server::Auth::Dev,
            hensu_server::ProjectConfig::from_project_dir(dir.path()).expect("project"),
            true,
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        tokio::spawn(hensu_server::serve(listener, state, std::future::pending()));
        let http = reqwest::Client::new();
        let pushed = http
            .post(format!("{base}/api/v1/workflows"))
            .json(&workflow())
            .send()
            .await
            .expect("push");
        assert!(pushed.status().is_success(), "push: {}", pushed.status());
        // One run to warm up (connections, SQLite pages).
        case(&base, &http, 1).await;
        println!("sse: one execution of {NODES} stub nodes, SQLite, debug={}", cfg!(debug_assertions));
        for n in SUBSCRIBERS {
            let (elapsed, delivered) = case(&base, &http, n).await;
            let secs = elapsed.as_secs_f64();
            if n == 0 {
                println!(
                    "  baseline (no subscriber): {NODES} steps appended in {:.1} ms = {:.0} events/s",
                    secs * 1e3,
                    (NODES + 2) as f64 / secs
                );
            } else {
                println!(
                    "  {n:>3} subscribers: {delivered} events delivered in {:.1} ms = {:.0} events/s",
                    secs * 1e3,
                    delivered as f64 / secs
                );
            }
        }
    });
}
