//! How a run reads to a user: the one derivation of "did it succeed" from a run's record, so the
//! API's `success` and the console's badge cannot disagree. A run that reached an end node is
//! stored `completed` with the end's `exitStatus`; only a `SUCCESS` end (or an end with no
//! recorded exit status, as older records have) is a success.

use hensu_store::{RunRecord, RunStatus};

/// Whether a finished run succeeded: `None` while it has not finished (running, queued,
/// paused), else `true` only for a `completed` run whose end is `SUCCESS`.
pub fn succeeded(record: &RunRecord) -> Option<bool> {
    if !record.status.is_terminal() {
        return None;
    }
    Some(
        record.status == RunStatus::Completed
            && record.exit_status.as_deref().is_none_or(|x| x == "SUCCESS"),
    )
}

/// The status word a person is shown: the stored status, except that a `completed` run whose
/// end is `FAILURE` reads `failed` and one whose end is `CANCEL` reads `cancelled` (the API's
/// `status` stays `completed` with `exitStatus`, upstream's shape).
pub fn shown_status(record: &RunRecord) -> &'static str {
    match (record.status, record.exit_status.as_deref()) {
        (RunStatus::Completed, Some("FAILURE")) => "failed",
        (RunStatus::Completed, Some("CANCEL")) => "cancelled",
        (s, _) => s.as_str(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended(status: RunStatus, exit: Option<&str>) -> RunRecord {
        let mut r = RunRecord::new("r1", "wf", "1", Some("done".to_string()));
        r.status = status;
        r.exit_status = exit.map(str::to_string);
        r
    }

    #[test]
    fn a_failure_end_is_not_a_success() {
        let r = ended(RunStatus::Completed, Some("FAILURE"));
        assert_eq!(succeeded(&r), Some(false));
        assert_eq!(shown_status(&r), "failed");
        let c = ended(RunStatus::Completed, Some("CANCEL"));
        assert_eq!(
            (succeeded(&c), shown_status(&c)),
            (Some(false), "cancelled")
        );
    }

    #[test]
    fn a_success_end_and_unfinished_runs() {
        let ok = ended(RunStatus::Completed, Some("SUCCESS"));
        assert_eq!(
            (succeeded(&ok), shown_status(&ok)),
            (Some(true), "completed")
        );
        let old = ended(RunStatus::Completed, None);
        assert_eq!(succeeded(&old), Some(true));
        let paused = ended(RunStatus::Paused, None);
        assert_eq!(
            (succeeded(&paused), shown_status(&paused)),
            (None, "paused")
        );
        let rejected = ended(RunStatus::Rejected, None);
        assert_eq!(succeeded(&rejected), Some(false));
    }
}
