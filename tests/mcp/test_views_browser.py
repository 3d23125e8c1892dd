"""The page inside the chat (navmcp/mcp/views.py) in a real host harness: Debian's Chromium (Playwright)
loads the `ui://navmcp/page` document into an iframe sandboxed as hosts do (`allow-scripts` only,
the spec's default CSP), and connects it with the MCP Apps SDK's own host bridge (`AppBridge` and
`PostMessageTransport` of npm @modelcontextprotocol/ext-apps, bundled by `make` into .mcp-apps/host.js)
to a real navmcp over MCP 2026-07-28 (the protocol core, with the extension in each request's
capabilities), on both stores. Then: the decision renders with its tally; a vote in the view reaches
navmcp and the view shows the new tally, and the model is told; a navmcp link navigates in place and
another goes to the host's open-link; a destructive action asks in its dialog; full screen is
asked of the host; the theme follows the host to dark; the size-changed messages
follow the content; axe-core finds no serious or critical fault; all of it also at 390 px.

Without the bundle (no npm) the test skips, unless NAVMCP_REQUIRE_MCP_APPS=1 (`make test-all`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mcp_rpc import Rpc

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
HOST_BUNDLE = ROOT / ".mcp-apps" / "host.js"
AXE_VERSION = "4.14.1"
AXE = ROOT / ".cache" / "npm" / "node_modules" / "axe-core" / "axe.min.js"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
UI = {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}}
# What a host puts around a view with no `csp` in its metadata (MCP Apps 2026-01-26, "Host Behavior").
DEFAULT_CSP = ("default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
               "img-src 'self' data:; media-src 'self' data:; connect-src 'none'; object-src 'none'")

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (.ci/run installs it)")

# The host page: the SDK's bridge, an iframe sandboxed as a host's, and a log of what the view asked.
HOST_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>host</title></head>
<body style="margin:0"><main></main><script>%s</script><script>
window.seen = {calls: [], sizes: [], links: [], context: [], modes: []};
window.startHost = async (html, width) => {
  const {AppBridge, PostMessageTransport} = window.McpApps;
  const iframe = document.createElement("iframe");
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.title = "navmcp";
  iframe.style.cssText = "border:0;display:block;height:80px;width:" + width + "px";
  document.querySelector("main").appendChild(iframe);
  const bridge = new AppBridge(null, {name: "test-host", version: "1"},
    {openLinks: {}, serverTools: {}, updateModelContext: {text: {}}},
    {hostContext: {theme: "light", displayMode: "inline", availableDisplayModes: ["inline", "fullscreen"],
                   containerDimensions: {width: width, maxHeight: 5000}}});
  bridge.oncalltool = async (params) => { seen.calls.push(params); return JSON.parse(await window.navmcp(JSON.stringify(params))); };
  bridge.onopenlink = async ({url}) => { seen.links.push(url); return {}; };
  bridge.onupdatemodelcontext = async (params) => { seen.context.push(params); return {}; };
  bridge.onrequestdisplaymode = async ({mode}) => { seen.modes.push(mode); return {mode}; };
  bridge.onsizechange = ({width, height}) => { seen.sizes.push({width, height}); if (height) iframe.style.height = height + "px"; };
  const initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = html;
  await initialized;
  window.bridge = bridge;
};
</script></body></html>"""


def host_bundle() -> str:
    if not HOST_BUNDLE.exists():
        if os.environ.get("NAVMCP_REQUIRE_MCP_APPS"):
            pytest.fail("the MCP Apps host bridge is not built: run `make .mcp-apps/.installed` (NAVMCP_REQUIRE_MCP_APPS is set)")
        pytest.skip("the MCP Apps host bridge is not built (make .mcp-apps/.installed needs npm)")
    return HOST_BUNDLE.read_text()


def axe_script() -> str:
    if not AXE.exists():
        npm = shutil.which("npm")
        if npm is None:
            if os.environ.get("NAVMCP_REQUIRE_AXE"):
                pytest.fail("npm is needed to install axe-core (NAVMCP_REQUIRE_AXE is set)")
            pytest.skip("npm is not installed: axe-core can't be fetched")
        subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(AXE.parents[2]),
                        f"axe-core@{AXE_VERSION}"], check=True, capture_output=True, timeout=300)
    return AXE.read_text()


@pytest.fixture(scope="module")
def chromium():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def team(any_app, new_user):
    alice, alice_token = new_user("alice")
    ws = any_app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    decision = ws.execute(alice, "/studios/team", "create_decision", {
        "question": "Where is the offsite?", "options": ["Lisbon", "Berlin"],
        "description": "See [the venues](https://example.com/venues) and <img src=x onerror=\"parent.pwned=1\">"}).url
    return {"token": alice_token, "decision": decision}


