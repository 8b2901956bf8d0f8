// Deleting a gist is always guarded: it has no Clearance (and so no Exempt) form.
use ask_first::Clearance;
use opengist_mcp::opengist::delete_gist::DeleteGist;

fn skip_the_question(_clearance: Clearance<DeleteGist>) {}

fn main() {}
