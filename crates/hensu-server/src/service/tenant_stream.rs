//! The tenant stream (`GET /api/v1/executions/events`; docs/server.md, *Events*): every event
//! of the tenant's executions, wherever they run, in the order of the store's tenant event log
//! (`hensu_store::TenantEvent`: one global sequence; a number becomes visible only after every
//! smaller one). The SSE
//! `id:` is the event's `seq`.
//!
//! One reader per server, the [`EventHub`]'s tail, reads the log after its cursor (`seq >
//! cursor`, all tenants, one query per wake-up: this server's writes wake it at once, other
//! servers' batches through PostgreSQL's `LISTEN`, and it polls every [`POLL`]: standalone
//! workers' writes wake nobody) and hands each event to the tenant's open streams through bounded channels. So opening a stream costs O(1) (it starts at the
//! hub's cursor), a wake-up costs O(new events), and no stream reads history.
//!
//! A stream that falls behind (its channel of [`LIVE_BUFFER`] events is full: a client that
//! reads slowly or not at all) is let go by the hub at once, so no other stream waits for it
//! and its memory stays bounded; when it is polled again it catches up from the store (`seq >
//! its last id`, the tenant's index) and rejoins. A reconnect with `Last-Event-ID` does the
//! same. Events are shown once each and in `seq` order: a live event at or below the last id
//! shown is skipped. An id the store no longer holds (older than
//! [`hensu_store::EVENT_RETENTION_MS`], or never given) gets a `stream.reset` event, never a
//! silent gap.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::Stream;
use hensu_runtime::CancelToken;
use hensu_store::{EVENT_RETENTION_MS, EventWakeups, StateStore, WorkflowRegistry};
use tokio::sync::{OnceCell, broadcast, mpsc};

use super::events::{
    ExecutionEvent, StreamedEvent, async_stream, bad_last_event_id, given, sse, tenant_row_events,
    token_event,
};
use crate::AppState;
use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult};
use crate::exec::RunChanged;

/// How often the tail reads the log without a wake-up. On PostgreSQL the writes of a run a
/// standalone worker executes wake nobody (a `NOTIFY` in every commit would make every
/// tenant run's commit wait for the one before it: docs/server.md, *Events*), so this poll is
/// what sequences and delivers them; other servers' batches wake the tail at once.
pub const POLL: Duration = Duration::from_millis(250);
/// Events a stream may have waiting before the hub lets it go.
pub const LIVE_BUFFER: usize = 256;
/// Rows per read of the log.
const PAGE: usize = 500;
/// How often the tail trims events older than the retention window.
const TRIM_EVERY: Duration = Duration::from_secs(60);
/// Rows trimmed per statement at most (a short transaction).
const TRIM_BATCH: usize = 10_000;

/// One event as the hub hands it to streams (shared by every stream of its tenant).
#[derive(Debug)]
struct Live {
    seq: u64,
    /// The row's events (a pause the run is in: its reviews first), all under `seq`.
    events: Vec<ExecutionEvent>,
}

/// The server's one reader of the tenant event log and the open tenant streams it feeds.
#[derive(Debug, Default)]
pub struct EventHub {
    state: Mutex<HubState>,
    started: OnceCell<()>,
}

#[derive(Debug, Default)]
struct HubState {
    /// Every event up to here was handed out (or skipped: nobody of its tenant listened).
    cursor: u64,
    streams: HashMap<u64, Follower>,
    next_id: u64,
}

#[derive(Debug)]
struct Follower {
    tenant: String,
    tx: mpsc::Sender<Arc<Live>>,
}

impl EventHub {
    /// Starts the tail at the log's latest `seq` on first use (history is never read).
    async fn start(self: &Arc<Self>, app: &AppState) -> ApiResult<()> {
        self.started
            .get_or_try_init(|| async {
                let wakeups = listen(app.registry.as_ref()).await;
                let latest = app.registry.event_bounds().await?.latest;
                self.lock()?.cursor = latest;
                tokio::spawn(tail(
                    Arc::clone(self),
                    Wakes {
                        local: app.events.subscribe(),
                        store: wakeups,
                    },
                    app.store.clone(),
                    app.registry.clone(),
                    app.closing.clone(),
                    latest,
                ));
                Ok::<(), ApiError>(())
            })
            .await
            .map(|_| ())
    }

