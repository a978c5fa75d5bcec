"""The web app end to end in a real headless browser: Debian's Chromium driven by Playwright
(Python), against the app served by uvicorn in a thread. A person's games are played by
clicking cards and buttons, and the page's final scores are checked against the engine and
against the downloaded game record replayed through a fresh env.

The browser is the system's (``chromium`` on PATH, or ``DECKGYM_CHROMIUM``): a Playwright
browser download can't work here. Without one these tests skip with the reason, except
where ``DECKGYM_REQUIRE_BROWSER=1`` (CI: ``.ci/run`` installs Chromium and sets it), where
a missing or broken browser fails them.
"""

from __future__ import annotations

import os
import shutil
import time

import pytest

from training.frontends.web import ServerThread, create_app
from training.matches.records import parse_record, replay

# Running as root on a closed network: no sandbox, nothing fetched in the background.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
REQUIRED = os.environ.get("DECKGYM_REQUIRE_BROWSER") == "1"
MAX_CLICKS = 400


def unavailable(reason: str):
    if REQUIRED:
        pytest.fail(f"{reason}; DECKGYM_REQUIRE_BROWSER=1 says the browser tests must run", pytrace=False)
    pytest.skip(reason)


def chromium_path() -> str | None:
    return os.environ.get("DECKGYM_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def server():
    app = create_app()
    with ServerThread(app) as running:
        yield running.url, app


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        unavailable('playwright is not installed (pip install -e ".[test]")')
    path = chromium_path()
    if path is None:
        unavailable("no Chromium found: apt-get install chromium (or set DECKGYM_CHROMIUM to a Chromium binary)")
    profile = tmp_path_factory.mktemp("chromium-profile")  # a fresh user-data dir
    with sync_playwright() as playwright:
        try:
            context = playwright.chromium.launch_persistent_context(
                str(profile),
                executable_path=path,
                headless=True,
                args=CHROMIUM_ARGS,
                viewport={"width": 1400, "height": 950},
                accept_downloads=True,
            )
        except Error as exc:
            unavailable(f"Chromium at {path} did not start: {str(exc).splitlines()[0]}")
        context.set_default_timeout(20_000)
        yield context
        context.close()


@pytest.fixture
def page(browser):
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    yield page
    page.close()
    assert not errors, f"the page reported errors: {errors}"


def idle(page):
    page.wait_for_selector("body[data-busy='0']")


def start_game(page, url, game, seat, bots, seed, deals=None):
    """Fill in the setup form and start; ``bots``: seat -> the bot's option value."""
    page.goto(url)
    page.wait_for_selector("#setup:not([hidden])")
    idle(page)
    page.select_option("#env", game)
    page.select_option("#your-seat", str(seat))
    for other, spec in bots.items():
        page.select_option(f"#bot-{other}", spec)
    if deals is not None:
        page.select_option("#deals", "custom")
        page.fill("#deals-custom", deals)
    page.fill("#seed", str(seed))
    page.click("#start")
    page.wait_for_selector("#table:not([hidden])")
    idle(page)
    return page.get_attribute("#table", "data-game-id")


def play_by_clicking(page, check=None) -> int:
    """Click a playable card (else a move button: draw, a suit) until the game is over."""
    clicks = 0
    while page.get_attribute("#table", "data-over") != "1":
        assert page.get_attribute("#table", "data-your-turn") == "1", page.inner_text("#move-error")
        if check is not None:
            check()
        cards = page.locator("#hand .card[data-action], #pack .card[data-action]")
        buttons = page.locator("#moves button[data-action]")
        target = cards.nth(clicks % cards.count()) if cards.count() else buttons.first
        target.click()
        idle(page)
        assert page.inner_text("#move-error") == ""
        clicks += 1
        assert clicks < MAX_CLICKS
    return clicks


def final_scores(page) -> dict[int, int]:
    rows = page.locator("#final-scores tr[data-seat]")
    return {
        int(rows.nth(i).get_attribute("data-seat")): int(rows.nth(i).get_attribute("data-score"))
        for i in range(rows.count())
    }


def downloaded_record(page) -> str:
    with page.expect_download() as download:
        page.click("#download")
    return open(download.value.path(), encoding="utf-8").read()


def check_against_engine(page, app, game_id):
    session = app.state.sessions.get(game_id)
    assert session.game.is_over
    scores = final_scores(page)
    assert [scores[s] for s in range(len(scores))] == session.game.scores()
    winners = sorted(
        int(page.locator("#final-scores tr.winner").nth(i).get_attribute("data-seat"))
        for i in range(page.locator("#final-scores tr.winner").count())
    )
    assert winners == session.game.winners()
    record = downloaded_record(page)
    assert replay(*parse_record(record)) == {
        "scores": session.game.scores(),
        "winners": session.game.winners(),
        "truncated": False,
    }
    return session, record


def test_craits_deal_by_clicking(page, server):
    url, app = server
    began = time.monotonic()
    game_id = start_game(
        page, url, "craits_v0", 0, {1: "heuristic", 2: "checkpoints/craits", 3: "random"}, seed=7, deals="3"
    )
    session = app.state.sessions.get(game_id)

    def check():  # the person's hand as the engine has it; no other seat's card on the page
        shown = [
            page.locator("#hand .card").nth(i).get_attribute("data-card")
            for i in range(page.locator("#hand .card").count())
        ]
        assert shown == (session.game.hand(0) if session.game.phase != "blind_suit" else [])
        assert page.locator("#opponents .card").count() == 0

    clicks = play_by_clicking(page, check)
    session, record = check_against_engine(page, app, game_id)
    assert sum(line.startswith('{"seat": 0,') for line in record.splitlines()) == clicks
    assert page.locator("#log .kind-deal table.deal-hands tr").count() == 4  # the deal's end: every hand shown
    assert time.monotonic() - began < 60


def test_pairs_draft_game_by_clicking_beside_another_tab(page, server, browser):
    url, app = server
    began = time.monotonic()
    # A first person's Craits game in another tab of the same browser (same cookies).
    other = browser.new_page()
    other_id = start_game(other, url, "craits_v0", 1, {0: "random", 2: "heuristic", 3: "heuristic"}, seed=3, deals="5")
    other_state = app.state.sessions.get(other_id).state()

    page.bring_to_front()  # a background tab is throttled
    game_id = start_game(
        page, url, "pairs_draft_v0", 2, {0: "heuristic", 1: "checkpoints/pairs_draft", 3: "random"}, seed=9
    )
    assert game_id != other_id
    clicks = play_by_clicking(page)
    assert clicks == 11 + 1 + 10  # every pick, the discard, every round
    check_against_engine(page, app, game_id)

    # The other tab's game has not moved, and a reload resumes it.
    assert app.state.sessions.get(other_id).state() == other_state
    other.bring_to_front()
    other.reload()
    other.wait_for_selector("#table:not([hidden])")
    idle(other)
    assert other.get_attribute("#table", "data-game-id") == other_id
    assert other.get_attribute("#table", "data-game") == "craits"
    other.close()
    assert time.monotonic() - began < 60


def test_a_game_without_a_web_page_of_its_own_is_shown_as_text(page, server):
    import plugin_game  # a third game (tests/plugin_game) whose folder has no web.js

    url, app = server
    game_id = start_game(page, url, plugin_game.SPEC.id, 1, {0: "heuristic"}, seed=4)
    session = app.state.sessions.get(game_id)

    def check():  # the seat's view as the terminal writes it, the legal moves as buttons
        text = page.inner_text("#table-text")
        assert f"your hand: {' '.join(map(str, session.game.hand(1)))}" in text
        assert page.locator("#hand .card").count() == 0 and page.locator("#hand-title").is_hidden()
        buttons = [
            page.locator("#moves button").nth(i).get_attribute("data-action")
            for i in range(page.locator("#moves button").count())
        ]
        assert buttons == [session.game.action_to_text(a) for a in session.game.legal_actions()]

    assert play_by_clicking(page, check) == 3
    check_against_engine(page, app, game_id)
    assert page.locator("#log .kind-round").count() == 3
