#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test
#![allow(clippy::mutable_key_type)] // `WorkspaceEdit::changes` is keyed by `Uri`
//! Engine tests, gleam style: the cursor is marked `$0` in the source, the engine answers the
//! request directly (no JSON-RPC) and the answer is rendered as text and snapshotted.

use std::fmt::Write as _;
use std::str::FromStr;

use hensu_lsp::{Engine, MemoryHost};
use lsp_types::*;

const MAIN: &str = "/p/workflows/main.hwf";

/// A workflow using every kind of reference.
const DOC: &str = r#"/**
 * Draft, score and review an article.
 */
fun pipeline() = workflow("Content Pipeline") {
    description = "Write, self-score, revise and review an article"

    state {
        input("topic", VarType.STRING)
        /** The article text in markdown. */
        variable("article", VarType.STRING, "the article text")
        variable("verdict", VarType.STRING)
        variable("summary", VarType.STRING)
    }

    agents {
        /** Writes every draft. */
        agent("writer") { role = "Content Writer"; model = Models.CLAUDE_SONNET_4_5 }
        agent("reviewer") { role = "Editor"; model = Models.GPT_4O; temperature = 0.2 }
    }

    graph {
        start at "write"

        /** The first draft. */
        node("write") {
            agent = "writer"
            prompt = "Write an article about {topic}."
            writes("article")
            onScore {
                whenScore greaterThanOrEqual 70.0 goto "review"
                whenScore lessThan 70.0 revise "write" withFeedback retry 3 otherwise "failed"
            }
        }

        node("review") {
            agent = "reviewer"
            prompt = "Review this article about {topic}:\n\n{article}"
            writes("verdict")
            onCondition("verdict") {
                whenValue equalTo "ok" goto "summarize"
                otherwise goto "failed"
            }
        }

        subWorkflow("summarize") {
            target = "summarizer"
            imports("article")
            writes("summary")
            onSuccess goto "done"
        }

        end("done")
        end("failed", ExitStatus.FAILURE)
    }
}
"#;

const SUMMARIZER: &str = r#"fun summarizer() = workflow("summarizer") {
    state {
        input("article", VarType.STRING)
        variable("summary", VarType.STRING)
    }
    agents {
        agent("w") { role = "Summarizer"; model = "stub" }
    }
    graph {
        start at "sum"
        node("sum") {
            agent = "w"
            prompt = "Summarize {article}"
            writes("summary")
            onSuccess goto "end"
        }
        end("end")
    }
}
"#;

fn uri(path: &str) -> Uri {
    Uri::from_str(&format!("file://{path}")).unwrap()
}

fn host() -> MemoryHost {
    MemoryHost::new()
        .with("/p/workflows/summarizer.hwf", SUMMARIZER)
        .with("/p/prompts/write.md", "Write about {topic}.\n")
}

/// Removes the `$0` marker; returns the text and the marker's position.
fn split_marker(src: &str) -> (String, Position) {
    let at = src.find("$0").expect("a $0 marker");
    let text = format!("{}{}", &src[..at], &src[at + 2..]);
    let before = &src[..at];
    let line = before.matches('\n').count() as u32;
    let col = before
        .rsplit('\n')
        .next()
        .unwrap_or("")
        .chars()
        .map(char::len_utf16)
        .sum::<usize>() as u32;
    (text, Position::new(line, col))
}

fn open(src: &str) -> (Engine, Uri, Position, String) {
    let (text, pos) = if src.contains("$0") {
        split_marker(src)
    } else {
        (src.to_string(), Position::new(0, 0))
    };
    let mut engine = Engine::new(host());
    let u = uri(MAIN);
    engine.open(u.clone(), 1, text.clone());
    (engine, u, pos, text)
}

fn tdp(u: &Uri, pos: Position) -> TextDocumentPositionParams {
    TextDocumentPositionParams {
        text_document: TextDocumentIdentifier { uri: u.clone() },
        position: pos,
    }
}

/// Byte offset of an LSP position (UTF-16 columns) in `text`.
fn offset(text: &str, pos: Position) -> usize {
    let mut line_start = 0;
    for _ in 0..pos.line {
        match text[line_start..].find('\n') {
            Some(i) => line_start += i + 1,
            None => return text.len(),
        }
    }
    let mut units = 0;
    for (i, c) in text[line_start..].char_indices() {
        if units >= pos.character as usize || c == '\n' {
            return line_start + i;
        }
        units += c.len_utf16();
    }
    text.len()
}

