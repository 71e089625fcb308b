//! The document outline.

use std::fmt::Write as _;

use lsp_types::*;

use crate::*;

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
