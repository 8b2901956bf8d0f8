//! `create_gist`: a new gist from 1 to 50 files, asked about when it would not be private.
//!
//! Its arguments, the checks made before asking (its `Resolve`), its handler, its result,
//! and its read-back after a lost answer. Its Opengist operation (request body, guard target,
//! question, condition, client method) is `opengist/create_gist.rs`.

use ask_first::{Clearance, InputError, Resolve, guarded};
use chrono::{DateTime, Utc};
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::Parameters;
use super::common::preflight::{self, NOTHING_CREATED};
use super::common::write_answer::{ClearedBy, WrittenGist, filenames};
use super::common::write_outcome::{self, CLOCK_SLACK, Seen, same_content};
use crate::opengist::create_gist::{CreateGist, ExpirePreset, NewGist, parse_expiry};
use crate::opengist::requests::Visibility;
use crate::opengist::{GistDetail, ListScope, OpengistClient, OpengistError};
use crate::state::{OpengistServer, ToolResult, rejection};

/// One file of a new gist.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewFileArg {
    /// A plain filename such as `notes.md` (no `/`).
    pub filename: String,
    /// The file's content; must not be empty.
    pub content: String,
}

/// Arguments of `create_gist`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateGistArgs {
    /// 1 to 50 files.
    pub files: Vec<NewFileArg>,
    /// Who can see it: `private`, `unlisted` or `public`. Required: never implicit. A gist that
    /// is not private is published only after the person at the client approves.
    pub visibility: Visibility,
    /// A title (Opengist defaults it to the alphabetically first filename).
    #[serde(default)]
    pub title: Option<String>,
    /// A description.
    #[serde(default)]
    pub description: Option<String>,
    /// A preset expiry: never, 1hour, 12hours, 1day, 7days, 15days. Not with `expires_at`.
    #[serde(default)]
    pub expire: Option<ExpirePreset>,
    /// An exact expiry, RFC 3339 (e.g. `2027-01-31T12:00:00Z`). Not with `expire`.
    #[serde(default)]
    pub expires_at: Option<String>,
    /// Only if a previous call returned one: the confirmation token, quoted exactly.
    #[serde(default)]
    pub confirm_token: Option<String>,
}

impl Resolve<OpengistServer, CreateGistArgs> for CreateGist {
    async fn resolve(server: &OpengistServer, args: &CreateGistArgs) -> Result<Self, InputError> {
        let client = &server.client().map_err(rejection)?;
        let expiry = parse_expiry(args.expire, args.expires_at.as_deref(), chrono::Utc::now())
            .map_err(|e| InputError::new(format!("{e}. Nothing was created.")))?;
        let files = args
            .files
            .iter()
            .map(|f| (f.filename.clone(), f.content.clone()))
            .collect();
        let new = NewGist::new(
            args.title.clone(),
            args.description.clone(),
            args.visibility,
            expiry,
            files,
        )
        .map_err(|e| InputError::new(format!("{e}. Nothing was created.")))?;
        preflight::before_asking(client.check_can_create().await, NOTHING_CREATED)?;
        Ok(CreateGist::new(new))
    }

    /// Every fact the question shows (visibility, files, sizes, expiry) comes from the
    /// arguments, which only a new call can change: nothing is read again after a yes (and an
    /// expiry given as a duration is not recomputed from a later clock).
    async fn recheck(
        _server: &OpengistServer,
        _args: &CreateGistArgs,
        shown: Self,
    ) -> Result<Self, InputError> {
        Ok(shown)
    }
}

/// Result of `create_gist`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct Created {
    /// The new gist.
    pub gist: WrittenGist,
    /// Its filenames, as Opengist stored them.
    pub files: Vec<String>,
    /// How the call was cleared.
    pub cleared_by: ClearedBy,
}

#[tool_router(router = create_gist_router, vis = "pub(crate)")]
impl OpengistServer {
    /// Creates a gist. Asks the person first when it would not be private.
    #[guarded(when = "publishes")]
    #[tool(
        name = "create_gist",
        description = "Create a gist from 1-50 files. `visibility` is required (private, unlisted, public). A gist that is not private is created only after the person at the client approves; without a dialog the call returns a confirm_token to quote in an identical second call.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false),
        output_schema = rmcp::handler::server::tool::schema_for_output::<Created>()
    )]
    async fn create_gist(
        &self,
        Parameters(_args): Parameters<CreateGistArgs>,
        clearance: Clearance<CreateGist>,
    ) -> ToolResult<Created> {
        let client = &self.client()?;
        let cleared_by = ClearedBy::of(clearance.approved_by());
        let read_back = CreateReadBack::before(clearance.target());
        let detail = match client.create_gist(clearance).await {
            Ok(detail) => detail,
            Err(error) => read_back.find_out(client, error).await?,
        };
        self.resources_changed();
        Ok(self.output(Created {
            gist: WrittenGist::from(&detail.summary),
            files: filenames(&detail),
            cleared_by,
        }))
    }
}

/// The facts a lost `create_gist` is recognised by, taken before the request: a gist of the
/// token's owner, updated since shortly before the call, with exactly these files (names and
/// contents) and this title.
struct CreateReadBack {
    new: NewGist,
    since: DateTime<Utc>,
}

impl CreateReadBack {
    /// Remembers what is being created, and when.
    fn before(target: &CreateGist) -> Self {
        Self {
            new: target.new_gist().clone(),
            since: Utc::now() - CLOCK_SLACK,
        }
    }

    fn matches(&self, detail: &GistDetail) -> bool {
        let files = self.new.files();
        let title_ok = match self.new.title() {
            Some(title) => detail.summary.title == title,
            None => true,
        };
        title_ok
            && detail.summary.visibility == self.new.visibility()
            && detail.files.len() == files.len()
            && files.iter().all(|file| {
                detail
                    .files
                    .get(file.filename())
                    .is_some_and(|held| same_content(held, file.content()))
            })
    }

    async fn look(&self, client: &OpengistClient) -> Result<Seen<GistDetail>, OpengistError> {
        let page = client
            .list_gists(ListScope::Mine, 1, 100, Some(self.since))
            .await?;
        let mut found = Vec::new();
        for summary in page.items {
            let named = self.new.title().is_none_or(|title| summary.title == title);
            if !named || summary.visibility != self.new.visibility() {
                continue;
            }
            let detail = client.get_gist(&summary.id).await?;
            if self.matches(&detail) {
                found.push(detail);
            }
        }
        Ok(match found.len() {
            0 => Seen::NotApplied,
            1 => Seen::Applied(found.remove(0)),
            _ => Seen::Mixed(format!(
                "{} gists with exactly these files and this title, made since shortly before the call ({}), so which one this call made cannot be told",
                found.len(),
                found
                    .iter()
                    .map(|d| d.id().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        })
    }

    /// The created gist, if reading back finds it; otherwise the tool's error.
    async fn find_out(
        &self,
        client: &OpengistClient,
        error: OpengistError,
    ) -> Result<GistDetail, CallToolResult> {
        write_outcome::find_out(
            "create_gist",
            error,
            || self.look(client),
            "no gist of yours with these files and this title",
            "Check with list_gists (newest first) before creating it again, so it is not made twice.",
        )
        .await
    }
}