    fn lock(&self) -> ApiResult<std::sync::MutexGuard<'_, HubState>> {
        self.state
            .lock()
            .map_err(|_| ApiError::internal("event hub poisoned"))
    }

    /// A channel of the tenant's events after the hub's cursor, and that cursor.
    fn follow(&self, tenant: &str) -> ApiResult<(mpsc::Receiver<Arc<Live>>, u64)> {
        let (tx, rx) = mpsc::channel(LIVE_BUFFER);
        let mut hub = self.lock()?;
        // Streams whose client left are removed here too, not only at their tenant's next
        // event (a quiet tenant's reconnects would otherwise pile up).
        hub.streams.retain(|_, f| !f.tx.is_closed());
        let id = hub.next_id;
        hub.next_id += 1;
        hub.streams.insert(
            id,
            Follower {
                tenant: tenant.to_string(),
                tx,
            },
        );
        Ok((rx, hub.cursor))
    }

    /// Whether a stream of `tenant` is open (else its events need not be built).
    fn listened(&self, tenant: &str) -> bool {
        self.state
            .lock()
            .map(|h| h.streams.values().any(|f| f.tenant == tenant))
            .unwrap_or(false)
    }

    /// Hands event `seq` of `tenant` to its streams and moves the cursor past it. A stream
    /// whose channel is full is let go (it catches up from the store); a closed one is gone.
    /// `Unbuilt`: nobody of the tenant listened when the row was read — a stream that joined
    /// since is let go too, so it reads the row from the store.
    fn publish(&self, seq: u64, tenant: &str, row: Row) {
        let Ok(mut hub) = self.state.lock() else {
            return;
        };
        hub.cursor = hub.cursor.max(seq);
        let events = match row {
            Row::Event(events) => events,
            Row::NoEvent => return,
            Row::Unbuilt => {
                hub.streams.retain(|_, f| f.tenant != tenant);
                return;
            }
        };
        let live = Arc::new(Live { seq, events });
        hub.streams
            .retain(|_, f| f.tenant != tenant || f.tx.try_send(Arc::clone(&live)).is_ok());
    }

    /// Streams open (tests and metrics).
    pub fn followers(&self) -> usize {
        self.state.lock().map(|h| h.streams.len()).unwrap_or(0)
    }

    fn close_all(&self) {
        if let Ok(mut hub) = self.state.lock() {
            hub.streams.clear();
        }
    }
}

/// The store's wake-ups (PostgreSQL), or `None` (SQLite, or the connection failed: the poll
/// finds other servers' events then).
async fn listen(registry: &dyn WorkflowRegistry) -> Option<EventWakeups> {
    registry.event_wakeups().await.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "no LISTEN connection for the tenant event log; polling");
        None
    })
}

/// What wakes the tail: this server's writes, and the store's notice of anyone's.
struct Wakes {
    local: broadcast::Receiver<RunChanged>,
    store: Option<EventWakeups>,
}

impl Wakes {
    /// The next wake-up of either; `false` when this server's channel closed (it stops).
    async fn next(&mut self) -> bool {
        let store = async {
            match self.store.as_mut() {
                Some(w) => w.next().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            changed = self.local.recv() => {
                // A burst of writes is one read.
                while self.local.try_recv().is_ok() {}
                !matches!(changed, Err(broadcast::error::RecvError::Closed))
            }
            woke = store => {
                if woke.is_none() {
                    tracing::warn!("the LISTEN connection of the tenant event log closed; polling");
                    self.store = None;
                }
                true
            }
        }
    }
}

/// A row of the log as the tail publishes it.
#[derive(Debug)]
enum Row {
    Event(Vec<ExecutionEvent>),
    /// Not an event (a queued run's row).
    NoEvent,
    /// Not read into an event: no stream of its tenant was open.
    Unbuilt,
}

/// The hub's reader: after each wake-up (a write, or the poll), reads every event after its
/// cursor and publishes it; trims the log now and then (and, without a `LISTEN` connection,
/// tries to open one again).
async fn tail(
    hub: Arc<EventHub>,
    mut wakes: Wakes,
    store: Arc<dyn StateStore>,
    registry: Arc<dyn WorkflowRegistry>,
    closing: CancelToken,
    mut cursor: u64,
) {
    let mut trim = tokio::time::interval(TRIM_EVERY);
    trim.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = closing.cancelled() => break,
            open = wakes.next() => {
                if !open {
                    break;
                }
            }
            () = tokio::time::sleep(POLL) => {}
            _ = trim.tick() => {
                let before = hensu_store::now_ms().saturating_sub(EVENT_RETENTION_MS);
                if let Err(e) = registry.trim_events(before, TRIM_BATCH).await {
                    tracing::warn!(error = %e, "trimming the tenant event log failed");
                }
                if wakes.store.is_none() {
                    wakes.store = registry.event_wakeups().await.ok().flatten();
                }
                continue;
            }
        }
        loop {
            let rows = match registry.events_after(None, cursor, PAGE).await {
                Ok(rows) => rows,
                Err(e) => {
                    tracing::warn!(error = %e, "reading the tenant event log failed");
                    break;
                }
            };
            let full = rows.len() == PAGE;
            for row in rows {
                let event = if hub.listened(&row.tenant_id) {
                    let events = tenant_row_events(store.as_ref(), &row).await;
                    match events.is_empty() {
                        false => Row::Event(events),
                        true => Row::NoEvent,
                    }
                } else {
                    Row::Unbuilt
                };
                hub.publish(row.seq, &row.tenant_id, event);
                cursor = row.seq;
            }
            if !full {
                break;
            }
        }
    }
    hub.close_all();
}

