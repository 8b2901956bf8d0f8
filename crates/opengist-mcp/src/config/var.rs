//! The names of the variables this server's own code reads by name (every setting is declared
//! in [`super::SETTINGS`]; the framework's serving settings are read by the framework under
//! [`setting_names`]), and how a value is read (a flag wins over its variable;
//! an empty variable counts as unset).

use ask_first_serve::SettingNames;

use super::error::ConfigError;
use super::settings::{self, FlagValues, Setting};

/// The Opengist instance.
pub const OPENGIST_URL: &str = "OPENGIST_URL";
/// The Opengist personal access token (no flag on purpose).
pub const OPENGIST_TOKEN: &str = "OPENGIST_TOKEN";
/// Register only the reading tools.
pub const OPENGIST_READ_ONLY: &str = "OPENGIST_READ_ONLY";
/// Tools to register.
pub const OPENGIST_ALLOW_TOOLS: &str = "OPENGIST_ALLOW_TOOLS";
/// Tools not to register.
pub const OPENGIST_DENY_TOOLS: &str = "OPENGIST_DENY_TOOLS";
/// Accept unverifiable TLS certificates from Opengist.
pub const OPENGIST_INSECURE_TLS: &str = "OPENGIST_INSECURE_TLS";
/// Seal key shared by replicas.
pub const OPENGIST_MCP_SEAL_KEY: &str = "OPENGIST_MCP_SEAL_KEY";
/// Bearer secret for HTTP.
pub const OPENGIST_MCP_HTTP_TOKEN: &str = "OPENGIST_MCP_HTTP_TOKEN";
/// Result-size ceiling.
pub const OPENGIST_MCP_MAX_RESULT_BYTES: &str = "OPENGIST_MCP_MAX_RESULT_BYTES";
/// Tools that run only after the person's yes on the approval page with a passkey.
pub const OPENGIST_MCP_VERIFIED_TOOLS: &str = "OPENGIST_MCP_VERIFIED_TOOLS";
/// How long a confirmation dialog may wait for a person.
pub const OPENGIST_MCP_DIALOG_TIMEOUT_SECS: &str = "OPENGIST_MCP_DIALOG_TIMEOUT_SECS";
/// Timeout of each Opengist request.
pub const OPENGIST_MCP_REQUEST_TIMEOUT_SECS: &str = "OPENGIST_MCP_REQUEST_TIMEOUT_SECS";
/// The Redis that replicas share for spent answers.
pub const OPENGIST_MCP_REDIS_URL: &str = "OPENGIST_MCP_REDIS_URL";
/// Bytes of gist files kept in memory for reuse.
pub const OPENGIST_MCP_CACHE_BYTES: &str = "OPENGIST_MCP_CACHE_BYTES";
/// Whether gists are offered as MCP resources.
pub const OPENGIST_MCP_RESOURCES: &str = "OPENGIST_MCP_RESOURCES";
/// Requests to Opengist in flight at once, all callers together.
pub const OPENGIST_MCP_OPENGIST_MAX_REQUESTS: &str = "OPENGIST_MCP_OPENGIST_MAX_REQUESTS";
/// Requests to Opengist in flight at once for one MCP principal.
pub const OPENGIST_MCP_OPENGIST_MAX_REQUESTS_PER_PRINCIPAL: &str =
    "OPENGIST_MCP_OPENGIST_MAX_REQUESTS_PER_PRINCIPAL";
/// How long a request to Opengist waits for a turn before it is refused as busy.
pub const OPENGIST_MCP_OPENGIST_QUEUE_SECS: &str = "OPENGIST_MCP_OPENGIST_QUEUE_SECS";
/// The per-person token file (`OPENGIST_MCP_HTTP_AUTH=tokens`): names and token hashes.
pub const OPENGIST_MCP_HTTP_TOKENS_FILE: &str = "OPENGIST_MCP_HTTP_TOKENS_FILE";

