//! Fixture tests over real sources (lowered by `hensu_sema::lower_source`): one fixture per code
//! under `tests/fixtures/sema/check/err/`, snapshotted with the source, the human rendering and
//! the JSON rendering; one directory per project case under `tests/fixtures/sema/project/`; and
//! the shipped examples, which must check without errors.

use std::path::{Path, PathBuf};

use hensu_diagnostics::{Diagnostic, FileId, Files, render_human, render_json};
use hensu_sema::check::{InputKind, ProjectUnit, check_project, check_workflow};
use hensu_sema::lower_source;

use super::super::lower::DirFiles;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sema")
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// Lowering diagnostics followed by the checks' (the checks run whenever there is an IR).
fn lower_and_check(src: &str, file: FileId, dir: &Path) -> (Vec<Diagnostic>, Option<hensu_sema::Lowered>) {
    let lowered = lower_source(src, file, &DirFiles(dir.to_path_buf()));
    let mut diags = lowered.diagnostics.clone();
    if let Some(wf) = &lowered.workflow {
        diags.extend(check_workflow(wf, &lowered.origins, InputKind::Source));
    }
    (diags, Some(lowered))
}

#[test]
fn examples_check_without_errors() {
    let dir = examples().join("workflows");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("examples/workflows")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("hwf" | "kt")))
        .collect();
    paths.sort();
    let mut report = String::new();
    for path in &paths {
        let src = std::fs::read_to_string(path).expect("example");
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("example");
        let (diags, _) = lower_and_check(&src, FileId(0), &examples());
        if !diags.is_empty() {
            report.push_str(&render_human(&Files::single(name, src.as_str()), &diags, false));
        }
    }
    assert!(report.is_empty(), "{report}");
}
