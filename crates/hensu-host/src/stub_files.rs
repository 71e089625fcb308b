//! Stub agent response files on disk: `<stubs-dir>/<scenario>/<id>.txt`. The lookup ladder,
//! scenarios and the generated fall-back live in the engine (`hensu_runtime::StubProvider`);
//! this is only the file reading, done with `tokio::fs` so it never blocks the executor.

use std::path::PathBuf;

use async_trait::async_trait;
use hensu_runtime::StubFiles;

/// Stub files on disk under a `stubs/` directory.
#[derive(Clone, Debug)]
pub struct FsStubFiles {
    root: PathBuf,
}

impl FsStubFiles {
    /// Stubs under `root` (usually `<working-dir>/stubs`).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        FsStubFiles { root: root.into() }
    }
}

/// A path component that cannot leave its directory.
fn safe_component(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('.')
        && !s.contains(['/', '\\', '\0'])
        && !s.contains(std::path::MAIN_SEPARATOR)
}

#[async_trait]
impl StubFiles for FsStubFiles {
    async fn read(&self, scenario: &str, id: &str) -> Option<String> {
        if !safe_component(scenario) || !safe_component(id) {
            return None;
        }
        tokio::fs::read_to_string(self.root.join(scenario).join(format!("{id}.txt")))
            .await
            .ok()
    }
}
