//! The JSON-RPC method of a request body, read once per request and shared through the
//! request's extensions.
//!
//! The layer that checks the JSON-RPC envelope ([`JsonRpcLayer`](super::wire::JsonRpcLayer))
//! records a [`RequestMethod`] from its one read of it; the layers inside it (the session
//! binding and its caps, the stream bounds) read that record instead of parsing the body
//! again, so they all see the same method. A key given twice counts as a JSON map keeps it:
//! the last one, as `serde_json::Value` does.

use http::Extensions;

/// The `method` of a request's JSON-RPC body; `None` for a body that is not a JSON object or
/// has no string `method` (a response, or no JSON-RPC at all).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestMethod(Option<String>);

impl RequestMethod {
    /// The record of a body whose envelope named `method` (or none).
    pub fn new(method: Option<String>) -> Self {
        Self(method)
    }

    /// Reads the method from `body` without building the rest of it (what a layer mounted
    /// without [`JsonRpcLayer`](super::wire::JsonRpcLayer) outside it does).
    pub fn of(body: &[u8]) -> Self {
        use serde::de::{Deserializer as _, IgnoredAny, MapAccess, Visitor};

        struct Method;
        impl<'de> Visitor<'de> for Method {
            type Value = Option<String>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON-RPC message")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut method = None;
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    if key == "method" {
                        method = map.next_value::<Option<String>>().ok().flatten();
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(method)
            }
        }

        Self(
            serde_json::Deserializer::from_slice(body)
                .deserialize_map(Method)
                .ok()
                .flatten(),
        )
    }

    /// The method, if the body named one.
    pub fn get(&self) -> Option<&str> {
        self.0.as_deref()
    }

    /// The record of this request, if the envelope layer made one.
    pub fn recorded(extensions: &Extensions) -> Option<&Self> {
        extensions.get::<Self>()
    }
}

/// The method of a request whose body is `body`: the record the envelope layer made, else
/// read from the body here (for a layer mounted without that layer outside it). Returns the
/// body to pass on.
pub(crate) async fn method_of(
    extensions: &Extensions,
    body: axum::body::Body,
) -> (axum::body::Body, RequestMethod) {
    if let Some(method) = RequestMethod::recorded(extensions) {
        return (body, method.clone());
    }
    match axum::body::to_bytes(body, super::wire::MAX_BODY_BYTES).await {
        Ok(bytes) => {
            let method = RequestMethod::of(&bytes);
            (axum::body::Body::from(bytes), method)
        }
        // Whatever it is, rmcp answers it.
        Err(_) => (axum::body::Body::empty(), RequestMethod(None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_method_is_read_from_any_body() {
        let of = |body: &[u8]| RequestMethod::of(body).get().map(str::to_owned);
        assert_eq!(
            of(br#"{"params":{"x":[1,2,{"y":null}]},"method":"subscriptions/listen"}"#).as_deref(),
            Some("subscriptions/listen")
        );
        assert_eq!(
            of(br#"{"method":"tools\/call"}"#).as_deref(),
            Some("tools/call")
        );
        assert_eq!(
            of(br#"{"method":"tools/call","method":"subscriptions/listen"}"#).as_deref(),
            Some("subscriptions/listen")
        );
        assert_eq!(of(b"[1,2]"), None);
        assert_eq!(of(b"not json"), None);
        assert_eq!(of(br#"{"id":1,"result":{}}"#), None);
    }
}
