//! hensu-project — a hensu project as every face sees it (like ruff's `ruff_workspace`).
//!
//! * [`ProjectConfig`]: the one serde type of `hensu.toml`, a field per section; sections keep
//!   their types in the crates that use them (hensu-providers, hensu-mcp) or here.
//! * [`ProjectFile`]: `hensu.toml` parsed once with one error policy — every problem a
//!   diagnostic with a code and a span into the file (E0906 invalid, E0907 unknown key, W0903
//!   unknown section, W0904 `allow_hosts` entry that is not a host, E0906 for a bad `[server.egress] allow` entry, W0905 price for a model no
//!   agent uses, W0315 `[lints]`), messages that never repeat a value of the file.
//! * [`Workspace`]: a project directory and its file, read through [`ProjectFiles`] (the LSP
//!   passes its open buffers); [`discover`] walks up to the nearest `hensu.toml`.
//! * [`compile`]: the compile steps the CLI, the language server and the server share.
//!
//! The crate does no network I/O and starts no process: it reads the project file and
//! checks it, nothing else (docs/security.md).

mod checks;
pub mod compile;
mod config;
mod handlers;
mod limits;
mod load;
mod messages;
pub mod schedules;
mod spans;
mod workspace;

pub use config::{
    BoundsSection, EgressSection, NetworkConfig, PriceEntry, ProjectConfig, SecretInFile,
    ServerSection, StoreSection, TelemetrySection,
};
pub use handlers::{BUILT_IN_HANDLERS, HandlerEntry, HandlerKind, McpForward, is_env_name};
pub use limits::{Limits, parse_duration};
pub use load::{PROJECT_FILE, ProjectFile};
pub use workspace::{FsProjectFiles, ProjectFiles, Workspace, discover};
