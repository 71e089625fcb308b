//! Latency of the language server on a generated 2,000-node workflow (~1.2 MB,
//! `hensu_workload::generate`). The engine alone: the diagnostics after a one-character edit
//! (apply the change, re-analyse, publish), completion of node ids after `goto "` at the end of
//! the file, hover and semantic tokens. Through the server (`server_*`, an in-memory connection,
//! the real main loop with its debounce and analysis thread): diagnostics after one edit and
//! after a 50-edit burst, hover and completion answered while an analysis is pending, and one
//! edit of a 20,000-node document; node-id completion in the 20,000-node document, up to date
//! and right after an edit. Targets: diagnostics ≤ 15 ms after one edit, ≤ 30 ms after a
//! burst, hover/completion ≤ 5 ms while pending, diagnostics ≤ 60 ms and completion ≤ 20 ms at
//! 20,000 nodes (docs/performance.md, *Language server, round 3*). The allocator is hensuc's
//! (mimalloc), as in the server users run.
#![allow(clippy::unwrap_used)]

use std::str::FromStr;
use std::sync::OnceLock;

use hensu_lsp::{Engine, MemoryHost};
use lsp_types::*;

/// The allocator of the server as shipped (`hensuc lsp`): mimalloc.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const NODES: usize = 2_000;

fn source() -> &'static str {
    static SRC: OnceLock<String> = OnceLock::new();
    SRC.get_or_init(|| hensu_workload::generate(NODES * 560, 7))
}

fn uri() -> Uri {
    Uri::from_str("file:///bench/workflows/synthetic.hwf").unwrap()
}

/// An engine with the document open, and the position of the last `goto "` target's content.
fn setup() -> (Engine, Position) {
    let src = source();
    let mut engine = Engine::new(MemoryHost::new());
    engine.open(uri(), 1, src.to_string());
    let at = src.rfind("goto \"").unwrap() + "goto \"".len();
    let line = src[..at].matches('\n').count() as u32;
    let col = (at - src[..at].rfind('\n').map_or(0, |i| i + 1)) as u32;
    (engine, Position::new(line, col))
}

fn main() {
    let src = source();
    let nodes = src.matches("node(\"").count() + src.matches("parallel(\"").count();
    println!("workload: {} bytes, {nodes} nodes", src.len());
    divan::main();
}

/// Type one character (then delete it, alternately) inside a node id and publish diagnostics.
#[divan::bench(sample_count = 20)]
fn diagnostics_after_one_char_edit(bencher: divan::Bencher) {
    let (mut engine, pos) = setup();
    let u = uri();
    let mut version = 1;
    bencher.bench_local(|| {
        version += 1;
        let change = if version % 2 == 0 {
            TextDocumentContentChangeEvent {
                range: Some(Range::new(pos, pos)),
                range_length: None,
                text: "x".to_string(),
            }
        } else {
            let next = Position::new(pos.line, pos.character + 1);
            TextDocumentContentChangeEvent {
                range: Some(Range::new(pos, next)),
                range_length: None,
                text: String::new(),
            }
        };
        engine.change(&u, version, vec![change]);
        let published = engine.publish_diagnostics(&u);
        assert_eq!(published.len(), 1);
        published
    });
}

/// Node-id completion inside `goto "…"` near the end of the file (the analysis is cached; the
/// tokens are lexed on first use, as after every edit).
#[divan::bench(sample_count = 20)]
fn completion_of_node_ids(bencher: divan::Bencher) {
    let (engine, pos) = setup();
    let params = CompletionParams {
        text_document_position: TextDocumentPositionParams {
            text_document: TextDocumentIdentifier { uri: uri() },
            position: pos,
        },
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
        context: None,
    };
    bencher.bench_local(|| {
        let r = engine.completion(params.clone());
        assert!(completes(&r));
        r
    });
}

/// A node-id completion answer: every id (an array), or a bounded list the client asks again
/// for as the user types.
fn completes(r: &Option<CompletionResponse>) -> bool {
    match r {
        Some(CompletionResponse::Array(items)) => items.len() > NODES,
        Some(CompletionResponse::List(list)) => list.is_incomplete && !list.items.is_empty(),
        None => false,
    }
}

