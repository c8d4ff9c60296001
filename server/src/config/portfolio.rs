//! Settings of the portfolio service (`[portfolio]`): content, API keys and
//! their scopes, the newsletter, the social network, analytics, rate limits.

use std::path::PathBuf;

use schemars::JsonSchema;
use secrecy::SecretString;
use serde::{Deserialize, Serialize};

/// Portfolio service settings.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct PortfolioConfig {
    /// Serve the portfolio (`/api`, the console, its document). On by
    /// default.
    pub enabled: bool,
    /// TOML file with the site's content, loaded into an empty database on
    /// first start; default: the sample that ships with the server.
    pub content_file: Option<PathBuf>,
    /// Folder whose files `/api/static/{file}` serves; none by default.
    pub static_dir: Option<PathBuf>,
    /// API keys the operator hands out, each with its scopes. Give the keys
    /// through the configuration file or the environment, never flags.
    pub api_keys: Vec<ConfiguredApiKey>,
    pub newsletter: NewsletterConfig,
    /// The social network to publish posts to; without one, publishing is a
    /// dry run that says so.
    pub mastodon: Option<MastodonConfig>,
    /// How often counted requests and page views are written (milliseconds).
    pub analytics_flush_interval_ms: u64,
    pub rate_limit: RateLimitConfig,
    pub oauth: OAuthConfig,
    pub key_requests: KeyRequestsConfig,
}

impl Default for PortfolioConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            content_file: None,
            static_dir: None,
            api_keys: Vec::new(),
            newsletter: NewsletterConfig::default(),
            mastodon: None,
            analytics_flush_interval_ms: 1000,
            rate_limit: RateLimitConfig::default(),
            oauth: OAuthConfig::default(),
            key_requests: KeyRequestsConfig::default(),
        }
    }
}

/// Bearer tokens (`POST /api/oauth/token`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct OAuthConfig {
    /// How long a token lasts (seconds).
    pub token_ttl_secs: u64,
    /// Failed client authentications allowed in any minute for each client
    /// id from each client address, and ten times as many for each client id
    /// and for each address; beyond them the token and revocation endpoints
    /// answer 429 until failures leave the window.
    pub failed_client_auth_per_minute: u32,
}

impl Default for OAuthConfig {
    fn default() -> Self {
        Self {
            token_ttl_secs: 3600,
            failed_client_auth_per_minute: 10,
        }
    }
}

/// Requests for API keys (`POST /api/key-requests`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct KeyRequestsConfig {
    /// Requests accepted per hour from each client address.
    pub per_address_per_hour: u32,
    /// Requests waiting for the operator, at most; beyond them new ones are
    /// answered 503 until some are decided.
    pub max_pending: u32,
    /// Requests waiting for the operator from one client address, at most;
    /// beyond them that address is answered 429 until some are decided.
    pub max_pending_per_address: u32,
    /// The site owner gets at most one email about new requests in this
    /// many minutes: the first at once, the rest together when it ends.
    pub notify_owner_every_minutes: u32,
}

impl Default for KeyRequestsConfig {
    fn default() -> Self {
        Self {
            per_address_per_hour: 5,
            max_pending: 1000,
            max_pending_per_address: 3,
            notify_owner_every_minutes: 10,
        }
    }
}

/// Newsletter settings.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct NewsletterConfig {
    /// Ask new subscribers to confirm by a link first (double opt-in).
    pub double_opt_in: bool,
    /// How long a confirmation link works (hours).
    pub confirmation_ttl_hours: u64,
    /// A repeated subscription sends no email to the same address within this
    /// many minutes (against floods aimed at one inbox).
    pub resend_after_minutes: u64,
}

impl Default for NewsletterConfig {
    fn default() -> Self {
        Self {
            double_opt_in: false,
            confirmation_ttl_hours: 48,
            resend_after_minutes: 10,
        }
    }
}

/// An API key the operator configured.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConfiguredApiKey {
    /// Who the key belongs to; shown in analytics, never the key itself.
    pub name: String,
    /// The key. Give it through the configuration file or the environment.
    #[schemars(with = "String")]
    pub key: SecretString,
    /// What it may do.
    pub scopes: Vec<Scope>,
}

/// What a credential may do. The operator names scopes in the configuration
/// and when handing out keys and clients; the portfolio's access checks
/// compare them. `admin` grants every scope.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    JsonSchema,
    utoipa::ToSchema,
)]
pub enum Scope {
    #[serde(rename = "context:read")]
    ContextRead,
    #[serde(rename = "contact:write")]
    ContactWrite,
    #[serde(rename = "analytics:read")]
    AnalyticsRead,
    #[serde(rename = "social:publish")]
    SocialPublish,
    #[serde(rename = "subscribers:notify")]
    SubscribersNotify,
    #[serde(rename = "content:write")]
    ContentWrite,
    #[serde(rename = "subscribers:read")]
    SubscribersRead,
    #[serde(rename = "subscribers:write")]
    SubscribersWrite,
    #[serde(rename = "keys:manage")]
    KeysManage,
    #[serde(rename = "admin")]
    Admin,
}

