// A hand-written handler cannot ask without saying how the target is read again after a yes:
// `Guard::approve` takes the re-read, so an approval cannot outlive what the person was shown.
#[path = "../fixture.rs"]
mod fixture;

use fixture::{DeleteNote, Server};
use ask_first::protocol::GuardCall;
use ask_first::{Approved, HasGuard};

async fn ask(server: &Server, call: GuardCall) -> Option<Approved<DeleteNote>> {
    let target = DeleteNote { id: "n1".to_owned() };
    server.guard().approve(call, target).await.ok()
}

fn main() {
    let _ = ask;
}
