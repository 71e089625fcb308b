//! hensu-project: `hensu.toml` parsed once, every problem a spanned diagnostic.

mod config_file;
mod handlers;
mod schedules;
mod workspace;
