//! Which of the settings given to `client-config` (its flags, then its environment) a printed
//! configuration carries, and what it leaves out and why. Every declared setting
//! ([`SETTINGS`]) is one of: carried with its value; carried as a placeholder (a secret: never
//! printed); left out because it applies only to a server serving HTTP (a stdio configuration
//! has the client start this binary over stdio, and `OPENGIST_MCP_HTTP_ADDR` there would stop
//! it speaking stdio at all); or left out because it is not this server's own (`RUST_LOG`,
//! which other programs read too). `OPENGIST_URL` and `OPENGIST_TOKEN` are the configuration's
//! own (the configured instance, the token's placeholder), not listed here.

use crate::config::var::{OPENGIST_TOKEN, OPENGIST_URL};
use crate::config::{FlagValues, SETTINGS, Setting};

/// The HTTP address: set in a stdio configuration, the server would not speak stdio at all.
const OPENGIST_MCP_HTTP_ADDR: &str = "OPENGIST_MCP_HTTP_ADDR";
/// The prefix of this server's own settings (`OPENGIST_MCP_` starts with it).
const OWN_PREFIX: &str = "OPENGIST_";
/// The dialog switch every guarded server reads, carried as this server's own.
const ELICITATION: &str = "ELICITATION";
/// Settings of the approval page that exist only with `OPENGIST_MCP_HTTP_AUTH=oauth`, which is
/// HTTP only (the server refuses to start with the login's client id outside it).
const OAUTH_ONLY_PREFIXES: [&str; 2] = ["OPENGIST_MCP_CIBA_", "OPENGIST_MCP_APPROVAL_LOGIN_"];

/// The settings given to `client-config`, as a stdio configuration treats them.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct GivenSettings {
    /// What the configuration's environment sets, in the declaration's order: each carried
    /// setting's value, a secret's placeholder ([`secret_placeholder`]).
    pub vars: Vec<(&'static str, String)>,
    /// The secrets among them, written as placeholders.
    pub secrets: Vec<&'static str>,
    /// Given, left out: they apply only to a server serving HTTP.
    pub http_only: Vec<&'static str>,
    /// Given, left out: not this server's own.
    pub not_own: Vec<&'static str>,
}

/// What stands for the secret `var` in a printed configuration: `<OPENGIST_MCP_SEAL_KEY>`.
pub fn secret_placeholder(var: &str) -> String {
    format!("<{var}>")
}

/// Whether `setting` applies only to a server serving HTTP: the address itself, what its
/// declaration says is `HTTP only`, and the settings of `oauth` mode's approval page and CIBA.
fn http_only(setting: &Setting) -> bool {
    setting.var == OPENGIST_MCP_HTTP_ADDR
        || setting.about.starts_with("HTTP only")
        || OAUTH_ONLY_PREFIXES
            .iter()
            .any(|prefix| setting.var.starts_with(prefix))
}

impl GivenSettings {
    /// The declared settings given by `flags` (winning) or `env` (a value of only spaces
    /// counting as unset), sorted as [`GivenSettings`] says.
    pub fn read(flags: &FlagValues, env: &dyn Fn(&str) -> Option<String>) -> Self {
        let mut given = Self::default();
        for setting in SETTINGS {
            if setting.var == OPENGIST_URL || setting.var == OPENGIST_TOKEN {
                continue;
            }
            let value = flags
                .get(setting.var)
                .map(str::to_owned)
                .or_else(|| env(setting.var))
                .map(|value| value.trim().to_owned())
                .filter(|value| !value.is_empty());
            let Some(value) = value else { continue };
            if !(setting.var.starts_with(OWN_PREFIX) || setting.var == ELICITATION) {
                given.not_own.push(setting.var);
            } else if http_only(setting) {
                given.http_only.push(setting.var);
            } else if setting.secret {
                given.secrets.push(setting.var);
                given
                    .vars
                    .push((setting.var, secret_placeholder(setting.var)));
            } else {
                given.vars.push((setting.var, value));
            }
        }
        given
    }

    /// Every setting given, whatever a configuration does with it.
    fn all(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = self.vars.iter().map(|(name, _)| *name).collect();
        names.extend(&self.http_only);
        names.extend(&self.not_own);
        names
    }

