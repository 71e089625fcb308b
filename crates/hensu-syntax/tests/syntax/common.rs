//! Helpers shared by the test modules.

use hensu_diagnostics::{Diagnostic, Files, render_human, render_json};

/// Human rendering (no colour) of `diags` against `src`.
pub fn human(name: &str, src: &str, diags: &[Diagnostic]) -> String {
    let files = Files::single(name, src);
    render_human(&files, diags, false)
}

/// JSON rendering of `diags` against `src`.
pub fn json(name: &str, src: &str, diags: &[Diagnostic]) -> String {
    let files = Files::single(name, src);
    render_json(&files, diags)
}

/// Every span of every diagnostic lies inside the input and on char boundaries.
pub fn assert_spans_inside(src: &str, diags: &[Diagnostic]) {
    for d in diags {
        for span in std::iter::once(d.primary.span).chain(d.secondary.iter().map(|l| l.span)) {
            assert!(span.start <= span.end, "inverted span {span:?} in {d:?}");
            assert!(
                (span.end as usize) <= src.len(),
                "span {span:?} outside input of {} bytes: {d:?}",
                src.len()
            );
            assert!(
                src.is_char_boundary(span.start as usize),
                "span start not on a char boundary: {d:?}"
            );
            assert!(
                src.is_char_boundary(span.end as usize),
                "span end not on a char boundary: {d:?}"
            );
        }
    }
}
