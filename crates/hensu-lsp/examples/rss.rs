//! Memory of the engine holding the 20,000-node benchmark workflow (~13.5 MB): opens it, answers
//! a completion, makes ten one-character edits each followed by a completion and a fresh
//! analysis, then prints the process's resident set (`VmRSS`), again after the server's idle
//! trim (mimalloc's `mi_collect`), and its peak (`VmHWM`) from `/proc/self/status`, and the
//! live heap (bytes allocated and not freed) beside it. The
//! allocator is hensuc's (mimalloc, counted), so the figures are the server's.
//! `cargo run --profile bench -p hensu-lsp --example rss [NODES] [--parts]`; with `--parts` it
//! first prints the live heap of each part of one analysis, built alone.
#![allow(clippy::unwrap_used)]
// The live-heap counter is a global allocator, which needs `unsafe impl`.
#![allow(unsafe_code)]
use std::alloc::{GlobalAlloc, Layout};
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};

use hensu_lsp::{Engine, MemoryHost};
use lsp_types::*;

/// mimalloc with a count of the live bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { mimalloc::MiMalloc.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                let grow = new_size - layout.size();
                let live = LIVE.fetch_add(grow, Ordering::Relaxed) + grow;
                PEAK.fetch_max(live, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn status(field: &str) -> String {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .map(|l| l[field.len()..].trim().to_string())
        .unwrap_or_default()
}

fn mb(bytes: usize) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

/// The live heap of `make`'s result, built alone.
fn part<T>(name: &str, make: impl FnOnce() -> T) -> T {
    let before = LIVE.load(Ordering::Relaxed);
    let t = make();
    println!(
        "  {name}: {}",
        mb(LIVE.load(Ordering::Relaxed).saturating_sub(before))
    );
    t
}

/// The live heap of each part of one analysis of `src`, each built alone.
fn parts(src: &str) {
    println!("live heap of the parts of one analysis:");
    let text = part("text", || src.to_string());
    let lexed = part("tokens (lexed)", || hensu_syntax::lex(src));
    let parsed = part("syntax tree (freed after the analysis)", || {
        hensu_syntax::parse(src)
    });
    let index = part("symbol index", || {
        hensu_lsp::Index::build(src, &parsed.file)
    });
    let lowered = part("IR + origins", || {
        hensu_sema::lower(
            &parsed.file,
            hensu_diagnostics::FileId(0),
            &hensu_sema::files::NoFiles,
        )
    });
    let wf = part("IR alone (a copy)", || lowered.workflow.clone());
    let origins = part("origins alone (a copy)", || lowered.origins.clone());
    drop((text, lexed, parsed, index, lowered, wf, origins));
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let nodes: usize = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(20_000);
    let src = hensu_workload::generate(nodes * 560, 7);
    if args.iter().any(|a| a == "--parts") {
        parts(&src);
    }
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
    std::thread::sleep(std::time::Duration::from_millis(300));
    let busy = status("VmRSS:");
    // What `hensuc lsp` does once idle for `hensu_lsp::IDLE_TRIM` after an analysis.
    // SAFETY: `mi_collect` takes no pointer and may be called at any time.
    unsafe { libmimalloc_sys::mi_collect(true) };
    println!(
        "{nodes} nodes, {len} bytes: VmRSS {busy}, after the idle trim {}; VmHWM {}; live heap {} (peak {})",
        status("VmRSS:"),
        status("VmHWM:"),
        mb(LIVE.load(Ordering::Relaxed)),
        mb(PEAK.load(Ordering::Relaxed)),
    );
}
