//! The live feed an open page follows: server-sent events, one `capture` per event
//! and one `summary` per session summary stored after the page's position, whoever
//! stored it (the daemon's relay, a hook running on its own, a pull). Each carries
//! its position as the event id, so a browser that reconnects (the daemon
//! restarted) resumes where it stopped; the stream ends when the daemon stops, so
//! it never holds a shutdown.

use super::browse::person;
use super::{UiError, UiState};
use crate::ops;
use crate::present::browse::Live;
use crate::store::browse::FeedPosition;
use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::{self, Stream};
use serde::Deserialize;
use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;

/// How often the store is looked at for new events: well within the "a second or
/// two" a person watching expects, for a query on an index.
const POLL: Duration = Duration::from_millis(400);
/// How soon a browser reconnects after the stream broke (a daemon restart).
const RECONNECT: Duration = Duration::from_secs(1);

#[derive(Debug, Deserialize)]
pub(super) struct LiveParams {
    /// The feed position the page was rendered at (`events-summaries`).
    after: Option<String>,
}

struct Follow {
    ui: UiState,
    /// Where the stream stands; `None` until the first look (then: now).
    position: Option<FeedPosition>,
    pending: VecDeque<Live>,
    greeted: bool,
}

/// `GET /ui/live[?after=N]`: the stream, from `Last-Event-ID` (a reconnection),
/// else `after`, else now.
pub(super) async fn stream(
    State(ui): State<UiState>,
    headers: HeaderMap,
    Query(params): Query<LiveParams>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let resumed = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<FeedPosition>().ok());
    let asked = params.after.and_then(|a| a.parse::<FeedPosition>().ok());
    let follow = Follow {
        ui,
        position: resumed.or(asked),
        pending: VecDeque::new(),
        greeted: false,
    };
    Sse::new(stream::unfold(follow, next)).keep_alive(KeepAlive::default())
}

/// The stream's next message, or its end when the daemon stops.
async fn next(mut f: Follow) -> Option<(Result<Event, Infallible>, Follow)> {
    loop {
        if !f.greeted {
            f.greeted = true;
            return Some((
                Ok(Event::default().retry(RECONNECT).comment("following")),
                f,
            ));
        }
        if let Some(item) = f.pending.pop_front() {
            let message = Event::default()
                .event(item.name())
                .id(item.position().to_string())
                .json_data(item.json())
                .unwrap_or_else(|_| Event::default().comment("unreadable event"));
            return Some((Ok(message), f));
        }
        let mut stopping = f.ui.stopping.clone();
        if *stopping.borrow() {
            return None;
        }
        tokio::select! {
            _ = tokio::time::sleep(POLL) => {}
            _ = stopping.changed() => return None,
        }
        match look(&f.ui, f.position).await {
            Ok((position, events)) => {
                f.position = Some(position);
                f.pending.extend(events);
            }
            // The store may be busy or moved; the next look tries again.
            Err(_) => continue,
        }
    }
}

/// What was stored after `position` (or nothing, and where the feed stands, on the
/// first look of a stream started "now").
async fn look(
    ui: &UiState,
    position: Option<FeedPosition>,
) -> Result<(FeedPosition, Vec<Live>), UiError> {
    ui.blocking(move |app| match position {
        None => Ok((ops::browse::feed_position(app)?, Vec::new())),
        Some(after) => {
            let items = ops::browse::live_after(app, after, person())?;
            let at = items.last().map_or(after, Live::position);
            Ok((at, items))
        }
    })
    .await
}
