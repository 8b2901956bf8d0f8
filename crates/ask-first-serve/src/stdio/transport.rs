//! MCP over stdio where every line gets an answer.
//!
//! rmcp's own stdio transport drops a line it cannot parse without a reply (invalid UTF-8, a
//! lone surrogate, JSON nested deeper than serde_json's 128 levels, a line over its 16 MiB
//! cap), and it hands a `tools/call` whose `params` have a wrong type (a number for
//! `requestState`) to the server as an unknown method, which answers `-32601 tools/call`.
//! A client waiting for those answers waits forever; in the 2026-07-28 era a dropped first
//! request also ends the session (its cancellation reaches the server first).
//!
//! [`StdioTransport`] frames the lines itself and checks each one before rmcp sees it:
//!
//! | line | answer |
//! |---|---|
//! | longer than [`MAX_LINE_BYTES`] | `-32600`, with the id when the line's first 64 KiB show one |
//! | not UTF-8 | `-32600` with the id when the envelope is readable, else `-32700` (id `null`) |
//! | not JSON | `-32700`, id `null` |
//! | a batch (an array), or not an object | `-32600`, id `null`: MCP has no batches |
//! | an id that is not a string or an integer | `-32600`, id `null` |
//! | `jsonrpc` other than `"2.0"` | `-32600` with the id |
//! | nested deeper than [`MAX_DEPTH`] | `tools/call`: `-32602` naming the argument; else `-32600` |
//! | more than [`MAX_VALUES`] JSON values | `-32600` with the id, unparsed |
//! | a known method whose `params` do not fit (a lone surrogate, a wrong type) | `-32602` naming the field |
//!
//! Everything else goes to rmcp unchanged, so rmcp answers it as before (an unknown method is
//! still its `-32601`). Notifications with a method MCP does not define are ignored, as rmcp
//! does, for clients that share the pipe with other protocols.
//!
//! Depth is checked before parsing rather than by parsing with an unbounded depth: the check is
//! a single pass over bytes with a counter (no recursion, so no input can overflow the stack),
//! and the envelope (`jsonrpc`, `id`, `method`, `params.name`, the argument names) is read with
//! serde_json's [`RawValue`](serde_json::value::RawValue), which skips values iteratively, so a deep line still yields the
//! id to answer and the argument to name. Parsing deep values for real would need a stack that
//! grows with the input; nothing in MCP needs more than a few dozen levels.
//!
//! Bounded work per line: the depth and the number of values are counted in that one pass
//! before anything is parsed, so a line of millions of tiny values is refused without building
//! them; the envelope is read as borrowed [`RawValue`](serde_json::value::RawValue)s; and a line longer than 64 KiB is
//! checked on Tokio's blocking pool ([`tokio::task::spawn_blocking`]), never on an async worker.
//!
//! The transport serves any [`rmcp::ServerHandler`], guarded or not: `handler.serve(stdio())`.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;
use tokio::task::JoinHandle;

pub(crate) mod checks;

use checks::{INVALID_REQUEST, Verdict, check_line, error_response, oversized_answer};
pub use checks::{MAX_DEPTH, MAX_LINE_BYTES, MAX_VALUES};

/// Lines longer than this are checked on the blocking thread pool, off the async workers.
const CHECK_INLINE_BYTES: usize = 64 * 1024;

/// How much of an over-long line is kept to look for its id.
const PREFIX_BYTES: usize = 64 * 1024;

/// The process's stdin and stdout as a [`StdioTransport`].
///
/// When both are pipes (the way MCP clients launch stdio servers) they are read and written on
/// Tokio's IO reactor ([`rmcp::transport::stdio_pipes`]), with no hand-off to the blocking
/// thread pool per line; otherwise (a terminal, a file) through the blocking handles.
///
/// # Panics
///
/// Outside a Tokio runtime with IO enabled, as rmcp's `stdio_pipes` does (`#[tokio::main]`
/// enables it): call it where the server is served.
pub fn stdio() -> StdioTransport<rmcp::transport::StdioReader, rmcp::transport::StdioWriter> {
    let (read, write) = rmcp::transport::stdio_pipes();
    StdioTransport::new(read, write)
}

type SharedWriter<W> = Arc<Mutex<Option<W>>>;

/// A newline-delimited JSON-RPC transport for servers that answers every line (see the module
/// documentation). `R` and `W` are any byte streams: stdin/stdout, a pipe, a duplex in tests.
pub struct StdioTransport<R, W> {
    read: BufReader<R>,
    line: Vec<u8>,
    /// Set while skipping the rest of an over-long line; holds its first bytes.
    oversized: Option<Vec<u8>>,
    write: SharedWriter<W>,
    /// The answer to the last refused line, still being written; awaited before the next one
    /// so a flood of bad lines cannot queue unbounded answers.
    answering: Option<JoinHandle<()>>,
    /// A long line being checked on the blocking pool; awaited (by reference, so a cancelled
    /// `receive` loses nothing) before the next line is read. It gives the line's buffer back.
    checking: Option<JoinHandle<(Verdict, Vec<u8>)>>,
}

