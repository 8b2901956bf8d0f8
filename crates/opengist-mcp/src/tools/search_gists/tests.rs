//! Tests of `search_gists`: arguments and queries, matching, the frontier, and whole searches
//! over constructed responses.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use super::args::*;
use super::matching::*;
use super::scan::*;
use crate::opengist::{GistDetail, GistSummary, OpengistError, Page};

fn plan(v: Value) -> SearchPlan {
    serde_json::from_value::<SearchGistsArgs>(v)
        .expect("args")
        .validate()
        .expect("valid")
}

fn gid(n: usize) -> String {
    format!("{n:032x}")
}

fn summary(n: usize, title: &str, visibility: &str) -> GistSummary {
    serde_json::from_value(json!({
        "id": gid(n),
        "owner": {"id": 1, "username": "alice"},
        "title": title,
        "description": "",
        "html_url": format!("https://gist.example.com/alice/{}", gid(n)),
        "visibility": visibility,
        "topics": ["misc"],
    }))
    .expect("summary")
}

fn detail(n: usize, files: &[(&str, &str)]) -> GistDetail {
    let map: serde_json::Map<String, Value> = files
        .iter()
        .map(|(name, content)| {
            (
                (*name).to_owned(),
                json!({"filename": name, "size": content.len(), "content": content, "encoding": "utf-8"}),
            )
        })
        .collect();
    serde_json::from_value(json!({
        "id": gid(n),
        "owner": {"id": 1, "username": "alice"},
        "title": "",
        "visibility": "public",
        "files": map,
    }))
    .expect("detail")
}

// -- arguments and queries --

#[test]
fn arguments_are_validated() {
    let p = plan(json!({"query": "  Hello   World "}));
    assert_eq!(p.query.phrase, "hello world");
    assert_eq!(p.query.terms, ["hello", "world"]);
    assert_eq!(p.fields, Field::DEFAULT);
    assert_eq!((p.limit, p.max_pages, p.page_start, p.skip), (20, 5, 1, 0));
    let bad = |v: Value| {
        serde_json::from_value::<SearchGistsArgs>(v)
            .expect("args")
            .validate()
            .expect_err("invalid")
    };
    assert!(bad(json!({"query": "   "})).contains("1 to 200"));
    assert!(bad(json!({"query": "x".repeat(201)})).contains("it has 201"));
    assert!(bad(json!({"query": "x", "fields": []})).contains("empty"));
    assert!(bad(json!({"query": "x", "limit": 0})).contains("limit"));
    assert!(bad(json!({"query": "x", "limit": 101})).contains("limit"));
    assert!(bad(json!({"query": "x", "max_pages": 21})).contains("max_pages"));
    assert!(bad(json!({"query": "x", "page_start": 0})).contains("page_start"));
    assert!(bad(json!({"query": "x", "skip": 100})).contains("skip"));
    assert!(bad(json!({"query": "x", "since": "today"})).contains("RFC 3339"));
    assert!(bad(json!({"query": "x", "scope": "public", "username": "b"})).contains("scope=mine"));
    assert!(
        serde_json::from_value::<SearchGistsArgs>(json!({"query": "x", "fields": ["body"]}))
            .is_err()
    );
    let p = plan(json!({"query": "x", "fields": ["content", "title", "content"]}));
    assert_eq!(p.fields, [Field::Title, Field::Content]);
}

#[test]
fn a_gist_matches_on_the_phrase_or_on_every_term() {
    let q = Query::parse("Rust Tokio").expect("query");
    let title = q.hits("Async RUST with tokio");
    assert!(!title.phrase && title.terms == [true, true]);
    assert_eq!(
        matched_fields(&q, &[(Field::Title, title)]),
        Some(vec![Field::Title])
    );
    // Terms across fields.
    let split = [
        (Field::Title, q.hits("rust notes")),
        (Field::Description, q.hits("uses tokio")),
        (Field::Owner, q.hits("alice")),
    ];
    assert_eq!(
        matched_fields(&q, &split),
        Some(vec![Field::Title, Field::Description])
    );
    // One term only: no match.
    assert_eq!(
        matched_fields(&q, &[(Field::Title, q.hits("rust only"))]),
        None
    );
    // The phrase, case-insensitive, across a non-ASCII case change.
    let q = Query::parse("ÉTÉ").expect("query");
    assert!(q.hits("un été chaud").phrase);
}

