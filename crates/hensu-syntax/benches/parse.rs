//! Throughput of the front end on generated workflows (hensu-workload, 1 MB and 10 MB):
//! a byte-count floor (count newlines), lexing, lexing + layout + parsing (tree dropped outside
//! the timing), and the same including freeing the tree.
//!
//! `cargo bench -p hensu-syntax --bench parse` — divan prints bytes/s per benchmark.

use std::sync::OnceLock;

use divan::{Bencher, black_box, counter::BytesCount};

/// The allocator `hensuc` ships with, so the figures are the binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    divan::main();
}

const SIZES_MB: [usize; 2] = [1, 10];

fn input(mb: usize) -> &'static str {
    static ONE: OnceLock<String> = OnceLock::new();
    static TEN: OnceLock<String> = OnceLock::new();
    let cell = if mb == 1 { &ONE } else { &TEN };
    cell.get_or_init(|| hensu_workload::generate(mb * 1_000_000, 7))
}

/// The floor: one pass over the bytes counting newlines.
#[divan::bench(args = SIZES_MB, sample_count = 20)]
fn floor_count_newlines(b: Bencher, mb: usize) {
    let src = input(mb);
    b.counter(BytesCount::of_str(src))
        .bench(|| black_box(src).bytes().filter(|&c| c == b'\n').count());
}

#[divan::bench(args = SIZES_MB, sample_count = 20)]
fn lex(b: Bencher, mb: usize) {
    let src = input(mb);
    b.counter(BytesCount::of_str(src))
        .bench(|| hensu_syntax::lex(black_box(src)).tokens.len());
}

/// Lexing + parsing; the tree is dropped outside the timed section (divan defers drops).
#[divan::bench(args = SIZES_MB, sample_count = 20)]
fn lex_and_parse(b: Bencher, mb: usize) {
    let src = input(mb);
    b.counter(BytesCount::of_str(src))
        .bench(|| hensu_syntax::parse(black_box(src)));
}

/// Lexing + parsing + freeing the tree.
#[divan::bench(args = SIZES_MB, sample_count = 20)]
fn lex_and_parse_and_drop(b: Bencher, mb: usize) {
    let src = input(mb);
    b.counter(BytesCount::of_str(src))
        .bench(|| hensu_syntax::parse(black_box(src)).file.items.len());
}
