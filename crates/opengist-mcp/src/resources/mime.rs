//! A resource's `mimeType`, from its filename: the extension (case-insensitive) when it is a
//! well-known one, otherwise `text/plain` for text and `application/octet-stream` for binary
//! content (as Opengist's encoding of the file says).

/// Well-known extensions and their types. Text types a model reads as text; the rest are
/// binary formats Opengist sends base64.
const BY_EXTENSION: &[(&str, &str)] = &[
    ("txt", "text/plain"),
    ("text", "text/plain"),
    ("log", "text/plain"),
    ("md", "text/markdown"),
    ("markdown", "text/markdown"),
    ("html", "text/html"),
    ("htm", "text/html"),
    ("css", "text/css"),
    ("csv", "text/csv"),
    ("tsv", "text/tab-separated-values"),
    ("js", "text/javascript"),
    ("mjs", "text/javascript"),
    ("cjs", "text/javascript"),
    ("ts", "text/x-typescript"),
    ("tsx", "text/x-typescript"),
    ("jsx", "text/javascript"),
    ("json", "application/json"),
    ("jsonl", "application/jsonl"),
    ("xml", "application/xml"),
    ("yaml", "application/yaml"),
    ("yml", "application/yaml"),
    ("toml", "application/toml"),
    ("ini", "text/plain"),
    ("sql", "application/sql"),
    ("sh", "application/x-sh"),
    ("bash", "application/x-sh"),
    ("zsh", "application/x-sh"),
    ("ps1", "text/plain"),
    ("py", "text/x-python"),
    ("rb", "text/x-ruby"),
    ("rs", "text/x-rust"),
    ("go", "text/x-go"),
    ("java", "text/x-java"),
    ("kt", "text/x-kotlin"),
    ("swift", "text/x-swift"),
    ("c", "text/x-c"),
    ("h", "text/x-c"),
    ("cc", "text/x-c++"),
    ("cpp", "text/x-c++"),
    ("hpp", "text/x-c++"),
    ("cs", "text/x-csharp"),
    ("php", "text/x-php"),
    ("pl", "text/x-perl"),
    ("lua", "text/x-lua"),
    ("r", "text/x-r"),
    ("diff", "text/x-diff"),
    ("patch", "text/x-diff"),
    ("svg", "image/svg+xml"),
    ("png", "image/png"),
    ("jpg", "image/jpeg"),
    ("jpeg", "image/jpeg"),
    ("gif", "image/gif"),
    ("webp", "image/webp"),
    ("ico", "image/vnd.microsoft.icon"),
    ("bmp", "image/bmp"),
    ("pdf", "application/pdf"),
    ("zip", "application/zip"),
    ("gz", "application/gzip"),
    ("tar", "application/x-tar"),
    ("wasm", "application/wasm"),
    ("mp3", "audio/mpeg"),
    ("wav", "audio/wav"),
    ("mp4", "video/mp4"),
];

/// Names that are types of their own whatever their extension.
const BY_NAME: &[(&str, &str)] = &[
    ("dockerfile", "text/x-dockerfile"),
    ("makefile", "text/x-makefile"),
];

/// The MIME type of a file named `filename`; `binary` is whether its content is binary
/// (Opengist sent it base64, or its bytes are not UTF-8 text), used when the name says nothing.
pub(crate) fn mime_type(filename: &str, binary: bool) -> &'static str {
    let lower = filename.to_ascii_lowercase();
    if let Some((_, mime)) = BY_NAME.iter().find(|(name, _)| *name == lower) {
        return mime;
    }
    let known = lower
        .rsplit_once('.')
        .filter(|(stem, _)| !stem.is_empty())
        .and_then(|(_, ext)| BY_EXTENSION.iter().find(|(e, _)| *e == ext))
        .map(|(_, mime)| *mime);
    match known {
        // A text type for bytes that are not text would mislead: say what they are.
        Some(mime) if binary && is_textual(mime) => "application/octet-stream",
        Some(mime) => mime,
        None if binary => "application/octet-stream",
        None => "text/plain",
    }
}

/// Whether a type is read as text.
pub(crate) fn is_textual(mime: &str) -> bool {
    mime.starts_with("text/")
        || mime == "image/svg+xml"
        || matches!(
            mime,
            "application/json"
                | "application/jsonl"
                | "application/xml"
                | "application/yaml"
                | "application/toml"
                | "application/sql"
                | "application/x-sh"
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_decide_case_insensitively() {
        assert_eq!(mime_type("main.rs", false), "text/x-rust");
        assert_eq!(mime_type("README.MD", false), "text/markdown");
        assert_eq!(mime_type("data.json", false), "application/json");
        assert_eq!(mime_type("archive.tar.gz", true), "application/gzip");
        assert_eq!(mime_type("logo.PNG", true), "image/png");
        assert_eq!(mime_type("Dockerfile", false), "text/x-dockerfile");
    }

    #[test]
    fn unknown_names_fall_back_on_the_content() {
        assert_eq!(mime_type("notes", false), "text/plain");
        assert_eq!(mime_type("blob.xyz", true), "application/octet-stream");
        assert_eq!(
            mime_type(".bashrc", false),
            "text/plain",
            "a dotfile has no extension"
        );
        // A text extension on binary bytes is not claimed to be text.
        assert_eq!(mime_type("weird.txt", true), "application/octet-stream");
        // Binary types stay what they are even when Opengist sent the bytes as text.
        assert_eq!(mime_type("x.png", false), "image/png");
    }

    #[test]
    fn textual_types() {
        assert!(is_textual("text/plain") && is_textual("application/json"));
        assert!(!is_textual("image/png") && !is_textual("application/octet-stream"));
    }
}
