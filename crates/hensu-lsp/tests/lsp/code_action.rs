//! Quick fixes from the diagnostics' structured suggestions.

use std::fmt::Write as _;

use lsp_types::*;

use crate::*;

/// End to end: the checker's did-you-mean diagnostics carry suggestions and each becomes a quick
/// fix. (`src/methods/code_action.rs` tests the conversion itself with constructed suggestions.)
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

/// The titles of the actions for the diagnostics with `code`, and the document after applying
/// the first one's text edits (or its resource operations, rendered).
fn fix(src: &str, code: &str) -> (Vec<String>, String) {
    let (engine, u, _, text) = open(src);
    let mut titles = Vec::new();
    let mut applied = String::new();
    for d in engine
        .diagnostics(&u)
        .into_iter()
        .filter(|d| d.code == Some(NumberOrString::String(code.to_string())))
    {
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
            assert_eq!(a.diagnostics.as_ref().map(Vec::len), Some(1), "linked");
            titles.push(a.title.clone());
            if !applied.is_empty() {
                continue;
            }
            let edit = a.edit.unwrap();
            if let Some(mut changes) = edit.changes {
                applied = apply(&text, &changes.remove(&u).unwrap());
            } else if let Some(DocumentChanges::Operations(ops)) = edit.document_changes {
                for op in ops {
                    if let DocumentChangeOperation::Op(ResourceOp::Create(c)) = op {
                        applied.push_str(&format!("create {}\n", c.uri.as_str()));
                    }
                }
            }
        }
    }
    (titles, applied)
}

/// E0402 / E0403: declare the variable in `state { }`; afterwards the error is gone.
#[test]
fn quick_fix_declares_an_undeclared_variable() {
    let src = DOC.replace("writes(\"verdict\")", "writes(\"outcome\")");
    let (titles, fixed) = fix(&src, "E0402");
    assert_eq!(titles, ["Declare `outcome` in `state { }`"]);
    assert!(
        fixed.contains(
            "        variable(\"summary\", VarType.STRING)\n        variable(\"outcome\", VarType.STRING)\n    }\n"
        ),
        "{fixed}"
    );
    let (engine, u, _, _) = open(&fixed);
    assert!(
        engine
            .diagnostics(&u)
            .iter()
            .all(|d| d.code != Some(NumberOrString::String("E0402".to_string()))),
    );
    // A placeholder, with a one-line state block.
    let start = DOC.find("    state {").unwrap();
    let end = DOC.find("    agents {").unwrap();
    let one_line = format!(
        "{}    state {{ input(\"topic\", VarType.STRING); variable(\"article\", VarType.STRING); variable(\"verdict\", VarType.STRING); variable(\"summary\", VarType.STRING) }}\n\n{}",
        &DOC[..start],
        &DOC[end..]
    )
    .replace("about {topic}.", "about {subject}.");
    let (titles, fixed) = fix(&one_line, "E0403");
    assert_eq!(titles, ["Declare `subject` in `state { }`"]);
    assert!(
        fixed.contains(
            "variable(\"summary\", VarType.STRING); variable(\"subject\", VarType.STRING) }"
        ),
        "{fixed}"
    );
}

/// E0305: a reviewed node with only `onApproval` gets an `onRejection` arm to a failing end.
#[test]
fn quick_fix_adds_the_missing_review_arm() {
    let src = DOC.replace(
        "            writes(\"verdict\")\n            onCondition(\"verdict\") {\n                whenValue equalTo \"ok\" goto \"summarize\"\n                otherwise goto \"failed\"\n            }\n",
        "            review(ReviewMode.REQUIRED)\n            onApproval goto \"summarize\"\n",
    );
    let (titles, fixed) = fix(&src, "E0305");
    assert_eq!(titles, ["Add the missing `onRejection` arm"]);
    assert!(
        fixed.contains(
            "            onApproval goto \"summarize\"\n            onRejection goto \"failed\"\n"
        ),
        "{fixed}"
    );
}

/// E0208: a missing prompt file is created in the project's `prompts/`.
#[test]
fn quick_fix_creates_a_missing_prompt_file() {
    let src = DOC.replace(
        "prompt = \"Write an article about {topic}.\"",
        "prompt = \"drafts/first.md\"",
    );
    let (titles, ops) = fix(&src, "E0208");
    assert_eq!(titles, ["Create `prompts/drafts/first.md`"]);
    assert_eq!(ops, "create file:///p/prompts/drafts/first.md\n");
}

/// Any warning: `@Suppress("W…")` on the declaration holding it, on its own line at the
/// statement's indentation; afterwards the warning is gone. A statement that already has a
/// `@Suppress(…)` gets the code added to it (Kotlin's `Suppress` is not repeatable).
#[test]
fn quick_fix_suppresses_a_warning_on_its_declaration() {
    let idle = "        agent(\"idle\") { role = \"Spare\"; model = Models.GPT_4O }\n";
    let src = DOC.replace("    agents {\n", &format!("    agents {{\n{idle}"));
    let (titles, fixed) = fix(&src, "W0313");
    assert_eq!(titles, ["Suppress W0313 on `agent(\"idle\")`"]);
    assert!(
        fixed.contains(&format!(
            "    agents {{\n        @Suppress(\"W0313\")\n{idle}"
        )),
        "{fixed}"
    );
    let (engine, u, _, _) = open(&fixed);
    assert!(
        engine
            .diagnostics(&u)
            .iter()
            .all(|d| d.code != Some(NumberOrString::String("W0313".to_string()))),
    );

    let annotated = src.replace(idle, &format!("        @Suppress(\"W0307\")\n{idle}"));
    let (_, fixed) = fix(&annotated, "W0313");
    assert!(
        fixed.contains("        @Suppress(\"W0307\", \"W0313\")\n        agent(\"idle\")"),
        "{fixed}"
    );
}
