//! The one declaration of the settings (`opengist_mcp::config::SETTINGS`) against everything
//! that shows them: `--help`, the deployment guide's settings table and `server.json`'s
//! `environmentVariables` (both packages). A setting added, renamed or dropped in one place and
//! not the others fails here, by name.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use opengist_mcp::cli::CliArgs;
use opengist_mcp::config::SETTINGS;

fn repository_file(path: &str) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|error| panic!("{path}: {error}"))
}

fn declared() -> BTreeSet<&'static str> {
    SETTINGS.iter().map(|setting| setting.var).collect()
}

/// The rows of the deployment guide's settings table: the variables named in a row's first
/// cell, and that row's default cell.
fn table_rows() -> Vec<(Vec<String>, String)> {
    let guide = repository_file("docs/DEPLOYMENT.md");
    let section = guide
        .split_once("\n## Settings\n")
        .map(|(_, rest)| rest.split("\n## ").next().unwrap_or(rest))
        .expect("docs/DEPLOYMENT.md has a `## Settings` section");
    section
        .lines()
        .filter(|line| line.starts_with("| `"))
        .map(|line| {
            let cells: Vec<&str> = line
                .trim()
                .trim_matches('|')
                .split('|')
                .map(str::trim)
                .collect();
            let names = cells[0]
                .split('`')
                .skip(1)
                .step_by(2)
                .filter(|name| {
                    name.chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                })
                .map(str::to_owned)
                .collect();
            (names, cells[1].to_owned())
        })
        .collect()
}

/// The settings table: each variable, and its row's default cell.
fn settings_table() -> BTreeMap<String, String> {
    table_rows()
        .into_iter()
        .flat_map(|(names, default)| names.into_iter().map(move |name| (name, default.clone())))
        .collect()
}

/// The table's default when it is one literal value (a backticked token first).
fn literal_default(cell: &str) -> Option<&str> {
    cell.strip_prefix('`')?.split('`').next()
}

#[test]
fn the_declaration_names_each_variable_once() {
    assert_eq!(
        declared().len(),
        SETTINGS.len(),
        "a variable is declared twice"
    );
    for setting in SETTINGS {
        assert!(
            setting.about.len() >= 20,
            "{}: no real description",
            setting.var
        );
        if setting.secret {
            // A secret has no default to show (a flag for one is warned about when used).
            assert_eq!(
                setting.default, None,
                "{}: a secret has no default",
                setting.var
            );
        }
    }
}

#[test]
fn the_settings_table_lists_exactly_the_declared_settings_with_their_defaults() {
    let table = settings_table();
    let listed: BTreeSet<&str> = table.keys().map(String::as_str).collect();
    let declared = declared();
    assert_eq!(
        listed,
        declared,
        "docs/DEPLOYMENT.md's settings table lacks {:?}; has {:?} extra",
        declared.difference(&listed).collect::<Vec<_>>(),
        listed.difference(&declared).collect::<Vec<_>>()
    );
    // Each row's default cell is what its settings show, in order (`all, none` for the allow
    // and deny lists, once when they agree).
    for (names, default) in table_rows() {
        let mut shown: Vec<&str> = Vec::new();
        for name in &names {
            if let Some(setting) = opengist_mcp::config::var::setting(name)
                && !shown.contains(&setting.shown_default)
            {
                shown.push(setting.shown_default);
            }
        }
        if !shown.is_empty() {
            assert_eq!(default, shown.join(", "), "{names:?}");
        }
    }
    for setting in SETTINGS {
        let cell = &table[setting.var];
        // `hostname:pid` is worked out at start: a backticked default that is no value.
        if setting.var == "OPENGIST_MCP_REPLICA_ID" {
            assert_eq!(setting.default, None);
            continue;
        }
        assert_eq!(
            setting.default,
            literal_default(cell),
            "{}: declared default {:?}, docs/DEPLOYMENT.md says {cell:?}",
            setting.var,
            setting.default
        );
    }
}

#[test]
fn server_json_lists_exactly_the_declared_settings_as_declared() {
    let doc: serde_json::Value =
        serde_json::from_str(&repository_file("server.json")).expect("server.json is JSON");
    let packages = doc["packages"].as_array().expect("packages");
    assert_eq!(packages.len(), 2, "the PyPI and npm packages");
    for package in packages {
        let variables = package["environmentVariables"]
            .as_array()
            .expect("variables");
        let names: Vec<&str> = variables
            .iter()
            .filter_map(|v| v["name"].as_str())
            .collect();
        let expected: Vec<&str> = SETTINGS.iter().map(|setting| setting.var).collect();
        assert_eq!(
            names, expected,
            "server.json lists other variables, or in another order"
        );
        for (entry, setting) in variables.iter().zip(SETTINGS) {
            let flag = |key: &str| entry.get(key).and_then(serde_json::Value::as_bool);
            assert_eq!(
                flag("isSecret").unwrap_or(false),
                setting.secret,
                "{}",
                setting.var
            );
            assert_eq!(
                flag("isRequired").unwrap_or(false),
                setting.required,
                "{}",
                setting.var
            );
            assert_eq!(
                entry["default"].as_str(),
                setting.default,
                "{}",
                setting.var
            );
            assert_eq!(
                entry["description"].as_str(),
                Some(setting.about),
                "{}",
                setting.var
            );
            if setting.secret {
                assert!(
                    entry.get("value").is_none(),
                    "{}: a secret has no value",
                    setting.var
                );
            }
        }
    }
}

#[test]
fn each_flag_is_declared_and_its_help_names_its_variable() {
    let command = CliArgs::command();
    let flags: BTreeMap<&str, String> = command
        .get_arguments()
        .filter_map(|arg| {
            let help = arg.get_long_help().or(arg.get_help())?.to_string();
            Some((arg.get_long()?, help))
        })
        .collect();
    let declared: BTreeSet<&str> = SETTINGS
        .iter()
        .filter_map(|setting| Some(setting.flag?.name))
        .collect();
    let shown: BTreeSet<&str> = flags.keys().copied().collect();
    assert_eq!(shown, declared, "--help and SETTINGS disagree on the flags");
    for setting in SETTINGS {
        let Some(flag) = setting.flag.map(|flag| flag.name) else {
            continue;
        };
        let help = flags[flag].split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            help.contains(&format!("[env: {}", setting.var)),
            "--{flag}: its help does not name {}: {help}",
            setting.var
        );
        if let Some(default) = setting.default {
            assert!(
                help.contains(&format!("[default: {default}")),
                "--{flag}: its help does not show the default {default}: {help}"
            );
        }
        // Positive control of the secret path: a secret's help shows no value.
        if setting.secret {
            assert!(setting.default.is_none(), "--{flag}");
        }
    }
    // Every variable without a flag is listed after the flags, on a line of its own, and
    // nothing else is listed there.
    let after = command.get_after_help().expect("after help").to_string();
    let listed: BTreeSet<&str> = after
        .lines()
        .filter_map(|line| line.strip_prefix("  "))
        .filter(|word| word.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
        .collect();
    let without_flag: BTreeSet<&str> = SETTINGS
        .iter()
        .filter(|setting| setting.flag.is_none())
        .map(|setting| setting.var)
        .collect();
    assert!(without_flag.len() >= 5, "{without_flag:?}");
    assert_eq!(listed, without_flag, "{after}");
}
