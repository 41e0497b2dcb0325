"""Take the screenshots of docs/console.md: ``python tests/ui/screenshots.py [OUT_DIR]`` (default docs/console).

Builds ``mabos demo`` in a temporary folder, adds an ontology proposal to review, serves the console with
uvicorn and photographs the main pages in headless Chromium (Debian's /usr/bin/chromium). Not a test.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the packaged model, never a download

import uvicorn  # noqa: E402 - after the path set-up: runs from a checkout
from playwright.sync_api import sync_playwright  # noqa: E402

from cli import tools  # noqa: E402
from cli.demo import build_demo  # noqa: E402
from cli.ui.app import create_app  # noqa: E402
from cli.ui.picture import write_picture  # noqa: E402
from kg.workspace import open_workspace  # noqa: E402
from sync.nightly import run_nightly  # noqa: E402

AGENT = "sales-agent"
DIALOGUE = ROOT / "tests" / "data" / "conversation" / "compaction-dialogue.jsonl"
SHOTS = [
    ("overview", "/"),
    ("graph", "/graph?limit=150"),
    ("facts", "/facts?subject=acme"),
    ("memory", "/memory?q=how+often+do+signing+keys+change"),
    ("ontology", "/ontology"),
    ("reasoning", "/reasoning"),  # the proof is a POST: the form is filled and sent below
    ("conversation", "/conversation?session=offsite"),
    ("sync", "/sync"),
]


def prepare(path: Path) -> tuple[str, str]:
    """The demo workspace plus a validated proposal; the uids of a derived fact and of the proposal."""
    build_demo(path)
    tools.call("ontology_scaffold_domain", workspace=path, agent_id=AGENT, template="ecommerce", domain="ecommerce")
    proposal = tools.call("ontology_propose_concept", workspace=path, agent_id=AGENT, domain="ecommerce",
                          node_type="class", node_id="ecommerce:DropshipFulfillment", label="Dropship Fulfillment",
                          parent_class="ecommerce:Fulfillment", rationale="three suppliers ship direct",
                          sbvr_definition="Fulfillment in which the supplier ships directly to the customer",
                          )  # fmt: skip
    uid = str(proposal.uid)  # type: ignore[attr-defined]
    tools.call("ontology_validate_proposal", workspace=path, agent_id=AGENT, uid=uid)
    rows = [json.loads(line) for line in DIALOGUE.read_text(encoding="utf-8").splitlines() if line.strip()]
    with open_workspace(path) as ws:
        ws.conversations.ingest(AGENT, "offsite", rows * 4, title="Lisbon offsite planning")
        ws.conversations.compact(AGENT, "offsite")
        write_picture(ws, AGENT, fmt="html", out=None, types=None, limit=150)  # linked by the nightly report
        run_nightly(ws, [AGENT], skip=["vector-index", "schema", "push"])
    found = tools.call("fact_query", workspace=path, agent_id=AGENT, predicate="assignTo")
    return str(found.facts[0].uid), uid  # type: ignore[attr-defined]


def main() -> None:
    """Build, serve, photograph."""
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "console"
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mabos-shots-") as tmp:
        path = Path(tmp) / "demo"
        derived, proposal = prepare(path)
        with open_workspace(path) as ws:
            conversation = ws.conversations.conversation(AGENT, "offsite")
            summary = ws.ports.summaries.list(conversation.uid)[-1].uid
        shots = [
            *SHOTS,
            ("fact-history", f"/facts?fact={derived}"),
            ("proposal", f"/ontology?proposal={proposal}"),
            ("expanded", f"/conversation?session=offsite&summary={summary}"),
        ]
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        server = uvicorn.Server(uvicorn.Config(create_app(path, agent=AGENT), host="127.0.0.1", port=port,
                                               log_level="warning"))  # fmt: skip
        threading.Thread(target=server.run, daemon=True).start()
        while not server.started:
            time.sleep(0.02)
        args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=args)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            for name, route in shots:
                page.goto(f"http://127.0.0.1:{port}{route}{'&' if '?' in route else '?'}agent={AGENT}")
                if name == "reasoning":
                    page.fill("#prove-form input[name=subject]", "acme")
                    page.fill("#prove-form input[name=predicate]", "assignTo")
                    page.fill("#prove-form input[name=object]", "us-sales")
                    page.click("#prove-form button[value=backward]")
                    page.wait_for_selector("section.detail")
                if name == "ontology":
                    page.fill("#tree-filter", "fulfillment")
                if name == "graph":
                    page.wait_for_selector("body[data-graph-ready='1']")
                    goal = page.evaluate("window.mabosGraph.nodes('[kind = \"goal\"]')[0].id()")
                    x, y = page.evaluate(
                        """uid => { const p = window.mabosGraph.getElementById(uid).renderedPosition();
                        const box = document.getElementById('cy').getBoundingClientRect();
                        return [box.x + p.x, box.y + p.y]; }""",
                        goal,
                    )
                    page.mouse.click(x, y)
                    page.wait_for_selector("#node-title")
                    overlaps = page.evaluate("window.mabosLabelOverlaps()")
                    assert overlaps == [], f"graph labels overlap: {overlaps[:5]}"
                page.screenshot(path=str(out / f"{name}.png"), full_page=name not in ("graph", "proposal", "sync"))
                print(out / f"{name}.png")
            browser.close()
        server.should_exit = True


if __name__ == "__main__":
    main()
