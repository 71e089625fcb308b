//! Formatting with hensu-fmt: one edit for the whole document, none when it is formatted, an
//! error (the document untouched) when it has syntax errors.

use lsp_types::*;

use crate::*;

#[test]
fn formatting_with_hensu_fmt() {
    let (engine, u, _, text) =
        open("workflow(\"x\") {\ngraph {   start at \"e\"\n end(\"e\") }\n}\n");
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

/// A CRLF document is formatted with CRLF line breaks.
#[test]
fn formatting_keeps_crlf() {
    let (engine, u, _, text) =
        open("workflow(\"x\") {\r\ngraph {   start at \"e\"\r\n end(\"e\") }\r\n}\r\n");
    let edits = engine
        .formatting(DocumentFormattingParams {
            text_document: TextDocumentIdentifier { uri: u },
            options: FormattingOptions::default(),
            work_done_progress_params: Default::default(),
        })
        .unwrap()
        .unwrap();
    assert_eq!(
        apply(&text, &edits),
        "workflow(\"x\") {\r\n    graph {\r\n        start at \"e\"\r\n        end(\"e\")\r\n    }\r\n}\r\n"
    );
}
