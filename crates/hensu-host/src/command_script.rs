//! How a `commands.yaml` command line receives values: never as shell text.
//!
//! The author writes `{name}` placeholders anywhere in the command (docs/language.md, *Actions
//! and commands*). Before anything runs, each occurrence is rewritten into a reference to the
//! environment variable `HENSU_VALUE_name`, spelled for the shell context it stands in, and
//! the values are passed in the environment of `/bin/sh` (docs/security.md, *How values reach a
//! command*). The shell never parses the result of a parameter expansion as code, so a value
//! reaches the command as data whatever it contains and wherever the placeholder stands:
//!
//! | placeholder stands …                    | rewritten to            | the value arrives          |
//! |-----------------------------------------|-------------------------|----------------------------|
//! | unquoted (`echo {x}`)                   | `${V+"${V}"}`           | as one word (none if null) |
//! | in single quotes (`'a {x} b'`)          | `'"${V-}"'`             | inside the quoted word     |
//! | in double quotes (`"a {x} b"`)          | `${V-}`                 | inside the quoted word     |
//! | in a heredoc body (`<<EOF`)             | `${V-}`                 | inside the body            |
//!
//! Places where no reference can keep the value data are refused when `commands.yaml` is
//! loaded, with the command and the reason: a heredoc whose delimiter is quoted (no expansion
//! happens there), arithmetic `$((…))` (its text is evaluated as an expression), backquotes
//! (write `$(…)`), `${…}` and `$'…'`, a placeholder right after a backslash and in a heredoc
//! delimiter. `${name}` is the shell's own parameter expansion, not a placeholder.
//!
//! Getting the context wrong can only misplace a value, never execute it: every rewritten form
//! is balanced in every context and contains nothing but parameter references.

/// The prefix of the environment variable carrying the value of placeholder `{name}`.
pub const VALUE_VAR_PREFIX: &str = "HENSU_VALUE_";

/// A command line ready for `/bin/sh -c`: the script text contains no value, only references
/// to the variables named by [`CommandScript::variables`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandScript {
    /// The rewritten script.
    pub script: String,
    /// The placeholder names, each once, in order of first use.
    pub placeholders: Vec<String>,
}

impl CommandScript {
    /// `(placeholder, environment variable)` pairs.
    pub fn variables(&self) -> impl Iterator<Item = (&str, String)> {
        self.placeholders.iter().map(|p| (p.as_str(), value_var(p)))
    }
}

/// The environment variable carrying placeholder `name`.
pub fn value_var(name: &str) -> String {
    format!("{VALUE_VAR_PREFIX}{name}")
}

/// Why a command line cannot be rewritten, with the byte offset in the command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptError {
    pub offset: usize,
    pub message: String,
}

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (at byte {})", self.message, self.offset)
    }
}

/// Rewrites every `{name}` placeholder of `command` into a variable reference.
pub fn rewrite(command: &str) -> Result<CommandScript, ScriptError> {
    let mut s = Scanner {
        src: command.as_bytes(),
        text: command,
        pos: 0,
        out: String::with_capacity(command.len() + 32),
        placeholders: Vec::new(),
        pending_heredocs: Vec::new(),
    };
    s.code(Until::End)?;
    if let Some(h) = s.pending_heredocs.first() {
        return Err(s.error_at(h.offset, "a heredoc has no body (the command ends first)"));
    }
    Ok(CommandScript {
        script: s.out,
        placeholders: s.placeholders,
    })
}

/// Where a stretch of shell code ends.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Until {
    /// The end of the command.
    End,
    /// The `)` closing `$(`.
    Paren,
}

/// Constructs whose content cannot receive a value.
#[derive(Clone, Copy)]
enum Opaque {
    Backquote,
    Arithmetic,
    ParameterExpansion,
    AnsiC,
}

impl Opaque {
    fn reason(self) -> &'static str {
        match self {
            Opaque::Backquote => {
                "a placeholder inside backquotes cannot receive a value safely; write $(…) instead"
            }
            Opaque::Arithmetic => {
                "a placeholder inside $((…)) would be evaluated as an arithmetic expression; pass it as a word instead"
            }
            Opaque::ParameterExpansion => {
                "a placeholder inside ${…} cannot receive a value; `${name}` is the shell's own variable"
            }
            Opaque::AnsiC => {
                "a placeholder inside $'…' cannot receive a value; use '…' or \"…\" instead"
            }
        }
    }
}

