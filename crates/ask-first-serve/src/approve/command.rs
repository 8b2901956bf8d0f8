//! `<server> passkeys add | list | remove`: what the operator runs at the server's terminal to
//! enrol, see and take out the passkeys of the approval page. The binaries parse their own
//! command lines (with clap) into these typed calls and print what they return;
//! [`run_passkeys_command`] takes the words after `passkeys` for a server that has no parser.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::enrol::add_passkey;
use super::passkeys::{PasskeyInfo, list_passkeys, remove_passkey};

/// What `passkeys add` enrols: for whom, under which name, and how long its link stays valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddPasskey {
    /// The principal whose questions the passkey approves (`local` on stdio, `token:alice`
    /// for a per-person token's caller, ...).
    pub principal: String,
    /// What the operator calls it (`passkeys list` shows it; `passkeys remove` takes it).
    pub name: String,
    /// How long the one-time link stays valid: 1 second to [`AddPasskey::MAX_VALID`].
    pub valid_for: Duration,
}

impl AddPasskey {
    /// The longest an enrolment link stays valid.
    pub const MAX_VALID: Duration = Duration::from_secs(30 * 60);
    /// How long it stays valid unless told.
    pub const DEFAULT_VALID: Duration = Duration::from_secs(5 * 60);
}

impl Default for AddPasskey {
    /// For `local` (a stdio client's principal), named `passkey`, valid 5 minutes.
    fn default() -> Self {
        Self {
            principal: "local".to_owned(),
            name: "passkey".to_owned(),
            valid_for: Self::DEFAULT_VALID,
        }
    }
}

const USAGE: &str = "usage: passkeys add [--principal PRINCIPAL] [--name NAME] [--valid-for-secs N]
       passkeys list
       passkeys remove [--principal PRINCIPAL] NAME-OR-ID
  add     prints a one-time link; open it on this machine to enrol a passkey that approves
          the questions of PRINCIPAL (default `local`: a stdio client, or any holder of an
          HTTP server's one shared secret) on the approval page. The link is valid for N
          seconds (default 300, at most 1800).
  list    the enrolled passkeys: principal, name, credential id, authenticator, enrolled.
  remove  takes out PRINCIPAL's passkey with that name or credential id (a lost or stolen
          authenticator); a running server refuses it from its next use on.";

/// The state directory a server's passkeys are kept in: `<prefix>_STATE_DIR` when set, else
/// the default state directory of `server`; `None` when there is neither.
pub fn passkeys_state_dir(server: &str, prefix: &str) -> Option<PathBuf> {
    std::env::var_os(format!("{prefix}_STATE_DIR"))
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| crate::settings::default_state_dir(server))
}

impl fmt::Display for PasskeyInfo {
    /// One line of `passkeys list`: principal, name, short credential id, AAGUID, enrolled.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let added = chrono::DateTime::from_timestamp(i64::try_from(self.added_at).unwrap_or(0), 0)
            .map_or_else(
                || "?".to_owned(),
                |t| t.format("%Y-%m-%d %H:%M UTC").to_string(),
            );
        write!(
            f,
            "{}  {}  id {}  aaguid {}  enrolled {added}",
            self.principal,
            self.name,
            self.short_id(),
            self.aaguid.as_deref().unwrap_or("unknown"),
        )
    }
}

/// What `passkeys list` prints for `passkeys`, kept in `dir`: one line each, or a line that
/// says none is enrolled and how to enrol one.
pub fn passkeys_listing(server: &str, dir: &Path, passkeys: &[PasskeyInfo]) -> String {
    let file = dir.join(super::PASSKEYS_FILE);
    if passkeys.is_empty() {
        return format!(
            "No passkey is enrolled in {} (enrol one with `{server} passkeys add --principal PRINCIPAL`).\n",
            file.display()
        );
    }
    let mut text = format!("{} passkey(s) in {}:\n", passkeys.len(), file.display());
    for passkey in passkeys {
        text.push_str(&format!("  {passkey}\n"));
    }
    text
}

/// `passkeys list`: prints the listing, or the error. The exit code.
fn list(server: &str, dir: &Path, setting: &str) -> i32 {
    match list_passkeys(dir, setting) {
        Ok(passkeys) => {
            print!("{}", passkeys_listing(server, dir, &passkeys));
            0
        }
        Err(error) => {
            eprintln!("{error}");
            1
        }
    }
}

/// `passkeys remove`: removes and says what, or the error. The exit code.
fn remove(dir: &Path, setting: &str, principal: &str, which: &str) -> i32 {
    match remove_passkey(dir, setting, principal, which) {
        Ok(removed) => {
            println!(
                "Removed passkey `{}` of `{}` (id {}): it approves nothing from now on, on a running server too.",
                removed.name,
                removed.principal,
                removed.short_id()
            );
            0
        }
        Err(error) => {
            eprintln!("{error}");
            1
        }
    }
}

/// One typed passkeys command, as a binary parsed it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PasskeysCommand {
    /// Enrol one through a one-time link.
    Add(AddPasskey),
    /// List the enrolled passkeys.
    List,
    /// Remove `which` (a name or credential id) of `principal`.
    Remove {
        /// The principal whose passkey it is.
        principal: String,
        /// Its name, credential id, or the id's start (the short id `list` prints).
        which: String,
    },
}

