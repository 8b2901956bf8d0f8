//! The approval routes (the page, CIBA, the form dialog, the token) and which one a call takes: the
//! operator's order, narrowed by what the client declared and what the tool allows.

use super::plan::{Choice, ClientDeclared};
use super::token::NoDialog;
use super::{Guard, Interruption, InterruptionKind};
use crate::approval::ApprovedBy;
use crate::audit::Route;
use crate::call::{CONFIRM_TOKEN_ARG, GuardCall};
use crate::engine::Caller;
use crate::target::Target;

/// One way the guard may ask, in the order the operator sets (`<PREFIX>_APPROVAL_ROUTES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalRoute {
    /// The approval page: a server-held record the person decides with their passkey. A model
    /// cannot complete it.
    Page,
    /// The form dialog the client shows (pushed on 2025-11-25, `input_required` on
    /// 2026-07-28). It proves the client showed a dialog and something answered it.
    Form,
    /// The two-call `confirm_token`. It proves only that the same call was made twice.
    Token,
    /// CIBA: the operator's identity provider asks the person on their own device, and the
    /// token it returns must name exactly the record. Only in OAuth mode, where the caller's
    /// subject is known. A model cannot complete it.
    Ciba,
}

impl ApprovalRoute {
    /// The route's name in the setting: `page`, `form`, `token`, `ciba`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Page => "page",
            Self::Form => "form",
            Self::Token => "token",
            Self::Ciba => "ciba",
        }
    }

    /// Reads a comma-separated list such as `page,form,token`; the error names the word not
    /// understood.
    pub fn parse_list(text: &str) -> Result<Vec<Self>, String> {
        let mut routes = Vec::new();
        for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let route = match word.to_ascii_lowercase().as_str() {
                "page" => Self::Page,
                "form" => Self::Form,
                "token" => Self::Token,
                "ciba" => Self::Ciba,
                _ => {
                    return Err(format!(
                        "`{word}` is not a route; use a comma-separated list of page, ciba, form and token"
                    ));
                }
            };
            if !routes.contains(&route) {
                routes.push(route);
            }
        }
        if routes.is_empty() {
            return Err(
                "no route is named; use a comma-separated list of page, ciba, form and token"
                    .to_owned(),
            );
        }
        Ok(routes)
    }
}

/// The route a decision took: the token path says so in its result; otherwise the era's
/// dialog route.
fn route_of(modern: bool, result: &Result<ApprovedBy, Interruption>) -> Route {
    if matches!(result, Ok(ApprovedBy::Page))
        || matches!(result, Err(i) if i.kind == InterruptionKind::ApprovalPending)
    {
        return Route::Page;
    }
    if let Err(i) = result
        && i.kind == InterruptionKind::PersonRequired
    {
        return if modern {
            Route::InputRequired
        } else {
            Route::Dialog
        };
    }
    match result {
        Ok(ApprovedBy::Token) => Route::Token,
        Err(i)
            if matches!(
                i.kind,
                InterruptionKind::TokenIssued | InterruptionKind::TokenRefused
            ) =>
        {
            Route::Token
        }
        _ if modern => Route::InputRequired,
        _ => Route::Dialog,
    }
}

impl Guard {
    /// Asks once about `target`; `changed` says the target changed since it was last shown.
    pub(super) async fn ask<T: Target>(
        &self,
        call: &GuardCall,
        target: &T,
        changed: bool,
    ) -> (Route, Result<ApprovedBy, Interruption>) {
        let client = ClientDeclared::of(&call.context);
        let modern = client.is_modern();
        let verified = call.verified || self.is_verified(&call.tool);
        let ciba = self.ciba_reaches(&call.context);
        // The page is offered to a principal who can approve there (a passkey enrolled for
        // them, or a login); anyone else gets the next of the operator's routes.
        let principal = self.principal_of(&Caller::of(&call.context));
        let page = self.page_for(&principal).is_some();
        let choice = self.choose(&client, verified, ciba, page);
        let result = match choice {
            Some(Choice::Ciba) => self.ciba_path(call, target, changed).await,
            Some(Choice::Page(via)) => Some(self.page_path(call, target, via, changed).await),
            Some(Choice::Form) if modern => Some(self.input_required_path(call, target).await),
            Some(Choice::Form) => Some(self.push_path(call, target, changed).await),
            Some(Choice::Token { switched_off }) => {
                let why = if switched_off {
                    NoDialog::SwitchedOff
                } else {
                    NoDialog::NotDeclared
                };
                Some(self.no_dialog(call, target, why).await)
            }
            None => None,
        };
        let result = match result {
            Some(result) => result,
            None if verified => Err(self.verified_unavailable(call, &principal, page)),
            None => Err(self.no_route(call, page)),
        };
        let route = if choice == Some(Choice::Ciba) {
            Route::Ciba
        } else {
            route_of(modern, &result)
        };
        (route, result)
    }