fn source_20k() -> &'static str {
    static SRC: OnceLock<String> = OnceLock::new();
    SRC.get_or_init(|| hensu_workload::generate(20 * NODES * 560, 7))
}

fn completion_params(pos: Position) -> CompletionParams {
    CompletionParams {
        text_document_position: TextDocumentPositionParams {
            text_document: TextDocumentIdentifier { uri: uri() },
            position: pos,
        },
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
        context: None,
    }
}

/// The 20,000-node document: node-id completion inside `goto "…"` at the end of the file, the
/// analysis and tokens cached.
#[divan::bench(sample_count = 10)]
fn completion_of_node_ids_20k_nodes(bencher: divan::Bencher) {
    let src = source_20k();
    let mut engine = Engine::new(MemoryHost::new());
    engine.open(uri(), 1, src.to_string());
    let pos = goto_position(src);
    let params = completion_params(pos);
    assert!(completes(&engine.completion(params.clone())));
    bencher.bench_local(|| engine.completion(params.clone()));
}

/// The 20,000-node document: a one-character edit in the middle of the file (its analysis
/// pending), then node-id completion at the end (the edit and the completion are timed: the
/// tokens are brought up to date by one or the other).
#[divan::bench(sample_count = 10)]
fn completion_after_edit_20k_nodes(bencher: divan::Bencher) {
    let src = source_20k();
    let mut engine = Engine::new(MemoryHost::new());
    let u = uri();
    engine.open(u.clone(), 1, src.to_string());
    let params = completion_params(goto_position(src));
    assert!(completes(&engine.completion(params.clone())));
    let mut version = 1;
    let mid = src.matches('\n').count() as u32 / 2;
    bencher.bench_local(|| {
        version += 1;
        let change = TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(mid, 0), Position::new(mid, 0))),
            range_length: None,
            text: if version % 2 == 0 { " " } else { "" }.to_string(),
        };
        let change = if version % 2 == 0 {
            change
        } else {
            TextDocumentContentChangeEvent {
                range: Some(Range::new(Position::new(mid, 0), Position::new(mid, 1))),
                ..change
            }
        };
        engine.edit(&u, version, vec![change]);
        engine.completion(params.clone())
    });
}

/// The position after the last `goto "` of `src`.
fn goto_position(src: &str) -> Position {
    let at = src.rfind("goto \"").unwrap() + "goto \"".len();
    let line = src[..at].matches('\n').count() as u32;
    let col = (at - src[..at].rfind('\n').map_or(0, |i| i + 1)) as u32;
    Position::new(line, col)
}

/// The first completion after an edit: includes lexing the new text.
#[divan::bench(sample_count = 20)]
fn completion_after_edit(bencher: divan::Bencher) {
    let (engine, pos) = setup();
    let engine = std::cell::RefCell::new(engine);
    let u = uri();
    let params = CompletionParams {
        text_document_position: TextDocumentPositionParams {
            text_document: TextDocumentIdentifier { uri: u.clone() },
            position: pos,
        },
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
        context: None,
    };
    bencher
        .with_inputs(|| {
            // A fresh analysis (no cached tokens), as right after a change.
            engine.borrow_mut().open(u.clone(), 1, source().to_string());
        })
        .bench_local_values(|()| engine.borrow().completion(params.clone()));
}

/// The engine alone: completion right after an edit, before its analysis (the previous analysis
/// moved through the edit, the new text lexed).
#[divan::bench(sample_count = 20)]
fn completion_while_analysis_pending(bencher: divan::Bencher) {
    let (engine, pos) = setup();
    let engine = std::cell::RefCell::new(engine);
    let u = uri();
    let params = CompletionParams {
        text_document_position: TextDocumentPositionParams {
            text_document: TextDocumentIdentifier { uri: u.clone() },
            position: pos,
        },
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
        context: None,
    };
    let mut version = 1;
    bencher
        .with_inputs(|| {
            version += 1;
            let change = TextDocumentContentChangeEvent {
                range: Some(Range::new(Position::new(0, 0), Position::new(0, 0))),
                range_length: None,
                text: if version % 2 == 0 { " " } else { "" }.to_string(),
            };
            engine.borrow_mut().edit(&u, version, vec![change]);
        })
        .bench_local_values(|()| engine.borrow().completion(params.clone()));
}

