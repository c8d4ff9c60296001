//! Posts: the drafts and the published posts; a post written in Markdown
//! (with a preview), saved as a draft, then published (by the operation
//! `createPost` calls), and, as the owner chooses on a page that says how
//! many subscribers that is, posted to the social network (`socialPublish`)
//! and announced to the subscribers (`notifySubscribers`).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use minijinja::context;
use pulldown_cmark::{CowStr, Event, Parser, Tag};

use super::{Form, Signed, failure_page, page, page_of, see_other};
use crate::core::failure::Failure;
use crate::portfolio::model::{Slug, SubscriberStatus};
use crate::portfolio::ops;
use crate::portfolio::reads;
use crate::portfolio::reads::console::Draft;
use crate::portfolio::state::PortfolioState;

const EDITOR: &str = "pages/console/post_editor.html";

pub(crate) async fn list_posts(
    Signed(session): Signed,
    State(state): State<PortfolioState>,
) -> Response {
    let read = async {
        let drafts = reads::console::drafts(&state.db).await?;
        let posts = reads::content::posts(state.reads())
            .await
            .map_err(|e| Failure::fault("the posts", e.message().to_owned()))?;
        let posts: serde_json::Value =
            serde_json::from_slice(&posts).map_err(|e| Failure::fault("the posts as JSON", e))?;
        Ok(context! { drafts, posts })
    };
    page_of(&state, &session, "pages/console/posts.html", read.await).await
}

/// The editor: empty for a new post, or with the draft of `slug`.
pub(crate) async fn new_post(
    Signed(session): Signed,
    State(state): State<PortfolioState>,
) -> Response {
    let draft = Draft::default();
    page(
        &state,
        Some(&session),
        StatusCode::OK,
        EDITOR,
        context! { draft },
    )
    .await
}

pub(crate) async fn edit_draft(
    Signed(session): Signed,
    State(state): State<PortfolioState>,
    Path(slug): Path<String>,
) -> Response {
    let read = reads::console::draft(&state.db, &slug)
        .await
        .and_then(|draft| {
            draft
                .map(|draft| context! { draft })
                .ok_or_else(|| Failure::not_found(format!("no draft {slug:?}")))
        });
    page_of(&state, &session, EDITOR, read).await
}

/// The editor's form: `action=preview` shows the Markdown as it will look;
/// `action=save` keeps the draft and goes back to it.
pub(crate) async fn save_draft(State(state): State<PortfolioState>, form: Form) -> Response {
    let session = &form.session;
    let field = |name: &str| form.get(name).unwrap_or_default().to_owned();
    let draft = Draft {
        slug: field("slug").trim().to_owned(),
        title: field("title").trim().to_owned(),
        summary: field("summary").trim().to_owned(),
        body: field("body"),
        tags: field("tags")
            .split(',')
            .map(str::trim)
            .filter(|tag| !tag.is_empty())
            .map(str::to_owned)
            .collect(),
        saved_at_ms: 0,
    };
    if form.get("action") == Some("preview") {
        let preview = markdown_preview(&draft.body);
        let context = context! { draft, preview };
        return page(&state, Some(session), StatusCode::OK, EDITOR, context).await;
    }
    match ops::console::save_draft(&state.db, &draft).await {
        Ok(()) => see_other(&format!("/console/posts/drafts/{}", draft.slug)),
        Err(failure) => failure_page(&state, Some(session), failure).await,
    }
}

/// The page that asks before publishing: what goes out, and to how many.
pub(crate) async fn confirm_publish(
    Signed(session): Signed,
    State(state): State<PortfolioState>,
    Path(slug): Path<String>,
) -> Response {
    let read = async {
        let draft = reads::console::draft(&state.db, &slug)
            .await?
            .ok_or_else(|| Failure::not_found(format!("no draft {slug:?}")))?;
        let window = reads::lists::Window {
            after: None,
            offset: 0,
            limit: 1,
        };
        let subscribers =
            reads::lists::subscribers(&state.db, Some(SubscriberStatus::Subscribed), &window)
                .await?
                .total;
        let social = state.config.mastodon.is_some();
        Ok(context! { draft, subscribers, social })
    };
    page_of(
        &state,
        &session,
        "pages/console/post_publish.html",
        read.await,
    )
    .await
}

/// Publishes the draft of `slug`; then, as the form says (`social`,
/// `notify`), posts it to the social network and announces it to the
/// subscribers. The page says what was done.
pub(crate) async fn publish_draft(
    State(state): State<PortfolioState>,
    Path(slug): Path<String>,
    form: Form,
) -> Response {
    let session = &form.session;
    let done = async {
        let post = ops::console::publish_draft(state.ops(), &slug).await?;
        let slug = Slug::try_from(post.slug.clone()).map_err(Failure::malformed)?;
        let social = match form.get("social") {
            Some(_) => Some(
                ops::social::publish(
                    state.ops(),
                    &state.http,
                    state.config.mastodon.as_ref(),
                    &state.public_url,
                    &slug,
                )
                .await?,
            ),
            None => None,
        };
        let notified = match form.get("notify") {
            Some(_) => Some(ops::newsletter::notify(state.ops(), &state.public_url, &slug).await?),
            None => None,
        };
        Ok::<_, Failure>(context! { post, social, notified })
    };
    let done = done.await;
    page_of(&state, session, "pages/console/post_published.html", done).await
}

/// The Markdown as HTML, for the preview: raw HTML in it shows as text,
/// and links and images that are not http(s) or relative lose their
/// address, so that the preview runs nothing.
fn markdown_preview(markdown: &str) -> String {
    let safe = |url: CowStr<'_>| -> CowStr<'static> {
        let lower = url.to_ascii_lowercase();
        let allowed = lower.starts_with("https://")
            || lower.starts_with("http://")
            || lower.starts_with('/')
            || lower.starts_with('#')
            || !lower.contains(':');
        if allowed {
            CowStr::from(url.into_string())
        } else {
            CowStr::from("#")
        }
    };
    let events = Parser::new(markdown).map(|event| match event {
        Event::Html(html) | Event::InlineHtml(html) => Event::Text(html),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url: safe(dest_url),
            title,
            id,
        }),
        Event::Start(Tag::Image {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Image {
            link_type,
            dest_url: safe(dest_url),
            title,
            id,
        }),
        other => other,
    });
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, events);
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_preview_runs_nothing() {
        let html = markdown_preview(
            "# Title\n\n<script>alert(1)</script>\n\n[x](javascript:alert(2)) [y](https://ok.test/a) *z*",
        );
        assert!(html.contains("<h1>Title</h1>"), "{html}");
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(html.contains("<a href=\"#\">x</a>"), "{html}");
        assert!(
            html.contains("<a href=\"https://ok.test/a\">y</a>"),
            "{html}"
        );
        assert!(html.contains("<em>z</em>"), "{html}");
    }
}
