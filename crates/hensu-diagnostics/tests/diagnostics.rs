//! Renderer snapshots, source-table positions and catalogue consistency.

use hensu_diagnostics::{
    Applicability, ColorChoice, Counts, Diagnostic, FileId, Files, JsonReport, LineCol, Severity,
    Span, render_human, render_json, render_sarif, summary_line,
};
use hensu_diagnostics::{catalogue, codes};

const FLOW: &str = r#"workflow("Review Flow") {
    graph {
        start at "draft"
        node("draft") {
            agent = "writer"
            onSuccess goto "review"
        }
        node("draft") {
            agent = "writer"
            onSuccess goto "reveiw"
        }
        end("review")
    }
}
"#;

fn span_of(text: &str, needle: &str, nth: usize) -> Span {
    let start = text
        .match_indices(needle)
        .nth(nth)
        .map(|(i, _)| i)
        .expect("needle present");
    Span::from_range(start..start + needle.len())
}

/// A project of two files plus the diagnostics used by the snapshots.
fn fixture() -> (Files, Vec<Diagnostic>) {
    let mut files = Files::new();
    let flow = files.add("workflows/review.hwf", FLOW);
    // CRLF lines and multi-byte characters before the label on its own line.
    let child_text = "// Ünïcödé ✓\r\nworkflow(\"Child\") {\r\n    description = \"Prüfung ✓ – naïve\"; version = \"2.0.0\"\r\n}\r\n";
    let child = files.add("workflows/child.hwf", child_text);

    let duplicate = Diagnostic::new(
        codes::E0201,
        "duplicate node id",
        span_of(FLOW, "\"draft\"", 2),
        "defined again here",
    )
    .in_file(flow)
    .with_label(span_of(FLOW, "\"draft\"", 1), "first defined here")
    .with_note("upstream Hensu silently keeps the last definition")
    .with_help("rename one of the nodes, e.g. \"draft_2\"");

    let unknown = Diagnostic::new(
        codes::E0204,
        "unknown node `reveiw`",
        span_of(FLOW, "\"reveiw\"", 0),
        "no node with this id",
    )
    .in_file(flow)
    .with_help("did you mean \"review\"?");

    let version = Diagnostic::new(
        codes::E0504,
        "sub-workflow version mismatch",
        span_of(FLOW, "\"Review Flow\"", 0),
        "pins version \"1.0.0\"",
    )
    .in_file(flow)
    .with_label_in(
        child,
        span_of(child_text, "\"2.0.0\"", 0),
        "child declares version \"2.0.0\"",
    )
    .with_note("versions are compared as plain strings");

    let eof = Diagnostic::new(
        codes::E0011,
        "unclosed delimiter",
        Span::new(FLOW.len() as u32, FLOW.len() as u32),
        "file ends here",
    )
    .in_file(flow)
    .with_label(span_of(FLOW, "{", 0), "this `{` is never closed");

    let unreachable = Diagnostic::new(
        codes::W0301,
        "node `draft` is unreachable",
        span_of(FLOW, "node", 1),
        "never reached from the start node",
    )
    .in_file(flow);

    (files, vec![duplicate, unknown, version, eof, unreachable])
}

#[test]
fn human_snapshot() {
    let (files, diagnostics) = fixture();
    insta::assert_snapshot!(render_human(&files, &diagnostics, false));
}

#[test]
fn json_snapshot() {
    let (files, diagnostics) = fixture();
    insta::assert_snapshot!(render_json(&files, &diagnostics));
}

#[test]
fn sarif_snapshot() {
    let (files, diagnostics) = fixture();
    insta::assert_snapshot!(render_sarif(&files, &diagnostics[2..4]));
}

