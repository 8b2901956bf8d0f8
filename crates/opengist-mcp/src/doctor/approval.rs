//! `doctor`'s lines on how guarded calls are approved: the passkeys enrolled per principal,
//! the verified tools, and the route each kind of client gets, for each principal with a
//! passkey and for anyone else. The routes are the guard's own choice ([`Guard::route_for`]),
//! worked out on a guard built as the server builds it, with a page that knows only who has
//! a passkey: nothing is opened, locked or written.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use ask_first::Guard;
use ask_first_core::{
    ApprovalPages, ApprovalRecord, ApprovalRoute, Backchannel, BackchannelFuture, BackchannelPoll,
    BackchannelStarted, Caller, ClientDeclared, RecordId, RoutePlan, ToolNeeds,
};
use ask_first_serve::approve::{ApprovalSettings, PasskeyInfo, list_passkeys};
use rmcp::model::{
    ClientCapabilities, ElicitationCapability, FormElicitationCapability, ProtocolVersion,
    UrlElicitationCapability,
};

use super::{Check, Status};
use crate::catalog;
use crate::config::{AuthMode, Config};
use crate::server::SERVER_NAME;

/// The settings' prefix.
const PREFIX: &str = "OPENGIST_MCP";

/// The approval page as the guard would see it: ready for the principals with a passkey, or
/// for everyone with a login.
struct Enrolled {
    principals: Vec<String>,
    login: bool,
}

impl ApprovalPages for Enrolled {
    fn url<'a>(
        &'a self,
        _id: &'a RecordId,
    ) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>> {
        Box::pin(async { Err("doctor shows no page".to_owned()) })
    }
    fn ready(&self) -> bool {
        self.login || !self.principals.is_empty()
    }
    fn ready_for(&self, principal: &str) -> bool {
        self.login || self.principals.iter().any(|p| p == principal)
    }
    fn changed<'a>(&'a self, _id: &'a RecordId) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        Box::pin(async {})
    }
}

/// CIBA as configured, for the route choice only: it is never asked.
struct Configured;

impl Backchannel for Configured {
    fn subject(&self, _caller: &Caller<'_>) -> Option<String> {
        None
    }
    fn start<'a>(
        &'a self,
        _subject: &'a str,
        _record: &'a ApprovalRecord,
        _binding_code: &'a str,
    ) -> BackchannelFuture<'a, Result<BackchannelStarted, String>> {
        Box::pin(async { Err("doctor asks no one".to_owned()) })
    }
    fn poll<'a>(
        &'a self,
        _subject: &'a str,
        _record: &'a ApprovalRecord,
    ) -> BackchannelFuture<'a, BackchannelPoll> {
        Box::pin(async { BackchannelPoll::Refused("doctor asks no one".to_owned()) })
    }
}

/// Whether a variable is set to something.
fn set(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.trim().is_empty())
}

/// The passkeys, the verified tools and the routes, one line each.
pub(super) fn approval_checks(config: &Config) -> Vec<Check> {
    let mut out = Vec::new();
    let settings = match ApprovalSettings::from_env(PREFIX) {
        Ok(settings) => settings,
        Err(error) => {
            out.push(Check::new("approval", Status::Fail, error.to_string()));
            return out;
        }
    };
    let passkeys = passkeys_check(config, &mut out);
    let enabled = config.tools.resolve(config.read_only).unwrap_or_default();
    let verified: Vec<String> = config
        .verified_tools
        .iter()
        .filter(|tool| enabled.contains(tool))
        .cloned()
        .collect();
    let oauth = config.serve.auth.mode == AuthMode::OAuth;
    let login = oauth && set("OPENGIST_MCP_APPROVAL_LOGIN_CLIENT_ID");
    let ciba = oauth && set("OPENGIST_MCP_CIBA_CLIENT_ID");
    let mut principals: Vec<String> = passkeys.iter().map(|p| p.principal.clone()).collect();
    principals.dedup();
    let mut builder = Guard::builder(SERVER_NAME)
        .elicitation(config.serve.elicitation)
        .verified_tools(verified.iter().cloned())
        .approval_pages(Arc::new(Enrolled {
            principals: principals.clone(),
            login,
        }));
    if let Some(routes) = &settings.routes {
        builder = builder.approval_routes(routes.clone());
    }
    if ciba
        && settings
            .routes
            .as_ref()
            .is_some_and(|r| r.contains(&ApprovalRoute::Ciba))
    {
        builder = builder.backchannel(Arc::new(Configured));
    }
    let guard = builder.build();
    out.push(verified_check(&verified, &principals, login, ciba));
    let guarded: Vec<&str> = catalog::GUARDED
        .iter()
        .copied()
        .filter(|tool| enabled.iter().any(|e| e == tool))
        .collect();
    if guarded.is_empty() {
        return out;
    }
    let stdio = config.serve.http_addr.is_none();
    let mut who: Vec<(String, String)> = if stdio {
        vec![("local".to_owned(), "local (the stdio client)".to_owned())]
    } else {
        principals
            .iter()
            .map(|p| (p.clone(), format!("{p} (a passkey enrolled)")))
            .collect()
    };
    if !stdio {
        // A principal no passkey names: every other caller.
        who.push(("\u{0}anyone-else".to_owned(), "anyone else".to_owned()));
    }
    for (principal, label) in who {
        out.push(routes_check(
            &guard, &principal, &label, &guarded, &verified,
        ));
    }
    out
}

