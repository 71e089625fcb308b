//! The one neutral diagnostic model every phase of hensu reports through, and its renderers.
//!
//! Phases (lexer, parser, lowering, checks, runtime loading) build [`Diagnostic`] values; the
//! renderers (human via ariadne, JSON, SARIF here; the LSP conversion in `crates/hensu-lsp`) only
//! read them. This crate does no I/O
//! except writing into the `std::io::Write` a renderer is given.
//!
//! - [`Files`] / [`SourceFile`]: the source table, byte offset → line/column ([`source`]).
//! - [`render_human`]: rustc-style text via ariadne ([`human`]).
//! - [`render_json`]: the `--format json` envelope ([`json`]).
//! - [`render_sarif`]: SARIF 2.1.0 ([`sarif`]).
//! - [`codes`]: every code as a constant ([`Diagnostic::new`] takes one).
//! - [`catalogue`]: every code with its explanation (`hensuc explain`).

pub mod catalogue;
pub mod codes;
pub mod human;
pub mod json;
pub mod lints;
mod model;
pub mod sarif;
pub mod source;

pub use catalogue::{CodeInfo, is_known, lookup};
pub use codes::Code;
pub use human::{
    ColorChoice, Counts, explain_hint, render_human, render_human_one, summary_line, write_human,
};
pub use json::{JsonReport, render_json};
pub use model::*;
pub use sarif::render_sarif;
pub use source::{Files, LineCol, Position, SourceFile};

/// Sort diagnostics into a stable reading order: by file, then start and end of the primary span,
/// then code and message. (Renderers keep the order they are given; call this first if the
/// producing phases did not already emit in source order.)
pub fn sort_diagnostics(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by(|a, b| {
        (
            a.primary.file,
            a.primary.span.start,
            a.primary.span.end,
            a.code,
            &a.message,
        )
            .cmp(&(
                b.primary.file,
                b.primary.span.start,
                b.primary.span.end,
                b.code,
                &b.message,
            ))
    });
}
