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

/// The workflow sources of the repository (`examples/`, `tests/fixtures/`, hensu-sema's
/// fixtures): every `.hwf` and `.kt` file, and `.txt` fixtures too with `with_txt`, sorted.
pub fn repository_workflows(with_txt: bool) -> Vec<std::path::PathBuf> {
    fn walk(dir: &std::path::Path, with_txt: bool, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("a directory") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                walk(&path, with_txt, out);
            } else if path
                .extension()
                .is_some_and(|e| e == "hwf" || e == "kt" || (with_txt && e == "txt"))
            {
                out.push(path);
            }
        }
    }
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let mut files = Vec::new();
    for dir in [
        "examples",
        "tests/fixtures",
        "crates/hensu-sema/tests/fixtures",
    ] {
        walk(&root.join(dir), with_txt, &mut files);
    }
    files.sort();
    files
}