#[test]
fn metadata_fields() {
    let q = Query::parse("misc").expect("query");
    let s = summary(1, "Title", "public");
    let hits = meta_hits(&q, &Field::DEFAULT, &s);
    assert_eq!(
        hits.iter().map(|(f, _)| *f).collect::<Vec<_>>(),
        [
            Field::Title,
            Field::Description,
            Field::Topics,
            Field::Owner
        ]
    );
    assert_eq!(matched_fields(&q, &hits), Some(vec![Field::Topics]));
    let q = Query::parse("ALICE").expect("query");
    assert_eq!(
        matched_fields(&q, &meta_hits(&q, &[Field::Owner], &s)),
        Some(vec![Field::Owner])
    );
    assert!(
        meta_hits(&q, &[Field::Title], &s)
            .iter()
            .all(|(_, h)| !h.any())
    );
}

#[test]
fn files_and_snippets() {
    let q = Query::parse("needle").expect("query");
    let d = detail(
        1,
        &[
            (
                "b.txt",
                "hay\nhay NEEDLE hay\nneedle again\nneedle 3\nneedle 4",
            ),
            ("a_needle.md", "nothing"),
        ],
    );
    let scan = scan_detail(&q, &[Field::Filenames, Field::Content], &d);
    assert_eq!(scan.hits.len(), 2);
    assert!(scan.hits.iter().all(|(_, h)| h.phrase));
    assert_eq!(scan.snippets.len(), SNIPPETS_PER_GIST);
    assert_eq!(
        scan.snippets[0],
        Snippet {
            filename: "b.txt".into(),
            line_number: 2,
            text: "hay NEEDLE hay".into()
        }
    );
    assert_eq!(scan.content_bytes, 56);
    // Filenames only: no content hits, no snippets.
    let scan = scan_detail(&q, &[Field::Filenames], &d);
    assert_eq!(scan.hits.len(), 1);
    assert!(scan.snippets.is_empty());
}

#[test]
fn snippets_are_at_most_200_characters_around_the_match() {
    let line = format!("{}NEEDLE{}", "é".repeat(500), "x".repeat(500));
    let q = Query::parse("needle").expect("query");
    let d = detail(1, &[("f", &line)]);
    let scan = scan_detail(&q, &[Field::Content], &d);
    let text = &scan.snippets[0].text;
    assert!(
        text.chars().count() <= SNIPPET_CHARS,
        "{}",
        text.chars().count()
    );
    assert!(text.contains("NEEDLE") && text.starts_with('…') && text.ends_with('…'));
    // Lowercasing that changes byte lengths still maps back to the right place.
    let line = format!("{}İ needle {}", "a".repeat(300), "b".repeat(300));
    let p = line.to_lowercase().find("needle").expect("found");
    let start = original_offset(&line, p);
    assert_eq!(line.get(start..start + 6), Some("needle"));
    assert!(snippet_text(&line, start, start + 6).contains("İ needle"));
}

// -- the frontier --

#[test]
fn only_gists_before_the_limit_are_read_and_results_keep_list_order() {
    let p = plan(json!({"query": "hit", "limit": 2}));
    let items = vec![
        summary(1, "x", "public"),
        summary(2, "hit", "public"),
        summary(3, "y", "public"),
        summary(4, "hit", "public"),
        summary(5, "z", "public"),
    ];
    let mut scan = PageScan::new(&p, &items);
    let wanted: Vec<usize> = scan.to_fetch(2, 100).into_iter().map(|(i, _)| i).collect();
    // Gist 5 is after the second metadata match: never read.
    assert_eq!(wanted, [0, 2]);
    let mut state = ScanState::default();
    assert_eq!(scan.advance(&p, &mut state), Step::NeedFetch);
    // The second read finishes first and matches by filename; nothing moves until the
    // first one is in.
    let hit = scan_detail(&p.query, &p.fields, &detail(3, &[("hit.txt", "")]));
    scan.resolve(2, Fetched::Scan(hit));
    assert_eq!(scan.advance(&p, &mut state), Step::NeedFetch);
    assert_eq!(state.gists, 0);
    let miss = scan_detail(&p.query, &p.fields, &detail(1, &[("a.txt", "")]));
    scan.resolve(0, Fetched::Scan(miss));
    assert_eq!(scan.advance(&p, &mut state), Step::Stop(StopKind::Limit));
    assert_eq!(scan.position(), 3);
    let ids: Vec<&str> = state.matches.iter().map(|m| m.gist.id.as_str()).collect();
    assert_eq!(ids, [gid(2), gid(3)]);
    assert_eq!(state.matches[1].matched_fields, [Field::Filenames]);
    assert_eq!((state.gists, state.reads), (3, 2));
}

