//! `Workspace::load` through a `ProjectFiles` (unsaved buffers) and the walk up to the project.

use std::path::Path;

use hensu_project::{ProjectFiles, Workspace, discover};

/// One unsaved `hensu.toml`, as the language server holds it.
struct Buffer(&'static str);

impl ProjectFiles for Buffer {
    fn read(&self, path: &Path) -> std::io::Result<Option<String>> {
        Ok(path.ends_with("hensu.toml").then(|| self.0.to_string()))
    }
}

#[test]
fn a_workspace_reads_its_file_through_the_provider() {
    let ws =
        Workspace::load(Path::new("/p"), &Buffer("[lints]\nW0201 = \"deny\"\n")).expect("loads");
    assert_eq!(ws.file.lint_levels.len(), 1);
    assert!(ws.file.exists);
    let none = Workspace::load_dir(Path::new("/nonexistent-hensu-dir")).expect("no file");
    assert!(!none.file.exists);
    assert!(none.file.diagnostics.is_empty());
}

#[test]
fn a_broken_file_is_refused_with_its_place() {
    let ws = Workspace::load(Path::new("/p"), &Buffer("[retry]\nmax_attempts = \"x\"\n"))
        .expect("loads");
    let e = ws.config_or_refusal().expect_err("refused");
    assert!(e.starts_with("/p/hensu.toml:2:"), "{e}");
    assert!(e.contains("E0906"), "{e}");
}

#[test]
fn discovery_walks_up_to_the_nearest_project_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("proj");
    let deep = root.join("workflows").join("sub");
    std::fs::create_dir_all(&deep).expect("dirs");
    assert_eq!(discover(&deep), None);
    std::fs::write(root.join("hensu.toml"), "").expect("write");
    assert_eq!(discover(&deep).as_deref(), Some(root.as_path()));
    assert_eq!(discover(&root).as_deref(), Some(root.as_path()));
}