#[test]
fn json_envelope_counts() {
    let (files, diagnostics) = fixture();
    let report = JsonReport::new(&files, &diagnostics);
    assert_eq!(
        (report.error_count, report.warning_count, report.valid),
        (4, 1, false)
    );
    assert_eq!(report.diagnostics.len(), 5);

    let warnings_only = JsonReport::new(&files, &diagnostics[4..]);
    assert_eq!(
        (warnings_only.error_count, warnings_only.warning_count),
        (0, 1)
    );
    assert!(warnings_only.valid);

    let empty: serde_json::Value =
        serde_json::from_str(&render_json(&files, &[])).expect("valid JSON");
    assert_eq!(
        empty,
        serde_json::json!({
            "format_version": 2, "valid": true, "error_count": 0, "warning_count": 0, "diagnostics": []
        })
    );
    // Key order is the documented one.
    let text = render_json(&files, &diagnostics[..1]);
    let keys = [
        "\"severity\"",
        "\"code\"",
        "\"message\"",
        "\"file\"",
        "\"range\"",
        "\"labels\"",
        "\"notes\"",
        "\"help\"",
    ];
    let positions: Vec<usize> = keys
        .iter()
        .map(|k| text.find(k).expect("key present"))
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
}

#[test]
fn summary_lines() {
    let line = |errors, warnings| summary_line(Counts { errors, warnings });
    assert_eq!(line(0, 0), None);
    assert_eq!(line(1, 0).as_deref(), Some("error: 1 error"));
    assert_eq!(line(3, 1).as_deref(), Some("error: 3 errors, 1 warning"));
    assert_eq!(line(0, 2).as_deref(), Some("warning: 2 warnings"));
    assert_eq!(render_human(&Files::new(), &[], false), "");
}

#[test]
fn colour_only_when_asked() {
    let (files, diagnostics) = fixture();
    assert!(!render_human(&files, &diagnostics, false).contains('\x1b'));
    assert!(render_human(&files, &diagnostics, true).contains('\x1b'));
    assert!(ColorChoice::Auto.resolve(true));
    assert!(!ColorChoice::Auto.resolve(false));
    assert!(ColorChoice::Always.resolve(false));
    assert!(!ColorChoice::Never.resolve(true));
}

#[test]
fn human_edge_cases() {
    let mut files = Files::new();
    let empty = files.add("empty.hwf", "");
    let no_newline = files.add("short.hwf", "workflow(\"x\") {");
    let diagnostics = vec![
        // An I/O failure reported against an empty file.
        Diagnostic::new(codes::E0901, "cannot read file", Span::new(0, 0), "").in_file(empty),
        // Zero-length span at EOF without a trailing newline, and a span far past the end.
        Diagnostic::new(
            codes::E0011,
            "unclosed delimiter",
            Span::new(15, 15),
            "file ends here",
        )
        .in_file(no_newline)
        .with_label(Span::new(14, 15), "opened here")
        .with_label(Span::new(400, 500), "past the end"),
        // A file that is not in the table.
        Diagnostic::new(
            codes::E0501,
            "unknown sub-workflow",
            Span::new(3, 9),
            "here",
        )
        .in_file(FileId(7))
        .with_note("multi-line notes\nare indented"),
    ];
    insta::assert_snapshot!(render_human(&files, &diagnostics, false));
    // The JSON renderer clamps the same way.
    let report = JsonReport::new(&files, &diagnostics);
    assert_eq!(report.diagnostics[1].labels[2].range.start.byte, 15);
    assert_eq!(report.diagnostics[2].file, "<unknown>");
}

#[test]
fn source_positions() {
    let mut files = Files::new();
    let id = files.add("a.hwf", "ab\r\nçé x\rlast\n");
    let file = files.get(id).expect("file added");
    assert_eq!(file.line_count(), 4);
    let lc = |byte| file.line_col(byte);
    assert_eq!(lc(0), LineCol { line: 1, column: 1 });
    assert_eq!(lc(2), LineCol { line: 1, column: 3 }); // the \r
    assert_eq!(lc(3), LineCol { line: 1, column: 4 }); // the \n of \r\n
    assert_eq!(lc(4), LineCol { line: 2, column: 1 });
    assert_eq!(lc(9), LineCol { line: 2, column: 4 }); // `x` after two 2-byte chars and a space
    assert_eq!(lc(5), LineCol { line: 2, column: 1 }); // inside `ç`: moved back to its start
    assert_eq!(lc(11), LineCol { line: 3, column: 1 }); // after a lone \r
    assert_eq!(lc(16), LineCol { line: 4, column: 1 }); // EOF after the final \n
    assert_eq!(lc(u32::MAX), LineCol { line: 4, column: 1 });
    assert_eq!(file.utf16_col(9), 4);
    assert_eq!(file.char_offset(9), 7);
    assert_eq!(file.offset_of(LineCol { line: 2, column: 4 }), 9);
    assert_eq!(
        file.offset_of(LineCol {
            line: 2,
            column: 99
        }),
        10
    );
    assert_eq!(file.clamp_span(Span::new(9, 3)), Span::new(9, 9));
    assert_eq!(files.name(FileId(1)), "<unknown>");
    let empty = Files::single("e.hwf", "");
    assert_eq!(
        empty.get(FileId(0)).map(|f| f.line_col(10)),
        Some(LineCol { line: 1, column: 1 })
    );
}

