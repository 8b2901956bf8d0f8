//! Which route a guarded call will take, worked out before any call: from what the client
//! declared (its era and elicitation modes), the operator's routes and settings, and what the
//! tool accepts. The guard takes its route from [`Guard::choose`] on every call, and a
//! server's `tools/list` and instructions read the same choice through [`Guard::route_for`],
//! so what a client is told is what its calls get.

use rmcp::RoleServer;
use rmcp::model::{ClientCapabilities, ProtocolVersion, Tool};
use rmcp::service::RequestContext;

use super::page::PageVia;
use super::{ApprovalRoute, Guard};
use crate::page_proof::PageProof;

/// What one client declared, as the guard reads it to choose a route: its protocol era and
/// the elicitation modes it can be asked in on the request at hand.
///
/// On 2025-11-25 only the handshake counts, and only on a connection that can carry a request
/// pushed to the client (stdio, or an HTTP session); on 2026-07-28 each request declares its
/// own capabilities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClientDeclared {
    modern: bool,
    form: bool,
    url: bool,
}

impl ClientDeclared {
    /// What the client behind `context` declared: on 2026-07-28 the request's own
    /// capabilities; on 2025-11-25 the handshake's, when the request came on the session the
    /// handshake opened (a stateless legacy request has none, and nothing can be pushed to it).
    /// A `tools/list` and a `tools/call` of the same client read alike.
    pub fn of(context: &RequestContext<RoleServer>) -> Self {
        let version = context.protocol_version();
        let capabilities = if is_modern(version.as_ref()) {
            context.meta.client_capabilities()
        } else {
            context
                .peer
                .peer_info()
                .map(|info| info.capabilities.clone())
        };
        Self::new(version.as_ref(), capabilities.as_ref())
    }

    /// From the parts: `version` the request's protocol version (`None`: the legacy era), and
    /// `capabilities` what it declared (on 2025-11-25: the handshake's, `None` without a
    /// session). An elicitation capability with neither mode named is form only.
    pub fn new(
        version: Option<&ProtocolVersion>,
        capabilities: Option<&ClientCapabilities>,
    ) -> Self {
        let elicitation = capabilities.and_then(|c| c.elicitation.as_ref());
        Self {
            modern: is_modern(version),
            form: elicitation.is_some_and(|e| e.form.is_some() || e.url.is_none()),
            url: elicitation.is_some_and(|e| e.url.is_some()),
        }
    }

    /// Whether the request is of the 2026-07-28 era (`input_required`, no pushed requests).
    pub fn is_modern(&self) -> bool {
        self.modern
    }

    /// Whether the client can be asked in a form dialog.
    pub fn form(&self) -> bool {
        self.form
    }

    /// Whether the client can be sent a URL to open (URL-mode elicitation).
    pub fn url(&self) -> bool {
        self.url
    }
}

fn is_modern(version: Option<&ProtocolVersion>) -> bool {
    version.is_some_and(|v| *v >= ProtocolVersion::V_2026_07_28)
}

/// What a guarded tool accepts as a yes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ToolNeeds {
    /// Any route the operator allows (the default).
    #[default]
    AnyRoute,
    /// A person's yes in a dialog or on the page, never the token
    /// (`#[guarded(..., person_required)]`).
    Person,
    /// Only a route a model cannot complete: the approval page with a passkey, or CIBA
    /// (`#[guarded(always, verified)]`, or a tool the
    /// operator listed with [`GuardBuilder::verified_tools`](super::GuardBuilder::verified_tools)).
    Verified,
}

