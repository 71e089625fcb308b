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
    "@Suppress",
    "@Suppress(\"W0307\")",
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
        // One byte for one byte: every span is an offset into `bytes` too.
        prop_assert_eq!(text.len(), bytes.len());
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

/// Spans after invalid UTF-8 are byte offsets into the original file (they used to point into
/// the decoded text, 2 bytes further per invalid byte).
#[test]
fn invalid_utf8_spans_are_offsets_into_the_file() {
    let bytes = b"workflow(\"x\") {\n    \xff\xfe\xfd\n    description = 1 +\n}\n\xc3";
    let (text, diags) = hensu_syntax::decode_source(bytes);
    assert_eq!(text.len(), bytes.len());
    let bad = bytes.iter().position(|&b| b == 0xff).unwrap();
    assert_eq!(diags[0].primary.span.start as usize, bad);
    assert_eq!(diags[0].primary.span.end as usize, bad + 3);
    assert_eq!(diags[1].primary.span.start as usize, bytes.len() - 1);
    assert_eq!(diags[1].primary.span.end as usize, bytes.len());
    let parsed = hensu_syntax::parse_decoded(&text, diags);
    for d in &parsed.diagnostics {
        assert!(d.primary.span.end as usize <= bytes.len(), "{d:?}");
    }
    // The syntax error at the closing brace points at the brace in the original bytes.
    let brace = bytes.iter().rposition(|&b| b == b'}').unwrap();
    assert!(
        parsed
            .diagnostics
            .iter()
            .any(|d| d.code != "E0001" && d.primary.span.start as usize == brace),
        "{:#?}",
        parsed.diagnostics
    );
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

/// A random program from a small grammar of the language (valid or nearly valid), for the
/// differential test of the fast path against the chumsky parser.
fn gen_program(seed: u64) -> String {
    struct G(u64);
    impl G {
        fn n(&mut self, k: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % k as u64) as usize
        }
        fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
            xs[self.n(xs.len())]
        }
        fn atom(&mut self, depth: usize) -> String {
            match self.n(if depth > 3 { 9 } else { 13 }) {
                0 => "\"s\"".into(),
                1 => "\"a\\n$ b\"".into(),
                2 => "\"\"\"\n    x\n      y\n    \"\"\".trimIndent()".into(),
                3 => self
                    .pick(&["1", "60_000", "2L", "0.5", "1e-3", "-3", "-0.5"])
                    .into(),
                4 => self.pick(&["true", "false", "null"]).into(),
                5 => self.pick(&["A.B", "VarType.STRING", "x", "`in`"]).into(),
                6 => format!("{} + {}", self.atom(depth + 1), self.atom(depth + 1)),
                7 => format!(
                    "{}..{}",
                    self.pick(&["1", "50.0", "-2"]),
                    self.pick(&["3", "79.0"])
                ),
                8 => "\"|a\".trimMargin()".into(),
                9 => format!("listOf({}, {})", self.atom(depth + 1), self.atom(depth + 1)),
                10 => format!("mapOf(\"k\" to {})", self.atom(depth + 1)),
                11 => format!("({})", self.expr(depth + 1)),
                _ => format!("f(n = {}){}", self.atom(depth + 1), self.block(depth + 1)),
            }
        }
        fn expr(&mut self, depth: usize) -> String {
            let mut e = self.atom(depth);
            for _ in 0..self.n(4) {
                e.push(' ');
                e.push_str(self.pick(&["goto", "retry", "otherwise", "withFeedback", "to", "at"]));
                if self.n(3) > 0 {
                    e.push(' ');
                    e.push_str(&self.atom(depth + 1));
                }
            }
            e
        }
        fn stmt(&mut self, depth: usize) -> String {
            let annotations = match self.n(8) {
                0 => "@Suppress(\"W0307\") ",
                1 => "@Suppress(\"W0307\", \"W0303\")\n",
                2 => "@Suppress\n@Foo(x = 1) ",
                _ => "",
            };
            annotations.to_string() + &self.stmt_body(depth)
        }
        fn stmt_body(&mut self, depth: usize) -> String {
            match self.n(if depth > 3 { 3 } else { 5 }) {
                0 => format!("p = {}", self.expr(depth)),
                1 => self.expr(depth),
                2 => format!("onFailure retry {} otherwise \"x\"", self.n(5)),
                3 => format!("node(\"n\") {}", self.block(depth + 1)),
                _ => format!("agents{}", self.block(depth + 1)),
            }
        }
        fn block(&mut self, depth: usize) -> String {
            if depth > 5 {
                return " {}".into();
            }
            let mut b = String::from(" {");
            for i in 0..self.n(4) {
                b.push_str(if i > 0 && self.n(4) == 0 { "; " } else { "\n" });
                b.push_str(&self.stmt(depth));
            }
            b.push_str("\n}");
            b
        }
    }
    let mut g = G(seed | 1);
    let head = g.pick(&[
        "fun w() = workflow(\"x\")",
        "workflow(\"x\")",
        "fun w() {\n return workflow(\"x\")",
    ]);
    let annotation = g.pick(&["", "", "@Suppress(\"W0308\")\n", "@Suppress(\"W0308\") "]);
    let mut src = format!("{annotation}{head}{}", g.block(0));
    if head.starts_with("fun w() {") {
        src.push_str("\n}");
    }
    // Sometimes break it.
    if g.n(4) == 0 {
        let cut = g.n(src.len());
        if src.is_char_boundary(cut) {
            src.insert_str(cut, g.pick(&[")", "=", ",", "val ", "{", "\n.", "+", "in"]));
        }
    }
    src
}

