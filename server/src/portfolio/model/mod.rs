//! The portfolio's domain: the published content, subscribers, publications
//! and analytics figures, with the rules they keep. Storage (`db/`) reads and
//! writes these types; the handlers turn them into answers (most are also
//! the contract's JSON shapes and derive `ToSchema`).

pub(crate) mod fields;

use std::path::Path;

use anyhow::Context as _;
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The sample content that ships with the project.
pub(crate) const SAMPLE_CONTENT: &str = include_str!("../../../../content/sample.toml");

// ---- content ----------------------------------------------------------------
//
// The rules of each field (lengths, slugs, links) are in the schemas, for
// the documents, and checked by `admin::content` on every write and on the
// content file; they hold for everything the public reads serve.

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub(crate) struct SiteInfo {
    #[schema(min_length = 1, max_length = 100)]
    pub(crate) name: String,
    #[schema(min_length = 1, max_length = 200)]
    pub(crate) headline: String,
    #[schema(min_length = 1, max_length = 5000)]
    pub(crate) bio: String,
    #[schema(max_length = 100)]
    pub(crate) location: Option<String>,
    #[schema(format = Email, max_length = 254)]
    pub(crate) contact_email: Option<String>,
    #[schema(value_type = Option<HttpUrl>)]
    pub(crate) website: Option<String>,
    #[schema(max_items = 20)]
    pub(crate) links: Vec<Link>,
}

