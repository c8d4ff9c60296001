//! Settings of the pet store service (`[petstore]`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Whether the pet store checks credentials (the official document's
/// `petstore_auth` and `api_key`, and HTTP Basic wherever `petstore_auth` is).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AuthMode {
    /// Requests without credentials are served (the upstream demo's behaviour).
    Open,
    /// Requests must carry the credentials the document asks for.
    Enforce,
}

/// Pet store service settings.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct PetstoreConfig {
    /// Serve the pet store (`/v2` and its document). On by default; off,
    /// `/v2` answers 404 and no sample data is loaded.
    pub enabled: bool,
    pub auth_mode: AuthMode,
    /// Largest accepted image upload (bytes).
    pub max_upload_bytes: usize,
    /// Load the official sample data when the database has no pets, users or orders.
    pub demo_data: bool,
    /// If set, restore the sample data this often (seconds).
    pub demo_reset_interval_secs: Option<u64>,
    /// How long a `loginUser` session lasts (seconds).
    pub session_ttl_secs: u64,
    /// Failed logins (`loginUser`, HTTP Basic, the sign-in page) allowed in
    /// any minute for each username from each client address, and ten times
    /// as many for each username and for each address; beyond them the
    /// answer is 429 until failures leave the window. Successful logins do
    /// not count. `X-Rate-Limit` announces the hourly rate (60 times this).
    pub failed_logins_per_minute: u32,
    /// Threads that hash passwords (argon2id, 19 MiB each); 0: one per core.
    pub password_hash_threads: usize,
    /// Password checks that may wait for a thread; beyond them a request is
    /// answered 503 with `Retry-After`.
    pub password_hash_queue: usize,
    /// Where `/oauth/authorize` may send a token (exact URLs); none: Swagger
    /// UI's `oauth2-redirect.html` on this server.
    pub oauth_redirect_uris: Vec<String>,
    /// Requests a minute from each client address; off unless set (as
    /// upstream: the official document lists no 429). When set, every pet
    /// store answer carries the limit's headers.
    pub requests_per_minute: Option<u32>,
    /// How many pets' answers (one a pet and format) the read cache keeps
    /// in memory, a few hundred bytes each; past it, the least used go.
    pub cached_pets: usize,
    /// The most pets a whole list (`findPetsByStatus`, `findPetsByTags`
    /// without `limit` or `cursor`) may hold; a longer one is refused with
    /// a 400 that says how to ask for pages. Off unless set (as upstream:
    /// its clients know no pages).
    pub max_unpaged_list: Option<u64>,
}

impl Default for PetstoreConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            auth_mode: AuthMode::Open,
            max_upload_bytes: 5 * 1024 * 1024,
            demo_data: true,
            demo_reset_interval_secs: None,
            session_ttl_secs: 3600,
            failed_logins_per_minute: 10,
            password_hash_threads: 0,
            password_hash_queue: 64,
            oauth_redirect_uris: Vec::new(),
            requests_per_minute: None,
            cached_pets: 4096,
            max_unpaged_list: None,
        }
    }
}
