//! Serving for [`ask-first`](https://docs.rs/ask-first) servers: the hardened stdio, and
//! streamable HTTP behind a gate that binds every session to the principal that opened it.
//!
//! Most servers use this through the facade (`ask_first::Serving`, `ask_first::ServeError`); what
//! serving brings (the HTTP gate, the limits, replicas, the settings table) is on
//! [`Serving`]'s page (also this crate's `SERVING.md`). This crate's pages are the reference:
//!
//! ```no_run
//! # use ask_first_core::{Guard, HasGuard};
//! # #[derive(Clone)] struct NotesServer { guard: Guard }
//! # impl HasGuard for NotesServer { fn guard(&self) -> &Guard { &self.guard } }
//! # impl rmcp::ServerHandler for NotesServer {}
//! # async fn run() -> Result<(), ask_first_serve::ServeError> {
//! // NOTES_HTTP_ADDR, NOTES_HTTP_TOKEN, NOTES_SEAL_KEY, NOTES_REDIS_URL, ... and ELICITATION.
//! let serving = ask_first_serve::Serving::from_env("notes", "NOTES")?;
//! let server = NotesServer { guard: serving.guard_builder().build() };
//! serving.serve(server).await // stdio, or HTTP when NOTES_HTTP_ADDR is set
//! # }
//! ```
//!
//! - [`Serving`]: `from_env` (or `from_settings`), `guard_builder`, `serve`;
//! - [`stdio`]: the hardened transport that answers every line, and serving on it;
//! - the `http` module (feature `http`): the gate, sessions bound to their principal, the
//!   limits;
//! - [`audit`]: the JSON-lines audit sink; the `redis` module (feature `redis`): the shared
//!   spent-answer store's wiring;
//! - [`ServeSettings`]: the settings. Their names come from the server ([`SettingNames`]):
//!   `Serving::from_env("notes", "NOTES")` reads `NOTES_*`, and every message names those
//!   variables.
#![cfg_attr(docsrs, feature(doc_cfg))]

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use ask_first_core::{AuditSink, Guard, GuardBuilder, HasGuard, NonceStore};

#[cfg(feature = "passkeys")]
pub mod approve;
pub mod audit;
#[cfg(feature = "passkeys")]
pub mod ciba;
#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "redis")]
pub mod redis;
pub mod settings;
pub mod shutdown;
pub mod stdio;
mod verified;

pub use settings::{ServeSettings, SettingError, SettingNames};
pub use shutdown::shutdown_signal;

