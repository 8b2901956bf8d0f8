//! The MCP server: construction from the configuration, tool filtering, and the rmcp handler.

use std::sync::Arc;

use ask_first::Guard;
use ask_first::principal::Caller;
use ask_first_core::ClientDeclared;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    DiscoverResult, Implementation, InitializeRequestParams, InitializeResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ResultType,
    ServerCapabilities, ServerConfig, SubscriptionFilter,
};
use rmcp::service::{RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ErrorData, ServerHandler, tool_handler};

use crate::account::{Account, PersonCredential, acting_as};
use crate::cache::{CacheOwner, GistCache};
use crate::catalog;
use crate::config::{Config, DEFAULT_MAX_RESULT_BYTES, FilterError};
use crate::opengist::{ClientOptions, OpengistClient, as_principal};
use crate::state::{OpengistServer, Shared};
use crate::team::TeamAuthenticator;
use crate::tools::common::guard_texts;

/// The server's name, as reported to clients and used in the guard's texts.
pub const SERVER_NAME: &str = "opengist-mcp";

/// The tool resources stand beside: they read what it reads, so they exist only when it does.
pub(crate) const RESOURCE_TOOL: &str = catalog::GET_GIST_FILE.name;

/// How to reach the configured Opengist: `None` until both `OPENGIST_URL` and
/// `OPENGIST_TOKEN` are set.
pub(crate) fn client_options(config: &Config) -> Option<ClientOptions> {
    let (url, token) = (config.opengist_url.as_ref()?, config.token.as_ref()?);
    Some(ClientOptions {
        token: Some(token.expose().to_owned()),
        ..team_client_options(config, url.url())
    })
}

/// How the authenticator of a team server reaches Opengist: as [`client_options`], without a
/// token (each person's is added per request, see [`OpengistClient::with_token`]).
fn team_client_options(config: &Config, url: &url::Url) -> ClientOptions {
    ClientOptions {
        base_url: url.clone(),
        token: None,
        insecure_tls: config.insecure_tls,
        request_timeout: config.request_timeout,
        user_agent: format!("{SERVER_NAME}/{}", env!("CARGO_PKG_VERSION")),
        limits: config.opengist_limits,
    }
}

