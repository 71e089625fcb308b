//! Group commit (ARCHITECTURE.md, *hensu-store*; docs/cli.md, *Durable runs on many machines*): the
//! steps a durable run queued while its previous commit was in flight, appended in order as
//! one transaction ([`crate::StateStore::append_steps`]). The log never holds part of a group:
//! it is a prefix of the run either way.

use crate::backend::Backend;
use crate::logic::{self, EncodedStep};
use crate::{Checkpointed, Lease, RecordUpdate, Result, StepEntry, StoreError, StoreOptions};

/// When a durable run's steps are committed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CommitMode {
    /// Each step is committed before the run computes its next node.
    EachStep,
    /// The run goes on while its steps commit in order, several in one transaction when they
    /// queued meanwhile; everything the run did before an effect (a tool call, a status
    /// change, a lease hand-over) is committed before that effect.
    #[default]
    Pipelined,
}

impl CommitMode {
    /// The `[store] commit` value: `each-step` or `pipelined`.
    pub fn parse(s: &str) -> Option<CommitMode> {
        match s {
            "each-step" => Some(CommitMode::EachStep),
            "pipelined" => Some(CommitMode::Pipelined),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            CommitMode::EachStep => "each-step",
            CommitMode::Pipelined => "pipelined",
        }
    }
}

/// One row of a group: a step ([`crate::StateStore::append`]) or a call-journal entry
/// ([`crate::StateStore::append_journal`]) with the record update it makes.
#[derive(Clone, Debug, PartialEq)]
pub struct StepWrite {
    pub journal: bool,
    pub update: RecordUpdate,
    pub entry: StepEntry,
}

/// A group's rows encoded (outside the transaction).
pub(crate) fn encode(
    steps: &[StepWrite],
    snapshot_version: u64,
) -> Result<Vec<(RecordUpdate, EncodedStep)>> {
    if steps.is_empty() {
        return Err(StoreError::Invalid("an empty group of steps".into()));
    }
    steps
        .iter()
        .map(|s| {
            let e = EncodedStep::new(&s.entry, snapshot_version)?;
            Ok((s.update.clone(), if s.journal { e.journal() } else { e }))
        })
        .collect()
}

/// The group's rows appended one after the other inside the caller's transaction, each checked
/// like [`logic::append`]; the last one's result, with a cancellation or pause request any of
/// them saw and whether any wrote a snapshot.
pub(crate) async fn append_steps<B: Backend>(
    b: &mut B,
    opts: &StoreOptions,
    lease: &Lease,
    expected_step: u64,
    steps: &[(RecordUpdate, EncodedStep)],
    now: u64,
) -> Result<Checkpointed> {
    let mut step = expected_step;
    let mut last: Option<Checkpointed> = None;
    for (update, entry) in steps {
        let cp = logic::append(b, opts, lease, step, update, entry, now).await?;
        step = cp.step;
        last = Some(merge(last, cp));
    }
    last.ok_or_else(|| StoreError::Invalid("an empty group of steps".into()))
}

/// `next` after `prev` of the same group.
pub(crate) fn merge(prev: Option<Checkpointed>, next: Checkpointed) -> Checkpointed {
    match prev {
        None => next,
        Some(p) => Checkpointed {
            cancel_requested: p.cancel_requested || next.cancel_requested,
            pause_requested: p.pause_requested || next.pause_requested,
            snapshot_written: p.snapshot_written || next.snapshot_written,
            ..next
        },
    }
}