#[test]
fn severity_comes_from_the_code() {
    assert_eq!(
        Diagnostic::new(codes::W0301, "m", Span::new(0, 0), "").severity,
        Severity::Warning
    );
    assert_eq!(
        Diagnostic::new(codes::E0301, "m", Span::new(0, 0), "").severity,
        Severity::Error
    );
}

#[test]
fn catalogue_is_consistent() {
    let all = catalogue::all();
    let mut seen = std::collections::HashSet::new();
    for info in all {
        assert!(seen.insert(info.code), "duplicate code {}", info.code);
        let bytes = info.code.as_bytes();
        assert!(
            bytes.len() == 5
                && matches!(bytes[0], b'E' | b'W')
                && bytes[1..].iter().all(u8::is_ascii_digit),
            "bad code {}",
            info.code
        );
        let expected = if bytes[0] == b'W' {
            Severity::Warning
        } else {
            Severity::Error
        };
        assert_eq!(info.severity, expected, "{}", info.code);
        assert!(!info.title.trim().is_empty(), "{} has no title", info.code);
        assert!(
            !info.explanation().trim().is_empty(),
            "{} has no explanation",
            info.code
        );
        assert!(info.has_fix(), "{} has no fix", info.code);
        assert!(catalogue::is_known(info.code));
        assert_eq!(
            catalogue::lookup(info.code).map(|c| c.code),
            Some(info.code)
        );
        assert!(catalogue::render_explanation(info).starts_with(info.code));
    }
    // Sorted: errors by number, then warnings by number.
    let keys: Vec<(bool, &str)> = all
        .iter()
        .map(|c| (c.code.starts_with('W'), c.code))
        .collect();
    assert!(keys.windows(2).all(|w| w[0] < w[1]), "catalogue not sorted");
    assert!(!catalogue::is_known("E9999"));
    assert!(catalogue::lookup("e0201").is_some());
}

/// Every code of the ranges in docs/diagnostics/README.md plus the driver codes.
#[test]
fn catalogue_covers_the_spec() {
    let mut expected: Vec<String> = Vec::new();
    let mut range = |prefix: &str, from: u32, to: u32| {
        for n in from..=to {
            expected.push(format!("{prefix}{n:04}"));
        }
    };
    range("E", 1, 6);
    range("E", 10, 16);
    range("E", 101, 116);
    range("E", 120, 124);
    range("E", 201, 213);
    range("E", 301, 313);
    range("E", 401, 408);
    range("E", 412, 414);
    range("E", 501, 512);
    range("E", 515, 518);
    range("E", 520, 521);
    range("E", 901, 909);
    range("E", 913, 915);
    // replay (hensuc replay)
    range("E", 916, 917);
    range("W", 1, 1);
    range("W", 201, 201);
    range("W", 301, 327);
    range("W", 332, 332);
    range("W", 336, 336);
    range("W", 340, 340);
    range("W", 601, 602);
    range("W", 901, 905);
    let actual: Vec<&str> = catalogue::all().iter().map(|c| c.code).collect();
    assert_eq!(actual, expected);
}

#[test]
fn explanation_snapshot() {
    let info = catalogue::lookup("E0201").expect("E0201 is catalogued");
    insta::assert_snapshot!(catalogue::render_explanation(info));
}

