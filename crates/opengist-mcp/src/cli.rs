//! Command-line arguments.
//!
//! Every flag is a row of the settings' one declaration ([`crate::config::SETTINGS`]): the row
//! builds the flag ([`Setting::arg`]) and reads its value ([`FlagValues::from_matches`]), so
//! this file holds no per-setting field. Every setting that has a flag also has an environment
//! variable; a flag given on the command line wins over the variable. The flags are plain
//! strings here and are validated by [`crate::config`], so a bad value gets the same message
//! whichever way it came in.
//!
//! `OPENGIST_TOKEN` deliberately has no flag: command lines are visible to every user of the
//! machine (`ps`), environment variables are not.

use clap::{FromArgMatches, Subcommand};

use crate::config::{FlagValues, SETTINGS, Setting};

/// What `--help` shows first: the shortest way to a working server.
const QUICK_START: &str = "\
Quick start:
  1. In Opengist: Settings -> Access Tokens -> a token with gist read and write
     (user read and write too for get_user and set_gist_like).
  2. export OPENGIST_URL=https://gist.example.com OPENGIST_TOKEN=og_...
  3. opengist-mcp doctor                  checks the address, the token and its scopes
  4. opengist-mcp client-config claude-desktop
                                          prints the client's configuration (its file too)
  The client starts this binary itself over stdio; --http ADDR serves streamable HTTP.";

/// What `--help` says about serving HTTP on an address that is not loopback, per
/// authentication mode (the framework's rule: only `secret` needs a configured secret there;
/// `none` is refused there).
const NON_LOOPBACK: &str = "\
HTTP on an address other than loopback (127.0.0.1, ::1, localhost), per OPENGIST_MCP_HTTP_AUTH:
  secret (default)  needs OPENGIST_MCP_HTTP_TOKEN (on loopback one is made up and printed)
  tokens            needs OPENGIST_MCP_HTTP_TOKENS_FILE, as on loopback
  oauth             needs OPENGIST_MCP_OAUTH_ISSUER and _RESOURCE, as on loopback
  opengist          needs OPENGIST_URL (each person's own token is the bearer), as on loopback
  none              refused: loopback only
Serve it behind TLS (docs/DEPLOYMENT.md).";

/// `opengist-mcp`: an MCP server for Opengist that asks a person before anything irreversible.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CliArgs {
    /// What to do instead of serving (nothing: serve).
    pub command: Option<Command>,
    /// The settings' flags given on the command line, by variable.
    pub flags: FlagValues,
}

/// Subcommands.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
pub enum Command {
    /// Check the configuration and the connection to Opengist (reachability, token, scopes),
    /// print what was found, and exit without serving.
    Doctor,
    /// Probe the HTTP server configured here (GET /healthz at OPENGIST_MCP_HTTP_ADDR or
    /// --http, with OPENGIST_MCP_HTTP_TOKEN when set) and exit 0 when it is up, 1 otherwise: a
    /// container HEALTHCHECK. Up: a 200; in the modes where each caller brings their own
    /// credential (OPENGIST_MCP_HTTP_AUTH=tokens, oauth, opengist) the probe has none, and the
    /// gate's 401 counts as up (nothing answers without a credential). Without an HTTP address
    /// (stdio) there is nothing to probe: exit 0.
    Healthcheck,
    /// Print what CLIENT needs to start this binary over stdio (its real path, the variables,
    /// and --read-only, the tool lists and ELICITATION=false when given here; the token is
    /// always a placeholder), or with --http URL (or ADDR) what it needs to reach that HTTP
    /// server (the Authorization header's secret a placeholder), and where that goes. Clients
    /// that show the approval dialog and those that get the two-call token: docs/CLIENTS.md.
    ClientConfig {
        /// The client to configure.
        #[arg(value_enum)]
        client: crate::client_config::Client,
    },
    /// Per-person tokens for OPENGIST_MCP_HTTP_AUTH=tokens.
    Tokens {
        /// What to do.
        #[command(subcommand)]
        action: TokensAction,
    },
    /// The approval page's passkeys: add (a one-time enrolment link), list, remove.
    ///
    /// Kept in OPENGIST_MCP_STATE_DIR. `add` prints a one-time link to open on this machine;
    /// `remove` takes out a lost or stolen authenticator's passkey, at once on a running
    /// server too. Each person enrols their own principal's: `local` for stdio, `token:NAME`
    /// for a per-person token (`doctor` lists the principals that have one).
    Passkeys {
        /// What to do.
        #[command(subcommand)]
        action: PasskeysAction,
    },
}

