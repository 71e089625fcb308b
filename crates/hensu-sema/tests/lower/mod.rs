//! Lowering tests: fixture snapshots (IR JSON for `ok/`, rendered diagnostics for `err/`), the
//! Kotlin DSL's worked example (see `worked_example.rs`), the shipped examples, rule order.

mod node_alone;
mod rules;
mod worked_example;

use std::path::{Path, PathBuf};

use hensu_diagnostics::{Diagnostic, FileId, Files, render_human};
use hensu_sema::files::{FileError, FileProvider, ResourceDir, check_relative_path};
use hensu_sema::{Lowered, lower_source};

/// Reads `prompts/` and `rubrics/` under a directory (tests only; no symlink jail).
pub struct DirFiles(pub PathBuf);

impl FileProvider for DirFiles {
    fn read(&self, dir: ResourceDir, relative: &str) -> Result<String, FileError> {
        check_relative_path(relative)?;
        let path = self.0.join(dir.as_str()).join(relative);
        std::fs::read_to_string(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => FileError::NotFound,
            _ => FileError::Io(e.to_string()),
        })
    }

    fn list(&self, dir: ResourceDir) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.0.join(dir.as_str()))
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with(".md"))
            .collect();
        names.sort();
        names
    }
}

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sema/lower")
}

pub fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// Lowers a source with the fixture prompts and rubrics.
pub fn lower_str(src: &str) -> Lowered {
    lower_source(src, FileId(0), &DirFiles(fixtures()))
}

pub fn render(name: &str, src: &str, diagnostics: &[Diagnostic]) -> String {
    let files = Files::single(name, src);
    render_human(&files, diagnostics, false)
}

pub fn codes(l: &Lowered) -> Vec<&'static str> {
    l.diagnostics.iter().map(|d| d.code).collect()
}

#[test]
fn ok_fixtures() {
    insta::glob!("../fixtures/sema/lower/ok", "*.hwf", |path| {
        let src = std::fs::read_to_string(path).expect("fixture");
        let l = lower_str(&src);
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("fixture");
        assert!(
            l.diagnostics.is_empty(),
            "{}",
            render(name, &src, &l.diagnostics)
        );
        let wf = l.workflow.expect("a workflow");
        insta::assert_snapshot!(hensu_ir::to_json(&wf));
    });
}

#[test]
fn err_fixtures() {
    insta::glob!("../fixtures/sema/lower/err", "*.hwf", |path| {
        let src = std::fs::read_to_string(path).expect("fixture");
        let l = lower_str(&src);
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("fixture");
        // The fixture name starts with the code it demonstrates.
        let code = name.split(['-', '.']).next().unwrap_or_default();
        assert!(
            l.diagnostics.iter().any(|d| d.code == code),
            "{name} should report {code}:\n{}",
            render(name, &src, &l.diagnostics)
        );
        for d in &l.diagnostics {
            assert!(
                hensu_diagnostics::is_known(d.code),
                "{} is not in the catalogue",
                d.code
            );
        }
        insta::assert_snapshot!(format!(
            "{src}\n-----\n{}",
            render(name, &src, &l.diagnostics)
        ));
    });
}

#[test]
fn examples_lower_cleanly() {
    let dir = examples().join("workflows");
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("examples/workflows")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("hwf" | "kt")))
        .collect();
    entries.sort();
    assert!(!entries.is_empty());
    let mut failures = String::new();
    for path in entries {
        let src = std::fs::read_to_string(&path).expect("example");
        let l = lower_source(&src, FileId(0), &DirFiles(examples()));
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("example")
            .to_string();
        if !l.diagnostics.is_empty() || l.workflow.is_none() {
            failures.push_str(&render(&name, &src, &l.diagnostics));
        }
    }
    assert!(failures.is_empty(), "{failures}");
}

