//! Fetches and searches against the test kit's web site on a loopback port — which is itself a
//! private address, so these fetches say `private_ok` as a rule naming it would; one test shows
//! what happens without.

use std::time::Duration;

use lembas_testkit::WebSite;
use lembas_web::{Fetch, FetchError, Fetched, Limits, Reader, SearchProvider, fetch, search};
use tokio_util::sync::CancellationToken;

/// Pages and PDFs read in this process: `lembas-reader` is the binary's.
const READER: Reader = Reader::Inline(lembas_web::convert);

/// A fetch with the default limits that may reach this computer (`private_ok`) or not.
fn how(private_ok: bool) -> Fetch<'static> {
    Fetch { limits: Limits::default(), private_ok, reader: &READER, redirects: None }
}

async fn got(site: &WebSite, path: &str) -> Result<Fetched, FetchError> {
    fetch(&site.url(path), how(true), &CancellationToken::new()).await
}

fn page(fetched: Result<Fetched, FetchError>) -> String {
    match fetched {
        Ok(page @ Fetched::Page { .. }) => page.to_text(),
        other => panic!("not a page: {other:?}"),
    }
}

#[tokio::test]
async fn a_page_is_markdown_without_its_scripts_styles_and_menus() {
    let site = WebSite::start().await;
    let text = page(got(&site, "/page.html").await);
    assert!(text.starts_with("# The Lembas Guide\nSource: http://127.0.0.1:"), "{text}");
    assert!(text.contains("text/html; charset=utf-8"), "{text}");
    assert!(text.contains("# Baking lembas"), "{text}");
    assert!(text.contains("Lembas is **waybread**; see [the recipe](https://example.org/recipe)."), "{text}");
    assert!(text.contains("*   flour") || text.contains("- flour") || text.contains("* flour"), "{text}");
    assert!(text.contains("bake --at 180"), "{text}");
    for gone in ["secret", "also a script", "color: red", "Menu item"] {
        assert!(!text.contains(gone), "{gone} is not the page's content: {text}");
    }
}

