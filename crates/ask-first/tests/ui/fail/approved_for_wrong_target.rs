// An approval to delete a whole gist is not an approval to delete some of its files.
use ask_first::{Approved, Binding, Question, Target};

ask_first::wording! {
    struct DeleteGistAsk = "Delete this gist?";
    struct DeleteFilesAsk = "Delete {} file(s) from this gist?";
}

struct DeleteGist {
    id: String,
}

impl Target for DeleteGist {
    const OPERATION: &'static str = "delete_gist";
    fn bind(&self, binding: &mut Binding) {
        binding.text("id", &self.id);
    }
    fn question(&self) -> Question {
        Question::new::<DeleteGistAsk>([])
    }
}

struct DeleteGistFiles {
    id: String,
    files: Vec<String>,
}

impl Target for DeleteGistFiles {
    const OPERATION: &'static str = "delete_gist_files";
    fn bind(&self, binding: &mut Binding) {
        binding.text("id", &self.id).set("files", &self.files);
    }
    fn question(&self) -> Question {
        Question::new::<DeleteFilesAsk>([ask_first::Fact::count(self.files.len() as u64)])
    }
}

struct Client;

impl Client {
    fn delete_gist_files(&self, approved: Approved<DeleteGistFiles>) {
        let _ = approved.into_target();
    }
}

fn reuse(client: &Client, approved: Approved<DeleteGist>) {
    client.delete_gist_files(approved);
}

fn main() {
    let _ = reuse;
}
