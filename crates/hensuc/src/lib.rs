//! The library behind `hensuc`: one module per command under [`commands`], the project loader
//! and the filesystem file provider. Exposed as a library so benchmarks and the language server
//! share exactly what the command line runs.

#[cfg(not(feature = "cli"))]
compile_error!(
    "hensuc needs the `cli` feature (on by default): build with `--features cli` or `--features server`"
);

pub mod args;
pub mod atomic_write;
pub mod commands;
pub mod commands_yaml;
pub mod fs_files;
pub mod logs;
pub mod output;
pub mod project;
mod project_files;

/// Exit codes shared by every command.
pub mod exit {
    pub const SUCCESS: u8 = 0;
    /// The input has errors, a run failed, or `fmt --check` found changes.
    pub const FAILURE: u8 = 1;
    /// Usage or I/O error.
    pub const USAGE: u8 = 2;
    /// `run`/`resume`: the run paused (a deferred review, `hensuc pause`); continue it with
    /// `hensuc resume ID`.
    pub const PAUSED: u8 = 3;
    /// `run`/`resume`: a second Ctrl-C exited without waiting for the run to stop (128 + SIGINT).
    pub const INTERRUPTED: u8 = 130;
    /// Internal error (panic).
    pub const INTERNAL: u8 = 101;
}
