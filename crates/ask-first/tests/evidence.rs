//! The approval page's evidence, end to end through a real rmcp client on the link route: two
//! deletes whose questions read alike (one file of 10 bytes) carry different evidence in the
//! result that holds the link, by name and digest; the person's yes on one record never runs
//! the other call; and evidence that changed after the yes is asked about again.

#[macro_use]
mod eras;

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use ask_first::fact::{Evidence, EvidenceItem};
use ask_first::testing::{Era, Person, connect, text_of};
use ask_first::{Approved, Binding, Fact, Guard, HasGuard, InputError, Question, Resolve, Target};
use ask_first_core::{ApprovalPages, ApprovalStore, MemoryApprovalStore, RecordId};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
use rmcp::service::{RoleClient, RunningService};
use rmcp::{ErrorData, ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

ask_first::wording! {
    struct DeleteQuestion = "This will delete 1 file ({}). It cannot be undone.";
}

/// Deleting one file. The question shows its size only (as a server whose names are never a
/// question's words); the evidence names it, with its digest. Only the name is bound: what
/// makes a changed content ask again is the evidence, bound into what was shown.
struct DeleteFile {
    name: String,
    content: String,
}

impl Target for DeleteFile {
    const OPERATION: &'static str = "delete_file";

    fn bind(&self, binding: &mut Binding) {
        binding.text("name", &self.name);
    }

    fn question(&self) -> Question {
        Question::new::<DeleteQuestion>([Fact::bytes(self.content.len() as u64)])
    }

    fn evidence(&self) -> Evidence {
        Evidence::new().group(
            "File deleted",
            [EvidenceItem::new(&self.name, self.content.as_bytes())],
        )
    }
}

#[derive(Deserialize, JsonSchema)]
struct DeleteArgs {
    name: String,
}

#[derive(Clone)]
struct Files {
    guard: Guard,
    files: Arc<Mutex<BTreeMap<String, String>>>,
}

impl HasGuard for Files {
    fn guard(&self) -> &Guard {
        &self.guard
    }
}

impl Resolve<Files, DeleteArgs> for DeleteFile {
    async fn resolve(server: &Files, args: &DeleteArgs) -> Result<Self, InputError> {
        let files = server.files.lock().expect("files");
        let content = files
            .get(&args.name)
            .ok_or_else(|| InputError::new("no such file"))?;
        Ok(Self {
            name: args.name.clone(),
            content: content.clone(),
        })
    }
}

#[tool_router]
impl Files {
    #[ask_first::guarded(always)]
    #[tool(description = "Delete a file.")]
    async fn delete(
        &self,
        Parameters(_args): Parameters<DeleteArgs>,
        approved: Approved<DeleteFile>,
    ) -> Result<CallToolResult, ErrorData> {
        let name = approved.into_target().name;
        self.files.lock().expect("files").remove(&name);
        Ok(CallToolResult::success(vec![ContentBlock::text("deleted")]))
    }
}

#[tool_handler(name = "evidence-test")]
impl ServerHandler for Files {}

/// A page with a passkey enrolled: its link is all a client without URL mode gets.
struct Page;

impl ApprovalPages for Page {
    fn url<'a>(
        &'a self,
        id: &'a RecordId,
    ) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>> {
        Box::pin(async move { Ok(format!("http://localhost:1/approve/{id}")) })
    }
    fn ready(&self) -> bool {
        true
    }
    fn changed<'a>(&'a self, _id: &'a RecordId) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        Box::pin(async {})
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The call's text and the record its link names (`None`: it ran).
async fn delete(
    client: &RunningService<RoleClient, Person>,
    name: &str,
) -> (String, Option<RecordId>) {
    let arguments = serde_json::json!({ "name": name });
    let result = client
        .call_tool(
            CallToolRequestParams::new("delete")
                .with_arguments(arguments.as_object().expect("object").clone()),
        )
        .await
        .expect("tools/call");
    let text = text_of(&result);
    if result.is_error != Some(true) {
        return (text, None);
    }
    let url = result.structured_content.as_ref().expect("structured")["approval_url"]
        .as_str()
        .expect("a link")
        .to_owned();
    let id = RecordId::parse(url.rsplit('/').next().expect("id")).expect("a record id");
    (text, Some(id))
}

/// The text from the question to the sentence about the page: what the call would do, and the
/// evidence.
fn shown(text: &str) -> &str {
    let start = text.find("What this call would do:").expect("the question");
    let end = text
        .find("evidence-test asks the person")
        .expect("the page's sentence");
    &text[start..end]
}

async fn the_yes_for_one_evidence_never_runs_another(era: Era) {
    let store = Arc::new(MemoryApprovalStore::new());
    let files = Arc::new(Mutex::new(BTreeMap::from([
        ("scratch.txt".to_owned(), "temporary\n".to_owned()),
        ("keep.txt".to_owned(), "important\n".to_owned()),
    ])));
    let server = Files {
        guard: Guard::builder("evidence-test")
            .approval_pages(Arc::new(Page))
            .approval_store(store.clone())
            .build(),
        files: files.clone(),
    };
    let client = connect(era, server, Person::without_elicitation())
        .await
        .expect("connect");

    let (scratch_text, scratch) = delete(&client, "scratch.txt").await;
    let (keep_text, keep) = delete(&client, "keep.txt").await;
    let (scratch, keep) = (scratch.expect("pending"), keep.expect("pending"));
    // The questions read alike; the evidence does not, by name and digest.
    let question = |text: &str| {
        shown(text)
            .split("\n\n")
            .next()
            .expect("the question")
            .to_owned()
    };
    assert_eq!(question(&scratch_text), question(&keep_text));
    assert!(
        shown(&scratch_text).contains(
            "supplied by the caller and not written by the server; the same names and digests must appear there:\nFile deleted:\n- «scratch.txt»: 10 bytes, SHA-256 da3309ab46d9facc7fcd\n"
        ),
        "{scratch_text}"
    );
    assert!(
        shown(&keep_text).contains("- «keep.txt»: 10 bytes, SHA-256 1fd84914aba013d0f579\n"),
        "{keep_text}"
    );
    assert_ne!(scratch, keep);

    // The person approves the keep.txt link (the wrong one): the scratch.txt call still waits.
    store
        .decide(&keep, true, now())
        .await
        .expect("store")
        .expect("decided");
    let (again, pending) = delete(&client, "scratch.txt").await;
    assert_eq!(pending, Some(scratch), "{again}");
    assert_eq!(files.lock().expect("files").len(), 2);
    // Positive control: the keep.txt call runs on its own yes, and deletes keep.txt only.
    let (_, ran) = delete(&client, "keep.txt").await;
    assert_eq!(ran, None);
    assert_eq!(
        files.lock().expect("files").keys().collect::<Vec<_>>(),
        ["scratch.txt"]
    );

    // The content changes after the yes (one length, another content): asked again.
    store
        .decide(&scratch, true, now())
        .await
        .expect("store")
        .expect("decided");
    files
        .lock()
        .expect("files")
        .insert("scratch.txt".to_owned(), "temporarX\n".to_owned());
    let (changed_text, changed) = delete(&client, "scratch.txt").await;
    let changed = changed.expect("asked again");
    assert_ne!(
        changed, scratch,
        "the yes for the old content ran on the new one"
    );
    assert_eq!(question(&changed_text), question(&scratch_text));
    assert!(
        !shown(&changed_text).contains("da3309ab46d9facc7fcd"),
        "{changed_text}"
    );
    assert!(files.lock().expect("files").contains_key("scratch.txt"));
    // Positive control: approved as it is now, it runs.
    store
        .decide(&changed, true, now())
        .await
        .expect("store")
        .expect("decided");
    assert_eq!(delete(&client, "scratch.txt").await.1, None);
    assert!(files.lock().expect("files").is_empty());
}

in_both_eras!(the_yes_for_one_evidence_never_runs_another);
