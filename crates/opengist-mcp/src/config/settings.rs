//! Every setting, declared once: its variable, its flag, its default, whether it is a secret
//! or required, and what it does. A row is the whole of a setting's declaration: it builds the
//! setting's command-line flag ([`Setting::arg`]), reads the flag's value from the parsed
//! command line ([`FlagValues::from_matches`]), writes its line of `--help`, and is the name
//! [`Config::from_process`](super::Config::from_process) reads from the environment; no
//! per-setting field or match arm exists elsewhere. The parsers of each concern (`connection`,
//! `tool_filter`, ...) read a setting by its variable, the flag winning. The tests check the
//! deployment guide's settings table and `server.json`'s `environmentVariables` against this
//! table (`crates/opengist-mcp/tests/settings.rs`), so none of them can drift from it.
//!
//! A secret (`secret: true`) has no default and is never shown: not in `--help`, not in an
//! error, not in a warning (each parser's messages name the setting, never its value); one
//! given as a flag is warned about at start (a command line is visible in `ps`).

use std::collections::BTreeMap;

use ask_first_serve::SettingNames;

/// One setting of the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    /// The environment variable.
    pub var: &'static str,
    /// The command-line flag that feeds it and wins over the variable, if any.
    pub flag: Option<Flag>,
    /// The default as one literal value one could set (`server.json`'s `default`, the
    /// settings table's backticked default); `None` when there is none or it is worked out at
    /// start.
    pub default: Option<&'static str>,
    /// The default as the settings table and `--help` show it: a value (backticked) or what
    /// happens without one (`stdio`, `random per process`). A secret's is never a value.
    pub shown_default: &'static str,
    /// A secret (a token, a key, a URL that may hold a password): no default, never echoed.
    pub secret: bool,
    /// Needed for the server to do anything useful (it still starts without it).
    pub required: bool,
    /// What it does, in one sentence or two (`server.json`'s description and `--help`).
    pub about: &'static str,
}

/// A setting's command-line flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flag {
    /// The flag without `--` (`http-token`).
    pub name: &'static str,
    /// What its value is called in `--help` (`SECS`); `None`: a switch that takes no value
    /// and, given, means `true`.
    pub value_name: Option<&'static str>,
}

impl Flag {
    /// A flag that takes a value, shown in `--help` as `--name <VALUE_NAME>`.
    pub const fn value(name: &'static str, value_name: &'static str) -> Self {
        Self {
            name,
            value_name: Some(value_name),
        }
    }

    /// A switch: given, the setting is `true`.
    pub const fn switch(name: &'static str) -> Self {
        Self {
            name,
            value_name: None,
        }
    }
}

impl Setting {
    /// The setting's flag as a clap argument (global, so it may follow a subcommand), its
    /// help the row's `about` with the variable and the default (a secret's is what happens
    /// without one, never a value); `None` for a setting without a flag.
    pub fn arg(&self) -> Option<clap::Arg> {
        let flag = self.flag?;
        let arg = clap::Arg::new(flag.name)
            .long(flag.name)
            .global(true)
            .help(format!(
                "{} [env: {}] [default: {}]",
                self.about,
                self.var,
                self.shown_default.replace('`', "")
            ));
        Some(match flag.value_name {
            Some(value_name) => arg.value_name(value_name).action(clap::ArgAction::Set),
            None => arg.action(clap::ArgAction::SetTrue),
        })
    }

    /// The setting as messages name it: the variable, followed by its flag where it has one
    /// (`OPENGIST_MCP_CACHE_BYTES (--cache-bytes)`).
    pub fn shown_name(&self) -> String {
        match self.flag {
            Some(flag) => format!("{} (--{})", self.var, flag.name),
            None => self.var.to_owned(),
        }
    }