#[test]
fn filters_failures_and_vanished_gists() {
    let p = plan(json!({"query": "hit", "visibility": "private"}));
    let items = vec![
        summary(1, "hit", "public"),
        summary(2, "nope", "private"),
        summary(3, "nope", "private"),
    ];
    let mut scan = PageScan::new(&p, &items);
    let wanted: Vec<usize> = scan.to_fetch(20, 100).into_iter().map(|(i, _)| i).collect();
    assert_eq!(wanted, [1, 2]);
    scan.resolve(1, Fetched::Gone);
    scan.resolve(2, Fetched::Failed("boom".into()));
    let mut state = ScanState::default();
    assert_eq!(
        scan.advance(&p, &mut state),
        Step::Stop(StopKind::Failed("boom".into()))
    );
    assert_eq!((scan.position(), state.gists, state.gone), (2, 2, 1));
    assert!(state.matches.is_empty());
}

#[test]
fn metadata_only_searches_read_nothing() {
    let p = plan(json!({"query": "hit", "fields": ["title", "topics"]}));
    let items = vec![summary(1, "x", "public"), summary(2, "HIT", "public")];
    let mut scan = PageScan::new(&p, &items);
    assert!(scan.to_fetch(20, 100).is_empty());
    let mut state = ScanState::default();
    assert_eq!(scan.advance(&p, &mut state), Step::PageDone);
    assert_eq!(state.matches.len(), 1);
    assert_eq!(state.gists, 2);
}

// -- whole searches over constructed responses --

struct Lists {
    pages: Vec<Vec<GistSummary>>,
}

impl Lists {
    fn page(&self, n: u32) -> Result<Page<GistSummary>, OpengistError> {
        let index = n as usize - 1;
        Ok(Page {
            items: self.pages.get(index).cloned().unwrap_or_default(),
            page: n,
            per_page: 100,
            total: None,
            total_pages: None,
            has_next: index + 1 < self.pages.len(),
        })
    }
}

#[tokio::test]
async fn a_search_stops_at_the_limit_and_resumes_exactly_there() {
    let lists = Lists {
        pages: vec![
            (0..100)
                .map(|i| summary(i, if i % 10 == 9 { "hit" } else { "x" }, "public"))
                .collect(),
            (100..150).map(|i| summary(i, "hit", "public")).collect(),
        ],
    };
    let p = plan(json!({"query": "hit", "fields": ["title"], "limit": 3}));
    let listed = AtomicUsize::new(0);
    let out = run_search(
        &p,
        |n| {
            listed.fetch_add(1, Ordering::SeqCst);
            std::future::ready(lists.page(n))
        },
        |_| std::future::ready(Err::<GistDetail, _>(OpengistError::CreatedWithoutId)),
    )
    .await
    .expect("search");
    assert_eq!(out.matches.len(), 3);
    assert_eq!(out.matches[2].gist.id, gid(29));
    assert!(out.stopped_early);
    assert_eq!(out.stop_reason.as_deref(), Some("reached limit=3"));
    assert_eq!(
        out.next_call.as_deref(),
        Some(
            r#"search_gists with query="hit", fields=["title"], limit=3, page_start=1, skip=30, after="0000000000000000000000000000001d""#
        )
    );
    assert_eq!(
        out.scanned,
        Scanned {
            pages: 1,
            gists: 30,
            gists_with_files_read: 0,
            content_bytes_read: 0
        }
    );
    assert_eq!(listed.load(Ordering::SeqCst), 1);

    // Resuming from next_call continues right after the last match.
    let p =
        plan(json!({"query": "hit", "fields": ["title"], "limit": 3, "page_start": 1, "skip": 30}));
    let out = run_search(
        &p,
        |n| std::future::ready(lists.page(n)),
        |_| std::future::ready(Err::<GistDetail, _>(OpengistError::CreatedWithoutId)),
    )
    .await
    .expect("search");
    let ids: Vec<String> = out.matches.iter().map(|m| m.gist.id.clone()).collect();
    assert_eq!(ids, [gid(39), gid(49), gid(59)]);
}

