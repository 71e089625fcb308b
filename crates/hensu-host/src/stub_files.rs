//! Stub agent response files on disk: `<stubs-dir>/<scenario>/<id>.txt`. The lookup ladder,
//! scenarios and the generated fall-back live in the engine (`hensu_runtime::StubProvider`);
//! this is only the file reading, done with `tokio::fs` so it never blocks the executor.
//! The stubs directory itself is resolved once per [`FsStubFiles`] (at its first lookup):
//! a chain of stub nodes without one costs no filesystem call per node.
//!
//! Reads are confined to the stubs directory like prompts are to `prompts/`
//! (docs/security.md, *Stub scenarios*): a scenario or id that is not a plain name is never
//! looked up, and a file or scenario directory that resolves (through a symlink) outside the
//! stubs directory, or is not a regular file, is an error rather than a silent fall-back.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use hensu_runtime::StubFiles;
use tokio::sync::OnceCell;

/// Stub files on disk under a `stubs/` directory.
#[derive(Clone, Debug)]
pub struct FsStubFiles {
    root: PathBuf,
    /// `root` canonicalized at the first lookup (`None`: there is no stubs directory).
    canonical_root: OnceCell<Option<PathBuf>>,
}

impl FsStubFiles {
    /// Stubs under `root` (usually `<working-dir>/stubs`).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        FsStubFiles {
            root: root.into(),
            canonical_root: OnceCell::new(),
        }
    }

    /// `path` canonicalized: `Ok(None)` when it does not exist, an error when it resolves
    /// outside the (canonical) root.
    async fn confined(
        &self,
        root: &Path,
        path: &Path,
        what: &str,
    ) -> Result<Option<PathBuf>, String> {
        match tokio::fs::canonicalize(path).await {
            Ok(real) if real.starts_with(root) => Ok(Some(real)),
            // The directory is not named: on a server it is the server's, not the tenant's.
            Ok(_) => Err(format!("{what} resolves outside the stubs directory")),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("{what} cannot be read: {e}")),
        }
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
    async fn read(&self, scenario: &str, id: &str) -> Result<Option<String>, String> {
        // Not a plain name: no such file can exist (the engine already refused an unknown
        // scenario; an id comes from the workflow).
        if !safe_component(scenario) || !safe_component(id) {
            return Ok(None);
        }
        let root = self
            .canonical_root
            .get_or_init(|| async { tokio::fs::canonicalize(&self.root).await.ok() })
            .await;
        let Some(root) = root else {
            return Ok(None);
        };
        let shown = format!("{scenario}/{id}.txt");
        if self
            .confined(
                root,
                &self.root.join(scenario),
                &format!("stub scenario `{scenario}`"),
            )
            .await?
            .is_none()
        {
            return Ok(None);
        }
        let file = self.root.join(scenario).join(format!("{id}.txt"));
        let what = format!("stub file `{shown}`");
        let Some(real) = self.confined(root, &file, &what).await? else {
            return Ok(None);
        };
        let meta = tokio::fs::metadata(&real)
            .await
            .map_err(|e| format!("stub file `{shown}` cannot be read: {e}"))?;
        if !meta.is_file() {
            return Err(format!(
                "stub file `{shown}` cannot be read: not a regular file"
            ));
        }
        tokio::fs::read_to_string(&real)
            .await
            .map(Some)
            .map_err(|e| format!("stub file `{shown}` cannot be read: {e}"))
    }

    async fn scenarios(&self) -> Vec<String> {
        let mut out = Vec::new();
        let Ok(mut entries) = tokio::fs::read_dir(&self.root).await else {
            return out;
        };
        while let Ok(Some(entry)) = entries.next_entry().await {
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            // A symlinked scenario is listed (and refused when read if it leads outside).
            let is_dir = tokio::fs::metadata(entry.path())
                .await
                .is_ok_and(|m| m.is_dir());
            if is_dir && safe_component(&name) {
                out.push(name);
            }
        }
        out.sort();
        out
    }
}
