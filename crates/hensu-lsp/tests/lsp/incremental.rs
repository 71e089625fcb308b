//! What the engine keeps up to date through edits (the tokens, re-lexed around each edit; the
//! analysis, moved through the edits while a new one is pending; analyses of older texts
//! installed late, as the server's worker thread delivers them) equals a from-scratch answer
//! for the final text, over random edit sequences: seeded, so a failure names its seed.

use hensu_lsp::{Engine, MemoryHost};
use hensu_workload::Rng;
use lsp_types::*;

use crate::{MAIN, uri};

/// Pieces typed into the document: the ones that change how the rest lexes (quotes, raw-string
/// and comment openers and closers, newlines) and ordinary text.
const PIECES: &[&str] = &[
    "\"",
    "\"\"\"",
    "/*",
    "*/",
    "//",
    "\n",
    "\r\n",
    "{",
    "}",
    "(",
    ")",
    "x",
    "n3",
    " ",
    "\t",
    "goto \"n1\"",
    "node(\"q\") {\n",
    "é",
    "1.5",
    ".",
    "0x",
    "`in`",
    "\\",
    "{topic}",
    "/**",
    "\"\"\".trimIndent()",
    "=",
    "retry 2",
    "",
];

/// The LSP position (UTF-16 columns) of a byte offset.
fn position(text: &str, offset: usize) -> Position {
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    let col: usize = before[start..].chars().map(char::len_utf16).sum();
    Position::new(line as u32, col as u32)
}

/// A char boundary near `at`.
fn boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// One random edit of `text`: the LSP change, applied to `text` too. Mostly single keystrokes
/// and short deletions, sometimes a longer replacement.
fn random_edit(rng: &mut Rng, text: &mut String) -> TextDocumentContentChangeEvent {
    let a = boundary(text, rng.below(text.len() + 1));
    let len = match rng.below(4) {
        0 => rng.below(40),
        _ => rng.below(3),
    };
    let b = boundary(text, a + len).max(a);
    let new = (*rng.pick(PIECES)).to_string();
    let range = Range::new(position(text, a), position(text, b));
    text.replace_range(a..b, &new);
    TextDocumentContentChangeEvent {
        range: Some(range),
        range_length: None,
        text: new,
    }
}

fn completion_at(engine: &Engine, u: &Uri, text: &str, at: usize) -> Option<CompletionResponse> {
    engine.completion(CompletionParams {
        text_document_position: TextDocumentPositionParams {
            text_document: TextDocumentIdentifier { uri: u.clone() },
            position: position(text, boundary(text, at)),
        },
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
        context: None,
    })
}

fn assert_tokens_fresh(engine: &Engine, u: &Uri, text: &str, seed: u64, step: usize) {
    let a = engine.analysis(u).unwrap();
    assert_eq!(*a.text, text, "seed {seed} step {step}: the text");
    let fresh = hensu_syntax::lex(text);
    let kept = a.lexed();
    assert_eq!(
        kept.tokens, fresh.tokens,
        "seed {seed} step {step}: the tokens"
    );
    assert_eq!(
        format!("{:?}", kept.comments),
        format!("{:?}", fresh.comments),
        "seed {seed} step {step}: the comments"
    );
    assert_eq!(
        format!("{:?}", kept.diagnostics),
        format!("{:?}", fresh.diagnostics),
        "seed {seed} step {step}: the lexical diagnostics"
    );
}

fn source(seed: u64) -> String {
    match seed % 3 {
        0 => crate::DOC.to_string(),
        _ => hensu_workload::generate(6_000 + (seed as usize % 5) * 1_000, seed),
    }
}

