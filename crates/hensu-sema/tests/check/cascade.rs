//! Root cause first (docs/diagnostics/README.md, *Root cause first*): each fixture of
//! `tests/fixtures/sema/cascade/` has one mistake whose echoes (unknown nodes swallowed by an
//! unclosed block, false score gaps, unreachable nodes, "no workflow") used to be reported with
//! it. Exactly one diagnostic, the root cause, is left.

use hensu_diagnostics::{FileId, Files, render_human};
use hensu_sema::check::{InputKind, check_workflow};
use hensu_sema::lower_source;

use super::super::lower::DirFiles;

#[test]
fn one_root_cause_per_fixture() {
    insta::glob!("../fixtures/sema/cascade", "*.hwf", |path| {
        let src = std::fs::read_to_string(path).expect("fixture");
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("fixture");
        let lowered = lower_source(&src, FileId(0), &DirFiles(path.to_path_buf()));
        let mut diags = lowered.diagnostics.clone();
        if let Some(wf) = &lowered.workflow {
            diags.extend(check_workflow(wf, &lowered.origins, InputKind::Source));
        }
        let files = Files::single(name, src.as_str());
        let human = render_human(&files, &diags, false);
        assert_eq!(diags.len(), 1, "{name}:\n{human}");
        insta::assert_snapshot!(format!("{src}----- human\n{human}"));
    });
}
