//! `{variable}` template resolution, exactly as upstream `SimpleTemplateResolver`
//! (docs/language.md, *Prompts and templates*).
//!
//! One pass over `\{([a-zA-Z_][a-zA-Z0-9_]*)}`; an absent or null variable renders as `""`;
//! substituted text is never re-scanned; every other brace stays verbatim (`{a-b}`, `{"k":1}`,
//! `{}`), and `{{x}}` renders as `{` + value + `}`.

use std::borrow::Cow;

use crate::value::{Context, render};

/// Resolves `template` against `ctx`.
pub fn resolve(template: &str, ctx: &Context) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    resolve_into(template, &mut out, |name| {
        ctx.get(name).map(render).unwrap_or(Cow::Borrowed(""))
    });
    out
}

/// Resolves `template` with a custom renderer (`render(name)` returns the replacement text).
pub fn resolve_with<'a, F>(template: &str, mut render_var: F) -> String
where
    F: FnMut(&str) -> Cow<'a, str>,
{
    let mut out = String::with_capacity(template.len() + 32);
    resolve_into(template, &mut out, &mut render_var);
    out
}

/// Resolves into `out` (appending).
pub fn resolve_into<'a, F>(template: &str, out: &mut String, mut render_var: F)
where
    F: FnMut(&str) -> Cow<'a, str>,
{
    let bytes = template.as_bytes();
    let mut copied = 0;
    let mut i = 0;
    // `str::find` of a char jumps from brace to brace (memchr), not byte by byte.
    while let Some(at) = template[i..].find('{') {
        let open = i + at;
        match placeholder_end(bytes, open) {
            Some(end) => {
                out.push_str(&template[copied..open]);
                out.push_str(&render_var(&template[open + 1..end]));
                i = end + 1;
                copied = i;
            }
            None => i = open + 1,
        }
    }
    out.push_str(&template[copied..]);
}

/// If a placeholder `{ident}` starts at `open`, the index of its `}`.
fn placeholder_end(bytes: &[u8], open: usize) -> Option<usize> {
    let first = *bytes.get(open + 1)?;
    if !(first.is_ascii_alphabetic() || first == b'_') {
        return None;
    }
    let mut j = open + 2;
    while let Some(&b) = bytes.get(j) {
        if b == b'}' {
            return Some(j);
        }
        if !(b.is_ascii_alphanumeric() || b == b'_') {
            return None;
        }
        j += 1;
    }
    None
}

/// The placeholder names of a template, in order (duplicates kept).
pub fn placeholders(template: &str) -> Vec<&str> {
    let bytes = template.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'{'
            && let Some(end) = placeholder_end(bytes, i)
        {
            out.push(&template[i + 1..end]);
            i = end + 1;
            continue;
        }
        i += 1;
    }
    out
}