/// `opengist-mcp passkeys ...`.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
pub enum PasskeysAction {
    /// Print a one-time link (valid minutes, on this machine) that enrols a passkey approving
    /// PRINCIPAL's questions on the approval page.
    Add {
        /// Whose questions it approves: `local` (a stdio client), `token:NAME` (a per-person
        /// token's caller), ...
        #[arg(long, default_value = "local")]
        principal: String,
        /// What to call it (`passkeys list` shows it, `passkeys remove` takes it).
        #[arg(long, default_value = "passkey")]
        name: String,
        /// How long the link stays valid, in seconds (1 to 1800).
        #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=1800))]
        valid_for_secs: u64,
    },
    /// List the enrolled passkeys: principal, name, credential id, authenticator, enrolled.
    List,
    /// Remove PRINCIPAL's passkey with this name or credential id (a lost or stolen
    /// authenticator); a running server refuses it from its next use on.
    Remove {
        /// Whose passkey it is.
        #[arg(long, default_value = "local")]
        principal: String,
        /// Its name, or its credential id (the short id `passkeys list` prints will do).
        name_or_id: String,
    },
}

impl PasskeysAction {
    /// The framework's typed command for this action.
    pub fn command(&self) -> ask_first_serve::approve::PasskeysCommand {
        use ask_first_serve::approve::{AddPasskey, PasskeysCommand};
        match self.clone() {
            Self::Add {
                principal,
                name,
                valid_for_secs,
            } => PasskeysCommand::Add(AddPasskey {
                principal,
                name,
                valid_for: std::time::Duration::from_secs(valid_for_secs),
            }),
            Self::List => PasskeysCommand::List,
            Self::Remove {
                principal,
                name_or_id,
            } => PasskeysCommand::Remove {
                principal,
                which: name_or_id,
            },
        }
    }
}

/// `opengist-mcp tokens ...`.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
pub enum TokensAction {
    /// Mint a token for NAME: print it once and append NAME's hash line to the token file.
    Add {
        /// The person: 1 to 64 letters, digits or `.`, `_`, `-`, `@` (their principal is
        /// token:NAME).
        name: String,
        /// The token file (created if absent). [default: OPENGIST_MCP_HTTP_TOKENS_FILE]
        #[arg(long, value_name = "PATH")]
        file: Option<std::path::PathBuf>,
    },
}

impl CliArgs {
    /// The command line as `--help` shows it: the quick start, the subcommands, one flag per
    /// setting that has one (its row's help, variable and default), then the variables
    /// without a flag and the rule for a non-loopback address.
    pub fn command() -> clap::Command {
        command_with(SETTINGS)
    }

    /// Parses `args` (the program's name first) as [`CliArgs::command`] describes them.
    pub fn try_parse_from<I, T>(args: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        parse_with(SETTINGS, args)
    }

    /// Parses the process's command line with [`CliArgs::command`]; prints help, the version,
    /// or a usage error and exits as clap does (code 0 for help/version, 2 for usage errors).
    pub fn parse_process() -> Self {
        Self::try_parse_from(std::env::args_os()).unwrap_or_else(|error| error.exit())
    }
}

/// The command line of a server with the settings `settings`.
fn command_with(settings: &'static [Setting]) -> clap::Command {
    // The subcommands first: their derive would set `about` from `Command`'s own doc.
    let command = Command::augment_subcommands(clap::Command::new("opengist-mcp"))
        .version(env!("CARGO_PKG_VERSION"))
        .about("MCP server for Opengist, with a confirmation guard on every destructive tool")
        .before_help(QUICK_START)
        .after_help(after_help(settings));
    settings
        .iter()
        .filter_map(Setting::arg)
        .fold(command, clap::Command::arg)
}

/// Parses `args` against the command line of `settings`.
fn parse_with<I, T>(settings: &'static [Setting], args: I) -> Result<CliArgs, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let matches = command_with(settings).try_get_matches_from(args)?;
    let command = match matches.subcommand_name() {
        Some(_) => Some(Command::from_arg_matches(&matches)?),
        None => None,
    };
    Ok(CliArgs {
        command,
        flags: FlagValues::from_matches(settings, &matches),
    })
}