/// Why serving could not start or stopped with an error. Every message names the setting to
/// change as the server calls it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// A setting cannot be used.
    #[error(transparent)]
    Setting(#[from] SettingError),
    /// The audit log cannot be opened.
    #[error(transparent)]
    AuditLog(#[from] audit::AuditLogError),
    /// The Redis URL cannot be used.
    #[cfg(feature = "redis")]
    #[error(transparent)]
    Redis(#[from] ask_first_redis::RedisStoreError),
    /// A Redis URL is set but this build has no Redis support.
    #[error(
        "{setting} is set, but this server was built without Redis support (the `redis` \
         feature of ask-first); unset it, or rebuild with that feature"
    )]
    NoRedisSupport {
        /// The setting.
        setting: String,
    },
    /// An HTTP address is set but this build has no HTTP support.
    #[error(
        "{setting} is set, but this server was built without HTTP support (the `serve-http` \
         feature of ask-first); unset it to serve stdio"
    )]
    NoHttpSupport {
        /// The setting.
        setting: String,
    },
    /// HTTP serving failed.
    #[cfg(feature = "http")]
    #[error(transparent)]
    Http(#[from] http::HttpError),
    /// The stdio session failed.
    #[error(transparent)]
    Stdio(#[from] stdio::StdioError),
    /// The approval page's settings cannot be used.
    #[cfg(feature = "passkeys")]
    #[error(transparent)]
    Approval(#[from] approve::ApprovalSettingError),
    /// The CIBA settings cannot be used.
    #[cfg(feature = "passkeys")]
    #[error(transparent)]
    Ciba(#[from] ciba::CibaError),
    /// The spent-answer log cannot be used.
    #[error(transparent)]
    SpentLog(#[from] ask_first_core::FileNonceStoreError),
    /// A principal rule read from a request header, where each person is authenticated.
    #[error(
        "{setting} (a principal read from a request header) cannot be used with \
         {mode_setting}={mode}: there each caller proves who they are, and a header anyone can \
         send must not stand for the person (nor split one person into many, each with their \
         own caps); unset {setting}, or use it only behind an authenticating gateway with \
         {mode_setting}=secret"
    )]
    HeaderPrincipal {
        /// The server's setting that names the header.
        setting: String,
        /// The authentication mode's setting.
        mode_setting: String,
        /// The mode in force.
        mode: String,
    },
    /// The guard names a verified tool (`<PREFIX>_VERIFIED_TOOLS`) that is not one of the
    /// server's guarded tools.
    #[error(
        "{setting}: {entry} is not a guarded tool of this server{hint}; its guarded tools are: \
         {guarded} (exact names, comma-separated). Nothing was started: an entry that names no \
         tool would leave the tool it was meant for to a dialog a client can answer alone"
    )]
    VerifiedTool {
        /// The setting.
        setting: String,
        /// The entry as shown: itself if shaped like a tool name, else a placeholder.
        entry: String,
        /// What it was likely meant to be, or empty.
        hint: String,
        /// The server's guarded tools, comma-separated, or `none`.
        guarded: String,
    },
    /// A fixed seal key without Redis, and nowhere to keep spent answers.
    #[error(
        "{seal_key} is set without {redis_url}, so spent answers must outlive this process (its \
         questions and tokens still open after a restart), but there is no state directory to \
         keep them in (neither XDG_STATE_HOME nor HOME is set): set {state_dir} to a directory \
         for this server, or set {redis_url} to share spent answers in Redis"
    )]
    NoStateDir {
        /// The seal key's setting.
        seal_key: String,
        /// The Redis URL's setting.
        redis_url: String,
        /// The state directory's setting.
        state_dir: String,
    },
}

impl ServeError {
    /// The process exit code for this error: 1.
    pub fn exit_code(&self) -> i32 {
        1
    }
}

/// The durable spent-answer store a fixed seal key without Redis calls for: the log in
/// `<PREFIX>_STATE_DIR`, else in [`settings::default_state_dir`].
fn spent_log(
    name: &str,
    settings: &ServeSettings,
) -> Result<ask_first_core::FileNonceStore, ServeError> {
    let names = &settings.names;
    let dir = settings
        .state_dir
        .clone()
        .or_else(|| settings::default_state_dir(name))
        .ok_or_else(|| ServeError::NoStateDir {
            seal_key: names.seal_key.clone(),
            redis_url: names.redis_url.clone(),
            state_dir: names.state_dir.clone(),
        })?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    let store = ask_first_core::FileNonceStore::open(&dir, &names.state_dir, now)?;
    tracing::info!(
        path = %store.path().display(),
        "approvals are spent in a file that outlives this process (a fixed seal key without Redis)"
    );
    Ok(store)
}

