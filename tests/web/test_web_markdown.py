"""What people write is rendered as markdown on the web pages, and stays inert: raw HTML is text,
unsafe links are not links, navmcp paths become links inside the app. The static files it needs
are fingerprinted and cached for a year."""

from __future__ import annotations

import re

from webclient import csrf_of

BODY = """**bold words** and _slanted_

- first
- second

See [the docs](https://example.com/docs), https://example.org/raw and [bad](javascript:alert(1)).
Mentioned: /studios/team/members

```
fenced <b>code</b>
```

<script>alert('body')</script>
<img src=x onerror="alert('img')">

## Available actions
- `delete_studio`
"""


def test_note_body_and_comment_render_as_markdown_and_stay_inert(seeded, browser, api):
    note = api.post("/studios/team/actions/create_note", json={"title": "Rendered", "body": BODY}).json()["url"]
    api.post(note + "/actions/add_comment", json={"body": "a comment with **weight** and <b onclick=x>tags</b>"})
    page = browser.get(note).text
    body = re.search(r'<section class="md body"[^>]*>(.*?)</section>', page, re.S).group(1)
    assert "<strong>bold words</strong>" in body and "<em>slanted</em>" in body
    assert re.search(r"<ul>\s*<li>first</li>\s*<li>second</li>\s*</ul>", body)
    assert '<a href="https://example.com/docs" rel="nofollow noopener noreferrer">the docs</a>' in body
    assert '<a href="https://example.org/raw" rel="nofollow noopener noreferrer">https://example.org/raw</a>' in body
    assert '<a href="/studios/team/members">/studios/team/members</a>' in body  # in the app: no rel
    assert "javascript:" not in re.sub(r"\[bad\]\(javascript:alert\(1\)\)", "", body)  # shown as text only
    assert "<pre><code>fenced &lt;b&gt;code&lt;/b&gt;\n</code></pre>" in body
    # raw HTML is text: no script element, no attribute made from the text
    assert "&lt;script&gt;alert(&#x27;body&#x27;)&lt;/script&gt;" in body or "&lt;script&gt;" in body
    assert "<script" not in body and "<img" not in body and not re.search(r"<[^>]+\sonerror=", page)
    # a heading in the text stays inside the text, below the page's own headings: a hidden heading
    # of the page's (h2) goes before the text's, which start at h3 and skip no level
    assert body.startswith('<h2 class="vh" id="the-text-h">The text</h2>')
    assert "<h3>Available actions</h3>" in body and "<h2>Available actions" not in page
    comment = re.search(r'<article class="comment"[^>]*>(.*?)</article>', page, re.S).group(1)
    assert "<strong>weight</strong>" in comment and "&lt;b onclick=x&gt;tags&lt;/b&gt;" in comment
    assert "<b onclick" not in page


def test_full_urls_of_this_instance_link_inside_the_app(seeded, app, owner, api):
    """A note that names a page by its full URL on this instance (as an agent shares it) links in the
    app as a bare path does; another host, another port or a user-info URL stays an external link."""
    from navmcp.web import create_app
    from webclient import sign_in

    body = ("Open http://127.0.0.1/studios/team/members, [the note](http://127.0.0.1/studios/team?page=2#top), "
            "<http://navmcp.example.com/help>, http://127.0.0.1:9/studios/team, http://evil.example/studios/team "
            "and http://x@127.0.0.1/studios/team")
    note = api.post("/studios/team/actions/create_note", json={"title": "Links", "body": body}).json()["url"]
    browser = sign_in(create_app(app, allowed_hosts=("navmcp.example.com",)), app, owner["id"])
    try:
        shown = re.search(r'<div class="md body">(.*?)</div>', browser.get(note).text, re.S).group(1)
    finally:
        browser.close()
    assert '<a href="/studios/team/members">/studios/team/members</a>' in shown
    assert '<a href="/studios/team?page=2#top">the note</a>' in shown
    assert '<a href="/help">/help</a>' in shown  # a name the instance is served under, any port
    for foreign in ("http://127.0.0.1:9/studios/team", "http://evil.example/studios/team", "http://x@127.0.0.1/studios/team"):
        assert f'<a href="{foreign}" rel="nofollow noopener noreferrer">' in shown, foreign


def test_the_stylesheet_and_script_are_fingerprinted_and_cached_for_a_year(browser, anon):
    page = browser.get("/").text
    css, js = re.search(r'href="(/static/app\.[0-9a-f]{12}\.css)"', page).group(1), \
        re.search(r'src="(/static/app\.[0-9a-f]{12}\.js)"', page).group(1)
    for url, kind in ((css, "text/css"), (js, "text/javascript")):
        reply = anon.get(url)  # public: the sign-in page needs them too
        assert reply.status_code == 200 and reply.headers["content-type"].startswith(kind)
        assert reply.headers["cache-control"] == "public, max-age=31536000, immutable"
    # another fingerprint is no file: a cached URL never changes meaning
    assert anon.get(css.replace(css[12:24], "0" * 12)).status_code == 404
    assert anon.get("/static/app.css").status_code == 404
    assert anon.post(css, headers={"Origin": "http://127.0.0.1"}).status_code == 404


def test_pages_stay_small(seeded, browser, api):
    """HTML at most 60 KB a page, on a page with 20 long comments."""
    note = seeded["note"]
    for i in range(25):
        api.post(note + "/actions/add_comment", json={"body": f"Comment {i} " + "words and more words " * 60})
    for url in (note, seeded["decision"], seeded["commitment"], "/studios/team", "/", "/studios/team/members"):
        page = browser.get(url)
        assert page.status_code == 200 and len(page.content) <= 60_000, (url, len(page.content))
    assert csrf_of(browser.get(note).text)


def test_headings_people_write_are_placed_under_the_pages_outline():
    """The levels a text uses, in order, become the levels below the page's heading it sits under:
    a note's lone `## Goals` was an <h4> at body size after the page's <h1> (axe: heading-order)."""
    from navmcp.web.markdown import to_html

    assert to_html("## Goals\n\ntext") == "<h3>Goals</h3>\n<p>text</p>\n"
    assert re.findall(r"<(h\d)>", to_html("# A\n\n#### B\n\n# C\n\n###### D")) == ["h3", "h4", "h3", "h5"]
    assert re.findall(r"<(h\d)>", to_html("# A\n\n## B", under=1)) == ["h2", "h3"]
    assert re.findall(r"<(h\d)>", to_html("# 1\n## 2\n### 3\n#### 4\n##### 5")) == ["h3", "h4", "h5", "h6", "h6"]


def test_a_studio_description_with_headings_sits_under_a_heading_of_the_page(seeded, browser, api):
    made = api.post("/actions/create_studio", json={"handle": "aims", "name": "Aims", "description": "## Purpose\n\nWe ship."})
    assert made.status_code == 200, made.text
    page = browser.get("/studios/aims").text
    about = re.search(r'<section class="about md"[^>]*>(.*?)</section>', page, re.S).group(1)
    assert about.startswith('<h2 class="vh" id="about-h">About</h2>') and "<h3>Purpose</h3>" in about
