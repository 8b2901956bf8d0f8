//! [`GuardCall`]: what the guard needs to know about one tool call, extracted from rmcp.

use std::borrow::Cow;

use rmcp::RoleServer;
use rmcp::handler::server::common::FromContextPart;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::InputResponses;
use rmcp::service::RequestContext;

use crate::audit::AuditSlot;

/// The name of the argument that carries a two-call confirmation token.
///
/// `#[guarded]` adds it to the tool's input schema as an optional string (so a model that is
/// handed a token knows where to quote it); an argument type need not declare it, and one
/// that does keeps its own description. The guard takes it out of the raw arguments before
/// `Parameters<A>` deserializes them, so `A` never sees it: an `A` with
/// `#[serde(deny_unknown_fields)]` works without declaring it (and one that declares it reads
/// `None`).
pub const CONFIRM_TOKEN_ARG: &str = "confirm_token";

/// What the schema tells a model about [`CONFIRM_TOKEN_ARG`].
pub const CONFIRM_TOKEN_DESCRIPTION: &str = "Only when a previous call returned a confirm_token: quote it here, with exactly the same other arguments.";

/// `schema` with an optional `confirm_token` string property, unless it has one.
pub(crate) fn with_confirm_token(
    schema: &rmcp::model::JsonObject,
) -> std::sync::Arc<rmcp::model::JsonObject> {
    let mut schema = schema.clone();
    let properties = schema
        .entry("properties")
        .or_insert_with(|| serde_json::Value::Object(Default::default()));
    if let serde_json::Value::Object(properties) = properties
        && !properties.contains_key(CONFIRM_TOKEN_ARG)
    {
        properties.insert(
            CONFIRM_TOKEN_ARG.to_owned(),
            serde_json::json!({
                "type": ["string", "null"],
                "description": CONFIRM_TOKEN_DESCRIPTION,
            }),
        );
    }
    std::sync::Arc::new(schema)
}

/// `schema` without the `confirm_token` property, nor in `required`: the schema of a tool no
/// token can clear.
pub(crate) fn without_confirm_token(
    schema: &rmcp::model::JsonObject,
) -> std::sync::Arc<rmcp::model::JsonObject> {
    let mut schema = schema.clone();
    if let Some(serde_json::Value::Object(properties)) = schema.get_mut("properties") {
        properties.remove(CONFIRM_TOKEN_ARG);
    }
    if let Some(serde_json::Value::Array(required)) = schema.get_mut("required") {
        required.retain(|name| name != CONFIRM_TOKEN_ARG);
    }
    std::sync::Arc::new(schema)
}

/// One tool call as the guard sees it: the request context (era, capabilities, the peer to
/// ask), the tool's name, the `requestState` and `inputResponses` of a 2026-07-28 retry, and
/// a quoted `confirm_token`.
///
/// It is an rmcp extractor: put it before `Parameters<..>` in a handler's arguments (the
/// `#[guarded]` macro does), because it peeks at the raw arguments that `Parameters` consumes.
pub struct GuardCall {
    pub(crate) context: RequestContext<RoleServer>,
    pub(crate) tool: Cow<'static, str>,
    pub(crate) request_state: Option<String>,
    pub(crate) input_responses: Option<InputResponses>,
    pub(crate) confirm_token: Option<String>,
    pub(crate) person_required: bool,
    pub(crate) verified: bool,
    pub(crate) audit: AuditSlot,
    /// When the guard first saw the call: an identical call that used its approval after this
    /// was made at the same time as this one.
    pub(crate) began: std::time::Instant,
}

impl GuardCall {
    /// Assembles a call by hand, for handlers that do not use the extractor.
    pub fn new(
        context: RequestContext<RoleServer>,
        tool: impl Into<Cow<'static, str>>,
        request_state: Option<String>,
        input_responses: Option<InputResponses>,
        confirm_token: Option<String>,
    ) -> Self {
        Self {
            context,
            tool: tool.into(),
            request_state,
            input_responses,
            confirm_token,
            person_required: false,
            verified: false,
            audit: AuditSlot::default(),
            began: std::time::Instant::now(),
        }
    }

    /// Marks the call as one that runs only after a person's yes in a dialog: where no dialog
    /// can be shown it is refused, saying why and what would let it run, and a quoted
    /// `confirm_token` is never accepted. `#[guarded(..., person_required)]` calls this.
    pub fn require_person(mut self) -> Self {
        self.person_required = true;
        self
    }

    /// Marks the call as one that runs only after a yes a model cannot give: the approval
    /// page with a passkey. No form dialog and no token will do; with no page ready it is
    /// refused, naming what enables one. `#[guarded(always, verified)]` calls this.
    pub fn require_verified(mut self) -> Self {
        self.verified = true;
        self.person_required = true;
        self
    }

    /// Whether the call runs only after a person's yes ([`require_person`](Self::require_person)).
    pub fn person_required(&self) -> bool {
        self.person_required
    }

    /// Where the guard leaves what the audit log records about this call once it is cleared;
    /// `#[guarded]` takes it after the handler ran, for `Guard::record_call`.
    pub(crate) fn audit_slot(&self) -> AuditSlot {
        self.audit.clone()
    }

    /// The name of the tool being called.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The request context.
    pub fn context(&self) -> &RequestContext<RoleServer> {
        &self.context
    }

    /// The `requestState` a 2026-07-28 retry echoed, if any.
    pub fn request_state(&self) -> Option<&str> {
        self.request_state.as_deref()
    }

    /// The `inputResponses` a 2026-07-28 retry carries, if any.
    pub fn input_responses(&self) -> Option<&InputResponses> {
        self.input_responses.as_ref()
    }
}

impl<S> FromContextPart<ToolCallContext<'_, S>> for GuardCall {
    fn from_context_part(context: &mut ToolCallContext<'_, S>) -> Result<Self, rmcp::ErrorData> {
        // A string (or null) is taken out, so the arguments' own type never sees it
        // (`deny_unknown_fields` included); any other value is left for `Parameters` to refuse.
        let mut confirm_token = None;
        if let Some(arguments) = context.arguments.as_mut()
            && matches!(
                arguments.get(CONFIRM_TOKEN_ARG),
                Some(serde_json::Value::String(_) | serde_json::Value::Null)
            )
            && let Some(serde_json::Value::String(token)) = arguments.remove(CONFIRM_TOKEN_ARG)
        {
            confirm_token = Some(token);
        }
        Ok(Self {
            context: context.request_context.clone(),
            tool: context.name.clone(),
            request_state: context.request_state.take(),
            input_responses: context.input_responses.take(),
            confirm_token,
            person_required: false,
            verified: false,
            audit: AuditSlot::default(),
            began: std::time::Instant::now(),
        })
    }
}