impl SiteInfo {
    /// Whom the pages and emails speak for: the site's name, linking to its
    /// own website or, without one, to the server (`public_url`).
    pub(crate) fn into_site(self, public_url: &str) -> crate::core::templates::Site {
        crate::core::templates::Site {
            name: self.name,
            url: self.website.unwrap_or_else(|| public_url.to_owned()),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub(crate) struct Link {
    #[schema(min_length = 1, max_length = 100)]
    pub(crate) label: String,
    #[schema(value_type = HttpUrl)]
    pub(crate) url: String,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub(crate) struct Project {
    #[schema(value_type = Slug)]
    pub(crate) slug: String,
    #[schema(min_length = 1, max_length = 200)]
    pub(crate) title: String,
    #[schema(min_length = 1, max_length = 500)]
    pub(crate) summary: String,
    #[schema(min_length = 1, max_length = 20000)]
    pub(crate) description: String,
    #[schema(value_type = Option<HttpUrl>)]
    pub(crate) url: Option<String>,
    #[schema(value_type = Option<HttpUrl>)]
    pub(crate) repository_url: Option<String>,
    #[schema(value_type = Vec<Tag>, max_items = 20)]
    pub(crate) tags: Vec<String>,
    pub(crate) featured: bool,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub(crate) struct Achievement {
    #[schema(value_type = Slug)]
    pub(crate) slug: String,
    #[schema(min_length = 1, max_length = 200)]
    pub(crate) title: String,
    #[schema(min_length = 1, max_length = 5000)]
    pub(crate) description: String,
    pub(crate) date: NaiveDate,
    #[schema(value_type = Option<HttpUrl>)]
    pub(crate) url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub(crate) struct PostSummary {
    #[schema(value_type = Slug)]
    pub(crate) slug: String,
    #[schema(min_length = 1, max_length = 200)]
    pub(crate) title: String,
    #[schema(value_type = PostSummaryText)]
    pub(crate) summary: String,
    #[schema(value_type = Vec<Tag>, max_items = 20)]
    pub(crate) tags: Vec<String>,
    pub(crate) published_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub(crate) struct Post {
    #[schema(value_type = Slug)]
    pub(crate) slug: String,
    #[schema(min_length = 1, max_length = 200)]
    pub(crate) title: String,
    #[schema(value_type = PostSummaryText)]
    pub(crate) summary: String,
    /// Markdown.
    #[schema(min_length = 1, max_length = 200000)]
    pub(crate) body: String,
    #[schema(value_type = Vec<Tag>, max_items = 20)]
    pub(crate) tags: Vec<String>,
    pub(crate) published_at: DateTime<Utc>,
}

/// An http(s) link: `http://` or `https://`, a host (a dotted IPv4 address,
/// or a name whose last label starts with a letter), an optional port from 1
/// to 65535, then no white space (the schema of [`HTTP_URL_PATTERN`]).
#[derive(ToSchema)]
#[allow(dead_code)] // Named in schemas, never built.
#[schema(
    max_length = 2000,
    pattern = r"^https?://((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3}|([A-Za-z0-9]+(-[A-Za-z0-9]+)*\.)*[A-Za-z][A-Za-z0-9]*(-[A-Za-z0-9]+)*)(:(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?([/?#]\S*)?$"
)]
pub(crate) struct HttpUrl(String);

/// The summary of a post (the schema only: a component of its own, as
/// `Post.summary` inline would be named like the `PostSummary` schema in
/// generated clients).
#[derive(ToSchema)]
#[allow(dead_code)] // Named in schemas, never built.
#[schema(min_length = 1, max_length = 1000)]
pub(crate) struct PostSummaryText(String);

/// A tag of a project or post (the schema only).
#[derive(ToSchema)]
#[allow(dead_code)] // Named in schemas, never built.
#[schema(min_length = 1, max_length = 50)]
pub(crate) struct Tag(String);

/// The links content may hold: http or https, a host (a dotted IPv4
/// address, or a name whose last label starts with a letter), a port from 1
/// to 65535, then anything but white space. Every such text is a URL; other
/// http(s) URLs (with user names, IPv6 hosts, or hosts that only look like
/// numbers) are refused. [`HttpUrl`]'s schema spells it out too.
pub(crate) const HTTP_URL_PATTERN: &str = concat!(
    r"^https?://(",
    r"(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3}",
    r"|([A-Za-z0-9]+(-[A-Za-z0-9]+)*\.)*[A-Za-z][A-Za-z0-9]*(-[A-Za-z0-9]+)*",
    r")(:(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?",
    r"([/?#]\S*)?$"
);

static HTTP_URL: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    #[allow(clippy::expect_used)] // A constant, tested below.
    regex::Regex::new(HTTP_URL_PATTERN).expect("HTTP_URL_PATTERN is a regex")
});

/// Is this a link content may hold ([`HTTP_URL_PATTERN`], and a URL)?
pub(crate) fn is_http_url(text: &str) -> bool {
    HTTP_URL.is_match(text) && url::Url::parse(text).is_ok()
}

impl From<Post> for PostSummary {
    fn from(post: Post) -> Self {
        PostSummary {
            slug: post.slug,
            title: post.title,
            summary: post.summary,
            tags: post.tags,
            published_at: post.published_at,
        }
    }
}

/// The path parameter of an item's operations, as the documents describe
/// it (the handlers read it as a [`Slug`]).
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)] // It documents the parameter; `Path<Slug>` reads it.
pub(crate) struct SlugParam {
    /// The item's slug (lower-case letters, digits and dashes).
    #[param(pattern = "^[a-z0-9]+(-[a-z0-9]+)*$", max_length = 100)]
    slug: String,
}

/// A slug: lower-case letters and digits in dash-separated runs, at most
/// 100 characters. Checked when it is read (from a path or a body).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(try_from = "String", into = "String")]
#[schema(pattern = "^[a-z0-9]+(-[a-z0-9]+)*$", max_length = 100)]
pub(crate) struct Slug(String);

impl Slug {
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for Slug {
    type Error = String;

    fn try_from(value: String) -> Result<Self, String> {
        if is_slug(&value) {
            Ok(Slug(value))
        } else {
            Err(format!(
                "{value:?} is not a slug: lower-case letters and digits in dash-separated runs, at most 100"
            ))
        }
    }
}

impl From<Slug> for String {
    fn from(slug: Slug) -> String {
        slug.0
    }
}

impl std::fmt::Display for Slug {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Is this a slug?
fn is_slug(value: &str) -> bool {
    value.len() <= 100
        && !value.is_empty()
        && value.split('-').all(|run| {
            !run.is_empty()
                && run
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

/// The content file: what the server publishes, loaded into an empty
/// database on first start.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ContentFile {
    pub(crate) site: SiteInfo,
    #[serde(default)]
    pub(crate) projects: Vec<Project>,
    #[serde(default)]
    pub(crate) achievements: Vec<Achievement>,
    #[serde(default)]
    pub(crate) posts: Vec<Post>,
}

impl ContentFile {
    /// Parses a content file; an unknown key (a typo) is an error, and so is
    /// a slug that is not one.
    pub(crate) fn parse(text: &str) -> anyhow::Result<Self> {
        let mut unknown = Vec::new();
        let content: ContentFile =
            serde_ignored::deserialize(toml::Deserializer::new(text), |path| {
                unknown.push(path.to_string());
            })?;
        anyhow::ensure!(unknown.is_empty(), "unknown keys: {}", unknown.join(", "));
        let slugs = content
            .projects
            .iter()
            .map(|p| &p.slug)
            .chain(content.achievements.iter().map(|a| &a.slug))
            .chain(content.posts.iter().map(|p| &p.slug));
        for slug in slugs {
            anyhow::ensure!(
                is_slug(slug),
                "{slug:?} is not a slug (lower-case letters, digits, dashes)"
            );
        }
        Ok(content)
    }

    /// The file at `path`, or the sample content.
    pub(crate) fn load(path: Option<&Path>) -> anyhow::Result<Self> {
        match path {
            None => Self::parse(SAMPLE_CONTENT).context("the sample content"),
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read the content file {}", path.display()))?;
                Self::parse(&text).with_context(|| format!("the content file {}", path.display()))
            }
        }
    }
}

// ---- contact ---------------------------------------------------------------

/// What someone wrote through the contact form, checked (when it came is
/// the stored entry's).
#[derive(Debug, Clone)]
pub(crate) struct ContactSubmission {
    pub(crate) name: String,
    pub(crate) email: String,
    pub(crate) subject: Option<String>,
    pub(crate) message: Option<String>,
}

// ---- newsletter ------------------------------------------------------------

/// Where a subscriber stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SubscriberStatus {
    /// Asked to subscribe; the confirmation link is not followed yet
    /// (double opt-in).
    Pending,
    Subscribed,
    Unsubscribed,
}

impl SubscriberStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            SubscriberStatus::Pending => "pending",
            SubscriberStatus::Subscribed => "subscribed",
            SubscriberStatus::Unsubscribed => "unsubscribed",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<Self> {
        [
            SubscriberStatus::Pending,
            SubscriberStatus::Subscribed,
            SubscriberStatus::Unsubscribed,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }
}

/// An address that asked for the newsletter.
#[derive(Debug, Clone)]
pub(crate) struct Subscriber {
    pub(crate) id: i64,
    /// Lower case: addresses are compared case-insensitively.
    pub(crate) email: String,
    pub(crate) status: SubscriberStatus,
    /// Lets its bearer unsubscribe this address, and nothing else; every
    /// newsletter email carries it.
    pub(crate) unsubscribe_token: String,
    /// When the confirmation link stops working (Unix milliseconds).
    pub(crate) confirm_expires_ms: Option<i64>,
}

impl Subscriber {
    /// The token of a newsletter link, unless it cannot be one.
    pub(crate) fn link_token(token: &str) -> Result<&str, crate::core::failure::Failure> {
        if token.is_empty() || token.len() > 100 {
            return Err(crate::core::failure::Failure::malformed(
                "the token is malformed",
            ));
        }
        Ok(token)
    }