    /// What `matches` holds for this setting's flag: its value, `true` for a switch given,
    /// `None` when the flag was not given (or the setting has none).
    fn given(&self, matches: &clap::ArgMatches) -> Option<String> {
        let flag = self.flag?;
        match flag.value_name {
            Some(_) => matches.get_one::<String>(flag.name).cloned(),
            None => matches.get_flag(flag.name).then(|| "true".to_owned()),
        }
    }
}

/// The values given on the command line for the settings that have a flag, by variable. The
/// configuration reads each setting from here first, then from the environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlagValues(BTreeMap<&'static str, String>);

impl FlagValues {
    /// The flags of `settings` found in `matches` (made by a command that has each
    /// [`Setting::arg`]).
    pub fn from_matches(settings: &'static [Setting], matches: &clap::ArgMatches) -> Self {
        Self(
            settings
                .iter()
                .filter_map(|setting| Some((setting.var, setting.given(matches)?)))
                .collect(),
        )
    }

    /// The value given by the flag of the setting `var`, if it was given.
    pub fn get(&self, var: &str) -> Option<&str> {
        self.0.get(var).map(String::as_str)
    }

    /// Takes the value given by the flag of the setting `var` out (a command that reads the
    /// flag in its own way, such as `client-config --http URL`).
    pub fn take(&mut self, var: &str) -> Option<String> {
        self.0.remove(var)
    }

    /// The variables whose flags were given.
    pub fn vars(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.0.keys().copied()
    }
}

