// A validated body is not a clearance: publishing needs the guard's Clearance<CreateGist>.
use opengist_mcp::opengist::OpengistClient;
use opengist_mcp::opengist::{create_gist::NewGist, requests::Visibility};

async fn publish(client: &OpengistClient) {
    let Ok(body) = NewGist::new(None, None, Visibility::Public, None, vec![("a".into(), "x".into())]) else {
        return;
    };
    let _ = client.create_gist(body).await;
}

fn main() {}