    /// Whether the confirmation link has expired at `now_ms`.
    pub(crate) fn confirmation_expired(&self, now_ms: i64) -> bool {
        self.confirm_expires_ms.is_some_and(|at| at < now_ms)
    }
}

// ---- key requests ------------------------------------------------------------

/// Where a request for an API key stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum KeyRequestStatus {
    /// Waiting for the operator.
    Pending,
    /// A key was made and sent to the technical contact.
    Approved,
    Rejected,
}

impl KeyRequestStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            KeyRequestStatus::Pending => "pending",
            KeyRequestStatus::Approved => "approved",
            KeyRequestStatus::Rejected => "rejected",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<Self> {
        [Self::Pending, Self::Approved, Self::Rejected]
            .into_iter()
            .find(|s| s.as_str() == text)
    }
}

/// A request for an API key, as the operator sees it.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub(crate) struct KeyRequest {
    pub(crate) id: String,
    /// Who asks.
    pub(crate) name: String,
    pub(crate) organisation: String,
    pub(crate) intended_use: String,
    pub(crate) expected_volume: String,
    /// Where the key is sent once approved.
    pub(crate) technical_contact: String,
    pub(crate) status: KeyRequestStatus,
    pub(crate) created_at: DateTime<Utc>,
    pub(crate) decided_at: Option<DateTime<Utc>>,
    /// The key made for it, once approved.
    pub(crate) key_id: Option<String>,
}

