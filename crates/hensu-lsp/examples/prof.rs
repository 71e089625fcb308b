//! Times the phases behind a diagnostics refresh on the benchmark workflow (parse, symbol index,
//! lowering, checks, and copying the IR and its origins), best of 20:
//! `cargo run --profile bench -p hensu-lsp --example prof [NODES] [engine [mid]]` (2,000 nodes
//! by default; with `engine`, only the engine's side of an edit, for a profiler; with `mid`, the
//! edits go into the node in the middle of the file instead of the last one).
#![allow(clippy::unwrap_used)]
use std::time::{Duration, Instant};
/// The allocator of the server as shipped (`hensuc lsp`): mimalloc.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let nodes: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(2_000);
    let rounds = if nodes > 5_000 { 5 } else { 20 };
    let src = hensu_workload::generate(nodes * 560, 7);
    if std::env::args().nth(2).as_deref() == Some("engine") {
        let mid = std::env::args().nth(3).as_deref() == Some("mid");
        engine_phases(&src, 40, mid);
        return;
    }
    let parsed = hensu_syntax::parse(&src);
    let mut best = [Duration::MAX; 6];
    for _ in 0..rounds {
        let t = Instant::now();
        let idx = hensu_lsp::Index::build(&src, &parsed.file);
        best[0] = best[0].min(t.elapsed());
        let t = Instant::now();
        let p2 = hensu_syntax::parse(&src);
        best[1] = best[1].min(t.elapsed());
        let t = Instant::now();
        let lowered = hensu_sema::lower(
            &p2.file,
            hensu_diagnostics::FileId(0),
            &hensu_sema::files::NoFiles,
        );
        best[2] = best[2].min(t.elapsed());
        let t = Instant::now();
        let d = hensu_sema::check::check_workflow(
            lowered.workflow.as_ref().unwrap(),
            &lowered.origins,
            hensu_sema::check::InputKind::Source,
        );
        best[3] = best[3].min(t.elapsed());
        let t = Instant::now();
        let wf = lowered.workflow.clone();
        best[4] = best[4].min(t.elapsed());
        let t = Instant::now();
        let origins = lowered.origins.clone();
        best[5] = best[5].min(t.elapsed());
        drop((idx, d, wf, origins));
    }
    engine_phases(&src, 10, false);
    println!(
        "{nodes} nodes, min: index {:?} parse {:?} lower {:?} check {:?} clone IR {:?} clone origins {:?}",
        best[0], best[1], best[2], best[3], best[4], best[5]
    );
}

/// The engine's side of one edit inside the last node (as the latency bench types it; with
/// `mid`, inside the node in the middle of the file): the analysis job (node by node or full)
/// and publishing, best of `edits` (and the analysis's median).
fn engine_phases(src: &str, edits: i32, mid: bool) {
    use std::str::FromStr;
    let uri = lsp_types::Uri::from_str("file:///bench/workflows/synthetic.hwf").unwrap();
    let mut engine = hensu_lsp::Engine::new(hensu_lsp::MemoryHost::new());
    engine.open(uri.clone(), 1, src.to_string());
    let before = if mid {
        &src[..src.floor_char_boundary(src.len() / 2)]
    } else {
        src
    };
    let at = before.rfind("goto \"").unwrap() + "goto \"".len();
    let line = src[..at].matches('\n').count() as u32;
    let col = (at - src[..at].rfind('\n').map_or(0, |i| i + 1)) as u32;
    let pos = lsp_types::Position::new(line, col);
    let mut best = [Duration::MAX; 3];
    let mut times = Vec::new();
    let mut incremental = 0;
    for v in 2..2 + edits {
        let (end, text) = if v % 2 == 0 {
            (pos, "x")
        } else {
            (lsp_types::Position::new(line, col + 1), "")
        };
        let change = lsp_types::TextDocumentContentChangeEvent {
            range: Some(lsp_types::Range::new(pos, end)),
            range_length: None,
            text: text.to_string(),
        };
        let t = Instant::now();
        engine.edit(&uri, v, vec![change]);
        let job = engine.job(&uri).unwrap();
        best[0] = best[0].min(t.elapsed());
        let t = Instant::now();
        let done = job.run();
        best[1] = best[1].min(t.elapsed());
        times.push(t.elapsed());
        incremental += usize::from(done.incremental());
        engine.install(done);
        let t = Instant::now();
        let p = engine.publish_diagnostics(&uri);
        best[2] = best[2].min(t.elapsed());
        if v == 2 {
            println!("{} diagnostics published", p[0].diagnostics.len());
        }
    }
    times.sort();
    println!(
        "engine, min: edit + job {:?} analysis {:?} (median {:?}; {incremental} of {edits} node by node) publish {:?}",
        best[0],
        best[1],
        times[times.len() / 2],
        best[2]
    );
}
