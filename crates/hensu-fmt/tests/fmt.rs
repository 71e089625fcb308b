//! The formatter's tests: snapshots of every example and fixture, idempotence, comment
//! preservation, refusal of files with syntax errors, never-panic fuzzing, and the key property
//! "formatting never changes the compiled IR" — for every file and for random whitespace
//! perturbations of them.

use std::path::{Path, PathBuf};

use hensu_diagnostics::FileId;
use hensu_fmt::{FormatError, format};
use hensu_sema::files::MemoryFiles;
use hensu_syntax::ast::CommentKind;
use hensu_syntax::{TokenKind, lex, parse};
use proptest::prelude::*;

// ---- inputs ------------------------------------------------------------------------------------

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn files_in(dir: &str, exts: &[&str]) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo().join(dir))
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| {
        p.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| exts.contains(&e))
    });
    v.sort();
    v
}

/// Every valid input: the examples, the syntax ok-fixtures and the formatter's own fixtures.
fn inputs() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (prefix, dir, exts) in [
        ("examples", "examples/workflows", &["hwf", "kt"][..]),
        ("syntax_ok", "tests/fixtures/syntax/ok", &["hwf", "kt"][..]),
        ("fmt", "tests/fixtures/fmt", &["hwf", "kt"][..]),
    ] {
        for path in files_in(dir, exts) {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("?")
                .to_owned();
            let text = std::fs::read_to_string(&path).expect("readable fixture");
            out.push((format!("{prefix}__{name}"), text));
        }
    }
    assert!(
        out.len() >= 50,
        "expected the examples and fixtures, found {}",
        out.len()
    );
    out
}

fn fmt_ok(name: &str, src: &str) -> String {
    match format(src) {
        Ok(s) => s,
        Err(e) => panic!("{name}: {e}: {e:?}"),
    }
}

// ---- snapshots ---------------------------------------------------------------------------------

#[test]
fn snapshots_of_every_file() {
    for (name, src) in inputs() {
        let out = fmt_ok(&name, &src);
        let changed = if out == src {
            "unchanged"
        } else {
            "reformatted"
        };
        insta::with_settings!({
            snapshot_path => "snapshots",
            prepend_module_to_snapshot => false,
            description => format!("{name} ({changed})"),
            omit_expression => true,
        }, {
            insta::assert_snapshot!(name.clone(), out);
        });
    }
}

// ---- idempotence, comments, trailing newline ---------------------------------------------------

#[test]
fn idempotent_on_every_file() {
    for (name, src) in inputs() {
        let once = fmt_ok(&name, &src);
        let twice = fmt_ok(&name, &once);
        assert_eq!(once, twice, "{name}: formatting is not idempotent");
        assert!(
            once.ends_with('\n') && !once.ends_with("\n\n"),
            "{name}: one trailing newline"
        );
        assert!(!once.contains('\r'), "{name}: LF only");
        for (i, line) in once.lines().enumerate() {
            assert_eq!(
                line,
                line.trim_end(),
                "{name}:{}: trailing whitespace",
                i + 1
            );
        }
    }
}

/// The comments of a file: kind and text (line comments without trailing whitespace, block
/// comments without any whitespace since continuation lines may be re-indented).
fn comments(src: &str) -> Vec<(String, String)> {
    let parsed = parse(src);
    let mut v: Vec<(String, String)> = parsed
        .file
        .comments
        .iter()
        .map(|c| {
            let text = src.get(c.span.range()).unwrap_or("");
            let text = match c.kind {
                CommentKind::Line => text.trim_end().to_owned(),
                CommentKind::Block | CommentKind::Doc => {
                    text.chars().filter(|c| !c.is_whitespace()).collect()
                }
            };
            (format!("{:?}", c.kind), text)
        })
        .collect();
    v.sort();
    v
}

#[test]
fn every_comment_is_kept() {
    let mut total = 0;
    for (name, src) in inputs() {
        let out = fmt_ok(&name, &src);
        let before = comments(&src);
        total += before.len();
        assert_eq!(before, comments(&out), "{name}: comments changed");
    }
    assert!(total > 50, "the inputs have comments ({total})");
}

