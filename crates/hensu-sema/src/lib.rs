//! Semantic analysis of hensu workflows: the schema-driven lowering of the syntax tree to the
//! typed IR, and every check of the language specification. No I/O: prompt and rubric files come
//! in through [`FileProvider`]-style traits so the CLI and the LSP share this crate.

pub mod origins;