/// How a guarded tool's calls will be asked for one client: the route [`Guard::route_for`]
/// worked out, and the sentence that says so ([`RoutePlan::sentence`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RoutePlan {
    /// The approval page, sent to the client as a URL to open (2025-11-25, pushed); the call
    /// waits for the person's decision there.
    PagePushed,
    /// The approval page, sent as `input_required` with its URL (2026-07-28); the client's
    /// retry runs once the person approved.
    PageInputRequired,
    /// The approval page's link in the call's result, for the person to open; an identical
    /// call runs once they approved, never because it was repeated.
    PageLink,
    /// CIBA: the operator's identity provider asks the person on their own device; the call
    /// answers "pending" with a short code, and an identical call runs once they approved.
    Ciba,
    /// A form dialog pushed to the client (2025-11-25).
    FormPushed,
    /// A form dialog sent as `input_required` (2026-07-28).
    FormInputRequired,
    /// The two-call `confirm_token`, because dialogs are switched off (`ELICITATION=false`).
    TokenSwitchedOff,
    /// The two-call `confirm_token`, because the client declared no dialog the guard can use.
    TokenNotDeclared,
    /// Refused: the tool needs a person and this client can be asked by none.
    RefusedNoPerson,
    /// Refused: the tool needs a route a model cannot complete (the page, CIBA), and none is
    /// available.
    RefusedNotVerified,
    /// Refused: none of the operator's routes reaches this client.
    RefusedNoRoute,
}

impl RoutePlan {
    /// Whether a person decides: on the approval page, on their device (CIBA) or in a form
    /// dialog.
    pub fn asks_person(self) -> bool {
        self.on_page()
            || matches!(
                self,
                Self::Ciba | Self::FormPushed | Self::FormInputRequired
            )
    }

    /// Whether the person decides on the approval page, with their passkey.
    pub fn on_page(self) -> bool {
        matches!(
            self,
            Self::PagePushed | Self::PageInputRequired | Self::PageLink
        )
    }

    /// Whether the call takes the two-call `confirm_token`, which proves only a repeated call.
    pub fn takes_token(self) -> bool {
        matches!(self, Self::TokenSwitchedOff | Self::TokenNotDeclared)
    }

    /// Whether every call is refused.
    pub fn refused(self) -> bool {
        matches!(
            self,
            Self::RefusedNoPerson | Self::RefusedNotVerified | Self::RefusedNoRoute
        )
    }

    /// One true sentence (or two) on how a guarded call of `server` is approved on this route,
    /// for a tool's description or the server's instructions; `proof` is what the approval page
    /// asks for ([`Guard::page_proof`]). Only the page, CIBA and form routes speak of a person
    /// deciding; the token's says it proves only a repeated call.
    pub fn sentence(self, server: &str, proof: PageProof) -> String {
        let page = format!(
            "asks the person to approve it on its approval page, with {}",
            proof.theirs()
        );
        const TOKEN: &str = "the first call changes nothing and returns a confirm_token with what the call would do; repeating the same call with exactly the same arguments plus that token does it. That token proves only that the call was made twice, not that anyone approved: tell the person what the call will do before you repeat it.";
        match self {
            Self::PagePushed => format!(
                "{server} {page}: your client is sent the page's link to open for them, the call waits for their decision there, and it goes ahead only on their yes."
            ),
            Self::PageInputRequired => format!(
                "{server} {page}: the call returns input_required with the page's link for your client to open for them, and the client's retry goes ahead only once they approved there."
            ),
            Self::PageLink => format!(
                "{server} {page}: the first call changes nothing and returns the page's link. Ask the person to open the link and approve; then repeat the same call with exactly the same arguments. Opening the link approves nothing, and repeating the call before their yes changes nothing."
            ),
            Self::Ciba => format!(
                "{server} asks the person to approve it on their own device, through their identity provider: the first call changes nothing and returns a short code the device shows too; once they approved there, repeat the same call with exactly the same arguments. Repeating it before their yes changes nothing."
            ),
            Self::FormPushed => format!(
                "{server} asks the person at the client in a dialog it opens through the client, and only their answer there lets the call go ahead. If the client cannot show such a dialog, the call changes nothing and returns a confirm_token instead, with what the call would do; repeating the same call with exactly the same arguments plus that token does it. That token proves only that the call was made twice, not that anyone approved: tell the person what the call will do before you repeat it."
            ),
            Self::FormInputRequired => format!(
                "{server} asks the person at the client in a dialog: the call returns input_required with the question for the client to show them, and the client's retry goes ahead only on their yes."
            ),
            Self::TokenSwitchedOff => format!(
                "{server} asks no person (ELICITATION=false), so it takes two calls: {TOKEN}"
            ),
            Self::TokenNotDeclared => format!(
                "This client declared no dialog {server} can ask a person in, so it takes two calls: {TOKEN}"
            ),
            Self::RefusedNoPerson => format!(
                "{server} runs it only after a person's yes, and this client declared no dialog a person could give it in: the call is refused and changes nothing."
            ),
            Self::RefusedNotVerified => format!(
                "{server} runs it only after the person approves it on its approval page with a passkey, or on their device through their identity provider, and neither is available here: the call is refused and changes nothing, naming the settings that enable one."
            ),
            Self::RefusedNoRoute => format!(
                "None of {server}'s approval routes can reach this client: the call is refused and changes nothing."
            ),
        }
    }
}