/// The code constants and the catalogue name the same codes in the same order, so every code a
/// phase can emit has an explanation and every explanation a constant.
#[test]
fn code_constants_equal_the_catalogue() {
    let constants: Vec<&str> = hensu_diagnostics::codes::ALL
        .iter()
        .map(|c| c.as_str())
        .collect();
    let catalogued: Vec<&str> = catalogue::all().iter().map(|i| i.code).collect();
    assert_eq!(constants, catalogued);
    for code in hensu_diagnostics::codes::ALL {
        let info = catalogue::lookup(code.as_str()).expect("catalogued");
        let severity = Diagnostic::new(*code, "m", Span::new(0, 0), "").severity;
        assert_eq!(severity, info.severity, "{code}");
    }
}

/// `"reveiw"` with a suggestion replacing the text inside the quotes.
fn with_suggestion() -> (Files, Vec<Diagnostic>) {
    let mut files = Files::new();
    let flow = files.add("workflows/review.hwf", FLOW);
    let quoted = span_of(FLOW, "\"reveiw\"", 0);
    let inner = Span::new(quoted.start + 1, quoted.end - 1);
    let d = Diagnostic::new(
        codes::E0204,
        "unknown node `reveiw`",
        quoted,
        "no node with this id",
    )
    .in_file(flow)
    .with_help("did you mean `review`?")
    .with_suggestion(
        inner,
        "review",
        "replace with `review`",
        Applicability::MaybeIncorrect,
    );
    (files, vec![d])
}

#[test]
fn json_carries_suggestions_only_when_present() {
    let (files, diagnostics) = with_suggestion();
    let value: serde_json::Value =
        serde_json::from_str(&render_json(&files, &diagnostics)).expect("valid JSON");
    let suggestions = &value["diagnostics"][0]["suggestions"];
    assert_eq!(
        suggestions,
        &serde_json::json!([{
            "file": "workflows/review.hwf",
            "range": {
                "start": { "line": 10, "column": 29, "byte": 243 },
                "end": { "line": 10, "column": 35, "byte": 249 },
            },
            "replacement": "review",
            "message": "replace with `review`",
            "applicability": "maybe-incorrect",
        }])
    );
    assert_eq!(&FLOW[243..249], "reveiw");

    let (files, diagnostics) = fixture();
    let value: serde_json::Value =
        serde_json::from_str(&render_json(&files, &diagnostics)).expect("valid JSON");
    for d in value["diagnostics"].as_array().expect("array") {
        assert!(d.get("suggestions").is_none(), "{d}");
    }
}

#[test]
fn sarif_emits_suggestions_as_fixes() {
    let (files, diagnostics) = with_suggestion();
    let value: serde_json::Value =
        serde_json::from_str(&render_sarif(&files, &diagnostics)).expect("valid JSON");
    let result = &value["runs"][0]["results"][0];
    assert_eq!(
        result["fixes"],
        serde_json::json!([{
            "description": { "text": "replace with `review`" },
            "artifactChanges": [{
                "artifactLocation": { "uri": "workflows/review.hwf" },
                "replacements": [{
                    "deletedRegion": {
                        "startLine": 10,
                        "startColumn": 29,
                        "endLine": 10,
                        "endColumn": 35,
                        "byteOffset": 243,
                        "byteLength": 6,
                    },
                    "insertedContent": { "text": "review" },
                }],
            }],
        }])
    );

    let (files, diagnostics) = fixture();
    let value: serde_json::Value =
        serde_json::from_str(&render_sarif(&files, &diagnostics)).expect("valid JSON");
    for r in value["runs"][0]["results"].as_array().expect("array") {
        assert!(r.get("fixes").is_none(), "{r}");
    }
}

/// The directory holding one `CODE.md` per catalogued code.
fn diagnostics_docs_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/diagnostics")
}