#[test]
fn tokens_kept_through_random_edits_equal_a_full_lexing() {
    for seed in 0..60u64 {
        let mut rng = Rng::new(seed);
        let mut text = source(seed);
        let u = uri(MAIN);
        let mut engine = Engine::new(MemoryHost::new());
        engine.open(u.clone(), 1, text.clone());
        // A request lexes the text once; from then on the engine re-lexes around each edit.
        let _ = completion_at(&engine, &u, &text, text.len() / 2);
        // The text last analysed and the edits since, to make the analysis moved through them
        // afresh (the engine moves its own on in place, edit by edit).
        let (mut base, mut pending) = (text.clone(), Vec::new());
        for step in 0..40 {
            let change = random_edit(&mut rng, &mut text);
            pending.push(change.clone());
            engine.edit(&u, step as i32 + 2, vec![change]);
            assert_tokens_fresh(&engine, &u, &text, seed, step);
            if step % 5 == 4 {
                let mut mirror = Engine::new(MemoryHost::new());
                mirror.open(u.clone(), 1, base.clone());
                mirror.edit(&u, 2, pending.clone());
                assert_eq!(
                    engine.analysis(&u).unwrap().fingerprint(),
                    mirror.analysis(&u).unwrap().fingerprint(),
                    "seed {seed} step {step}: the analysis moved on in place"
                );
            }
            if rng.below(8) == 0 {
                engine.analyze_now(&u);
                assert_tokens_fresh(&engine, &u, &text, seed, step);
                (base, pending) = (text.clone(), Vec::new());
            }
        }
    }
}

/// The diagnostics a fresh engine publishes for `text`.
fn fresh_diagnostics(text: &str) -> String {
    let u = uri(MAIN);
    let mut engine = Engine::new(MemoryHost::new());
    engine.open(u.clone(), 1, text.to_string());
    format!("{:?}", engine.publish_diagnostics(&u)[0].diagnostics)
}

#[test]
fn diagnostics_after_random_edit_sequences_equal_a_fresh_analysis() {
    for seed in 0..24u64 {
        let mut rng = Rng::new(1_000 + seed);
        let mut text = source(seed);
        let u = uri(MAIN);
        let mut engine = Engine::new(MemoryHost::new());
        engine.open(u.clone(), 1, text.clone());
        let mut version = 1;
        // A job taken before some of the edits, installed after them (the worker thread's
        // analysis arriving late).
        let mut late = None;
        for _ in 0..12 {
            for _ in 0..=rng.below(3) {
                version += 1;
                let change = random_edit(&mut rng, &mut text);
                let range = change.range.unwrap();
                engine.edit(&u, version, vec![change]);
                // Requests between edits use the moved analysis and the kept tokens.
                let at = rng.below(text.len() + 1);
                let _ = completion_at(&engine, &u, &text, at);
                let _ = engine.hover(HoverParams {
                    text_document_position_params: TextDocumentPositionParams {
                        text_document: TextDocumentIdentifier { uri: u.clone() },
                        position: range.start,
                    },
                    work_done_progress_params: Default::default(),
                });
            }
            match rng.below(3) {
                0 => engine.analyze_now(&u),
                1 => late = late.or_else(|| engine.job(&u)),
                _ => {
                    if let Some(job) = late.take() {
                        engine.install(job.run());
                    }
                }
            }
        }
        if let Some(job) = late.take() {
            engine.install(job.run());
        }
        engine.analyze_now(&u);
        assert!(!engine.is_dirty(&u), "seed {seed}: still dirty");
        let published = engine.publish_diagnostics(&u);
        assert_eq!(
            format!("{:?}", published[0].diagnostics),
            fresh_diagnostics(&text),
            "seed {seed}: the diagnostics after the edits"
        );
        assert_tokens_fresh(&engine, &u, &text, seed, usize::MAX);
    }
}

/// Pieces typed inside nodes that mostly keep the text parseable: names, numbers, spaces, line
/// breaks, placeholders and whole statements (some valid in the node, some not).
const NODE_PIECES: &[&str] = &[
    "x",
    "n3",
    "_",
    "7",
    " ",
    "\n",
    "{topic}",
    "{article}",
    "\nonSuccess goto \"n1\"\n",
    "\nonFailure retry 2 otherwise \"n2\"\n",
    "\nwrites(\"article\")\n",
    "\nwrites(\"nope\")\n",
    "\nagent = \"writer\"\n",
    "\nprompt = \"write.md\"\n",
    "\nprompt = \"missing.md\"\n",
    "\ntimeout = 5.seconds\n",
    "\ncompensation = \"undo\"\n",
    "\nrubric = \"r.md\"\n",
    "\nunknownThing = 1\n",
    "\n/* note */\n",
    "// c\n",
];

