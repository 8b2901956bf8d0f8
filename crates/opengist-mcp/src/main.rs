//! The `opengist-mcp` binary: parses the configuration, then serves MCP on stdio or
//! streamable HTTP through the guard framework's serving (`ask_first_serve::Serving`), or runs
//! a command (`doctor`, `healthcheck`, `client-config`, `tokens`, `passkeys`).

use std::process::ExitCode;

use ask_first_serve::Serving;
use opengist_mcp::OpengistServer;
use opengist_mcp::cli::{CliArgs, Command};
use opengist_mcp::config::{Config, Loaded};
use opengist_mcp::server::SERVER_NAME;
use opengist_mcp::{client_config, doctor, healthcheck, logging};

fn fail(message: impl std::fmt::Display, code: i32) -> ExitCode {
    eprintln!("{SERVER_NAME}: {message}");
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

fn main() -> ExitCode {
    let mut args = CliArgs::parse_process();
    // `passkeys ...`: the framework's passkeys of the approval page, before any setting is read
    // (they need only the state directory) and out of a model's reach (a terminal's).
    if let Some(Command::Passkeys { action }) = &args.command {
        return passkeys(action);
    }
    // `client-config CLIENT --http URL`: the flag names the server a client reaches, not an
    // address to bind here.
    let client_endpoint = match args.command {
        Some(Command::ClientConfig { .. }) => args.flags.take("OPENGIST_MCP_HTTP_ADDR"),
        _ => None,
    };
    if let Err(error) = logging::init_from_env() {
        return fail(&error, error.exit_code());
    }
    // SAFETY: nothing else runs yet: no runtime has been built and no thread spawned, so
    // removing OPENGIST_TOKEN from the environment cannot race with a reader.
    let loaded = match unsafe { Config::from_process(&args.flags) } {
        Ok(loaded) => loaded,
        Err(error) => return fail(&error, error.exit_code()),
    };
    // `client-config` prints a configuration: the warnings about serving are for the server
    // that configuration starts (it says them itself); what it carries, leaves out or cannot
    // read (a misspelt setting) its own note says.
    if !matches!(args.command, Some(Command::ClientConfig { .. })) {
        for warning in loaded
            .warnings
            .iter()
            .chain(&loaded.config.unknown_settings)
        {
            tracing::warn!("{warning}");
        }
    }
    let Loaded { config, warnings } = loaded;
    // Serving: the framework's runtime (one thread on stdio, one worker per core over HTTP).
    // A command runs on a multi-threaded one.
    let runtime = match args.command {
        None => config.serve.runtime(),
        Some(_) => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build(),
    };
    let runtime = match runtime {
        Ok(runtime) => runtime,
        Err(error) => return fail(format!("could not start the async runtime: {error}"), 1),
    };
    match args.command {
        Some(Command::Doctor) => runtime.block_on(doctor::run(&config, &warnings)),
        Some(Command::Healthcheck) => runtime.block_on(healthcheck::run(&config)),
        Some(Command::ClientConfig { client }) => {
            let given =
                client_config::GivenSettings::read(&args.flags, &|name| std::env::var(name).ok());
            match client_endpoint {
                Some(endpoint) => print_http_client_config(client, &endpoint, &config, &given),
                None => print_client_config(client, &config, &given),
            }
        }
        Some(Command::Tokens { ref action }) => {
            opengist_mcp::tokens::run(action, config.serve.auth.tokens_file.as_deref())
        }
        // Run above, before the configuration is read.
        Some(Command::Passkeys { ref action }) => passkeys(action),
        None => runtime.block_on(serve(config)),
    }
}

/// `passkeys add | list | remove`: the approval page's passkeys, kept in
/// `OPENGIST_MCP_STATE_DIR` (else the default state directory).
fn passkeys(action: &opengist_mcp::cli::PasskeysAction) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return fail(format!("could not start the async runtime: {error}"), 1),
    };
    let code = runtime.block_on(ask_first_serve::approve::run_passkeys(
        SERVER_NAME,
        "OPENGIST_MCP",
        None,
        action.command(),
    ));
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// `client-config`: the configuration on stdout; on stderr where it goes, the secrets to put
/// in place of their placeholders, what it left out and why, and the variables that look like
/// settings but are none (so are not carried).
fn print_client_config(
    client: client_config::Client,
    config: &Config,
    given: &client_config::GivenSettings,
) -> ExitCode {
    let binary = match std::env::current_exe().and_then(std::fs::canonicalize) {
        Ok(path) => path,
        Err(error) => return fail(format!("could not find this binary's path: {error}"), 1),
    };
    let url = config.opengist_url.as_ref().map(|url| url.as_str());
    eprintln!("{}", client_config::note(client));
    for line in given.stdio_note() {
        eprintln!("{line}");
    }
    for warning in misspelt_settings() {
        eprintln!("Not carried: {warning}");
    }
    print!(
        "{}",
        client_config::render(client, &binary, url, &given.vars)
    );
    ExitCode::SUCCESS
}

