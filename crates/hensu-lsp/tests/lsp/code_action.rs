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