/// One edit of `text`, mostly somewhere in the first few hundred bytes of a node statement,
/// else anywhere: mostly a piece of [`NODE_PIECES`] typed, sometimes a deletion of a few letters.
fn node_edit(rng: &mut Rng, text: &mut String) -> TextDocumentContentChangeEvent {
    let starts: Vec<usize> = text.match_indices("node(\"").map(|(i, _)| i).collect();
    let a = match starts.len() {
        n if n > 0 && rng.below(3) > 0 => starts[rng.below(n)] + rng.below(300),
        _ => rng.below(text.len() + 1),
    };
    let a = boundary(text, a);
    let letters = text[a..]
        .bytes()
        .take(3)
        .take_while(u8::is_ascii_alphanumeric)
        .count();
    let (a, b, new) = if rng.below(6) == 0 && letters > 0 {
        (a, a + 1 + rng.below(letters), String::new())
    } else {
        let piece = *rng.pick(NODE_PIECES);
        // A statement goes at the end of a line.
        let a = match piece.starts_with('\n') {
            true => text[a..].find('\n').map_or(a, |i| a + i),
            false => a,
        };
        (a, a, piece.to_string())
    };
    let range = Range::new(position(text, a), position(text, b));
    text.replace_range(a..b, &new);
    TextDocumentContentChangeEvent {
        range: Some(range),
        range_length: None,
        text: new,
    }
}

/// The project of the node-edit test: a prompt and a rubric file, and a saga workflow.
fn project_host() -> MemoryHost {
    MemoryHost::new()
        .with("/p/prompts/write.md", "Write about {topic}.\n")
        .with("/p/rubrics/r.md", "# Rubric\nScore it.\n")
}

/// A workflow with a compensation, timeouts and resource files, for the node-edit test.
const SAGA: &str = r#"fun trip() = workflow("trip") {
    state {
        input("topic", VarType.STRING)
        variable("article", VarType.STRING)
    }
    agents {
        agent("writer") { role = "Writer"; model = "stub" }
    }
    graph {
        start at "n1"
        compensation("undo") {
            agent = "writer"
            prompt = "Undo {topic}"
        }
        node("n1") {
            agent = "writer"
            prompt = "write.md"
            writes("article")
            compensation = "undo"
            timeout = 30.seconds
            onSuccess goto "n2"
        }
        node("n2") {
            agent = "writer"
            prompt = "Check {article}"
            rubric = "r.md"
            onSuccess goto "n3"
            onFailure retry 2 otherwise "n3"
        }
        node("n3") {
            agent = "writer"
            prompt = "Finish {article}"
            onSuccess goto "done"
        }
        end("done")
    }
}
"#;

fn node_edit_source(seed: u64) -> String {
    match seed % 4 {
        0 => crate::DOC.to_string(),
        1 => SAGA.to_string(),
        _ => hensu_workload::generate(5_000 + (seed as usize % 5) * 1_000, seed),
    }
}

/// Where two printed analyses part (a little of each from there), for a readable failure.
fn first_difference(a: &str, b: &str) -> String {
    let at = a
        .bytes()
        .zip(b.bytes())
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let from = a.floor_char_boundary(at.saturating_sub(300));
    let end = |s: &str| s.floor_char_boundary((at + 300).min(s.len()));
    format!(
        "at byte {at}\n  got: {}\n want: {}",
        &a[from..end(a)],
        &b[from.min(b.len())..end(b)]
    )
}

/// A fresh engine's analysis of `text` and the diagnostics it publishes.
fn fresh(text: &str) -> (String, String) {
    let u = uri(MAIN);
    let mut engine = Engine::new(project_host());
    engine.open(u.clone(), 1, text.to_string());
    let a = engine.analysis(&u).unwrap();
    let published = engine.publish_diagnostics(&u);
    (a.fingerprint(), format!("{:?}", published[0].diagnostics))
}

