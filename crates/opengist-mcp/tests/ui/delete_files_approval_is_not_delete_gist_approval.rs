// An approval for deleting some files cannot be spent on deleting the whole gist.
use ask_first::Approved;
use opengist_mcp::opengist::OpengistClient;
use opengist_mcp::opengist::delete_gist_files::DeleteGistFiles;

async fn escalate(client: &OpengistClient, approved: Approved<DeleteGistFiles>) {
    let _ = client.delete_gist(approved).await;
}

fn main() {}
