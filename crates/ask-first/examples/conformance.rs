//! `conformance`: the test tools of the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, server mode) that concern the guard and the protocol it
//! relies on, built on `ask-first`, so the suite exercises the framework itself.
//!
//! Run by `scripts/conformance` over streamable HTTP (`--http 127.0.0.1:PORT`, at `/mcp`) for
//! 2025-11-25 and 2026-07-28. Scenarios about other features (resources, prompts, sampling,
//! logging, ...) are named with their reasons in `conformance/expected-failures/`.
//!
//! HasGuard tools (`#[guarded(always)]`, one yes/no approval each, nothing to change but a
//! counter):
//! - `test_elicitation` {`message`} (2025-11-25 `tools-call-elicitation`): the guard pushes its
//!   approval dialog; the suite answers with its own form fields, not a ticked `approve`, so
//!   the guard reports "not approved" and nothing runs. The round trip is what is checked.
//! - `test_input_required_result_elicitation`, `..._request_state`, `..._tampered_state`,
//!   `..._capabilities` (2026-07-28 `input-required-result-*`): the guard's `input_required`
//!   round with its HMAC-sealed `requestState`. The guard's question travels under the key the
//!   suite expects (`user_name`); a tampered state answers a JSON-RPC `-32602` error, as the
//!   suite asks (`AlteredState::JsonRpcError`; opengist-mcp asks again instead, its design).
//!
//! A protocol tool built on the framework's seal, not on the guard (a guard asks one question):
//! - `test_input_required_result_multi_round`: two `input_required` rounds, each with a new
//!   `requestState` sealed by `ask_first_core::seal` (the round number inside the seal), then a
//!   complete result. A state that does not open is a `-32602` error.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use ask_first::protocol::GuardCall;
use ask_first::{
    AlteredState, Approved, Binding, Fact, Guard, HasGuard, InputError, Question, Resolve, Target,
    fact::Id, guarded,
};
use ask_first_core::Fingerprint;
use ask_first_core::seal::{self, SealKey, SealKind, SealScope};
use clap::Parser;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, ElicitRequest, ElicitRequestParams,
    ElicitationSchema, InputRequest, InputRequests, InputRequiredResult,
};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use rmcp::{ErrorData, ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The server's name.
const NAME: &str = "ask-first-conformance";
/// Where the MCP endpoint is mounted.
const MCP_PATH: &str = "/mcp";
/// The key the suite's basic elicitation scenario looks for in `inputRequests`.
const SUITE_INPUT_KEY: &str = "user_name";

ask_first::wording! {
    struct RunQuestion = "Run the conformance step {} (it would be run number {})? Nothing but a counter changes.";
    struct RoundsQuestion = "The multi-round conformance step asks its own questions.";
}

// ---------------------------------------------------------------------------------------------
// The one guarded operation: running a named step, which only counts.
// ---------------------------------------------------------------------------------------------

/// Running one conformance step, bound to its tool name.
struct RunStep {
    step: Id,
    call: u64,
}

impl Target for RunStep {
    const OPERATION: &'static str = "run_step";
    fn bind(&self, binding: &mut Binding) {
        binding.text("step", self.step.as_str());
    }
    fn question(&self) -> Question {
        Question::new::<RunQuestion>([Fact::id(self.step.clone()), Fact::count(self.call)])
    }
}

/// Arguments of the guarded tools without arguments of their own.
#[derive(Debug, Deserialize, JsonSchema)]
struct NoArgs {
    /// Only when a previous call returned one: quote its `confirm_token`.
    #[allow(dead_code, reason = "read by the guard from the raw arguments")]
    confirm_token: Option<String>,
}

/// Arguments of `test_elicitation`.
#[derive(Debug, Deserialize, JsonSchema)]
struct ElicitationArgs {
    /// The message the suite asks to show.
    #[allow(
        dead_code,
        reason = "the guard shows its own question, never caller text"
    )]
    message: String,
    /// Only when a previous call returned one: quote its `confirm_token`.
    #[allow(dead_code, reason = "read by the guard from the raw arguments")]
    confirm_token: Option<String>,
}

/// What a guarded step answers when it ran.
#[derive(Debug, Serialize, JsonSchema)]
struct Ran {
    /// The step's tool name.
    step: String,
    /// Always `"state-ok"` after an `input_required` round: the sealed state opened.
    state: String,
}

