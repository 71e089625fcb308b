//! Memory of the engine holding the 20,000-node benchmark workflow (~12.6 MB): opens it, answers
//! a completion, makes ten one-character edits each followed by a completion and a fresh
//! analysis, then prints the process's resident set (`VmRSS`) and its peak (`VmHWM`) from
//! `/proc/self/status`. `cargo run --profile bench -p hensu-lsp --example rss [NODES]`.
#![allow(clippy::unwrap_used)]
use std::str::FromStr;

use hensu_lsp::{Engine, MemoryHost};
use lsp_types::*;

fn status(field: &str) -> String {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .map(|l| l[field.len()..].trim().to_string())
        .unwrap_or_default()
}

fn main() {
    let nodes: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(20_000);
    let src = hensu_workload::generate(nodes * 560, 7);
    let uri = Uri::from_str("file:///bench/workflows/synthetic.hwf").unwrap();
    let at = src.rfind("goto \"").unwrap() + "goto \"".len();
    let line = src[..at].matches('\n').count() as u32;
    let col = (at - src[..at].rfind('\n').map_or(0, |i| i + 1)) as u32;
    let params = CompletionParams {
        text_document_position: TextDocumentPositionParams {
            text_document: TextDocumentIdentifier { uri: uri.clone() },
            position: Position::new(line, col),
        },
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
        context: None,
    };
    let mut engine = Engine::new(MemoryHost::new());
    engine.open(uri.clone(), 1, src.clone());
    let len = src.len();
    drop(src);
    let _ = engine.completion(params.clone());
    for v in 2..12 {
        let (range, text) = if v % 2 == 0 {
            (
                Range::new(Position::new(line, col), Position::new(line, col)),
                "x",
            )
        } else {
            (
                Range::new(Position::new(line, col), Position::new(line, col + 1)),
                "",
            )
        };
        let change = TextDocumentContentChangeEvent {
            range: Some(range),
            range_length: None,
            text: text.to_string(),
        };
        engine.edit(&uri, v, vec![change]);
        let _ = engine.completion(params.clone());
        engine.analyze_now(&uri);
        let _ = engine.publish_diagnostics(&uri);
    }
    // The previous analyses are freed on a side thread: give it a moment.
    std::thread::sleep(std::time::Duration::from_millis(300));
    println!(
        "{nodes} nodes, {len} bytes: VmRSS {} VmHWM {}",
        status("VmRSS:"),
        status("VmHWM:")
    );
}