/// The approval page of a server whose state directory holds enrolled passkeys, that has a
/// public URL (its passkeys are enrolled through it), or whose page offers a login at its
/// identity provider (`oauth` mode): its records there too. Read at start:
/// a server without either, started before the first passkey was enrolled, asks as before
/// until it is restarted.
#[cfg(feature = "passkeys")]
fn approval_page(
    name: &str,
    settings: &ServeSettings,
    shared_records: Option<Arc<dyn ask_first_core::ApprovalStore>>,
) -> Result<(Option<approve::ApprovalPage>, approve::ApprovalSettings), ServeError> {
    let names = &settings.names;
    let prefix = settings_prefix(settings);
    let approval = approve::ApprovalSettings::from_env(prefix)?;
    let oauth = (settings.auth.mode == settings::AuthMode::OAuth)
        .then_some((&settings.auth.oauth, &names.oauth));
    let login = approve::LoginSettings::from_env(prefix)?.login(oauth, &names.http_auth)?;
    let Some(dir) = settings
        .state_dir
        .clone()
        .or_else(|| settings::default_state_dir(name))
    else {
        return Ok((None, approval));
    };
    // Without an enrolled passkey nothing changes, and nothing is created on disk.
    if !dir.join(approve::PASSKEYS_FILE).exists()
        && approval.public_url.is_none()
        && login.is_none()
    {
        if approval
            .routes
            .as_ref()
            .is_some_and(|routes| routes.contains(&ask_first_core::ApprovalRoute::Page))
        {
            tracing::warn!(
                "{} is set but no passkey is enrolled: enrol one with `{name} passkeys add`",
                approval.routes_setting
            );
        }
        return Ok((None, approval));
    }
    let records = match shared_records {
        Some(records) => records,
        None => Arc::new(
            ask_first_core::FileApprovalStore::open(&dir, &names.state_dir)
                .map_err(approve::ApprovalSettingError::from)?,
        ),
    };
    let page = approve::ApprovalPage::new(name, &dir, &names.state_dir, records, &approval);
    if let Some(login) = login {
        page.offer_login(login);
    }
    Ok((Some(page), approval))
}

/// The settings' prefix (`NOTES` for `NOTES_STATE_DIR`).
fn settings_prefix(settings: &ServeSettings) -> &str {
    settings
        .names
        .state_dir
        .strip_suffix("_STATE_DIR")
        .unwrap_or("MCP")
}

/// The CIBA client, when its settings are set and callers are authenticated by OAuth (where
/// their subject is proven); otherwise `None`, with a warning when the settings are set.
#[cfg(feature = "passkeys")]
fn ciba_client(
    name: &str,
    settings: &ServeSettings,
) -> Result<Option<Arc<ciba::CibaClient>>, ServeError> {
    let prefix = settings_prefix(settings);
    let Some(ciba_settings) = ciba::CibaSettings::from_env(prefix)? else {
        return Ok(None);
    };
    let names = &settings.names;
    if settings.auth.mode != settings::AuthMode::OAuth {
        tracing::warn!(
            "{prefix}_CIBA_CLIENT_ID is set but {}={}: CIBA asks only callers an OAuth issuer proved (set {}=oauth), so the ciba route is unavailable",
            names.http_auth,
            settings.auth.mode,
            names.http_auth
        );
        return Ok(None);
    }
    let oauth = http::oauth::OAuthConfig::from_settings(
        &settings.auth.oauth,
        &names.oauth,
        &names.http_auth,
    )
    .map_err(|error| ciba::CibaError::Setup {
        reason: error.to_string(),
    })?;
    let ciba_names = ciba::CibaNames::with_prefix(prefix);
    let client = ciba::CibaClient::new(name, &ciba_settings, &ciba_names, &oauth, &names.oauth)?;
    tracing::info!(issuer = %client.issuer(), "CIBA: the identity provider may ask the person on their device");
    Ok(Some(Arc::new(client)))
}