/// `line:col` and the line with the range marked `[…]`.
fn show_range(text: &str, r: Range) -> String {
    let a = offset(text, r.start);
    let b = offset(text, r.end);
    let ls = text[..a].rfind('\n').map_or(0, |i| i + 1);
    let le = text[b..].find('\n').map_or(text.len(), |i| b + i);
    format!(
        "{}:{} {}[{}]{}",
        r.start.line + 1,
        r.start.character + 1,
        text[ls..a].trim_start(),
        &text[a..b],
        &text[b..le]
    )
}

fn apply(text: &str, edits: &[TextEdit]) -> String {
    let mut edits: Vec<&TextEdit> = edits.iter().collect();
    edits.sort_by_key(|e| std::cmp::Reverse(offset(text, e.range.start)));
    let mut out = text.to_string();
    for e in edits {
        let a = offset(text, e.range.start);
        let b = offset(text, e.range.end);
        out.replace_range(a..b, &e.new_text);
    }
    out
}

fn completion(src: &str) -> String {
    let (engine, u, pos, text) = open(src);
    let resp = engine.completion(CompletionParams {
        text_document_position: tdp(&u, pos),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
        context: None,
    });
    let Some(CompletionResponse::Array(items)) = resp else {
        return "(no completions)".to_string();
    };
    let mut out = String::new();
    for (i, item) in items.iter().enumerate() {
        let edit = match &item.text_edit {
            Some(CompletionTextEdit::Edit(e)) => e.clone(),
            _ => panic!("completion without a text edit"),
        };
        let _ = write!(out, "{} ({:?})", item.label, item.kind.unwrap());
        if let Some(d) = &item.detail {
            let _ = write!(out, " — {d}");
        }
        out.push('\n');
        if i == 0 {
            // Show what the first item does to the line.
            let applied = apply(&text, std::slice::from_ref(&edit));
            let line = applied
                .lines()
                .nth(edit.range.start.line as usize)
                .unwrap_or("");
            let _ = writeln!(out, "    => {}", line.trim());
        }
    }
    out
}

fn definition(src: &str) -> String {
    let (engine, u, pos, text) = open(src);
    let resp = engine.definition(GotoDefinitionParams {
        text_document_position_params: tdp(&u, pos),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    });
    match resp {
        Some(GotoDefinitionResponse::Scalar(loc)) => {
            if loc.uri == u {
                show_range(&text, loc.range)
            } else {
                format!("{} {:?}", loc.uri.as_str(), loc.range)
            }
        }
        other => format!("{other:?}"),
    }
}

