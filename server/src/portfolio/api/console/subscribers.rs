//! Subscribers: a search by address, a page at a time; every subscriber as
//! CSV (the read `listSubscribers` pages through); and removal (the
//! operation `eraseSubscriber` calls: the address and its waiting emails
//! are erased).

use axum::extract::{Path, State};
use axum::http::{Uri, header};
use axum::response::{IntoResponse, Response};
use minijinja::context;

use super::{Form, Paging, Signed, failure_page, page_of, then_back};
use crate::core::failure::Failure;
use crate::portfolio::model::SubscriberEntry;
use crate::portfolio::ops;
use crate::portfolio::reads;
use crate::portfolio::state::PortfolioState;

/// Subscribers a page.
const PER_PAGE: i64 = 50;

/// The search page: `?q=` (part of an address) and `?page=` (from 1).
pub(crate) async fn list_subscribers(
    Signed(session): Signed,
    State(state): State<PortfolioState>,
    uri: Uri,
) -> Response {
    let query: Vec<(String, String)> =
        url::form_urlencoded::parse(uri.query().unwrap_or_default().as_bytes())
            .into_owned()
            .collect();
    let get = |name: &str| {
        query
            .iter()
            .find(|(field, _)| field == name)
            .map(|(_, value)| value.trim().to_owned())
    };
    let q = get("q").unwrap_or_default();
    let page_number = Paging::asked(&uri, PER_PAGE);
    let offset = (page_number - 1) * PER_PAGE;
    let read = reads::lists::search_subscribers(&state.db, &q, offset, PER_PAGE)
        .await
        .map(|(subscribers, total)| {
            let paging = Paging::new(page_number, total, PER_PAGE);
            context! { q, subscribers, total, paging }
        });
    page_of(&state, &session, "pages/console/subscribers.html", read).await
}

/// Every subscriber as CSV (`id,email,status,created_at,updated_at`), as a
/// download.
pub(crate) async fn export_subscribers(
    Signed(session): Signed,
    State(state): State<PortfolioState>,
) -> Response {
    match csv_of_everyone(&state).await {
        Ok(csv) => (
            [
                (header::CONTENT_TYPE, "text/csv; charset=utf-8"),
                (
                    header::CONTENT_DISPOSITION,
                    "attachment; filename=\"subscribers.csv\"",
                ),
            ],
            csv,
        )
            .into_response(),
        Err(failure) => failure_page(&state, Some(&session), failure).await,
    }
}

async fn csv_of_everyone(state: &PortfolioState) -> Result<Vec<u8>, Failure> {
    let mut out = csv::Writer::from_writer(Vec::new());
    let fault = |e: csv::Error| Failure::fault("subscribers as CSV", e);
    out.write_record(["id", "email", "status", "created_at", "updated_at"])
        .map_err(fault)?;
    let mut window = reads::lists::Window {
        after: None,
        offset: 0,
        limit: 1000,
    };
    loop {
        let page = reads::lists::subscribers(&state.db, None, &window).await?;
        for subscriber in &page.items {
            write_row(&mut out, subscriber).map_err(fault)?;
        }
        match page.next {
            Some(next) => window.after = Some(next),
            None => break,
        }
    }
    out.into_inner()
        .map_err(|e| Failure::fault("subscribers as CSV", e.error()))
}

fn write_row(
    out: &mut csv::Writer<Vec<u8>>,
    subscriber: &SubscriberEntry,
) -> Result<(), csv::Error> {
    out.write_record([
        subscriber.id.to_string(),
        subscriber.email.clone(),
        subscriber.status.as_str().to_owned(),
        subscriber.created_at.to_rfc3339(),
        subscriber.updated_at.to_rfc3339(),
    ])
}

/// Erases subscriber `id`; back to the list.
pub(crate) async fn remove_subscriber(
    State(state): State<PortfolioState>,
    Path(id): Path<i64>,
    Form { session, .. }: Form,
) -> Response {
    let erased = ops::newsletter::erase_subscriber(state.ops(), id).await;
    then_back(&state, &session, "/console/subscribers", erased).await
}
