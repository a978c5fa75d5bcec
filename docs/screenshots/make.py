"""Take the web app's screenshots in this folder with headless Chromium (Debian's, driven by
Playwright), playing seeded games by clicking as a person would:

    python docs/screenshots/make.py                 # from the repository root
    python docs/screenshots/make.py --chromium /usr/bin/chromium

- setup.png                    the setup form
- craits-table.png             a Craits table a few moves into the first deal
- pairs-draft-round.png        a Pairs Draft round under way
- pairs-draft-score-sheet.png  the end of a Pairs Draft game: final scores, score sheet
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from training.frontends.web import ServerThread, create_app  # noqa: E402

OUT = Path(__file__).resolve().parent
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
]


def idle(page):
    page.wait_for_selector("body[data-busy='0']")


def start(page, url, game, bots, seed, deals=None):
    page.goto(url)
    page.wait_for_selector("#setup:not([hidden])")
    idle(page)
    page.select_option("#env", game)
    for seat, spec in bots.items():
        page.select_option(f"#bot-{seat}", spec)
    if deals:
        page.select_option("#deals", deals)
    page.fill("#seed", str(seed))
    page.click("#start")
    page.wait_for_selector("#table:not([hidden])")
    idle(page)


def click_moves(page, count=None):
    """Click the first playable card (else the first move button), ``count`` times or to the end."""
    done = 0
    while page.get_attribute("#table", "data-over") != "1" and (count is None or done < count):
        cards = page.locator("#hand .card[data-action], #pack .card[data-action]")
        (cards.first if cards.count() else page.locator("#moves button[data-action]").first).click()
        idle(page)
        done += 1


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser"))
    args = parser.parse_args(argv)
    if not args.chromium:
        parser.exit(1, "error: no Chromium found: apt-get install chromium, or pass --chromium PATH\n")
    from playwright.sync_api import sync_playwright

    os.chdir(ROOT)  # bots are listed as checkpoints/... as on a user's machine
    app = create_app()
    with ServerThread(app) as server, sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
        context = playwright.chromium.launch_persistent_context(
            profile,
            executable_path=args.chromium,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 860},
            device_scale_factor=1,
        )
        page = context.new_page()
        craits_bot, pairs_bot = "checkpoints/craits", "checkpoints/pairs_draft"

        page.goto(server.url)
        page.wait_for_selector("#setup:not([hidden])")
        idle(page)
        page.select_option("#bot-2", craits_bot)
        page.screenshot(path=str(OUT / "setup.png"))

        start(page, server.url, "craits_v0", {1: "heuristic", 2: craits_bot, 3: "heuristic"}, seed=21)
        click_moves(page, 3)
        page.screenshot(path=str(OUT / "craits-table.png"), full_page=True)

        start(page, server.url, "pairs_draft_v0", {1: "heuristic", 2: pairs_bot, 3: "heuristic"}, seed=8)
        click_moves(page, 11 + 1 + 4)  # the draft, the discard, three rounds and a card of the fourth
        page.screenshot(path=str(OUT / "pairs-draft-round.png"), full_page=True)
        click_moves(page)
        page.screenshot(path=str(OUT / "pairs-draft-score-sheet.png"), full_page=True)
        context.close()
    for name in ("setup.png", "craits-table.png", "pairs-draft-round.png", "pairs-draft-score-sheet.png"):
        print(OUT / name)


if __name__ == "__main__":
    main()