#[tokio::test]
async fn gists_deleted_or_added_between_calls_are_never_passed_over() {
    // Every tenth gist is a hit. The first call stops at the third hit (gist 29).
    let titles = |i: usize| if i % 10 == 9 { "hit" } else { "x" };
    let p = plan(json!({"query": "hit", "fields": ["title"], "limit": 3}));
    let first = Lists {
        pages: vec![(0..100).map(|i| summary(i, titles(i), "public")).collect()],
    };
    let out = run_search(
        &p,
        |n| std::future::ready(first.page(n)),
        |_| std::future::ready(Err::<GistDetail, _>(OpengistError::CreatedWithoutId)),
    )
    .await
    .expect("search");
    let next = out.next_call.expect("stopped at the limit");
    assert!(
        next.ends_with(&format!("page_start=1, skip=30, after=\"{}\"", gid(29))),
        "{next}"
    );
    let resumed = plan(json!({
        "query": "hit", "fields": ["title"], "limit": 3,
        "page_start": 1, "skip": 30, "after": gid(29),
    }));

    // Meanwhile five gists before the stop point are deleted (the list shifts back by five) and
    // two are added at the front (it shifts on by two): the next call still starts at gist 30.
    let mut now: Vec<GistSummary> = vec![summary(500, "x", "public"), summary(501, "x", "public")];
    now.extend(
        (0..100)
            .filter(|i| !(10..15).contains(i))
            .map(|i| summary(i, titles(i), "public")),
    );
    let second = Lists { pages: vec![now] };
    let out = run_search(
        &resumed,
        |n| std::future::ready(second.page(n)),
        |_| std::future::ready(Err::<GistDetail, _>(OpengistError::CreatedWithoutId)),
    )
    .await
    .expect("search");
    let ids: Vec<String> = out.matches.iter().map(|m| m.gist.id.clone()).collect();
    assert_eq!(ids, [gid(39), gid(49), gid(59)]);
    assert_eq!(out.scanned.gists, 30, "examined from gist 30 to gist 59");

    // The anchor itself deleted: the call falls back to the position it was given (here one
    // gist on, as one before it went: gist 31), as a position-only cursor always did.
    let gone: Vec<GistSummary> = (0..100)
        .filter(|&i| i != 29)
        .map(|i| summary(i, titles(i), "public"))
        .collect();
    let third = Lists { pages: vec![gone] };
    let out = run_search(
        &resumed,
        |n| std::future::ready(third.page(n)),
        |_| std::future::ready(Err::<GistDetail, _>(OpengistError::CreatedWithoutId)),
    )
    .await
    .expect("search");
    assert_eq!(
        out.matches.first().map(|m| m.gist.id.clone()),
        Some(gid(39))
    );
    assert_eq!(out.scanned.gists, 29, "examined from gist 31 to gist 59");
}

#[tokio::test]
async fn the_page_budget_names_where_to_go_on() {
    let lists = Lists {
        pages: vec![
            vec![summary(1, "x", "public")],
            vec![summary(2, "x", "public")],
            vec![],
        ],
    };
    let p = plan(json!({"query": "hit", "fields": ["title"], "max_pages": 2}));
    let out = run_search(
        &p,
        |n| std::future::ready(lists.page(n)),
        |_| std::future::ready(Err::<GistDetail, _>(OpengistError::CreatedWithoutId)),
    )
    .await
    .expect("search");
    assert!(out.stopped_early && out.matches.is_empty());
    assert_eq!(
        out.stop_reason.as_deref(),
        Some("page budget max_pages=2 exhausted: call again with max_pages higher or page_start=3")
    );
    assert!(
        out.next_call.as_deref().is_some_and(
            |c| c.ends_with(&format!("max_pages=2, page_start=3, after=\"{}\"", gid(2)))
        )
    );
    assert_eq!(out.scanned.pages, 2);
    assert!(out.notes.iter().any(|n| n.contains("gist:read")));
}