/// A subscriber as the operator sees it (never the tokens of its links).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub(crate) struct SubscriberEntry {
    pub(crate) id: i64,
    pub(crate) email: String,
    pub(crate) status: SubscriberStatus,
    pub(crate) created_at: DateTime<Utc>,
    pub(crate) updated_at: DateTime<Utc>,
}

/// A contact-form submission as the operator sees it.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub(crate) struct ContactEntry {
    pub(crate) id: i64,
    pub(crate) name: String,
    pub(crate) email: String,
    pub(crate) subject: Option<String>,
    pub(crate) message: Option<String>,
    pub(crate) received_at: DateTime<Utc>,
    /// When the owner marked it handled; absent while it waits.
    pub(crate) handled_at: Option<DateTime<Utc>>,
}

// ---- social publishing -----------------------------------------------------

/// A post's publication to the social network, as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Publication {
    /// Sent; the status on the network.
    Published {
        remote_id: Option<String>,
        remote_url: Option<String>,
    },
    /// Recorded without a network configured; nothing was sent.
    DryRun,
}

// ---- analytics -------------------------------------------------------------

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct RequestStats {
    pub(crate) day: NaiveDate,
    pub(crate) route: String,
    pub(crate) method: String,
    pub(crate) status: i32,
    #[schema(minimum = 0)]
    pub(crate) count: i64,
    #[schema(minimum = 0)]
    pub(crate) average_ms: i64,
    #[schema(minimum = 0)]
    pub(crate) max_ms: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct KeyStats {
    /// The key's name, or `anonymous`.
    pub(crate) api_key: String,
    #[schema(minimum = 0)]
    pub(crate) count: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct PageViewStats {
    pub(crate) day: NaiveDate,
    pub(crate) path: String,
    #[schema(minimum = 0)]
    pub(crate) count: i64,
}

/// The analytics of a date range.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct AnalyticsSummary {
    pub(crate) from: NaiveDate,
    pub(crate) to: NaiveDate,
    #[schema(minimum = 0)]
    pub(crate) total_requests: i64,
    pub(crate) requests: Vec<RequestStats>,
    pub(crate) by_api_key: Vec<KeyStats>,
    pub(crate) page_views: Vec<PageViewStats>,
}

/// An email the worker gave up on.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct FailedEmail {
    pub(crate) id: i64,
    pub(crate) recipient: String,
    pub(crate) subject: String,
    pub(crate) attempts: i32,
    /// Why the last attempt failed.
    pub(crate) last_error: String,
    /// When it was queued (or last requeued).
    pub(crate) queued_at: chrono::DateTime<chrono::Utc>,
}

/// Requests counted together: the same day, route, method, status and key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct RequestKey {
    pub(crate) day: NaiveDate,
    pub(crate) route: String,
    pub(crate) method: String,
    pub(crate) status: u16,
    pub(crate) api_key: String,
}

/// What requests with one [`RequestKey`] add up to.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct RequestTotals {
    pub(crate) count: i64,
    pub(crate) total_ms: i64,
    pub(crate) max_ms: i64,
}

impl RequestTotals {
    pub(crate) fn add(&mut self, millis: i64) {
        self.count += 1;
        self.total_ms = self.total_ms.saturating_add(millis);
        self.max_ms = self.max_ms.max(millis);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_http_url_schema_says_the_pattern_the_server_keeps() {
        use utoipa::PartialSchema as _;
        let schema = serde_json::to_value(HttpUrl::schema()).unwrap();
        assert_eq!(schema["pattern"], HTTP_URL_PATTERN);
    }

    #[test]
    fn the_sample_content_is_valid() {
        let content = ContentFile::parse(SAMPLE_CONTENT).unwrap();
        assert!(!content.projects.is_empty() && !content.posts.is_empty());
    }

    #[test]
    fn unknown_keys_in_the_content_file_are_errors() {
        let text = SAMPLE_CONTENT.replace("headline =", "headlin =");
        let error = ContentFile::parse(&text).unwrap_err().to_string();
        assert!(error.contains("headlin"), "{error}");
    }

    #[test]
    fn slugs_are_lower_case_runs_joined_by_dashes() {
        for good in ["a", "why-contract-first", "tide-2"] {
            assert!(Slug::try_from(good.to_owned()).is_ok(), "{good}");
        }
        for bad in ["", "A", "a--b", "-a", "a-", "a b", "a_b", &"a".repeat(101)] {
            assert!(Slug::try_from(bad.to_owned()).is_err(), "{bad}");
        }
    }
}
