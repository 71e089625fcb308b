//! The filesystem implementation of the compiler's file trait: prompts and rubrics are read from
//! `<working dir>/prompts/` and `<working dir>/rubrics/`, jailed to those directories (a path
//! that is absolute, uses `..`, or resolves through a symlink to outside is refused).

use std::path::{Path, PathBuf};

use hensu_sema::files::{FileError, FileProvider, ResourceDir};

pub struct FsFiles {
    root: PathBuf,
}

impl FsFiles {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        FsFiles { root: root.into() }
    }

    fn dir(&self, dir: ResourceDir) -> PathBuf {
        match dir {
            ResourceDir::Prompts => self.root.join("prompts"),
            ResourceDir::Rubrics => self.root.join("rubrics"),
        }
    }
}

impl FileProvider for FsFiles {
    fn read(&self, dir: ResourceDir, relative: &str) -> Result<String, FileError> {
        hensu_sema::files::check_relative_path(relative)?;
        let base = self.dir(dir);
        let path = base.join(relative);
        let resolved = match path.canonicalize() {
            Ok(p) => p,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(FileError::NotFound),
            Err(e) => return Err(FileError::Io(e.to_string())),
        };
        let base = base.canonicalize().map_err(|_| FileError::NotFound)?;
        if !resolved.starts_with(&base) {
            return Err(FileError::Escapes);
        }
        read_text(&resolved)
    }

    fn list(&self, dir: ResourceDir) -> Vec<String> {
        // At most this many names are offered to the did-you-mean of a missing file.
        const MAX_LISTED: usize = 1_000;
        let mut names: Vec<String> = std::fs::read_dir(self.dir(dir))
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n.ends_with(".md"))
            .take(MAX_LISTED)
            .collect();
        names.sort();
        names
    }
}

fn read_text(path: &Path) -> Result<String, FileError> {
    refuse_non_regular(path)?;
    let bytes = std::fs::read(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => FileError::NotFound,
        _ => FileError::Io(e.to_string()),
    })?;
    String::from_utf8(bytes).map_err(|_| FileError::Io("the file is not valid UTF-8".to_string()))
}

/// Only regular files are opened: a FIFO named like a prompt would block `check` for ever, a
/// device (`/dev/zero`) would be read without end (docs/security.md, *What hensuc reads*).
pub fn refuse_non_regular(path: &Path) -> Result<(), FileError> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => Ok(()),
        Ok(_) => Err(FileError::Io("not a regular file".to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(FileError::NotFound),
        Err(e) => Err(FileError::Io(e.to_string())),
    }
}
