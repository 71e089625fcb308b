//! Running the branches of a parallel or fork node together on the current task: join
//! helpers that keep every branch polled, and hand each finished one to the run's
//! checkpointer while the others run.

use std::collections::VecDeque;
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::task::Poll;

use hensu_ir::is_engine_variable;
use serde_json::Value;

use crate::error::RuntimeError;
use crate::state::BranchOutcome;
use crate::value::Context;

/// A boxed, sendable future (breaks the drive → node kind → drive recursion).
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Polls every future concurrently on the current task and returns their outputs in order.
pub(crate) async fn join_all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    join_all_pinned(futures.into_iter().map(Box::pin).collect()).await
}

/// [`join_all`] over futures already pinned (boxed futures are not boxed again).
pub(crate) async fn join_all_pinned<F: Future + Unpin>(mut futs: Vec<F>) -> Vec<F::Output> {
    let mut outs: Vec<Option<F::Output>> = futs.iter().map(|_| None).collect();
    poll_fn(|cx| {
        let mut pending = false;
        for (f, out) in futs.iter_mut().zip(outs.iter_mut()) {
            if out.is_none() {
                match Pin::new(&mut *f).poll(cx) {
                    Poll::Ready(v) => *out = Some(v),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    outs.into_iter().flatten().collect()
}

/// [`join_all_pinned`] that hands each output, as soon as it is ready, to `record` (one at a
/// time, in the order they finished) and awaits the recording while the other futures keep
/// running. A recording error ends the join with it (the unfinished futures are dropped).
pub(crate) async fn join_all_recording<'r, F, R>(
    mut futs: Vec<F>,
    mut record: R,
) -> Result<Vec<F::Output>, RuntimeError>
where
    F: Future + Unpin,
    R: FnMut(&mut F::Output) -> Option<BoxFuture<'r, Result<(), RuntimeError>>>,
{
    let mut outs: Vec<Option<F::Output>> = futs.iter().map(|_| None).collect();
    let mut unrecorded: VecDeque<usize> = VecDeque::new();
    let mut recording: Option<BoxFuture<'r, Result<(), RuntimeError>>> = None;
    poll_fn(|cx| {
        let mut pending = false;
        for (i, (f, out)) in futs.iter_mut().zip(outs.iter_mut()).enumerate() {
            if out.is_none() {
                match Pin::new(&mut *f).poll(cx) {
                    Poll::Ready(v) => {
                        *out = Some(v);
                        unrecorded.push_back(i);
                    }
                    Poll::Pending => pending = true,
                }
            }
        }
        loop {
            if recording.is_none() {
                let Some(i) = unrecorded.pop_front() else {
                    break;
                };
                recording = outs[i].as_mut().and_then(&mut record);
                continue;
            }
            let Some(r) = recording.as_mut() else {
                break;
            };
            match r.as_mut().poll(cx) {
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(())) => recording = None,
                Poll::Pending => break,
            }
        }
        if pending || recording.is_some() {
            Poll::Pending
        } else {
            Poll::Ready(Ok(()))
        }
    })
    .await?;
    Ok(outs.into_iter().flatten().collect())
}

/// Merges the yields of `outcomes` into `ctx` (engine variables left out).
pub(crate) fn merge_yields<'a>(
    ctx: &mut Context,
    outcomes: impl Iterator<Item = &'a BranchOutcome>,
) {
    for o in outcomes {
        for (k, v) in &o.yields {
            if !is_engine_variable(k) {
                ctx.insert(k.clone(), v.clone());
            }
        }
    }
}

/// `failed_branches`: the ids of the branches that failed, when any did.
pub(crate) fn note_failed_branches(ctx: &mut Context, outcomes: &[BranchOutcome]) {
    let failed: Vec<Value> = outcomes
        .iter()
        .filter(|o| !o.success)
        .map(|o| Value::String(o.id.clone()))
        .collect();
    if !failed.is_empty() {
        ctx.insert("failed_branches".into(), Value::Array(failed));
    }
}
