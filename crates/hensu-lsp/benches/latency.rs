//! Latency of the language server engine on a generated 2,000-node workflow (~1.2 MB,
//! `hensu_workload::generate`): the diagnostics after a one-character edit (apply the change,
//! re-analyse, publish), completion of node ids after `goto "` at the end of the file, hover and
//! semantic tokens. Target: under 50 ms each.
#![allow(clippy::unwrap_used)]

use std::str::FromStr;
use std::sync::OnceLock;

use hensu_lsp::{Engine, MemoryHost};
use lsp_types::*;

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
        assert!(matches!(&r, Some(CompletionResponse::Array(items)) if items.len() > NODES));
        r
    });
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