#[test]
fn never_panics_on_broken_input() {
    let mut sources: Vec<String> = Vec::new();
    for dir in [
        examples().join("workflows"),
        fixtures().join("ok"),
        fixtures().join("err"),
    ] {
        for entry in std::fs::read_dir(dir).expect("dir").flatten() {
            if let Ok(text) = std::fs::read_to_string(entry.path()) {
                sources.push(text);
            }
        }
    }
    // Every prefix of real workflows, cut at char boundaries: recovery trees of all sorts.
    for src in &sources {
        for cut in (0..src.len())
            .step_by(11)
            .filter(|i| src.is_char_boundary(*i))
        {
            let _ = lower_str(&src[..cut]);
        }
    }
    for junk in [
        "",
        "}",
        "workflow",
        "workflow(",
        "workflow(1) { graph { node(2) { onScore { whenScore `in` 3..",
        "fun x() { return }",
        "workflow(\"x\") { graph { start; start at; start at 3; node(\"a\") { onSuccess; onScore(1) { whenScore; otherwise } } } }",
        "workflow(\"x\") { graph { generic(\"g\") { config { 1 to 2; \"k\" to; x } } action(\"a\") { send(); send(1, 2) } } }",
    ] {
        let _ = lower_str(junk);
    }
}

#[test]
fn removed_form_without_any_home_is_e0101() {
    let l = lower_str(
        "workflow(\"x\") { graph { start at \"n\"\n node(\"n\") { onApproval revise \"n\" retry 1 otherwise \"n\"; onSuccess goto \"n\" } } }",
    );
    assert_eq!(codes(&l), ["E0101"]);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Token soup from the language's vocabulary never makes the lowering panic.
    #[test]
    fn token_soup_never_panics(tokens in proptest::collection::vec(0usize..TOKENS.len(), 0..80)) {
        let src: String = tokens.iter().map(|i| TOKENS[*i]).collect::<Vec<_>>().join(" ");
        let _ = lower_str(&format!("workflow(\"x\") {{ graph {{ start at \"a\"\n{src}\n}} }}"));
        let _ = lower_str(&src);
    }
}

const TOKENS: &[&str] = &[
    "workflow",
    "graph",
    "node",
    "parallel",
    "fork",
    "join",
    "generic",
    "action",
    "subWorkflow",
    "end",
    "branch",
    "consensus",
    "review",
    "onScore",
    "onCondition",
    "onSuccess",
    "onFailure",
    "onApproval",
    "onRejection",
    "onConsensus",
    "onNoConsensus",
    "onComplete",
    "whenScore",
    "whenValue",
    "otherwise",
    "goto",
    "revise",
    "retry",
    "withFeedback",
    "`in`",
    "start",
    "at",
    "to",
    "mapOf",
    "listOf",
    "config",
    "state",
    "agents",
    "agent",
    "input",
    "variable",
    "writes",
    "targets",
    "await",
    "send",
    "execute",
    "{",
    "}",
    "(",
    ")",
    ",",
    ";",
    "=",
    "..",
    ".",
    "+",
    "\n",
    "\"a\"",
    "\"b.md\"",
    "\"../x.md\"",
    "3",
    "-1",
    "2.5",
    "10L",
    "true",
    "null",
    "VarType.STRING",
    "Models.GPT_4O",
    "STRING",
    "equalTo",
    "lessThan",
    "\"\"\"raw\"\"\".trimIndent()",
    "planning",
    "loop",
];

/// Each fix of the lowering, applied to the source, gives the text the help line names.
#[test]
fn suggestions_replace_the_misspelled_text() {
    let src = std::fs::read_to_string(fixtures().join("err/E0108-unknown-constant.hwf"))
        .expect("fixture");
    let l = lower_str(&src);
    let mut fixed: Vec<(String, String, &str)> = Vec::new();
    for d in &l.diagnostics {
        for s in &d.suggestions {
            let written = src[s.span.range()].to_string();
            fixed.push((written, s.replacement.clone(), d.code));
        }
    }
    assert_eq!(
        fixed,
        vec![
            ("STRNG".to_string(), "STRING".to_string(), "E0108"),
            ("NUMBR".to_string(), "NUMBER".to_string(), "E0108"),
            ("GPT_40".to_string(), "GPT_4O".to_string(), "E0108"),
            (
                "ExitStatuss.FAILURE".to_string(),
                "ExitStatus.FAILURE".to_string(),
                "E0108"
            ),
        ]
    );

    let src = r#"workflow("w") {
    graph {
        start at "n"
        node("n") {
            agnt = "a"
            onSuccess goto "done"
            onScore { whenn score >= 80 goto "done" }
        }
        end("done")
    }
}
"#;
    let l = lower_str(src);
    let fixes: Vec<(&str, &str)> = l
        .diagnostics
        .iter()
        .flat_map(|d| &d.suggestions)
        .map(|s| (&src[s.span.range()], s.replacement.as_str()))
        .collect();
    assert!(fixes.contains(&("agnt", "agent")), "{fixes:?}");
}