#[tokio::test]
async fn the_end_of_the_list_is_not_an_early_stop() {
    let lists = Lists {
        pages: vec![vec![summary(1, "hit", "public"), summary(2, "x", "public")]],
    };
    let p = plan(json!({"query": "hit", "fields": ["title"], "scope": "public"}));
    let out = run_search(
        &p,
        |n| std::future::ready(lists.page(n)),
        |_| std::future::ready(Err::<GistDetail, _>(OpengistError::CreatedWithoutId)),
    )
    .await
    .expect("search");
    assert!(!out.stopped_early && out.next_call.is_none() && out.stop_reason.is_none());
    assert_eq!(out.scanned.gists, 2);
    assert!(out.notes.is_empty());
    // The limit reached on the very last gist is not early either.
    let p = plan(json!({"query": "x", "fields": ["title"], "limit": 1, "skip": 1}));
    let out = run_search(
        &p,
        |n| std::future::ready(lists.page(n)),
        |_| std::future::ready(Err::<GistDetail, _>(OpengistError::CreatedWithoutId)),
    )
    .await
    .expect("search");
    assert_eq!(out.matches.len(), 1);
    assert!(!out.stopped_early);
}

#[tokio::test]
async fn content_reads_are_concurrent_bounded_and_deterministic() {
    let n = 40;
    let lists = Lists {
        pages: vec![(0..n).map(|i| summary(i, "x", "public")).collect()],
    };
    // Gists 7 and 23 hold the needle; later gists finish first.
    let details: HashMap<String, GistDetail> = (0..n)
        .map(|i| {
            let body = if i == 7 || i == 23 {
                "a\nthe NEEDLE here\n"
            } else {
                "nothing"
            };
            (gid(i), detail(i, &[("f.txt", body)]))
        })
        .collect();
    let in_flight = AtomicUsize::new(0);
    let peak = AtomicUsize::new(0);
    let fetched = Mutex::new(Vec::new());
    let p = plan(json!({"query": "needle", "fields": ["content"], "limit": 2}));
    let out = run_search(
        &p,
        |page| std::future::ready(lists.page(page)),
        |id| {
            let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            let index = usize::from_str_radix(id.as_str(), 16).unwrap_or(0);
            if let Ok(mut f) = fetched.lock() {
                f.push(index);
            }
            let d = details.get(id.as_str()).cloned();
            let in_flight = &in_flight;
            async move {
                // Reverse completion order within each batch.
                tokio::time::sleep(Duration::from_millis(8 - (index % 4) as u64 * 2)).await;
                in_flight.fetch_sub(1, Ordering::SeqCst);
                d.ok_or(OpengistError::CreatedWithoutId)
            }
        },
    )
    .await
    .expect("search");
    assert!(peak.load(Ordering::SeqCst) <= FETCH_CONCURRENCY);
    assert!(peak.load(Ordering::SeqCst) > 1, "reads were not concurrent");
    let ids: Vec<String> = out.matches.iter().map(|m| m.gist.id.clone()).collect();
    assert_eq!(ids, [gid(7), gid(23)]);
    assert_eq!(out.matches[0].snippets[0].line_number, 2);
    assert_eq!(out.matches[0].snippets[0].text, "the NEEDLE here");
    assert_eq!(out.scanned.gists, 24);
    // At most three reads past the stop point were started.
    let started = fetched.lock().map(|f| f.len()).unwrap_or(0);
    assert!((24..=27).contains(&started), "{started}");
    let read = out.scanned.gists_with_files_read as usize;
    assert!(read >= 24 && read <= started, "{read} of {started}");
    assert!(
        out.next_call
            .as_deref()
            .is_some_and(|c| c.ends_with(&format!("page_start=1, skip=24, after=\"{}\"", gid(23))))
    );
}

