//! Inlay hints: target node kinds, variable types at their uses, revise budgets.

use lsp_types::*;

use crate::*;

#[test]
fn inlay_hints() {
    let (engine, u, _, text) = open(DOC);
    let lines = text.lines().count() as u32;
    let hints = engine
        .inlay_hint(InlayHintParams {
            text_document: TextDocumentIdentifier { uri: u },
            range: Range::new(Position::new(0, 0), Position::new(lines, 0)),
            work_done_progress_params: Default::default(),
        })
        .unwrap();
    // Every hint inserted into its line.
    let mut shown: Vec<String> = text.lines().map(str::to_string).collect();
    let mut by_line = hints.clone();
    by_line.sort_by_key(|h| (h.position.line, std::cmp::Reverse(h.position.character)));
    for h in by_line {
        let InlayHintLabel::String(label) = &h.label else {
            panic!("a string label expected");
        };
        let line = &mut shown[h.position.line as usize];
        let at = offset(line, Position::new(0, h.position.character));
        let pad = if h.padding_left == Some(true) {
            " "
        } else {
            ""
        };
        line.insert_str(at, &format!("{pad}⟨{label}⟩"));
    }
    let out: Vec<String> = shown
        .into_iter()
        .filter(|l| l.contains('⟨'))
        .map(|l| l.trim().to_string())
        .collect();
    insta::assert_snapshot!(out.join("\n"));
}

#[test]
fn inlay_hints_only_in_the_range() {
    let (engine, u, _, text) = open(DOC);
    let line = text
        .lines()
        .position(|l| l.contains("goto \"review\""))
        .unwrap() as u32;
    let hints = engine
        .inlay_hint(InlayHintParams {
            text_document: TextDocumentIdentifier { uri: u },
            range: Range::new(Position::new(line, 0), Position::new(line, 200)),
            work_done_progress_params: Default::default(),
        })
        .unwrap();
    assert_eq!(hints.len(), 1, "{hints:?}");
    assert!(
        matches!(&hints[0].label, InlayHintLabel::String(l) if l == ": standard node"),
        "{hints:?}"
    );
}
