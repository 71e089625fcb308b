//! Memory (docs/performance.md, *Language server, round 3*, *Third step*): a replaced analysis
//! is freed by the next analysis job, on the thread that builds the next one; and the server's
//! idle trim (`hensu_lsp::run_with_trim`): once no analysis has run or waited for `IDLE_TRIM`
//! after one, the trim function (`hensuc lsp`: mimalloc's `mi_collect`) is called on the
//! analysis thread, once per idle period.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hensu_lsp::MemoryHost;
use lsp_server::{Connection, Message, Notification, Request, RequestId};
use serde_json::json;

static TRIMS: AtomicUsize = AtomicUsize::new(0);

fn count_trim() {
    TRIMS.fetch_add(1, Ordering::SeqCst);
}

fn notify(c: &Connection, method: &str, params: serde_json::Value) {
    let n = Notification::new(method.to_string(), params);
    c.sender.send(Message::Notification(n)).unwrap();
}

/// Waits (at most a minute) for the diagnostics of `version`.
fn wait_diagnostics(c: &Connection, version: i32) {
    loop {
        if let Message::Notification(n) = c.receiver.recv_timeout(Duration::from_secs(60)).unwrap()
            && n.method == "textDocument/publishDiagnostics"
            && n.params["version"] == json!(version)
        {
            return;
        }
    }
}

#[test]
fn the_server_trims_once_idle_after_an_analysis() {
    let (server, client) = Connection::memory();
    let thread = std::thread::spawn(move || {
        hensu_lsp::run_with_trim(&server, MemoryHost::new(), Some(count_trim)).unwrap()
    });
    let init = Request::new(
        RequestId::from(1),
        "initialize".to_string(),
        json!({"processId": null, "capabilities": {}}),
    );
    client.sender.send(Message::Request(init)).unwrap();
    notify(&client, "initialized", json!({}));
    let uri = "file:///p/workflows/main.hwf";
    notify(
        &client,
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "hwf", "version": 1, "text": super::DOC}}),
    );
    wait_diagnostics(&client, 1);
    // The trim comes once the server has been idle for `IDLE_TRIM`: wait for it (generously;
    // this checks that it comes, not how soon).
    let deadline = Instant::now() + Duration::from_secs(60);
    while TRIMS.load(Ordering::SeqCst) == 0 {
        assert!(
            Instant::now() < deadline,
            "no trim within a minute of idling"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // One per idle period: no further analysis, no further trim.
    std::thread::sleep(hensu_lsp::IDLE_TRIM * 2);
    assert_eq!(TRIMS.load(Ordering::SeqCst), 1);
    // An edit starts a new period.
    notify(
        &client,
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2},
               "contentChanges": [{"text": format!("{}\n", super::DOC)}]}),
    );
    wait_diagnostics(&client, 2);
    let deadline = Instant::now() + Duration::from_secs(60);
    while TRIMS.load(Ordering::SeqCst) == 1 {
        assert!(
            Instant::now() < deadline,
            "no second trim within a minute of idling"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let shutdown = Request::new(RequestId::from(2), "shutdown".to_string(), json!(null));
    client.sender.send(Message::Request(shutdown)).unwrap();
    notify(&client, "exit", json!(null));
    assert_eq!(thread.join().unwrap(), hensu_lsp::SessionEnd::AfterShutdown);
}

/// A replaced analysis of a large document is freed by the next analysis job (on the thread
/// that runs it), not before: until then the engine holds it; `analyze_now` frees it at once.
#[test]
fn a_replaced_analysis_is_freed_by_the_next_job() {
    use std::str::FromStr;
    let src = hensu_workload::generate(200 * 560, 7);
    assert!(
        src.len() > 64 * 1024,
        "large enough to be freed off the request path"
    );
    let uri = lsp_types::Uri::from_str("file:///p/workflows/big.hwf").unwrap();
    let mut engine = hensu_lsp::Engine::new(MemoryHost::new());
    engine.open(uri.clone(), 1, src.clone());
    let edit = |engine: &mut hensu_lsp::Engine, version: i32| {
        let change = lsp_types::TextDocumentContentChangeEvent {
            range: Some(lsp_types::Range::new(
                lsp_types::Position::new(0, 0),
                lsp_types::Position::new(0, 0),
            )),
            range_length: None,
            text: if version % 2 == 0 { " " } else { "\n" }.to_string(),
        };
        engine.edit(&uri, version, vec![change]);
    };
    let first = std::sync::Arc::downgrade(&engine.analysis(&uri).unwrap());
    edit(&mut engine, 2);
    let job = engine.job(&uri).unwrap();
    assert!(engine.install(job.run()));
    assert!(first.upgrade().is_some(), "held until the next job runs");
    let second = std::sync::Arc::downgrade(&engine.analysis(&uri).unwrap());
    edit(&mut engine, 3);
    let job = engine.job(&uri).unwrap();
    assert!(
        engine.take_retired().is_empty(),
        "the job took the retired analysis"
    );
    let done = job.run();
    assert!(first.upgrade().is_none(), "freed by the job");
    assert!(engine.install(done));
    assert!(second.upgrade().is_some());
    edit(&mut engine, 4);
    engine.analyze_now(&uri);
    assert!(second.upgrade().is_none(), "analyze_now frees it at once");
    assert!(engine.take_retired().is_empty());
}