fn references(src: &str, with_decl: bool) -> String {
    let (engine, u, pos, text) = open(src);
    let locs = engine
        .references(ReferenceParams {
            text_document_position: tdp(&u, pos),
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
            context: ReferenceContext {
                include_declaration: with_decl,
            },
        })
        .unwrap_or_default();
    locs.iter()
        .map(|l| {
            if l.uri == u {
                show_range(&text, l.range)
            } else {
                format!(
                    "{} {}:{}",
                    l.uri.as_str(),
                    l.range.start.line + 1,
                    l.range.start.character + 1
                )
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn hover(src: &str) -> String {
    let (engine, u, pos, text) = open(src);
    let h = engine.hover(HoverParams {
        text_document_position_params: tdp(&u, pos),
        work_done_progress_params: Default::default(),
    });
    match h {
        Some(Hover {
            contents: HoverContents::Markup(m),
            range,
        }) => format!(
            "{}\n---- range: {}",
            m.value,
            range.map_or("none".to_string(), |r| show_range(&text, r))
        ),
        other => format!("{other:?}"),
    }
}

fn rename(src: &str, new: &str) -> String {
    let (engine, u, pos, text) = open(src);
    let r = engine.rename(RenameParams {
        text_document_position: tdp(&u, pos),
        new_name: new.to_string(),
        work_done_progress_params: Default::default(),
    });
    match r {
        Ok(Some(edit)) => {
            let changes = edit.changes.unwrap_or_default();
            let edits = changes.get(&u).cloned().unwrap_or_default();
            let n = edits.len();
            format!("{n} edits\n{}", apply(&text, &edits))
        }
        Ok(None) => "no rename".to_string(),
        Err(e) => format!("error: {e}"),
    }
}

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

// ---------------------------------------------------------------- diagnostics

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
    let text = engine.analysis(&u).unwrap().text.clone();
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

// ---------------------------------------------------------------- definition and references

#[test]
fn definition_of_goto_target() {
    insta::assert_snapshot!(definition(
        &DOC.replace("goto \"review\"", "goto \"rev$0iew\"")
    ));
}

#[test]
fn definition_of_start_revise_otherwise() {
    assert_eq!(
        definition(&DOC.replace("start at \"write\"", "start at \"$0write\"")),
        "25:15 node(\"[write]\") {"
    );
    assert_eq!(
        definition(&DOC.replace("revise \"write\"", "revise \"wr$0ite\"")),
        "25:15 node(\"[write]\") {"
    );
    assert_eq!(
        definition(&DOC.replace("otherwise \"failed\"", "otherwise \"failed$0\"")),
        "53:14 end(\"[failed]\", ExitStatus.FAILURE)"
    );
}

#[test]
fn definition_of_agent_and_variables() {
    assert_eq!(
        definition(&DOC.replace("agent = \"reviewer\"", "agent = \"re$0viewer\"")),
        "18:16 agent(\"[reviewer]\") { role = \"Editor\"; model = Models.GPT_4O; temperature = 0.2 }"
    );
    assert_eq!(
        definition(&DOC.replace("about {topic}:", "about {to$0pic}:")),
        "8:16 input(\"[topic]\", VarType.STRING)"
    );
    assert_eq!(
        definition(&DOC.replace("onCondition(\"verdict\")", "onCondition(\"$0verdict\")")),
        "11:19 variable(\"[verdict]\", VarType.STRING)"
    );
    assert_eq!(
        definition(&DOC.replace("imports(\"article\")", "imports(\"art$0icle\")")),
        "10:19 variable(\"[article]\", VarType.STRING, \"the article text\")"
    );
}

#[test]
fn definition_of_sub_workflow_target_across_files() {
    insta::assert_snapshot!(definition(
        &DOC.replace("target = \"summarizer\"", "target = \"summ$0arizer\"")
    ));
}

#[test]
fn definition_of_a_prompt_file() {
    let src = DOC.replace(
        "prompt = \"Write an article about {topic}.\"",
        "prompt = \"wri$0te.md\"",
    );
    assert_eq!(
        definition(&src),
        "file:///p/prompts/write.md Range { start: Position { line: 0, character: 0 }, end: Position { line: 0, character: 0 } }"
    );
    // A missing file: no definition.
    assert_eq!(definition(&src.replace("wri$0te.md", "no$0pe.md")), "None");
}

#[test]
fn definition_in_fork_targets_and_join_await() {
    let src = r#"workflow("fj") {
    graph {
        start at "f"
        fork("f") {
            targets("a", "b$0")
            onComplete goto "j"
        }
        node("a") { onSuccess goto "j" }
        node("b") { onSuccess goto "j" }
        join("j") {
            await("f")
            writes("x")
            onSuccess goto "done"
        }
        end("done")
    }
}"#;
    assert_eq!(
        definition(src),
        "9:15 node(\"[b]\") { onSuccess goto \"j\" }"
    );
    let src = src
        .replace("\"b$0\"", "\"b\"")
        .replace("await(\"f\")", "await(\"$0f\")");
    assert_eq!(definition(&src), "4:15 fork(\"[f]\") {");
}

#[test]
fn references_of_a_node() {
    insta::assert_snapshot!(references(
        &DOC.replace("node(\"write\")", "node(\"wr$0ite\")"),
        true
    ));
}

#[test]
fn references_of_a_variable_include_placeholders() {
    insta::assert_snapshot!(references(
        &DOC.replace("variable(\"article\"", "variable(\"$0article\""),
        false
    ));
}

#[test]
fn references_of_a_workflow_across_files() {
    insta::assert_snapshot!(references(
        &DOC.replace("target = \"summarizer\"", "target = \"$0summarizer\""),
        true
    ));
}

// ---------------------------------------------------------------- rename

#[test]
fn rename_a_node() {
    insta::assert_snapshot!(rename(
        &DOC.replace("goto \"failed\"", "goto \"fai$0led\""),
        "gave-up"
    ));
}

#[test]
fn rename_a_variable_with_placeholders() {
    let out = rename(
        &DOC.replace("writes(\"article\")", "writes(\"article$0\")"),
        "draft",
    );
    assert!(out.starts_with("4 edits\n"), "{out}");
    assert!(out.contains("variable(\"draft\", VarType.STRING"));
    assert!(out.contains("{topic}:\\n\\n{draft}\""));
    assert!(out.contains("imports(\"draft\")"));
}

#[test]
fn rename_an_agent() {
    let out = rename(
        &DOC.replace("agent = \"writer\"", "agent = \"$0writer\""),
        "author",
    );
    assert!(out.starts_with("2 edits\n"), "{out}");
    assert!(out.contains("agent(\"author\") { role = \"Content Writer\""));
    assert!(out.contains("agent = \"author\""));
}

#[test]
fn rename_refuses_invalid_identifiers() {
    assert_eq!(
        rename(
            &DOC.replace("goto \"failed\"", "goto \"fai$0led\""),
            "not valid"
        ),
        "error: `not valid` is not a valid node id: use letters, digits, `.`, `_` and `-`, starting with a letter or digit"
    );
    assert_eq!(
        rename(
            &DOC.replace("writes(\"article\")", "writes(\"article$0\")"),
            "my-article"
        ),
        "error: `my-article` cannot be used in a `{name}` placeholder: use letters, digits and `_`"
    );
    assert_eq!(
        rename(&DOC.replace("state {", "state$0 {"), "x"),
        "no rename"
    );
}

// ---------------------------------------------------------------- completion

#[test]
fn complete_statements_of_a_standard_node() {
    insta::assert_snapshot!(completion(&DOC.replace(
        "            writes(\"verdict\")\n",
        "            $0\n            writes(\"verdict\")\n"
    )));
}

#[test]
fn complete_statements_of_the_graph_and_a_prefix() {
    insta::assert_snapshot!(completion(&DOC.replace(
        "        end(\"done\")\n",
        "        end(\"done\")\n        sub$0\n"
    )));
}

#[test]
fn complete_node_ids_after_goto() {
    insta::assert_snapshot!(completion(
        &DOC.replace("onSuccess goto \"done\"", "onSuccess goto $0")
    ));
}

#[test]
fn complete_node_ids_inside_a_string() {
    insta::assert_snapshot!(completion(
        &DOC.replace("onSuccess goto \"done\"", "onSuccess goto \"d$0one\"")
    ));
}

#[test]
fn complete_node_ids_after_start_at_revise_otherwise() {
    let first = |s: String| completion(&s).lines().next().unwrap_or("").to_string();
    assert_eq!(
        first(DOC.replace("start at \"write\"", "start at \"$0")),
        "write (Reference) — standard node"
    );
    assert_eq!(
        first(DOC.replace("revise \"write\"", "revise $0")),
        "write (Reference) — standard node"
    );
    assert_eq!(
        first(DOC.replace("otherwise \"failed\"", "otherwise \"$0\"")),
        "write (Reference) — standard node"
    );
}

#[test]
fn complete_agents_after_agent_eq() {
    insta::assert_snapshot!(completion(
        &DOC.replace("agent = \"reviewer\"", "agent = $0")
    ));
}

#[test]
fn complete_variables_in_placeholders_and_writes() {
    insta::assert_snapshot!(completion(&DOC.replace("about {topic}.", "about {to$0")));
    let writes = completion(&DOC.replace("writes(\"verdict\")", "writes(\"verdict\", $0)"));
    assert!(
        writes.starts_with(
            "topic (Variable) — VarType.STRING\n    => writes(\"verdict\", \"topic\")"
        ),
        "{writes}"
    );
}

#[test]
fn complete_enum_constants() {
    insta::assert_snapshot!(completion(&DOC.replace(
        "input(\"topic\", VarType.STRING)",
        "input(\"topic\", VarType.$0)"
    )));
    let bare =
        completion(&DOC.replace("end(\"failed\", ExitStatus.FAILURE)", "end(\"failed\", $0)"));
    assert!(bare.contains("ExitStatus.CANCEL (EnumMember)"), "{bare}");
    assert!(bare.contains("\nCANCEL (EnumMember)"), "{bare}");
    let review = completion(&DOC.replace(
        "            writes(\"verdict\")\n",
        "            review { mode = $0 }\n",
    ));
    assert!(
        review.starts_with("ReviewMode.REQUIRED (EnumMember) — ReviewMode"),
        "{review}"
    );
    let models = completion(&DOC.replace("model = Models.GPT_4O", "model = Models.G$0"));
    assert!(models.contains("GPT_4O (Constant) — gpt-4o"), "{models}");
}

#[test]
fn complete_chain_words() {
    let after_trigger = completion(&DOC.replace("onSuccess goto \"done\"", "onSuccess $0"));
    assert!(
        after_trigger.starts_with("goto (Keyword)"),
        "{after_trigger}"
    );
    let after_score = completion(&DOC.replace("whenScore greaterThanOrEqual", "whenScore $0"));
    assert!(
        after_score.starts_with("greaterThan (Keyword)"),
        "{after_score}"
    );
    let after_goto =
        completion(&DOC.replace("onSuccess goto \"done\"", "onSuccess goto \"done\" $0"));
    assert!(
        after_goto.starts_with("withFeedback (Keyword)"),
        "{after_goto}"
    );
}

#[test]
fn complete_workflow_targets() {
    let out = completion(&DOC.replace("target = \"summarizer\"", "target = \"$0\""));
    assert_eq!(
        out,
        "summarizer (Module) — summarizer\n    => target = \"summarizer\"\n"
    );
}

#[test]
fn no_completion_in_comments() {
    assert_eq!(
        completion(&DOC.replace("Draft, score", "Draft, $0score")),
        "(no completions)"
    );
}

#[test]
fn complete_in_a_half_typed_node() {
    let src = r#"workflow("x") {
    agents { agent("a") { role = "r"; model = "m" } }
    graph {
        start at "n"
        node("n") {
            agent = "$0
        }
    }
}"#;
    assert_eq!(completion(src), "a (Class) — r\n    => agent = \"a\n");
}

// ---------------------------------------------------------------- hover

#[test]
fn hover_a_node() {
    insta::assert_snapshot!(hover(&DOC.replace("goto \"review\"", "goto \"$0review\"")));
}

#[test]
fn hover_a_node_with_kdoc() {
    insta::assert_snapshot!(hover(&DOC.replace("node(\"write\")", "node(\"$0write\")")));
}

#[test]
fn hover_an_agent() {
    insta::assert_snapshot!(hover(
        &DOC.replace("agent = \"writer\"", "agent = \"$0writer\"")
    ));
}

#[test]
fn hover_a_variable() {
    insta::assert_snapshot!(hover(&DOC.replace("{article}\"", "{arti$0cle}\"")));
}

#[test]
fn hover_a_keyword_and_enum() {
    insta::assert_snapshot!(hover(
        &DOC.replace("onSuccess goto \"done\"", "onSu$0ccess goto \"done\"")
    ));
    insta::assert_snapshot!(hover(&DOC.replace("Models.GPT_4O", "Models.GPT_$04O")));
    insta::assert_snapshot!(hover(
        &DOC.replace("withFeedback retry", "withFee$0dback retry")
    ));
}

#[test]
fn hover_a_sub_workflow_target() {
    insta::assert_snapshot!(hover(
        &DOC.replace("target = \"summarizer\"", "target = \"$0summarizer\"")
    ));
}

// ---------------------------------------------------------------- symbols

fn render_symbols(out: &mut String, syms: &[DocumentSymbol], depth: usize) {
    for s in syms {
        let _ = writeln!(
            out,
            "{}{} {:?} {} [{}:{}-{}:{}]",
            "  ".repeat(depth),
            s.name,
            s.kind,
            s.detail.clone().unwrap_or_default(),
            s.range.start.line + 1,
            s.range.start.character + 1,
            s.range.end.line + 1,
            s.range.end.character + 1
        );
        render_symbols(out, s.children.as_deref().unwrap_or(&[]), depth + 1);
    }
}

#[test]
fn document_symbols() {
    let (engine, u, _, _) = open(DOC);
    let Some(DocumentSymbolResponse::Nested(syms)) = engine.document_symbol(DocumentSymbolParams {
        text_document: TextDocumentIdentifier { uri: u },
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    }) else {
        panic!("nested symbols expected")
    };
    let mut out = String::new();
    render_symbols(&mut out, &syms, 0);
    insta::assert_snapshot!(out);
}

// ---------------------------------------------------------------- formatting

#[test]
fn formatting_uses_the_formatter() {
    let (engine, u, _, text) = open("workflow(\"x\") {\ngraph { start at \"e\"; end(\"e\") }\n}\n");
    let engine = engine.with_formatter(|s| Ok(s.replace("\ngraph", "\n    graph")));
    let params = DocumentFormattingParams {
        text_document: TextDocumentIdentifier { uri: u },
        options: FormattingOptions::default(),
        work_done_progress_params: Default::default(),
    };
    let edits = engine.formatting(params.clone()).unwrap().unwrap();
    assert_eq!(
        apply(&text, &edits),
        "workflow(\"x\") {\n    graph { start at \"e\"; end(\"e\") }\n}\n"
    );
    let failing = engine.with_formatter(|_| Err("1 syntax error".to_string()));
    assert_eq!(failing.formatting(params).unwrap_err(), "1 syntax error");
}

#[test]
fn formatting_with_hensu_fmt() {
    let (engine, u, _, text) =
        open("workflow(\"x\") {\ngraph {   start at \"e\"\n end(\"e\") }\n}\n");
    let engine = engine.with_formatter(hensu_lsp::hensu_formatter);
    let params = DocumentFormattingParams {
        text_document: TextDocumentIdentifier { uri: u.clone() },
        options: FormattingOptions::default(),
        work_done_progress_params: Default::default(),
    };
    let edits = engine.formatting(params.clone()).unwrap().unwrap();
    let formatted = apply(&text, &edits);
    insta::assert_snapshot!(formatted);
    // Formatted text gives no edits; a syntax error is refused.
    let mut engine = engine;
    engine.open(u.clone(), 2, formatted);
    assert_eq!(engine.formatting(params.clone()).unwrap(), Some(Vec::new()));
    engine.open(u, 3, "workflow(\"x\") {".to_string());
    assert!(
        engine
            .formatting(params)
            .unwrap_err()
            .starts_with("not formatted:")
    );
}

// ---------------------------------------------------------------- semantic tokens

#[test]
fn semantic_tokens() {
    let src = "/** doc */\nworkflow(\"x\") {\n    graph {\n        start at \"n\"\n        node(\"n\") {\n            agent = \"a\"\n            prompt = \"\"\"\n                hi {topic}\n            \"\"\".trimIndent()\n            onScore { whenScore lessThan 70.0 goto \"e\" }\n        }\n        end(\"e\", ExitStatus.SUCCESS)\n    }\n}\n";
    let (engine, u, _, text) = open(src);
    let Some(SemanticTokensResult::Tokens(tokens)) =
        engine.semantic_tokens_full(SemanticTokensParams {
            text_document: TextDocumentIdentifier { uri: u },
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        })
    else {
        panic!("tokens expected")
    };
    let lines: Vec<&str> = text.split('\n').collect();
    let (mut line, mut col) = (0u32, 0u32);
    let mut out = String::new();
    for t in &tokens.data {
        if t.delta_line > 0 {
            line += t.delta_line;
            col = t.delta_start;
        } else {
            col += t.delta_start;
        }
        let l = lines[line as usize];
        let s: String = l
            .chars()
            .skip(col as usize)
            .take(t.length as usize)
            .collect();
        let _ = writeln!(
            out,
            "{}:{} {} {s}",
            line + 1,
            col + 1,
            hensu_lsp::methods::semantic_tokens::type_name(t.token_type)
        );
    }
    insta::assert_snapshot!(out);
}

// ---------------------------------------------------------------- code actions

#[test]
fn quick_fix_did_you_mean() {
    let src = DOC
        .replace("goto \"review\"", "goto \"reveiw\"")
        .replace("model = Models.GPT_4O", "model = Models.GPT_4P")
        .replace("role = \"Editor\"", "rol = \"Editor\"")
        .replace("about {topic}:", "about {topik}:");
    let (engine, u, _, text) = open(&src);
    let diags = engine.diagnostics(&u);
    let mut out = String::new();
    for d in &diags {
        let actions = engine
            .code_action(CodeActionParams {
                text_document: TextDocumentIdentifier { uri: u.clone() },
                range: d.range,
                context: CodeActionContext {
                    diagnostics: vec![d.clone()],
                    only: None,
                    trigger_kind: None,
                },
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            })
            .unwrap_or_default();
        for a in actions {
            let CodeActionOrCommand::CodeAction(a) = a else {
                continue;
            };
            let edits = a.edit.unwrap().changes.unwrap().remove(&u).unwrap();
            let fixed = apply(&text, &edits);
            let line = edits[0].range.start.line as usize;
            let _ = writeln!(
                out,
                "{} [{}] => {}",
                a.title,
                a.diagnostics.map_or(0, |d| d.len()),
                fixed.lines().nth(line).unwrap_or("").trim()
            );
        }
    }
    insta::assert_snapshot!(out);
}

// ---------------------------------------------------------------- robustness

/// Every method at many cursor positions of every example workflow, and of truncated copies:
/// nothing panics, and the examples (with their prompts and rubrics) have no diagnostics.
#[test]
fn every_method_everywhere_on_the_examples() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut host = MemoryHost::new();
    let mut docs = Vec::new();
    for dir in ["prompts", "rubrics", "workflows"] {
        let mut entries: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            let text = std::fs::read_to_string(&p).unwrap();
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            host.insert(format!("/ex/{dir}/{name}"), text.clone());
            if dir == "workflows" {
                docs.push((name, text));
            }
        }
    }
    assert!(docs.len() >= 10);
    let mut engine = Engine::new(host).with_formatter(hensu_lsp::hensu_formatter);
    for (name, text) in &docs {
        let u = uri(&format!("/ex/workflows/{name}"));
        engine.open(u.clone(), 1, text.clone());
        let diags = engine.diagnostics(&u);
        assert!(diags.is_empty(), "{name}: {diags:?}");
        sweep(&engine, &u, text);
        // Half-typed: cut the file at several points.
        for cut in [text.len() / 3, text.len() / 2, text.len() * 5 / 6] {
            let mut cut = cut;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            engine.open(u.clone(), 2, text[..cut].to_string());
            let _ = engine.diagnostics(&u);
            sweep(&engine, &u, &text[..cut]);
        }
        engine.close(&u);
    }
}

