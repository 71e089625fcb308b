//! A stable-Rust mutation fuzzer for everything hensuc reads that is not covered by the
//! front-end fuzzer (`hensu-syntax/examples/fuzz_mutate.rs`): byte-level mutants of the
//! workflow fixtures and examples, and of `commands.yaml` files.
//!
//! `fuzz_project SECONDS [SEED [shell]]` (`shell`: only the last target), each iteration
//! checks, without panicking:
//! * **spans** — `decode_source` keeps the file's length (invalid UTF-8 is one placeholder per
//!   byte), and every diagnostic of parsing and of lowering + checking lies inside the
//!   *original* bytes, on char boundaries of the decoded text;
//! * **fmt** — when a mutant formats, formatting the result is a no-op and it parses clean;
//! * **commands.yaml** — parsing a mutant returns `Ok` or `Err`, every id it returns resolves.
//! * **placeholder rewriting** — a random command (shell fragments in every quoting context,
//!   placeholders, mutations) with random hostile values (each one tries to create a marker
//!   file) is either refused when rewritten or run by `/bin/sh`; the marker must never appear
//!   (docs/security.md, *How values reach a command*).
//!
//! Failing inputs are written to `fuzz/artifacts/`. Prints the execution counts.

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
    "+",
    "-",
    "=",
    "->",
    "\"",
    "\"\"\"",
    "/*",
    "*/",
    "//",
    "`",
    "$",
    "${",
    "\\",
    "val ",
    "if ",
    "when",
    "in ",
    "goto ",
    "retry 3",
    "otherwise ",
    "4294967297",
    "2147483648",
    "60_000L",
    ".trimIndent()",
    "\u{feff}",
    "\r\n",
    "é",
    "—",
    "\u{0}",
    "\u{1a}",
    ": ",
    "- ",
    "&a ",
    "*a",
    "!!str ",
    "{result}",
    "'",
    "#",
    "commands:",
    "  command: ",
    "  timeout: ",
    "  env:",
    "\t",
    "---\n",
    "? ",
];
const INVALID_UTF8: &[&[u8]] = &[b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xf8\x88"];

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

fn read_dir_files(dir: &str, ext: &[&str], out: &mut Vec<Vec<u8>>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| ext.contains(&e))
            && let Ok(b) = std::fs::read(&p)
        {
            out.push(b);
        }
    }
}

fn workflow_corpus() -> Vec<Vec<u8>> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let mut out = Vec::new();
    for sub in [
        "tests/fixtures/syntax/ok",
        "tests/fixtures/syntax/err",
        "examples/workflows",
    ] {
        read_dir_files(&format!("{root}/{sub}"), &["hwf", "kt"], &mut out);
    }
    out.push(b"workflow(\"x\") { graph { start at \"a\"; end(\"a\") } }".to_vec());
    out
}

fn commands_corpus() -> Vec<Vec<u8>> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let mut out = Vec::new();
    if let Ok(b) = std::fs::read(format!("{root}/examples/commands.yaml")) {
        out.push(b);
    }
    out.push(
        b"commands:\n  a:\n    command: \"echo {x}\"\n    timeout: 10\n    env:\n      K: v\n"
            .to_vec(),
    );
    out.push(b"commands:\n  b: &x\n    command: ls\n  c: *x\n".to_vec());
    out.push(b"commands: {}\n".to_vec());
    out
}

