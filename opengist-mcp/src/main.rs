//! The `opengist-mcp` binary: parses the configuration, then serves MCP on stdio or
//! streamable HTTP, or runs `doctor`.

use std::process::ExitCode;

use ask_first_serve::shutdown_signal;
use ask_first_serve::stdio::serve_stdio;
use opengist_mcp::OpengistServer;
use opengist_mcp::cli::{CliArgs, Command};
use opengist_mcp::config::Config;
use opengist_mcp::http::{bind_http, options_for};
use opengist_mcp::server::SERVER_NAME;
use opengist_mcp::{client_config, doctor, healthcheck, logging};

fn fail(message: impl std::fmt::Display, code: i32) -> ExitCode {
    eprintln!("{SERVER_NAME}: {message}");
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

fn main() -> ExitCode {
    let args = CliArgs::parse_process();
    if let Err(error) = logging::init_from_env() {
        return fail(&error, error.exit_code());
    }
    // SAFETY: nothing else runs yet: no runtime has been built and no thread spawned, so
    // removing OPENGIST_TOKEN from the environment cannot race with a reader.
    let loaded = match unsafe { Config::from_process(&args) } {
        Ok(loaded) => loaded,
        Err(error) => return fail(&error, error.exit_code()),
    };
    for warning in &loaded.warnings {
        tracing::warn!("{warning}");
    }
    let config = loaded.config;
    if !config.elicitation {
        eprintln!("{}", ask_first_core::elicitation_off_notice(SERVER_NAME));
    }
    // On stdio one client talks over one pipe: a single-threaded runtime serves it without
    // worker threads to start (quicker start-up, less memory; tokio's blocking pool still
    // takes the reads of stdin and the long lines). HTTP serves many clients at once: one
    // worker per core. (Issue 29.)
    let stdio = args.command.is_none() && config.http_addr.is_none();
    let mut builder = if stdio {
        tokio::runtime::Builder::new_current_thread()
    } else {
        tokio::runtime::Builder::new_multi_thread()
    };
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => return fail(format!("could not start the async runtime: {error}"), 1),
    };
    match args.command {
        Some(Command::Doctor) => runtime.block_on(doctor::run(&config)),
        Some(Command::Healthcheck) => runtime.block_on(healthcheck::run(&config)),
        Some(Command::ClientConfig { client }) => print_client_config(client, &config),
        Some(Command::Tokens { ref action }) => {
            opengist_mcp::tokens::run(action, config.http_auth.tokens_file.as_deref())
        }
        None => runtime.block_on(serve(config)),
    }
}

/// `client-config`: the configuration on stdout, where it goes on stderr.
fn print_client_config(client: client_config::Client, config: &Config) -> ExitCode {
    let binary = match std::env::current_exe().and_then(std::fs::canonicalize) {
        Ok(path) => path,
        Err(error) => return fail(format!("could not find this binary's path: {error}"), 1),
    };
    let url = config.opengist_url.as_ref().map(|url| url.as_str());
    eprintln!("{}", client_config::note(client));
    print!("{}", client_config::render(client, &binary, url));
    ExitCode::SUCCESS
}

async fn serve(config: Config) -> ExitCode {
    let server = match OpengistServer::from_config(&config) {
        Ok(server) => server,
        Err(error) => return fail(&error, 1),
    };
    if !config.serves_team() && (config.opengist_url.is_none() || config.token.is_none()) {
        tracing::warn!(
            "OPENGIST_URL or OPENGIST_TOKEN is not set: the server starts and lists its tools, and every tool call answers with setup instructions"
        );
    }
    let tools = server.tool_names().len();
    if let Ok(Some(store)) = opengist_mcp::guard_stores::redis_store(&config) {
        opengist_mcp::guard_stores::report_redis(&store).await;
    }
    match config.http_addr {
        None => {
            tracing::info!(tools, "serving MCP on stdio");
            // A client that closes stdin before its first request is told the session did not
            // start (exit 1), as before.
            match serve_stdio(server).await {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => fail(&error, 1),
            }
        }
        Some(addr) => {
            let options = options_for(&server, &config);
            let factory = move || Ok(server.clone());
            let bound = match bind_http(addr, factory, options).await {
                Ok(bound) => bound,
                Err(error) => return fail(&error, error.exit_code()),
            };
            eprintln!(
                "{SERVER_NAME}: serving MCP over streamable HTTP at http://{}/mcp ({tools} tools)",
                bound.local_addr()
            );
            match bound.serve(shutdown_signal()).await {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => fail(&error, error.exit_code()),
            }
        }
    }
}
