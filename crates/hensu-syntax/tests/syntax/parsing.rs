//! Parser shapes: chains, calls, file wrappers, spans.

use hensu_syntax::ast::*;
use hensu_syntax::{dump, parse};

/// Parse `body` inside `workflow("x") { … }` and dump the block's statements.
fn dump_body(body: &str) -> String {
    let src = format!("workflow(\"x\") {{\n{body}\n}}\n");
    let parsed = parse(&src);
    assert!(
        parsed.diagnostics.is_empty(),
        "{body}: {:#?}",
        parsed.diagnostics
    );
    let d = dump(&parsed.file);
    let inner: Vec<&str> = d
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with('}'))
        .map(str::trim)
        .collect();
    inner.join("\n")
}

fn codes_of(src: &str) -> Vec<&'static str> {
    parse(src).diagnostics.iter().map(|d| d.code).collect()
}

#[test]
fn chains_follow_the_bare_name_rule() {
    assert_eq!(
        dump_body(r#"onRejection revise "p" withFeedback retry 3 otherwise "x" withFeedback"#),
        r#"(chain onRejection [revise "p"] [withFeedback] [retry 3] [otherwise "x"] [withFeedback])"#
    );
    assert_eq!(
        dump_body(r#"whenValue equalTo "done" goto "x" withFeedback"#),
        r#"(chain whenValue [equalTo "done"] [goto "x"] [withFeedback])"#
    );
    assert_eq!(
        dump_body(r#"whenScore `in` 50.0..79.0 goto "improve""#),
        r#"(chain whenScore [`in` (.. 50.0 79.0)] [goto "improve"])"#
    );
    assert_eq!(
        dump_body("whenValue greaterThan -5 goto \"a\""),
        "(chain whenValue [greaterThan -5] [goto \"a\"])"
    );
    assert_eq!(
        dump_body("whenValue equalTo VarType.STRING"),
        "(chain whenValue [equalTo VarType.STRING])"
    );
    assert_eq!(
        dump_body("whenValue lessThan (3) goto \"a\""),
        "(chain whenValue [lessThan 3] [goto \"a\"])"
    );
    assert_eq!(
        dump_body("\"operations\" to listOf(\"trim\", \"normalize\")"),
        "(chain \"operations\" [to (call listOf (\"trim\", \"normalize\"))])"
    );
}

#[test]
fn calls_args_and_blocks() {
    assert_eq!(
        dump_body(r#"send("slack", mapOf("a" to 1, "b" to mapOf("c" to true)))"#),
        r#"(call send ("slack", (call mapOf ((chain "a" [to 1]), (chain "b" [to (call mapOf ((chain "c" [to true])))])))))"#
    );
    assert_eq!(
        dump_body("variable(name = \"a\", type = VarType.STRING)"),
        "(call variable (name=\"a\", type=VarType.STRING))"
    );
    assert_eq!(
        dump_body("writes(\n  \"a\",\n  \"b\",\n)"),
        "(call writes (\"a\", \"b\"))"
    );
    assert_eq!(dump_body("node(\"a\")\n{\n}"), "(call node (\"a\") {})");
    assert_eq!(dump_body("agents\n{ }"), "(call agents {})");
    assert_eq!(
        dump_body("x = Models.GPT_4O; y = 60000L; z = -0.5; n = null"),
        "(= x Models.GPT_4O)\n(= y 60000L)\n(= z -0.5)\n(= n null)"
    );
    assert_eq!(dump_body("x = a.b.c(1)"), "(= x (method a.b c (1)))");
    assert_eq!(dump_body("x = 1 + 2"), "(= x (+ 1 2))");
}

#[test]
fn file_wrappers() {
    let cases = [
        (
            "fun w() = workflow(\"a\") {}",
            "(fun w = (call workflow (\"a\") {}))",
        ),
        (
            "fun w() =\n    workflow(\"a\") {}",
            "(fun w = (call workflow (\"a\") {}))",
        ),
        (
            "fun w(): Workflow = workflow(\"a\") {}",
            "(fun w = (call workflow (\"a\") {}))",
        ),
        (
            "fun w() { return workflow(\"a\") {} }",
            "(fun w {\n  (return (call workflow (\"a\") {}))\n})",
        ),
        (
            "fun w() {\n    val w = workflow(\"a\") {}\n}",
            "(fun w {\n  (call workflow (\"a\") {})\n})",
        ),
        ("workflow(\"a\") {}", "(call workflow (\"a\") {})"),
        (
            "package io.x\nimport io.hensu.dsl.*\nimport a.B\nworkflow(\"a\") {}",
            "(package io.x)\n(import io.hensu.dsl.*)\n(import a.B)\n(call workflow (\"a\") {})",
        ),
    ];
    for (src, want) in cases {
        let parsed = parse(src);
        assert!(
            parsed.diagnostics.is_empty(),
            "{src}: {:?}",
            parsed.diagnostics
        );
        assert_eq!(dump(&parsed.file).trim_end(), want, "{src}");
    }
}

#[test]
fn kotlin_constructs_get_specific_messages() {
    let msg = |src: &str| {
        parse(src)
            .diagnostics
            .iter()
            .map(|d| d.message.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        msg("workflow(\"a\") { val x = 1 }"),
        vec!["variable declarations are not supported"]
    );
    assert_eq!(
        msg("workflow(\"a\") { if (x) { } }"),
        vec!["conditional expressions are not supported"]
    );
    assert_eq!(
        msg("workflow(\"a\") { for (i in 1..3) { } }"),
        vec!["loops are not supported"]
    );
    assert_eq!(
        msg("workflow(\"a\") { foo { x -> x } }"),
        vec!["lambdas with parameters are not supported"]
    );
    assert_eq!(
        msg("fun a() = workflow(\"a\") {}\nfun b() = 1"),
        vec!["user functions are not supported"]
    );
    assert_eq!(
        msg("fun a(x: Int) = workflow(\"a\") {}"),
        vec!["the workflow function takes no parameters"]
    );
    assert_eq!(codes_of("workflow(\"a\") { x = \"$y\" }"), vec!["E0005"]);
}

#[test]
fn removed_constructs_are_plain_calls() {
    // `planning`, `plan` and `loop` are E0015 in the lowering; syntactically they are calls.
    assert_eq!(
        dump_body("planning { }\nloop(3) { }"),
        "(call planning {})\n(call loop (3) {})"
    );
}

#[test]
fn recovery_keeps_the_good_statements() {
    let src = "workflow(\"a\") {\n  x = 1 2\n  y = 2\n  z = *\n  w = 3\n}";
    let parsed = parse(src);
    assert_eq!(parsed.diagnostics.len(), 2, "{:#?}", parsed.diagnostics);
    let d = dump(&parsed.file);
    assert!(
        d.contains("(error)\n  (= y 2)\n  (error)\n  (= w 3)"),
        "{d}"
    );
}

#[test]
fn unclosed_delimiters_point_at_the_opener() {
    let src = "workflow(\"a\") {\n  node(\"b\") {\n}";
    let parsed = parse(src);
    let d: Vec<_> = parsed
        .diagnostics
        .iter()
        .map(|d| (d.code, d.primary.span.range()))
        .collect();
    assert_eq!(d, vec![("E0011", 14..15)]);
}

fn walk_expr(e: &Expr<'_>, len: u32, spans: &mut Vec<Span>) {
    spans.push(e.span);
    match &e.kind {
        ExprKind::Call(c) => {
            spans.push(c.callee.span);
            if let Some(a) = &c.args {
                spans.push(a.span);
                for arg in &a.items {
                    walk_expr(&arg.value, len, spans);
                }
            }
            if let Some(b) = &c.block {
                walk_block(b, len, spans);
            }
        }
        ExprKind::MethodCall(m) => {
            walk_expr(&m.receiver, len, spans);
            for a in &m.args {
                walk_expr(&a.value, len, spans);
            }
        }
        ExprKind::Chain { head, links } => {
            walk_expr(head, len, spans);
            for l in links {
                spans.push(l.word.span);
                if let Some(a) = &l.arg {
                    walk_expr(a, len, spans);
                }
            }
        }
        ExprKind::Range { start, end } => {
            walk_expr(start, len, spans);
            walk_expr(end, len, spans);
        }
        ExprKind::Add { lhs, rhs } => {
            walk_expr(lhs, len, spans);
            walk_expr(rhs, len, spans);
        }
        ExprKind::Str(s) => {
            for p in &s.parts {
                spans.push(p.span);
                spans.push(p.content);
            }
        }
        _ => {}
    }
}

fn walk_block(b: &Block<'_>, len: u32, spans: &mut Vec<Span>) {
    spans.push(b.span);
    for s in &b.stmts {
        walk_stmt(s, len, spans);
    }
}

fn walk_stmt(s: &Stmt<'_>, len: u32, spans: &mut Vec<Span>) {
    spans.push(s.span);
    match &s.kind {
        StmtKind::Assign { target, value } => {
            spans.push(target.span);
            walk_expr(value, len, spans);
        }
        StmtKind::Expr(e) | StmtKind::Return(Some(e)) => walk_expr(e, len, spans),
        StmtKind::Fun {
            body: FunBody::Expr(e),
            ..
        } => walk_expr(e, len, spans),
        StmtKind::Fun {
            body: FunBody::Block(b),
            ..
        } => walk_block(b, len, spans),
        _ => {}
    }
}

/// Every span of the tree of the worked example lies inside the input and outer spans contain
/// inner ones where the syntax nests.
#[test]
fn spans_are_inside_the_input() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/syntax/ok/worked_example_mini_review.hwf"
    );
    let src = std::fs::read_to_string(path).unwrap();
    let parsed = parse(&src);
    let len = src.len() as u32;
    let mut spans = Vec::new();
    for item in &parsed.file.items {
        walk_stmt(item, len, &mut spans);
    }
    assert!(spans.len() > 100);
    for s in spans {
        assert!(s.start <= s.end && s.end <= len, "{s:?}");
    }
    let fun = &parsed.file.items[0];
    assert_eq!(&src[fun.span.range()], src.trim_end());
}
