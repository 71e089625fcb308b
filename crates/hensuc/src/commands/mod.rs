pub mod build;
pub mod check;
pub mod explain;
pub mod fmt;
pub mod graph;
pub mod lsp;
pub mod run;
