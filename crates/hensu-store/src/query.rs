//! What a page of a tenant's runs asks for and what it answers ([`crate::page`] reads it;
//! docs/server.md, *Paging*): plain types, so every backend can take a query without
//! depending on the paging rules.

use crate::{RunRecord, RunStatus};

/// Rows of a page when the caller does not say.
pub const DEFAULT_PAGE_LIMIT: usize = 50;
/// Rows of a page at most; a larger limit is clamped to it.
pub const MAX_PAGE_LIMIT: usize = 500;

/// Which of a tenant's runs a page holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunQuery {
    /// Only runs in one of these statuses (empty: any status).
    pub statuses: Vec<RunStatus>,
    /// Only runs of this workflow.
    pub workflow_id: Option<String>,
    /// Only runs started at or after this time (unix ms, inclusive).
    pub since: Option<u64>,
    /// Only runs started before this time (unix ms, exclusive).
    pub until: Option<u64>,
    /// Continue after this key (the previous page's [`RunPage::next_cursor`]).
    pub cursor: Option<RunCursor>,
    /// Rows at most: 0 means [`DEFAULT_PAGE_LIMIT`], more than [`MAX_PAGE_LIMIT`] is clamped.
    pub limit: usize,
}

impl RunQuery {
    /// The limit the query runs with (see [`RunQuery::limit`]).
    pub fn effective_limit(&self) -> usize {
        match self.limit {
            0 => DEFAULT_PAGE_LIMIT,
            n => n.min(MAX_PAGE_LIMIT),
        }
    }
}

/// One page of a tenant's runs, newest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunPage {
    pub records: Vec<RunRecord>,
    /// The cursor of the next page; `None` on the last page.
    pub next_cursor: Option<RunCursor>,
}

/// The position after a row of a page: its listing time and run id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunCursor {
    /// Unix milliseconds.
    pub listed_at: u64,
    pub run_id: String,
}

/// A cursor string that no page produced.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("malformed cursor: pass the next cursor of a previous page unchanged")]
pub struct InvalidCursor;

impl RunCursor {
    /// The opaque text form: lower-case hex of `"<listed_at>:<run_id>"` (URL-safe as is).
    pub fn encode(&self) -> String {
        let plain = format!("{}:{}", self.listed_at, self.run_id);
        plain.bytes().map(|b| format!("{b:02x}")).collect()
    }

    /// Parses [`RunCursor::encode`]'s output; anything else is [`InvalidCursor`].
    pub fn decode(text: &str) -> Result<RunCursor, InvalidCursor> {
        // 20 digits, a colon and a 255-byte id, hex-encoded.
        if text.is_empty() || text.len() > 2 * 276 || !text.len().is_multiple_of(2) {
            return Err(InvalidCursor);
        }
        let bytes = (0..text.len())
            .step_by(2)
            .map(|i| {
                text.get(i..i + 2)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
            })
            .collect::<Option<Vec<u8>>>()
            .ok_or(InvalidCursor)?;
        let plain = String::from_utf8(bytes).map_err(|_| InvalidCursor)?;
        let (at, run_id) = plain.split_once(':').ok_or(InvalidCursor)?;
        let listed_at = at.parse::<u64>().map_err(|_| InvalidCursor)?;
        // The key must fit the store's signed 64-bit columns.
        if i64::try_from(listed_at).is_err()
            || run_id.is_empty()
            || run_id.chars().any(|c| c.is_control())
        {
            return Err(InvalidCursor);
        }
        Ok(RunCursor {
            listed_at,
            run_id: run_id.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_round_trips_and_garbage_is_refused() {
        let c = RunCursor {
            listed_at: 1_700_000_000_123,
            run_id: "3f2a-b".into(),
        };
        assert_eq!(RunCursor::decode(&c.encode()), Ok(c));
        for bad in [
            "", "zz", "abc", "3a", "3a31", "313a", "ffff3a31", "2d313a61",
        ] {
            assert_eq!(RunCursor::decode(bad), Err(InvalidCursor), "{bad}");
        }
        assert_eq!(RunCursor::decode(&"a".repeat(10_000)), Err(InvalidCursor));
    }
}