#[test]
fn raw_strings_and_literals_are_byte_for_byte() {
    for (name, src) in inputs() {
        let out = fmt_ok(&name, &src);
        let texts = |s: &str| -> Vec<String> {
            lex(s)
                .tokens
                .iter()
                .filter(|t| {
                    matches!(
                        t.kind,
                        TokenKind::Str
                            | TokenKind::RawStr
                            | TokenKind::Int
                            | TokenKind::Long
                            | TokenKind::Double
                    )
                })
                .map(|t| s.get(t.span.range()).unwrap_or("").to_owned())
                .collect()
        };
        assert_eq!(texts(&src), texts(&out), "{name}: literals changed");
    }
}

// ---- the IR is unchanged -----------------------------------------------------------------------

/// The compiled IR (wire JSON) and the diagnostic codes of a source.
fn compile(src: &str) -> (Option<String>, Vec<&'static str>) {
    let files = MemoryFiles::new();
    let lowered = hensu_sema::lower_source(src, FileId(0), &files);
    let mut codes: Vec<&'static str> = lowered.diagnostics.iter().map(|d| d.code).collect();
    codes.sort_unstable();
    (lowered.workflow.as_ref().map(hensu_ir::to_json), codes)
}

#[test]
fn formatting_never_changes_the_ir() {
    let mut with_ir = 0;
    for (name, src) in inputs() {
        let out = fmt_ok(&name, &src);
        let before = compile(&src);
        let after = compile(&out);
        if before.0.is_some() {
            with_ir += 1;
        }
        assert_eq!(before.0, after.0, "{name}: IR changed");
        assert_eq!(before.1, after.1, "{name}: diagnostics changed");
    }
    assert!(with_ir >= 40, "most inputs compile to IR ({with_ir})");
}

/// Insertion points for whitespace: the end of every token and comment, with whether the
/// whitespace after it already holds a blank line (then extra line breaks are legal too).
fn insertion_points(src: &str) -> Vec<(usize, bool)> {
    let lexed = lex(src);
    let mut elements: Vec<(usize, usize, bool)> = lexed
        .tokens
        .iter()
        .filter(|t| t.kind != TokenKind::Newline)
        .map(|t| (t.span.start as usize, t.span.end as usize, false))
        .collect();
    for c in &lexed.comments {
        let multi_line = c.kind != CommentKind::Line
            && src.get(c.span.range()).is_some_and(|t| t.contains('\n'));
        elements.push((c.span.start as usize, c.span.end as usize, multi_line));
    }
    elements.sort_unstable();
    let mut points = Vec::new();
    for (i, &(_, end, _)) in elements.iter().enumerate() {
        let next = elements.get(i + 1);
        // Moving a multi-line block comment sideways re-indents its body: not a pure
        // whitespace change, so never push one.
        if next.is_some_and(|n| n.2) {
            continue;
        }
        let next_start = next.map_or(src.len(), |n| n.0);
        let gap = src.get(end..next_start).unwrap_or("");
        // Extra line breaks only where there is a blank line already (a new blank line between
        // two statements would rightly be kept).
        points.push((end, gap.matches('\n').count() >= 2));
    }
    points
}

/// Insert `edits` (point index, line break?, count) into `src`.
fn perturb(src: &str, edits: &[(usize, bool, usize)]) -> String {
    let points = insertion_points(src);
    if points.is_empty() {
        return src.to_owned();
    }
    let mut inserts: Vec<(usize, String)> = edits
        .iter()
        .map(|&(i, newline, n)| {
            let (at, breaks) = points[i % points.len()];
            let text = if newline && breaks {
                "\n".repeat(n)
            } else if newline {
                "\t".repeat(n)
            } else {
                " ".repeat(n)
            };
            (at, text)
        })
        .collect();
    inserts.sort_by_key(|b| std::cmp::Reverse(b.0));
    let mut out = src.to_owned();
    for (at, text) in inserts {
        out.insert_str(at, &text);
    }
    out
}

fn perturbation() -> impl Strategy<Value = (usize, Vec<(usize, bool, usize)>)> {
    (
        any::<usize>(),
        prop::collection::vec((any::<usize>(), any::<bool>(), 1usize..4), 1..40),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]

    /// Extra spaces, tabs and blank lines between tokens change neither the formatted text nor
    /// the IR.
    #[test]
    fn whitespace_perturbations_format_identically((file, edits) in perturbation()) {
        let all = inputs();
        let (name, src) = &all[file % all.len()];
        let perturbed = perturb(src, &edits);
        let original = fmt_ok(name, src);
        let formatted = match format(&perturbed) {
            Ok(s) => s,
            Err(e) => panic!("{name} perturbed: {e:?}\n{perturbed}"),
        };
        prop_assert_eq!(&formatted, &original, "{} perturbed", name);
        prop_assert_eq!(compile(&formatted), compile(src), "{} perturbed: IR", name);
        prop_assert_eq!(compile(&perturbed), compile(src), "{} perturbed input: IR", name);
    }
}

