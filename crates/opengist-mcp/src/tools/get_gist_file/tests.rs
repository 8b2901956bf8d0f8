use super::*;
use crate::tools::common::fixtures::*;

#[test]
fn file_arguments() {
    let args = |v: Value| serde_json::from_value::<GetGistFileArgs>(v).expect("args");
    let max = max_window_bytes(262_144);
    assert_eq!(max, 126_976);
    let r = args(json!({"gist_id": ID, "filename": "a"}))
        .validate(max)
        .expect("ok");
    assert_eq!((r.offset, r.max_bytes, r.sha), (0, 65_536, None));
    assert!(
        args(json!({"gist_id": ID, "filename": ""}))
            .validate(max)
            .is_err()
    );
    assert!(
        args(json!({"gist_id": ID, "filename": "a", "max_bytes": 3}))
            .validate(max)
            .is_err()
    );
    assert!(
        args(json!({"gist_id": ID, "filename": "a", "max_bytes": 126_977}))
            .validate(max)
            .is_err()
    );
    let err = args(json!({"gist_id": ID, "filename": "a", "sha": "head"}))
        .validate(max)
        .expect_err("head");
    assert!(err.contains("commits[0].version"));
}

fn raw(bytes: &[u8], offset: u64, total: Option<u64>, truncated: bool) -> RawFile {
    RawFile {
        bytes: bytes.to_vec(),
        offset,
        total_bytes: total,
        truncated,
        is_utf8: true,
    }
}

#[test]
fn windows_do_not_split_characters() {
    // "añb✓c": ✓ is bytes 4..7. A window of 6 bytes ends inside it.
    let text = "añb✓cdef".as_bytes();
    let r = raw(&text[..6], 0, Some(text.len() as u64), true);
    let w = shape_window(
        &id(),
        "f.txt",
        "beef",
        &WindowSource::from_raw(&r, None),
        6,
        None,
    );
    assert_eq!(w.content.as_deref(), Some("añb"));
    assert_eq!(
        (w.bytes_returned, w.next_offset, w.truncated),
        (4, Some(4), true)
    );
    assert_eq!(
        w.next_call.as_deref(),
        Some(&*format!(
            r#"get_gist_file with gist_id="{ID}", filename="f.txt", sha="beef", offset=4"#
        ))
    );
    // Starting inside ✓ (offset 5): moved to 7.
    let r = raw(&text[5..], 5, Some(text.len() as u64), false);
    let w = shape_window(
        &id(),
        "f.txt",
        "beef",
        &WindowSource::from_raw(&r, None),
        100,
        Some(100),
    );
    assert_eq!(w.offset, 7);
    assert_eq!(w.content.as_deref(), Some("cdef"));
    assert!(!w.truncated && w.next_offset.is_none() && w.next_call.is_none());
    assert!(
        w.note
            .as_deref()
            .is_some_and(|n| n.contains("moved forward 2 byte(s) to 7"))
    );
}

#[test]
fn a_window_smaller_than_the_bytes_at_hand_is_cut_there() {
    let text = "hello world";
    let w = shape_window(
        &id(),
        "f",
        "beef",
        &WindowSource::from_whole(text, 0, 100),
        5,
        Some(5),
    );
    assert_eq!(w.content.as_deref(), Some("hello"));
    assert_eq!(w.next_offset, Some(5));
    assert!(
        w.next_call
            .as_deref()
            .is_some_and(|c| c.ends_with("offset=5, max_bytes=5"))
    );
    assert_eq!(w.total_bytes, Some(11));
}

#[test]
fn whole_content_windows() {
    let text = "0123456789";
    let s = WindowSource::from_whole(text, 4, 3);
    assert_eq!(
        (s.bytes, s.more_follows, s.total_bytes),
        (&b"456"[..], true, Some(10))
    );
    let s = WindowSource::from_whole(text, 8, 3);
    assert_eq!((s.bytes, s.more_follows), (&b"89"[..], false));
    let s = WindowSource::from_whole(text, 50, 3);
    assert!(s.bytes.is_empty() && !s.more_follows);
    let w = shape_window(&id(), "f", "beef", &s, 3, None);
    assert_eq!(w.bytes_returned, 0);
    assert!(
        w.note
            .as_deref()
            .is_some_and(|n| n.contains("past the end"))
    );
}

#[test]
fn binary_windows_are_omitted() {
    let r = raw(b"\x89PNG\r\n\x1a\n\xff\xfe", 0, Some(10), false);
    let w = shape_window(
        &id(),
        "logo.png",
        "beef",
        &WindowSource::from_raw(&r, None),
        100,
        None,
    );
    assert_eq!(w.content, None);
    assert_eq!(
        w.omitted.as_deref(),
        Some("binary file (10 bytes): not shown")
    );
    let r = raw(b"abc\0def", 0, None, false);
    let w = shape_window(
        &id(),
        "x.bin",
        "beef",
        &WindowSource::from_raw(&r, Some(7)),
        100,
        None,
    );
    assert_eq!(
        w.omitted.as_deref(),
        Some("binary file (7 bytes): not shown")
    );
    // A file that really ends in half a character is not text either.
    let r = raw(&"✓".as_bytes()[..2], 0, Some(2), false);
    let w = shape_window(
        &id(),
        "x",
        "beef",
        &WindowSource::from_raw(&r, None),
        100,
        None,
    );
    assert!(w.omitted.is_some());
}