    /// Whether `tool` takes only a route a model cannot complete because the operator listed
    /// it ([`GuardBuilder::verified_tools`](super::GuardBuilder::verified_tools)); a tool
    /// verified by its attribute says so on each call instead.
    pub fn is_verified(&self, tool: &str) -> bool {
        self.inner.verified_tools.iter().any(|t| t == tool)
    }

    /// The tools the operator listed as verified
    /// ([`GuardBuilder::verified_tools`](super::GuardBuilder::verified_tools)).
    pub fn verified_tools(&self) -> &[String] {
        &self.inner.verified_tools
    }

    /// The routes in the operator's order; by default `page,form,token` with a page ready for
    /// the caller, else `form,token`.
    pub(super) fn routes(&self, page: bool) -> Vec<ApprovalRoute> {
        match &self.inner.routes {
            Some(routes) => routes.clone(),
            None if page => vec![
                ApprovalRoute::Page,
                ApprovalRoute::Form,
                ApprovalRoute::Token,
            ],
            None => vec![ApprovalRoute::Form, ApprovalRoute::Token],
        }
    }

    /// The refusal of a tool that only a route a model cannot complete may clear, when none
    /// can be used.
    fn verified_unavailable(&self, call: &GuardCall, principal: &str, page: bool) -> Interruption {
        let server = &self.inner.server;
        let tool = &call.tool;
        let (why, setup) = if page {
            (
                "the operator's routes leave the approval page out".to_owned(),
                self.inner.page_setup.clone(),
            )
        } else if self.inner.pages.is_some() {
            (
                format!("no passkey is enrolled for `{principal}`, who called"),
                format!(
                    "the operator enrols one for `{principal}` on the server's machine with `{}`",
                    crate::enrol_command(server, principal)
                ),
            )
        } else {
            (
                "it has no approval page".to_owned(),
                self.inner.page_setup.clone(),
            )
        };
        tracing::info!(tool = %tool, "a verified tool and no route a model cannot complete: refusing");
        Interruption::text(
            InterruptionKind::VerifiedUnavailable,
            format!(
                "Nothing was changed: {server} runs `{tool}` only after the person approves it on its approval page with a passkey, or on their device through their identity provider (CIBA), a yes a model cannot give; no dialog and no {CONFIRM_TOKEN_ARG} will do, and {why}{ciba}. To enable the page: {setup}.{ciba_setup}",
                ciba = self.ciba_unavailable(),
                ciba_setup = self.ciba_setup_sentence(),
            ),
        )
    }

    /// The refusal when none of the operator's routes can ask this client.
    fn no_route(&self, call: &GuardCall, page: bool) -> Interruption {
        let routes: Vec<&str> = self.routes(page).iter().map(|r| r.as_str()).collect();
        Interruption::text(
            InterruptionKind::NotAsked,
            format!(
                "Nothing was changed: {} could not ask anyone about `{}`: none of its approval routes ({}) can reach this client. To enable one: {}.{}",
                self.inner.server,
                call.tool,
                routes.join(", "),
                self.inner.page_setup,
                self.ciba_setup_sentence(),
            ),
        )
    }

    /// Why CIBA could not ask this call, as the end of a list of reasons ("" when it is not
    /// among the routes at all).
    fn ciba_unavailable(&self) -> &'static str {
        let named = self
            .inner
            .routes
            .as_ref()
            .is_some_and(|routes| routes.contains(&ApprovalRoute::Ciba));
        match (named, self.backchannel().is_some()) {
            (false, _) => "",
            (true, false) => {
                "; `ciba` is among its routes but no identity provider is configured for it"
            }
            (true, true) => {
                "; CIBA asks only callers the identity provider knows (OAuth mode, where the caller's subject is proven)"
            }
        }
    }

    /// The sentence that says how to enable CIBA ("" when serving did not say).
    fn ciba_setup_sentence(&self) -> String {
        self.inner
            .ciba_setup
            .as_deref()
            .map(|how| format!(" To have the person's identity provider ask them on their device (CIBA): {how}."))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::ApprovalRoute;

    #[test]
    fn routes_parse_in_order_once_each_and_name_what_is_wrong() {
        assert_eq!(
            ApprovalRoute::parse_list(" page, FORM ,token,page"),
            Ok(vec![
                ApprovalRoute::Page,
                ApprovalRoute::Form,
                ApprovalRoute::Token
            ])
        );
        assert_eq!(
            ApprovalRoute::parse_list("form"),
            Ok(vec![ApprovalRoute::Form])
        );
        assert_eq!(
            ApprovalRoute::parse_list("CIBA,page"),
            Ok(vec![ApprovalRoute::Ciba, ApprovalRoute::Page])
        );
        assert_eq!(ApprovalRoute::Ciba.as_str(), "ciba");
        let wrong = ApprovalRoute::parse_list("page,dialog").unwrap_err();
        assert!(wrong.contains("`dialog`"), "{wrong}");
        assert!(ApprovalRoute::parse_list(" , ").is_err());
    }
}
