//! `textDocument/codeAction`: one quick fix per structured suggestion
//! ([`hensu_diagnostics::Suggestion`]) of the diagnostics under the requested range — the
//! suggestion's span is replaced by its replacement. Machine-applicable suggestions are marked
//! preferred, so an editor may apply them without asking. Beyond those, fixes that write code
//! ([`fixes`]): declare an undeclared variable in `state { }`, add the missing review arm,
//! create a missing prompt or rubric file; and for any warning, suppress it on its declaration
//! ([`suppress`]).

mod fixes;
mod suppress;

use std::collections::HashMap;

use hensu_diagnostics::{Applicability, Suggestion};
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, CodeActionResponse,
    NumberOrString, TextEdit, Uri, WorkspaceEdit,
};

use crate::analysis::Analysis;
use crate::engine::Engine;

impl Engine {
    pub fn code_action(&self, params: CodeActionParams) -> Option<CodeActionResponse> {
        let uri = &params.text_document.uri;
        let a = self.analysis(uri)?;
        let want = a.lines.span(&a.text, params.range);
        let mut out = Vec::new();
        for d in &a.diagnostics {
            let span = d.primary.span;
            if span.end < want.start || span.start > want.end {
                continue;
            }
            // The client's copies of this diagnostic, so the editor links the fix to it.
            let matching: Vec<lsp_types::Diagnostic> = params
                .context
                .diagnostics
                .iter()
                .filter(|c| {
                    c.range == a.range(span)
                        && c.code == Some(NumberOrString::String(d.code.to_string()))
                })
                .cloned()
                .collect();
            // A document's own diagnostics suggest edits in that document only.
            for s in d.suggestions.iter().filter(|s| s.file == a.file) {
                out.push(CodeActionOrCommand::CodeAction(quick_fix(
                    uri, &a, s, &matching,
                )));
            }
            let root = self.root_of(uri);
            for fix in fixes::fixes(uri, root.as_deref(), &a, d, &matching) {
                out.push(CodeActionOrCommand::CodeAction(fix));
            }
            if let Some(mut fix) = suppress::suppress_warning(uri, &a, d) {
                fix.diagnostics = (!matching.is_empty()).then(|| matching.clone());
                out.push(CodeActionOrCommand::CodeAction(fix));
            }
        }
        Some(out)
    }
}

fn quick_fix(
    uri: &Uri,
    a: &Analysis,
    s: &Suggestion,
    matching: &[lsp_types::Diagnostic],
) -> CodeAction {
    let mut changes = HashMap::new();
    changes.insert(
        uri.clone(),
        vec![TextEdit {
            range: a.range(s.span),
            new_text: s.replacement.clone(),
        }],
    );
    CodeAction {
        title: title(s),
        kind: Some(CodeActionKind::QUICKFIX),
        diagnostics: (!matching.is_empty()).then(|| matching.to_vec()),
        edit: Some(WorkspaceEdit {
            changes: Some(changes),
            ..WorkspaceEdit::default()
        }),
        is_preferred: Some(s.applicability == Applicability::MachineApplicable),
        ..CodeAction::default()
    }
}