/// The fast path and the chumsky parser agree: whenever the fast path succeeds, chumsky reports
/// no syntax error and builds the same tree; whenever chumsky reports nothing at all, the fast
/// path succeeds.
fn differential(src: &str) {
    let slow = hensu_syntax::parse_with_chumsky(src);
    let fast = hensu_syntax::parse_fast_only(src);
    // Errors of the parser itself (E0011, E0016 and unmatched closers come from the layout pass,
    // which both parsers share).
    let syntax_errors: Vec<_> = slow
        .diagnostics
        .iter()
        .filter(|d| d.code == "E0010" && !d.message.starts_with("unexpected closing delimiter"))
        .collect();
    match &fast {
        Some(file) => {
            assert!(
                syntax_errors.is_empty(),
                "fast path accepted what chumsky rejects:\n{src}\n{syntax_errors:#?}"
            );
            assert_eq!(file, &slow.file, "trees differ for:\n{src}");
        }
        None => assert!(
            !slow.diagnostics.is_empty(),
            "fast path gave up on a clean file:\n{src}"
        ),
    }
    // And the public entry point gives the chumsky answer.
    let public = hensu_syntax::parse(src);
    assert_eq!(public.file, slow.file);
    assert_eq!(public.diagnostics, slow.diagnostics);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn fast_path_agrees_with_chumsky_on_generated_programs(seed in any::<u64>()) {
        differential(&gen_program(seed));
    }

    #[test]
    fn fast_path_agrees_with_chumsky_on_token_soup(words in proptest::collection::vec(proptest::sample::select(VOCAB), 0..60)) {
        differential(&words.join(" "));
    }
}

#[test]
fn fast_path_agrees_with_chumsky_on_fixtures() {
    for sub in ["ok", "err"] {
        let dir = format!(
            "{}/../../tests/fixtures/syntax/{sub}",
            env!("CARGO_MANIFEST_DIR")
        );
        for entry in std::fs::read_dir(dir).unwrap() {
            let src = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            differential(&src);
            if sub == "ok" {
                assert!(hensu_syntax::parse_fast_only(&src).is_some());
            }
        }
    }
    let generated = hensu_workload::generate(200_000, 3);
    differential(&generated);
    assert!(hensu_syntax::parse_fast_only(&generated).is_some());
}