/// Why the server could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The allow/deny lists are unusable.
    #[error(transparent)]
    Filter(#[from] FilterError),
    /// The HTTP client could not be built.
    #[error(transparent)]
    Client(#[from] crate::opengist::error::OpengistError),
    /// The guard's spent-answer store (Redis, or the log of a fixed seal key) or audit log
    /// could not be set up.
    #[error(transparent)]
    Serving(#[from] ask_first_serve::ServeError),
}

impl OpengistServer {
    /// Builds the shared state and the filtered tool router from `config`, with the guard the
    /// framework's serving builds from `config.serve` (its seal key, spent-answer store and
    /// audit log). `main` serves through [`ask_first_serve::Serving`] and uses
    /// [`OpengistServer::with_guard`] instead, so these are built once.
    pub fn from_config(config: &Config) -> Result<Self, BuildError> {
        let serving = ask_first_serve::Serving::from_settings(SERVER_NAME, config.serve.clone())?;
        Self::with_guard(config, serving.guard_builder())
    }

    /// Builds the shared state and the filtered tool router from `config`, with the guard
    /// `guard` gives (the framework's [`ask_first_serve::Serving::guard_builder`]) and this
    /// server's dialog timeout.
    pub fn with_guard(config: &Config, guard: ask_first::GuardBuilder) -> Result<Self, BuildError> {
        let enabled = config.tools.resolve(config.read_only)?;
        let per_person = config.serves_team();
        // A team server has no account of its own: each person's token acts (see
        // `crate::account`), so the configured token is never used.
        let options = if per_person {
            None
        } else {
            client_options(config)
        };
        let cache = match (&options, &config.opengist_url) {
            (Some(o), _) => GistCache::new(
                CacheOwner::of(o.base_url.as_str(), o.token.as_deref()),
                config.cache_bytes,
            ),
            // The store the people's views share; this view (no token's) is never read.
            (None, Some(url)) if per_person => {
                GistCache::new(CacheOwner::of(url.url().as_str(), None), config.cache_bytes)
            }
            (None, _) => GistCache::disabled(),
        };
        let client = options.map(OpengistClient::new).transpose()?;
        let team = match (&config.opengist_url, per_person) {
            (Some(url), true) => {
                // No token of its own: the people's clients are made from it, sharing its
                // connection pool and its caps on requests to Opengist.
                let base = OpengistClient::new(team_client_options(config, url.url()))?;
                Some(Arc::new(TeamAuthenticator::new(base, url.url().as_str())))
            }
            _ => None,
        };
        let guard = guard
            .dialog_timeout(config.dialog_timeout)
            // The configuration checked each name against the catalog's guarded tools; a
            // verified tool the filters leave out has nothing to guard.
            .verified_tools(
                config
                    .verified_tools
                    .iter()
                    .filter(|tool| enabled.contains(tool))
                    .cloned(),
            )
            .build();
        let shared = Shared {
            client,
            base_url: config.opengist_url.as_ref().map(|u| u.url().clone()),
            guard,
            max_result_bytes: config.max_result_bytes,
            cache,
            per_person: team.is_some(),
            team,
            resources: crate::resources::ResourceState::new(
                config.resources && enabled.iter().any(|t| t == RESOURCE_TOOL),
            ),
            unknown_settings: config.unknown_settings.clone(),
        };
        Ok(Self::new(Arc::new(shared), &enabled))
    }

    /// A server over `shared` exposing only the tools named in `enabled`.
    pub fn new(shared: Arc<Shared>, enabled: &[String]) -> Self {
        let mut router = catalog::TOOLS
            .iter()
            .filter(|tool| enabled.iter().any(|name| name == tool.name))
            .fold(ToolRouter::new(), |router, tool| router + (tool.router)());
        crate::tools::common::tool_schemas::plain_integer_bounds(&mut router);
        Self {
            shared,
            tool_router: router,
        }
    }

    /// A server for tests and benchmarks: no Opengist, every tool, a fresh guard.
    pub fn unconfigured() -> Self {
        let shared = Shared {
            client: None,
            base_url: None,
            guard: Guard::builder(SERVER_NAME).build(),
            max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
            cache: GistCache::disabled(),
            per_person: false,
            team: None,
            resources: crate::resources::ResourceState::new(true),
            unknown_settings: Vec::new(),
        };
        let all: Vec<String> = catalog::names().map(str::to_owned).collect();
        Self::new(Arc::new(shared), &all)
    }

    /// The MCP principal of a request, as the guard tells callers apart: what requests to
    /// Opengist made for it are counted against (see `crates/opengist-mcp-client/src/opengist/client/limit.rs`).
    fn principal(&self, context: &RequestContext<RoleServer>) -> String {
        self.shared.guard.principal_of(&Caller::of(context))
    }

    /// The account a request acts as on a team server: the person's, from the credential the
    /// HTTP gate's authenticator put into the request's head (`None` elsewhere, where the
    /// configured account serves everyone).
    fn request_account(&self, context: &RequestContext<RoleServer>) -> Option<Account> {
        if !self.shared.per_person {
            return None;
        }
        PersonCredential::of(context.extensions.get::<http::request::Parts>())
            .map(|person| person.account(&self.shared.cache))
    }

    /// Runs a request's handler as its caller: its requests to Opengist counted against its
    /// principal, and acting as its account (see [`crate::account`]).
    async fn as_caller<F: std::future::Future>(
        &self,
        context: &RequestContext<RoleServer>,
        future: F,
    ) -> F::Output {
        let account = self.request_account(context);
        as_principal(self.principal(context), acting_as(account, future)).await
    }

    /// On a team server (`OPENGIST_MCP_HTTP_AUTH=opengist` with `--http`), the authenticator
    /// the HTTP gate must call for every request (`main` hands it to the framework's serving).
    pub fn team_authenticator(&self) -> Option<Arc<TeamAuthenticator>> {
        self.shared.team.clone()
    }

    /// What this server tells the client behind `context` about itself: its instructions, true
    /// for the route that client's guarded calls will take.
    fn instructions_for(&self, context: &RequestContext<RoleServer>) -> String {
        self.with_setup_mistakes(guard_texts::instructions(
            &self.shared.guard,
            &ClientDeclared::of(context),
            &self.principal(context),
            &self.tool_names(),
        ))
    }

    /// `instructions`, then each variable that looks like a setting but is none: the
    /// server's stderr is seen by no one in most clients, so the person hears of it here.
    fn with_setup_mistakes(&self, mut instructions: String) -> String {
        if !self.shared.unknown_settings.is_empty() {
            instructions.push_str(&format!(
                " Tell the person: this server's settings have a mistake, so it does not run as                  they meant: {} Fix the setting and restart the server (`{SERVER_NAME} doctor`                  checks the setup).",
                self.shared.unknown_settings.join(" ")
            ));
        }
        instructions
    }

    /// The names of the tools this server exposes.
    pub fn tool_names(&self) -> Vec<String> {
        self.tool_router
            .list_all()
            .iter()
            .map(|t| t.name.to_string())
            .collect()
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for OpengistServer {
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // What `#[tool_handler]` would write, inside the caller's turns at Opengist and as the
        // caller's account.
        let principal = self.principal(&context);
        let account = self.request_account(&context);
        let call = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
        as_principal(principal, acting_as(account, self.tool_router.call(call))).await
    }

    fn get_info(&self) -> ServerConfig {
        let capabilities = if self.resources_enabled() {
            ServerCapabilities::builder()
                .enable_completions()
                .enable_resources()
                .enable_resources_list_changed()
                .enable_tools()
                .build()
        } else {
            ServerCapabilities::builder().enable_tools().build()
        };
        let mut info = ServerConfig::new(capabilities);
        info.server_info = Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION"));
        // A client not known yet is told what one that declared nothing gets; `initialize`
        // and `server/discover` tell each client what it will get.
        info.instructions = Some(self.with_setup_mistakes(guard_texts::instructions(
            &self.shared.guard,
            &ClientDeclared::default(),
            &self.shared.guard.principal_of(&Caller::local()),
            &self.tool_names(),
        )));
        info
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        // As rmcp's own, then the instructions for what this handshake declared.
        context.peer.set_peer_info(request.clone());
        let mut result = self.negotiate_initialize(&request)?;
        result.instructions = Some(self.instructions_for(&context));
        Ok(result)
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        let mut info = self.get_info();
        info.instructions = Some(self.instructions_for(&context));
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            info,
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // The guarded tools' descriptions say what this client's calls will get, so the list
        // differs between clients: on 2026-07-28 it may be cached by the requesting client
        // only, and not kept (a passkey enrolled later changes it).
        let mut tools = self.tool_router.list_all();
        guard_texts::describe_for(
            &mut tools,
            &self.shared.guard,
            &ClientDeclared::of(&context),
            &self.principal(&context),
        );
        let modern = context
            .protocol_version()
            .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
        Ok(ListToolsResult {
            result_type: Some(ResultType::COMPLETE),
            tools,
            meta: None,
            next_cursor: None,
            ttl_ms: modern.then_some(0),
            cache_scope: modern.then_some(CacheScope::Private),
        })
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        self.as_caller(&context, self.list_resources_page(cursor, &context))
            .await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.list_templates()
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.as_caller(&context, self.read_resource_uri(&request.uri))
            .await
            .map(Into::into)
    }

    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.resources_enabled().then(|| {
            SubscriptionFilter::builder()
                .resources_list_changed()
                .build()
        })
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        // Told only of the changes of the stream's own account.
        let audience = acting_as(self.request_account(context.request_context()), async {
            self.account().map(|account| account.audience())
        })
        .await;
        let _listening = match audience {
            Some(audience) if context.accepted().resources_list_changed == Some(true) => Some(
                self.shared
                    .resources
                    .watchers()
                    .listen(context.sink(), audience),
            ),
            _ => None,
        };
        context.cancelled().await;
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.as_caller(&context, self.complete_resource_argument(request))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_router_lists_exactly_the_catalog_with_its_read_only_hints() {
        let server = OpengistServer::unconfigured();
        let mut listed = server.tool_names();
        listed.sort();
        let mut named: Vec<String> = catalog::names().map(str::to_owned).collect();
        named.sort();
        assert_eq!(
            listed, named,
            "every catalog row is a tool, and every tool has a row"
        );
        for tool in server.tool_router.list_all() {
            let annotations = tool.annotations.as_ref().expect("annotations declared");
            let read_only = annotations.read_only_hint.expect("readOnlyHint declared");
            let row = catalog::entry(&tool.name).expect("a catalog row");
            assert_eq!(
                read_only,
                row.reads(),
                "{}: readOnlyHint agrees with the catalog",
                tool.name
            );
        }
    }

    #[test]
    fn each_catalog_row_routes_exactly_its_own_tool() {
        for row in catalog::TOOLS {
            let names: Vec<String> = (row.router)()
                .list_all()
                .iter()
                .map(|t| t.name.to_string())
                .collect();
            assert_eq!(names, [row.name], "the router in {}'s row", row.name);
        }
    }

    fn person(token: &str) -> PersonCredential {
        let base = OpengistClient::new(ClientOptions {
            base_url: url::Url::parse("http://127.0.0.1:1").expect("url"),
            token: None,
            insecure_tls: false,
            request_timeout: std::time::Duration::from_secs(2),
            user_agent: "test".into(),
            limits: Default::default(),
        })
        .expect("client");
        PersonCredential::new(
            format!("opengist:{token}#1"),
            token.to_owned(),
            base.with_token(token).expect("client"),
            CacheOwner::of("http://127.0.0.1:1", Some(token)),
        )
    }

    #[tokio::test]
    async fn a_team_server_acts_only_as_the_requests_own_account() {
        let store = GistCache::new(CacheOwner::of("http://127.0.0.1:1", None), 1 << 20);
        let shared = Shared {
            client: None,
            base_url: Some(url::Url::parse("http://127.0.0.1:1").expect("url")),
            guard: Guard::builder(SERVER_NAME).build(),
            max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
            cache: store.clone(),
            per_person: true,
            team: None,
            resources: crate::resources::ResourceState::new(true),
            unknown_settings: Vec::new(),
        };
        let all: Vec<String> = catalog::names().map(str::to_owned).collect();
        let server = OpengistServer::new(Arc::new(shared), &all);
        // Without a person's account nothing is served, and nothing falls back to another.
        let refused = server.client().expect_err("no account");
        assert!(format!("{refused:?}").contains("OPENGIST_MCP_HTTP_AUTH=opengist"));
        assert!(
            server.cache().capacity() == 0,
            "no cache view without an account"
        );
        // With one, exactly that person's client and cache view.
        let (a, b) = (person("og_a"), person("og_b"));
        let seen = acting_as(Some(a.account(&store)), async {
            (
                server.client().is_ok(),
                server.cache().owner(),
                server.account().map(|acc| acc.audience()),
            )
        })
        .await;
        assert_eq!(
            seen,
            (true, a.cache_owner(), Some(a.cache_owner().bytes())),
            "A's own account"
        );
        let seen_b = acting_as(Some(b.account(&store)), async { server.cache().owner() }).await;
        assert_eq!(seen_b, b.cache_owner());
        assert_ne!(seen_b, a.cache_owner());
    }

    #[test]
    fn only_the_enabled_tools_are_routed() {
        let enabled = ["get_gist".to_owned(), "delete_gist".to_owned()];
        let server = OpengistServer::new(OpengistServer::unconfigured().shared, &enabled);
        let mut names = server.tool_names();
        names.sort();
        assert_eq!(names, ["delete_gist", "get_gist"]);
    }
}