struct PendingHeredoc {
    offset: usize,
    delimiter: Vec<u8>,
    strip_tabs: bool,
    expands: bool,
}

struct Scanner<'a> {
    src: &'a [u8],
    text: &'a str,
    pos: usize,
    out: String,
    placeholders: Vec<String>,
    pending_heredocs: Vec<PendingHeredoc>,
}

impl Scanner<'_> {
    fn error_at(&self, offset: usize, message: &str) -> ScriptError {
        ScriptError {
            offset,
            message: message.to_string(),
        }
    }

    fn peek(&self, ahead: usize) -> Option<u8> {
        self.src.get(self.pos + ahead).copied()
    }

    /// Copies `n` bytes verbatim.
    fn copy(&mut self, n: usize) {
        let end = (self.pos + n).min(self.src.len());
        self.out.push_str(&self.text[self.pos..end]);
        self.pos = end;
    }

    /// Copies one character verbatim (a whole UTF-8 sequence).
    fn copy_char(&mut self) {
        let len = self.text[self.pos..]
            .chars()
            .next()
            .map_or(1, char::len_utf8);
        self.copy(len);
    }

    /// Copies one character verbatim and appends its bytes to `word`.
    fn copy_char_into(&mut self, word: &mut Vec<u8>) {
        let start = self.pos;
        self.copy_char();
        word.extend_from_slice(&self.src[start..self.pos]);
    }

    /// The name of a placeholder `{name}` starting at the current position, and its length.
    fn placeholder_here(&self) -> Option<(&str, usize)> {
        placeholder_at(self.text, self.pos)
    }

    fn use_placeholder(&mut self, name: &str) -> String {
        if !self.placeholders.iter().any(|p| p == name) {
            self.placeholders.push(name.to_string());
        }
        value_var(name)
    }

    fn refuse_placeholder_after_backslash(&self) -> Result<(), ScriptError> {
        if self.peek(0) == Some(b'\\') && placeholder_at(self.text, self.pos + 1).is_some() {
            return Err(self.error_at(
                self.pos + 1,
                "a placeholder cannot follow a backslash (the backslash would quote the value's reference)",
            ));
        }
        Ok(())
    }

    /// Shell code (top level or inside `$(…)`).
    fn code(&mut self, until: Until) -> Result<(), ScriptError> {
        let mut depth = 0usize;
        let mut word_start = true;
        while let Some(b) = self.peek(0) {
            if let Some((name, len)) = self.placeholder_here() {
                let name = name.to_string();
                let var = self.use_placeholder(&name);
                self.out.push_str(&format!("${{{var}+\"${{{var}}}\"}}"));
                self.pos += len;
                word_start = false;
                continue;
            }
            let next_word_start = matches!(
                b,
                b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>'
            );
            match b {
                b'\\' => {
                    self.refuse_placeholder_after_backslash()?;
                    self.copy(1);
                    if self.peek(0).is_some() {
                        self.copy_char();
                    }
                }
                b'\'' => self.single_quoted()?,
                b'"' => self.double_quoted()?,
                b'`' => self.opaque_backquote()?,
                b'$' => self.dollar()?,
                b'#' if word_start => {
                    while let Some(c) = self.peek(0) {
                        if c == b'\n' {
                            break;
                        }
                        self.copy_char();
                    }
                }
                b'<' if self.peek(1) == Some(b'<') && self.peek(2) != Some(b'<') => {
                    self.heredoc_operator()?;
                }
                b'<' if self.peek(1) == Some(b'<') => self.copy(3),
                b'(' => {
                    depth += 1;
                    self.copy(1);
                }
                b')' => {
                    if until == Until::Paren && depth == 0 {
                        return Ok(());
                    }
                    depth = depth.saturating_sub(1);
                    self.copy(1);
                }
                b'\n' => {
                    self.copy(1);
                    self.heredoc_bodies()?;
                }
                _ => self.copy_char(),
            }
            word_start = next_word_start;
        }
        Ok(())
    }

    /// `'…'`: the reference closes the quotes, stands double-quoted and reopens them.
    fn single_quoted(&mut self) -> Result<(), ScriptError> {
        let open = self.pos;
        self.copy(1);
        loop {
            match self.peek(0) {
                None => return Err(self.error_at(open, "unterminated single quote")),
                Some(b'\'') => {
                    self.copy(1);
                    return Ok(());
                }
                Some(_) => {
                    if let Some((name, len)) = self.placeholder_here() {
                        let name = name.to_string();
                        let var = self.use_placeholder(&name);
                        self.out.push_str(&format!("'\"${{{var}-}}\"'"));
                        self.pos += len;
                    } else {
                        self.copy_char();
                    }
                }
            }
        }
    }

    /// `"…"`: the reference expands inside the quotes.
    fn double_quoted(&mut self) -> Result<(), ScriptError> {
        let open = self.pos;
        self.copy(1);
        loop {
            match self.peek(0) {
                None => return Err(self.error_at(open, "unterminated double quote")),
                Some(b'"') => {
                    self.copy(1);
                    return Ok(());
                }
                Some(_) => self.expanding_text_step()?,
            }
        }
    }

    /// One step of text where `$`, backquotes and backslashes are special but quotes are
    /// not: a double-quoted string or an expanding heredoc body.
    fn expanding_text_step(&mut self) -> Result<(), ScriptError> {
        if let Some((name, len)) = self.placeholder_here() {
            let name = name.to_string();
            let var = self.use_placeholder(&name);
            self.out.push_str(&format!("${{{var}-}}"));
            self.pos += len;
            return Ok(());
        }
        match self.peek(0) {
            Some(b'\\') => {
                self.refuse_placeholder_after_backslash()?;
                self.copy(1);
                if self.peek(0).is_some() {
                    self.copy_char();
                }
            }
            Some(b'`') => self.opaque_backquote()?,
            Some(b'$') => self.dollar()?,
            Some(_) => self.copy_char(),
            None => {}
        }
        Ok(())
    }

    /// `$…`: command substitution, arithmetic, parameter expansion, `$'…'` or a plain `$`.
    fn dollar(&mut self) -> Result<(), ScriptError> {
        let open = self.pos;
        match (self.peek(1), self.peek(2)) {
            (Some(b'('), Some(b'(')) => {
                self.copy(3);
                self.opaque_until_close(open, b'(', b')', 2, Opaque::Arithmetic)
            }
            (Some(b'('), _) => {
                self.copy(2);
                self.code(Until::Paren)?;
                if self.peek(0) != Some(b')') {
                    return Err(self.error_at(open, "unterminated $("));
                }
                self.copy(1);
                Ok(())
            }
            (Some(b'{'), _) => {
                self.copy(2);
                self.opaque_until_close(open, b'{', b'}', 1, Opaque::ParameterExpansion)
            }
            (Some(b'\''), _) => {
                self.copy(2);
                loop {
                    match self.peek(0) {
                        None => return Err(self.error_at(open, "unterminated $'")),
                        Some(b'\'') => {
                            self.copy(1);
                            return Ok(());
                        }
                        Some(b'\\') => {
                            self.copy(1);
                            if self.peek(0).is_some() {
                                self.copy_char();
                            }
                        }
                        Some(_) => {
                            if self.placeholder_here().is_some() {
                                return Err(self.error_at(self.pos, Opaque::AnsiC.reason()));
                            }
                            self.copy_char();
                        }
                    }
                }
            }
            _ => {
                self.copy(1);
                Ok(())
            }
        }
    }

    /// Copies a construct whose content may not hold a placeholder, up to its closing
    /// bracket (`depth` brackets are already open), honouring quotes inside it.
    fn opaque_until_close(
        &mut self,
        open: usize,
        opening: u8,
        closing: u8,
        mut depth: usize,
        kind: Opaque,
    ) -> Result<(), ScriptError> {
        let mut quote: Option<u8> = None;
        loop {
            let Some(b) = self.peek(0) else {
                return Err(self.error_at(open, "unterminated expansion"));
            };
            if self.placeholder_here().is_some() {
                return Err(self.error_at(self.pos, kind.reason()));
            }
            match (quote, b) {
                (Some(q), c) if c == q => quote = None,
                (Some(b'"') | None, b'\\') => {
                    self.copy(1);
                    if self.peek(0).is_some() {
                        self.copy_char();
                    }
                    continue;
                }
                (Some(_), _) => {}
                (None, b'\'' | b'"' | b'`') => quote = Some(b),
                (None, c) if c == opening => depth += 1,
                (None, c) if c == closing => {
                    depth -= 1;
                    if depth == 0 {
                        self.copy(1);
                        return Ok(());
                    }
                }
                _ => {}
            }
            self.copy_char();
        }
    }

    /// `` `…` ``: copied as written; a placeholder inside is refused.
    fn opaque_backquote(&mut self) -> Result<(), ScriptError> {
        let open = self.pos;
        self.copy(1);
        loop {
            match self.peek(0) {
                None => return Err(self.error_at(open, "unterminated backquote")),
                Some(b'`') => {
                    self.copy(1);
                    return Ok(());
                }
                Some(b'\\') => {
                    self.copy(1);
                    if self.peek(0).is_some() {
                        self.copy_char();
                    }
                }
                Some(_) => {
                    if self.placeholder_here().is_some() {
                        return Err(self.error_at(self.pos, Opaque::Backquote.reason()));
                    }
                    self.copy_char();
                }
            }
        }
    }

    /// `<<WORD` / `<<-WORD`: records the heredoc; its body starts after the current line.
    fn heredoc_operator(&mut self) -> Result<(), ScriptError> {
        let offset = self.pos;
        self.copy(2);
        let strip_tabs = self.peek(0) == Some(b'-');
        if strip_tabs {
            self.copy(1);
        }
        while matches!(self.peek(0), Some(b' ' | b'\t')) {
            self.copy(1);
        }
        let mut delimiter = Vec::new();
        let mut quoted = false;
        let mut quote: Option<u8> = None;
        while let Some(b) = self.peek(0) {
            if self.placeholder_here().is_some() {
                return Err(self.error_at(self.pos, "a placeholder cannot be a heredoc delimiter"));
            }
            match (quote, b) {
                (Some(q), c) if c == q => {
                    quote = None;
                    self.copy(1);
                    continue;
                }
                (Some(_), _) => {}
                (None, b'\'' | b'"') => {
                    quoted = true;
                    quote = Some(b);
                    self.copy(1);
                    continue;
                }
                (None, b'\\') => {
                    quoted = true;
                    self.copy(1);
                    if self.peek(0).is_some() {
                        self.copy_char_into(&mut delimiter);
                    }
                    continue;
                }
                (None, b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')') => {
                    break;
                }
                _ => {}
            }
            self.copy_char_into(&mut delimiter);
        }
        if delimiter.is_empty() && !quoted {
            return Err(self.error_at(offset, "a heredoc needs a delimiter word"));
        }
        self.pending_heredocs.push(PendingHeredoc {
            offset,
            delimiter,
            strip_tabs,
            expands: !quoted,
        });
        Ok(())
    }

    /// The bodies of the heredocs opened on the line that just ended.
    fn heredoc_bodies(&mut self) -> Result<(), ScriptError> {
        let pending = std::mem::take(&mut self.pending_heredocs);
        for h in pending {
            loop {
                if self.pos >= self.src.len() {
                    // An unterminated body ends at the end of the command, as in sh.
                    break;
                }
                let line_end = self.src[self.pos..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(self.src.len(), |n| self.pos + n);
                let mut line = &self.src[self.pos..line_end];
                if h.strip_tabs {
                    while let [b'\t', rest @ ..] = line {
                        line = rest;
                    }
                }
                if line == h.delimiter.as_slice() {
                    self.copy(line_end - self.pos);
                    if self.peek(0) == Some(b'\n') {
                        self.copy(1);
                    }
                    break;
                }
                if h.expands {
                    while self.pos < self.src.len() && self.peek(0) != Some(b'\n') {
                        self.expanding_text_step()?;
                    }
                } else {
                    while let Some(c) = self.peek(0) {
                        if c == b'\n' {
                            break;
                        }
                        if self.placeholder_here().is_some() {
                            return Err(self.error_at(
                                self.pos,
                                "a placeholder in a heredoc with a quoted delimiter (<<'EOF') cannot receive a value: nothing expands there; quote nothing in the delimiter (<<EOF)",
                            ));
                        }
                        self.copy_char();
                    }
                }
                if self.peek(0) == Some(b'\n') {
                    self.copy(1);
                }
            }
        }
        Ok(())
    }
}

