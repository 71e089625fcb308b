//! Kotlin string semantics: `trimIndent()`, `trimMargin()`, escapes, concatenation.

use hensu_syntax::{trim_indent, trim_margin, unescape};

/// The value of the first `description = …` assignment of a one-statement workflow.
fn value_of(expr_src: &str) -> String {
    let src = format!("workflow(\"x\") {{\n    description = {expr_src}\n}}\n");
    let parsed = hensu_syntax::parse(&src);
    assert!(
        parsed.diagnostics.is_empty(),
        "{expr_src}: {:?}",
        parsed.diagnostics
    );
    let hensu_syntax::ast::StmtKind::Expr(call) = &parsed.file.items[0].kind else {
        panic!("not an expr")
    };
    let hensu_syntax::ast::ExprKind::Call(call) = &call.kind else {
        panic!("not a call")
    };
    let stmt = &call.block.as_deref().unwrap().stmts[0];
    let hensu_syntax::ast::StmtKind::Assign { value, .. } = &stmt.kind else {
        panic!("not an assignment")
    };
    value.as_str().expect("a string expression").to_owned()
}

#[test]
fn trim_indent_drops_blank_first_and_last_lines_and_common_indent() {
    assert_eq!(trim_indent("\n    a\n      b\n    "), "a\n  b");
    assert_eq!(trim_indent("    a\n    b"), "a\nb");
    // The first line counts when it is not blank.
    assert_eq!(trim_indent("abc\n    def"), "abc\n    def");
}

#[test]
fn trim_indent_edge_cases() {
    assert_eq!(trim_indent(""), "");
    assert_eq!(trim_indent("   "), "");
    assert_eq!(trim_indent("\n"), "");
    // Only the first and last lines are dropped when blank; a blank middle line stays.
    assert_eq!(trim_indent("\n  \n"), "  ");
    assert_eq!(trim_indent("\n\n    a\n\n    b\n\n"), "\na\n\nb\n");
    // A blank line shorter than the indent becomes empty; a longer one keeps the excess.
    assert_eq!(trim_indent("\n    a\n  \n    b\n"), "a\n\nb");
    assert_eq!(trim_indent("\n    a\n      \n    b\n"), "a\n  \nb");
    // Tabs count as one whitespace character, like spaces.
    assert_eq!(trim_indent("\n\ta\n        b\n"), "a\n       b");
    assert_eq!(trim_indent("\n\t\ta\n\t\t\tb\n"), "a\n\tb");
    // No-break space is whitespace for Kotlin.
    assert_eq!(trim_indent("\u{a0}\u{a0}a"), "a");
    // CRLF and CR are line breaks, joined back with \n.
    assert_eq!(trim_indent("\r\n  a\r\n  b\r\n"), "a\nb");
    assert_eq!(trim_indent("\r  a\r    b\r"), "a\n  b");
    // Unicode content is kept intact.
    assert_eq!(trim_indent("\n  — ünïcödé →\n  ok\n"), "— ünïcödé →\nok");
}

#[test]
fn trim_margin_cases() {
    assert_eq!(trim_margin("\n    |a\n    |  b\n    ", "|"), "a\n  b");
    // Lines without the margin prefix are kept unchanged.
    assert_eq!(trim_margin("\n  |a\n  b\n", "|"), "a\n  b");
    // A blank middle line is kept as it is.
    assert_eq!(trim_margin("\n |a\n   \n |b\n", "|"), "a\n   \nb");
    // The prefix must be the first non-whitespace text.
    assert_eq!(trim_margin("\n  x|a\n", "|"), "  x|a");
    assert_eq!(trim_margin("\n  ##a\n  ## b\n", "##"), "a\n b");
    assert_eq!(trim_margin("|a\r\n|b", "|"), "a\nb");
    // Kotlin throws on a blank prefix; the helper leaves the text alone.
    assert_eq!(trim_margin("\n |a\n", " "), "\n |a\n");
}

#[test]
fn escapes_decode_as_kotlin() {
    assert_eq!(
        unescape(r#"a\tb\bc\nd\re\'f\"g\\h\$i"#),
        "a\tb\u{8}c\nd\re'f\"g\\h$i"
    );
    assert_eq!(unescape(r"\u0041\u00e9\u20AC"), "Aé€");
    assert_eq!(unescape(r"\uD83D\uDE00"), "😀");
    assert_eq!(unescape(r"^[\\s\\S]+$"), r"^[\s\S]+$");
}

#[test]
fn string_expressions_fold_to_one_constant() {
    assert_eq!(value_of(r#""a\nb""#), "a\nb");
    assert_eq!(value_of(r#""^[\\s\\S]+$""#), r"^[\s\S]+$");
    assert_eq!(value_of(r#""costs 5$ or $ 6""#), "costs 5$ or $ 6");
    assert_eq!(value_of("\"a\" +\n        \"b\" +\n        \"c\""), "abc");
    assert_eq!(
        value_of("\"\"\"\n        x\n          y\n        \"\"\".trimIndent()"),
        "x\n  y"
    );
    // The trim may start on the next line.
    assert_eq!(
        value_of("\"\"\"\n        x\n        \"\"\"\n        .trimIndent()"),
        "x"
    );
    assert_eq!(
        value_of("\"\"\"\n        |x\n        |y\n        \"\"\".trimMargin()"),
        "x\ny"
    );
    assert_eq!(
        value_of("\"\"\"\n        #x\n        \"\"\".trimMargin(\"#\")"),
        "x"
    );
    // Postfix binds tighter than `+`: only the raw string is trimmed.
    assert_eq!(
        value_of("\"a\" + \"\"\"\n    b\n    \"\"\".trimIndent()"),
        "ab"
    );
    // Raw strings keep backslashes and quotes.
    assert_eq!(value_of(r#""""a\n"b" {"k": 1}""""#), r#"a\n"b" {"k": 1}"#);
    // Extra quotes before the closing `"""` belong to the content.
    assert_eq!(value_of(r#"""""a"""""#), "\"a\"");
}

#[test]
fn verbatim_flag_marks_untouched_literals() {
    let src =
        "workflow(\"x\") { a = \"plain\"; b = \"esc\\n\"; c = \"\"\"raw\"\"\"; d = \"x\" + \"y\" }";
    let parsed = hensu_syntax::parse(src);
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    let hensu_syntax::ast::StmtKind::Expr(e) = &parsed.file.items[0].kind else {
        panic!()
    };
    let hensu_syntax::ast::ExprKind::Call(c) = &e.kind else {
        panic!()
    };
    let flags: Vec<(bool, usize)> = c
        .block
        .as_ref()
        .unwrap()
        .stmts
        .iter()
        .map(|s| match &s.kind {
            hensu_syntax::ast::StmtKind::Assign { value, .. } => match &value.kind {
                hensu_syntax::ast::ExprKind::Str(s) => (s.verbatim, s.parts.len()),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(flags, vec![(true, 1), (false, 1), (true, 1), (false, 2)]);
}