/// Where the settings come from: the flags given on the command line and a variable lookup.
/// Every section of the configuration reads its own settings through this.
pub(super) struct Source<'a> {
    /// The flags given on the command line.
    pub(super) flags: &'a FlagValues,
    /// `env(name)` gives the variable's value, `None` when unset.
    env: &'a dyn Fn(&str) -> Option<String>,
}

impl<'a> Source<'a> {
    /// Settings from `flags` and the lookup `env`.
    pub(super) fn new(flags: &'a FlagValues, env: &'a dyn Fn(&str) -> Option<String>) -> Self {
        Self { flags, env }
    }

    /// The variable exactly as set (an empty value included), for the strict switches.
    pub(super) fn exact(&self, name: &str) -> Option<String> {
        (self.env)(name)
    }

    /// The variable, a value of only spaces or nothing counting as unset.
    pub(super) fn get(&self, name: &str) -> Option<String> {
        (self.env)(name).filter(|value| !value.trim().is_empty())
    }

    /// The setting `name`'s flag when given, else its variable (empty counting as unset).
    pub(super) fn flag_or_env(&self, name: &str) -> Option<String> {
        match self.flags.get(name) {
            Some(given) => Some(given.to_owned()),
            None => self.get(name),
        }
    }

    /// The setting `name`'s flag when given, else its variable exactly as set (for the strict
    /// switches).
    pub(super) fn flag_or_exact(&self, name: &str) -> Option<String> {
        match self.flags.get(name) {
            Some(given) => Some(given.to_owned()),
            None => self.exact(name),
        }
    }

    /// A whole number from the setting `name`'s flag or variable, within `min..=max`;
    /// `default` when neither is set. The error names the variable and its flag.
    pub(super) fn number(
        &self,
        name: &str,
        min: u64,
        max: u64,
        default: u64,
    ) -> Result<u64, ConfigError> {
        match self.flag_or_env(name) {
            Some(raw) => parse_number(&raw, &shown_name(name), min, max),
            None => Ok(default),
        }
    }
}

/// The setting `var` as messages name it (with its flag, from its declaration).
fn shown_name(var: &str) -> String {
    setting(var).map_or_else(|| var.to_owned(), Setting::shown_name)
}

/// `raw`, trimmed, as a whole number within `min..=max`.
fn parse_number(raw: &str, setting: &str, min: u64, max: u64) -> Result<u64, ConfigError> {
    let value = raw
        .trim()
        .parse::<u64>()
        .map_err(|_| ConfigError::NotANumber {
            setting: setting.to_owned(),
            min,
            max,
        })?;
    if !(min..=max).contains(&value) {
        return Err(ConfigError::OutOfRange {
            setting: setting.to_owned(),
            value,
            min,
            max,
        });
    }
    Ok(value)
}

/// The setting of the variable `var`.
pub fn setting(var: &str) -> Option<&'static Setting> {
    settings::SETTINGS.iter().find(|setting| setting.var == var)
}

/// This server's setting names: the `OPENGIST_MCP_*` variables, each followed by its flag
/// where its row in [`SETTINGS`](super::SETTINGS) has one (`OPENGIST_MCP_AUDIT_LOG (--audit-log)`), as
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

#[cfg(test)]
mod tests {
    #[test]
    fn the_process_reads_every_framework_setting_of_this_server() {
        // `Config::from_process` reads only the declared settings: a framework setting missing
        // from them would be silently ignored in a real run.
        let mut names = super::setting_names();
        let mut checked = 0;
        for name in names.each_mut() {
            let bare = ask_first_serve::settings::bare_name(name);
            let declared = super::setting(bare)
                .unwrap_or_else(|| panic!("{bare} is not declared in SETTINGS"));
            // A name that shows a flag shows the declared one.
            if let Some(flag) = declared.flag {
                assert!(
                    name == bare || name.ends_with(&format!("(--{})", flag.name)),
                    "{name}: its flag is --{}",
                    flag.name
                );
            }
            checked += 1;
        }
        assert!(checked > 20, "{checked}");
    }
}
