//! Node outputs as markdown, rendered safely: raw HTML in an output is shown as text, links keep
//! only `http`, `https`, `mailto` and in-page targets, and images become links (a page never
//! loads anything an output names). pulldown-cmark escapes every text and attribute.

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd, html};

fn safe_url(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    match lower.split_once(':') {
        // A colon before any `/`, `?` or `#` is a scheme.
        Some((scheme, _)) if !scheme.contains(['/', '?', '#']) => {
            matches!(scheme, "http" | "https" | "mailto")
        }
        _ => true,
    }
}

fn link_to(dest: CowStr<'_>) -> CowStr<'_> {
    if safe_url(&dest) {
        dest
    } else {
        CowStr::Borrowed("#")
    }
}

/// The HTML of `text` read as markdown.
pub fn to_html(text: &str) -> String {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let events = Parser::new_ext(text, options).map(|event| match event {
        Event::Html(h) | Event::InlineHtml(h) => Event::Text(h),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url: link_to(dest_url),
            title,
            id,
        }),
        Event::Start(Tag::Image {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url: link_to(dest_url),
            title,
            id,
        }),
        Event::End(TagEnd::Image) => Event::End(TagEnd::Link),
        other => other,
    });
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    html::push_html(&mut out, events);
    out
}

#[cfg(test)]
mod tests {
    use super::to_html;

    #[test]
    fn raw_html_is_text() {
        let out = to_html("hi <script>alert(1)</script>\n\n<img src=x onerror=alert(1)>");
        assert!(!out.contains("<script"), "{out}");
        assert!(!out.contains("<img"), "{out}");
        assert!(out.contains("&lt;script&gt;"), "{out}");
    }

    #[test]
    fn dangerous_links_are_defused() {
        let out =
            to_html("[x](javascript:alert(1)) [y](JaVaScRiPt:alert(1)) [z](https://ok.example/a)");
        assert!(!out.to_ascii_lowercase().contains("javascript:"), "{out}");
        assert!(out.contains("href=\"https://ok.example/a\""), "{out}");
    }

    #[test]
    fn images_become_links() {
        let out = to_html("![alt](https://tracker.example/p.png)");
        assert!(!out.contains("<img"), "{out}");
        assert!(
            out.contains("<a href=\"https://tracker.example/p.png\">alt</a>"),
            "{out}"
        );
    }

    #[test]
    fn markdown_renders() {
        let out = to_html("# Title\n\n* one\n* **two**");
        assert!(out.contains("<h1>Title</h1>"));
        assert!(out.contains("<strong>two</strong>"));
    }
}
