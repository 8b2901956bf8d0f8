//! opengist-mcp: an MCP server for Opengist, the self-hosted pastebin, with a confirmation
//! guard on every destructive tool.
//!
//! Fourteen tools read, search, create, update, fork, like and delete gists. Deleting, and
//! publishing anything that is not private, asks the person at the client first, through the
//! `ask-first` framework: the Opengist client's write methods accept only the guard's
//! approval, so an unguarded destructive call does not compile.
//!
//! The binary is the usual way in (`opengist-mcp --help`); the library is what it is built
//! from. A server without Opengist settings still lists its tools, and its tool calls answer
//! with setup instructions:
//!
//! ```
//! use opengist_mcp::config::FlagValues;
//! use opengist_mcp::config::Config;
//! use opengist_mcp::OpengistServer;
//!
//! // Read-only, from a variable lookup instead of the process environment.
//! let env = |name: &str| (name == "OPENGIST_READ_ONLY").then(|| "yes".to_owned());
//! let loaded = Config::from_env_and_args(&FlagValues::default(), &env).expect("valid");
//! let server = OpengistServer::from_config(&loaded.config).expect("builds");
//! let tools = server.tool_names();
//! assert_eq!(tools.len(), 8);
//!
//! // Which tools read is the catalog's to say.
//! use opengist_mcp::catalog;
//! assert!(tools.iter().all(|name| catalog::entry(name).is_some_and(|t| t.reads())));
//! ```
//!
//! # Where a tool lives
//!
//! Each tool is one file, `tools/<name>.rs` (a folder for `search_gists`): its arguments,
//! its handler, its result, and for a write its read-back after a lost answer. A guarded
//! tool has a second file, [`opengist`]`/<name>.rs`: the request body, the guard target
//! (what an approval is bound to, the question a person sees, when it is asked), the check
//! made before asking, and the client method that takes the approval. The [`catalog`] is the
//! one list of tools; `state` holds the server type, [`server`] builds it and answers MCP.
//!
//! # Layers
//!
//! Dependencies run one way, each folder using only those below it:
//!
//! ```text
//! server, http, stdio, doctor, healthcheck   serving and the commands
//!   tools            one file per tool (tools/common: what several share)
//!   resources        gist files as MCP resources, and the resource links tools return
//!   catalog          the one list of tools
//!   state            the server type, bounded results, failures
//!   team, account    whose Opengist account a request acts as
//!   text, notify, result_budget   what tools and resources both say; list-changed
//!                    notifications; the result-size ceiling
//! opengist-mcp-client (another crate): cache -> opengist (the REST client)
//! ```
//!
//! The client and its cache are the crate `opengist-mcp-client`, which does not depend on
//! this one: a module there that imports the server does not compile. They are re-exported
//! here as [`opengist`] and [`cache`] under their old paths, and the client's log events keep
//! their old target (`opengist_mcp::opengist::client`), so `RUST_LOG` filters stay as they
//! were. Inside this crate the modules are private
//! and `pub(crate)` unless the binary, the tests, the benches or the fuzz targets use them,
//! so rustc reports what nothing uses (the workspace lint `unreachable_pub` keeps the spelling).
#![cfg_attr(docsrs, feature(doc_cfg))]

mod account;
pub mod catalog;
pub mod cli;
pub mod client_config;
pub mod config;
pub mod doctor;
pub mod healthcheck;
pub mod http;
pub mod logging;
mod notify;
mod resources;
mod result_budget;
pub mod server;
mod state;
pub mod stdio;
mod team;
mod text;
pub mod tokens;
mod tools;

pub use opengist_mcp_client::{cache, opengist};
pub use state::OpengistServer;