/// The route a call takes, as the guard runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Choice {
    /// CIBA: the person's identity provider asks them on their device.
    Ciba,
    /// The approval page, shown this way.
    Page(PageVia),
    /// The form dialog, in the client's era.
    Form,
    /// No dialog: the token, or the refusal of a tool that needs a person; `switched_off`
    /// when `ELICITATION=false` is why.
    Token { switched_off: bool },
}

impl Guard {
    /// The route a call of a tool takes for `client`: the first of the operator's routes that
    /// can reach it and that the tool accepts (`verified`: only the page and CIBA); `ciba`
    /// says whether CIBA can ask this caller, `page` whether the approval page is ready for
    /// them. `None` when no route can.
    pub(super) fn choose(
        &self,
        client: &ClientDeclared,
        verified: bool,
        ciba: bool,
        page: bool,
    ) -> Option<Choice> {
        self.routes(page).into_iter().find_map(|route| match route {
            ApprovalRoute::Ciba if ciba => Some(Choice::Ciba),
            ApprovalRoute::Page if page => Some(Choice::Page(match (client.url, client.modern) {
                (true, true) => PageVia::InputRequired,
                (true, false) => PageVia::Pushed,
                (false, _) => PageVia::Link,
            })),
            ApprovalRoute::Form if !verified && self.inner.elicitation && client.form => {
                Some(Choice::Form)
            }
            ApprovalRoute::Token if !verified => Some(Choice::Token {
                switched_off: !self.inner.elicitation,
            }),
            _ => None,
        })
    }

    /// How calls of `tool`, which accepts `needs`, will be asked for `client`
    /// ([`ClientDeclared::of`] a `tools/list` or `initialize` request's context) calling as
    /// `principal` ([`Guard::principal_of`] the same request's caller): the same choice the
    /// guard makes when the call comes, for this moment's settings (the approval page counts
    /// for a principal once a passkey is enrolled for them, or a login applies). A tool the
    /// operator listed as verified
    /// ([`GuardBuilder::verified_tools`](super::GuardBuilder::verified_tools)) needs the page
    /// whatever `needs` says.
    pub fn route_for(
        &self,
        client: &ClientDeclared,
        principal: &str,
        tool: &str,
        needs: ToolNeeds,
    ) -> RoutePlan {
        let verified = needs == ToolNeeds::Verified || self.is_verified(tool);
        let person = verified || needs == ToolNeeds::Person;
        // Whether this caller has a subject is known only per call; in OAuth mode, the only
        // one where CIBA is configured, every caller has one.
        let ciba = self.backchannel().is_some();
        let page = self.page_for(principal).is_some();
        match self.choose(client, verified, ciba, page) {
            Some(Choice::Ciba) => RoutePlan::Ciba,
            Some(Choice::Page(PageVia::Pushed)) => RoutePlan::PagePushed,
            Some(Choice::Page(PageVia::InputRequired)) => RoutePlan::PageInputRequired,
            Some(Choice::Page(PageVia::Link)) => RoutePlan::PageLink,
            Some(Choice::Form) if client.modern => RoutePlan::FormInputRequired,
            Some(Choice::Form) => RoutePlan::FormPushed,
            Some(Choice::Token { .. }) if person => RoutePlan::RefusedNoPerson,
            Some(Choice::Token { switched_off: true }) => RoutePlan::TokenSwitchedOff,
            Some(Choice::Token {
                switched_off: false,
            }) => RoutePlan::TokenNotDeclared,
            None if verified => RoutePlan::RefusedNotVerified,
            None => RoutePlan::RefusedNoRoute,
        }
    }
}

