//! Token streaming through `hensuc serve` (docs/server.md, *Token events*): a mock
//! OpenAI-compatible and a mock Anthropic streaming server on 127.0.0.1 write two nodes'
//! text in pieces; the per-execution and the tenant SSE streams carry them as
//! `execution.token` events whose concatenation is the recorded output, a reconnect in the
//! middle of a node (`Last-Event-ID: <row>.<token>`) loses nothing, and the provider key the
//! model leaks, split across two pieces, never appears (docs/security.md, *Streaming
//! redaction*).

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::routing::post;
use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc};

use super::hensuc;
use super::serve::spawn_serve;

const WORKFLOW: &str = r#"fun streamed() = workflow("Streamed") {
    agents {
        agent("gpt") { role = "Writer"; model = "mock-gpt" }
        agent("claude") { role = "Editor"; model = "mock-claude" }
    }
    graph {
        start at "draft"
        node("draft") {
            agent = "gpt"
            prompt = "Write about {topic}."
            onSuccess goto "polish"
        }
        node("polish") {
            agent = "claude"
            prompt = "Polish: {draft}"
            onSuccess goto "done"
        }
        end("done")
    }
}
"#;

/// The OpenAI key the server's process has; the mock model leaks it, in two pieces.
const KEY: &str = "sk-mock-secret-0123456789";

/// The mock's pieces: the OpenAI answer's first part (sent at once), its rest (sent when the
/// test opens the gate), the Anthropic answer.
const DRAFT_HEAD: [&str; 3] = ["The draft ", "begins; the key is sk-mock-", "secret"];
const DRAFT_TAIL: [&str; 3] = ["-0123456789 ", "and then it ", "ends."];
const POLISH: [&str; 3] = ["Polished ", "text, ", "done."];

#[derive(Clone)]
struct Mock {
    gate: Arc<Notify>,
}

fn sse(data: &Value) -> Result<Bytes, Infallible> {
    Ok(Bytes::from(format!("data: {data}\n\n")))
}

async fn openai(State(m): State<Mock>) -> axum::response::Response {
    let (tx, rx) = mpsc::channel(16);
    tokio::spawn(async move {
        let piece = |t: &str| json!({"choices": [{"index": 0, "delta": {"content": t}, "finish_reason": null}]});
        for p in DRAFT_HEAD {
            let _ = tx.send(sse(&piece(p))).await;
        }
        m.gate.notified().await;
        for p in DRAFT_TAIL {
            let _ = tx.send(sse(&piece(p))).await;
        }
        let _ = tx
            .send(sse(
                &json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                              "usage": {"prompt_tokens": 7, "completion_tokens": 9}}),
            ))
            .await;
        let _ = tx.send(Ok(Bytes::from("data: [DONE]\n\n"))).await;
    });
    stream_response(rx)
}

async fn anthropic() -> axum::response::Response {
    let (tx, rx) = mpsc::channel(16);
    tokio::spawn(async move {
        let mut events = vec![
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 4, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ];
        for p in POLISH {
            events.push(json!({"type": "content_block_delta", "index": 0,
                               "delta": {"type": "text_delta", "text": p}}));
        }
        events.push(
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                           "usage": {"output_tokens": 3}}),
        );
        events.push(json!({"type": "message_stop"}));
        for e in events {
            let _ = tx.send(sse(&e)).await;
        }
    });
    stream_response(rx)
}

fn stream_response(rx: mpsc::Receiver<Result<Bytes, Infallible>>) -> axum::response::Response {
    axum::response::Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(
            tokio_stream::wrappers::ReceiverStream::new(rx),
        ))
        .expect("response")
}

/// One SSE message: its id and its data.
#[derive(Debug, Clone)]
struct Msg {
    id: String,
    data: Value,
}

impl Msg {
    fn kind(&self) -> &str {
        self.data["type"].as_str().unwrap_or("")
    }
}

/// An open SSE stream, read message by message.
struct Reader {
    resp: reqwest::Response,
    buf: String,
    seen: Vec<Msg>,
}

impl Reader {
    async fn open(url: &str, last_event_id: Option<&str>) -> Reader {
        let mut req = reqwest::Client::new().get(url);
        if let Some(id) = last_event_id {
            req = req.header("Last-Event-ID", id);
        }
        let resp = req.send().await.expect("stream");
        assert!(resp.status().is_success(), "{}", resp.status());
        Reader {
            resp,
            buf: String::new(),
            seen: Vec::new(),
        }
    }

    /// Reads until `done` holds for the messages so far (or the stream ends).
    async fn until(&mut self, done: impl Fn(&[Msg]) -> bool) -> &[Msg] {
        while !done(&self.seen) {
            while let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let mut msg = Msg {
                    id: String::new(),
                    data: Value::Null,
                };
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        msg.id = v.trim().to_string();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        msg.data = serde_json::from_str(v.trim()).expect("data is JSON");
                    }
                }
                if !msg.data.is_null() {
                    self.seen.push(msg);
                }
                if done(&self.seen) {
                    return &self.seen;
                }
            }
            match self.resp.chunk().await.expect("chunk") {
                Some(c) => self.buf.push_str(&String::from_utf8_lossy(&c)),
                None => break,
            }
        }
        &self.seen
    }
}

fn tokens_of(msgs: &[Msg], run: &str, node: &str) -> String {
    msgs.iter()
        .filter(|m| {
            m.kind() == "execution.token"
                && m.data["executionId"] == run
                && m.data["nodeId"] == node
        })
        .map(|m| m.data["text"].as_str().expect("text"))
        .collect()
}