/// A warning for each variable of this process that looks like a setting but is none.
fn misspelt_settings() -> Vec<String> {
    let names: Vec<String> = std::env::vars_os()
        .map(|(name, _)| name.to_string_lossy().into_owned())
        .collect();
    opengist_mcp::config::unknown_variables(names.iter().map(String::as_str))
}

/// `client-config CLIENT --http URL`: the client's HTTP configuration on stdout, where it goes
/// on stderr; refused (exit 2) when a setting that changes the server was given, since an
/// HTTP client cannot carry it, and (exit 1) for a client that cannot send the header.
fn print_http_client_config(
    client: client_config::Client,
    endpoint: &str,
    config: &Config,
    given: &client_config::GivenSettings,
) -> ExitCode {
    if let Some((setting, _)) = client_config::offer_changing_settings(config).first() {
        return fail(client_config::HttpConfigError::ServerSetting { setting }, 2);
    }
    match client_config::render_http(client, &client_config::endpoint(endpoint)) {
        Ok(text) => {
            eprintln!("{}", client_config::http_note(client));
            if let Some(line) = given.http_note() {
                eprintln!("{line}");
            }
            for warning in misspelt_settings() {
                eprintln!("Not carried: {warning}");
            }
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(error) => fail(error, 1),
    }
}

/// Serves as every `ask-first` server does: the framework's [`Serving`] (the elicitation
/// notice, its warnings, the spent-answer store, the audit log, stdio or HTTP), with this
/// server's guard settings and, on a team server, its authenticator.
async fn serve(config: Config) -> ExitCode {
    let serving = match Serving::from_settings(SERVER_NAME, config.serve.clone()) {
        Ok(serving) => serving,
        Err(error) => return fail(&error, error.exit_code()),
    };
    let server = match OpengistServer::with_guard(&config, serving.guard_builder()) {
        Ok(server) => server,
        Err(error) => return fail(&error, 1),
    };
    if !config.serves_team() && (config.opengist_url.is_none() || config.token.is_none()) {
        tracing::warn!(
            "OPENGIST_URL or OPENGIST_TOKEN is not set: the server starts and lists its tools, and every tool call answers with setup instructions"
        );
    }
    let team = server.team_authenticator();
    if team.is_some() {
        eprintln!(
            "{SERVER_NAME}: serving a team (OPENGIST_MCP_HTTP_AUTH=opengist): each HTTP client \
             sends its own Opengist access token as the bearer (Authorization: Bearer <token>), \
             checked with Opengist, and acts as that Opengist account, its own principal \
             (opengist:<username>#<id>, what `passkeys add --principal` names); OPENGIST_TOKEN \
             is not used"
        );
    }
    let team = team.map(|team| -> std::sync::Arc<dyn opengist_mcp::http::Authenticate> { team });
    match serving.authenticator(team).serve(server).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => fail(&error, error.exit_code()),
    }
}
