//! Tool schemas with plain integer bounds: schemars marks Rust's unsigned integers with
//! `"format": "uint"`, `"uint32"`, `"uint64"` (and `uint8`, `uint16`), which JSON Schema does not
//! define; the TypeScript SDK prints a warning for each. This replaces each such format with
//! the bounds it stands for (`minimum: 0`, and `maximum` where it fits a JSON number exactly),
//! so every client reads the same constraint.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::JsonObject;
use serde_json::Value;

/// Rewrites every tool's input and output schema in `router`.
pub(crate) fn plain_integer_bounds<S>(router: &mut ToolRouter<S>) {
    for route in router.map.values_mut() {
        let input = Arc::make_mut(&mut route.attr.input_schema);
        rewrite_object(input);
        if let Some(output) = route.attr.output_schema.as_mut() {
            rewrite_object(Arc::make_mut(output));
        }
    }
}

/// The largest integer a JSON number (an IEEE double) holds exactly: 2^53 - 1.
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

fn rewrite_object(object: &mut JsonObject) {
    if let Some(Value::String(format)) = object.get("format") {
        let maximum = match format.as_str() {
            "uint8" => Some(Some(u64::from(u8::MAX))),
            "uint16" => Some(Some(u64::from(u16::MAX))),
            "uint32" => Some(Some(u64::from(u32::MAX))),
            // u64/usize: a maximum above 2^53 is no exact JSON number; `minimum` says enough.
            "uint64" | "uint" => Some(None),
            _ => None,
        };
        if let Some(maximum) = maximum {
            object.remove("format");
            object.entry("minimum").or_insert_with(|| Value::from(0u64));
            if let Some(maximum) = maximum.filter(|m| *m <= MAX_SAFE_INTEGER) {
                object
                    .entry("maximum")
                    .or_insert_with(|| Value::from(maximum));
            }
        }
    }
    for value in object.values_mut() {
        rewrite_value(value);
    }
}

fn rewrite_value(value: &mut Value) {
    match value {
        Value::Object(object) => rewrite_object(object),
        Value::Array(items) => items.iter_mut().for_each(rewrite_value),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unsigned_formats_become_bounds_and_other_formats_stay() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "format": "uint32", "minimum": 0},
                "b": {"type": ["integer", "null"], "format": "uint"},
                "c": {"type": "integer", "format": "uint64", "minimum": 0},
                "d": {"type": "integer", "format": "uint8", "minimum": 1},
                "e": {"type": "string", "format": "date-time"},
                "f": {"anyOf": [{"type": "integer", "format": "uint16"}, {"type": "null"}]}
            }
        });
        let Value::Object(object) = &mut schema else {
            unreachable!()
        };
        rewrite_object(object);
        assert_eq!(
            schema["properties"],
            json!({
                "a": {"type": "integer", "minimum": 0, "maximum": 4_294_967_295u64},
                "b": {"type": ["integer", "null"], "minimum": 0},
                "c": {"type": "integer", "minimum": 0},
                "d": {"type": "integer", "minimum": 1, "maximum": 255},
                "e": {"type": "string", "format": "date-time"},
                "f": {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 65535}, {"type": "null"}]}
            })
        );
    }
}
