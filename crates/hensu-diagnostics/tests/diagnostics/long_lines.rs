//! Very long source lines (minified input, a 50 MB string literal) are shown as short excerpts
//! around each label: the rendered text stays small, whatever the line length. (The output size
//! bounds the work; ariadne used to print the whole line: 18–29 s and over 1 GB for 50 MB.)

use hensu_diagnostics::{Diagnostic, Files, Span, codes, render_human};

const FIFTY_MB: usize = 50 * 1024 * 1024;

fn big_line_file() -> (Files, usize) {
    let mut text = String::with_capacity(FIFTY_MB + 64);
    text.push_str("workflow(\"x\") { description = \"");
    let literal = text.len();
    text.extend(std::iter::repeat_n('a', FIFTY_MB));
    text.push_str("\" }\n");
    (Files::single("big.hwf", text), literal)
}

#[test]
fn a_label_on_a_fifty_megabyte_line_renders_a_short_excerpt() {
    let (files, literal) = big_line_file();
    let middle = literal + FIFTY_MB / 2;
    let d = Diagnostic::new(
        codes::E0003,
        "unterminated string",
        Span::from_range(literal - 1..literal + FIFTY_MB),
        "this string",
    )
    .with_label(Span::from_range(middle..middle + 3), "and here");
    for color in [false, true] {
        let out = render_human(&files, std::slice::from_ref(&d), color);
        assert!(out.len() < 2_000, "{} bytes", out.len());
        assert!(out.contains("big.hwf:1:31"), "{out}");
        assert!(out.contains("big.hwf:1:26214432"), "{out}");
        assert!(out.contains("this string"), "{out}");
        assert!(out.contains("and here"), "{out}");
        assert!(out.contains('…'), "{out}");
    }
}

#[test]
fn excerpt_underlines_the_label() {
    let mut line = "x".repeat(2_000);
    line.replace_range(1_000..1_005, "ERROR");
    let files = Files::single("f.hwf", format!("{line}\n"));
    let d = Diagnostic::new(
        codes::E0002,
        "unexpected token",
        Span::from_range(1_000..1_005),
        "here",
    );
    let out = render_human(&files, &[d], false);
    let lines: Vec<&str> = out.lines().collect();
    let source = lines.iter().position(|l| l.contains("ERROR")).expect(&out);
    let under = lines[source + 1];
    let column = |l: &str, needle: &str| l.find(needle).map(|i| l[..i].chars().count());
    assert_eq!(
        column(under, "^^^^^ here"),
        column(lines[source], "ERROR"),
        "{out}"
    );
    assert!(lines[source].starts_with(" 1 │ …"), "{out}");
    assert!(lines[source].ends_with('…'), "{out}");
}
