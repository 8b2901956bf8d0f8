//! Loading a configuration from a given environment, for the configuration tests (`config.rs`,
//! `config_replicas.rs`): no process environment is read or changed.

use std::collections::HashMap;

use opengist_mcp::cli::CliArgs;
use opengist_mcp::config::{Config, ConfigError, Loaded};

/// The configuration `args` and the variables `vars` (and nothing else) make.
pub(crate) fn load_with(args: &CliArgs, vars: &[(&str, &str)]) -> Result<Loaded, ConfigError> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    Config::from_env_and_args(&args.flags, &|name| map.get(name).cloned())
}

/// The configuration the variables `vars` make, without command-line arguments.
pub(crate) fn load(vars: &[(&str, &str)]) -> Result<Loaded, ConfigError> {
    load_with(&CliArgs::default(), vars)
}