fn sweep(engine: &Engine, u: &Uri, text: &str) {
    let doc = TextDocumentIdentifier { uri: u.clone() };
    let _ = engine.document_symbol(DocumentSymbolParams {
        text_document: doc.clone(),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    });
    let _ = engine.semantic_tokens_full(SemanticTokensParams {
        text_document: doc.clone(),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    });
    let _ = engine.formatting(DocumentFormattingParams {
        text_document: doc.clone(),
        options: FormattingOptions::default(),
        work_done_progress_params: Default::default(),
    });
    let lines: Vec<&str> = text.split('\n').collect();
    for (line, l) in lines.iter().enumerate() {
        let width = l.chars().map(char::len_utf16).sum::<usize>() as u32;
        for character in [
            0,
            width / 3,
            width / 2,
            width.saturating_sub(2),
            width,
            width + 3,
        ] {
            let pos = Position::new(line as u32, character);
            let _ = engine.completion(CompletionParams {
                text_document_position: tdp(u, pos),
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
                context: None,
            });
            let _ = engine.hover(HoverParams {
                text_document_position_params: tdp(u, pos),
                work_done_progress_params: Default::default(),
            });
            let _ = engine.definition(GotoDefinitionParams {
                text_document_position_params: tdp(u, pos),
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            });
            let _ = engine.references(ReferenceParams {
                text_document_position: tdp(u, pos),
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
                context: ReferenceContext {
                    include_declaration: true,
                },
            });
            let _ = engine.prepare_rename(tdp(u, pos));
            let _ = engine.rename(RenameParams {
                text_document_position: tdp(u, pos),
                new_name: "renamed".to_string(),
                work_done_progress_params: Default::default(),
            });
            let _ = engine.code_action(CodeActionParams {
                text_document: TextDocumentIdentifier { uri: u.clone() },
                range: Range::new(pos, Position::new(pos.line + 1, 0)),
                context: CodeActionContext::default(),
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            });
        }
    }
}
