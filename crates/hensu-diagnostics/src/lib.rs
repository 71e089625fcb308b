//! The one neutral diagnostic model every phase of hensu reports through, and its renderers.
//!
//! Phases (lexer, parser, lowering, checks, runtime loading) build [`Diagnostic`] values; the
//! renderers (human via ariadne, JSON, SARIF, LSP in `hensuc`) only read them. This crate does no I/O
//! except writing into the `std::io::Write` a renderer is given.

mod model;

pub use model::*;
