//! Secret redaction: every configured secret value is replaced by `<redacted:NAME>` wherever
//! text leaves the process (errors, response text, tool results, event JSON).

use std::borrow::Cow;
use std::fmt;

use serde_json::Value;

/// Replaces every occurrence of a registered secret value with `<redacted:NAME>`.
///
/// Values shorter than [`Redactor::MIN_SECRET_LEN`] characters are not registered (they would
/// redact ordinary words); API keys are far longer. Longer secrets are replaced first, so a
/// secret containing another is redacted whole. `Debug` shows only the names.
#[derive(Clone, Default)]
pub struct Redactor {
    /// `(name, value)`, longest value first.
    secrets: Vec<(String, String)>,
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redactor")
            .field("names", &self.names())
            .finish()
    }
}

impl Redactor {
    /// The shortest value accepted as a secret.
    pub const MIN_SECRET_LEN: usize = 8;

    /// A redactor with no secret (redacts nothing).
    pub fn empty() -> Self {
        Self::default()
    }

    /// A redactor over `(name, value)` pairs.
    pub fn new<N: Into<String>, V: AsRef<str>>(pairs: impl IntoIterator<Item = (N, V)>) -> Self {
        let mut r = Self::empty();
        for (name, value) in pairs {
            r.add(name, value.as_ref());
        }
        r
    }

    /// Reads the named environment variables; every set one becomes a secret.
    pub fn from_env<S: AsRef<str>>(names: &[S]) -> Self {
        Self::from_lookup(names, &|n| std::env::var(n).ok())
    }

    /// Like [`Redactor::from_env`] with an injectable environment.
    pub fn from_lookup<S: AsRef<str>>(names: &[S], env: &dyn Fn(&str) -> Option<String>) -> Self {
        let mut r = Self::empty();
        for name in names {
            if let Some(value) = env(name.as_ref()) {
                r.add(name.as_ref(), &value);
            }
        }
        r
    }

    /// Registers (or replaces) a secret. Surrounding whitespace is ignored; values shorter than
    /// [`Redactor::MIN_SECRET_LEN`] are ignored.
    pub fn add(&mut self, name: impl Into<String>, value: &str) {
        let name = name.into();
        let value = value.trim();
        self.secrets.retain(|(n, _)| *n != name);
        if value.chars().count() < Self::MIN_SECRET_LEN {
            return;
        }
        self.secrets.push((name, value.to_string()));
        self.secrets.sort_by_key(|s| std::cmp::Reverse(s.1.len()));
    }

    /// Adds every secret of `other`.
    pub fn merge(&mut self, other: &Redactor) {
        for (n, v) in &other.secrets {
            self.add(n.clone(), v);
        }
    }

    /// The registered secret names.
    pub fn names(&self) -> Vec<&str> {
        self.secrets.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// The registered secret values (for the streaming redaction).
    pub(crate) fn secret_values(&self) -> impl Iterator<Item = &str> {
        self.secrets.iter().map(|(_, v)| v.as_str())
    }

    /// Whether nothing is registered.
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// `text` with every secret replaced; borrowed when nothing matched.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out: Cow<'a, str> = Cow::Borrowed(text);
        for (name, value) in &self.secrets {
            if out.contains(value.as_str()) {
                out = Cow::Owned(out.replace(value.as_str(), &format!("<redacted:{name}>")));
            }
        }
        out
    }

    /// `text` redacted, as an owned string.
    pub fn redact_string(&self, text: String) -> String {
        match self.redact(&text) {
            Cow::Borrowed(_) => text,
            Cow::Owned(s) => s,
        }
    }

    /// Redacts every string (and object key) of a JSON value in place.
    pub fn redact_json(&self, value: &mut Value) {
        if self.is_empty() {
            return;
        }
        match value {
            Value::String(s) => {
                if let Cow::Owned(r) = self.redact(s) {
                    *s = r;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_json(v)),
            Value::Object(map) => {
                let needs_key_change = map.keys().any(|k| matches!(self.redact(k), Cow::Owned(_)));
                if needs_key_change {
                    let old = std::mem::take(map);
                    for (k, mut v) in old {
                        self.redact_json(&mut v);
                        map.insert(self.redact(&k).into_owned(), v);
                    }
                } else {
                    map.values_mut().for_each(|v| self.redact_json(v));
                }
            }
            _ => {}
        }
    }
}

/// An API key: never shown by `Debug` or `Display`.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey {
    env_name: String,
    value: String,
}

impl ApiKey {
    /// A key read from the environment variable `env_name`.
    pub fn new(env_name: impl Into<String>, value: impl Into<String>) -> Self {
        ApiKey {
            env_name: env_name.into(),
            value: value.into().trim().to_string(),
        }
    }

    /// The environment variable the key came from.
    pub fn env_name(&self) -> &str {
        &self.env_name
    }

    /// The secret itself (only for building request headers).
    pub(crate) fn expose(&self) -> &str {
        &self.value
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<redacted:{}>", self.env_name)
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<redacted:{}>", self.env_name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_longest_first_and_skips_short_values() {
        let r = Redactor::new([("A", "abcdefgh"), ("B", "abcdefgh-longer"), ("C", "short")]);
        assert_eq!(
            r.redact("x abcdefgh-longer y abcdefgh short"),
            "x <redacted:B> y <redacted:A> short"
        );
        assert!(matches!(r.redact("nothing here"), Cow::Borrowed(_)));
        assert!(!format!("{r:?}").contains("abcdefgh"));
    }

    #[test]
    fn json_strings_and_keys() {
        let r = Redactor::new([("K", "secret-value-1")]);
        let mut v = serde_json::json!({"a": ["secret-value-1"], "secret-value-1": 1});
        r.redact_json(&mut v);
        assert!(!v.to_string().contains("secret-value-1"));
    }
}
