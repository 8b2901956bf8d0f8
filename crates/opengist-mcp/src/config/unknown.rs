//! Variables that look like this server's settings but are none: a name with the server's
//! prefix (`OPENGIST_`, which `OPENGIST_MCP_` starts with) that is not declared in
//! [`super::SETTINGS`], or a near miss of a declared one without it (`ELICITATON`). A
//! misspelled setting does nothing, silently, so each is named with the closest declared
//! setting: at start (a warning on stderr) and by `doctor`.

use super::settings::SETTINGS;

/// The prefix every variable of this server starts with (but `ELICITATION` and `RUST_LOG`).
const PREFIX: &str = "OPENGIST_";
/// The prefix of the server's own serving and result settings.
const MCP_PREFIX: &str = "OPENGIST_MCP_";
/// The largest edit distance at which a name is a near miss of a declared one.
const NEAR: usize = 2;

/// One warning per variable in `names` that is not a setting but looks like one, naming the
/// closest declared setting when one is near. Names are never values: nothing secret is shown.
pub fn unknown_variables<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut warnings: Vec<String> = names
        .into_iter()
        .filter(|name| !SETTINGS.iter().any(|setting| setting.var == *name))
        .filter_map(|name| {
            let closest = closest(name);
            let prefixed = name.starts_with(PREFIX);
            let near = closest.is_some_and(|(_, distance)| distance <= NEAR);
            (prefixed || near).then(|| match closest {
                Some((setting, _)) => format!(
                    "{name} is set but is no setting of this server, so it does nothing; did you \
                     mean {setting}?"
                ),
                None => format!(
                    "{name} is set but is no setting of this server, so it does nothing; \
                     `opengist-mcp --help` lists every setting"
                ),
            })
        })
        .collect();
    warnings.sort();
    warnings
}

/// The declared setting closest to `name` and how far it is (edits, a swap of two letters
/// counting as one), when it is close enough to be what was meant. `OPENGIST_MCP_READ_ONLY`
/// is measured as `OPENGIST_READ_ONLY` too, and the other way round: a prefix mixed up is one
/// mistake, not four.
fn closest(name: &str) -> Option<(&'static str, usize)> {
    let swapped = match name.strip_prefix(MCP_PREFIX) {
        Some(rest) => format!("{PREFIX}{rest}"),
        None => match name.strip_prefix(PREFIX) {
            Some(rest) => format!("{MCP_PREFIX}{rest}"),
            None => name.to_owned(),
        },
    };
    SETTINGS
        .iter()
        .map(|setting| {
            let distance = strsim::osa_distance(name, setting.var)
                .min(strsim::osa_distance(&swapped, setting.var).saturating_add(1));
            (setting.var, distance)
        })
        .min_by_key(|(_, distance)| *distance)
        .filter(|(var, distance)| *distance <= (var.len() / 4).max(NEAR))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suggestion(name: &str) -> String {
        let warnings = unknown_variables([name]);
        assert_eq!(warnings.len(), 1, "{name}: {warnings:?}");
        warnings[0].clone()
    }

    #[test]
    fn misspelled_and_misprefixed_settings_are_named_with_the_real_one() {
        for (given, meant) in [
            ("OPENGIST_READONLY", "OPENGIST_READ_ONLY"),
            ("OPENGIST_MCP_READ_ONLY", "OPENGIST_READ_ONLY"),
            ("OPENGIST_TOKNE", "OPENGIST_TOKEN"),
            ("OPENGIST_HTTP_ADDR", "OPENGIST_MCP_HTTP_ADDR"),
            ("ELICITATON", "ELICITATION"),
            ("OPENGIST_ELICITATION", "OPENGIST_MCP_ELICITATION"),
        ] {
            let warning = suggestion(given);
            assert!(
                warning.starts_with(&format!("{given} is set but is no setting"))
                    && warning.ends_with(&format!("did you mean {meant}?")),
                "{warning}"
            );
        }
        // A name with the prefix and nothing near it is still named.
        assert!(suggestion("OPENGIST_SOMETHING_ELSE_ENTIRELY").contains("--help"));
    }

    #[test]
    fn declared_settings_and_other_programs_variables_pass() {
        // Positive control beside it: the same list with one misspelling gives one warning.
        let mut names: Vec<&str> = SETTINGS.iter().map(|setting| setting.var).collect();
        names.extend(["PATH", "HOME", "RUST_BACKTRACE", "XDG_STATE_HOME", "LANG"]);
        assert_eq!(
            unknown_variables(names.iter().copied()),
            Vec::<String>::new()
        );
        names.push("OPENGIST_URLL");
        assert_eq!(unknown_variables(names.iter().copied()).len(), 1);
    }
}
