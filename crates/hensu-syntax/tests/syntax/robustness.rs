//! Robustness: no panic, no stack overflow, every diagnostic inside the input — on random token
//! sequences, random bytes and pathological inputs.

use proptest::prelude::*;

use crate::common::assert_spans_inside;

const VOCAB: &[&str] = &[
    "fun",
    "w",
    "(",
    ")",
    "=",
    "workflow",
    "\"x\"",
    "{",
    "}",
    "\n",
    ";",
    ",",
    ".",
    "..",
    "+",
    "-",
    "node",
    "graph",
    "onSuccess",
    "goto",
    "retry",
    "3",
    "otherwise",
    "withFeedback",
    "`in`",
    "50.0",
    "1e-3",
    "60000L",
    "to",
    "mapOf",
    "listOf",
    "val",
    "var",
    "if",
    "when",
    "for",
    "->",
    "\"\"\"\n  a\n  \"\"\"",
    ".trimIndent()",
    ".trimMargin(\"|\")",
    "\"$x\"",
    "\"\\q\"",
    "\"open",
    "/* c */",
    "// c\n",
    "/** d */",
    "/* open",
    "#",
    "@",
    "?",
    "import",
    "package",
    "a.b.*",
    "true",
    "null",
    "return",
    "\u{feff}",
    "é",
    "\r\n",
    "[",
    "]",
    ":",
    "12abc",
    "0x",
    "`",
    "\"\\u12\"",
];

fn check(src: &str) {
    let lexed = hensu_syntax::lex(src);
    assert_spans_inside(src, &lexed.diagnostics);
    for t in &lexed.tokens {
        assert!(t.span.end as usize <= src.len());
    }
    let parsed = hensu_syntax::parse(src);
    assert_spans_inside(src, &parsed.diagnostics);
    assert!(parsed.file.span.end as usize == src.len());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_token_sequences(words in proptest::collection::vec(proptest::sample::select(VOCAB), 0..120),
                              spaces in proptest::collection::vec(0u8..3, 0..120)) {
        let mut src = String::new();
        for (i, w) in words.iter().enumerate() {
            src.push_str(w);
            match spaces.get(i) {
                Some(0) => {}
                Some(1) => src.push(' '),
                _ => src.push('\n'),
            }
        }
        check(&src);
    }

    #[test]
    fn random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let (text, diags) = hensu_syntax::decode_source(&bytes);
        assert_spans_inside(&text, &diags);
        let parsed = hensu_syntax::parse_decoded(&text, diags);
        assert_spans_inside(&text, &parsed.diagnostics);
    }

    #[test]
    fn random_printable_text(src in "[ -~\n\t]{0,300}") {
        check(&src);
    }
}

/// Mutations of the fixtures: truncations and single-byte deletions never panic.
#[test]
fn truncated_fixtures() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/syntax/ok"
    );
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let src = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let cuts: Vec<usize> = (0..src.len())
            .step_by(97)
            .filter(|&i| src.is_char_boundary(i))
            .collect();
        for cut in cuts {
            check(&src[..cut]);
            let mut deleted = src.clone();
            if deleted.is_char_boundary(cut + 1) {
                deleted.replace_range(cut..cut + 1, "");
                check(&deleted);
            }
            n += 1;
        }
    }
    assert!(n > 50);
}

fn has_code(src: &str, code: &str) -> bool {
    let parsed = hensu_syntax::parse(src);
    assert_spans_inside(src, &parsed.diagnostics);
    parsed.diagnostics.iter().any(|d| d.code == code)
}

#[test]
fn hundred_thousand_nested_braces() {
    let src = "{".repeat(100_000);
    assert!(has_code(&src, "E0016"));
    let closed = format!(
        "workflow(\"x\") {}{}",
        "{".repeat(100_000),
        "}".repeat(100_000)
    );
    assert!(has_code(&closed, "E0016"));
    let parens = format!(
        "workflow(\"x\") {{ x = {}1{} }}",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    assert!(has_code(&parens, "E0016"));
    let maps = format!(
        "workflow(\"x\") {{ send(\"h\", {}1{}) }}",
        "mapOf(\"a\" to ".repeat(50_000),
        ")".repeat(50_000)
    );
    assert!(has_code(&maps, "E0016"));
    let calls = format!(
        "workflow(\"x\") {{ {}{} }}",
        "node(\"a\") { ".repeat(50_000),
        "} ".repeat(50_000)
    );
    assert!(has_code(&calls, "E0016"));
    // Just below the limit parses clean.
    let ok = format!(
        "workflow(\"x\") {{ x = {}1{} }}",
        "(".repeat(hensu_syntax::MAX_DEPTH - 2),
        ")".repeat(hensu_syntax::MAX_DEPTH - 2)
    );
    let parsed = hensu_syntax::parse(&ok);
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
}

#[test]
fn fifty_megabyte_string_literal() {
    let big = "a".repeat(50 * 1024 * 1024);
    let src = format!("workflow(\"x\") {{\n    description = \"{big}\"\n}}\n");
    let parsed = hensu_syntax::parse(&src);
    assert!(parsed.diagnostics.is_empty());
    let unterminated = format!("workflow(\"x\") {{\n    description = \"\"\"{big}\n}}\n");
    assert!(has_code(&unterminated, "E0002"));
}

#[test]
fn million_line_file() {
    // One million lines; in debug builds most of them are comments and blank lines so the test
    // stays fast, in release builds they are all statements.
    let statements = if cfg!(debug_assertions) {
        50_000
    } else {
        1_000_000
    };
    let mut src = String::with_capacity(30_000_000);
    src.push_str("fun w() = workflow(\"big\") {\n    graph {\n        node(\"a\") {\n");
    let mut lines = 3;
    for i in 0..statements {
        src.push_str("            onSuccess goto \"b\"\n");
        lines += 1;
        if i % 1000 == 0 {
            src.push_str("            // progress\n");
            lines += 1;
        }
    }
    while lines < 1_000_000 - 4 {
        src.push_str(if lines % 2 == 0 {
            "\n"
        } else {
            "            // filler\n"
        });
        lines += 1;
    }
    src.push_str("        }\n    }\n}\n");
    assert!(src.lines().count() >= 999_999);
    let parsed = hensu_syntax::parse(&src);
    assert!(
        parsed.diagnostics.is_empty(),
        "{:?}",
        &parsed.diagnostics[..1]
    );
}

#[test]
fn invalid_utf8_is_reported_not_a_crash() {
    let bytes = b"workflow(\"x\") {\n    description = \"caf\xe9\"\n    \xff\xfe\n}\n";
    let (text, diags) = hensu_syntax::decode_source(bytes);
    assert_eq!(diags.len(), 2);
    let parsed = hensu_syntax::parse_decoded(&text, diags);
    let codes: Vec<_> = parsed.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, vec!["E0001", "E0001"], "{:#?}", parsed.diagnostics);
    assert_spans_inside(&text, &parsed.diagnostics);
    // Valid UTF-8 is borrowed unchanged.
    let (text, diags) = hensu_syntax::decode_source(b"workflow(\"x\") {}");
    assert!(matches!(text, std::borrow::Cow::Borrowed(_)) && diags.is_empty());
}

#[test]
fn empty_and_whitespace_inputs() {
    for src in [
        "",
        " ",
        "\n\n",
        "\u{feff}",
        ";;;",
        "// only a comment",
        "/** doc */",
    ] {
        check(src);
    }
}