/// Every catalogue entry has its `docs/diagnostics/CODE.md`, whose heading line agrees with the
/// table; every `docs/diagnostics/*.md` (except the README index) is a catalogued code; the README
/// lists every code.
#[test]
fn catalogue_and_docs_diagnostics_agree() {
    let dir = diagnostics_docs_dir();
    for info in catalogue::all() {
        let path = dir.join(format!("{}.md", info.code));
        let on_disk = std::fs::read_to_string(&path)
            .unwrap_or_else(|err| panic!("{}: {err}", path.display()));
        assert_eq!(
            on_disk, info.text,
            "{} differs from the compiled-in text",
            info.code
        );
        let severity = match info.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let heading = format!("{} ({severity}): {}\n\n", info.code, info.title);
        assert!(
            info.text.starts_with(&heading),
            "{}.md must start with `{}`",
            info.code,
            heading.trim_end()
        );
        assert!(info.text.ends_with('\n') && !info.text.ends_with("\n\n"));
    }
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("docs/diagnostics exists")
        .map(|entry| {
            entry
                .expect("readable entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name.ends_with(".md") && name != "README.md")
        .collect();
    files.sort();
    for name in &files {
        let code = name.trim_end_matches(".md");
        assert!(
            catalogue::is_known(code),
            "docs/diagnostics/{name} is not in the catalogue"
        );
    }
    assert_eq!(files.len(), catalogue::all().len());
    let index = std::fs::read_to_string(dir.join("README.md")).expect("docs/diagnostics/README.md");
    for info in catalogue::all() {
        assert!(
            index.contains(&format!("[{code}]({code}.md)", code = info.code)),
            "docs/diagnostics/README.md does not link {}",
            info.code
        );
    }
}

/// The explanation paragraph read back from the text is one non-empty line without the heading.
#[test]
fn explanation_paragraph_is_unwrapped() {
    let info = catalogue::lookup("E0201").expect("E0201 is catalogued");
    let explanation = info.explanation();
    assert!(explanation.starts_with("Two nodes of the graph have the same id"));
    assert!(!explanation.contains('\n'));
    assert!(explanation.ends_with("The secondary label shows the first definition."));
}

#[path = "diagnostics/long_lines.rs"]
mod long_lines;

/// rustc's closing hint: one code, several codes, warnings only.
#[test]
fn explain_hint_names_the_error_codes() {
    use hensu_diagnostics::{Diagnostic, Span, codes, explain_hint};
    let error = |code| Diagnostic::new(code, "m", Span::new(0, 1), "l");
    assert_eq!(
        explain_hint(&[error(codes::E0204), error(codes::E0204)]).as_deref(),
        Some("For more information about this error, try `hensuc explain E0204`.\n")
    );
    assert_eq!(
        explain_hint(&[
            error(codes::E0305),
            error(codes::E0204),
            error(codes::W0301)
        ])
        .as_deref(),
        Some(
            "Some errors have detailed explanations: E0204, E0305.\nFor more information about \
             an error, try `hensuc explain E0204`.\n"
        )
    );
    assert_eq!(explain_hint(&[error(codes::W0301)]), None);
}

/// `[lints]` levels: allow drops the warning, deny makes it an error, errors are never touched,
/// and settings naming no warning or no level are W0315.
#[test]
fn lint_levels() {
    use hensu_diagnostics::lints::{LintLevel, LintSetting, apply, resolve};
    use hensu_diagnostics::{Diagnostic, Severity, Span, codes};
    let setting = |code, level| LintSetting {
        code,
        code_span: Span::new(0, 5),
        level,
        level_span: Span::new(8, 15),
    };
    let (levels, problems) = resolve(&[
        setting("W0307", "allow"),
        setting("W0303", "deny"),
        setting("W9999", "allow"),
        setting("E0204", "allow"),
        setting("W0301", "forbid"),
    ]);
    assert_eq!(
        levels,
        [("W0307", LintLevel::Allow), ("W0303", LintLevel::Deny)]
    );
    assert_eq!(problems.len(), 3);
    assert!(problems.iter().all(|d| codes::W0315 == d.code));
    let d = |code| Diagnostic::new(code, "m", Span::new(0, 1), "l");
    let out = apply(
        &levels,
        vec![d(codes::W0307), d(codes::W0303), d(codes::E0204)],
    );
    let got: Vec<(&str, Severity)> = out.iter().map(|d| (d.code, d.severity)).collect();
    assert_eq!(
        got,
        [("W0303", Severity::Error), ("E0204", Severity::Error)]
    );
}
