//! A stable-Rust mutation fuzzer for the lexer and parser (the cargo-fuzz target needs nightly).
//!
//! `fuzz_mutate SECONDS [SEED]`: mutates the fixture corpus (`tests/fixtures/syntax/**`), runs
//! `decode_source` + `lex` + `parse_decoded` on every mutant and checks that nothing panics and
//! every diagnostic span lies inside the original bytes on char boundaries, and that the fast path and the
//! chumsky parser agree whenever the fast path accepts a mutant. Failing inputs are written to
//! `fuzz/artifacts/`. Prints the iteration count.

use std::panic;
use std::time::{Duration, Instant};

const TOKENS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "\n",
    ";",
    ",",
    ".",
    "..",
    "+",
    "-",
    "=",
    "->",
    "\"",
    "\"\"\"",
    "/*",
    "*/",
    "//",
    "/**",
    "`",
    "$",
    "${",
    "\\",
    "\\u",
    "val ",
    "if ",
    "fun ",
    "when",
    "in ",
    "`in`",
    "to ",
    "goto ",
    "retry 3",
    "otherwise ",
    "withFeedback",
    "1e-3",
    "60_000L",
    "0x",
    "9999999999999999999999",
    ".trimIndent()",
    ".trimMargin(\" \")",
    "mapOf(",
    "listOf(",
    "\u{feff}",
    "\r\n",
    "\r",
    "é",
    "—",
    "\u{0}",
    "#",
    "@",
];

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn corpus() -> Vec<Vec<u8>> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/syntax");
    let mut out = Vec::new();
    for sub in ["ok", "err"] {
        if let Ok(dir) = std::fs::read_dir(format!("{root}/{sub}")) {
            for e in dir.flatten() {
                if let Ok(b) = std::fs::read(e.path()) {
                    out.push(b);
                }
            }
        }
    }
    if out.is_empty() {
        out.push(b"workflow(\"x\") { graph { start at \"a\"; end(\"a\") } }".to_vec());
    }
    out
}

fn mutate(rng: &mut Rng, corpus: &[Vec<u8>], input: &mut Vec<u8>) {
    for _ in 0..=rng.below(8) {
        let len = input.len();
        match rng.below(7) {
            0 if len > 0 => {
                let i = rng.below(len);
                input[i] ^= 1 << rng.below(8);
            }
            1 => {
                let t = TOKENS[rng.below(TOKENS.len())].as_bytes();
                let at = rng.below(len + 1);
                input.splice(at..at, t.iter().copied());
            }
            2 if len > 0 => {
                let a = rng.below(len);
                let b = (a + rng.below(64)).min(len);
                input.drain(a..b);
            }
            3 if len > 0 => {
                let a = rng.below(len);
                let b = (a + rng.below(256)).min(len);
                let chunk: Vec<u8> = input[a..b].to_vec();
                let at = rng.below(input.len() + 1);
                input.splice(at..at, chunk);
            }
            4 => {
                let other = &corpus[rng.below(corpus.len())];
                if !other.is_empty() {
                    let a = rng.below(other.len());
                    let b = (a + rng.below(512)).min(other.len());
                    let at = rng.below(input.len() + 1);
                    input.splice(at..at, other[a..b].iter().copied());
                }
            }
            5 if len > 0 => {
                let at = rng.below(len);
                input.truncate(at);
            }
            _ => {
                let at = rng.below(len + 1);
                input.insert(at, rng.next() as u8);
            }
        }
    }
    input.truncate(64 * 1024);
}

fn check(data: &[u8]) {
    let (text, decode) = hensu_syntax::decode_source(data);
    // Spans are offsets into the original bytes only if decoding keeps the length.
    assert_eq!(text.len(), data.len(), "decoding changed the length");
    let lexed = hensu_syntax::lex(&text);
    for t in &lexed.tokens {
        assert!(t.span.end as usize <= text.len(), "token outside the input");
    }
    // Differential: the fast path and the chumsky parser build the same tree.
    if let Some(fast) = hensu_syntax::parse_fast_only(&text) {
        let slow = hensu_syntax::parse_with_chumsky(&text);
        assert!(fast == slow.file, "fast path and chumsky disagree");
    }
    let parsed = hensu_syntax::parse_decoded(&text, decode);
    for d in &parsed.diagnostics {
        for s in std::iter::once(d.primary.span).chain(d.secondary.iter().map(|l| l.span)) {
            assert!(
                s.start <= s.end && s.end as usize <= text.len(),
                "span outside the input: {d:?}"
            );
            assert!(
                text.is_char_boundary(s.start as usize) && text.is_char_boundary(s.end as usize),
                "{d:?}"
            );
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let secs: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(60);
    let seed: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(0x5eed) | 1;
    let corpus = corpus();
    let mut rng = Rng(seed);
    let deadline = Instant::now() + Duration::from_secs(secs);
    let (mut iterations, mut failures, mut bytes) = (0u64, 0u64, 0u64);
    panic::set_hook(Box::new(|_| {}));
    while Instant::now() < deadline {
        for _ in 0..100 {
            let mut input = corpus[rng.below(corpus.len())].clone();
            mutate(&mut rng, &corpus, &mut input);
            bytes += input.len() as u64;
            iterations += 1;
            if panic::catch_unwind(|| check(&input)).is_err() {
                failures += 1;
                let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/artifacts");
                let _ = std::fs::create_dir_all(dir);
                let _ = std::fs::write(format!("{dir}/crash-{iterations}.hwf"), &input);
            }
        }
    }
    let _ = panic::take_hook();
    println!(
        "{iterations} iterations, {} MB parsed, {failures} failures, {secs} s, seed {seed}",
        bytes / 1_000_000
    );
    if failures > 0 {
        std::process::exit(1);
    }
}
