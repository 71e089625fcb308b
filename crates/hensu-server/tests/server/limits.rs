//! Connections and limits (docs/server.md, *Connections and limits*) over real sockets on
//! 127.0.0.1, each with short configured timeouts and small caps so it stays fast: idle and
//! slow clients are cut, the connection caps hold, a foreign `Host` is refused in dev mode,
//! event streams per tenant are capped, a start's context is bounded before it is built, and
//! stub scenarios are per tenant.

use std::time::Duration;

use hensu_server::Limits;
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::harness::{Options, Server, fixture, send, token};

fn addr(s: &Server) -> String {
    s.base.trim_start_matches("http://").to_string()
}

/// Whether the server closed `sock` (EOF or reset) within `limit`, reading whatever it sent.
async fn closed_within(sock: &mut TcpStream, limit: Duration) -> Option<Vec<u8>> {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let read = async {
        loop {
            match sock.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    };
    tokio::time::timeout(limit, read).await.ok().map(|()| got)
}

async fn health(s: &Server) -> StatusCode {
    s.http
        .get(s.url("/health"))
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .map(|r| r.status())
        .unwrap_or(StatusCode::SERVICE_UNAVAILABLE)
}

fn limits() -> Limits {
    Limits {
        header_read_timeout: Duration::from_millis(800),
        ..Limits::default()
    }
}

/// Repro 02 (connection exhaustion): idle sockets that send nothing are closed after the
/// header-read timeout, and a new client is served meanwhile and after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_are_closed_and_new_clients_served() {
    let s = Server::with(Options {
        limits: Limits {
            max_connections_per_ip: 0,
            ..limits()
        },
        ..Options::default()
    })
    .await;
    let mut idle = Vec::new();
    for _ in 0..300 {
        idle.push(TcpStream::connect(addr(&s)).await.expect("connect"));
    }
    assert_eq!(
        health(&s).await,
        StatusCode::OK,
        "served beside 300 idle sockets"
    );
    let mut closed = 0;
    for sock in &mut idle {
        if closed_within(sock, Duration::from_secs(5)).await.is_some() {
            closed += 1;
        }
    }
    assert_eq!(closed, 300, "every idle socket is closed by the server");
    assert_eq!(health(&s).await, StatusCode::OK);
}

/// Over the global cap, or over the cap of one address, a new connection is closed at once;
/// a closed connection gives its place back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_caps_hold() {
    let s = Server::with(Options {
        limits: Limits {
            header_read_timeout: Duration::from_secs(30),
            max_connections: Some(20),
            max_connections_per_ip: 0,
            ..Limits::default()
        },
        ..Options::default()
    })
    .await;
    let mut held = Vec::new();
    for _ in 0..20 {
        held.push(TcpStream::connect(addr(&s)).await.expect("connect"));
    }
    // Accepted in order: give the server a moment to take all 20.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut over = TcpStream::connect(addr(&s)).await.expect("connect");
    assert!(
        closed_within(&mut over, Duration::from_secs(5))
            .await
            .is_some(),
        "the 21st connection is closed at once"
    );
    held.truncate(10);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(health(&s).await, StatusCode::OK, "places came back");

    let per_ip = Server::with(Options {
        limits: Limits {
            header_read_timeout: Duration::from_secs(30),
            max_connections_per_ip: 5,
            ..Limits::default()
        },
        ..Options::default()
    })
    .await;
    let mut five = Vec::new();
    for _ in 0..5 {
        five.push(TcpStream::connect(addr(&per_ip)).await.expect("connect"));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut sixth = TcpStream::connect(addr(&per_ip)).await.expect("connect");
    assert!(
        closed_within(&mut sixth, Duration::from_secs(5))
            .await
            .is_some()
    );
    drop(five);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(health(&per_ip).await, StatusCode::OK);
}

