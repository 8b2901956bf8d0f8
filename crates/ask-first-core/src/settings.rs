//! The `ELICITATION` switch, parsed strictly.

/// The variable's name. Deliberately unprefixed, so one switch serves every guarded server.
pub const ELICITATION_VAR: &str = "ELICITATION";

/// `ELICITATION` held something other than `true` or `false`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "ELICITATION must be exactly `true` or `false` (unset means `true`); `false` sends guarded tools down the two-call token path and never removes the guard"
)]
pub struct InvalidElicitationSetting;

/// Parses `ELICITATION`: unset is `true`; exactly `true` or `false`; anything else (`1`, `off`,
/// `yes`, `TRUE`, empty) is an error, which a binary should turn into exit code 1.
///
/// ```
/// use ask_first_core::parse_elicitation;
/// assert_eq!(parse_elicitation(None), Ok(true));
/// assert_eq!(parse_elicitation(Some("false")), Ok(false));
/// assert!(parse_elicitation(Some("off")).is_err());
/// ```
pub fn parse_elicitation(value: Option<&str>) -> Result<bool, InvalidElicitationSetting> {
    match value {
        None | Some("true") => Ok(true),
        Some("false") => Ok(false),
        Some(_) => Err(InvalidElicitationSetting),
    }
}

/// Reads `ELICITATION` from the environment. A value that is not valid Unicode is refused too.
pub fn elicitation_from_env() -> Result<bool, InvalidElicitationSetting> {
    match std::env::var(ELICITATION_VAR) {
        Ok(value) => parse_elicitation(Some(&value)),
        Err(std::env::VarError::NotPresent) => Ok(true),
        Err(std::env::VarError::NotUnicode(_)) => Err(InvalidElicitationSetting),
    }
}

/// The start-up line a server prints on stderr when the switch is off.
pub fn elicitation_off_notice(server: &str) -> String {
    format!("{server}: ELICITATION=false \u{2014} guarded tools fall back to the two-call token")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_two_exact_words_pass() {
        assert_eq!(parse_elicitation(None), Ok(true));
        assert_eq!(parse_elicitation(Some("true")), Ok(true));
        assert_eq!(parse_elicitation(Some("false")), Ok(false));
        for bad in [
            "", "1", "0", "off", "on", "yes", "no", "TRUE", "False", " true", "true ",
        ] {
            assert_eq!(
                parse_elicitation(Some(bad)),
                Err(InvalidElicitationSetting),
                "{bad:?}"
            );
        }
        let message = InvalidElicitationSetting.to_string();
        assert!(message.contains("`true`") && message.contains("`false`"));
    }

    #[test]
    fn the_notice_names_the_server() {
        assert_eq!(
            elicitation_off_notice("notes"),
            "notes: ELICITATION=false — guarded tools fall back to the two-call token"
        );
    }
}