def host(chromium, any_app, team, width: int):
    """A host page at `width` showing the view of the decision, as after the agent's navigate."""
    rpc = Rpc(any_app, team["token"], "modern", UI)

    def navmcp(params: str) -> str:  # the host's connection to the server: MCP 2026-07-28 JSON-RPC
        reply = rpc.reply("tools/call", **json.loads(params))
        return json.dumps(reply["result"])

    document = rpc.call("resources/read", uri="ui://navmcp/page")["contents"][0]["text"]
    document = document.replace("<head>", f'<head><meta http-equiv="Content-Security-Policy" content="{DEFAULT_CSP}">', 1)
    context = chromium.new_context(viewport={"width": width + 40, "height": 900})
    page = context.new_page()
    page.expose_function("navmcp", navmcp)
    page.set_content(HOST_PAGE % host_bundle())
    page.evaluate("([html, width]) => startHost(html, width)", [document, width])
    arguments = {"url": team["decision"]}
    result = navmcp(json.dumps({"name": "navigate", "arguments": arguments}))
    page.evaluate("(args) => bridge.sendToolInput({arguments: args})", arguments)
    page.evaluate("(result) => bridge.sendToolResult(result)", json.loads(result))
    view = page.frame_locator("iframe")
    view.locator("h1").wait_for()
    return page, view, rpc


def seen(page) -> dict[str, Any]:
    return page.evaluate("() => window.seen")


@pytest.mark.parametrize("width", [800, 390])
def test_the_view_in_a_host(chromium, any_app, team, width):
    page, view, rpc = host(chromium, any_app, team, width)
    frame = page.frames[1]
    try:
        assert view.locator("h1").inner_text() == "Where is the offsite?"
        lisbon = view.locator(".opt", has_text="Lisbon")
        assert lisbon.locator(".counts").inner_text() == "0 accept, 0 prefer"
        # user text stays inert: its HTML is text, its handler never ran
        assert frame.evaluate("() => document.querySelector('img') === null")
        assert page.evaluate("() => window.pwned === undefined")
        # nothing scrolls sideways, at a phone's width too
        assert frame.evaluate("() => document.documentElement.scrollWidth <= document.documentElement.clientWidth")

        # the size-changed messages follow the content: the last one is the document's height now
        page.wait_for_function("() => seen.sizes.length > 0")
        height = frame.evaluate("() => document.documentElement.scrollHeight")
        page.wait_for_function("(h) => seen.sizes[seen.sizes.length - 1].height === h", arg=height)
        view.get_by_role("button", name="Show the whole page").click()
        grown = frame.evaluate("() => document.documentElement.scrollHeight")
        assert grown > height
        page.wait_for_function("(h) => seen.sizes[seen.sizes.length - 1].height === h", arg=grown)

        # axe-core in the view, light
        assert axe_faults(frame) == []

        # a vote in the view reaches navmcp, with the page's url; the view shows the new tally
        view.get_by_role("checkbox", name="accept Lisbon").check()
        view.locator("#action-vote").get_by_role("button", name="Save my vote").click()
        lisbon.locator(".counts", has_text="1 accept").wait_for()
        calls = seen(page)["calls"]
        executed = [c for c in calls if c["name"] == "execute_action"]
        assert executed == [{"name": "execute_action", "_meta": {"io.github.navmcp/view": True}, "arguments": {
            "action": "vote", "url": team["decision"],
            "params": {"votes": [{"option": executed[0]["arguments"]["params"]["votes"][0]["option"],
                                  "accept": True, "prefer": False}]}}}]
        markdown = rpc.call("tools/call", name="navigate", arguments={"url": team["decision"]})["content"][0]["text"]
        assert "Lisbon" in markdown and "1 accept" in markdown.replace("**", "")
        (told,) = seen(page)["context"]
        assert "vote" in told["content"][0]["text"] and team["decision"] in told["content"][0]["text"]

        # theme: the host switches to dark, the view follows
        page.evaluate("() => bridge.setHostContext({theme: 'dark'})")
        frame.wait_for_function("() => document.documentElement.dataset.theme === 'dark'")
        ink = frame.evaluate("() => getComputedStyle(document.body).color")
        assert ink == "rgb(228, 232, 240)"  # app.css's dark --ink
        assert axe_faults(frame) == []

        # a link outside navmcp goes to the host; a navmcp link navigates in place
        view.get_by_role("link", name="the venues").click()
        page.wait_for_function("() => seen.links.length === 1")
        assert seen(page)["links"] == ["https://example.com/venues"]
        view.locator("nav.crumbs").get_by_role("link", name="Team").click()
        view.locator("h1", has_text="Team").wait_for()
        assert seen(page)["calls"][-1]["arguments"] == {"url": "/studios/team"}
        view.get_by_role("button", name="Back").click()
        view.locator("h1", has_text="Where is the offsite?").wait_for()

        # a destructive action asks first, in the page's own dialog (no window.confirm in a sandbox)
        view.locator(".actionbar").get_by_role("button", name="Close voting").click()
        dialog = view.locator("dialog#dlg-close_decision")
        dialog.wait_for()
        assert dialog.locator(".consequence").inner_text().startswith("Voting ends for everyone")
        dialog.get_by_role("button", name="Cancel").click()
        dialog.wait_for(state="hidden")
        assert not [c for c in seen(page)["calls"] if c["arguments"].get("action") == "close_decision"]

        # full screen where the host offers it
        view.get_by_role("button", name="Full screen").click()
        page.wait_for_function("() => seen.modes.length === 1")
        assert seen(page)["modes"] == ["fullscreen"]
        view.get_by_role("button", name="Leave full screen").wait_for()
    finally:
        page.context.close()


