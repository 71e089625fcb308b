//! Times the phases behind a diagnostics refresh on the 2,000-node benchmark workflow (parse,
//! symbol index, lowering, checks), best of 20: `cargo run --release -p hensu-lsp --example prof`.
#![allow(clippy::unwrap_used)]
use std::time::{Duration, Instant};
fn main() {
    let src = hensu_workload::generate(2000 * 560, 7);
    let parsed = hensu_syntax::parse(&src);
    let mut best = [Duration::MAX; 4];
    for _ in 0..20 {
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
        drop((idx, d));
    }
    println!(
        "min: index {:?} parse {:?} lower {:?} check {:?}",
        best[0], best[1], best[2], best[3]
    );
}
