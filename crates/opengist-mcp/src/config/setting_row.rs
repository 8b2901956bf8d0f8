//! What a row of [`SETTINGS`](super::SETTINGS) is: a [`Setting`] and its [`Flag`], the
//! command-line argument a row builds, and the [`FlagValues`] read back from a parsed command
//! line.

use std::collections::BTreeMap;

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
