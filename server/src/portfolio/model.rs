//! The portfolio's domain: the published content, subscribers, publications
//! and analytics figures, with the rules they keep. Storage (`db/`) reads and
//! writes these types; the handlers turn them into answers (most are also
//! the contract's JSON shapes and derive `ToSchema`).

use std::path::Path;

use anyhow::Context as _;
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The sample content that ships with the project.
pub const SAMPLE_CONTENT: &str = include_str!("../../../content/sample.toml");

// ---- content ----------------------------------------------------------------
//
// The rules of each field (lengths, slugs, links) are in the schemas, for
// the documents, and checked by `admin::content` on every write and on the
// content file; they hold for everything the public reads serve.

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SiteInfo {
    #[schema(min_length = 1, max_length = 100)]
    pub name: String,
    #[schema(min_length = 1, max_length = 200)]
    pub headline: String,
    #[schema(min_length = 1, max_length = 5000)]
    pub bio: String,
    #[schema(nullable = false, max_length = 100)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    #[schema(format = Email, nullable = false, max_length = 254)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contact_email: Option<String>,
    #[schema(value_type = Option<HttpUrl>, nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website: Option<String>,
    #[schema(max_items = 20)]
    pub links: Vec<Link>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Link {
    #[schema(min_length = 1, max_length = 100)]
    pub label: String,
    #[schema(value_type = HttpUrl)]
    pub url: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Project {
    #[schema(value_type = Slug)]
    pub slug: String,
    #[schema(min_length = 1, max_length = 200)]
    pub title: String,
    #[schema(min_length = 1, max_length = 500)]
    pub summary: String,
    #[schema(min_length = 1, max_length = 20000)]
    pub description: String,
    #[schema(value_type = Option<HttpUrl>, nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[schema(value_type = Option<HttpUrl>, nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository_url: Option<String>,
    #[schema(value_type = Vec<Tag>, max_items = 20)]
    pub tags: Vec<String>,
    pub featured: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Achievement {
    #[schema(value_type = Slug)]
    pub slug: String,
    #[schema(min_length = 1, max_length = 200)]
    pub title: String,
    #[schema(min_length = 1, max_length = 5000)]
    pub description: String,
    pub date: NaiveDate,
    #[schema(value_type = Option<HttpUrl>, nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PostSummary {
    #[schema(value_type = Slug)]
    pub slug: String,
    #[schema(min_length = 1, max_length = 200)]
    pub title: String,
    #[schema(value_type = PostSummaryText)]
    pub summary: String,
    #[schema(value_type = Vec<Tag>, max_items = 20)]
    pub tags: Vec<String>,
    pub published_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Post {
    #[schema(value_type = Slug)]
    pub slug: String,
    #[schema(min_length = 1, max_length = 200)]
    pub title: String,
    #[schema(value_type = PostSummaryText)]
    pub summary: String,
    /// Markdown.
    #[schema(min_length = 1, max_length = 200000)]
    pub body: String,
    #[schema(value_type = Vec<Tag>, max_items = 20)]
    pub tags: Vec<String>,
    pub published_at: DateTime<Utc>,
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
pub struct HttpUrl(String);

/// The summary of a post (the schema only: a component of its own, as
/// `Post.summary` inline would be named like the `PostSummary` schema in
/// generated clients).
#[derive(ToSchema)]
#[allow(dead_code)] // Named in schemas, never built.
#[schema(min_length = 1, max_length = 1000)]
pub struct PostSummaryText(String);

/// A tag of a project or post (the schema only).
#[derive(ToSchema)]
#[allow(dead_code)] // Named in schemas, never built.
#[schema(min_length = 1, max_length = 50)]
pub struct Tag(String);

/// The links content may hold: http or https, a host (a dotted IPv4
/// address, or a name whose last label starts with a letter), a port from 1
/// to 65535, then anything but white space. Every such text is a URL; other
/// http(s) URLs (with user names, IPv6 hosts, or hosts that only look like
/// numbers) are refused. [`HttpUrl`]'s schema spells it out too.
pub const HTTP_URL_PATTERN: &str = concat!(
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
pub fn is_http_url(text: &str) -> bool {
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

/// A slug: lower-case letters and digits in dash-separated runs, at most
/// 100 characters. Checked when it is read (from a path or a body).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(try_from = "String", into = "String")]
#[schema(pattern = "^[a-z0-9]+(-[a-z0-9]+)*$", max_length = 100)]
pub struct Slug(String);

impl Slug {
    pub fn as_str(&self) -> &str {
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
pub struct ContentFile {
    pub site: SiteInfo,
    #[serde(default)]
    pub projects: Vec<Project>,
    #[serde(default)]
    pub achievements: Vec<Achievement>,
    #[serde(default)]
    pub posts: Vec<Post>,
}

impl ContentFile {
    /// Parses a content file; an unknown key (a typo) is an error, and so is
    /// a slug that is not one.
    pub fn parse(text: &str) -> anyhow::Result<Self> {
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
    pub fn load(path: Option<&Path>) -> anyhow::Result<Self> {
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

/// A contact-form submission, checked.
#[derive(Debug, Clone)]
pub struct ContactSubmission {
    pub name: String,
    pub email: String,
    pub subject: Option<String>,
    pub message: Option<String>,
    pub received_at: DateTime<Utc>,
}

// ---- newsletter ------------------------------------------------------------

/// Where a subscriber stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SubscriberStatus {
    /// Asked to subscribe; the confirmation link is not followed yet
    /// (double opt-in).
    Pending,
    Subscribed,
    Unsubscribed,
}

impl SubscriberStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            SubscriberStatus::Pending => "pending",
            SubscriberStatus::Subscribed => "subscribed",
            SubscriberStatus::Unsubscribed => "unsubscribed",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
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
pub struct Subscriber {
    pub id: i64,
    /// Lower case: addresses are compared case-insensitively.
    pub email: String,
    pub status: SubscriberStatus,
    /// Lets its bearer unsubscribe this address, and nothing else; every
    /// newsletter email carries it.
    pub unsubscribe_token: String,
    /// When the confirmation link stops working (Unix milliseconds).
    pub confirm_expires_ms: Option<i64>,
    /// When the address was last sent a subscription email (Unix milliseconds).
    pub last_emailed_at_ms: Option<i64>,
}

impl Subscriber {
    /// Whether the confirmation link has expired at `now_ms`.
    pub fn confirmation_expired(&self, now_ms: i64) -> bool {
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
    pub fn as_str(self) -> &'static str {
        match self {
            KeyRequestStatus::Pending => "pending",
            KeyRequestStatus::Approved => "approved",
            KeyRequestStatus::Rejected => "rejected",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [Self::Pending, Self::Approved, Self::Rejected]
            .into_iter()
            .find(|s| s.as_str() == text)
    }
}

/// A request for an API key, as the operator sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct KeyRequest {
    pub id: String,
    /// Who asks.
    pub name: String,
    pub organisation: String,
    pub intended_use: String,
    pub expected_volume: String,
    /// Where the key is sent once approved.
    pub technical_contact: String,
    pub status: KeyRequestStatus,
    pub created_at: DateTime<Utc>,
    #[schema(nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<DateTime<Utc>>,
    /// The key made for it, once approved.
    #[schema(nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_id: Option<String>,
}

/// A subscriber as the operator sees it (never the tokens of its links).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SubscriberEntry {
    pub id: i64,
    pub email: String,
    pub status: SubscriberStatus,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A contact-form submission as the operator sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ContactEntry {
    pub id: i64,
    pub name: String,
    pub email: String,
    #[schema(nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    #[schema(nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub received_at: DateTime<Utc>,
}

// ---- social publishing -----------------------------------------------------

/// A post's publication to the social network, as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Publication {
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
pub struct RequestStats {
    pub day: NaiveDate,
    pub route: String,
    pub method: String,
    pub status: i32,
    #[schema(minimum = 0)]
    pub count: i64,
    #[schema(minimum = 0)]
    pub average_ms: i64,
    #[schema(minimum = 0)]
    pub max_ms: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct KeyStats {
    /// The key's name, or `anonymous`.
    pub api_key: String,
    #[schema(minimum = 0)]
    pub count: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct PageViewStats {
    pub day: NaiveDate,
    pub path: String,
    #[schema(minimum = 0)]
    pub count: i64,
}

/// Requests counted together: the same day, route, method, status and key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RequestKey {
    pub day: NaiveDate,
    pub route: String,
    pub method: String,
    pub status: u16,
    pub api_key: String,
}

/// What requests with one [`RequestKey`] add up to.
#[derive(Debug, Default, Clone, Copy)]
pub struct RequestTotals {
    pub count: i64,
    pub total_ms: i64,
    pub max_ms: i64,
}

impl RequestTotals {
    pub fn add(&mut self, millis: i64) {
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
