//! Folding ranges: blocks, multi-line argument lists and comments.

use std::fmt::Write as _;

use lsp_types::*;

use crate::*;

#[test]
fn folding_ranges() {
    let (engine, u, _, text) = open(DOC);
    let folds = engine
        .folding_range(FoldingRangeParams {
            text_document: TextDocumentIdentifier { uri: u },
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        })
        .unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    for f in folds {
        let _ = writeln!(
            out,
            "{}-{} {:?}: {} … {}",
            f.start_line + 1,
            f.end_line + 1,
            f.kind,
            lines[f.start_line as usize].trim(),
            lines[f.end_line as usize].trim()
        );
    }
    insta::assert_snapshot!(out);
}
