//! The tenant stream over the tenant event log (docs/server.md, *Events*): it opens without
//! reading history, a reconnect with `Last-Event-ID` replays every missed event exactly once,
//! an id that is not held is a `stream.reset` event, and a client that never reads holds back
//! no other stream.

use std::collections::HashSet;

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{A, B, get, post, push_ok, start};
use crate::harness::{Server, Sse, fixture, parse_sse, token};

/// Opens the tenant stream of `tenant` (with `last` as `Last-Event-ID`).
pub(super) async fn open(s: &Server, tenant: &str, last: Option<&str>) -> reqwest::Response {
    let mut req = s
        .http
        .get(s.url("/api/v1/executions/events"))
        .bearer_auth(token(tenant));
    if let Some(l) = last {
        req = req.header("Last-Event-ID", l);
    }
    let resp = req.send().await.expect("send");
    assert_eq!(resp.status(), StatusCode::OK);
    resp
}

/// Reads `resp` until `done` holds for the messages read so far; returns them.
pub(super) async fn read_until(
    resp: &mut reqwest::Response,
    done: impl Fn(&[Sse]) -> bool,
) -> Vec<Sse> {
    let mut text = String::new();
    loop {
        // Whole messages only: a chunk may end inside one.
        let complete = text.rfind("\n\n").map_or("", |end| &text[..end + 2]);
        let evs = parse_sse(complete);
        if done(&evs) {
            return evs;
        }
        let chunk = resp.chunk().await.expect("chunk").expect("stream open");
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
}

fn completed(evs: &[Sse], runs: &[String]) -> bool {
    runs.iter().all(|r| {
        evs.iter()
            .any(|e| e.kind() == "execution.completed" && e.data["executionId"] == r.as_str())
    })
}

fn seq(e: &Sse) -> u64 {
    e.id.as_deref()
        .and_then(|i| i.parse().ok())
        .expect("a numeric id")
}

async fn wait_ended(s: &Server, tenant: &str, id: &str) {
    loop {
        let (_, body) = get(s, tenant, &format!("/api/v1/executions/{id}")).await;
        if body["status"] == "completed" {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// Thousands of executions already ended: the stream starts with the next one's events.
pub async fn tenant_stream_opens_at_once_over_history(s: Server) {
    push_ok(&s, A, "linear").await;
    let reg = s.registry().clone();
    let wf = serde_json::to_vec(&fixture("linear")).expect("json");
    for i in 0..2_000 {
        let rec = hensu_store::RunRecord::new(format!("old-{i}"), "linear", "1.0.0", None);
        reg.create_tenant_run(A, &rec, &wf, &json!({}))
            .await
            .expect("history");
    }
    let mut resp = open(&s, A, None).await;
    let id = start(&s, A, "linear").await;
    let evs = read_until(&mut resp, |e| completed(e, std::slice::from_ref(&id))).await;
    assert_eq!(evs[0].kind(), "execution.started", "{evs:?}");
    assert!(
        evs.iter().all(|e| e.data["executionId"] == id.as_str()),
        "no history: {evs:?}"
    );
}

/// Disconnected while executions run, a client that reconnects with its last id — to another
/// server on the same store — gets every event it missed, once, in order: exactly the
/// tenant's events the store holds after it.
pub async fn tenant_stream_reconnect_replays_exactly_once(s: Server) {
    push_ok(&s, A, "linear").await;
    push_ok(&s, B, "linear").await;
    let mut resp = open(&s, A, None).await;
    let first = start(&s, A, "linear").await;
    let before = read_until(&mut resp, |e| completed(e, std::slice::from_ref(&first))).await;
    drop(resp);
    let last = before.last().map(seq).expect("an event");
    let mut missed = Vec::new();
    for _ in 0..5 {
        missed.push(start(&s, A, "linear").await);
        start(&s, B, "linear").await;
    }
    for id in &missed {
        wait_ended(&s, A, id).await;
    }
    let other = s.sibling().await;
    let mut resp = open(&other, A, Some(&last.to_string())).await;
    let after = read_until(&mut resp, |e| completed(e, &missed)).await;
    let shown: Vec<u64> = before.iter().chain(&after).map(seq).collect();
    assert!(
        shown.windows(2).all(|w| w[0] < w[1]),
        "in order, none twice: {shown:?}"
    );
    assert!(
        after
            .iter()
            .all(|e| e.data["executionId"] != first.as_str())
    );
    // Exactly what the store holds for A after `last`, up to the last one shown.
    let upto = after.last().map(seq).expect("events");
    let held: Vec<u64> = s
        .registry()
        .events_after(Some(A), last, 10_000)
        .await
        .expect("events")
        .iter()
        .map(|e| e.seq)
        .filter(|&q| q <= upto)
        .collect();
    assert_eq!(after.iter().map(seq).collect::<Vec<_>>(), held, "no gap");
    let runs: HashSet<&str> = after
        .iter()
        .filter_map(|e| e.data["executionId"].as_str())
        .collect();
    assert_eq!(
        runs,
        missed.iter().map(String::as_str).collect(),
        "A's only"
    );
}

/// An id the log does not hold (from the future, or of the stream's old `<run>:<step>`
/// form) is said, with a `stream.reset` event, and the stream goes on from now.
pub async fn tenant_stream_resets_on_an_id_not_held(s: Server) {
    push_ok(&s, A, "linear").await;
    for last in ["999999999", "some-run:3"] {
        let mut resp = open(&s, A, Some(last)).await;
        let evs = read_until(&mut resp, |e| !e.is_empty()).await;
        assert_eq!(evs[0].kind(), "stream.reset", "{last}: {evs:?}");
        let id = start(&s, A, "linear").await;
        let evs = read_until(&mut resp, |e| completed(e, std::slice::from_ref(&id))).await;
        assert!(
            seq(&evs[1]) >= seq(&evs[0]),
            "continues after the reset's id"
        );
    }
    let resp = s
        .http
        .get(s.url("/api/v1/executions/events"))
        .bearer_auth(token(A))
        .header("Last-Event-ID", "not an id")
        .send()
        .await
        .expect("send");
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
}

/// A long chain of stub nodes (many events per execution).
fn chain(nodes: usize) -> Value {
    let mut wf = fixture("linear");
    wf["id"] = json!("chain");
    let mut map = serde_json::Map::new();
    for i in 0..nodes {
        let next = if i + 1 == nodes {
            "done".to_string()
        } else {
            format!("n{}", i + 1)
        };
        map.insert(
            format!("n{i}"),
            json!({"id": format!("n{i}"), "nodeType": "STANDARD", "agentId": "writer",
                   "prompt": "Step.", "transitionRules": [{"type": "success", "targetNode": next}]}),
        );
    }
    map.insert("done".into(), wf["nodes"]["done"].clone());
    wf["nodes"] = Value::Object(map);
    wf["startNode"] = json!("n0");
    wf
}

/// One client opens the tenant stream and never reads (a small receive buffer, so the server
/// soon cannot send to it); another gets every event of the executions meanwhile.
pub async fn a_stalled_tenant_stream_holds_back_no_other(s: Server) {
    use tokio::io::AsyncWriteExt as _;
    let (st, body) = post(&s, A, "/api/v1/workflows", chain(300)).await;
    assert_eq!(st, StatusCode::CREATED, "{body}");
    let addr: std::net::SocketAddr = s.base.trim_start_matches("http://").parse().expect("addr");
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(4096).expect("rcvbuf");
    let mut stalled = socket.connect(addr).await.expect("connect");
    let request = format!(
        "GET /api/v1/executions/events HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\n\r\n",
        token(A)
    );
    stalled.write_all(request.as_bytes()).await.expect("write");
    let mut resp = open(&s, A, None).await;
    let runs = vec![
        start(&s, A, "chain").await,
        start(&s, A, "chain").await,
        start(&s, A, "chain").await,
    ];
    let evs = read_until(&mut resp, |e| completed(e, &runs)).await;
    for id in &runs {
        let n = evs
            .iter()
            .filter(|e| e.data["executionId"] == id.as_str())
            .count();
        // started, one step per node, completed.
        assert_eq!(n, 302, "{id}");
    }
    drop(stalled);
}