#[divan::bench(sample_count = 20)]
fn hover_node(bencher: divan::Bencher) {
    let (engine, pos) = setup();
    let params = HoverParams {
        text_document_position_params: TextDocumentPositionParams {
            text_document: TextDocumentIdentifier { uri: uri() },
            position: pos,
        },
        work_done_progress_params: Default::default(),
    };
    bencher.bench_local(|| engine.hover(params.clone()));
}

#[divan::bench(sample_count = 10)]
fn semantic_tokens_full(bencher: divan::Bencher) {
    let (engine, _) = setup();
    let params = SemanticTokensParams {
        text_document: TextDocumentIdentifier { uri: uri() },
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    };
    bencher.bench_local(|| engine.semantic_tokens_full(params.clone()));
}

// ---- the server: main loop, debounce, worker thread ------------------------------------------

mod server {
    use std::str::FromStr;
    use std::time::Duration;

    use hensu_lsp::MemoryHost;
    use lsp_server::{Connection, Message, Notification, Request, RequestId};
    use lsp_types::*;
    use serde_json::json;

    /// A running server on an in-memory connection with the document open and analysed.
    pub struct Session {
        client: Connection,
        thread: Option<std::thread::JoinHandle<()>>,
        pub uri: Uri,
        pub version: i32,
        next_id: i32,
        pub pos: Position,
    }

    /// `hensuc lsp`'s idle trim (crates/hensuc/src/commands/lsp.rs).
    #[allow(unsafe_code)]
    fn trim() {
        // SAFETY: `mi_collect` takes no pointer and may be called at any time.
        unsafe { libmimalloc_sys::mi_collect(true) }
    }

    impl Session {
        pub fn start(src: &str) -> Session {
            let (server, client) = Connection::memory();
            let thread = std::thread::spawn(move || {
                // As `hensuc lsp` runs it: with mimalloc's idle trim.
                let _ = hensu_lsp::run_with_trim(&server, MemoryHost::new(), Some(trim));
            });
            let uri = Uri::from_str("file:///bench/workflows/synthetic.hwf").unwrap();
            let at = src.rfind("goto \"").unwrap() + "goto \"".len();
            let line = src[..at].matches('\n').count() as u32;
            let col = (at - src[..at].rfind('\n').map_or(0, |i| i + 1)) as u32;
            let mut s = Session {
                client,
                thread: Some(thread),
                uri,
                version: 1,
                next_id: 100,
                pos: Position::new(line, col),
            };
            s.request("initialize", json!({"processId": null, "capabilities": {}}));
            s.notify("initialized", json!({}));
            s.notify(
                "textDocument/didOpen",
                json!({"textDocument": {"uri": s.uri, "languageId": "hwf", "version": 1, "text": src}}),
            );
            s.wait_diagnostics(1);
            s
        }

        fn notify(&self, method: &str, params: serde_json::Value) {
            let n = Notification::new(method.to_string(), params);
            self.client.sender.send(Message::Notification(n)).unwrap();
        }

        pub fn send_request(&mut self, method: &str, params: serde_json::Value) -> RequestId {
            self.next_id += 1;
            let id = RequestId::from(self.next_id);
            let r = Request::new(id.clone(), method.to_string(), params);
            self.client.sender.send(Message::Request(r)).unwrap();
            id
        }

        pub fn request(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
            let id = self.send_request(method, params);
            self.wait_response(&id)
        }

        pub fn wait_response(&self, id: &RequestId) -> serde_json::Value {
            loop {
                match self
                    .client
                    .receiver
                    .recv_timeout(Duration::from_secs(60))
                    .unwrap()
                {
                    Message::Response(r) if r.id == *id => {
                        return r.result.unwrap_or(serde_json::Value::Null);
                    }
                    _ => {}
                }
            }
        }