/// A client dripping its header is cut by the header-read timeout; one dripping its body by
/// the request timeout (408, JSON); one whose body stalls by the body-read timeout (408).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_clients_are_cut() {
    let s = Server::with(Options {
        limits: Limits {
            body_read_timeout: Duration::from_millis(600),
            request_timeout: Duration::from_secs(2),
            ..limits()
        },
        ..Options::default()
    })
    .await;
    let mut header = TcpStream::connect(addr(&s)).await.expect("connect");
    header
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nX-a: ")
        .await
        .expect("write");
    let drip = async {
        for _ in 0..20 {
            tokio::time::sleep(Duration::from_millis(200)).await;
            if header.write_all(b"a").await.is_err() {
                return true;
            }
        }
        false
    };
    assert!(
        tokio::time::timeout(Duration::from_secs(5), drip)
            .await
            .unwrap_or(false)
            || closed_within(&mut header, Duration::from_secs(1))
                .await
                .is_some(),
        "a dripped header is cut"
    );

    let head = format!(
        "POST /api/v1/executions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{",
        token("tenant-a")
    );
    let mut body = TcpStream::connect(addr(&s)).await.expect("connect");
    body.write_all(head.as_bytes()).await.expect("write");
    let mut answer = Vec::new();
    for _ in 0..40 {
        tokio::time::sleep(Duration::from_millis(150)).await;
        if body.write_all(b" ").await.is_err() {
            break;
        }
        let mut buf = [0u8; 2048];
        if let Ok(Ok(n)) = tokio::time::timeout(Duration::from_millis(1), body.read(&mut buf)).await
        {
            answer.extend_from_slice(&buf[..n]);
            break;
        }
    }
    if answer.is_empty() {
        answer = closed_within(&mut body, Duration::from_secs(3))
            .await
            .unwrap_or_default();
    }
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 408"), "dripped body: {text}");
    assert!(text.contains(r#""code":"request_timeout""#), "{text}");
    let drip_on = async {
        loop {
            tokio::time::sleep(Duration::from_millis(150)).await;
            if body.write_all(b" ").await.is_err() {
                return;
            }
        }
    };
    assert!(
        tokio::time::timeout(Duration::from_secs(5), drip_on)
            .await
            .is_ok(),
        "the connection is closed after the 408, not drained"
    );

    let mut stalled = TcpStream::connect(addr(&s)).await.expect("connect");
    stalled.write_all(head.as_bytes()).await.expect("write");
    let got = closed_within(&mut stalled, Duration::from_secs(5))
        .await
        .expect("answered");
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 408"), "stalled body: {text}");
}

/// Repro 05 (DNS rebinding): in dev mode a request for a name that is not loopback is
/// refused before it does anything (421, JSON); loopback names are served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dev_mode_answers_loopback_hosts_only() {
    let s = Server::with(Options {
        dev: true,
        ..Options::default()
    })
    .await;
    let port = addr(&s).rsplit(':').next().expect("port").to_string();
    let push = |host: String| {
        s.http
            .post(s.url("/api/v1/workflows"))
            .header("Host", host)
            .json(&fixture("linear"))
            .send()
    };
    let r = push(format!("attacker.example:{port}"))
        .await
        .expect("push");
    assert_eq!(r.status(), StatusCode::MISDIRECTED_REQUEST);
    let body: Value = r.json().await.expect("json");
    assert_eq!(body["code"], "host_not_allowed", "{body}");
    let listed = s
        .http
        .get(s.url("/api/v1/workflows"))
        .send()
        .await
        .expect("list");
    assert_eq!(
        listed.json::<Value>().await.expect("json"),
        json!([]),
        "nothing pushed"
    );
    for host in [format!("localhost:{port}"), format!("127.0.0.1:{port}")] {
        let r = push(host.clone()).await.expect("push");
        assert!(r.status().is_success(), "{host}: {}", r.status());
    }
    // With a key, any Host is answered unless a list is configured.
    let keyed = Server::with(Options::default()).await;
    let r = keyed
        .http
        .get(keyed.url("/health"))
        .header("Host", "hensu.example.com")
        .send()
        .await
        .expect("health");
    assert_eq!(r.status(), StatusCode::OK);
    let listed = Server::with(Options {
        limits: Limits {
            allowed_hosts: Some(vec!["hensu.example.com".into()]),
            ..Limits::default()
        },
        ..Options::default()
    })
    .await;
    for (host, code) in [("hensu.example.com", 200), ("other.example.com", 421)] {
        let r = listed
            .http
            .get(listed.url("/health"))
            .header("Host", host)
            .send()
            .await
            .expect("health");
        assert_eq!(r.status().as_u16(), code, "{host}");
    }
}