#[tokio::test]
async fn the_content_budget_stops_the_scan() {
    let big = "z".repeat(700 * 1024);
    let lists = Lists {
        pages: vec![(0..10).map(|i| summary(i, "x", "public")).collect()],
    };
    let p = plan(json!({"query": "needle", "fields": ["content"]}));
    let out = run_search(
        &p,
        |page| std::future::ready(lists.page(page)),
        |id| {
            let index = usize::from_str_radix(id.as_str(), 16).unwrap_or(0);
            std::future::ready(Ok(detail(index, &[("big.txt", big.as_str())])))
        },
    )
    .await
    .expect("search");
    assert!(out.stopped_early);
    assert!(
        out.stop_reason
            .as_deref()
            .is_some_and(|r| r.starts_with("content byte budget"))
    );
    assert_eq!(out.scanned.gists, 3);
    assert!(out.scanned.content_bytes_read >= 3 * 700 * 1024);
    assert!(
        out.next_call
            .as_deref()
            .is_some_and(|c| c.ends_with(&format!("skip=3, after=\"{}\"", gid(2))))
    );
}

#[tokio::test]
async fn a_failed_first_page_is_an_error_and_a_later_one_a_stop() {
    let p = plan(json!({"query": "x", "fields": ["title"]}));
    let err = run_search(
        &p,
        |_| std::future::ready(Err(OpengistError::CreatedWithoutId)),
        |_| std::future::ready(Err::<GistDetail, _>(OpengistError::CreatedWithoutId)),
    )
    .await;
    assert!(err.is_err());
    let lists = Lists {
        pages: vec![vec![summary(1, "y", "public")], vec![]],
    };
    let out = run_search(
        &p,
        |n| {
            std::future::ready(if n == 1 {
                lists.page(1)
            } else {
                Err(OpengistError::CreatedWithoutId)
            })
        },
        |_| std::future::ready(Err::<GistDetail, _>(OpengistError::CreatedWithoutId)),
    )
    .await
    .expect("partial");
    assert!(out.stopped_early);
    assert!(
        out.stop_reason
            .as_deref()
            .is_some_and(|r| r.starts_with("listing page 2 failed"))
    );
    assert!(
        out.next_call
            .as_deref()
            .is_some_and(|c| c.ends_with(&format!("page_start=2, after=\"{}\"", gid(1))))
    );
}

#[tokio::test]
async fn no_match_says_when_contents_were_not_searched() {
    let lists = Lists {
        pages: vec![vec![summary(1, "x", "public")]],
    };
    let files = |_| std::future::ready(Ok::<_, OpengistError>(detail(1, &[("a.txt", "hit")])));
    let search = |query: Value| {
        let p = plan(query);
        let lists = &lists;
        async move {
            run_search(&p, |n| std::future::ready(lists.page(n)), files)
                .await
                .expect("search")
        }
    };
    let said = |out: &SearchOut| {
        out.notes
            .iter()
            .any(|n| n.contains("the files' contents were not searched"))
    };
    // The default fields: nothing matched, and the text in the file was not looked at.
    let out = search(json!({"query": "hit", "scope": "public"})).await;
    assert!(out.matches.is_empty());
    let note = out
        .notes
        .iter()
        .find(|n| n.contains("not searched"))
        .expect("the note");
    assert!(
        note.starts_with("No match in title, description, topics, owner, filenames: ")
            && note.contains("fields including \"content\""),
        "{note}"
    );
    // Positive controls: with content, the same query matches and nothing is said; a search
    // with content that matches nothing says nothing of contents either, nor does a match.
    let out = search(json!({"query": "hit", "scope": "public", "fields": ["content"]})).await;
    assert_eq!(out.matches.len(), 1);
    assert!(!said(&out), "{:?}", out.notes);
    let out =
        search(json!({"query": "nothing", "scope": "public", "fields": ["title", "content"]}))
            .await;
    assert!(out.matches.is_empty() && !said(&out), "{:?}", out.notes);
    let out = search(json!({"query": "x", "scope": "public", "fields": ["title"]})).await;
    assert_eq!(out.matches.len(), 1);
    assert!(!said(&out), "{:?}", out.notes);
}
