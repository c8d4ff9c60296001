//! The texts of the emails the portfolio sends. Every newsletter email
//! carries the unsubscribe link in its body and in `List-Unsubscribe`; an
//! email with an API key in it is marked, so that the outbox forgets its
//! body once it is delivered.

/// An email to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OutgoingEmail {
    pub(crate) to: String,
    pub(crate) subject: String,
    pub(crate) body: String,
    /// The one-request unsubscribe URL (RFC 8058) of newsletter emails.
    pub(crate) list_unsubscribe: Option<String>,
    /// The body holds a secret: the outbox keeps it only until delivery.
    pub(crate) holds_secret: bool,
}

impl OutgoingEmail {
    fn new(to: &str, subject: impl Into<String>, body: String) -> Self {
        OutgoingEmail {
            to: to.to_owned(),
            subject: subject.into(),
            body,
            list_unsubscribe: None,
            holds_secret: false,
        }
    }

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

/// To a new subscriber (single opt-in), or once the address is confirmed.
pub(crate) fn welcome(public_url: &str, to: &str, unsubscribe_token: &str) -> OutgoingEmail {
    let unsubscribe = unsubscribe_url(public_url, unsubscribe_token);
    OutgoingEmail::new(
        to,
        "Welcome to the newsletter",
        format!(
            "Thank you for subscribing. You will hear about new posts.\n\n\
             To unsubscribe, open this link (one request, no questions):\n{unsubscribe}\n"
        ),
    )
    .unsubscribed_by(unsubscribe)
}

/// The link that confirms a subscription (double opt-in).
pub(crate) fn confirmation(public_url: &str, to: &str, confirm_token: &str) -> OutgoingEmail {
    OutgoingEmail::new(
        to,
        "Please confirm your subscription",
        format!(
            "Someone (we hope you) asked to subscribe this address to the newsletter.\n\n\
             To confirm, open this link:\n{public_url}/api/newsletter/confirm?token={confirm_token}\n\n\
             If it was not you, ignore this email: nothing will be sent without confirmation.\n"
        ),
    )
}

/// What a post's notification tells a subscriber.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PostNotice<'a> {
    pub(crate) title: &'a str,
    pub(crate) summary: &'a str,
    pub(crate) url: &'a str,
}

/// A new post, to one subscriber.
pub(crate) fn new_post(
    public_url: &str,
    post: PostNotice<'_>,
    to: &str,
    unsubscribe_token: &str,
) -> OutgoingEmail {
    let unsubscribe = unsubscribe_url(public_url, unsubscribe_token);
    OutgoingEmail::new(
        to,
        format!("New post: {}", post.title),
        format!(
            "{}\n\n{}\n\nRead it: {}\n\nTo unsubscribe, open this link:\n{unsubscribe}\n",
            post.title, post.summary, post.url
        ),
    )
    .unsubscribed_by(unsubscribe)
}

/// What someone wrote through the contact form.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ContactNotice<'a> {
    pub(crate) name: &'a str,
    pub(crate) email: &'a str,
    pub(crate) subject: Option<&'a str>,
    pub(crate) message: Option<&'a str>,
}

/// A contact-form submission, to the site owner.
pub(crate) fn contact_notification(owner: &str, contact: ContactNotice<'_>) -> OutgoingEmail {
    OutgoingEmail::new(
        owner,
        format!(
            "Contact form: {}",
            contact.subject.unwrap_or("(no subject)")
        ),
        format!(
            "{} <{}> wrote through the contact form:\n\n{}\n",
            contact.name,
            contact.email,
            contact.message.unwrap_or("(no message)")
        ),
    )
}

/// What an approved key request's email tells the technical contact.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IssuedKeyNotice<'a> {
    pub(crate) requester: &'a str,
    pub(crate) key: &'a str,
    pub(crate) scopes: &'a str,
    pub(crate) expires: Option<&'a str>,
    /// Where the API's documentation is, if the server knows its address.
    pub(crate) docs_url: Option<&'a str>,
}

/// An approved request's key, to its technical contact.
pub(crate) fn api_key_issued(to: &str, notice: IssuedKeyNotice<'_>) -> OutgoingEmail {
    let expires = notice.expires.map_or_else(
        || "It does not expire.".to_owned(),
        |at| format!("It expires at {at}."),
    );
    let docs = notice
        .docs_url
        .map(|url| format!("The API is described at {url}\n\n"))
        .unwrap_or_default();
    OutgoingEmail::new(
        to,
        "Your API key",
        format!(
            "The request for an API key for {} was approved. The key:\n\n    {}\n\n\
             Send it in the X-API-Key header. Its scopes: {}. {expires}\n\n{docs}\
             Keep it secret: this email is the only copy we sent, and we keep none.\n",
            notice.requester, notice.key, notice.scopes
        ),
    )
    .holding_secret()
}

/// A declined key request, to its technical contact.
pub(crate) fn api_key_declined(to: &str, requester: &str) -> OutgoingEmail {
    OutgoingEmail::new(
        to,
        "Your request for an API key",
        format!(
            "The request for an API key for {requester} was declined. If you think this is \
             a mistake, write to the site's owner through the contact form.\n"
        ),
    )
}

/// A new request for an API key, to the site owner (the operator decides).
/// The digest the owner gets for the key requests that came within the
/// quiet period after the last notice (at most one email per period).
pub(crate) fn key_requests_waiting(owner: &str) -> OutgoingEmail {
    OutgoingEmail::new(
        owner,
        "More API key requests are waiting",
        "More requests for API keys came since the last email. List the ones waiting:\n  \
         petstore-portfolio key-requests list --status pending\n\
         (or GET /api/admin/key-requests?status=pending), then approve or reject each.\n"
            .to_owned(),
    )
}

/// What the owner is told of a request for a key.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KeyRequestNotice<'a> {
    pub(crate) id: &'a str,
    pub(crate) name: &'a str,
    pub(crate) organisation: &'a str,
    pub(crate) intended_use: &'a str,
    pub(crate) expected_volume: &'a str,
    pub(crate) technical_contact: &'a str,
}

pub(crate) fn key_request_received(owner: &str, request: KeyRequestNotice<'_>) -> OutgoingEmail {
    OutgoingEmail::new(
        owner,
        format!("API key request from {}", request.organisation),
        format!(
            "{} ({}) asks for an API key.\n\nIntended use: {}\nExpected volume: {}\n\
             Technical contact: {}\n\nApprove it (choosing the scopes) or reject it:\n  \
             petstore-portfolio key-requests approve {} --scope context:read\n  \
             petstore-portfolio key-requests reject {}\n\n\
             Requests that follow within the next minutes come together in one email.\n",
            request.name,
            request.organisation,
            request.intended_use,
            request.expected_volume,
            request.technical_contact,
            request.id,
            request.id
        ),
    )
}
