//! The filesystem [`Host`] of the stdio server.

use std::path::{Path, PathBuf};

use hensu_sema::files::{FileError, ResourceDir};

use hensu_project::ProjectFiles as _;

use crate::host::Host;

/// The filesystem host: prompts and rubrics jailed to `<root>/prompts/` and `<root>/rubrics/`
/// (absolute paths, `..` and symlinks out are refused), workflows listed from `<root>/workflows/`.
#[derive(Clone, Copy, Debug, Default)]
pub struct FsHost;

impl Host for FsHost {
    fn read_resource(
        &self,
        root: &str,
        dir: ResourceDir,
        relative: &str,
    ) -> Result<String, FileError> {
        hensu_sema::files::check_relative_path(relative)?;
        let base = Path::new(root).join(dir.as_str());
        let resolved = match base.join(relative).canonicalize() {
            Ok(p) => p,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(FileError::NotFound),
            Err(e) => return Err(FileError::Io(e.to_string())),
        };
        let base = base.canonicalize().map_err(|_| FileError::NotFound)?;
        if !resolved.starts_with(&base) {
            return Err(FileError::Escapes);
        }
        // A FIFO or device named like a prompt would block the server or never end.
        if !std::fs::metadata(&resolved).is_ok_and(|m| m.is_file()) {
            return Err(FileError::Io("not a regular file".to_string()));
        }
        let bytes = std::fs::read(&resolved).map_err(|e| FileError::Io(e.to_string()))?;
        String::from_utf8(bytes)
            .map_err(|_| FileError::Io("the file is not valid UTF-8".to_string()))
    }

    fn project_file(&self, root: &str) -> std::io::Result<Option<String>> {
        hensu_project::FsProjectFiles.read(&Path::new(root).join(hensu_project::PROJECT_FILE))
    }

    fn workflow_files(&self, root: &str) -> Vec<(String, String)> {
        let dir = PathBuf::from(root).join("workflows");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Vec::new();
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .filter(|p| p.to_str().is_some_and(crate::host::is_workflow_path))
            .collect();
        paths.sort();
        paths
            .into_iter()
            // Spans are u32 offsets; skip anything absurdly large.
            .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() < u64::from(u32::MAX)))
            .filter_map(|p| {
                let text = std::fs::read_to_string(&p).ok()?;
                Some((p.to_str()?.to_string(), text))
            })
            .collect()
    }
}