// ---- CRLF, BOM, empty files --------------------------------------------------------------------

/// A CRLF file stays CRLF: the output is the LF formatting with `\r\n` line breaks.
#[test]
fn crlf_input_keeps_crlf() {
    for (name, src) in inputs() {
        let crlf = src.replace('\n', "\r\n");
        let out = fmt_ok(&name, &crlf);
        assert!(
            !out.replace("\r\n", "").contains('\n'),
            "{name}: every line break is CRLF"
        );
        assert_eq!(
            out.replace("\r\n", "\n"),
            fmt_ok(&name, &src),
            "{name}: CRLF and LF format the same"
        );
        assert_eq!(fmt_ok(&name, &out), out, "{name}: idempotent with CRLF");
        assert_eq!(compile(&out), compile(&crlf), "{name}: CRLF IR");
    }
}

/// Raw strings keep their line breaks byte for byte (they are part of the value): CRLF in a CRLF
/// file, and an LF inside a raw string of a CRLF file stays LF; a trimmed one follows the file.
#[test]
fn raw_strings_keep_their_line_breaks() {
    let src = "workflow(\"w\") {\r\n    description = \"\"\"a\r\nb\"\"\"\r\n    graph { start at \"e\"; end(\"e\") }\r\n}\r\n";
    let out = fmt_ok("crlf", src);
    assert_eq!(out, src);
    let mixed = "workflow(\"w\") {\r\n  description = \"\"\"a\nb\"\"\"\r\n  graph {  }\r\n}\r\n";
    assert_eq!(
        fmt_ok("mixed", mixed),
        "workflow(\"w\") {\r\n    description = \"\"\"a\nb\"\"\"\r\n    graph {}\r\n}\r\n"
    );
    let trimmed =
        "workflow(\"w\") {\r\n  description = \"\"\"\n    a\n    b\"\"\".trimIndent()\r\n}\r\n";
    let out = fmt_ok("trimmed", trimmed);
    assert!(!out.replace("\r\n", "").contains('\n'), "{out:?}");
    assert_eq!(compile(&out), compile(trimmed));
    // An LF file stays LF.
    assert!(!fmt_ok("lf", &src.replace("\r\n", "\n")).contains('\r'));
}

#[test]
fn bom_is_dropped_and_empty_files_stay_empty() {
    assert_eq!(fmt_ok("empty", ""), "");
    assert_eq!(fmt_ok("blank", "\n\n  \n"), "");
    assert_eq!(fmt_ok("comment", "// c"), "// c\n");
    assert_eq!(
        fmt_ok("bom", "\u{feff}workflow(\"w\") { graph { } }"),
        "workflow(\"w\") {\n    graph {}\n}\n"
    );
}

// ---- style rules, one by one -------------------------------------------------------------------

fn wf(body: &str) -> String {
    format!("workflow(\"w\") {{\n{body}\n}}\n")
}

