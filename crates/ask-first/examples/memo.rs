//! A plain rmcp server over a directory of memos, unguarded: the "before" of the guide's
//! "Guarding an existing server". `memo_guarded.rs` is the same server guarded, and the guide
//! shows the diff between the two files (a test keeps it equal to them).
//!
//! Run: `memo DIR` (stdio). A memo is the file `DIR/<name>.txt`.

use std::path::PathBuf;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

/// The memos in one directory: a public API that other code calls too.
#[derive(Clone)]
pub struct Memos {
    dir: PathBuf,
}

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
    pub fn delete(&self, name: &str) -> Result<(), String> {
        std::fs::remove_file(self.path(name)?).map_err(|error| format!("memo {name}: {error}"))
    }

    /// Writes a memo's text, replacing what it held.
    pub fn write(&self, name: &str, text: &str) -> Result<(), String> {
        std::fs::write(self.path(name)?, text).map_err(|error| format!("memo {name}: {error}"))
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

#[tool_router]
impl Memos {
    #[tool(description = "Read a memo.", annotations(read_only_hint = true))]
    async fn read_memo(&self, Parameters(args): Parameters<NameArgs>) -> Result<String, String> {
        self.read(&args.name)?
            .ok_or_else(|| format!("There is no memo {}.", args.name))
    }

    #[tool(description = "Delete a memo.", annotations(destructive_hint = true))]
    async fn delete_memo(&self, Parameters(args): Parameters<NameArgs>) -> Result<String, String> {
        self.delete(&args.name)?;
        Ok(format!("Deleted memo {}.", args.name))
    }

    #[tool(
        description = "Write a memo, replacing its text.",
        annotations(destructive_hint = true)
    )]
    async fn write_memo(&self, Parameters(args): Parameters<WriteArgs>) -> Result<String, String> {
        self.write(&args.name, &args.text)?;
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
    let memos = Memos { dir: dir.into() };
    memos
        .serve(rmcp::transport::stdio())
        .await?
        .waiting()
        .await?;
    Ok(())
}