impl<R, W> std::fmt::Debug for StdioTransport<R, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioTransport").finish_non_exhaustive()
    }
}

impl<R, W> StdioTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// Reads lines from `read` and writes messages, one per line, to `write`.
    pub fn new(read: R, write: W) -> Self {
        Self {
            read: BufReader::new(read),
            line: Vec::new(),
            oversized: None,
            write: Arc::new(Mutex::new(Some(write))),
            answering: None,
            checking: None,
        }
    }

    /// Reads one whole line into `self.line` (without its `\n`), never buffering more than
    /// [`MAX_LINE_BYTES`]. Cancel-safe: all state lives in `self`, and bytes are consumed only
    /// after they were copied. `Ok(None)` at the end of input.
    async fn read_line(&mut self) -> std::io::Result<Option<Line>> {
        loop {
            let (consumed, done) = {
                let available = self.read.fill_buf().await?;
                if available.is_empty() {
                    return Ok(None);
                }
                let newline = available.iter().position(|&b| b == b'\n');
                let take = newline.map_or(available.len(), |at| at + 1);
                let chunk = &available[..newline.unwrap_or(available.len())];
                if let Some(prefix) = &mut self.oversized {
                    let room = PREFIX_BYTES.saturating_sub(prefix.len());
                    prefix.extend_from_slice(&chunk[..chunk.len().min(room)]);
                } else if self.line.len() + chunk.len() > MAX_LINE_BYTES {
                    let mut prefix = std::mem::take(&mut self.line);
                    prefix.truncate(PREFIX_BYTES);
                    let room = PREFIX_BYTES - prefix.len();
                    prefix.extend_from_slice(&chunk[..chunk.len().min(room)]);
                    self.line.shrink_to(PREFIX_BYTES);
                    self.oversized = Some(prefix);
                } else {
                    self.line.extend_from_slice(chunk);
                }
                (take, newline.is_some())
            };
            self.read.consume(consumed);
            if done {
                return Ok(Some(match self.oversized.take() {
                    Some(prefix) => Line::Oversized(prefix),
                    None => Line::Whole,
                }));
            }
        }
    }

    fn answer(&mut self, answer: Vec<u8>) -> JoinHandle<()> {
        let write = self.write.clone();
        tokio::spawn(async move {
            if let Err(error) = write_line(&write, answer).await {
                tracing::debug!(%error, "could not write the answer to a refused line");
            }
        })
    }
}

enum Line {
    /// `self.line` holds a whole line.
    Whole,
    /// The line was too long; its first bytes.
    Oversized(Vec<u8>),
}

async fn write_line<W: AsyncWrite + Unpin>(
    write: &SharedWriter<W>,
    mut bytes: Vec<u8>,
) -> std::io::Result<()> {
    bytes.push(b'\n');
    let mut guard = write.lock().await;
    let Some(writer) = guard.as_mut() else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotConnected,
            "the transport is closed",
        ));
    };
    writer.write_all(&bytes).await?;
    writer.flush().await
}

impl<R, W> Transport<RoleServer> for StdioTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = self.write.clone();
        async move {
            let bytes = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            write_line(&write, bytes).await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if let Some(previous) = &mut self.answering {
                let _ = previous.await;
                self.answering = None;
            }
            let verdict = if let Some(checking) = self.checking.as_mut() {
                let checked = checking.await;
                self.checking = None;
                match checked {
                    Ok((verdict, mut buffer)) => {
                        // Reuse the buffer, without keeping a long line's worth of memory.
                        buffer.clear();
                        buffer.shrink_to(CHECK_INLINE_BYTES);
                        self.line = buffer;
                        verdict
                    }
                    Err(error) => {
                        tracing::error!(%error, "checking a line stopped");
                        Verdict::Refuse(error_response(
                            None,
                            INVALID_REQUEST,
                            "the message could not be checked; send it again",
                        ))
                    }
                }
            } else {
                let line = match self.read_line().await {
                    Ok(Some(line)) => line,
                    Ok(None) => return None,
                    Err(error) => {
                        tracing::error!(%error, "could not read from stdin");
                        return None;
                    }
                };
                match line {
                    Line::Whole if self.line.len() > CHECK_INLINE_BYTES => {
                        let line = std::mem::take(&mut self.line);
                        self.checking = Some(tokio::task::spawn_blocking(move || {
                            let verdict = check_line(&line);
                            (verdict, line)
                        }));
                        continue;
                    }
                    Line::Whole => {
                        let verdict = check_line(&self.line);
                        self.line.clear();
                        verdict
                    }
                    Line::Oversized(prefix) => Verdict::Refuse(oversized_answer(&prefix)),
                }
            };
            match verdict {
                Verdict::Pass(message) => return Some(*message),
                Verdict::Skip => {}
                Verdict::Refuse(answer) => {
                    let handle = self.answer(answer);
                    self.answering = Some(handle);
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        if let Some(previous) = self.answering.take() {
            let _ = previous.await;
        }
        let mut guard = self.write.lock().await;
        if let Some(mut writer) = guard.take() {
            writer.shutdown().await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
