//! How the lowering reads prompt and rubric files: a small trait so the compiler does no I/O of
//! its own. The CLI implements it over the filesystem (jailed to `prompts/` and `rubrics/`), the
//! LSP over open buffers, tests over [`MemoryFiles`].

use std::collections::HashMap;

/// The directory a resource file is read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResourceDir {
    /// `prompts/` — node and branch prompts ending in `.md`.
    Prompts,
    /// `rubrics/` — node, generic-node and branch rubrics ending in `.md`.
    Rubrics,
}

impl ResourceDir {
    /// The directory name (`prompts` / `rubrics`).
    pub fn as_str(self) -> &'static str {
        match self {
            ResourceDir::Prompts => "prompts",
            ResourceDir::Rubrics => "rubrics",
        }
    }
}

/// Why a resource file could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileError {
    /// No such file (E0208).
    NotFound,
    /// The path leaves its directory: absolute, `..`, a backslash or drive trick, or a symlink
    /// pointing outside (E0209).
    Escapes,
    /// Any other I/O failure (unreadable, not UTF-8, …).
    Io(String),
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileError::NotFound => f.write_str("file not found"),
            FileError::Escapes => f.write_str("path escapes its directory"),
            FileError::Io(msg) => write!(f, "cannot read file: {msg}"),
        }
    }
}

impl std::error::Error for FileError {}

/// Reads prompt and rubric files for the lowering.
pub trait FileProvider {
    /// Reads `relative` (a path relative to `dir`, already accepted by
    /// [`check_relative_path`]) as UTF-8 text.
    fn read(&self, dir: ResourceDir, relative: &str) -> Result<String, FileError>;

    /// The `.md` files of `dir` (relative names, sorted), for the did-you-mean of a missing
    /// file (E0208). A provider that cannot list returns none.
    fn list(&self, _dir: ResourceDir) -> Vec<String> {
        Vec::new()
    }
}

/// Rejects a resource path that could leave its directory, before any provider sees it: empty,
/// absolute (`/x`, `\x`, `C:x`), containing a `..` component, a backslash (a Windows separator
/// that would let `..\x` through on some systems), or a NUL byte. `.` components and relative
/// subdirectories (`reviews/code.md`) are fine. Symlinks are the provider's job.
pub fn check_relative_path(relative: &str) -> Result<(), FileError> {
    if relative.trim().is_empty() {
        return Err(FileError::NotFound);
    }
    if relative.starts_with('/') || relative.contains('\\') || relative.contains('\0') {
        return Err(FileError::Escapes);
    }
    let bytes = relative.as_bytes();
    if bytes.len() >= 2 && bytes[1] == b':' && bytes[0].is_ascii_alphabetic() {
        return Err(FileError::Escapes);
    }
    if relative.starts_with('~') {
        return Err(FileError::Escapes);
    }
    if relative.split('/').any(|c| c == "..") {
        return Err(FileError::Escapes);
    }
    Ok(())
}

/// Normalises an accepted relative path: drops empty and `.` components.
fn normalize(relative: &str) -> String {
    relative
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect::<Vec<_>>()
        .join("/")
}

/// An in-memory file provider (tests, the LSP's unsaved buffers).
#[derive(Clone, Debug, Default)]
pub struct MemoryFiles {
    files: HashMap<(ResourceDir, String), String>,
}

impl MemoryFiles {
    pub fn new() -> Self {
        MemoryFiles::default()
    }

    /// Adds (or replaces) a file.
    pub fn insert(&mut self, dir: ResourceDir, relative: &str, text: impl Into<String>) {
        self.files.insert((dir, normalize(relative)), text.into());
    }

    /// Builder form of [`MemoryFiles::insert`].
    pub fn with(mut self, dir: ResourceDir, relative: &str, text: impl Into<String>) -> Self {
        self.insert(dir, relative, text);
        self
    }
}

impl FileProvider for MemoryFiles {
    fn read(&self, dir: ResourceDir, relative: &str) -> Result<String, FileError> {
        check_relative_path(relative)?;
        self.files
            .get(&(dir, normalize(relative)))
            .cloned()
            .ok_or(FileError::NotFound)
    }

    fn list(&self, dir: ResourceDir) -> Vec<String> {
        let mut names: Vec<String> = self
            .files
            .keys()
            .filter(|(d, _)| *d == dir)
            .map(|(_, name)| name.clone())
            .collect();
        names.sort();
        names
    }
}

/// A provider with no files at all.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoFiles;

impl FileProvider for NoFiles {
    fn read(&self, _dir: ResourceDir, relative: &str) -> Result<String, FileError> {
        check_relative_path(relative)?;
        Err(FileError::NotFound)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        assert_eq!(check_relative_path("a.md"), Ok(()));
        assert_eq!(check_relative_path("sub/a.md"), Ok(()));
        assert_eq!(check_relative_path("./a.md"), Ok(()));
        assert_eq!(check_relative_path("a..b.md"), Ok(()));
        for bad in [
            "/etc/passwd.md",
            "../a.md",
            "x/../../a.md",
            "a\\..\\b.md",
            "C:a.md",
            "~/a.md",
        ] {
            assert_eq!(check_relative_path(bad), Err(FileError::Escapes), "{bad}");
        }
        assert_eq!(check_relative_path(""), Err(FileError::NotFound));
    }

    #[test]
    fn memory_files() {
        let files = MemoryFiles::new().with(ResourceDir::Prompts, "sub/a.md", "hello");
        assert_eq!(
            files.read(ResourceDir::Prompts, "./sub/a.md"),
            Ok("hello".to_string())
        );
        assert_eq!(
            files.read(ResourceDir::Rubrics, "sub/a.md"),
            Err(FileError::NotFound)
        );
        assert_eq!(
            files.read(ResourceDir::Prompts, "../a.md"),
            Err(FileError::Escapes)
        );
    }
}
