//! The bounded completion list (ARCHITECTURE.md, *hensu-lsp*): a context with at most
//! [`LIMIT`] candidates is answered in full and the client filters it as the user types; past
//! that (the node ids of a 20,000-node workflow) the list is filtered here by what is typed —
//! names starting with it first, then names containing its characters in order, both case
//! insensitive — cut to [`LIMIT`] items and marked incomplete, so the client asks again as the
//! user types. Items are only built for what is returned.

use lsp_types::{CompletionItem, CompletionList, CompletionResponse};

/// The most items one answer carries.
pub(crate) const LIMIT: usize = 100;

/// How a label matches the typed text.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Match {
    Prefix,
    Fuzzy,
    No,
}

/// `label` against `typed` (ASCII case-insensitive): a prefix, a subsequence, or neither.
pub(crate) fn matches(label: &str, typed: &str) -> Match {
    let (l, t) = (label.as_bytes(), typed.as_bytes());
    if l.len() >= t.len() && l[..t.len()].eq_ignore_ascii_case(t) {
        return Match::Prefix;
    }
    let mut rest = l.iter();
    let all = t.iter().all(|c| rest.any(|x| x.eq_ignore_ascii_case(c)));
    if all { Match::Fuzzy } else { Match::No }
}

/// The items collected so far.
#[derive(Default)]
pub(crate) struct Bounded {
    /// Every item while at most [`LIMIT`] were offered; after that the prefix matches.
    items: Vec<CompletionItem>,
    /// After [`LIMIT`] items were offered: the subsequence (not prefix) matches.
    fuzzy: Vec<CompletionItem>,
    /// More than [`LIMIT`] items were offered: the list is filtered by the typed text.
    filtered: bool,
    /// Items left out (filtered out or past the limit).
    dropped: bool,
}

impl Bounded {
    pub fn len(&self) -> usize {
        self.items.len() + self.fuzzy.len()
    }

    /// Whether an item with `label` is to be built and [`Bounded::add`]ed: always while the
    /// list is short, then only when it matches `typed` and there is room for it.
    pub fn wants(&mut self, label: &str, typed: &str) -> Option<Match> {
        if !self.filtered {
            if self.items.len() < LIMIT {
                return Some(Match::Prefix);
            }
            self.start_filtering(typed);
        }
        let m = matches(label, typed);
        let room = match m {
            Match::Prefix => self.items.len() < LIMIT,
            Match::Fuzzy => self.items.len() + self.fuzzy.len() < LIMIT,
            Match::No => false,
        };
        if !room {
            self.dropped = true;
            return None;
        }
        Some(m)
    }

    pub fn add(&mut self, item: CompletionItem, m: Match) {
        match m {
            Match::Fuzzy if self.filtered => self.fuzzy.push(item),
            _ => {
                // A prefix match takes the place of the last subsequence match.
                if self.len() >= LIMIT && self.fuzzy.pop().is_some() {
                    self.dropped = true;
                }
                self.items.push(item);
            }
        }
    }

    /// The list overflowed: keep only the items matching `typed` (prefix ones in `items`).
    fn start_filtering(&mut self, typed: &str) {
        self.filtered = true;
        let all = std::mem::take(&mut self.items);
        for item in all {
            match matches(&item.label, typed) {
                Match::Prefix => self.items.push(item),
                Match::Fuzzy => self.fuzzy.push(item),
                Match::No => self.dropped = true,
            }
        }
    }

    /// The answer: `None` when empty; an array when complete; otherwise a list marked
    /// incomplete, prefix matches first, renumbered so the client keeps this order.
    pub fn finish(mut self) -> Option<CompletionResponse> {
        if !self.filtered {
            return (!self.items.is_empty()).then_some(CompletionResponse::Array(self.items));
        }
        self.items.append(&mut self.fuzzy);
        if self.items.len() > LIMIT {
            self.items.truncate(LIMIT);
        }
        for (i, item) in self.items.iter_mut().enumerate() {
            item.sort_text = Some(format!("{i:04}"));
        }
        Some(CompletionResponse::List(CompletionList {
            is_incomplete: true,
            items: self.items,
        }))
    }

    /// Whether items were left out (for tests of the bound).
    #[cfg(test)]
    pub fn dropped(&self) -> bool {
        self.dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(label: &str) -> CompletionItem {
        CompletionItem {
            label: label.to_string(),
            ..CompletionItem::default()
        }
    }

    fn offer(b: &mut Bounded, label: &str, typed: &str) {
        if let Some(m) = b.wants(label, typed) {
            b.add(item(label), m);
        }
    }

    #[test]
    fn matching_is_prefix_then_subsequence_case_insensitive() {
        assert_eq!(matches("n190", "n19"), Match::Prefix);
        assert_eq!(matches("Node19", "node"), Match::Prefix);
        assert_eq!(matches("n1x9", "n19"), Match::Fuzzy);
        assert_eq!(matches("n91", "n19"), Match::No);
        assert_eq!(matches("anything", ""), Match::Prefix);
    }

    #[test]
    fn a_short_list_is_complete_and_unfiltered() {
        let mut b = Bounded::default();
        for i in 0..LIMIT {
            offer(&mut b, &format!("n{i}"), "zzz");
        }
        assert!(!b.dropped());
        match b.finish() {
            Some(CompletionResponse::Array(items)) => assert_eq!(items.len(), LIMIT),
            other => panic!("expected the full array, got {other:?}"),
        }
    }

    #[test]
    fn a_long_list_is_filtered_bounded_prefix_first_and_incomplete() {
        let mut b = Bounded::default();
        for i in 0..20_000 {
            offer(&mut b, &format!("n{i}"), "n19");
        }
        offer(&mut b, "xn1y9", "n19");
        assert!(b.dropped());
        assert!(b.len() <= LIMIT);
        let Some(CompletionResponse::List(list)) = b.finish() else {
            panic!("expected an incomplete list");
        };
        assert!(list.is_incomplete);
        assert_eq!(list.items.len(), LIMIT);
        // n19, n190..n199, n1900..n1999 are 111 prefix matches: the first 100 of them, in order.
        assert_eq!(list.items[0].label, "n19");
        assert_eq!(list.items[1].label, "n190");
        assert!(list.items.iter().all(|i| i.label.starts_with("n19")));
        assert_eq!(list.items[7].sort_text.as_deref(), Some("0007"));
    }

    #[test]
    fn fuzzy_matches_fill_what_prefix_matches_leave() {
        let mut b = Bounded::default();
        for i in 0..300 {
            offer(&mut b, &format!("a{i}"), "ab");
        }
        offer(&mut b, "xaxb", "ab");
        offer(&mut b, "abc", "ab");
        let Some(CompletionResponse::List(list)) = b.finish() else {
            panic!("expected an incomplete list");
        };
        let labels: Vec<&str> = list.items.iter().map(|i| i.label.as_str()).collect();
        assert_eq!(labels, ["abc", "xaxb"]);
    }
}
