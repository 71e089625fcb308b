//! The hensu-syntax test binary: fixture snapshots, string semantics, lexer details and
//! robustness (proptest, pathological inputs).
#![allow(clippy::unwrap_used)]

#[path = "syntax/common.rs"]
mod common;
#[path = "syntax/deferred.rs"]
mod deferred;
#[path = "syntax/fixtures.rs"]
mod fixtures;
#[path = "syntax/lexer_paths.rs"]
mod lexer_paths;
#[path = "syntax/lexing.rs"]
mod lexing;
#[path = "syntax/parsing.rs"]
mod parsing;
#[path = "syntax/robustness.rs"]
mod robustness;
#[path = "syntax/statement.rs"]
mod statement;
#[path = "syntax/strings.rs"]
mod strings;