impl Guard {
    /// Rewrites a server's `tools/list` for the tools the operator listed as verified
    /// ([`GuardBuilder::verified_tools`](super::GuardBuilder::verified_tools)): no two-call
    /// token can clear them, so their input schema loses `confirm_token`, and their `_meta`
    /// carries [`PERSON_REQUIRED_META_KEY`](super::PERSON_REQUIRED_META_KEY), as a
    /// `#[guarded(always, verified)]` tool's does. Other tools, and a listed tool that is not
    /// guarded (it offers no `confirm_token`), are left as they are: serving refuses to start
    /// with the latter.
    pub fn mark_verified(&self, tools: &mut [Tool]) {
        let takes_token = |tool: &Tool| {
            tool.input_schema
                .get("properties")
                .and_then(|p| p.get(crate::CONFIRM_TOKEN_ARG))
                .is_some()
        };
        for tool in tools
            .iter_mut()
            .filter(|tool| self.is_verified(&tool.name) && takes_token(tool))
        {
            tool.input_schema = crate::call::without_confirm_token(&tool.input_schema);
            let mut meta = tool.meta.take().unwrap_or_default();
            meta.0.insert(
                super::PERSON_REQUIRED_META_KEY.to_owned(),
                serde_json::Value::Bool(true),
            );
            tool.meta = Some(meta);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::Arc;

    use crate::page_proof::PageProof;

    use rmcp::model::{
        ClientCapabilities, ElicitationCapability, FormElicitationCapability, ProtocolVersion,
        Tool, UrlElicitationCapability,
    };

    use super::{ClientDeclared, RoutePlan, ToolNeeds};
    use crate::approval_record::{ApprovalPages, RecordId};
    use crate::engine::{ApprovalRoute, Guard, GuardBuilder};

    /// A page with a passkey enrolled (`ready`) or not.
    struct Page(bool);

    impl ApprovalPages for Page {
        fn url<'a>(
            &'a self,
            id: &'a RecordId,
        ) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>> {
            Box::pin(async move { Ok(format!("http://localhost:1/approve/{id}")) })
        }
        fn ready(&self) -> bool {
            self.0
        }
        fn changed<'a>(
            &'a self,
            _id: &'a RecordId,
        ) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
            Box::pin(async {})
        }
    }

    /// A page with passkeys enrolled for these principals only.
    struct People(&'static [&'static str]);

    impl ApprovalPages for People {
        fn url<'a>(
            &'a self,
            id: &'a RecordId,
        ) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>> {
            Box::pin(async move { Ok(format!("http://localhost:1/approve/{id}")) })
        }
        fn ready(&self) -> bool {
            !self.0.is_empty()
        }
        fn ready_for(&self, principal: &str) -> bool {
            self.0.contains(&principal)
        }
        fn changed<'a>(
            &'a self,
            _id: &'a RecordId,
        ) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
            Box::pin(async {})
        }
    }

    #[test]
    fn the_page_is_offered_only_to_a_principal_with_a_passkey() {
        let guard = Guard::builder("srv")
            .approval_pages(Arc::new(People(&["token:alice"])))
            .verified_tools(["delete"])
            .build();
        let python = ClientDeclared::new(MODERN, Some(&caps(true, true)));
        let none = ClientDeclared::new(MODERN, Some(&ClientCapabilities::default()));
        // alice has a passkey: the page, the way her client can open it.
        assert_eq!(
            guard.route_for(&python, "token:alice", "edit", ToolNeeds::AnyRoute),
            RoutePlan::PageInputRequired
        );
        assert_eq!(
            guard.route_for(&none, "token:alice", "edit", ToolNeeds::AnyRoute),
            RoutePlan::PageLink
        );
        // bob has none: the next of the default routes, as if there were no page.
        assert_eq!(
            guard.route_for(&python, "token:bob", "edit", ToolNeeds::AnyRoute),
            RoutePlan::FormInputRequired
        );
        assert_eq!(
            guard.route_for(&none, "token:bob", "edit", ToolNeeds::AnyRoute),
            RoutePlan::TokenNotDeclared
        );
        // A verified tool: the page for alice, refused for bob.
        assert_eq!(
            guard.route_for(&python, "token:alice", "delete", ToolNeeds::AnyRoute),
            RoutePlan::PageInputRequired
        );
        assert_eq!(
            guard.route_for(&python, "token:bob", "delete", ToolNeeds::AnyRoute),
            RoutePlan::RefusedNotVerified
        );
        assert!(guard.is_verified("delete") && !guard.is_verified("edit"));
        assert_eq!(guard.verified_tools(), ["delete".to_owned()]);
    }

    #[test]
    fn a_verified_tool_is_listed_without_the_token_and_as_needing_a_person() {
        let schema = crate::call::with_confirm_token(&serde_json::Map::from_iter([(
            "type".to_owned(),
            serde_json::json!("object"),
        )]));
        let plain = std::sync::Arc::new(serde_json::Map::new());
        let mut tools = vec![
            Tool::new("delete", "Delete.", schema.clone()),
            Tool::new("edit", "Edit.", schema),
            Tool::new("read", "Read.", plain),
        ];
        let guard = Guard::builder("srv")
            .verified_tools(["delete", "read"])
            .build();
        guard.mark_verified(&mut tools);
        // A listed tool that is not guarded is not marked as if it were.
        assert!(tools[2].meta.is_none());
        let properties = |tool: &Tool| tool.input_schema.get("properties").cloned();
        assert_eq!(properties(&tools[0]), Some(serde_json::json!({})));
        assert_eq!(
            tools[0]
                .meta
                .as_ref()
                .and_then(|m| m.0.get(crate::PERSON_REQUIRED_META_KEY)),
            Some(&serde_json::Value::Bool(true))
        );
        // Positive control: the tool the operator did not list keeps its token.
        assert!(
            properties(&tools[1]).is_some_and(|p| p.get(crate::CONFIRM_TOKEN_ARG).is_some()),
            "{:?}",
            tools[1].input_schema
        );
        assert!(tools[1].meta.is_none());
    }

    fn with_page(ready: bool) -> GuardBuilder {
        Guard::builder("srv").approval_pages(Arc::new(Page(ready)))
    }

    fn caps(form: bool, url: bool) -> ClientCapabilities {
        let mut elicitation = ElicitationCapability::default();
        if form {
            elicitation.form = Some(FormElicitationCapability::default());
        }
        if url {
            elicitation.url = Some(UrlElicitationCapability::default());
        }
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(elicitation);
        capabilities
    }

    const MODERN: Option<&ProtocolVersion> = Some(&ProtocolVersion::V_2026_07_28);
    const LEGACY: Option<&ProtocolVersion> = Some(&ProtocolVersion::V_2025_11_25);

    /// The clients of the table: none declared, an empty `{}` (form only), form, form and
    /// URL (the Python SDK with a callback), URL only; and a legacy request without a session.
    fn clients() -> Vec<(&'static str, ClientDeclared)> {
        let mut all = Vec::new();
        for (era, version) in [("legacy", LEGACY), ("modern", MODERN)] {
            all.push((
                era,
                ClientDeclared::new(version, Some(&ClientCapabilities::default())),
            ));
            let mut empty = ClientCapabilities::default();
            empty.elicitation = Some(ElicitationCapability::default());
            all.push((era, ClientDeclared::new(version, Some(&empty))));
            for (form, url) in [(true, false), (true, true), (false, true)] {
                all.push((era, ClientDeclared::new(version, Some(&caps(form, url)))));
            }
        }
        all.push(("legacy", ClientDeclared::new(None, None)));
        all
    }

    #[test]
    fn what_a_client_declared_is_read_as_the_guard_reads_it() {
        let none = ClientDeclared::new(LEGACY, Some(&ClientCapabilities::default()));
        assert!(!none.form() && !none.url() && !none.is_modern());
        let mut empty = ClientCapabilities::default();
        empty.elicitation = Some(ElicitationCapability::default());
        let empty = ClientDeclared::new(MODERN, Some(&empty));
        assert!(
            empty.form() && !empty.url() && empty.is_modern(),
            "{{}} is form only"
        );
        let both = ClientDeclared::new(LEGACY, Some(&caps(true, true)));
        assert!(both.form() && both.url());
        let url = ClientDeclared::new(LEGACY, Some(&caps(false, true)));
        assert!(!url.form() && url.url());
        assert_eq!(ClientDeclared::new(None, None), ClientDeclared::default());
    }

    #[test]
    fn without_a_page_a_dialog_client_gets_the_form_and_any_other_the_token() {
        let guard = Guard::builder("srv").build();
        for (era, client) in clients() {
            let plan = guard.route_for(&client, "local", "t", ToolNeeds::AnyRoute);
            let expected = match (client.form(), era) {
                (true, "modern") => RoutePlan::FormInputRequired,
                (true, _) => RoutePlan::FormPushed,
                (false, _) => RoutePlan::TokenNotDeclared,
            };
            assert_eq!(plan, expected, "{era} {client:?}");
            // A tool that needs a person is refused where the token would be.
            let person = guard.route_for(&client, "local", "t", ToolNeeds::Person);
            if plan.takes_token() {
                assert_eq!(person, RoutePlan::RefusedNoPerson, "{client:?}");
            } else {
                assert_eq!(person, plan, "{client:?}");
            }
            assert_eq!(
                guard.route_for(&client, "local", "t", ToolNeeds::Verified),
                RoutePlan::RefusedNotVerified
            );
        }
        // ELICITATION=false: the token for everyone, saying why.
        let off = Guard::builder("srv").elicitation(false).build();
        for (_, client) in clients() {
            assert_eq!(
                off.route_for(&client, "local", "t", ToolNeeds::AnyRoute),
                RoutePlan::TokenSwitchedOff,
                "{client:?}"
            );
        }
    }

    #[test]
    fn with_a_passkey_enrolled_every_client_gets_the_page_the_way_it_can_open_it() {
        let guard = with_page(true).build();
        for (era, client) in clients() {
            let expected = match (client.url(), era) {
                (true, "modern") => RoutePlan::PageInputRequired,
                (true, _) => RoutePlan::PagePushed,
                (false, _) => RoutePlan::PageLink,
            };
            for needs in [ToolNeeds::AnyRoute, ToolNeeds::Person, ToolNeeds::Verified] {
                assert_eq!(
                    guard.route_for(&client, "local", "t", needs),
                    expected,
                    "{client:?}"
                );
            }
        }
        // No passkey yet: as without a page; a verified tool is refused.
        let bare = with_page(false).build();
        let python = ClientDeclared::new(LEGACY, Some(&caps(true, true)));
        assert_eq!(
            bare.route_for(&python, "local", "t", ToolNeeds::AnyRoute),
            RoutePlan::FormPushed
        );
        assert_eq!(
            bare.route_for(&python, "local", "t", ToolNeeds::Verified),
            RoutePlan::RefusedNotVerified
        );
    }

    #[test]
    fn the_operators_order_and_verified_list_narrow_the_route() {
        let python = ClientDeclared::new(MODERN, Some(&caps(true, true)));
        let none = ClientDeclared::new(MODERN, Some(&ClientCapabilities::default()));
        let guard = with_page(true)
            .approval_routes(vec![ApprovalRoute::Form, ApprovalRoute::Page])
            .verified_tools(["delete"])
            .build();
        assert_eq!(
            guard.route_for(&python, "local", "edit", ToolNeeds::AnyRoute),
            RoutePlan::FormInputRequired,
            "the form first"
        );
        assert_eq!(
            guard.route_for(&python, "local", "delete", ToolNeeds::AnyRoute),
            RoutePlan::PageInputRequired,
            "a listed tool skips the form"
        );
        assert_eq!(
            guard.route_for(&none, "local", "edit", ToolNeeds::AnyRoute),
            RoutePlan::PageLink
        );
        let token_only = with_page(true)
            .approval_routes(vec![ApprovalRoute::Token])
            .build();
        assert_eq!(
            token_only.route_for(&python, "local", "edit", ToolNeeds::AnyRoute),
            RoutePlan::TokenNotDeclared
        );
        assert_eq!(
            token_only.route_for(&python, "local", "edit", ToolNeeds::Verified),
            RoutePlan::RefusedNotVerified
        );
        let form_only = Guard::builder("srv")
            .approval_routes(vec![ApprovalRoute::Form])
            .build();
        assert_eq!(
            form_only.route_for(&none, "local", "edit", ToolNeeds::AnyRoute),
            RoutePlan::RefusedNoRoute
        );
    }

    #[test]
    fn only_a_route_a_person_decides_says_a_person_is_asked() {
        let all = [
            RoutePlan::PagePushed,
            RoutePlan::PageInputRequired,
            RoutePlan::PageLink,
            RoutePlan::FormPushed,
            RoutePlan::FormInputRequired,
            RoutePlan::TokenSwitchedOff,
            RoutePlan::TokenNotDeclared,
            RoutePlan::RefusedNoPerson,
            RoutePlan::RefusedNotVerified,
            RoutePlan::RefusedNoRoute,
        ];
        for plan in all {
            let text = plan.sentence("srv", PageProof::Passkey);
            let kinds = [plan.asks_person(), plan.takes_token(), plan.refused()];
            assert_eq!(kinds.iter().filter(|k| **k).count(), 1, "{plan:?}");
            assert_eq!(
                text.contains("asks the person"),
                plan.asks_person(),
                "{plan:?}: {text}"
            );
            assert_eq!(
                text.contains("passkey"),
                plan.on_page() || plan == RoutePlan::RefusedNotVerified,
                "{text}"
            );
            assert_eq!(
                text.contains("approval page"),
                plan.on_page() || plan == RoutePlan::RefusedNotVerified,
                "{text}"
            );
            assert_eq!(
                text.contains("dialog it opens") || text.contains("in a dialog:"),
                matches!(plan, RoutePlan::FormPushed | RoutePlan::FormInputRequired),
                "{text}"
            );
            if plan.takes_token() {
                assert!(
                    text.contains("two calls") && text.contains("confirm_token"),
                    "{text}"
                );
                assert!(text.contains("not that anyone approved"), "{text}");
            }
            if plan.refused() {
                assert!(text.contains("refused and changes nothing"), "{text}");
            }
            assert!(
                !text.contains("never try") && !text.contains("simulate"),
                "{text}"
            );
        }
        assert!(
            RoutePlan::TokenSwitchedOff
                .sentence("srv", PageProof::Passkey)
                .contains("ELICITATION=false")
        );
        assert!(
            !RoutePlan::TokenNotDeclared
                .sentence("srv", PageProof::Passkey)
                .contains("ELICITATION")
        );
        let link = RoutePlan::PageLink.sentence("srv", PageProof::Passkey);
        assert!(
            link.contains("Ask the person to open the link and approve"),
            "{link}"
        );
        assert!(
            RoutePlan::PageInputRequired
                .sentence("srv", PageProof::Passkey)
                .contains("input_required")
        );
        assert!(
            RoutePlan::FormInputRequired
                .sentence("srv", PageProof::Passkey)
                .contains("input_required")
        );
        assert!(
            !RoutePlan::FormPushed
                .sentence("srv", PageProof::Passkey)
                .contains("input_required")
        );
    }
}