/// The suggestion's message as a menu entry (capitalised, as editors show actions), or
/// "Replace with `x`" when it has none.
fn title(s: &Suggestion) -> String {
    let mut chars = s.message.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => format!("Replace with `{}`", s.replacement),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

    use std::fmt::Write as _;
    use std::str::FromStr;
    use std::sync::Arc;

    use hensu_diagnostics::{Applicability, FileId, Span, Suggestion};
    use lsp_types::{
        CodeActionContext, CodeActionOrCommand, CodeActionParams, Position, Range,
        TextDocumentIdentifier, Uri,
    };

    use crate::{Engine, MemoryHost};

    const DOC: &str = r#"workflow("fix") {
    state {
        input("topic", VarType.STRING)
    }
    agents {
        agent("writer") { rol = "Writer"; model = Models.GPT_4P }
    }
    graph {
        start at "write"
        node("write") {
            agent = "writer"
            prompt = "Write about {topik}."
            onSuccess goto "dnoe"
        }
        end("done")
    }
}
"#;

    fn open() -> (Engine, Uri) {
        let mut engine = Engine::new(MemoryHost::new());
        let uri = Uri::from_str("file:///p/workflows/fix.hwf").unwrap();
        engine.open(uri.clone(), 1, DOC.to_string());
        // The checker attaches its own suggestions; these tests script them one by one.
        let doc = engine.docs.get_mut(&uri).unwrap();
        for d in &mut Arc::get_mut(&mut doc.analysis).unwrap().diagnostics {
            d.suggestions.clear();
        }
        (engine, uri)
    }

    /// Attaches a suggestion replacing `typo` to the diagnostic whose primary span holds it, as
    /// the checker fills `Diagnostic::suggestions`.
    fn suggest(
        engine: &mut Engine,
        uri: &Uri,
        typo: &str,
        replacement: &str,
        applicability: Applicability,
    ) {
        let doc = engine.docs.get_mut(uri).unwrap();
        let a = Arc::get_mut(&mut doc.analysis).unwrap();
        let start = u32::try_from(a.text.find(typo).unwrap()).unwrap();
        let span = Span::new(start, start + u32::try_from(typo.len()).unwrap());
        let file = a.file;
        let d = a
            .diagnostics
            .iter_mut()
            .find(|d| d.primary.span.start <= span.start && span.end <= d.primary.span.end)
            .unwrap_or_else(|| panic!("no diagnostic covers `{typo}`"));
        d.suggestions.push(Suggestion {
            file,
            span,
            replacement: replacement.to_string(),
            message: format!("replace with `{replacement}`"),
            applicability,
        });
    }

    fn params(
        uri: &Uri,
        range: Range,
        diagnostics: Vec<lsp_types::Diagnostic>,
    ) -> CodeActionParams {
        CodeActionParams {
            text_document: TextDocumentIdentifier { uri: uri.clone() },
            range,
            context: CodeActionContext {
                diagnostics,
                only: None,
                trigger_kind: None,
            },
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        }
    }

    /// Every action for every published diagnostic: title, linked diagnostics, preferred, and
    /// the edited line.
    fn actions(engine: &Engine, uri: &Uri) -> String {
        let text = engine.analysis(uri).unwrap().text.clone();
        let mut out = String::new();
        for d in engine.diagnostics(uri) {
            let actions = engine
                .code_action(params(uri, d.range, vec![d.clone()]))
                .unwrap();
            for action in actions {
                let CodeActionOrCommand::CodeAction(action) = action else {
                    panic!("a code action expected");
                };
                let mut edits = action.edit.unwrap().changes.unwrap().remove(uri).unwrap();
                assert_eq!(edits.len(), 1);
                let edit = edits.remove(0);
                let a = engine.analysis(uri).unwrap();
                let span = a.lines.span(&a.text, edit.range);
                let mut fixed = text.to_string();
                fixed.replace_range(span.range(), &edit.new_text);
                let line = fixed.lines().nth(edit.range.start.line as usize).unwrap();
                let _ = writeln!(
                    out,
                    "{} [{}]{} => {}",
                    action.title,
                    action.diagnostics.map_or(0, |d| d.len()),
                    if action.is_preferred == Some(true) {
                        " preferred"
                    } else {
                        ""
                    },
                    line.trim()
                );
            }
        }
        out
    }

    #[test]
    fn one_quick_fix_per_suggestion() {
        let (mut engine, uri) = open();
        suggest(
            &mut engine,
            &uri,
            "dnoe",
            "done",
            Applicability::MachineApplicable,
        );
        suggest(
            &mut engine,
            &uri,
            "GPT_4P",
            "GPT_4O",
            Applicability::MachineApplicable,
        );
        suggest(
            &mut engine,
            &uri,
            "rol",
            "role",
            Applicability::MachineApplicable,
        );
        suggest(
            &mut engine,
            &uri,
            "topik",
            "topic",
            Applicability::MaybeIncorrect,
        );
        // Two candidates for one diagnostic: two actions, neither certain.
        suggest(
            &mut engine,
            &uri,
            "topik",
            "topics",
            Applicability::MaybeIncorrect,
        );
        assert_eq!(
            actions(&engine, &uri),
            "Suppress W0308 on `input(\"topic\", VarType.STRING)` [1] => @Suppress(\"W0308\")\n\
             Replace with `role` [1] preferred => agent(\"writer\") { role = \"Writer\"; model = Models.GPT_4P }\n\
             Replace with `GPT_4O` [1] preferred => agent(\"writer\") { rol = \"Writer\"; model = Models.GPT_4O }\n\
             Replace with `topic` [1] => prompt = \"Write about {topic}.\"\n\
             Replace with `topics` [1] => prompt = \"Write about {topics}.\"\n\
             Declare `topik` in `state { }` [1] => variable(\"topik\", VarType.STRING)\n\
             Replace with `done` [1] preferred => onSuccess goto \"done\"\n"
        );
    }

    /// Help prose ("did you mean `done`?") is for people: without a structured suggestion there
    /// is no replacement quick fix (only the code-writing fix for the undeclared placeholder),
    /// and a suggestion for another file is not offered in this one.
    #[test]
    fn no_quick_fix_without_a_suggestion_for_this_file() {
        let (mut engine, uri) = open();
        let declare = "Suppress W0308 on `input(\"topic\", VarType.STRING)` [1] => @Suppress(\"W0308\")\n\
                       Declare `topik` in `state { }` [1] => variable(\"topik\", VarType.STRING)\n";
        assert_eq!(actions(&engine, &uri), declare);
        let doc = engine.docs.get_mut(&uri).unwrap();
        let a = Arc::get_mut(&mut doc.analysis).unwrap();
        let d = &mut a.diagnostics[0];
        d.suggestions.push(Suggestion {
            file: FileId(a.file.0 + 1),
            span: d.primary.span,
            replacement: "elsewhere".to_string(),
            message: String::new(),
            applicability: Applicability::MachineApplicable,
        });
        assert_eq!(actions(&engine, &uri), declare);
    }

    #[test]
    fn only_diagnostics_under_the_range() {
        let (mut engine, uri) = open();
        suggest(
            &mut engine,
            &uri,
            "dnoe",
            "done",
            Applicability::MachineApplicable,
        );
        let first_line = Range::new(Position::new(0, 0), Position::new(0, 3));
        let away = engine
            .code_action(params(&uri, first_line, Vec::new()))
            .unwrap();
        assert!(away.is_empty(), "{away:?}");
        let goto = DOC.lines().position(|l| l.contains("dnoe")).unwrap() as u32;
        let on = Range::new(Position::new(goto, 0), Position::new(goto + 1, 0));
        let actions = engine.code_action(params(&uri, on, Vec::new())).unwrap();
        assert_eq!(actions.len(), 1);
        let CodeActionOrCommand::CodeAction(action) = &actions[0] else {
            panic!("a code action expected");
        };
        assert_eq!(action.title, "Replace with `done`");
        assert_eq!(
            action.diagnostics, None,
            "the client sent no diagnostics to link"
        );
    }

    #[test]
    fn a_suggestion_without_a_message_is_titled_by_its_replacement() {
        let s = Suggestion {
            file: FileId(0),
            span: Span::new(0, 1),
            replacement: "review".to_string(),
            message: String::new(),
            applicability: Applicability::MaybeIncorrect,
        };
        assert_eq!(super::title(&s), "Replace with `review`");
    }
}
