//! The emails the portfolio sends, made from the template files
//! (`server/templates/email/`, text and HTML) in the site's name. Every
//! newsletter email carries the unsubscribe link in its body and in
//! `List-Unsubscribe`; an email with an API key in it is marked, so that the
//! outbox forgets its body once it is delivered.

use serde::Serialize;

use crate::core::templates::{RenderError, Site, render_email};

/// An email to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OutgoingEmail {
    pub(crate) to: String,
    pub(crate) subject: String,
    pub(crate) body: String,
    /// The same in HTML: the email goes as `multipart/alternative`.
    pub(crate) html: Option<String>,
    /// The one-request unsubscribe URL (RFC 8058) of newsletter emails.
    pub(crate) list_unsubscribe: Option<String>,
    /// The body holds a secret: the outbox keeps it only until delivery.
    pub(crate) holds_secret: bool,
    /// The domain of its `Message-ID`: the public URL's host.
    pub(crate) message_id_domain: String,
}

/// Whom the emails speak for: the site (its name, from the content) and
/// the server's public URL, whose links they carry and whose host names
/// their `Message-ID`s.
#[derive(Debug, Clone)]
pub(crate) struct Letterhead<'a> {
    pub(crate) site: Site,
    pub(crate) public_url: &'a str,
}

impl Letterhead<'_> {
    /// The host of the public URL (`localhost` when it has none).
    fn domain(&self) -> String {
        url::Url::parse(self.public_url)
            .ok()
            .and_then(|url| url.host_str().map(str::to_owned))
            .unwrap_or_else(|| "localhost".to_owned())
    }

    /// The email `template` to `to`, with `context` and the site.
    fn email(
        &self,
        template: &str,
        to: &str,
        context: impl Serialize,
    ) -> Result<OutgoingEmail, RenderError> {
        #[derive(Serialize)]
        struct WithSite<'a, C> {
            site: &'a Site,
            #[serde(flatten)]
            context: C,
        }
        let text = render_email(
            template,
            WithSite {
                site: &self.site,
                context,
            },
        )?;
        Ok(OutgoingEmail {
            to: to.to_owned(),
            subject: text.subject,
            body: text.text,
            html: Some(text.html),
            list_unsubscribe: None,
            holds_secret: false,
            message_id_domain: self.domain(),
        })
    }
}

impl OutgoingEmail {
    /// A newsletter email: the unsubscribe link goes in `List-Unsubscribe` too.
    fn unsubscribed_by(self, url: String) -> Self {
        OutgoingEmail {
            list_unsubscribe: Some(url),
            ..self
        }
    }

    /// The outbox forgets the body once it is delivered.
    fn holding_secret(self) -> Self {
        OutgoingEmail {
            holds_secret: true,
            ..self
        }
    }
}

/// The link that unsubscribes (body and `List-Unsubscribe`).
pub(crate) fn unsubscribe_url(public_url: &str, unsubscribe_token: &str) -> String {
    format!("{public_url}/api/newsletter/unsubscribe?token={unsubscribe_token}")
}

/// A newsletter email (`template` with `context`), to the subscriber whose
/// unsubscribe token is `unsubscribe_token`: the link is in the body
/// (`unsubscribe_url`) and in `List-Unsubscribe`.
fn newsletter_email(
    from: &Letterhead<'_>,
    template: &str,
    to: &str,
    unsubscribe_token: &str,
    mut context: serde_json::Value,
) -> Result<OutgoingEmail, RenderError> {
    let unsubscribe = unsubscribe_url(from.public_url, unsubscribe_token);
    context["unsubscribe_url"] = serde_json::Value::String(unsubscribe.clone());
    Ok(from
        .email(template, to, context)?
        .unsubscribed_by(unsubscribe))
}

/// To a new subscriber (single opt-in), or once the address is confirmed.
pub(crate) fn welcome(
    from: &Letterhead<'_>,
    to: &str,
    unsubscribe_token: &str,
) -> Result<OutgoingEmail, RenderError> {
    newsletter_email(
        from,
        "welcome",
        to,
        unsubscribe_token,
        serde_json::json!({}),
    )
}