/// Runs `command` for the server named `server` whose settings are prefixed `prefix`, with its
/// passkeys in `state_dir` (else [`passkeys_state_dir`]); prints what it did. The process exit
/// code.
pub async fn run_passkeys(
    server: &str,
    prefix: &str,
    state_dir: Option<PathBuf>,
    command: PasskeysCommand,
) -> i32 {
    let setting = format!("{prefix}_STATE_DIR");
    let dir = state_dir.or_else(|| passkeys_state_dir(server, prefix));
    match (command, dir) {
        (PasskeysCommand::Add(options), dir) => add_passkey(server, prefix, dir, &options).await,
        (_, None) => {
            eprintln!("there is no state directory that keeps passkeys: set {setting}");
            1
        }
        (PasskeysCommand::List, Some(dir)) => list(server, &dir, &setting),
        (PasskeysCommand::Remove { principal, which }, Some(dir)) => {
            remove(&dir, &setting, &principal, &which)
        }
    }
}

/// Runs `<server> passkeys ...` with `args` (the words after `passkeys`), for the server named
/// `server` whose settings are prefixed `prefix`; its passkeys are in `state_dir`, else in the
/// default state directory. Returns the process exit code (2 for a usage error, 0 for `help`).
pub async fn run_passkeys_command(
    server: &str,
    prefix: &str,
    state_dir: Option<PathBuf>,
    args: &[String],
) -> i32 {
    match parse(args) {
        Ok(Some(command)) => run_passkeys(server, prefix, state_dir, command).await,
        Ok(None) => {
            println!("{USAGE}");
            0
        }
        Err(why) => {
            eprintln!("{why}\n{USAGE}");
            2
        }
    }
}

/// The command `args` say; `None` for `help`.
fn parse(args: &[String]) -> Result<Option<PasskeysCommand>, String> {
    let mut rest = args.iter().map(String::as_str);
    let verb = rest.next();
    let mut options = AddPasskey::default();
    let mut which = None;
    while let Some(word) = rest.next() {
        let mut value = || match rest.next() {
            Some(v) if !v.is_empty() => Ok(v.to_owned()),
            _ => Err(format!("{word} takes a value")),
        };
        match word {
            "--help" | "-h" => return Ok(None),
            "--principal" => options.principal = value()?,
            "--name" if verb == Some("add") => options.name = value()?,
            "--valid-for-secs" if verb == Some("add") => {
                options.valid_for = value()?
                    .parse::<u64>()
                    .ok()
                    .map(Duration::from_secs)
                    .filter(|d| !d.is_zero() && *d <= AddPasskey::MAX_VALID)
                    .ok_or_else(|| {
                        format!(
                            "--valid-for-secs takes a number of seconds from 1 to {}",
                            AddPasskey::MAX_VALID.as_secs()
                        )
                    })?;
            }
            _ if verb == Some("remove") && which.is_none() && !word.starts_with("--") => {
                which = Some(word.to_owned());
            }
            _ => return Err(format!("`{word}` is not understood here")),
        }
    }
    match verb {
        Some("add") => Ok(Some(PasskeysCommand::Add(options))),
        Some("list") => Ok(Some(PasskeysCommand::List)),
        Some("remove") => match which {
            Some(which) => Ok(Some(PasskeysCommand::Remove {
                principal: options.principal,
                which,
            })),
            None => Err("say which passkey to remove: its name or credential id".to_owned()),
        },
        Some("help" | "--help" | "-h") => Ok(None),
        Some(other) => Err(format!("`{other}` is not a passkeys command")),
        None => Err("say what to do: add, list or remove".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn the_words_after_passkeys_parse_into_one_command() {
        assert_eq!(
            parse(&words("add")),
            Ok(Some(PasskeysCommand::Add(AddPasskey::default())))
        );
        assert_eq!(
            parse(&words(
                "add --principal token:alice --name key --valid-for-secs 60"
            )),
            Ok(Some(PasskeysCommand::Add(AddPasskey {
                principal: "token:alice".into(),
                name: "key".into(),
                valid_for: Duration::from_secs(60),
            })))
        );
        assert_eq!(parse(&words("list")), Ok(Some(PasskeysCommand::List)));
        assert_eq!(
            parse(&words("remove --principal token:bob laptop")),
            Ok(Some(PasskeysCommand::Remove {
                principal: "token:bob".into(),
                which: "laptop".into()
            }))
        );
        assert_eq!(
            parse(&words("remove AAAA")),
            Ok(Some(PasskeysCommand::Remove {
                principal: "local".into(),
                which: "AAAA".into()
            }))
        );
        for help in ["help", "--help", "add --help", "remove -h"] {
            assert_eq!(parse(&words(help)), Ok(None), "{help}");
        }
        for wrong in [
            "",
            "enrol",
            "remove",
            "add --valid-for-secs 0",
            "add --valid-for-secs 1801",
            "add --principal",
            "list --name x",
            "remove a b",
        ] {
            assert!(parse(&words(wrong)).is_err(), "{wrong}");
        }
    }

    #[test]
    fn a_listing_shows_each_passkey_on_one_line() {
        let dir = Path::new("/state");
        let none = passkeys_listing("notes", dir, &[]);
        assert!(
            none.contains("No passkey is enrolled")
                && none.contains("notes passkeys add --principal"),
            "{none}"
        );
        let info = PasskeyInfo {
            principal: "token:alice".into(),
            name: "laptop".into(),
            credential_id: "AAAAbbbbCCCCddddEEEE".into(),
            aaguid: Some("01020304-0506-0708-0102-030405060708".into()),
            added_at: 0,
        };
        let text = passkeys_listing("notes", dir, &[info]);
        assert!(
            text.contains(
                "token:alice  laptop  id AAAAbbbbCCCC  aaguid 01020304-0506-0708-0102-030405060708  enrolled 1970-01-01 00:00 UTC"
            ),
            "{text}"
        );
    }
}
