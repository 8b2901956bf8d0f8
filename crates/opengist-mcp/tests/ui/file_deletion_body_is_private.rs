// The only PATCH body that deletes files is made by the guarded delete-files target.
use std::collections::BTreeSet;

use opengist_mcp::opengist::delete_gist_files::FileDeletion;

fn main() {
    let _ = FileDeletion::new(BTreeSet::from(["a".to_owned()]));
}
