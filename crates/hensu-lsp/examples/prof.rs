//! Times the phases behind a diagnostics refresh on the benchmark workflow (parse, symbol index,
//! lowering, checks, and copying the IR and its origins), best of 20:
//! `cargo run --profile bench -p hensu-lsp --example prof [NODES]` (2,000 nodes by default).
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
    println!(
        "{nodes} nodes, min: index {:?} parse {:?} lower {:?} check {:?} clone IR {:?} clone origins {:?}",
        best[0], best[1], best[2], best[3], best[4], best[5]
    );
}
