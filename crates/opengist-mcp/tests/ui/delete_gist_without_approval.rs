// A target is not an approval: deleting a gist needs the guard's Approved<DeleteGist>.
use opengist_mcp::opengist::OpengistClient;
use opengist_mcp::opengist::delete_gist::DeleteGist;

async fn delete(client: &OpengistClient, target: DeleteGist) {
    let _ = client.delete_gist(target).await;
}

fn main() {}