#[test]
fn analyses_made_node_by_node_equal_a_fresh_analysis() {
    let (mut steps, mut incremental, mut reused) = (0, 0, 0);
    for seed in 0..24u64 {
        let mut rng = Rng::new(7_000 + seed);
        let mut text = node_edit_source(seed);
        let u = uri(MAIN);
        let mut engine = Engine::new(project_host());
        engine.open(u.clone(), 1, text.clone());
        let mut version = 1;
        let mut clean = text.clone();
        let mut late = None;
        for step in 0..30 {
            for _ in 0..=rng.below(2) {
                version += 1;
                // Now and then an edit that may break the syntax or span several nodes.
                let change = if rng.below(16) == 0 {
                    random_edit(&mut rng, &mut text)
                } else {
                    node_edit(&mut rng, &mut text)
                };
                engine.edit(&u, version, vec![change]);
            }
            // An analysis taken before later edits and installed after them, sometimes.
            if rng.below(6) == 0 && late.is_none() {
                late = engine.job(&u);
                continue;
            }
            if let Some(job) = late.take() {
                engine.install(job.run());
            }
            if let Some(job) = engine.job(&u) {
                let done = job.run();
                steps += 1;
                incremental += usize::from(done.incremental());
                reused += usize::from(done.reused());
                assert!(
                    engine.install(done),
                    "seed {seed} step {step}: not installed"
                );
            }
            let a = engine.analysis(&u).unwrap();
            let published = engine.publish_diagnostics(&u);
            let (want, want_published) = fresh(&text);
            let got = a.fingerprint();
            assert!(
                got == want,
                "seed {seed} step {step}: the analysis differs: {}",
                first_difference(&got, &want)
            );
            assert_eq!(
                format!("{:?}", published[0].diagnostics),
                want_published,
                "seed {seed} step {step}: the diagnostics"
            );
            // Back to the last text without a syntax error, so the edits keep reaching nodes.
            if want.contains("code: \"E00") {
                version += 1;
                let change = TextDocumentContentChangeEvent {
                    range: None,
                    range_length: None,
                    text: clean.clone(),
                };
                text = clean.clone();
                engine.edit(&u, version, vec![change]);
            } else {
                clean = text.clone();
            }
        }
    }
    // The shortcut is taken for a good part of the steps (not for edits outside a node or
    // across nodes, a changed node id, or after a syntax error: about 30 % here).
    assert!(
        incremental * 4 > steps,
        "{incremental} of {steps} analyses were made node by node"
    );
    // Most of those splice into the replaced analysis brought up to the base (not into copies):
    // all but the first after a full analysis or a late install.
    assert!(
        reused * 3 > incremental,
        "{reused} of {incremental} node-by-node analyses reused the replaced one"
    );
}

/// Types `x` after the first `Finish ` of `text` (inside node `n3`'s prompt) as version
/// `version`, and runs and installs the analysis job; whether it was made node by node and
/// whether it reused the replaced analysis.
fn type_in_n3(engine: &mut Engine, text: &mut String, version: i32) -> (bool, bool) {
    let u = uri(MAIN);
    let at = text.find("Finish ").unwrap() + "Finish ".len();
    let pos = position(text, at);
    text.insert(at, 'x');
    engine.edit(
        &u,
        version,
        vec![TextDocumentContentChangeEvent {
            range: Some(Range::new(pos, pos)),
            range_length: None,
            text: "x".to_string(),
        }],
    );
    let done = engine.job(&u).unwrap().run();
    let made = (done.incremental(), done.reused());
    assert!(engine.install(done));
    made
}

#[test]
fn a_replaced_analysis_held_elsewhere_is_copied_and_one_held_by_nobody_reused() {
    let mut text = SAGA.to_string();
    let u = uri(MAIN);
    let mut engine = Engine::new(project_host());
    engine.open(u.clone(), 1, text.clone());
    // The opened analysis is held (as a request would) while it is replaced and retired.
    let held = engine.analysis(&u).unwrap();
    assert_eq!(type_in_n3(&mut engine, &mut text, 2), (true, false));
    assert_eq!(
        type_in_n3(&mut engine, &mut text, 3),
        (true, false),
        "the retired analysis is still held: its parts are not taken"
    );
    assert_eq!(engine.analysis(&u).unwrap().fingerprint(), fresh(&text).0);
    drop(held);
    assert_eq!(
        type_in_n3(&mut engine, &mut text, 4),
        (true, true),
        "the retired analysis is held by nobody: its parts are brought up and reused"
    );
    assert_eq!(type_in_n3(&mut engine, &mut text, 5), (true, true));
    let a = engine.analysis(&u).unwrap();
    assert_eq!(a.fingerprint(), fresh(&text).0);
    assert_eq!(
        format!("{:?}", engine.publish_diagnostics(&u)[0].diagnostics),
        fresh(&text).1
    );
}