/// Every setting the server reads, in the order the settings table (docs/DEPLOYMENT.md) and
/// `server.json` list them.
pub const SETTINGS: &[Setting] = &[
    Setting {
        var: "OPENGIST_URL",
        shown_default: "none",
        flag: None,
        default: None,
        secret: false,
        required: true,
        about: "The Opengist instance's base address, http(s)://host[:port][/path] (a trailing / or /api is removed). Unset: the server starts and every tool call answers with setup instructions.",
    },
    Setting {
        var: "OPENGIST_TOKEN",
        shown_default: "none",
        flag: None,
        default: None,
        secret: true,
        required: true,
        about: "Opengist personal access token (Settings -> Access Tokens): gist read and write; user read and write only for get_user and set_gist_like (without them, deny those two: OPENGIST_DENY_TOOLS=get_user,set_gist_like). Read once at start, removed from the environment, never logged.",
    },
    Setting {
        var: "OPENGIST_READ_ONLY",
        shown_default: "`false`",
        flag: Some(Flag::switch("read-only")),
        default: Some("false"),
        secret: false,
        required: false,
        about: "true/1/yes (any case): register only the eight reading tools.",
    },
    Setting {
        var: "OPENGIST_ALLOW_TOOLS",
        shown_default: "all",
        flag: Some(Flag::value("allow-tools", "LIST")),
        default: None,
        secret: false,
        required: false,
        about: "Register only these tools: comma-separated names, prefix*, or essential (list_gists, search_gists, get_gist, get_gist_file, create_gist, update_gist, delete_gist). An entry that matches no tool stops the server. Default: all tools.",
    },
    Setting {
        var: "OPENGIST_DENY_TOOLS",
        shown_default: "none",
        flag: Some(Flag::value("deny-tools", "LIST")),
        default: None,
        secret: false,
        required: false,
        about: "Do not register these tools (same syntax as OPENGIST_ALLOW_TOOLS); deny wins over allow. Default: none.",
    },
    Setting {
        var: "OPENGIST_INSECURE_TLS",
        shown_default: "`false`",
        flag: Some(Flag::switch("insecure-tls")),
        default: Some("false"),
        secret: false,
        required: false,
        about: "Exactly true: accept a self-signed TLS certificate, on the Opengist connection only.",
    },
    Setting {
        var: "ELICITATION",
        shown_default: "`true`",
        flag: None,
        default: Some("true"),
        secret: false,
        required: false,
        about: "Exactly true or false, read by every guarded server. false sends guarded tools down the two-call confirmation-token path; it never removes the guard. OPENGIST_MCP_ELICITATION, when set, wins over it.",
    },
    Setting {
        var: "OPENGIST_MCP_ELICITATION",
        shown_default: "ELICITATION's",
        flag: None,
        default: None,
        secret: false,
        required: false,
        about: "This server's own dialog switch, exactly true or false; when both are set it wins over ELICITATION, which every guarded server reads. Default: what ELICITATION says.",
    },
    Setting {
        var: "OPENGIST_MCP_HTTP_ADDR",
        shown_default: "stdio",
        flag: Some(Flag::value("http", "ADDR")),
        default: None,
        secret: false,
        required: false,
        about: "Serve streamable HTTP at http://ADDR/mcp instead of stdio (IP:PORT, [IPv6]:PORT, localhost:PORT or a bare PORT). A non-loopback address needs OPENGIST_MCP_HTTP_TOKEN only in the secret mode (the default); tokens, oauth and opengist need their own settings there as on loopback, and none is refused there. Default: stdio.",
    },
    Setting {
        var: "OPENGIST_MCP_HTTP_TOKEN",
        shown_default: "made up at start",
        flag: Some(Flag::value("http-token", "SECRET")),
        default: None,
        secret: true,
        required: false,
        about: "HTTP only: the bearer secret clients send (Authorization: Bearer ...), at least 16 characters; in the secret mode (the default) required to bind a non-loopback address. All clients holding one secret are one principal. Default: on loopback, a secret made up at start and printed once on stderr with a client configuration.",
    },
    Setting {
        var: "OPENGIST_MCP_HTTP_AUTH",
        shown_default: "`secret`",
        flag: None,
        default: Some("secret"),
        secret: false,
        required: false,
        about: "HTTP only: how callers are told apart. secret (the bearer secret; everyone holding it is one caller), tokens, oauth, none, or opengist: a team, each person connecting with their own Opengist access token as the bearer and acting as their own account (needs OPENGIST_URL, not OPENGIST_TOKEN). Default: secret.",
    },
    Setting {
        var: "OPENGIST_MCP_HTTP_TOKENS_FILE",
        shown_default: "none",
        flag: None,
        default: None,
        secret: false,
        required: false,
        about: "HTTP only, with OPENGIST_MCP_HTTP_AUTH=tokens (and only then): the file of per-person tokens, one NAME SHA256-HEX line each (hashes, never tokens), re-read when it changes; each person is their own caller.",
    },
    Setting {
        var: "OPENGIST_MCP_OAUTH_ISSUER",
        shown_default: "none",
        flag: None,
        default: None,
        secret: false,
        required: false,
        about: "HTTP only, with OPENGIST_MCP_HTTP_AUTH=oauth (and only then): the OAuth 2.1 authorization server's issuer URL (https; plain http only on loopback). Each person is their own caller.",
    },
    Setting {
        var: "OPENGIST_MCP_OAUTH_RESOURCE",
        shown_default: "none",
        flag: None,
        default: None,
        secret: false,
        required: false,
        about: "HTTP only, with OPENGIST_MCP_HTTP_AUTH=oauth: this server's resource identifier, the public URL of its /mcp; every access token's aud must carry it.",
    },
    Setting {
        var: "OPENGIST_MCP_OAUTH_LEEWAY_SECS",
        shown_default: "`30`",
        flag: None,
        default: Some("30"),
        secret: false,
        required: false,
        about: "HTTP only, with OPENGIST_MCP_HTTP_AUTH=oauth: clock-skew leeway on exp/nbf, 0 to 300 seconds.",
    },
    Setting {
        var: "OPENGIST_MCP_OAUTH_JWKS_REFRESH_SECS",
        shown_default: "`30`",
        flag: None,
        default: Some("30"),
        secret: false,
        required: false,
        about: "HTTP only, with OPENGIST_MCP_HTTP_AUTH=oauth: the shortest time between two key refreshes for an unknown kid, 1 to 3600 seconds.",
    },
    Setting {
        var: "OPENGIST_MCP_OAUTH_SCOPES",
        shown_default: "none",
        flag: None,
        default: None,
        secret: false,
        required: false,
        about: "HTTP only, with OPENGIST_MCP_HTTP_AUTH=oauth: space- or comma-separated scopes every access token must carry (403 insufficient_scope without them).",
    },
    Setting {
        var: "OPENGIST_MCP_HTTP_NO_AUTH",
        shown_default: "`false`",
        flag: None,
        default: Some("false"),
        secret: false,
        required: false,
        about: "HTTP only: exactly true serves loopback without authentication (any local process then acts with the server's full rights), announced at start; never with OPENGIST_MCP_HTTP_TOKEN. Default: false.",
    },
    Setting {
        var: "OPENGIST_MCP_STATE_DIR",
        shown_default: "XDG state directory (`$XDG_STATE_HOME/opengist-mcp`, else `~/.local/state/opengist-mcp`)",
        flag: None,
        default: None,
        secret: false,
        required: false,
        about: "With OPENGIST_MCP_SEAL_KEY and no OPENGIST_MCP_REDIS_URL: the directory holding spent answers (spent-answers.log, one process at a time), so they stay spent across restarts. Default: $XDG_STATE_HOME/opengist-mcp or ~/.local/state/opengist-mcp.",
    },
    Setting {
        var: "OPENGIST_MCP_VERIFIED_TOOLS",
        shown_default: "none",
        flag: None,
        default: None,
        secret: false,
        required: false,
        about: "Comma-separated guarded tools (e.g. delete_gist,delete_gist_files) that run only after the person approves on the approval page with a passkey (enrolled with opengist-mcp passkeys add); no dialog or confirm_token will do. Default: none.",
    },
    Setting {
        var: "OPENGIST_MCP_APPROVAL_ROUTES",
        shown_default: "with a passkey enrolled `page,form,token`, else `form,token`",
        flag: None,
        default: None,
        secret: false,
        required: false,
        about: "The routes the guard asks on, in order: page (the approval page, with a passkey enrolled by opengist-mcp passkeys add), form (the client's dialog), token (the two-call confirm_token). Default: page,form,token once a passkey is enrolled, else form,token.",
    },
    Setting {
        var: "OPENGIST_MCP_APPROVAL_ADDR",
        shown_default: "`localhost:0` (a free port)",
        flag: None,
        default: Some("localhost:0"),
        secret: false,
        required: false,
        about: "Where the approval page listens, on loopback only (localhost:PORT; the passkeys are for localhost). Opened on the first question put on the page. Default: localhost:0 (a free port).",
    },
    Setting {
        var: "OPENGIST_MCP_ALLOWED_HOSTS",
        shown_default: "loopback only",
        flag: Some(Flag::value("allowed-hosts", "LIST")),
        default: None,
        secret: false,
        required: false,
        about: "HTTP only: extra Host header values accepted, comma-separated (behind a proxy). Loopback is always accepted.",
    },
    Setting {
        var: "OPENGIST_MCP_ALLOWED_ORIGINS",
        shown_default: "loopback only",
        flag: Some(Flag::value("allowed-origins", "LIST")),
        default: None,
        secret: false,
        required: false,
        about: "HTTP only: extra Origin header values accepted, comma-separated (in-browser clients). Loopback is always accepted.",
    },
    Setting {
        var: "OPENGIST_MCP_SEAL_KEY",
        shown_default: "random per process",
        flag: Some(Flag::value("seal-key", "KEY")),
        default: None,
        secret: true,
        required: false,
        about: "Key that seals questions and confirmation tokens, hex or base64, at least 32 bytes; replicas behind one gateway share it. Default: random per process.",
    },
    Setting {
        var: "OPENGIST_MCP_MAX_RESULT_BYTES",
        shown_default: "`262144`",
        flag: Some(Flag::value("max-result-bytes", "N")),
        default: Some("262144"),
        secret: false,
        required: false,
        about: "Largest tool result in bytes (4096 to 8388608); longer results are cut and say so.",
    },
    Setting {
        var: "OPENGIST_MCP_DIALOG_TIMEOUT_SECS",
        shown_default: "`600`",
        flag: Some(Flag::value("dialog-timeout-secs", "SECS")),
        default: Some("600"),
        secret: false,
        required: false,
        about: "How long a pushed confirmation dialog waits for the person, in seconds (1 to 86400).",
    },
    Setting {
        var: "OPENGIST_MCP_REQUEST_TIMEOUT_SECS",
        shown_default: "`30`",
        flag: Some(Flag::value("request-timeout-secs", "SECS")),
        default: Some("30"),
        secret: false,
        required: false,
        about: "Timeout of each request to Opengist, in seconds (1 to 3600).",
    },
    Setting {
        var: "OPENGIST_MCP_OPENGIST_MAX_REQUESTS",
        shown_default: "`8`",
        flag: Some(Flag::value("opengist-max-requests", "N")),
        default: Some("8"),
        secret: false,
        required: false,
        about: "Requests to Opengist in flight at once, all callers together (1 to 1024); more wait for a turn.",
    },
    Setting {
        var: "OPENGIST_MCP_OPENGIST_MAX_REQUESTS_PER_PRINCIPAL",
        shown_default: "`4`",
        flag: Some(Flag::value("opengist-max-requests-per-principal", "N")),
        default: Some("4"),
        secret: false,
        required: false,
        about: "Requests to Opengist in flight at once for one MCP principal (one Authorization header over HTTP; stdio is one), 1 to 1024.",
    },
    Setting {
        var: "OPENGIST_MCP_OPENGIST_QUEUE_SECS",
        shown_default: "`20`",
        flag: Some(Flag::value("opengist-queue-secs", "SECS")),
        default: Some("20"),
        secret: false,
        required: false,
        about: "How long a request to Opengist waits for a turn before the call is refused as busy, in seconds (1 to 3600).",
    },
    Setting {
        var: "OPENGIST_MCP_HTTP_HEADER_TIMEOUT_SECS",
        shown_default: "`10`",
        flag: Some(Flag::value("http-header-timeout-secs", "SECS")),
        default: Some("10"),
        secret: false,
        required: false,
        about: "HTTP only: a connection that has not sent a whole request head by then is closed, in seconds (1 to 3600).",
    },
    Setting {
        var: "OPENGIST_MCP_HTTP_BODY_TIMEOUT_SECS",
        shown_default: "`30`",
        flag: Some(Flag::value("http-body-timeout-secs", "SECS")),
        default: Some("30"),
        secret: false,
        required: false,
        about: "HTTP only: the whole request body must arrive by then, else 408, in seconds (1 to 3600).",
    },
    Setting {
        var: "OPENGIST_MCP_HTTP_MAX_CONNECTIONS",
        shown_default: "`256`",
        flag: Some(Flag::value("http-max-connections", "N")),
        default: Some("256"),
        secret: false,
        required: false,
        about: "HTTP only: connections served at once (1 to 65536); at the cap a new connection takes the place of one that presented no credential, else it waits in the listen backlog.",
    },
    Setting {
        var: "OPENGIST_MCP_HTTP_MAX_SESSIONS",
        shown_default: "`512`",
        flag: Some(Flag::value("http-max-sessions", "N")),
        default: Some("512"),
        secret: false,
        required: false,
        about: "HTTP only: legacy (2025-11-25) sessions open at once (1 to 1000000); one more initialize gets 503.",
    },
    Setting {
        var: "OPENGIST_MCP_HTTP_SESSION_IDLE_SECS",
        shown_default: "`300`",
        flag: Some(Flag::value("http-session-idle-secs", "SECS")),
        default: Some("300"),
        secret: false,
        required: false,
        about: "HTTP only: a legacy session idle this long is closed, in seconds (1 to 86400).",
    },
    Setting {
        var: "OPENGIST_MCP_HTTP_DIALOGS_PER_SESSION",
        shown_default: "`4`",
        flag: None,
        default: Some("4"),
        secret: false,
        required: false,
        about: "HTTP only: guarded calls waiting on a person's answer per legacy session; past it the call is an error naming the setting (1 to 65536).",
    },
    Setting {
        var: "OPENGIST_MCP_HTTP_DIALOGS_PER_PRINCIPAL",
        shown_default: "`16`",
        flag: None,
        default: Some("16"),
        secret: false,
        required: false,
        about: "HTTP only: guarded calls waiting on a person's answer per caller (1 to 65536).",
    },
    Setting {
        var: "OPENGIST_MCP_HTTP_MAX_DIALOGS",
        shown_default: "`64`",
        flag: None,
        default: Some("64"),
        secret: false,
        required: false,
        about: "HTTP only: guarded calls waiting on a person's answer in all (1 to 65536).",
    },
    Setting {
        var: "OPENGIST_MCP_HTTP_SESSIONS_PER_PRINCIPAL",
        shown_default: "`64`",
        flag: None,
        default: Some("64"),
        secret: false,
        required: false,
        about: "HTTP only: legacy sessions one caller holds at once (never above OPENGIST_MCP_HTTP_MAX_SESSIONS); past it 429 with Retry-After (1 to 1000000).",
    },
    Setting {
        var: "OPENGIST_MCP_HTTP_STREAMS_PER_PRINCIPAL",
        shown_default: "`32`",
        flag: None,
        default: Some("32"),
        secret: false,
        required: false,
        about: "HTTP only: long-lived streams (GET, subscriptions/listen, responses held by a pending dialog) per caller; past it 429 with Retry-After (1 to 65536).",
    },
    Setting {
        var: "OPENGIST_MCP_HTTP_MAX_STREAMS",
        shown_default: "3/4 of the connections",
        flag: None,
        default: None,
        secret: false,
        required: false,
        about: "HTTP only: long-lived streams in all; past it 503 with Retry-After; must stay below OPENGIST_MCP_HTTP_MAX_CONNECTIONS (1 to 65535). Default: 3/4 of the connection cap.",
    },
    Setting {
        var: "OPENGIST_MCP_HTTP_STREAM_IDLE_SECS",
        shown_default: "`300`",
        flag: None,
        default: Some("300"),
        secret: false,
        required: false,
        about: "HTTP only: a GET or subscriptions/listen stream with nothing but keep-alives for this long is ended, in seconds (1 to 86400).",
    },
    Setting {
        var: "OPENGIST_MCP_HTTP_CONNECTIONS_PER_PEER",
        shown_default: "`64`",
        flag: None,
        default: Some("64"),
        secret: false,
        required: false,
        about: "HTTP only: connections open at once from one peer address; past it a new connection takes the place of that address's oldest connection that presented no credential, else 503 with Retry-After; behind a reverse proxy raise it to the connection cap (1 to 65536).",
    },
    Setting {
        var: "OPENGIST_MCP_HTTP_MAX_UNAUTHENTICATED",
        shown_default: "`128`",
        flag: None,
        default: Some("128"),
        secret: false,
        required: false,
        about: "HTTP only: connections open at once before one of their requests passed the credential check; past it a new connection takes the place of one of them, the oldest of the address holding the most (1 to 65536).",
    },
    Setting {
        var: "OPENGIST_MCP_HTTP_AUTHENTICATED_RESERVE",
        shown_default: "a quarter of the connections",
        flag: None,
        default: None,
        secret: false,
        required: false,
        about: "HTTP only: places of OPENGIST_MCP_HTTP_MAX_CONNECTIONS that only connections whose credential passed take; must stay below it (0 to 65535). Default: a quarter of the connection cap.",
    },
    Setting {
        var: "OPENGIST_MCP_HTTP_CREDENTIAL_DEADLINE_SECS",
        shown_default: "`5`",
        flag: None,
        default: Some("5"),
        secret: false,
        required: false,
        about: "HTTP only: a connection none of whose requests passed the credential check within this many seconds of opening is closed; a refused credential does not count (1 to 3600).",
    },
    Setting {
        var: "OPENGIST_MCP_REDIS_URL",
        shown_default: "in memory, per process",
        flag: Some(Flag::value("redis-url", "URL")),
        default: None,
        secret: true,
        required: false,
        about: "redis://[user:password@]host[:port][/db] or rediss://...: the store replicas share so each approval is used once. Never echoed. Default: in memory, per process.",
    },
    Setting {
        var: "OPENGIST_MCP_AUDIT_LOG",
        shown_default: "none",
        flag: Some(Flag::value("audit-log", "stderr|PATH")),
        default: None,
        secret: false,
        required: false,
        about: "stderr, or a file to append to: one JSON line per guard decision and per guarded call's outcome, never content. Default: none.",
    },
    Setting {
        var: "OPENGIST_MCP_REPLICA_ID",
        shown_default: "`hostname:pid`",
        flag: Some(Flag::value("replica-id", "ID")),
        default: None,
        secret: false,
        required: false,
        about: "This replica's name in the audit log and the prefix of its legacy session ids (1-64 letters, digits, . _ - :). Default: hostname:pid.",
    },
    Setting {
        var: "OPENGIST_MCP_CACHE_BYTES",
        shown_default: "`67108864` (64 MiB)",
        flag: Some(Flag::value("cache-bytes", "N")),
        default: Some("67108864"),
        secret: false,
        required: false,
        about: "Bytes of gist files kept in memory (never on disk) for reuse while a gist is unchanged; 0 turns the cache off (0 to 4294967296).",
    },
    Setting {
        var: "OPENGIST_MCP_RESOURCES",
        shown_default: "`true`",
        flag: None,
        default: Some("true"),
        secret: false,
        required: false,
        about: "Exactly true or false (anything else exits 1): false offers no resources, templates, completion or resource links; denying get_gist_file turns them off too.",
    },
    Setting {
        var: "RUST_LOG",
        shown_default: "`opengist_mcp=info,ask_first_serve=info,warn`",
        flag: None,
        default: Some(crate::logging::DEFAULT_FILTER),
        secret: false,
        required: false,
        about: "Log filter for stderr. Logs never contain a token, question, answer, seal, session id or gist content.",
    },
    Setting {
        var: "OPENGIST_MCP_PROTOCOL_TRACE",
        shown_default: "off",
        flag: None,
        default: None,
        secret: false,
        required: false,
        about: "1/true/yes/on: also log the MCP SDK's protocol messages (they hold questions and gist content; do not share such logs). Default: off.",
    },
];

/// The setting of the variable `var`.
pub fn setting(var: &str) -> Option<&'static Setting> {
    SETTINGS.iter().find(|setting| setting.var == var)
}

/// This server's setting names: the `OPENGIST_MCP_*` variables, each followed by its flag
/// where its row in [`SETTINGS`] has one (`OPENGIST_MCP_AUDIT_LOG (--audit-log)`), as
/// messages show them; the variable is the name's first word
/// (`ask_first_serve::settings::bare_name`). The bearer secret's stays bare: HTTP clients read
/// it in every 401 answer, where a flag means nothing.
pub fn setting_names() -> SettingNames {
    let mut names = SettingNames::with_prefix("OPENGIST_MCP");
    let bearer = names.http_token.clone();
    for name in names.each_mut() {
        if *name != bearer
            && let Some(setting) = setting(name)
        {
            *name = setting.shown_name();
        }
    }
    names
}
