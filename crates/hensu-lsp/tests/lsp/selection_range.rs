//! Expand selection: string content, string, line, enclosing brackets, document.

use lsp_types::*;

use crate::*;

#[test]
fn selection_ranges_grow_outwards() {
    let (engine, u, pos, text) = open(&DOC.replace("goto \"summarize\"", "goto \"summa$0rize\""));
    let ranges = engine
        .selection_range(SelectionRangeParams {
            text_document: TextDocumentIdentifier { uri: u },
            positions: vec![pos],
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        })
        .unwrap();
    let mut out = String::new();
    let mut r = Some(&ranges[0]);
    let mut previous: Option<(usize, usize)> = None;
    while let Some(s) = r {
        let (a, b) = (offset(&text, s.range.start), offset(&text, s.range.end));
        if let Some((pa, pb)) = previous {
            assert!(
                a <= pa && pb <= b && (a, b) != (pa, pb),
                "each range contains the previous"
            );
        }
        previous = Some((a, b));
        let shown = &text[a..b];
        let first = shown.lines().next().unwrap_or("");
        let n = shown.lines().count();
        out.push_str(&format!(
            "{}:{} {first}{}\n",
            s.range.start.line + 1,
            s.range.start.character + 1,
            if n > 1 {
                format!(" … ({n} lines)")
            } else {
                String::new()
            }
        ));
        r = s.parent.as_deref();
    }
    insta::assert_snapshot!(out);
}