fn mutate(rng: &mut Rng, corpus: &[Vec<u8>], input: &mut Vec<u8>) {
    for _ in 0..=rng.below(8) {
        let len = input.len();
        match rng.below(8) {
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
            5 => {
                let bad = INVALID_UTF8[rng.below(INVALID_UTF8.len())];
                let at = rng.below(len + 1);
                input.splice(at..at, bad.iter().copied());
            }
            6 if len > 0 => {
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

fn assert_spans(what: &str, bytes: &[u8], text: &str, diags: &[hensu_diagnostics::Diagnostic]) {
    for d in diags {
        for s in std::iter::once(d.primary.span).chain(d.secondary.iter().map(|l| l.span)) {
            assert!(
                s.start <= s.end && s.end as usize <= bytes.len(),
                "{what}: span outside the file: {d:?}"
            );
            assert!(
                text.is_char_boundary(s.start as usize) && text.is_char_boundary(s.end as usize),
                "{what}: span not on a char boundary: {d:?}"
            );
        }
    }
}

fn check_workflow(data: &[u8]) {
    let (text, decode) = hensu_syntax::decode_source(data);
    assert_eq!(text.len(), data.len(), "decoding changed the length");
    let parsed = hensu_syntax::parse_decoded(&text, decode.clone());
    assert_spans("parse", data, &text, &parsed.diagnostics);
    let (_, _, diags) = hensuc::project::compile_source(
        &text,
        decode,
        hensu_diagnostics::FileId::default(),
        &hensu_sema::files::NoFiles,
    );
    assert_spans("check", data, &text, &diags);
    if let Ok(formatted) = hensu_fmt::format(&text) {
        let again = hensu_fmt::format(&formatted);
        assert!(
            again.as_deref().ok() == Some(formatted.as_str()),
            "fmt is not idempotent"
        );
        let reparsed = hensu_syntax::parse(&formatted);
        assert!(
            !reparsed.diagnostics.iter().any(|d| d.is_error()),
            "formatted output has syntax errors: {:?}",
            reparsed.diagnostics
        );
    }
}

fn check_commands(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(registry) = hensu_host::CommandRegistry::parse(&text) {
        for id in registry.ids() {
            assert!(
                registry.get(id).is_some(),
                "listed id {id} does not resolve"
            );
        }
    }
}

/// Pieces of shell code a command is assembled from: a placeholder in every context.
const SHELL_FRAGMENTS: &[&str] = &[
    "printf '%s' {v}",
    "printf '%s' '{v}'",
    "printf '%s' \"{v}\"",
    "echo 'Workflow result: {v}'",
    "echo \"a {w} b\" 'c {v}'{w}",
    "cat <<EOF\n{v} '{w}' \"{v}\"\nEOF\n",
    "cat <<-EOF\n\t{v}\n\tEOF\n",
    "cat <<'EOF'\n{v}\nEOF\n",
    "printf %s \"$(printf %s {v})\"",
    "x={v}; printf %s \"$x\"",
    "case {v} in *) : ;; esac",
    "f() { echo {v}; }; f",
    "# it's a comment {v}\n",
    "echo {v} | cat",
    "test -n {w} && :",
    "echo ${HOME} $$ {w}",
    "echo $(( 1 + {v} ))",
    "echo `echo {v}`",
    "echo \\{v}",
    "; ",
    " && ",
    " || ",
    "\n",
    " | ",
    "'",
    "\"",
    "$",
    "\\",
    "(",
    ")",
    "{",
    "}",
    "`",
    "<<",
    "EOF\n",
    " {v} ",
    "{w}",
];

/// Value pieces: each tries to break out of wherever its placeholder stands.
const HOSTILE: &[&str] = &[
    "$(touch @)",
    "`touch @`",
    "'; touch @; '",
    "\"; touch @; \"",
    "'\"$(touch @)\"'",
    "\ntouch @\n",
    "\nEOF\ntouch @\nEOF\n",
    "$( touch @ )",
    "${x:-$(touch @)}",
    "') ; touch @ ; ('",
    "\\'; touch @ #",
    "&& touch @",
    "| touch @",
    "> @",
    "}; touch @; {",
    "'",
    "\"",
    "`",
    "\\",
    "$",
    "\n",
    "\t",
    "EOF",
    "{v}",
    "é🦀",
];

/// A random command: fragments, sometimes mutated.
fn random_command(rng: &mut Rng) -> String {
    let mut command = String::new();
    for _ in 0..=rng.below(5) {
        command.push_str(SHELL_FRAGMENTS[rng.below(SHELL_FRAGMENTS.len())]);
    }
    if rng.below(3) == 0 {
        let corpus = [command.clone().into_bytes()];
        let mut bytes = command.into_bytes();
        mutate(rng, &corpus, &mut bytes);
        command = String::from_utf8_lossy(&bytes).into_owned();
    }
    command
}

/// One rewriting check of `command`; an error describes the run that created the marker.
fn check_placeholders(
    command: &str,
    rng: &mut Rng,
    runtime: &tokio::runtime::Runtime,
    dir: &std::path::Path,
) -> Result<(), String> {
    // Refused placements are fine; the rewriter must not panic.
    if hensu_host::command_script::rewrite(command).is_err() {
        return Ok(());
    }
    let marker = dir.join("marker");
    let value = |rng: &mut Rng| {
        let mut v = String::new();
        for _ in 0..=rng.below(4) {
            v.push_str(HOSTILE[rng.below(HOSTILE.len())]);
        }
        v.replace('@', &marker.display().to_string())
    };
    let ctx: hensu_runtime::Context = [
        ("v".to_string(), serde_json::Value::from(value(rng))),
        ("w".to_string(), serde_json::Value::from(value(rng))),
    ]
    .into_iter()
    .collect();
    let spec = hensu_host::CommandSpec {
        timeout_ms: 5_000,
        ..hensu_host::CommandSpec::new(command)
    };
    runtime.block_on(hensu_host::run_command(&spec, &ctx, Some(dir)));
    if marker.exists() {
        let _ = std::fs::remove_file(&marker);
        return Err(format!("{command}\n--- values ---\n{ctx:?}"));
    }
    Ok(())
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let secs: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(60);
    let seed: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(0x5eed) | 1;
    // `shell`: only the placeholder-rewriting target (it runs /bin/sh, so it is the slow one).
    let shell_only = args.next().as_deref() == Some("shell");
    let workflows = workflow_corpus();
    let commands = commands_corpus();
    let mut rng = Rng(seed);
    let deadline = Instant::now() + Duration::from_secs(secs);
    let (mut workflow_execs, mut commands_execs, mut failures) = (0u64, 0u64, 0u64);
    let mut shell_execs = 0u64;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let shell_dir = tempfile::tempdir().expect("a temporary directory");
    panic::set_hook(Box::new(|_| {}));
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/artifacts");
    while Instant::now() < deadline {
        for _ in 0..20 {
            if shell_only || rng.below(10) == 0 {
                shell_execs += 1;
                let command = random_command(&mut rng);
                let r = panic::catch_unwind(panic::AssertUnwindSafe(|| {
                    check_placeholders(&command, &mut rng, &runtime, shell_dir.path())
                }));
                let failure = match r {
                    Ok(Ok(())) => None,
                    Ok(Err(run)) => Some(format!("a value ran as code:\n{run}")),
                    Err(payload) => Some(format!(
                        "the placeholder rewriting panicked: {}\n{command}",
                        panic_message(payload.as_ref())
                    )),
                };
                if let Some(f) = failure {
                    failures += 1;
                    eprintln!("failure {failures}: {}", f.lines().next().unwrap_or(""));
                    let _ = std::fs::create_dir_all(dir);
                    let _ = std::fs::write(format!("{dir}/shell-{shell_execs}.txt"), f);
                }
                continue;
            }
            let yaml = rng.below(4) == 0;
            let corpus = if yaml { &commands } else { &workflows };
            let mut input = corpus[rng.below(corpus.len())].clone();
            mutate(&mut rng, corpus, &mut input);
            let result = if yaml {
                commands_execs += 1;
                panic::catch_unwind(|| check_commands(&input))
            } else {
                workflow_execs += 1;
                panic::catch_unwind(|| check_workflow(&input))
            };
            if let Err(payload) = result {
                failures += 1;
                let message = panic_message(payload.as_ref());
                eprintln!(
                    "failure {failures}: {}",
                    message.lines().next().unwrap_or("")
                );
                let _ = std::fs::create_dir_all(dir);
                let ext = if yaml { "yaml" } else { "hwf" };
                let n = workflow_execs + commands_execs;
                let _ = std::fs::write(format!("{dir}/crash-{n}.{ext}"), &input);
            }
        }
    }
    let _ = panic::take_hook();
    println!(
        "{workflow_execs} workflow mutants (parse + check + fmt), {commands_execs} commands.yaml \
         mutants, {shell_execs} shell commands run with hostile values, {failures} failures, \
         {secs} s, seed {seed}"
    );
    if failures > 0 {
        std::process::exit(1);
    }
}