/// A tenant's open event streams are capped (429 with a code); another tenant is not
/// affected, and a closed stream gives its place back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn event_streams_per_tenant_are_capped() {
    let s = Server::with(Options {
        limits: Limits {
            max_streams_per_tenant: 2,
            ..Limits::default()
        },
        ..Options::default()
    })
    .await;
    let open = |tenant: &'static str| {
        s.http
            .get(s.url("/api/v1/executions/events"))
            .bearer_auth(token(tenant))
            .send()
    };
    let first = open("tenant-a").await.expect("1");
    let _second = open("tenant-a").await.expect("2");
    assert_eq!(first.status(), StatusCode::OK);
    let third = open("tenant-a").await.expect("3");
    assert_eq!(third.status(), StatusCode::TOO_MANY_REQUESTS);
    let body: Value = third.json().await.expect("json");
    assert_eq!(body["code"], "too_many_streams", "{body}");
    assert_eq!(open("tenant-b").await.expect("b").status(), StatusCode::OK);
    drop(first);
    let mut back = StatusCode::TOO_MANY_REQUESTS;
    for _ in 0..50 {
        back = open("tenant-a").await.expect("again").status();
        if back == StatusCode::OK {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(back, StatusCode::OK, "a closed stream's place comes back");
}

/// Repro 07 (memory amplification) and 09a: a start's context is bounded in entries, depth
/// and bytes before it is built, with a JSON error and a code; a body over the limit sent
/// with `Content-Length` gets the JSON 413 too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_start_context_is_bounded() {
    let s = Server::with(Options::default()).await;
    let (st, _) = send(
        &s,
        reqwest::Method::POST,
        "tenant-a",
        "/api/v1/workflows",
        Some(fixture("linear")),
    )
    .await;
    assert_eq!(st, StatusCode::CREATED);
    let start = |body: String| {
        s.http
            .post(s.url("/api/v1/executions"))
            .bearer_auth(token("tenant-a"))
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    let keys: Vec<String> = (0..20_000).map(|i| format!("\"k{i}\":1")).collect();
    let wide = format!(
        r#"{{"workflowId":"linear","context":{{"topic":"t",{}}}}}"#,
        keys.join(",")
    );
    let mut deep = String::from(r#"{"workflowId":"linear","context":{"topic":"t","x":"#);
    deep.push_str(&"[".repeat(40));
    deep.push_str(&"]".repeat(40));
    deep.push_str("}}");
    let big = format!(
        r#"{{"workflowId":"linear","context":{{"topic":"{}"}}}}"#,
        "x".repeat(1_100_000)
    );
    for (body, status, code) in [
        (wide, 413, "context_too_large"),
        (deep, 400, "context_too_deep"),
        (big, 413, "context_too_large"),
    ] {
        let r = start(body).await.expect("start");
        assert_eq!(r.status().as_u16(), status);
        let v: Value = r.json().await.expect("a JSON error body");
        assert_eq!(v["code"], code, "{v}");
        assert_eq!(v["status"], status);
    }
    // Over the body limit by `Content-Length`: answered before the body is read (repro 09a),
    // so it is sent by hand (a client writing the body would see its pipe closed).
    let mut raw = TcpStream::connect(addr(&s)).await.expect("connect");
    let head = format!(
        "POST /api/v1/workflows HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: 5000000\r\n\r\n",
        token("tenant-a")
    );
    raw.write_all(head.as_bytes()).await.expect("write");
    let got = closed_within(&mut raw, Duration::from_secs(5))
        .await
        .expect("answered");
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(text.contains(r#""code":"body_too_large""#), "{text}");
    let ok = start(r#"{"workflowId":"linear","context":{"topic":"t","list":[1,{"a":2}]}}"#.into())
        .await
        .expect("start");
    assert_eq!(ok.status(), StatusCode::ACCEPTED);
    let plain = s
        .http
        .post(s.url("/api/v1/executions"))
        .bearer_auth(token("tenant-a"))
        .body("{}")
        .send()
        .await
        .expect("start");
    assert_eq!(plain.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
}

/// Repro 06: pushes are checked on the blocking pool, a few at a time: concurrent big
/// pushes all succeed and `/health` is answered while they run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_big_pushes_leave_health_answered() {
    let s = Server::with(Options {
        limits: Limits {
            max_concurrent_pushes: Some(1),
            ..Limits::default()
        },
        ..Options::default()
    })
    .await;
    let seed = fixture("linear");
    let mut pushes = Vec::new();
    for p in 0..4 {
        let mut wf = seed.clone();
        let template = wf["nodes"]["draft"].clone();
        let mut nodes = serde_json::Map::new();
        for i in 0..2_000 {
            let mut n = template.clone();
            n["id"] = json!(format!("n{i}"));
            let next = if i + 1 < 2_000 {
                format!("n{}", i + 1)
            } else {
                "done".into()
            };
            n["transitionRules"] = json!([{"type": "success", "targetNode": next}]);
            nodes.insert(format!("n{i}"), n);
        }
        nodes.insert("done".into(), wf["nodes"]["done"].clone());
        wf["nodes"] = Value::Object(nodes);
        wf["startNode"] = json!("n0");
        wf["id"] = json!(format!("big{p}"));
        let http = s.http.clone();
        let url = s.url("/api/v1/workflows");
        pushes.push(tokio::spawn(async move {
            http.post(url)
                .bearer_auth(token("tenant-a"))
                .json(&wf)
                .send()
                .await
                .map(|r| r.status())
        }));
    }
    assert_eq!(health(&s).await, StatusCode::OK);
    for p in pushes {
        assert_eq!(p.await.expect("join").expect("push"), StatusCode::CREATED);
    }
}

/// Repro 08: stub scenarios are per tenant; another tenant's scenario is unknown to a run,
/// and the error names no scenario or directory of anyone else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stub_scenarios_are_per_tenant() {
    let s = Server::with(Options {
        per_tenant_stubs: Some("tenant-stubs"),
        ..Options::default()
    })
    .await;
    let mine = s.dir().join("tenant-stubs/tenant-a/acme-private");
    std::fs::create_dir_all(&mine).expect("dir");
    std::fs::write(mine.join("draft.txt"), "ACME-ONLY canned answer").expect("stub");
    for t in ["tenant-a", "tenant-b"] {
        let (st, _) = send(
            &s,
            reqwest::Method::POST,
            t,
            "/api/v1/workflows",
            Some(fixture("linear")),
        )
        .await;
        assert_eq!(st, StatusCode::CREATED);
    }
    let s = &s;
    let run = |tenant: &'static str| async move {
        let (st, body) = send(
            s,
            reqwest::Method::POST,
            tenant,
            "/api/v1/executions",
            Some(json!({"workflowId": "linear", "context": {"topic": "t", "stub_scenario": "acme-private"}})),
        )
        .await;
        assert_eq!(st, StatusCode::ACCEPTED, "{body}");
        let id = body["executionId"].as_str().expect("id").to_string();
        let events = s
            .http
            .get(s.url(&format!("/api/v1/executions/{id}/events")))
            .bearer_auth(token(tenant))
            .send()
            .await
            .expect("events")
            .text()
            .await
            .expect("text");
        let (_, result) = send(
            s,
            reqwest::Method::GET,
            tenant,
            &format!("/api/v1/executions/{id}/result"),
            None,
        )
        .await;
        (events, result)
    };
    let (_, own) = run("tenant-a").await;
    assert!(
        own.to_string().contains("ACME-ONLY"),
        "the owner reads its scenario: {own}"
    );
    let (events, other) = run("tenant-b").await;
    assert!(!other.to_string().contains("ACME-ONLY"), "{other}");
    assert!(!events.contains("ACME-ONLY"), "{events}");
    assert!(
        !events.contains("tenant-stubs"),
        "no directory named: {events}"
    );
    let dir = s.dir().display().to_string();
    assert!(!events.contains(&dir), "{events}");
}
