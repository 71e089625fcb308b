//! Document highlight: every use of the symbol under the cursor, declarations and writes as
//! `WRITE`.

use std::fmt::Write as _;

use lsp_types::*;

use crate::*;

fn highlight(src: &str) -> String {
    let (engine, u, pos, text) = open(src);
    let Some(hs) = engine.document_highlight(DocumentHighlightParams {
        text_document_position_params: tdp(&u, pos),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    }) else {
        return "(none)".to_string();
    };
    let mut out = String::new();
    for h in hs {
        let _ = writeln!(out, "{:?} {}", h.kind.unwrap(), show_range(&text, h.range));
    }
    out
}

#[test]
fn highlight_a_node() {
    insta::assert_snapshot!(highlight(
        &DOC.replace("goto \"failed\"", "goto \"fai$0led\"")
    ));
}

#[test]
fn highlight_a_variable_with_placeholders() {
    insta::assert_snapshot!(highlight(
        &DOC.replace("writes(\"article\")", "writes(\"art$0icle\")")
    ));
}

#[test]
fn no_highlight_off_a_symbol() {
    assert_eq!(highlight(&DOC.replace("state {", "sta$0te {")), "(none)");
}