/// The enrolled passkeys per principal; the list (empty when none or unreadable).
fn passkeys_check(config: &Config, out: &mut Vec<Check>) -> Vec<PasskeyInfo> {
    let setting = format!("{PREFIX}_STATE_DIR");
    let Some(dir) = config
        .serve
        .state_dir
        .clone()
        .or_else(|| ask_first_serve::settings::default_state_dir(SERVER_NAME))
    else {
        out.push(Check::new(
            "passkeys",
            Status::Skip,
            format!("no state directory to keep passkeys in (set {setting})"),
        ));
        return Vec::new();
    };
    let mut passkeys = match list_passkeys(&dir, &setting) {
        Ok(passkeys) => passkeys,
        Err(error) => {
            out.push(Check::new("passkeys", Status::Fail, error.to_string()));
            return Vec::new();
        }
    };
    passkeys.sort_by(|a, b| a.principal.cmp(&b.principal));
    let file = dir.join(ask_first_serve::approve::PASSKEYS_FILE);
    out.push(if passkeys.is_empty() {
        Check::new(
            "passkeys",
            Status::Ok,
            format!(
                "none enrolled in {}: the approval page is offered to no one; each person enrols their own principal's with `{SERVER_NAME} passkeys add --principal PRINCIPAL`",
                file.display()
            ),
        )
    } else {
        let mut per: Vec<String> = Vec::new();
        for principal in passkeys.iter().map(|p| &p.principal) {
            let names: Vec<String> = passkeys
                .iter()
                .filter(|p| &p.principal == principal)
                .map(|p| format!("`{}` ({})", p.name, p.short_id()))
                .collect();
            let line = format!("{principal}: {}", names.join(", "));
            if !per.contains(&line) {
                per.push(line);
            }
        }
        Check::new(
            "passkeys",
            Status::Ok,
            format!(
                "{} in {}, by principal: {}; the approval page is offered only to these (`{SERVER_NAME} passkeys list` shows them all)",
                passkeys.len(),
                file.display(),
                per.join("; ")
            ),
        )
    });
    passkeys
}

/// The verified tools and who can clear them.
fn verified_check(verified: &[String], principals: &[String], login: bool, ciba: bool) -> Check {
    if verified.is_empty() {
        return Check::new(
            "verified tools",
            Status::Ok,
            "none (OPENGIST_MCP_VERIFIED_TOOLS): every guarded tool takes the routes below",
        );
    }
    let tools = verified.join(", ");
    if principals.is_empty() && !login && !ciba {
        return Check::new(
            "verified tools",
            Status::Warn,
            format!(
                "{tools}: only the approval page (a passkey) or CIBA clears them, no confirm_token is offered, and with no passkey enrolled every call is refused; fix: `{SERVER_NAME} passkeys add --principal PRINCIPAL` for each person"
            ),
        );
    }
    Check::new(
        "verified tools",
        Status::Ok,
        format!(
            "{tools}: only the approval page or CIBA clears them, and no confirm_token is offered{}",
            if login || ciba {
                ""
            } else {
                "; a caller with no passkey of their own is refused, naming the command that enrols one"
            }
        ),
    )
}