def axe_faults(frame) -> list[str]:
    frame.add_script_tag(content=axe_script())
    return frame.evaluate("""async () => {
        const r = await axe.run(document, {resultTypes: ["violations"]});
        return r.violations.filter(v => v.impact === "serious" || v.impact === "critical")
            .map(v => v.id + ": " + v.help + " — " + v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(", "));
    }""")


# Fills every form of a page as a person would: text, numbers, a date in words, lines, the first box.
# What the view does not send yet that the web app's form does: nothing now. (edit_decision's rename
# boxes were left out: each row is marked NAME.unvoted, and the view's params() kept an unvoted row only
# once a box of it was ticked; the rename rows have no boxes to tick.)
KNOWN_GAPS: set[tuple[str, str]] = set()

FILL_JS = """() => {
  for (const form of document.querySelectorAll("form[action*='/actions/']")) {
    let ticked = false;
    for (const el of form.elements) {
      if (!el.name || el.type === "hidden" || el.tagName === "BUTTON") continue;
      if (el.type === "checkbox") { if (!ticked) { el.checked = !el.checked; ticked = true; } continue; }
      if (el.tagName === "SELECT") { if (el.options.length > 1) el.selectedIndex = el.options.length - 1; continue; }
      if (el.type === "number") { el.value = "3"; continue; }
      if (el.type === "date") continue;
      if (el.id && el.id.endsWith("-words")) { el.value = "next friday"; continue; }
      if (el.tagName === "TEXTAREA" && el.dataset.chips) { el.value = el.value ? el.value : "alpha\\nbeta, gamma"; continue; }
      if (el.name === "title" || el.name === "question") continue;  // left as they were: an edit leaves them out
      el.value = el.value ? el.value + " and more" : "Some text";
    }
  }
  return [...document.querySelectorAll("form[action*='/actions/']")].map((form) => {
    const action = /\\/actions\\/([a-z_]+)$/.exec(form.getAttribute("action"))[1];
    const entries = {};
    for (const [k, v] of new FormData(form)) (entries[k] = entries[k] || []).push(v);
    return {action, entries, js: window.navmcpView.params(form, action)};
  });
}"""


def test_the_view_sends_the_params_the_web_app_would(chromium, any_app, new_user):
    """The view turns a form into params itself (a sandbox without allow-forms never submits one):
    for every form of the pages with forms, as filled by a person, it sends what the web app's own
    reader (`params_from_form`) makes of the same form."""
    from navmcp.mcp import views
    from navmcp.web.forms import params_from_form

    alice, _ = new_user("alice")
    ws = any_app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    urls = ["/studios/team", "/studios/team/members", "/inbox"]
    urls.append(ws.execute(alice, "/studios/team", "create_decision",
                           {"question": "Where?", "options": ["Lisbon", "Berlin"]}).url)
    urls.append(ws.execute(alice, "/studios/team", "create_note", {"title": "Plan", "body": "Text",
                                                                    "tags": ["offsite"]}).url)
    urls.append(ws.execute(alice, "/studios/team", "create_commitment", {"title": "Book", "critical_mass": 2}).url)
    context = chromium.new_context()
    page = context.new_page()
    page.set_content(views.document())
    checked, renamed = 0, None
    try:
        for url in urls:
            shown = ws.page(alice, url, "test")
            page.evaluate("(html) => { document.getElementById('view').innerHTML = html; }", views.fragment(shown))
            infos = {a.name: a for a in shown.actions}
            for form in page.evaluate(FILL_JS):
                expected = params_from_form(infos[form["action"]], form["entries"])
                for action, name in KNOWN_GAPS:  # said where it is left, and checked to be still there
                    if form["action"] == action and name in expected:
                        assert name not in form["js"], f"the view sends {name} now: drop it from KNOWN_GAPS"
                        del expected[name]
                assert form["js"] == expected, (url, form["action"], form["entries"])
                checked += 1
                renamed = renamed or (form["action"] == "edit_decision" and form["js"].get("rename_options"))
    finally:
        context.close()
    assert checked >= 10
    # the rename boxes, filled, are sent: [{option: its id, title: the new title}, ...] (issue 44)
    assert renamed and {r["title"] for r in renamed} == {"Some text"} and len(renamed) == 2, renamed