macro_rules! resolve_step {
    ($args:ty, $step:literal) => {
        impl Resolve<ConformanceServer, $args> for StepOf<{ $step }> {
            async fn resolve(
                server: &ConformanceServer,
                _args: &$args,
            ) -> Result<Self, InputError> {
                let step = Id::new(STEPS[$step]).map_err(|_| {
                    InputError::new("the step's name is no id: a defect of this example")
                })?;
                // The run this would be: read here, counted only when a step runs, so a
                // retry is asked about the same facts it was shown (unless a step ran since).
                Ok(Self(RunStep {
                    step,
                    call: server.calls.load(Ordering::SeqCst) + 1,
                }))
            }
        }
    };
}

/// The steps, by index (a const generic cannot be a string).
const STEPS: [&str; 5] = [
    "test_elicitation",
    "test_input_required_result_elicitation",
    "test_input_required_result_request_state",
    "test_input_required_result_tampered_state",
    "test_input_required_result_capabilities",
];

/// One target type per step, so an approval for one step is no approval for another.
struct StepOf<const N: usize>(RunStep);

impl<const N: usize> Target for StepOf<N> {
    const OPERATION: &'static str = "run_step";
    fn bind(&self, binding: &mut Binding) {
        binding.number("index", N as u64);
        self.0.bind(binding);
    }
    fn question(&self) -> Question {
        self.0.question()
    }
}

resolve_step!(ElicitationArgs, 0);
resolve_step!(NoArgs, 1);
resolve_step!(NoArgs, 2);
resolve_step!(NoArgs, 3);
resolve_step!(NoArgs, 4);

fn ran<const N: usize>(server: &ConformanceServer, approved: Approved<StepOf<N>>) -> Json<Ran> {
    server.calls.fetch_add(1, Ordering::SeqCst);
    Json(Ran {
        step: approved.into_target().0.step.as_str().to_owned(),
        state: "state-ok".to_owned(),
    })
}

// ---------------------------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------------------------

#[derive(Clone)]
struct ConformanceServer {
    guard: Guard,
    /// Seals the multi-round tool's state (the guard has its own key).
    rounds_key: Arc<SealKey>,
    /// Steps run so far: what a step changes, and what its question shows.
    calls: Arc<AtomicU64>,
}

impl HasGuard for ConformanceServer {
    fn guard(&self) -> &Guard {
        &self.guard
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The multi-round tool's target: nothing but the tool, so a state opens only for it.
struct MultiRound;

impl Target for MultiRound {
    const OPERATION: &'static str = "multi_round";
    fn bind(&self, _binding: &mut Binding) {}
    fn question(&self) -> Question {
        Question::new::<RoundsQuestion>([])
    }
}

fn text_form(message: &str, property: &str) -> Result<ElicitRequestParams, ErrorData> {
    let schema: ElicitationSchema = serde_json::from_value(serde_json::json!({
        "type": "object",
        "properties": { property: { "type": "string" } },
        "required": [property]
    }))
    .map_err(|error| ErrorData::internal_error(format!("form schema: {error}"), None))?;
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: message.to_owned(),
        requested_schema: schema,
    })
}

#[tool_router]
impl ConformanceServer {
    fn new() -> Self {
        Self {
            guard: Guard::builder(NAME)
                .input_key(SUITE_INPUT_KEY)
                .altered_state(AlteredState::JsonRpcError)
                .build(),
            rounds_key: Arc::new(SealKey::random()),
            calls: Arc::default(),
        }
    }

    #[guarded(always)]
    #[tool(description = "tools-call-elicitation: asks the person through the guard's dialog.")]
    async fn test_elicitation(
        &self,
        Parameters(_args): Parameters<ElicitationArgs>,
        approved: Approved<StepOf<0>>,
    ) -> Result<Json<Ran>, ErrorData> {
        Ok(ran(self, approved))
    }