/// What a `Last-Event-ID` of the tenant stream asks for.
enum Resume {
    /// From now on.
    Now,
    /// After this `seq`.
    After(u64),
    /// An id of the stream's old form (`<executionId>:<step>`): its position is not kept.
    Unknown,
}

fn parse_last_event_id(last_event_id: Option<&str>) -> ApiResult<Resume> {
    // `<seq>.<token>`: after a token (docs/server.md, *Token events*); its seq says where.
    let plain = given(last_event_id).map(|s| crate::tokens::split_id(s).map_or(s, |(seq, _)| seq));
    match plain {
        None => Ok(Resume::Now),
        Some(s) => match s.parse::<u64>() {
            Ok(seq) => Ok(Resume::After(seq)),
            Err(_)
                if s.rsplit_once(':')
                    .is_some_and(|(run, step)| !run.is_empty() && step.parse::<u64>().is_ok()) =>
            {
                Ok(Resume::Unknown)
            }
            Err(_) => Err(bad_last_event_id()),
        },
    }
}

/// The events of every execution of the tenant from now on, wherever it runs; with
/// `last_event_id` (a `seq` this stream gave), every event after it first.
pub async fn tenant_events(
    app: &AppState,
    tenant: &Tenant,
    last_event_id: Option<&str>,
) -> ApiResult<impl Stream<Item = StreamedEvent> + use<>> {
    let resume = parse_last_event_id(last_event_id)?;
    let slot = app.streams.acquire(&tenant.tenant_id)?;
    app.tenant_events.start(app).await?;
    let reset = match resume {
        Resume::Now => None,
        Resume::Unknown => Some("the Last-Event-ID is not an id of this stream's log"),
        Resume::After(seq) => {
            let bounds = app.registry.event_bounds().await?;
            (!bounds.replayable(seq))
                .then_some("the events after the Last-Event-ID are no longer held")
        }
    };
    let after = match (resume, reset) {
        (Resume::After(seq), None) => Some(seq),
        _ => None,
    };
    let token = given(last_event_id)
        .and_then(crate::tokens::split_id)
        .map_or(0, |(_, t)| t);
    let stream = follow_tenant(
        (Arc::clone(&app.tenant_events), app.tokens.clone()),
        app.store.clone(),
        app.registry.clone(),
        app.closing.clone(),
        tenant.tenant_id.clone(),
        (after, token),
        reset,
    )?;
    Ok(crate::streams::guarded(
        stream,
        slot,
        app.closing.clone(),
        tenant.valid_until,
    ))
}

