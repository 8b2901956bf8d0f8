//! `memo.rs` guarded: the "after" of the guide's "Guarding an existing server". Its deletes and
//! writes run only with a person's approval; the old public methods stay, deprecated.
//!
//! Run: `memo_guarded DIR` (stdio; streamable HTTP when `MEMO_HTTP_ADDR` is set).

use std::path::PathBuf;
use std::sync::Mutex;

use ask_first::fact::{ByteSize, Id};
use ask_first::{Approved, Guard, HasGuard, InputError, Resolve, Serving, Target, guarded};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

/// The memos in one directory: a public API that other code calls too.
#[derive(Clone)]
pub struct Memos {
    dir: PathBuf,
    guard: Guard,
}

impl HasGuard for Memos {
    fn guard(&self) -> &Guard {
        &self.guard
    }
}

/// One write at a time, so a write's check and the write itself are one step.
static WRITES: Mutex<()> = Mutex::new(());

impl Memos {
    /// A memo's file, for a name of letters, digits, `-` and `_`.
    fn path(&self, name: &str) -> Result<PathBuf, String> {
        let valid = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b));
        match valid {
            true => Ok(self.dir.join(format!("{name}.txt"))),
            false => Err(format!(
                "{name:?} is not a memo name: use letters, digits, - and _."
            )),
        }
    }

    /// A memo's text, if it exists.
    pub fn read(&self, name: &str) -> Result<Option<String>, String> {
        match std::fs::read_to_string(self.path(name)?) {
            Ok(text) => Ok(Some(text)),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(format!("memo {name}: {error}")),
        }
    }

    /// Deletes a memo.
    #[deprecated(note = "unguarded: call `delete_approved` with a person's approval")]
    pub fn delete(&self, name: &str) -> Result<(), String> {
        std::fs::remove_file(self.path(name)?).map_err(|error| format!("memo {name}: {error}"))
    }

    /// Writes a memo's text, replacing what it held.
    #[deprecated(note = "unguarded: call `write_approved` with a person's approval")]
    pub fn write(&self, name: &str, text: &str) -> Result<(), String> {
        std::fs::write(self.path(name)?, text).map_err(|error| format!("memo {name}: {error}"))
    }

    /// Deletes the memo a person approved.
    #[allow(deprecated)]
    pub fn delete_approved(&self, approved: Approved<DeleteMemo>) -> Result<(), String> {
        self.delete(approved.into_target().name.as_str())
    }

    /// Writes the memo a person approved, if it still holds the text they were shown (a
    /// compare-and-swap: so the guard need not read it again after their yes).
    #[allow(deprecated)]
    pub fn write_approved(&self, approved: Approved<WriteMemo>) -> Result<(), String> {
        let memo = approved.into_target();
        let _one_at_a_time = WRITES
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if self.read(memo.name.as_str())? != memo.seen {
            return Err(format!(
                "Memo {} changed since you were asked. Nothing was changed.",
                memo.name
            ));
        }
        self.write(memo.name.as_str(), &memo.text)
    }
}

/// The arguments of the tools that name one memo.
#[derive(Deserialize, JsonSchema)]
pub struct NameArgs {
    /// The memo's name.
    name: String,
}

/// The arguments of `write_memo`.
#[derive(Deserialize, JsonSchema)]
pub struct WriteArgs {
    /// The memo's name.
    name: String,
    /// Its new text.
    text: String,
}

/// Deleting one memo. The question shows its size.
#[derive(Target)]
#[target(
    operation = "delete_memo",
    question = "This will delete memo {name} ({size})."
)]
pub struct DeleteMemo {
    name: Id,
    #[target(skip)]
    size: ByteSize,
}

impl Resolve<Memos, NameArgs> for DeleteMemo {
    async fn resolve(memos: &Memos, args: &NameArgs) -> Result<Self, InputError> {
        let text = memos.read(&args.name).map_err(InputError::new)?;
        let text =
            text.ok_or_else(|| InputError::new(format!("There is no memo {}.", args.name)))?;
        let name = Id::new(&args.name).map_err(|error| InputError::new(error.to_string()))?;
        Ok(Self {
            name,
            size: ByteSize(text.len() as u64),
        })
    }
}

/// Writing one memo, bound to the text it held when the person was asked (`seen`).
#[derive(Target)]
#[target(
    operation = "write_memo",
    question = "This will replace memo {name} ({old_size()}) with {new_size()}."
)]
pub struct WriteMemo {
    name: Id,
    text: String,
    seen: Option<String>,
}

impl WriteMemo {
    fn old_size(&self) -> ByteSize {
        ByteSize(self.seen.as_ref().map_or(0, |text| text.len() as u64))
    }
    fn new_size(&self) -> ByteSize {
        ByteSize(self.text.len() as u64)
    }
}

impl Resolve<Memos, WriteArgs> for WriteMemo {
    async fn resolve(memos: &Memos, args: &WriteArgs) -> Result<Self, InputError> {
        let seen = memos.read(&args.name).map_err(InputError::new)?;
        let name = Id::new(&args.name).map_err(|error| InputError::new(error.to_string()))?;
        Ok(Self {
            name,
            text: args.text.clone(),
            seen,
        })
    }

    // `write_approved` checks `seen` as it writes: no second read after the yes.
    async fn recheck(_: &Memos, _: &WriteArgs, shown: Self) -> Result<Self, InputError> {
        Ok(shown)
    }
}

#[tool_router]
impl Memos {
    #[tool(description = "Read a memo.", annotations(read_only_hint = true))]
    async fn read_memo(&self, Parameters(args): Parameters<NameArgs>) -> Result<String, String> {
        self.read(&args.name)?
            .ok_or_else(|| format!("There is no memo {}.", args.name))
    }

    #[guarded(always)]
    #[tool(description = "Delete a memo.", annotations(destructive_hint = true))]
    async fn delete_memo(
        &self,
        Parameters(args): Parameters<NameArgs>,
        approved: Approved<DeleteMemo>,
    ) -> Result<String, String> {
        self.delete_approved(approved)?;
        Ok(format!("Deleted memo {}.", args.name))
    }

    #[guarded(always)]
    #[tool(
        description = "Write a memo, replacing its text.",
        annotations(destructive_hint = true)
    )]
    async fn write_memo(
        &self,
        Parameters(args): Parameters<WriteArgs>,
        approved: Approved<WriteMemo>,
    ) -> Result<String, String> {
        self.write_approved(approved)?;
        Ok(format!("Wrote memo {}.", args.name))
    }
}

#[tool_handler]
impl ServerHandler for Memos {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("memo", env!("CARGO_PKG_VERSION")))
            .with_instructions("Memos kept as text files in one directory.")
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args().nth(1).ok_or("usage: memo DIR")?;
    let serving = Serving::from_env("memo", "MEMO")?;
    let guard = serving.guard_builder().build();
    let memos = Memos {
        dir: dir.into(),
        guard,
    };
    serving.serve(memos).await?;
    Ok(())
}
