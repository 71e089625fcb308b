//! Interleaved throughput measurement (for noisy shared machines): `throughput MB ROUNDS`.
//! Prints the best and median MB/s of a newline-count floor, `lex` and `parse` on a generated
//! workflow, and the ratios to the floor and to `lex`.
use std::time::Instant;

/// The allocator `hensuc` ships with, so the figures are the binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn mbps(bytes: usize, secs: f64) -> f64 {
    bytes as f64 / secs / 1e6
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mb: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(10);
    let rounds: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(9);
    let src = hensu_workload::generate(mb * 1_000_000, 7);
    let mut t = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..rounds {
        let s = Instant::now();
        let n = std::hint::black_box(&src)
            .bytes()
            .filter(|&c| c == b'\n')
            .count();
        t[0].push(s.elapsed().as_secs_f64());
        std::hint::black_box(n);
        let s = Instant::now();
        let n = hensu_syntax::lex(std::hint::black_box(&src)).tokens.len();
        t[1].push(s.elapsed().as_secs_f64());
        std::hint::black_box(n);
        let s = Instant::now();
        let parsed = hensu_syntax::parse(std::hint::black_box(&src));
        t[2].push(s.elapsed().as_secs_f64());
        drop(std::hint::black_box(parsed));
        let s = Instant::now();
        let n = hensu_syntax::parse(std::hint::black_box(&src))
            .file
            .items
            .len();
        t[3].push(s.elapsed().as_secs_f64());
        std::hint::black_box(n);
    }
    let names = ["floor", "lex", "lex+parse", "+drop"];
    let mut best = [0.0; 4];
    for (i, times) in t.iter_mut().enumerate() {
        times.sort_by(f64::total_cmp);
        best[i] = mbps(src.len(), times[0]);
        println!(
            "{:>10}: best {:>7.1} MB/s  median {:>7.1} MB/s",
            names[i],
            best[i],
            mbps(src.len(), times[times.len() / 2])
        );
    }
    println!(
        "input {} bytes; lex+parse/lex = {:.2}, lex+parse/floor = {:.3}",
        src.len(),
        best[2] / best[1],
        best[2] / best[0]
    );
}