#[test]
fn style_rules() {
    let cases: &[(&str, &str)] = &[
        // Alignment collapses.
        ("    version     = \"1\"", "    version = \"1\""),
        // One-line blocks: kept when short, broken when > 3 statements.
        (
            "    agents { agent(\"w\") { role = \"W\"; model = Models.GPT_4O } }",
            "    agents {\n        agent(\"w\") { role = \"W\"; model = Models.GPT_4O }\n    }",
        ),
        (
            "    agents {\n        agent(\"w\") { role = \"W\"; model = \"m\"; temperature = 0.1; maxTokens = 5 }\n    }",
            "    agents {\n        agent(\"w\") {\n            role = \"W\"\n            model = \"m\"\n            temperature = 0.1\n            maxTokens = 5\n        }\n    }",
        ),
        // A multi-line block is never joined.
        (
            "    agents {\n        agent(\"w\") {\n            role = \"W\"\n        }\n    }",
            "    agents {\n        agent(\"w\") {\n            role = \"W\"\n        }\n    }",
        ),
        // Ranges have no spaces; `+` continuations are indented one level.
        (
            "    graph { node(\"a\") { onScore {\n whenScore `in` 1.0 .. 2.0 goto \"a\"\n } } }",
            "    graph {\n        node(\"a\") {\n            onScore {\n                whenScore `in` 1.0..2.0 goto \"a\"\n            }\n        }\n    }",
        ),
        (
            "    description = \"a\" +\n\"b\" +\n            \"c\"",
            "    description = \"a\" +\n        \"b\" +\n        \"c\"",
        ),
        // Bare enum constants are qualified where the enum is known.
        (
            "    state { input(\"a\", STRING); variable(\"b\", LIST_STRING, \"d\") }",
            "    state { input(\"a\", VarType.STRING); variable(\"b\", VarType.LIST_STRING, \"d\") }",
        ),
        (
            "    graph {\n        end(\"x\", FAILURE)\n        end(\"y\", UNKNOWN)\n    }",
            "    graph {\n        end(\"x\", ExitStatus.FAILURE)\n        end(\"y\", UNKNOWN)\n    }",
        ),
        (
            "    graph {\n        map(\"m\") { onItemFailure = SKIP }\n    }",
            "    graph {\n        map(\"m\") { onItemFailure = ItemFailure.SKIP }\n    }",
        ),
        // Blank lines: runs collapse, none after `{` or before `}`.
        (
            "\n\n    version = \"1\"\n\n\n\n    description = \"d\"\n\n",
            "    version = \"1\"\n\n    description = \"d\"",
        ),
        // Multi-line argument lists keep their breaks; the closer goes back.
        (
            "    agents { agent(\"w\") {\n tools = listOf(\n\"a\",\n  \"b\")\n } }",
            "    agents {\n        agent(\"w\") {\n            tools = listOf(\n                \"a\",\n                \"b\")\n        }\n    }",
        ),
        // Annotations stay where they were written (own line or the statement's line), at the
        // statement's indentation, and take no space before their arguments.
        (
            "    graph {\n  @Suppress (\"W0307\")   @Suppress(\"W0303\")\n      // why\n         node(\"a\") {}\n @Suppress(\"W0301\")   end(\"e\")\n    }",
            "    graph {\n        @Suppress(\"W0307\") @Suppress(\"W0303\")\n        // why\n        node(\"a\") {}\n        @Suppress(\"W0301\") end(\"e\")\n    }",
        ),
    ];
    for (input, expected) in cases {
        let got = fmt_ok(input, &wf(input));
        assert_eq!(got, wf(expected), "input:\n{input}");
    }
}

#[test]
fn comment_placement() {
    let src = "// head\n\n\n/** doc */\nworkflow(\"w\") { // after brace\n    /* own line */\n    version = \"1\"   // trailing\n    graph { start at \"e\" /* inline */ ; end(\"e\") }\n\n    // before close\n}\n// tail\n";
    let expected = "// head\n\n/** doc */\nworkflow(\"w\") { // after brace\n    /* own line */\n    version = \"1\" // trailing\n    graph { start at \"e\" /* inline */; end(\"e\") }\n\n    // before close\n}\n// tail\n";
    assert_eq!(fmt_ok("comments", src), expected);
}

#[test]
fn kdoc_moves_with_its_statement() {
    let src = "workflow(\"w\") {\n  graph {\n          /**\n           * The entry.\n           */\n          start at \"e\"\n  end(\"e\")\n  }\n}\n";
    let expected = "workflow(\"w\") {\n    graph {\n        /**\n         * The entry.\n         */\n        start at \"e\"\n        end(\"e\")\n    }\n}\n";
    assert_eq!(fmt_ok("kdoc", src), expected);
}

#[test]
fn wrapper_forms() {
    let src = "fun   w ( ) : Workflow {\n val wf : Workflow = workflow( \"w\" ) { graph { end(\"e\") } }\n return wf\n}\n";
    let expected = "fun w(): Workflow {\n    val wf: Workflow = workflow(\"w\") { graph { end(\"e\") } }\n    return wf\n}\n";
    let got = fmt_ok("wrapper", src);
    // `graph { … }` has a block of its own, so the workflow block cannot stay on one line.
    assert_ne!(got, expected);
    assert_eq!(
        got,
        "fun w(): Workflow {\n    val wf: Workflow = workflow(\"w\") {\n        graph { end(\"e\") }\n    }\n    return wf\n}\n"
    );
}

// ---- errors and robustness ---------------------------------------------------------------------

