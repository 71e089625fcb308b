//! Overlap of `onScore` and `onCondition` arms (E0301 and E0302, the overlap checks the
//! Kotlin DSL's validator runs), as pure functions the
//! checks, the LSP and the graph export can share.
//!
//! Score arms are intervals of the real line: `GT v` = (v, ∞), `GTE v` = [v, ∞), `LT v` = (−∞, v),
//! `LTE v` = (−∞, v], `RANGE s..e` = [s, e], `EQ v` = [v, v]. Two intervals sharing only an
//! endpoint overlap only when both include it. An arm without an operand, with `NaN`, or with an
//! empty range never matches and so overlaps nothing.

use hensu_ir::{ComparisonOperator, ConditionPredicate, ScoreCondition, java_double_to_string};

/// One end of an interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bound {
    pub value: f64,
    pub inclusive: bool,
}

/// A non-empty interval; `None` bounds are infinite.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    pub lo: Option<Bound>,
    pub hi: Option<Bound>,
}

impl Interval {
    /// Builds an interval, `None` when it is empty or has a `NaN` end.
    pub fn new(lo: Option<Bound>, hi: Option<Bound>) -> Option<Interval> {
        if lo.is_some_and(|b| b.value.is_nan()) || hi.is_some_and(|b| b.value.is_nan()) {
            return None;
        }
        if let (Some(l), Some(h)) = (lo, hi)
            && (l.value > h.value || (l.value == h.value && !(l.inclusive && h.inclusive)))
        {
            return None;
        }
        Some(Interval { lo, hi })
    }

    /// The scores a score arm matches (`None`: it matches nothing).
    pub fn of_score(condition: &ScoreCondition) -> Option<Interval> {
        let incl = |value: f64| {
            Some(Bound {
                value,
                inclusive: true,
            })
        };
        let excl = |value: f64| {
            Some(Bound {
                value,
                inclusive: false,
            })
        };
        match condition.operator {
            ComparisonOperator::Range => {
                let range = condition.range?;
                Interval::new(incl(range.start), incl(range.end))
            }
            op => {
                let v = condition.value?;
                match op {
                    ComparisonOperator::Gt => Interval::new(excl(v), None),
                    ComparisonOperator::Gte => Interval::new(incl(v), None),
                    ComparisonOperator::Lt => Interval::new(None, excl(v)),
                    ComparisonOperator::Lte => Interval::new(None, incl(v)),
                    ComparisonOperator::Eq | ComparisonOperator::Range => {
                        Interval::new(incl(v), incl(v))
                    }
                }
            }
        }
    }

    /// The numbers an ordering condition predicate matches (`None` for `Eq`/`Neq`).
    pub fn of_predicate(predicate: &ConditionPredicate) -> Option<Interval> {
        let incl = |value: f64| {
            Some(Bound {
                value,
                inclusive: true,
            })
        };
        let excl = |value: f64| {
            Some(Bound {
                value,
                inclusive: false,
            })
        };
        match predicate {
            ConditionPredicate::Gt(v) => Interval::new(excl(*v), None),
            ConditionPredicate::Gte(v) => Interval::new(incl(*v), None),
            ConditionPredicate::Lt(v) => Interval::new(None, excl(*v)),
            ConditionPredicate::Lte(v) => Interval::new(None, incl(*v)),
            ConditionPredicate::Eq(_) | ConditionPredicate::Neq(_) => None,
        }
    }

    /// Whether `v` lies in the interval.
    pub fn contains(&self, v: f64) -> bool {
        if v.is_nan() {
            return false;
        }
        let lo_ok = self
            .lo
            .is_none_or(|b| v > b.value || (b.inclusive && v == b.value));
        let hi_ok = self
            .hi
            .is_none_or(|b| v < b.value || (b.inclusive && v == b.value));
        lo_ok && hi_ok
    }

    /// The common part of two intervals, `None` when they are disjoint.
    pub fn intersection(&self, other: &Interval) -> Option<Interval> {
        let lo = match (self.lo, other.lo) {
            (None, b) | (b, None) => b,
            (Some(a), Some(b)) => Some(if a.value > b.value {
                a
            } else if b.value > a.value {
                b
            } else {
                Bound {
                    value: a.value,
                    inclusive: a.inclusive && b.inclusive,
                }
            }),
        };
        let hi = match (self.hi, other.hi) {
            (None, b) | (b, None) => b,
            (Some(a), Some(b)) => Some(if a.value < b.value {
                a
            } else if b.value < a.value {
                b
            } else {
                Bound {
                    value: a.value,
                    inclusive: a.inclusive && b.inclusive,
                }
            }),
        };
        Interval::new(lo, hi)
    }

    /// Whether the two intervals share at least one value.
    pub fn overlaps(&self, other: &Interval) -> bool {
        self.intersection(other).is_some()
    }

    /// `[80.0, ∞)`, `(−∞, 50.0)`, `[70.0, 79.0]`, or `70.0` for a single point; numbers are
    /// rendered with `fmt`.
    pub fn render_with(&self, fmt: impl Fn(f64) -> String) -> String {
        if let (Some(l), Some(h)) = (self.lo, self.hi)
            && l.value == h.value
        {
            return fmt(l.value);
        }
        let lo = match self.lo {
            None => "(-∞".to_string(),
            Some(b) => format!("{}{}", if b.inclusive { "[" } else { "(" }, fmt(b.value)),
        };
        let hi = match self.hi {
            None => "∞)".to_string(),
            Some(b) => format!("{}{}", fmt(b.value), if b.inclusive { "]" } else { ")" }),
        };
        format!("{lo}, {hi}")
    }

