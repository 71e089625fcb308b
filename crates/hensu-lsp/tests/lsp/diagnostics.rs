//! Diagnostics: own, project-wide, after incremental edits, on half-typed text.

use std::fmt::Write as _;

use lsp_types::*;

use crate::*;

fn diagnostics_of(engine: &Engine, u: &Uri, text: &str) -> String {
    let mut out = String::new();
    for d in engine.diagnostics(u) {
        let code = match &d.code {
            Some(NumberOrString::String(s)) => s.clone(),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "{code} {:?} {}",
            d.severity.unwrap(),
            show_range(text, d.range)
        );
        for line in d.message.lines() {
            let _ = writeln!(out, "    {line}");
        }
        for r in d.related_information.iter().flatten() {
            let _ = writeln!(
                out,
                "    related {} {}:{}: {}",
                r.location.uri.as_str().rsplit('/').next().unwrap_or(""),
                r.location.range.start.line + 1,
                r.location.range.start.character + 1,
                r.message
            );
        }
    }
    out
}

#[test]
fn diagnostics_clean_document() {
    let (engine, u, _, text) = open(DOC);
    assert_eq!(diagnostics_of(&engine, &u, &text), "");
}

#[test]
fn diagnostics_with_related_information_and_utf16() {
    let src = DOC
        .replace("goto \"review\"", "goto \"reveiw\"")
        .replace("agent(\"reviewer\")", "agent(\"writer\")")
        .replace("Write an article about {topic}.", "Écrire 𝄞 about {topik}.")
        .replace("target = \"summarizer\"", "target = \"sumarizer\"");
    let (engine, u, _, text) = open(&src);
    insta::assert_snapshot!(diagnostics_of(&engine, &u, &text));
}

#[test]
fn diagnostics_follow_incremental_changes() {
    let (mut engine, u, _, text) = open(DOC);
    // Type one character into `"review"` of the first goto (line 31).
    let line = text
        .lines()
        .position(|l| l.contains("goto \"review\""))
        .unwrap() as u32;
    let col = text
        .lines()
        .nth(line as usize)
        .unwrap()
        .find("review")
        .unwrap() as u32;
    engine.change(
        &u,
        2,
        vec![TextDocumentContentChangeEvent {
            range: Some(Range::new(
                Position::new(line, col),
                Position::new(line, col),
            )),
            range_length: None,
            text: "x".to_string(),
        }],
    );
    let text = engine.analysis(&u).unwrap().text.to_string();
    let published = engine.publish_diagnostics(&u);
    assert_eq!(published.len(), 1);
    assert_eq!(published[0].version, Some(2));
    insta::assert_snapshot!(diagnostics_of(&engine, &u, &text));
}

#[test]
fn diagnostics_of_half_typed_documents_never_panic() {
    // Every prefix of the document, and every prefix with one character deleted.
    let mut engine = Engine::new(host());
    let u = uri(MAIN);
    let mut cut = 0;
    while cut < DOC.len() {
        if DOC.is_char_boundary(cut) {
            engine.open(u.clone(), 1, DOC[..cut].to_string());
            let _ = engine.diagnostics(&u);
            let end = DOC[..cut].chars().count() as u32;
            let _ = engine.completion(CompletionParams {
                text_document_position: tdp(
                    &u,
                    engine
                        .analysis(&u)
                        .unwrap()
                        .range(hensu_diagnostics::Span::new(0, cut as u32))
                        .end,
                ),
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
                context: None,
            });
            let _ = end;
        }
        cut += 7;
    }
}

#[test]
fn diagnostics_project_checks_across_open_documents() {
    // The child does not declare `summary` as written: E0503 on the parent's sub-workflow.
    let mut engine = Engine::new(MemoryHost::new());
    let parent = uri("/p/workflows/main.hwf");
    let child = uri("/p/workflows/summarizer.hwf");
    engine.open(parent.clone(), 1, DOC.to_string());
    engine.open(
        child.clone(),
        1,
        SUMMARIZER.replace("writes(\"summary\")", ""),
    );
    let published = engine.publish_diagnostics(&child);
    assert_eq!(
        published.len(),
        2,
        "both documents of the project are republished"
    );
    insta::assert_snapshot!(diagnostics_of(&engine, &parent, DOC));
}

/// A node id in another script is refused, saying ids are ASCII (docs/language.md, *Lexical
/// structure*).
#[test]
fn a_non_ascii_node_id_is_refused_as_not_ascii() {
    let (engine, u, _, _) = open(&DOC.replace("\"review\"", "\"開始\""));
    let diags = engine.diagnostics(&u);
    let e0207: Vec<&str> = diags
        .iter()
        .filter(|d| d.code == Some(NumberOrString::String("E0207".to_string())))
        .map(|d| d.message.lines().next().unwrap())
        .collect();
    assert_eq!(
        e0207,
        ["invalid node id `開始`: it must start with an ASCII letter or digit"]
    );
}

/// The `[lints]` table of the project's `hensu.toml` changes what is published, as in
/// `hensuc check`: the unused agent is a warning by default, an error when denied, and gone
/// when allowed.
#[test]
fn diagnostics_honour_the_lints_of_hensu_toml() {
    let text = "workflow(\"w\") {\n    agents {\n        agent(\"writer\") { role = \"Writer\"; model = \"gpt-4o\" }\n        agent(\"editor\") { role = \"Editor\"; model = \"gpt-4o\" }\n    }\n    graph {\n        start at \"draft\"\n        node(\"draft\") {\n            agent = \"writer\"\n            prompt = \"Write\"\n            onSuccess goto \"done\"\n        }\n        end(\"done\")\n    }\n}\n";
    let unused_agent = |host: MemoryHost| {
        let mut engine = Engine::new(host);
        let doc = uri("/p/workflows/w.hwf");
        engine.open(doc.clone(), 1, text.to_string());
        engine
            .diagnostics(&doc)
            .into_iter()
            .filter(|d| d.code == Some(NumberOrString::String("W0313".into())))
            .map(|d| d.severity)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        unused_agent(MemoryHost::new()),
        vec![Some(DiagnosticSeverity::WARNING)]
    );
    let denied = MemoryHost::new().with("/p/hensu.toml", "[lints]\nW0313 = \"deny\"\n");
    assert_eq!(unused_agent(denied), vec![Some(DiagnosticSeverity::ERROR)]);
    let allowed = MemoryHost::new().with("/p/hensu.toml", "[lints]\nW0313 = \"allow\"\n");
    assert_eq!(unused_agent(allowed), Vec::new());
}