/// The kinds of client, as the guard tells them apart.
fn client_kinds() -> Vec<(&'static str, ClientDeclared)> {
    let caps = |form: bool, url: bool| {
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
    };
    let none = ClientCapabilities::default();
    let legacy = Some(&ProtocolVersion::V_2025_11_25);
    let modern = Some(&ProtocolVersion::V_2026_07_28);
    vec![
        ("no dialog", ClientDeclared::new(legacy, Some(&none))),
        (
            "form dialogs",
            ClientDeclared::new(legacy, Some(&caps(true, false))),
        ),
        (
            "form and URL",
            ClientDeclared::new(legacy, Some(&caps(true, true))),
        ),
        (
            "2026-07-28 no dialog",
            ClientDeclared::new(modern, Some(&none)),
        ),
        (
            "2026-07-28 form",
            ClientDeclared::new(modern, Some(&caps(true, false))),
        ),
        (
            "2026-07-28 form and URL",
            ClientDeclared::new(modern, Some(&caps(true, true))),
        ),
    ]
}

/// A route as one line names it.
fn named(plan: RoutePlan) -> &'static str {
    match plan {
        RoutePlan::PagePushed => "approval page (link pushed)",
        RoutePlan::PageInputRequired => "approval page (input_required)",
        RoutePlan::PageLink => "approval page (link in the result)",
        RoutePlan::Ciba => "CIBA on their device",
        RoutePlan::FormPushed => "form dialog",
        RoutePlan::FormInputRequired => "form dialog (input_required)",
        RoutePlan::TokenSwitchedOff | RoutePlan::TokenNotDeclared => {
            "two-call confirm_token (proves no person)"
        }
        _ => "refused",
    }
}

/// What each kind of client gets for `principal`'s calls of the guarded tools, and of the
/// verified ones where that differs.
fn routes_check(
    guard: &Guard,
    principal: &str,
    label: &str,
    guarded: &[&str],
    verified: &[String],
) -> Check {
    let mut warn = false;
    let mut line = |tool: &str| {
        client_kinds()
            .iter()
            .map(|(kind, client)| {
                let plan = guard.route_for(client, principal, tool, ToolNeeds::AnyRoute);
                warn |= plan.refused();
                format!("{kind}: {}", named(plan))
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    let plain: Vec<&str> = guarded
        .iter()
        .copied()
        .filter(|t| !verified.iter().any(|v| v == t))
        .collect();
    let mut parts = Vec::new();
    if let Some(first) = plain.first() {
        parts.push(format!("{} -- {}", plain.join(", "), line(first)));
    }
    if let Some(first) = verified.first() {
        parts.push(format!(
            "{} (verified) -- {}",
            verified.join(", "),
            line(first)
        ));
    }
    Check::new(
        "routes",
        if warn { Status::Warn } else { Status::Ok },
        format!("for {label}: {}", parts.join(". ")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_routes_line_follows_who_has_a_passkey() {
        let guard = Guard::builder(SERVER_NAME)
            .verified_tools(["delete_gist"])
            .approval_pages(Arc::new(Enrolled {
                principals: vec!["token:alice".to_owned()],
                login: false,
            }))
            .build();
        let verified = ["delete_gist".to_owned()];
        let guarded = ["create_gist", "delete_gist"];
        let alice = routes_check(&guard, "token:alice", "alice", &guarded, &verified);
        assert_eq!(alice.status, Status::Ok, "{alice}");
        assert!(
            alice
                .detail
                .contains("2026-07-28 form and URL: approval page (input_required)")
                && !alice.detail.contains(": form dialog")
                && !alice.detail.contains("refused"),
            "{alice}"
        );
        let bob = routes_check(&guard, "token:bob", "bob", &guarded, &verified);
        assert_eq!(bob.status, Status::Warn, "{bob}");
        assert!(
            bob.detail
                .contains("create_gist -- no dialog: two-call confirm_token (proves no person); form dialogs: form dialog")
                && bob.detail.contains("delete_gist (verified) -- no dialog: refused"),
            "{bob}"
        );
    }

    #[test]
    fn verified_tools_without_any_passkey_warn_and_name_the_fix() {
        let none = verified_check(&["delete_gist".to_owned()], &[], false, false);
        assert_eq!(none.status, Status::Warn);
        assert!(none.detail.contains("passkeys add --principal"), "{none}");
        let some = verified_check(
            &["delete_gist".to_owned()],
            &["local".to_owned()],
            false,
            false,
        );
        assert_eq!(some.status, Status::Ok);
        assert_eq!(verified_check(&[], &[], false, false).status, Status::Ok);
    }
}