/// One tenant stream: after `after` (from the hub's cursor when `None`, with a reset event
/// first when `reset` says why), caught up from the store, then live from the hub; the
/// tokens of the tenant's runs executing here after `token` between them.
fn follow_tenant(
    (hub, tokens): (Arc<EventHub>, Arc<crate::tokens::TokenHub>),
    store: Arc<dyn StateStore>,
    registry: Arc<dyn WorkflowRegistry>,
    closing: CancelToken,
    tenant: String,
    (after, token): (Option<u64>, u64),
    reset: Option<&'static str>,
) -> ApiResult<impl Stream<Item = StreamedEvent> + use<>> {
    // Joined before the response starts: every event after `start` reaches this stream.
    let (first, start) = hub.follow(&tenant)?;
    // So are the tokens: every token after the response's start reaches it, kept or live.
    let (kept, rx) = tokens.subscribe(&|t: &crate::tokens::TokenMsg| t.tenant == tenant, token);
    Ok(async_stream(move |tx| async move {
        let of_tenant = |t: &crate::tokens::TokenMsg| t.tenant == tenant;
        let mut kept = Some(kept);
        let mut follow = crate::tokens::Follow {
            rx,
            dropped: 0,
            last: token,
        };
        let mut last = after.unwrap_or(start);
        if let Some(reason) = reset {
            let event = ExecutionEvent::Reset {
                reason: reason.to_string(),
                timestamp: hensu_store::rfc3339(hensu_store::now_ms()),
            };
            if tx.send(sse(start.to_string(), &event)).await.is_err() {
                return;
            }
        }
        let mut joined = Some((first, start));
        loop {
            let (mut live, at) = match joined.take() {
                Some(j) => j,
                None => match hub.follow(&tenant) {
                    Ok(j) => j,
                    Err(_) => return,
                },
            };
            // From the store up to where the hub stood when this stream joined it.
            while last < at {
                let Ok(rows) = registry.events_after(Some(&tenant), last, PAGE).await else {
                    return;
                };
                let Some(end) = rows.last().map(|r| r.seq) else {
                    break;
                };
                for row in rows {
                    for ev in tenant_row_events(store.as_ref(), &row).await {
                        if tx.send(sse(row.seq.to_string(), &ev)).await.is_err() {
                            return;
                        }
                    }
                }
                last = end;
            }
            // The kept tokens of the nodes in flight after the one the client saw.
            for t in kept.take().into_iter().flatten() {
                follow.last = follow.last.max(t.index);
                let ev = token_event(&t, 0);
                if tx
                    .send(sse(format!("{last}.{}", t.index), &ev))
                    .await
                    .is_err()
                {
                    return;
                }
            }
            loop {
                let item = tokio::select! {
                    item = live.recv() => item,
                    Some(t) = follow.next(&of_tenant) => {
                        let ev = token_event(&t, std::mem::take(&mut follow.dropped));
                        if tx.send(sse(format!("{last}.{}", t.index), &ev)).await.is_err() {
                            return;
                        }
                        continue;
                    }
                };
                let Some(item) = item else { break };
                if item.seq <= last {
                    continue;
                }
                // The tokens published before this event's commit come before it.
                for t in follow.ready(&of_tenant) {
                    let ev = token_event(&t, std::mem::take(&mut follow.dropped));
                    if tx
                        .send(sse(format!("{last}.{}", t.index), &ev))
                        .await
                        .is_err()
                    {
                        return;
                    }
                }
                for ev in &item.events {
                    if tx.send(sse(item.seq.to_string(), ev)).await.is_err() {
                        return;
                    }
                }
                last = item.seq;
            }
            // The hub let this stream go: it fell behind, or the server is closing.
            if closing.is_cancelled() {
                return;
            }
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(seq: u64) -> ExecutionEvent {
        ExecutionEvent::Step {
            execution_id: "run".into(),
            workflow_id: "wf".into(),
            node_id: Some(format!("n{seq}")),
            executed_node_id: None,
            node_output: None,
            timestamp: String::new(),
        }
    }

    /// A follower that does not read is let go once its buffer is full; one that reads gets
    /// every event, and another tenant's follower none of them.
    #[test]
    fn a_full_follower_is_let_go_and_the_others_keep_up() {
        let hub = EventHub::default();
        let (mut reader, at) = hub.follow("t").expect("follow");
        let (_stalled, _) = hub.follow("t").expect("follow");
        let (mut other, _) = hub.follow("u").expect("follow");
        assert_eq!((at, hub.followers()), (0, 3));
        let total = LIVE_BUFFER as u64 * 2;
        for seq in 1..=total {
            hub.publish(seq, "t", Row::Event(vec![step(seq)]));
            assert_eq!(reader.try_recv().map(|l| l.seq).ok(), Some(seq));
        }
        assert_eq!(hub.followers(), 2, "the stalled follower is gone");
        assert!(other.try_recv().is_err(), "another tenant's events");
        // Rows that are no event move the cursor only.
        hub.publish(total + 1, "t", Row::NoEvent);
        assert!(reader.try_recv().is_err());
        assert_eq!(hub.follow("t").expect("follow").1, total + 1);
        // A row not built (nobody listened when it was read) lets the tenant's streams go:
        // they read it from the store.
        hub.publish(total + 2, "t", Row::Unbuilt);
        assert_eq!(hub.followers(), 1, "only u's stays");
        assert!(matches!(
            reader.try_recv(),
            Err(mpsc::error::TryRecvError::Disconnected)
        ));
    }

    /// A stream whose client left is removed when the next one joins, events or not.
    #[test]
    fn streams_that_left_are_removed_on_the_next_join() {
        let hub = EventHub::default();
        for _ in 0..10 {
            drop(hub.follow("quiet").expect("follow"));
        }
        let _open = hub.follow("quiet").expect("follow");
        assert_eq!(hub.followers(), 1);
    }

    #[test]
    fn last_event_ids() {
        assert!(matches!(parse_last_event_id(None), Ok(Resume::Now)));
        assert!(matches!(parse_last_event_id(Some("  ")), Ok(Resume::Now)));
        assert!(matches!(
            parse_last_event_id(Some("42")),
            Ok(Resume::After(42))
        ));
        assert!(matches!(
            parse_last_event_id(Some("3f2a-run:7")),
            Ok(Resume::Unknown)
        ));
        for bad in ["-1", "x", ":7", "run:x", "18446744073709551616"] {
            assert!(parse_last_event_id(Some(bad)).is_err(), "{bad}");
        }
    }
}
