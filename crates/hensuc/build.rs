//! The commit `hensuc --version` shows (docs/install.md, *Version and commit*).
//!
//! `HENSU_BUILD_COMMIT` wins when set (a build from a source archive without `.git` can name
//! its commit this way); otherwise `git rev-parse` of the checkout; otherwise `unknown`. A build
//! never fails for want of git. The script reruns when HEAD moves (a commit, a checkout).

use std::path::PathBuf;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!text.is_empty()).then_some(text)
}

/// Tells cargo to rerun this script when a file git keeps at `path` (relative to the git dir,
/// resolved for worktrees by `git rev-parse --git-path`) changes.
fn watch_git_path(path: &str) {
    if let Some(file) = git(&["rev-parse", "--path-format=absolute", "--git-path", path]) {
        let file = PathBuf::from(file);
        if file.exists() {
            println!("cargo:rerun-if-changed={}", file.display());
        }
    }
}

fn main() {
    println!("cargo:rerun-if-env-changed=HENSU_BUILD_COMMIT");
    let from_env = std::env::var("HENSU_BUILD_COMMIT")
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty());
    if from_env.is_none() {
        watch_git_path("HEAD");
        // The branch HEAD points to moves on every commit; packed refs hold it after gc.
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            watch_git_path(&branch);
        }
        watch_git_path("packed-refs");
    }
    // Only a checkout that tracks this very file is hensu's: a source archive unpacked inside
    // some other repository must not take that repository's commit.
    let commit = from_env
        .or_else(|| {
            git(&["ls-files", "--error-unmatch", "build.rs"])?;
            git(&["rev-parse", "--short=12", "HEAD"])
        })
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=HENSU_BUILD_COMMIT={commit}");
}
