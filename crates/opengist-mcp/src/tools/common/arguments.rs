//! [`Parameters`]: the tool arguments extractor, with errors that name the argument.
//!
//! rmcp's own `Parameters<T>` reports a type error as, for example, "invalid type: map,
//! expected a boolean", without saying which argument. This one deserializes through
//! `serde_path_to_error`, so the message names the argument's path (`file_ops[2].content`),
//! what was wrong and that nothing was done. rmcp's and `#[guarded]`'s macros recognise it by
//! its name, exactly as they recognise rmcp's.
//!
//! Beside it, the arguments several tools take the same way: [`GistIdArg`] (one gist) and
//! the `username` check.

use rmcp::ErrorData;
use rmcp::handler::server::common::FromContextPart;
use rmcp::handler::server::tool::ToolCallContext;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;

/// A tool's arguments, deserialized from the call's `arguments` object.
pub(crate) struct Parameters<T>(pub T);

impl<T: JsonSchema> JsonSchema for Parameters<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(generator)
    }
}

/// Deserializes `arguments`, naming the argument that failed.
pub(crate) fn parse_arguments<T: DeserializeOwned>(
    arguments: serde_json::Map<String, serde_json::Value>,
) -> Result<T, String> {
    serde_path_to_error::deserialize(serde_json::Value::Object(arguments)).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner();
        if path == "." {
            format!(
                "invalid arguments: {inner}. Nothing was done: fix the arguments and call again."
            )
        } else {
            format!(
                "invalid argument `{path}`: {inner}. Nothing was done: fix `{path}` and call again."
            )
        }
    })
}

/// rmcp's router turns an invalid-params error that starts with this into a tool error result
/// (`isError: true`), which the model reads and can act on, instead of a protocol error.
const ROUTER_ARGUMENT_ERROR_PREFIX: &str = "failed to deserialize parameters: ";

impl<S, T: DeserializeOwned> FromContextPart<ToolCallContext<'_, S>> for Parameters<T> {
    fn from_context_part(context: &mut ToolCallContext<'_, S>) -> Result<Self, ErrorData> {
        let arguments = context.arguments.take().unwrap_or_default();
        parse_arguments(arguments)
            .map(Parameters)
            .map_err(|message| {
                ErrorData::invalid_params(format!("{ROUTER_ARGUMENT_ERROR_PREFIX}{message}"), None)
            })
    }
}

/// Arguments naming one gist.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GistIdArg {
    /// The gist: its 32-hex id or a link to it on this Opengist instance.
    pub gist_id: String,
}

/// Checks a `username` argument; `None` stays `None`.
pub(crate) fn check_username(username: Option<&str>) -> Result<Option<String>, String> {
    let Some(name) = username else {
        return Ok(None);
    };
    let name = name.trim();
    let ok = !name.is_empty()
        && name.len() <= 255
        && name != "."
        && name != ".."
        && !name
            .chars()
            .any(|c| c.is_control() || c == '/' || c.is_whitespace());
    if ok {
        Ok(Some(name.to_owned()))
    } else {
        Err("`username` must be an Opengist username (letters, digits, `-`, `_`, `.`), as shown in a gist's `owner`; leave it out for the token owner's own lists.".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Args {
        gist_id: String,
        #[serde(default)]
        include_content: Option<bool>,
        #[serde(default)]
        files: Vec<File>,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct File {
        filename: String,
        content: String,
    }

    fn parse(value: serde_json::Value) -> Result<Args, String> {
        match value {
            serde_json::Value::Object(map) => parse_arguments(map),
            _ => Err("not an object".to_owned()),
        }
    }

    #[test]
    fn type_errors_name_the_argument_and_the_fix() {
        let error = parse(json!({"gist_id": "x", "include_content": {}})).expect_err("map");
        assert!(
            error.starts_with(
                "invalid argument `include_content`: invalid type: map, expected a boolean"
            ),
            "{error}"
        );
        assert!(
            error.ends_with("fix `include_content` and call again."),
            "{error}"
        );
        let nested = parse(json!({"gist_id": "x", "files": [{"filename": "a", "content": 5}]}))
            .expect_err("number");
        assert!(
            nested.starts_with("invalid argument `files[0].content`"),
            "{nested}"
        );
    }

    #[test]
    fn missing_and_unknown_fields_are_named() {
        let missing = parse(json!({})).expect_err("missing");
        assert!(missing.contains("missing field `gist_id`"), "{missing}");
        let unknown = parse(json!({"gist_id": "x", "confirm": true})).expect_err("unknown");
        assert!(unknown.contains("unknown field `confirm`"), "{unknown}");
    }
}