    /// [`Interval::render_with`] with Java double formatting (`80.0`), as score arms are shown.
    pub fn render(&self) -> String {
        self.render_with(java_double_to_string)
    }
}

/// The common scores of two score arms, `None` when no score matches both.
pub fn score_overlap(a: &ScoreCondition, b: &ScoreCondition) -> Option<Interval> {
    Interval::of_score(a)?.intersection(&Interval::of_score(b)?)
}

/// Whether two score arms can match the same score.
pub fn score_arms_overlap(a: &ScoreCondition, b: &ScoreCondition) -> bool {
    score_overlap(a, b).is_some()
}

/// A score arm as upstream's overlap message shows it: `> 80.0`, `>= 80.0`, `< 50.0`, `<= 50.0`,
/// `in 50.0..79.0`, `== 70.0`.
pub fn describe_score_arm(condition: &ScoreCondition) -> String {
    let op = match condition.operator {
        ComparisonOperator::Range => {
            return match condition.range {
                Some(r) => format!(
                    "in {}..{}",
                    java_double_to_string(r.start),
                    java_double_to_string(r.end)
                ),
                None => "in ?".to_string(),
            };
        }
        ComparisonOperator::Gt => ">",
        ComparisonOperator::Gte => ">=",
        ComparisonOperator::Lt => "<",
        ComparisonOperator::Lte => "<=",
        ComparisonOperator::Eq => "==",
    };
    match condition.value {
        Some(v) => format!("{op} {}", java_double_to_string(v)),
        None => format!("{op} ?"),
    }
}

/// Parses an `Eq` operand as a number the way the engine coerces it (`"5"`, `" 0.9 "`); only
/// finite values count.
pub fn parse_number(text: &str) -> Option<f64> {
    let t = text.trim();
    if t.is_empty() || !t.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Whether two condition arms on the same variable can match the same value (the Kotlin
/// validator's rule): Equals/Equals iff same canonical value; Equals/NotEquals iff different values;
/// NotEquals/NotEquals always; NotEquals/Compare always; Equals/Compare iff the Equals value
/// parses as a number inside the interval; Compare/Compare iff the intervals intersect.
pub fn condition_arms_overlap(a: &ConditionPredicate, b: &ConditionPredicate) -> bool {
    use ConditionPredicate as P;
    match (a, b) {
        (P::Eq(x), P::Eq(y)) => x == y,
        (P::Eq(x), P::Neq(y)) | (P::Neq(y), P::Eq(x)) => x != y,
        (P::Neq(_), P::Neq(_)) => true,
        (P::Neq(_), _) | (_, P::Neq(_)) => true,
        (P::Eq(x), cmp) | (cmp, P::Eq(x)) => match (parse_number(x), Interval::of_predicate(cmp)) {
            (Some(v), Some(interval)) => interval.contains(v),
            _ => false,
        },
        (x, y) => match (Interval::of_predicate(x), Interval::of_predicate(y)) {
            (Some(i), Some(j)) => i.overlaps(&j),
            _ => false,
        },
    }
}

/// The scores in `0..=100` that none of the arms match (W0311), in increasing order. Scores are
/// between 0 and 100, so parts of the real line outside that range are not gaps.
pub fn score_gaps<'a>(arms: impl IntoIterator<Item = &'a ScoreCondition>) -> Vec<Interval> {
    let incl = |value: f64| Bound {
        value,
        inclusive: true,
    };
    let mut gaps = vec![Interval {
        lo: Some(incl(0.0)),
        hi: Some(incl(100.0)),
    }];
    for arm in arms {
        let Some(covered) = Interval::of_score(arm) else {
            continue;
        };
        gaps = gaps
            .into_iter()
            .flat_map(|gap| gap.minus(&covered))
            .collect();
        if gaps.is_empty() {
            break;
        }
    }
    gaps
}

impl Interval {
    /// The parts of `self` outside `other`: zero, one or two intervals.
    fn minus(&self, other: &Interval) -> Vec<Interval> {
        if !self.overlaps(other) {
            return vec![*self];
        }
        let mut out = Vec::new();
        // The part below `other`.
        if let Some(lo) = other.lo {
            let below = Bound {
                value: lo.value,
                inclusive: !lo.inclusive,
            };
            if let Some(i) = Interval::new(self.lo, Some(below)).and_then(|i| i.intersection(self))
            {
                out.push(i);
            }
        }
        // The part above `other`.
        if let Some(hi) = other.hi {
            let above = Bound {
                value: hi.value,
                inclusive: !hi.inclusive,
            };
            if let Some(i) = Interval::new(Some(above), self.hi).and_then(|i| i.intersection(self))
            {
                out.push(i);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hensu_ir::ScoreRange;

    fn arm(operator: ComparisonOperator, value: f64) -> ScoreCondition {
        ScoreCondition {
            operator,
            value: Some(value),
            range: None,
            target_node: "x".into(),
        }
    }

    #[test]
    fn range_rendering() {
        let r = ScoreCondition {
            operator: ComparisonOperator::Range,
            value: Some(0.0),
            range: Some(ScoreRange {
                start: 50.0,
                end: 79.0,
            }),
            target_node: "x".into(),
        };
        assert_eq!(describe_score_arm(&r), "in 50.0..79.0");
        let i = Interval::of_score(&r).map(|i| i.render());
        assert_eq!(i.as_deref(), Some("[50.0, 79.0]"));
        let gt = arm(ComparisonOperator::Gt, 80.0);
        assert_eq!(describe_score_arm(&gt), "> 80.0");
        assert_eq!(
            Interval::of_score(&gt).map(|i| i.render()).as_deref(),
            Some("(80.0, ∞)")
        );
    }
}
