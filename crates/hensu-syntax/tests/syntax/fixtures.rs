//! `tests/fixtures/syntax/{ok,err}/*.hwf`, snapshotted with insta.

use std::fmt::Write as _;

use crate::common::{assert_spans_inside, human, json};

fn file_name(path: &std::path::Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

/// Every ok/ fixture parses with zero diagnostics; the snapshot holds the source and the tree.
#[test]
fn ok_fixtures() {
    insta::glob!("../../../../tests/fixtures/syntax", "ok/*.hwf", |path| {
        let src = std::fs::read_to_string(path).unwrap();
        let parsed = hensu_syntax::parse(&src);
        let name = file_name(path);
        assert!(
            parsed.diagnostics.is_empty(),
            "{name} must parse clean:\n{}",
            human(&name, &src, &parsed.diagnostics)
        );
        let mut snap = String::new();
        writeln!(snap, "--- source\n{src}\n--- tree").unwrap();
        snap.push_str(&hensu_syntax::dump(&parsed.file));
        insta::assert_snapshot!(snap);
    });
}

/// Every err/ fixture reports at least one diagnostic, including the code its name starts with
/// (`e0011_…` must report E0011); the snapshot holds the source and the human and JSON renderings.
#[test]
fn err_fixtures() {
    insta::glob!("../../../../tests/fixtures/syntax", "err/*.hwf", |path| {
        let src = std::fs::read_to_string(path).unwrap();
        let parsed = hensu_syntax::parse(&src);
        let name = file_name(path);
        assert!(
            !parsed.diagnostics.is_empty(),
            "{name} must report a diagnostic"
        );
        assert_spans_inside(&src, &parsed.diagnostics);
        if let Some(code) = name
            .strip_prefix('e')
            .and_then(|r| r.get(..4))
            .filter(|c| c.bytes().all(|b| b.is_ascii_digit()))
        {
            let code = format!("E{code}");
            assert!(
                parsed.diagnostics.iter().any(|d| d.code == code),
                "{name} must report {code}:\n{}",
                human(&name, &src, &parsed.diagnostics)
            );
        }
        let mut snap = String::new();
        writeln!(snap, "--- source\n{src}\n--- human").unwrap();
        snap.push_str(&human(&name, &src, &parsed.diagnostics));
        writeln!(snap, "--- json").unwrap();
        snap.push_str(&json(&name, &src, &parsed.diagnostics));
        insta::assert_snapshot!(snap);
    });
}

/// The file with five unrelated syntax errors reports all five.
#[test]
fn five_errors_are_all_reported() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/syntax/err/five_errors.hwf"
    );
    let src = std::fs::read_to_string(path).unwrap();
    let parsed = hensu_syntax::parse(&src);
    assert_eq!(
        parsed.diagnostics.len(),
        5,
        "{}",
        human("five_errors.hwf", &src, &parsed.diagnostics)
    );
    let lines: std::collections::BTreeSet<usize> = parsed
        .diagnostics
        .iter()
        .map(|d| src[..d.primary.span.start as usize].lines().count())
        .collect();
    assert_eq!(
        lines.len(),
        5,
        "the five errors are on five different lines"
    );
}