/// The link that confirms a subscription (double opt-in).
pub(crate) fn confirmation(
    from: &Letterhead<'_>,
    to: &str,
    confirm_token: &str,
) -> Result<OutgoingEmail, RenderError> {
    let confirm_url = format!(
        "{}/api/newsletter/confirm?token={confirm_token}",
        from.public_url
    );
    from.email(
        "confirmation",
        to,
        serde_json::json!({"confirm_url": confirm_url}),
    )
}

/// What a post's notification tells a subscriber.
#[derive(Debug, Clone, Copy, Serialize)]
pub(crate) struct PostNotice<'a> {
    pub(crate) title: &'a str,
    pub(crate) summary: &'a str,
    pub(crate) url: &'a str,
}

/// A new post, to one subscriber.
pub(crate) fn new_post(
    from: &Letterhead<'_>,
    post: PostNotice<'_>,
    to: &str,
    unsubscribe_token: &str,
) -> Result<OutgoingEmail, RenderError> {
    let context = serde_json::json!({ "post": post });
    newsletter_email(from, "new_post", to, unsubscribe_token, context)
}

/// What someone wrote through the contact form.
#[derive(Debug, Clone, Copy, Serialize)]
pub(crate) struct ContactNotice<'a> {
    pub(crate) name: &'a str,
    pub(crate) email: &'a str,
    pub(crate) subject: Option<&'a str>,
    pub(crate) message: Option<&'a str>,
}

/// A contact-form submission, to the site owner.
pub(crate) fn contact_notification(
    from: &Letterhead<'_>,
    owner: &str,
    contact: ContactNotice<'_>,
) -> Result<OutgoingEmail, RenderError> {
    from.email("contact_notification", owner, contact)
}

/// What an approved key request's email tells the technical contact.
#[derive(Debug, Clone, Copy, Serialize)]
pub(crate) struct IssuedKeyNotice<'a> {
    pub(crate) requester: &'a str,
    pub(crate) key: &'a str,
    pub(crate) scopes: &'a str,
    pub(crate) expires: Option<&'a str>,
    /// Where the API's documentation is, if the server knows its address.
    pub(crate) docs_url: Option<&'a str>,
}

/// An approved request's key, to its technical contact.
pub(crate) fn api_key_issued(
    from: &Letterhead<'_>,
    to: &str,
    notice: IssuedKeyNotice<'_>,
) -> Result<OutgoingEmail, RenderError> {
    Ok(from.email("api_key_issued", to, notice)?.holding_secret())
}

/// A declined key request, to its technical contact.
pub(crate) fn api_key_declined(
    from: &Letterhead<'_>,
    to: &str,
    requester: &str,
) -> Result<OutgoingEmail, RenderError> {
    from.email(
        "api_key_declined",
        to,
        serde_json::json!({"requester": requester}),
    )
}

/// The digest the owner gets for the key requests that came within the
/// quiet period after the last notice (at most one email per period).
pub(crate) fn key_requests_waiting(
    from: &Letterhead<'_>,
    owner: &str,
) -> Result<OutgoingEmail, RenderError> {
    from.email("key_requests_waiting", owner, serde_json::json!({}))
}

/// What the owner is told of a request for a key.
#[derive(Debug, Clone, Copy, Serialize)]
pub(crate) struct KeyRequestNotice<'a> {
    pub(crate) id: &'a str,
    pub(crate) name: &'a str,
    pub(crate) organisation: &'a str,
    pub(crate) intended_use: &'a str,
    pub(crate) expected_volume: &'a str,
    pub(crate) technical_contact: &'a str,
}

/// A new request for an API key, to the site owner (the operator decides).
pub(crate) fn key_request_received(
    from: &Letterhead<'_>,
    owner: &str,
    request: KeyRequestNotice<'_>,
) -> Result<OutgoingEmail, RenderError> {
    from.email("key_request_received", owner, request)
}