fn output_of(msgs: &[Msg], node: &str) -> String {
    let step = msgs
        .iter()
        .find(|m| m.kind() == "execution.step" && m.data["executedNodeId"] == node)
        .unwrap_or_else(|| panic!("no step of {node}: {msgs:?}"));
    match &step.data["nodeOutput"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The context the run ended with (the last node's output is in it: no step follows it).
fn final_context(msgs: &[Msg], key: &str) -> String {
    let end = msgs
        .iter()
        .find(|m| m.kind() == "execution.completed")
        .expect("completed");
    end.data["output"][key]
        .as_str()
        .expect("a text")
        .to_string()
}

fn completed(msgs: &[Msg]) -> bool {
    msgs.iter().any(|m| m.kind() == "execution.completed")
}

#[test]
fn sse_subscribers_get_the_tokens_resume_mid_node_and_never_see_a_split_secret() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let gate = Arc::new(Notify::new());
    let mock = rt.block_on(async {
        let app = axum::Router::new()
            .route("/v1/chat/completions", post(openai))
            .route("/v1/messages", post(anthropic))
            .with_state(Mock { gate: gate.clone() });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        tokio::spawn(async move { axum::serve(listener, app).await });
        base
    });
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("workflows")).expect("mkdir");
    std::fs::write(dir.path().join("workflows/streamed.hwf"), WORKFLOW).expect("write");
    std::fs::write(
        dir.path().join("hensu.toml"),
        format!(
            "[providers.oai]\nkind = \"openai\"\nbase_url = \"{mock}/v1\"\nmodels = [\"mock-gpt*\"]\n\
             api_key_env = \"MOCK_OAI_API_KEY\"\n\n\
             [providers.ant]\nkind = \"anthropic\"\nbase_url = \"{mock}/v1\"\nmodels = [\"mock-claude*\"]\n\
             api_key_env = \"MOCK_ANT_API_KEY\"\n"
        ),
    )
    .expect("hensu.toml");
    let server = spawn_serve(
        hensuc()
            .args(["serve", "--listen", "127.0.0.1:0", "-d"])
            .arg(dir.path())
            .env("MOCK_OAI_API_KEY", KEY)
            .env("MOCK_ANT_API_KEY", "sk-ant-mock-key-9876543210"),
    );
    let url = server.url.clone();
    let push = hensuc()
        .args(["push"])
        .arg(dir.path())
        .args(["--server", &url])
        .output()
        .expect("push");
    assert!(push.status.success(), "{}", super::stderr(&push));

    rt.block_on(async move {
        let mut tenant = Reader::open(&format!("{url}/api/v1/executions/events"), None).await;
        let started: Value = reqwest::Client::new()
            .post(format!("{url}/api/v1/executions"))
            .json(&json!({"workflowId": "streamed", "context": {"topic": "rust"}}))
            .send()
            .await
            .expect("start")
            .json()
            .await
            .expect("json");
        let run = started["executionId"].as_str().expect("id").to_string();
        let events = format!("{url}/api/v1/executions/{run}/events");

        // The first subscriber sees the head of the draft, up to where the key may start.
        let mut first = Reader::open(&events, None).await;
        let seen = first
            .until(|m| tokens_of(m, &run, "draft").ends_with("the key is "))
            .await
            .to_vec();
        let head = tokens_of(&seen, &run, "draft");
        assert_eq!(head, "The draft begins; the key is ", "{seen:?}");
        let last = seen.last().expect("a token");
        assert_eq!(last.kind(), "execution.token");
        let (row, index) = last
            .id
            .split_once('.')
            .expect("a token id is <row>.<token>");
        let rows: Vec<u64> = seen
            .iter()
            .filter(|m| m.kind() != "execution.token")
            .map(|m| m.id.parse().expect("a row id"))
            .collect();
        // The token orders after the last log event shown.
        let row: u64 = row.parse().expect("a row id");
        assert!(rows.last().is_some_and(|r| row >= *r), "{seen:?}");
        index.parse::<u64>().expect("token number");
        drop(first);

        // Reconnected mid-node: the rest of the draft (nothing twice), the polish, the end.
        let mut again = Reader::open(&events, Some(&last.id)).await;
        gate.notify_one();
        let rest = again.until(completed).await.to_vec();
        let draft = format!("{head}{}", tokens_of(&rest, &run, "draft"));
        let recorded = output_of(&rest, "draft");
        assert_eq!(draft, recorded);
        assert_eq!(
            recorded,
            "The draft begins; the key is <redacted:MOCK_OAI_API_KEY> and then it ends."
        );
        assert_eq!(
            tokens_of(&rest, &run, "polish"),
            final_context(&rest, "polish")
        );
        assert_eq!(final_context(&rest, "polish"), POLISH.concat());

        // The tenant stream carried the same tokens.
        let all = tenant.until(completed).await.to_vec();
        assert_eq!(tokens_of(&all, &run, "draft"), recorded);
        assert_eq!(tokens_of(&all, &run, "polish"), POLISH.concat());

        // A late subscriber reads the outputs from the log: no token is kept after its node.
        let mut late = Reader::open(&events, None).await;
        let log = late.until(completed).await.to_vec();
        assert!(log.iter().all(|m| m.kind() != "execution.token"), "{log:?}");
        assert_eq!(output_of(&log, "draft"), recorded);

        for m in seen.iter().chain(&rest).chain(&all).chain(&log) {
            assert!(!m.data.to_string().contains("sk-mock-secret"), "{m:?}");
        }
    });
    drop(server);
}