/// One process's serving: its settings read, its replica pieces (seal key, spent-answer store,
/// audit log) built, ready to give its guard ([`Serving::guard_builder`]) and to serve
/// ([`Serving::serve`]).
///
#[doc = include_str!("../SERVING.md")]
pub struct Serving {
    name: String,
    settings: ServeSettings,
    nonces: Option<Arc<dyn NonceStore>>,
    #[cfg(feature = "redis")]
    redis: Option<ask_first_redis::RedisNonceStore>,
    audit: Option<Arc<dyn AuditSink>>,
    #[cfg(feature = "http")]
    authenticator: Option<Arc<dyn http::Authenticate>>,
    #[cfg(feature = "passkeys")]
    approval: (Option<approve::ApprovalPage>, approve::ApprovalSettings),
    #[cfg(feature = "passkeys")]
    ciba: Option<Arc<ciba::CibaClient>>,
    /// The approval records replicas share (Redis), for CIBA without a page.
    #[cfg(feature = "passkeys")]
    shared_records: Option<Arc<dyn ask_first_core::ApprovalStore>>,
    /// `<PREFIX>_VERIFIED_TOOLS`.
    verified: verified::VerifiedSetting,
}

impl std::fmt::Debug for Serving {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Serving")
            .field("name", &self.name)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Serving {
    /// Reads `ELICITATION` and the `<prefix>_*` settings ([`SettingNames::with_prefix`]) from
    /// the environment, opens the audit log and sets up the Redis store (without connecting).
    /// `name` is the server's name (in the guard's texts and the Redis keys, `<name>:spent:`).
    /// Prints the guard's notice when `ELICITATION=false` and logs configuration warnings. Call
    /// it inside the tokio runtime.
    pub fn from_env(name: &str, prefix: &str) -> Result<Self, ServeError> {
        Self::from_settings(name, ServeSettings::from_env(prefix)?)
    }

    /// As [`Serving::from_env`], from settings already read.
    pub fn from_settings(name: &str, settings: ServeSettings) -> Result<Self, ServeError> {
        if !settings.elicitation {
            eprintln!("{}", ask_first_core::elicitation_off_notice(name));
        }
        for warning in settings.warnings() {
            tracing::warn!("{warning}");
        }
        let audit = match &settings.audit_log {
            Some(log) => {
                let replica = settings
                    .replica_id
                    .clone()
                    .unwrap_or_else(settings::default_replica_id);
                Some(audit::audit_sink(log, &replica, &settings.names.audit_log)?)
            }
            None => None,
        };
        #[cfg(feature = "redis")]
        let redis = match &settings.redis_url {
            Some(url) => Some(redis::redis_store(
                url,
                &settings.names.redis_url,
                &format!("{name}:spent:"),
            )?),
            None => None,
        };
        #[cfg(feature = "redis")]
        let mut nonces = redis.as_ref().map(redis::nonce_store);
        #[cfg(not(feature = "redis"))]
        let mut nonces = match &settings.redis_url {
            Some(_) => {
                return Err(ServeError::NoRedisSupport {
                    setting: settings.names.redis_url.clone(),
                });
            }
            None => None,
        };
        if nonces.is_none() && settings.seal_key.is_some() {
            let store: Arc<dyn NonceStore> = Arc::new(spent_log(name, &settings)?);
            nonces = Some(store);
        }
        // Replicas sharing Redis share their approval records there too.
        #[cfg(all(feature = "passkeys", feature = "redis"))]
        let shared_records = redis
            .as_ref()
            .map(|store| Arc::new(store.clone()) as Arc<dyn ask_first_core::ApprovalStore>);
        #[cfg(all(feature = "passkeys", not(feature = "redis")))]
        let shared_records = None;
        #[cfg(feature = "passkeys")]
        let approval = approval_page(name, &settings, shared_records.clone())?;
        #[cfg(feature = "passkeys")]
        let ciba = ciba_client(name, &settings)?;
        let verified = verified::VerifiedSetting::from_env(settings_prefix(&settings));
        Ok(Self {
            name: name.to_owned(),
            settings,
            nonces,
            #[cfg(feature = "redis")]
            redis,
            audit,
            #[cfg(feature = "http")]
            authenticator: None,
            #[cfg(feature = "passkeys")]
            approval,
            #[cfg(feature = "passkeys")]
            ciba,
            #[cfg(feature = "passkeys")]
            shared_records,
            verified,
        })
    }

    /// The settings' prefix (`NOTES` for `NOTES_STATE_DIR`).
    #[cfg(feature = "passkeys")]
    fn prefix(&self) -> &str {
        settings_prefix(&self.settings)
    }

    /// The settings read.
    pub fn settings(&self) -> &ServeSettings {
        &self.settings
    }

    /// Serve HTTP at `addr` instead of what `<PREFIX>_HTTP_ADDR` says (e.g. from a `--http`
    /// flag); `None` keeps the setting.
    pub fn http_addr(mut self, addr: Option<SocketAddr>) -> Self {
        if addr.is_some() {
            self.settings.http_addr = addr;
        }
        self
    }

    /// Authenticate every HTTP request with the server's own verifier (for a mode of its own
    /// in `<PREFIX>_HTTP_AUTH`, read with [`ServeSettings::from_lookup_with_modes`]), whatever
    /// the settings say; `None` keeps the settings' authentication.
    #[cfg(feature = "http")]
    pub fn authenticator(mut self, authenticator: Option<Arc<dyn http::Authenticate>>) -> Self {
        if authenticator.is_some() {
            self.authenticator = authenticator;
        }
        self
    }

    /// Refuses to start when the server's principal rule reads a request header (its setting
    /// `setting` is set) while each HTTP caller is authenticated (`<PREFIX>_HTTP_AUTH` is
    /// `tokens`, `oauth` or a server's own mode, or [`Serving::authenticator`] was given): the
    /// guard composes the rule with the gate's identity, so the header could not choose the
    /// person, but it would split one person into as many principals as values they send.
    pub fn refuse_header_principal(&self, setting: &str) -> Result<(), ServeError> {
        let mode = &self.settings.auth.mode;
        #[cfg(feature = "http")]
        let own = self.authenticator.is_some();
        #[cfg(not(feature = "http"))]
        let own = false;
        if mode.is_per_person() || own {
            return Err(ServeError::HeaderPrincipal {
                setting: setting.to_owned(),
                mode_setting: self.settings.names.http_auth.clone(),
                mode: mode.to_string(),
            });
        }
        Ok(())
    }

    /// A guard builder for this server with the settings applied: its name, `ELICITATION`,
    /// the shared seal key, the spent-answer store, the audit log, and the tools
    /// `<PREFIX>_VERIFIED_TOOLS` lists (every one must be a guarded tool of the server, or
    /// [`Serving::serve`] refuses to start). Add anything else (a principal rule, timeouts) and
    /// `build()` it.
    pub fn guard_builder(&self) -> GuardBuilder {
        let mut builder = Guard::builder(&self.name)
            .elicitation(self.settings.elicitation)
            .verified_tools(self.verified.tools.iter().cloned());
        if let Some(key) = &self.settings.seal_key {
            builder = builder.key(key.clone());
        }
        if let Some(store) = &self.nonces {
            builder = builder.nonce_store(store.clone());
        }
        if let Some(sink) = &self.audit {
            builder = builder.audit(sink.clone());
        }
        #[cfg(feature = "passkeys")]
        {
            let (page, settings) = &self.approval;
            let prefix = self.prefix();
            builder = builder.ciba_setup(format!(
                "with {mode}=oauth, set {prefix}_CIBA_CLIENT_ID and {prefix}_CIBA_CLIENT_SECRET (a confidential client of the OAuth issuer allowed the CIBA grant) and name ciba in {}",
                settings.routes_setting,
                mode = self.settings.names.http_auth,
            ));
            if let Some(ciba) = &self.ciba {
                builder = builder.backchannel(ciba.clone());
                if let Some(records) = &self.shared_records {
                    builder = builder.approval_store(records.clone());
                }
            }
            builder = settings.configure(builder, &self.name, page.as_ref());
        }
        builder
    }

    /// Serves `server` over HTTP when an address is set (every session gets a clone), else on
    /// stdio; until stdin closes, or SIGINT/SIGTERM for HTTP. A client that closes stdin before
    /// its first request ends stdio serving normally. Refuses to start when its guard names a
    /// verified tool (`<PREFIX>_VERIFIED_TOOLS`, [`GuardBuilder::verified_tools`]) that is not
    /// one of the server's guarded tools, naming those that are.
    ///
    /// The future is boxed so that its type does not name `S`: a server without
    /// `impl HasGuard` is then reported once, on the argument, rather than again on the call
    /// and on its `.await`.
    pub fn serve<S>(self, server: S) -> Pin<Box<dyn Future<Output = Result<(), ServeError>> + Send>>
    where
        S: rmcp::ServerHandler + HasGuard + Clone + Send + Sync + 'static,
    {
        Box::pin(async move {
            self.check_verified(&server).await?;
            match self.settings.http_addr {
                #[cfg(feature = "http")]
                Some(addr) => self.serve_http_unboxed(addr, server).await,
                #[cfg(not(feature = "http"))]
                Some(_) => Err(ServeError::NoHttpSupport {
                    setting: self.settings.names.http_addr.clone(),
                }),
                None => self.serve_stdio(server).await,
            }
        })
    }

    /// Serves `server` on stdio with the hardened transport, until stdin closes.
    pub async fn serve_stdio<S>(self, server: S) -> Result<(), ServeError>
    where
        S: rmcp::ServerHandler + Send + 'static,
    {
        self.report_redis().await;
        tracing::info!("serving MCP on stdio");
        match stdio::serve_stdio(server).await {
            Err(error) if error.closed_before_start() => {
                tracing::info!("stdin closed before the first request; exiting");
                Ok(())
            }
            other => Ok(other?),
        }
    }

    /// Serves `server` over streamable HTTP at `addr` (every session gets a clone) until
    /// SIGINT or SIGTERM; then cancels every session and waits for open requests.
    ///
    /// Boxed as [`Serving::serve`] is, so a server without `impl HasGuard` is reported once.
    #[cfg(feature = "http")]
    pub fn serve_http<S>(
        self,
        addr: SocketAddr,
        server: S,
    ) -> Pin<Box<dyn Future<Output = Result<(), ServeError>> + Send>>
    where
        S: rmcp::ServerHandler + HasGuard + Clone + Send + Sync + 'static,
    {
        Box::pin(self.serve_http_unboxed(addr, server))
    }

    #[cfg(feature = "http")]
    async fn serve_http_unboxed<S>(self, addr: SocketAddr, server: S) -> Result<(), ServeError>
    where
        S: rmcp::ServerHandler + HasGuard + Clone + Send + Sync + 'static,
    {
        self.check_verified(&server).await?;
        self.report_redis().await;
        #[cfg_attr(not(feature = "passkeys"), allow(unused_mut))]
        let mut options = http::HttpOptions {
            authenticator: self.authenticator.clone(),
            ..http::HttpOptions::from_settings(&self.settings)
        };
        // The approval page on this server's own address, unless its own address is set.
        #[cfg(feature = "passkeys")]
        if let (Some(page), settings) = &self.approval
            && !settings.addr_set
        {
            let page = page.clone();
            let public_url = settings.public_url.clone();
            let setting = settings.public_url_setting.clone();
            let resource = self.settings.auth.oauth.resource.clone();
            let mount: http::PagesAt = Arc::new(move |local| {
                page.mount(local, public_url.as_deref(), resource.as_deref(), &setting)
            });
            options.pages = Some(mount);
        }
        let bound = http::bind_http(addr, move || Ok(server.clone()), options).await?;
        eprintln!(
            "{}: serving MCP over streamable HTTP at http://{}{}",
            self.name,
            bound.local_addr(),
            http::MCP_PATH
        );
        bound.serve(shutdown_signal()).await?;
        Ok(())
    }

    async fn report_redis(&self) {
        #[cfg(feature = "redis")]
        if let Some(store) = &self.redis {
            redis::report_redis(store).await;
        }
    }
}