/// What `--help` shows after the flags: each variable without a flag, from its row, and the
/// rule for a non-loopback address.
fn after_help(settings: &[Setting]) -> String {
    let mut text = String::from("Environment variables without a flag:\n");
    for setting in settings.iter().filter(|setting| setting.flag.is_none()) {
        text.push_str(&format!(
            "  {}\n          {} [default: {}]\n",
            setting.var,
            setting.about,
            setting.shown_default.replace('`', "")
        ));
    }
    text.push_str(
        "\nEvery flag above also reads the variable named in its help ([env: ...]); a flag \
         given on the command line wins over its variable.\n\n",
    );
    text.push_str(NON_LOOPBACK);
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog;
    use crate::config::Flag;

    /// A flag's help text, its lines joined as one.
    fn help(id: &str) -> String {
        let command = CliArgs::command();
        let text = command
            .get_arguments()
            .find(|arg| arg.get_id() == id)
            .and_then(|arg| arg.get_help())
            .map(ToString::to_string)
            .expect("the flag has help");
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// The help is prose a person reads, so it cannot be built from the catalog: it is checked
    /// against it instead.
    #[test]
    fn the_help_agrees_with_the_catalog() {
        let essential = catalog::essential_names().collect::<Vec<_>>().join(", ");
        let allow = help("allow-tools");
        assert!(allow.contains(&format!("({essential})")), "{allow}");
        const COUNTS: [&str; 15] = [
            "no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
            "eleven", "twelve", "thirteen", "fourteen",
        ];
        let read_only = help("read-only");
        let reading = COUNTS[catalog::reading_names().count()];
        assert!(
            read_only.contains(&format!("the {reading} reading tools")),
            "{read_only}"
        );
    }

    /// A setting is one row: adding one to the declaration (here a test-only row beside the
    /// real ones) gives it its flag, its `--help` line and its value, and nothing else changes.
    #[test]
    fn a_setting_added_to_the_declaration_is_a_flag_with_help_and_a_value() {
        let extra = |flag| Setting {
            var: "OPENGIST_MCP_TEST_ONLY",
            flag,
            default: None,
            shown_default: "none",
            secret: false,
            required: false,
            about: "A setting only this test declares.",
        };
        let with = |row: Setting| -> &'static [Setting] {
            let mut rows = SETTINGS.to_vec();
            rows.push(row);
            Vec::leak(rows)
        };
        let settings = with(extra(Some(Flag::value("test-only", "V"))));
        let args = parse_with(settings, ["opengist-mcp", "doctor", "--test-only", "v"])
            .expect("the new flag parses, after a subcommand too");
        assert_eq!(args.command, Some(Command::Doctor));
        assert_eq!(args.flags.get("OPENGIST_MCP_TEST_ONLY"), Some("v"));
        let help = command_with(settings).render_long_help().to_string();
        assert!(
            help.contains("--test-only <V>")
                && help
                    .contains("A setting only this test declares. [env: OPENGIST_MCP_TEST_ONLY]"),
            "{help}"
        );
        // Positive control: without the row there is no such flag.
        let error =
            parse_with(SETTINGS, ["opengist-mcp", "--test-only", "v"]).expect_err("unknown");
        assert_eq!(error.kind(), clap::error::ErrorKind::UnknownArgument);
        // A row without a flag is listed among the variables without one.
        let help = command_with(with(extra(None)))
            .render_long_help()
            .to_string();
        let after = help.split_once("without a flag").expect("the list").1;
        assert!(after.contains("  OPENGIST_MCP_TEST_ONLY\n"), "{help}");
    }

    #[test]
    fn passkeys_is_a_subcommand_with_add_list_and_remove() {
        let parse = |line: &str| CliArgs::try_parse_from(line.split_whitespace());
        let add = parse("opengist-mcp passkeys add --principal token:alice --valid-for-secs 60")
            .expect("add parses");
        let Some(Command::Passkeys { action }) = add.command else {
            panic!("{add:?}");
        };
        assert_eq!(
            action.command(),
            ask_first_serve::approve::PasskeysCommand::Add(ask_first_serve::approve::AddPasskey {
                principal: "token:alice".into(),
                name: "passkey".into(),
                valid_for: std::time::Duration::from_secs(60),
            })
        );
        let remove = parse("opengist-mcp passkeys remove --principal token:bob laptop")
            .expect("remove parses");
        assert_eq!(
            remove.command,
            Some(Command::Passkeys {
                action: PasskeysAction::Remove {
                    principal: "token:bob".into(),
                    name_or_id: "laptop".into()
                }
            })
        );
        assert!(matches!(
            parse("opengist-mcp passkeys list").map(|a| a.command),
            Ok(Some(Command::Passkeys {
                action: PasskeysAction::List
            }))
        ));
        for wrong in [
            "opengist-mcp passkeys",
            "opengist-mcp passkeys enrol",
            "opengist-mcp passkeys remove",
            "opengist-mcp passkeys add --valid-for-secs 0",
            "opengist-mcp passkeys add --valid-for-secs 1801",
        ] {
            assert!(parse(wrong).is_err(), "{wrong}");
        }
        let help = CliArgs::command().render_long_help().to_string();
        assert!(help.contains("passkeys"), "{help}");
        let error = parse("opengist-mcp passkeys --help").expect_err("help is an early exit");
        assert_eq!(error.kind(), clap::error::ErrorKind::DisplayHelp);
    }

    #[test]
    fn a_switch_given_reads_true_and_a_flag_not_given_reads_nothing() {
        let args = CliArgs::try_parse_from(["opengist-mcp", "--read-only"]).expect("parses");
        assert_eq!(args.flags.get("OPENGIST_READ_ONLY"), Some("true"));
        assert_eq!(args.flags.get("OPENGIST_INSECURE_TLS"), None);
        assert_eq!(args.command, None);
    }
}
