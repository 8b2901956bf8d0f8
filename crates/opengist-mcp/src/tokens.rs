//! `opengist-mcp tokens add NAME [--file PATH]`: per-person tokens for
//! `OPENGIST_MCP_HTTP_AUTH=tokens`, minted by the framework under this server's setting.

use std::process::ExitCode;

use crate::cli::TokensAction;

/// `opengist-mcp tokens add NAME [--file PATH]`: the framework's minting, under this server's
/// setting. The token is printed once on stdout; the file keeps only its hash.
pub fn run(action: &TokensAction, configured: Option<&std::path::Path>) -> ExitCode {
    let TokensAction::Add { name, file } = action;
    let setting = crate::config::var::OPENGIST_MCP_HTTP_TOKENS_FILE;
    let Some(file) = file.as_deref().or(configured) else {
        eprintln!("opengist-mcp: say which token file to add to: --file PATH, or set {setting}");
        return ExitCode::FAILURE;
    };
    match ask_first_serve::http::run_tokens_add(file, name, setting, &mut std::io::stdout()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("opengist-mcp: {error}");
            ExitCode::FAILURE
        }
    }
}
