// Opengist's like endpoint toggles; only the idempotent set_like (which reads first) is public.
use opengist_mcp::opengist::OpengistClient;
use opengist_mcp::opengist::requests::GistId;

async fn flip(client: &OpengistClient, id: &GistId) {
    let _ = client.toggle_like(id).await;
}

fn main() {}