/// The placeholder `{name}` (`[A-Za-z_][A-Za-z0-9_]*`, the template rule of
/// docs/language.md, *Prompts and templates*) starting at byte `at`, and its length.
fn placeholder_at(text: &str, at: usize) -> Option<(&str, usize)> {
    let bytes = text.as_bytes();
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    let first = *bytes.get(at + 1)?;
    if !(first.is_ascii_alphabetic() || first == b'_') {
        return None;
    }
    let mut j = at + 2;
    while let Some(&b) = bytes.get(j) {
        if b == b'}' {
            return Some((&text[at + 1..j], j + 1 - at));
        }
        if !(b.is_ascii_alphanumeric() || b == b'_') {
            return None;
        }
        j += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn script(c: &str) -> String {
        rewrite(c).unwrap().script
    }

    #[test]
    fn each_context_gets_its_reference() {
        assert_eq!(
            script("echo {x}"),
            r#"echo ${HENSU_VALUE_x+"${HENSU_VALUE_x}"}"#
        );
        assert_eq!(
            script("echo 'Workflow result: {result}'"),
            r#"echo 'Workflow result: '"${HENSU_VALUE_result-}"''"#
        );
        assert_eq!(
            script(r#"echo "a {x} b""#),
            r#"echo "a ${HENSU_VALUE_x-} b""#
        );
        assert_eq!(
            script("cat <<EOF\n{x}\nEOF\necho {y}"),
            "cat <<EOF\n${HENSU_VALUE_x-}\nEOF\necho ${HENSU_VALUE_y+\"${HENSU_VALUE_y}\"}"
        );
        assert_eq!(
            script("echo $(printf %s {x})"),
            r#"echo $(printf %s ${HENSU_VALUE_x+"${HENSU_VALUE_x}"})"#
        );
        let r = rewrite("echo {a} {b} {a}").unwrap();
        assert_eq!(r.placeholders, ["a", "b"]);
    }

    #[test]
    fn multi_byte_heredoc_delimiters() {
        // Found by the fuzzer (it panicked slicing inside the character).
        assert_eq!(
            script("cat <<\u{e9}OF\n{x}\n\u{e9}OF"),
            "cat <<\u{e9}OF\n${HENSU_VALUE_x-}\n\u{e9}OF"
        );
    }

    #[test]
    fn shell_syntax_is_left_alone() {
        for c in [
            "echo ${HOME} $PATH $$ $(date) $((1 + 2)) `date`",
            "echo \"${HOME}\" '$x' # it's {not} a placeholder: {x}",
            "f() { echo a; }; f",
            "cat <<'EOF'\n$x `y` {not a placeholder}\nEOF",
        ] {
            assert_eq!(script(c), c, "{c}");
        }
    }

    #[test]
    fn unsafe_places_are_refused() {
        for (c, needle) in [
            ("cat <<'EOF'\n{x}\nEOF", "quoted delimiter"),
            ("cat <<\"EOF\"\n{x}\nEOF", "quoted delimiter"),
            ("cat <<E\\OF\n{x}\nEOF", "quoted delimiter"),
            ("echo $(( {n} + 1 ))", "arithmetic"),
            ("echo `echo {x}`", "backquotes"),
            ("echo ${a:-{x}}", "shell's own variable"),
            ("echo \\{x}", "backslash"),
            ("echo \"\\{x}\"", "backslash"),
            ("cat <<{x}", "delimiter"),
            ("echo 'open", "unterminated"),
            ("echo $'{x}'", "$'"),
            // Found by the fuzzer: a multi-byte character in a heredoc delimiter.
            ("cat <<\\\u{e9}OF\n{x}\n\u{e9}OF", "quoted delimiter"),
        ] {
            let e = rewrite(c).unwrap_err();
            assert!(e.message.contains(needle), "{c}: {e}");
        }
    }
}
