"""A file attached through the web form (navmcp/web/uploads.py): `multipart/form-data` from a
person's browser session, up to the web's limit (`attachments.WEB_MAX_BYTES`), larger than an
agent's (`MCP_MAX_BYTES`); its content checked as an agent's is; the form needs its CSRF token.
The multipart reader itself is tested on bodies a browser would not send."""

from __future__ import annotations

import re

import pytest

from navmcp.content import attachments
from navmcp.web import uploads
from test_web_files import CSV, png
from webclient import csrf_of


@pytest.fixture
def note(api):
    assert api.post("/actions/create_studio", json={"handle": "team", "name": "Team"}).status_code == 200
    return api.post("/studios/team/actions/create_note", json={"title": "Votes", "body": "files"}).json()["url"]


def big_png(size: int) -> bytes:
    """A file that passes the PNG check (its magic bytes), `size` bytes long."""
    return (png() + b"\0" * size)[:size]


def upload(client, note: str, name: str, content_type: str, data: bytes, csrf: str | None = None, **headers):
    return client.post(f"{note}/actions/attach", data={"csrf_token": csrf} if csrf else {},
                       files={"file": (name, data, content_type)}, headers=headers)


def test_the_attach_form_is_a_file_input_in_a_multipart_form(browser, note):
    page = browser.get(note).text
    form = re.search(r'<form class="action" id="action-attach"[^>]*>', page).group(0)
    assert 'enctype="multipart/form-data"' in form
    assert re.search(r'<input type="file" id="attach-file" name="file" accept="image/png,[^"]*text/csv" required', page)
    assert 'name="data"' not in page and 'name="content_type"' not in page  # the agents' fields are not a person's
    assert "at most 10 MB" in page


def test_a_person_attaches_a_file_larger_than_an_agent_may_up_to_the_web_limit(browser, api, note):
    csrf = csrf_of(browser.get(note).text)
    image = big_png(3 * attachments.MIB)  # over the 1 MiB an agent may send, and over any other request's 2 MiB
    done = upload(browser, note, "red.png", "image/png", image, csrf)
    url = done.headers["location"]
    assert done.status_code == 303 and url.startswith(note + "/files/")  # the file's page, saying so
    assert "Attached red.png (3,145,728 bytes)" in browser.get(url).text
    assert f'<img class="thumb" src="{url}?raw=1"' in browser.get(note).text
    assert browser.get(url + "?raw=1").content == image
    # a CSV the browser could not type: its extension says what it is
    assert upload(browser, note, "votes.csv", "application/octet-stream", CSV, csrf).status_code == 303
    files = api.get(note + ".json").json()["data"]["files"]
    assert [(f["filename"], f["content_type"], f["size"]) for f in files] == [
        ("red.png", "image/png", len(image)), ("votes.csv", "text/csv", len(CSV))]
    over = upload(browser, note, "huge.png", "image/png", big_png(attachments.WEB_MAX_BYTES + 1), csrf)
    assert over.status_code == 422 and "at most 10,485,760 bytes here" in over.text
    huge = upload(browser, note, "huge.png", "image/png", big_png(attachments.WEB_MAX_BYTES + 2 * uploads.SLACK), csrf)
    assert huge.status_code == 413  # past the upload request's own bound: refused unread
    at_limit = upload(browser, note, "limit.png", "image/png", big_png(attachments.WEB_MAX_BYTES), csrf)
    assert at_limit.status_code == 303


def test_the_web_limit_is_a_persons_an_agents_multipart_gets_the_agents_limit(api, note):
    refused = upload(api, note, "red.png", "image/png", big_png(2 * attachments.MIB), accept="application/json")
    assert refused.status_code == 422 and "at most 1,048,576 bytes here" in refused.json()["message"]
    small = upload(api, note, "red.png", "image/png", png(), accept="application/json")  # a script may, too
    assert small.status_code == 200 and small.json()["url"].startswith(note + "/files/")


def test_an_upload_is_checked_as_an_agents_is_and_needs_the_forms_csrf_token(browser, api, note):
    csrf = csrf_of(browser.get(note).text)
    html = upload(browser, note, "page.png", "image/png", b"<html><script>alert(1)</script></html>", csrf)
    assert html.status_code == 422 and "is not a image/png file" in html.text  # the form again, with why
    assert upload(browser, note, "red.png", "image/png", png()).status_code == 403  # no CSRF token
    empty = browser.post(f"{note}/actions/attach", data={"csrf_token": csrf}, files={"file": ("", b"", "")})
    assert empty.status_code == 422 and "choose a file" in empty.text
    assert api.get(note + ".json").json()["data"]["files"] == []


def test_the_multipart_reader_takes_a_form_and_refuses_what_is_not_one():
    body = (b"--XyZ\r\nContent-Disposition: form-data; name=\"csrf_token\"\r\n\r\nabc\r\n"
            b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a \\\"b\\\".csv\"\r\n"
            b"Content-Type: text/csv\r\n\r\nx,y\r\n\r\n--XyZ\r\n"
            b"--XyZ--\r\n")
    with pytest.raises(uploads.BadUpload, match="no headers"):
        uploads.parse(body, "multipart/form-data; boundary=XyZ")
    body = body.replace(b"--XyZ\r\n--XyZ--", b"--XyZ--")
    fields, files = uploads.parse(body, 'multipart/form-data; boundary="XyZ"')
    assert fields == {"csrf_token": ["abc"]}
    assert files["file"] == uploads.Upload('a "b".csv', "text/csv", b"x,y\r\n")  # the file's own CRLF kept
    with pytest.raises(uploads.BadUpload, match="boundary"):
        uploads.parse(body, "multipart/form-data")
    with pytest.raises(uploads.BadUpload, match="cut short"):
        uploads.parse(body[:-9], "multipart/form-data; boundary=XyZ")
    many = b"".join(b"--XyZ\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nv\r\n" for _ in range(21)) + b"--XyZ--"
    with pytest.raises(uploads.BadUpload, match="more than 20 parts"):
        uploads.parse(many, "multipart/form-data; boundary=XyZ")