#[test]
fn files_with_syntax_errors_are_refused() {
    let errs = files_in("tests/fixtures/syntax/err", &["hwf", "kt"]);
    assert!(!errs.is_empty());
    for path in errs {
        let bytes = std::fs::read(&path).expect("readable");
        let src = String::from_utf8_lossy(&bytes);
        match format(&src) {
            Err(FormatError::Syntax(d)) => {
                assert!(d.iter().any(|d| d.is_error()), "{}", path.display())
            }
            other => panic!("{}: expected syntax errors, got {other:?}", path.display()),
        }
    }
}

#[test]
fn enum_tables_match_the_schema() {
    use hensu_sema::schema::EnumType;
    for ty in EnumType::ALL {
        let mine = hensu_fmt::QUALIFIED_ENUMS
            .iter()
            .find(|(n, _)| *n == ty.name())
            .map(|(_, c)| c.to_vec());
        assert_eq!(mine, Some(ty.constants()), "{}", ty.name());
    }
}

/// Found by `never_panics`: a first line break inside a raw string does not choose the line
/// ending, or formatting the output again would choose the other one.
#[test]
fn a_line_break_inside_a_raw_string_does_not_choose_the_line_ending() {
    let src = "\r\n\"\"\"r\n  x\n\"\"\"";
    let once = format(src).expect("formats");
    assert_eq!(once, "\"\"\"r\n  x\n\"\"\"\r\n");
    assert_eq!(format(&once).expect("formats"), once);
}

/// Fragments that recombine into valid and invalid files alike.
const PIECES: &[&str] = &[
    "workflow(\"w\")",
    "fun x() = ",
    "{",
    "}",
    "(",
    ")",
    "\n",
    ";",
    " ",
    "graph",
    "node(\"a\")",
    "start at \"a\"",
    "agent = \"w\"",
    "+",
    "\"s\"",
    "\"\"\"r\n  x\n\"\"\"",
    ".trimIndent()",
    "// c\n",
    "/* b */",
    "/** d\n */",
    "1.0..2.0",
    "-1",
    ",",
    "STRING",
    "end(\"e\", FAILURE)",
    "input(\"i\", STRING)",
    "review(OPTIONAL)",
    "`in`",
    "goto",
    "=",
    "val",
    "\r\n",
    "\t",
    "listOf(\"a\",\n\"b\")",
    "mode = REQUIRED",
    ".",
    "import a.b.*\n",
    "é",
    "60_000L",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    /// Never panics; whatever it accepts it formats idempotently (the self-check already proved
    /// the meaning unchanged, or it would have returned an error).
    #[test]
    fn never_panics(parts in prop::collection::vec(0usize..PIECES.len(), 0..60)) {
        let src: String = parts.iter().map(|&i| PIECES[i]).collect();
        match format(&src) {
            Ok(out) => {
                let again = format(&out);
                prop_assert!(again.is_ok(), "reformat failed: {:?}\n{}", again, out);
                prop_assert_eq!(again.ok(), Some(out.clone()), "not idempotent:\n{}", src);
            }
            Err(FormatError::Syntax(d)) => prop_assert!(!d.is_empty()),
            Err(FormatError::Internal(msg)) => prop_assert!(false, "internal error {}:\n{:?}", msg, src),
        }
    }

    #[test]
    fn never_panics_on_any_text(src in "\\PC{0,200}") {
        let _ = format(&src);
    }
}

#[test]
fn deep_nesting_and_long_chains_do_not_overflow() {
    let chain = format!(
        "workflow(\"w\") {{\n    description = {}\n    graph {{ end(\"e\") }}\n}}\n",
        vec!["\"x\""; 5000].join(" +\n")
    );
    let out = format(&chain).expect("long string concatenation formats");
    assert_eq!(format(&out).expect("again"), out);
    let deep = format!("workflow(\"w\") {}{}", "{ a ".repeat(100), "}".repeat(100));
    let _ = format(&deep);
}

#[test]
fn a_line_break_inside_a_block_comment_does_not_split_a_statement() {
    // `graph/** d\n */graph` is ONE statement (the chain `graph graph`): no newline token.
    let src = "workflow(\"w\") {\n    graph/** d\n */graph\n}\n";
    let out = fmt_ok("comment-break", src);
    assert_eq!(out, "workflow(\"w\") {\n    graph /** d\n  */ graph\n}\n");
    assert_eq!(format(&out).expect("again"), out);
}
