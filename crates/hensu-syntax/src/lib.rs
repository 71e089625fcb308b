//! The front end of hensu: source text → tokens (logos) → syntax tree with spans (chumsky).
//! No I/O. See [`ast`] for the tree.

pub mod ast;