    /// The lines printed on stderr after a stdio configuration's note: the secrets to put in
    /// place of their placeholders, and what was left out and why. Empty when there is
    /// nothing to say.
    pub fn stdio_note(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if !self.secrets.is_empty() {
            lines.push(format!(
                "Secrets are never printed: replace {} with the value you gave.",
                self.secrets
                    .iter()
                    .map(|name| secret_placeholder(name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if !self.http_only.is_empty() {
            lines.push(format!(
                "Left out: {}: they apply only to a server serving HTTP, and this configuration \
                 has the client start the server over stdio (for a client of a running HTTP \
                 server: client-config CLIENT --http URL).",
                self.http_only.join(", ")
            ));
        }
        if !self.not_own.is_empty() {
            lines.push(format!(
                "Left out: {}: not this server's own setting (other programs read it too); add \
                 it to the configuration yourself if you mean it for this server.",
                self.not_own.join(", ")
            ));
        }
        lines
    }

    /// The line printed on stderr after an HTTP configuration when settings were given: they
    /// are the running server's to have, not its client's.
    pub fn http_note(&self) -> Option<String> {
        let all = self.all();
        (!all.is_empty()).then(|| {
            format!(
                "Left out: {}: a client of a running HTTP server names only its address and \
                 the Authorization header; the server has its own settings (start it with \
                 them).",
                all.join(", ")
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every declared setting given, as `x`.
    fn everything() -> GivenSettings {
        GivenSettings::read(&FlagValues::default(), &|_| Some("x".to_owned()))
    }

    #[test]
    fn every_declared_setting_given_is_carried_or_said_to_be_left_out() {
        let given = everything();
        for setting in SETTINGS {
            if setting.var == OPENGIST_URL || setting.var == OPENGIST_TOKEN {
                continue;
            }
            let carried = given.vars.iter().find(|(name, _)| *name == setting.var);
            let accounted = match carried {
                Some((_, value)) if setting.secret => {
                    given.secrets.contains(&setting.var)
                        && *value == secret_placeholder(setting.var)
                }
                Some((_, value)) => value == "x",
                None => {
                    given.http_only.contains(&setting.var) || given.not_own.contains(&setting.var)
                }
            };
            assert!(accounted, "{}: {given:?}", setting.var);
        }
        // No secret's value is carried: each is its placeholder.
        for (name, value) in &given.vars {
            let secret = SETTINGS.iter().any(|s| s.var == *name && s.secret);
            assert_eq!(secret, value.starts_with('<'), "{name}");
        }
        // The settings a stdio client needs are carried, the HTTP ones are not.
        let carried: Vec<&str> = given.vars.iter().map(|(name, _)| *name).collect();
        for name in [
            "OPENGIST_MCP_VERIFIED_TOOLS",
            "OPENGIST_MCP_STATE_DIR",
            "OPENGIST_READ_ONLY",
            "ELICITATION",
            "OPENGIST_MCP_SEAL_KEY",
        ] {
            assert!(carried.contains(&name), "{name}: {carried:?}");
        }
        for name in [
            "OPENGIST_MCP_HTTP_ADDR",
            "OPENGIST_MCP_HTTP_TOKEN",
            "OPENGIST_MCP_OAUTH_ISSUER",
            "OPENGIST_MCP_APPROVAL_LOGIN_CLIENT_ID",
            "OPENGIST_MCP_PUBLIC_URL",
        ] {
            assert!(given.http_only.contains(&name), "{name}: {given:?}");
        }
        assert_eq!(given.not_own, vec!["RUST_LOG"]);
        let note = given.stdio_note().join("\n");
        assert!(
            note.contains("<OPENGIST_MCP_SEAL_KEY>") && note.contains("OPENGIST_MCP_HTTP_ADDR")
        );
        assert!(!note.contains(" x"), "{note}");
    }

    #[test]
    fn a_flag_wins_and_nothing_given_says_nothing() {
        let matches = clap::Command::new("t")
            .args(SETTINGS.iter().filter_map(Setting::arg))
            .get_matches_from(["t", "--deny-tools", "get_user", "--read-only"]);
        let flags = FlagValues::from_matches(SETTINGS, &matches);
        let env = |name: &str| (name == "OPENGIST_DENY_TOOLS").then(|| "set_gist_like".to_owned());
        let given = GivenSettings::read(&flags, &env);
        assert_eq!(
            given.vars,
            vec![
                ("OPENGIST_READ_ONLY", "true".to_owned()),
                ("OPENGIST_DENY_TOOLS", "get_user".to_owned())
            ]
        );
        assert!(given.stdio_note().is_empty() && given.secrets.is_empty());
        assert!(
            given
                .http_note()
                .is_some_and(|note| note.contains("OPENGIST_DENY_TOOLS"))
        );
        // Positive control of the silence: nothing given, nothing said.
        let none = GivenSettings::read(&FlagValues::default(), &|_| None);
        assert_eq!(none, GivenSettings::default());
        assert!(none.stdio_note().is_empty() && none.http_note().is_none());
        // The configuration's own two are never listed here.
        let own = GivenSettings::read(&FlagValues::default(), &|name| {
            [OPENGIST_URL, OPENGIST_TOKEN]
                .contains(&name)
                .then(|| "x".to_owned())
        });
        assert_eq!(own, GivenSettings::default());
    }
}
