//! Edits before their analysis: requests see the latest text at once, a burst of edits is one
//! analysis, and a changed prompt file re-analyses the documents of its project.

use lsp_types::*;

use crate::*;

fn insert_at_top(engine: &mut Engine, u: &Uri, version: i32, text: &str) {
    engine.edit(
        u,
        version,
        vec![TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(0, 0), Position::new(0, 0))),
            range_length: None,
            text: text.to_string(),
        }],
    );
}

fn hover_range(engine: &Engine, u: &Uri, pos: Position) -> Option<Range> {
    engine
        .hover(HoverParams {
            text_document_position_params: tdp(u, pos),
            work_done_progress_params: Default::default(),
        })
        .and_then(|h| h.range)
}

#[test]
fn requests_while_an_analysis_is_pending_see_the_latest_text() {
    let (mut engine, u, _, text) = open(DOC);
    let line = text
        .lines()
        .position(|l| l.contains("node(\"review\")"))
        .unwrap() as u32;
    let at = Position::new(line, 15);
    let before = hover_range(&engine, &u, at).unwrap();
    for v in 2..=51 {
        insert_at_top(&mut engine, &u, v, "// a comment\n");
    }
    assert!(engine.is_dirty(&u));
    // The old analysis, moved 50 lines down.
    let moved = Position::new(line + 50, 15);
    let during = hover_range(&engine, &u, moved).unwrap();
    assert_eq!(during.start.line, before.start.line + 50);
    assert_eq!(during.start.character, before.start.character);
    // One job covers all 50 edits; installing it makes the document clean.
    let job = engine.job(&u).unwrap();
    let done = job.run();
    assert!(engine.install(done));
    assert!(!engine.is_dirty(&u));
    assert!(engine.job(&u).is_none());
    assert_eq!(hover_range(&engine, &u, moved), Some(during));
    assert_eq!(engine.version(&u), Some(51));
}

/// An analysis that finishes after more edits came is installed as the base for requests, but
/// the document stays dirty and its diagnostics are not published yet.
#[test]
fn an_outdated_analysis_leaves_the_document_dirty() {
    let (mut engine, u, _, _) = open(DOC);
    insert_at_top(&mut engine, &u, 2, "// one\n");
    let job = engine.job(&u).unwrap();
    insert_at_top(&mut engine, &u, 3, "// two\n");
    assert!(!engine.install(job.run()));
    assert!(engine.is_dirty(&u));
    let line = DOC
        .lines()
        .position(|l| l.contains("node(\"review\")"))
        .unwrap() as u32;
    let r = hover_range(&engine, &u, Position::new(line + 2, 15)).unwrap();
    assert_eq!(r.start.line, line + 2);
    engine.analyze_now(&u);
    assert!(!engine.is_dirty(&u));
    assert_eq!(
        engine.analysis(&u).unwrap().text.lines().next(),
        Some("// two")
    );
}

/// A prompt created after the workflow was opened: the change makes the open workflow of that
/// project dirty, and its re-analysis no longer reports the missing file.
#[test]
fn a_changed_prompt_file_reanalyses_its_project() {
    let mut files = host();
    let mut engine = Engine::new(files.clone());
    let src = DOC.replace(
        "prompt = \"Write an article about {topic}.\"",
        "prompt = \"later.md\"",
    );
    let u = uri(MAIN);
    engine.open(u.clone(), 1, src);
    let codes = |engine: &Engine| -> Vec<String> {
        engine
            .diagnostics(&u)
            .into_iter()
            .map(|d| format!("{:?}", d.code.unwrap()))
            .collect()
    };
    assert_eq!(codes(&engine).len(), 1, "{:?}", codes(&engine));
    files.insert("/p/prompts/later.md", "Write about {topic}.\n");
    assert_eq!(
        engine.files_changed(&["/elsewhere/prompts/later.md".to_string()]),
        Vec::<Uri>::new()
    );
    assert_eq!(
        engine.files_changed(&["/p/prompts/later.md".to_string()]),
        vec![u.clone()]
    );
    engine.analyze_now(&u);
    assert_eq!(codes(&engine), Vec::<String>::new());
}

/// A project sibling whose analysis is pending is not published with another document's
/// diagnostics (its last analysis is of an older text); it publishes when its own lands.
#[test]
fn a_pending_sibling_is_not_published() {
    let (mut engine, main, _, _) = open(DOC);
    let sibling = uri("/p/workflows/summarizer.hwf");
    engine.open(sibling.clone(), 1, SUMMARIZER.to_string());
    let published = |engine: &Engine| -> Vec<String> {
        engine
            .publish_diagnostics(&main)
            .into_iter()
            .map(|p| p.uri.as_str().to_string())
            .collect()
    };
    assert_eq!(published(&engine).len(), 2);
    insert_at_top(&mut engine, &sibling, 2, "// edited\n");
    assert_eq!(published(&engine), [main.as_str().to_string()]);
    engine.analyze_now(&sibling);
    assert_eq!(published(&engine).len(), 2);
}

/// A job made before the document was reopened (with another text) is dropped.
#[test]
fn a_job_from_before_a_reopen_is_dropped() {
    let (mut engine, u, _, _) = open(DOC);
    insert_at_top(&mut engine, &u, 2, "// one\n");
    let stale = engine.job(&u).unwrap();
    engine.open_pending(u.clone(), 1, SUMMARIZER.to_string());
    assert!(!engine.install(stale.run()));
    assert!(engine.is_dirty(&u));
    engine.analyze_now(&u);
    assert_eq!(*engine.analysis(&u).unwrap().text, SUMMARIZER);
}