#[tokio::test]
async fn text_json_and_a_pdf_are_read_and_binary_content_refused() {
    let site = WebSite::start().await;
    assert!(page(got(&site, "/plain.txt").await).ends_with("just text\nsecond line\n"));
    assert!(page(got(&site, "/latin1.txt").await).ends_with("café"));
    assert!(page(got(&site, "/data.json").await).ends_with("{\n  \"a\": 1,\n  \"b\": [\n    true\n  ]\n}"));
    let pdf = page(got(&site, "/doc.pdf").await);
    assert!(pdf.contains("application/pdf") && pdf.contains("Hello from a PDF"), "{pdf}");
    match got(&site, "/image.png").await {
        Err(e @ FetchError::Binary { .. }) => assert!(e.to_string().contains("image/png"), "{e}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn redirects_are_followed_on_the_site_only_and_errors_say_what_happened() {
    let site = WebSite::start().await;
    let text = page(got(&site, "/redirect").await);
    assert!(text.contains("/page.html (text/html") && text.contains("# Baking lembas"), "{text}");
    match got(&site, "/elsewhere").await {
        Ok(Fetched::Redirected { to, status: 302, .. }) => assert_eq!(to, site.by_name("/page.html")),
        other => panic!("{other:?}"),
    }
    assert!(matches!(got(&site, "/loop").await, Err(FetchError::TooManyRedirects(10))));
    match got(&site, "/missing").await {
        Err(e @ FetchError::Status { .. }) => {
            assert!(e.to_string().contains("404 Not Found") && e.to_string().contains("Not here"), "{e}")
        }
        other => panic!("{other:?}"),
    }
    let closed = fetch("http://127.0.0.1:9/", how(true), &CancellationToken::new()).await;
    assert!(matches!(closed, Err(FetchError::Unreachable { .. })), "{closed:?}");
}

#[tokio::test]
async fn a_redirect_is_judged_as_a_fetch_of_its_own_before_it_is_followed() {
    let site = WebSite::start().await;
    // What the rules would say of `http://127.0.0.1:PORT/public/*` allowed and nothing else.
    let public = site.url("/public/");
    let judge = lembas_web::RedirectJudge(std::sync::Arc::new(move |_from: &str, to: &str| {
        if to.starts_with(&public) { Ok(()) } else { Err("no rule allows it".to_owned()) }
    }));
    let judged = Fetch { redirects: Some(&judge), ..how(true) };
    let go = |to: &str| site.url(&format!("/public/../go?to={to}"));
    // `/public/../go` is `/go` once read as a URL; the judge sees that, not the text.
    for to in [site.url("/private/key.txt"), "/private/key.txt".to_owned(), "/public/../private/key.txt".to_owned()] {
        match fetch(&go(&to), judged, &CancellationToken::new()).await {
            Ok(Fetched::Redirected { why, .. }) => assert_eq!(why, "no rule allows it"),
            other => panic!("followed to {to}: {other:?}"),
        }
    }
    // Without a judge, the same site is the same scheme, host and port.
    let other_port = format!("http://127.0.0.1:{}/private/key.txt", site.port() + 1);
    for to in [other_port, site.by_name("/private/key.txt")] {
        match fetch(&go(&to), how(true), &CancellationToken::new()).await {
            Ok(fetched @ Fetched::Redirected { .. }) => {
                assert!(fetched.to_text().contains("another site") && !fetched.to_text().contains("PRIVATE"))
            }
            other => panic!("followed to {to}: {other:?}"),
        }
    }
    let same = page(fetch(&go("/private/key.txt"), how(true), &CancellationToken::new()).await);
    assert!(same.contains("PRIVATE-KEY-MATERIAL"), "a same-site redirect still follows without a judge: {same}");
}

#[tokio::test]
async fn a_slow_site_times_out_a_huge_page_is_cut_and_a_fetch_can_be_interrupted() {
    let site = WebSite::start().await;
    let quick = Fetch { limits: Limits { timeout: Duration::from_millis(300), ..Limits::default() }, ..how(true) };
    let slow = fetch(&site.url("/slow"), quick, &CancellationToken::new()).await;
    assert!(matches!(slow, Err(FetchError::TimedOut { .. })), "{slow:?}");
    match got(&site, "/huge").await {
        Ok(Fetched::Page { bytes, cut: true, .. }) => assert_eq!(bytes, Limits::default().max_bytes),
        other => panic!("{other:?}"),
    }
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        stop.cancel();
    });
    assert!(matches!(fetch(&site.url("/slow"), how(true), &cancel).await, Err(FetchError::Cancelled)));
}

#[tokio::test]
async fn the_private_network_is_refused_by_address_and_by_a_name_that_resolves_into_it() {
    let site = WebSite::start().await;
    let cancel = CancellationToken::new();
    let by_address = fetch(&site.url("/page.html"), how(false), &cancel).await;
    assert!(matches!(&by_address, Err(FetchError::Refused(why)) if why.contains("127.0.0.1")), "{by_address:?}");
    // `localhost` is refused by its name (a name resolved there is refused by the resolver: its own test).
    let by_name = fetch(&site.by_name("/page.html"), how(false), &cancel).await;
    assert!(matches!(&by_name, Err(FetchError::Refused(_))), "{by_name:?}");
}

#[tokio::test]
async fn a_search_asks_the_provider_and_reads_its_results() {
    let site = WebSite::start().await;
    let searx = SearchProvider::new("searxng", Some(&site.url("")), None).unwrap();
    let hits = search(&searx, "lembas bread", 2, &CancellationToken::new()).await.unwrap();
    assert_eq!(hits.len(), 2);
    assert_eq!(hits[0].title, "Result 1 for lembas bread");
    assert_eq!(hits[0].snippet, "Snippet 1");
    assert_eq!(site.searches()[0]["format"], "json");
    // The key comes from the environment variable named; PATH is one every process has.
    let brave = SearchProvider::new("brave", Some(&site.url("/brave")), Some("PATH")).unwrap();
    let hits = search(&brave, "waybread", 5, &CancellationToken::new()).await.unwrap();
    assert_eq!(hits[0].url, "https://example.org/brave");
    assert_eq!(site.searches()[1]["key"], std::env::var("PATH").unwrap());
}
