"""How strong the bots are (docs/strength.md): duplicate matches on fresh seeds, kept in
resumable logs so that the long ones (search bots at 10,000 simulations) are played over
many sessions.

Every match is one agent against three copies of an opponent (in partnership Craits: a side
of two against a side of two), in duplicate format (``training.matches.evaluate``: each deal
seed played once per rotation of the seats), on deal seeds from ``SEED`` on, which nothing
else in the project uses. Each finished game is kept in
``benchmarks/results/strength/<match>/sets.jsonl`` (``training.evaluate --log``): running
this script again plays only what is missing, up to each match's target number of sets,
and a result never depends on how the run was split. A row that ends at the edge of a goal
gets a confirmation row on seeds of its own (``CONFIRM_SEED``), its number of sets fixed
before its first set, and judged on its own.

    python benchmarks/strength.py --minutes 60            # play for about an hour, then report
    python benchmarks/strength.py --minutes 0             # only report what the logs hold
    python benchmarks/strength.py --only pairs_draft --minutes 30 --processes 2

``--minutes`` is checked between steps (a step is ``--processes`` duplicate sets of a match
with a search bot, 50 of one without, or the games left of one set): a step under way
finishes first, and a Craits set (four games) with three search bots at 10,000 simulations
takes most of an hour on a core. The report is the table between the markers in
``docs/strength.md`` (``--write``), each row with the sets played so far: win share of the
agent (ties split) with its 95% interval over the sets (the normal approximation, and
Student's t: the normal one is too narrow on the 20-set rows), against the even share.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from training.common.games import EnvHandle  # noqa: E402
from training.matches.evaluate import evaluate, mean_ci, per_game, summarize  # noqa: E402
from training.matches.evaluation_log import LOG_FILE, log_header, read_sets  # noqa: E402
from training.shipped import STRONGEST_SEARCH  # noqa: E402

SEED = 1_200_000  # fresh deal seeds: training, tuning (800000), shipping and baselines use others
# a confirmation row's own fresh seeds (the rows above use at most 1,600 from SEED on)
CONFIRM_SEED = 1_300_000
# fixed before its first set: a row that ends at the edge of a goal is settled on new seeds,
# never by adding sets to it after seeing its result (that would be optional stopping)
CONFIRM_SETS = 40
LOGS = ROOT / "benchmarks" / "results" / "strength"
DOC = ROOT / "docs" / "strength.md"
BEGIN, END = "<!-- strength table: begin -->", "<!-- strength table: end -->"
SEARCH_10K = "ismcts:simulations=10000"
DEEP = 1000  # the guided search's larger budget: about a second a move, five times the default
# the rows without a search: a network's set takes a fraction of a second, so they get as many
# sets as the training sections use to choose between networks (intervals of about ±0.012)
NETWORK_SETS = 1600
# shipped as checkpoints/create_dqn (the same policy.npz, tests/test_benchmarks.py) with this
# search as its strongest; its rows keep naming this folder, as their logs do
CREATE_DQN = "benchmarks/results/full/trials/create/DoubleDQN/seed0/checkpoint"
CREATE_VALUE_LEAF = f"ismcts:prior={CREATE_DQN},{STRONGEST_SEARCH['create_dqn']}"


@dataclass(frozen=True)
class Setting:
    name: str
    env_id: str
    args: dict
    network: str  # the shipped bot: today's network, and the prior of the guided search
    partnership: bool = False
    challengers: tuple[str, ...] = ()  # newer shipped networks: rows against the heuristic, the network, IS-MCTS
    # searches guided by a challenger: rows against the heuristic and the network
    guided_challengers: tuple[str, ...] = ()
    # other searches on trial, after the strongest: rows against the heuristic, the network and
    # IS-MCTS at 10,000 simulations, each paired set by set with the strongest search's rows
    # (the table's logs share their seeds)
    on_trial: tuple[str, ...] = ()
    # searches whose 10,000-simulation row ended at the edge of the goal: a confirmation row
    # against IS-MCTS at 10,000 simulations on CONFIRM_SEED, judged on its own
    confirm_10k: tuple[str, ...] = ()
    # networks shipped to guide a search above (on trial or confirmed), whose rows name the file
    # they were measured from: baselines.py measures them as shipped bots; no rows of their own here
    guides: tuple[str, ...] = ()


SETTINGS = [
    Setting(
        "craits",
        "craits_v0",
        {"preset": "craits"},
        "craits",
        challengers=("craits_ensemble",),
        guided_challengers=("ismcts:prior=craits_ensemble,leaf=value",),
        on_trial=("ismcts:prior=craits_ensemble,leaf=value,simulations=3000",),  # about 4 minutes a set on a core
    ),
    Setting(
        "create",
        "craits_v0",
        {"preset": "create", "partnership": True},
        "create",
        partnership=True,
        # leaves valued by a full-benchmark partnership Double DQN network (trained on deal
        # rewards, as the search's leaves are); it won the most of the two tried on the tuning seeds
        on_trial=(CREATE_VALUE_LEAF,),
        confirm_10k=(CREATE_VALUE_LEAF,),  # 0.613, Student's t [0.496, 0.729] over its 20 sets
        guides=("create_dqn",),  # CREATE_DQN, shipped
    ),
    Setting("pairs_draft", "pairs_draft_v0", {}, "pairs_draft", challengers=("pairs_draft_ensemble",)),
]


@dataclass(frozen=True)
class Match:
    setting: Setting
    agent: str
    opponent: str
    sets: int  # the target
    confirm: bool = False  # a confirmation row: on CONFIRM_SEED, in a folder and table row of its own

    @property
    def seed(self) -> int:  # the first deal seed
        return CONFIRM_SEED if self.confirm else SEED

    @property
    def name(self) -> str:
        def short(spec: str) -> str:
            return spec.replace("ismcts:", "ismcts_").replace("=", "").replace(",", "_").replace("/", "_")

        return f"{self.setting.name}-{short(self.agent)}-vs-{short(self.opponent)}{'-confirm' if self.confirm else ''}"

    @property
    def layout(self) -> list[str]:
        if self.setting.partnership:
            return [self.agent, self.opponent, self.agent, self.opponent]
        return [self.agent] + [self.opponent] * 3

    def env(self) -> EnvHandle:
        return EnvHandle(self.setting.env_id, self.setting.args)


def matches() -> list[Match]:
    """In the order they are played: the cheap ones first."""
    out = []
    for s in SETTINGS:
        guided = f"ismcts:prior={s.network}"
        deep = f"{guided},simulations={DEEP}"
        searching = 2 if s.partnership else 1  # seats of a search: a partnership match costs twice
        out.append(Match(s, s.network, "heuristic", NETWORK_SETS))
        for bot in s.challengers:
            out += [Match(s, bot, "heuristic", NETWORK_SETS), Match(s, bot, s.network, NETWORK_SETS)]
        out += [
            Match(s, guided, "heuristic", 200 // searching),
            Match(s, guided, s.network, 100 // searching),
            Match(s, deep, "heuristic", 200 // searching),  # the strongest search: as many sets as sessions allow
            Match(s, deep, s.network, 50 // searching),
            Match(s, SEARCH_10K, "heuristic", 40 // searching),
            Match(s, guided, SEARCH_10K, 20),
        ]
        out += [Match(s, bot, SEARCH_10K, 20) for bot in s.challengers]
        if options := STRONGEST_SEARCH.get(s.network):  # after the rows above, keeping their playing order
            strongest = f"{guided},{options}"
            out += [Match(s, strongest, "heuristic", 200 // searching), Match(s, strongest, s.network, 50 // searching)]
            # the strongest search is a new bot too: the goal of beating IS-MCTS at 10,000
            # simulations holds for it (a set costs about what the guided search's row does)
            out.append(Match(s, strongest, SEARCH_10K, 20))
        # value leaves: half a minute a set on one core; then a challenger's strongest search
        # (craits_ensemble's: value leaves at 1,000 simulations, about a minute a set); then those on trial
        strongest_challengers = [f"ismcts:prior={bot},{o}" for bot in s.challengers if (o := STRONGEST_SEARCH.get(bot))]
        # once a search on trial is shipped as the strongest, its rows are the strongest's (not played twice)
        for spec in dict.fromkeys([*s.guided_challengers, *strongest_challengers, *s.on_trial]):
            out += [Match(s, spec, "heuristic", 400), Match(s, spec, s.network, 100)]
        # a challenger's strongest search, or one on trial, is a new bot too, held to the same
        # 10,000-simulation goal (its set costs about what the challenger's own row's does: the opponents' moves)
        out += [Match(s, spec, SEARCH_10K, 20) for spec in dict.fromkeys([*strongest_challengers, *s.on_trial])]
        out += [Match(s, spec, SEARCH_10K, CONFIRM_SETS, confirm=True) for spec in s.confirm_10k]
    return out


def done_games(match: Match) -> dict[int, dict[int, tuple]]:
    folder = LOGS / match.name
    if not (folder / LOG_FILE).exists():
        return {}
    env = match.env()
    return read_sets(folder, log_header(env, match.layout, match.seed, True), env.seats)


def play(selected: list[Match], minutes: float, processes: int) -> None:
    deadline = time.monotonic() + 60 * minutes
    for match in selected:
        env = match.env()
        while time.monotonic() < deadline:
            done = done_games(match)
            complete = sum(len(done.get(i, {})) == env.seats for i in range(match.sets))
            if complete >= match.sets:
                break
            partial = next((i for i in range(match.sets) if 0 < len(done.get(i, {})) < env.seats), None)
            step = processes if "ismcts" in match.agent + match.opponent else 50  # a network's sets take a second
            target = min(match.sets, complete + (1 if partial is not None else step))
            started = time.monotonic()
            evaluate(env, match.layout, target, seed=match.seed, processes=processes, log_dir=LOGS / match.name)
            print(f"{match.name}: {target} sets ({time.monotonic() - started:.0f} s)", flush=True)


def _within(t: float, df: int) -> float:
    """P(|T| <= t) for Student's t with ``df`` degrees of freedom, in closed form
    (Abramowitz and Stegun 26.7.3-4): a sum of powers of cos(atan(t / sqrt(df)))."""
    theta = math.atan(t / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    power, term, total = (1, math.cos(theta), 0.0) if df % 2 else (0, 1.0, 0.0)
    while power <= df - 2:
        total += term
        term *= (power + 1) / (power + 2) * c2
        power += 2
    if df % 2:
        return 2 / math.pi * (theta + math.sin(theta) * total)
    return math.sin(theta) * total


def student_t95(df: int) -> float:
    """The two-sided 95% quantile of Student's t (12.706 at one degree of freedom, 2.093 at
    19, towards 1.96): a table row's interval over few sets must be this much wider than the
    normal one."""
    low, high = 0.0, 100.0
    for _ in range(100):  # bisection: far below float precision
        middle = (low + high) / 2
        low, high = (middle, high) if _within(middle, df) < 0.95 else (low, middle)
    return (low + high) / 2


def report(selected: list[Match]) -> str:
    rows = [
        "| setting | agent | against | sets | win share | 95% CI | Student's t 95% CI | even |",
        "|---|---|---|---:|---:|---|---|---:|",
    ]
    for match in selected:
        env = match.env()
        done = done_games(match)
        sets = 0
        while len(done.get(sets, {})) == env.seats:  # the complete sets from the first on
            sets += 1
        against = match.opponent + (" (a side of two)" if match.setting.partnership else " (three)")
        if match.confirm:
            against += f" on seeds from {match.seed:,}"
        if sets < 2:
            rows.append(f"| {match.setting.name} | `{match.agent}` | `{against}` | {sets} of {match.sets} | | | | |")
            continue
        records = [r for i in range(sets) for r in done[i].values()]
        result = summarize(records, match.layout, sets, env.deals)[match.agent]
        low, high = result["win_share_ci95"]
        per_set = per_game(records, match.layout, sets)[1][match.agent].mean(axis=1)
        _, (t_low, t_high) = mean_ci(per_set, 0.0, 1.0, quantile=student_t95(sets - 1))
        rows.append(
            f"| {match.setting.name} | `{match.agent}` | `{against}` | {sets} of {match.sets} | "
            f"{result['win_share']:.3f} | [{low:.3f}, {high:.3f}] | [{t_low:.3f}, {t_high:.3f}] | "
            f"{result['even_share']:.2f} |"
        )
    return "\n".join(rows)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=0, help="play this long (between steps), then report")
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--only", default="", help="matches whose name holds this text (e.g. pairs_draft)")
    parser.add_argument("--write", action="store_true", help="write the table into docs/strength.md")
    args = parser.parse_args(argv)
    selected = [m for m in matches() if args.only in m.name]
    if not selected:
        parser.error(f"no match's name holds {args.only!r}: {', '.join(m.name for m in matches())}")
    if args.minutes > 0:
        play(selected, args.minutes, args.processes)
    table = report(matches())
    print(table)
    if args.write:
        text = DOC.read_text()
        head, _, rest = text.partition(BEGIN)
        _, _, tail = rest.partition(END)
        DOC.write_text(f"{head}{BEGIN}\n{table}\n{END}{tail}")


if __name__ == "__main__":
    main()