        /// Waits for the diagnostics of `version` unless it is the opened version (already
        /// received).
        pub fn wait_diagnostics_if_pending(&self, version: i32) {
            if version > 1 {
                self.wait_diagnostics(version);
            }
        }

        /// Waits for the diagnostics of `version`.
        pub fn wait_diagnostics(&self, version: i32) {
            loop {
                if let Message::Notification(n) = self
                    .client
                    .receiver
                    .recv_timeout(Duration::from_secs(60))
                    .unwrap()
                    && n.method == "textDocument/publishDiagnostics"
                    && n.params["version"] == json!(version)
                {
                    return;
                }
            }
        }

        /// Types one character (or deletes it, alternately) inside the last goto target.
        pub fn edit(&mut self) {
            self.version += 1;
            let pos = self.pos;
            let (range, text) = if self.version % 2 == 0 {
                (Range::new(pos, pos), "x")
            } else {
                (
                    Range::new(pos, Position::new(pos.line, pos.character + 1)),
                    "",
                )
            };
            self.notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": self.uri, "version": self.version},
                       "contentChanges": [{"range": range, "text": text}]}),
            );
        }
    }

    impl Drop for Session {
        fn drop(&mut self) {
            let _ = self.request("shutdown", serde_json::Value::Null);
            self.notify("exit", serde_json::Value::Null);
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }
}

/// Through the server: one edit, until its diagnostics are published (includes the debounce
/// and the hop to the analysis thread).
#[divan::bench(sample_count = 20)]
fn server_diagnostics_after_one_edit(bencher: divan::Bencher) {
    let mut s = server::Session::start(source());
    bencher.bench_local(|| {
        s.edit();
        s.wait_diagnostics(s.version);
    });
}

/// Through the server: 50 back-to-back edits, until the diagnostics of the last are published.
#[divan::bench(sample_count = 10)]
fn server_diagnostics_after_50_edit_burst(bencher: divan::Bencher) {
    let mut s = server::Session::start(source());
    bencher.bench_local(|| {
        for _ in 0..50 {
            s.edit();
        }
        s.wait_diagnostics(s.version);
    });
}

fn position_params(s: &server::Session) -> serde_json::Value {
    serde_json::json!({"textDocument": {"uri": s.uri}, "position": s.pos})
}

/// Through the server: a hover sent right after an edit, answered while the analysis of that
/// edit is pending (the measured time ends with the hover's answer).
#[divan::bench(sample_count = 20)]
fn server_hover_while_analysis_pending(bencher: divan::Bencher) {
    let s = std::cell::RefCell::new(server::Session::start(source()));
    bencher
        .with_inputs(|| {
            let mut s = s.borrow_mut();
            let v = s.version;
            s.wait_diagnostics_if_pending(v);
            s.edit();
        })
        .bench_local_values(|()| {
            let mut s = s.borrow_mut();
            let params = position_params(&s);
            s.request("textDocument/hover", params)
        });
}

/// Through the server: a completion sent right after an edit, while its analysis is pending.
#[divan::bench(sample_count = 20)]
fn server_completion_while_analysis_pending(bencher: divan::Bencher) {
    let s = std::cell::RefCell::new(server::Session::start(source()));
    bencher
        .with_inputs(|| {
            let mut s = s.borrow_mut();
            let v = s.version;
            s.wait_diagnostics_if_pending(v);
            s.edit();
        })
        .bench_local_values(|()| {
            let mut s = s.borrow_mut();
            let params = position_params(&s);
            s.request("textDocument/completion", params)
        });
}

/// The 20,000-node document (~12 MB): one edit through the server until its diagnostics.
#[divan::bench(sample_count = 5)]
fn server_diagnostics_after_one_edit_20k_nodes(bencher: divan::Bencher) {
    let src = hensu_workload::generate(20 * NODES * 560, 7);
    let mut s = server::Session::start(&src);
    bencher.bench_local(|| {
        s.edit();
        s.wait_diagnostics(s.version);
    });
}
