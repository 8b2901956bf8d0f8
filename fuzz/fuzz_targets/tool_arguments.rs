//! Every tool's argument deserialisation and validation, through the real server: one
//! in-process `opengist-mcp` (configured for an Opengist that refuses connections, so nothing
//! can be written) on the stdio transport, spoken to in raw JSON-RPC. The first input byte
//! picks the tool, the second one of its parameters, the rest is a JSON value (an object: the
//! whole arguments; another value: that parameter; not JSON: that parameter as a string).
//! Every call must be answered within 10 s; a panic anywhere aborts the run.
#![no_main]

use std::sync::OnceLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use opengist_mcp::cli::CliArgs;
use opengist_mcp::config::Config;
use ask_first_serve::stdio::StdioTransport;
use opengist_mcp::OpengistServer;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::runtime::Runtime;
use tokio::sync::Mutex;

struct Harness {
    runtime: Runtime,
    write: Mutex<WriteHalf<DuplexStream>>,
    read: Mutex<BufReader<ReadHalf<DuplexStream>>>,
    tools: Vec<(String, Vec<String>)>,
    next_id: std::sync::atomic::AtomicU64,
}

async fn exchange(
    write: &Mutex<WriteHalf<DuplexStream>>,
    read: &Mutex<BufReader<ReadHalf<DuplexStream>>>,
    id: u64,
    line: String,
) -> Value {
    let mut writer = write.lock().await;
    writer.write_all(line.as_bytes()).await.expect("write");
    writer.write_all(b"\n").await.expect("write");
    writer.flush().await.expect("flush");
    drop(writer);
    let mut reader = read.lock().await;
    let answer = async {
        loop {
            let mut text = String::new();
            let n = reader.read_line(&mut text).await.expect("read");
            assert!(n > 0, "the server closed the connection");
            let message: Value = serde_json::from_str(&text).expect("the server wrote JSON");
            if message.get("method").is_none() && message["id"] == json!(id) {
                return message;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), answer)
        .await
        .unwrap_or_else(|_| panic!("no answer to request {id} within 10 s"))
}

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let env = |name: &str| match name {
            "OPENGIST_URL" => Some("http://127.0.0.1:9".to_owned()),
            "OPENGIST_TOKEN" => Some(format!("og_{}", "0f".repeat(32))),
            "OPENGIST_MCP_REQUEST_TIMEOUT_SECS" => Some("2".to_owned()),
            _ => None,
        };
        let loaded = Config::from_env_and_args(&CliArgs::default().flags, &env).expect("config");
        let (server_io, client_io) = tokio::io::duplex(1 << 20);
        let (client_read, client_write) = tokio::io::split(client_io);
        let (write, read) = (Mutex::new(client_write), Mutex::new(BufReader::new(client_read)));
        let tools = runtime.block_on(async {
            let server = OpengistServer::from_config(&loaded.config).expect("server");
            tokio::spawn(async move {
                let (r, w) = tokio::io::split(server_io);
                use rmcp::ServiceExt as _;
                if let Ok(running) = server.serve(StdioTransport::new(r, w)).await {
                    let _ = running.waiting().await;
                }
            });
            let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
                "protocolVersion":"2025-11-25","capabilities":{},
                "clientInfo":{"name":"fuzz","version":"0"}}});
            exchange(&write, &read, 1, init.to_string()).await;
            let mut writer = write.lock().await;
            writer
                .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
                .await
                .expect("write");
            drop(writer);
            let list = json!({"jsonrpc":"2.0","id":2,"method":"tools/list"});
            let listed = exchange(&write, &read, 2, list.to_string()).await;
            listed["result"]["tools"]
                .as_array()
                .expect("tools")
                .iter()
                .map(|tool| {
                    let name = tool["name"].as_str().unwrap_or_default().to_owned();
                    let params = tool["inputSchema"]["properties"]
                        .as_object()
                        .map(|props| props.keys().cloned().collect())
                        .unwrap_or_default();
                    (name, params)
                })
                .collect::<Vec<_>>()
        });
        assert_eq!(tools.len(), 14, "{tools:?}");
        Harness {
            runtime,
            write,
            read,
            tools,
            next_id: std::sync::atomic::AtomicU64::new(10),
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let harness = harness();
    let (Some(&pick), Some(&param)) = (data.first(), data.get(1)) else {
        return;
    };
    let (tool, params) = &harness.tools[usize::from(pick) % harness.tools.len()];
    let rest = &data[2..];
    let arguments = match serde_json::from_slice::<Value>(rest) {
        Ok(Value::Object(map)) => map,
        parsed => {
            let mut map = Map::new();
            let name = if params.is_empty() {
                "x".to_owned()
            } else {
                params[usize::from(param) % params.len()].clone()
            };
            let value = parsed
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(rest).into_owned()));
            map.insert(name, value);
            map
        }
    };
    let id = harness
        .next_id
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let line = json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
        "params":{"name":tool,"arguments":arguments}});
    let answer = harness
        .runtime
        .block_on(exchange(&harness.write, &harness.read, id, line.to_string()));
    assert!(
        answer.get("result").is_some() || answer.get("error").is_some(),
        "{answer}"
    );
});
