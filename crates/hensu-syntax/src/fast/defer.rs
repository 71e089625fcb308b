//! The compiler's path through the fast parser ([`crate::parse_deferring_graphs`]): the
//! statements of a workflow's `graph { }` and `state { }` blocks are skipped, and only their
//! spans and tokens kept.

use super::P;
use crate::DeferredGraph;
use crate::ast::*;
use crate::layout::MAX_DEPTH;
use crate::lexer::{Token, TokenKind as T};

/// The state of [`parse_deferring_graphs`].
#[derive(Default)]
pub(super) struct Deferring {
    /// The depth inside the braces of the innermost `workflow(…) { … }` block being parsed.
    pub(super) workflow_depth: Option<u32>,
    pub(super) graphs: Vec<DeferredGraph>,
    /// The parse gave up because a block to defer holds an annotation.
    pub(super) undeferrable: bool,
}

/// [`super::parse`], leaving the statements of every `graph { }` and `state { }` block written
/// directly in a `workflow(…) { … }` block out of the tree: each is skipped, and its span is
/// listed in the block's [`DeferredGraph`] ([`crate::parse_deferring_graphs`]). `Err(true)` when it gave up
/// because a block to defer holds an annotation (parse the file again without deferring),
/// `Err(false)` when [`super::parse`] would give up too.
pub(crate) fn parse_deferring_graphs<'s>(
    src: &'s str,
    toks: &[Token],
) -> Result<(Vec<Stmt<'s>>, Vec<DeferredGraph>), bool> {
    let mut p = P::new(src, toks, Some(Deferring::default()), 64);
    match p.file() {
        Some(items) => Ok((items, p.defer.map_or_else(Vec::new, |d| d.graphs))),
        None => Err(p.defer.is_some_and(|d| d.undeferrable)),
    }
}

impl<'s> P<'_, 's> {
    /// The trailing block of a call to `callee` (a name followed by `{`, or a call without a
    /// block yet): where [`parse_deferring_graphs`] tracks `workflow` blocks and defers `graph`
    /// and `state` blocks directly inside them.
    pub(super) fn call_block(&mut self, callee: Option<&str>) -> Option<Block<'s>> {
        let Some(defer) = &mut self.defer else {
            return self.block(false);
        };
        match callee {
            Some("workflow") => {
                let outer = defer.workflow_depth.replace(self.at.depth + 1);
                let block = self.block(false);
                if let Some(defer) = &mut self.defer {
                    defer.workflow_depth = outer;
                }
                block
            }
            // A large workflow is mostly its graph and its state block.
            Some("graph" | "state") if defer.workflow_depth == Some(self.at.depth) => {
                self.block(true)
            }
            _ => self.block(false),
        }
    }

    /// The statements of a deferred block, skipped without building a tree: each runs to the
    /// separator (or the `}`) at the block's depth, the layout rules applied by the cursor at
    /// that depth (a delimited part is skipped to its closer), so only its span is kept; [`crate::parse_statement`] parses it when it is
    /// lowered (and finds any error in it). The block goes into the tree without statements.
    pub(super) fn deferred_block(&mut self, start: usize) -> Option<Block<'s>> {
        let depth = self.at.depth;
        let mut spans = Vec::new();
        let mut tokens = Vec::new();
        while self.peek() != Some(T::RBrace) {
            let first_pos = self.at.pos;
            let first = self.toks.get(first_pos)?.span.start;
            loop {
                match self.peek()? {
                    T::Newline | T::Semi | T::RBrace => break,
                    // Unbalanced: the layout pass reports it.
                    T::RParen | T::RBracket => return None,
                    // Annotations are collected from the tree before lowering (`@Suppress`):
                    // the caller parses a file whose graph holds one without deferring.
                    T::Annotation => return self.undeferrable(),
                    T::LParen | T::LBracket | T::LBrace => {
                        self.bump()?;
                        self.skip_to_closer()?;
                        self.bump()?;
                    }
                    _ => self.bump()?,
                }
            }
            spans.push(Span::new(first, self.at.prev_end));
            // The statement's tokens, kept so that it is not lexed again: exactly its own (not
            // the line breaks the layout rules dropped after it, before a `}`), one allocation
            // each, freed as soon as it is parsed.
            let mut end = self.at.pos;
            while end > first_pos && self.toks.get(end - 1)?.span.start >= self.at.prev_end {
                end -= 1;
            }
            tokens.push(self.toks.get(first_pos..end)?.into());
            self.stmt_end();
        }
        self.eat(T::RBrace)?;
        let span = self.span_from(start)?;
        self.defer.as_mut()?.graphs.push(DeferredGraph {
            block: span,
            depth,
            stmts: spans,
            tokens,
        });
        Some(Block {
            stmts: Vec::new(),
            span,
        })
    }

    /// From inside a delimiter the cursor just opened to its closer: line breaks mean nothing
    /// to the balance, so the tokens are scanned without the layout rules (the cursor's newline
    /// rules apply again from the closer, at the statement's depth). Gives up where the parser
    /// would: past [`MAX_DEPTH`], at the end of the file, at an annotation (see above).
    fn skip_to_closer(&mut self) -> Option<()> {
        let mut nested = 0u32;
        let mut pos = self.at.pos;
        loop {
            match self.toks.get(pos)?.kind {
                T::LParen | T::LBracket | T::LBrace => {
                    if (self.at.depth + nested) as usize >= MAX_DEPTH {
                        return None;
                    }
                    nested += 1;
                }
                T::RParen | T::RBracket | T::RBrace if nested == 0 => break,
                T::RParen | T::RBracket | T::RBrace => nested -= 1,
                T::Annotation => return self.undeferrable(),
                _ => {}
            }
            pos += 1;
        }
        self.at.pos = pos;
        Some(())
    }

    #[cold]
    fn undeferrable<R>(&mut self) -> Option<R> {
        if let Some(defer) = &mut self.defer {
            defer.undeferrable = true;
        }
        None
    }
}