impl Scope {
    /// Every scope, in the order the documents list them.
    pub const ALL: [Scope; 10] = [
        Scope::ContextRead,
        Scope::ContactWrite,
        Scope::AnalyticsRead,
        Scope::SocialPublish,
        Scope::SubscribersNotify,
        Scope::ContentWrite,
        Scope::SubscribersRead,
        Scope::SubscribersWrite,
        Scope::KeysManage,
        Scope::Admin,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::ContextRead => "context:read",
            Scope::ContactWrite => "contact:write",
            Scope::AnalyticsRead => "analytics:read",
            Scope::SocialPublish => "social:publish",
            Scope::SubscribersNotify => "subscribers:notify",
            Scope::ContentWrite => "content:write",
            Scope::SubscribersRead => "subscribers:read",
            Scope::SubscribersWrite => "subscribers:write",
            Scope::KeysManage => "keys:manage",
            Scope::Admin => "admin",
        }
    }

    /// What the scope allows, as the documents say.
    pub fn description(self) -> &'static str {
        match self {
            Scope::ContextRead => "read the LLM context",
            Scope::ContactWrite => "submit the contact form",
            Scope::AnalyticsRead => "read analytics",
            Scope::SocialPublish => "publish posts to the social network",
            Scope::SubscribersNotify => "email subscribers about a post",
            Scope::ContentWrite => "create, replace and delete site content",
            Scope::SubscribersRead => "list subscribers",
            Scope::SubscribersWrite => "erase subscribers",
            Scope::KeysManage => "manage API keys, key requests and OAuth clients",
            Scope::Admin => "everything",
        }
    }

    /// Scopes as OAuth writes them: their names, space-separated.
    pub fn join(scopes: &[Scope]) -> String {
        scopes
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// What a credential with these scopes may do: `admin` may do anything.
    pub fn granted_by(self, scopes: &[Scope]) -> bool {
        scopes.contains(&self) || scopes.contains(&Scope::Admin)
    }
}

impl std::str::FromStr for Scope {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        Scope::ALL
            .into_iter()
            .find(|scope| scope.as_str() == text)
            .ok_or_else(|| {
                let names: Vec<&str> = Scope::ALL.iter().map(|s| s.as_str()).collect();
                format!(
                    "unknown scope {text:?}; the scopes are {}",
                    names.join(", ")
                )
            })
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A Mastodon-compatible account to publish to.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MastodonConfig {
    /// The instance, e.g. `https://mastodon.social`.
    pub instance_url: String,
    /// An access token with `write:statuses`. Give it through the
    /// configuration file or the environment.
    #[schemars(with = "String")]
    pub access_token: SecretString,
    /// `public`, `unlisted`, `private` or `direct`.
    #[serde(default = "default_visibility")]
    pub visibility: String,
    /// Seconds before a request to the instance gives up.
    #[serde(default = "default_mastodon_timeout")]
    pub timeout_secs: u64,
}

fn default_visibility() -> String {
    "public".to_owned()
}

fn default_mastodon_timeout() -> u64 {
    10
}

/// Rate-limit settings.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RateLimitConfig {
    /// Requests per minute for each API key.
    pub per_key_per_minute: u32,
    /// Requests per minute for each client address without a known key.
    pub anonymous_per_minute: u32,
}

impl Default for RateLimitConfig {
    fn default() -> Self {
        Self {
            per_key_per_minute: 100,
            anonymous_per_minute: 100,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_read_back_from_their_names() {
        for scope in Scope::ALL {
            assert_eq!(scope.as_str().parse::<Scope>(), Ok(scope));
            let json = serde_json::to_string(&scope).unwrap();
            assert_eq!(json, format!("\"{scope}\""));
        }
        assert!("root".parse::<Scope>().is_err());
    }

    #[test]
    fn configured_secrets_never_show_in_debug_output() {
        let key = ConfiguredApiKey {
            name: "n".into(),
            key: "s3cret-key".into(),
            scopes: vec![],
        };
        let mastodon = MastodonConfig {
            instance_url: "https://m.example".into(),
            access_token: "s3cret-token".into(),
            visibility: default_visibility(),
            timeout_secs: 1,
        };
        let printed = format!("{key:?} {mastodon:?}");
        assert!(!printed.contains("s3cret"), "{printed}");
    }
}