    #[guarded(always)]
    #[tool(
        description = "input-required-result-basic-elicitation: the guard's input_required round."
    )]
    async fn test_input_required_result_elicitation(
        &self,
        Parameters(_args): Parameters<NoArgs>,
        approved: Approved<StepOf<1>>,
    ) -> Result<Json<Ran>, ErrorData> {
        Ok(ran(self, approved))
    }

    #[guarded(always)]
    #[tool(description = "input-required-result-request-state: the guard's sealed requestState.")]
    async fn test_input_required_result_request_state(
        &self,
        Parameters(_args): Parameters<NoArgs>,
        approved: Approved<StepOf<2>>,
    ) -> Result<Json<Ran>, ErrorData> {
        Ok(ran(self, approved))
    }

    #[guarded(always)]
    #[tool(
        description = "input-required-result-tampered-state: an altered requestState is a -32602 error."
    )]
    async fn test_input_required_result_tampered_state(
        &self,
        Parameters(_args): Parameters<NoArgs>,
        approved: Approved<StepOf<3>>,
    ) -> Result<Json<Ran>, ErrorData> {
        Ok(ran(self, approved))
    }

    #[guarded(always)]
    #[tool(
        description = "input-required-result-capability-check: without elicitation the guard issues a two-call token."
    )]
    async fn test_input_required_result_capabilities(
        &self,
        Parameters(_args): Parameters<NoArgs>,
        approved: Approved<StepOf<4>>,
    ) -> Result<Json<Ran>, ErrorData> {
        Ok(ran(self, approved))
    }

    #[tool(
        description = "input-required-result-multi-round: two input_required rounds with states sealed by ask_first_core::seal, then a result."
    )]
    async fn test_input_required_result_multi_round(
        &self,
        call: GuardCall,
    ) -> Result<CallToolResponse, ErrorData> {
        let fingerprint = MultiRound.fingerprint();
        let shown = Fingerprint::of_question(&MultiRound.question());
        let scope = SealScope {
            operation: MultiRound::OPERATION,
            fingerprint: &fingerprint,
            shown: &shown,
            principal: "conformance",
        };
        let now = unix_now();
        // Rounds answered so far: 0 on the first call.
        let answered = match call.request_state() {
            None => 0,
            Some(state) => {
                let opened = seal::open(&self.rounds_key, SealKind::RequestState, &scope, state, now)
                    .map_err(|reason| {
                        ErrorData::invalid_params(
                            format!("Invalid params: the requestState was refused: {reason}; call again without it to start over"),
                            None,
                        )
                    })?;
                opened.round.saturating_add(1)
            }
        };
        let (key, form) = match answered {
            0 => ("step1", text_form("Step 1: What is your name?", "name")?),
            1 => (
                "step2",
                text_form("Step 2: What is your favorite color?", "color")?,
            ),
            _ => {
                return Ok(CallToolResult::success(vec![ContentBlock::text(
                    "state-ok: both rounds answered",
                )])
                .into());
            }
        };
        if answered == 1
            && !call
                .input_responses()
                .is_some_and(|responses| responses.contains_key("step1"))
        {
            return Err(ErrorData::invalid_params(
                "Invalid params: round 2 needs the inputResponses for step1",
                None,
            ));
        }
        let state = seal::seal(
            &self.rounds_key,
            SealKind::RequestState,
            &scope,
            answered,
            now.saturating_add(900),
        );
        let mut requests = InputRequests::new();
        requests.insert(
            key.to_owned(),
            InputRequest::Elicitation(ElicitRequest::new(form)),
        );
        Ok(InputRequiredResult::new(Some(requests), Some(state)).into())
    }
}

#[tool_handler(name = "ask-first-conformance")]
impl ServerHandler for ConformanceServer {}

// ---------------------------------------------------------------------------------------------
// Start-up
// ---------------------------------------------------------------------------------------------

/// The guard's conformance test tools, over streamable HTTP.
#[derive(Debug, Parser)]
#[command(name = "conformance")]
struct Cli {
    /// Serve streamable HTTP at http://ADDR/mcp. Loopback addresses only.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:3000")]
    http: SocketAddr,
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .try_init();
    if !cli.http.ip().is_loopback() {
        eprintln!("{NAME}: --http {} is not a loopback address", cli.http);
        return ExitCode::from(2);
    }
    match serve(cli.http).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{NAME}: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(addr: SocketAddr) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|error| format!("cannot listen on {addr}: {error}"))?;
    let local = listener.local_addr()?;
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(true)
        .with_allowed_hosts(["localhost", "127.0.0.1", "::1"]);
    let cancel = config.cancellation_token.clone();
    let server = ConformanceServer::new();
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let router = axum::Router::new().nest_service(MCP_PATH, service);
    eprintln!("{NAME}: serving MCP over streamable HTTP at http://{local}{MCP_PATH}");
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            let _ = tokio::signal::ctrl_c().await;
            cancel.cancel();
        })
        .await?;
    Ok(())
}
